//! OpenCL C kernels compiled and run, against sequential references.

mod common;

use clsync::{Buffer, NdRange, Runtime};
use clsync_opencl::{Arg, Program};

fn build(src: &str, options: &str) -> Program {
    common::build(src, "test.cl", options)
}

#[test]
fn tree_reduction_with_barriers() {
    let p = build(
        r#"
        kernel void reduce(uint n, global const uint *data, global uint *result, local uint *scratch) {
            uint lid = get_local_id(0);
            uint sum = 0;
            for (uint i = get_global_id(0); i < n; i += get_global_size(0)) sum += data[i];
            scratch[lid] = sum;
            for (uint off = get_local_size(0) / 2; off > 0; off /= 2) {
                barrier(CLK_LOCAL_MEM_FENCE);
                if (lid < off) scratch[lid] += scratch[lid + off];
            }
            if (lid == 0) result[get_group_id(0)] = scratch[0];
        }"#,
        "",
    );
    let n = 4096u32;
    let data: Vec<u32> = (0..n).map(|i| i * 7 % 1000).collect();
    let input = Buffer::from_slice(&data);
    let result = Buffer::<u32>::new(16);
    p.kernel("reduce")
        .unwrap()
        .run(
            &Runtime::new(),
            NdRange::new([1024]).local([64]),
            &[
                Arg::of(&[n]),
                Arg::Buffer(&input),
                Arg::Buffer(&result),
                Arg::Local(64 * 4),
            ],
        )
        .unwrap();
    // Work-item g sums data[g], data[g + 1024], ...; group k holds
    // work-items 64k .. 64k + 63.
    let expect: Vec<u32> = (0..16)
        .map(|k| {
            (0..n)
                .filter(|i| (i % 1024) / 64 == k)
                .map(|i| data[i as usize])
                .sum()
        })
        .collect();
    assert_eq!(result.to_vec(), expect);
}

#[test]
fn float_vectors_and_math() {
    let p = build(
        r#"
        kernel void k(global const float4 *a, global float *out) {
            size_t i = get_global_id(0);
            float4 v = a[i];
            out[i] = dot(v, v) + sqrt(fabs(v.x)) + length(v.zw) + fmax(v.y, 2.0f);
        }"#,
        "",
    );
    let a: Vec<f32> = (0..64).map(|i| i as f32 * 0.5 - 8.0).collect();
    let ab = Buffer::from_slice(&a);
    let out = Buffer::<f32>::new(16);
    p.kernel("k")
        .unwrap()
        .run(
            &Runtime::new(),
            NdRange::new([16]),
            &[Arg::Buffer(&ab), Arg::Buffer(&out)],
        )
        .unwrap();
    for (i, got) in out.to_vec().iter().enumerate() {
        let v = &a[4 * i..4 * i + 4];
        let want = v.iter().map(|x| x * x).sum::<f32>()
            + v[0].abs().sqrt()
            + (v[2] * v[2] + v[3] * v[3]).sqrt()
            + v[1].max(2.0);
        assert!(
            (got - want).abs() <= 1e-4 * want.abs().max(1.0),
            "{i}: {got} vs {want}"
        );
    }
}

fn run(p: &Program, name: &str, range: NdRange, args: &[Arg<'_>]) {
    common::run(p, name, range, args, false);
}

#[test]
fn histogram_with_local_and_global_atomics() {
    let p = build(
        r#"
        kernel void hist(global const uchar *data, uint n, global uint *bins, local uint *local_bins) {
            uint l = get_local_id(0);
            for (uint b = l; b < 256; b += get_local_size(0)) local_bins[b] = 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint i = get_global_id(0); i < n; i += get_global_size(0)) atomic_inc(&local_bins[data[i]]);
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint b = l; b < 256; b += get_local_size(0)) atomic_add(&bins[b], local_bins[b]);
        }"#,
        "",
    );
    let data: Vec<u8> = (0..10_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let input = Buffer::from_slice(&data);
    let bins = Buffer::<u32>::new(256);
    run(
        &p,
        "hist",
        NdRange::new([512]).local([64]),
        &[
            Arg::Buffer(&input),
            Arg::of(&[data.len() as u32]),
            Arg::Buffer(&bins),
            Arg::Local(1024),
        ],
    );
    let mut expect = vec![0u32; 256];
    for d in &data {
        expect[*d as usize] += 1;
    }
    assert_eq!(bins.to_vec(), expect);
}

#[test]
fn c11_atomics_and_a_release_acquire_flag() {
    // Each group's first work-item publishes a value with a release store;
    // the group's last work-item spins with acquire loads (the group runs
    // on one thread in order, so the flag is set when it looks).
    let p = build(
        r#"
        kernel void k(global int *data, global atomic_int *flags, global int *seen, global atomic_uint *total) {
            size_t g = get_group_id(0);
            if (get_local_id(0) == 0) {
                data[g] = 100 + (int)g;
                atomic_store_explicit(&flags[g], 1, memory_order_release, memory_scope_work_group);
            }
            if (get_local_id(0) == get_local_size(0) - 1) {
                while (atomic_load_explicit(&flags[g], memory_order_acquire, memory_scope_work_group) == 0) {}
                seen[g] = data[g];
            }
            atomic_fetch_add_explicit(total, (uint)get_global_id(0), memory_order_relaxed, memory_scope_device);
        }"#,
        "-cl-std=CL2.0",
    );
    let data = Buffer::<i32>::new(4);
    let flags = Buffer::<i32>::new(4);
    let seen = Buffer::<i32>::new(4);
    let total = Buffer::<u32>::new(1);
    let found = common::run(
        &p,
        "k",
        NdRange::new([32]).local([8]),
        &[
            Arg::Buffer(&data),
            Arg::Buffer(&flags),
            Arg::Buffer(&seen),
            Arg::Buffer(&total),
        ],
        true,
    );
    assert!(found.is_empty(), "{found:?}");
    assert_eq!(seen.to_vec(), vec![100, 101, 102, 103]);
    assert_eq!(total.to_vec(), vec![(0..32).sum::<u32>()]);
}

#[test]
fn async_copy_into_local_memory_then_reversed() {
    let p = build(
        r#"
        kernel void k(global const int *in, global int *out, local int *tile) {
            size_t n = get_local_size(0), base = get_group_id(0) * n;
            event_t e = async_work_group_copy(tile, in + base, n, 0);
            wait_group_events(1, &e);
            size_t i = get_local_id(0);
            out[base + i] = tile[n - 1 - i];
        }"#,
        "",
    );
    let data: Vec<i32> = (0..64).map(|i| i * 3 - 7).collect();
    let input = Buffer::from_slice(&data);
    let out = Buffer::<i32>::new(64);
    for checked in [false, true] {
        let found = common::run(
            &p,
            "k",
            NdRange::new([64]).local([16]),
            &[Arg::Buffer(&input), Arg::Buffer(&out), Arg::Local(64)],
            checked,
        );
        assert!(found.is_empty(), "{found:?}");
        let expect: Vec<i32> = data
            .chunks(16)
            .flat_map(|c| c.iter().rev().copied())
            .collect();
        assert_eq!(out.to_vec(), expect, "checked: {checked}");
    }
}

#[test]
fn program_scope_variables_keep_their_values_between_launches() {
    let p = build(
        r#"
        constant int table[4] = {10, 20, 30, 40};
        global int counter = 5;
        kernel void k(global int *out) {
            size_t i = get_global_id(0);
            out[i] = table[i] + counter;
            barrier(CLK_GLOBAL_MEM_FENCE);
            if (i == 0) counter += 1;
        }"#,
        "-cl-std=CL2.0",
    );
    let out = Buffer::<i32>::new(4);
    run(&p, "k", NdRange::new([4]).local([4]), &[Arg::Buffer(&out)]);
    assert_eq!(out.to_vec(), vec![15, 25, 35, 45]);
    run(&p, "k", NdRange::new([4]).local([4]), &[Arg::Buffer(&out)]);
    assert_eq!(out.to_vec(), vec![16, 26, 36, 46]);
}

#[test]
fn structs_and_vectors_by_value_and_private_arrays() {
    let p = build(
        r#"
        typedef struct { float a; int b; char c; } S;
        kernel void k(S s, int4 v, global float *out) {
            int tmp[8];
            for (int i = 0; i < 8; i++) tmp[i] = i * v.y;
            size_t g = get_global_id(0);
            out[g] = s.a * (float)s.b + (float)s.c + (float)tmp[(g * 3) % 8] + (float)v.w;
        }"#,
        "",
    );
    let mut s = Vec::new();
    s.extend_from_slice(&1.5f32.to_le_bytes());
    s.extend_from_slice(&4i32.to_le_bytes());
    s.extend_from_slice(&[7, 0, 0, 0]);
    let out = Buffer::<f32>::new(8);
    run(
        &p,
        "k",
        NdRange::new([8]),
        &[Arg::Value(s), Arg::of(&[1i32, 2, 3, 4]), Arg::Buffer(&out)],
    );
    let expect: Vec<f32> = (0..8)
        .map(|g| 1.5 * 4.0 + 7.0 + (((g * 3) % 8) * 2) as f32 + 4.0)
        .collect();
    assert_eq!(out.to_vec(), expect);
}

#[test]
fn integer_edge_cases_do_not_trap() {
    // Division by zero and INT_MIN / -1 are undefined in OpenCL C: any
    // value, never a crash. Saturating conversions and built-ins are exact.
    let p = build(
        r#"
        kernel void k(global int *a, global int *b, global int *out) {
            size_t i = get_global_id(0);
            out[4 * i] = a[i] / b[i];
            out[4 * i + 1] = a[i] % b[i];
            out[4 * i + 2] = add_sat(a[i], b[i]);
            out[4 * i + 3] = convert_int_sat((float)a[i] * 4.0f);
        }"#,
        "",
    );
    let a = Buffer::from_slice(&[7, i32::MIN, 5, i32::MAX]);
    let b = Buffer::from_slice(&[0, -1, 2, 1]);
    let out = Buffer::<i32>::new(16);
    run(
        &p,
        "k",
        NdRange::new([4]),
        &[Arg::Buffer(&a), Arg::Buffer(&b), Arg::Buffer(&out)],
    );
    let o = out.to_vec();
    assert_eq!(&o[8..12], &[2, 1, 7, 20]);
    assert_eq!(o[14], i32::MAX, "add_sat(INT_MAX, 1)");
    assert_eq!(o[15], i32::MAX, "convert_int_sat(INT_MAX * 4.0f)");
    assert_eq!(o[6], i32::MIN, "add_sat(INT_MIN, -1)");
    assert_eq!(o[7], i32::MIN, "convert_int_sat(INT_MIN * 4.0f)");
}

#[test]
fn work_group_and_sub_group_collectives_match_sequential_results() {
    let p = build(
        r#"
        kernel void k(global const int *in, global int *out, global float *f) {
            size_t i = get_global_id(0);
            int v = in[i];
            out[7 * i + 0] = work_group_reduce_add(v);
            out[7 * i + 1] = work_group_scan_inclusive_max(v);
            out[7 * i + 2] = work_group_broadcast(v, 3);
            out[7 * i + 3] = sub_group_reduce_min(v);
            out[7 * i + 4] = sub_group_scan_exclusive_add(v);
            out[7 * i + 5] = work_group_all(v > -40) + 2 * work_group_any(v > 40);
            out[7 * i + 6] = sub_group_broadcast(v, 1);
            f[i] = work_group_reduce_max((float)v * 0.5f);
        }"#,
        "-cl-std=CL3.0",
    );
    let (n, local, sg) = (96usize, 24usize, 8usize);
    let data: Vec<i32> = (0..n as i32).map(|i| (i * 37 % 83) - 41).collect();
    let input = Buffer::from_slice(&data);
    let out = Buffer::<i32>::new(7 * n);
    let f = Buffer::<f32>::new(n);
    for checked in [false, true] {
        let found = common::run(
            &p,
            "k",
            NdRange::new([n]).local([local]).sub_group_size(sg),
            &[Arg::Buffer(&input), Arg::Buffer(&out), Arg::Buffer(&f)],
            checked,
        );
        assert!(found.is_empty(), "{found:?}");
        let o = out.to_vec();
        for i in 0..n {
            let g = &data[i / local * local..(i / local + 1) * local];
            let s = &data[i / sg * sg..(i / sg + 1) * sg];
            let (l, sl) = (i % local, i % sg);
            let want = [
                g.iter().sum::<i32>(),
                *g[..=l].iter().max().unwrap(),
                g[3],
                *s.iter().min().unwrap(),
                s[..sl].iter().sum::<i32>(),
                i32::from(g.iter().all(|v| *v > -40)) + 2 * i32::from(g.iter().any(|v| *v > 40)),
                s[1],
            ];
            assert_eq!(
                &o[7 * i..7 * i + 7],
                &want,
                "work-item {i}, checked: {checked}"
            );
            let fmax = g.iter().map(|v| *v as f32 * 0.5).fold(f32::MIN, f32::max);
            assert_eq!(f.to_vec()[i], fmax);
        }
    }
}

#[test]
fn a_collective_that_not_every_work_item_reaches_is_a_divergence() {
    let p = build(
        "kernel void k(global int *out) {\n  if (get_local_id(0) != 2)\n    out[get_global_id(0)] = work_group_reduce_add(1);\n}\n",
        "-cl-std=CL3.0",
    );
    let out = Buffer::<i32>::new(8);
    let e = p
        .kernel("k")
        .unwrap()
        .run(
            &Runtime::new(),
            NdRange::new([8]).local([4]),
            &[Arg::Buffer(&out)],
        )
        .unwrap_err();
    assert!(e.to_string().contains("divergence"), "{e}");
}

#[test]
fn sub_group_reverse_through_local_memory_with_partial_sub_groups() {
    // The CTS sub-group barrier test (the tour's "sub-group reverse"):
    // global 2000, local 200; sub-groups of 7 and 32 leave the last
    // sub-group of each group partial.
    let p = build(
        r#"
        kernel void reverse(global const uint *in, global uint *out, local uint *tmp) {
            size_t g = get_global_id(0);
            uint size = get_sub_group_size(), lid = get_sub_group_local_id();
            uint base = get_sub_group_id() * get_max_sub_group_size();
            tmp[base + lid] = in[g];
            sub_group_barrier(CLK_LOCAL_MEM_FENCE);
            out[g] = tmp[base + size - 1 - lid];
        }"#,
        "-cl-std=CL3.0",
    );
    let data: Vec<u32> = (0..2000u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let input = Buffer::from_slice(&data);
    for sg in [7usize, 32] {
        let out = Buffer::<u32>::new(2000);
        let found = common::run(
            &p,
            "reverse",
            NdRange::new([2000]).local([200]).sub_group_size(sg),
            &[Arg::Buffer(&input), Arg::Buffer(&out), Arg::Local(800)],
            true,
        );
        assert!(found.is_empty(), "{found:?}");
        let mut want = vec![0u32; 2000];
        for (gi, group) in data.chunks(200).enumerate() {
            for (si, s) in group.chunks(sg).enumerate() {
                for i in 0..s.len() {
                    want[gi * 200 + si * sg + i] = s[s.len() - 1 - i];
                }
            }
        }
        assert_eq!(out.to_vec(), want, "sub-groups of {sg}");
    }
}

/// The built-ins with a second result stored through a pointer, against
/// Rust's own functions: fract, modf, sincos (floats), frexp and remquo
/// (ints), on vectors, in private and global memory.
#[test]
fn built_ins_with_a_second_result_through_a_pointer() {
    let p = build(
        r#"
        kernel void split(global const float *x, global float *r, global float *o, global int *e) {
            int i = get_global_id(0);
            float2 v = (float2)(x[i], -x[i]);
            float2 w;
            float2 f = fract(v, &w);
            r[8 * i + 0] = f.x; o[8 * i + 0] = w.x;
            r[8 * i + 1] = f.y; o[8 * i + 1] = w.y;
            float m = modf(x[i], &o[8 * i + 2]);
            r[8 * i + 2] = m;
            float c;
            r[8 * i + 3] = sincos(x[i], &c);
            o[8 * i + 3] = c;
            int ex;
            r[8 * i + 4] = frexp(x[i], &ex);
            e[2 * i] = ex;
            int q;
            r[8 * i + 5] = remquo(x[i], 0.75f, &q);
            e[2 * i + 1] = q;
        }"#,
        "",
    );
    let xs = [2.75f32, -1.25, 0.5, 7.0];
    let x = Buffer::from_slice(&xs);
    let (r, o, e) = (
        Buffer::<f32>::new(32),
        Buffer::<f32>::new(32),
        Buffer::<i32>::new(8),
    );
    run(
        &p,
        "split",
        NdRange::new([4]),
        &[
            Arg::Buffer(&x),
            Arg::Buffer(&r),
            Arg::Buffer(&o),
            Arg::Buffer(&e),
        ],
    );
    let (r, o, e) = (r.to_vec(), o.to_vec(), e.to_vec());
    for (i, &v) in xs.iter().enumerate() {
        assert_eq!(
            (r[8 * i], o[8 * i]),
            (v - v.floor(), v.floor()),
            "fract {v}"
        );
        assert_eq!(
            (r[8 * i + 1], o[8 * i + 1]),
            (-v - (-v).floor(), (-v).floor())
        );
        assert_eq!(
            (r[8 * i + 2], o[8 * i + 2]),
            (v - v.trunc(), v.trunc()),
            "modf {v}"
        );
        assert!((r[8 * i + 3] - v.sin()).abs() < 1e-6 && (o[8 * i + 3] - v.cos()).abs() < 1e-6);
        let (m, ex) = (r[8 * i + 4], e[2 * i]);
        assert!(
            (0.5..1.0).contains(&m.abs()) && m * 2f32.powi(ex) == v,
            "frexp {v}"
        );
        let n = (v / 0.75).round_ties_even();
        assert_eq!(
            (r[8 * i + 5], e[2 * i + 1]),
            (v - n * 0.75, n as i32),
            "remquo {v}"
        );
    }
}

/// Bit counts and the selects of OpenCL.std on every element type: a
/// scalar condition is tested for nonzero, a vector one by its most
/// significant bits; bitselect on floats works on their bits.
#[test]
fn bit_counts_and_selects_on_floats_and_vectors() {
    let p = build(
        r#"
        kernel void bits(global uint *o, global float *f) {
            volatile uint x = 0xF0F0u;
            volatile float a = 1.5f, b = -2.0f;
            volatile int yes = 3, no = 0;
            o[0] = popcount(x);
            o[1] = popcount((ulong)0xFFFFFFFFFFFFFFFFUL) == 64;
            f[0] = select(a, b, yes);
            f[1] = select(a, b, no);
            float2 s = select((float2)(a, a), (float2)(b, b), (int2)(-1, 1));
            f[2] = s.x; f[3] = s.y;
            f[4] = bitselect(a, b, as_float(0x80000000u));
        }"#,
        "",
    );
    let (o, f) = (Buffer::<u32>::new(2), Buffer::<f32>::new(5));
    run(
        &p,
        "bits",
        NdRange::new([1]),
        &[Arg::Buffer(&o), Arg::Buffer(&f)],
    );
    assert_eq!(o.to_vec(), [8, 1]);
    // bitselect takes b's sign bit, a's other bits: -1.5.
    assert_eq!(f.to_vec(), [-2.0, 1.5, -2.0, 1.5, -1.5]);
}

/// erf, erfc, lgamma, lgamma_r, tgamma, nextafter, ilogb and nan, against
/// values known in closed form (and Rust's own functions where it has
/// them), in float and double.
#[test]
fn the_c_library_math_built_ins() {
    let p = build(
        r#"
        kernel void m(global float *f, global double *d, global int *i) {
            volatile float x = 0.5f, one = 1.0f, five = 5.0f;
            volatile double y = 0.5;
            f[0] = erf(0.0f); f[1] = erfc(0.0f); f[2] = tgamma(five); f[3] = lgamma(one);
            f[4] = nextafter(one, 2.0f); f[5] = erf(x);
            int sign;
            f[6] = lgamma_r(-0.5f, &sign);
            i[0] = sign;
            i[1] = ilogb(8.0f); i[2] = ilogb(0.75f);
            i[3] = as_int(nan(5u));
            d[0] = tgamma(y) * tgamma(y); d[1] = nextafter(1.0, 0.0); d[2] = erfc(y);
            int2 il = ilogb((double2)(1024.0, 0.1));
            i[4] = il.x; i[5] = il.y;
        }"#,
        "-cl-std=CL1.2",
    );
    let (f, d, i) = (
        Buffer::<f32>::new(7),
        Buffer::<f64>::new(3),
        Buffer::<i32>::new(6),
    );
    run(
        &p,
        "m",
        NdRange::new([1]),
        &[Arg::Buffer(&f), Arg::Buffer(&d), Arg::Buffer(&i)],
    );
    let (f, d, i) = (f.to_vec(), d.to_vec(), i.to_vec());
    assert_eq!(&f[..4], &[0.0, 1.0, 24.0, 0.0]);
    assert_eq!(f[4], 1.0 + f32::EPSILON);
    assert!((f[5] - 0.520_499_9).abs() < 1e-6, "{}", f[5]);
    // Γ(-1/2) = -2√π: lgamma is ln(2√π), the sign negative.
    let want = (2.0 * std::f32::consts::PI.sqrt()).ln();
    assert!(
        (f[6] - want).abs() < 1e-6 && i[0] == -1,
        "{} {}",
        f[6],
        i[0]
    );
    assert_eq!(&i[1..3], &[3, -1]);
    assert_eq!(i[3] as u32, 0x7fc0_0005);
    assert!((d[0] - std::f64::consts::PI).abs() < 1e-14, "{}", d[0]);
    assert_eq!(d[1], 1.0 - f64::EPSILON / 2.0);
    assert!((d[2] - 0.479_500_122_186_953_5).abs() < 1e-15, "{}", d[2]);
    assert_eq!(&i[4..], &[10, -4]);
}

/// The sub-group extensions (cl_khr_subgroup_shuffle, _shuffle_relative,
/// _ballot, _non_uniform_vote, _non_uniform_arithmetic) against a
/// sequential computation over the sub-groups clsync forms (read back
/// from the kernel: their size, and each item's lane).
#[test]
fn sub_group_shuffles_ballots_votes_and_scans() {
    let p = build(
        r#"
        kernel void sg(global int *o) {
            int g = get_global_id(0);
            int l = get_sub_group_local_id();
            int v = g * 3 + 1;
            o[g * 10 + 0] = get_sub_group_size();
            o[g * 10 + 1] = l;
            o[g * 10 + 2] = sub_group_shuffle(v, (uint)(get_sub_group_size() - 1 - l));
            o[g * 10 + 3] = sub_group_shuffle_xor(v, 1u);
            int up = sub_group_shuffle_up(v, 1u);
            o[g * 10 + 4] = l > 0 ? up : -1;
            uint4 b = sub_group_ballot(v % 2 == 0);
            o[g * 10 + 5] = sub_group_ballot_bit_count(b);
            o[g * 10 + 6] = sub_group_ballot_inclusive_scan(b);
            o[g * 10 + 7] = sub_group_non_uniform_scan_exclusive_max(v);
            o[g * 10 + 8] = sub_group_non_uniform_reduce_xor(v);
            o[g * 10 + 9] = sub_group_elect() + 2 * sub_group_non_uniform_all(v > 0);
        }"#,
        "-cl-std=CL2.0",
    );
    let n = 48;
    let o = Buffer::<i32>::new(n * 10);
    run(&p, "sg", NdRange::new([n]).local([24]), &[Arg::Buffer(&o)]);
    let o = o.to_vec();
    let at = |g: usize, k: usize| o[g * 10 + k];
    let v = |g: usize| (g * 3 + 1) as i32;
    for g in 0..n {
        let (size, l) = (at(g, 0) as usize, at(g, 1) as usize);
        assert!(size > 0 && l < size, "{size} {l}");
        let first = g - l; // the sub-group's first item
        let lane = |k: usize| first + k;
        assert_eq!(at(g, 2), v(lane(size - 1 - l)), "shuffle at {g}");
        if (l ^ 1) < size {
            assert_eq!(at(g, 3), v(lane(l ^ 1)), "xor at {g}");
        }
        assert_eq!(at(g, 4), if l > 0 { v(g - 1) } else { -1 });
        let even: Vec<bool> = (0..size).map(|k| v(lane(k)) % 2 == 0).collect();
        assert_eq!(at(g, 5), even.iter().filter(|e| **e).count() as i32);
        assert_eq!(at(g, 6), even[..=l].iter().filter(|e| **e).count() as i32);
        let max_before = (0..l).map(|k| v(lane(k))).max().unwrap_or(i32::MIN);
        assert_eq!(at(g, 7), max_before, "exclusive max at {g}");
        assert_eq!(at(g, 8), (0..size).fold(0, |a, k| a ^ v(lane(k))));
        assert_eq!(at(g, 9), i32::from(l == 0) + 2);
    }
}

/// A `cl_khr_subgroups` collective waits for every lane of the sub-group:
/// one that part of it skips is a reported divergence naming its place,
/// not a hang. A shuffle (`cl_khr_subgroup_shuffle_relative`) in the same
/// place runs over the lanes that reach it: each reads the lane it names
/// among them.
#[test]
fn a_collective_that_part_of_a_sub_group_skips_is_a_divergence() {
    let p = build(
        "kernel void k(global int *o) {\n  int l = get_sub_group_local_id();\n  o[l] = l > 0 ? sub_group_reduce_add(l) : -1;\n}\n\
         kernel void s(global int *o) {\n  int l = get_sub_group_local_id();\n  o[l] = l > 0 ? sub_group_shuffle_up(l, 1u) : -1;\n}\n",
        "-cl-std=CL2.0",
    );
    let o = Buffer::<i32>::new(8);
    let run = |name: &str| {
        p.kernel(name).unwrap().run(
            &Runtime::new(),
            NdRange::new([8]).local([8]),
            &[Arg::Buffer(&o)],
        )
    };
    let e = run("k").unwrap_err().to_string();
    assert!(
        e.contains("barrier divergence") && e.contains("test.cl:3"),
        "{e}"
    );
    run("s").unwrap();
    let o = o.to_vec();
    assert_eq!(o[0], -1);
    // Lane 1's source, lane 0, is not active: its value is undefined.
    assert_eq!(&o[2..], &[1, 2, 3, 4, 5, 6], "{o:?}");
}

/// `vload_half`, `vstore_half` and their vector, aligned and rounding
/// forms, on `half` buffers (storage only, as OpenCL C without
/// cl_khr_fp16 allows).
#[test]
fn half_loads_and_stores_with_rounding_modes() {
    let p = build(
        r#"
        kernel void h(global half *p, global float *f) {
            f[0] = vload_half(1, p);
            float4 v = vload_half4(1, p);
            f[1] = v.x + v.w;
            vstore_half(1.0f + 0x1p-11f, 8, p);
            vstore_half_rtp(1.0f + 0x1p-11f, 9, p);
            vstore_half4(v * 2.0f, 3, p);
            float3 w = vloada_half3(1, p);
            f[2] = w.z;
            vstorea_half3_rtz(w, 4, p);
        }"#,
        "",
    );
    // Halves 0..8: 0.5, 1, 1.5, ... as bits.
    let halves: Vec<u16> = (0..8).map(|k| 0x3800 + 0x200 * k as u16).collect();
    let mut bytes: Vec<u8> = halves.iter().flat_map(|h| h.to_le_bytes()).collect();
    bytes.resize(40, 0);
    let buf = Buffer::from_slice(&bytes);
    let f = Buffer::<f32>::new(3);
    run(
        &p,
        "h",
        NdRange::new([1]),
        &[Arg::Buffer(&buf), Arg::Buffer(&f)],
    );
    let b = buf.to_vec();
    let half = |k: usize| u16::from_le_bytes([b[2 * k], b[2 * k + 1]]);
    // halves[1] is 0x3a00, 0.75.
    assert_eq!(f.to_vec()[0], 0.75);
    assert_eq!(half(8), 0x3c00, "1 + 2^-11 to nearest even is 1");
    assert_eq!(half(9), 0x3c01, "toward +inf is the next half");
    // v: halves 4..8 (2, 2.5, 3, 3.5), stored doubled at 12..16.
    let v: Vec<f32> = (4..8).map(|k| half_value(halves[k])).collect();
    assert_eq!(f.to_vec()[1], v[0] + v[3]);
    for (k, x) in v.iter().enumerate() {
        assert_eq!(half_value(half(12 + k)), 2.0 * x, "vstore_half4 lane {k}");
    }
    // vloada_half3(1): elements 4, 5, 6 (aligned vectors of 3 take 4).
    assert_eq!(f.to_vec()[2], v[2]);
    for (k, x) in v.iter().take(3).enumerate() {
        assert_eq!(half_value(half(16 + k)), *x, "vstorea_half3 lane {k}");
    }
}

/// A `half`'s value, as a float.
fn half_value(h: u16) -> f32 {
    common::half_value(h) as f32
}

/// `vloadn` and `vstoren` (whose vector size is a literal operand, not a
/// value) on floats and ints, at element offsets.
#[test]
fn vector_loads_and_stores_at_offsets() {
    let p = build(
        r#"
        kernel void v(global const float *p, global float *o, global int *q) {
            float4 x = vload4(1, p);
            o[0] = x.x + x.w;
            vstore4(x, 2, o);
            int3 y = vload3(1, (global const int *)q);
            vstore3(y * 10, 2, q);
            float2 z = vload2(3, p);
            o[1] = z.y;
        }"#,
        "",
    );
    let src: Vec<f32> = (0..8).map(|k| k as f32).collect();
    let (p_buf, o) = (Buffer::from_slice(&src), Buffer::<f32>::new(12));
    let q = Buffer::from_slice(&(0..9).collect::<Vec<i32>>());
    run(
        &p,
        "v",
        NdRange::new([1]),
        &[Arg::Buffer(&p_buf), Arg::Buffer(&o), Arg::Buffer(&q)],
    );
    let o = o.to_vec();
    assert_eq!((o[0], o[1]), (11.0, 7.0));
    assert_eq!(&o[8..12], &[4.0, 5.0, 6.0, 7.0]);
    assert_eq!(&q.to_vec()[6..9], &[30, 40, 50]);
}

/// `mad_sat` on 8-, 32- and 64-bit integers, signed and unsigned: the
/// exact `a * b + c`, clamped to the type.
#[test]
fn mad_sat_clamps_the_exact_result() {
    let p = build(
        r#"
        kernel void m(global long *o, global ulong *u) {
            volatile int big = INT_MAX;
            volatile long lbig = LONG_MAX;
            o[0] = mad_sat(big, 2, 0);
            o[1] = mad_sat(-big, 2, 0);
            o[2] = mad_sat(big, 2, -big);
            o[3] = mad_sat((char)100, (char)2, (char)-100);
            o[4] = mad_sat(lbig, 3L, 0L);
            o[5] = mad_sat(-lbig, 3L, 5L);
            o[6] = mad_sat(lbig, 1L, -1L);
            u[0] = mad_sat((uint)UINT_MAX, 2u, 0u);
            u[1] = mad_sat((ulong)ULONG_MAX, 2UL, 1UL);
            u[2] = mad_sat((uchar)20, (uchar)10, (uchar)50);
            u[3] = mad_sat((uchar)20, (uchar)12, (uchar)50);
        }"#,
        "",
    );
    let (o, u) = (Buffer::<i64>::new(7), Buffer::<u64>::new(4));
    run(
        &p,
        "m",
        NdRange::new([1]),
        &[Arg::Buffer(&o), Arg::Buffer(&u)],
    );
    let m = i32::MAX as i64;
    assert_eq!(
        o.to_vec(),
        [m, -m - 1, m, 100, i64::MAX, i64::MIN, i64::MAX - 1]
    );
    assert_eq!(u.to_vec(), [u32::MAX as u64, u64::MAX, 250, 255]);
}

/// `restrict` pointers through an inlined function: the optimizer's
/// aliasing scopes, which llvm-spirv can encode as declarations clsync has
/// no use for (and that are left out), do not keep the kernel from
/// building, and it computes what it should.
#[test]
fn restrict_pointers_through_an_inlined_function() {
    let p = build(
        r#"
        static inline void axpy(global float *restrict y, global const float *restrict x, float a, int n) {
            for (int i = 0; i < n; i++) y[i] += a * x[i];
        }
        kernel void k(global float *restrict y, global const float *restrict x) {
            int g = get_global_id(0);
            axpy(y + 4 * g, x + 4 * g, 2.0f, 4);
        }"#,
        "",
    );
    let x: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let y = Buffer::from_slice(&vec![1.0f32; 64]);
    let xb = Buffer::from_slice(&x);
    p.kernel("k")
        .unwrap()
        .run(
            &Runtime::new(),
            NdRange::new([16]),
            &[Arg::Buffer(&y), Arg::Buffer(&xb)],
        )
        .unwrap();
    let want: Vec<f32> = x.iter().map(|v| 1.0 + 2.0 * v).collect();
    assert_eq!(y.to_vec(), want);
}

/// A recursive struct (a list's node points to its own type: SPIR-V's
/// forward pointer), linked and walked in private memory.
#[test]
fn a_linked_list_of_a_recursive_struct() {
    let p = build(
        r#"
        typedef struct node { int value; struct node *next; } node;
        kernel void walk(global int *out) {
            node n[8];
            node *head = 0;
            for (int i = 0; i < 8; i++) {
                n[i].value = i * (int)get_global_id(0);
                n[i].next = head;
                head = &n[i];
            }
            int s = 0;
            for (node *x = head; x; x = x->next) s += x->value;
            out[get_global_id(0)] = s;
        }"#,
        "-cl-std=CL2.0",
    );
    let out = Buffer::<i32>::new(16);
    p.kernel("walk")
        .unwrap()
        .run(&Runtime::new(), NdRange::new([16]), &[Arg::Buffer(&out)])
        .unwrap();
    let want: Vec<i32> = (0..16).map(|g| 28 * g).collect();
    assert_eq!(out.to_vec(), want);
}

#[test]
fn a_program_built_for_one_kernel_runs_it_and_refuses_the_others() {
    let dir = std::env::temp_dir().join(format!("clsync-for-one-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("two.cl");
    std::fs::write(
        &file,
        "int twice(int x) { return 2 * x; }
         kernel void a(global int* out) {
             int l = get_local_id(0);
             out[get_global_id(0)] = twice(l);
             barrier(CLK_GLOBAL_MEM_FENCE);
         }
         kernel void b(global int* out) { out[get_global_id(0)] = -1; }",
    )
    .unwrap();
    for checked in [false, true] {
        let p = Program::build_file_for(&file, "", "a", checked).unwrap();
        let out = Buffer::<i32>::new(8);
        let found = p
            .kernel("a")
            .unwrap()
            .run_with(
                &Runtime::new(),
                NdRange::new([8]).local([4]),
                &[Arg::Buffer(&out)],
                |l| l,
                checked,
            )
            .unwrap();
        assert!(found.is_empty(), "{found:?}");
        assert_eq!(out.to_vec(), vec![0, 2, 4, 6, 0, 2, 4, 6]);
        let Err(clsync_opencl::BuildError::NoKernel { name, available }) = p.kernel("b") else {
            panic!("kernel `b` of a program built for `a`");
        };
        assert_eq!((name.as_str(), available), ("b", vec!["a".to_string()]));
    }
    std::fs::remove_dir_all(&dir).ok();
}
