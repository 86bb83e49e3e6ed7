//! Work-group inclusive scan in local memory, then a device-wide add of the
//! scanned group totals.

use std::time::Duration;

use clsync::sync::LOCAL;
use clsync::{kernel, Buffer, Launch, LaunchError, LocalArg, NdRange, Runtime, WorkItem};

use crate::{compare, gbps, Report, Sample, Size, SplitMix};

/// Inclusive prefix sum of `i32`s (wrapping).
pub struct Scan;

/// The work-group size.
pub const GROUP: usize = 256;

/// Scans each group of `data` in place (Hillis–Steele in local memory) and
/// writes the group's total, written per work-item; `#[kernel]` runs it as
/// group-level loops.
#[kernel(groups)]
pub fn scan_kernel(wi: &WorkItem, data: &Buffer<i32>, totals: &Buffer<i32>, tile: LocalArg<i32>) {
    let l = wi.get_local_id(0);
    let g = wi.get_global_id(0);
    let size = wi.get_local_size(0);
    let t = wi.local(tile);
    t.set(l, data.get(g));
    let mut offset = 1;
    while offset < size {
        wi.barrier(LOCAL);
        let add = if l >= offset { t.get(l - offset) } else { 0 };
        wi.barrier(LOCAL);
        t.set(l, t.get(l).wrapping_add(add));
        offset *= 2;
    }
    data.set(g, t.get(l));
    if l == size - 1 {
        totals.set(wi.get_group_id(0), t.get(l));
    }
}

/// [`scan_kernel`] over `data`: returns each group's total.
fn scan_groups(rt: &Runtime, data: &Buffer<i32>) -> Result<(Buffer<i32>, Duration), LaunchError> {
    let n = data.len();
    let totals = Buffer::<i32>::new(n.div_ceil(GROUP)).named("totals");
    let mut launch = Launch::new("scan_groups", NdRange::new([n]).local([GROUP]));
    let tile = launch.local_named::<i32>("tile", GROUP);
    let s = scan_kernel_launch(rt, &launch, data, &totals, tile)?;
    Ok((totals, s.elapsed))
}

/// Adds the scanned total of the groups before it to each element.
#[kernel(groups)]
pub fn add_totals(wi: &WorkItem, data: &Buffer<i32>, totals: &Buffer<i32>) {
    let group = wi.get_group_id(0);
    if group > 0 {
        let g = wi.get_global_id(0);
        data.set(g, data.get(g).wrapping_add(totals.get(group - 1)));
    }
}

/// Scans `data` in place, whatever its length.
pub fn scan(rt: &Runtime, data: &Buffer<i32>) -> Result<Duration, LaunchError> {
    let (totals, mut t) = scan_groups(rt, data)?;
    if totals.len() > 1 {
        t += scan(rt, &totals)?;
        let n = data.len();
        let launch = Launch::new("add_totals", NdRange::new([n]).local([GROUP]));
        let s = add_totals_launch(rt, &launch, data, &totals)?;
        t += s.elapsed;
    }
    Ok(t)
}

impl Sample for Scan {
    fn name(&self) -> &'static str {
        "scan"
    }

    fn run(&self, rt: &Runtime, size: Size) -> Result<Report, LaunchError> {
        let n = match size {
            Size::Small => 70_001,
            Size::Full => 1 << 22,
        };
        let mut rng = SplitMix(2);
        let input: Vec<i32> = (0..n).map(|_| rng.next_u64() as i32 >> 8).collect();
        let data = Buffer::from_slice(&input).named("data");
        let t = scan(rt, &data)?;
        let mut acc = 0i32;
        let want: Vec<i32> = input
            .iter()
            .map(|v| {
                acc = acc.wrapping_add(*v);
                acc
            })
            .collect();
        Ok(Report {
            name: self.name(),
            size: format!("{n} int, group {GROUP}"),
            elapsed: t,
            throughput: gbps(n * 4, t),
            verified: compare("prefix", &data.to_vec(), &want),
        })
    }
}
