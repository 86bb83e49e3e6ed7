//! `half` arithmetic (cl_khr_fp16): each operation's result is the exact
//! result rounded to the nearest half, ties to even (the specification's
//! correctly rounded basic operations), against a sequential computation
//! that rounds by the definition (scale by the half's ulp at the value's
//! binade, round, overflow to infinity); conversions, vectors, bitcasts,
//! arguments and memory too; unchecked and checked.

mod common;

use clsync::{Buffer, NdRange};
use clsync_opencl::Arg;

/// `x` rounded to the nearest half, ties to even, by the definition.
fn to_half(x: f64) -> f64 {
    if x.is_nan() || x == 0.0 {
        return x;
    }
    let a = x.abs();
    // The binade's exponent, no lower than the normals' smallest (-14).
    let e = (a.log2().floor() as i32).max(-14);
    let ulp = 2f64.powi(e - 10);
    let q = a / ulp;
    let mut r = q.round();
    if (q - q.floor() - 0.5).abs() == 0.0 && r % 2.0 != 0.0 {
        r -= 1.0; // a tie: to even
    }
    let y = r * ulp;
    // Past the largest half (65504) by half an ulp or more: infinity.
    let y = if y >= 65520.0 { f64::INFINITY } else { y };
    y.copysign(x)
}

const SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void ops(global const half *a, global const half *b, global float *out, global half *hout, half k) {
    int i = get_global_id(0);
    half x = a[i], y = b[i];
    out[i * 8 + 0] = x + y;
    out[i * 8 + 1] = x - y;
    out[i * 8 + 2] = x * y;
    out[i * 8 + 3] = x / y;
    out[i * 8 + 4] = sqrt(fabs(x));
    out[i * 8 + 5] = (x < y) ? 1.0f : 0.0f;
    out[i * 8 + 6] = (float)(half)((float)x * 3.0f + 0.1f);
    out[i * 8 + 7] = x * k;
    half2 v = (half2)(x, y) * (half2)(k, x);
    hout[i * 2] = v.x;
    hout[i * 2 + 1] = v.y;
}
kernel void bits(global const short *s, global short *back, global float *f) {
    int i = get_global_id(0);
    half h = as_half(s[i]);
    f[i] = h;
    back[i] = as_short((half)(h * (half)2.0f));
}
kernel void modes(global const float *f, global const int *k, global half *h) {
    int i = get_global_id(0);
    h[i * 6 + 0] = convert_half_rtz(f[i]);
    h[i * 6 + 1] = convert_half_rtp(f[i]);
    h[i * 6 + 2] = convert_half_rtn(f[i]);
    h[i * 6 + 3] = convert_half_rte(f[i]);
    h[i * 6 + 4] = convert_half_rtz(k[i]);
    h[i * 6 + 5] = convert_half_rtp(k[i]);
}
kernel void vectors(global const half *in, global half *out, global half *whole) {
    int i = get_global_id(0);
    half4 v = vload4(i, in);
    half4 w;
    half4 f = fract(v * (half)1.5f, &w);
    vstore4(v + (half4)(1.0f), i, out);
    whole[i] = w.x + f.x;
}
kernel void convert(global const double *d, global half *h, global int *n) {
    int i = get_global_id(0);
    h[i] = (half)d[i];
    n[i] = convert_int((half)d[i]);
}
"#;

fn half_bits(x: f64) -> u16 {
    // The test's own encoder of a value that is a half already.
    if x.is_infinite() {
        return if x > 0.0 { 0x7c00 } else { 0xfc00 };
    }
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    if a == 0.0 {
        return sign;
    }
    let e = a.log2().floor() as i32;
    if e < -14 {
        return sign | (a / 2f64.powi(-24)) as u16;
    }
    let m = ((a / 2f64.powi(e) - 1.0) * 1024.0) as u16;
    sign | (((e + 15) as u16) << 10) | m
}

#[test]
fn half_operations_round_to_the_nearest_half() {
    let p = common::build(SRC, "half.cl", "-cl-std=CL2.0");
    let xs: Vec<f64> = vec![
        1.0, 0.1, -2.5, 1000.0, 3.3, 6e-5, 65000.0, -0.333, 7.0, 1e-7,
    ];
    let ys: Vec<f64> = vec![3.0, 0.2, 0.7, 999.0, -2.9, 3e-5, 2.0, 0.125, -7.0, 1e-3];
    let a: Vec<u16> = xs.iter().map(|x| half_bits(to_half(*x))).collect();
    let b: Vec<u16> = ys.iter().map(|x| half_bits(to_half(*x))).collect();
    let n = a.len();
    let k = to_half(1.7);
    for checked in [false, true] {
        let (ab, bb) = (Buffer::from_slice(&a), Buffer::from_slice(&b));
        let out = Buffer::<f32>::new(8 * n);
        let hout = Buffer::<u16>::new(2 * n);
        let found = common::run(
            &p,
            "ops",
            NdRange::new([n]),
            &[
                Arg::Buffer(&ab),
                Arg::Buffer(&bb),
                Arg::Buffer(&out),
                Arg::Buffer(&hout),
                Arg::Value(half_bits(k).to_le_bytes().to_vec()),
            ],
            checked,
        );
        assert!(found.is_empty(), "{found:?}");
        let (o, ho) = (out.to_vec(), hout.to_vec());
        for i in 0..n {
            let (x, y) = (common::half_value(a[i]), common::half_value(b[i]));
            let want = [
                to_half(x + y),
                to_half(x - y),
                to_half(x * y),
                to_half(x / y),
                to_half(x.abs().sqrt()),
                if x < y { 1.0 } else { 0.0 },
                to_half((x as f32 * 3.0 + 0.1) as f64),
                to_half(x * k),
            ];
            for (j, w) in want.iter().enumerate() {
                assert_eq!(o[i * 8 + j] as f64, *w, "op {j} of {x} and {y}");
            }
            assert_eq!(
                common::half_value(ho[2 * i]),
                to_half(x * k),
                "vector x at {i}"
            );
            assert_eq!(
                common::half_value(ho[2 * i + 1]),
                to_half(y * x),
                "vector y at {i}"
            );
        }
    }
}

#[test]
fn half_bits_conversions_and_double_rounding() {
    let p = common::build(SRC, "half.cl", "-cl-std=CL2.0");
    let s: Vec<i16> = vec![0x3c00, 0x7bff, 0x0001, -0x4400, 0x3555];
    let sb = Buffer::from_slice(&s);
    let back = Buffer::<i16>::new(s.len());
    let f = Buffer::<f32>::new(s.len());
    common::run(
        &p,
        "bits",
        NdRange::new([s.len()]),
        &[Arg::Buffer(&sb), Arg::Buffer(&back), Arg::Buffer(&f)],
        false,
    );
    for (i, h) in s.iter().enumerate() {
        let v = common::half_value(*h as u16);
        assert_eq!(f.to_vec()[i] as f64, v);
        assert_eq!(
            common::half_value(back.to_vec()[i] as u16),
            to_half(v * 2.0)
        );
    }
    // A double half-way between two halves only after rounding to float
    // first: converted once, it rounds by the double's own value.
    let tie = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
    let d = Buffer::from_slice(&[tie, 70000.0, -3.75, 2049.0]);
    let h = Buffer::<u16>::new(4);
    let n = Buffer::<i32>::new(4);
    common::run(
        &p,
        "convert",
        NdRange::new([4]),
        &[Arg::Buffer(&d), Arg::Buffer(&h), Arg::Buffer(&n)],
        true,
    );
    let got: Vec<f64> = h.to_vec().iter().map(|x| common::half_value(*x)).collect();
    assert_eq!(got, [1.0 + 2f64.powi(-10), f64::INFINITY, -3.75, 2048.0]);
    assert_eq!(n.to_vec()[2..], [-3, 2048]);
}

#[test]
fn conversions_to_half_take_their_rounding_modes() {
    let p = common::build(SRC, "half.cl", "-cl-std=CL2.0");
    let f = [
        1.0f32 + 2f32.powi(-11),
        -1.0 - 3.0 * 2f32.powi(-12),
        70000.0,
        0.1,
    ];
    let k = [2049i32, -2051, 70000, 3];
    let (fb, kb) = (Buffer::from_slice(&f), Buffer::from_slice(&k));
    let h = Buffer::<u16>::new(24);
    common::run(
        &p,
        "modes",
        NdRange::new([4]),
        &[Arg::Buffer(&fb), Arg::Buffer(&kb), Arg::Buffer(&h)],
        false,
    );
    let got: Vec<f64> = h.to_vec().iter().map(|x| common::half_value(*x)).collect();
    let ulp1 = 2f64.powi(-10);
    // 1 + 2^-11: a tie between 1 and 1 + 2^-10.
    assert_eq!(got[0..4], [1.0, 1.0 + ulp1, 1.0, 1.0]);
    // -(1 + 3 * 2^-12): between -(1 + 2^-10) and -1.
    assert_eq!(got[6..10], [-1.0, -1.0, -1.0 - ulp1, -1.0 - ulp1]);
    // 70000: past the largest half; toward zero and down stay finite.
    assert_eq!(
        got[12..16],
        [65504.0, f64::INFINITY, 65504.0, f64::INFINITY]
    );
    // Integers: 2049 toward zero is 2048, up is 2050; -2051 toward zero
    // -2050, up -2050; 70000 toward zero 65504; 3 exactly.
    assert_eq!(
        [got[4], got[5], got[10], got[11], got[16], got[22]],
        [2048.0, 2050.0, -2050.0, -2050.0, 65504.0, 3.0]
    );
}

#[test]
fn half_vectors_load_and_store_two_bytes_a_lane() {
    let p = common::build(SRC, "half.cl", "-cl-std=CL2.0");
    let vals: Vec<f64> = (0..8).map(|k| to_half(k as f64 * 0.75 - 1.0)).collect();
    let input = Buffer::from_slice(&vals.iter().map(|v| half_bits(*v)).collect::<Vec<_>>());
    // A guard half after the output: vstore4 must not write past its lanes.
    let out = Buffer::from_slice(&[0x7777u16; 9]);
    let whole = Buffer::<u16>::new(2);
    for checked in [false, true] {
        common::run(
            &p,
            "vectors",
            NdRange::new([2]),
            &[Arg::Buffer(&input), Arg::Buffer(&out), Arg::Buffer(&whole)],
            checked,
        );
        let got: Vec<f64> = out
            .to_vec()
            .iter()
            .map(|h| common::half_value(*h))
            .collect();
        let want: Vec<f64> = vals.iter().map(|v| to_half(v + 1.0)).collect();
        assert_eq!(got[..8], want[..]);
        assert_eq!(out.to_vec()[8], 0x7777);
        for i in 0..2 {
            // fract of the first lane times 1.5, plus its floor (the
            // second result stored through the half pointer): the product.
            let x = to_half(vals[4 * i] * 1.5);
            let (fl, fr) = (x.floor(), to_half(x - x.floor()));
            assert_eq!(
                common::half_value(whole.to_vec()[i]),
                to_half(fl + fr),
                "lane {i}"
            );
        }
    }
}
