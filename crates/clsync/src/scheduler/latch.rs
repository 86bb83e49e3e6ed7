//! A count-down latch the launching thread waits on, with a timeout so the
//! watchdog can look at progress between waits.

use std::time::Duration;

use crate::primitive::{Condvar, Mutex};

/// Counts finished workers.
pub(crate) struct Latch {
    remaining: Mutex<usize>,
    done: Condvar,
}

impl Latch {
    pub(crate) fn new(count: usize) -> Self {
        Latch {
            remaining: Mutex::new(count),
            done: Condvar::new(),
        }
    }

    /// One worker has finished. Everything it did happens before a `wait`
    /// that sees the count reach zero (the mutex orders it).
    pub(crate) fn count_down(&self) {
        let mut r = self.remaining.lock().unwrap_or_else(|e| e.into_inner());
        *r -= 1;
        if *r == 0 {
            self.done.notify_all();
        }
    }

    /// Waits until the count is zero or `timeout` passes; returns whether it
    /// reached zero.
    #[cfg(not(loom))]
    pub(crate) fn wait_timeout(&self, timeout: Duration) -> bool {
        let r = self.remaining.lock().unwrap_or_else(|e| e.into_inner());
        let (r, _) = self
            .done
            .wait_timeout_while(r, timeout, |r| *r > 0)
            .unwrap_or_else(|e| e.into_inner());
        *r == 0
    }

    /// Under loom there is no time: a timed wait is a plain wait.
    #[cfg(loom)]
    pub(crate) fn wait_timeout(&self, _timeout: Duration) -> bool {
        self.wait();
        true
    }

    /// Waits until the count is zero.
    pub(crate) fn wait(&self) {
        let mut r = self.remaining.lock().unwrap_or_else(|e| e.into_inner());
        while *r > 0 {
            r = self.done.wait(r).unwrap_or_else(|e| e.into_inner());
        }
    }
}
