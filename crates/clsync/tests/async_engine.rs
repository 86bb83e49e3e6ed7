//! The async engine: the same scheduler, barrier semantics, divergence
//! reports and checker as the coroutine engine, with work-items as futures.

mod common;

use clsync::checker::ReportKind;
use clsync::sync::{GLOBAL, LOCAL};
use clsync::{Buffer, Launch, LaunchError, NdRange};

#[test]
fn tree_reduction_matches_the_sequential_sum() {
    common::within(60, || {
        let input = Buffer::from_slice(&(1..=2048u32).collect::<Vec<_>>());
        let sums = Buffer::<u32>::new(8);
        let mut launch = Launch::new("reduce", NdRange::new([2048]).local([256]));
        let scratch = launch.local::<u32>(256);
        common::rt()
            .launch_async(&launch, async |wi| {
                let l = wi.get_local_id(0);
                let s = wi.local(scratch);
                s.set(l, input.get(wi.get_global_id(0)));
                let mut half = 128;
                while half > 0 {
                    wi.barrier_async(LOCAL).await;
                    if l < half {
                        s.set(l, s.get(l) + s.get(l + half));
                    }
                    half /= 2;
                }
                if l == 0 {
                    sums.set(wi.get_group_id(0), s.get(0));
                }
            })
            .unwrap();
        let want: Vec<u32> = (0..8)
            .map(|g| (g * 256 + 1..=g * 256 + 256).sum())
            .collect();
        assert_eq!(sums.to_vec(), want);
    });
}

#[test]
fn divergent_barrier_is_reported_not_hung() {
    common::within(60, || {
        let launch = Launch::new("div", NdRange::new([8]).local([8]));
        let e = common::rt()
            .launch_async(&launch, async |wi| {
                if wi.get_local_id(0) < 3 {
                    wi.barrier_async(GLOBAL).await;
                }
            })
            .unwrap_err();
        match e {
            LaunchError::Divergence(d) => {
                assert!(d.to_string().contains("returned from the kernel"))
            }
            other => panic!("expected divergence, got {other}"),
        }
    });
}

#[test]
fn sub_group_barriers_release_per_sub_group() {
    common::within(60, || {
        let out = Buffer::<u32>::new(16);
        let mut launch = Launch::new("sg", NdRange::new([16]).local([16]).sub_group_size(4));
        let tile = launch.local::<u32>(16);
        common::rt()
            .launch_async(&launch, async |wi| {
                let l = wi.get_local_id(0);
                let t = wi.local(tile);
                t.set(l, l as u32);
                wi.sub_group_barrier_async(LOCAL).await;
                out.set(l, t.get(l ^ 3));
            })
            .unwrap();
        assert_eq!(out.get(0), 3);
        assert_eq!(out.get(13), 14);
    });
}

#[test]
fn the_checker_sees_async_work_items() {
    common::within(60, || {
        let data = Buffer::<u32>::new(8);
        let launch = Launch::new("racy", NdRange::new([8]).local([8])).checked(true);
        let e = common::rt()
            .launch_async(&launch, async |wi| {
                let g = wi.get_global_id(0);
                data.set(g, 1);
                let _ = data.get(7 - g);
            })
            .unwrap_err();
        match e {
            LaunchError::Reported(r) => assert_eq!(r.reports[0].kind, ReportKind::DataRace),
            other => panic!("expected reports, got {other}"),
        }
    });
}

#[test]
fn a_sync_barrier_in_an_async_kernel_is_an_error() {
    common::within(60, || {
        let launch = Launch::new("mixed", NdRange::new([2]));
        let e = common::rt()
            .launch_async(&launch, async |wi| wi.barrier(LOCAL))
            .unwrap_err();
        assert!(e.to_string().contains("awaits its barriers"), "{e}");
    });
}
