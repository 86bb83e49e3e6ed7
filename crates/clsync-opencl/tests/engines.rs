//! The two engines of compiled kernels against each other and against
//! sequential references: work-item loops (continuation functions, the
//! unchecked default where a kernel's shape allows) and coroutines
//! (`Kernel::on_coroutines`). Same results, same errors, same divergence
//! reports; the kernels that need coroutines say why.

mod common;

use clsync::{Buffer, NdRange, Runtime};
use clsync_opencl::{Arg, Program, RunError};

/// Runs kernel `name` on both engines with fresh output buffers of `out`
/// elements made by `args`, and returns the two outputs (loops first).
fn both(
    p: &Program,
    name: &str,
    range: NdRange,
    out: usize,
    args: impl Fn(&Buffer<i32>) -> Vec<Arg<'_>>,
) -> (Vec<i32>, Vec<i32>) {
    let rt = Runtime::with_threads(2);
    let k = p.kernel(name).unwrap();
    assert_eq!(k.engine(), Ok(()), "{name} should run as work-item loops");
    let a = Buffer::<i32>::new(out);
    k.run(&rt, range.clone(), &args(&a))
        .unwrap_or_else(|e| panic!("{name} on loops: {e}"));
    let b = Buffer::<i32>::new(out);
    let k = p.kernel(name).unwrap().on_coroutines();
    k.run(&rt, range, &args(&b))
        .unwrap_or_else(|e| panic!("{name} on coroutines: {e}"));
    (a.to_vec(), b.to_vec())
}

/// The error of a failing launch on each engine (loops first).
fn both_errors(p: &Program, name: &str, range: NdRange, out: usize) -> (String, String) {
    let rt = Runtime::with_threads(1);
    let run = |coroutines: bool| {
        let buf = Buffer::<i32>::new(out);
        let k = p.kernel(name).unwrap();
        let k = if coroutines { k.on_coroutines() } else { k };
        match k.run(&rt, range.clone(), &[Arg::Buffer(&buf)]) {
            Err(RunError::Launch { error, .. }) => error.to_string(),
            other => panic!("{name}: expected a launch error, got {other:?}"),
        }
    };
    (run(false), run(true))
}

const LOOPS: &str = r#"
// Values of every kind live across barriers: a loop counter, an
// accumulator, a pointer, a vector; local memory between work-items.
kernel void shift(global int *out, int rounds, local int *t) {
    int l = get_local_id(0), n = get_local_size(0);
    global int *dst = out + get_global_id(0);
    int acc = 0;
    int2 v = (int2)(l, 1);
    for (int r = 0; r < rounds; r++) {
        t[l] = acc + r * v.y + v.x;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc += t[(l + 1) % n];
        v += (int2)(1, 2);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *dst = acc;
}

// A barrier in an inner loop, a private array indexed at run time kept
// across barriers, and a uniform early return of whole groups.
kernel void nested(global int *out, int skip_group) {
    local int t[64];
    int l = get_local_id(0);
    if (get_group_id(0) == skip_group) return;
    int p[8];
    for (int i = 0; i < 8; i++) p[i] = l * i;
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 2; j++) {
            t[l] = p[(l + i + j) % 8];
            barrier(CLK_LOCAL_MEM_FENCE);
            p[(i * 2 + j) % 8] += t[63 - l];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    int s = 0;
    for (int i = 0; i < 8; i++) s += p[i] * (i + 1);
    out[get_global_id(0)] = s;
}

typedef struct { int a; float b; long c; } params;

// A struct passed by value, used after barriers; 2-D ids.
kernel void grid(global int *out, params q) {
    local int t[4][8];
    int x = get_local_id(0), y = get_local_id(1);
    t[y][x] = x * 10 + y;
    barrier(CLK_LOCAL_MEM_FENCE);
    int w = get_global_size(0);
    out[get_global_id(1) * w + get_global_id(0)] =
        t[3 - y][7 - x] + q.a + (int)q.b + (int)q.c + get_group_id(0) * 1000 + get_group_id(1) * 100;
}
"#;

/// `shift`, sequentially: each round every work-item publishes its
/// accumulator, then adds its right neighbour's.
fn shift_reference(groups: usize, n: usize, rounds: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for _ in 0..groups {
        let mut acc = vec![0i32; n];
        let mut v: Vec<(i32, i32)> = (0..n).map(|l| (l as i32, 1)).collect();
        for r in 0..rounds {
            let t: Vec<i32> = (0..n).map(|l| acc[l] + r * v[l].1 + v[l].0).collect();
            for l in 0..n {
                acc[l] += t[(l + 1) % n];
                v[l] = (v[l].0 + 1, v[l].1 + 2);
            }
        }
        out.extend(acc);
    }
    out
}

/// `nested`, sequentially.
fn nested_reference(groups: usize, skip: usize) -> Vec<i32> {
    let mut out = vec![0; groups * 64];
    for g in (0..groups).filter(|g| *g != skip) {
        let mut p: Vec<[i32; 8]> = (0..64)
            .map(|l| std::array::from_fn(|i| (l * i) as i32))
            .collect();
        for i in 0..3 {
            for j in 0..2 {
                let t: Vec<i32> = (0..64).map(|l| p[l][(l + i + j) % 8]).collect();
                for l in 0..64 {
                    p[l][(i * 2 + j) % 8] += t[63 - l];
                }
            }
        }
        for l in 0..64 {
            out[g * 64 + l] = (0..8).map(|i| p[l][i] * (i as i32 + 1)).sum();
        }
    }
    out
}

#[test]
fn values_live_across_barriers_on_both_engines() {
    let p = common::build(LOOPS, "loops.cl", "");
    let (loops, coroutines) = both(&p, "shift", NdRange::new([256]).local([64]), 256, |b| {
        vec![Arg::Buffer(b), Arg::of(&[5i32]), Arg::Local(64 * 4)]
    });
    assert_eq!(loops, shift_reference(4, 64, 5));
    assert_eq!(coroutines, loops);

    let (loops, coroutines) = both(&p, "nested", NdRange::new([256]).local([64]), 256, |b| {
        vec![Arg::Buffer(b), Arg::of(&[2i32])]
    });
    assert_eq!(loops, nested_reference(4, 2));
    assert_eq!(coroutines, loops);

    let mut q = Vec::new();
    q.extend(3i32.to_le_bytes());
    q.extend(4.5f32.to_le_bytes());
    q.extend(100i64.to_le_bytes());
    let (loops, coroutines) = both(&p, "grid", NdRange::new([16, 8]).local([8, 4]), 128, |b| {
        vec![Arg::Buffer(b), Arg::Value(q.clone())]
    });
    let want: Vec<i32> = (0..128)
        .map(|i| {
            let (gx, gy) = (i % 16, i / 16);
            let (x, y) = (gx % 8, gy % 4);
            (7 - x) * 10 + (3 - y) + 107 + (gx / 8) * 1000 + (gy / 4) * 100
        })
        .collect();
    assert_eq!(loops, want);
    assert_eq!(coroutines, loops);
}

/// Uniform control flow around barriers of every shape the front end
/// makes: a loop with `continue` and `break` on uniform values, a barrier
/// in a `switch` case taken by the whole group, values made in an outer
/// loop and used after an inner loop's barriers, a `do`/`while`.
#[test]
fn barriers_in_loops_with_breaks_switches_and_nesting() {
    let src = r#"
        kernel void control(global int *out, int rounds, int mode) {
            local int t[32];
            int l = get_local_id(0), acc = l, outer = 0;
            for (int r = 0; r < rounds; r++) {
                if (r == 1) continue;
                if (r == 5) break;
                int keep = acc * 3 + r;
                for (int j = 0; j < 2; j++) {
                    t[l] = keep + j;
                    barrier(CLK_LOCAL_MEM_FENCE);
                    acc += t[(l + j + 1) % 32];
                    barrier(CLK_LOCAL_MEM_FENCE);
                }
                outer += keep;
                switch (mode + r % 2) {
                case 1:
                    t[l] = outer;
                    barrier(CLK_LOCAL_MEM_FENCE);
                    acc ^= t[31 - l];
                    barrier(CLK_LOCAL_MEM_FENCE);
                    break;
                default:
                    acc -= 1;
                }
            }
            int k = 0;
            do {
                t[l] = acc + k;
                barrier(CLK_LOCAL_MEM_FENCE);
                acc = t[(l + 3) % 32] - k;
                barrier(CLK_LOCAL_MEM_FENCE);
            } while (++k < 3);
            out[get_global_id(0)] = acc + outer;
        }"#;
    let p = common::build(src, "control.cl", "");
    for (rounds, mode) in [(0, 0), (3, 1), (7, 0), (9, 1)] {
        let (loops, coroutines) = both(&p, "control", NdRange::new([96]).local([32]), 96, |b| {
            vec![Arg::Buffer(b), Arg::of(&[rounds]), Arg::of(&[mode])]
        });
        assert_eq!(loops, coroutines, "rounds {rounds}, mode {mode}");
    }
}

#[test]
fn divergence_and_faults_read_the_same_on_both_engines() {
    let src = "kernel void exits(global int *p) {\n  int i = get_local_id(0);\n  if (i != 0) barrier(CLK_GLOBAL_MEM_FENCE);\n  p[i] = i;\n}\n\
kernel void two(global int *p) {\n  int i = get_local_id(0);\n  if (i < 2) { barrier(CLK_LOCAL_MEM_FENCE); p[i] = 5; }\n  else { p[i] = 7; barrier(CLK_LOCAL_MEM_FENCE); }\n}\n\
kernel void oob(global int *p) {\n  int i = get_local_id(0);\n  barrier(CLK_GLOBAL_MEM_FENCE);\n  p[i + 2] = i;\n}\n";
    let p = common::build(src, "div.cl", "");
    for (name, line) in [("exits", "div.cl:3"), ("two", "div.cl:8")] {
        let (loops, coroutines) = both_errors(&p, name, NdRange::new([4]).local([4]), 4);
        assert!(loops.contains("barrier divergence"), "{loops}");
        assert!(loops.contains(line), "{loops}");
        assert_eq!(loops, coroutines, "{name}");
    }
    let (loops, coroutines) = both_errors(&p, "oob", NdRange::new([4]).local([4]), 4);
    assert!(loops.contains("div.cl:14"), "{loops}");
    assert_eq!(loops, coroutines);
}

#[test]
fn a_fault_in_three_dimensions_names_its_work_item_on_both_engines() {
    // The loop counts only the ids its code reads: here none but the
    // linear one, so the runtime makes the fault's ids from it.
    let src = "kernel void deep(global int *p) {\n  size_t i = get_local_linear_id();\n  barrier(CLK_GLOBAL_MEM_FENCE);\n  if (i == 13) p[1 << 20] = 1;\n}\n";
    let p = common::build(src, "deep.cl", "-cl-std=CL2.0");
    let range = NdRange::new([8, 4, 2]).local([4, 2, 2]);
    let (loops, coroutines) = both_errors(&p, "deep", range.clone(), 64);
    // Linear 13 of a 4 x 2 x 2 group is (1, 1, 1), in the first group.
    assert!(loops.contains("deep.cl:4"), "{loops}");
    assert!(loops.contains("(1, 1, 1)"), "{loops}");
    assert_eq!(loops, coroutines);
    // Checked, the report names it too (from the ids in the context): one
    // report for the four groups' faults, whichever group's came first.
    let out = Buffer::<i32>::new(64);
    let found = common::run(&p, "deep", range, &[Arg::Buffer(&out)], true);
    assert_eq!(found.diagnostics.len(), 1, "{found:?}");
    let d = &found.diagnostics[0];
    assert_eq!(d.local, [1, 1, 1], "{d:?}");
    let g = d.group;
    assert_eq!(
        d.global,
        [g[0] * 4 + 1, g[1] * 2 + 1, g[2] * 2 + 1],
        "{d:?}"
    );
}

#[test]
fn kernels_that_need_coroutines_say_why_and_run() {
    let src = r#"
        __attribute__((noinline)) void sync(local int *t) { barrier(CLK_LOCAL_MEM_FENCE); }
        kernel void callee(global int *out, local int *t) {
            int l = get_local_id(0);
            t[l] = l;
            sync(t);
            out[get_global_id(0)] = t[get_local_size(0) - 1 - l];
        }
        kernel void reduce(global int *out) {
            out[get_global_id(0)] = work_group_reduce_add((int)get_local_id(0));
        }
        kernel void sub(global int *out) {
            sub_group_barrier(CLK_LOCAL_MEM_FENCE);
            out[get_global_id(0)] = 1;
        }
        kernel void ids(global int *out) {
            local int t[64];
            t[get_local_id(0)] = get_sub_group_id() * 10000 + get_sub_group_local_id() * 100;
            barrier(CLK_LOCAL_MEM_FENCE);
            out[get_global_id(0)] = t[get_local_id(0)] + get_sub_group_size();
        }"#;
    let p = common::build(src, "co.cl", "-cl-std=CL2.0");
    let why = |k: &str| p.kernel(k).unwrap().engine().unwrap_err();
    assert!(
        why("callee").contains("calls a barrier"),
        "{}",
        why("callee")
    );
    assert!(why("reduce").contains("Group"), "{}", why("reduce"));
    assert!(why("sub").contains("sub-group"), "{}", why("sub"));
    let out = Buffer::<i32>::new(16);
    p.kernel("callee")
        .unwrap()
        .run(
            &Runtime::new(),
            NdRange::new([16]).local([8]),
            &[Arg::Buffer(&out), Arg::Local(32)],
        )
        .unwrap();
    let want: Vec<i32> = (0..16).map(|i| 7 - (i % 8)).collect();
    assert_eq!(out.to_vec(), want);
    // Sub-group ids without sub-group operations: work-item loops, a last
    // group of 40 whose last sub-group is short.
    let (loops, coroutines) = both(&p, "ids", NdRange::new([104]).local([64]), 104, |b| {
        vec![Arg::Buffer(b)]
    });
    assert_eq!(loops, coroutines);
    assert!(loops.iter().any(|v| v / 10000 > 0), "{loops:?}");
}

/// What work-item loops compute again where a work-item resumes instead of
/// keeping it in its frame (a pointer made from a parameter and an id, a
/// comparison and arithmetic of ids and parameters), the ids they count
/// in three dimensions across a group's rows, and a private array kept
/// across barriers: both engines against a sequential computation.
#[test]
fn recomputed_values_counted_ids_and_private_arrays_across_barriers() {
    let src = r#"
        kernel void remat(global int *out, int k) {
            local int t[4][2][8];
            size_t x = get_local_id(0), y = get_local_id(1), z = get_local_id(2);
            size_t g = get_global_linear_id();
            global int *o = out + g * 3;
            bool low = x < 3;
            uint w = (uint)g * 3u + (uint)k + (uint)get_global_id(2) * 7u;
            int mine = (int)(g * 7 % 101);
            int p[5];
            for (int i = 0; i < 5; i++) p[i] = mine * i;
            t[z][y][x] = mine;
            barrier(CLK_LOCAL_MEM_FENCE);
            int v = t[3 - z][1 - y][7 - x];
            barrier(CLK_LOCAL_MEM_FENCE);
            t[z][y][x] = v + (low ? 1 : 2) + p[(x + y + z) % 5];
            barrier(CLK_LOCAL_MEM_FENCE);
            o[0] = t[z][y][x] + (int)w;
            o[1] = low;
            o[2] = (int)(get_global_id(0) * 10000 + get_global_id(1) * 100 + get_global_id(2));
        }
    "#;
    let p = common::build(src, "remat.cl", "-cl-std=CL2.0");
    let (gx, gy, gz) = (16usize, 4usize, 8usize);
    let (lx, ly, lz) = (8usize, 2usize, 4usize);
    let n = gx * gy * gz;
    let input: Vec<i32> = (0..n as i32).map(|i| i * 7 % 101).collect();
    let (loops, coroutines) = both(
        &p,
        "remat",
        NdRange::new([gx, gy, gz]).local([lx, ly, lz]),
        n * 3,
        |b| vec![Arg::Buffer(b), Arg::of(&[11i32])],
    );
    let mut want = vec![0i32; n * 3];
    let lin = |x: usize, y: usize, z: usize| (z * gy + y) * gx + x;
    for z in 0..gz {
        for y in 0..gy {
            for x in 0..gx {
                let g = lin(x, y, z);
                let (ax, ay, az) = (x % lx, y % ly, z % lz);
                let (bx, by, bz) = (x - ax, y - ay, z - az);
                let mirror = lin(bx + lx - 1 - ax, by + ly - 1 - ay, bz + lz - 1 - az);
                let low = ax < 3;
                let priv_i = ((ax + ay + az) % 5) as i32;
                let v = input[mirror] + if low { 1 } else { 2 } + input[g] * priv_i;
                let w = (g as u32 * 3 + 11 + z as u32 * 7) as i32;
                want[g * 3] = v + w;
                want[g * 3 + 1] = low as i32;
                want[g * 3 + 2] = (x * 10000 + y * 100 + z) as i32;
            }
        }
    }
    assert_eq!(loops, want);
    assert_eq!(coroutines, loops);
}
