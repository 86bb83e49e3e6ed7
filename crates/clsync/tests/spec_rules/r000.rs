//! 000_96da91f170ff246f.txt: atomic_work_item_fence.

use clsync::sync::*;
use clsync::trace::{capture, SyncEvent};
use clsync::*;

use crate::common::{rt, within};

fn fence(flags: MemFlags, order: MemOrder, scope: MemScope) -> SyncEvent {
    SyncEvent::Fence {
        flags,
        order,
        scope,
    }
}

/// 000: "Older syntax memory fences are equivalent to atomic_work_item_fence
/// with the same flags parameter, memory_scope_work_group scope, and ordering
/// as follows: mem_fence — acq_rel, read_mem_fence — acquire,
/// write_mem_fence — release".
#[test]
fn r000_older_fences_are_atomic_work_item_fence_at_work_group_scope() {
    let seen = Buffer::<AtomicUint>::new(1);
    rt().launch(&Launch::new("legacy_fences", NdRange::new([1])), |wi| {
        let (_, e) = capture(|| {
            wi.mem_fence(LOCAL | GLOBAL);
            wi.read_mem_fence(GLOBAL);
            wi.write_mem_fence(LOCAL);
        });
        assert_eq!(
            e,
            vec![
                fence(
                    MemFlags::LOCAL.union(MemFlags::GLOBAL),
                    MemOrder::AcqRel,
                    MemScope::WorkGroup
                ),
                fence(MemFlags::GLOBAL, MemOrder::Acquire, MemScope::WorkGroup),
                fence(MemFlags::LOCAL, MemOrder::Release, MemScope::WorkGroup),
            ]
        );
        seen.at(0).fetch_add(1);
    })
    .unwrap();
    assert_eq!(seen.at(0).load(), 1, "the kernel ran its checks");
}

/// 000: "flags must be set to CLK_GLOBAL_MEM_FENCE, CLK_LOCAL_MEM_FENCE,
/// CLK_IMAGE_MEM_FENCE or a combination of these values ORed together;
/// otherwise the behavior is undefined." Run-time flags are checked; the
/// typed API cannot spell the others.
#[test]
fn r000_fence_flags_must_be_a_legal_combination() {
    let errors = Buffer::<AtomicUint>::new(3);
    rt().launch(&Launch::new("fence_flags", NdRange::new([1])), |wi| {
        for bits in 1..=7 {
            wi.atomic_work_item_fence_dyn(bits, MemOrder::AcqRel, MemScope::WorkGroup)
                .unwrap();
        }
        if wi.atomic_work_item_fence_dyn(0, MemOrder::AcqRel, MemScope::WorkGroup)
            == Err(SyncError::ZeroFlags)
        {
            errors.at(0).fetch_add(1);
        }
        if wi.atomic_work_item_fence_dyn(8, MemOrder::AcqRel, MemScope::WorkGroup)
            == Err(SyncError::UnknownFlags { bits: 8 })
        {
            errors.at(1).fetch_add(1);
        }
        if wi.barrier_dyn(BarrierKind::WorkGroup, 0x13, MemScope::WorkGroup)
            == Err(SyncError::UnknownFlags { bits: 0x13 })
        {
            errors.at(2).fetch_add(1);
        }
    })
    .unwrap();
    assert_eq!(errors.to_vec(), vec![1, 1, 1]);
}

/// Runs one work-item that writes a pixel, calls `between`, and reads it
/// back, in strict image mode; returns the red channel it read.
fn own_image_read_after(between: impl Fn(&WorkItem) + Sync) -> f32 {
    let img = Image2d::<[f32; 4]>::new(2, 2);
    img.set([1, 1], [1.0, 0.0, 0.0, 0.0]);
    let seen = Buffer::<f32>::new(1);
    rt().launch(
        &Launch::new("image_fence", NdRange::new([1])).strict_images(true),
        |wi| {
            img.write(wi, [1, 1], [2.0, 0.0, 0.0, 0.0]);
            between(wi);
            seen.set(0, img.read(wi, [1, 1])[0]);
        },
    )
    .unwrap();
    assert_eq!(
        img.get([1, 1])[0],
        2.0,
        "the write itself always reaches memory"
    );
    seen.get(0)
}

/// 000: "For images declared with the read_write qualifier, the
/// atomic_work_item_fence must be called to make sure that writes to the
/// image by a work-item become visible to that work-item on subsequent reads
/// to that image by that work-item."
#[test]
fn r000_read_write_image_needs_an_image_fence_to_see_own_writes() {
    assert_eq!(
        own_image_read_after(|_| {}),
        1.0,
        "without a fence the write is not guaranteed visible"
    );
    assert_eq!(
        own_image_read_after(|wi| wi.atomic_work_item_fence(IMAGE, AcqRel, WorkItemScope)),
        2.0,
        "after the image fence it is"
    );
}

/// 000: "The behavior of calling atomic_work_item_fence with
/// CLK_IMAGE_MEM_FENCE ORed together with either CLK_GLOBAL_MEM_FENCE or
/// CLK_LOCAL_MEM_FENCE is equivalent to calling atomic_work_item_fence
/// individually for CLK_IMAGE_MEM_FENCE and the other flags."
#[test]
fn r000_image_ored_with_other_flags_is_both_fences() {
    assert_eq!(
        own_image_read_after(|wi| wi.atomic_work_item_fence(
            IMAGE | GLOBAL,
            Release,
            WorkGroupScope
        )),
        2.0
    );
    assert_eq!(
        own_image_read_after(|wi| wi.atomic_work_item_fence(LOCAL | IMAGE, Acquire, DeviceScope)),
        2.0
    );
    // The global part is the fence it would be alone.
    for order in [MemOrder::Acquire, MemOrder::Release, MemOrder::SeqCst] {
        let both = MemFlags::GLOBAL.union(MemFlags::IMAGE);
        assert_eq!(
            fence_kind(both, order, MemScope::Device),
            fence_kind(MemFlags::GLOBAL, order, MemScope::Device)
        );
    }
    // And a fence without IMAGE does not make image writes visible.
    assert_eq!(
        own_image_read_after(|wi| wi.atomic_work_item_fence(GLOBAL, AcqRel, WorkGroupScope)),
        1.0
    );
}

/// 000: "Passing both CLK_GLOBAL_MEM_FENCE and CLK_LOCAL_MEM_FENCE to
/// atomic_work_item_fence will synchronize memory operations to both local
/// and global memory through some shared atomic action". Here: one fence
/// whose kind is the stronger of the two, and message passing through it
/// between work-groups works.
#[test]
fn r000_global_and_local_fence_synchronizes_both() {
    let both = MemFlags::GLOBAL.union(MemFlags::LOCAL);
    assert_eq!(
        fence_kind(both, MemOrder::Release, MemScope::Device),
        FenceKind::Hardware
    );
    assert_eq!(
        fence_kind(MemFlags::LOCAL, MemOrder::Release, MemScope::Device),
        FenceKind::Compiler
    );
    let data = Buffer::<u32>::new(64);
    let flag = Buffer::<AtomicUint>::new(1);
    let ok = Buffer::<AtomicUint>::new(1);
    within(20, move || {
        rt().launch(
            &Launch::new("fence_mp", NdRange::new([2]).local([1])),
            |wi| {
                if wi.get_group_id(0) == 0 {
                    for i in 0..64 {
                        data.set(i, i as u32 + 1);
                    }
                    wi.atomic_work_item_fence(GLOBAL | LOCAL, Release, DeviceScope);
                    flag.at(0).store_explicit(1, Relaxed);
                } else {
                    while flag.at(0).load_explicit(Relaxed) == 0 {
                        std::hint::spin_loop();
                    }
                    wi.atomic_work_item_fence(GLOBAL | LOCAL, Acquire, DeviceScope);
                    if (0..64).all(|i| data.get(i) == i as u32 + 1) {
                        ok.at(0).store(1);
                    }
                }
            },
        )
        .unwrap();
        assert_eq!(ok.at(0).load(), 1);
    });
}

/// 000: "Depending on the value of order, this operation: has no effects, if
/// order == memory_order_relaxed; is an acquire fence, if acquire; a release
/// fence, if release; both, if acq_rel; a sequentially consistent acquire and
/// release fence, if seq_cst."
#[test]
fn r000_each_order_has_its_fence_meaning() {
    use std::sync::atomic::Ordering;
    for flags in [
        MemFlags::GLOBAL,
        MemFlags::LOCAL,
        MemFlags::IMAGE,
        MemFlags::ALL,
    ] {
        for scope in [
            MemScope::SubGroup,
            MemScope::WorkGroup,
            MemScope::Device,
            MemScope::AllSvmDevices,
        ] {
            assert_eq!(fence_kind(flags, MemOrder::Relaxed, scope), FenceKind::None);
        }
    }
    assert_eq!(MemOrder::Acquire.to_std(), Ordering::Acquire);
    assert_eq!(MemOrder::Release.to_std(), Ordering::Release);
    assert_eq!(MemOrder::AcqRel.to_std(), Ordering::AcqRel);
    assert_eq!(MemOrder::SeqCst.to_std(), Ordering::SeqCst);
    assert!(MemOrder::Acquire.is_acquire() && !MemOrder::Acquire.is_release());
    assert!(MemOrder::Release.is_release() && !MemOrder::Release.is_acquire());
    assert!(MemOrder::AcqRel.is_acquire() && MemOrder::AcqRel.is_release());
    assert!(MemOrder::SeqCst.is_acquire() && MemOrder::SeqCst.is_release());
    // A relaxed image fence has no effect: the write stays invisible.
    assert_eq!(
        own_image_read_after(|wi| wi.atomic_work_item_fence(IMAGE, Relaxed, WorkItemScope)),
        1.0
    );
    assert_eq!(
        own_image_read_after(|wi| wi.atomic_work_item_fence(IMAGE, SeqCst, WorkItemScope)),
        2.0
    );
}

/// 000 and the restrictions it points to: memory_scope_work_item is only for
/// image fences.
#[test]
fn r000_work_item_scope_only_with_the_image_flag() {
    let ok = Buffer::<AtomicUint>::new(1);
    rt().launch(&Launch::new("work_item_scope", NdRange::new([1])), |wi| {
        wi.atomic_work_item_fence_dyn(4, MemOrder::AcqRel, MemScope::WorkItem)
            .unwrap();
        let e = wi.atomic_work_item_fence_dyn(6, MemOrder::AcqRel, MemScope::WorkItem);
        let f = wi.atomic_work_item_fence_dyn(2, MemOrder::AcqRel, MemScope::WorkItem);
        if e == Err(SyncError::WorkItemScopeFlags {
            flags: MemFlags::GLOBAL.union(MemFlags::IMAGE),
        }) && f
            == Err(SyncError::WorkItemScopeFlags {
                flags: MemFlags::GLOBAL,
            })
        {
            ok.at(0).store(1);
        }
    })
    .unwrap();
    assert_eq!(ok.at(0).load(), 1);
}
