//! The async engine: the same scheduler, barrier semantics, divergence
//! reports and checker as the coroutine engine, with work-items as futures.

mod common;

use clsync::atomics::AtomicUint;
use clsync::checker::ReportKind;
use std::future::Future;
use std::task::{Context, Poll, Waker};

use clsync::sync::{BarrierKind, BarrierWait, MemFlags, MemScope, GLOBAL, IMAGE, LOCAL};
use clsync::trace::{capture, SyncEvent};
use clsync::{Buffer, Image2d, Launch, LaunchError, NdRange, Place};

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

/// Where each work-item of a divergence report is: `(items, place)` with the
/// place as "line N" for a barrier, "exited" or "running".
fn places(e: LaunchError) -> Vec<(Vec<usize>, String)> {
    let LaunchError::Divergence(d) = e else {
        panic!("expected divergence, got {e}")
    };
    d.places
        .iter()
        .map(|r| {
            let place = match &r.place {
                Place::AtBarrier(w) => format!("line {}", w.site.line),
                Place::Exited => "exited".to_string(),
                other => format!("{other:?}"),
            };
            (r.items.clone(), place)
        })
        .collect()
}

/// The scheduler resumes a group's work-items without recording them while
/// each waits where the round's first one waits (rounds after a release of
/// the whole group). Whichever work-item breaks that first — the first one,
/// one in the middle, the last — the report must still place every
/// work-item, in both general engines, after a uniform round.
#[test]
// The branches are the same text but two different barriers (call sites),
// which is the point.
#[allow(clippy::if_same_then_else)]
fn a_round_that_stops_being_uniform_still_places_every_work_item() {
    common::within(60, || {
        for odd in [0usize, 5, 15] {
            let launch = Launch::new("odd_one", NdRange::new([16]).local([16]));
            let first_line = line!() + 6;
            let co = common::rt()
                .launch(&launch, |wi| {
                    wi.barrier(LOCAL);
                    let l = wi.get_local_id(0);
                    if l == odd {
                        wi.barrier(LOCAL);
                    } else if l != odd + 1 {
                        wi.barrier(LOCAL);
                    }
                })
                .unwrap_err();
            let async_line = line!() + 6;
            let asy = common::rt()
                .launch_async(&launch, async |wi| {
                    wi.barrier_async(LOCAL).await;
                    let l = wi.get_local_id(0);
                    if l == odd {
                        wi.barrier_async(LOCAL).await;
                    } else if l != odd + 1 {
                        wi.barrier_async(LOCAL).await;
                    }
                })
                .unwrap_err();
            for (line, e) in [(first_line, co), (async_line, asy)] {
                // Independent of the scheduler: work-item `odd` waits at the
                // first inner barrier, `odd + 1` has returned, the others
                // wait at the second.
                let others: Vec<usize> = (0..16).filter(|l| *l != odd && *l != odd + 1).collect();
                let mut want = vec![
                    (vec![odd], format!("line {line}")),
                    (others, format!("line {}", line + 2)),
                ];
                if odd + 1 < 16 {
                    want.push((vec![odd + 1], "exited".to_string()));
                }
                let mut got = places(e);
                want.sort();
                got.sort();
                assert_eq!(got, want, "odd one {odd}");
            }
        }
    });
}

/// The scheduler also takes a round in which the work-items return on its
/// fast path, while each returns as the first did. Whichever work-item
/// breaks that run — by waiting at a barrier after the first has returned,
/// right after it or at the end — the report must still place every
/// work-item as returned or at its barrier, in both general engines; and a
/// run of returns that every work-item completes finishes the launch.
#[test]
fn a_round_that_starts_by_returning_still_places_every_work_item() {
    common::within(60, || {
        for returned in [1usize, 5, 15, 16] {
            let launch = Launch::new("early", NdRange::new([16]).local([16]));
            let ran = Buffer::<AtomicUint>::new(16);
            let co_line = line!() + 7;
            let co = common::rt().launch(&launch, |wi| {
                wi.barrier(LOCAL);
                ran.at(wi.get_global_id(0)).fetch_add(1);
                if wi.get_local_id(0) < returned {
                    return;
                }
                wi.barrier(LOCAL);
            });
            let async_line = line!() + 7;
            let asy = common::rt().launch_async(&launch, async |wi| {
                wi.barrier_async(LOCAL).await;
                ran.at(wi.get_global_id(0)).fetch_add(1);
                if wi.get_local_id(0) < returned {
                    return;
                }
                wi.barrier_async(LOCAL).await;
            });
            // Every work-item got past the first barrier once in each launch.
            assert_eq!(ran.to_vec(), [2; 16], "returned {returned}");
            for (line, r) in [(co_line, co), (async_line, asy)] {
                if returned == 16 {
                    r.expect("every work-item returns: no divergence");
                    continue;
                }
                let e = r.expect_err("some work-items returned, the others wait");
                let mut want = vec![
                    ((0..returned).collect::<Vec<_>>(), "exited".to_string()),
                    ((returned..16).collect(), format!("line {line}")),
                ];
                let mut got = places(e);
                want.sort();
                got.sort();
                assert_eq!(got, want, "returned {returned}");
            }
        }
    });
}

/// Work-items that return, then one that panics, in the round the
/// scheduler runs on its fast path: the panic names its work-item.
#[test]
fn a_panic_after_work_items_returned_names_its_work_item() {
    common::within(60, || {
        let launch = Launch::new("late_panic", NdRange::new([128]).local([64]));
        let line = line!() + 4;
        let e = common::rt()
            .launch_async(&launch, async |wi| {
                wi.barrier_async(LOCAL).await;
                assert!(wi.get_global_id(0) != 70, "bad item");
            })
            .unwrap_err();
        let p = common::kernel_panic(e);
        assert_eq!((p.ids.global_id[0], p.ids.local_id[0]), (70, 6));
        assert_eq!(p.message, "bad item");
        assert_eq!(p.site.expect("a panic's site").line, line);
    });
}

/// A panic in a round the scheduler resumes on its fast path (the whole
/// round under one catch), in a round of its general loop (after sub-group
/// barriers, whose slots are written), and in a checked launch (the general
/// loop throughout): each names the work-item that panicked, its message and
/// its line, and no work-item of its group runs past the barrier after it.
#[test]
fn a_panic_names_its_work_item_on_every_path_of_the_scheduler() {
    common::within(60, || {
        for (path, sub_groups, checked) in [
            ("fast path", false, false),
            ("general loop", true, false),
            ("checked", false, true),
        ] {
            let finished = Buffer::<u32>::new(128);
            let launch = Launch::new("panicky", NdRange::new([128]).local([64])).checked(checked);
            let line = line!() + 9;
            let e = common::rt()
                .launch_async(&launch, async |wi| {
                    if sub_groups {
                        wi.sub_group_barrier_async(LOCAL).await;
                    } else {
                        wi.barrier_async(LOCAL).await;
                    }
                    if wi.get_global_id(0) == 70 {
                        panic!("bad item");
                    }
                    wi.barrier_async(LOCAL).await;
                    finished.set(wi.get_global_id(0), 1);
                })
                .unwrap_err();
            let p = common::kernel_panic(e);
            assert_eq!(p.kernel, "panicky", "{path}");
            assert_eq!(
                (p.ids.global_id[0], p.ids.local_id[0], p.ids.group_id[0]),
                (70, 6, 1),
                "{path}"
            );
            assert_eq!(p.message, "bad item", "{path}");
            let site = p.site.expect("a panic's site");
            assert!(site.file.ends_with("async_engine.rs"), "{path}: {site:?}");
            assert_eq!(site.line, line, "{path}");
            // Group 1 never got past its second barrier.
            assert_eq!(finished.to_vec()[64..], [0; 64], "{path}");
        }
    });
}

/// A work-item spinning on an atomic no one sets, in one group, while a
/// work-item of another group panics: the launch's cancellation unwinds the
/// spinning work-items out of their polls (the async engine catches the
/// unwind around the round, as it catches a panic), and the launch reports
/// the panic instead of hanging.
#[test]
fn a_spinning_async_work_item_is_cancelled_when_another_group_panics() {
    common::within(60, || {
        // [0]: set by no one; [1]: set by group 1 once it spins.
        let flags = Buffer::<AtomicUint>::new(2);
        let launch = Launch::new("stuck", NdRange::new([128]).local([64]));
        // Two workers: the spinning group holds one, the other runs group 0,
        // whose work-item 0 panics only once group 1 spins, so the panic's
        // cancellation always reaches a spinning work-item.
        let e = clsync::Runtime::with_threads(2)
            .launch_async(&launch, async |wi| {
                wi.barrier_async(LOCAL).await;
                if wi.get_group_id(0) == 0 {
                    if wi.get_local_id(0) == 0 {
                        while flags.at(1).load() == 0 {
                            std::hint::spin_loop();
                        }
                        panic!("group 0 gives up");
                    }
                } else {
                    flags.at(1).store(1);
                    while flags.at(0).load() == 0 {
                        std::hint::spin_loop();
                    }
                }
            })
            .unwrap_err();
        let p = common::kernel_panic(e);
        assert_eq!(p.message, "group 0 gives up");
        assert_eq!(p.ids.global_id[0], 0);
    });
}

/// One work-item writes a pixel, awaits a barrier with `flags`, and reads
/// the pixel back, in strict image mode; returns the red channel it read.
fn own_pixel_after_async_barrier(image_flag: bool) -> f32 {
    let img = Image2d::<[f32; 4]>::new(2, 2);
    img.set([1, 1], [1.0, 0.0, 0.0, 0.0]);
    let seen = Buffer::<f32>::new(1);
    let launch = Launch::new("image_barrier", NdRange::new([1])).strict_images(true);
    common::rt()
        .launch_async(&launch, async |wi| {
            img.write(wi, [1, 1], [2.0, 0.0, 0.0, 0.0]);
            if image_flag {
                wi.barrier_async(IMAGE).await;
            } else {
                wi.barrier_async(LOCAL).await;
            }
            seen.set(0, img.read(wi, [1, 1])[0]);
        })
        .unwrap();
    seen.get(0)
}

/// `000_96da91f170ff246f.txt`: a work-item sees its own writes to a
/// read-write image only after an image fence, and a barrier with
/// `CLK_IMAGE_MEM_FENCE` is one. The async engine takes a barrier's image
/// fence after the poll in which the work-item arrived (its barrier futures
/// do not hold the work-item), so this holds it to the same rule as the
/// coroutine engine's `r000_read_write_image_needs_an_image_fence_to_see_own_writes`.
#[test]
fn an_async_image_barrier_makes_own_image_writes_visible() {
    common::within(60, || {
        assert_eq!(own_pixel_after_async_barrier(false), 1.0, "local flag only");
        assert_eq!(own_pixel_after_async_barrier(true), 2.0, "image flag");
    });
}

/// A barrier future polled by anything but the engine (here a context of
/// the kernel's own, or a clone of the engine's waker, which the engine
/// never recognises once it outlives its poll) cannot suspend its
/// work-item: a panic that says so, never a hang or a work-item that runs
/// on past its barrier.
#[test]
fn a_barrier_polled_by_another_executor_is_a_panic_that_says_so() {
    let polled_by = |clone: bool| {
        let launch = Launch::new("foreign", NdRange::new([4]).local([4]));
        let after = Buffer::<u32>::new(1);
        let e = common::within(60, move || {
            let e = common::rt()
                .launch_async(&launch, async |wi| {
                    let mut b = std::pin::pin!(wi.barrier_async(LOCAL));
                    std::future::poll_fn(|cx| {
                        let waker = if clone {
                            cx.waker().clone()
                        } else {
                            Waker::noop().clone()
                        };
                        let _ = b.as_mut().poll(&mut Context::from_waker(&waker));
                        Poll::Ready(())
                    })
                    .await;
                    after.set(0, 1);
                })
                .unwrap_err();
            assert_eq!(after.get(0), 0, "no work-item ran past its barrier");
            e
        });
        let p = common::kernel_panic(e);
        assert!(
            p.message
                .contains("polled by something other than clsync's scheduler"),
            "{}",
            p.message
        );
        assert!(
            p.message.contains("work_group_barrier(CLK_LOCAL_MEM_FENCE")
                && p.message.contains("async_engine.rs:"),
            "names the barrier: {}",
            p.message
        );
    };
    polled_by(false);
    polled_by(true);
}

/// A work-item waits at one barrier at a time: two barrier futures polled
/// in one poll (as `join` would) are a panic naming both, not a silently
/// lost arrival.
#[test]
fn two_barriers_awaited_at_once_are_a_panic_naming_both() {
    let launch = Launch::new("joined", NdRange::new([2]).local([2]));
    let e = common::within(60, move || {
        common::rt()
            .launch_async(&launch, async |wi| {
                let mut a = std::pin::pin!(wi.barrier_async(LOCAL));
                let mut b = std::pin::pin!(wi.barrier_async(GLOBAL));
                std::future::poll_fn(|cx| {
                    let ready = (a.as_mut().poll(cx), b.as_mut().poll(cx));
                    match ready {
                        (Poll::Ready(()), Poll::Ready(())) => Poll::Ready(()),
                        _ => Poll::Pending,
                    }
                })
                .await;
            })
            .unwrap_err()
    });
    let p = common::kernel_panic(e);
    assert!(
        p.message.contains("one barrier at a time")
            && p.message.contains("CLK_LOCAL_MEM_FENCE")
            && p.message.contains("CLK_GLOBAL_MEM_FENCE"),
        "{}",
        p.message
    );
}

/// `trace::capture` records an async barrier's arrival when the capture
/// covers the poll in which the work-item arrives, as it does a coroutine
/// kernel's barrier call, with the flags and scope the kernel wrote.
#[test]
fn a_captured_async_arrival_is_traced() {
    let traced = Buffer::<u32>::new(2);
    let launch = Launch::new("traced", NdRange::new([2]).local([2]));
    common::within(60, move || {
        common::rt()
            .launch_async(&launch, async |wi| {
                let line = line!() + 1;
                let mut b = std::pin::pin!(wi.barrier_async(LOCAL | GLOBAL));
                let mut events = Vec::new();
                std::future::poll_fn(|cx| {
                    let (p, e) = capture(|| b.as_mut().poll(cx));
                    events.extend(e);
                    p
                })
                .await;
                let want = |w: &BarrierWait| {
                    (w.kind, w.flags, w.scope, w.site.line)
                        == (
                            BarrierKind::WorkGroup,
                            MemFlags::LOCAL.union(MemFlags::GLOBAL),
                            MemScope::WorkGroup,
                            line,
                        )
                };
                if matches!(&events[..], [SyncEvent::Barrier(w)] if want(w)) {
                    traced.set(wi.get_local_id(0), 1);
                }
            })
            .unwrap();
        assert_eq!(traced.to_vec(), vec![1, 1]);
    });
}
