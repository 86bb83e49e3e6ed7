//! Hands out a launch's work-groups to worker threads, each exactly once,
//! and stops handing them out once the launch is cancelled.

use std::sync::atomic::Ordering;

use crate::primitive::{AtomicBool, AtomicUsize};

/// The shared cursor over a launch's groups (linear indices `0..total`).
pub(crate) struct Dispenser {
    next: AtomicUsize,
    total: usize,
    cancelled: AtomicBool,
}

impl Dispenser {
    pub(crate) fn new(total: usize) -> Self {
        Dispenser {
            next: AtomicUsize::new(0),
            total,
            cancelled: AtomicBool::new(false),
        }
    }

    /// The next group to run, or `None` when all are handed out or the
    /// launch is cancelled.
    pub(crate) fn claim(&self) -> Option<usize> {
        // Relaxed: cancellation only has to stop new claims eventually; the
        // error that caused it is published under the outcome mutex.
        if self.cancelled.load(Ordering::Relaxed) {
            return None;
        }
        // Relaxed: the counter only needs atomicity, so that each index is
        // handed out once; the group's inputs were published before the
        // launch started (the pool's job queue orders that).
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        (i < self.total).then_some(i)
    }

    /// Stops handing out groups.
    pub(crate) fn cancel(&self) {
        // Relaxed: pairs with the relaxed load in `claim`; see there.
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// Whether the launch was cancelled.
    pub(crate) fn is_cancelled(&self) -> bool {
        // Relaxed: see `claim`.
        self.cancelled.load(Ordering::Relaxed)
    }

    /// The cancel flag, for kernel code to poll.
    pub(crate) fn flag(&self) -> &AtomicBool {
        &self.cancelled
    }
}
