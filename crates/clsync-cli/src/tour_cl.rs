//! The tour's OpenCL C table: the benchmark workloads' OpenCL C source
//! (`kernels.cl`, the file the PoCL side of the benchmark builds), compiled
//! by `clsync-opencl` and run on the same runtime as the Rust samples, each
//! result checked against its sequential reference. At the benchmark's
//! small sizes: the compiled path is not tuned for speed yet (issue #28).

use clsync::Runtime;
use clsync_bench::opencl_c::OpenClC;
use clsync_bench::{reference, Sizes};

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
    let names = [
        "barrier loop",
        "reduce",
        "scan",
        "sgemm",
        "histogram",
        "message passing",
    ];
    let mut failed = 0;
    for name in names {
        if only.is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let (size, run) = match name {
            "barrier loop" => (
                format!("{n} items, local {local}, {barriers} barriers"),
                Some(cl.barrier_loop(rt, &s)),
            ),
            "reduce" => (
                format!("{} floats", s.reduce),
                Some(cl.reduce(rt, &reference::reduce_input(s.reduce))),
            ),
            "scan" => (
                format!("{} ints", s.scan),
                Some(cl.scan(rt, &reference::scan_input(s.scan))),
            ),
            "sgemm" => {
                let (a, b) = (reference::matrix(s.sgemm, 4), reference::matrix(s.sgemm, 5));
                (
                    format!("{0} x {0}, 16 x 16 tiles", s.sgemm),
                    Some(cl.sgemm(rt, &a, &b, s.sgemm)),
                )
            }
            "histogram" => (
                format!("{} bytes, local atomics", s.histogram),
                Some(cl.histogram(rt, &reference::histogram_input(s.histogram))),
            ),
            _ => (
                format!("{} round trips between 2 groups", s.rounds),
                // Two work-groups that wait for each other need two workers.
                (rt.threads() >= 2).then(|| cl.message_passing(rt, s.rounds)),
            ),
        };
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
