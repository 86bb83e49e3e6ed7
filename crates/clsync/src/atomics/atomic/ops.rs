//! The atomic operations once each, with run-time order and scope: the
//! gate test, the fast side and the slow side. The typed forms in the parent
//! module pass constants, so after inlining each of these folds to the one
//! instruction (global) or load/store pair (local).
//!
//! Each operation tests the gate itself, and with the gate raised calls its
//! own slow side: a method out of line, which makes the closure the checker
//! takes. A closure made first has its captures stored to the stack on every
//! call, for the slow path's sake (three stores per local `atomic_fetch_add`
//! in a histogram); and a slow side inlined beside the fast one ends in the
//! same memory access, which the compiler then shares between the two, so the
//! fast side computes the object's address into a register rather than
//! folding it into the access. A local `atomic_inc` in a histogram's loop is
//! `incl (base, index, 4)` so, five instructions per byte with the gate test
//! and 2.2-2.3 GB/s (2-core VM, one thread); with the slow side inlined it
//! was seven and 1.6-1.7, and with only the checker's call out of line (the
//! closure made inline) six and 2.1.

use std::panic::Location;
use std::sync::atomic::Ordering;

use super::Atomic;
use crate::atomics::space::Space;
use crate::atomics::Effect;
use crate::checker::{AtomicAccess, OpKind};
use crate::memory::{AtomicInteger, AtomicValue, RawAtomic, RmwOp};
use crate::sync::{MemOrder, MemScope};

impl<T: AtomicValue, S: Space> Atomic<T, S> {
    #[inline(always)]
    pub(super) fn op_load(
        &self,
        order: MemOrder,
        scope: MemScope,
        at: &'static Location<'static>,
    ) -> T {
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
    pub(super) fn op_store(
        &self,
        v: T,
        order: MemOrder,
        scope: MemScope,
        at: &'static Location<'static>,
    ) {
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
    pub(super) fn op_exchange(
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
    pub(super) fn op_cas(
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
    /// raised: cancellation poll, trace and checker
    /// ([`raised`](crate::atomics::raised); the gate is not tested again).
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
        let access = AtomicAccess {
            op,
            kind,
            order,
            failure,
            scope,
        };
        crate::atomics::raised(self as *const Self as usize, S::LOCAL, access, at, f)
    }
}

impl<T: AtomicInteger, S: Space> Atomic<T, S> {
    #[inline(always)]
    pub(super) fn op_rmw(
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

/// The relaxed operations of an atomic that no other access races with or
/// synchronizes through (see `QuietAtomic`): with the gate raised they are
/// polled and traced, not checked.
impl<T: AtomicValue, S: Space> Atomic<T, S> {
    #[inline(always)]
    pub(crate) fn quiet_load(&self, scope: MemScope, at: &'static Location<'static>) -> T {
        if crate::gate::quiet() {
            return self.load_now(MemOrder::Relaxed);
        }
        self.quiet_load_slow(scope, at)
    }

    #[cold]
    #[inline(never)]
    fn quiet_load_slow(&self, scope: MemScope, at: &'static Location<'static>) -> T {
        let f = move || (self.load_now(MemOrder::Relaxed), Effect::Read);
        self.unchecked("atomic_load", OpKind::Load, scope, at, f)
    }

    #[inline(always)]
    pub(crate) fn quiet_store(&self, v: T, scope: MemScope, at: &'static Location<'static>) {
        if crate::gate::quiet() {
            return self.store_now(v, MemOrder::Relaxed);
        }
        self.quiet_store_slow(v, scope, at)
    }

    #[cold]
    #[inline(never)]
    fn quiet_store_slow(&self, v: T, scope: MemScope, at: &'static Location<'static>) {
        let f = move || (self.store_now(v, MemOrder::Relaxed), Effect::STORE);
        self.unchecked("atomic_store", OpKind::Store, scope, at, f)
    }

    #[inline(always)]
    pub(crate) fn quiet_exchange(
        &self,
        v: T,
        scope: MemScope,
        at: &'static Location<'static>,
    ) -> T {
        if crate::gate::quiet() {
            return self.exchange_now(v, MemOrder::Relaxed);
        }
        self.quiet_exchange_slow(v, scope, at)
    }

    #[cold]
    #[inline(never)]
    fn quiet_exchange_slow(&self, v: T, scope: MemScope, at: &'static Location<'static>) -> T {
        let f = move || {
            let old = self.exchange_now(v, MemOrder::Relaxed);
            (old, Effect::rmw(old.to_raw(), v.to_raw()))
        };
        self.unchecked("atomic_exchange", OpKind::Rmw, scope, at, f)
    }

    /// [`checked`](Self::checked) without the checker.
    #[inline(always)]
    fn unchecked<R>(
        &self,
        op: &'static str,
        kind: OpKind,
        scope: MemScope,
        at: &'static Location<'static>,
        f: impl FnOnce() -> (R, Effect),
    ) -> R {
        let access = AtomicAccess::relaxed(op, kind, scope);
        crate::atomics::unchecked(S::LOCAL, access, at, f)
    }
}

impl<T: AtomicInteger, S: Space> Atomic<T, S> {
    #[inline(always)]
    pub(crate) fn quiet_rmw(
        &self,
        op: RmwOp,
        v: T,
        scope: MemScope,
        at: &'static Location<'static>,
    ) -> T {
        if crate::gate::quiet() {
            return self.rmw_now(op, v, MemOrder::Relaxed);
        }
        self.quiet_rmw_slow(op, v, scope, at)
    }

    #[cold]
    #[inline(never)]
    fn quiet_rmw_slow(
        &self,
        op: RmwOp,
        v: T,
        scope: MemScope,
        at: &'static Location<'static>,
    ) -> T {
        let f = move || {
            let old = self.rmw_now(op, v, MemOrder::Relaxed);
            let new = <T::Raw as RawAtomic>::apply(op, old.to_raw(), v.to_raw());
            (old, Effect::rmw(old.to_raw(), new))
        };
        self.unchecked(op.name(), OpKind::Rmw, scope, at, f)
    }
}
