//! Agreed intervals (`translate::continuation::agreed`): a state whose
//! work-items all stop at one place (its interval has one way out, or
//! branches only on values the group shares) writes no place per
//! work-item and tells the runtime once where the group waits. A barrier
//! picked by an argument and a loop counter, tiles exchanged through local
//! memory in groups of one and two dimensions and in rows that fit no
//! batch, sides that part on the ids and meet at one barrier: the same
//! results as sequential references, with lane batches, without, and on
//! coroutines (which have no such path). Where a branch on `y` makes a row
//! leave the loop, the interval has two ways out and its branch is not the
//! group's, and the divergence reads as on coroutines. (The reductions of
//! `tests/narrow.rs` are agreed too: each level has one way out.)

mod common;

use clsync::{Buffer, NdRange, Runtime};
use clsync_opencl::{Arg, Program, RunError};

const SRC: &str = r#"
// Each round waits at one of two barriers, picked by the round and an
// argument, the same in the whole group; the next state may be either.
kernel void which(global int *out, int pick, int n) {
    int acc = (int)get_local_linear_id();
    for (int i = 0; i < n; i++) {
        if (i % pick == 0) { barrier(CLK_LOCAL_MEM_FENCE); acc += 1; }
        else { barrier(CLK_LOCAL_MEM_FENCE); acc = acc * 3 - i; }
    }
    out[get_global_linear_id()] = acc;
}

// A tiled product of the group's rows: each round every work-item
// writes its element of a tile, and after the barrier sums its row of it.
kernel void tiles(global int *out, global const int *in, int rounds, local int *t) {
    size_t x = get_local_id(0), y = get_local_id(1);
    size_t w = get_local_size(0);
    size_t l = y * w + x;
    int acc = 0;
    for (int r = 0; r < rounds; r++) {
        t[l] = in[(get_group_id(0) * rounds + r) * w * get_local_size(1) + l] + r;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (size_t j = 0; j < w; j++) acc += t[y * w + j] * (int)(x + j + 1);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(1) * get_global_size(0) + get_global_id(0)] = acc;
}

// The work-items part on their ids each round and meet at one barrier.
kernel void sides(global int *out, int rounds, local int *t) {
    size_t x = get_local_id(0), y = get_local_id(1);
    size_t w = get_local_size(0) * get_local_size(1);
    size_t l = y * get_local_size(0) + x;
    int acc = (int)l;
    for (int r = 0; r < rounds; r++) {
        if ((x + r) % 3 == 0) t[l] = acc * 2; else if (y == 1) t[l] = acc - 7; else t[l] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc += t[(l + 1) % w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(1) * get_global_size(0) + get_global_id(0)] = acc;
}

// Row `row` leaves the loop at round `stop`: the others wait at a barrier
// it never reaches.
kernel void row_leaves(global int *out, int n, int stop, int row) {
    for (int i = 0; i < n; i++) {
        if (i == stop && get_local_id(1) == row) return;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(1) * get_global_size(0) + get_global_id(0)] = 1;
}
"#;

fn program() -> Program {
    common::build(SRC, "agreed.cl", "-cl-std=CL2.0")
}

/// The range of `groups` groups of `local` along x, `local[1]` rows.
fn range(local: [usize; 2], groups: usize) -> NdRange {
    NdRange::new([local[0] * groups, local[1]]).local(local)
}

#[test]
fn a_barrier_the_group_picks_matches_a_sequential_reference() {
    let p = program();
    // 700 rounds: past the 256 intervals a call chains.
    let n = 700;
    for local in [[64, 1], [8, 4], [6, 1], [1, 1]] {
        let groups = 3;
        let size = local[0] * local[1];
        for pick in [1, 2, 3, 1000] {
            let want: Vec<i32> = (0..groups * size)
                .map(|g| {
                    // Linear ids: x along the row, rows of the whole range.
                    let (x, y) = (g % (local[0] * groups), g / (local[0] * groups));
                    let mut acc = ((x % local[0]) + y * local[0]) as i32;
                    for i in 0..n {
                        acc = match i % pick {
                            0 => acc.wrapping_add(1),
                            _ => acc.wrapping_mul(3).wrapping_sub(i),
                        };
                    }
                    acc
                })
                .collect();
            for (engine, how) in common::engines() {
                let got = common::output_of(
                    &p,
                    "which",
                    how,
                    range(local, groups),
                    groups * size,
                    vec![Arg::of(&[pick]), Arg::of(&[n])],
                );
                assert_eq!(got, want, "{engine}, local {local:?}, pick {pick}");
            }
        }
    }
}

#[test]
fn tiles_through_local_memory_match_a_sequential_reference() {
    let p = program();
    let rounds = 5;
    for local in [[16, 1], [8, 4], [4, 4], [6, 2], [3, 3]] {
        let groups = 2;
        let size = local[0] * local[1];
        let input: Vec<i32> = (0..groups * rounds * size)
            .map(|i| (i as i32 * 37) % 101 - 50)
            .collect();
        let data = Buffer::from_slice(&input);
        let width = local[0] * groups;
        let want: Vec<i32> = (0..width * local[1])
            .map(|at| {
                let (gx, y) = (at % width, at / width);
                let (group, x) = (gx / local[0], gx % local[0]);
                let mut acc = 0i32;
                for r in 0..rounds {
                    let tile = &input[(group * rounds + r) * size..][..size];
                    for j in 0..local[0] {
                        let t = tile[y * local[0] + j] + r as i32;
                        acc = acc.wrapping_add(t.wrapping_mul((x + j + 1) as i32));
                    }
                }
                acc
            })
            .collect();
        for (engine, how) in common::engines() {
            let got = common::output_of(
                &p,
                "tiles",
                how,
                range(local, groups),
                width * local[1],
                vec![
                    Arg::Buffer(&data),
                    Arg::of(&[rounds as i32]),
                    Arg::Local(4 * size),
                ],
            );
            assert_eq!(got, want, "{engine}, local {local:?}");
        }
    }
}

#[test]
fn sides_that_part_and_meet_match_a_sequential_reference() {
    let p = program();
    let rounds = 9;
    for local in [[16, 1], [8, 4], [4, 2], [6, 2], [3, 3]] {
        let groups = 2;
        let size = local[0] * local[1];
        let width = local[0] * groups;
        let mut want = vec![0i32; width * local[1]];
        for group in 0..groups {
            let mut acc: Vec<i32> = (0..size as i32).collect();
            for r in 0..rounds {
                let t: Vec<i32> = (0..size)
                    .map(|l| {
                        let (x, y) = (l % local[0], l / local[0]);
                        match ((x + r) % 3, y) {
                            (0, _) => acc[l].wrapping_mul(2),
                            (_, 1) => acc[l].wrapping_sub(7),
                            _ => acc[l],
                        }
                    })
                    .collect();
                for l in 0..size {
                    acc[l] = acc[l].wrapping_add(t[(l + 1) % size]);
                }
            }
            for (l, a) in acc.into_iter().enumerate() {
                let (x, y) = (l % local[0], l / local[0]);
                want[y * width + group * local[0] + x] = a;
            }
        }
        for (engine, how) in common::engines() {
            let got = common::output_of(
                &p,
                "sides",
                how,
                range(local, groups),
                width * local[1],
                vec![Arg::of(&[rounds as i32]), Arg::Local(4 * size)],
            );
            assert_eq!(got, want, "{engine}, local {local:?}");
        }
    }
}

#[test]
fn a_row_that_leaves_is_the_same_divergence_as_on_coroutines() {
    let p = program();
    let rt = Runtime::with_threads(1);
    for (stop, row) in [(0, 1), (3, 0), (300, 3)] {
        let run = |coroutines: bool| {
            let k = p.kernel("row_leaves").unwrap();
            let k = if coroutines { k.on_coroutines() } else { k };
            let out = Buffer::<i32>::new(64);
            match k.run(
                &rt,
                range([8, 4], 2),
                &[
                    Arg::Buffer(&out),
                    Arg::of(&[400i32]),
                    Arg::of(&[stop]),
                    Arg::of(&[row]),
                ],
            ) {
                Err(RunError::Launch { error, .. }) => error.to_string(),
                other => panic!("stop {stop}: expected a divergence, got {other:?}"),
            }
        };
        let (loops, coroutines) = (run(false), run(true));
        assert!(loops.contains("barrier divergence"), "{loops}");
        assert_eq!(loops, coroutines, "stop {stop}, row {row}");
    }
}
