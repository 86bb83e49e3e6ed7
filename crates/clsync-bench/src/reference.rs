//! Inputs, built from a fixed seed, and the sequential results every
//! implementation is compared with.

pub use clsync_samples::compare;
use clsync_samples::SplitMix;

use crate::{GROUP, HIST_PER_ITEM};

/// A deterministic input sequence, the same for every engine.
fn sequence(n: usize, seed: u64) -> impl Iterator<Item = u64> {
    let mut g = SplitMix(seed);
    (0..n).map(move |_| g.next_u64())
}

/// Reduce input: small whole numbers as floats, so every sum is exact.
pub fn reduce_input(n: usize) -> Vec<f32> {
    sequence(n, 1).map(|v| (v % 16) as f32).collect()
}

/// The sum of `reduce_input`.
pub fn reduce_sum(input: &[f32]) -> f64 {
    input.iter().map(|&v| f64::from(v)).sum()
}

/// Scan input.
pub fn scan_input(n: usize) -> Vec<i32> {
    sequence(n, 2).map(|v| (v % 100) as i32 - 50).collect()
}

/// The inclusive prefix sum.
pub fn scan(input: &[i32]) -> Vec<i32> {
    let mut acc = 0i32;
    input
        .iter()
        .map(|&v| {
            acc = acc.wrapping_add(v);
            acc
        })
        .collect()
}

/// An SGEMM operand: small whole numbers, so products and sums are exact.
pub fn matrix(n: usize, seed: u64) -> Vec<f32> {
    sequence(n * n, seed)
        .map(|v| (v % 8) as f32 - 4.0)
        .collect()
}

/// `a × b` for row-major `n × n` matrices.
pub fn sgemm(a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
    let mut c = vec![0f32; n * n];
    for i in 0..n {
        for k in 0..n {
            let x = a[i * n + k];
            for j in 0..n {
                c[i * n + j] += x * b[k * n + j];
            }
        }
    }
    c
}

/// Histogram input.
pub fn histogram_input(n: usize) -> Vec<u8> {
    // Skewed, so some bins are hot, as in real data.
    sequence(n, 3)
        .map(|v| {
            if v % 4 == 0 {
                (v >> 8) as u8
            } else {
                (v % 32) as u8
            }
        })
        .collect()
}

/// The 256-bin histogram.
pub fn histogram(input: &[u8]) -> Vec<u32> {
    let mut bins = vec![0u32; 256];
    for &b in input {
        bins[b as usize] += 1;
    }
    bins
}

/// The barrier loop's result for a work-item with local id `l`.
pub fn barrier_loop(l: usize, barriers: usize) -> u32 {
    let mut acc = l as u32;
    for _ in 0..barriers {
        acc = acc.wrapping_mul(3).wrapping_add(1);
    }
    acc
}

/// Checks a reduction's total against the sequential sum of `input`.
pub fn check_sum(total: f64, input: &[f32]) -> Result<(), String> {
    let want = reduce_sum(input);
    if total == want {
        Ok(())
    } else {
        Err(format!("sum {total}, expected {want}"))
    }
}

/// The sizes the kernels assume hold.
pub fn check_sizes(reduce: usize, scan: usize, histogram: usize, sgemm: usize) {
    assert!(
        reduce.is_multiple_of(GROUP) && scan.is_multiple_of(GROUP),
        "whole groups"
    );
    assert!(
        histogram.is_multiple_of(GROUP * HIST_PER_ITEM),
        "whole histogram groups"
    );
    assert!(sgemm.is_multiple_of(crate::TILE), "whole tiles");
}
