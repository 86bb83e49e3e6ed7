//! `Group::for_each_linear`: the loop over a group's work-items for code
//! that needs only the local linear id (what `#[kernel]` gives a stretch
//! between barriers that names no other id). Each work-item runs once, in
//! order; the checker knows each access as its work-item's; a panic names
//! its work-item; a barrier inside is an error, as inside `for_each`.

mod common;

use clsync::checker::ReportKind;
use clsync::sync::LOCAL;
use clsync::{Buffer, Launch, NdRange};

/// In order, once each, in both modes, in a 2-D group and a last group
/// smaller than the rest.
#[test]
fn every_work_item_runs_once_in_local_linear_order() {
    common::within(60, || {
        for checked in [false, true] {
            let range = NdRange::new([10, 3]).local([4, 3]);
            let launch = Launch::new("linear", range).checked(checked);
            // Per group: its work-items' ids in the order they ran.
            let order = Buffer::<u32>::new(3 * 12);
            let next = Buffer::<u32>::new(3);
            common::rt()
                .launch_groups(&launch, |g| {
                    let group = g.get_group_id(0);
                    g.for_each_linear(|it| {
                        let k = next.atomic_inc(group) as usize;
                        order.set(group * 12 + k, it.local_linear_id as u32);
                    });
                    assert_eq!(next.get(group) as usize, g.len());
                })
                .unwrap();
            let got = order.to_vec();
            // Groups of 12, 12 and 2 × 3 = 6 work-items.
            for (group, len) in [(0, 12), (1, 12), (2, 6)] {
                let ran = &got[group * 12..group * 12 + len];
                assert_eq!(
                    ran,
                    (0..len as u32).collect::<Vec<_>>(),
                    "group {group}, checked: {checked}"
                );
            }
        }
    });
}

/// Checked, a work-item's write and its neighbour's read in the same loop
/// race, and the report names the two neighbours.
#[test]
fn the_checker_sees_each_access_as_its_work_items() {
    let mut launch = Launch::new("racy", NdRange::new([8]).local([8]));
    let s = launch.local::<u32>(8);
    let reports = common::within(60, move || {
        common::rt()
            .check_groups(&launch, |g| {
                let s = g.local(s);
                g.for_each_linear(move |it| s.set(it.local_linear_id, 0));
                g.barrier(LOCAL);
                g.for_each_linear(move |it| {
                    let l = it.local_linear_id;
                    s.set(l, 1);
                    let _ = s.get((l + 1) % 8);
                });
                g.barrier(LOCAL);
            })
            .unwrap()
    });
    assert!(!reports.is_empty());
    for r in &reports {
        assert_eq!(r.kind, ReportKind::DataRace, "{r}");
        let (a, b) = (
            r.first.as_ref().expect("the other access").item.local_id[0],
            r.second.as_ref().expect("this access").item.local_id[0],
        );
        assert!((a + 1) % 8 == b || (b + 1) % 8 == a, "not neighbours: {r}");
    }
}

/// A panic names the work-item that panicked, checked or not; a barrier
/// inside the loop is the error it is inside `for_each`.
#[test]
fn a_panic_names_its_work_item_and_a_barrier_inside_is_an_error() {
    common::within(60, || {
        for checked in [false, true] {
            let launch = Launch::new("stops", NdRange::new([16]).local([16])).checked(checked);
            let e = common::rt()
                .launch_groups(&launch, |g| {
                    g.for_each_linear(|it| assert_ne!(it.local_linear_id, 11, "stop"))
                })
                .unwrap_err();
            let p = common::kernel_panic(e);
            assert_eq!(p.ids.local_linear_id, 11, "checked: {checked}: {p}");

            let e = common::rt()
                .launch_groups(&launch, |g| g.for_each_linear(|_| g.barrier(LOCAL)))
                .unwrap_err();
            common::misplaced_barrier(e);
        }
    });
}
