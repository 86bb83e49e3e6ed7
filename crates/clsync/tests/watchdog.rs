//! The watchdog (`scheduler::watchdog`): a launch that spins on memory
//! nothing changes is a stall report naming who was stuck where, never a
//! hang; a launch that is slow but alive (long computation, atomics that
//! change memory, a host thread that answers, an interpreted loop that
//! stores) runs to its end. In every engine.

mod common;

use std::time::Duration;

use clsync::sync::*;
use clsync::*;
use common::{rt, within};

/// A launch of `global` work-items in groups of `local` whose watchdog
/// waits `ms` milliseconds.
fn watched(name: &str, global: usize, local: usize, ms: u64) -> Launch {
    Launch::new(name, NdRange::new([global]).local([local]))
        .watchdog(Some(Duration::from_millis(ms)))
}

#[test]
fn a_spinning_work_item_is_reported_by_the_watchdog() {
    let e = within(30, || {
        let flag: Buffer<AtomicInt> = Buffer::new(1);
        // Work-item 0 waits for work-item 1 of its own group, which can never
        // run before it yields: OpenCL promises no forward progress here.
        rt().launch(&watched("spin", 128, 64, 300), |wi| {
            if wi.get_local_id(0) == 0 {
                while flag.at(0).load_explicit(Acquire) == 0 {}
            } else if wi.get_local_id(0) == 1 {
                flag.at(0).store_explicit(1, Release);
            }
        })
        .unwrap_err()
    });
    let LaunchError::Stalled(s) = &e else {
        panic!("expected a stall, got {e}")
    };
    assert_eq!(s.kernel, "spin");
    assert_eq!(s.total_groups, 2);
    assert!(!s.groups.is_empty());
    for g in &s.groups {
        let running = g
            .places
            .iter()
            .find(|r| matches!(r.place, Place::Running(_)))
            .expect("a running work-item");
        assert_eq!(running.items, vec![0]);
        let Place::Running(Some(site)) = running.place else {
            panic!("{e}")
        };
        assert!(site.file.ends_with("watchdog.rs"), "{site}");
    }
    assert!(e.to_string().contains("made no progress"), "{e}");
    // The way out for a kernel that was slow rather than stuck.
    assert!(
        e.to_string()
            .ends_with("needs a longer `Launch::watchdog`)"),
        "{e}"
    );
}

#[test]
fn a_stalled_work_item_waiting_at_a_barrier_is_named_too() {
    let e = within(30, || {
        let go: Buffer<AtomicInt> = Buffer::new(1);
        rt().launch(&watched("spin_vs_barrier", 8, 8, 200), |wi| {
            if wi.get_local_id(0) == 7 {
                while go.at(0).load() == 0 {}
            }
            wi.barrier(LOCAL);
        })
        .unwrap_err()
    });
    let LaunchError::Stalled(s) = &e else {
        panic!("expected a stall, got {e}")
    };
    let places = &s.groups[0].places;
    assert!(
        places.iter().any(
            |r| matches!(r.place, Place::AtBarrier(_)) && r.items == (0..7).collect::<Vec<_>>()
        ),
        "{e}"
    );
    assert!(
        places
            .iter()
            .any(|r| matches!(r.place, Place::Running(_)) && r.items == vec![7]),
        "{e}"
    );
}

#[test]
fn a_slow_kernel_that_progresses_is_not_stopped() {
    // Each round of a group takes longer than the timeout, but every
    // work-item reaching the barrier counts as progress.
    rt().launch(&watched("slow", 16, 4, 100), |wi| {
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(40));
            wi.barrier(LOCAL);
        }
    })
    .unwrap();
}

/// A barrier-free kernel whose work-items outlast two timeouts: they touch
/// no atomic, fence or barrier, so the watchdog's probation sees no polls
/// and leaves them to finish (`scheduler::watchdog`).
#[test]
fn a_barrier_free_computation_longer_than_the_timeout_finishes() {
    let out = within(30, || {
        let out: Buffer<u32> = Buffer::new(4);
        rt().launch(&watched("long_compute", 4, 1, 50), |wi| {
            let i = wi.get_global_id(0);
            std::thread::sleep(Duration::from_millis(300));
            out.set(i, (i * i) as u32);
        })
        .unwrap();
        out.to_vec()
    });
    assert_eq!(out, vec![0, 1, 4, 9]);
}

/// Work-items that never meet a barrier but change memory with atomics the
/// whole time are alive: probation sees the changes.
#[test]
fn a_barrier_free_kernel_whose_atomics_change_memory_is_not_stopped() {
    let (total, mine) = within(30, || {
        let total: Buffer<AtomicUint> = Buffer::new(1);
        let mine: Buffer<u32> = Buffer::new(4);
        rt().launch(&watched("count", 4, 1, 50), |wi| {
            let start = std::time::Instant::now();
            let mut n = 0;
            while start.elapsed() < Duration::from_millis(400) {
                total.at(0).fetch_add(1);
                n += 1;
            }
            mine.set(wi.get_global_id(0), n);
        })
        .unwrap();
        (total.to_vec()[0], mine.to_vec())
    });
    assert_eq!(total, mine.iter().sum::<u32>());
}

/// A work-item that waits on a host thread answering more slowly than the
/// timeout, but changing memory as it goes, is not stopped.
#[test]
fn a_work_item_waiting_on_a_slow_host_thread_is_not_stopped() {
    let seen = within(30, || {
        let ticks: Buffer<AtomicUint> = Buffer::new(1);
        let seen: Buffer<u32> = Buffer::new(1);
        std::thread::scope(|s| {
            s.spawn(|| {
                for t in 1..=8 {
                    std::thread::sleep(Duration::from_millis(40));
                    // Release: pairs with the work-item's acquire load.
                    ticks.at(0).store_explicit(t, Release);
                }
            });
            rt().launch(&watched("wait_for_host", 1, 1, 50), |_wi| {
                let mut last = 0;
                let mut changes = 0;
                while last != 8 {
                    // Acquire: pairs with the host's release store.
                    let now = ticks.at(0).load_explicit(Acquire);
                    if now != last {
                        changes += 1;
                        last = now;
                    }
                }
                seen.set(0, changes);
            })
            .unwrap()
        });
        seen.to_vec()[0]
    });
    assert!((1..=8).contains(&seen), "{seen}");
}

/// Spin locks that nobody will free keep writing (an exchange of 1 for 1)
/// or keep failing (a compare-exchange), but change nothing: stuck, in the
/// OpenCL C 2.0 and the 1.x forms.
#[test]
fn spin_locks_that_change_nothing_are_reported() {
    type Spin = fn(&Buffer<AtomicInt>, &Buffer<i32>);
    let spins: [(&str, Spin); 3] = [
        (
            "exchange_lock",
            |lock, _| while lock.at(0).exchange(1) == 1 {},
        ),
        ("cas_lock", |lock, _| {
            while !lock.at(0).compare_exchange_strong(&mut 0, 1) {}
        }),
        (
            "legacy_xchg_lock",
            |_, legacy| while legacy.atomic_xchg(0, 1) == 1 {},
        ),
    ];
    for (name, spin) in spins {
        let e = within(30, move || {
            let lock: Buffer<AtomicInt> = Buffer::new(1);
            lock.at(0).init(1);
            let legacy: Buffer<i32> = Buffer::from_slice(&[1]);
            rt().launch(&watched(name, 2, 1, 100), |_wi| spin(&lock, &legacy))
                .unwrap_err()
        });
        let LaunchError::Stalled(s) = &e else {
            panic!("{name}: expected a stall, got {e}")
        };
        assert_eq!((s.kernel.as_str(), s.groups.len()), (name, 2), "{e}");
    }
}

/// An interpreter's work-items: a loop that touches nothing but its
/// back-edge's cancellation point is stuck and reported at the interpreted
/// program's line, not the interpreter's; so is a panic.
#[test]
fn an_interpreted_stall_or_panic_names_the_interpreted_line() {
    let site = Site {
        file: "prog.cl",
        line: 12,
        column: 5,
    };
    let e = within(30, move || {
        rt().launch(&watched("interp_spin", 1, 1, 50), |wi| loop {
            let _at = checker::SiteScope::enter(site);
            wi.cancellation_point();
        })
        .unwrap_err()
    });
    let LaunchError::Stalled(s) = &e else {
        panic!("expected a stall, got {e}")
    };
    assert_eq!(
        s.groups[0].places[0].place,
        Place::Running(Some(site)),
        "{e}"
    );

    let e = rt()
        .launch(&Launch::new("interp_panic", NdRange::new([1])), |_wi| {
            checker::at_site(site, || panic!("the interpreted program failed"))
        })
        .unwrap_err();
    let LaunchError::Panic(p) = &e else {
        panic!("expected a panic, got {e}")
    };
    assert_eq!(p.site, Some(site), "{e}");
}

/// An interpreted loop that stores with `plain_store` changes memory: the
/// probation sees it, and the loop runs to its end.
#[test]
fn an_interpreted_loop_that_stores_is_not_stopped() {
    let last = within(30, || {
        let cell: Buffer<AtomicUint> = Buffer::new(1);
        rt().launch(&watched("interp_store", 1, 1, 50), |wi| {
            let start = std::time::Instant::now();
            let mut i = 0;
            while start.elapsed() < Duration::from_millis(400) {
                i += 1;
                cell.at(0).plain_store(i);
                wi.cancellation_point();
            }
        })
        .unwrap();
        cell.at(0).load()
    });
    assert!(last > 0);
}

/// The watchdog ends a spin that nothing will end in every engine, and
/// leaves alone a barrier-free kernel whose atomics change memory, in every
/// engine: coroutines, async futures, group-level loops.
#[test]
fn every_engine_is_watched_alike() {
    let spins = within(60, || {
        let flag: Buffer<AtomicInt> = Buffer::new(1);
        let launch = watched("spin", 4, 2, 50);
        let spin = || while flag.at(0).load_explicit(Acquire) == 0 {};
        [
            rt().launch(&launch, |_wi| spin()).unwrap_err(),
            rt().launch_async(&launch, async |_wi| spin()).unwrap_err(),
            rt().launch_groups(&launch, |g| g.for_each(|_| spin()))
                .unwrap_err(),
        ]
        .map(|e| e.to_string())
    });
    for e in &spins {
        assert!(e.starts_with("kernel `spin` made no progress"), "{e}");
        assert!(e.contains("watchdog.rs"), "{e}");
    }
    let counts = within(60, || {
        let n: Buffer<AtomicUint> = Buffer::new(1);
        let launch = watched("count", 4, 2, 50);
        let count = || {
            let start = std::time::Instant::now();
            while start.elapsed() < Duration::from_millis(300) {
                n.at(0).fetch_add(1);
            }
        };
        [
            rt().launch(&launch, |_wi| count()).is_ok(),
            rt().launch_async(&launch, async |_wi| count()).is_ok(),
            rt().launch_groups(&launch, |g| g.for_each(|_| count()))
                .is_ok(),
        ]
    });
    assert_eq!(counts, [true; 3]);
}

/// A timeout too short to tell a stall from a worker waiting for its core
/// is refused before anything runs: a zero timeout reported a healthy
/// kernel stuck (every time, in five tries) before.
#[test]
fn a_watchdog_timeout_under_the_shortest_is_refused() {
    let ran: Buffer<AtomicUint> = Buffer::new(1);
    for t in [Duration::ZERO, MIN_WATCHDOG / 2] {
        let e = rt()
            .launch(
                &Launch::new("too_short", NdRange::new([64]).local([8])).watchdog(Some(t)),
                |_wi| {
                    ran.at(0).fetch_add(1);
                },
            )
            .unwrap_err();
        let LaunchError::Setting { kernel, message } = &e else {
            panic!("expected a setting error, got {e}")
        };
        assert_eq!(kernel, "too_short");
        assert!(message.contains("MIN_WATCHDOG"), "{message}");
    }
    assert_eq!(ran.at(0).load(), 0, "nothing ran");
    // The shortest is allowed.
    rt().launch(
        &Launch::new("shortest", NdRange::new([8])).watchdog(Some(MIN_WATCHDOG)),
        |_wi| {},
    )
    .unwrap();
}

/// A launch queued behind another on the same runtime makes no progress
/// until the workers come to it; its work-items do not run, so they do not
/// poll, and its watchdog waits (before the probation, a launch queued
/// longer than its timeout was cancelled before any of its groups ran).
#[test]
fn a_launch_queued_behind_another_is_not_stopped() {
    let (first, second) = within(60, || {
        let rt = Runtime::with_threads(1);
        let a: Buffer<u32> = Buffer::new(2);
        let b: Buffer<AtomicUint> = Buffer::new(1);
        let (first, second) = std::thread::scope(|s| {
            let long = s.spawn(|| {
                rt.launch(&Launch::new("long", NdRange::new([2]).local([1])), |wi| {
                    std::thread::sleep(Duration::from_millis(150));
                    a.set(wi.get_global_id(0), 1);
                })
            });
            // Let the long launch take the only worker first.
            std::thread::sleep(Duration::from_millis(30));
            let queued = rt.launch(&watched("queued", 8, 4, 20), |wi| {
                b.at(0).fetch_add(1);
                wi.barrier(LOCAL);
            });
            (
                long.join().expect("no panic").map(|_| ()),
                queued.map(|_| ()),
            )
        });
        (first.map(|()| a.to_vec()), second.map(|()| b.at(0).load()))
    });
    assert_eq!(first.expect("the long launch"), vec![1, 1]);
    assert_eq!(second.expect("the queued launch"), 8);
}
