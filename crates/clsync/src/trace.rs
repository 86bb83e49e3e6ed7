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

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// Threads currently capturing; checked before the thread-local so that
/// code outside any capture pays one relaxed load.
static CAPTURING: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static EVENTS: RefCell<Option<Vec<SyncEvent>>> = const { RefCell::new(None) };
}

/// Runs `f` and returns what it returned with the synchronization
/// operations it performed on this thread. Captures do not nest: an inner
/// capture takes the events of its closure for itself.
pub fn capture<R>(f: impl FnOnce() -> R) -> (R, Vec<SyncEvent>) {
    struct Guard(Option<Vec<SyncEvent>>);
    impl Drop for Guard {
        fn drop(&mut self) {
            let outer = self.0.take();
            EVENTS.with(|e| *e.borrow_mut() = outer);
            // Relaxed: a hint that some thread captures; each thread's
            // events are in its own thread-local.
            CAPTURING.fetch_sub(1, Ordering::Relaxed);
            crate::gate::lower();
        }
    }
    // Relaxed: see `Guard::drop`.
    CAPTURING.fetch_add(1, Ordering::Relaxed);
    crate::gate::raise();
    let outer = EVENTS.with(|e| e.borrow_mut().replace(Vec::new()));
    let guard = Guard(outer);
    let r = f();
    let events = EVENTS.with(|e| e.borrow_mut().take()).unwrap_or_default();
    drop(guard);
    (r, events)
}

/// Records an event if this thread is capturing.
#[inline]
pub(crate) fn note(event: impl FnOnce() -> SyncEvent) {
    // Relaxed: see `capture`.
    if CAPTURING.load(Ordering::Relaxed) != 0 {
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
