//! Barrier cost of the general (coroutine) engine: nanoseconds per
//! work-item per barrier, at local sizes 64, 256 and 1024.
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
        "{:>10} {:>12} {:>22}",
        "local size", "work-items", "ns/work-item/barrier"
    );
    for local in [64usize, 256, 1024] {
        let groups = 16 * rt.threads();
        let n = local * groups;
        let sink = Buffer::<u32>::new(n);
        let launch = Launch::new("barrier_loop", NdRange::new([n]).local([local]));
        let mut times: Vec<f64> = (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                rt.launch(&launch, |wi| {
                    let mut acc = wi.get_local_id(0) as u32;
                    for _ in 0..BARRIERS {
                        wi.barrier(LOCAL);
                        acc = acc.wrapping_mul(3).wrapping_add(1);
                    }
                    sink.set(wi.get_global_id(0), acc);
                })
                .expect("the barrier loop runs");
                start.elapsed().as_secs_f64()
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let median = times[RUNS / 2];
        // Per thread: the groups are spread over all workers.
        let per = median * 1e9 * rt.threads() as f64 / (n * BARRIERS) as f64;
        println!("{local:>10} {n:>12} {per:>22.2}");
    }
}
