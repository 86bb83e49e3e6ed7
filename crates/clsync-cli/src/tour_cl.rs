//! The tour's OpenCL C table: the benchmark workloads' OpenCL C source
//! (`kernels.cl`, the file the PoCL side of the benchmark builds), compiled
//! by `clsync-opencl` and run on the same runtime as the Rust samples, each
//! result checked against its sequential reference. At the benchmark's
//! small sizes: the compiled path is not tuned for speed yet (issue #28).

use clsync::Runtime;
use clsync_bench::opencl_c::OpenClC;
use clsync_bench::{Sizes, Workload};

/// Runs the table; returns how many rows failed (0 where the front end is
/// missing: the table then says why and is skipped).
pub fn run(rt: &Runtime, checked: bool, only: Option<&str>) -> usize {
    let s = Sizes::SMALL;
    println!();
    println!(
        "OpenCL C: the benchmark's kernels.cl compiled by clsync-opencl (small sizes){}",
        if checked { ", checked" } else { "" }
    );
    let cl = match OpenClC::new(checked) {
        Ok(cl) => cl,
        Err(why) => {
            println!("  not run: {why}");
            return 0;
        }
    };
    let (n, local, barriers) = s.barrier;
    let mut failed = 0;
    for w in Workload::ALL {
        let name = w.name();
        if only.is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let size = match w {
            Workload::BarrierLoop => format!("{n} items, local {local}, {barriers} barriers"),
            Workload::Reduce => format!("{} floats", s.reduce),
            Workload::Scan => format!("{} ints", s.scan),
            Workload::Sgemm => format!("{0} x {0}, 16 x 16 tiles", s.sgemm),
            Workload::Histogram => format!("{} bytes, local atomics", s.histogram),
            Workload::MessagePassing => format!("{} round trips between 2 groups", s.rounds),
        };
        // Two work-groups that wait for each other need two workers.
        let run = (w != Workload::MessagePassing || rt.threads() >= 2).then(|| cl.run(rt, w, &s));
        let Some(r) = run else {
            println!("{name:<22} {size:<48} (needs two threads)");
            continue;
        };
        let verdict = crate::verdict(&r.verified, &mut failed);
        println!(
            "{name:<22} {size:<48} {:>9.2}ms {:>20}  {verdict}",
            r.time.as_secs_f64() * 1e3,
            ""
        );
    }
    failed
}
