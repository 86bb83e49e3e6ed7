//! The way in of every atomic operation: the [`gate`](crate::gate) test,
//! and behind it the cancellation poll, the trace event and the checker.

use std::panic::Location;

use crate::checker::{self, AtomicAccess, OpKind};
use crate::scheduler::hooks;
use crate::sync::{MemOrder, MemScope};
use crate::trace::{self, SyncEvent};

/// What an atomic operation did: whether it wrote, for the checker, and
/// whether memory changed, for the watchdog's probation
/// (`scheduler::watchdog`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Effect {
    /// It only read (a load, a failed compare-exchange).
    Read,
    /// It wrote; `changed` when the value it left differs from the one it
    /// found.
    Wrote { changed: bool },
}

impl Effect {
    /// A store: it does not read the value it replaces, so it counts as a
    /// change.
    pub(crate) const STORE: Effect = Effect::Wrote { changed: true };

    /// A read-modify-write that found `old` and left `new`.
    #[inline(always)]
    pub(crate) fn rmw<V: PartialEq>(old: V, new: V) -> Effect {
        Effect::Wrote {
            changed: old != new,
        }
    }

    /// Whether the operation wrote (a write to the checker, even when it
    /// left the value as it was).
    #[inline(always)]
    pub(crate) fn wrote(self) -> bool {
        matches!(self, Effect::Wrote { .. })
    }

    /// Whether memory holds another value than before (a sign of life to
    /// the watchdog).
    #[inline(always)]
    pub(crate) fn changed(self) -> bool {
        matches!(self, Effect::Wrote { changed: true })
    }
}

/// Performs an atomic operation: `f` does it and says what it did.
/// With the gate quiet that is all; otherwise the work-item polls its
/// launch's cancel flag, a capturing thread records the event, and a checked
/// work-item reports the access, out of line.
///
/// `order` is the success order of a compare-exchange, `failure` its failure
/// order.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn perform<R>(
    addr: usize,
    local: bool,
    op: &'static str,
    kind: OpKind,
    order: MemOrder,
    failure: Option<MemOrder>,
    scope: MemScope,
    at: &'static Location<'static>,
    f: impl FnOnce() -> (R, Effect),
) -> R {
    if crate::gate::quiet() {
        return f().0;
    }
    let access = AtomicAccess {
        op,
        kind,
        order,
        failure,
        scope,
    };
    raised(addr, local, access, at, f)
}

/// `perform` with the gate raised: poll, trace, check, perform, and tell
/// the watchdog of a change. Also the slow side of the 2.0 atomics'
/// operations, which test the gate themselves (`atomic/ops.rs`).
#[cold]
#[inline(never)]
pub(crate) fn raised<R>(
    addr: usize,
    local: bool,
    a: AtomicAccess,
    at: &'static Location<'static>,
    f: impl FnOnce() -> (R, Effect),
) -> R {
    announce(local, &a, at);
    checker::atomic(addr, local, a, at, || done(f()))
}

/// [`raised`] without the checker: poll, trace and tell the watchdog of a
/// change, for an operation that a kernel proved races with nothing and
/// synchronizes nothing (`QuietAtomic`). Still polled, so that a kernel
/// spinning on such atomics can be cancelled.
#[cold]
#[inline(never)]
pub(crate) fn unchecked<R>(
    local: bool,
    a: AtomicAccess,
    at: &'static Location<'static>,
    f: impl FnOnce() -> (R, Effect),
) -> R {
    announce(local, &a, at);
    done(f()).0
}

/// What comes before an operation whose gate is raised: a cancellation
/// poll, and the trace's note of it.
#[inline(always)]
fn announce(local: bool, a: &AtomicAccess, at: &'static Location<'static>) {
    hooks::poll(at);
    trace::note(|| SyncEvent::Atomic {
        op: a.op,
        order: a.order,
        failure: a.failure,
        scope: a.scope,
        local,
    });
}

/// What comes after: the watchdog told of a change; the result, and
/// whether the operation wrote.
#[inline(always)]
fn done<R>((r, effect): (R, Effect)) -> (R, bool) {
    if effect.changed() {
        hooks::changed();
    }
    (r, effect.wrote())
}
