//! What the checker costs on compiled OpenCL C: each workload of the
//! benchmark's `kernels.cl`, compiled by clsync, run unchecked and checked
//! (the checked build, every access reported to the checker) on the same
//! runtime, interleaved; the table gives the median time of each and their
//! ratio. The Rust samples' table is `clsync-samples`'s bench of the same
//! name.
//!
//! ```text
//! cargo bench -p clsync-bench --bench checker_overhead [-- --reps N --threads N --only NAME]
//! ```
//!
//! The sizes are those of `scripts/oclgrind-compare.sh` (where Oclgrind
//! takes seconds), so that the two tables describe the same runs. Nothing
//! here asserts a time; a result that does not match its sequential
//! reference stops the bench.

use std::time::Duration;

use clap::Parser;
use clsync::Runtime;
use clsync_bench::opencl_c::OpenClC;
use clsync_bench::{Sizes, Workload};

/// The sizes of the Oclgrind comparison's `.sim` files.
const SIZES: Sizes = Sizes {
    barrier: (1 << 16, 256, 32),
    barrier_locals: [256, 256, 256],
    reduce: 1 << 18,
    scan: 1 << 18,
    sgemm: 128,
    histogram: 1 << 20,
    rounds: 1000,
};

#[derive(Parser)]
struct Args {
    /// Interleaved runs of each side.
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Worker threads (default: the machine's).
    #[arg(long)]
    threads: Option<usize>,
    /// Only the workloads whose name contains this.
    #[arg(long)]
    only: Option<String>,
    /// Passed by `cargo bench`.
    #[arg(long, hide = true)]
    bench: bool,
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let args = Args::parse();
    let (plain, checked) = match (OpenClC::new(false), OpenClC::new(true)) {
        (Ok(p), Ok(c)) => (p, c),
        (Err(why), _) | (_, Err(why)) => {
            println!("checker overhead (OpenCL C): not run: {why}");
            return;
        }
    };
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let rt = Runtime::with_threads(threads);
    println!(
        "checker overhead, OpenCL C (kernels.cl), {threads} worker thread(s), {} interleaved run(s) each, medians",
        args.reps
    );
    println!(
        "{:<18} {:>14} {:>14} {:>9}",
        "workload", "unchecked", "checked", "ratio"
    );
    for w in Workload::ALL {
        let name = w.name();
        if args.only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        if w == Workload::MessagePassing && threads < 2 {
            // Two work-groups that wait for each other need two workers.
            println!("{name:<18} (needs two threads)");
            continue;
        }
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..args.reps.max(1) {
            for (cl, times) in [(&plain, &mut a), (&checked, &mut b)] {
                let r = cl.run(&rt, w, &SIZES);
                if let Err(e) = r.verified {
                    panic!("{name}: {e}");
                }
                times.push(r.time);
            }
        }
        let (a, b) = (median(a), median(b));
        println!(
            "{:<18} {:>12.1}ms {:>12.1}ms {:>8.1}x",
            name,
            a.as_secs_f64() * 1e3,
            b.as_secs_f64() * 1e3,
            b.as_secs_f64() / a.as_secs_f64()
        );
    }
}
