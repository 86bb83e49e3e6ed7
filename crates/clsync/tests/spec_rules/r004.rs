//! 004_bfca21a36d7bd2da.txt: the barrier reference page.
//!
//! The same rules as 003's `barrier`, for `work_group_barrier` (its OpenCL 2.0
//! name) in 2D and 3D ranges.

use clsync::sync::*;
use clsync::*;

use crate::common::{rt, within};
use crate::group_lockstep;

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
