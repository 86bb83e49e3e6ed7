//! Ports of the Khronos OpenCL-CTS synchronization tests: `test_barrier`,
//! `test_local` (local-memory reductions), the `atomic_flag` mutual
//! exclusion test, the `sub_group_barrier` reversal test, non-uniform
//! work-groups, and the inclusive-scopes pattern. Results are checked the way
//! the CTS checks them: against a sequential computation on the host.

mod common;

use clsync::sync::*;
use clsync::*;
use clsync_samples::subgroup_reverse::{reference, reverse_sub_groups};
use common::{rt, within};

/// CTS `test_barrier` (basic/test_barrier): each group sums its slice in
/// local memory, one work-item adding everything after a barrier, and every
/// work-item writes the group's sum; compared with a sequential sum.
#[test]
fn cts_test_barrier() {
    for (n, local) in [(4096, 256), (1000, 100), (777, 37)] {
        let input: Vec<i32> = (0..n as i32).map(|i| (i * 31) % 97 - 40).collect();
        let src = Buffer::from_slice(&input);
        let dst = Buffer::<i32>::new(n);
        let mut launch = Launch::new("compute_sum", NdRange::new([n]).local([local]));
        let tmp = launch.local::<i32>(local);
        rt().launch(&launch, |wi| {
            let l = wi.get_local_id(0);
            let t = wi.local(tmp);
            t.set(l, src.get(wi.get_global_id(0)));
            wi.barrier(LOCAL);
            if l == 0 {
                let s = (0..wi.get_local_size(0)).map(|i| t.get(i)).sum();
                t.set(0, s);
            }
            wi.barrier(LOCAL);
            dst.set(wi.get_global_id(0), t.get(0));
        })
        .unwrap();
        let got = dst.to_vec();
        for (g, chunk) in input.chunks(local).enumerate() {
            let want: i32 = chunk.iter().sum();
            assert!(
                got[g * local..g * local + chunk.len()]
                    .iter()
                    .all(|&v| v == want),
                "group {g}"
            );
        }
    }
}

/// CTS `test_local` (basic/test_local): a pairwise tree reduction of `int`
/// in a local argument, one result per group.
#[test]
fn cts_test_local() {
    let rt = rt();
    for n in [1usize, 255, 256, 257, 100_000] {
        let data: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
        let input = Buffer::from_slice(&data);
        let (partials, _) = clsync_samples::reduce::reduce_groups(&rt, &input).unwrap();
        let want: Vec<u32> = data
            .chunks(256)
            .map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b)))
            .collect();
        assert_eq!(partials.to_vec(), want, "n = {n}");
    }
}

/// CTS `atomic_flag` (c11_atomics): a spin lock made of
/// `atomic_flag_test_and_set_explicit(relaxed)` plus an acquire fence, and
/// `atomic_flag_clear_explicit(relaxed)` after a release fence, guards a
/// non-atomic counter; every work-item of every group increments it once.
#[test]
fn cts_atomic_flag_mutual_exclusion() {
    within(60, || {
        let n = 2048;
        let lock: Buffer<AtomicFlag> = Buffer::new(1);
        let counter = Buffer::<u32>::new(1);
        let order = Buffer::<AtomicUint>::new(1);
        let tickets = Buffer::<u32>::new(n);
        rt().launch(
            &Launch::new("flag_lock", NdRange::new([n]).local([32])),
            |wi| {
                while lock.at(0).test_and_set_explicit_scope(Relaxed, DeviceScope) {
                    std::hint::spin_loop();
                }
                wi.atomic_work_item_fence(GLOBAL, Acquire, DeviceScope);
                let c = counter.get(0);
                counter.set(0, c + 1);
                tickets.set(wi.get_global_id(0), c);
                order.at(0).fetch_add_explicit(1, Relaxed);
                wi.atomic_work_item_fence(GLOBAL, Release, DeviceScope);
                lock.at(0).clear_explicit_scope(Relaxed, DeviceScope);
            },
        )
        .unwrap();
        assert_eq!(counter.get(0), n as u32);
        let mut t = tickets.to_vec();
        t.sort_unstable();
        assert_eq!(
            t,
            (0..n as u32).collect::<Vec<_>>(),
            "every work-item saw a distinct count"
        );
    });
}

/// The same lock in local memory, at work-group scope, per group.
#[test]
fn cts_atomic_flag_in_local_memory() {
    let groups = 8;
    let counts = Buffer::<u32>::new(groups);
    rt().launch(
        &Launch::new("local_flag_lock", NdRange::new([64 * groups]).local([64])),
        |wi| {
            let lock = wi.local_array::<AtomicFlag>(1);
            let count = wi.local_array::<u32>(1);
            if wi.get_local_id(0) == 0 {
                lock.at(0).clear_explicit_scope(Relaxed, WorkGroupScope);
                count.set(0, 0);
            }
            wi.barrier(LOCAL);
            while lock
                .at(0)
                .test_and_set_explicit_scope(Acquire, WorkGroupScope)
            {}
            count.set(0, count.get(0) + 1);
            lock.at(0).clear_explicit_scope(Release, WorkGroupScope);
            wi.barrier(LOCAL);
            if wi.get_local_id(0) == 0 {
                counts.set(wi.get_group_id(0), count.get(0));
            }
        },
    )
    .unwrap();
    assert_eq!(counts.to_vec(), vec![64; groups]);
}

/// CTS `test_sub_group_barrier` (subgroups/test_barrier): global 2000,
/// local 200; each work-item reads the element of its mirror in its
/// sub-group after `sub_group_barrier(CLK_LOCAL_MEM_FENCE)`.
#[test]
fn cts_sub_group_barrier_reversal() {
    let rt = rt();
    let data: Vec<u32> = (0..2000u32).map(|i| i * 7 + 3).collect();
    let input = Buffer::from_slice(&data);
    for sg in [1, 2, 7, 16, 32, 33, 64] {
        let (out, _) = reverse_sub_groups(&rt, &input, 200, sg).unwrap();
        assert_eq!(
            out.to_vec(),
            reference(&data, 200, sg),
            "sub-group size {sg}"
        );
    }
}

/// CTS `test_non_uniform_work_group` (non_uniform_work_group): in 1, 2 and
/// 3 dimensions, every work-item runs exactly once, `get_local_size` is the
/// remainder in the last group and `get_enqueued_local_size` the launch's,
/// and a barrier-based group sum uses the actual group size.
#[test]
fn cts_non_uniform_work_groups() {
    let rt = rt();
    for (global, local) in [
        (vec![17], vec![4]),
        (vec![1000], vec![128]),
        (vec![13, 7], vec![4, 3]),
        (vec![9, 5, 6], vec![4, 2, 4]),
        (vec![3, 3, 3], vec![2, 2, 2]),
    ] {
        let (range, dims) = match global.len() {
            1 => (NdRange::new([global[0]]).local([local[0]]), 1),
            2 => (
                NdRange::new([global[0], global[1]]).local([local[0], local[1]]),
                2,
            ),
            _ => (
                NdRange::new([global[0], global[1], global[2]])
                    .local([local[0], local[1], local[2]]),
                3,
            ),
        };
        let geo = range.resolve().unwrap();
        let n = geo.item_count();
        let hits = Buffer::<AtomicUint>::new(n);
        let bad = Buffer::<AtomicUint>::new(1);
        let sums = Buffer::<u32>::new(n);
        let launch = Launch::new("non_uniform", range);
        rt.launch(&launch, |wi| {
            hits.at(wi.get_global_linear_id()).fetch_add(1);
            for d in 0..dims as u32 {
                let g = wi.get_global_size(d);
                let e = wi.get_enqueued_local_size(d);
                let groups = wi.get_num_groups(d);
                let want = if wi.get_group_id(d) == groups - 1 && g % e != 0 {
                    g % e
                } else {
                    e
                };
                if wi.get_local_size(d) != want || groups != g.div_ceil(e) {
                    bad.at(0).fetch_add(1);
                }
            }
            let size: usize = (0..3).map(|d| wi.get_local_size(d)).product();
            let s = wi.local_array::<u32>(size);
            s.set(wi.get_local_linear_id(), 1);
            wi.barrier(LOCAL);
            let total: u32 = (0..size).map(|i| s.get(i)).sum();
            sums.set(wi.get_global_linear_id(), total);
        })
        .unwrap();
        assert!(
            hits.to_vec().iter().all(|&h| h == 1),
            "{global:?}/{local:?}: every work-item exactly once"
        );
        assert_eq!(bad.at(0).load(), 0, "{global:?}/{local:?}: local sizes");
        // Each work-item's group sum is its group's actual size.
        let mut want = vec![0u32; n];
        for g in 0..geo.group_count() {
            let gid = geo.group_id(g);
            let ls = geo.local_size_of(gid);
            let size = ls.iter().product::<usize>() as u32;
            for z in 0..ls[2] {
                for y in 0..ls[1] {
                    for x in 0..ls[0] {
                        let id = [
                            gid[0] * geo.enqueued_local()[0] + x,
                            gid[1] * geo.enqueued_local()[1] + y,
                            gid[2] * geo.enqueued_local()[2] + z,
                        ];
                        let lin = id[2] * geo.global()[1] * geo.global()[0]
                            + id[1] * geo.global()[0]
                            + id[0];
                        want[lin] = size;
                    }
                }
            }
        }
        assert_eq!(sums.to_vec(), want, "{global:?}/{local:?}: group sums");
    }
}

/// The inclusive-scopes pattern (OpenCL 2.0 §3.3.4; CTS c11_atomics
/// `fence` tests): every work-item writes its datum, then does a release
/// `atomic_fetch_add` at the producer scope; the one that sees it was last
/// does an acquire load at the consumer scope and must see every datum of
/// its scope instance. The instance is the narrower of the two scopes, the
/// set in which both operations are inclusive.
#[test]
fn cts_inclusive_scopes_release_add_acquire_last() {
    let scopes = [
        MemScope::SubGroup,
        MemScope::WorkGroup,
        MemScope::Device,
        MemScope::AllSvmDevices,
    ];
    let rt = rt();
    for producer in scopes {
        for consumer in scopes {
            let inner = producer.min(consumer);
            let range = NdRange::new([1500]).local([100]).sub_group_size(16);
            let geo = range.resolve().unwrap();
            let n = geo.item_count();
            let data = Buffer::<u32>::new(n);
            let counters: Buffer<AtomicUint> =
                Buffer::new(geo.group_count() * geo.enqueued_num_sub_groups());
            let checked = Buffer::<AtomicUint>::new(1);
            let bad = Buffer::<AtomicUint>::new(1);
            rt.launch(&Launch::new("inclusive", range), |wi| {
                let g = wi.get_global_id(0);
                let (inst, members, first) = match inner {
                    MemScope::SubGroup => {
                        let sg = wi.get_sub_group_id() as usize;
                        let base = wi.get_group_id(0) * 100 + sg * 16;
                        (
                            wi.get_group_id(0) * wi.get_enqueued_num_sub_groups() as usize + sg,
                            wi.get_sub_group_size() as usize,
                            base,
                        )
                    }
                    MemScope::WorkGroup => (
                        wi.get_group_id(0),
                        wi.get_local_size(0),
                        wi.get_group_id(0) * 100,
                    ),
                    _ => (0, wi.get_global_size(0), 0),
                };
                data.set(g, g as u32 + 1);
                let old = counters
                    .at(inst)
                    .fetch_add_dyn(1, MemOrder::Release, producer)
                    .unwrap();
                if old as usize == members - 1 {
                    let seen = counters
                        .at(inst)
                        .load_dyn(MemOrder::Acquire, consumer)
                        .unwrap();
                    if seen as usize != members
                        || (first..first + members).any(|i| data.get(i) != i as u32 + 1)
                    {
                        bad.at(0).fetch_add(1);
                    }
                    checked.at(0).fetch_add(1);
                }
            })
            .unwrap();
            let (checked, bad) = (checked.at(0).load(), bad.at(0).load());
            let want = match inner {
                MemScope::SubGroup => geo.group_count() * 100usize.div_ceil(16),
                MemScope::WorkGroup => geo.group_count(),
                _ => 1,
            };
            assert_eq!(
                checked as usize, want,
                "{producer}/{consumer}: one last work-item per instance"
            );
            assert_eq!(
                bad, 0,
                "{producer}/{consumer}: the last work-item saw every datum"
            );
        }
    }
}
