//! The kernels written per work-item, line for line as `kernels.cl`'s (its
//! `global const float*` inputs as shared slices), and how the suite runs
//! them: lifted by `#[kernel]` into group-level loops (the `#[kernel]`
//! rows), the barrier loop on the general engines (coroutines and async),
//! and, for the tests, the reduction and SGEMM on the coroutine engine.

use clsync::memory::prefetch;
use clsync::sync::LOCAL;
use clsync::{kernel, Buffer, LocalArg, Runtime, WorkItem};

use super::{barrier_loop_with, reduce_with, sgemm_with};
use crate::{Run, Sizes, GROUP, TILE};

/// The barrier loop written per work-item, as the OpenCL C kernel is:
/// `#[kernel]` lifts it into group-level loops ([`barrier_loop_lifted`]),
/// and the general engine runs it as it is ([`barrier_loop_general`]).
#[kernel(groups)]
pub fn barrier_loop_item(wi: &WorkItem, out: &Buffer<u32>, barriers: usize) {
    let mut acc = wi.get_local_id(0) as u32;
    for _ in 0..barriers {
        wi.barrier(LOCAL);
        acc = acc.wrapping_mul(3).wrapping_add(1);
    }
    out.set(wi.get_global_id(0), acc);
}

/// [`barrier_loop_item`] lifted by `#[kernel]`.
pub fn barrier_loop_lifted(rt: &Runtime, s: &Sizes) -> Run {
    barrier_loop_with(s, |launch, out, barriers| {
        barrier_loop_item_launch(rt, launch, out, barriers)
    })
}

/// [`barrier_loop_item`] on the general engine: one coroutine per
/// work-item.
pub fn barrier_loop_general(rt: &Runtime, s: &Sizes) -> Run {
    barrier_loop_with(s, |launch, out, barriers| {
        rt.launch(launch, |wi| barrier_loop_item(wi, out, barriers))
    })
}

/// The barrier loop on the async engine: one future per work-item.
pub fn barrier_loop_async(rt: &Runtime, s: &Sizes) -> Run {
    barrier_loop_with(s, |launch, out, barriers| {
        rt.launch_async(launch, async |wi| {
            let mut acc = wi.get_local_id(0) as u32;
            for _ in 0..barriers {
                wi.barrier_async(LOCAL).await;
                acc = acc.wrapping_mul(3).wrapping_add(1);
            }
            out.set(wi.get_global_id(0), acc);
        })
    })
}

/// The reduction written per work-item, line for line as `kernels.cl`'s:
/// its `global const float*` input is a shared slice, read with plain
/// loads (see [`sgemm_item`]).
#[kernel(groups)]
pub fn reduce_item(wi: &WorkItem, data: &[f32], partial: &Buffer<f32>, scratch: LocalArg<f32>) {
    let l = wi.get_local_id(0);
    let s = wi.local(scratch);
    let ahead = wi.get_group_id(0) + 2;
    if l == 0 {
        prefetch(data, ahead * GROUP..(ahead + 1) * GROUP);
    }
    s.set(l, data[wi.get_global_id(0)]);
    let mut h = GROUP / 2;
    while h > 0 {
        wi.barrier(LOCAL);
        if l < h {
            s.set(l, s.get(l) + s.get(l + h));
        }
        h /= 2;
    }
    if l == 0 {
        partial.set(wi.get_group_id(0), s.get(0));
    }
}

/// [`reduce_item`] lifted by `#[kernel]`.
pub fn reduce_lifted(rt: &Runtime, input: &[f32]) -> Run {
    // The input as the host's slice: the buffer `reduce_with` makes holds
    // the same values.
    reduce_with(input, |launch, _, partial, scratch| {
        reduce_item_launch(rt, launch, input, partial, scratch)
    })
}

/// [`reduce_item`] on the general engine: one coroutine per work-item (for
/// the tests: the same source in every engine).
pub fn reduce_general(rt: &Runtime, input: &[f32]) -> Run {
    reduce_with(input, |launch, _, partial, scratch| {
        rt.launch(launch, |wi| reduce_item(wi, input, partial, scratch))
    })
}

/// The tiled SGEMM written per work-item, line for line as `kernels.cl`'s:
/// its `global const float*` inputs are shared slices, which no one writes
/// while the kernel borrows them, so their reads are plain loads (a
/// buffer's are relaxed atomics) and vectorize.
#[kernel(groups)]
pub fn sgemm_item(
    wi: &WorkItem,
    a: &[f32],
    b: &[f32],
    c: &Buffer<f32>,
    n: usize,
    ta: LocalArg<f32>,
    tb: LocalArg<f32>,
) {
    let (ta, tb) = (wi.local(ta), wi.local(tb));
    let (tx, ty) = (wi.get_local_id(0), wi.get_local_id(1));
    let (col, row) = (wi.get_global_id(0), wi.get_global_id(1));
    let mut acc = 0.0f32;
    for t in 0..n / TILE {
        ta.set(ty * TILE + tx, a[row * n + t * TILE + tx]);
        tb.set(ty * TILE + tx, b[(t * TILE + ty) * n + col]);
        wi.barrier(LOCAL);
        for k in 0..TILE {
            acc += ta.get(ty * TILE + k) * tb.get(k * TILE + tx);
        }
        wi.barrier(LOCAL);
    }
    c.set(row * n + col, acc);
}

/// [`sgemm_item`] lifted by `#[kernel]`.
pub fn sgemm_lifted(rt: &Runtime, a: &[f32], b: &[f32], n: usize) -> Run {
    // A and B as the host's slices: the buffers `sgemm_with` makes hold
    // the same values.
    sgemm_with(a, b, n, |launch, _, _, c, ta, tb| {
        sgemm_item_launch(rt, launch, a, b, c, n, ta, tb)
    })
}

/// [`sgemm_item`] on the general engine: one coroutine per work-item (for
/// the tests: the same source in every engine).
pub fn sgemm_general(rt: &Runtime, a: &[f32], b: &[f32], n: usize) -> Run {
    sgemm_with(a, b, n, |launch, _, _, c, ta, tb| {
        rt.launch(launch, |wi| sgemm_item(wi, a, b, c, n, ta, tb))
    })
}
