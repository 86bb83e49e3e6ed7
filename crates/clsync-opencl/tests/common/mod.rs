//! What the integration tests share: building a program and running a
//! kernel, either failing the test with the error.

#![allow(dead_code)] // Each test file uses what it needs.

use std::collections::BTreeSet;

use clsync::checker::ReportKind;
use clsync::{Buffer, NdRange, Runtime};
use clsync_opencl::{Arg, Findings, Kernel, Program};

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

/// Runs kernel `name` of `p`, as `engine` makes it (`Kernel::on_coroutines`,
/// `Kernel::without_lanes`, ...), on two threads, with a fresh `i32` buffer
/// of `out` elements as its first argument and those `rest` makes after
/// it; the buffer's contents. Fails on a launch error.
pub fn output_of<'a>(
    p: &'a Program,
    name: &str,
    engine: impl Fn(Kernel<'a>) -> Kernel<'a>,
    range: NdRange,
    out: usize,
    rest: Vec<Arg<'_>>,
) -> Vec<i32> {
    let k = engine(p.kernel(name).unwrap());
    let a = Buffer::<i32>::new(out);
    let mut args = vec![Arg::Buffer(&a)];
    args.extend(rest);
    k.run(&Runtime::with_threads(2), range, &args)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    a.to_vec()
}

/// How a test makes a kernel's engine (`Kernel::on_coroutines`, ...).
pub type Engine = fn(Kernel<'_>) -> Kernel<'_>;

/// The three ways to run a compiled kernel: work-item loops with lane
/// batches, without, and coroutines.
pub fn engines() -> [(&'static str, Engine); 3] {
    [
        ("loops", |k| k),
        ("no lanes", |k| k.without_lanes()),
        ("coroutines", |k| k.on_coroutines()),
    ]
}

/// Kernel `name`'s outputs ([`output_of`]) on work-item loops as built and
/// on `other`, each with a fresh output of `out` elements and the
/// arguments `rest` makes.
pub fn against<'a>(
    p: &Program,
    name: &str,
    other: Engine,
    range: NdRange,
    out: usize,
    rest: impl Fn() -> Vec<Arg<'a>>,
) -> (Vec<i32>, Vec<i32>) {
    let loops = output_of(p, name, |k| k, range.clone(), out, rest());
    let others = output_of(p, name, other, range, out, rest());
    (loops, others)
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

/// What a checked run found, each once: the compiled code's headlines
/// with their lines, and the checker's kinds with their pairs of lines.
pub fn problems(found: &Findings) -> BTreeSet<(String, u32, u32)> {
    let diagnostics = found
        .diagnostics
        .iter()
        .map(|d| (d.headline.clone(), d.site.map_or(0, |s| s.line), 0));
    let checker = found.checker.iter().map(|r| {
        let first = r.first.as_ref().map_or(0, |a| a.site.line);
        (
            format!("{:?}", r.kind),
            first.min(r.site.line),
            first.max(r.site.line),
        )
    });
    diagnostics.chain(checker).collect()
}

/// Runs kernel `k` of `src`, checked, with proofs taken (work-item loops,
/// stopping at a divergence or running on) and without (coroutines,
/// running on), built with `options` optimized and unoptimized; asserts
/// they find the same problems and returns each build's ([`problems`],
/// running on). The launch that stops at a divergence finds what precedes
/// it, which the others find too; where the kernel does not diverge, all
/// of it.
pub fn same_problems_in_each_with(
    src: &str,
    options: &str,
    range: NdRange,
    args: impl Fn() -> Vec<Arg<'static>>,
) -> [BTreeSet<(String, u32, u32)>; 2] {
    let mut out = [BTreeSet::new(), BTreeSet::new()];
    let builds = [options.to_string(), format!("{options} -cl-opt-disable")];
    for (b, options) in builds.iter().enumerate() {
        let options = options.as_str();
        let p: Program = build(src, "k.cl", options);
        let run = |k: clsync_opencl::Kernel, run_on: bool| {
            k.run_with(
                &Runtime::with_threads(2),
                range.clone(),
                &args(),
                |l| l.run_on_divergence(run_on),
                true,
            )
            .map(|f| problems(&f))
            .ok()
        };
        let k = || p.kernel("k").unwrap();
        let reference = run(k().on_coroutines(), true).expect("the reference runs on");
        let running_on = run(k(), true).expect("runs on");
        assert_eq!(running_on, reference, "options {options:?}, running on");
        // A launch that stops at a divergence finds what precedes it; where
        // there is none, everything the reference finds.
        let diverges = reference
            .iter()
            .any(|p| p.0 == format!("{:?}", ReportKind::BarrierDivergence));
        let stopping = run(k(), false);
        match (diverges, stopping) {
            (false, stopping) => assert_eq!(
                stopping.as_ref(),
                Some(&reference),
                "options {options:?}, stopping"
            ),
            (true, Some(stopping)) => assert!(
                stopping.is_subset(&reference),
                "options {options:?}, stopping: {stopping:?} of {reference:?}"
            ),
            (true, None) => {}
        }
        out[b] = running_on;
    }
    out
}

/// [`same_problems_in_each_with`] with no options but the optimization's.
pub fn same_problems_in_each(
    src: &str,
    range: NdRange,
    args: impl Fn() -> Vec<Arg<'static>>,
) -> [BTreeSet<(String, u32, u32)>; 2] {
    same_problems_in_each_with(src, "", range, args)
}
