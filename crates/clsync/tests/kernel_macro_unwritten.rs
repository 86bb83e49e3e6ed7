//! `#[kernel]`'s read-only buffers: a `&Buffer` parameter whose every use
//! in the body is a read is reached through an unwritten view
//! (`Group::global_unwritten`) where nothing else the kernel may write
//! overlaps it, and a checked launch checks its reads' bounds only. A race
//! needs a write, so the reports are the same; the same buffer passed as
//! another, written, parameter keeps every read checked.

mod common;

use common::check::reports_of;

use clsync::checker::ReportKind;
use clsync::{kernel, Buffer, Launch, NdRange, Runtime};
use clsync::{sync::LOCAL, WorkItem};

const SOURCE: &str = include_str!("kernel_macro_unwritten.rs");

/// Each work-item reads its right neighbour's element of `src` (wrapping)
/// and writes three times it to its own of `out`.
#[kernel(groups)]
fn shift(wi: &WorkItem, src: &Buffer<u32>, out: &Buffer<u32>) {
    let g = wi.get_global_id(0);
    let n = src.len();
    let v = src.get((g + 1) % n); //~ shifted read
    out.set(g, v * 3); //~ shifted write
}

/// Reads one element past its own: the last work-item's is past the end.
#[kernel(groups)]
fn past(wi: &WorkItem, src: &Buffer<u32>, out: &Buffer<u32>) {
    let g = wi.get_global_id(0);
    wi.barrier(LOCAL);
    out.set(g, src.get(g + 1)); //~ past the end
}

/// [`shift`] with the output reached through a slice of buffers, which
/// the macro cannot compare with `src`: `src`'s reads stay checked.
#[kernel(groups)]
fn shift_through(wi: &WorkItem, src: &Buffer<u32>, outs: &[&Buffer<u32>]) {
    let g = wi.get_global_id(0);
    let n = src.len();
    let v = src.get((g + 1) % n); //~ read beside a slice
    outs[0].set(g, v * 3); //~ write through a slice
}

#[test]
fn a_read_only_buffer_reads_the_same_checked_and_unchecked() {
    common::within(60, || {
        let n = 1000;
        let src = Buffer::from_slice(&(0..n as u32).map(|i| i * 7 + 1).collect::<Vec<_>>());
        let want: Vec<u32> = (0..n).map(|g| src.get((g + 1) % n) * 3).collect();
        for checked in [false, true] {
            let out = Buffer::<u32>::new(n);
            let launch = Launch::new("shift", NdRange::new([n]).local([40])).checked(checked);
            shift_launch(&common::rt(), &launch, &src, &out)
                .unwrap_or_else(|e| panic!("checked: {checked}: {e}"));
            assert_eq!(out.to_vec(), want, "checked: {checked}");
        }
    });
}

/// `src` and `out` are one buffer: the kernel writes what it reads, so the
/// launch finds the overlap and checks the reads, and each work-item's
/// read of its neighbour's element races with the neighbour's write.
#[test]
fn a_read_only_parameter_that_another_one_writes_still_races() {
    let reports = common::within(60, || {
        let data = Buffer::from_slice(&[5u32; 64]);
        let launch = Launch::new("aliased", NdRange::new([64]).local([16])).checked(true);
        reports_of(shift_launch(&common::rt(), &launch, &data, &data).unwrap_err())
    });
    assert!(
        reports.iter().all(|r| r.kind == ReportKind::DataRace),
        "{reports:?}"
    );
    let lines: Vec<(u32, u32)> = reports
        .iter()
        .map(|r| {
            let first = r.first.as_ref().expect("two accesses").site.line;
            (first, r.site.line)
        })
        .collect();
    let read = common::check::line_of(SOURCE, "shifted read").unwrap();
    let write = common::check::line_of(SOURCE, "shifted write").unwrap();
    assert!(
        lines.contains(&(read, write)) || lines.contains(&(write, read)),
        "a race between the read and the write: {lines:?}"
    );
}

/// A buffer reached through a parameter of another kind (here a slice of
/// buffers) may be the read-only one: its reads stay checked, and the race
/// is found.
#[test]
fn a_read_only_buffer_beside_a_slice_of_buffers_still_races() {
    let reports = common::within(60, || {
        let data = Buffer::from_slice(&[5u32; 64]);
        let launch = Launch::new("through", NdRange::new([64]).local([16])).checked(true);
        reports_of(shift_through_launch(&common::rt(), &launch, &data, &[&data]).unwrap_err())
    });
    let read = common::check::line_of(SOURCE, "read beside a slice").unwrap();
    assert!(
        reports.iter().any(|r| r.kind == ReportKind::DataRace
            && r.first.as_ref().unwrap().site.line == read
            || r.site.line == read),
        "{reports:?}"
    );
}

/// An unwritten view still checks bounds: the last work-item's read past
/// the end is a report of its own, and the launch goes on.
#[test]
fn a_read_past_a_read_only_buffer_is_reported() {
    let (reports, out) = common::within(60, || {
        let src = Buffer::from_slice(&(0..32u32).collect::<Vec<_>>());
        let out = Buffer::<u32>::new(32);
        let launch = Launch::new("past", NdRange::new([32]).local([8])).checked(true);
        let r = reports_of(past_launch(&common::rt(), &launch, &src, &out).unwrap_err());
        (r, out.to_vec())
    });
    common::check::expect(
        SOURCE,
        &reports,
        &[(ReportKind::OutOfBounds, "past the end")],
    );
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(reports[0].second.as_ref().unwrap().item.global_id[0], 31);
    assert_eq!(&out[..31], &(1..32u32).collect::<Vec<_>>()[..]);
}

/// `Group::global_unwritten` takes its caller's word: given nothing as
/// written, the reads it makes are not remembered, so a write through
/// another view of the buffer races with them unreported; `global`'s
/// reads are checked and the race is found. (What `#[kernel]` proves is
/// what makes the word true.)
#[test]
fn an_unwritten_views_reads_are_not_remembered() {
    for unwritten in [false, true] {
        let reports = common::within(60, move || {
            let data = Buffer::<u32>::new(16);
            let launch = Launch::new("word", NdRange::new([16]).local([16])).checked(true);
            Runtime::with_threads(1)
                .check_groups(&launch, |g| {
                    let r = if unwritten {
                        g.global_unwritten(&data, &[])
                    } else {
                        g.global(&data)
                    };
                    let w = g.global(&data);
                    g.for_each(move |it| {
                        let i = it.global_linear_id;
                        let _ = r.get((i + 1) % 16);
                    });
                    g.for_each(move |it| w.set(it.global_linear_id, 1));
                })
                .unwrap()
        });
        if unwritten {
            assert!(reports.is_empty(), "{reports:?}");
        } else {
            assert_eq!(reports.len(), 1, "{reports:?}");
            assert_eq!(reports[0].kind, ReportKind::DataRace);
        }
    }
}
