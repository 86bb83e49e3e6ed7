//! Six workloads that exercise what clsync exists for — barriers, local
//! memory, local and global atomics, release/acquire between work-groups —
//! each written three ways with the same algorithm:
//!
//! * [`kernels`]: clsync kernels (group-level, on
//!   [`Runtime::launch_groups`](clsync::Runtime::launch_groups); the barrier
//!   loop also on the general engine);
//! * `pocl` (feature `pocl`): OpenCL C kernels on PoCL through the ICD;
//! * [`opencl_c`]: the same `kernels.cl` compiled by clsync itself
//!   (`clsync-opencl`);
//! * [`limit`]: plain Rust with rayon, the practical limit.
//!
//! [`ceiling`] measures the machine itself at a thread count, what a
//! compute-bound workload's scaling is measured against.
//!
//! Each run returns its time and whether its result matched the
//! sequential reference in [`reference`](mod@reference).
//!
//! Where to start reading: `main.rs` (the table and its interleaving), then
//! one side: [`kernels`], [`opencl_c`] or [`limit`].

pub mod ceiling;
pub mod kernels;
pub mod limit;
pub mod opencl_c;
#[cfg(feature = "pocl")]
pub mod pocl;
pub mod reference;
pub mod scaling;
pub mod timing;

use std::time::Duration;

/// The workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// A loop of work-group barriers around a little private arithmetic.
    BarrierLoop,
    /// Local-memory tree reduction of floats, work-group 256.
    Reduce,
    /// Work-group inclusive scan of ints, then a device-wide add.
    Scan,
    /// 16×16 local-memory tiled SGEMM.
    Sgemm,
    /// 256-bin histogram of bytes with local atomics.
    Histogram,
    /// C11 release/acquire ping-pong between two work-groups.
    MessagePassing,
}

impl Workload {
    /// All six, in table order.
    pub const ALL: [Workload; 6] = [
        Workload::BarrierLoop,
        Workload::Reduce,
        Workload::Scan,
        Workload::Sgemm,
        Workload::Histogram,
        Workload::MessagePassing,
    ];

    /// Its name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Workload::BarrierLoop => "barrier loop",
            Workload::Reduce => "reduce",
            Workload::Scan => "scan",
            Workload::Sgemm => "sgemm",
            Workload::Histogram => "histogram",
            Workload::MessagePassing => "message passing",
        }
    }
}

/// Problem sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// Barrier loop: work-items, local size, barriers per work-item.
    pub barrier: (usize, usize, usize),
    /// The local sizes the suite runs the barrier loop at (the issue's PoCL
    /// figure spans 64–1024); `barrier.1` is the one of the general
    /// engines' rows.
    pub barrier_locals: [usize; 3],
    /// Reduce: floats.
    pub reduce: usize,
    /// Scan: ints.
    pub scan: usize,
    /// SGEMM: matrix order.
    pub sgemm: usize,
    /// Histogram: bytes.
    pub histogram: usize,
    /// Message passing: round trips.
    pub rounds: usize,
}

impl Sizes {
    /// These sizes with the barrier loop at local size `local`.
    pub fn with_barrier_local(self, local: usize) -> Sizes {
        let (n, _, b) = self.barrier;
        Sizes {
            barrier: (n, local, b),
            ..self
        }
    }

    /// The sizes of the issue's PoCL figures.
    pub const FULL: Sizes = Sizes {
        barrier: (1 << 16, 256, 1000),
        barrier_locals: [64, 256, 1024],
        reduce: 1 << 26,
        scan: 1 << 24,
        sgemm: 1024,
        histogram: 1 << 26,
        rounds: 20_000,
    };
    /// Small sizes for the tests.
    pub const SMALL: Sizes = Sizes {
        barrier: (1024, 64, 10),
        barrier_locals: [16, 64, 256],
        reduce: 1 << 14,
        scan: 1 << 12,
        sgemm: 64,
        histogram: 1 << 17,
        rounds: 100,
    };
}

/// Bytes per histogram work-item: a group of [`GROUP`] counts 64 KB
/// before its 256 device-scope merges.
pub const HIST_PER_ITEM: usize = 256;
/// Work-group size of reduce, scan and histogram.
pub const GROUP: usize = 256;
/// The zeros before each of the scan's local arrays: as many as the longest
/// step of its radix-4 Hillis–Steele loop reaches back (three strides of
/// `GROUP / 4`).
pub const SCAN_PAD: usize = 3 * GROUP / 4;
// The radix-4 steps (strides 1, 4, 16, …) end exactly at the group's size
// only if it is a power of 4.
const _: () = assert!(GROUP.is_power_of_two() && GROUP.trailing_zeros().is_multiple_of(2));
/// SGEMM tile edge.
pub const TILE: usize = 16;

/// The scan's host step, the same on every side: the exclusive scan of the
/// blocks' totals, which is each block's offset.
///
/// ```
/// assert_eq!(clsync_bench::block_offsets(&[3, -1, 4]), vec![0, 3, 2]);
/// ```
pub fn block_offsets(totals: &[i32]) -> Vec<i32> {
    let mut acc = 0i32;
    totals
        .iter()
        .map(|&t| {
            let offset = acc;
            acc = acc.wrapping_add(t);
            offset
        })
        .collect()
}

/// The workloads' inputs, made once for all runs.
pub struct Inputs {
    /// Reduce's floats.
    pub reduce: Vec<f32>,
    /// Scan's ints.
    pub scan: Vec<i32>,
    /// SGEMM's A.
    pub a: Vec<f32>,
    /// SGEMM's B.
    pub b: Vec<f32>,
    /// Histogram's bytes.
    pub bytes: Vec<u8>,
}

impl Inputs {
    /// The inputs at sizes `s`.
    pub fn new(s: &Sizes) -> Inputs {
        Inputs {
            reduce: reference::reduce_input(s.reduce),
            scan: reference::scan_input(s.scan),
            a: reference::matrix(s.sgemm, 4),
            b: reference::matrix(s.sgemm, 5),
            bytes: reference::histogram_input(s.histogram),
        }
    }
}

/// One timed run.
#[derive(Clone, Debug)]
pub struct Run {
    /// Wall time of the launches (including the host part of scan).
    pub time: Duration,
    /// `Ok` if the result matched the reference.
    pub verified: Result<(), String>,
}

/// The figure a table shows for a workload: its unit and value for a time.
pub fn figure(w: Workload, s: &Sizes, t: Duration) -> (f64, &'static str) {
    let secs = t.as_secs_f64();
    match w {
        Workload::BarrierLoop => {
            let (n, _, b) = s.barrier;
            (secs * 1e9 / (n * b) as f64, "ns/item/barrier (all threads)")
        }
        Workload::Reduce => (4.0 * s.reduce as f64 / secs / 1e9, "GB/s"),
        Workload::Scan => (4.0 * s.scan as f64 / secs / 1e9, "GB/s"),
        Workload::Sgemm => (2.0 * (s.sgemm as f64).powi(3) / secs / 1e9, "GFLOP/s"),
        Workload::Histogram => (s.histogram as f64 / secs / 1e9, "GB/s"),
        Workload::MessagePassing => (secs * 1e9 / s.rounds as f64, "ns/round trip"),
    }
}
