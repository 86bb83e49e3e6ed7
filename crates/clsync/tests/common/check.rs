//! Helpers for the checker's tests: run a kernel checked, with a time limit,
//! and compare its reports with markers in the test's own source.
//!
//! A line of kernel code that a report must point at carries a trailing
//! comment `//~ NAME` (the access that found the problem) or
//! `//~ NAME.first` (the earlier access of the pair), in the style of
//! compiletest's error annotations. `expect` looks the lines up in the
//! source text, so the expectations cannot drift from the code.

use clsync::checker::{Report, ReportKind};
use clsync::{Launch, LaunchError, WorkItem};

/// Runs `kernel` checked on a two-worker runtime, within 60 s.
pub fn check<F>(launch: Launch, kernel: F) -> Vec<Report>
where
    F: Fn(&WorkItem<'_>) + Sync + Send + 'static,
{
    super::within(60, move || {
        let reports = super::rt()
            .check(&launch, kernel)
            .unwrap_or_else(|e| panic!("checked launch failed instead of reporting: {e}"));
        for r in &reports {
            eprintln!("{r}");
        }
        reports
    })
}

/// The line of `source` that carries the marker `//~ name`.
pub fn line_of(source: &str, name: &str) -> Option<u32> {
    let tag = format!("//~ {name}");
    source
        .lines()
        .position(|l| {
            l.split_once("//~ ")
                .is_some_and(|(_, rest)| format!("//~ {}", rest.trim()) == tag)
        })
        .map(|i| i as u32 + 1)
}

/// Asserts that `reports` are exactly the expected findings: for each
/// `(kind, name)`, one report of that kind at the line marked `name` (and,
/// when the source marks `name.first`, with its first access there).
pub fn expect(source: &str, reports: &[Report], expected: &[(ReportKind, &str)]) {
    for &(kind, name) in expected {
        let line = line_of(source, name).unwrap_or_else(|| panic!("no marker //~ {name}"));
        let first = line_of(source, &format!("{name}.first"));
        let found = reports.iter().any(|r| {
            let other = r.first.as_ref().map(|a| a.site.line);
            let pair = match first {
                // A race is one report whichever access the checker met
                // second: the two marked lines, in either order.
                Some(f) if other.is_some() => {
                    (r.site.line == line && other == Some(f))
                        || (r.site.line == f && other == Some(line))
                }
                _ => r.site.line == line,
            };
            r.kind == kind && r.site.file.ends_with(".rs") && pair
        });
        assert!(
            found,
            "expected {kind:?} at line {line} (first access at {first:?}) for `{name}`; got:\n{}",
            show(reports)
        );
    }
    for r in reports {
        assert!(
            expected.iter().any(|&(kind, name)| {
                let lines = [
                    line_of(source, name),
                    line_of(source, &format!("{name}.first")),
                ];
                r.kind == kind && lines.contains(&Some(r.site.line))
            }),
            "unexpected report:\n{r}\nexpected only {expected:?}"
        );
    }
}

/// Asserts that there are no reports.
pub fn expect_none(reports: &[Report]) {
    assert!(
        reports.is_empty(),
        "expected no reports; got:\n{}",
        show(reports)
    );
}

fn show(reports: &[Report]) -> String {
    reports
        .iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Asserts that there are reports and that each is an out-of-bounds access
/// at the line marked `marker` by the work-item with local linear id `item`.
pub fn out_of_bounds_at(reports: &[Report], source: &str, marker: &str, item: usize) {
    assert!(!reports.is_empty());
    for r in reports {
        assert_eq!(r.kind, ReportKind::OutOfBounds, "{r}");
        assert_eq!(Some(r.site.line), line_of(source, marker));
        let second = r.second.as_ref().expect("the access");
        assert_eq!(second.item.local_linear_id, item, "{r}");
    }
}

/// The reports a checked launch failed with (`Launch::checked(true)`).
pub fn reports_of(e: LaunchError) -> Vec<Report> {
    match e {
        LaunchError::Reported(r) => r.reports,
        e => panic!("expected reports, got {e}"),
    }
}

/// The reports of a checked launch (none where it succeeded).
pub fn reports_or_none(result: Result<clsync::LaunchSummary, LaunchError>) -> Vec<Report> {
    match result {
        Ok(_) => Vec::new(),
        Err(e) => reports_of(e),
    }
}

/// The problems of a report list, each once: kind, memory and the
/// unordered pair of lines (for comparing two engines' reports, whose
/// counts and work-items may differ).
pub fn problems(reports: &[Report]) -> std::collections::BTreeSet<(ReportKind, String, u32, u32)> {
    reports
        .iter()
        .map(|r| {
            let first = r.first.as_ref().map_or(0, |a| a.site.line);
            let (a, b) = (first.min(r.site.line), first.max(r.site.line));
            let memory = r.memory.as_ref().map_or(String::new(), |m| m.name.clone());
            (r.kind, memory, a, b)
        })
        .collect()
}
