//! Group-level kernels (`Runtime::launch_groups`): the ids `for_each` counts
//! out match the work-item functions' ids, barriers keep their flags'
//! meaning under the checker (`003_2caebc1f01141481.txt`), and a panic
//! names its work-item.

mod common;

use clsync::checker::{Report, ReportKind};
use clsync::sync::{FenceFlags, GLOBAL, LOCAL};
use clsync::{Buffer, Group, Launch, LaunchError, NdRange};

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
        let p = common::kernel_panic(e);
        assert_eq!(p.ids.global_id[0], 37);
        assert!(p.message.contains("gives up"));
    });
}

/// Views (`Group::global`, `Group::local`) and `for_each_mut` compute what
/// a sequential loop does: each group reverses its elements through local
/// memory, and each work-item sums, in a private variable, its reversed
/// element over four rounds. Unchecked and checked (with no reports).
#[test]
fn views_and_private_vectors_match_a_sequential_loop() {
    let (n, local, rounds) = (96usize, 32usize, 4u32);
    let input: Vec<u32> = (0..n as u32).map(|i| i * 7 + 3).collect();
    let want: Vec<u32> = (0..n)
        .map(|i| {
            let (g, l) = (i / local, i % local);
            rounds * input[g * local + local - 1 - l] + (0..rounds).sum::<u32>()
        })
        .collect();
    let kernel = move |data: &Buffer<u32>, out: &Buffer<u32>, tile, g: &Group<'_>| {
        let (data, out) = (g.global(data), g.global(out));
        let t = g.local(tile);
        let mut acc = g.private::<u32>();
        g.for_each(move |it| t.set(it.local_linear_id, data.get(it.global_linear_id)));
        for r in 0..rounds {
            g.barrier(LOCAL);
            g.for_each_mut(&mut acc, move |it, a| {
                // SAFETY: local_linear_id < local, the tile's length.
                *a += unsafe { t.get_unchecked(local - 1 - it.local_linear_id) } + r;
            });
        }
        g.for_each_mut(&mut acc, move |it, a| out.set(it.global_linear_id, *a));
    };
    for checked in [false, true] {
        let (data, out) = (Buffer::from_slice(&input), Buffer::<u32>::new(n));
        let mut launch = Launch::new("views", NdRange::new([n]).local([local]));
        let tile = launch.local::<u32>(local);
        let want = want.clone();
        let reports = common::within(60, move || {
            let rt = common::rt();
            let reports = if checked {
                rt.check_groups(&launch, |g| kernel(&data, &out, tile, g))
                    .unwrap()
            } else {
                rt.launch_groups(&launch, |g| kernel(&data, &out, tile, g))
                    .unwrap();
                Vec::new()
            };
            assert_eq!(out.to_vec(), want, "checked: {checked}");
            reports
        });
        assert!(reports.is_empty(), "{reports:?}");
    }
}

/// Outside checked launches, a view's `get` or `set` past the end is the
/// same panic as the slice's or buffer's own (naming the object, index and
/// length) and fails the launch naming the work-item, for local and global
/// views, reads and writes alike; inside bounds the same kernel runs.
#[test]
fn view_access_out_of_bounds_fails_an_unchecked_launch() {
    let run = |last: usize, what: u8| {
        common::within(60, move || {
            let small = Buffer::<u32>::new(12).named("small");
            let mut launch = Launch::new("views", NdRange::new([16]).local([16]));
            let tile = launch.local_named::<u32>("tile", 12);
            common::rt().launch_groups(&launch, |g| {
                let (t, b) = (g.local(tile), g.global(&small));
                g.for_each_in(0..last, move |it| {
                    let l = it.local_linear_id;
                    match what {
                        0 => t.set(l, 1),
                        1 => b.set(l, t.get(l.min(11))),
                        2 => t.set(l.min(11), b.get(l)),
                        _ => t.set(l.min(11), t.get(l)),
                    }
                });
            })
        })
    };
    for what in 0..4 {
        run(12, what).unwrap_or_else(|e| panic!("case {what} in bounds: {e}"));
        let e = run(16, what).expect_err("past the end");
        let LaunchError::Panic(p) = &e else {
            panic!("case {what}: {e}")
        };
        let object = if what == 1 || what == 2 {
            "global buffer `small`"
        } else {
            "local memory `tile`"
        };
        assert_eq!(p.ids.local_id[0], 12, "case {what}: the first past the end");
        assert!(
            p.message.contains(object)
                && p.message.contains("index 12")
                && p.message.contains("length 12"),
            "case {what}: {e}"
        );
    }
}

/// In a checked launch, `get_unchecked` past the end is an out-of-bounds
/// report at its line, not undefined behaviour, and the kernel runs on.
#[test]
fn unchecked_access_out_of_bounds_is_reported_in_checked_launches() {
    const SOURCE: &str = include_str!("group_kernels.rs");
    let out = Buffer::<u32>::new(8);
    let mut launch = Launch::new("past_the_end", NdRange::new([8]).local([8]));
    let tile = launch.local::<u32>(8);
    let reports = common::within(60, move || {
        common::rt()
            .check_groups(&launch, |g| {
                let (t, out) = (g.local(tile), g.global(&out));
                g.for_each(move |it| t.set(it.local_linear_id, 1));
                g.barrier(LOCAL);
                g.for_each(move |it| {
                    // SAFETY: not met for the last work-item; the launch is
                    // checked, so its read is a report.
                    let v = unsafe { t.get_unchecked(it.local_linear_id + 1) }; //~ oob
                    out.set(it.global_linear_id, v);
                });
            })
            .unwrap()
    });
    assert_eq!(reports.len(), 1, "{reports:?}");
    common::check::out_of_bounds_at(&reports, SOURCE, "oob", 7);
}

/// `LocalView::get_array_unchecked` reads what element-by-element reads
/// give, unchecked and checked; in a checked launch a row past the end is
/// an out-of-bounds report at its line, naming the work-item.
#[test]
fn array_reads_equal_element_reads_and_past_the_end_is_a_report() {
    const SOURCE: &str = include_str!("group_kernels.rs");
    let mut launch = Launch::new("rows", NdRange::new([32]).local([16]));
    let tile = launch.local::<u32>(16);
    for checked in [false, true] {
        let out = Buffer::<u32>::new(32);
        common::rt()
            .with_checking(checked)
            .launch_groups(&launch, |g| {
                let t = g.local(tile);
                let group = g.get_group_id(0) as u32;
                g.for_each(move |it| {
                    t.set(
                        it.local_linear_id,
                        100 * group + it.local_linear_id as u32 * 3,
                    )
                });
                g.barrier(LOCAL);
                // SAFETY: 4 * 4 <= 16, the array's length.
                let rows: [[u32; 4]; 4] =
                    std::array::from_fn(|r| unsafe { t.get_array_unchecked(4 * r) });
                g.for_each(|it| {
                    out.set(
                        it.global_linear_id,
                        rows[it.local_linear_id / 4][it.local_linear_id % 4],
                    )
                });
            })
            .unwrap();
        let want: Vec<u32> = (0..32).map(|i| 100 * (i / 16) + (i % 16) * 3).collect();
        assert_eq!(out.to_vec(), want, "checked: {checked}");
    }
    let reports = common::within(60, move || {
        common::rt()
            .check_groups(&launch, |g| {
                let t = g.local(tile);
                g.for_each(move |it| t.set(it.local_linear_id, 1));
                g.barrier(LOCAL);
                g.for_each_in(0..1, move |_| {
                    // SAFETY: not met (14 + 4 > 16); the launch is checked,
                    // so the reads past the end are reports.
                    let row: [u32; 4] = unsafe { t.get_array_unchecked(14) }; //~ row
                    assert_eq!(row[..2], [1, 1]);
                });
            })
            .unwrap()
    });
    common::check::out_of_bounds_at(&reports, SOURCE, "row", 0);
}

/// `prefetch` (OpenCL C's built-in) is a hint: with ranges inside, across
/// and past the end of the buffer, empty or reversed, a kernel's results are
/// the sequential ones, and a checked launch reports nothing for it (it is
/// not an access), from group code and from inside `for_each` alike.
#[test]
#[allow(clippy::reversed_empty_ranges)]
fn prefetch_changes_nothing_and_is_not_an_access() {
    let data = Buffer::from_slice(&(0..100u32).collect::<Vec<_>>());
    let launch = Launch::new("hint", NdRange::new([100]).local([10]));
    let want: Vec<u32> = (0..100).map(|i| i * 2 + 1).collect();
    for checked in [false, true] {
        let out = Buffer::<u32>::new(100);
        let rt = common::rt().with_checking(checked);
        let kernel = |g: &Group<'_>| {
            let group = g.get_group_id(0);
            data.prefetch(group * 10..group * 10 + 30);
            data.prefetch(95..1000);
            data.prefetch(200..300);
            data.prefetch(7..7);
            data.prefetch(9..3);
            let view = g.global(&data);
            g.for_each(|it| {
                view.prefetch(it.global_linear_id..it.global_linear_id + 64);
                out.set(it.global_linear_id, view.get(it.global_linear_id) * 2 + 1);
            });
        };
        let reports = if checked {
            rt.check_groups(&launch, kernel).unwrap()
        } else {
            rt.launch_groups(&launch, kernel).unwrap();
            Vec::new()
        };
        assert_eq!(out.to_vec(), want, "checked: {checked}");
        common::check::expect_none(&reports);
    }
    assert_eq!(data.to_vec(), (0..100).collect::<Vec<u32>>());
}

/// A worker reuses its last group's local memory for its next group; a
/// kernel-declared array whose length follows the group's size (the last
/// group of a non-uniform range is smaller) is still one array per group,
/// of that group's length, unchecked and checked.
#[test]
fn declared_local_arrays_follow_each_groups_size() {
    // 10 groups of 8 and a last group of 3, on one worker so that every
    // group after the first reuses the arena.
    let launch = Launch::new("sizes", NdRange::new([83]).local([8]));
    for checked in [false, true] {
        let out = Buffer::<u32>::new(83);
        clsync::Runtime::with_threads(1)
            .with_checking(checked)
            .launch_groups(&launch, |g| {
                let t = g.local_array::<u32>(g.len());
                assert_eq!(t.len(), g.len());
                g.for_each(move |it| t.set(it.local_linear_id, it.global_linear_id as u32));
                g.barrier(LOCAL);
                let n = g.len();
                g.for_each(|it| {
                    // The sum of the group's global ids, from its own array.
                    let sum = (0..n).map(|i| t.get(i)).sum::<u32>();
                    out.set(it.global_linear_id, sum);
                });
            })
            .unwrap();
        let want: Vec<u32> = (0..83u32)
            .map(|i| {
                let first = i / 8 * 8;
                (first..(first + 8).min(83)).sum()
            })
            .collect();
        assert_eq!(out.to_vec(), want, "checked: {checked}");
    }
}

/// A panic in `for_each_mut` names its work-item, unchecked and checked.
#[test]
fn a_panic_in_for_each_mut_names_its_work_item() {
    for checked in [false, true] {
        let launch = Launch::new("boom", NdRange::new([64]).local([16])).checked(checked);
        let e = common::within(60, move || {
            common::rt()
                .launch_groups(&launch, |g| {
                    let mut p = g.private::<u32>();
                    g.for_each_mut(&mut p, |it, _| assert_ne!(it.global_linear_id, 21));
                })
                .unwrap_err()
        });
        assert_eq!(
            common::kernel_panic(e).ids.global_id[0],
            21,
            "checked: {checked}"
        );
    }
}

/// A barrier inside `for_each`, even after a nested `for_each` has ended,
/// is an error naming the mistake, not a silent no-op, in unchecked and
/// checked launches alike; a barrier after the loop is fine in both.
#[test]
fn a_barrier_inside_for_each_is_an_error() {
    common::within(60, || {
        for checked in [false, true] {
            let launch = Launch::new("misplaced", NdRange::new([8]).local([8])).checked(checked);
            let e = common::rt()
                .launch_groups(&launch, |g| {
                    g.for_each(|_| {
                        g.for_each_in(0..1, |_| {});
                        g.barrier(LOCAL);
                    })
                })
                .unwrap_err();
            let p = common::misplaced_barrier(e);
            assert_eq!(p.ids.local_linear_id, 0, "checked: {checked}");
            common::rt()
                .launch_groups(&launch, |g| {
                    g.for_each(|_| g.for_each_in(0..1, |_| {}));
                    g.barrier(LOCAL);
                })
                .unwrap();
        }
    });
}

/// `sub_group_barrier` in a group-level kernel orders its own sub-group
/// only (`002_6c32435e912a3710.txt`): reading a neighbour in the same
/// sub-group of 8 after it is race-free; reading across sub-groups races.
#[test]
fn a_sub_group_barrier_orders_its_sub_group_only() {
    let reports_for = |partner: fn(usize) -> usize| {
        let mut launch = Launch::new("sg", NdRange::new([16]).local([16]).sub_group_size(8));
        let s = launch.local::<u32>(16);
        common::within(60, move || {
            common::rt()
                .check_groups(&launch, |g| {
                    let s = g.local(s);
                    g.for_each(move |it| s.set(it.local_linear_id, 1));
                    g.sub_group_barrier(LOCAL);
                    g.for_each(move |it| {
                        let _ = s.get(partner(it.local_linear_id));
                    });
                })
                .unwrap()
        })
    };
    // The other end of the same sub-group: 0..8 and 8..16 stay apart.
    let same = reports_for(|l| (l / 8) * 8 + 7 - l % 8);
    assert!(same.is_empty(), "{same:?}");
    let across = reports_for(|l| 15 - l);
    assert_eq!(across.len(), 1, "{across:?}");
    assert_eq!(across[0].kind, ReportKind::DataRace);
}

/// `BufferView::get_unchecked` / `set_unchecked` (non-atomic outside checked
/// launches) give what a sequential loop gives: each group of 32 reversed
/// through local memory, plus one. Checked, the same kernel has no report
/// (a report would fail the launch).
#[test]
fn buffer_unchecked_accesses_equal_a_sequential_loop() {
    const N: usize = 32 * 12;
    let input: Vec<u32> = (0..N as u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let want: Vec<u32> = input
        .chunks(32)
        .flat_map(|c| c.iter().rev().map(|v| v.wrapping_add(1)))
        .collect();
    for checked in [false, true] {
        let src = Buffer::from_slice(&input);
        let mut launch = Launch::new("reverse", NdRange::new([N]).local([32])).checked(checked);
        let tile = launch.local::<u32>(32);
        let got = common::within(60, move || {
            let dst = Buffer::<u32>::new(N);
            common::rt()
                .launch_groups(&launch, |g| {
                    let (t, src, dst) = (g.local(tile), g.global(&src), g.global(&dst));
                    g.for_each(move |it| {
                        // SAFETY: global_linear_id < N, both buffers' length;
                        // local_linear_id < 32, the tile's. `src` is only read.
                        unsafe {
                            t.set_unchecked(
                                it.local_linear_id,
                                src.get_unchecked(it.global_linear_id),
                            )
                        };
                    });
                    g.barrier(LOCAL);
                    g.for_each(move |it| {
                        let l = it.local_linear_id;
                        // SAFETY: as above; element i of `dst` is written by
                        // work-item i only.
                        unsafe {
                            let v = t.get_unchecked(31 - l).wrapping_add(1);
                            dst.set_unchecked(it.global_linear_id, v);
                        }
                    });
                })
                .unwrap_or_else(|e| panic!("checked: {checked}: {e}"));
            dst.to_vec()
        });
        assert_eq!(got, want, "checked: {checked}");
    }
}

/// In a checked launch, a race through `BufferView::set_unchecked` (every
/// group writes element 0, unordered) is a data-race report at its line, and
/// `get_unchecked` past the end is an out-of-bounds report: not undefined
/// behaviour.
#[test]
fn buffer_unchecked_races_and_bounds_are_reports_in_checked_launches() {
    const SOURCE: &str = include_str!("group_kernels.rs");
    let out = Buffer::<u32>::new(4);
    let launch = Launch::new("racy", NdRange::new([8]).local([4]));
    let reports = common::within(60, move || {
        common::rt()
            .check_groups(&launch, |g| {
                let out = g.global(&out);
                let group = g.get_group_id(0) as u32;
                g.for_each_in(0..1, move |_| {
                    // SAFETY: not met: the two groups race; the launch is
                    // checked, so the race is a report.
                    unsafe { out.set_unchecked(0, group) }; //~ race
                });
                if group == 0 {
                    g.for_each_in(1..2, move |it| {
                        // SAFETY: not met for index 4; the launch is checked.
                        let v = unsafe { out.get_unchecked(it.global_linear_id + 3) }; //~ beyond
                        std::hint::black_box(v);
                    });
                }
            })
            .unwrap()
    });
    let race = reports
        .iter()
        .find(|r| r.kind == ReportKind::DataRace)
        .unwrap_or_else(|| panic!("a data race: {reports:?}"));
    assert_eq!(Some(race.site.line), common::check::line_of(SOURCE, "race"));
    let beyond: Vec<_> = reports
        .iter()
        .filter(|r| r.kind == ReportKind::OutOfBounds)
        .collect();
    assert_eq!(beyond.len(), 1, "{reports:?}");
    assert_eq!(
        Some(beyond[0].site.line),
        common::check::line_of(SOURCE, "beyond")
    );
    assert_eq!(
        beyond[0]
            .second
            .as_ref()
            .expect("the access")
            .item
            .global_linear_id,
        1
    );
    assert_eq!(reports.len(), 2, "{reports:?}");
}

/// `BufferView::get_relaxed_unchecked` and `set_relaxed_unchecked` (what
/// `#[kernel]` makes of a buffer's accesses in a loop whose bounds it has
/// tested): unchecked, under `Group::in_mode`, a shifted copy gives what a
/// sequential loop gives; checked, a read past the end is an out-of-bounds
/// report and two groups' writes of one element a data race, at their
/// lines, as with the checked accesses.
#[test]
fn relaxed_unchecked_accesses_copy_unchecked_and_report_checked() {
    const SOURCE: &str = include_str!("group_kernels.rs");
    let input: Vec<u32> = (0..64).map(|i| i * 3).collect();
    let src = Buffer::from_slice(&input);
    let launch = Launch::new("shift", NdRange::new([64]).local([16]));
    let got = common::within(60, move || {
        let dst = Buffer::<u32>::new(64);
        common::rt()
            .launch_groups(&launch, |g| {
                let (src, dst) = (g.global(&src), g.global(&dst));
                assert!(!g.is_checked());
                let (src, dst) = (g.in_mode(src), g.in_mode(dst));
                g.for_each(move |it| {
                    let i = it.global_linear_id;
                    // SAFETY: i < 64 and (i + 1) % 64 < 64, both buffers'
                    // length.
                    unsafe {
                        dst.set_relaxed_unchecked(i, src.get_relaxed_unchecked((i + 1) % 64))
                    };
                });
            })
            .unwrap();
        dst.to_vec()
    });
    let want: Vec<u32> = (0..64).map(|i| input[(i + 1) % 64]).collect();
    assert_eq!(got, want);

    let out = Buffer::<u32>::new(4);
    let launch = Launch::new("racy", NdRange::new([8]).local([4]));
    let reports = common::within(60, move || {
        common::rt()
            .check_groups(&launch, |g| {
                let out = g.in_mode(g.global(&out));
                let group = g.get_group_id(0) as u32;
                g.for_each_in(0..1, move |_| {
                    // SAFETY: 0 < 4; the race is a report (checked launch).
                    unsafe { out.set_relaxed_unchecked(0, group) }; //~ relaxed race
                });
                if group == 0 {
                    g.for_each_in(1..2, move |it| {
                        // SAFETY: not met for index 4; the launch is checked.
                        let v = unsafe { out.get_relaxed_unchecked(it.global_linear_id + 3) }; //~ relaxed beyond
                        std::hint::black_box(v);
                    });
                }
            })
            .unwrap()
    });
    let kinds: Vec<_> = reports
        .iter()
        .map(|r| (r.kind, Some(r.site.line)))
        .collect();
    assert_eq!(reports.len(), 2, "{reports:?}");
    assert!(kinds.contains(&(
        ReportKind::DataRace,
        common::check::line_of(SOURCE, "relaxed race")
    )));
    assert!(kinds.contains(&(
        ReportKind::OutOfBounds,
        common::check::line_of(SOURCE, "relaxed beyond")
    )));
}

/// `Group::in_mode` restates a view's mode, never drops it: a local view
/// made again by it in a checked launch still reports its unchecked read
/// past the end, at its line.
#[test]
fn a_local_view_in_the_groups_mode_still_reports_when_checked() {
    const SOURCE: &str = include_str!("group_kernels.rs");
    let mut launch = Launch::new("beyond", NdRange::new([4]).local([4]));
    let tile = launch.local::<u32>(4);
    let reports = common::within(60, move || {
        common::rt()
            .check_groups(&launch, |g| {
                let t = g.in_mode(g.local(tile));
                g.for_each(move |it| t.set(it.local_linear_id, 1));
                g.barrier(LOCAL);
                g.for_each_in(0..1, move |it| {
                    // SAFETY: not met for index 4; the launch is checked.
                    let v = unsafe { t.get_unchecked(it.local_linear_id + 4) }; //~ in mode beyond
                    std::hint::black_box(v);
                });
            })
            .unwrap()
    });
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(reports[0].kind, ReportKind::OutOfBounds);
    assert_eq!(
        Some(reports[0].site.line),
        common::check::line_of(SOURCE, "in mode beyond")
    );
}
