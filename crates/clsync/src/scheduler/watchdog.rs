//! The watchdog: the launching thread waits for the workers and decides
//! whether a launch that shows no progress is stuck.
//!
//! Nothing in the specification (`../shared/spec/`) promises that a
//! work-item makes progress while another spins waiting for it, in its
//! group or in another, so a work-item may spin forever on a flag that
//! nobody will set. The watchdog turns that into a report. It must not turn
//! a kernel that is merely slow into one.
//!
//! # The two looks
//!
//! 1. **Progress.** Workers count work-items that reach a barrier or finish
//!    (`Progress`). If a whole timeout passes and the count has not moved,
//!    the watchdog takes a second look.
//! 2. **Probation.** It raises the [`gate`](crate::gate), so that every
//!    atomic operation, fence and barrier takes the slow path, and for up
//!    to one more timeout it watches three things:
//!    * the progress count: it moved, and the launch is alive;
//!    * [`changed`]: an atomic operation of any thread (a work-item of any
//!      launch, or a host thread) changed memory, and a spinning work-item
//!      may be about to see it: alive. A store counts; an exchange, a
//!      read-modify-write or a compare-exchange counts when the value it
//!      leaves differs from the one it found (so a spin lock taken with
//!      `atomic_xchg` or a failing compare-exchange is still a spin); so
//!      does an interpreter's `plain_store`;
//!    * `polled`: this launch's work-items reached the slow path at all (an
//!      atomic, a fence, a barrier, or an interpreter's
//!      `WorkItem::cancellation_point` at a loop's back-edge).
//!
//!    Probation ends at the first sign of life, usually within one step
//!    ([`step`]), so a live barrier-free kernel spends a step per timeout on
//!    the slow path. If the whole timeout passes with no progress and no
//!    change, the verdict depends on the polls:
//!    * polls, and nothing changed: the work-items run atomics, fences or
//!      barriers and nothing they could wait for moves. Stuck: the
//!      watchdog cancels the launch, and the polls unwind its work-items.
//!    * no polls: the work-items run code that touches no atomic, fence or
//!      barrier (a long computation, or a call that blocks). A cancel could
//!      not stop them, as they never poll, and nothing says they are stuck:
//!      the watchdog waits on.
//!
//! So a stall is reported after two timeouts: one without a barrier
//! released or a group finished, one more without an atomic change. A
//! kernel that only reads atomics for that long, or waits longer on a host
//! thread, needs a longer `Launch::watchdog`.
//!
//! # Memory ordering
//!
//! Relaxed, but for one pair. The flags and the counter carry no data: the
//! watchdog only compares them with themselves after a timed wait, and
//! every live kernel sets them again and again, so an observation a step
//! late costs a step. The gate's raise reaches the work-items as a cancel's
//! does (see the gate's docs): late at worst, and probation lasts a
//! timeout. The pair: a probation clears `polled` and then sets `on` with
//! release, and a poll reads `on` with acquire, so a poll that counts
//! itself in this probation is never undone by the clear.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::latch::Latch;
use super::Shared;
use crate::primitive::AtomicBool;

// The two globals are `std`'s, as the gate's is: loom's atomics cannot be
// statics, and the watchdog's timed waits are not modelled under loom.

/// Probations running now, in any runtime: while there are none, a change
/// need not be counted.
static PROBATIONS: AtomicUsize = AtomicUsize::new(0);
/// Atomic operations that changed memory while some probation ran.
static CHANGES: AtomicU64 = AtomicU64::new(0);

/// One launch's probation: whether it is on, and whether the launch's
/// work-items reached the slow path since it began.
pub(crate) struct Probation {
    on: AtomicBool,
    polled: AtomicBool,
}

impl Probation {
    pub(crate) fn new() -> Self {
        Probation {
            on: AtomicBool::new(false),
            polled: AtomicBool::new(false),
        }
    }

    /// Called by each poll of a work-item of this launch (gate raised).
    /// Returns whether a probation was on.
    #[inline]
    pub(crate) fn note_poll(&self) -> bool {
        // Acquire: pairs with the release store of `on` in `begin`, so that
        // a poll that sees this probation on also sees its clear of
        // `polled`, and its store below is not skipped for a stale `true`.
        // `polled` is read before it is written, so that a spinning
        // work-item's polls only read its line once it is set; both
        // relaxed, as the module docs say.
        let on = self.on.load(Ordering::Acquire);
        if on && !self.polled.load(Ordering::Relaxed) {
            self.polled.store(true, Ordering::Relaxed);
        }
        on
    }

    /// Starts a probation: no poll seen yet, and polls count.
    pub(super) fn begin(&self) {
        // Relaxed: ordered before the release store of `on` below.
        self.polled.store(false, Ordering::Relaxed);
        // Release: pairs with the acquire load in `note_poll`: a poll that
        // sees this probation sees `polled` cleared, so its `true` is not
        // lost to the clear.
        self.on.store(true, Ordering::Release);
    }

    /// Ends a probation.
    pub(super) fn end(&self) {
        // Relaxed: a poll that still sees the probation on only sets
        // `polled`, which the next `begin` clears first.
        self.on.store(false, Ordering::Relaxed);
    }

    /// Whether a work-item polled since `begin`.
    pub(super) fn polled(&self) -> bool {
        // Relaxed: a spinning work-item sets it again and again for a
        // whole timeout; one set is enough.
        self.polled.load(Ordering::Relaxed)
    }
}

/// Whether some probation runs now, in any runtime (a poll looks no
/// further otherwise).
#[inline]
pub(crate) fn probing() -> bool {
    // Relaxed: see the module docs.
    PROBATIONS.load(Ordering::Relaxed) > 0
}

/// An atomic operation changed memory. Counted only during a probation
/// (the gate is raised then, so the operation took the slow path that
/// calls this).
#[inline]
pub(crate) fn changed() {
    if probing() {
        // Relaxed: see the module docs.
        CHANGES.fetch_add(1, Ordering::Relaxed);
    }
}

/// How often probation looks at its signs of life: a thirty-second of the
/// timeout, between 1 ms and 50 ms.
fn step(timeout: Duration) -> Duration {
    (timeout / 32).clamp(Duration::from_millis(1), Duration::from_millis(50))
}

/// Waits for the workers; returns whether it cancelled the launch as stuck.
pub(super) fn watch(shared: &Shared<'_>, latch: &Latch, timeout: Option<Duration>) -> bool {
    let Some(timeout) = timeout else {
        latch.wait();
        return false;
    };
    let mut last = progress(shared);
    loop {
        if latch.wait_timeout(timeout) {
            return false;
        }
        let now = progress(shared);
        if now != last {
            last = now;
            continue;
        }
        match probation(shared, latch, timeout, last) {
            Verdict::Finished => return false,
            Verdict::Alive => last = progress(shared),
            Verdict::Stuck => {
                shared.dispenser.cancel();
                latch.wait();
                return true;
            }
        }
    }
}

/// What a probation concluded.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// Every worker finished.
    Finished,
    /// Progress, a change, or work-items that never poll.
    Alive,
    /// Polls, and for a whole timeout no progress and no change.
    Stuck,
}

/// The second look (module docs): up to `timeout` on the slow path.
fn probation(shared: &Shared<'_>, latch: &Latch, timeout: Duration, last: u64) -> Verdict {
    let p = &shared.probation;
    p.begin();
    // Relaxed: see the module docs (a change counted a step late costs a
    // step).
    PROBATIONS.fetch_add(1, Ordering::Relaxed);
    let changes = CHANGES.load(Ordering::Relaxed);
    crate::gate::raise_polling();
    let end = Instant::now() + timeout;
    let verdict = loop {
        let left = end.saturating_duration_since(Instant::now());
        if latch.wait_timeout(step(timeout).min(left)) {
            break Verdict::Finished;
        }
        // Relaxed: see the module docs; a later look sees what this one
        // missed.
        if progress(shared) != last || CHANGES.load(Ordering::Relaxed) != changes {
            break Verdict::Alive;
        }
        if Instant::now() >= end {
            break if p.polled() {
                Verdict::Stuck
            } else {
                Verdict::Alive
            };
        }
    };
    crate::gate::lower_polling();
    // Relaxed: see the module docs.
    PROBATIONS.fetch_sub(1, Ordering::Relaxed);
    p.end();
    verdict
}

/// The sum of the workers' progress counters.
fn progress(shared: &Shared<'_>) -> u64 {
    // Relaxed: progress counters are compared with themselves; nothing is
    // read through them. Each pairs with its worker's relaxed stores.
    shared
        .progress
        .iter()
        .map(|p| p.load(Ordering::Relaxed))
        .sum()
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::step;
    use std::time::Duration;

    #[test]
    fn a_step_is_a_thirty_second_of_the_timeout_within_bounds() {
        assert_eq!(step(Duration::from_millis(320)), Duration::from_millis(10));
        assert_eq!(step(Duration::from_secs(10)), Duration::from_millis(50));
        assert_eq!(step(Duration::from_millis(5)), Duration::from_millis(1));
    }
}
