//! Running one work-group: its work-items as tasks on this thread, barrier
//! release, and divergence detection.
//!
//! # The state machine of a work-item
//!
//! ```text
//!   Ready ──resume──▶ Waiting(barrier) ──all of its set arrived──▶ Ready
//!     │                    │
//!     │                    └──the set can never all arrive──▶ divergence error
//!     ├──returns──▶ Done
//!     └──panics / is cancelled──▶ (group fails)
//! ```
//!
//! The group runs in rounds: every `Ready` task is resumed until it
//! suspends. After a round no task is `Ready`, so each one is `Waiting` or
//! `Done`, and the barriers are resolved:
//!
//! 1. For each sub-group with a member at a non-uniform sub-group operation
//!    (`sub_group_elect`, `sub_group_non_uniform_reduce_add`, ...): the
//!    members waiting at the earliest such operation in the source are
//!    its active set and are released, whatever the others do (see
//!    `earliest_active`). For each other sub-group with a member at a
//!    sub-group barrier: if every member waits at that same barrier, they
//!    are all released; otherwise (a member returned, or waits elsewhere)
//!    it is sub-group divergence (`002_6c32435e912a3710.txt`).
//! 2. Else, if every work-item is `Done`, the group is finished.
//! 3. Else, if every work-item waits at the same work-group barrier, all are
//!    released; otherwise it is work-group divergence
//!    (`003_2caebc1f01141481.txt`, `004_bfca21a36d7bd2da.txt`).
//!
//! Every round either releases a barrier, finishes the group, or fails it,
//! so a group can never hang in the scheduler; only a work-item that runs
//! forever can, and that is the watchdog's case.
//!
//! The slots are the state machine's record, written only where it is
//! needed: a round in which the whole group waits at one work-group barrier
//! (case 3 released) leaves them `Ready` and never writes `Waiting`, and a
//! round that stops being that writes the `Waiting` of those before the
//! first work-item that broke it (see `drive`).

use super::{Plan, Progress, Shared, Worker};
use crate::checker::{GroupCheck, Running};
use crate::engine::{Engine, GroupEnv, ItemFailure, ItemTask, Resume, Suspend};
use crate::error::{runs_of, Divergence, GroupStall, KernelPanic, LaunchError, Place};
use crate::geometry::ItemIds;
use crate::sync::{BarrierKind, BarrierWait, Site};

mod round;

use round::{leave_fast_path, Round};

/// A work-item's state between rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// To be resumed in the next round.
    Ready,
    /// Suspended at a barrier.
    Waiting(BarrierWait),
    /// Returned from the kernel.
    Done,
    /// Stopped by a failure or a cancellation.
    Stopped,
}

impl Slot {
    fn place(self) -> Place {
        match self {
            Slot::Waiting(w) => Place::AtBarrier(w),
            Slot::Done => Place::Exited,
            Slot::Ready | Slot::Stopped => Place::Runnable,
        }
    }
}

/// The group's state when the launch was cancelled; `running` is the
/// work-item that was running, and its last synchronization call.
fn stalled(
    slots: &[Slot],
    env: &GroupEnv<'_>,
    running: Option<(usize, Option<Site>)>,
) -> GroupFailure {
    let places = slots.iter().enumerate().map(|(j, s)| match running {
        Some((i, site)) if i == j => (j, Place::Running(site)),
        _ => (j, s.place()),
    });
    GroupFailure::Cancelled(GroupStall {
        group_id: env.group_id,
        places: runs_of(places),
    })
}

/// Why a group did not finish.
pub(crate) enum GroupFailure {
    /// An error that fails the launch.
    Error(LaunchError),
    /// The launch was cancelled while the group ran; where its work-items
    /// were.
    Cancelled(GroupStall),
}

/// What resolving the barriers after a round gave.
enum Resolution {
    Released,
    Finished,
}

/// Runs the group with linear index `linear` to completion, its work-items
/// made by `engine`.
pub(crate) fn run_group<E: Engine>(
    engine: &E,
    shared: &Shared,
    linear: usize,
    worker: &mut Worker<'_>,
) -> Result<(), GroupFailure> {
    with_group(shared, linear, worker, |env, ids, run| {
        let mut tasks = Vec::with_capacity(ids.len());
        let mut failed = None;
        for ids in ids {
            match engine.spawn(env, ids) {
                Ok(t) => tasks.push(t),
                Err(message) => {
                    failed = Some(message);
                    break;
                }
            }
        }
        let result = match failed {
            None => run.drive(&mut tasks),
            Some(message) => Err(run.spawn_failed(&mut tasks, message)),
        };
        for t in tasks {
            engine.retire(t);
        }
        result
    })
}

/// Sets up the group with linear index `linear` (its environment, every
/// work-item's ids, its checker state) and hands them to `make`, which makes
/// the group's tasks and runs them with [`GroupRun::drive`].
///
/// A callback rather than a return value, so that the tasks may borrow the
/// environment and ids and still be of a type only `make` knows: the async
/// engine's tasks are its kernel's own futures, which cannot be named.
#[inline]
pub(crate) fn with_group<R>(
    shared: &Shared,
    linear: usize,
    worker: &mut Worker<'_>,
    make: impl FnOnce(&GroupEnv<'_>, &[ItemIds], GroupRun<'_, '_>) -> R,
) -> R {
    let plan = &shared.plan;
    let (arena, progress, ids) = worker.parts(plan);
    let env = GroupEnv::for_group(plan, linear, arena);
    // Every work-item's ids, made once per group in the worker's vector;
    // each task borrows its own, and the checker's state is made from them.
    let ids = ids.fill(&plan.geometry, env.group_id, env.local_size);
    let check = env.check(plan, linear, ids);
    let run = GroupRun {
        shared,
        env: &env,
        check: check.as_ref(),
        linear,
        progress,
    };
    make(&env, ids, run)
}

/// One group's barrier rounds, ready to run its tasks (see [`with_group`]).
pub(crate) struct GroupRun<'a, 'w> {
    shared: &'a Shared<'a>,
    env: &'a GroupEnv<'a>,
    check: Option<&'a GroupCheck>,
    linear: usize,
    progress: &'a mut Progress<'w>,
}

impl GroupRun<'_, '_> {
    /// Runs `tasks`, one per work-item in linear order, to completion; a
    /// failed group's tasks are cancelled before it returns.
    #[inline]
    pub(crate) fn drive<T: ItemTask>(self, tasks: &mut [T]) -> Result<(), GroupFailure> {
        let mut slots = vec![Slot::Ready; tasks.len()];
        // Progress counted in a local copy, told to the watchdog per
        // work-item as before and taken back at the end: a count behind the
        // worker's reference went through memory twice per work-item.
        let mut local = self.progress.fork();
        let result = drive(
            tasks,
            &mut slots,
            self.shared,
            self.env,
            self.check,
            self.linear,
            &mut local,
        );
        self.progress.join(&local, 0);
        if result.is_err() {
            cancel_all(tasks, &mut slots);
        }
        result
    }

    /// A group whose tasks could not all be made: cancels those that were
    /// (`tasks`) and gives the group's failure.
    pub(crate) fn spawn_failed<T: ItemTask>(
        self,
        tasks: &mut [T],
        message: String,
    ) -> GroupFailure {
        let mut slots = vec![Slot::Ready; tasks.len()];
        cancel_all(tasks, &mut slots);
        GroupFailure::Error(LaunchError::Resource {
            kernel: self.shared.plan.kernel.clone(),
            message,
        })
    }
}

/// Rounds until the group finishes or fails.
///
/// A round over a group whose slots are all `Ready` (the first round, and
/// every round after the whole group was released) starts on a fast path:
/// while each work-item waits where the round's first one waits, its slot
/// is not written at all, so a uniform round costs a resume and a
/// comparison per work-item. The first work-item that does anything else
/// ends the fast path: the slots of those before it become `Waiting` at
/// the first one's barrier, and the round goes on as a general one. In an
/// unchecked launch in linear order the fast path runs in a loop of its own
/// (`Round::uniform_prefix`), comparing [`Arrival`](crate::sync::Arrival)s,
/// with the progress count in a register: a count kept behind a reference
/// made one chain of dependent loads and stores through every work-item of
/// a round. That loop also takes the round in which the work-items return,
/// while each returns as the first did.
fn drive<T: ItemTask>(
    tasks: &mut [T],
    slots: &mut [Slot],
    shared: &Shared,
    env: &GroupEnv<'_>,
    check: Option<&GroupCheck>,
    linear: usize,
    progress: &mut Progress<'_>,
) -> Result<(), GroupFailure> {
    let plan = &shared.plan;
    let sg = plan.geometry.sub_group_size;
    let n = tasks.len();
    let mut shuffle = plan.schedule.item_orders(linear);
    let mut order: Vec<usize> = if shuffle.is_some() {
        (0..n).collect()
    } else {
        Vec::new()
    };
    // Whether every slot is `Ready`.
    let mut all_ready = true;
    // Whether a checked launch that runs on has reported this group's
    // divergence (its later barriers, which the group can no longer
    // match, are released without another report).
    let mut diverged = false;
    loop {
        if let Some(rng) = shuffle.as_mut() {
            rng.shuffle(&mut order);
        }
        // What this round saw, for the common case: every work-item resumed
        // and waiting at one work-group barrier.
        let mut round = Round {
            resumed: 0,
            first: None,
            arrival: None,
            uniform: true,
        };
        // On the fast path while every work-item so far waits at `first`
        // and its slot is untouched (`Ready`).
        let mut fast_path = all_ready && order.is_empty();
        // An unchecked launch's fast path starts in a loop of its own; the
        // work-item it stopped at, and why, go on below.
        let (start, mut stopped) = if fast_path && check.is_none() {
            let (done, stopped) = round.uniform_prefix(tasks, progress);
            if done > 0 {
                let Some((k, _)) = stopped else {
                    // Every work-item returned: the group is finished.
                    return Ok(());
                };
                // The first `k` returned and the rest go through the general
                // loop: Ready → Done for those.
                slots[..k].fill(Slot::Done);
                fast_path = false;
                all_ready = false;
                round.uniform = false;
            }
            match stopped {
                Some((k, suspend)) => (k, Some(suspend)),
                None => (n, None),
            }
        } else {
            (0, None)
        };
        for k in start..n {
            let i = if order.is_empty() { k } else { order[k] };
            let suspend = match stopped.take() {
                Some(suspend) => suspend,
                None => {
                    if !fast_path && slots[i] != Slot::Ready {
                        continue;
                    }
                    let running = check.map(|c| Running::enter(c, i));
                    let suspend = round::resume_one(&mut tasks[i], progress);
                    drop(running);
                    suspend
                }
            };
            // Each variant destructured here, so that an inlined `resume`'s
            // barrier stays in registers for the comparison.
            let w = match suspend {
                Suspend::Arrived(a) => {
                    if fast_path && round.joins_arrival(a) {
                        progress.step();
                        continue;
                    }
                    a.wait()
                }
                Suspend::Barrier(w) => w,
                Suspend::Done => {
                    leave_fast_path(&mut fast_path, &mut all_ready, slots, k, &round);
                    round.done(i, slots, progress);
                    continue;
                }
                Suspend::Failed(failure) => {
                    leave_fast_path(&mut fast_path, &mut all_ready, slots, k, &round);
                    return Err(failed(i, failure, slots, env, plan));
                }
            };
            if fast_path && round.joins(w) {
                progress.step();
                continue;
            }
            leave_fast_path(&mut fast_path, &mut all_ready, slots, k, &round);
            round.barrier(i, w, slots, progress);
        }
        if fast_path {
            // The whole group waits at `first`, its slots still `Ready`.
            let first = round.first.expect("a group has work-items");
            if first.kind.is_sub_group() {
                slots.fill(Slot::Waiting(first));
                all_ready = false;
            }
        }
        let fast = round.resumed == n
            && round.uniform
            && round
                .first
                .is_some_and(|w| w.kind == BarrierKind::WorkGroup);
        let resolution = if fast {
            // Every work-item waits at the same work-group barrier: release.
            if let (Some(c), Some(w)) = (check, round.first) {
                c.release_group(w);
            }
            if !all_ready {
                slots.fill(Slot::Ready);
                all_ready = true;
            }
            Ok(Resolution::Released)
        } else {
            resolve(slots, sg, &plan.kernel, env, check)
        };
        match resolution {
            Ok(Resolution::Finished) => return Ok(()),
            Ok(Resolution::Released) => {}
            Err(d) => match check.filter(|_| plan.run_on_divergence) {
                Some(c) => {
                    // Reported, then every waiting work-item is released
                    // from its own barrier (Waiting → Ready), as Oclgrind
                    // runs on; to the checker the group met at the first
                    // waiting work-item's barrier, as Oclgrind's sees it.
                    if !diverged {
                        c.launch.add(crate::checker::Report::from_divergence(&d));
                        diverged = true;
                    }
                    let first = slots.iter().find_map(|s| match s {
                        Slot::Waiting(w) => Some(*w),
                        _ => None,
                    });
                    if let Some(w) = first {
                        match w.kind {
                            BarrierKind::WorkGroup => c.release_group(w),
                            BarrierKind::SubGroup => {
                                for (k, m) in slots.chunks(sg).enumerate() {
                                    c.release_sub_group(k * sg, k * sg + m.len(), w);
                                }
                            }
                            // Orders no memory.
                            BarrierKind::SubGroupActive { .. } => {}
                        }
                    }
                    for s in slots.iter_mut() {
                        if matches!(s, Slot::Waiting(_)) {
                            *s = Slot::Ready;
                        }
                    }
                    all_ready = false;
                }
                None => return Err(GroupFailure::Error(LaunchError::Divergence(d))),
            },
        }
        if shared.dispenser.is_cancelled() {
            return Err(stalled(slots, env, None));
        }
    }
}

/// Work-item `i` failed: the group's failure.
#[cold]
fn failed(
    i: usize,
    failure: ItemFailure,
    slots: &mut [Slot],
    env: &GroupEnv<'_>,
    plan: &Plan<'_>,
) -> GroupFailure {
    // Ready → Stopped.
    slots[i] = Slot::Stopped;
    match failure {
        ItemFailure::Panic { message, site } => {
            let ids = ItemIds::new(&plan.geometry, env.group_id, env.local_size, i);
            GroupFailure::Error(LaunchError::Panic(Box::new(KernelPanic {
                kernel: plan.kernel.clone(),
                dims: plan.geometry.dims,
                ids,
                message,
                site,
            })))
        }
        ItemFailure::Cancelled { site } => stalled(slots, env, Some((i, site))),
    }
}

/// Resolves barriers after a round, when no slot is `Ready`.
fn resolve(
    slots: &mut [Slot],
    sg: usize,
    kernel: &str,
    env: &GroupEnv<'_>,
    check: Option<&GroupCheck>,
) -> Result<Resolution, Box<Divergence>> {
    let n = slots.len();
    let mut done = 0;
    let mut at_sub_group = false;
    for s in slots.iter() {
        match s {
            Slot::Done => done += 1,
            Slot::Waiting(w) if w.kind.is_sub_group() => at_sub_group = true,
            _ => {}
        }
    }
    if at_sub_group {
        let mut released = false;
        for (index, members) in slots.chunks_mut(sg).enumerate() {
            // Non-uniform operations first: the members waiting at the
            // earliest one are its active set (Waiting → Ready), whatever
            // the others do; the checker is not told, as such an operation
            // orders no memory.
            if let Some(active) = earliest_active(members) {
                for s in members.iter_mut() {
                    if *s == Slot::Waiting(active) {
                        *s = Slot::Ready;
                    }
                }
                released = true;
                continue;
            }
            let Some(wait) = members.iter().find_map(|s| match s {
                Slot::Waiting(w) if w.kind == BarrierKind::SubGroup => Some(*w),
                _ => None,
            }) else {
                continue;
            };
            if members.iter().all(|s| *s == Slot::Waiting(wait)) {
                if let Some(c) = check {
                    c.release_sub_group(index * sg, index * sg + members.len(), wait);
                }
                members.fill(Slot::Ready);
                released = true;
            } else {
                let first = index * sg;
                return Err(divergence(
                    kernel,
                    env,
                    BarrierKind::SubGroup,
                    Some(index),
                    wait,
                    first,
                    members,
                ));
            }
        }
        debug_assert!(
            released,
            "a sub-group barrier is either released or divergent"
        );
        return Ok(Resolution::Released);
    }
    if done == n {
        return Ok(Resolution::Finished);
    }
    let wait = slots
        .iter()
        .find_map(|s| match s {
            Slot::Waiting(w) => Some(*w),
            _ => None,
        })
        .expect("a group that is not done has a waiting work-item after a round");
    if done == 0 && slots.iter().all(|s| *s == Slot::Waiting(wait)) {
        if let Some(c) = check {
            c.release_group(wait);
        }
        slots.fill(Slot::Ready);
        return Ok(Resolution::Released);
    }
    Err(divergence(
        kernel,
        env,
        BarrierKind::WorkGroup,
        None,
        wait,
        0,
        slots,
    ))
}

/// The non-uniform sub-group operation that some of `members` wait at and
/// that comes first in the source (line, column, then the operation's
/// identity); `None` if none waits at one.
///
/// Why the earliest: members a divergent branch took past an operation
/// wait at a later one, where the others, once released, will join them;
/// releasing the later one first would split a set that runs it together.
/// (A branch into a function defined above its caller, or members at one
/// operation in different iterations of a loop, are what this order cannot
/// tell apart: OpenCL leaves which work-items are active there to the
/// implementation.)
fn earliest_active(members: &[Slot]) -> Option<BarrierWait> {
    members
        .iter()
        .filter_map(|s| match s {
            Slot::Waiting(w) => match w.kind {
                BarrierKind::SubGroupActive { op } => Some((w.site.line, w.site.column, op, *w)),
                _ => None,
            },
            _ => None,
        })
        .min_by_key(|(line, column, op, _)| (*line, *column, *op))
        .map(|(.., w)| w)
}

fn divergence(
    kernel: &str,
    env: &GroupEnv<'_>,
    kind: BarrierKind,
    sub_group: Option<usize>,
    wait: BarrierWait,
    first: usize,
    members: &[Slot],
) -> Box<Divergence> {
    let places = members
        .iter()
        .enumerate()
        .map(|(j, s)| (first + j, s.place()));
    Box::new(Divergence {
        kernel: kernel.to_string(),
        group_id: env.group_id,
        dims: env.geometry.dims,
        kind,
        sub_group,
        barrier: wait.site,
        places: runs_of(places),
    })
}

/// Unwinds every task that has not finished, so its stack can be reused and
/// its destructors run.
fn cancel_all<T: ItemTask>(tasks: &mut [T], slots: &mut [Slot]) {
    for (t, s) in tasks.iter_mut().zip(slots.iter_mut()) {
        // A kernel that catches the cancellation and waits at a barrier again
        // is cancelled again; after this many tries its task is dropped,
        // which unwinds it by force.
        let mut tries = 0;
        while matches!(s, Slot::Ready | Slot::Waiting(_)) && tries < 16 {
            tries += 1;
            match t.resume(Resume::Cancel) {
                Suspend::Barrier(w) => *s = Slot::Waiting(w),
                Suspend::Arrived(a) => *s = Slot::Waiting(a.wait()),
                Suspend::Done => *s = Slot::Done,
                Suspend::Failed(_) => *s = Slot::Stopped,
            }
        }
    }
}
