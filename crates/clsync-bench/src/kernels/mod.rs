//! The workloads as clsync kernels, group-level
//! ([`Runtime::launch_groups`]): each work-item's code between barriers is
//! a [`Group::for_each`](clsync::Group::for_each) loop over `Copy` views of
//! the buffers and local memory, in `move` closures, so that the loops
//! vectorize (see `clsync::engine::loops`). `per_item` holds the kernels
//! written per work-item, as `kernels.cl`'s are, which `#[kernel]` lifts
//! (the suite's `#[kernel]` rows), and runs the barrier loop on the general
//! engines ([`barrier_loop_general`], [`barrier_loop_async`]), whose cost
//! per barrier is their own figure.

use std::hint::spin_loop;

use clsync::atomics::Local;
use clsync::sync::{Acquire, DeviceScope, Relaxed, Release, WorkGroupScope, GLOBAL, LOCAL};
use clsync::{AtomicUint, Buffer, Launch, LocalArg, NdRange, Runtime};

mod per_item;

pub use per_item::{
    barrier_loop_async, barrier_loop_general, barrier_loop_item, barrier_loop_item_form,
    barrier_loop_item_groups, barrier_loop_item_launch, barrier_loop_lifted, reduce_general,
    reduce_item, reduce_item_form, reduce_item_groups, reduce_item_launch, reduce_lifted,
    sgemm_general, sgemm_item, sgemm_item_form, sgemm_item_groups, sgemm_item_launch, sgemm_lifted,
};

use crate::reference::{self, compare};
use crate::timing::timed;
use crate::{block_offsets, Run, Sizes, GROUP, HIST_PER_ITEM, SCAN_PAD, TILE};

/// The barrier loop, group-level: the private value lives in a
/// [`Private`](clsync::memory::Private) array (one value per work-item, on
/// a cache line), and each step between two barriers is one loop over the
/// group.
pub fn barrier_loop(rt: &Runtime, s: &Sizes) -> Run {
    barrier_loop_with(s, |launch, out, barriers| {
        rt.launch_groups(launch, |g| {
            let mut acc = g.private::<u32>();
            for (l, a) in acc.iter_mut().enumerate() {
                *a = l as u32;
            }
            for _ in 0..barriers {
                g.barrier(LOCAL);
                for a in acc.iter_mut() {
                    *a = a.wrapping_mul(3).wrapping_add(1);
                }
            }
            g.for_each(|it| out.set(it.global_linear_id, acc[it.local_linear_id]));
        })
    })
}

/// Runs a form of the barrier loop (given its launch, the output and the
/// number of barriers) at the sizes `s`, and checks the output.
fn barrier_loop_with(
    s: &Sizes,
    kernel: impl FnOnce(
        &Launch,
        &Buffer<u32>,
        usize,
    ) -> Result<clsync::LaunchSummary, clsync::LaunchError>,
) -> Run {
    let (n, local, barriers) = s.barrier;
    let out = Buffer::<u32>::new(n);
    let launch = Launch::new("barrier_loop", NdRange::new([n]).local([local]));
    let time = timed(|| {
        kernel(&launch, &out, barriers).expect("barrier loop");
    });
    let want: Vec<u32> = (0..n)
        .map(|g| reference::barrier_loop(g % local, barriers))
        .collect();
    Run {
        time,
        verified: compare("barrier loop", &out.to_vec(), &want),
    }
}

/// Tree reduction in local memory, one partial sum per group.
pub fn reduce(rt: &Runtime, input: &[f32]) -> Run {
    reduce_with(input, |launch, data, partial, scratch| {
        rt.launch_groups(launch, |g| {
            let data = g.global(data);
            let s = g.local(scratch);
            // OpenCL C's `prefetch` of the group two ahead, as `kernels.cl`
            // does: a worker runs its groups in order, so that is usually its
            // own next-but-one (past the end, ignored).
            let ahead = g.get_group_id(0) + 2;
            data.prefetch(ahead * GROUP..(ahead + 1) * GROUP);
            g.for_each(move |it| {
                // SAFETY: global_linear_id < n, the buffer's length (the
                // range is n), and no one writes `data` during the launch.
                let v = unsafe { data.get_unchecked(it.global_linear_id) };
                // SAFETY: local_linear_id < GROUP, the array's length.
                unsafe { s.set_unchecked(it.local_linear_id, v) };
            });
            let mut half = GROUP / 2;
            while half > 0 {
                g.barrier(LOCAL);
                // The work-items with l < half: `if (l < half)` in OpenCL C.
                g.for_each_in(0..half, move |it| {
                    let l = it.local_linear_id;
                    // SAFETY: l < half, so l + half < GROUP, the length.
                    unsafe { s.set_unchecked(l, s.get_unchecked(l) + s.get_unchecked(l + half)) };
                });
                half /= 2;
            }
            partial.set(g.get_group_id(0), s.get(0));
        })
    })
}

/// Runs a form of the reduction kernel over `input` (its launch, data,
/// partial sums and scratch array given), sums the partials on the host and
/// checks the total.
fn reduce_with(
    input: &[f32],
    kernel: impl FnOnce(
        &Launch,
        &Buffer<f32>,
        &Buffer<f32>,
        LocalArg<f32>,
    ) -> Result<clsync::LaunchSummary, clsync::LaunchError>,
) -> Run {
    let n = input.len();
    let data = Buffer::from_slice(input);
    let partial = Buffer::<f32>::new(n / GROUP);
    let mut launch = Launch::new("reduce", NdRange::new([n]).local([GROUP]));
    let scratch = launch.local::<f32>(GROUP);
    let mut total = 0.0;
    let time = timed(|| {
        kernel(&launch, &data, &partial, scratch).expect("reduce");
        total = partial.to_vec().iter().map(|&v| f64::from(v)).sum::<f64>();
    });
    Run {
        time,
        verified: reference::check_sum(total, input),
    }
}

/// Work-group inclusive scan (Hillis–Steele of radix 4, double-buffered in
/// local memory), the group totals scanned on the host, then a device-wide
/// add.
///
/// A step adds the elements `step`, `2 * step` and `3 * step` back and the
/// stride grows fourfold: 4 steps for 256 elements instead of radix 2's 8,
/// with half the barriers and loop set-ups (about 110 instructions each)
/// for 1.5 times the additions, which the loops vectorize. Each local array
/// has [`SCAN_PAD`] zeros before its `GROUP` elements, so that the first
/// work-items of a step read zeros there: a step is one branch-free loop
/// over the group, not one per case of `l`. The first step reads its
/// operands straight from the global buffer and the last writes each
/// work-item's sum straight back: no copy-in or copy-out loop over local
/// memory. A work-item's first step reads elements its neighbours write in
/// the last, so the barrier before the last step fences global memory as
/// well as local (with local alone, the checker reports the race). The
/// OpenCL C kernel does the same.
pub fn scan(rt: &Runtime, input: &[i32]) -> Run {
    let n = input.len();
    let groups = n / GROUP;
    let data = Buffer::from_slice(input);
    let sums = Buffer::<i32>::new(groups);
    let mut launch = Launch::new("scan_groups", NdRange::new([n]).local([GROUP]));
    let a = launch.local::<i32>(SCAN_PAD + GROUP);
    let b = launch.local::<i32>(SCAN_PAD + GROUP);
    let add = Launch::new("scan_add", NdRange::new([n]).local([GROUP]));
    let time = timed(|| {
        rt.launch_groups(&launch, |g| {
            let data = g.global(&data);
            let (mut src, mut dst) = (g.local(a), g.local(b));
            // The group two ahead, prefetched as in `reduce`.
            let ahead = g.get_group_id(0) + 2;
            data.prefetch(ahead * GROUP..(ahead + 1) * GROUP);
            // `move` closures: the views are `Copy`, and a copy stays in
            // registers through the loop.
            g.for_each_in(0..SCAN_PAD, move |it| {
                // SAFETY: local_linear_id < SCAN_PAD < the arrays' length.
                unsafe {
                    src.set_unchecked(it.local_linear_id, 0);
                    dst.set_unchecked(it.local_linear_id, 0);
                }
            });
            // The first step (step = 1) straight from `data`: the work-items
            // from the fourth on add their element and the three before it,
            // the first three those of theirs that are in the group. Another
            // work-item's element is read here and written by it in the last
            // step; the global fence of the barrier before that step orders
            // the two.
            g.for_each_in(0..3, move |it| {
                let (l, i) = (it.local_linear_id, it.global_linear_id);
                // SAFETY: i - l is the group's first element, so every index
                // read is in the group and below n, the buffer's length;
                // SCAN_PAD + l is below the array's length.
                unsafe {
                    let v = (i - l..=i).fold(0i32, |v, j| v.wrapping_add(data.get_unchecked(j)));
                    dst.set_unchecked(SCAN_PAD + l, v);
                }
            });
            g.for_each_in(3..GROUP, move |it| {
                let i = it.global_linear_id;
                // SAFETY: as above, with l >= 3, so i - 3 is in the group.
                unsafe {
                    let v = data
                        .get_unchecked(i)
                        .wrapping_add(data.get_unchecked(i - 1))
                        .wrapping_add(data.get_unchecked(i - 2))
                        .wrapping_add(data.get_unchecked(i - 3));
                    dst.set_unchecked(SCAN_PAD + it.local_linear_id, v);
                }
            });
            std::mem::swap(&mut src, &mut dst);
            // The steps between the first and the last, between the two
            // local arrays.
            let mut step = 4;
            while step < GROUP / 4 {
                g.barrier(LOCAL);
                g.for_each(move |it| {
                    let l = SCAN_PAD + it.local_linear_id;
                    // SAFETY: SCAN_PAD <= l < SCAN_PAD + GROUP, the arrays'
                    // length, and step <= GROUP / 4, so 3 * step <= SCAN_PAD
                    // and l - 3 * step >= 0.
                    unsafe { dst.set_unchecked(l, radix4(src, l, step)) };
                });
                std::mem::swap(&mut src, &mut dst);
                step *= 4;
            }
            // The last step (step = GROUP / 4) straight into `data`: each
            // work-item writes only its own element, so no barrier follows.
            // The barrier fences global memory too, for the first step's
            // reads of the elements written here.
            g.barrier(LOCAL | GLOBAL);
            g.for_each(move |it| {
                // SAFETY: as in the loop above, and global_linear_id < n, the
                // buffer's length; element i is reached by work-item i only.
                unsafe {
                    let v = radix4(src, SCAN_PAD + it.local_linear_id, step);
                    data.set_unchecked(it.global_linear_id, v);
                }
            });
            // The group's total: its last work-item's element, read back by
            // the same (notional) work-item that wrote it.
            let last = (g.get_group_id(0) + 1) * GROUP - 1;
            // SAFETY: last < n, the buffer's length.
            sums.set(g.get_group_id(0), unsafe { data.get_unchecked(last) });
        })
        .expect("scan groups");
        sums.copy_from_slice(&block_offsets(&sums.to_vec()));
        rt.launch_groups(&add, |g| {
            let off = sums.get(g.get_group_id(0));
            let data = g.global(&data);
            g.for_each(move |it| {
                let i = it.global_linear_id;
                // SAFETY: i < n, the buffer's length, and element i is
                // reached by work-item i only.
                unsafe { data.set_unchecked(i, data.get_unchecked(i).wrapping_add(off)) };
            });
        })
        .expect("scan add");
    });
    Run {
        time,
        verified: compare("scan", &data.to_vec(), &reference::scan(input)),
    }
}

/// One radix-4 Hillis–Steele step at `l`: the element and the three
/// `step`, `2 * step` and `3 * step` before it.
///
/// # Safety
///
/// `l < a.len()` and `l >= 3 * step`.
#[inline(always)]
unsafe fn radix4(a: clsync::LocalView<'_, i32>, l: usize, step: usize) -> i32 {
    // SAFETY: the caller's bounds.
    unsafe {
        a.get_unchecked(l)
            .wrapping_add(a.get_unchecked(l - step))
            .wrapping_add(a.get_unchecked(l - 2 * step))
            .wrapping_add(a.get_unchecked(l - 3 * step))
    }
}

/// 16×16 tiled SGEMM: each group loads a tile of A and of B into local
/// memory, then every work-item accumulates its element of C. `n` must be a
/// multiple of [`TILE`].
pub fn sgemm(rt: &Runtime, a: &[f32], b: &[f32], n: usize) -> Run {
    sgemm_with(a, b, n, |launch, ab, bb, c, ta, tb| {
        rt.launch_groups(launch, |g| {
            let (ta, tb) = (g.local(ta), g.local(tb));
            let (ab, bb) = (g.global(ab), g.global(bb));
            let mut acc = g.private::<f32>();
            for t in 0..n / TILE {
                g.for_each(move |it| {
                    let (tx, ty) = (it.local_id[0], it.local_id[1]);
                    let (col, row) = (it.global_id[0], it.global_id[1]);
                    // SAFETY: row, col < n and t * TILE + tx, t * TILE + ty
                    // < n, so both indices are below n * n, the length of
                    // `a` and `b`, which no one writes during the launch.
                    let (va, vb) = unsafe {
                        (
                            ab.get_unchecked(row * n + t * TILE + tx),
                            bb.get_unchecked((t * TILE + ty) * n + col),
                        )
                    };
                    // SAFETY: tx, ty < TILE, so the index is below TILE * TILE.
                    unsafe {
                        ta.set_unchecked(ty * TILE + tx, va);
                        tb.set_unchecked(ty * TILE + tx, vb);
                    }
                });
                g.barrier(LOCAL);
                if g.is_checked() {
                    // Each work-item's k loop, interchanged with the loop
                    // over work-items (no work-item reads another's values
                    // here), so the inner loop runs across a row of the tile.
                    for k in 0..TILE {
                        g.for_each_mut(&mut acc, move |it, acc| {
                            let (tx, ty) = (it.local_id[0], it.local_id[1]);
                            // SAFETY: tx, ty, k < TILE, so both indices are below TILE * TILE.
                            *acc = unsafe {
                                fma(
                                    ta.get_unchecked(ty * TILE + k),
                                    tb.get_unchecked(k * TILE + tx),
                                    *acc,
                                )
                            };
                        });
                    }
                } else {
                    // The same sums in the same order, register-blocked:
                    // the tiles copied out of local memory at once, then
                    // ROWS rows of 16 work-items' accumulators (local
                    // linear id ty * TILE + tx) kept in registers through
                    // the k loop. Unchecked only: the checker must see each
                    // access inside `for_each`, as its work-item's.
                    // SAFETY: TILE * TILE is the arrays' length.
                    let (ta, tb): ([f32; TILE * TILE], [f32; TILE * TILE]) =
                        unsafe { (ta.get_array_unchecked(0), tb.get_array_unchecked(0)) };
                    for (acc, a) in acc
                        .chunks_exact_mut(ROWS * TILE)
                        .zip(ta.chunks_exact(ROWS * TILE))
                    {
                        let mut r = [[0f32; TILE]; ROWS];
                        for (ri, acc) in r.iter_mut().zip(acc.chunks_exact(TILE)) {
                            ri.copy_from_slice(acc);
                        }
                        for (k, b) in tb.chunks_exact(TILE).enumerate() {
                            for (ri, ai) in r.iter_mut().zip(a.chunks_exact(TILE)) {
                                for (v, bv) in ri.iter_mut().zip(b) {
                                    *v = fma(ai[k], *bv, *v);
                                }
                            }
                        }
                        for (ri, acc) in r.iter().zip(acc.chunks_exact_mut(TILE)) {
                            acc.copy_from_slice(ri);
                        }
                    }
                }
                g.barrier(LOCAL);
            }
            g.for_each(|it| {
                c.set(
                    it.global_id[1] * n + it.global_id[0],
                    acc[it.local_linear_id],
                )
            });
        })
    })
}

/// Rows of the tile whose accumulators stay in registers at once.
const ROWS: usize = 4;

/// `a * b + c`, fused where the target has FMA (as PoCL's compiler fuses
/// `acc += x * y`), else a multiply and an add.
#[inline(always)]
pub(crate) fn fma(a: f32, b: f32, c: f32) -> f32 {
    if cfg!(target_feature = "fma") {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// Runs a form of the SGEMM kernel (given its launch, A, B, C and the two
/// tiles) and checks C.
fn sgemm_with(
    a: &[f32],
    b: &[f32],
    n: usize,
    kernel: impl FnOnce(
        &Launch,
        &Buffer<f32>,
        &Buffer<f32>,
        &Buffer<f32>,
        LocalArg<f32>,
        LocalArg<f32>,
    ) -> Result<clsync::LaunchSummary, clsync::LaunchError>,
) -> Run {
    assert!(
        n.is_multiple_of(TILE),
        "sgemm: the order {n} is not a multiple of the tile edge {TILE}"
    );
    let (ab, bb) = (Buffer::from_slice(a), Buffer::from_slice(b));
    let c = Buffer::<f32>::new(n * n);
    let mut launch = Launch::new("sgemm", NdRange::new([n, n]).local([TILE, TILE]));
    let ta = launch.local::<f32>(TILE * TILE);
    let tb = launch.local::<f32>(TILE * TILE);
    let time = timed(|| {
        kernel(&launch, &ab, &bb, &c, ta, tb).expect("sgemm");
    });
    Run {
        time,
        verified: compare("sgemm", &c.to_vec(), &reference::sgemm(a, b, n)),
    }
}

/// 256-bin histogram: bins in local memory updated with work-group-scope
/// atomics (no locked instruction: the group runs on one thread), merged
/// into the global bins with one device-scope atomic per bin per group.
pub fn histogram(rt: &Runtime, input: &[u8]) -> Run {
    assert!(
        input.len().is_multiple_of(GROUP * HIST_PER_ITEM),
        "histogram: {} bytes is not a whole number of groups of {GROUP} work-items of {HIST_PER_ITEM} bytes",
        input.len()
    );
    let items = input.len() / HIST_PER_ITEM;
    let data = Buffer::from_slice(input);
    let bins: Buffer<AtomicUint> = Buffer::new(256);
    let mut launch = Launch::new("histogram", NdRange::new([items]).local([GROUP]));
    let local_bins = launch.local::<AtomicUint>(256);
    let time = timed(|| {
        rt.launch_groups(&launch, |g| {
            // The 256 bins as an array: a byte indexes it with no test, as
            // `lb[in[i]]` in OpenCL C.
            let lb: &[AtomicUint<Local>; 256] = g
                .local(local_bins)
                .as_slice()
                .try_into()
                .expect("256 local bins");
            let (data, bins) = (g.global(&data), g.global(&bins));
            g.for_each(move |it| {
                lb[it.local_linear_id].store_explicit_scope(0, Relaxed, WorkGroupScope)
            });
            g.barrier(LOCAL);
            g.for_each(move |it| {
                let base = it.global_linear_id * HIST_PER_ITEM;
                // Four bytes per step, in order (the compiler does not unroll
                // a loop whose body may call the atomics' slow path); as
                // `kernels.cl`.
                const _: () = assert!(HIST_PER_ITEM.is_multiple_of(4));
                for k in (0..HIST_PER_ITEM).step_by(4) {
                    for j in 0..4 {
                        // SAFETY: base + k + j < items * HIST_PER_ITEM, at most
                        // the input's length, and no one writes `data` during
                        // the launch.
                        let v = unsafe { data.get_unchecked(base + k + j) };
                        lb[usize::from(v)].fetch_add_explicit_scope(1, Relaxed, WorkGroupScope);
                    }
                }
            });
            g.barrier(LOCAL);
            g.for_each(move |it| {
                let l = it.local_linear_id;
                let v = lb[l].load_explicit_scope(Relaxed, WorkGroupScope);
                if v != 0 {
                    bins.at(l).fetch_add_explicit_scope(v, Relaxed, DeviceScope);
                }
            });
        })
        .expect("histogram");
    });
    Run {
        time,
        verified: compare("histogram", &bins.to_vec(), &reference::histogram(input)),
    }
}

/// Ping-pong between two work-groups of one work-item: each side waits for
/// the other's release store with an acquire load, reads the message, and
/// answers.
pub fn message_passing(rt: &Runtime, rounds: usize) -> Run {
    // turn, then the two messages: one cache line, as the limit's.
    let shared: Buffer<AtomicUint> = Buffer::new(3);
    let launch = Launch::new("ping_pong", NdRange::new([2]).local([1]));
    let time = timed(|| {
        rt.launch_groups(&launch, |g| {
            let me = g.get_group_id(0) as u32;
            let s = g.global(&shared);
            g.for_each(|_| {
                let (turn, mine_msg, their_msg) =
                    (s.at(0), s.at(1 + me as usize), s.at(2 - me as usize));
                for r in 0..rounds as u32 {
                    let mine = 2 * r + me;
                    // Acquire: pairs with the other side's release store.
                    while turn.load_explicit(Acquire) != mine {
                        spin_loop();
                    }
                    // Relaxed: ordered by the acquire above.
                    let got = if r == 0 && me == 0 {
                        0
                    } else {
                        their_msg.load_explicit(Relaxed)
                    };
                    // Relaxed: published by the release store below.
                    mine_msg.store_explicit(got + 1, Relaxed);
                    // Release: publishes the message to the other side.
                    turn.store_explicit(mine + 1, Release);
                }
            });
        })
        .expect("ping pong");
    });
    let msg = Buffer::<u32>::from_slice(&shared.to_vec()[1..]);
    let want = vec![2 * rounds as u32 - 1, 2 * rounds as u32];
    Run {
        time,
        verified: compare("messages", &msg.to_vec(), &want),
    }
}
