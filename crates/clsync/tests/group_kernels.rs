//! Group-level kernels (`Runtime::launch_groups`): the ids `for_each` counts
//! out match the work-item functions' ids, barriers keep their flags'
//! meaning under the checker (`003_2caebc1f01141481.txt`), and a panic
//! names its work-item.

mod common;

use clsync::checker::{Report, ReportKind};
use clsync::sync::{FenceFlags, GLOBAL, LOCAL};
use clsync::{Buffer, Launch, LaunchError, NdRange};

#[test]
fn for_each_ids_match_the_work_item_functions() {
    common::within(60, || {
        // Three dimensions, an offset, and non-uniform last groups.
        let range = NdRange::new([10, 6, 3]).local([4, 4, 2]).offset([5, 0, 7]);
        let launch = Launch::new("ids", range);
        let seen = Buffer::<u32>::new(10 * 6 * 3);
        common::rt()
            .launch_groups(&launch, |g| {
                g.for_each(|it| {
                    let ids = g.ids(it.local_linear_id);
                    assert_eq!(it.local_id, ids.local_id);
                    assert_eq!(it.global_id, ids.global_id);
                    assert_eq!(it.global_linear_id, ids.global_linear_id);
                    seen.atomic_inc(it.global_linear_id);
                });
                g.for_each_in(1..3, |it| assert!((1..3).contains(&it.local_linear_id)));
            })
            .unwrap();
        assert_eq!(seen.to_vec(), vec![1; 10 * 6 * 3], "each work-item once");
    });
}

/// The reports of a checked group kernel that writes global memory, passes
/// a barrier with `flags`, and reads another work-item's element.
fn exchange_through_global_memory<F: FenceFlags + Send + Sync + 'static>(flags: F) -> Vec<Report> {
    let data = Buffer::<u32>::new(16);
    let launch = Launch::new("flags", NdRange::new([16]).local([16]));
    common::within(60, move || {
        common::rt()
            .check_groups(&launch, |g| {
                g.for_each(|it| data.set(it.global_linear_id, 1));
                g.barrier(flags);
                g.for_each(|it| {
                    let _ = data.get(15 - it.global_linear_id);
                });
            })
            .unwrap()
    })
}

#[test]
fn a_local_barrier_does_not_order_global_memory_in_group_kernels() {
    let reports = exchange_through_global_memory(LOCAL);
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(reports[0].kind, ReportKind::DataRace);
}

#[test]
fn a_global_barrier_orders_it() {
    let reports = exchange_through_global_memory(GLOBAL);
    assert!(reports.is_empty(), "{reports:?}");
}

#[test]
fn a_panic_names_its_work_item() {
    common::within(60, || {
        let launch = Launch::new("boom", NdRange::new([64]).local([16]));
        let e = common::rt()
            .launch_groups(&launch, |g| {
                g.for_each(|it| {
                    if it.global_linear_id == 37 {
                        panic!("work-item 37 gives up");
                    }
                })
            })
            .unwrap_err();
        match e {
            LaunchError::Panic(p) => {
                assert_eq!(p.ids.global_id[0], 37);
                assert!(p.message.contains("gives up"));
            }
            other => panic!("expected a panic error, got {other}"),
        }
    });
}
