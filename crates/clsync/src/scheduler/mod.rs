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
//! The launching thread does not run groups; it is the `watchdog`. It waits
//! on the latch in slices of the watchdog timeout; if a slice passes with no
//! barrier released and no group finished, and then a probation finds its
//! work-items spinning on memory that does not change, it cancels the launch
//! and collects where every in-flight work-item was.

mod dispenser;
mod group;
pub(crate) mod hooks;
mod latch;
#[cfg(all(test, loom))]
mod loom_tests;
mod schedule;
mod watchdog;

use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::engine::Engine;
use crate::error::{GroupStall, LaunchError, Stall};
use crate::geometry::{Geometry, GroupIds};
use crate::memory::{LocalArena, LocalDecl};
use crossbeam_utils::CachePadded;

use crate::primitive::{AtomicU64, Mutex};
use dispenser::Dispenser;
pub(crate) use group::{with_group, GroupFailure};
use latch::Latch;
pub use schedule::Schedule;

/// Everything about a launch that the workers need, fixed before it starts.
pub(crate) struct Plan<'a> {
    pub(crate) kernel: String,
    pub(crate) id: u64,
    pub(crate) geometry: Geometry,
    pub(crate) locals: &'a [LocalDecl],
    pub(crate) strict_images: bool,
    /// A checked launch's divergent barrier is a report after which the
    /// group runs on (see `Launch::run_on_divergence`).
    pub(crate) run_on_divergence: bool,
    pub(crate) watchdog: Option<Duration>,
    /// The order of groups and work-items.
    pub(crate) schedule: Schedule,
    /// The checker's state, for a checked launch.
    pub(crate) check: Option<std::sync::Arc<crate::checker::LaunchCheck>>,
    /// The open exchanges of the launch's collectives.
    pub(crate) exchanges: crate::collective::Exchanges,
}

/// State shared by the workers of one launch.
pub(crate) struct Shared<'a> {
    pub(crate) plan: Plan<'a>,
    pub(crate) dispenser: Dispenser,
    /// Per worker: work-items that reached a barrier or finished so far.
    pub(crate) progress: Vec<CachePadded<AtomicU64>>,
    /// The first error, by group linear index, and the stalls collected on
    /// cancellation.
    outcome: Mutex<Outcome>,
    finished: AtomicU64,
    /// The watchdog's second look at a launch that shows no progress.
    pub(crate) probation: watchdog::Probation,
    /// The order groups are handed out in, when not linear.
    group_order: Option<Vec<usize>>,
}

#[derive(Default)]
struct Outcome {
    error: Option<(usize, LaunchError)>,
    stalls: Vec<(usize, GroupStall)>,
}

/// One worker's progress counter: work-items of its groups that reached a
/// barrier or finished.
///
/// The count is a `Cell`, so that a group-level kernel's barriers advance it
/// through the `&Group` they get (a `RefCell` around it cost a borrow
/// flag's test, set and reset per step); a fork kept in a local stays in a
/// register all the same.
pub(crate) struct Progress<'a> {
    count: Cell<u64>,
    slot: &'a AtomicU64,
}

impl<'a> Progress<'a> {
    /// A counter on the same slot, to advance in a loop or a group-level
    /// kernel and take back with [`join`](Self::join).
    #[inline]
    pub(crate) fn fork(&self) -> Progress<'a> {
        Progress {
            count: self.count.clone(),
            slot: self.slot,
        }
    }

    /// Takes back a fork's count, plus `finished` work-items.
    #[inline]
    pub(crate) fn join(&self, fork: &Progress<'_>, finished: usize) {
        self.count.set(fork.count.get());
        self.steps(finished);
    }

    /// `n` work-items suspended or finished.
    #[inline]
    pub(crate) fn steps(&self, n: usize) {
        let count = self.count.get() + n as u64;
        self.count.set(count);
        // Relaxed: only this worker writes the slot (a plain store, no
        // read-modify-write, so no contention); the watchdog's relaxed loads
        // only compare successive sums.
        self.slot.store(count, Ordering::Relaxed);
    }

    /// A work-item suspended or finished.
    #[inline]
    pub(crate) fn step(&self) {
        self.steps(1);
    }
}

/// What a worker keeps from one of its groups to the next, for one launch:
/// its progress counter and the local memory of its last group.
pub(crate) struct Worker<'a> {
    progress: Progress<'a>,
    spare: Option<LocalArena>,
    /// Its current group's work-item ids, refilled per group in the same
    /// allocation (moved rather than refilled when the shape is the same).
    ids: GroupIds,
}

impl<'a> Worker<'a> {
    /// Local memory for a group of `plan`, and the progress counter. The
    /// memory is this worker's previous group's when the launch is
    /// unchecked (OpenCL leaves local memory's contents unspecified when a
    /// group starts, so reuse is allowed, and it saves an allocation per
    /// group); a checked launch gets a fresh one per group, as its arena
    /// carries the group's checker state. Lent in place rather than moved
    /// into the group's environment: a move per group copies it through the
    /// stack, which cost a quarter of an empty group's run.
    #[inline]
    pub(crate) fn parts(
        &mut self,
        plan: &Plan<'_>,
    ) -> (&LocalArena, &mut Progress<'a>, &mut GroupIds) {
        let checked = plan.check.is_some();
        match &mut self.spare {
            Some(arena) if !checked => arena.begin_group(),
            spare => fresh_arena(spare, plan),
        }
        let arena = self.spare.as_ref().expect("made above");
        (arena, &mut self.progress, &mut self.ids)
    }
}

/// A new arena in `spare` for a group of `plan`: the first group of a
/// worker, or any group of a checked launch. Out of line, so that the reuse
/// in [`Worker::parts`], once per group, stays a few instructions.
#[cold]
#[inline(never)]
fn fresh_arena(spare: &mut Option<LocalArena>, plan: &Plan<'_>) {
    *spare = Some(LocalArena::new(plan.locals, plan.check.is_some()));
}

/// How a launch runs one work-group: the work-items of an [`Engine`] as
/// tasks with barrier rounds, or a group-level kernel
/// ([`crate::engine::loops`]).
pub(crate) trait GroupRunner: Sync {
    /// Runs the group with linear index `linear` to completion.
    fn run_group(
        &self,
        shared: &Shared<'_>,
        linear: usize,
        worker: &mut Worker<'_>,
    ) -> Result<(), GroupFailure>;
}

/// An [`Engine`]'s work-items, resumed in rounds (`group`).
pub(crate) struct Tasks<'e, E>(pub(crate) &'e E);

impl<E: Engine> GroupRunner for Tasks<'_, E> {
    fn run_group(
        &self,
        shared: &Shared<'_>,
        linear: usize,
        worker: &mut Worker<'_>,
    ) -> Result<(), GroupFailure> {
        group::run_group(self.0, shared, linear, worker)
    }
}

/// Runs a launch on `pool`; returns the elapsed time.
pub(crate) fn run<R: GroupRunner>(
    pool: &rayon::ThreadPool,
    engine: &R,
    plan: Plan<'_>,
) -> Result<Duration, LaunchError> {
    if pool.current_thread_index().is_some() {
        return Err(LaunchError::Nested {
            kernel: plan.kernel,
        });
    }
    let total = plan.geometry.group_count();
    let timeout = plan.watchdog;
    let workers = pool.current_num_threads().min(total).max(1);
    let shared = Shared {
        dispenser: Dispenser::new(total, workers),
        progress: (0..workers)
            .map(|_| CachePadded::new(AtomicU64::new(0)))
            .collect(),
        outcome: Mutex::new(Outcome::default()),
        finished: AtomicU64::new(0),
        group_order: plan.schedule.group_order(total),
        probation: watchdog::Probation::new(),
        plan,
    };
    let latch = Latch::new(workers);
    let start = Instant::now();
    let mut stalled = false;
    let scope = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.in_place_scope(|scope| {
            for index in 0..workers {
                let shared = &shared;
                let latch = &latch;
                scope.spawn(move |_| {
                    let _done = Finished { shared, latch };
                    worker(engine, shared, index);
                });
            }
            stalled = watchdog::watch(&shared, &latch, timeout);
        })
    }));
    if let Err(payload) = scope {
        worker_panicked(&shared.plan.kernel, payload);
    }
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
            timeout: timeout.unwrap_or_default(),
            // Relaxed: every worker has finished (the latch orders it).
            finished_groups: shared.finished.load(Ordering::Relaxed) as usize,
            total_groups: total,
            groups: stalls.into_iter().map(|(_, s)| s).collect(),
        })));
    }
    Ok(elapsed)
}

/// A worker thread panicked outside any work-item (a bug in an engine, not
/// in the kernel): panics again here, on the launching thread, with the
/// message. On the worker the panic hook kept quiet, as it does for kernel
/// panics (`hooks`), and a panic the scope hands on is not shown again, so
/// without this the message would be lost.
#[cold]
fn worker_panicked(kernel: &str, payload: Box<dyn std::any::Any + Send>) -> ! {
    let message = hooks::panic_message(&*payload);
    panic!("clsync: a worker thread of kernel `{kernel}` panicked outside any work-item: {message}")
}

/// Counts a worker down when it finishes, also by a panic (a bug in an
/// engine's `spawn` or `resume`, outside any kernel's `catch_unwind`), which
/// also cancels the launch: the launching thread then sees every worker
/// finish, and the scope hands it the panic, instead of waiting forever.
struct Finished<'a, 'p> {
    shared: &'a Shared<'p>,
    latch: &'a Latch,
}

impl Drop for Finished<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.shared.dispenser.cancel();
        }
        self.latch.count_down();
    }
}

/// One worker thread's loop: claim groups and run them until none is left
/// or the launch is cancelled.
fn worker<R: GroupRunner>(engine: &R, shared: &Shared<'_>, index: usize) {
    let _kernel_thread = hooks::KernelThread::enter(shared.dispenser.flag(), &shared.probation);
    let mut state = Worker {
        progress: Progress {
            count: Cell::new(0),
            slot: &shared.progress[index],
        },
        spare: None,
        ids: GroupIds::default(),
    };
    // Counted here and added once: a shared counter bumped per group would
    // move one cache line between every worker for every group.
    let mut finished = 0;
    let claims = std::iter::from_fn(|| shared.dispenser.claim(index)).flatten();
    for claimed in claims {
        // A batch is cut short by a cancel, as a claim would be.
        if shared.dispenser.is_cancelled() {
            break;
        }
        let linear = shared.group_order.as_ref().map_or(claimed, |o| o[claimed]);
        match engine.run_group(shared, linear, &mut state) {
            Ok(()) => finished += 1,
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
    // Relaxed: a counter read after the latch; see `run`.
    shared.finished.fetch_add(finished, Ordering::Relaxed);
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::worker_panicked;

    /// A worker's panic outside any work-item comes back on the launching
    /// thread as a panic that carries its message and names the kernel.
    #[test]
    fn a_worker_panic_is_raised_again_with_its_message() {
        for payload in [
            Box::new("boom") as Box<dyn std::any::Any + Send>,
            Box::new(String::from("boom")),
        ] {
            let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                worker_panicked("k", payload)
            }))
            .expect_err("it panics");
            let message = again.downcast_ref::<String>().expect("a formatted message");
            assert!(
                message.contains("kernel `k`") && message.ends_with("boom"),
                "{message}"
            );
        }
    }
}
