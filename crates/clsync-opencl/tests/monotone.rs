//! A divergent region run together where a batch's lanes agree, decided
//! from the first and the last lane where the condition compares a value
//! that steps from lane to lane with one the batch shares
//! (`together::Fx::monotone_agreement`). Each kernel takes such a branch
//! in batches where every lane agrees, where they part, and where the
//! stepping value wraps inside a batch (unsigned and signed), with steps up
//! and down and over one; each runs with batches, without and on
//! coroutines against a sequential reference.

mod common;

use clsync::{Buffer, NdRange};
use clsync_opencl::{Arg, Program};

const SRC: &str = r#"
// Each branch guards a store (a store on one side only, which the front
// end cannot make a select), so that the batch's lanes part there.

// Unsigned: `l - k` wraps below zero inside the batch that holds `k`.
kernel void unsigned_wrap(global int *out, global const int *in, uint k, uint n) {
    size_t g = get_global_id(0);
    uint l = (uint)get_local_id(0);
    if (l - k < n)
        out[g] = in[g] * 3 + 1;
}

// Signed: a value stepping by 2^24 wraps past INT_MAX.
kernel void signed_wrap(global int *out, global const int *in, int base, int k) {
    size_t g = get_global_id(0);
    int x = base + (int)get_local_id(0) * 0x1000000;
    if (x < k)
        out[g] = in[g] - 7;
}

// Stepping down by three; an equality with a shared value.
kernel void down_and_equal(global int *out, global const int *in, int k, int e) {
    size_t g = get_global_id(0);
    int x = 1000 - 3 * (int)get_local_id(0);
    if (x > k)
        out[g] = in[g] + 5;
    if (x == e)
        out[g] = in[g] * 2;
}
"#;

fn program() -> Program {
    common::build(SRC, "monotone.cl", "-cl-std=CL2.0")
}

fn input(n: usize) -> Vec<i32> {
    (0..n).map(|i| (i as i32 * 13) % 29 - 9).collect()
}

fn check(p: &Program, name: &str, n: usize, local: usize, args: &[i32], want: &[i32]) {
    let src = Buffer::from_slice(&input(n));
    for (engine, e) in common::engines() {
        let mut rest = vec![Arg::Buffer(&src)];
        rest.extend(args.iter().map(|a| Arg::of(&[*a])));
        let out = common::output_of(p, name, e, NdRange::new([n]).local([local]), n, rest);
        assert_eq!(out, want, "{name} {args:?} on {engine}, groups of {local}");
    }
}

#[test]
fn an_unsigned_value_that_wraps_inside_a_batch() {
    let p = program();
    let (n, local) = (128, 64);
    let src = input(n);
    for (k, count) in [(0u32, 8u32), (3, 2), (13, 5), (60, 10), (9, 0), (70, 4)] {
        let want: Vec<i32> = (0..n)
            .map(|g| {
                let l = (g % local) as u32;
                if l.wrapping_sub(k) < count {
                    src[g] * 3 + 1
                } else {
                    0
                }
            })
            .collect();
        check(
            &p,
            "unsigned_wrap",
            n,
            local,
            &[k as i32, count as i32],
            &want,
        );
    }
}

#[test]
fn a_signed_value_that_wraps_inside_a_batch() {
    let p = program();
    let (n, local) = (64, 16);
    let src = input(n);
    for (base, k) in [
        (0, 0x0300_0000),
        (0x7C00_0000, 0x7E00_0000),
        (i32::MAX - 0x0200_0000, 0),
        (-0x0400_0000, 1),
        (i32::MIN, i32::MIN + 0x0500_0000),
    ] {
        let want: Vec<i32> = (0..n)
            .map(|g| {
                let x = base.wrapping_add((g % local) as i32 * 0x0100_0000);
                if x < k {
                    src[g] - 7
                } else {
                    0
                }
            })
            .collect();
        check(&p, "signed_wrap", n, local, &[base, k], &want);
    }
}

#[test]
fn a_value_stepping_down_and_an_equality() {
    let p = program();
    let (n, local) = (96, 32);
    let src = input(n);
    for (k, e) in [
        (-5, 2000),
        (1000, 1000),
        (979, 982),
        (900, 976),
        (1100, 907),
        (0, 5),
    ] {
        let want: Vec<i32> = (0..n)
            .map(|g| {
                let x = 1000 - 3 * (g % local) as i32;
                let mut v = 0;
                if x > k {
                    v = src[g] + 5;
                }
                if x == e {
                    v = src[g] * 2;
                }
                v
            })
            .collect();
        check(&p, "down_and_equal", n, local, &[k, e], &want);
    }
}
