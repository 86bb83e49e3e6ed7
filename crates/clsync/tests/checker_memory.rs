//! The checker on images (`000_96da91f170ff246f.txt`'s read_write rule),
//! out-of-bounds accesses, uninitialized local memory, invalid run-time
//! arguments, and barrier divergence (`003_2caebc1f01141481.txt`,
//! `004_bfca21a36d7bd2da.txt`, `002_6c32435e912a3710.txt`).

mod common;

use clsync::checker::ReportKind::*;
use clsync::checker::Space;
use clsync::sync::{
    AcqRel, BarrierKind, MemOrder, MemScope, Relaxed, WorkItemScope, GLOBAL, IMAGE, LOCAL,
};
use clsync::{AtomicInt, AtomicUint, Buffer, Image2d, Launch, NdRange};
use common::check::{check, expect};

const SRC: &str = include_str!("checker_memory.rs");

// ---- images -------------------------------------------------------------

#[test]
fn image_read_of_own_write_without_fence() {
    let img = Image2d::<[u32; 4]>::new(8, 1).named("img");
    let r = check(
        Launch::new("img_nofence", NdRange::new([8]).local([8])),
        move |wi| {
            let x = wi.get_global_id(0) as i32;
            img.write(wi, [x, 0], [1, 2, 3, 4]); //~ imf.first
            let _ = img.read(wi, [x, 0]); //~ imf
        },
    );
    expect(SRC, &r, &[(ImageFence, "imf")]);
    let m = r[0].memory.as_ref().unwrap();
    assert_eq!((m.space, m.name.as_str()), (Space::Image, "img"));
}

#[test]
fn relaxed_image_fence_has_no_effect() {
    let img = Image2d::<[f32; 4]>::new(4, 4);
    let launch = Launch::new("img_relaxed", NdRange::new([4, 4]).local([4, 4]));
    let r = check(launch, move |wi| {
        let c = [wi.get_global_id(0) as i32, wi.get_global_id(1) as i32];
        img.write(wi, c, [0.5; 4]);
        wi.atomic_work_item_fence(IMAGE, Relaxed, WorkItemScope);
        let _ = img.read(wi, c); //~ imr
    });
    expect(SRC, &r, &[(ImageFence, "imr")]);
}

#[test]
fn global_fence_does_not_fence_images() {
    let img = Image2d::<[i32; 4]>::new(4, 1);
    let r = check(
        Launch::new("img_global_fence", NdRange::new([4])),
        move |wi| {
            let x = wi.get_global_id(0) as i32;
            img.write(wi, [x, 0], [x; 4]);
            wi.mem_fence(GLOBAL);
            let _ = img.read(wi, [x, 0]); //~ img
        },
    );
    expect(SRC, &r, &[(ImageFence, "img")]);
}

#[test]
fn image_race_between_work_items() {
    let img = Image2d::<[u32; 4]>::new(2, 1);
    let r = check(
        Launch::new("img_race", NdRange::new([2]).local([2])),
        move |wi| {
            if wi.get_local_id(0) == 0 {
                img.write(wi, [1, 0], [7; 4]); //~ imx.first
            } else {
                let _ = img.read(wi, [1, 0]); //~ imx
            }
        },
    );
    expect(SRC, &r, &[(DataRace, "imx")]);
}

// ---- out of bounds ------------------------------------------------------

#[test]
fn global_read_past_the_end() {
    let input = Buffer::from_slice(&[1u32; 16]).named("input");
    let out = Buffer::<u32>::new(16);
    let r = check(
        Launch::new("oob_read", NdRange::new([16]).local([8])),
        move |wi| {
            let g = wi.get_global_id(0);
            out.set(g, input.get(g) + input.get(g + 1)); //~ oobr
        },
    );
    expect(SRC, &r, &[(OutOfBounds, "oobr")]);
    assert!(r[0].detail.contains("index 16"), "{}", r[0]);
    assert!(r[0].detail.contains("`input`"), "{}", r[0]);
    let who = &r[0].second.as_ref().unwrap().item;
    assert_eq!(who.global_id[0], 15);
}

#[test]
fn global_write_off_by_one() {
    let out = Buffer::<u32>::new(10);
    let r = check(
        Launch::new("oob_write", NdRange::new([10]).local([5])),
        move |wi| {
            let g = wi.get_global_id(0);
            out.set(g + 1, 1); //~ oobw
        },
    );
    expect(SRC, &r, &[(OutOfBounds, "oobw")]);
    // The kernel ran on: every in-bounds write happened.
    assert_eq!(r[0].count, 1);
}

#[test]
fn local_index_past_the_group() {
    let mut launch = Launch::new("oob_local", NdRange::new([32]).local([16]));
    let tile = launch.local::<u32>(16);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let t = wi.local(tile);
        t.set(l + 1, 1); //~ oobl
    });
    expect(SRC, &r, &[(OutOfBounds, "oobl")]);
    assert_eq!(r[0].count, 2, "once per group");
}

#[test]
fn image_coordinate_outside() {
    let img = Image2d::<[u32; 4]>::new(4, 4);
    let launch = Launch::new("oob_image", NdRange::new([4, 4]).local([4, 4]));
    let r = check(launch, move |wi| {
        let (x, y) = (wi.get_global_id(0) as i32, wi.get_global_id(1) as i32);
        let _ = img.read(wi, [x - 1, y]); //~ oobi
    });
    expect(SRC, &r, &[(OutOfBounds, "oobi")]);
    assert!(r[0].detail.contains("(-1, 0)"), "{}", r[0]);
}

#[test]
fn atomic_counter_index_outside() {
    let counters: Buffer<AtomicUint> = Buffer::new(4);
    let r = check(
        Launch::new("oob_atomic", NdRange::new([8]).local([8])),
        move |wi| {
            counters.at(wi.get_global_id(0) / 2 + 1).fetch_add(1); //~ ooba
        },
    );
    expect(SRC, &r, &[(OutOfBounds, "ooba")]);
}

// ---- uninitialized local memory ------------------------------------------

#[test]
fn local_read_before_any_write() {
    let out = Buffer::<u32>::new(8);
    let mut launch = Launch::new("uninit", NdRange::new([8]).local([8]));
    let tile = launch.local::<u32>(8);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        out.set(l, wi.local(tile).get(l)); //~ uninit
    });
    expect(SRC, &r, &[(UninitializedLocal, "uninit")]);
}

/// A buffer's shadow starts empty although its pages may be an earlier
/// launch's, kept for reuse (`storage::page_pool`): the first launch
/// leaves every element written by its own work-item, the second has each
/// work-item write the element the first launch's work-item of the next
/// group wrote. A page that kept its records would report every one as a
/// race with the earlier launch.
#[test]
fn a_launch_reuses_an_earlier_launchs_shadow_pages_empty() {
    const N: usize = 4 * 4096;
    let first = Buffer::<u32>::new(N);
    let r = check(
        Launch::new("fill", NdRange::new([N]).local([64])),
        move |wi| {
            let g = wi.get_global_id(0);
            first.set(g, g as u32);
        },
    );
    common::check::expect_none(&r);
    let second = std::sync::Arc::new(Buffer::<u32>::new(N));
    let s = second.clone();
    let r = check(
        Launch::new("shifted", NdRange::new([N]).local([64])),
        move |wi| {
            let g = wi.get_global_id(0);
            s.set((g + 64) % N, g as u32);
        },
    );
    common::check::expect_none(&r);
    let want: Vec<u32> = (0..N).map(|i| ((i + N - 64) % N) as u32).collect();
    assert_eq!(second.to_vec(), want);
}

/// Each group's local memory starts unwritten, although a worker thread
/// reuses one group's local shadow (and its records) for the next: group 0
/// writes its tile and group 1, run after it on the same thread, does not.
#[test]
fn local_memory_is_unwritten_again_in_the_next_group() {
    let out = Buffer::<u32>::new(8);
    let mut launch = Launch::new("next_group", NdRange::new([8]).local([4]));
    let tile = launch.local::<u32>(4);
    let r = clsync::Runtime::with_threads(1)
        .check(&launch, move |wi| {
            let l = wi.get_local_id(0);
            let t = wi.local(tile);
            if wi.get_group_id(0) == 0 {
                t.set(l, 1);
            }
            wi.barrier(LOCAL);
            out.set(wi.get_global_id(0), t.get(3 - l)); //~ next
        })
        .unwrap();
    expect(SRC, &r, &[(UninitializedLocal, "next")]);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].count, 4, "each work-item of group 1, none of group 0");
    let who = &r[0].second.as_ref().expect("the reading work-item").item;
    assert_eq!(who.group_id[0], 1);
}

/// Every read of a local element nothing wrote is reported, however many
/// work-items read it: the count is the reads'.
#[test]
fn each_read_of_an_unwritten_local_element_counts() {
    let out = Buffer::<u32>::new(8);
    let mut launch = Launch::new("many_readers", NdRange::new([8]).local([8]));
    let tile = launch.local::<u32>(8);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        out.set(l, wi.local(tile).get(0)); //~ many readers
    });
    expect(SRC, &r, &[(UninitializedLocal, "many readers")]);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].count, 8, "each of the eight work-items' reads");
}

#[test]
fn half_of_the_tile_is_never_written() {
    let out = Buffer::<u32>::new(8);
    let mut launch = Launch::new("half", NdRange::new([8]).local([8]));
    let tile = launch.local::<u32>(8);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let t = wi.local(tile);
        if l % 2 == 0 {
            t.set(l, 1);
        }
        wi.barrier(LOCAL);
        out.set(l, t.get(l ^ 1)); //~ half
    });
    expect(SRC, &r, &[(UninitializedLocal, "half")]);
    assert_eq!(r[0].count, 4, "the four even work-items read odd elements");
}

// ---- invalid run-time arguments -----------------------------------------

#[test]
fn fence_with_zero_flags() {
    let r = check(Launch::new("fence0", NdRange::new([2])), |wi| {
        let (o, sc) = (MemOrder::AcqRel, MemScope::WorkGroup);
        let e = wi.atomic_work_item_fence_dyn(0, o, sc); //~ f0
        assert!(e.is_err());
    });
    expect(SRC, &r, &[(InvalidArgument, "f0")]);
    assert!(r[0].detail.contains("fence flags are 0"), "{}", r[0]);
}

#[test]
fn fence_with_unknown_flag_bits() {
    let r = check(Launch::new("fence8", NdRange::new([2])), |wi| {
        let (o, sc) = (MemOrder::Release, MemScope::Device);
        let _ = wi.atomic_work_item_fence_dyn(8 | 2, o, sc); //~ f8
    });
    expect(SRC, &r, &[(InvalidArgument, "f8")]);
}

#[test]
fn work_item_scope_fence_on_global_memory() {
    let r = check(Launch::new("fence_wi", NdRange::new([2])), |wi| {
        let (o, sc) = (MemOrder::AcqRel, MemScope::WorkItem);
        let _ = wi.atomic_work_item_fence_dyn(2, o, sc); //~ fwi
    });
    expect(SRC, &r, &[(InvalidArgument, "fwi")]);
}

#[test]
fn barrier_with_zero_flags() {
    let launch = Launch::new("barrier0", NdRange::new([4]).local([4]));
    let r = check(launch, |wi| {
        let (k, sc) = (BarrierKind::WorkGroup, MemScope::WorkGroup);
        let _ = wi.barrier_dyn(k, 0, sc); //~ b0
    });
    expect(SRC, &r, &[(InvalidArgument, "b0")]);
}

#[test]
fn load_with_release_order() {
    let a: Buffer<AtomicInt> = Buffer::new(1);
    let r = check(Launch::new("load_release", NdRange::new([1])), move |_wi| {
        let _ = a.at(0).load_dyn(MemOrder::Release, MemScope::Device); //~ lr
    });
    expect(SRC, &r, &[(InvalidArgument, "lr")]);
}

#[test]
fn compare_exchange_failure_stronger_than_success() {
    let a: Buffer<AtomicInt> = Buffer::new(1);
    let r = check(Launch::new("cas_orders", NdRange::new([1])), move |_wi| {
        let mut e = 0;
        let (s, f) = (MemOrder::Relaxed, MemOrder::Acquire);
        let _ = a
            .at(0)
            .compare_exchange_strong_dyn(&mut e, 1, s, f, MemScope::Device); //~ cas
    });
    expect(SRC, &r, &[(InvalidArgument, "cas")]);
}

// ---- barrier divergence ---------------------------------------------------

#[test]
fn barrier_inside_a_condition() {
    let r = check(Launch::new("div_if", NdRange::new([8]).local([8])), |wi| {
        if wi.get_local_id(0) < 2 {
            wi.barrier(LOCAL); //~ dif
        }
    });
    expect(SRC, &r, &[(BarrierDivergence, "dif")]);
    assert!(r[0].detail.contains("returned from the kernel"), "{}", r[0]);
}

#[test]
fn a_divergence_in_every_group_is_one_report_that_names_the_lowest_group() {
    // Groups handed out in shuffled orders: the report shown is the first
    // group's whichever group diverged first, and counts every group.
    for seed in 0..8 {
        let launch = Launch::new("div_all", NdRange::new([32]).local([4]))
            .schedule(clsync::Schedule::Shuffled(seed))
            .run_on_divergence(true);
        let r = clsync::Runtime::with_threads(1)
            .check(&launch, |wi| {
                if wi.get_local_id(0) != 0 {
                    wi.barrier(LOCAL);
                }
            })
            .unwrap();
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].kind, BarrierDivergence);
        assert_eq!(
            (r[0].count, r[0].group),
            (8, Some([0, 0, 0])),
            "seed {seed}"
        );
        assert!(
            r[0].detail.starts_with("work-group (0)"),
            "seed {seed}: {}",
            r[0]
        );
    }
}

#[test]
fn loop_trip_count_depends_on_the_work_item() {
    let r = check(
        Launch::new("div_loop", NdRange::new([8]).local([8])),
        |wi| {
            for _ in 0..=wi.get_local_id(0) % 3 {
                wi.barrier(LOCAL | GLOBAL); //~ dloop
            }
        },
    );
    expect(SRC, &r, &[(BarrierDivergence, "dloop")]);
}

#[test]
fn two_barriers_on_two_branches() {
    let r = check(
        Launch::new("div_branches", NdRange::new([4]).local([4])),
        |wi| {
            if wi.get_local_id(0) % 2 == 0 {
                wi.barrier(LOCAL); //~ dbr
            } else {
                wi.barrier(LOCAL);
            }
        },
    );
    expect(SRC, &r, &[(BarrierDivergence, "dbr")]);
}

#[test]
fn early_return_before_the_barrier() {
    let data = Buffer::<u32>::new(8);
    let r = check(
        Launch::new("div_return", NdRange::new([8]).local([8])),
        move |wi| {
            let g = wi.get_global_id(0);
            if g == 7 {
                return;
            }
            data.set(g, 1);
            wi.barrier(GLOBAL); //~ dret
        },
    );
    expect(SRC, &r, &[(BarrierDivergence, "dret")]);
}

#[test]
fn sub_group_barrier_in_divergent_code() {
    let launch = Launch::new("div_sg", NdRange::new([16]).local([16]).sub_group_size(8));
    let r = check(launch, |wi| {
        if wi.get_sub_group_local_id() != 3 {
            wi.sub_group_barrier(LOCAL); //~ dsg
        }
    });
    expect(SRC, &r, &[(BarrierDivergence, "dsg")]);
    assert!(r[0].detail.contains("sub-group 0"), "{}", r[0]);
}

#[test]
fn fence_after_divergence_keeps_the_earlier_race() {
    // A race before the divergent barrier is reported too.
    let data = Buffer::<u32>::new(1);
    let r = check(
        Launch::new("race_then_div", NdRange::new([4]).local([4])),
        move |wi| {
            data.set(0, 1); //~ rtd
            if wi.get_local_id(0) == 0 {
                wi.atomic_work_item_fence(GLOBAL, AcqRel, clsync::sync::DeviceScope);
                wi.barrier(GLOBAL); //~ rtdb
            }
        },
    );
    expect(SRC, &r, &[(DataRace, "rtd"), (BarrierDivergence, "rtdb")]);
}
