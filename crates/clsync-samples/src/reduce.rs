//! Local-memory tree reduction (the CTS `test_local` / `test_barrier`
//! pattern): each group sums 256 elements in local memory with a barrier per
//! level, then the per-group sums are reduced the same way.

use std::time::Duration;

use clsync::sync::LOCAL;
use clsync::{kernel, Buffer, Launch, LaunchError, LocalArg, NdRange, Runtime, WorkItem};

use crate::{compare, gbps, Report, Sample, Size, SplitMix};

/// Sums `u32`s (wrapping) with a local-memory tree per work-group.
pub struct Reduce;

/// The work-group size.
pub const GROUP: usize = 256;

/// One level of the reduction, written per work-item as in OpenCL C;
/// `#[kernel]` runs it as group-level loops.
#[kernel(groups)]
pub fn reduce_kernel(
    wi: &WorkItem,
    input: &Buffer<u32>,
    partial: &Buffer<u32>,
    scratch: LocalArg<u32>,
) {
    let l = wi.get_local_id(0);
    let g = wi.get_global_id(0);
    let s = wi.local(scratch);
    s.set(l, input.get(g));
    let mut half = GROUP / 2;
    while half > 0 {
        wi.barrier(LOCAL);
        // In a smaller last group only the work-items that exist have
        // written their element.
        if l < half && l + half < wi.get_local_size(0) {
            s.set(l, s.get(l).wrapping_add(s.get(l + half)));
        }
        half /= 2;
    }
    if l == 0 {
        partial.set(wi.get_group_id(0), s.get(0));
    }
}

/// Sums `input` into one partial per group of [`GROUP`]; `input.len()` need
/// not be a multiple of it (the last group is then smaller).
pub fn reduce_groups(
    rt: &Runtime,
    input: &Buffer<u32>,
) -> Result<(Buffer<u32>, Duration), LaunchError> {
    let n = input.len();
    let groups = n.div_ceil(GROUP);
    let partial = Buffer::<u32>::new(groups).named("partial");
    let mut launch = Launch::new("reduce", NdRange::new([n]).local([GROUP]));
    let scratch = launch.local_named::<u32>("scratch", GROUP);
    let s = reduce_kernel_launch(rt, &launch, input, &partial, scratch)?;
    Ok((partial, s.elapsed))
}

/// Reduces `input` to one sum with repeated [`reduce_groups`].
pub fn reduce(rt: &Runtime, input: &Buffer<u32>) -> Result<(u32, Duration), LaunchError> {
    let (mut level, mut t) = reduce_groups(rt, input)?;
    while level.len() > 1 {
        let (next, dt) = reduce_groups(rt, &level)?;
        level = next;
        t += dt;
    }
    Ok((level.get(0), t))
}

impl Sample for Reduce {
    fn name(&self) -> &'static str {
        "reduce"
    }

    fn run(&self, rt: &Runtime, size: Size) -> Result<Report, LaunchError> {
        let n = match size {
            Size::Small => 10_000,
            Size::Full => 1 << 24,
        };
        let mut rng = SplitMix(1);
        let data: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
        let input = Buffer::from_slice(&data).named("input");
        let (sum, t) = reduce(rt, &input)?;
        let want = data.iter().fold(0u32, |a, &b| a.wrapping_add(b));
        Ok(Report {
            name: self.name(),
            size: format!("{n} uint, group {GROUP}"),
            elapsed: t,
            throughput: gbps(n * 4, t),
            verified: compare("sum", &[sum], &[want]),
        })
    }
}
