//! 001_b96d5603ef61627c.txt: the atomics.

use clsync::sync::*;
use clsync::trace::{capture, SyncEvent};
use clsync::*;

use crate::common::{rt, within};

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
