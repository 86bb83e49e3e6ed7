//! Sample kernels for clsync, each checked against a sequential reference.
//!
//! These are what `clsync` (the command line, with no arguments) runs, what
//! the integration tests run at small sizes, and what the benchmarks time.
//! Each sample builds its inputs from a fixed seed, runs on a
//! [`Runtime`], and compares the result with a plain
//! sequential computation.
//!
//! Where to start reading: the [`Sample`] trait and [`all`], then one
//! sample's module (`reduce` is the shortest).

pub mod histogram;
pub mod message_passing;
pub mod reduce;
pub mod scan;
pub mod subgroup_reverse;

use std::fmt;
use std::time::Duration;

use clsync::{LaunchError, Runtime};

pub use histogram::Histogram;
pub use message_passing::MessagePassing;
pub use reduce::Reduce;
pub use scan::Scan;
pub use subgroup_reverse::SubGroupReverse;

/// How big a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// Small enough for tests in debug builds.
    Small,
    /// The size the command line runs by default.
    Full,
}

/// The measured result of one sample run.
#[derive(Clone, Debug)]
pub struct Report {
    /// The sample.
    pub name: &'static str,
    /// The problem size in words.
    pub size: String,
    /// Time spent in launches (or, for message passing, in the exchange).
    pub elapsed: Duration,
    /// Throughput: value and unit.
    pub throughput: (f64, &'static str),
    /// `Ok` if the result matched the sequential reference, or what differed.
    pub verified: Result<(), String>,
}

/// A sample kernel with its reference.
pub trait Sample: Sync {
    /// The sample's name.
    fn name(&self) -> &'static str;
    /// Runs it at `size` and checks the result.
    fn run(&self, rt: &Runtime, size: Size) -> Result<Report, LaunchError>;
}

/// Every sample, in the order the command line runs them.
pub fn all() -> Vec<Box<dyn Sample>> {
    vec![
        Box::new(Reduce),
        Box::new(Scan),
        Box::new(Histogram),
        Box::new(SubGroupReverse),
        Box::new(MessagePassing),
    ]
}

/// A deterministic pseudo-random sequence (SplitMix64), so inputs are the
/// same on every run without a dependency. The benchmark suite draws its
/// inputs from it too.
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Compares `got` with `want` and names the first difference.
pub fn compare<T: PartialEq + fmt::Debug>(what: &str, got: &[T], want: &[T]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: length {} instead of {}",
            got.len(),
            want.len()
        ));
    }
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what}[{i}] = {:?}, expected {:?}",
            got[i], want[i]
        )),
    }
}

/// Bytes per second as GB/s.
pub(crate) fn gbps(bytes: usize, t: Duration) -> (f64, &'static str) {
    (bytes as f64 / t.as_secs_f64() / 1e9, "GB/s")
}
