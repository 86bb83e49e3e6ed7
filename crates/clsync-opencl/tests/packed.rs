//! Packed values of lane batches (`translate::continuation::packed`): a
//! batch's 32-bit values made by coalesced loads and arithmetic on them
//! are vectors of four lanes, several to a batch. Each kernel below uses
//! every lane of every vector in another way: in a lane's own code (a
//! divergent region), through a phi the batch keeps packed over a loop,
//! at a join of lanes that parted, across barriers in rows, beside an id
//! that steps from lane to lane, and stored by some lanes only. Each runs
//! with batches, without and on
//! coroutines, in groups that fill batches and one that fits none, and is
//! checked against a sequential reference.

mod common;

use clsync::{Buffer, NdRange};
use clsync_opencl::{Arg, Program};

const SRC: &str = r#"
// A packed product, then each lane's own branch on it.
kernel void lane_use(global int *out, global const int *in, int k) {
    size_t g = get_global_id(0);
    int v = in[g] * 3 + k;
    if (v & 1)
        out[g] = v - (int)get_local_id(0);
    else
        out[g] = -v;
}

// A packed accumulator over a loop (a phi of packed values), and an
// index that steps from lane to lane added to it.
kernel void accumulate(global int *out, global const int *in, int rounds) {
    size_t g = get_global_id(0), n = get_global_size(0);
    int acc = 0;
    for (int r = 0; r < rounds; r++)
        acc = acc * 5 + in[g + r * n];
    out[g] = acc + (int)get_local_id(0) * 3;
}

// Lanes that part and meet again at a packed join.
kernel void joined(global int *out, global const int *in) {
    size_t g = get_global_id(0);
    int x = in[g];
    if (x % 3 == 0)
        x = x * 7 + 1;
    out[g] = x + in[g];
}

// A packed value kept across barriers in local memory's rounds.
kernel void rounds(global int *out, global const int *in, local int *s, int n) {
    size_t l = get_local_id(0), w = get_local_size(0), g = get_global_id(0);
    int acc = in[g];
    for (int r = 0; r < n; r++) {
        s[l] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc = acc + s[(l + 1) % w] * 2;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[g] = acc;
}

// A packed float that only the lanes below `limit` store: a batch that
// parts there runs its lanes one at a time, one that agrees together.
kernel void tail(global float *out, global const float *in, int limit) {
    size_t g = get_global_id(0);
    float v = in[g] * 0.5f + 1.0f;
    if (g < limit)
        out[g] = v;
}
"#;

fn program() -> Program {
    let p = common::build(SRC, "packed.cl", "-cl-std=CL2.0");
    // Every state of every kernel here runs in batches.
    for name in ["lane_use", "accumulate", "joined", "rounds", "tail"] {
        let lanes = p.kernel(name).unwrap().lanes();
        assert!(
            !lanes.is_empty() && lanes.iter().all(|r| r.is_ok()),
            "{name}: {lanes:?}"
        );
    }
    p
}

/// Input values with all residues mod 3 and both parities.
fn input(n: usize) -> Vec<i32> {
    (0..n).map(|i| ((i * 37 + 11) % 101) as i32 - 50).collect()
}

/// Kernel `name`'s output on every engine, in groups of `local`.
fn each_engine<'a>(
    p: &Program,
    name: &str,
    n: usize,
    local: usize,
    rest: &dyn Fn() -> Vec<Arg<'a>>,
    want: &[i32],
) {
    for (engine, e) in common::engines() {
        let out = common::output_of(p, name, e, NdRange::new([n]).local([local]), n, rest());
        assert_eq!(out, want, "{name} on {engine} in groups of {local}");
    }
}

#[test]
fn each_lane_of_each_vector_reaches_its_own_code() {
    let p = program();
    let n = 96;
    let src = input(n);
    let buf = &Buffer::from_slice(&src);
    for local in [8, 16, 32, 12, 96] {
        let want: Vec<i32> = (0..n)
            .map(|g| {
                let v = src[g] * 3 + 7;
                if v & 1 != 0 {
                    v - (g % local) as i32
                } else {
                    -v
                }
            })
            .collect();
        each_engine(
            &p,
            "lane_use",
            n,
            local,
            &|| vec![Arg::Buffer(buf), Arg::of(&[7i32])],
            &want,
        );
    }
}

#[test]
fn a_packed_accumulator_and_a_stepping_id() {
    let p = program();
    let n = 128;
    let rounds = 5;
    let src = input(n * rounds);
    let buf = &Buffer::from_slice(&src);
    for local in [8, 64, 24] {
        let want: Vec<i32> = (0..n)
            .map(|g| {
                let acc = (0..rounds).fold(0i32, |acc, r| {
                    acc.wrapping_mul(5).wrapping_add(src[g + r * n])
                });
                acc + 3 * (g % local) as i32
            })
            .collect();
        each_engine(
            &p,
            "accumulate",
            n,
            local,
            &|| vec![Arg::Buffer(buf), Arg::of(&[rounds as i32])],
            &want,
        );
    }
}

#[test]
fn lanes_that_part_meet_at_a_packed_join() {
    let p = program();
    let n = 80;
    let src = input(n);
    let buf = &Buffer::from_slice(&src);
    let want: Vec<i32> = src
        .iter()
        .map(|&x| if x % 3 == 0 { x * 7 + 1 + x } else { 2 * x })
        .collect();
    for local in [8, 16, 40, 20] {
        each_engine(&p, "joined", n, local, &|| vec![Arg::Buffer(buf)], &want);
    }
}

#[test]
fn a_packed_value_kept_across_barriers() {
    let p = program();
    let n = 64;
    let src = input(n);
    let buf = &Buffer::from_slice(&src);
    let rounds = 4;
    for local in [8, 16, 32, 4] {
        let mut acc = src.clone();
        for _ in 0..rounds {
            let before = acc.clone();
            for g in 0..n {
                let (base, l) = (g / local * local, g % local);
                acc[g] = before[g].wrapping_add(before[base + (l + 1) % local].wrapping_mul(2));
            }
        }
        each_engine(
            &p,
            "rounds",
            n,
            local,
            &move || vec![Arg::Buffer(buf), Arg::Local(local * 4), Arg::of(&[rounds])],
            &acc,
        );
    }
}

#[test]
fn a_packed_float_stored_by_some_lanes_only() {
    let p = program();
    let n = 64;
    let src: Vec<f32> = (0..n).map(|i| i as f32 * 1.5 - 7.0).collect();
    let buf = &Buffer::from_slice(&src);
    for limit in [64, 61, 59, 3] {
        for (engine, e) in common::engines() {
            let k = e(p.kernel("tail").unwrap());
            let out = Buffer::<f32>::new(n);
            k.run(
                &clsync::Runtime::with_threads(2),
                NdRange::new([n]).local([16]),
                &[
                    Arg::Buffer(&out),
                    Arg::Buffer(buf),
                    Arg::of(&[limit as i32]),
                ],
            )
            .unwrap();
            let want: Vec<f32> = (0..n)
                .map(|g| if g < limit { src[g] * 0.5 + 1.0 } else { 0.0 })
                .collect();
            assert_eq!(out.to_vec(), want, "{engine} limit {limit}");
        }
    }
}
