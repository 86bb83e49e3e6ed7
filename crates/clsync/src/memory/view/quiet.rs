//! [`QuietAtomic`]: a local atomic that races with nothing and
//! synchronizes nothing, by a kernel's proof, and that a checked launch
//! therefore does not check.

use std::panic::Location;

use super::LocalView;
use crate::atomics::{Atomic, Global, Local};
use crate::memory::{AtomicInteger, AtomicValue, RmwOp};
use crate::sync::{GroupScope, MemScope, Relaxed};

impl<'a, T: AtomicValue> LocalView<'a, Atomic<T, Global>> {
    /// The local atomic object at `index`, for relaxed operations of
    /// work-group scope or wider (their only ones: [`QuietAtomic`] has no
    /// other) where the caller proved that every access to this array in
    /// the launch is such an operation and that the kernel has no fence.
    /// Then no access to the array races with another (atomics whose scopes
    /// include each other's work-items never race, and nothing else touches
    /// it), and none synchronizes anything (relaxed, with no fence to give
    /// them an order).
    ///
    /// In a checked launch whose group takes proofs at their word
    /// ([`Group::trust_race_free`](crate::Group::trust_race_free)), an
    /// operation on an element some operation wrote already is then only
    /// performed (polled and traced, not checked): the checker would find
    /// nothing, and nothing it would record can matter to a later access.
    /// The first write of an element, a read of one nothing wrote (a
    /// report), an index out of bounds, and every operation of other
    /// launches, are [`at`](Self::at)'s. A false claim hides a race from
    /// the checker; it is no undefined behaviour.
    ///
    /// `#[kernel]` proves it for a local array of atomics whose every use is
    /// `a.at(i)` followed by one of [`QuietAtomic`]'s operations, with
    /// `Relaxed` and a group-wide scope, in a kernel that names no fence.
    ///
    /// ```
    /// use clsync::sync::{Relaxed, WorkGroupScope, LOCAL};
    /// use clsync::{AtomicUint, Buffer, Launch, NdRange, Runtime};
    ///
    /// let bytes = Buffer::from_slice(&[3u8, 200, 3, 7]);
    /// let mut launch = Launch::new("count", NdRange::new([4]).local([4])).checked(true);
    /// let bins = launch.local::<AtomicUint>(256);
    /// let threes = Buffer::<u32>::new(1);
    /// Runtime::with_threads(1).launch_groups(&launch, |g| {
    ///     g.trust_race_free(true);
    ///     let b = g.local(bins);
    ///     for i in 0..256 {
    ///         b.at_quiet(i).store_explicit_scope(0, Relaxed, WorkGroupScope);
    ///     }
    ///     g.barrier(LOCAL);
    ///     g.for_each(|it| {
    ///         let v = bytes.get(it.global_linear_id);
    ///         b.at_quiet(usize::from(v)).fetch_add_explicit_scope(1, Relaxed, WorkGroupScope);
    ///     });
    ///     g.barrier(LOCAL);
    ///     threes.set(0, b.at_quiet(3).load_explicit_scope(Relaxed, WorkGroupScope));
    /// }).unwrap();
    /// assert_eq!(threes.get(0), 2);
    /// ```
    #[inline]
    #[track_caller]
    pub fn at_quiet(&self, index: usize) -> QuietAtomic<'a, T> {
        if self.checked && index < self.len && self.written(index) {
            return QuietAtomic {
                // SAFETY: `index < len`, the slice's length, and the slice
                // is borrowed for `'a`, so the element is live.
                atomic: unsafe { &*self.base.add(index) },
                quiet: true,
            };
        }
        QuietAtomic {
            atomic: self.at(index),
            quiet: false,
        }
    }
}

/// A local atomic object whose relaxed, group-wide operations a kernel
/// proved race with nothing and synchronize nothing
/// ([`LocalView::at_quiet`]): where `quiet`, a checked launch performs them
/// without the checker; elsewhere they are [`Atomic`]'s own.
///
/// Its operations are those of [`Atomic`] whose order is `Relaxed` and
/// whose scope includes the work-group ([`GroupScope`]; device scope where
/// none is named): the types leave no other to call.
#[derive(Clone, Copy, Debug)]
pub struct QuietAtomic<'a, T: AtomicValue> {
    atomic: &'a Atomic<T, Local>,
    quiet: bool,
}

impl<T: AtomicValue> QuietAtomic<'_, T> {
    /// `atomic_load_explicit(obj, memory_order_relaxed)`: device scope.
    #[inline]
    #[track_caller]
    pub fn load_explicit(&self, order: Relaxed) -> T {
        match self.quiet {
            true => self.atomic.quiet_load(MemScope::Device, Location::caller()),
            false => self.atomic.load_explicit(order),
        }
    }
    /// `atomic_load_explicit(obj, memory_order_relaxed, scope)`.
    #[inline]
    #[track_caller]
    pub fn load_explicit_scope<Sc: GroupScope>(&self, order: Relaxed, scope: Sc) -> T {
        match self.quiet {
            true => self.atomic.quiet_load(Sc::SCOPE, Location::caller()),
            false => self.atomic.load_explicit_scope(order, scope),
        }
    }
    /// `atomic_store_explicit(obj, value, memory_order_relaxed)`: device
    /// scope.
    #[inline]
    #[track_caller]
    pub fn store_explicit(&self, value: T, order: Relaxed) {
        match self.quiet {
            true => self
                .atomic
                .quiet_store(value, MemScope::Device, Location::caller()),
            false => self.atomic.store_explicit(value, order),
        }
    }
    /// `atomic_store_explicit(obj, value, memory_order_relaxed, scope)`.
    #[inline]
    #[track_caller]
    pub fn store_explicit_scope<Sc: GroupScope>(&self, value: T, order: Relaxed, scope: Sc) {
        match self.quiet {
            true => self
                .atomic
                .quiet_store(value, Sc::SCOPE, Location::caller()),
            false => self.atomic.store_explicit_scope(value, order, scope),
        }
    }
    /// `atomic_exchange_explicit(obj, value, memory_order_relaxed)`:
    /// device scope. Returns the old value.
    #[inline]
    #[track_caller]
    pub fn exchange_explicit(&self, value: T, order: Relaxed) -> T {
        match self.quiet {
            true => self
                .atomic
                .quiet_exchange(value, MemScope::Device, Location::caller()),
            false => self.atomic.exchange_explicit(value, order),
        }
    }
    /// `atomic_exchange_explicit(obj, value, memory_order_relaxed, scope)`.
    #[inline]
    #[track_caller]
    pub fn exchange_explicit_scope<Sc: GroupScope>(
        &self,
        value: T,
        order: Relaxed,
        scope: Sc,
    ) -> T {
        match self.quiet {
            true => self
                .atomic
                .quiet_exchange(value, Sc::SCOPE, Location::caller()),
            false => self.atomic.exchange_explicit_scope(value, order, scope),
        }
    }
}

macro_rules! quiet_fetch {
    ($($op:ident: $explicit:ident, $scoped:ident, $cl:literal;)*) => {
        impl<T: AtomicInteger> QuietAtomic<'_, T> {$(
            #[doc = concat!("`", $cl, "_explicit(obj, operand, memory_order_relaxed)`: device scope. Returns the old value.")]
            #[inline]
            #[track_caller]
            pub fn $explicit(&self, operand: T, order: Relaxed) -> T {
                match self.quiet {
                    true => self.atomic.quiet_rmw(RmwOp::$op, operand, MemScope::Device, Location::caller()),
                    false => self.atomic.$explicit(operand, order),
                }
            }
            #[doc = concat!("`", $cl, "_explicit(obj, operand, memory_order_relaxed, scope)`. Returns the old value.")]
            #[inline]
            #[track_caller]
            pub fn $scoped<Sc: GroupScope>(&self, operand: T, order: Relaxed, scope: Sc) -> T {
                match self.quiet {
                    true => self.atomic.quiet_rmw(RmwOp::$op, operand, Sc::SCOPE, Location::caller()),
                    false => self.atomic.$scoped(operand, order, scope),
                }
            }
        )*}
    };
}
quiet_fetch! {
    Add: fetch_add_explicit, fetch_add_explicit_scope, "atomic_fetch_add";
    Sub: fetch_sub_explicit, fetch_sub_explicit_scope, "atomic_fetch_sub";
    Or: fetch_or_explicit, fetch_or_explicit_scope, "atomic_fetch_or";
    Xor: fetch_xor_explicit, fetch_xor_explicit_scope, "atomic_fetch_xor";
    And: fetch_and_explicit, fetch_and_explicit_scope, "atomic_fetch_and";
    Min: fetch_min_explicit, fetch_min_explicit_scope, "atomic_fetch_min";
    Max: fetch_max_explicit, fetch_max_explicit_scope, "atomic_fetch_max";
}
