//! Loads of local memory the compiler proves race with nothing, by the
//! kernel's barrier intervals (`translate::intervals`), which a checked
//! launch does not check access by access where the bytes hold a write.
//!
//! The reference is the same launch run on from divergent barriers, which
//! takes no proof at its word (`Launch::runs_on_divergence`): where the
//! kernels have no divergence, the two find the same problems, optimized
//! and unoptimized.

mod common;

use std::collections::BTreeSet;

use clsync::checker::ReportKind;
use clsync::{Buffer, NdRange, Runtime};
use clsync_opencl::{Arg, Findings, Program};

/// What a checked run found, each once: the compiled code's headlines
/// with their lines, and the checker's kinds with their pairs of lines.
fn problems(found: &Findings) -> BTreeSet<(String, u32, u32)> {
    let diagnostics = found
        .diagnostics
        .iter()
        .map(|d| (d.headline.clone(), d.site.map_or(0, |s| s.line), 0));
    let checker = found.checker.iter().map(|r| {
        let first = r.first.as_ref().map_or(0, |a| a.site.line);
        (
            format!("{:?}", r.kind),
            first.min(r.site.line),
            first.max(r.site.line),
        )
    });
    diagnostics.chain(checker).collect()
}

/// Runs kernel `k` of `src`, checked, with proofs taken and without
/// (running on from divergences), in both builds; asserts the two find
/// the same problems and returns them (optimized).
fn same_problems(
    src: &str,
    range: NdRange,
    args: impl Fn() -> Vec<Arg<'static>>,
) -> BTreeSet<(String, u32, u32)> {
    let mut out = BTreeSet::new();
    for options in ["", "-cl-opt-disable"] {
        let p: Program = common::build(src, "k.cl", options);
        let k = p.kernel("k").unwrap();
        let run = |run_on: bool| {
            k.run_with(
                &Runtime::with_threads(2),
                range.clone(),
                &args(),
                |l| l.run_on_divergence(run_on),
                true,
            )
            .unwrap_or_else(|e| panic!("{options}: {e}"))
        };
        let (proved, reference) = (problems(&run(false)), problems(&run(true)));
        assert_eq!(proved, reference, "options {options:?}");
        if options.is_empty() {
            out = proved;
        }
    }
    out
}

/// Leaked buffers, so that the arguments outlive the closures that make
/// them (a test's few bytes).
fn buffer(v: Vec<i32>) -> &'static Buffer<i32> {
    Box::leak(Box::new(Buffer::from_slice(&v)))
}

#[test]
fn a_tiles_reads_are_right_and_report_nothing() {
    // Floats, so that the compiler keeps the sum's order (whole numbers,
    // so that it is exact).
    let src = "kernel void k(global const float *a, global float *c) {
        local float t[16];
        size_t l = get_local_id(0);
        float acc = 0.0f;
        for (int i = 0; i < 4; i++) {
            t[l] = a[i * 16 + l];
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int j = 0; j < 16; j++) acc += t[j] * (float)(j + 1);
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        c[get_global_id(0)] = acc;
    }";
    let input: Vec<f32> = (0..64).map(|i| (i * 3 - 20) as f32).collect();
    let a: &'static Buffer<f32> = Box::leak(Box::new(Buffer::from_slice(&input)));
    let c: &'static Buffer<f32> = Box::leak(Box::new(Buffer::from_slice(&[0f32; 32])));
    let found = same_problems(src, NdRange::new([32]).local([16]), || {
        vec![Arg::Buffer(a), Arg::Buffer(c)]
    });
    assert!(found.is_empty(), "{found:?}");
    let want: f32 = (0..64).map(|i| input[i] * (i % 16 + 1) as f32).sum();
    assert_eq!(c.to_vec(), vec![want; 32]);
}

#[test]
fn a_read_and_a_write_in_two_branches_after_a_barrier_still_race() {
    // Work-item 0 reads t[5] while work-item 1 writes it: one branch each,
    // after the same barrier.
    let src = "kernel void k(global int *out) {
        local int t[16];
        size_t l = get_local_id(0);
        t[l] = 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l == 0) {
            out[get_group_id(0)] = t[5];
        } else if (l == 1) {
            t[5] = 2;
        }
    }";
    let out = buffer(vec![0; 4]);
    let found = same_problems(src, NdRange::new([64]).local([16]), || {
        vec![Arg::Buffer(out)]
    });
    assert!(
        found
            .iter()
            .any(|p| p.0 == format!("{:?}", ReportKind::DataRace)),
        "{found:?}"
    );
}

#[test]
fn a_read_of_local_memory_nothing_wrote_is_still_reported() {
    // Only the even work-items write; after the barrier, an interval of
    // reads, every work-item reads its neighbour's element.
    let src = "kernel void k(global int *out) {
        local int t[16];
        size_t l = get_local_id(0);
        if (l % 2 == 0) t[l] = 7;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = t[(l + 1) % 16];
    }";
    let out = buffer(vec![0; 32]);
    let found = same_problems(src, NdRange::new([32]).local([16]), || {
        vec![Arg::Buffer(out)]
    });
    assert!(!found.is_empty(), "an uninitialized read: {found:?}");
}
