//! What the integration tests share: building a program and running a
//! kernel, either failing the test with the error.

#![allow(dead_code)] // Each test file uses what it needs.

use clsync::{NdRange, Runtime};
use clsync_opencl::{Arg, Findings, Program};

/// Builds `src` as the file `name` with `options`, or fails with clang's
/// messages.
pub fn build(src: &str, name: &str, options: &str) -> Program {
    Program::build(src, name, options).unwrap_or_else(|e| panic!("build failed:\n{e}"))
}

/// Runs kernel `name` of `p` on a fresh runtime, checked or not, and
/// returns what a checked run found; fails on a launch error.
pub fn run(p: &Program, name: &str, range: NdRange, args: &[Arg<'_>], checked: bool) -> Findings {
    p.kernel(name)
        .unwrap()
        .run_with(&Runtime::new(), range, args, |l| l, checked)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Each diagnostic a checked run found: its headline and its line.
pub fn headlines_at(found: &Findings) -> Vec<(&str, u32)> {
    found
        .diagnostics
        .iter()
        .map(|d| (d.headline.as_str(), d.site.map_or(0, |s| s.line)))
        .collect()
}

/// The value of a `half`'s 16-bit encoding: normals, subnormals, zeros and
/// infinities (the tests' own decoder, independent of the engine's).
pub fn half_value(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = (h >> 10) & 0x1f;
    let m = (h & 0x3ff) as f64;
    match e {
        0 => sign * m * 2f64.powi(-24),
        31 => sign * f64::INFINITY,
        e => sign * (1.0 + m / 1024.0) * 2f64.powi(e as i32 - 15),
    }
}
