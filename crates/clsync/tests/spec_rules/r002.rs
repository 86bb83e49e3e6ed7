//! 002_6c32435e912a3710.txt: sub_group_barrier.

use clsync::sync::*;
use clsync::*;

use crate::common::{rt, within};

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
