//! The CTS sub-group barrier test: every work-item writes its element to
//! local memory, waits at `sub_group_barrier(CLK_LOCAL_MEM_FENCE)`, and reads
//! the element of its mirror image within the sub-group. Global 2000, local
//! 200, as the Khronos test uses, so the last sub-group of each group is
//! partial for most sub-group sizes.

use std::time::Duration;

use clsync::sync::LOCAL;
use clsync::{kernel, Buffer, Launch, LaunchError, LocalArg, NdRange, Runtime, WorkItem};

use crate::{compare, Report, Sample, Size, SplitMix};

/// Reverses each sub-group through local memory.
pub struct SubGroupReverse;

/// The kernel, written per work-item; `#[kernel]` runs it as group-level
/// loops (the sub-group barrier between two loops over the group).
#[kernel(groups)]
pub fn reverse_kernel(wi: &WorkItem, input: &Buffer<u32>, out: &Buffer<u32>, tmp: LocalArg<u32>) {
    let g = wi.get_global_id(0);
    let size = wi.get_sub_group_size() as usize;
    let lid = wi.get_sub_group_local_id() as usize;
    let base = wi.get_sub_group_id() as usize * wi.get_max_sub_group_size() as usize;
    let t = wi.local(tmp);
    t.set(base + lid, input.get(g));
    wi.sub_group_barrier(LOCAL);
    out.set(g, t.get(base + size - 1 - lid));
}

/// Reverses each sub-group of `input` into a new buffer.
pub fn reverse_sub_groups(
    rt: &Runtime,
    input: &Buffer<u32>,
    local: usize,
    sub_group: usize,
) -> Result<(Buffer<u32>, Duration), LaunchError> {
    let n = input.len();
    let out = Buffer::<u32>::new(n).named("out");
    let mut launch = Launch::new(
        "sub_group_reverse",
        NdRange::new([n]).local([local]).sub_group_size(sub_group),
    );
    let tmp = launch.local_named::<u32>("tmp", local);
    let s = reverse_kernel_launch(rt, &launch, input, &out, tmp)?;
    Ok((out, s.elapsed))
}

/// The sequential reference.
pub fn reference(input: &[u32], local: usize, sub_group: usize) -> Vec<u32> {
    let mut out = vec![0; input.len()];
    for (gs, group) in input.chunks(local).enumerate() {
        for (ss, sg) in group.chunks(sub_group).enumerate() {
            for (i, _) in sg.iter().enumerate() {
                out[gs * local + ss * sub_group + i] = sg[sg.len() - 1 - i];
            }
        }
    }
    out
}

impl Sample for SubGroupReverse {
    fn name(&self) -> &'static str {
        "sub-group reverse"
    }

    fn run(&self, rt: &Runtime, size: Size) -> Result<Report, LaunchError> {
        let (n, local) = match size {
            Size::Small => (2000, 200),
            Size::Full => (2000 * 512, 200),
        };
        let mut rng = SplitMix(4);
        let data: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
        let input = Buffer::from_slice(&data).named("in");
        let mut t = Duration::ZERO;
        let mut verified = Ok(());
        for sg in [32, 7, 64, 1] {
            let (out, dt) = reverse_sub_groups(rt, &input, local, sg)?;
            t += dt;
            if verified.is_ok() {
                verified = compare(
                    &format!("out (sub-group size {sg})"),
                    &out.to_vec(),
                    &reference(&data, local, sg),
                );
            }
        }
        Ok(Report {
            name: self.name(),
            size: format!("{n} uint, group {local}, sub-groups 32/7/64/1"),
            elapsed: t,
            throughput: ((4 * n) as f64 / t.as_secs_f64() / 1e6, "Mitems/s"),
            verified,
        })
    }
}
