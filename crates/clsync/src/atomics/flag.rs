//! `atomic_flag`.

use std::fmt;
use std::marker::PhantomData;
use std::panic::Location;
use std::sync::atomic::{AtomicU32, Ordering};

use super::space::{Global, Local, Space};
use super::Effect;
use crate::checker::{self, OpKind};
use crate::memory::Element;
use crate::sync::sealed::Sealed;
use crate::sync::{validate, AtomicScope, MemOrder, MemScope, RmwOrder, StoreOrder, SyncError};

/// `atomic_flag`: a boolean with `test_and_set` and `clear`, in address
/// space `S`. Like every atomic, it lives only in a buffer or local memory.
///
/// ```
/// use clsync::{AtomicFlag, Buffer};
/// let locks: Buffer<AtomicFlag> = Buffer::new(1);
/// assert!(!locks.at(0).test_and_set()); // was clear: acquired
/// assert!(locks.at(0).test_and_set()); // already set
/// locks.at(0).clear();
/// assert!(!locks.at(0).test_and_set());
/// ```
pub struct AtomicFlag<S: Space = Global> {
    raw: AtomicU32,
    _space: PhantomData<S>,
}

impl<S: Space> AtomicFlag<S> {
    pub(crate) fn zeroed() -> Self {
        AtomicFlag {
            raw: AtomicU32::new(0),
            _space: PhantomData,
        }
    }

    #[inline(always)]
    fn op_test_and_set(
        &self,
        order: MemOrder,
        scope: MemScope,
        at: &'static Location<'static>,
    ) -> bool {
        let addr = self as *const Self as usize;
        let f = || {
            let old = if S::LOCAL {
                // Relaxed: local memory is reached only by its group's
                // thread, and no work-item switch can come between the load
                // and the store.
                let old = self.raw.load(Ordering::Relaxed);
                self.raw.store(1, Ordering::Relaxed);
                old
            } else {
                // The user's order; an acquire here pairs with the release
                // `clear` of the previous holder.
                self.raw.swap(1, order.to_std())
            };
            (old != 0, Effect::rmw(old, 1))
        };
        let name = "atomic_flag_test_and_set";
        super::perform(addr, S::LOCAL, name, OpKind::Rmw, order, None, scope, at, f)
    }

    #[inline(always)]
    fn op_clear(&self, order: MemOrder, scope: MemScope, at: &'static Location<'static>) {
        let addr = self as *const Self as usize;
        let f = || {
            if S::LOCAL {
                // Relaxed: see `op_test_and_set`.
                self.raw.store(0, Ordering::Relaxed)
            } else {
                // The user's order; a release here pairs with the next
                // holder's acquire `test_and_set`.
                self.raw.store(0, order.to_std())
            }
            ((), Effect::STORE)
        };
        super::perform(
            addr,
            S::LOCAL,
            "atomic_flag_clear",
            OpKind::Store,
            order,
            None,
            scope,
            at,
            f,
        )
    }

    /// `atomic_flag_test_and_set`: seq_cst, device scope. Returns whether
    /// the flag was already set.
    #[inline]
    #[track_caller]
    pub fn test_and_set(&self) -> bool {
        self.op_test_and_set(MemOrder::SeqCst, MemScope::Device, Location::caller())
    }
    /// `atomic_flag_test_and_set_explicit(obj, order)`: device scope.
    #[inline]
    #[track_caller]
    pub fn test_and_set_explicit<O: RmwOrder>(&self, _order: O) -> bool {
        self.op_test_and_set(O::ORDER, MemScope::Device, Location::caller())
    }
    /// `atomic_flag_test_and_set_explicit(obj, order, scope)`.
    #[inline]
    #[track_caller]
    pub fn test_and_set_explicit_scope<O: RmwOrder, Sc: AtomicScope>(
        &self,
        _order: O,
        _scope: Sc,
    ) -> bool {
        self.op_test_and_set(O::ORDER, Sc::SCOPE, Location::caller())
    }
    /// `atomic_flag_test_and_set_explicit` with run-time arguments, checked.
    #[track_caller]
    pub fn test_and_set_dyn(&self, order: MemOrder, scope: MemScope) -> Result<bool, SyncError> {
        checker::argument(
            "atomic_flag_test_and_set",
            validate::atomic_scope("atomic_flag_test_and_set", scope),
            Location::caller(),
        )?;
        Ok(self.op_test_and_set(order, scope, Location::caller()))
    }

    /// `atomic_flag_clear`: seq_cst, device scope.
    #[inline]
    #[track_caller]
    pub fn clear(&self) {
        self.op_clear(MemOrder::SeqCst, MemScope::Device, Location::caller())
    }
    /// `atomic_flag_clear_explicit(obj, order)`: device scope. Like a store,
    /// it cannot take acquire or acq_rel.
    #[inline]
    #[track_caller]
    pub fn clear_explicit<O: StoreOrder>(&self, _order: O) {
        self.op_clear(O::ORDER, MemScope::Device, Location::caller())
    }
    /// `atomic_flag_clear_explicit(obj, order, scope)`.
    #[inline]
    #[track_caller]
    pub fn clear_explicit_scope<O: StoreOrder, Sc: AtomicScope>(&self, _order: O, _scope: Sc) {
        self.op_clear(O::ORDER, Sc::SCOPE, Location::caller())
    }
    /// `atomic_flag_clear_explicit` with run-time arguments, checked.
    #[track_caller]
    pub fn clear_dyn(&self, order: MemOrder, scope: MemScope) -> Result<(), SyncError> {
        if matches!(order, MemOrder::Acquire | MemOrder::AcqRel) {
            return Err(SyncError::Order {
                op: "atomic_flag_clear",
                order,
            });
        }
        checker::argument(
            "atomic_flag_clear",
            validate::atomic_scope("atomic_flag_clear", scope),
            Location::caller(),
        )?;
        self.op_clear(order, scope, Location::caller());
        Ok(())
    }
}

impl<S: Space> fmt::Debug for AtomicFlag<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Relaxed: a diagnostic snapshot.
        write!(
            f,
            "{} atomic_flag({})",
            S::NAME,
            self.raw.load(Ordering::Relaxed) != 0
        )
    }
}

impl Sealed for AtomicFlag<Global> {}
impl Element for AtomicFlag<Global> {
    type Slot = AtomicFlag<Global>;
    type LocalSlot = AtomicFlag<Local>;
    const TYPE_NAME: &'static str = "atomic_flag";
    fn zero_slot() -> Self::Slot {
        AtomicFlag::zeroed()
    }
    fn zero_local_slot() -> Self::LocalSlot {
        AtomicFlag::zeroed()
    }
}
