//! Recording the synchronization operations a piece of code performs, with
//! the arguments they really took after defaults were filled in.
//!
//! [`capture`] runs a closure and returns every atomic operation, fence and
//! barrier it performed on the current thread. It answers questions like
//! "which order and scope does `atomic_load` use?" (`seq_cst`, device scope,
//! by `001_b96d5603ef61627c.txt`) or "what fence is `mem_fence`?" (acq_rel at
//! work-group scope, by `000_96da91f170ff246f.txt`), and works on host
//! threads and inside kernels alike.
//!
//! ```
//! use clsync::{AtomicInt, Buffer};
//! use clsync::sync::{MemOrder, MemScope};
//! use clsync::trace::{capture, SyncEvent};
//!
//! let b: Buffer<AtomicInt> = Buffer::new(1);
//! let (_, events) = capture(|| b.at(0).load());
//! assert_eq!(
//!     events,
//!     vec![SyncEvent::Atomic {
//!         op: "atomic_load",
//!         order: MemOrder::SeqCst,
//!         failure: None,
//!         scope: MemScope::Device,
//!         local: false,
//!     }]
//! );
//! ```

use std::cell::{Cell, RefCell};

use crate::sync::{BarrierWait, MemFlags, MemOrder, MemScope};

/// One synchronization operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyncEvent {
    /// An atomic operation.
    Atomic {
        /// The OpenCL C function, without `_explicit`.
        op: &'static str,
        /// Its memory order (the success order of a compare-exchange).
        order: MemOrder,
        /// A compare-exchange's failure order.
        failure: Option<MemOrder>,
        /// Its memory scope.
        scope: MemScope,
        /// Whether the object is in local memory.
        local: bool,
    },
    /// A fence: `atomic_work_item_fence` or one of its older spellings.
    Fence {
        /// Flags.
        flags: MemFlags,
        /// Order.
        order: MemOrder,
        /// Scope.
        scope: MemScope,
    },
    /// A work-item arriving at a barrier.
    Barrier(BarrierWait),
}

thread_local! {
    /// The events of this thread's capture, while one runs.
    static EVENTS: RefCell<Option<Vec<SyncEvent>>> = const { RefCell::new(None) };
    /// Whether this thread captures: tested before anything else is done
    /// for an event, so that code outside any capture pays one load of a
    /// thread-local (no lazy initialisation: a `const` with no destructor)
    /// and a branch. A thread's own flag, not a count of the threads that
    /// capture: a load of a global through another crate's code goes
    /// through the global offset table, one load more.
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` and returns what it returned with the synchronization
/// operations it performed on this thread. Captures do not nest: an inner
/// capture takes the events of its closure for itself.
pub fn capture<R>(f: impl FnOnce() -> R) -> (R, Vec<SyncEvent>) {
    struct Guard(Option<Vec<SyncEvent>>);
    impl Drop for Guard {
        fn drop(&mut self) {
            let outer = self.0.take();
            CAPTURING.with(|c| c.set(outer.is_some()));
            EVENTS.with(|e| *e.borrow_mut() = outer);
            crate::gate::lower();
        }
    }
    crate::gate::raise();
    let outer = EVENTS.with(|e| e.borrow_mut().replace(Vec::new()));
    CAPTURING.with(|c| c.set(true));
    let guard = Guard(outer);
    let r = f();
    let events = EVENTS.with(|e| e.borrow_mut().take()).unwrap_or_default();
    drop(guard);
    (r, events)
}

/// Records an event if this thread is capturing.
#[inline]
pub(crate) fn note(event: impl FnOnce() -> SyncEvent) {
    if CAPTURING.with(Cell::get) {
        note_slow(event())
    }
}

#[cold]
fn note_slow(event: SyncEvent) {
    EVENTS.with(|e| {
        if let Some(v) = e.borrow_mut().as_mut() {
            v.push(event);
        }
    })
}
