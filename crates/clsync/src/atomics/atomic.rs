//! [`Atomic`]: the OpenCL C 2.0 atomic types and their functions.

use std::fmt;
use std::marker::PhantomData;
use std::panic::Location;
use std::sync::atomic::Ordering;

use super::space::{Global, Local, Space};
use super::Effect;
use crate::checker::{self, OpKind, Space as MemSpace};
use crate::memory::{AtomicInteger, AtomicValue, Element, RawAtomic, RmwOp};
use crate::scheduler::hooks;
use crate::sync::sealed::Sealed;
use crate::sync::{
    validate, AtomicScope, FailureOrderFor, LoadOrder, MemOrder, MemScope, RmwOrder, StoreOrder,
    SyncError,
};

/// An OpenCL C atomic object holding a `T`, in address space `S`.
///
/// Use the aliases: [`AtomicInt`], [`AtomicUint`], [`AtomicLong`],
/// [`AtomicUlong`], [`AtomicFloat`], [`AtomicDouble`], [`AtomicIntptr`],
/// [`AtomicUintptr`], [`AtomicSize`], [`AtomicPtrdiff`].
///
/// Every function comes in three forms, as in `001_b96d5603ef61627c.txt`:
/// plain (`memory_order_seq_cst`, `memory_scope_device`), `_explicit` with an
/// order (device scope), and `_explicit_scope` with an order and a scope.
/// Orders and scopes are types, so illegal ones do not compile; the `_dyn`
/// forms take run-time values and return a [`SyncError`] instead.
///
/// # Memory ordering
///
/// A global atomic is a Rust atomic of the same size and performs the
/// operation with the C11 ordering of the same name, so it synchronizes with
/// other work-groups and with host threads exactly as C11 says. The scope is
/// honoured by being at least as strong as asked: the CPU's coherence is
/// system-wide. A local atomic can only be reached from its group's thread and
/// every party it can synchronize with runs on that thread, so it needs no
/// hardware ordering.
///
/// ```
/// use clsync::{AtomicInt, Buffer};
/// use clsync::sync::{Acquire, Release, WorkGroupScope};
/// let b: Buffer<AtomicInt> = Buffer::from_values(&[5]);
/// let a = b.at(0);
/// assert_eq!(a.fetch_add(2), 5);
/// a.store_explicit(10, Release);
/// assert_eq!(a.load_explicit_scope(Acquire, WorkGroupScope), 10);
/// let mut expected = 10;
/// assert!(a.compare_exchange_strong(&mut expected, 11));
/// assert!(!a.compare_exchange_strong(&mut expected, 12));
/// assert_eq!(expected, 11);
/// ```
#[repr(transparent)]
pub struct Atomic<T: AtomicValue, S: Space = Global> {
    raw: T::Raw,
    _space: PhantomData<S>,
}

/// `atomic_int`.
pub type AtomicInt<S = Global> = Atomic<i32, S>;
/// `atomic_uint`.
pub type AtomicUint<S = Global> = Atomic<u32, S>;
/// `atomic_long`.
pub type AtomicLong<S = Global> = Atomic<i64, S>;
/// `atomic_ulong`.
pub type AtomicUlong<S = Global> = Atomic<u64, S>;
/// `atomic_float`.
pub type AtomicFloat<S = Global> = Atomic<f32, S>;
/// `atomic_double`.
pub type AtomicDouble<S = Global> = Atomic<f64, S>;
/// `atomic_intptr_t`.
pub type AtomicIntptr<S = Global> = Atomic<isize, S>;
/// `atomic_uintptr_t`.
pub type AtomicUintptr<S = Global> = Atomic<usize, S>;
/// `atomic_size_t`.
pub type AtomicSize<S = Global> = Atomic<usize, S>;
/// `atomic_ptrdiff_t`.
pub type AtomicPtrdiff<S = Global> = Atomic<isize, S>;

impl<T: AtomicValue, S: Space> Atomic<T, S> {
    pub(crate) fn zeroed() -> Self {
        Atomic {
            raw: T::Raw::new(T::default().to_raw()),
            _space: PhantomData,
        }
    }

    // ---- the operations, once, with run-time order and scope -------------
    //
    // The typed forms below pass constants, so after inlining each of these
    // folds to the one instruction (global) or load/store pair (local).

    // Each operation tests the gate itself, and with the gate raised calls
    // its own slow side: a method out of line, which makes the closure the
    // checker takes. A closure made first has its captures stored to the
    // stack on every call, for the slow path's sake (three stores per local
    // `atomic_fetch_add` in a histogram); and a slow side inlined beside the
    // fast one ends in the same memory access, which the compiler then
    // shares between the two, so the fast side computes the object's address
    // into a register rather than folding it into the access. A local
    // `atomic_inc` in a histogram's loop is `incl (base, index, 4)` so, five
    // instructions per byte with the gate test and 2.2-2.3 GB/s (2-core VM,
    // one thread); with the slow side inlined it was seven and 1.6-1.7, and
    // with only the checker's call out of line (the closure made inline) six
    // and 2.1.

    #[inline(always)]
    fn op_load(&self, order: MemOrder, scope: MemScope, at: &'static Location<'static>) -> T {
        if crate::gate::quiet() {
            return self.load_now(order);
        }
        self.load_slow(order, scope, at)
    }

    #[cold]
    #[inline(never)]
    fn load_slow(&self, order: MemOrder, scope: MemScope, at: &'static Location<'static>) -> T {
        let f = move || (self.load_now(order), Effect::Read);
        self.checked("atomic_load", OpKind::Load, order, None, scope, at, f)
    }

    #[inline(always)]
    fn load_now(&self, order: MemOrder) -> T {
        T::from_raw(if S::LOCAL {
            // Relaxed: local memory is reached only by this group's thread;
            // see the type's "Memory ordering" section.
            self.raw.load(Ordering::Relaxed)
        } else {
            // The user's order; it pairs with whatever release store or
            // fence the kernel pairs it with.
            self.raw.load(order.to_std())
        })
    }

    #[inline(always)]
    fn op_store(&self, v: T, order: MemOrder, scope: MemScope, at: &'static Location<'static>) {
        if crate::gate::quiet() {
            return self.store_now(v, order);
        }
        self.store_slow(v, order, scope, at)
    }

    #[cold]
    #[inline(never)]
    fn store_slow(&self, v: T, order: MemOrder, scope: MemScope, at: &'static Location<'static>) {
        let f = move || (self.store_now(v, order), Effect::STORE);
        self.checked("atomic_store", OpKind::Store, order, None, scope, at, f)
    }

    #[inline(always)]
    fn store_now(&self, v: T, order: MemOrder) {
        if S::LOCAL {
            // Relaxed: see `load_now`.
            self.raw.store(v.to_raw(), Ordering::Relaxed)
        } else {
            // The user's order.
            self.raw.store(v.to_raw(), order.to_std())
        }
    }

    #[inline(always)]
    fn op_exchange(
        &self,
        v: T,
        order: MemOrder,
        scope: MemScope,
        at: &'static Location<'static>,
    ) -> T {
        if crate::gate::quiet() {
            return self.exchange_now(v, order);
        }
        self.exchange_slow(v, order, scope, at)
    }

    #[cold]
    #[inline(never)]
    fn exchange_slow(
        &self,
        v: T,
        order: MemOrder,
        scope: MemScope,
        at: &'static Location<'static>,
    ) -> T {
        let f = move || {
            let old = self.exchange_now(v, order);
            (old, Effect::rmw(old.to_raw(), v.to_raw()))
        };
        self.checked("atomic_exchange", OpKind::Rmw, order, None, scope, at, f)
    }

    #[inline(always)]
    fn exchange_now(&self, v: T, order: MemOrder) -> T {
        T::from_raw(if S::LOCAL {
            // Relaxed: see `load_now`. No work-item switch can come between
            // the load and the store, so the pair is indivisible.
            let old = self.raw.load(Ordering::Relaxed);
            self.raw.store(v.to_raw(), Ordering::Relaxed);
            old
        } else {
            // The user's order.
            self.raw.swap(v.to_raw(), order.to_std())
        })
    }

    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn op_cas(
        &self,
        expected: &mut T,
        desired: T,
        success: MemOrder,
        failure: MemOrder,
        weak: bool,
        scope: MemScope,
        at: &'static Location<'static>,
    ) -> bool {
        let op = if weak {
            "atomic_compare_exchange_weak"
        } else {
            "atomic_compare_exchange_strong"
        };
        let want = expected.to_raw();
        let result = if crate::gate::quiet() {
            self.cas_raw(want, desired, success, failure, weak)
        } else {
            self.cas_slow(op, want, desired, success, failure, weak, scope, at)
        };
        match result {
            Ok(_) => true,
            Err(cur) => {
                *expected = T::from_raw(cur);
                false
            }
        }
    }

    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn cas_slow(
        &self,
        op: &'static str,
        want: <T::Raw as RawAtomic>::Value,
        desired: T,
        success: MemOrder,
        failure: MemOrder,
        weak: bool,
        scope: MemScope,
        at: &'static Location<'static>,
    ) -> Result<<T::Raw as RawAtomic>::Value, <T::Raw as RawAtomic>::Value> {
        let f = move || {
            let r = self.cas_raw(want, desired, success, failure, weak);
            let effect = match r {
                Ok(_) => Effect::rmw(want, desired.to_raw()),
                Err(_) => Effect::Read,
            };
            (r, effect)
        };
        self.checked(op, OpKind::Rmw, success, Some(failure), scope, at, f)
    }

    #[inline(always)]
    fn cas_raw(
        &self,
        want: <T::Raw as RawAtomic>::Value,
        desired: T,
        success: MemOrder,
        failure: MemOrder,
        weak: bool,
    ) -> Result<<T::Raw as RawAtomic>::Value, <T::Raw as RawAtomic>::Value> {
        if S::LOCAL {
            // Relaxed: see `exchange_now`.
            let cur = self.raw.load(Ordering::Relaxed);
            if cur == want {
                self.raw.store(desired.to_raw(), Ordering::Relaxed);
                Ok(cur)
            } else {
                Err(cur)
            }
        } else if weak {
            // The user's orders.
            self.raw
                .cas_weak(want, desired.to_raw(), success.to_std(), failure.to_std())
        } else {
            // The user's orders.
            self.raw
                .cas(want, desired.to_raw(), success.to_std(), failure.to_std())
        }
    }

    /// The slow side of an operation, after the operation found the gate
    /// raised: cancellation poll, trace and checker (`atomics::perform`).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn checked<R>(
        &self,
        op: &'static str,
        kind: OpKind,
        order: MemOrder,
        failure: Option<MemOrder>,
        scope: MemScope,
        at: &'static Location<'static>,
        f: impl FnOnce() -> (R, Effect),
    ) -> R {
        // `perform` tests the gate again: on this path only, and the slow
        // side is all it adds.
        super::perform(
            self as *const Self as usize,
            S::LOCAL,
            op,
            kind,
            order,
            failure,
            scope,
            at,
            f,
        )
    }

    /// `atomic_init`: a non-atomic initialization of the object.
    #[track_caller]
    pub fn init(&self, value: T) {
        let at = Location::caller();
        hooks::poll(at);
        checker::plain(self as *const Self as usize, Self::space(), true, at);
        // Relaxed: atomic_init is not an atomic operation in OpenCL C; it
        // orders nothing.
        self.raw.store(value.to_raw(), Ordering::Relaxed)
    }
}

/// Non-atomic access to an atomic object's storage, for interpreted kernels
/// whose memory is untyped (a SPIR-V `OpLoad` of a location that other code
/// reaches with `OpAtomicLoad`). OpenCL C itself has no such access except
/// `atomic_init`; the checker sees these as plain accesses, so mixing them
/// with atomics unordered is reported.
impl<T: AtomicValue, S: Space> Atomic<T, S> {
    /// A plain (non-atomic) read.
    #[track_caller]
    pub fn plain_load(&self) -> T {
        let at = Location::caller();
        hooks::poll(at);
        checker::plain(self as *const Self as usize, Self::space(), false, at);
        // Relaxed: a plain access (see the `memory` module docs).
        T::from_raw(self.raw.load(Ordering::Relaxed))
    }

    /// A plain (non-atomic) write.
    #[track_caller]
    pub fn plain_store(&self, value: T) {
        let at = Location::caller();
        hooks::poll(at);
        checker::plain(self as *const Self as usize, Self::space(), true, at);
        // A change of memory, for the watchdog's probation: an interpreted
        // loop that stores is not stuck.
        hooks::changed();
        // Relaxed: a plain access.
        self.raw.store(value.to_raw(), Ordering::Relaxed)
    }

    fn space() -> MemSpace {
        if S::LOCAL {
            MemSpace::Local
        } else {
            MemSpace::Global
        }
    }
}

/// The three forms of one operation: plain, `_explicit`, `_explicit_scope`,
/// plus the run-time-checked `_dyn`.
macro_rules! three_forms_load {
    () => {
        /// `atomic_load`: seq_cst, device scope.
        #[inline]
        #[track_caller]
        pub fn load(&self) -> T {
            self.op_load(MemOrder::SeqCst, MemScope::Device, Location::caller())
        }
        /// `atomic_load_explicit(obj, order)`: device scope.
        #[inline]
        #[track_caller]
        pub fn load_explicit<O: LoadOrder>(&self, _order: O) -> T {
            self.op_load(O::ORDER, MemScope::Device, Location::caller())
        }
        /// `atomic_load_explicit(obj, order, scope)`.
        #[inline]
        #[track_caller]
        pub fn load_explicit_scope<O: LoadOrder, Sc: AtomicScope>(
            &self,
            _order: O,
            _scope: Sc,
        ) -> T {
            self.op_load(O::ORDER, Sc::SCOPE, Location::caller())
        }
        /// `atomic_load_explicit` with run-time arguments, checked.
        #[track_caller]
        pub fn load_dyn(&self, order: MemOrder, scope: MemScope) -> Result<T, SyncError> {
            checker::argument(
                "atomic_load",
                validate::load_order(order),
                Location::caller(),
            )?;
            checker::argument(
                "atomic_load",
                validate::atomic_scope("atomic_load", scope),
                Location::caller(),
            )?;
            Ok(self.op_load(order, scope, Location::caller()))
        }
    };
}

impl<T: AtomicValue, S: Space> Atomic<T, S> {
    three_forms_load!();

    /// `atomic_store`: seq_cst, device scope.
    #[inline]
    #[track_caller]
    pub fn store(&self, value: T) {
        self.op_store(
            value,
            MemOrder::SeqCst,
            MemScope::Device,
            Location::caller(),
        )
    }
    /// `atomic_store_explicit(obj, value, order)`: device scope.
    #[inline]
    #[track_caller]
    pub fn store_explicit<O: StoreOrder>(&self, value: T, _order: O) {
        self.op_store(value, O::ORDER, MemScope::Device, Location::caller())
    }
    /// `atomic_store_explicit(obj, value, order, scope)`.
    #[inline]
    #[track_caller]
    pub fn store_explicit_scope<O: StoreOrder, Sc: AtomicScope>(
        &self,
        value: T,
        _order: O,
        _scope: Sc,
    ) {
        self.op_store(value, O::ORDER, Sc::SCOPE, Location::caller())
    }
    /// `atomic_store_explicit` with run-time arguments, checked.
    #[track_caller]
    pub fn store_dyn(&self, value: T, order: MemOrder, scope: MemScope) -> Result<(), SyncError> {
        checker::argument(
            "atomic_store",
            validate::store_order(order),
            Location::caller(),
        )?;
        checker::argument(
            "atomic_store",
            validate::atomic_scope("atomic_store", scope),
            Location::caller(),
        )?;
        self.op_store(value, order, scope, Location::caller());
        Ok(())
    }

    /// `atomic_exchange`: seq_cst, device scope. Returns the old value.
    #[inline]
    #[track_caller]
    pub fn exchange(&self, value: T) -> T {
        self.op_exchange(
            value,
            MemOrder::SeqCst,
            MemScope::Device,
            Location::caller(),
        )
    }
    /// `atomic_exchange_explicit(obj, value, order)`: device scope.
    #[inline]
    #[track_caller]
    pub fn exchange_explicit<O: RmwOrder>(&self, value: T, _order: O) -> T {
        self.op_exchange(value, O::ORDER, MemScope::Device, Location::caller())
    }
    /// `atomic_exchange_explicit(obj, value, order, scope)`.
    #[inline]
    #[track_caller]
    pub fn exchange_explicit_scope<O: RmwOrder, Sc: AtomicScope>(
        &self,
        value: T,
        _order: O,
        _scope: Sc,
    ) -> T {
        self.op_exchange(value, O::ORDER, Sc::SCOPE, Location::caller())
    }
    /// `atomic_exchange_explicit` with run-time arguments, checked.
    #[track_caller]
    pub fn exchange_dyn(&self, value: T, order: MemOrder, scope: MemScope) -> Result<T, SyncError> {
        checker::argument(
            "atomic_exchange",
            validate::atomic_scope("atomic_exchange", scope),
            Location::caller(),
        )?;
        Ok(self.op_exchange(value, order, scope, Location::caller()))
    }
}

macro_rules! cas_forms {
    ($weak:literal, $plain:ident, $explicit:ident, $scoped:ident, $dyn_:ident, $cl:literal) => {
        #[doc = concat!("`", $cl, "`: seq_cst on success and failure, device scope. ")]
        #[doc = "If the object equals `*expected`, stores `desired` and returns `true`; "]
        #[doc = "otherwise writes the current value to `*expected` and returns `false`."]
        #[inline]
        #[track_caller]
        pub fn $plain(&self, expected: &mut T, desired: T) -> bool {
            self.op_cas(expected, desired, MemOrder::SeqCst, MemOrder::SeqCst, $weak, MemScope::Device, Location::caller())
        }
        #[doc = concat!("`", $cl, "_explicit(obj, expected, desired, success, failure)`: device scope.")]
        #[inline]
        #[track_caller]
        pub fn $explicit<O: RmwOrder, F: FailureOrderFor<O>>(&self, expected: &mut T, desired: T, _success: O, _failure: F) -> bool {
            self.op_cas(expected, desired, O::ORDER, F::ORDER, $weak, MemScope::Device, Location::caller())
        }
        #[doc = concat!("`", $cl, "_explicit(obj, expected, desired, success, failure, scope)`.")]
        #[inline]
        #[track_caller]
        pub fn $scoped<O: RmwOrder, F: FailureOrderFor<O>, Sc: AtomicScope>(
            &self,
            expected: &mut T,
            desired: T,
            _success: O,
            _failure: F,
            _scope: Sc,
        ) -> bool {
            self.op_cas(expected, desired, O::ORDER, F::ORDER, $weak, Sc::SCOPE, Location::caller())
        }
        #[doc = concat!("`", $cl, "_explicit` with run-time arguments, checked.")]
        #[track_caller]
        pub fn $dyn_(&self, expected: &mut T, desired: T, success: MemOrder, failure: MemOrder, scope: MemScope) -> Result<bool, SyncError> {
            checker::argument($cl, validate::failure_order(success, failure), Location::caller())?;
            checker::argument($cl, validate::atomic_scope($cl, scope), Location::caller())?;
            Ok(self.op_cas(expected, desired, success, failure, $weak, scope, Location::caller()))
        }
    };
}

impl<T: AtomicValue, S: Space> Atomic<T, S> {
    cas_forms!(
        false,
        compare_exchange_strong,
        compare_exchange_strong_explicit,
        compare_exchange_strong_explicit_scope,
        compare_exchange_strong_dyn,
        "atomic_compare_exchange_strong"
    );
    cas_forms!(
        true,
        compare_exchange_weak,
        compare_exchange_weak_explicit,
        compare_exchange_weak_explicit_scope,
        compare_exchange_weak_dyn,
        "atomic_compare_exchange_weak"
    );
}

impl<T: AtomicInteger, S: Space> Atomic<T, S> {
    #[inline(always)]
    fn op_rmw(
        &self,
        op: RmwOp,
        v: T,
        order: MemOrder,
        scope: MemScope,
        at: &'static Location<'static>,
    ) -> T {
        if crate::gate::quiet() {
            return self.rmw_now(op, v, order);
        }
        self.rmw_slow(op, v, order, scope, at)
    }

    #[cold]
    #[inline(never)]
    fn rmw_slow(
        &self,
        op: RmwOp,
        v: T,
        order: MemOrder,
        scope: MemScope,
        at: &'static Location<'static>,
    ) -> T {
        let f = move || {
            let old = self.rmw_now(op, v, order);
            let new = <T::Raw as RawAtomic>::apply(op, old.to_raw(), v.to_raw());
            (old, Effect::rmw(old.to_raw(), new))
        };
        self.checked(op.name(), OpKind::Rmw, order, None, scope, at, f)
    }

    #[inline(always)]
    fn rmw_now(&self, op: RmwOp, v: T, order: MemOrder) -> T {
        if S::LOCAL {
            // Relaxed: see `exchange_now`.
            let old = self.raw.load(Ordering::Relaxed);
            self.raw
                .store(<T::Raw as RawAtomic>::apply(op, old, v), Ordering::Relaxed);
            old
        } else {
            // The user's order.
            self.raw.rmw(op, v, order.to_std())
        }
    }
}

macro_rules! fetch_forms {
    ($($op:ident: $plain:ident, $explicit:ident, $scoped:ident, $dyn_:ident, $cl:literal;)*) => {
        impl<T: AtomicInteger, S: Space> Atomic<T, S> {$(
            #[doc = concat!("`", $cl, "`: seq_cst, device scope. Returns the old value.")]
            #[inline]
            #[track_caller]
            pub fn $plain(&self, operand: T) -> T {
                self.op_rmw(RmwOp::$op, operand, MemOrder::SeqCst, MemScope::Device, Location::caller())
            }
            #[doc = concat!("`", $cl, "_explicit(obj, operand, order)`: device scope.")]
            #[inline]
            #[track_caller]
            pub fn $explicit<O: RmwOrder>(&self, operand: T, _order: O) -> T {
                self.op_rmw(RmwOp::$op, operand, O::ORDER, MemScope::Device, Location::caller())
            }
            #[doc = concat!("`", $cl, "_explicit(obj, operand, order, scope)`.")]
            #[inline]
            #[track_caller]
            pub fn $scoped<O: RmwOrder, Sc: AtomicScope>(&self, operand: T, _order: O, _scope: Sc) -> T {
                self.op_rmw(RmwOp::$op, operand, O::ORDER, Sc::SCOPE, Location::caller())
            }
            #[doc = concat!("`", $cl, "_explicit` with run-time arguments, checked.")]
            #[track_caller]
            pub fn $dyn_(&self, operand: T, order: MemOrder, scope: MemScope) -> Result<T, SyncError> {
                checker::argument($cl, validate::atomic_scope($cl, scope), Location::caller())?;
                Ok(self.op_rmw(RmwOp::$op, operand, order, scope, Location::caller()))
            }
        )*}
    };
}
fetch_forms! {
    Add: fetch_add, fetch_add_explicit, fetch_add_explicit_scope, fetch_add_dyn, "atomic_fetch_add";
    Sub: fetch_sub, fetch_sub_explicit, fetch_sub_explicit_scope, fetch_sub_dyn, "atomic_fetch_sub";
    Or: fetch_or, fetch_or_explicit, fetch_or_explicit_scope, fetch_or_dyn, "atomic_fetch_or";
    Xor: fetch_xor, fetch_xor_explicit, fetch_xor_explicit_scope, fetch_xor_dyn, "atomic_fetch_xor";
    And: fetch_and, fetch_and_explicit, fetch_and_explicit_scope, fetch_and_dyn, "atomic_fetch_and";
    Min: fetch_min, fetch_min_explicit, fetch_min_explicit_scope, fetch_min_dyn, "atomic_fetch_min";
    Max: fetch_max, fetch_max_explicit, fetch_max_explicit_scope, fetch_max_dyn, "atomic_fetch_max";
}

impl<T: AtomicValue, S: Space> fmt::Debug for Atomic<T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Relaxed: a diagnostic snapshot; it orders nothing.
        let v = T::from_raw(self.raw.load(Ordering::Relaxed));
        write!(f, "{} {}({:?})", S::NAME, T::ATOMIC_NAME, v)
    }
}

impl<T: AtomicValue> Sealed for Atomic<T, Global> {}
impl<T: AtomicValue> Element for Atomic<T, Global> {
    type Slot = Atomic<T, Global>;
    type LocalSlot = Atomic<T, Local>;
    const TYPE_NAME: &'static str = T::ATOMIC_NAME;
    fn zero_slot() -> Self::Slot {
        Atomic::zeroed()
    }
    fn zero_local_slot() -> Self::LocalSlot {
        Atomic::zeroed()
    }
}
