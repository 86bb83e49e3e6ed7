//! Work-item loops unswitched on a condition the group shares
//! (`translate::unswitch`): a loop with a barrier whose test, after the
//! barrier, is the group's, so that the interval's work-item loop is two
//! loops, one that reaches the barrier again and one that leaves. Each
//! kernel runs on every engine, in groups that fill lane batches and groups
//! that fit none, in one dimension and two, and checked, against a
//! sequential reference: the trip counts cover none, one and several
//! passes, and the code after the loop reads the loop's own values (the
//! counter, a work-item's accumulator).

mod common;

use clsync::{Buffer, NdRange};
use clsync_opencl::{Arg, Program};

const SRC: &str = r#"
// The loop's test is the exit's; after it, the work-item's accumulator and
// the group's counter.
kernel void uniform_exit(global int *out, global const int *in, int n) {
    local int s[64];
    size_t l = get_local_linear_id(), g = get_global_linear_id();
    size_t size = get_local_size(0) * get_local_size(1);
    int acc = in[g];
    int i = 0;
    for (; i < n; i++) {
        s[l] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc = acc * 3 + s[(l + 1) % size];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[g] = acc + i * 1000;
}

// A test of the group's inside the loop, not its exit: a store on one side
// (which the front end cannot make a select).
kernel void uniform_inside(global int *out, global const int *in, int n, int flag) {
    size_t g = get_global_id(0);
    int acc = in[g];
    for (int i = 0; i < n; i++) {
        barrier(CLK_GLOBAL_MEM_FENCE);
        acc = acc * 2 + 1;
        if (flag > i)
            out[g] = acc;
    }
}
"#;

fn program() -> Program {
    common::build(SRC, "unswitch.cl", "-cl-std=CL2.0")
}

fn input(n: usize) -> Vec<i32> {
    (0..n).map(|i| (i as i32 * 37) % 101 - 50).collect()
}

/// `uniform_exit`'s outputs, group by group, in sequence.
fn uniform_exit_reference(src: &[i32], size: usize, n: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for group in src.chunks(size) {
        let mut acc = group.to_vec();
        for _ in 0..n.max(0) {
            let s = acc.clone();
            for (l, a) in acc.iter_mut().enumerate() {
                *a = a.wrapping_mul(3).wrapping_add(s[(l + 1) % size]);
            }
        }
        let i = n.max(0);
        out.extend(acc.iter().map(|a| a.wrapping_add(i * 1000)));
    }
    out
}

#[test]
fn a_loop_that_leaves_on_the_groups_test() {
    let p = program();
    let total = 192;
    let src = input(total);
    let input_buf = Buffer::from_slice(&src);
    // Groups of 64 and 16 (lane batches), 12 (none); 8 by 2 in two
    // dimensions.
    let ranges = [
        (NdRange::new([total]).local([64]), 64, false),
        (NdRange::new([total]).local([16]), 16, false),
        (NdRange::new([total]).local([12]), 12, false),
        (NdRange::new([16, 12]).local([8, 2]), 16, true),
    ];
    for (range, size, rows) in ranges {
        for n in [0, 1, 2, 5] {
            // In two dimensions a group is 8 columns of 2 rows of the
            // range's 16 columns.
            let want = match rows {
                false => uniform_exit_reference(&src, size, n),
                true => two_dimensional(&src, 16, 8, 2, n),
            };
            for (engine, e) in common::engines() {
                let rest = vec![Arg::Buffer(&input_buf), Arg::of(&[n])];
                let out = common::output_of(&p, "uniform_exit", e, range.clone(), total, rest);
                assert_eq!(out, want, "n = {n} on {engine}, {range:?}");
            }
            let out = Buffer::<i32>::new(total);
            let found = common::run(
                &p,
                "uniform_exit",
                range.clone(),
                &[Arg::Buffer(&out), Arg::Buffer(&input_buf), Arg::of(&[n])],
                true,
            );
            assert!(found.diagnostics.is_empty(), "{:?}", found.diagnostics);
            assert!(found.checker.is_empty(), "{:?}", found.checker);
            assert_eq!(out.to_vec(), want, "n = {n} checked, {range:?}");
        }
    }
}

/// `uniform_exit` over a two-dimensional range of `width` columns in groups
/// of `gx` by `gy`: a work-item's linear ids are its row-major place in
/// the range and in its group.
fn two_dimensional(src: &[i32], width: usize, gx: usize, gy: usize, n: i32) -> Vec<i32> {
    let height = src.len() / width;
    let mut out = vec![0; src.len()];
    for by in (0..height).step_by(gy) {
        for bx in (0..width).step_by(gx) {
            // The group's work-items in local linear order.
            let ids: Vec<usize> = (0..gy)
                .flat_map(|y| (0..gx).map(move |x| (by + y) * width + bx + x))
                .collect();
            let group: Vec<i32> = ids.iter().map(|&g| src[g]).collect();
            let done = uniform_exit_reference(&group, gx * gy, n);
            for (g, v) in ids.into_iter().zip(done) {
                out[g] = v;
            }
        }
    }
    out
}

#[test]
fn a_test_of_the_groups_inside_the_loop() {
    let p = program();
    let total = 128;
    let src = input(total);
    let input_buf = Buffer::from_slice(&src);
    for local in [64, 8, 12] {
        for (n, flag) in [(0, 3), (4, 0), (4, 2), (3, 9), (6, 6)] {
            let want: Vec<i32> = src
                .iter()
                .map(|&v| {
                    let mut acc = v;
                    let mut out = 0;
                    for i in 0..n {
                        acc = acc.wrapping_mul(2).wrapping_add(1);
                        if flag > i {
                            out = acc;
                        }
                    }
                    out
                })
                .collect();
            let range = NdRange::new([total]).local([local]);
            for (engine, e) in common::engines() {
                let rest = vec![Arg::Buffer(&input_buf), Arg::of(&[n]), Arg::of(&[flag])];
                let out = common::output_of(&p, "uniform_inside", e, range.clone(), total, rest);
                assert_eq!(
                    out, want,
                    "n = {n}, flag = {flag} on {engine}, local {local}"
                );
            }
        }
    }
}
