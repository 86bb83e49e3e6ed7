//! The scheduler: spreads a launch's work-groups over the worker threads,
//! runs each group's work-items on one thread, and watches for stalls.
//!
//! * [`dispenser`](self) hands out groups, each once, until done or
//!   cancelled;
//! * `group` runs one group's work-items as tasks and resolves its barriers;
//! * `latch` tells the launching thread when every worker is done;
//! * `hooks` is what kernel code reaches: cancellation polls and panic
//!   capture.
//!
//! The launching thread does not run groups; it is the watchdog. It waits on
//! the latch in slices of the watchdog timeout and, if a slice passes with no
//! barrier released and no group finished, cancels the launch and collects
//! where every in-flight work-item was.

mod dispenser;
mod group;
pub(crate) mod hooks;
mod latch;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::engine::Engine;
use crate::error::{GroupStall, LaunchError, Stall};
use crate::geometry::Geometry;
use crate::memory::LocalDecl;
use crate::primitive::{AtomicU64, Mutex};
use dispenser::Dispenser;
use group::GroupFailure;
use latch::Latch;

/// Everything about a launch that the workers need, fixed before it starts.
pub(crate) struct Plan<'a> {
    pub(crate) kernel: String,
    pub(crate) id: u64,
    pub(crate) geometry: Geometry,
    pub(crate) locals: &'a [LocalDecl],
    pub(crate) strict_images: bool,
    pub(crate) watchdog: Option<Duration>,
}

/// State shared by the workers of one launch.
pub(crate) struct Shared<'a> {
    pub(crate) plan: Plan<'a>,
    pub(crate) dispenser: Dispenser,
    /// Barrier releases and group completions so far.
    pub(crate) progress: AtomicU64,
    /// The first error, by group linear index, and the stalls collected on
    /// cancellation.
    outcome: Mutex<Outcome>,
    finished: AtomicU64,
}

#[derive(Default)]
struct Outcome {
    error: Option<(usize, LaunchError)>,
    stalls: Vec<(usize, GroupStall)>,
}

/// Runs a launch on `pool` with `engine`; returns the elapsed time.
pub(crate) fn run<E: Engine>(
    pool: &rayon::ThreadPool,
    engine: &E,
    plan: Plan<'_>,
) -> Result<Duration, LaunchError> {
    if pool.current_thread_index().is_some() {
        return Err(LaunchError::Nested {
            kernel: plan.kernel,
        });
    }
    let total = plan.geometry.group_count();
    let watchdog = plan.watchdog;
    let shared = Shared {
        plan,
        dispenser: Dispenser::new(total),
        progress: AtomicU64::new(0),
        outcome: Mutex::new(Outcome::default()),
        finished: AtomicU64::new(0),
    };
    let workers = pool.current_num_threads().min(total).max(1);
    let latch = Latch::new(workers);
    let start = Instant::now();
    let mut stalled = false;
    pool.in_place_scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|_| {
                worker(engine, &shared);
                latch.count_down();
            });
        }
        stalled = watch(&shared, &latch, watchdog);
    });
    let elapsed = start.elapsed();
    let outcome = shared
        .outcome
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    if let Some((_, e)) = outcome.error {
        return Err(e);
    }
    if stalled {
        let mut stalls = outcome.stalls;
        stalls.sort_by_key(|(g, _)| *g);
        let plan = &shared.plan;
        return Err(LaunchError::Stalled(Box::new(Stall {
            kernel: plan.kernel.clone(),
            dims: plan.geometry.dims,
            timeout: watchdog.unwrap_or_default(),
            // Relaxed: every worker has finished (the latch orders it).
            finished_groups: shared.finished.load(Ordering::Relaxed) as usize,
            total_groups: total,
            groups: stalls.into_iter().map(|(_, s)| s).collect(),
        })));
    }
    Ok(elapsed)
}

/// The watchdog: waits for the workers; if a whole timeout passes without
/// progress, cancels the launch. Returns whether it did.
fn watch(shared: &Shared<'_>, latch: &Latch, timeout: Option<Duration>) -> bool {
    let Some(timeout) = timeout else {
        latch.wait();
        return false;
    };
    // Relaxed: progress is a counter compared with itself; nothing is read
    // through it.
    let mut last = shared.progress.load(Ordering::Relaxed);
    loop {
        if latch.wait_timeout(timeout) {
            return false;
        }
        let now = shared.progress.load(Ordering::Relaxed);
        if now == last && !shared.dispenser.is_cancelled() {
            shared.dispenser.cancel();
            latch.wait();
            return true;
        }
        last = now;
    }
}

/// One worker thread's loop: claim groups and run them until none is left
/// or the launch is cancelled.
fn worker<E: Engine>(engine: &E, shared: &Shared<'_>) {
    let _kernel_thread = hooks::KernelThread::enter(shared.dispenser.flag());
    while let Some(linear) = shared.dispenser.claim() {
        match group::run_group(engine, shared, linear) {
            Ok(()) => {
                // Relaxed: counters; see `Shared::progress`.
                shared.progress.fetch_add(1, Ordering::Relaxed);
                shared.finished.fetch_add(1, Ordering::Relaxed);
            }
            Err(GroupFailure::Error(e)) => {
                let mut out = shared.outcome.lock().unwrap_or_else(|e| e.into_inner());
                // Keep the error of the lowest group, so the report does not
                // depend on which thread got there first when several fail.
                if out.error.as_ref().is_none_or(|(g, _)| linear < *g) {
                    out.error = Some((linear, e));
                }
                drop(out);
                shared.dispenser.cancel();
            }
            Err(GroupFailure::Cancelled(stall)) => {
                let mut out = shared.outcome.lock().unwrap_or_else(|e| e.into_inner());
                out.stalls.push((linear, stall));
            }
        }
    }
}
