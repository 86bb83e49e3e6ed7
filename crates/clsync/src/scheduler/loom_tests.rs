//! Loom models of the scheduler's protocols. Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p clsync --lib --release loom`.

use std::sync::atomic::Ordering;

use loom::sync::atomic::AtomicUsize;
use loom::sync::Arc;
use loom::thread;

use super::dispenser::Dispenser;
use super::latch::Latch;
use super::watchdog::Probation;

/// Runs `workers` threads claiming from a dispenser of `total` groups
/// until it is empty; asserts that every group was claimed exactly once.
fn claim_all(total: usize, workers: usize) {
    let d = Arc::new(Dispenser::new(total, workers));
    let claimed: Arc<Vec<AtomicUsize>> =
        Arc::new((0..total).map(|_| AtomicUsize::new(0)).collect());
    let threads: Vec<_> = (0..workers)
        .map(|w| {
            let (d, claimed) = (d.clone(), claimed.clone());
            thread::spawn(move || {
                while let Some(batch) = d.claim(w) {
                    for i in batch {
                        claimed[i].fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    for c in claimed.iter() {
        assert_eq!(c.load(Ordering::Relaxed), 1);
    }
}

/// Every group is handed out exactly once, however the claims interleave.
/// Shares 0..1 and 1..3: the first worker is done after one group and
/// steals from the second, which may be claiming at the same time.
#[test]
fn loom_dispenser_hands_out_each_group_once() {
    loom::model(|| claim_all(3, 2));
}

/// Two workers with two groups each: either may finish first and steal
/// from the other while it claims, and then be robbed of what it stole.
#[test]
fn loom_dispenser_steals_both_ways() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(|| claim_all(4, 2));
}

/// After a cancel that a worker has observed, it claims nothing more, and
/// no group is ever handed out twice.
#[test]
fn loom_dispenser_stops_after_cancel() {
    loom::model(|| {
        let d = Arc::new(Dispenser::new(4, 1));
        let claimed: Arc<[AtomicUsize; 4]> = Arc::new(Default::default());
        let canceller = {
            let d = d.clone();
            thread::spawn(move || d.cancel())
        };
        let worker = {
            let (d, claimed) = (d.clone(), claimed.clone());
            thread::spawn(move || {
                while let Some(batch) = d.claim(0) {
                    for i in batch {
                        claimed[i].fetch_add(1, Ordering::Relaxed);
                    }
                    if d.is_cancelled() {
                        assert!(d.claim(0).is_none());
                        break;
                    }
                }
            })
        };
        canceller.join().unwrap();
        worker.join().unwrap();
        assert!(d.claim(0).is_none());
        assert!(claimed.iter().all(|c| c.load(Ordering::Relaxed) <= 1));
    });
}

/// Everything a worker did before counting down happens before the waiter
/// returns.
#[test]
fn loom_latch_publishes_worker_writes() {
    loom::model(|| {
        let latch = Arc::new(Latch::new(2));
        let data: Arc<[AtomicUsize; 2]> = Arc::new(Default::default());
        let workers: Vec<_> = (0..2)
            .map(|i| {
                let (latch, data) = (latch.clone(), data.clone());
                thread::spawn(move || {
                    // Relaxed: the latch's mutex must order it for the waiter.
                    data[i].store(i + 1, Ordering::Relaxed);
                    latch.count_down();
                })
            })
            .collect();
        latch.wait();
        assert_eq!(data[0].load(Ordering::Relaxed), 1);
        assert_eq!(data[1].load(Ordering::Relaxed), 2);
        for w in workers {
            w.join().unwrap();
        }
    });
}

/// A probation that starts while a work-item polls, after an earlier one
/// left `polled` set: if the poll saw this probation on, this probation
/// sees the poll. (With a relaxed `on`, the poll could see it on, read the
/// stale `true`, skip its store, and the clear land after: a spinning
/// work-item taken for one that never polls.)
#[test]
fn loom_a_poll_seen_in_a_probation_is_not_lost_to_its_start() {
    loom::model(|| {
        let p = Arc::new(Probation::new());
        // The earlier probation: polled, ended.
        p.begin();
        p.note_poll();
        p.end();
        let worker = {
            let p = p.clone();
            thread::spawn(move || p.note_poll())
        };
        p.begin();
        let saw_on = worker.join().unwrap();
        if saw_on {
            assert!(p.polled(), "a poll during the probation was lost");
        }
    });
}
