//! The one word the hot paths test before doing anything but the operation.
//!
//! An atomic operation in a kernel may have four things to do besides
//! itself: poll its launch's cancel flag (so that a work-item spinning on a
//! flag nobody sets unwinds when the watchdog fires), tell the watchdog's
//! probation that it polls and whether it changed memory, record a trace event
//! while a thread captures ([`crate::trace::capture`]), and report to the
//! checker during a checked launch. Each has its own state, in a
//! thread-local or a global of its own; testing each cost a load and a
//! branch per operation (three of each, when there were three causes),
//! which was most of the time of a local
//! `atomic_fetch_add` in a histogram. So each of them also raises this one
//! counter while it may have work to do, and an operation tests only the
//! counter: zero, and it does the operation alone.
//!
//! | raised by | while |
//! | --- | --- |
//! | a checked launch (`checker::ActiveLaunch`) | it runs |
//! | [`crate::trace::capture`] | its closure runs |
//! | a cancelled launch (`scheduler::Dispenser::cancel`) | until the launch ends |
//! | the watchdog's probation of a launch (`scheduler::watchdog`) | it lasts |
//!
//! The last two also raise a second counter, the one compiled loops test
//! at their back-edges ([`polling_word`]): only they give a cancellation
//! point work, and a checked launch would otherwise send every iteration
//! of every loop of its own kernel through a runtime call.
//!
//! The counter is only a hint that the slow path may have work: the slow
//! path tests each cause again, so a counter raised by an unrelated launch
//! costs that launch's neighbours time, never correctness.
//!
//! # Memory ordering
//!
//! Relaxed throughout. A checked launch raises the counter before its workers
//! start, and a capture before its closure runs on the same thread: the
//! thread spawn or program order makes the raise visible to every operation
//! that must see it. A cancellation is seen late at worst, as a cancel flag
//! is (see `scheduler::hooks::poll`): the counter stays raised until the
//! cancelled launch ends, so a spinning work-item sees it eventually.

use std::sync::atomic::{AtomicUsize, Ordering};

/// How many causes for the slow path exist now, in any runtime.
static RAISED: AtomicUsize = AtomicUsize::new(0);

/// How many of them a loop's cancellation point has work for: cancelled
/// launches and the watchdog's probations (a checked launch and a trace
/// capture watch operations, not loops, and leave it down).
static POLLING: AtomicUsize = AtomicUsize::new(0);

/// Whether no cause for the slow path exists: an operation may do only
/// itself.
#[inline(always)]
pub(crate) fn quiet() -> bool {
    // Relaxed: see the module docs.
    RAISED.load(Ordering::Relaxed) == 0
}

/// The counter of the causes a cancellation point has work for, for
/// engines that compile loops' cancellation points (see
/// [`crate::engine::cancellation_gate`]): a checked launch's own loops do
/// not call out at every back-edge.
pub(crate) fn polling_word() -> &'static AtomicUsize {
    &POLLING
}

/// Adds a cause that cancellation points have work for (a cancel, a
/// probation); pair it with one [`lower_polling`].
pub(crate) fn raise_polling() {
    raise();
    // Relaxed: see the module docs.
    POLLING.fetch_add(1, Ordering::Relaxed);
}

/// Removes a cause added by [`raise_polling`].
pub(crate) fn lower_polling() {
    // Relaxed: see the module docs.
    POLLING.fetch_sub(1, Ordering::Relaxed);
    lower();
}

/// Adds a cause; pair it with one [`lower`].
pub(crate) fn raise() {
    // Relaxed: see the module docs.
    RAISED.fetch_add(1, Ordering::Relaxed);
}

/// Removes a cause added by [`raise`].
pub(crate) fn lower() {
    // Relaxed: see the module docs.
    RAISED.fetch_sub(1, Ordering::Relaxed);
}
