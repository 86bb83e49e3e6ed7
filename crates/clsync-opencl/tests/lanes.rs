//! Lane batches (`translate::continuation::batch`): which states of a
//! kernel get them and why not, and the same results with and without
//! them against sequential references: uniform and varying values across
//! barriers, 2-D groups, atomics that every work-item of a batch makes,
//! groups whose rows do not fit batches, and faults that name the
//! work-item.

mod common;

use clsync::{Buffer, NdRange, Runtime};
use clsync_opencl::{Arg, Program, RunError};

/// The error of a launch of kernel `name` on one thread, which must fail.
fn launch_error(p: &Program, name: &str, range: NdRange, args: &[Arg<'_>]) -> String {
    let r = p
        .kernel(name)
        .unwrap()
        .run(&Runtime::with_threads(1), range, args);
    match r {
        Err(RunError::Launch { error, .. }) => error.to_string(),
        other => panic!("{name}: expected a launch error, got {other:?}"),
    }
}

const KERNELS: &str = r#"
// A uniform loop counter and a varying accumulator across a barrier.
kernel void counted(global int *out, int rounds) {
    int acc = get_local_id(0);
    for (int i = 0; i < rounds; i++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        acc = acc * 3 + i;
    }
    out[get_global_id(0)] = acc;
}

// Every id a batch steps and those it shares, in two dimensions with an
// offset: each work-item writes them at its global linear id.
kernel void ids(global int *out) {
    size_t g = get_global_linear_id();
    out[5 * g] = get_global_id(0);
    out[5 * g + 1] = get_global_id(1);
    out[5 * g + 2] = get_local_id(0) + 100 * get_local_id(1);
    out[5 * g + 3] = get_local_linear_id();
    out[5 * g + 4] = get_group_id(0) + 100 * get_group_id(1);
}

// A tiled product in 2-D groups (16 x 4): the tile's row is uniform in a
// batch, its column varies; values of vectors across barriers.
kernel void tiled(global const int *a, global const int *b, global int *c, int n) {
    local int ta[4][16];
    local int tb[16][16];
    int tx = get_local_id(0), ty = get_local_id(1);
    int col = get_global_id(0), row = get_global_id(1);
    int2 acc = (int2)(0, 0);
    for (int t = 0; t < n / 16; t++) {
        ta[ty][tx] = a[row * n + t * 16 + tx];
        for (int r = ty; r < 16; r += 4)
            tb[r][tx] = b[(t * 16 + r) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < 16; k++) acc += (int2)(ta[ty][k] * tb[k][tx], 1);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * n + col] = acc.x + acc.y - n;
}

// An atomic whose operands are the batch's: every work-item makes it.
// A uniform load of what one work-item wrote before the barrier.
kernel void count(global int *out, volatile global int *counter) {
    local int first;
    if (get_local_id(0) == 0) first = get_group_id(0) * 1000;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_inc(counter);
    out[get_global_id(0)] = first + get_local_id(0);
}

// A branch on the work-item's id: the state after the barrier diverges.
kernel void halves(global int *out, local int *s) {
    size_t l = get_local_id(0);
    s[l] = l;
    for (size_t h = get_local_size(0) / 2; h > 0; h /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < h) s[l] += s[l + h];
    }
    if (l == 0) out[get_group_id(0)] = s[0];
}

// A batched state hands a uniform and a varying value to one that
// cannot run so (it may print), which runs one work-item per iteration
// and reads them from each work-item's frame. The work-items that return
// early meet the others at the kernel's end.
kernel void handoff(global int *out, global const int *in) {
    int u = in[0] * 3 + in[1];
    int v = get_local_id(0) * 5;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (v < 0) printf("never\n");
    if (get_local_id(0) % 3 == 1) return;
    for (int i = 0; i < get_local_id(0) % 4; i++) u += v;
    out[get_global_id(0)] = u;
}

// Where a batch's work-items part, one at a time: a loop whose trip count
// varies, a branch inside it, an if-else whose join has a phi, the loop's
// counter used after it.
kernel void trips(global int *out, local int *s) {
    int l = get_local_id(0);
    s[l] = l * 7;
    barrier(CLK_LOCAL_MEM_FENCE);
    int acc = 0, k = 0;
    for (; k < l % 5; k++) {
        acc += s[(l + k) % get_local_size(0)];
        if (acc % 2) acc += 3;
    }
    int x;
    if (l & 1) x = acc * 2; else x = k - acc;
    out[get_global_id(0)] = x + k;
}

// A barrier only some work-items reach: a divergence, whatever the loop.
kernel void stalls(global int *out) {
    if (get_local_id(0) < 2) barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = 1;
}

// A spin lock among a group's work-items: the work-item holding it must
// release it before the next one spins.
kernel void locked(global int *out, volatile global int *lock) {
    while (atomic_cmpxchg(lock, 0, 1) != 0) {}
    out[0] += 1;
    atomic_xchg(lock, 0);
}

// Consecutive addresses: one access for a batch's four work-items, unless
// some of them are out of bounds.
kernel void tail(global int *out, global const int *in) {
    size_t g = get_global_id(0);
    out[g] = in[g] * 2;
}

// The same of 8-byte elements: two 16-byte accesses per batch.
kernel void wide(global long *out, global const double *in) {
    size_t g = get_global_id(0);
    out[g] = (long)(in[g] * 4.0) + g;
}

// A value loaded for the batch at once and kept across a barrier, then
// used in arithmetic of the batch at once.
kernel void keeps(global int *out, global const int *in, local int *t) {
    size_t g = get_global_id(0), l = get_local_id(0);
    int v = in[g];
    float f = (float)v * 0.5f;
    t[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    int w = t[get_local_size(0) - 1 - l];
    out[g] = v * 3 + w + (int)(f * f);
}

// Accumulators of the batch's vectors, kept in vectors across their loop.
kernel void sums(global int *out, global const int *in, global const float *fin, int n) {
    size_t g = get_global_id(0), gs = get_global_size(0);
    int acc = 0;
    float prod = 1.0f;
    for (int k = 0; k < n; k++) {
        acc += in[g + k * gs] * 3;
        prod *= fin[g + k * gs];
    }
    out[g] = acc + (int)(prod * 1000.0f);
}

// Fused multiply-adds of the batch at once, an accumulator kept across a
// barrier as one vector, and a 64-bit value kept lane by lane.
kernel void fmas(global float *out, global const float *a, global const float *b, int n) {
    size_t g = get_global_id(0), gs = get_global_size(0);
    float acc = 0.0f;
    long big = (long)g * 3 - 5;
    for (int k = 0; k < n; k++) acc = fma(a[g + k * gs], b[k], acc);
    barrier(CLK_LOCAL_MEM_FENCE);
    acc = mad(acc, 0.5f, a[g]);
    out[g] = acc + (float)big;
}

// A branch some batches take with every lane, some with none (which go
// straight to the join, each lane with its own phi values) and one with
// some of its lanes.
kernel void flips(global int *out, global int *marks, int h) {
    size_t g = get_global_id(0);
    int l = get_local_id(0);
    int x = l * 3 + 1;
    if (l < h) {
        x = -x;
        marks[g] = x;
    }
    out[g] = x;
}

// Branches on the work-item's id that clang nests (`l >= 2` inside
// `l >= 1`), a value made inside a branch, a loop of the batch inside
// one: a batch whose lanes all go one way runs the region together, one
// whose lanes part runs it one lane at a time.
kernel void nested(global int *out, global const int *in, int k) {
    size_t g = get_global_id(0);
    int l = get_local_id(0);
    int v = in[g];
    if (l >= 1) v += in[g - 1];
    if (l >= 2) v += in[g - 2];
    if (l >= 5) v += in[g - 5];
    if (l % 8 < 4) {
        int w = v * 2;
        for (int i = 0; i < k; i++) w += in[g] + i;
        v = w - 1;
    }
    out[g] = v;
}

// An index that steps by one from lane to lane as 32-bit arithmetic goes,
// but wraps between two lanes once widened.
kernel void wraps(global int *out) {
    uint u = (uint)get_global_id(0) + 0x7ffffffeu;
    out[(long)as_int(u) - 0x7ffffffeL] = 7;
}

kernel void talks(global int *out) {
    if (get_global_id(0) == 1) printf("%d\n", out[0]);
}

// Out of bounds for one work-item only.
kernel void strays(global int *out, int bad) {
    size_t g = get_global_id(0);
    out[g == bad ? 1000000 : g] = 1;
}
"#;

fn program() -> Program {
    common::build(KERNELS, "lanes.cl", "-cl-std=CL2.0")
}

#[test]
fn states_with_uniform_branches_get_lanes_and_others_say_why() {
    let p = program();
    let lanes = |name: &str| p.kernel(name).unwrap().lanes();
    assert_eq!(lanes("counted"), vec![Ok(()), Ok(())]);
    assert_eq!(lanes("ids"), vec![Ok(())]);
    assert_eq!(lanes("strays"), vec![Ok(())]);
    assert_eq!(lanes("tiled"), vec![Ok(()), Ok(()), Ok(())]);
    // Where the work-items part, they run one at a time.
    assert_eq!(lanes("count"), vec![Ok(()), Ok(())]);
    assert_eq!(lanes("halves"), vec![Ok(()), Ok(())]);
    assert_eq!(lanes("trips"), vec![Ok(()), Ok(())]);
    assert_eq!(lanes("handoff"), vec![Ok(()), Err("printf".to_string())]);
    assert_eq!(
        lanes("stalls")[0],
        Err("a barrier or a return where the work-items part".to_string())
    );
    assert_eq!(
        lanes("locked"),
        vec![Err(
            "a loop of atomics where the work-items part".to_string()
        )]
    );
    assert_eq!(lanes("talks"), vec![Err("printf".into())]);
    // Unoptimized code keeps its variables in memory.
    let o0 = common::build(KERNELS, "lanes.cl", "-cl-std=CL2.0 -cl-opt-disable");
    assert_eq!(
        o0.kernel("counted").unwrap().lanes(),
        vec![Err("private variables in memory".to_string()); 2]
    );
}

#[test]
fn a_uniform_counter_and_a_varying_accumulator() {
    let p = program();
    let (n, local, rounds) = (256usize, 64usize, 7);
    let (a, b) = common::against(
        &p,
        "counted",
        |k| k.without_lanes(),
        NdRange::new([n]).local([local]),
        n,
        || vec![Arg::of(&[rounds])],
    );
    let want: Vec<i32> = (0..n)
        .map(|g| (0..rounds).fold((g % local) as i32, |acc, i| acc * 3 + i))
        .collect();
    assert_eq!(a, want);
    assert_eq!(b, want);
}

#[test]
fn values_a_batch_keeps_reach_the_work_items_of_a_state_without_lanes() {
    let p = program();
    let input = Buffer::from_slice(&[4i32, 9]);
    let n = 32usize;
    let (a, b) = common::against(
        &p,
        "handoff",
        |k| k.without_lanes(),
        NdRange::new([n]).local([16]),
        n,
        || vec![Arg::Buffer(&input)],
    );
    let want: Vec<i32> = (0..n)
        .map(|g| match (g % 16) as i32 {
            l if l % 3 == 1 => 0,
            l => 21 + (l % 4) * l * 5,
        })
        .collect();
    assert_eq!(a, want);
    assert_eq!(b, want);
}

#[test]
fn work_items_that_part_run_one_at_a_time_and_meet_again() {
    let p = program();
    let (n, local) = (96usize, 24usize);
    let (a, b) = common::against(
        &p,
        "trips",
        |k| k.without_lanes(),
        NdRange::new([n]).local([local]),
        n,
        || vec![Arg::Local(local * 4)],
    );
    let want: Vec<i32> = (0..n)
        .map(|g| {
            let l = (g % local) as i32;
            let (mut acc, mut k) = (0, 0);
            while k < l % 5 {
                acc += ((l + k) % local as i32) * 7;
                if acc % 2 != 0 {
                    acc += 3;
                }
                k += 1;
            }
            let x = if l & 1 != 0 { acc * 2 } else { k - acc };
            x + k
        })
        .collect();
    assert_eq!(a, want);
    assert_eq!(b, want);
}

#[test]
fn a_reduction_whose_work_items_part_at_each_level() {
    let p = program();
    let (groups, local) = (6usize, 32usize);
    let (a, b) = common::against(
        &p,
        "halves",
        |k| k.without_lanes(),
        NdRange::new([groups * local]).local([local]),
        groups,
        || vec![Arg::Local(local * 4)],
    );
    let sum = (0..local as i32).sum::<i32>();
    assert_eq!(a, vec![sum; groups]);
    assert_eq!(b, vec![sum; groups]);
}

#[test]
fn ids_step_along_x_in_two_dimensions_with_an_offset() {
    let p = program();
    let (gx, gy, lx, ly, ox, oy) = (24usize, 6usize, 8usize, 3usize, 4usize, 2usize);
    let range = NdRange::new([gx, gy]).local([lx, ly]).offset([ox, oy]);
    let (a, b) = common::against(
        &p,
        "ids",
        |k| k.without_lanes(),
        range,
        5 * gx * gy,
        Vec::new,
    );
    let mut want = vec![0; 5 * gx * gy];
    for y in 0..gy {
        for x in 0..gx {
            let g = y * gx + x;
            let (lxi, lyi) = (x % lx, y % ly);
            want[5 * g] = (x + ox) as i32;
            want[5 * g + 1] = (y + oy) as i32;
            want[5 * g + 2] = (lxi + 100 * lyi) as i32;
            want[5 * g + 3] = (lyi * lx + lxi) as i32;
            want[5 * g + 4] = (x / lx + 100 * (y / ly)) as i32;
        }
    }
    assert_eq!(a, want);
    assert_eq!(b, want);
}

#[test]
fn a_tiled_product_in_two_dimensional_groups() {
    let p = program();
    let n = 32usize;
    let av: Vec<i32> = (0..n * n).map(|i| (i % 7) as i32 - 3).collect();
    let bv: Vec<i32> = (0..n * n).map(|i| (i % 5) as i32 - 2).collect();
    let (a_buf, b_buf) = (Buffer::from_slice(&av), Buffer::from_slice(&bv));
    let range = NdRange::new([n, n]).local([16, 4]);
    let rt = Runtime::with_threads(2);
    let run = |lanes: bool| {
        let k = p.kernel("tiled").unwrap();
        let k = if lanes { k } else { k.without_lanes() };
        let c = Buffer::<i32>::new(n * n);
        let args = [
            Arg::Buffer(&a_buf),
            Arg::Buffer(&b_buf),
            Arg::Buffer(&c),
            Arg::of(&[n as i32]),
        ];
        k.run(&rt, range.clone(), &args).unwrap();
        c.to_vec()
    };
    let (a, b) = (run(true), run(false));
    let mut want = vec![0; n * n];
    for r in 0..n {
        for c in 0..n {
            want[r * n + c] = (0..n).map(|k| av[r * n + k] * bv[k * n + c]).sum();
        }
    }
    assert_eq!(a, want);
    assert_eq!(b, want);
}

#[test]
fn every_work_item_of_a_batch_makes_its_atomic() {
    let p = program();
    let rt = Runtime::with_threads(2);
    // Groups of 8 fit batches; the last group of the non-uniform range
    // (6 work-items) does not, nor do groups of 6.
    for (n, local) in [(64usize, 8usize), (70, 8), (66, 6)] {
        let out = Buffer::<i32>::new(n);
        let counter = Buffer::<i32>::new(1);
        p.kernel("count")
            .unwrap()
            .run(
                &rt,
                NdRange::new([n]).local([local]),
                &[Arg::Buffer(&out), Arg::Buffer(&counter)],
            )
            .unwrap();
        assert_eq!(counter.to_vec(), vec![n as i32], "{n} / {local}");
        let want: Vec<i32> = (0..n)
            .map(|g| ((g / local) * 1000 + g % local) as i32)
            .collect();
        assert_eq!(out.to_vec(), want, "{n} / {local}");
    }
}

#[test]
fn a_fault_in_a_later_lane_names_its_work_item() {
    let p = program();
    for bad in [2, 7] {
        let out = Buffer::<i32>::new(16);
        let args = [Arg::Buffer(&out), Arg::of(&[bad])];
        let text = launch_error(&p, "strays", NdRange::new([16]).local([8]), &args);
        assert!(
            text.contains(&format!("global id ({bad}), local id ({bad})")),
            "{bad}: {text}"
        );
    }
}

#[test]
fn a_barrier_some_work_items_skip_is_a_divergence() {
    let p = program();
    let out = Buffer::<i32>::new(8);
    let range = NdRange::new([8]).local([8]);
    let error = launch_error(&p, "stalls", range, &[Arg::Buffer(&out)]);
    assert!(error.contains("barrier divergence"), "{error}");
}

#[test]
fn consecutive_accesses_in_and_out_of_bounds() {
    let p = program();
    let input: Vec<i32> = (0..16).map(|i| i * 3 - 7).collect();
    let inb = Buffer::from_slice(&input);
    // In bounds: each lane's element.
    let (a, b) = common::against(
        &p,
        "tail",
        |k| k.without_lanes(),
        NdRange::new([16]).local([8]),
        16,
        || vec![Arg::Buffer(&inb)],
    );
    let want: Vec<i32> = input.iter().map(|x| x * 2).collect();
    assert_eq!(a, want);
    assert_eq!(b, want);
    // The last batch's last two work-items read past the end: the fault
    // names the first of them, as without lanes.
    let short = Buffer::from_slice(&input[..14]);
    let out = Buffer::<i32>::new(16);
    let args = [Arg::Buffer(&out), Arg::Buffer(&short)];
    let error = launch_error(&p, "tail", NdRange::new([16]).local([8]), &args);
    assert!(error.contains("global id (14)"), "{error}");
    // The first group ran whole (one thread runs the groups in order).
    assert_eq!(out.to_vec()[..8], want[..8]);
}

#[test]
fn an_index_that_wraps_between_lanes_is_not_taken_for_consecutive() {
    let p = program();
    let out = Buffer::<i32>::new(8);
    let range = NdRange::new([8]).local([8]);
    // Work-items 0 and 1 write elements 0 and 1; work-item 2's index is
    // far below the buffer.
    let error = launch_error(&p, "wraps", range, &[Arg::Buffer(&out)]);
    assert!(error.contains("global id (2)"), "{error}");
    assert_eq!(out.to_vec()[..2], [7, 7]);
    assert_eq!(out.to_vec()[2..], [0; 6]);
}

#[test]
fn consecutive_accesses_of_eight_byte_elements() {
    let p = program();
    assert_eq!(p.kernel("wide").unwrap().lanes(), vec![Ok(())]);
    let input: Vec<f64> = (0..32).map(|i| i as f64 * 1.5 - 9.0).collect();
    let inb = Buffer::from_slice(&input);
    let want: Vec<i64> = input
        .iter()
        .enumerate()
        .map(|(g, x)| (x * 4.0) as i64 + g as i64)
        .collect();
    for lanes in [true, false] {
        let k = p.kernel("wide").unwrap();
        let k = if lanes { k } else { k.without_lanes() };
        let out = Buffer::<i64>::new(32);
        k.run(
            &Runtime::with_threads(2),
            NdRange::new([32]).local([16]),
            &[Arg::Buffer(&out), Arg::Buffer(&inb)],
        )
        .unwrap();
        assert_eq!(out.to_vec(), want, "lanes {lanes}");
    }
}

#[test]
fn values_of_the_batch_at_once_kept_across_a_barrier() {
    let p = program();
    assert_eq!(p.kernel("keeps").unwrap().lanes(), vec![Ok(()), Ok(())]);
    let input: Vec<i32> = (0..64).map(|i| (i * 7) % 23 - 11).collect();
    let inb = Buffer::from_slice(&input);
    let local = 16usize;
    let (a, b) = common::against(
        &p,
        "keeps",
        |k| k.without_lanes(),
        NdRange::new([64]).local([local]),
        64,
        || vec![Arg::Buffer(&inb), Arg::Local(local * 4)],
    );
    let want: Vec<i32> = (0..64)
        .map(|g| {
            let v = input[g];
            let mirror = (g / local) * local + (local - 1 - g % local);
            let f = v as f32 * 0.5;
            v * 3 + input[mirror] + (f * f) as i32
        })
        .collect();
    assert_eq!(a, want);
    assert_eq!(b, want);
}

#[test]
fn accumulators_of_the_batch_at_once() {
    let p = program();
    assert_eq!(p.kernel("sums").unwrap().lanes(), vec![Ok(())]);
    let (gs, n) = (32usize, 5usize);
    let ints: Vec<i32> = (0..gs * n).map(|i| (i as i32 * 13) % 17 - 8).collect();
    let floats: Vec<f32> = (0..gs * n).map(|i| 0.5 + (i % 7) as f32 * 0.25).collect();
    let (ib, fb) = (Buffer::from_slice(&ints), Buffer::from_slice(&floats));
    let (a, b) = common::against(
        &p,
        "sums",
        |k| k.without_lanes(),
        NdRange::new([gs]).local([8]),
        gs,
        || vec![Arg::Buffer(&ib), Arg::Buffer(&fb), Arg::of(&[n as i32])],
    );
    let want: Vec<i32> = (0..gs)
        .map(|g| {
            let (mut acc, mut prod) = (0i32, 1.0f32);
            for k in 0..n {
                acc += ints[g + k * gs] * 3;
                prod *= floats[g + k * gs];
            }
            acc + (prod * 1000.0) as i32
        })
        .collect();
    assert_eq!(a, want);
    assert_eq!(b, want);
}

#[test]
fn fused_multiply_adds_and_values_kept_in_rows() {
    let p = program();
    assert_eq!(p.kernel("fmas").unwrap().lanes(), vec![Ok(()), Ok(())]);
    let (gs, n) = (48usize, 6usize);
    let a: Vec<f32> = (0..gs * n)
        .map(|i| ((i * 37) % 101) as f32 / 7.0 - 5.0)
        .collect();
    let b: Vec<f32> = (0..n).map(|k| 1.25 - k as f32 * 0.375).collect();
    let want: Vec<f32> = (0..gs)
        .map(|g| {
            let mut acc = 0.0f32;
            for k in 0..n {
                acc = a[g + k * gs].mul_add(b[k], acc);
            }
            acc.mul_add(0.5, a[g]) + (g as i64 * 3 - 5) as f32
        })
        .collect();
    let (ab, bb) = (Buffer::from_slice(&a), Buffer::from_slice(&b));
    // Groups of 16 and 8 run every state in batches, frames in rows;
    // groups of 6 one work-item at a time.
    for (local, lanes) in [(16usize, true), (16, false), (8, true), (6, true)] {
        let k = p.kernel("fmas").unwrap();
        let k = if lanes { k } else { k.without_lanes() };
        let out = Buffer::<f32>::new(gs);
        k.run(
            &Runtime::with_threads(2),
            NdRange::new([gs]).local([local]),
            &[
                Arg::Buffer(&out),
                Arg::Buffer(&ab),
                Arg::Buffer(&bb),
                Arg::of(&[n as i32]),
            ],
        )
        .unwrap();
        assert_eq!(out.to_vec(), want, "local {local}, lanes {lanes}");
    }
}

#[test]
fn batches_whose_lanes_all_skip_a_region() {
    let p = program();
    assert_eq!(p.kernel("flips").unwrap().lanes(), vec![Ok(())]);
    let (n, local, h) = (32usize, 16usize, 6i32);
    let marks = Buffer::<i32>::new(n);
    let (a, b) = common::against(
        &p,
        "flips",
        |k| k.without_lanes(),
        NdRange::new([n]).local([local]),
        n,
        || vec![Arg::Buffer(&marks), Arg::of(&[h])],
    );
    let want: Vec<i32> = (0..n)
        .map(|g| {
            let l = (g % local) as i32;
            if l < h {
                -(l * 3 + 1)
            } else {
                l * 3 + 1
            }
        })
        .collect();
    assert_eq!(a, want);
    assert_eq!(b, want);
    let marked: Vec<i32> = want.iter().map(|x| if *x < 0 { *x } else { 0 }).collect();
    assert_eq!(marks.to_vec(), marked);
}

#[test]
fn nested_branches_on_the_id_run_together_where_the_lanes_agree() {
    let p = program();
    assert_eq!(p.kernel("nested").unwrap().lanes(), vec![Ok(())]);
    let (n, local, k) = (72usize, 24usize, 3i32);
    let input: Vec<i32> = (0..n as i32).map(|x| x * 7 % 11 - 3).collect();
    let inp = Buffer::from_slice(&input);
    let (a, b) = common::against(
        &p,
        "nested",
        |k| k.without_lanes(),
        NdRange::new([n]).local([local]),
        n,
        || vec![Arg::Buffer(&inp), Arg::of(&[k])],
    );
    let want: Vec<i32> = (0..n)
        .map(|g| {
            let l = g % local;
            let mut v = input[g];
            for back in [1, 2, 5] {
                if l >= back {
                    v += input[g - back];
                }
            }
            if l % 8 < 4 {
                let w = v * 2 + (0..k).map(|i| input[g] + i).sum::<i32>();
                v = w - 1;
            }
            v
        })
        .collect();
    assert_eq!(a, want);
    assert_eq!(b, want);
}

const GROUP_VALUES: &str = r#"
// A value of the row (loaded at y: the same in a batch but not in the
// group), and one of the group (a counter), both kept across the barrier
// of a loop.
kernel void rows(global int *out, int rounds, global const int *table) {
    int y = table[get_local_id(1)];
    int acc = get_local_id(0);
    for (int i = 0; i < rounds; i++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        acc = acc * 3 + y + i;
    }
    out[get_global_id(1) * get_global_size(0) + get_global_id(0)] = acc;
}

// Scan's first step: a chain of joins, where the first batch of each row
// parts (its lanes see `l >= k` differently) and the others run together.
kernel void chain(global int *out, global const int *in) {
    size_t l = get_local_id(0), g = get_global_id(0);
    int v = in[g];
    if (l >= 1) v += in[g - 1];
    if (l >= 2) v += in[g - 2];
    if (l >= 3) v += in[g - 3] * 5;
    out[g] = v;
}
"#;

#[test]
fn a_value_of_the_row_is_not_taken_for_the_groups() {
    let p = common::build(GROUP_VALUES, "group.cl", "");
    let (w, h, rounds) = (16usize, 4usize, 9);
    let n = w * h * 2;
    let range = NdRange::new([w * 2, h]).local([w, h]);
    let table = Buffer::from_slice(&[1i32, 8, 15, 22]);
    let (a, b) = common::against(
        &p,
        "rows",
        |k| k.without_lanes(),
        range,
        n,
        || vec![Arg::of(&[rounds]), Arg::Buffer(&table)],
    );
    let want: Vec<i32> = (0..n)
        .map(|k| {
            let (x, y) = (k % (w * 2), k / (w * 2));
            (0..rounds).fold((x % w) as i32, |acc, i| {
                acc.wrapping_mul(3) + (y * 7 + 1) as i32 + i
            })
        })
        .collect();
    assert_eq!(a, want);
    assert_eq!(b, want);
}

#[test]
fn a_chain_of_joins_where_the_first_batch_parts() {
    let p = common::build(GROUP_VALUES, "group.cl", "");
    let (n, local) = (96usize, 12usize);
    let input: Vec<i32> = (0..n as i32).map(|i| i * i % 37 - 11).collect();
    let data = Buffer::from_slice(&input);
    let (a, b) = common::against(
        &p,
        "chain",
        |k| k.without_lanes(),
        NdRange::new([n]).local([local]),
        n,
        || vec![Arg::Buffer(&data)],
    );
    let want: Vec<i32> = (0..n)
        .map(|g| {
            let l = g % local;
            let back = |k: usize, by: i32| if l >= k { input[g - k] * by } else { 0 };
            input[g] + back(1, 1) + back(2, 1) + back(3, 5)
        })
        .collect();
    assert_eq!(a, want);
    assert_eq!(b, want);
}
