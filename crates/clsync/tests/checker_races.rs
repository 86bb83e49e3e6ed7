//! The checker on data races within work-groups: barrier intervals, barrier
//! flags (`003_2caebc1f01141481.txt`, `004_bfca21a36d7bd2da.txt`) and
//! sub-group barriers (`002_6c32435e912a3710.txt`). Each kernel has one bug;
//! the report must have the right kind and point at the marked lines.

mod common;

use clsync::checker::{ReportKind::*, Space};
use clsync::sync::{SubGroupScope, GLOBAL, IMAGE, LOCAL};
use clsync::{Buffer, Launch, NdRange};
use common::check::{check, expect};

const SRC: &str = include_str!("checker_races.rs");

#[test]
fn local_write_write_without_barrier() {
    let mut launch = Launch::new("ww", NdRange::new([64]).local([32]));
    let tile = launch.local::<u32>(1);
    let r = check(launch, move |wi| {
        let t = wi.local(tile);
        t.set(0, wi.get_local_id(0) as u32); //~ ww
    });
    expect(SRC, &r, &[(DataRace, "ww")]);
    let m = r[0].memory.as_ref().expect("names the memory");
    assert_eq!((m.space, m.index), (Space::Local, 0));
    // Both parties are in one group; the shown pair is the lowest ids.
    let (a, b) = (r[0].first.as_ref().unwrap(), r[0].second.as_ref().unwrap());
    assert_eq!(a.item.group_id, b.item.group_id);
    assert_eq!((a.item.local_id[0], b.item.local_id[0]), (0, 1));
}

#[test]
fn neighbour_read_without_barrier() {
    let out = Buffer::<u32>::new(64);
    let mut launch = Launch::new("neighbour", NdRange::new([64]).local([16]));
    let tile = launch.local::<u32>(16);
    let r = check(launch, move |wi| {
        let (l, g) = (wi.get_local_id(0), wi.get_global_id(0));
        let t = wi.local(tile);
        t.set(l, g as u32); //~ nb.first
        out.set(g, t.get((l + 1) % 16)); //~ nb
    });
    // Work-items that run before their neighbour also read local memory
    // nobody has written yet.
    expect(SRC, &r, &[(DataRace, "nb"), (UninitializedLocal, "nb")]);
}

/// A location its owner wrote, read and wrote again (a record boxed, with
/// nothing but the last write in it) still races with another work-item's
/// read in the same interval.
#[test]
fn own_write_read_write_then_another_reads() {
    let mut launch = Launch::new("wrw", NdRange::new([2]).local([2]));
    let tile = launch.local::<u32>(1);
    let r = check(launch, move |wi| {
        let t = wi.local(tile);
        if wi.get_local_id(0) == 0 {
            t.set(0, 1);
            let v = t.get(0);
            t.set(0, v + 1); //~ wrw.first
        } else {
            let _ = t.get(0); //~ wrw
        }
    });
    expect(SRC, &r, &[(DataRace, "wrw")]);
}

/// An element written before a barrier, then read by one work-item and
/// written by another in the same interval: the write is ordered after the
/// first write, but not after the read.
#[test]
fn a_read_then_another_work_items_write_after_the_barrier() {
    let mut launch = Launch::new("rw_after", NdRange::new([3]).local([3]));
    let tile = launch.local::<u32>(1);
    let r = check(launch, move |wi| {
        let t = wi.local(tile);
        let l = wi.get_local_id(0);
        if l == 0 {
            t.set(0, 1);
        }
        wi.barrier(LOCAL);
        if l == 1 {
            let _ = t.get(0); //~ rwa.first
        } else if l == 2 {
            t.set(0, 2); //~ rwa
        }
    });
    expect(SRC, &r, &[(DataRace, "rwa")]);
}

#[test]
fn a_write_after_several_reads_races_with_the_unordered_one() {
    // Work-items 0, 1 and 2 read the element after a barrier; work-item 3
    // (run after them) writes it in the same interval: a race with each
    // read (one report per pair of sites). After another barrier a write
    // is ordered after every read: clean.
    for (barrier_before_write, want) in [(false, 1usize), (true, 0)] {
        let mut launch = Launch::new("many_reads", NdRange::new([4]).local([4]));
        let tile = launch.local::<u32>(1);
        let r = check(launch, move |wi| {
            let t = wi.local(tile);
            let l = wi.get_local_id(0);
            if l == 0 {
                t.set(0, 1);
            }
            wi.barrier(LOCAL);
            if l != 3 {
                let _ = t.get(0); //~ mr.first
            }
            if barrier_before_write {
                wi.barrier(LOCAL);
            }
            if l == 3 {
                t.set(0, 2); //~ mr
            }
        });
        let races = r.iter().filter(|x| x.kind == DataRace).count();
        assert_eq!(races, want, "{r:?}");
        if want == 1 {
            expect(SRC, &r, &[(DataRace, "mr")]);
        }
    }
}

#[test]
fn reduction_missing_barrier_in_loop() {
    let input = Buffer::from_slice(&[1u32; 256]);
    let out = Buffer::<u32>::new(4);
    let mut launch = Launch::new("reduce", NdRange::new([256]).local([64]));
    let scratch = launch.local::<u32>(64);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let s = wi.local(scratch);
        s.set(l, input.get(wi.get_global_id(0)));
        wi.barrier(LOCAL);
        let mut half = 32;
        while half > 0 {
            if l < half {
                s.set(l, s.get(l) + s.get(l + half)); //~ red
            }
            half /= 2; // the barrier that belongs here is missing
        }
        if l == 0 {
            out.set(wi.get_group_id(0), s.get(0));
        }
    });
    expect(SRC, &r, &[(DataRace, "red")]);
}

#[test]
fn barrier_after_the_read_is_too_late() {
    let out = Buffer::<u32>::new(32);
    let mut launch = Launch::new("late", NdRange::new([32]).local([32]));
    let tile = launch.local::<u32>(32);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let t = wi.local(tile);
        t.set(l, 1);
        let v = t.get(31 - l); //~ late
        wi.barrier(LOCAL);
        out.set(l, v);
    });
    expect(SRC, &r, &[(DataRace, "late"), (UninitializedLocal, "late")]);
}

#[test]
fn write_after_read_needs_a_second_barrier() {
    let mut launch = Launch::new("war", NdRange::new([32]).local([32]));
    let tile = launch.local::<u32>(32);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let t = wi.local(tile);
        t.set(l, l as u32);
        wi.barrier(LOCAL);
        let v = t.get((l + 1) % 32); //~ war.first
        t.set(l, v * 2); //~ war
    });
    expect(SRC, &r, &[(DataRace, "war")]);
}

#[test]
fn global_exchange_without_barrier() {
    let data = Buffer::<u32>::new(64);
    let launch = Launch::new("gx", NdRange::new([64]).local([64]));
    let r = check(launch, move |wi| {
        let g = wi.get_global_id(0);
        data.set(g, 7); //~ gx.first
        let _ = data.get(63 - g); //~ gx
    });
    expect(SRC, &r, &[(DataRace, "gx")]);
}

#[test]
fn local_flags_do_not_order_global_memory() {
    let data = Buffer::<u32>::new(64).named("data");
    let launch = Launch::new("local_flag", NdRange::new([64]).local([64]));
    let r = check(launch, move |wi| {
        let g = wi.get_global_id(0);
        data.set(g, g as u32); //~ lf.first
        wi.barrier(LOCAL);
        let _ = data.get(63 - g); //~ lf
    });
    expect(SRC, &r, &[(DataRace, "lf")]);
    assert_eq!(r[0].memory.as_ref().unwrap().name, "data");
}

#[test]
fn global_flags_do_not_order_local_memory() {
    let mut launch = Launch::new("global_flag", NdRange::new([32]).local([32]));
    let tile = launch.local_named::<u32>("tile", 32);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let t = wi.local(tile);
        t.set(l, 1); //~ gf.first
        wi.barrier(GLOBAL);
        let _ = t.get(31 - l); //~ gf
    });
    expect(SRC, &r, &[(DataRace, "gf")]);
    assert_eq!(r[0].memory.as_ref().unwrap().name, "tile");
}

#[test]
fn image_flag_does_not_order_global_memory() {
    let data = Buffer::<u32>::new(16);
    let launch = Launch::new("image_flag", NdRange::new([16]).local([16]));
    let r = check(launch, move |wi| {
        let g = wi.get_global_id(0);
        data.set(g, 1);
        wi.barrier(IMAGE);
        let _ = data.get(15 - g); //~ if
    });
    expect(SRC, &r, &[(DataRace, "if")]);
}

#[test]
fn sub_group_barrier_does_not_order_other_sub_groups() {
    let mut launch = Launch::new("sg", NdRange::new([16]).local([16]).sub_group_size(4));
    let tile = launch.local::<u32>(16);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let t = wi.local(tile);
        t.set(l, l as u32); //~ sg.first
        wi.sub_group_barrier(LOCAL);
        let _ = t.get((l + 4) % 16); //~ sg
    });
    expect(SRC, &r, &[(DataRace, "sg")]);
    let r = &r[0];
    let (a, b) = (r.first.as_ref().unwrap(), r.second.as_ref().unwrap());
    assert_ne!(a.item.sub_group_id, b.item.sub_group_id);
}

/// A sub-group barrier puts its work-items' steps in their clocks, and a
/// work-group barrier after it hands that clock to the group; the accesses
/// after the work-group barrier are of later steps, which the clock does
/// not know: two work-items of the sub-group that then write and read one
/// element without a barrier race.
#[test]
fn accesses_after_a_barrier_are_not_known_to_a_clock_from_before_it() {
    let mut launch = Launch::new("sg_then_wg", NdRange::new([8]).local([8]).sub_group_size(4));
    let tile = launch.local::<u32>(8);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let t = wi.local(tile);
        t.set(l, 1);
        wi.sub_group_barrier(LOCAL);
        wi.barrier(LOCAL);
        if l == 0 {
            t.set(7, 2); //~ later.first
        }
        if l == 1 {
            let _ = t.get(7); //~ later
        }
    });
    expect(SRC, &r, &[(DataRace, "later")]);
}

#[test]
fn sub_group_barrier_race_on_global_memory() {
    let data = Buffer::<u32>::new(32);
    let launch = Launch::new(
        "sg_global",
        NdRange::new([32]).local([32]).sub_group_size(8),
    );
    let r = check(launch, move |wi| {
        let g = wi.get_global_id(0);
        data.set(g, 3);
        wi.sub_group_barrier(GLOBAL);
        let _ = data.get(31 - g); //~ sgg
    });
    expect(SRC, &r, &[(DataRace, "sgg")]);
}

#[test]
fn sub_group_barrier_with_global_flag_leaves_local_racy() {
    let mut launch = Launch::new("sg_flags", NdRange::new([8]).local([8]).sub_group_size(8));
    let tile = launch.local::<u32>(8);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let t = wi.local(tile);
        t.set(l, 1);
        wi.sub_group_barrier(GLOBAL);
        let _ = t.get(7 - l); //~ sgf
    });
    expect(SRC, &r, &[(DataRace, "sgf")]);
}

#[test]
fn work_group_barrier_at_sub_group_scope_orders_only_the_sub_group() {
    let mut launch = Launch::new(
        "wg_sg_scope",
        NdRange::new([16]).local([16]).sub_group_size(8),
    );
    let tile = launch.local::<u32>(16);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let t = wi.local(tile);
        t.set(l, 1);
        wi.work_group_barrier_scope(LOCAL, SubGroupScope);
        let _ = t.get(15 - l); //~ wgsg
    });
    expect(SRC, &r, &[(DataRace, "wgsg")]);
}

#[test]
fn groups_writing_one_element() {
    let out = Buffer::<u32>::new(1).named("result");
    let launch = Launch::new("last_writer", NdRange::new([64]).local([16]));
    let r = check(launch, move |wi| {
        if wi.get_local_id(0) == 0 {
            out.set(0, wi.get_group_id(0) as u32); //~ gww
        }
    });
    expect(SRC, &r, &[(DataRace, "gww")]);
    let r = &r[0];
    let (a, b) = (r.first.as_ref().unwrap(), r.second.as_ref().unwrap());
    assert_ne!(a.item.group_id, b.item.group_id);
}

#[test]
fn group_reads_what_another_group_writes() {
    let data = Buffer::<u32>::new(2);
    let launch = Launch::new("rw_groups", NdRange::new([2]).local([1]));
    let r = check(launch, move |wi| {
        if wi.get_group_id(0) == 0 {
            data.set(1, 5); //~ grw.a
        } else {
            let _ = data.get(1); //~ grw.b
        }
    });
    // Which access the checker meets second depends on which group runs
    // first, so the report is at one of the two lines.
    let (a, b) = (
        common::check::line_of(SRC, "grw.a").unwrap(),
        common::check::line_of(SRC, "grw.b").unwrap(),
    );
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].kind, DataRace);
    let lines = [r[0].site.line, r[0].first.as_ref().unwrap().site.line];
    assert!(lines == [a, b] || lines == [b, a], "{lines:?}");
}

/// A location every work-item of a group reads (twice, at two lines) and
/// the last one then writes with no barrier between: one race, with the
/// other work-items' later reads. Their first reads are not reported: each
/// work-item's second read makes its first redundant, though the readers
/// are too many for the checker to compare each new read with every
/// earlier one.
#[test]
fn value_read_by_the_whole_group_then_written() {
    let x = Buffer::<u32>::new(1).named("x");
    let out = Buffer::<u32>::new(64);
    let launch = Launch::new("shared_read", NdRange::new([64]).local([64]));
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let a = x.get(0);
        let b = x.get(0); //~ many.first
        out.set(l, a + b);
        if l == 63 {
            x.set(0, 1); //~ many
        }
    });
    expect(SRC, &r, &[(DataRace, "many")]);
    assert_eq!(r.len(), 1, "{r:?}");
}

/// The same reads with a barrier before the write: ordered, no report,
/// whichever work-item writes.
#[test]
fn value_read_by_the_whole_group_then_written_after_a_barrier() {
    let x = Buffer::<u32>::new(1).named("x");
    let out = Buffer::<u32>::new(64);
    let launch = Launch::new("shared_read_ok", NdRange::new([64]).local([64]));
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        out.set(l, x.get(0) + x.get(0));
        wi.barrier(GLOBAL);
        if l == 17 {
            x.set(0, 1);
        }
    });
    assert!(r.is_empty(), "{r:?}");
}

/// A sub-group barrier orders the reads before it before the same
/// sub-group's reads after it (`002_6c32435e912a3710.txt`), so those make
/// them redundant even among several readers: the write of another
/// sub-group, ordered in time but not in memory (the work-group barrier
/// fences global memory only, `003_2caebc1f01141481.txt`), races with the
/// later reads alone.
#[test]
fn sub_group_barrier_makes_earlier_reads_redundant() {
    let mut launch = Launch::new("sg_reads", NdRange::new([8]).local([8]).sub_group_size(4));
    let tile = launch.local::<u32>(1);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let t = wi.local(tile);
        if l == 0 {
            t.set(0, 1);
        }
        wi.barrier(LOCAL);
        if l < 2 {
            let _ = t.get(0);
        }
        wi.sub_group_barrier(LOCAL);
        if (2..4).contains(&l) {
            let _ = t.get(0); //~ sgr.first
        }
        wi.barrier(GLOBAL);
        if l == 5 {
            t.set(0, 2); //~ sgr
        }
    });
    expect(SRC, &r, &[(DataRace, "sgr")]);
    assert_eq!(r.len(), 1, "{r:?}");
}

/// A location read by a work-item of each of many groups (as a matrix
/// element is), twice each, then written by the last of them: the write
/// races with the other groups' reads, none of which a later read made
/// redundant; one report, against the first group's second read, as
/// within one group.
#[test]
fn value_read_by_every_group_then_written() {
    let x = Buffer::<u32>::new(1).named("x");
    let out = Buffer::<u32>::new(512);
    let launch = Launch::new("groups_read", NdRange::new([512]).local([16]));
    // One thread runs the groups in order: the write comes after every
    // other group's reads.
    let rt = clsync::Runtime::with_threads(1);
    let r = rt
        .check(&launch, move |wi: &clsync::WorkItem<'_>| {
            let g = wi.get_global_id(0);
            if g % 16 == 3 {
                let a = x.get(0);
                let b = x.get(0); //~ groups.first
                out.set(g, a + b);
            }
            if g == 499 {
                x.set(0, 1); //~ groups
            }
        })
        .unwrap();
    expect(SRC, &r, &[(DataRace, "groups")]);
    assert_eq!(r.len(), 1, "{r:?}");
    // Reported against the first group's read: the later groups' reads
    // did not replace it.
    let first = r[0].first.as_ref().expect("a race has two accesses");
    assert_eq!(first.item.group_id, [0, 0, 0], "{r:?}");
}

/// A non-uniform sub-group operation orders no memory (SPIR-V's
/// `OpGroupNonUniform*` have no memory semantics): a write before an
/// election and a read after it by another lane race, where a sub-group
/// barrier between them orders the two.
#[test]
fn a_non_uniform_operation_orders_no_memory() {
    let mut launch = Launch::new("nu_order", NdRange::new([4]).local([4]).sub_group_size(4));
    let tile = launch.local::<u32>(2);
    let r = check(launch, move |wi| {
        let l = wi.get_local_id(0);
        let t = wi.local(tile);
        if l == 0 {
            t.set(0, 1); //~ nu.first
            t.set(1, 1);
        }
        let elected = wi.sub_group_elect();
        if l == 1 && !elected {
            let _ = t.get(0); //~ nu
        }
        wi.sub_group_barrier(LOCAL);
        if l == 2 {
            let _ = t.get(1);
        }
    });
    expect(SRC, &r, &[(DataRace, "nu")]);
    assert_eq!(r.len(), 1, "{r:?}");
}
