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

/// The kernel panic of a barrier inside a group's loop over its
/// work-items, which names the mistake; any other error fails the test.
pub fn misplaced_barrier(e: clsync::LaunchError) -> Box<clsync::KernelPanic> {
    let p = kernel_panic(e);
    assert!(
        p.message.contains("barriers belong between the loops"),
        "{}",
        p.message
    );
    p
}

/// Which form of a kernel a run takes.
#[derive(Clone, Copy, Debug)]
pub enum Form {
    /// `name_launch`: the group-level form.
    Lifted,
    /// `Runtime::launch`: the kernel as written, on the coroutine engine.
    Coroutines,
}

/// Runs a kernel over `groups` groups of `local` work-items with a local
/// array of `local` values, in both forms, checked and unchecked, and holds
/// each run's output (of `groups * local` values) to `want`. `run` makes one
/// run into the output it is given.
pub fn both_forms_give(
    name: &str,
    (groups, local): (usize, usize),
    want: &[u32],
    run: impl Fn(&clsync::Runtime, &clsync::Launch, &clsync::Buffer<u32>, clsync::LocalArg<u32>, Form),
) {
    let rt = rt();
    for checked in [false, true] {
        for form in [Form::Lifted, Form::Coroutines] {
            let mut launch =
                clsync::Launch::new(name, clsync::NdRange::new([groups * local]).local([local]))
                    .checked(checked);
            let tile = launch.local::<u32>(local);
            let out = clsync::Buffer::<u32>::new(groups * local);
            run(&rt, &launch, &out, tile, form);
            assert_eq!(out.to_vec(), want, "{name}: {form:?}, checked: {checked}");
        }
    }
}
