//! Loom models of the scheduler's protocols. Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p clsync --lib --release loom`.

use std::sync::atomic::Ordering;

use loom::sync::atomic::AtomicUsize;
use loom::sync::Arc;
use loom::thread;

use super::dispenser::Dispenser;
use super::latch::Latch;

/// Every group is handed out exactly once, however the claims interleave.
#[test]
fn loom_dispenser_hands_out_each_group_once() {
    loom::model(|| {
        let d = Arc::new(Dispenser::new(3));
        let claimed: Arc<[AtomicUsize; 3]> = Arc::new(Default::default());
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let (d, claimed) = (d.clone(), claimed.clone());
                thread::spawn(move || {
                    while let Some(i) = d.claim() {
                        claimed[i].fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        for c in claimed.iter() {
            assert_eq!(c.load(Ordering::Relaxed), 1);
        }
    });
}

/// After a cancel that a worker has observed, it claims nothing more, and
/// no group is ever handed out twice.
#[test]
fn loom_dispenser_stops_after_cancel() {
    loom::model(|| {
        let d = Arc::new(Dispenser::new(4));
        let claimed: Arc<[AtomicUsize; 4]> = Arc::new(Default::default());
        let canceller = {
            let d = d.clone();
            thread::spawn(move || d.cancel())
        };
        let worker = {
            let (d, claimed) = (d.clone(), claimed.clone());
            thread::spawn(move || {
                while let Some(i) = d.claim() {
                    claimed[i].fetch_add(1, Ordering::Relaxed);
                    if d.is_cancelled() {
                        assert!(d.claim().is_none());
                        break;
                    }
                }
            })
        };
        canceller.join().unwrap();
        worker.join().unwrap();
        assert!(d.claim().is_none());
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
