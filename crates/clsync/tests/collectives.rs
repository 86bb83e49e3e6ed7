//! Work-group and sub-group collectives of Rust kernels, against
//! sequential computations over each group and sub-group: reductions,
//! scans, broadcasts, votes, ballots and clustered reductions, with a last
//! sub-group smaller than the others, checked and unchecked; non-uniform
//! operations over the lanes that reach them; and a collective not every
//! work-item reaches is a divergence, not a hang.

use clsync::{Buffer, Launch, LaunchError, NdRange, Runtime};

/// 3 groups of 20 work-items, sub-groups of 8 (8, 8 and 4 per group).
fn launch() -> Launch {
    Launch::new(
        "collectives",
        NdRange::new([60]).local([20]).sub_group_size(8),
    )
}

fn value(g: usize) -> i32 {
    ((g * 37) % 23) as i32 - 11
}

/// The runs a work-item's collective ranges over: its group and its
/// sub-group, as (start, len) in global ids.
fn ranges(g: usize) -> ((usize, usize), (usize, usize)) {
    let group = (g / 20 * 20, 20);
    let l = g % 20;
    let sub_start = group.0 + l / 8 * 8;
    let sub = (sub_start, (group.0 + 20 - sub_start).min(8));
    (group, sub)
}

#[test]
fn reductions_and_scans_match_sequential_ones() {
    for rt in [
        Runtime::with_threads(2),
        Runtime::with_threads(2).with_checking(true),
    ] {
        let out: Buffer<i32> = Buffer::new(60 * 12);
        let fout: Buffer<f32> = Buffer::new(60);
        rt.launch(&launch(), |wi| {
            let g = wi.get_global_id(0);
            let x = value(g);
            let r = [
                wi.work_group_reduce_add(x),
                wi.work_group_reduce_min(x),
                wi.work_group_reduce_max(x),
                wi.work_group_scan_inclusive_add(x),
                wi.work_group_scan_exclusive_add(x),
                wi.work_group_scan_exclusive_max(x),
                wi.sub_group_reduce_add(x),
                wi.sub_group_reduce_min(x),
                wi.sub_group_scan_inclusive_max(x),
                wi.sub_group_scan_exclusive_add(x),
                wi.sub_group_scan_exclusive_min(x),
                wi.sub_group_scan_inclusive_add(x),
            ];
            for (k, v) in r.iter().enumerate() {
                out.set(g * 12 + k, *v);
            }
            fout.set(g, wi.sub_group_reduce_add(x as f32 * 0.5));
        })
        .unwrap();
        for g in 0..60 {
            let ((gs, gl), (ss, sl)) = ranges(g);
            let group: Vec<i32> = (gs..gs + gl).map(value).collect();
            let sub: Vec<i32> = (ss..ss + sl).map(value).collect();
            let (gi, si) = (g - gs, g - ss);
            let want = [
                group.iter().sum::<i32>(),
                *group.iter().min().unwrap(),
                *group.iter().max().unwrap(),
                group[..=gi].iter().sum(),
                group[..gi].iter().sum(),
                group[..gi].iter().copied().max().unwrap_or(i32::MIN),
                sub.iter().sum(),
                *sub.iter().min().unwrap(),
                *sub[..=si].iter().max().unwrap(),
                sub[..si].iter().sum(),
                sub[..si].iter().copied().min().unwrap_or(i32::MAX),
                sub[..=si].iter().sum(),
            ];
            let got: Vec<i32> = (0..12).map(|k| out.get(g * 12 + k)).collect();
            assert_eq!(got, want, "work-item {g} (checked: {})", rt.checking());
            let fwant: f32 = sub.iter().map(|v| *v as f32 * 0.5).sum();
            assert_eq!(fout.get(g), fwant);
        }
    }
}

#[test]
fn broadcasts_votes_ballots_and_clusters() {
    let out: Buffer<u64> = Buffer::new(60 * 7);
    Runtime::with_threads(2)
        .launch(&launch(), |wi| {
            let g = wi.get_global_id(0);
            let l = wi.get_local_id(0);
            let s = wi.get_sub_group_local_id();
            let r = [
                wi.work_group_broadcast(g as u64 * 10, 7),
                wi.sub_group_broadcast(g as u64 * 10, 3),
                u64::from(wi.work_group_all(l < 20)),
                u64::from(wi.work_group_any(l == 19)),
                u64::from(wi.sub_group_all(s != 2)),
                wi.sub_group_ballot(s % 3 == 0),
                wi.sub_group_clustered_reduce_add(g as u64, 2),
            ];
            for (k, v) in r.iter().enumerate() {
                out.set(g * 7 + k, *v);
            }
        })
        .unwrap();
    for g in 0..60 {
        let ((gs, _), (ss, sl)) = ranges(g);
        let ballot = (0..sl).filter(|k| k % 3 == 0).fold(0u64, |m, k| m | 1 << k);
        let pair = (g - ss) / 2 * 2 + ss;
        let want = [
            (gs + 7) as u64 * 10,
            (ss + 3) as u64 * 10,
            1,
            1,
            u64::from(sl <= 2),
            ballot,
            (pair..(pair + 2).min(ss + sl)).map(|x| x as u64).sum(),
        ];
        let got: Vec<u64> = (0..7).map(|k| out.get(g * 7 + k)).collect();
        assert_eq!(got, want, "work-item {g}");
    }
}

/// Non-uniform operations in divergent code: each branch's lanes are its
/// active set (a reduction, a scan, an election, a ballot over them only),
/// a loop's iteration the lanes still in it, and after the branches the
/// whole sub-group again; checked and unchecked.
#[test]
fn non_uniform_operations_run_over_the_lanes_that_reach_them() {
    for check in [false, true] {
        let out: Buffer<u64> = Buffer::new(60 * 6);
        // A checked launch fails on any report.
        Runtime::with_threads(2)
            .with_checking(check)
            .launch(&launch(), |wi| {
                let g = wi.get_global_id(0);
                let s = wi.get_sub_group_local_id();
                let x = value(g) as i64;
                let r = if x < 0 {
                    [
                        wi.sub_group_non_uniform_reduce_add(x) as u64,
                        wi.sub_group_non_uniform_scan_inclusive_add(x) as u64,
                        u64::from(wi.sub_group_elect()),
                    ]
                } else {
                    [
                        wi.sub_group_non_uniform_reduce_max(x) as u64,
                        wi.sub_group_ballot(x % 2 == 0),
                        u64::from(wi.sub_group_elect()),
                    ]
                };
                let mut trips = 0;
                for _ in 0..s % 3 {
                    trips += wi.sub_group_non_uniform_reduce_add(1u64);
                }
                let all = wi.sub_group_non_uniform_reduce_add(1u64);
                for (k, v) in r.iter().chain(&[trips, all, 0]).enumerate() {
                    out.set(g * 6 + k, *v);
                }
            })
            .unwrap();
        for g in 0..60 {
            let (_, (ss, sl)) = ranges(g);
            let neg = value(g) < 0;
            let set: Vec<usize> = (ss..ss + sl).filter(|k| (value(*k) < 0) == neg).collect();
            let x = |k: &usize| value(*k) as i64;
            let first = [
                if neg {
                    set.iter().map(x).sum::<i64>() as u64
                } else {
                    set.iter().map(x).max().unwrap() as u64
                },
                if neg {
                    set.iter().filter(|k| **k <= g).map(x).sum::<i64>() as u64
                } else {
                    set.iter()
                        .filter(|k| x(k) % 2 == 0)
                        .fold(0u64, |m, k| m | 1 << (k - ss))
                },
                u64::from(set[0] == g),
            ];
            let in_loop = |i: usize| (ss..ss + sl).filter(|k| (k - ss) % 3 > i).count() as u64;
            let trips: u64 = (0..(g - ss) % 3).map(in_loop).sum();
            let want = [first[0], first[1], first[2], trips, sl as u64, 0];
            let got: Vec<u64> = (0..6).map(|k| out.get(g * 6 + k)).collect();
            assert_eq!(got, want, "work-item {g} (checked: {check}), lanes {set:?}");
        }
    }
}

#[test]
fn a_collective_not_every_work_item_reaches_is_a_divergence() {
    let e = Runtime::with_threads(1)
        .launch(&Launch::new("half", NdRange::new([16]).local([16])), |wi| {
            if wi.get_local_id(0) < 3 {
                wi.work_group_reduce_add(1u32);
            }
        })
        .unwrap_err();
    let LaunchError::Divergence(d) = e else {
        panic!("not a divergence: {e}")
    };
    assert!(d.to_string().contains("collectives.rs"), "{d}");
}
