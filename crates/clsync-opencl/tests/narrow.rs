//! Narrowed work-item loops (`translate::continuation::narrow`): an
//! interval whose work-items from a threshold on only wait at the next
//! barrier runs the others alone. Tree reductions in groups of one and two
//! dimensions, thresholds of every sign and size from arguments, a skipped
//! side that keeps a value (which must not narrow), and a divergence
//! between the two sides: the same results as on coroutines (which have no
//! such loop) and as sequential references, the same reports.

mod common;

use clsync::{Buffer, NdRange, Runtime};
use clsync_opencl::{Arg, Program, RunError};

const SRC: &str = r#"
// The benchmark's reduction, its levels unrolled by the compiler for a
// group of 256, and the same over any group (its levels a loop).
kernel void reduce256(global const int *in, global int *out, local int *s) {
    size_t l = get_local_id(0);
    s[l] = in[get_global_id(0)];
    for (size_t h = 128; h > 0; h /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < h) s[l] += s[l + h];
    }
    if (l == 0) out[get_group_id(0)] = s[0];
}

kernel void reduce_any(global const int *in, global int *out, local int *s) {
    size_t l = get_local_linear_id();
    s[l] = in[get_global_linear_id()];
    for (size_t h = get_local_size(0) * get_local_size(1) / 2; h > 0; h /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < h) s[l] += s[l + h];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) out[get_group_id(0) + get_num_groups(0) * get_group_id(1)] = s[0];
}

// A threshold from an argument, signed and unsigned, either way round.
kernel void below(global int *out, int t, uint u) {
    int l = get_local_id(0);
    size_t g = get_global_linear_id();
    int v = l * 3;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < t) out[g] += v + 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    if ((uint)l >= u) {} else out[g] += 100;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g] += 1000;
}

// The skipped work-items compute a value kept across the next barrier
// (`w`, of a loaded value, which no resume computes again): the loop must
// not narrow.
kernel void keeps(global int *out, global const int *in, int t) {
    int l = get_local_id(0);
    size_t g = get_global_id(0);
    int v = in[g];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < t) out[g] = 5;
    int w = v * 3 + 7;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g] += w;
}

// After the level, a test of the id that every skipped work-item (`l`
// from 2 on) passes alike (`l == 0`: the loop narrows), and one that one
// of them passes the other way (`l == 5`: it must not).
kernel void again(global int *out, local int *s) {
    size_t l = get_local_id(0);
    s[l] = (int)l + 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < 2) s[l] += s[l + 2];
    if (l == 0) out[get_group_id(0) * 2] = s[0];
}

kernel void again_some(global int *out, local int *s) {
    size_t l = get_local_id(0);
    s[l] = (int)l + 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < 2) s[l] += s[l + 2];
    if (l == 5) out[get_group_id(0) * 2 + 1] = s[5] + s[0];
}

// Below the threshold a work-item waits at a barrier the others never
// reach: a divergence, whichever loop runs.
kernel void parts(global int *out, int t) {
    int l = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < t) { barrier(CLK_LOCAL_MEM_FENCE); out[l] = 1; }
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] += 2;
}
"#;

fn program() -> Program {
    common::build(SRC, "narrow.cl", "-cl-std=CL2.0")
}

#[test]
fn reductions_in_groups_of_one_and_two_dimensions() {
    let p = program();
    let rt = Runtime::with_threads(2);
    let input: Vec<i32> = (0..4096).map(|i| (i * 7919) % 1000 - 500).collect();
    let data = Buffer::from_slice(&input);
    for (name, local) in [
        ("reduce256", [256, 1]),
        ("reduce_any", [256, 1]),
        ("reduce_any", [64, 1]),
        ("reduce_any", [16, 1]),
        ("reduce_any", [8, 8]),
        ("reduce_any", [4, 16]),
    ] {
        let size = local[0] * local[1];
        let groups = input.len() / size;
        let range = match local[1] {
            1 => NdRange::new([input.len()]).local([local[0]]),
            _ => NdRange::new([input.len() / local[1], local[1]]).local(local),
        };
        for coroutines in [false, true] {
            let out = Buffer::<i32>::new(groups);
            let k = p.kernel(name).unwrap();
            let k = if coroutines { k.on_coroutines() } else { k };
            k.run(
                &rt,
                range.clone(),
                &[Arg::Buffer(&data), Arg::Buffer(&out), Arg::Local(4 * size)],
            )
            .unwrap_or_else(|e| panic!("{name} {local:?}: {e}"));
            // Each group's work-items by linear id: x along the row.
            let want: Vec<i32> = match local[1] {
                1 => input.chunks(size).map(|c| c.iter().sum()).collect(),
                _ => {
                    let width = input.len() / local[1];
                    (0..groups)
                        .map(|g| {
                            (0..local[1])
                                .flat_map(|y| {
                                    let row = &input[y * width..(y + 1) * width];
                                    row[g * local[0]..(g + 1) * local[0]].to_vec()
                                })
                                .sum()
                        })
                        .collect()
                }
            };
            assert_eq!(
                out.to_vec(),
                want,
                "{name} {local:?} coroutines {coroutines}"
            );
        }
    }
}

#[test]
fn thresholds_of_every_sign_and_size() {
    let p = program();
    // Groups of one dimension, of rows that fit no batch, and of two
    // dimensions (where the loop must not narrow: x is not the linear id).
    for (local, rows) in [(64usize, 1usize), (12, 1), (16, 4)] {
        for (t, u) in [
            (-5i32, 0u32),
            (0, 3),
            (3, 7),
            (7, 64),
            (64, 1000),
            (1000, u32::MAX),
        ] {
            let n = local * rows * 4;
            let range = match rows {
                1 => NdRange::new([n]).local([local]),
                _ => NdRange::new([local * 4, rows]).local([local, rows]),
            };
            let (a, b) = common::against(
                &p,
                "below",
                |k| k.on_coroutines(),
                range,
                n,
                || vec![Arg::of(&[t]), Arg::of(&[u])],
            );
            let want: Vec<i32> = (0..n)
                .map(|g| {
                    let l = (g % local) as i32;
                    let mut v = 1000;
                    if l < t {
                        v += l * 3 + 1;
                    }
                    if (l as u32) < u {
                        v += 100;
                    }
                    v
                })
                .collect();
            assert_eq!(a, want, "local {local}, t {t}, u {u}");
            assert_eq!(b, want, "coroutines, local {local}, t {t}, u {u}");
        }
    }
}

#[test]
fn a_skipped_side_that_keeps_a_value_runs_every_work_item() {
    let p = program();
    let n = 64usize;
    let input: Vec<i32> = (0..n as i32).map(|i| i * 5 - 40).collect();
    let data = Buffer::from_slice(&input);
    let (a, b) = common::against(
        &p,
        "keeps",
        |k| k.on_coroutines(),
        NdRange::new([n]).local([32]),
        n,
        || vec![Arg::Buffer(&data), Arg::of(&[9i32])],
    );
    let want: Vec<i32> = (0..n)
        .map(|g| if g % 32 < 9 { 5 } else { 0 } + input[g] * 3 + 7)
        .collect();
    assert_eq!(a, want);
    assert_eq!(b, want);
}

#[test]
fn a_test_of_the_id_after_the_level_narrows_only_where_decided() {
    let p = program();
    let groups = 3;
    for local in [64usize, 8] {
        let range = NdRange::new([local * groups]).local([local]);
        let local_arg = || vec![Arg::Local(4 * local)];
        let (a, b) = common::against(
            &p,
            "again",
            |k| k.on_coroutines(),
            range.clone(),
            2 * groups,
            local_arg,
        );
        // s[0] = 1 + 3 after the level; the odd elements are not written.
        let want: Vec<i32> = (0..2 * groups)
            .map(|i| if i % 2 == 0 { 4 } else { 0 })
            .collect();
        assert_eq!(a, want, "again, local {local}");
        assert_eq!(b, want, "again on coroutines, local {local}");
        let (a, b) = common::against(
            &p,
            "again_some",
            |k| k.on_coroutines(),
            range,
            2 * groups,
            local_arg,
        );
        // s[5] = 6 (not in the level), s[0] = 4.
        let want: Vec<i32> = (0..2 * groups)
            .map(|i| if i % 2 == 1 { 10 } else { 0 })
            .collect();
        assert_eq!(a, want, "again_some, local {local}");
        assert_eq!(b, want, "again_some on coroutines, local {local}");
    }
}

#[test]
fn a_divergence_between_the_two_sides_reads_the_same() {
    let p = program();
    let rt = Runtime::with_threads(1);
    for t in [1i32, 4, 5, 31] {
        let run = |coroutines: bool| {
            let k = p.kernel("parts").unwrap();
            let k = if coroutines { k.on_coroutines() } else { k };
            let out = Buffer::<i32>::new(64);
            match k.run(
                &rt,
                NdRange::new([64]).local([32]),
                &[Arg::Buffer(&out), Arg::of(&[t])],
            ) {
                Err(RunError::Launch { error, .. }) => error.to_string(),
                other => panic!("t {t}: expected a divergence, got {other:?}"),
            }
        };
        let (loops, coroutines) = (run(false), run(true));
        assert!(loops.contains("barrier divergence"), "{loops}");
        assert_eq!(loops, coroutines, "t {t}");
    }
}
