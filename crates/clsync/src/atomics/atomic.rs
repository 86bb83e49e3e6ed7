//! [`Atomic`]: the OpenCL C 2.0 atomic types and their functions.

mod ops;

use std::fmt;
use std::marker::PhantomData;
use std::panic::Location;
use std::sync::atomic::Ordering;

use super::space::{Global, Local, Space};
use crate::checker::{self, Space as MemSpace};
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
