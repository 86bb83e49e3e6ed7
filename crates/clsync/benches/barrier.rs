//! Barrier cost of the general engines (coroutines and async): nanoseconds
//! per work-item per barrier, at local sizes 64, 256 and 1024.
//!
//! `cargo bench -p clsync --bench barrier` prints, for each local size, the
//! median of 9 runs of a kernel whose work-items pass 200 barriers each,
//! divided by work-items × barriers. Set `CLSYNC_THREADS` to choose the
//! number of worker threads (default: one per core).

use std::time::Instant;

use clsync::sync::LOCAL;
use clsync::{Buffer, Launch, NdRange, Runtime};

const BARRIERS: usize = 200;
const RUNS: usize = 9;

fn main() {
    let threads = std::env::var("CLSYNC_THREADS")
        .ok()
        .and_then(|s| s.parse().ok());
    let rt = threads.map_or_else(Runtime::new, Runtime::with_threads);
    println!(
        "barrier cost, {} worker thread(s), {BARRIERS} barriers per work-item, median of {RUNS}",
        rt.threads()
    );
    println!(
        "{:>10} {:>12} {:>13} {:>13}",
        "local size", "work-items", "coroutines", "async"
    );
    println!("{:>10} {:>12} {:>27}", "", "", "ns/work-item/barrier");
    for local in [16usize, 64, 256, 1024] {
        let groups = 16 * rt.threads();
        let n = local * groups;
        let sink = Buffer::<u32>::new(n);
        let launch = Launch::new("barrier_loop", NdRange::new([n]).local([local]));
        let coroutines = per_item(&rt, n, || {
            rt.launch(&launch, |wi| {
                let mut acc = wi.get_local_id(0) as u32;
                for _ in 0..BARRIERS {
                    wi.barrier(LOCAL);
                    acc = acc.wrapping_mul(3).wrapping_add(1);
                }
                sink.set(wi.get_global_id(0), acc);
            })
            .expect("the barrier loop runs");
        });
        let futures = per_item(&rt, n, || {
            rt.launch_async(&launch, async |wi| {
                let mut acc = wi.get_local_id(0) as u32;
                for _ in 0..BARRIERS {
                    wi.barrier_async(LOCAL).await;
                    acc = acc.wrapping_mul(3).wrapping_add(1);
                }
                sink.set(wi.get_global_id(0), acc);
            })
            .expect("the barrier loop runs");
        });
        println!("{local:>10} {n:>12} {coroutines:>13.2} {futures:>13.2}");
    }
}

/// The median of `RUNS` runs of `launch`, per work-item per barrier and per
/// worker thread (the groups are spread over all workers).
fn per_item(rt: &Runtime, n: usize, launch: impl Fn()) -> f64 {
    let mut times: Vec<f64> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            launch();
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[RUNS / 2] * 1e9 * rt.threads() as f64 / (n * BARRIERS) as f64
}
