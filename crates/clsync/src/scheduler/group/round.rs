//! One round of a group's barrier rounds (`super::drive`): what it has
//! seen so far, and its fast path.

use super::{Progress, Slot};
use crate::engine::{ItemTask, Resume, Suspend};
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
    /// A fresh round's fast path in a loop of its own (a launch in linear
    /// order, unchecked), small enough for its state to stay in registers:
    /// resumes the work-items from the first while each arrives where the
    /// first one did (the same [`Arrival`]). Returns the index of the first
    /// that did anything else, with what it did, for the general loop to
    /// take up; `None` when every work-item arrived there.
    #[inline]
    pub(super) fn uniform_prefix<T: ItemTask>(
        &mut self,
        tasks: &mut [T],
        progress: &mut Progress<'_>,
    ) -> Option<(usize, Suspend)> {
        let mut first: Option<Arrival> = None;
        let mut stopped = None;
        // Counted in registers, not behind the reference.
        let mut counted = progress.fork();
        for (k, t) in tasks.iter_mut().enumerate() {
            match t.resume(Resume::Continue) {
                Suspend::Arrived(a) if first.is_none_or(|f| f == a) => {
                    first = Some(a);
                    counted.step();
                }
                other => {
                    stopped = Some((k, other));
                    break;
                }
            }
        }
        progress.join(&counted, 0);
        self.resumed = stopped.as_ref().map_or(tasks.len(), |(k, _)| *k);
        self.arrival = first;
        self.first = first.map(Arrival::wait);
        stopped
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
