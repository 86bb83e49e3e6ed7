//! `#[kernel]`'s quiet atomics: a local array of atomics whose every use is
//! a relaxed operation of group-wide scope, in a kernel with no fence, is
//! reached through `LocalView::at_quiet`, whose operations a checked launch
//! performs without the checker once the element holds a write.
//!
//! As in `kernel_macro_race_free.rs`, the reference is the same kernel run
//! checked on the coroutine engine, which makes no proof.

mod common;

use clsync::checker::ReportKind;
use clsync::sync::{Relaxed, SubGroupScope, WorkGroupScope, LOCAL};
use clsync::{kernel, AtomicUint, Buffer, Launch, LocalArg, NdRange, Runtime, WorkItem};
use common::check::{problems, reports_or_none};

/// A histogram of `bytes` into 16 bins (of the low four bits) per group,
/// added to `out`; `zeroed` says whether the bins are zeroed first.
#[kernel(groups)]
fn histogram(
    wi: &WorkItem,
    bytes: &Buffer<u8>,
    out: &Buffer<AtomicUint>,
    bins: LocalArg<AtomicUint>,
    zeroed: bool,
) {
    let l = wi.get_local_id(0);
    let b = wi.local(bins);
    if zeroed && l < 16 {
        b.at(l).store_explicit_scope(0, Relaxed, WorkGroupScope);
    }
    wi.barrier(LOCAL);
    let v = bytes.get(wi.get_global_id(0)) as usize % 16;
    b.at(v).fetch_add_explicit_scope(1, Relaxed, WorkGroupScope);
    wi.barrier(LOCAL);
    if l < 16 {
        let c = b.at(l).load_explicit_scope(Relaxed, WorkGroupScope);
        out.at(l).fetch_add_explicit(c, Relaxed);
    }
}

/// [`histogram`] with the counts made at sub-group scope: work-items of
/// different sub-groups count into one bin with scopes that do not
/// include each other.
#[kernel(groups)]
fn histogram_sub_group(wi: &WorkItem, bytes: &Buffer<u8>, bins: LocalArg<AtomicUint>) {
    let l = wi.get_local_id(0);
    let b = wi.local(bins);
    if l < 16 {
        b.at(l).store_explicit_scope(0, Relaxed, WorkGroupScope);
    }
    wi.barrier(LOCAL);
    let v = bytes.get(wi.get_global_id(0)) as usize % 16;
    b.at(v).fetch_add_explicit_scope(1, Relaxed, SubGroupScope);
}

#[test]
fn a_histogram_with_quiet_bins_is_right_checked_and_unchecked_and_reports_nothing() {
    common::within(60, || {
        let bytes: Vec<u8> = (0..1024u32).map(|i| (i * 37 % 251) as u8).collect();
        let mut want = [0u32; 16];
        bytes.iter().for_each(|b| want[*b as usize % 16] += 1);
        let data = Buffer::from_slice(&bytes);
        for checked in [false, true] {
            let out = Buffer::<AtomicUint>::new(16);
            let mut launch = Launch::new("histogram", NdRange::new([1024]).local([64]));
            launch = launch.checked(checked);
            let bins = launch.local::<AtomicUint>(16);
            histogram_launch(&common::rt(), &launch, &data, &out, bins, true)
                .unwrap_or_else(|e| panic!("checked: {checked}: {e}"));
            let got: Vec<u32> = (0..16).map(|i| out.at(i).load()).collect();
            assert_eq!(got, want, "checked: {checked}");
        }
    });
}

/// Bins never zeroed: each count reads local memory nothing wrote, which
/// a quiet atomic leaves to the checker.
#[test]
fn counting_into_bins_nothing_wrote_is_the_same_report_as_on_the_general_engine() {
    let (lifted, general) = common::within(60, || {
        let data = Buffer::from_slice(&[5u8; 128]);
        let out = Buffer::<AtomicUint>::new(16);
        let mut launch = Launch::new("histogram", NdRange::new([128]).local([64])).checked(true);
        let bins = launch.local::<AtomicUint>(16);
        let rt = common::rt();
        (
            reports_or_none(histogram_launch(&rt, &launch, &data, &out, bins, false)),
            reports_or_none(rt.launch(&launch, |wi| histogram(wi, &data, &out, bins, false))),
        )
    });
    assert!(
        lifted
            .iter()
            .any(|r| r.kind == ReportKind::UninitializedLocal),
        "{lifted:?}"
    );
    assert_eq!(problems(&lifted), problems(&general));
}

/// One count at sub-group scope makes none of the array's atomics quiet:
/// the scopes that do not include each other are found.
#[test]
fn a_count_at_sub_group_scope_is_the_same_report_as_on_the_general_engine() {
    let (lifted, general) = common::within(60, || {
        let data = Buffer::from_slice(&[5u8; 64]);
        let mut launch = Launch::new(
            "histogram_sub_group",
            NdRange::new([64]).local([64]).sub_group_size(16),
        )
        .checked(true);
        let bins = launch.local::<AtomicUint>(16);
        let rt = common::rt();
        (
            reports_or_none(histogram_sub_group_launch(&rt, &launch, &data, bins)),
            reports_or_none(rt.launch(&launch, |wi| histogram_sub_group(wi, &data, bins))),
        )
    });
    assert!(
        lifted.iter().any(|r| r.kind == ReportKind::ScopeTooNarrow),
        "{lifted:?}"
    );
    assert_eq!(problems(&lifted), problems(&general));
}

/// `at_quiet` takes its caller's word where the group trusts proofs: quiet
/// counts are not remembered, so a count at sub-group scope through `at`
/// after them finds nothing to conflict with; untrusted, it finds them.
#[test]
fn quiet_counts_are_not_remembered_only_where_the_group_trusts_them() {
    for trust in [false, true] {
        let reports = common::within(60, move || {
            let mut launch =
                Launch::new("word", NdRange::new([32]).local([32]).sub_group_size(8)).checked(true);
            let bins = launch.local::<AtomicUint>(1);
            Runtime::with_threads(1)
                .check_groups(&launch, |g| {
                    g.trust_race_free(trust);
                    let b = g.local(bins);
                    g.for_each(move |it| {
                        if it.local_linear_id == 0 {
                            b.at(0).store_explicit_scope(0, Relaxed, WorkGroupScope);
                        }
                    });
                    g.barrier(LOCAL);
                    g.for_each(move |_| {
                        b.at_quiet(0)
                            .fetch_add_explicit_scope(1, Relaxed, WorkGroupScope);
                    });
                    g.for_each(move |it| {
                        if it.local_linear_id == 31 {
                            b.at(0).fetch_add_explicit_scope(1, Relaxed, SubGroupScope);
                        }
                    });
                })
                .unwrap()
        });
        if trust {
            assert!(reports.is_empty(), "{reports:?}");
        } else {
            assert!(
                reports.iter().any(|r| r.kind == ReportKind::ScopeTooNarrow),
                "{reports:?}"
            );
        }
    }
}
