//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod check;

use std::sync::mpsc;
use std::time::Duration;

/// Runs `f` on its own thread and fails the test if it has not returned
/// within `secs` seconds, so that a regression that hangs cannot hang CI.
pub fn within<R: Send + 'static>(secs: u64, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(Ok(r)) => r,
        Ok(Err(p)) => std::panic::resume_unwind(p),
        Err(_) => panic!("test did not finish within {secs} s: it hangs"),
    }
}

/// A reduction's case: `n` values, and the sum of each group of `local` of
/// them, computed sequentially.
pub fn group_sums_case(n: usize, local: usize) -> (Vec<u32>, Vec<u32>) {
    let input: Vec<u32> = (0..n as u32).map(|i| i * 7 % 1000).collect();
    let sums = input.chunks(local).map(|c| c.iter().sum()).collect();
    (input, sums)
}

/// A lifted kernel's divergence on a condition, as `Group::uniform` reports
/// it: each run of work-items with the value it got.
pub fn decided(d: &clsync::Divergence) -> Vec<(Vec<usize>, String)> {
    d.places
        .iter()
        .map(|p| match &p.place {
            clsync::Place::Decided { value, .. } => (p.items.clone(), value.clone()),
            other => panic!("not a decided condition: {other}"),
        })
        .collect()
}

/// The default runtime for tests: two workers, as on CI.
pub fn rt() -> clsync::Runtime {
    clsync::Runtime::with_threads(2)
}

/// The kernel panic a failed launch reports; any other error fails the test.
pub fn kernel_panic(e: clsync::LaunchError) -> Box<clsync::KernelPanic> {
    match e {
        clsync::LaunchError::Panic(p) => p,
        other => panic!("expected a panic error, got {other}"),
    }
}
