//! Checked launches on work-item loops: a checked build of a kernel with
//! barriers runs as loops over its groups, and finds what the coroutine
//! engine finds on the same kernel (the same reports, the same output),
//! with each work-item's values, promoted variables, shadows and private
//! memory kept apart across barriers.

mod common;

use clsync::checker::ReportKind;
use clsync::{Buffer, NdRange, Runtime};
use clsync_opencl::exec::report::Diagnostic;
use clsync_opencl::{Arg, Findings, Program};

/// Builds `src` as `clsync run --check` does (unoptimized), as OpenCL
/// C 2.0.
fn build(src: &str) -> Program {
    common::build(src, "loops.cl", "-cl-opt-disable -cl-std=CL2.0")
}

/// Runs kernel `k` of `p` checked, on work-item loops (which it must
/// take) and on coroutines, over fresh copies of `init` as its first
/// argument (and `local` bytes of local memory as its second, if any),
/// running on from a barrier divergence as `clsync run --check` does:
/// what each found and the buffer after, both equal, once.
fn both(p: &Program, range: NdRange, init: &[i32], local: Option<usize>) -> (Findings, Vec<i32>) {
    both_with(p, range, init, local, true)
}

/// [`both`], running on from a divergence or not (`run_on`).
fn both_with(
    p: &Program,
    range: NdRange,
    init: &[i32],
    local: Option<usize>,
    run_on: bool,
) -> (Findings, Vec<i32>) {
    let k = p.kernel("k").unwrap();
    assert_eq!(
        k.engine_for(true),
        Ok(()),
        "the checked build runs as loops"
    );
    let mut seen = Vec::new();
    for coroutines in [true, false] {
        let out = Buffer::from_slice(init);
        let mut args = vec![Arg::Buffer(&out)];
        if let Some(bytes) = local {
            args.push(Arg::Local(bytes));
        }
        let k = match coroutines {
            false => p.kernel("k").unwrap(),
            true => p.kernel("k").unwrap().on_coroutines(),
        };
        let found = k
            .run_with(
                &Runtime::new(),
                range.clone(),
                &args,
                |l| l.run_on_divergence(run_on),
                true,
            )
            .unwrap_or_else(|e| panic!("{e}"));
        seen.push((found, out.to_vec()));
    }
    let (loops, coroutines) = (seen.pop().unwrap(), seen.pop().unwrap());
    assert_eq!(
        loops.0.diagnostics, coroutines.0.diagnostics,
        "the diagnostics"
    );
    // A launch that stops at a divergence reports the group that failed
    // first, which depends on the threads' timing: its kind and line only.
    let sorted = |f: &Findings| {
        let mut r: Vec<String> = f
            .checker
            .iter()
            .map(|r| match run_on {
                true => format!("{r:?}"),
                false => format!("{:?} {}", r.kind, r.site),
            })
            .collect();
        r.sort();
        r
    };
    assert_eq!(
        sorted(&loops.0),
        sorted(&coroutines.0),
        "the checker's reports"
    );
    // A launch that stops at a divergence leaves the buffer as far as its
    // groups got, which depends on the threads' timing.
    if run_on {
        assert_eq!(loops.1, coroutines.1, "the output");
    }
    loops
}

/// The one data race `found` holds.
fn the_race(found: &Findings) -> &clsync::checker::Report {
    let races: Vec<_> = found
        .checker
        .iter()
        .filter(|r| r.kind == ReportKind::DataRace)
        .collect();
    assert_eq!(races.len(), 1, "{found:?}");
    races[0]
}

/// What `of` says of each of a report's two accesses, sorted.
fn parties<T: Ord>(
    r: &clsync::checker::Report,
    of: impl Fn(&clsync::checker::Access) -> T,
) -> Vec<T> {
    let mut v: Vec<T> = r.first.iter().chain(&r.second).map(of).collect();
    v.sort();
    v
}

/// The one diagnostic of `found`: an `Uninitialized value` at `line`.
fn one_uninitialized_value(found: &Findings, line: u32, what: &str) -> Diagnostic {
    let heads = common::headlines_at(found);
    assert_eq!(heads.len(), 1, "{what}: {found:?}");
    assert!(
        heads[0].0.starts_with("Uninitialized value"),
        "{what}: {heads:?}"
    );
    assert_eq!(heads[0].1, line, "{what}");
    found.diagnostics[0].clone()
}

#[test]
fn values_and_variables_live_across_barriers_per_work_item() {
    let p = build(
        "kernel void k(global int* out, local int* s) {
            int l = get_local_id(0);
            int acc = l;
            for (int i = 0; i < 4; i++) {
                s[l] = acc;
                barrier(CLK_LOCAL_MEM_FENCE);
                acc += s[(l + 1) % 8] * (i + 1);
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            out[get_global_id(0)] = acc;
        }",
    );
    let (found, out) = both(&p, NdRange::new([16]).local([8]), &[0; 16], Some(32));
    assert!(found.is_empty(), "{found:?}");
    // The same steps, sequentially, per group.
    let mut want = Vec::new();
    for _ in 0..2 {
        let mut acc: Vec<i32> = (0..8).collect();
        for i in 0..4 {
            let s = acc.clone();
            for l in 0..8 {
                acc[l] += s[(l + 1) % 8] * (i + 1);
            }
        }
        want.extend(acc);
    }
    assert_eq!(out, want);
}

#[test]
fn a_race_inside_an_interval_is_found_between_the_same_work_items() {
    let p = build(
        "kernel void k(global int* out, local int* s) {
            int l = get_local_id(0);
            s[l] = l;
            barrier(CLK_LOCAL_MEM_FENCE);
            int v = s[(l + 1) % 8];
            barrier(CLK_LOCAL_MEM_FENCE);
            s[l] = v;
            int w = s[(l + 1) % 8];
            out[get_global_id(0)] = v + w;
        }",
    );
    let (found, _) = both(&p, NdRange::new([8]).local([8]), &[0; 8], Some(32));
    // The read of line 8 against the neighbour's write of line 7, and
    // nothing about the reads and writes the barriers order.
    let lines = parties(the_race(&found), |a| a.site.line);
    assert_eq!(lines, vec![7, 8], "{found:?}");
}

#[test]
fn a_race_between_the_only_work_items_that_touch_memory_names_them() {
    // In the second interval only work-items 3 and 5 touch memory (the
    // loop tells the runtime which work-item runs at its first runtime
    // call, so the others make none), and in the third only 6: the
    // report names 3 and 5, as on coroutines, and the write of line 9
    // meets nothing (the barrier orders it).
    let src = "kernel void k(global int* out, local int* s) {
            int l = get_local_id(0);
            s[l] = 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (l == 3) s[0] = 1;
            if (l == 5) out[0] = s[0];
            barrier(CLK_LOCAL_MEM_FENCE);
            if (l == 6) s[0] = 2;
        }";
    for optimized in [false, true] {
        let p = match optimized {
            false => build(src),
            true => common::build(src, "loops.cl", "-cl-std=CL2.0"),
        };
        let (found, _) = both(&p, NdRange::new([16]).local([8]), &[0; 16], Some(32));
        let items = parties(the_race(&found), |a| a.item.local_id[0]);
        assert_eq!(items, vec![3, 5], "optimized {optimized}: {found:?}");
    }
}

#[test]
fn an_uninitialized_variable_kept_across_a_barrier_is_reported() {
    // `x` is written by work-item 0 alone; the others store it unwritten.
    let p = build(
        "kernel void k(global int* out) {
            int l = get_local_id(0);
            int x;
            if (l == 0) x = 1;
            barrier(CLK_LOCAL_MEM_FENCE);
            out[get_global_id(0)] = x;
        }",
    );
    let (found, _) = both(&p, NdRange::new([8]).local([8]), &[0; 8], None);
    let d = one_uninitialized_value(&found, 6, "x");
    assert_eq!(d.local, [1, 0, 0], "the first work-item that stored it");
}

#[test]
fn an_uninitialized_value_kept_across_a_barrier_is_reported() {
    // Work-item 0 reads the one element nobody wrote and stores it after
    // the next barrier: optimized, `v` is a value the frame keeps, with
    // its shadow; unoptimized, a variable.
    let src = "kernel void k(global int* out, local int* s) {
            int l = get_local_id(0);
            if (l > 0) s[l] = l;
            barrier(CLK_LOCAL_MEM_FENCE);
            int v = s[l];
            barrier(CLK_LOCAL_MEM_FENCE);
            out[get_global_id(0)] = v;
        }";
    for options in ["", "-cl-opt-disable"] {
        let p = common::build(src, "loops.cl", options);
        let (found, out) = both(&p, NdRange::new([8]).local([8]), &[-1; 8], Some(32));
        let d = one_uninitialized_value(&found, 7, options);
        assert_eq!((d.local, d.count), ([0, 0, 0], 1), "{options}");
        assert_eq!(out[1..], (1..8).collect::<Vec<i32>>(), "{options}");
    }
}

#[test]
fn each_work_item_starts_with_its_own_private_memory_unwritten() {
    // Work-item 0 writes both elements of its array; the others only the
    // first, so their second is unwritten when they read it after the
    // barrier, whatever work-item 0 did with its own.
    let p = build(
        "kernel void k(global int* out) {
            int l = get_local_id(0);
            int a[2];
            a[0] = l;
            if (l == 0) a[1] = 5;
            barrier(CLK_LOCAL_MEM_FENCE);
            out[get_global_id(0)] = a[0] + a[l & 1];
        }",
    );
    let (found, out) = both(&p, NdRange::new([4]).local([4]), &[0; 4], None);
    let d = one_uninitialized_value(&found, 7, "a[1]");
    // Work-items 1 and 3 stored an unwritten value: the first named.
    assert_eq!((d.local, d.count), ([1, 0, 0], 2));
    // The even work-items' sums are defined: 2 * l.
    assert_eq!((out[0], out[2]), (0, 4));
}

#[test]
fn a_divergent_barrier_is_reported_and_the_group_runs_on() {
    let p = build(
        "kernel void k(global int* out) {
            int i = get_global_id(0);
            if (i % 4 != 0) {
                barrier(CLK_GLOBAL_MEM_FENCE);
            }
            out[i] = i;
        }",
    );
    let (found, out) = both(&p, NdRange::new([8]).local([4]), &[-1; 8], None);
    let divergences: Vec<_> = found
        .checker
        .iter()
        .filter(|r| r.kind == ReportKind::BarrierDivergence)
        .collect();
    // One report per group, as on coroutines and in Oclgrind.
    assert_eq!(divergences.len(), 1, "{found:?}");
    assert_eq!(divergences[0].count, 2, "{found:?}");
    assert_eq!(divergences[0].site.line, 4);
    // Every work-item finished its kernel.
    assert_eq!(out, (0..8).collect::<Vec<_>>());
    // A launch that does not run on stops at the first divergence: the
    // engines agree on that too.
    let (found, _) = both_with(&p, NdRange::new([8]).local([4]), &[-1; 8], None, false);
    assert_eq!(found.checker.len(), 1, "{found:?}");
    assert_eq!(found.checker[0].kind, ReportKind::BarrierDivergence);
}

#[test]
fn a_fence_in_a_work_item_loop_orders_as_on_coroutines() {
    // Release and acquire fences around a flag in global memory, each
    // work-item reading its neighbour's value once the barrier passed.
    let p = build(
        "kernel void k(global int* out) {
            int l = get_local_id(0);
            out[l] = l * 3;
            atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_release,
                                   memory_scope_work_group);
            barrier(CLK_GLOBAL_MEM_FENCE);
            atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_acquire,
                                   memory_scope_work_group);
            int v = out[(l + 1) % 8];
            barrier(CLK_GLOBAL_MEM_FENCE);
            out[l] = v;
        }",
    );
    let (found, out) = both(&p, NdRange::new([8]).local([8]), &[0; 8], None);
    assert!(found.is_empty(), "{found:?}");
    assert_eq!(out, (0..8).map(|l| ((l + 1) % 8) * 3).collect::<Vec<i32>>());
}
