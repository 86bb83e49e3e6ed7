//! Every sample kernel, at a small size, matches its sequential reference,
//! on one worker thread and on several.

use clsync::Runtime;
use clsync_samples::{all, Size};

#[test]
fn every_sample_verifies() {
    for threads in [1, 2, 3] {
        let rt = Runtime::with_threads(threads);
        for sample in all() {
            let report = sample
                .run(&rt, Size::Small)
                .unwrap_or_else(|e| panic!("{}: {e}", sample.name()));
            assert_eq!(
                report.verified,
                Ok(()),
                "{} on {threads} thread(s)",
                sample.name()
            );
            assert!(report.throughput.0 > 0.0);
        }
    }
}

#[test]
fn the_samples_are_the_five_the_readme_names() {
    let names: Vec<_> = all().iter().map(|s| s.name()).collect();
    assert_eq!(
        names,
        [
            "reduce",
            "scan",
            "histogram",
            "sub-group reverse",
            "host message passing"
        ]
    );
}

/// The samples are correct kernels: checked, they verify and the checker
/// finds nothing (a finding would fail the launch with its reports).
#[test]
fn every_sample_is_clean_under_the_checker() {
    let rt = Runtime::with_threads(2).with_checking(true);
    for sample in all() {
        let report = sample
            .run(&rt, Size::Small)
            .unwrap_or_else(|e| panic!("{}: {e}", sample.name()));
        assert_eq!(report.verified, Ok(()), "{} checked", sample.name());
    }
}
