//! 003_2caebc1f01141481.txt: OpenCL 1.2 barrier and mem_fence.

use clsync::sync::*;
use clsync::trace::{capture, SyncEvent};
use clsync::*;

use crate::common::{rt, within};
use crate::group_lockstep;

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
        d.to_string().contains("spec_rules/r003.rs"),
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
