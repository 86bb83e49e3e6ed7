//! The checker on byte objects (the buffers and local arrays of compiled
//! OpenCL C kernels), whose shadow has a cell per granule of the first
//! access's width: whatever the granules, every access is judged as if each
//! of its bytes had a shadow of its own (an access to a byte nobody else
//! touched does not race, one to a byte another work-item wrote does), and
//! a racy access is reported once, however many of its bytes race.

use clsync::checker::engine::{self, AtomicKind};
use clsync::checker::{Report, ReportKind, Space};
use clsync::sync::{MemOrder, MemScope, Site, GLOBAL, LOCAL};
use clsync::{Buffer, Launch, LocalArg, NdRange, Runtime, WorkItem};

fn at(line: u32) -> Site {
    Site {
        file: "granules.cl",
        line,
        column: 1,
    }
}

/// The reports as (kind, first line, second line, count, byte index).
fn summary(reports: &[Report]) -> Vec<(ReportKind, u32, u32, u64, usize)> {
    reports
        .iter()
        .map(|r| {
            (
                r.kind,
                r.first.as_ref().map_or(0, |a| a.site.line),
                r.second.as_ref().map_or(0, |a| a.site.line),
                r.count,
                r.memory.as_ref().map_or(usize::MAX, |m| m.index),
            )
        })
        .collect()
}

/// Runs `body` as one group of two work-items, given the address of 16
/// bytes of global memory (`local` false) or of local memory, and the
/// barrier flags for that space.
fn run_on(local: bool, body: impl Fn(&WorkItem, usize) + Sync) -> Vec<Report> {
    let global = Buffer::<u8>::new(16).named("bytes");
    let mut launch = Launch::new("granules", NdRange::new([2]).local([2]));
    let arg: LocalArg<u8> = launch.local_named::<u8>("bytes", 16);
    Runtime::with_threads(1)
        .check(&launch, |wi| {
            let base = if local {
                wi.local(arg).raw_bytes().0 as usize
            } else {
                global.raw_bytes().0 as usize
            };
            body(wi, base)
        })
        .unwrap()
}

fn space(local: bool) -> Space {
    if local {
        Space::Local
    } else {
        Space::Global
    }
}

/// A work-group barrier over both spaces.
fn barrier(wi: &WorkItem) {
    wi.barrier(GLOBAL | LOCAL);
}

/// A relaxed work-group `atomic_fetch_add` on the `len` bytes at `addr`.
fn fetch_add(addr: usize, len: usize, local: bool, site: Site) {
    engine::atomic(
        addr,
        len,
        local,
        "atomic_fetch_add",
        AtomicKind::ReadModifyWrite,
        MemOrder::Relaxed,
        None,
        MemScope::WorkGroup,
        site,
        || ((), true),
    );
}

#[test]
fn bytes_of_one_granule_are_checked_apart() {
    for local in [false, true] {
        let sp = space(local);
        let r = run_on(local, |wi, base| {
            let me = wi.get_local_id(0);
            // Every byte written first, four at a time (the first access
            // makes the granules four bytes), so that local reads find
            // them written.
            if me == 0 {
                for k in 0..4 {
                    engine::plain_range(base + 4 * k, 4, sp, true, Some(0), at(1));
                }
            }
            barrier(wi);
            if me == 0 {
                engine::plain_range(base, 4, sp, true, Some(1), at(2));
            }
            barrier(wi);
            // Work-item 0 writes byte 0, work-item 1 byte 1: no race,
            // though both are in the granule of bytes 0..4.
            if me == 0 {
                engine::plain_range(base, 1, sp, true, Some(2), at(3));
            } else {
                engine::plain_range(base + 1, 1, sp, true, Some(3), at(4));
            }
            // Work-item 1 reads bytes 4..8 (no one wrote them since the
            // barrier) and 0..4: byte 0 races with line 3, byte 1 is its
            // own, bytes 2 and 3 were written before the barrier.
            if me == 1 {
                engine::plain_range(base + 4, 4, sp, false, None, at(5));
                engine::plain_range(base, 4, sp, false, None, at(6));
            }
        });
        assert_eq!(
            summary(&r),
            [(ReportKind::DataRace, 3, 6, 1, 0)],
            "local: {local}: {r:#?}"
        );
    }
}

#[test]
fn an_access_whose_bytes_all_race_is_one_report() {
    for local in [false, true] {
        let sp = space(local);
        let r = run_on(local, |wi, base| {
            let v = wi.get_local_id(0) as u64;
            // Eight bytes, two granules of the first access's four.
            if wi.get_local_id(0) == 0 {
                engine::plain_range(base + 8, 4, sp, true, Some(9), at(1));
            }
            engine::plain_range(base, 8, sp, true, Some(v), at(2));
        });
        assert_eq!(
            summary(&r),
            [(ReportKind::DataRace, 2, 2, 1, 0)],
            "local: {local}: {r:#?}"
        );
    }
}

/// An atomic of one byte in a granule of plain accesses of four (the
/// granule splits).
#[test]
fn an_atomic_in_a_granule_of_plain_accesses_is_judged_at_its_byte() {
    for local in [false, true] {
        let sp = space(local);
        let r = run_on(local, |wi, base| {
            let me = wi.get_local_id(0);
            if me == 0 {
                engine::plain_range(base, 4, sp, true, Some(5), at(1));
            }
            barrier(wi);
            if me == 1 {
                fetch_add(base, 1, local, at(2));
            } else {
                // Bytes 1..4 are work-item 0's own, ordered by the barrier
                // anyway: only byte 0 conflicts, with the atomic.
                engine::plain_range(base, 4, sp, false, None, at(3));
            }
        });
        let kinds: Vec<_> = summary(&r)
            .into_iter()
            .map(|(k, a, b, n, _)| (k, a, b, n))
            .collect();
        assert_eq!(
            kinds,
            [(ReportKind::MixedAccess, 3, 2, 1)],
            "local: {local}: {r:#?}"
        );
    }
}

/// An atomic as wide as the granule is one check, and covers each of its
/// bytes: a plain read of one of them races with it.
#[test]
fn an_atomic_covers_all_its_bytes() {
    for local in [false, true] {
        let sp = space(local);
        let r = run_on(local, |wi, base| {
            let me = wi.get_local_id(0);
            if me == 0 {
                engine::plain_range(base, 4, sp, true, Some(5), at(1));
            }
            barrier(wi);
            if me == 1 {
                fetch_add(base, 4, local, at(2));
            } else {
                // Byte 2 alone: work-item 1's atomic wrote it too.
                engine::plain_range(base + 2, 1, sp, false, None, at(3));
            }
        });
        assert_eq!(
            summary(&r),
            [(ReportKind::MixedAccess, 3, 2, 1, 2)],
            "local: {local}: {r:#?}"
        );
    }
}
