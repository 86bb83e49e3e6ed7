//! The checker on synchronization between work-items through atomics and
//! fences: message passing that is missing a fence or an order, fences with
//! the wrong flags (`000_96da91f170ff246f.txt`), scopes that do not include
//! both parties, and atomic and plain accesses mixed on one location
//! (`001_b96d5603ef61627c.txt`).
//!
//! The message-passing kernels run two work-groups of one work-item each on
//! two workers: group 0 produces, group 1 spins until it sees the flag and
//! then reads the data.

mod common;

use std::hint::spin_loop;

use clsync::checker::ReportKind::*;
use clsync::sync::{
    AcqRel, Acquire, DeviceScope, Relaxed, Release, SubGroupScope, WorkGroupScope, GLOBAL, LOCAL,
};
use clsync::{AtomicInt, AtomicUint, Buffer, Launch, NdRange};
use common::check::{check, expect};

const SRC: &str = include_str!("checker_sync.rs");

fn two_groups(name: &str) -> Launch {
    Launch::new(name, NdRange::new([2]).local([1]))
}

#[test]
fn message_passing_with_relaxed_flag_only() {
    let data = Buffer::<u32>::new(1).named("data");
    let flag: Buffer<AtomicInt> = Buffer::new(1);
    let r = check(two_groups("mp_relaxed"), move |wi| {
        if wi.get_group_id(0) == 0 {
            data.set(0, 42); //~ mpr.first
            flag.at(0).store_explicit(1, Relaxed);
        } else {
            while flag.at(0).load_explicit(Relaxed) == 0 {
                spin_loop();
            }
            let _ = data.get(0); //~ mpr
        }
    });
    expect(SRC, &r, &[(DataRace, "mpr")]);
}

#[test]
fn message_passing_missing_acquire_fence() {
    let data = Buffer::<u32>::new(1);
    let flag: Buffer<AtomicInt> = Buffer::new(1);
    let r = check(two_groups("mp_no_acquire"), move |wi| {
        if wi.get_group_id(0) == 0 {
            data.set(0, 42); //~ mpa.first
            wi.atomic_work_item_fence(GLOBAL, Release, DeviceScope);
            flag.at(0).store_explicit(1, Relaxed);
        } else {
            while flag.at(0).load_explicit(Relaxed) == 0 {
                spin_loop();
            }
            let _ = data.get(0); //~ mpa
        }
    });
    expect(SRC, &r, &[(DataRace, "mpa")]);
}

#[test]
fn message_passing_missing_release_fence() {
    let data = Buffer::<u32>::new(1);
    let flag: Buffer<AtomicInt> = Buffer::new(1);
    let r = check(two_groups("mp_no_release"), move |wi| {
        if wi.get_group_id(0) == 0 {
            data.set(0, 42); //~ mpn.first
            flag.at(0).store_explicit(1, Relaxed);
        } else {
            while flag.at(0).load_explicit(Relaxed) == 0 {
                spin_loop();
            }
            wi.atomic_work_item_fence(GLOBAL, Acquire, DeviceScope);
            let _ = data.get(0); //~ mpn
        }
    });
    expect(SRC, &r, &[(DataRace, "mpn")]);
}

#[test]
fn message_passing_fence_with_local_flag_for_global_data() {
    let data = Buffer::<u32>::new(1);
    let flag: Buffer<AtomicInt> = Buffer::new(1);
    let r = check(two_groups("mp_wrong_flags"), move |wi| {
        if wi.get_group_id(0) == 0 {
            data.set(0, 42); //~ mpf.first
            wi.atomic_work_item_fence(LOCAL, Release, DeviceScope);
            flag.at(0).store_explicit(1, Relaxed);
        } else {
            while flag.at(0).load_explicit(Relaxed) == 0 {
                spin_loop();
            }
            wi.atomic_work_item_fence(LOCAL | GLOBAL, Acquire, DeviceScope);
            let _ = data.get(0); //~ mpf
        }
    });
    expect(SRC, &r, &[(DataRace, "mpf")]);
}

#[test]
fn release_store_read_by_relaxed_load() {
    let data = Buffer::<u32>::new(1);
    let flag: Buffer<AtomicInt> = Buffer::new(1);
    let r = check(two_groups("mp_relaxed_load"), move |wi| {
        if wi.get_group_id(0) == 0 {
            data.set(0, 42); //~ mpl.first
            flag.at(0).store_explicit(1, Release);
        } else {
            while flag.at(0).load_explicit(Relaxed) == 0 {
                spin_loop();
            }
            let _ = data.get(0); //~ mpl
        }
    });
    expect(SRC, &r, &[(DataRace, "mpl")]);
}

#[test]
fn fence_scope_too_narrow_between_groups() {
    let data = Buffer::<u32>::new(1);
    let flag: Buffer<AtomicInt> = Buffer::new(1);
    let r = check(two_groups("mp_fence_scope"), move |wi| {
        if wi.get_group_id(0) == 0 {
            data.set(0, 42); //~ mfs.first
            wi.atomic_work_item_fence(GLOBAL, Release, WorkGroupScope);
            flag.at(0).store_explicit(1, Relaxed);
        } else {
            while flag.at(0).load_explicit(Relaxed) == 0 {
                spin_loop();
            }
            wi.atomic_work_item_fence(GLOBAL, Acquire, WorkGroupScope);
            let _ = data.get(0); //~ mfs
        }
    });
    expect(SRC, &r, &[(DataRace, "mfs")]);
}

#[test]
fn work_group_scope_flag_between_groups() {
    let data = Buffer::<u32>::new(1);
    let flag: Buffer<AtomicInt> = Buffer::new(1);
    let r = check(two_groups("mp_wg_scope"), move |wi| {
        if wi.get_group_id(0) == 0 {
            data.set(0, 42); //~ wgd.first
            flag.at(0).store_explicit_scope(1, Release, WorkGroupScope); //~ wgf.first
        } else {
            let load = || flag.at(0).load_explicit_scope(Acquire, WorkGroupScope); //~ wgf
            while load() == 0 {
                spin_loop();
            }
            let _ = data.get(0); //~ wgd
        }
    });
    expect(SRC, &r, &[(ScopeTooNarrow, "wgf"), (DataRace, "wgd")]);
}

#[test]
fn work_group_scope_counter_shared_by_groups() {
    let counter: Buffer<AtomicUint> = Buffer::new(1).named("counter");
    let r = check(
        Launch::new("wg_counter", NdRange::new([8]).local([4])),
        move |_wi| {
            counter
                .at(0)
                .fetch_add_explicit_scope(1, Relaxed, WorkGroupScope); //~ wgc
        },
    );
    expect(SRC, &r, &[(ScopeTooNarrow, "wgc")]);
    let r = &r[0];
    let (a, b) = (r.first.as_ref().unwrap(), r.second.as_ref().unwrap());
    assert_ne!(a.item.group_id, b.item.group_id);
    assert!(r.to_string().contains("memory_scope_work_group"), "{r}");
}

#[test]
fn sub_group_scope_atomics_across_sub_groups() {
    let mut launch = Launch::new(
        "sg_counter",
        NdRange::new([16]).local([16]).sub_group_size(4),
    );
    let counter = launch.local::<AtomicUint>(1);
    let out = Buffer::<u32>::new(1);
    let r = check(launch, move |wi| {
        let c = wi.local(counter);
        if wi.get_local_id(0) == 0 {
            c.at(0).init(0);
        }
        wi.barrier(LOCAL);
        c.at(0).fetch_add_explicit_scope(1, Relaxed, SubGroupScope); //~ sgc
        wi.barrier(LOCAL);
        if wi.get_local_id(0) == 0 {
            out.set(0, c.at(0).load_explicit_scope(Relaxed, WorkGroupScope));
        }
    });
    expect(SRC, &r, &[(ScopeTooNarrow, "sgc")]);
}

#[test]
fn plain_write_and_legacy_atomic_on_one_element() {
    let counts = Buffer::<u32>::new(1);
    let r = check(
        Launch::new("mixed", NdRange::new([8]).local([8])),
        move |wi| {
            if wi.get_local_id(0) == 0 {
                counts.set(0, 100); //~ mix.first
            } else {
                counts.atomic_inc(0); //~ mix
            }
        },
    );
    expect(SRC, &r, &[(MixedAccess, "mix")]);
}

/// A plain write followed by an atomic of the same work-item still races
/// with the other work-items' atomics: the atomic write after it does not
/// hide it (an Oclgrind test, `atomic_race_before`, in Rust).
#[test]
fn plain_write_then_own_atomic_races_with_the_others_atomics() {
    let counts = Buffer::<u32>::new(1);
    let r = check(
        Launch::new("before", NdRange::new([4]).local([4])),
        move |wi| {
            if wi.get_local_id(0) == 0 {
                counts.set(0, 0); //~ before.first
            }
            counts.atomic_dec(0); //~ before
        },
    );
    expect(SRC, &r, &[(MixedAccess, "before")]);
}

/// A plain read after atomics (their record kept, one read since) races
/// with another work-item's atomic in the same interval.
#[test]
fn plain_read_between_atomics_races_with_the_next_atomic() {
    let counts = Buffer::<u32>::new(1);
    let r = check(
        Launch::new("between", NdRange::new([2]).local([2])),
        move |wi| {
            if wi.get_local_id(0) == 0 {
                counts.atomic_inc(0);
                let _ = counts.get(0); //~ between.first
            } else {
                counts.atomic_inc(0); //~ between
            }
        },
    );
    expect(SRC, &r, &[(MixedAccess, "between")]);
}

/// Another group's plain read after its own barrier still races with the
/// first group's atomics, though the last atomic, its own group's, is
/// ordered before it: a barrier orders its own group only. One worker, so
/// that the read comes after the atomics.
#[test]
fn another_groups_barrier_does_not_order_the_atomics() {
    let counts = Buffer::<u32>::new(1);
    let launch = Launch::new("other", NdRange::new([4]).local([2]));
    let r = clsync::Runtime::with_threads(1)
        .check(&launch, move |wi| {
            if wi.get_group_id(0) == 0 || wi.get_local_id(0) == 1 {
                counts.atomic_inc(0); //~ other.first
            }
            wi.barrier(GLOBAL);
            if wi.get_group_id(0) == 1 && wi.get_local_id(0) == 0 {
                let _ = counts.get(0); //~ other
            }
        })
        .unwrap();
    expect(SRC, &r, &[(MixedAccess, "other")]);
}

#[test]
fn atomic_init_racing_with_atomic_loads() {
    let a: Buffer<AtomicInt> = Buffer::new(1);
    let r = check(
        Launch::new("init_race", NdRange::new([4]).local([4])),
        move |wi| {
            if wi.get_local_id(0) == 0 {
                a.at(0).init(5); //~ init.first
            }
            let _ = a.at(0).load_explicit(Relaxed); //~ init
        },
    );
    expect(SRC, &r, &[(MixedAccess, "init")]);
}

#[test]
fn local_plain_read_of_an_atomically_updated_counter() {
    let out = Buffer::<u32>::new(1);
    let mut launch = Launch::new("local_mixed", NdRange::new([8]).local([8]));
    let counter = launch.local::<u32>(1);
    let r = check(launch, move |wi| {
        let c = wi.local(counter);
        if wi.get_local_id(0) == 0 {
            c.set(0, 0);
        }
        wi.barrier(LOCAL);
        c.atomic_inc(0); //~ lmx.first
        if wi.get_local_id(0) == 7 {
            out.set(0, c.get(0)); //~ lmx
        }
    });
    expect(SRC, &r, &[(MixedAccess, "lmx")]);
}

#[test]
fn atomic_store_and_plain_read_in_different_groups() {
    let v = Buffer::<u32>::new(1);
    let done: Buffer<AtomicInt> = Buffer::new(1);
    let r = check(two_groups("mixed_groups"), move |wi| {
        if wi.get_group_id(0) == 0 {
            v.atomic_xchg(0, 9); //~ mxg.first
            done.at(0).store_explicit(1, Release);
        } else {
            while done.at(0).load_explicit(Relaxed) == 0 {
                spin_loop();
            }
            let _ = v.get(0); //~ mxg
        }
    });
    expect(SRC, &r, &[(MixedAccess, "mxg")]);
}

#[test]
fn acq_rel_ticket_without_release_of_the_data() {
    // The last group to take a ticket reads every group's partial result,
    // but the partial results are written after the ticket is taken.
    let partial = Buffer::<u32>::new(4);
    let tickets: Buffer<AtomicUint> = Buffer::new(1);
    let total = Buffer::<u32>::new(1);
    let r = check(
        Launch::new("ticket", NdRange::new([4]).local([1])),
        move |wi| {
            let g = wi.get_group_id(0);
            let t = tickets.at(0).fetch_add_explicit(1, AcqRel);
            partial.set(g, g as u32 + 1); //~ tk.a
            if t == 3 {
                let sum = (0..4).map(|i| partial.get(i)).sum(); //~ tk.b
                total.set(0, sum);
            }
        },
    );
    assert!(!r.is_empty());
    let lines = [
        common::check::line_of(SRC, "tk.a").unwrap(),
        common::check::line_of(SRC, "tk.b").unwrap(),
    ];
    for x in &r {
        assert_eq!(x.kind, DataRace, "{x}");
        let pair = [x.site.line, x.first.as_ref().unwrap().site.line];
        assert!(pair.iter().all(|l| lines.contains(l)), "{x}");
    }
}

/// The same publication with a barrier that fences only local memory: the
/// other work-items' global writes are not ordered before the release, so
/// the reader races with them (`003_2caebc1f01141481.txt`: a barrier
/// fences the spaces its flags name).
#[test]
fn group_writes_behind_a_local_barrier_are_not_published() {
    let data = Buffer::<u32>::new(4).named("data");
    let flag: Buffer<AtomicInt> = Buffer::new(1);
    let launch = Launch::new("publish_local", NdRange::new([8]).local([4]));
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        if wi.get_group_id(0) == 0 {
            data.set(l, l as u32 + 1); //~ unpub.first
            wi.barrier(LOCAL);
            if l == 0 {
                flag.at(0).store_explicit(1, Release);
            }
        } else {
            wi.barrier(LOCAL);
            if l == 0 {
                while flag.at(0).load_explicit(Acquire) == 0 {
                    spin_loop();
                }
                let _ = (1..4).map(|i| data.get(i)).sum::<u32>(); //~ unpub
            }
        }
    });
    expect(SRC, &r, &[(DataRace, "unpub")]);
    assert_eq!(r.len(), 1, "{r:?}");
}
