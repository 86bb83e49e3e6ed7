//! One round of a group's barrier rounds (`super::drive`): what it has
//! seen so far, and its fast path.

use super::{Progress, Slot};
use crate::engine::{ItemTask, Suspend};
use crate::sync::{Arrival, BarrierWait};

/// What one round of `drive` has seen so far.
pub(super) struct Round {
    /// Work-items resumed.
    pub(super) resumed: usize,
    /// The barrier the first of them waits at.
    pub(super) first: Option<BarrierWait>,
    /// The same, as its engine's arrival, if it gave one.
    pub(super) arrival: Option<Arrival>,
    /// Whether every one resumed waits at `first`.
    pub(super) uniform: bool,
}

/// Ends a round's fast path at its `k`th work-item: those before it wait at
/// the round's first barrier, which their slots now say.
#[inline]
pub(super) fn leave_fast_path(
    fast_path: &mut bool,
    all_ready: &mut bool,
    slots: &mut [Slot],
    k: usize,
    round: &Round,
) {
    if *fast_path {
        *fast_path = false;
        *all_ready = false;
        if let Some(f) = round.first {
            // Ready → Waiting, for each of them.
            slots[..k].fill(Slot::Waiting(f));
        }
    }
}

impl Round {
    /// A fresh round's fast path (a launch in linear order, unchecked):
    /// resumes the work-items from the first while each does what the first
    /// did, arrive at the same barrier (the same [`Arrival`]) or return.
    /// Returns how many returned (0, or the whole prefix), and the index of
    /// the first that did anything else, with what it did, for the general
    /// loop to take up; `None` when every work-item did the same.
    #[inline]
    pub(super) fn uniform_prefix<T: ItemTask>(
        &mut self,
        tasks: &mut [T],
        progress: &mut Progress<'_>,
    ) -> (usize, Option<(usize, Suspend)>) {
        let mut lead = Lead::default();
        let (resumed, stopped) = resume_while_same(tasks, &mut lead, progress);
        self.resumed = resumed;
        self.arrival = lead.arrival;
        self.first = lead.arrival.map(Arrival::wait);
        let done = if lead.done { resumed } else { 0 };
        (done, stopped)
    }

    /// On the fast path: whether a work-item that arrived at `a` waits at the
    /// round's first barrier (or is the round's first), counted if so. An
    /// arrival other than the first's may still be the same barrier: `joins`
    /// decides.
    #[inline]
    pub(super) fn joins_arrival(&mut self, a: Arrival) -> bool {
        match self.arrival {
            Some(f) if f == a => {}
            None if self.first.is_none() => {
                self.arrival = Some(a);
                self.first = Some(a.wait());
            }
            _ => return false,
        }
        self.resumed += 1;
        true
    }

    /// On the fast path: whether a work-item that waits at `w` waits at the
    /// round's first barrier (or is the round's first), counted if so.
    #[inline]
    pub(super) fn joins(&mut self, w: BarrierWait) -> bool {
        match self.first {
            Some(f) if f == w => {}
            None => self.first = Some(w),
            _ => return false,
        }
        self.resumed += 1;
        true
    }

    /// Work-item `i` waits at `w`.
    #[inline]
    pub(super) fn barrier(
        &mut self,
        i: usize,
        w: BarrierWait,
        slots: &mut [Slot],
        progress: &mut Progress<'_>,
    ) {
        self.resumed += 1;
        progress.step();
        match self.first {
            None => self.first = Some(w),
            Some(f) => self.uniform &= f == w,
        }
        // Ready → Waiting.
        slots[i] = Slot::Waiting(w);
    }

    /// Work-item `i` returned.
    #[inline]
    pub(super) fn done(&mut self, i: usize, slots: &mut [Slot], progress: &mut Progress<'_>) {
        self.resumed += 1;
        progress.step();
        self.uniform = false;
        // Ready → Done.
        slots[i] = Slot::Done;
    }
}

/// What the first work-item of a run of [`resume_while_same`] did, which
/// the rest must do too: arrive at `arrival`, or return (`done`). Neither
/// while none has been resumed.
#[derive(Clone, Copy, Default)]
pub(super) struct Lead {
    arrival: Option<Arrival>,
    done: bool,
}

/// Resumes `tasks` in order while each does what the first did (`lead`):
/// arrive at the same barrier, or return. Each is counted in `progress`.
/// Returns how many it resumed, and, if one did anything else, its index and
/// what it did; `lead` then says what the others did.
///
/// Returning is followed like arriving because a group's last round is one
/// where every work-item returns: taken one by one through the general loop,
/// that round cost a kernel with one barrier about as much as its barrier
/// round did.
///
/// The only place a task of any engine is resumed with
/// [`Resume::Continue`](crate::engine::Resume::Continue): the fast path
/// calls it for a round, the general loop ([`resume_one`]) for one
/// work-item. With one call site, a kernel's own code (an async kernel's
/// `poll`, which the compiler generates and no attribute reaches) inlines
/// here whatever its size; with one here and one in the general loop, LLVM
/// weighs a large kernel against its threshold and leaves it out of line,
/// which costs a call, a `Suspend` returned through memory and a landing
/// pad per work-item (81 instructions per work-item per barrier against 47
/// for the async barrier loop).
///
/// The whole loop runs in one [`ItemTask::catch_unguarded`], its
/// resumptions through [`ItemTask::resume_unguarded`]: a panic ends the
/// loop at the work-item that panicked (the one before the position of
/// the iterator, which lives outside the closure), and that work-item's
/// [`ItemTask::panicked`] says what it failed with. Out of line, so that
/// the loop's state has the registers to itself rather than sharing them
/// with the general loop's.
#[inline(never)]
fn resume_while_same<T: ItemTask>(
    tasks: &mut [T],
    lead: &mut Lead,
    progress: &mut Progress<'_>,
) -> (usize, Option<(usize, Suspend)>) {
    // Counted in registers, not behind the reference.
    let counted = progress.fork();
    let mut at = lead.arrival;
    let mut done = lead.done;
    let n = tasks.len();
    // Outside the closure, so that after a panic its position says which
    // task panicked; two pointers rather than an index and the slice, one
    // value fewer to keep across an engine's switch.
    let mut rest = tasks.iter_mut();
    let caught = T::catch_unguarded(|| {
        loop {
            let other = 'run: {
                for t in rest.by_ref() {
                    match t.resume_unguarded() {
                        Suspend::Arrived(a) if at.is_none_or(|f| f == a) => {
                            // Set once: writing the same value back per
                            // work-item kept it in memory, across an
                            // engine's switch. Not after returns.
                            if at.is_none() {
                                if done {
                                    return Some(Suspend::Arrived(a));
                                }
                                at = Some(a);
                            }
                            counted.step();
                        }
                        other => break 'run other,
                    }
                }
                return None;
            };
            // A return goes on a run of returns (or starts one), here,
            // off the path of arrivals: matched beside them, it cost the
            // barrier loop a fifth more instructions per work-item.
            if matches!(other, Suspend::Done) && at.is_none() {
                done = true;
                counted.step();
                continue;
            }
            return Some(other);
        }
    });
    // The task that stopped the loop (or panicked) is the one before `rest`.
    let stopped_at = n - rest.len();
    let stopped = match caught {
        Ok(None) => None,
        Ok(Some(s)) => Some((stopped_at - 1, s)),
        Err(payload) => Some((stopped_at - 1, tasks[stopped_at - 1].panicked(payload))),
    };
    let k = stopped.as_ref().map_or(n, |(k, _)| *k);
    progress.join(&counted, 0);
    *lead = Lead { arrival: at, done };
    (k, stopped)
}

/// Resumes `task` with [`Resume::Continue`](crate::engine::Resume::Continue)
/// through [`resume_while_same`], as the general loop does; `progress` is
/// not advanced (the general loop counts for itself).
#[inline]
pub(super) fn resume_one<T: ItemTask>(task: &mut T, progress: &Progress<'_>) -> Suspend {
    let mut lead = Lead::default();
    // A fork, dropped: the loop's count of this work-item is the general
    // loop's to make. The slot it stores to is the watchdog's, which the
    // general loop stores the same count to right after.
    let mut scratch = progress.fork();
    match resume_while_same(std::slice::from_mut(task), &mut lead, &mut scratch) {
        (_, Some((_, suspend))) => suspend,
        // A lone work-item that did not stop the run arrived or returned.
        (_, None) => match lead.arrival {
            Some(a) => Suspend::Arrived(a),
            None => {
                debug_assert!(lead.done, "a resumed work-item arrived or returned");
                Suspend::Done
            }
        },
    }
}
