//! 256-bin histogram of bytes: work-group-private bins in local memory
//! updated with local atomics, then merged into the global bins with one
//! global atomic per bin per group.

use std::time::Duration;

use clsync::sync::{Relaxed, WorkGroupScope, LOCAL};
use clsync::{kernel, AtomicUint, Buffer, Launch, LaunchError, NdRange, Runtime, WorkItem};

use crate::{compare, gbps, Report, Sample, Size, SplitMix};

/// Histogram of bytes with local atomics.
pub struct Histogram;

/// Bins.
pub const BINS: usize = 256;
/// The work-group size.
pub const GROUP: usize = 256;
/// Bytes each work-item counts.
pub const PER_ITEM: usize = 64;

/// The kernel, written per work-item; `#[kernel]` runs it as group-level
/// loops.
#[kernel(groups)]
pub fn histogram_kernel(wi: &WorkItem, bytes: &Buffer<u8>, bins: &Buffer<AtomicUint>) {
    let n = bytes.len();
    let l = wi.get_local_id(0);
    let size = wi.get_local_size(0);
    let local = wi.local_array::<AtomicUint>(BINS);
    let mut b = l;
    while b < BINS {
        local.at(b).store_explicit_scope(0, Relaxed, WorkGroupScope);
        b += size;
    }
    wi.barrier(LOCAL);
    // Consecutive work-items read consecutive bytes in each step.
    let base = wi.get_group_id(0) * wi.get_enqueued_local_size(0) * PER_ITEM;
    let span = size * PER_ITEM;
    let mut i = base + l;
    while i < (base + span).min(n) {
        local
            .at(bytes.get(i) as usize)
            .fetch_add_explicit_scope(1, Relaxed, WorkGroupScope);
        i += size;
    }
    wi.barrier(LOCAL);
    let mut b = l;
    while b < BINS {
        let c = local.at(b).load_explicit_scope(Relaxed, WorkGroupScope);
        if c != 0 {
            bins.at(b).fetch_add_explicit(c, Relaxed);
        }
        b += size;
    }
}

/// Counts `bytes` into 256 bins.
pub fn histogram(
    rt: &Runtime,
    bytes: &Buffer<u8>,
) -> Result<(Buffer<AtomicUint>, Duration), LaunchError> {
    let n = bytes.len();
    let bins: Buffer<AtomicUint> = Buffer::new(BINS);
    let items = n.div_ceil(PER_ITEM);
    let launch = Launch::new("histogram", NdRange::new([items]).local([GROUP.min(items)]));
    let s = histogram_kernel_launch(rt, &launch, bytes, &bins)?;
    Ok((bins, s.elapsed))
}

impl Sample for Histogram {
    fn name(&self) -> &'static str {
        "histogram"
    }

    fn run(&self, rt: &Runtime, size: Size) -> Result<Report, LaunchError> {
        let n = match size {
            Size::Small => 100_003,
            Size::Full => 1 << 24,
        };
        let mut rng = SplitMix(3);
        // Skewed, so some bins are hot.
        let data: Vec<u8> = (0..n)
            .map(|_| (rng.next_u64() % 251) as u8 & 0xF7)
            .collect();
        let input = Buffer::from_slice(&data).named("bytes");
        let (bins, t) = histogram(rt, &input)?;
        let mut want = vec![0u32; BINS];
        for &b in &data {
            want[b as usize] += 1;
        }
        Ok(Report {
            name: self.name(),
            size: format!("{n} bytes, {BINS} bins, group {GROUP}"),
            elapsed: t,
            throughput: gbps(n, t),
            verified: compare("bins", &bins.to_vec(), &want),
        })
    }
}
