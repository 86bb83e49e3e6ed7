//! Hands out a launch's work-groups to worker threads, each exactly once,
//! and stops handing them out once the launch is cancelled.
//!
//! Each worker starts with its own contiguous share of the groups, as
//! OpenMP's static schedule and PoCL's default split do, and takes them in
//! order, in batches, from a word of its own; a worker whose share is done
//! steals the back half of the largest share left. So, without contention,
//! a worker runs the same groups launch after launch — a kernel that reads
//! what the previous one wrote finds it in its own core's cache — and
//! claiming groups is an uncontended compare-and-swap, not a shared counter
//! that every claim moves between cores. Stealing keeps the load balanced
//! when groups differ in cost.
//!
//! # The state of a share
//!
//! A share is one 64-bit word, `next` in the high half and `end` in the
//! low: the groups `next..end` are unclaimed.
//!
//! * The owner claims `next..next + k` by a compare-and-swap `(next, end)`
//!   → `(next + k, end)`, with `k` a sixteenth of what is left, from 1 to
//!   [`MAX_BATCH`] (OpenMP's guided schedule).
//! * A thief takes the back half by a compare-and-swap `(next, end)` →
//!   `(next, mid)`, then runs `mid` and stores `(mid + 1, end)` as its own
//!   share, which was empty.
//! * Nobody writes an empty share but its owner (thieves only change
//!   shares they saw non-empty, by a compare-and-swap that fails if the
//!   share changed), so the owner's plain store of a stolen range races
//!   with nothing. No range is ever handed out twice, so a share never
//!   returns to a value a stale compare-and-swap expects (no ABA).
//!
//! A claim that finds every share empty ends the worker. A thief between
//! its steal and its store holds groups no share shows; it runs them
//! itself, so nothing is lost, only that worker ends a little early.

use std::ops::Range;
use std::sync::atomic::Ordering;

use crossbeam_utils::CachePadded;

use crate::primitive::{AtomicBool, AtomicU64};

/// The shared state over a launch's groups (linear indices `0..total`).
pub(crate) struct Dispenser {
    shares: Box<[CachePadded<AtomicU64>]>,
    cancelled: AtomicBool,
}

/// The most groups a worker takes from its own share at once.
pub(crate) const MAX_BATCH: u32 = 16;

fn pack(next: u32, end: u32) -> u64 {
    (u64::from(next) << 32) | u64::from(end)
}

fn unpack(word: u64) -> (u32, u32) {
    ((word >> 32) as u32, word as u32)
}

impl Dispenser {
    /// Groups `0..total` split into `workers` shares.
    ///
    /// # Panics
    ///
    /// If `total` does not fit in 32 bits (the geometry refuses such ranges
    /// before a launch starts) or `workers` is zero.
    pub(crate) fn new(total: usize, workers: usize) -> Self {
        let total = u32::try_from(total).expect("at most 2^32 - 1 work-groups per launch");
        assert!(workers > 0, "a dispenser needs a worker");
        let w = workers as u64;
        let bound = |i: u64| (u64::from(total) * i / w) as u32;
        Dispenser {
            shares: (0..w)
                .map(|i| CachePadded::new(AtomicU64::new(pack(bound(i), bound(i + 1)))))
                .collect(),
            cancelled: AtomicBool::new(false),
        }
    }

    /// The next groups for worker `me` to run, or `None` when every share
    /// is empty or the launch is cancelled.
    ///
    /// From its own share a worker takes a sixteenth of what is left, at
    /// least one group and at most [`MAX_BATCH`], as OpenMP's guided
    /// schedule does: one compare-and-swap per group cost a third of an
    /// empty group's run, and the batches shrink to single groups as the
    /// share runs out, so thieves still find work to balance. A steal takes
    /// one group (and the rest of the stolen half as the thief's share).
    pub(crate) fn claim(&self, me: usize) -> Option<Range<usize>> {
        // Relaxed: cancellation only has to stop new claims eventually; the
        // error that caused it is published under the outcome mutex.
        if self.cancelled.load(Ordering::Relaxed) {
            return None;
        }
        let own = &self.shares[me];
        // Relaxed, here and in every operation on a share: a share only
        // decides who runs which group, and compare-and-swap on one word is
        // atomic at any ordering, which is all exactly-once needs. The
        // groups' inputs were published before the launch started (the
        // pool's job queue orders that), not through the shares.
        let mut word = own.load(Ordering::Relaxed);
        loop {
            let (next, end) = unpack(word);
            if next >= end {
                return self.steal(me).map(|g| g..g + 1);
            }
            let take = ((end - next) / 16).clamp(1, MAX_BATCH);
            match own.compare_exchange_weak(
                word,
                pack(next + take, end),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(next as usize..(next + take) as usize),
                Err(now) => word = now,
            }
        }
    }

    /// Takes the back half of the largest share left: runs its first group
    /// now and keeps the rest as `me`'s share.
    fn steal(&self, me: usize) -> Option<usize> {
        loop {
            // Relaxed: see `claim`.
            let (victim, word) = self
                .shares
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != me)
                .map(|(i, s)| (i, s.load(Ordering::Relaxed)))
                .max_by_key(|&(_, w)| {
                    let (next, end) = unpack(w);
                    end.saturating_sub(next)
                })?;
            let (next, end) = unpack(word);
            if next >= end {
                return None;
            }
            let mid = next + (end - next) / 2;
            // Relaxed: see `claim`.
            if self.shares[victim]
                .compare_exchange(word, pack(next, mid), Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            {
                // `me`'s share is empty, so nobody else writes it (module
                // docs). Relaxed: see `claim`.
                self.shares[me].store(pack(mid + 1, end), Ordering::Relaxed);
                return Some(mid as usize);
            }
        }
    }

    /// Stops handing out groups, and (the first time) raises the
    /// [`gate`](crate::gate) until the launch ends, so that kernel code
    /// polls the flag.
    pub(crate) fn cancel(&self) {
        // Relaxed: pairs with the relaxed load in `claim`; see there. The
        // swap makes only the first cancel raise the gate.
        if !self.cancelled.swap(true, Ordering::Relaxed) {
            crate::gate::raise_polling();
        }
    }

    /// Whether the launch was cancelled.
    #[inline]
    pub(crate) fn is_cancelled(&self) -> bool {
        // Relaxed: see `claim`.
        self.cancelled.load(Ordering::Relaxed)
    }

    /// The cancel flag, for kernel code to poll.
    pub(crate) fn flag(&self) -> &AtomicBool {
        &self.cancelled
    }
}

impl Drop for Dispenser {
    /// The launch is over: a cancel's raise of the gate ends here.
    fn drop(&mut self) {
        // Relaxed: the dispenser is dropped after every worker has finished
        // with it (they borrow it), so this reads the final value.
        if self.cancelled.load(Ordering::Relaxed) {
            crate::gate::lower_polling();
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::Dispenser;

    /// One worker gets its share in order; an idle worker steals the back
    /// half of what is left; every group comes out once.
    /// Claims of one group each (the shares here are too small to batch).
    fn one(d: &Dispenser, w: usize) -> Option<usize> {
        d.claim(w).map(|r| {
            assert_eq!(r.len(), 1, "{r:?}");
            r.start
        })
    }

    #[test]
    fn shares_in_order_then_halves_stolen() {
        let d = Dispenser::new(10, 2);
        assert_eq!(one(&d, 0), Some(0));
        assert_eq!(one(&d, 1), Some(5));
        assert_eq!(one(&d, 1), Some(6));
        // Worker 0 runs its share to the end...
        let mine: Vec<_> = (0..4).map(|_| one(&d, 0).unwrap()).collect();
        assert_eq!(mine, vec![1, 2, 3, 4]);
        // ...then steals the back half of worker 1's 7..10: 8, keeping 9.
        assert_eq!(one(&d, 0), Some(8));
        assert_eq!(one(&d, 1), Some(7));
        assert_eq!(one(&d, 0), Some(9));
        assert_eq!(d.claim(0), None);
        assert_eq!(d.claim(1), None);
    }

    /// A large share is taken in batches of a sixteenth of what is left, at
    /// most `MAX_BATCH`, shrinking to single groups at its end; a thief
    /// still gets half of what was left unclaimed.
    #[test]
    fn large_shares_go_in_shrinking_batches() {
        let d = Dispenser::new(1000, 2);
        assert_eq!(d.claim(0), Some(0..16));
        assert_eq!(d.claim(0), Some(16..32));
        let mut got: Vec<usize> = (0..32).collect();
        let mut sizes = Vec::new();
        while let Some(r) = d.claim(0) {
            if r.start >= 500 {
                // Worker 0's share is done: this is a steal from worker 1,
                // who has claimed nothing: the back half of 500..1000.
                assert_eq!(r, 750..751);
                break;
            }
            sizes.push(r.len());
            got.extend(r);
        }
        assert_eq!(got, (0..500).collect::<Vec<_>>());
        assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{sizes:?}");
        assert_eq!(sizes.last(), Some(&1));
        assert_eq!(d.claim(1), Some(500..515)); // 250 left: 250 / 16 = 15
    }

    #[test]
    fn more_workers_than_groups() {
        let d = Dispenser::new(2, 4);
        let mut got: Vec<_> = (0..4).filter_map(|w| one(&d, w)).collect();
        got.extend((0..4).filter_map(|w| one(&d, w)));
        got.sort();
        assert_eq!(got, vec![0, 1]);
    }

    #[test]
    fn cancelled_hands_out_nothing() {
        let d = Dispenser::new(8, 2);
        d.cancel();
        assert_eq!(d.claim(0), None);
        assert_eq!(d.claim(1), None);
    }
}
