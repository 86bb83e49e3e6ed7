//! Chained intervals (`translate::continuation::chain`): a state's function
//! that finds its whole group at its own barrier again runs the next
//! interval itself. The results against sequential references and the
//! coroutine engine (which has no such path), past the chain's limit of
//! intervals per call, with and without lane batches, in rows that fit no
//! batch; a work-item that leaves the loop mid-chain is the same barrier
//! divergence as on coroutines; a failing group cancels another that is
//! chaining.

mod common;

use clsync::{Buffer, NdRange, Runtime};
use clsync_opencl::{Arg, Program, RunError};

const SRC: &str = r#"
// The benchmark's barrier loop with the round mixed in, and a local
// exchange so that a wrong interval shows in every element: one barrier
// per round, the rounds writing the two halves of `t` in turn.
kernel void rounds(global uint *out, int n, local uint *t) {
    size_t l = get_local_linear_id();
    size_t w = get_local_size(0) * get_local_size(1);
    uint acc = (uint)l;
    for (int i = 0; i < n; i++) {
        local uint *part = t + (i % 2) * w;
        part[l] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc = acc * 3u + part[(l + 1) % w] + (uint)i;
    }
    out[get_global_linear_id()] = acc;
}

// One work-item leaves the loop at round `stop`: the others wait at the
// barrier it never reaches.
kernel void leaves(global int *out, int n, int stop, int who) {
    for (int i = 0; i < n; i++) {
        if (i == stop && get_local_id(0) == who) return;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = 1;
}

// Group 0 faults at once; group 1 would pass 2^30 barriers.
kernel void cancelled(global int *out, int n) {
    if (get_group_id(0) == 0) { out[get_global_id(0) + 1000000] = 1; return; }
    int acc = 0;
    for (int i = 0; i < n; i++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        acc += i;
    }
    out[get_global_id(0)] = acc;
}

// A barrier whose fence is a hardware one (device scope on global memory)
// is left to the runtime: same results.
kernel void device_scope(global uint *out, int n) {
    uint acc = get_local_id(0);
    for (int i = 0; i < n; i++) {
        work_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_device);
        acc = acc * 5u + 1u;
    }
    out[get_global_id(0)] = acc;
}
"#;

fn program() -> Program {
    common::build(SRC, "chain.cl", "-cl-std=CL2.0")
}

/// `rounds`' result, sequentially: every work-item's accumulator, round
/// by round, each reading its neighbour's (in local linear order) from
/// before the round.
fn rounds_reference(local: [usize; 2], groups: usize, n: i32) -> Vec<u32> {
    let w = local[0] * local[1];
    let mut out = Vec::new();
    for _ in 0..groups {
        let mut acc: Vec<u32> = (0..w as u32).collect();
        for i in 0..n {
            let t = acc.clone();
            for l in 0..w {
                acc[l] = acc[l]
                    .wrapping_mul(3)
                    .wrapping_add(t[(l + 1) % w])
                    .wrapping_add(i as u32);
            }
        }
        out.extend(acc);
    }
    out
}

#[test]
fn chained_rounds_match_a_sequential_reference_and_coroutines() {
    let p = program();
    let rt = Runtime::with_threads(2);
    // 600 rounds: two calls that stop at the limit and one that returns.
    let n = 600;
    for (local, lanes) in [
        ([64, 1], true),
        ([64, 1], false),
        ([6, 1], true),
        ([8, 4], true),
        ([1, 1], true),
    ] {
        let groups = 3;
        let range = NdRange::new([local[0] * groups, local[1]]).local(local);
        let run = |coroutines: bool| {
            let k = p.kernel("rounds").unwrap();
            let k = match (coroutines, lanes) {
                (true, _) => k.on_coroutines(),
                (false, true) => k,
                (false, false) => k.without_lanes(),
            };
            let out = Buffer::<u32>::new(groups * local[0] * local[1]);
            let args = [
                Arg::Buffer(&out),
                Arg::of(&[n]),
                Arg::Local(8 * local[0] * local[1]),
            ];
            k.run(&rt, range.clone(), &args)
                .unwrap_or_else(|e| panic!("{local:?}: {e}"));
            out.to_vec()
        };
        let want = rounds_reference(local, groups, n);
        assert_eq!(run(false), want, "loops, local {local:?}, lanes {lanes}");
        assert_eq!(run(true), want, "coroutines, local {local:?}");
    }
}

#[test]
fn a_work_item_that_leaves_mid_chain_is_the_same_divergence_as_on_coroutines() {
    let p = program();
    let rt = Runtime::with_threads(1);
    // Round 0 (the first interval, run by the runtime's call), a round the
    // first call chains, and one past the limit of the first call.
    for (stop, who) in [(0, 5), (3, 63), (300, 0), (300, 17)] {
        let run = |coroutines: bool| {
            let k = p.kernel("leaves").unwrap();
            let k = if coroutines { k.on_coroutines() } else { k };
            let out = Buffer::<i32>::new(64);
            let args = [
                Arg::Buffer(&out),
                Arg::of(&[400i32]),
                Arg::of(&[stop]),
                Arg::of(&[who]),
            ];
            match k.run(&rt, NdRange::new([64]).local([64]), &args) {
                Err(RunError::Launch { error, .. }) => error.to_string(),
                other => panic!("stop {stop}: expected a divergence, got {other:?}"),
            }
        };
        let (loops, coroutines) = (run(false), run(true));
        assert!(loops.contains("barrier divergence"), "{loops}");
        assert_eq!(loops, coroutines, "stop {stop}, work-item {who}");
    }
}

#[test]
fn a_failing_group_cancels_a_group_that_chains() {
    let p = program();
    let out = Buffer::<i32>::new(128);
    let e = p
        .kernel("cancelled")
        .unwrap()
        .run(
            &Runtime::with_threads(2),
            NdRange::new([128]).local([64]),
            &[Arg::Buffer(&out), Arg::of(&[1i32 << 30])],
        )
        .unwrap_err();
    let text = e.to_string();
    assert!(text.contains("Invalid write of size 4"), "{text}");
    assert!(text.contains("group (0)"), "{text}");
}

#[test]
fn a_barrier_with_a_device_scope_fence_gives_the_same_results() {
    let p = program();
    let rt = Runtime::with_threads(2);
    let n = 300;
    let out = Buffer::<u32>::new(128);
    p.kernel("device_scope")
        .unwrap()
        .run(
            &rt,
            NdRange::new([128]).local([32]),
            &[Arg::Buffer(&out), Arg::of(&[n])],
        )
        .unwrap();
    let want: Vec<u32> = (0..128u32)
        .map(|g| (0..n).fold(g % 32, |a, _| a.wrapping_mul(5).wrapping_add(1)))
        .collect();
    assert_eq!(out.to_vec(), want);
}
