//! `Group::for_each_block`: a group's work-items in blocks of `X`
//! consecutive work-items of a row, and the rest one at a time. Every
//! work-item runs exactly once, with the ids the work-item functions give
//! it; a checked launch runs them one at a time; a barrier inside is an
//! error, as inside `for_each`.

mod common;

use clsync::sync::LOCAL;
use clsync::{Buffer, Group, Item, Launch, NdRange};
use proptest::prelude::*;

/// Checks `it`'s ids against the work-item functions' and counts it in
/// `seen` (by global linear id).
fn visit(g: &Group<'_>, seen: &Buffer<u32>, it: &Item) {
    let ids = g.ids(it.local_linear_id);
    assert_eq!(it.local_id, ids.local_id);
    assert_eq!(it.global_id, ids.global_id);
    assert_eq!(it.global_linear_id, ids.global_linear_id);
    seen.atomic_inc(it.global_linear_id);
}

/// Blocks of 2, 3 and 4 over three dimensions, an offset, and last groups
/// smaller than the rest (rows of 4 and of 2): each work-item runs once,
/// in a block of consecutive work-items of one row or on its own, and a
/// block runs only where a row holds one.
fn blocks_cover_the_group<const X: usize>() {
    let range = NdRange::new([10, 6, 3]).local([4, 4, 2]).offset([5, 0, 7]);
    let launch = Launch::new("blocks", range);
    let seen = Buffer::<u32>::new(10 * 6 * 3);
    let in_blocks = Buffer::<u32>::new(10 * 6 * 3);
    common::rt()
        .launch_groups(&launch, |g| {
            let row = g.get_local_size(0);
            g.for_each_block::<X>(
                |b| {
                    let first = b.item(0);
                    assert_eq!(first.local_id[0] % X, 0, "a block starts a row's block");
                    assert!(first.local_id[0] + X <= row, "a block lies in its row");
                    b.each(|x, it| {
                        assert_eq!(*it, b.item(x));
                        assert_eq!(it.local_id[1..], first.local_id[1..]);
                        assert_eq!(it.local_id[0], first.local_id[0] + x);
                        visit(g, &seen, it);
                        in_blocks.atomic_inc(it.global_linear_id);
                    });
                },
                |it| {
                    assert!(it.local_id[0] >= row / X * X, "past the row's last block");
                    visit(g, &seen, it);
                },
            );
        })
        .unwrap();
    assert!(
        seen.to_vec().iter().all(|&n| n == 1),
        "X = {X}: {:?}",
        seen.to_vec()
    );
    // Global x 5..15: groups' rows are x 5..9 and 9..13 (4 each) and 13..15
    // (2); a work-item is in a block if its row's whole blocks reach it.
    let want: Vec<u32> = (0..10 * 6 * 3)
        .map(|i| {
            let x = i % 10;
            let (start, len) = match x {
                0..=3 => (0, 4),
                4..=7 => (4, 4),
                _ => (8, 2),
            };
            u32::from(x - start < len / X * X)
        })
        .collect();
    assert_eq!(in_blocks.to_vec(), want, "X = {X}");
}

#[test]
fn every_work_item_runs_once_in_a_block_or_alone() {
    common::within(60, || {
        blocks_cover_the_group::<2>();
        blocks_cover_the_group::<3>();
        blocks_cover_the_group::<4>();
    });
}

/// Checked, the checker must see each access as its work-item's: the
/// block function never runs, and each work-item runs alone.
#[test]
fn a_checked_launch_runs_every_work_item_alone() {
    common::within(60, || {
        let launch = Launch::new("blocks", NdRange::new([64]).local([32])).checked(true);
        let (seen, blocks) = (Buffer::<u32>::new(64), Buffer::<u32>::new(1));
        common::rt()
            .launch_groups(&launch, |g| {
                g.for_each_block::<8>(
                    |_| {
                        blocks.atomic_inc(0);
                    },
                    |it| visit(g, &seen, it),
                );
            })
            .unwrap();
        assert_eq!(blocks.get(0), 0);
        assert!(seen.to_vec().iter().all(|&n| n == 1));
    });
}

/// A barrier inside a block is the mistake a barrier inside `for_each` is.
#[test]
fn a_barrier_inside_a_block_is_an_error() {
    common::within(60, || {
        let launch = Launch::new("misplaced", NdRange::new([16]).local([16]));
        let e = common::rt()
            .launch_groups(&launch, |g| {
                g.for_each_block::<4>(
                    |b| {
                        if b.item(0).local_linear_id == 8 {
                            g.barrier(LOCAL);
                        }
                    },
                    |_| {},
                )
            })
            .unwrap_err();
        common::misplaced_barrier(e);
    });
}

/// A panic names the work-item running: inside `each`, the block's
/// work-item; in the block function outside it, the block's first.
#[test]
fn a_panic_in_a_block_names_the_work_item_running() {
    for inside in [true, false] {
        let e = common::within(60, move || {
            let launch = Launch::new("stops", NdRange::new([16]).local([16]));
            common::rt()
                .launch_groups(&launch, |g| {
                    g.for_each_block::<4>(
                        |b| {
                            if inside {
                                b.each(|_, it| assert_ne!(it.local_linear_id, 10, "stop"));
                            } else {
                                assert_ne!(b.item(0).local_linear_id, 8, "stop");
                            }
                        },
                        |_| {},
                    )
                })
                .unwrap_err()
        });
        let p = common::kernel_panic(e);
        let want = if inside { 10 } else { 8 };
        assert_eq!(p.ids.local_linear_id, want, "inside each: {inside}: {p}");
    }
}

/// Over random ranges of one to three dimensions, with offsets and smaller
/// last groups: blocks of 1, 3, 8 and 16 and `for_each_linear` run every
/// work-item exactly once, with the ids the work-item functions give it
/// (checked by `visit`), a block inside its row.
fn covers<const X: usize>(range: NdRange, n: usize) {
    let launch = Launch::new("blocks", range);
    let (seen, linear) = (Buffer::<u32>::new(n), Buffer::<u32>::new(n));
    common::rt()
        .launch_groups(&launch, |g| {
            let row = g.get_local_size(0);
            g.for_each_block::<X>(
                |b| {
                    assert!(b.item(0).local_id[0] + X <= row, "a block lies in its row");
                    b.each(|_, it| visit(g, &seen, it));
                },
                |it| visit(g, &seen, it),
            );
            g.for_each_linear(|it| {
                let ids = g.ids(it.local_linear_id);
                linear.atomic_inc(ids.global_linear_id);
            });
        })
        .unwrap();
    assert!(
        seen.to_vec().iter().all(|&k| k == 1),
        "X = {X}: {:?}",
        seen.to_vec()
    );
    assert!(
        linear.to_vec().iter().all(|&k| k == 1),
        "linear: {:?}",
        linear.to_vec()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn blocks_and_linear_loops_cover_random_ranges(
        dims in 1usize..=3,
        global in prop::array::uniform3(1usize..40),
        local in prop::array::uniform3(1usize..20),
        offset in prop::array::uniform3(0usize..5),
    ) {
        let (mut g, mut l, mut o) = ([1; 3], [1; 3], [0; 3]);
        g[..dims].copy_from_slice(&global[..dims]);
        l[..dims].copy_from_slice(&local[..dims]);
        o[..dims].copy_from_slice(&offset[..dims]);
        // Local sizes no larger than the range, in at most 256 work-items.
        for d in 0..3 {
            l[d] = l[d].min(g[d]);
        }
        while l.iter().product::<usize>() > 256 {
            let d = (0..3).max_by_key(|&d| l[d]).expect("three dimensions");
            l[d] /= 2;
        }
        let range = move || match dims {
            1 => NdRange::new([g[0]]).local([l[0]]).offset([o[0]]),
            2 => NdRange::new([g[0], g[1]]).local([l[0], l[1]]).offset([o[0], o[1]]),
            _ => NdRange::new(g).local(l).offset(o),
        };
        let n = g.iter().product();
        common::within(60, move || {
            covers::<1>(range(), n);
            covers::<3>(range(), n);
            covers::<8>(range(), n);
            covers::<16>(range(), n);
        });
    }
}
