//! Rules of the specification extracts in `shared/spec/` that
//! `crates/clsync/tests/spec_rules` tests on Rust kernels, on OpenCL C
//! kernels: what a barrier waits for (`003_2caebc1f01141481.txt`,
//! `004_bfca21a36d7bd2da.txt`), what a sub-group barrier waits for
//! (`002_6c32435e912a3710.txt`), and that a barrier not every work-item of
//! the group (sub-group) reaches is a reported divergence. Each runs on the
//! work-item loops where the kernel allows, on coroutines, and checked.
//! (Barrier flags, and release and acquire fences around relaxed atomics,
//! are in `checked.rs`.)

mod common;

use clsync::{Buffer, NdRange, Runtime};
use clsync_opencl::{Arg, Program, RunError};

const SRC: &str = r#"
// Every work-item writes its phase, waits at the barrier, and counts the
// slots of its group (sub-group) that do not hold the phase yet.
kernel void lockstep(global atomic_uint *bad, int phases) {
    local uint s[256];
    size_t n = get_local_size(0) * get_local_size(1) * get_local_size(2);
    size_t l = get_local_linear_id();
    for (uint phase = 1; phase <= phases; phase++) {
        s[l] = phase;
        work_group_barrier(CLK_LOCAL_MEM_FENCE, memory_scope_work_group);
        for (size_t m = 0; m < n; m++)
            if (s[m] != phase) atomic_fetch_add(bad, 1u);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

kernel void sub_lockstep(global atomic_uint *bad, int phases) {
    local uint s[256];
    size_t l = get_local_linear_id();
    size_t first = l - get_sub_group_local_id();
    for (uint phase = 1; phase <= phases; phase++) {
        s[l] = phase;
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);
        for (size_t m = first; m < first + get_sub_group_size(); m++)
            if (s[m] != phase) atomic_fetch_add(bad, 1u);
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    }
}

// Sub-groups are independent: each takes its own path, with its own
// sub-group barriers, and none waits for another.
kernel void sub_independent(global uint *out) {
    local uint s[256];
    size_t l = get_local_linear_id();
    uint acc = l;
    if (get_sub_group_id() % 2 == 0) {
        s[l] = acc;
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);
        acc += s[l ^ 1];
    } else {
        for (int k = 0; k < 3; k++) {
            s[l] = acc + k;
            sub_group_barrier(CLK_LOCAL_MEM_FENCE);
            acc = s[l];
            sub_group_barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    out[get_global_id(0)] = acc;
}

// A barrier in a loop whose trip count differs between work-items.
kernel void loop_divergence(global int *out) {
    int l = get_local_id(0);
    for (int i = 0; i < l % 3; i++)
        barrier(CLK_LOCAL_MEM_FENCE);
    out[l] = l;
}

// A sub-group barrier that part of a sub-group skips.
kernel void sub_divergence(global int *out) {
    int l = get_sub_group_local_id();
    if (l < 3)
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = l;
}
"#;

fn program() -> Program {
    common::build(SRC, "rules.cl", "-cl-std=CL2.0")
}

/// The count of `bad` after running `name` on loops, on coroutines, and
/// checked (which must find nothing).
fn violations(p: &Program, name: &str, range: NdRange, phases: i32) -> [u32; 3] {
    let rt = Runtime::with_threads(2);
    let mut out = [0; 3];
    for (k, out) in out.iter_mut().enumerate() {
        let bad = Buffer::<u32>::new(1);
        let args = [Arg::Buffer(&bad), Arg::of(&[phases])];
        let kernel = p.kernel(name).unwrap();
        let kernel = if k == 1 {
            kernel.on_coroutines()
        } else {
            kernel
        };
        let found = kernel
            .run_with(&rt, range.clone(), &args, |l| l, k == 2)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(found.is_empty(), "{name}: {found:?}");
        *out = bad.to_vec()[0];
    }
    out
}

/// 003: "all work-items in a work-group executing the kernel on a
/// processor must execute this function before any are allowed to
/// continue execution beyond the barrier"; 004: the same of
/// `work_group_barrier`, in 1, 2 and 3 dimensions and in non-uniform
/// groups, in every iteration of a loop.
#[test]
fn r003_r004_a_barrier_waits_for_the_whole_work_group() {
    let p = program();
    assert_eq!(p.kernel("lockstep").unwrap().engine(), Ok(()));
    for range in [
        NdRange::new([256]).local([64]),
        NdRange::new([16, 8]).local([8, 4]),
        NdRange::new([8, 4, 4]).local([4, 2, 2]),
        NdRange::new([100]).local([32]),
    ] {
        assert_eq!(violations(&p, "lockstep", range, 4), [0; 3]);
    }
}

/// 002: `sub_group_barrier` waits for every work-item of the sub-group,
/// including the short last sub-group of a group.
#[test]
fn r002_a_sub_group_barrier_waits_for_the_whole_sub_group() {
    let p = program();
    for range in [
        NdRange::new([256]).local([64]),
        NdRange::new([100]).local([50]),
    ] {
        assert_eq!(violations(&p, "sub_lockstep", range, 3), [0; 3]);
    }
}

/// 002: sub-groups are independent: different sub-groups may take
/// different paths with their own sub-group barriers.
#[test]
fn r002_sub_groups_take_their_own_paths() {
    let p = program();
    let out = Buffer::<u32>::new(128);
    let found = common::run(
        &p,
        "sub_independent",
        NdRange::new([128]).local([128]),
        &[Arg::Buffer(&out)],
        true,
    );
    assert!(found.is_empty(), "{found:?}");
    let unchecked = Buffer::<u32>::new(128);
    common::run(
        &p,
        "sub_independent",
        NdRange::new([128]).local([128]),
        &[Arg::Buffer(&unchecked)],
        false,
    );
    assert_eq!(out.to_vec(), unchecked.to_vec());
}

/// 003 and 004: a barrier in a loop must be reached by every work-item in
/// every iteration, and 002: a sub-group barrier by every work-item of the
/// sub-group; otherwise the behaviour is undefined, here a divergence
/// reported with the barrier's line, never a hang, on either engine.
#[test]
fn r002_r003_a_barrier_some_work_items_miss_is_a_reported_divergence() {
    let p = program();
    for (name, line) in [
        ("loop_divergence", "rules.cl:55"),
        ("sub_divergence", "rules.cl:63"),
    ] {
        for coroutines in [false, true] {
            let out = Buffer::<i32>::new(64);
            let kernel = p.kernel(name).unwrap();
            let kernel = if coroutines {
                kernel.on_coroutines()
            } else {
                kernel
            };
            let e = kernel
                .run(
                    &Runtime::new(),
                    NdRange::new([64]).local([64]),
                    &[Arg::Buffer(&out)],
                )
                .unwrap_err();
            let RunError::Launch { error, .. } = &e else {
                panic!("{name}: {e:?}")
            };
            let text = error.to_string();
            assert!(text.contains("barrier divergence"), "{name}: {text}");
            assert!(text.contains(line), "{name}: {text}");
        }
    }
}
