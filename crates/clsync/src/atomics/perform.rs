//! The way in of every atomic operation: the [`gate`](crate::gate) test,
//! and behind it the cancellation poll, the trace event and the checker.

use std::panic::Location;

use crate::checker::{self, AtomicAccess, OpKind};
use crate::scheduler::hooks;
use crate::sync::{MemOrder, MemScope};
use crate::trace::{self, SyncEvent};

/// Performs an atomic operation: `f` does it and says whether it wrote.
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
    f: impl FnOnce() -> (R, bool),
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
    slow(addr, local, access, at, f)
}

/// `perform` with the gate raised: poll, trace, check, perform.
#[cold]
#[inline(never)]
fn slow<R>(
    addr: usize,
    local: bool,
    a: AtomicAccess,
    at: &'static Location<'static>,
    f: impl FnOnce() -> (R, bool),
) -> R {
    hooks::poll(at);
    trace::note(|| SyncEvent::Atomic {
        op: a.op,
        order: a.order,
        failure: a.failure,
        scope: a.scope,
        local,
    });
    checker::atomic(addr, local, a, at, f)
}
