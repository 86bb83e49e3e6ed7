//! `#[kernel]`'s barrier-interval proofs: local accesses that race with
//! nothing (`LocalView::get_race_free`, `set_race_free`) and buffers each
//! work-item accesses only at its own element (`Group::global_owned`),
//! which a checked launch does not check access by access.
//!
//! The reference is the same kernel run checked on the coroutine engine,
//! which makes no proof: where the proofs hold, both report the same
//! problems at the same lines; where a run-time condition of a proof fails
//! (a constant named `LOCAL` that fences global memory, a second dimension,
//! a buffer passed twice), nothing is taken at its word and the race is
//! still found.

mod common;

use clsync::checker::{Report, ReportKind};
use clsync::sync::LOCAL;
use clsync::{kernel, Buffer, Launch, LocalArg, NdRange, Runtime, WorkItem};
use common::check::{problems, reports_or_none};

/// An inclusive scan of each group, as the `scan` sample does it.
#[kernel(groups)]
fn scan(wi: &WorkItem, data: &Buffer<i32>, tile: LocalArg<i32>) {
    let l = wi.get_local_id(0);
    let g = wi.get_global_id(0);
    let size = wi.get_local_size(0);
    let t = wi.local(tile);
    t.set(l, data.get(g));
    let mut offset = 1;
    while offset < size {
        wi.barrier(LOCAL);
        let add = if l >= offset { t.get(l - offset) } else { 0 };
        wi.barrier(LOCAL);
        t.set(l, t.get(l).wrapping_add(add));
        offset *= 2;
    }
    data.set(g, t.get(l));
}

/// [`scan`] without the barrier between the reads of the neighbours and
/// the writes: each write races with a neighbour's read.
#[kernel(groups)]
fn scan_racy(wi: &WorkItem, data: &Buffer<i32>, tile: LocalArg<i32>) {
    let l = wi.get_local_id(0);
    let g = wi.get_global_id(0);
    let size = wi.get_local_size(0);
    let t = wi.local(tile);
    t.set(l, data.get(g));
    let mut offset = 1;
    while offset < size {
        wi.barrier(LOCAL);
        let add = if l >= offset { t.get(l - offset) } else { 0 };
        t.set(l, t.get(l).wrapping_add(add));
        offset *= 2;
    }
    data.set(g, t.get(l));
}

/// A tree reduction of each group into `out[group]`: writes below `half`,
/// reads at `l + half`, in one interval.
#[kernel(groups)]
fn reduce(wi: &WorkItem, input: &Buffer<u32>, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let l = wi.get_local_id(0);
    let s = wi.local(tile);
    s.set(l, input.get(wi.get_global_id(0)));
    let mut half = wi.get_local_size(0) / 2;
    while half > 0 {
        wi.barrier(LOCAL);
        if l < half {
            s.set(l, s.get(l) + s.get(l + half));
        }
        half /= 2;
    }
    if l == 0 {
        out.set(wi.get_group_id(0), s.get(0));
    }
}

/// [`reduce`] with its reads one element down (`l + half - 1`), onto an
/// element a work-item below `half` writes in the same interval.
#[kernel(groups)]
fn reduce_skewed(wi: &WorkItem, input: &Buffer<u32>, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let l = wi.get_local_id(0);
    let s = wi.local(tile);
    s.set(l, input.get(wi.get_global_id(0)));
    let mut half = wi.get_local_size(0) / 2;
    while half > 0 {
        wi.barrier(LOCAL);
        if l < half {
            s.set(l, s.get(l) + s.get(l + half - 1));
        }
        half /= 2;
    }
    if l == 0 {
        out.set(wi.get_group_id(0), s.get(0));
    }
}

/// Only the even work-items write their element; after the barrier, each
/// reads its own: the odd ones read local memory nothing wrote.
#[kernel(groups)]
fn half_written(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let l = wi.get_local_id(0);
    let g = wi.get_global_id(0);
    let t = wi.local(tile);
    if l % 2 == 0 {
        t.set(l, 7);
    }
    wi.barrier(LOCAL);
    out.set(g, t.get(l));
}

/// After one barrier, work-item 0 reads element 5 in one branch while
/// the others write it in the other: the two branches share the interval.
#[kernel(groups)]
fn siblings(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let l = wi.get_local_id(0);
    let t = wi.local(tile);
    t.set(l, 1);
    wi.barrier(LOCAL);
    if l == 0 {
        out.set(wi.get_group_id(0), t.get(5));
    } else {
        t.set(5, l as u32);
    }
}

/// A `LOCAL` of the kernel's own that fences global memory: its barrier
/// orders no local access.
mod global_named_local {
    use clsync::sync::{Flags, GLOBAL};
    use clsync::{kernel, Buffer, LocalArg, WorkItem};

    const LOCAL: Flags<2> = GLOBAL;

    /// Each work-item writes its element, passes a barrier of global
    /// memory, and reads its neighbour's: a race in local memory.
    #[kernel(groups)]
    pub fn neighbours(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>) {
        let l = wi.get_local_id(0);
        let g = wi.get_global_id(0);
        let n = wi.get_local_size(0);
        let t = wi.local(tile);
        t.set(l, g as u32);
        wi.barrier(LOCAL);
        out.set(g, t.get((l + 1) % n));
    }
}

/// Each work-item writes the element at its local id of dimension 0 and
/// reads it back: in a group of one dimension, its own element.
#[kernel(groups)]
fn own_row(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let l = wi.get_local_id(0);
    let t = wi.local(tile);
    t.set(l, wi.get_global_linear_id() as u32);
    wi.barrier(LOCAL);
    out.set(wi.get_global_linear_id(), t.get(l));
}

/// Doubles `data` in place, each work-item its own element, and reads
/// `other` one element ahead.
#[kernel(groups)]
fn double_beside(wi: &WorkItem, data: &Buffer<u32>, other: &Buffer<u32>) {
    let g = wi.get_global_id(0);
    let v = data.get(g);
    data.set(g, 2 * v);
    let _ = other.get((g + 1) % other.len());
}

/// Asserts that the lifted run found a problem of `kind`, and the same
/// problems as the general engine.
fn same_problems(kind: ReportKind, (lifted, general): (Vec<Report>, Vec<Report>)) {
    assert!(lifted.iter().any(|r| r.kind == kind), "{lifted:?}");
    assert_eq!(problems(&lifted), problems(&general));
}

/// Runs `lifted` and the same kernel on the coroutine engine (`general`),
/// both over `launch` (checked); returns their reports.
fn both(
    lifted: impl FnOnce(&Runtime, &Launch) -> Vec<Report>,
    general: impl FnOnce(&Runtime, &Launch) -> Vec<Report>,
    launch: &Launch,
) -> (Vec<Report>, Vec<Report>) {
    let rt = common::rt();
    (lifted(&rt, launch), general(&rt, launch))
}

/// Runs a kernel with one local array of `tile` elements over `range`,
/// checked, lifted and on the coroutine engine (`general`), on the
/// buffers `make` makes; asserts [`same_problems`].
fn same_problems_with_tile<T: clsync::memory::Element, B: Sync + 'static>(
    kind: ReportKind,
    name: &'static str,
    range: NdRange,
    tile: usize,
    make: fn() -> B,
    lifted: Lifted<T, B>,
    general: fn(&WorkItem, &B, LocalArg<T>),
) {
    same_problems(
        kind,
        common::within(60, move || {
            let b = make();
            let mut launch = Launch::new(name, range).checked(true);
            let tile = launch.local::<T>(tile);
            both(
                |rt, l| reports_or_none(lifted(rt, l, &b, tile)),
                |rt, l| reports_or_none(rt.launch(l, |wi| general(wi, &b, tile))),
                &launch,
            )
        }),
    );
}

/// A lifted kernel's launch, as [`same_problems_with_tile`] calls it.
type Lifted<T, B> =
    fn(&Runtime, &Launch, &B, LocalArg<T>) -> Result<clsync::LaunchSummary, clsync::LaunchError>;

#[test]
fn a_scan_with_proofs_is_right_checked_and_unchecked_and_reports_nothing() {
    common::within(60, || {
        let n = 1000;
        let input: Vec<i32> = (0..n as i32).map(|i| i * 37 % 101 - 50).collect();
        let mut want = input.clone();
        for group in want.chunks_mut(64) {
            for i in 1..group.len() {
                group[i] = group[i].wrapping_add(group[i - 1]);
            }
        }
        for checked in [false, true] {
            let data = Buffer::from_slice(&input);
            let mut launch = Launch::new("scan", NdRange::new([n]).local([64])).checked(checked);
            let tile = launch.local::<i32>(64);
            scan_launch(&common::rt(), &launch, &data, tile)
                .unwrap_or_else(|e| panic!("checked: {checked}: {e}"));
            assert_eq!(data.to_vec(), want, "checked: {checked}");
        }
    });
}

#[test]
fn a_tree_reduction_with_proofs_is_right_checked_and_unchecked_and_reports_nothing() {
    common::within(60, || {
        let input: Vec<u32> = (0..1024u32).map(|i| i * 7 % 13).collect();
        let want: Vec<u32> = input.chunks(64).map(|c| c.iter().sum()).collect();
        for checked in [false, true] {
            let (data, out) = (Buffer::from_slice(&input), Buffer::<u32>::new(16));
            let mut launch =
                Launch::new("reduce", NdRange::new([1024]).local([64])).checked(checked);
            let tile = launch.local::<u32>(64);
            reduce_launch(&common::rt(), &launch, &data, &out, tile)
                .unwrap_or_else(|e| panic!("checked: {checked}: {e}"));
            assert_eq!(out.to_vec(), want, "checked: {checked}");
        }
    });
}

/// The skewed reads are not at `l + half`: they share the interval with
/// the writes below `half`, and race with them.
#[test]
fn a_skewed_tree_reduction_is_the_same_race_as_on_the_general_engine() {
    same_problems_with_tile(
        ReportKind::DataRace,
        "reduce",
        NdRange::new([256]).local([64]),
        64,
        || (Buffer::from_slice(&[1u32; 256]), Buffer::<u32>::new(4)),
        |rt, l, (data, out), t| reduce_skewed_launch(rt, l, data, out, t),
        |wi, (data, out), t| reduce_skewed(wi, data, out, t),
    );
}

#[test]
fn a_missing_barrier_is_the_same_race_as_on_the_general_engine() {
    same_problems_with_tile(
        ReportKind::DataRace,
        "scan_racy",
        NdRange::new([128]).local([32]),
        32,
        || Buffer::from_slice(&[1i32; 128]),
        scan_racy_launch,
        scan_racy,
    );
}

#[test]
fn a_read_and_a_write_in_two_branches_are_the_same_race_as_on_the_general_engine() {
    same_problems_with_tile(
        ReportKind::DataRace,
        "siblings",
        NdRange::new([64]).local([16]),
        16,
        || Buffer::<u32>::new(4),
        siblings_launch,
        siblings,
    );
}

#[test]
fn a_read_of_an_unwritten_element_in_an_interval_of_reads_is_reported() {
    same_problems_with_tile(
        ReportKind::UninitializedLocal,
        "half_written",
        NdRange::new([64]).local([16]),
        16,
        || Buffer::<u32>::new(64),
        half_written_launch,
        half_written,
    );
}

/// The macro takes a barrier spelled with `LOCAL` as a boundary; the group
/// checks the flags when it starts, and here they fence global memory
/// only, so nothing is taken at its word.
#[test]
fn a_constant_named_local_that_fences_global_memory_bounds_no_interval() {
    same_problems_with_tile(
        ReportKind::DataRace,
        "neighbours",
        NdRange::new([64]).local([16]),
        16,
        || Buffer::<u32>::new(64),
        global_named_local::neighbours_launch,
        global_named_local::neighbours,
    );
}

/// In a group of two dimensions, `get_local_id(0)` is the same for the
/// work-items of a column: they write one element, which the group
/// checks when it starts.
#[test]
fn a_local_id_of_dimension_0_is_no_owner_in_a_group_of_two() {
    same_problems_with_tile(
        ReportKind::DataRace,
        "own_row",
        NdRange::new([8, 4]).local([4, 2]),
        8,
        || Buffer::<u32>::new(32),
        own_row_launch,
        own_row,
    );
}

/// `data` is owned (every access at the global id); passed as `other` too,
/// it overlaps another parameter, so nothing is taken at its word and the
/// neighbour's read races with the write. In a launch of two dimensions,
/// the global id of dimension 0 is no owner either.
#[test]
fn an_owned_buffer_passed_twice_or_in_two_dimensions_still_races() {
    for (global, local, twice) in [([64, 1], [16, 1], true), ([16, 4], [4, 2], false)] {
        same_problems(
            ReportKind::DataRace,
            common::within(60, move || {
                let data = Buffer::from_slice(&[3u32; 64]);
                let spare = Buffer::from_slice(&[3u32; 64]);
                let other = if twice { &data } else { &spare };
                let launch =
                    Launch::new("double_beside", NdRange::new(global).local(local)).checked(true);
                both(
                    |rt, l| reports_or_none(double_beside_launch(rt, l, &data, other)),
                    |rt, l| reports_or_none(rt.launch(l, |wi| double_beside(wi, &data, other))),
                    &launch,
                )
            }),
        );
    }
}

/// An owned buffer apart from every other parameter: right checked and
/// unchecked, and nothing to report.
#[test]
fn an_owned_buffer_is_doubled_right_checked_and_unchecked() {
    common::within(60, || {
        let spare = Buffer::from_slice(&[1u32; 8]);
        for checked in [false, true] {
            let data = Buffer::from_slice(&(0..100u32).collect::<Vec<_>>());
            let launch =
                Launch::new("double_beside", NdRange::new([100]).local([25])).checked(checked);
            double_beside_launch(&common::rt(), &launch, &data, &spare)
                .unwrap_or_else(|e| panic!("checked: {checked}: {e}"));
            assert_eq!(
                data.to_vec(),
                (0..100u32).map(|i| 2 * i).collect::<Vec<_>>()
            );
        }
    });
}

/// `Group::trust_race_free` decides whether a checked launch takes the
/// claims at their word: a false claim (every work-item writes element 0,
/// each claiming it races with nothing) hides the race only where the
/// group trusts it, and a launch that runs on from divergences never does.
#[test]
fn a_false_claim_hides_a_race_only_where_the_group_trusts_it() {
    for (trust, run_on) in [(false, false), (true, false), (true, true)] {
        let reports = common::within(60, move || {
            let mut launch = Launch::new("claims", NdRange::new([16]).local([16])).checked(true);
            if run_on {
                launch = launch.run_on_divergence(true);
            }
            let tile = launch.local::<u32>(16);
            Runtime::with_threads(1)
                .check_groups(&launch, |g| {
                    g.trust_race_free(trust);
                    let t = g.local(tile);
                    g.for_each(move |it| t.set_race_free(it.local_linear_id, 1));
                    g.barrier(LOCAL);
                    g.for_each(move |it| t.set_race_free(0, it.local_linear_id as u32));
                })
                .unwrap()
        });
        if trust && !run_on {
            assert!(reports.is_empty(), "{reports:?}");
        } else {
            assert_eq!(
                reports.len(),
                1,
                "trust {trust}, run on {run_on}: {reports:?}"
            );
            assert_eq!(reports[0].kind, ReportKind::DataRace);
        }
    }
}
