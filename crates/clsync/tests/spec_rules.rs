//! One test per rule of the five specification extracts in `shared/spec/`.
//! Each test is named `r<file number>_<rule>` and quotes the rule it checks;
//! each would fail if the runtime broke that rule.
//!
//! The rules that are about what must not compile (operators on atomic
//! types, unsupported atomic types, atomics in private memory, illegal
//! orders and scopes) are `compile_fail` doctests in `src/atomics/mod.rs`,
//! `src/memory/scalar.rs`, `src/sync/order.rs`, `src/sync/scope.rs` and
//! `src/sync/flags.rs`; `cargo test --doc` runs them.

mod common;

use clsync::sync::*;
use clsync::trace::{capture, SyncEvent};
use clsync::*;
use common::{rt, within};

fn fence(flags: MemFlags, order: MemOrder, scope: MemScope) -> SyncEvent {
    SyncEvent::Fence {
        flags,
        order,
        scope,
    }
}

// ---- 000_96da91f170ff246f.txt: atomic_work_item_fence ----------------------

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

// ---- 001_b96d5603ef61627c.txt: the atomics -------------------------------

fn atomic(
    op: &'static str,
    order: MemOrder,
    failure: Option<MemOrder>,
    scope: MemScope,
) -> SyncEvent {
    SyncEvent::Atomic {
        op,
        order,
        failure,
        scope,
        local: false,
    }
}

/// 001: "The functions not ending in explicit have the same semantics as the
/// corresponding explicit function with memory_order_seq_cst", and "The
/// functions that do not have memory_scope argument have the same semantics
/// as the corresponding functions with the memory_scope argument set to
/// memory_scope_device."
#[test]
fn r001_plain_functions_are_seq_cst_at_device_scope() {
    use MemOrder::SeqCst as S;
    let d = MemScope::Device;
    let b: Buffer<AtomicInt> = Buffer::new(1);
    let f: Buffer<AtomicFlag> = Buffer::new(1);
    let a = b.at(0);
    let (_, e) = capture(|| {
        a.store(1);
        a.load();
        a.exchange(2);
        a.compare_exchange_strong(&mut 2, 3);
        a.compare_exchange_weak(&mut 0, 3);
        a.fetch_add(1);
        a.fetch_sub(1);
        a.fetch_or(1);
        a.fetch_xor(1);
        a.fetch_and(1);
        a.fetch_min(1);
        a.fetch_max(1);
        f.at(0).test_and_set();
        f.at(0).clear();
    });
    let want = vec![
        atomic("atomic_store", S, None, d),
        atomic("atomic_load", S, None, d),
        atomic("atomic_exchange", S, None, d),
        atomic("atomic_compare_exchange_strong", S, Some(S), d),
        atomic("atomic_compare_exchange_weak", S, Some(S), d),
        atomic("atomic_fetch_add", S, None, d),
        atomic("atomic_fetch_sub", S, None, d),
        atomic("atomic_fetch_or", S, None, d),
        atomic("atomic_fetch_xor", S, None, d),
        atomic("atomic_fetch_and", S, None, d),
        atomic("atomic_fetch_min", S, None, d),
        atomic("atomic_fetch_max", S, None, d),
        atomic("atomic_flag_test_and_set", S, None, d),
        atomic("atomic_flag_clear", S, None, d),
    ];
    assert_eq!(e, want);
}

/// 001: "_explicit" forms without a scope argument are device scope; with
/// one, the scope given.
#[test]
fn r001_explicit_without_scope_is_device_scope() {
    let b: Buffer<AtomicUlong> = Buffer::new(1);
    let a = b.at(0);
    let (_, e) = capture(|| {
        a.load_explicit(Acquire);
        a.store_explicit(1, Release);
        a.fetch_add_explicit(1, AcqRel);
        a.compare_exchange_strong_explicit(&mut 0, 1, AcqRel, Acquire);
        a.load_explicit_scope(Relaxed, WorkGroupScope);
        a.fetch_max_explicit_scope(1, SeqCst, AllSvmDevicesScope);
        a.compare_exchange_weak_explicit_scope(&mut 0, 1, Release, Relaxed, SubGroupScope);
    });
    assert_eq!(
        e,
        vec![
            atomic("atomic_load", MemOrder::Acquire, None, MemScope::Device),
            atomic("atomic_store", MemOrder::Release, None, MemScope::Device),
            atomic("atomic_fetch_add", MemOrder::AcqRel, None, MemScope::Device),
            atomic(
                "atomic_compare_exchange_strong",
                MemOrder::AcqRel,
                Some(MemOrder::Acquire),
                MemScope::Device
            ),
            atomic("atomic_load", MemOrder::Relaxed, None, MemScope::WorkGroup),
            atomic(
                "atomic_fetch_max",
                MemOrder::SeqCst,
                None,
                MemScope::AllSvmDevices
            ),
            atomic(
                "atomic_compare_exchange_weak",
                MemOrder::Release,
                Some(MemOrder::Relaxed),
                MemScope::SubGroup
            ),
        ]
    );
}

/// 001: "when a host thread needs fine control over the consistency of
/// memory that is shared with one or more OpenCL devices, it must use atomic
/// and fence operations that are compatible with the C11 atomic operations."
/// A host thread and a running work-item exchange 2000 messages through
/// release/acquire atomics at memory_scope_all_svm_devices.
#[test]
fn r001_host_threads_synchronize_with_kernels_through_svm_atomics() {
    within(60, || {
        let (replies, _) = clsync_samples::message_passing::ping_pong(&rt(), 2000).unwrap();
        let want: Vec<u64> = (1..=2000u64).map(|r| r * 7 + 1).collect();
        assert_eq!(replies, want);
    });
}

/// 001: "OpenCL C requires that the built-in atomic functions on atomic
/// types are lock-free." Each atomic object is exactly one hardware atomic of
/// its value's size: no lock beside it.
#[test]
fn r001_atomics_are_lock_free_hardware_atomics() {
    use std::mem::{align_of, size_of};
    assert_eq!(size_of::<AtomicInt>(), 4);
    assert_eq!(size_of::<AtomicUint>(), 4);
    assert_eq!(size_of::<AtomicFloat>(), 4);
    assert_eq!(size_of::<AtomicLong>(), 8);
    assert_eq!(size_of::<AtomicUlong>(), 8);
    assert_eq!(size_of::<AtomicDouble>(), 8);
    assert_eq!(size_of::<AtomicSize>(), size_of::<usize>());
    assert_eq!(size_of::<AtomicIntptr>(), size_of::<isize>());
    assert_eq!(
        align_of::<AtomicLong>(),
        8,
        "a lock-free 64-bit atomic is naturally aligned"
    );
    assert_eq!(size_of::<AtomicInt<atomics::Local>>(), 4);
}

/// 001 (restrictions on orders, by way of the extracts' "restrictions
/// section"): run-time orders and scopes are checked.
#[test]
fn r001_run_time_orders_and_scopes_are_checked() {
    let b: Buffer<AtomicInt> = Buffer::new(1);
    let a = b.at(0);
    assert!(matches!(
        a.load_dyn(MemOrder::Release, MemScope::Device),
        Err(SyncError::Order { .. })
    ));
    assert!(matches!(
        a.load_dyn(MemOrder::AcqRel, MemScope::Device),
        Err(SyncError::Order { .. })
    ));
    assert!(matches!(
        a.store_dyn(1, MemOrder::Acquire, MemScope::Device),
        Err(SyncError::Order { .. })
    ));
    assert!(matches!(
        a.store_dyn(1, MemOrder::AcqRel, MemScope::Device),
        Err(SyncError::Order { .. })
    ));
    assert!(matches!(
        a.load_dyn(MemOrder::Acquire, MemScope::WorkItem),
        Err(SyncError::Scope { .. })
    ));
    let cas = |s, f| a.compare_exchange_strong_dyn(&mut 0, 1, s, f, MemScope::Device);
    assert!(matches!(
        cas(MemOrder::SeqCst, MemOrder::Release),
        Err(SyncError::FailureOrder { .. })
    ));
    assert!(matches!(
        cas(MemOrder::SeqCst, MemOrder::AcqRel),
        Err(SyncError::FailureOrder { .. })
    ));
    assert!(matches!(
        cas(MemOrder::Relaxed, MemOrder::Acquire),
        Err(SyncError::FailureOrder { .. })
    ));
    assert!(matches!(
        cas(MemOrder::Release, MemOrder::Acquire),
        Err(SyncError::FailureOrder { .. })
    ));
    assert!(matches!(
        cas(MemOrder::AcqRel, MemOrder::SeqCst),
        Err(SyncError::FailureOrder { .. })
    ));
    assert_eq!(cas(MemOrder::AcqRel, MemOrder::Acquire), Ok(true));
    assert_eq!(a.load_dyn(MemOrder::SeqCst, MemScope::AllSvmDevices), Ok(1));
    let f: Buffer<AtomicFlag> = Buffer::new(1);
    assert!(matches!(
        f.at(0).clear_dyn(MemOrder::Acquire, MemScope::Device),
        Err(SyncError::Order { .. })
    ));
}

// ---- 002_6c32435e912a3710.txt: sub_group_barrier --------------------------

/// Every work-item of each sub-group writes its phase, waits at a sub-group
/// barrier, and checks that every member of its sub-group wrote the same
/// phase; counts the violations.
fn sub_group_lockstep(range: NdRange, phases: u32) -> u32 {
    let bad = Buffer::<AtomicUint>::new(1);
    let mut launch = Launch::new("sg_lockstep", range);
    let local_len = 4096;
    let slots = launch.local::<u32>(local_len);
    rt().launch(&launch, |wi| {
        let s = wi.local(slots);
        let l = wi.get_local_linear_id();
        let base = wi.get_sub_group_id() as usize * wi.get_max_sub_group_size() as usize;
        let size = wi.get_sub_group_size() as usize;
        for phase in 1..=phases {
            s.set(l, phase);
            wi.sub_group_barrier(LOCAL);
            for m in base..base + size {
                if s.get(m) != phase {
                    bad.at(0).fetch_add(1);
                }
            }
            wi.sub_group_barrier(LOCAL);
        }
    })
    .unwrap();
    bad.at(0).load()
}

/// 002: "All work-items in a sub-group executing the kernel on a processor
/// must execute this function before any are allowed to continue execution
/// beyond the subgroup barrier."
#[test]
fn r002_sub_group_barrier_waits_for_the_whole_sub_group() {
    for sg in [1, 5, 16, 32, 64] {
        assert_eq!(
            sub_group_lockstep(NdRange::new([512]).local([128]).sub_group_size(sg), 6),
            0,
            "sub-group size {sg}"
        );
    }
}

/// 002: "These rules apply to ND-ranges implemented with uniform and
/// nonuniform work-groups."
#[test]
fn r002_sub_group_barrier_in_non_uniform_work_groups() {
    assert_eq!(
        sub_group_lockstep(NdRange::new([37]).local([16]).sub_group_size(5), 4),
        0
    );
    assert_eq!(
        sub_group_lockstep(NdRange::new([11, 7]).local([4, 3]).sub_group_size(5), 4),
        0
    );
}

/// 002: "If sub_group_barrier is inside a conditional statement, then all
/// work-items must enter the conditional if any work-item enters the
/// conditional statement and executes the subgroup barrier."
#[test]
fn r002_sub_group_barrier_in_a_conditional_is_divergence() {
    let e = within(20, || {
        rt().launch(
            &Launch::new("sg_cond", NdRange::new([64]).local([64]).sub_group_size(16)),
            |wi| {
                if wi.get_sub_group_local_id() < 3 {
                    wi.sub_group_barrier(LOCAL);
                }
            },
        )
        .unwrap_err()
    });
    let LaunchError::Divergence(d) = e else {
        panic!("expected divergence, got {e}")
    };
    assert_eq!(d.kind, BarrierKind::SubGroup);
    assert_eq!(d.sub_group, Some(0));
    assert_eq!(d.places.len(), 2);
    assert_eq!(d.places[0].items, vec![0, 1, 2]);
    assert_eq!(d.places[1].place, Place::Exited);
}

/// 002: "If sub_group_barrier is inside a loop, all work-items within the
/// sub-group must execute the sub_group_barrier for each iteration of the
/// loop before any are allowed to continue execution beyond the
/// sub_group_barrier."
#[test]
fn r002_sub_group_barrier_in_a_loop() {
    // Same trip count: lockstep holds in every iteration.
    assert_eq!(
        sub_group_lockstep(NdRange::new([96]).local([96]).sub_group_size(8), 20),
        0
    );
    // Different trip counts within a sub-group: divergence, not a hang.
    let e = within(20, || {
        rt().launch(
            &Launch::new("sg_loop", NdRange::new([32]).local([32]).sub_group_size(8)),
            |wi| {
                for _ in 0..(2 + wi.get_sub_group_local_id() % 2) {
                    wi.sub_group_barrier(LOCAL);
                }
            },
        )
        .unwrap_err()
    });
    let LaunchError::Divergence(d) = e else {
        panic!("expected divergence, got {e}")
    };
    assert_eq!(d.kind, BarrierKind::SubGroup);
}

/// 002: "CLK_LOCAL_MEM_FENCE — ... ensure correct ordering of memory
/// operations to local memory"; "CLK_GLOBAL_MEM_FENCE — ... to global
/// memory"; "CLK_IMAGE_MEM_FENCE — ... to image objects": a member's write
/// before the barrier is seen by the others after it, for each space.
#[test]
fn r002_sub_group_barrier_flags_order_their_memory() {
    let n = 128;
    let global = Buffer::<u32>::new(n);
    let img = Image2d::<[u32; 4]>::new(n, 1);
    let bad = Buffer::<AtomicUint>::new(3);
    let mut launch = Launch::new("sg_flags", NdRange::new([n]).local([64]).sub_group_size(16))
        .strict_images(true);
    let local = launch.local::<u32>(64);
    rt().launch(&launch, |wi| {
        let l = wi.get_local_id(0);
        let g = wi.get_global_id(0);
        let mirror = |i: usize| i ^ 15; // another member of the same sub-group of 16
        let s = wi.local(local);
        s.set(l, g as u32 + 1);
        wi.sub_group_barrier(LOCAL);
        if s.get(mirror(l)) != mirror(g) as u32 + 1 {
            bad.at(0).fetch_add(1);
        }
        global.set(g, g as u32 + 2);
        wi.sub_group_barrier(GLOBAL);
        if global.get(mirror(g)) != mirror(g) as u32 + 2 {
            bad.at(1).fetch_add(1);
        }
        img.write(wi, [g as i32, 0], [g as u32 + 3; 4]);
        wi.sub_group_barrier(IMAGE);
        // Its own write too: the barrier's image fence makes it visible.
        if img.read(wi, [mirror(g) as i32, 0])[0] != mirror(g) as u32 + 3
            || img.read(wi, [g as i32, 0])[0] != g as u32 + 3
        {
            bad.at(2).fetch_add(1);
        }
    })
    .unwrap();
    assert_eq!(bad.to_vec(), vec![0, 0, 0]);
}

/// 002: the barrier is per sub-group: different sub-groups may pass
/// different numbers of sub-group barriers without waiting for each other.
#[test]
fn r002_sub_groups_are_independent() {
    let done = Buffer::<AtomicUint>::new(1);
    within(20, move || {
        rt().launch(
            &Launch::new(
                "sg_independent",
                NdRange::new([64]).local([64]).sub_group_size(16),
            ),
            |wi| {
                for _ in 0..=wi.get_sub_group_id() {
                    wi.sub_group_barrier(LOCAL);
                }
                done.at(0).fetch_add(1);
            },
        )
        .unwrap();
        assert_eq!(done.at(0).load(), 64);
    });
}

// ---- 003_2caebc1f01141481.txt: OpenCL 1.2 barrier and mem_fence -----------

/// Every work-item writes its phase to local memory, waits at a work-group
/// barrier, and checks all other work-items' slots; counts violations.
fn group_lockstep(range: NdRange, phases: u32, barrier: fn(&WorkItem)) -> u32 {
    let bad = Buffer::<AtomicUint>::new(1);
    rt().launch(&Launch::new("wg_lockstep", range), |wi| {
        let n: usize = (0..3).map(|d| wi.get_local_size(d)).product();
        let s = wi.local_array::<u32>(n);
        let l = wi.get_local_linear_id();
        for phase in 1..=phases {
            s.set(l, phase);
            barrier(wi);
            if (0..n).any(|m| s.get(m) != phase) {
                bad.at(0).fetch_add(1);
            }
            barrier(wi);
        }
    })
    .unwrap();
    bad.at(0).load()
}

/// 003: "All work-items in a work-group executing the kernel on a processor
/// must execute this function before any are allowed to continue execution
/// beyond the barrier."
#[test]
fn r003_barrier_waits_for_the_whole_work_group() {
    for local in [1, 7, 64, 256, 1024] {
        assert_eq!(
            group_lockstep(NdRange::new([2048]).local([local]), 3, |wi| wi
                .barrier(LOCAL)),
            0,
            "local {local}"
        );
    }
}

/// 003: "This function must be encountered by all work-items in a
/// work-group executing the kernel."
#[test]
fn r003_barrier_not_reached_by_all_is_divergence() {
    let e = within(20, || {
        rt().launch(
            &Launch::new("early_exit", NdRange::new([128]).local([64])),
            |wi| {
                if wi.get_global_id(0) == 70 {
                    return;
                }
                wi.barrier(LOCAL);
            },
        )
        .unwrap_err()
    });
    let LaunchError::Divergence(d) = e else {
        panic!("expected divergence, got {e}")
    };
    assert_eq!(d.kind, BarrierKind::WorkGroup);
    assert_eq!(d.group_id[0], 1);
    let exited: Vec<_> = d
        .places
        .iter()
        .filter(|r| r.place == Place::Exited)
        .collect();
    assert_eq!(exited.len(), 1);
    assert_eq!(exited[0].items, vec![6], "local id of global id 70");
    assert!(
        d.to_string().contains("spec_rules.rs"),
        "names the barrier's source: {d}"
    );
}

/// 003: "If barrier is inside a conditional statement, then all work-items
/// must enter the conditional if any work-item enters the conditional
/// statement and executes the barrier."
#[test]
// The branches are the same text but two different barriers (call sites),
// which is the point.
#[allow(clippy::if_same_then_else)]
fn r003_barrier_in_a_conditional_is_divergence() {
    let e = within(20, || {
        rt().launch(
            &Launch::new("two_barriers", NdRange::new([64]).local([64])),
            |wi| {
                if wi.get_local_id(0) % 2 == 0 {
                    wi.barrier(LOCAL);
                } else {
                    wi.barrier(LOCAL);
                }
            },
        )
        .unwrap_err()
    });
    let LaunchError::Divergence(d) = e else {
        panic!("expected divergence, got {e}")
    };
    assert_eq!(d.places.len(), 2);
    let (Place::AtBarrier(a), Place::AtBarrier(b)) = (&d.places[0].place, &d.places[1].place)
    else {
        panic!("both groups of work-items wait at barriers: {d}")
    };
    assert_ne!(a.site.line, b.site.line);
    assert_eq!(d.places[0].items, (0..64).step_by(2).collect::<Vec<_>>());
}

/// 003: "If barrier is inside a loop, all work-items must execute the
/// barrier for each iteration of the loop before any are allowed to continue
/// execution beyond the barrier."
#[test]
fn r003_barrier_in_a_loop() {
    assert_eq!(
        group_lockstep(NdRange::new([256]).local([128]), 25, |wi| wi
            .barrier(LOCAL | GLOBAL)),
        0
    );
    let e = within(20, || {
        rt().launch(
            &Launch::new("trip_counts", NdRange::new([64]).local([64])),
            |wi| {
                let trips = if wi.get_local_id(0) == 63 { 3 } else { 4 };
                for _ in 0..trips {
                    wi.barrier(LOCAL);
                }
            },
        )
        .unwrap_err()
    });
    let LaunchError::Divergence(d) = e else {
        panic!("expected divergence, got {e}")
    };
    assert!(
        d.places
            .iter()
            .any(|r| r.place == Place::Exited && r.items == vec![63]),
        "{d}"
    );
}

/// 003: "CLK_LOCAL_MEM_FENCE — The barrier function will either flush any
/// variables stored in local memory or queue a memory fence to ensure correct
/// ordering of memory operations to local memory." A local tree reduction
/// is right after every barrier(CLK_LOCAL_MEM_FENCE).
#[test]
fn r003_local_flag_orders_local_memory() {
    let rt = rt();
    let input = Buffer::from_slice(&(0..5000u32).collect::<Vec<_>>());
    let (sum, _) = clsync_samples::reduce::reduce(&rt, &input).unwrap();
    assert_eq!(sum, (0..5000u32).sum::<u32>());
}

/// 003: "CLK_GLOBAL_MEM_FENCE – The barrier function will queue a memory
/// fence to ensure correct ordering of memory operations to global memory."
#[test]
fn r003_global_flag_orders_global_memory() {
    let n = 1024;
    let a = Buffer::<u32>::new(n);
    let bad = Buffer::<AtomicUint>::new(1);
    rt().launch(
        &Launch::new("global_barrier", NdRange::new([n]).local([256])),
        |wi| {
            let g = wi.get_global_id(0);
            let base = wi.get_group_id(0) * 256;
            for round in 1..=4u32 {
                a.set(g, g as u32 * round);
                wi.barrier(GLOBAL);
                let other = base + (g - base + 37 * round as usize) % 256;
                if a.get(other) != other as u32 * round {
                    bad.at(0).fetch_add(1);
                }
                wi.barrier(GLOBAL);
            }
        },
    )
    .unwrap();
    assert_eq!(bad.at(0).load(), 0);
}

/// 003: "mem_fence — Orders loads and stores of a work-item"; "read_mem_fence
/// — Read memory barrier that orders only loads"; "write_mem_fence — Write
/// memory barrier that orders only stores": acquire orders later loads,
/// release earlier stores, acq_rel both.
#[test]
fn r003_mem_fence_orders_loads_and_stores() {
    let ok = Buffer::<AtomicUint>::new(1);
    rt().launch(&Launch::new("fences_12", NdRange::new([1])), |wi| {
        let (_, e) = capture(|| {
            wi.mem_fence(GLOBAL);
            wi.read_mem_fence(LOCAL | GLOBAL);
            wi.write_mem_fence(GLOBAL);
        });
        let orders: Vec<MemOrder> = e
            .iter()
            .map(|e| match e {
                SyncEvent::Fence { order, .. } => *order,
                _ => unreachable!(),
            })
            .collect();
        let [full, read, write] = orders[..] else {
            unreachable!()
        };
        if full.is_acquire()
            && full.is_release()
            && read.is_acquire()
            && !read.is_release()
            && write.is_release()
            && !write.is_acquire()
        {
            ok.at(0).store(1);
        }
    })
    .unwrap();
    assert_eq!(ok.at(0).load(), 1);
}

// ---- 004_bfca21a36d7bd2da.txt: the barrier reference page ------------------
//
// The same rules as 003's `barrier`, for `work_group_barrier` (its OpenCL 2.0
// name) in 2D and 3D ranges.

/// 004: "All work-items in a work-group executing the kernel on a processor
/// must execute this function before any are allowed to continue execution
/// beyond the barrier."
#[test]
fn r004_work_group_barrier_waits_for_the_whole_group_in_3d() {
    assert_eq!(
        group_lockstep(NdRange::new([8, 6, 4]).local([4, 3, 2]), 5, |wi| wi
            .work_group_barrier(LOCAL)),
        0
    );
    assert_eq!(
        group_lockstep(NdRange::new([9, 7, 5]).local([4, 3, 2]), 5, |wi| wi
            .work_group_barrier_scope(LOCAL, WorkGroupScope)),
        0,
        "non-uniform"
    );
}

/// 004: "This function must be encountered by all work-items in a
/// work-group executing the kernel."
#[test]
fn r004_every_work_item_must_encounter_the_barrier() {
    let e = within(20, || {
        rt().launch(
            &Launch::new("early_exit_2d", NdRange::new([8, 8]).local([4, 4])),
            |wi| {
                if wi.get_local_id(1) == 3 {
                    return;
                }
                wi.work_group_barrier(GLOBAL);
            },
        )
        .unwrap_err()
    });
    let LaunchError::Divergence(d) = e else {
        panic!("expected divergence, got {e}")
    };
    assert_eq!(d.group_id, [0, 0, 0]);
    let exited = d
        .places
        .iter()
        .find(|r| r.place == Place::Exited)
        .expect("some exited");
    assert_eq!(exited.items, vec![12, 13, 14, 15]);
}

/// 004: "If barrier is inside a conditional statement, then all work-items
/// must enter the conditional if any work-item enters the conditional
/// statement and executes the barrier."
#[test]
fn r004_conditional_barrier_is_divergence_not_a_hang() {
    let e = within(20, || {
        rt().launch(
            &Launch::new("cond_3d", NdRange::new([4, 4, 4]).local([4, 4, 4])),
            |wi| {
                if wi.get_local_id(2) > 0 {
                    wi.work_group_barrier(LOCAL);
                }
            },
        )
        .unwrap_err()
    });
    assert!(matches!(e, LaunchError::Divergence(_)), "{e}");
}

/// 004: "If barrier is inside a loop, all work-items must execute the
/// barrier for each iteration of the loop before any are allowed to continue
/// execution beyond the barrier."
#[test]
fn r004_loop_barrier_each_iteration() {
    assert_eq!(
        group_lockstep(NdRange::new([16, 16]).local([8, 8]), 30, |wi| wi
            .work_group_barrier(LOCAL)),
        0
    );
    let e = within(20, || {
        rt().launch(
            &Launch::new("loop_2d", NdRange::new([8, 8]).local([8, 8])),
            |wi| {
                for _ in 0..wi.get_local_id(0) % 3 {
                    wi.work_group_barrier(LOCAL);
                }
            },
        )
        .unwrap_err()
    });
    assert!(matches!(e, LaunchError::Divergence(_)), "{e}");
}

/// 004: "CLK_LOCAL_MEM_FENCE" and "CLK_GLOBAL_MEM_FENCE": with both flags, a
/// barrier orders both spaces.
#[test]
fn r004_both_flags_order_local_and_global() {
    let n = 512;
    let g = Buffer::<u32>::new(n);
    let bad = Buffer::<AtomicUint>::new(1);
    rt().launch(
        &Launch::new("both_flags", NdRange::new([n]).local([128])),
        |wi| {
            let l = wi.get_local_id(0);
            let id = wi.get_global_id(0);
            let s = wi.local_array::<u32>(128);
            s.set(l, l as u32 * 3);
            g.set(id, id as u32 * 5);
            wi.barrier(LOCAL | GLOBAL);
            let ol = 127 - l;
            let og = id - l + ol;
            if s.get(ol) != ol as u32 * 3 || g.get(og) != og as u32 * 5 {
                bad.at(0).fetch_add(1);
            }
        },
    )
    .unwrap();
    assert_eq!(bad.at(0).load(), 0);
}
