//! `#[kernel]`: work-item kernels lifted into group-level loops give what a
//! sequential computation gives, and what the same kernel gives on the
//! general engine; a condition around a barrier that work-items disagree on
//! is a barrier divergence (`003_2caebc1f01141481.txt`), reported at the
//! barrier; the checker sees the lifted kernel's accesses as its work-items'.

mod common;

use common::check::reports_of;

use clsync::checker::ReportKind;
use clsync::sync::{GLOBAL, LOCAL};
use clsync::{
    kernel, AtomicFlag, AtomicUint, Buffer, Launch, LaunchError, LocalArg, NdRange, WorkItem,
};

const SOURCE: &str = include_str!("kernel_macro.rs");

// ---- kernels ---------------------------------------------------------------

/// A private value updated between `n` barriers (a `for` over a range).
#[kernel(groups)]
fn barrier_loop(wi: &WorkItem, out: &Buffer<u32>, n: usize) {
    let mut acc = wi.get_local_id(0) as u32;
    for _ in 0..n {
        wi.barrier(LOCAL);
        acc = acc.wrapping_mul(3).wrapping_add(1);
    }
    out.set(wi.get_global_id(0), acc);
}

/// Hillis–Steele inclusive scan of each group in local memory: a `while`
/// whose condition reads a per-work-item variable, two barriers per
/// iteration, and a value read before a barrier and written after it.
#[kernel(groups)]
fn scan(wi: &WorkItem, data: &Buffer<i32>, tmp: LocalArg<i32>) {
    let l = wi.get_local_id(0);
    let n = wi.get_local_size(0);
    let t = wi.local(tmp);
    t.set(l, data.get(wi.get_global_id(0)));
    let mut step = 1;
    while step < n {
        wi.barrier(LOCAL);
        let add = if l >= step { t.get(l - step) } else { 0 };
        wi.barrier(LOCAL);
        t.set(l, t.get(l).wrapping_add(add));
        step *= 2;
    }
    data.set(wi.get_global_id(0), t.get(l));
}

/// A 2-D transpose through a local tile, with `if`/`else` on the group id
/// (uniform) holding a barrier on each side, and nested loops.
#[kernel(groups)]
fn transpose(wi: &WorkItem, src: &Buffer<u32>, dst: &Buffer<u32>, n: usize, tile: LocalArg<u32>) {
    let (x, y) = (wi.get_local_id(0), wi.get_local_id(1));
    let w = wi.get_local_size(0);
    let t = wi.local(tile);
    t.set(
        y * w + x,
        src.get(wi.get_global_id(1) * n + wi.get_global_id(0)),
    );
    if wi.get_group_id(0) % 2 == 0 {
        wi.barrier(LOCAL);
    } else {
        wi.work_group_barrier(LOCAL);
    }
    let (gx, gy) = (wi.get_group_id(1) * w + x, wi.get_group_id(0) * w + y);
    for round in 0..2 {
        for _ in 0..round {
            wi.barrier(LOCAL);
        }
        if round == 1 {
            dst.set(gy * n + gx, t.get(x * w + y));
        }
    }
}

/// A barrier in a `match` on a value uniform by its syntax: lifted, the
/// group taking the arm.
#[kernel(groups)]
fn in_match(wi: &WorkItem, out: &Buffer<u32>, tmp: LocalArg<u32>) {
    let l = wi.get_local_id(0);
    let t = wi.local(tmp);
    t.set(l, l as u32);
    match wi.get_local_size(0) {
        0 => {}
        _ => wi.barrier(LOCAL),
    }
    out.set(wi.get_global_id(0), t.get(wi.get_local_size(0) - 1 - l));
}

/// A condition with a side effect: each work-item runs it once per test.
#[kernel(groups)]
fn counted(wi: &WorkItem, out: &Buffer<u32>) {
    let mut tests = 0u32;
    let mut i = 0;
    while {
        tests += 1;
        i < 3
    } {
        wi.barrier(LOCAL);
        i += 1;
    }
    out.set(wi.get_global_id(0), tests * 100 + wi.get_local_id(0) as u32);
}

/// Work-items 0–2 of each group reach the barrier, the rest do not.
#[kernel(groups)]
fn divergent(wi: &WorkItem, out: &Buffer<u32>) {
    if wi.get_local_id(0) < 3 {
        wi.barrier(LOCAL); //~ divergent barrier
    }
    out.set(wi.get_global_id(0), 1);
}

/// A missing barrier: work-items read their neighbour's element.
#[kernel(groups)]
fn racy(wi: &WorkItem, data: &Buffer<u32>) {
    let i = wi.get_global_id(0);
    data.set(i, i as u32); //~ racy write
    wi.barrier(LOCAL);
    let n = data.get(i ^ 1); //~ racy read
    wi.barrier(GLOBAL);
    data.set(i, n);
}

// ---- tests -----------------------------------------------------------------

#[test]
fn a_barrier_loop_equals_the_sequential_computation_and_the_general_engine() {
    common::within(60, || {
        let (n, local, rounds) = (1024, 128, 7);
        let launch = Launch::new("barrier_loop", NdRange::new([n]).local([local]));
        let want: Vec<u32> = (0..n)
            .map(|g| (0..rounds).fold((g % local) as u32, |a, _| a.wrapping_mul(3).wrapping_add(1)))
            .collect();
        let (lifted, general) = (Buffer::<u32>::new(n), Buffer::<u32>::new(n));
        let rt = common::rt();
        barrier_loop_launch(&rt, &launch, &lifted, rounds).unwrap();
        rt.launch(&launch, |wi| barrier_loop(wi, &general, rounds))
            .unwrap();
        assert_eq!(lifted.to_vec(), want);
        assert_eq!(general.to_vec(), want);
    });
}

#[test]
fn a_scan_equals_the_sequential_scan_checked_and_unchecked() {
    common::within(60, || {
        let (n, local) = (2048, 256);
        let input: Vec<i32> = (0..n as i32).map(|i| (i * 7919) % 1000 - 500).collect();
        let want: Vec<i32> = input
            .chunks(local)
            .flat_map(|c| {
                c.iter().scan(0i32, |acc, &v| {
                    *acc = acc.wrapping_add(v);
                    Some(*acc)
                })
            })
            .collect();
        for checked in [false, true] {
            let data = Buffer::from_slice(&input);
            let mut launch = Launch::new("scan", NdRange::new([n]).local([local])).checked(checked);
            let tmp = launch.local::<i32>(local);
            scan_launch(&common::rt(), &launch, &data, tmp)
                .unwrap_or_else(|e| panic!("checked: {checked}: {e}"));
            assert_eq!(data.to_vec(), want, "checked: {checked}");
        }
    });
}

#[test]
fn a_2d_transpose_with_uniform_branches_and_nested_loops_is_exact() {
    common::within(60, || {
        let (n, w) = (64, 8);
        let input: Vec<u32> = (0..(n * n) as u32).collect();
        let want: Vec<u32> = (0..n * n).map(|i| input[(i % n) * n + i / n]).collect();
        for checked in [false, true] {
            let (src, dst) = (Buffer::from_slice(&input), Buffer::<u32>::new(n * n));
            let mut launch =
                Launch::new("transpose", NdRange::new([n, n]).local([w, w])).checked(checked);
            let tile = launch.local::<u32>(w * w);
            transpose_launch(&common::rt(), &launch, &src, &dst, n, tile)
                .unwrap_or_else(|e| panic!("checked: {checked}: {e}"));
            assert_eq!(dst.to_vec(), want, "checked: {checked}");
        }
    });
}

#[test]
fn a_barrier_in_a_match_on_a_uniform_value_gives_the_reversal() {
    common::within(60, || {
        let (n, local) = (256, 64);
        let out = Buffer::<u32>::new(n);
        let mut launch = Launch::new("in_match", NdRange::new([n]).local([local]));
        let tmp = launch.local::<u32>(local);
        in_match_launch(&common::rt(), &launch, &out, tmp).unwrap();
        let want: Vec<u32> = (0..n).map(|g| (local - 1 - g % local) as u32).collect();
        assert_eq!(out.to_vec(), want);
    });
}

#[test]
fn a_condition_runs_once_per_work_item_per_test() {
    common::within(60, || {
        let out = Buffer::<u32>::new(64);
        let launch = Launch::new("counted", NdRange::new([64]).local([16]));
        counted_launch(&common::rt(), &launch, &out).unwrap();
        let want: Vec<u32> = (0..64).map(|g| 400 + g % 16).collect();
        assert_eq!(out.to_vec(), want);
    });
}

#[test]
fn a_condition_work_items_disagree_on_is_a_divergence_at_the_barrier() {
    let barrier_line = common::check::line_of(SOURCE, "divergent barrier");
    let e = common::within(60, || {
        let out = Buffer::<u32>::new(16);
        let launch = Launch::new("divergent", NdRange::new([16]).local([8]));
        divergent_launch(&common::rt(), &launch, &out).unwrap_err()
    });
    let LaunchError::Divergence(d) = &e else {
        panic!("expected a divergence, got {e}")
    };
    assert_eq!(d.kernel, "divergent");
    assert_eq!(Some(d.barrier.line), barrier_line, "{e}");
    // Work-items 0–2 got `true`, 3–7 `false`.
    assert_eq!(
        common::decided(d),
        vec![
            (vec![0, 1, 2], "true".to_string()),
            (vec![3, 4, 5, 6, 7], "false".to_string())
        ]
    );
    assert!(e.to_string().contains("barrier divergence"), "{e}");

    // Checked, it is a report at the same barrier.
    let reports = common::within(60, || {
        let out = Buffer::<u32>::new(16);
        let launch = Launch::new("divergent", NdRange::new([16]).local([8])).checked(true);
        reports_of(divergent_launch(&common::rt(), &launch, &out).unwrap_err())
    });
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(reports[0].kind, ReportKind::BarrierDivergence);
    assert_eq!(Some(reports[0].site.line), barrier_line);
}

#[test]
fn the_checker_sees_a_lifted_kernels_accesses_as_its_work_items() {
    let reports = common::within(60, || {
        let data = Buffer::<u32>::new(64);
        let launch = Launch::new("racy", NdRange::new([64]).local([16])).checked(true);
        reports_of(racy_launch(&common::rt(), &launch, &data).unwrap_err())
    });
    // A local barrier does not order global memory: the neighbour's write
    // and this read race (003_2caebc1f01141481.txt, CLK_LOCAL_MEM_FENCE).
    common::check::expect(SOURCE, &reports, &[(ReportKind::DataRace, "racy read")]);
    let r = &reports[0];
    assert_eq!(
        Some(r.first.as_ref().expect("the write").site.line),
        common::check::line_of(SOURCE, "racy write")
    );
    let (a, b) = (
        r.first.as_ref().unwrap().item.global_id[0],
        r.second.as_ref().unwrap().item.global_id[0],
    );
    assert_eq!(a ^ 1, b, "the parties are neighbours: {r}");
}

#[test]
fn atomics_and_local_arrays_work_in_lifted_kernels() {
    /// A histogram of `l % 4` per group, in a local array, with local atomics.
    #[kernel(groups)]
    fn bins(wi: &WorkItem, out: &Buffer<AtomicUint>) {
        let l = wi.get_local_id(0);
        let b = wi.local_array::<AtomicUint>(4);
        if l < 4 {
            b.at(l).store(0);
        }
        wi.barrier(LOCAL);
        b.at(l % 4).fetch_add(1);
        wi.barrier(LOCAL);
        if l < 4 {
            out.at(l).fetch_add(b.at(l).load());
        }
    }
    common::within(60, || {
        let out: Buffer<AtomicUint> = Buffer::new(4);
        let launch = Launch::new("bins", NdRange::new([96]).local([24]));
        bins_launch(&common::rt(), &launch, &out).unwrap();
        assert_eq!(out.to_vec(), vec![24, 24, 24, 24]);
    });
}

/// Variables the group may hold (a `let mut` of a uniform value changed only
/// by the group's own statements) and ones it may not (changed under a
/// per-work-item condition, or given a per-work-item value) each keep
/// their per-work-item meaning.
#[test]
fn group_held_and_per_item_variables_keep_their_meaning() {
    #[kernel(groups)]
    fn mixed(wi: &WorkItem, out: &Buffer<u32>) {
        let l = wi.get_local_id(0) as u32;
        let n = wi.get_local_size(0) as u32;
        // Uniform: the group can hold it.
        let mut step = 1u32;
        // Changed under a per-work-item condition: per work-item.
        let mut odd = 0u32;
        // Given a per-work-item value: per work-item.
        let mut last = 0u32;
        while step < n {
            wi.barrier(LOCAL);
            if l % 2 == 1 {
                odd += step;
            }
            last = l * step;
            step *= 2;
        }
        out.set(
            wi.get_global_id(0),
            odd * 1_000_000 + last * 10 + step.min(9),
        );
    }
    common::within(60, || {
        let (n, local) = (96, 32u32);
        let out = Buffer::<u32>::new(n);
        let launch = Launch::new("mixed", NdRange::new([n]).local([local as usize]));
        mixed_launch(&common::rt(), &launch, &out).unwrap();
        // step runs 1, 2, 4, 8, 16 and ends at 32.
        let want: Vec<u32> = (0..n as u32)
            .map(|g| {
                let l = g % local;
                let odd = if l % 2 == 1 { 31 } else { 0 };
                odd * 1_000_000 + l * 16 * 10 + 9
            })
            .collect();
        assert_eq!(out.to_vec(), want);
    });
}

/// `if l < n { … }` on the local id runs as a loop over the first `n`
/// work-items, `if l == c { … }` over work-item `c` alone (none where `c` is
/// past the group's end); with `get_local_id(0)` that holds in 1-D ranges
/// only, and a 2-D range takes the tested loop. All give the sequential
/// result.
#[test]
fn first_items_loops_match_the_sequential_result_in_1d_and_2d() {
    #[kernel(groups)]
    fn firsts(wi: &WorkItem, out: &Buffer<u32>, n: usize, c: usize) {
        let l = wi.get_local_id(0);
        let ll = wi.get_local_linear_id();
        let g = wi.get_global_linear_id();
        wi.barrier(LOCAL);
        if l < n {
            out.set(g, out.get(g) + 1);
        }
        if ll < n {
            out.set(g, out.get(g) + 10);
        }
        if l == c {
            out.set(g, out.get(g) + 100);
        }
        if ll == c + 1 {
            out.set(g, out.get(g) + 1000);
        }
    }
    common::within(60, || {
        for dims in [1, 2] {
            let out = Buffer::<u32>::new(64);
            let launch = if dims == 1 {
                Launch::new("firsts", NdRange::new([64]).local([16]))
            } else {
                Launch::new("firsts", NdRange::new([8, 8]).local([4, 4]))
            };
            // c = 2 names a work-item of every group; c = 15 (so c + 1 =
            // 16) names one in 1-D groups of 16 but is past the end for
            // `ll == c + 1`, and past every 2-D group of 16 work-items too.
            for c in [2, 15] {
                out.copy_from_slice(&[0; 64]);
                firsts_launch(&common::rt(), &launch, &out, 3, c).unwrap();
                let want: Vec<u32> = (0..64)
                    .map(|g: usize| {
                        let (lx, ll) = if dims == 1 {
                            (g % 16, g % 16)
                        } else {
                            let (x, y) = (g % 8, g / 8);
                            (x % 4, (y % 4) * 4 + x % 4)
                        };
                        u32::from(lx < 3)
                            + 10 * u32::from(ll < 3)
                            + 100 * u32::from(lx == c)
                            + 1000 * u32::from(ll == c + 1)
                    })
                    .collect();
                assert_eq!(out.to_vec(), want, "{dims}-D, c = {c}");
            }
        }
    });
}

/// Local-id variables used after barriers are taken from the work-item again
/// in each loop rather than kept per work-item: in a 2-D range, in a loop
/// condition around a barrier (evaluated per work-item: it agrees), and
/// hidden by an inner `let` of the same name, they keep their meaning (equal
/// to the general engine and to the sequential result).
#[test]
fn local_id_variables_keep_their_meaning_across_barriers() {
    #[kernel(groups)]
    fn ids(wi: &WorkItem, out: &Buffer<u32>) {
        let x = wi.get_local_id(0);
        let ll = wi.get_local_linear_id();
        let g = wi.get_global_linear_id();
        let mut acc = 0;
        wi.barrier(LOCAL);
        let mut k = 0;
        // x < 4, so every work-item loops twice.
        while k < x / 100 + 2 {
            wi.barrier(LOCAL);
            acc += x + 1;
            k += 1;
        }
        {
            let x = ll * 100;
            acc += x;
        }
        wi.barrier(LOCAL);
        out.set(g, (acc + x * 10_000) as u32);
    }
    common::within(60, || {
        let launch = Launch::new("ids", NdRange::new([8, 4]).local([4, 2]));
        let (lifted, general) = (Buffer::<u32>::new(32), Buffer::<u32>::new(32));
        ids_launch(&common::rt(), &launch, &lifted).unwrap();
        common::rt()
            .launch(&launch, |wi| ids(wi, &general))
            .unwrap();
        let want: Vec<u32> = (0..32u32)
            .map(|g| {
                let (gx, gy) = (g % 8, g / 8);
                let (x, y) = (gx % 4, gy % 2);
                let ll = y * 4 + x;
                2 * (x + 1) + ll * 100 + x * 10_000
            })
            .collect();
        assert_eq!(lifted.to_vec(), want);
        assert_eq!(general.to_vec(), want);
    });
}

/// Every id a `let` can hold without a slot — local and global ids in each
/// dimension, alone or in a tuple beside other values — keeps its meaning
/// across barriers in a 3-D range with a global offset (equal to the
/// general engine and to the sequential result, where each id is computed
/// from the global position on its own).
#[test]
fn id_variables_of_every_dimension_keep_their_meaning_across_barriers() {
    #[kernel(groups)]
    fn ids3(wi: &WorkItem, out: &Buffer<u32>) {
        let (x, y, z) = (wi.get_local_id(0), wi.get_local_id(1), wi.get_local_id(2));
        let (gx, gy) = (wi.get_global_id(0), wi.get_global_id(1));
        let gz = wi.get_global_id(2);
        let (y2, seven) = (wi.get_local_id(1), 7);
        let g = wi.get_global_linear_id();
        wi.barrier(LOCAL);
        let local = x + 10 * y + 100 * z + seven * y2;
        wi.barrier(LOCAL);
        let global = gx + 10 * gy + 100 * gz;
        out.set(g, (local + 1000 * global) as u32);
    }
    common::within(60, || {
        let (g, l, off) = ([4, 6, 2], [2, 3, 1], [5, 1, 3]);
        let n = g[0] * g[1] * g[2];
        let launch = Launch::new("ids3", NdRange::new(g).local(l).offset(off));
        let (lifted, general) = (Buffer::<u32>::new(n), Buffer::<u32>::new(n));
        ids3_launch(&common::rt(), &launch, &lifted).unwrap();
        common::rt()
            .launch(&launch, |wi| ids3(wi, &general))
            .unwrap();
        let want: Vec<u32> = (0..n)
            .map(|i| {
                let p = [i % g[0], i / g[0] % g[1], i / (g[0] * g[1])];
                let [x, y, z] = std::array::from_fn(|d| p[d] % l[d]);
                let [gx, gy, gz] = std::array::from_fn(|d| p[d] + off[d]);
                (x + 10 * y + 100 * z + 7 * y + 1000 * (gx + 10 * gy + 100 * gz)) as u32
            })
            .collect();
        assert_eq!(lifted.to_vec(), want);
        assert_eq!(general.to_vec(), want);
    });
}

/// `if l == 0 { … }` right after `let l = wi.get_local_id(0)`, with no
/// barrier between, runs over work-item 0 alone; a test whose bound is a
/// per-work-item `let` of the same stretch stays a test per work-item; a
/// buffer of atomic flags is reached through a view. Equal to the general
/// engine and to the sequential result.
#[test]
fn first_items_tests_right_after_their_ids_let_match_the_sequential_result() {
    #[kernel(groups)]
    fn fresh(wi: &WorkItem, out: &Buffer<u32>, flags: &Buffer<AtomicFlag>) {
        let l = wi.get_local_id(0);
        let g = wi.get_global_id(0);
        if l == 0 {
            out.set(g, 1);
        }
        let n = 8 - l % 8;
        if l < n {
            out.set(g, out.get(g) + 10);
        }
        // Not an id: a test per work-item.
        let half = wi.get_local_id(0) / 2;
        if half == 1 {
            out.set(g, out.get(g) + 1000);
        }
        // Exactly one work-item of each group finds its group's flag clear.
        let first = !flags.at(wi.get_group_id(0)).test_and_set();
        wi.barrier(LOCAL);
        out.set(g, out.get(g) + 100 * u32::from(first));
    }
    common::within(60, || {
        let (n, local) = (64, 16);
        let launch = Launch::new("fresh", NdRange::new([n]).local([local]));
        let want: Vec<u32> = (0..n)
            .map(|g| {
                let l = g % local;
                u32::from(l == 0) + 10 * u32::from(l < 8 - l % 8) + 1000 * u32::from(l / 2 == 1)
            })
            .collect();
        for lifted in [true, false] {
            let out = Buffer::<u32>::new(n);
            let flags: Buffer<AtomicFlag> = Buffer::new(n / local);
            if lifted {
                fresh_launch(&common::rt(), &launch, &out, &flags).unwrap();
            } else {
                common::rt()
                    .launch(&launch, |wi| fresh(wi, &out, &flags))
                    .unwrap();
            }
            let got = out.to_vec();
            let firsts: Vec<u32> = got
                .chunks(local)
                .map(|c| c.iter().map(|v| v / 100 % 10).sum())
                .collect();
            assert_eq!(firsts, vec![1; n / local], "lifted: {lifted}");
            let rest: Vec<u32> = got.iter().map(|v| v % 100 + v / 1000 * 1000).collect();
            assert_eq!(rest, want, "lifted: {lifted}");
        }
    });
}

/// In a 1-D range, ids of the dimensions it does not have are 0 (local)
/// and the offset's 0 (global), as `get_local_id(d)` and `get_global_id(d)`
/// give for `d >= get_work_dim()`; held across a barrier without a slot,
/// they keep those values, as on the general engine.
#[test]
fn ids_of_dimensions_a_1d_range_lacks_stay_zero_across_barriers() {
    #[kernel(groups)]
    fn unused_dims(wi: &WorkItem, out: &Buffer<u32>) {
        let (y, z) = (wi.get_local_id(1), wi.get_local_id(2));
        let gy = wi.get_global_id(1);
        let g = wi.get_global_id(0);
        wi.barrier(LOCAL);
        out.set(g, (1 + y + 10 * z + 100 * gy) as u32);
    }
    common::within(60, || {
        let launch = Launch::new("unused_dims", NdRange::new([32]).local([8]).offset([3]));
        let n = 32 + 3;
        let (lifted, general) = (Buffer::<u32>::new(n), Buffer::<u32>::new(n));
        unused_dims_launch(&common::rt(), &launch, &lifted).unwrap();
        common::rt()
            .launch(&launch, |wi| unused_dims(wi, &general))
            .unwrap();
        let want: Vec<u32> = (0..n).map(|g| u32::from(g >= 3)).collect();
        assert_eq!(lifted.to_vec(), want);
        assert_eq!(general.to_vec(), want);
    });
}
