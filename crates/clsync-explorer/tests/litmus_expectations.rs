//! The explorer against the expectations shipped with the litmus tests
//! (`shared/litmus/expected.csv` and `race-free-expected.csv`, produced by
//! Dat3M from `opencl.cat`), read at test time from `../shared/litmus`.

use std::path::{Path, PathBuf};

use clsync_explorer::expect::{normalize, read_expectations, read_list};
use clsync_explorer::{explore_file, Options};
use rayon::prelude::*;

fn litmus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/litmus")
}

fn check(csv: &str, pick: fn(&clsync_explorer::Exploration) -> bool) {
    let dir = litmus_dir();
    let expected = read_expectations(&dir.join(csv)).expect("expectation file");
    let skip: Vec<PathBuf> = read_list(&dir.join("skip.csv"))
        .expect("skip.csv")
        .iter()
        .map(|p| normalize(p))
        .collect();
    let rows: Vec<(PathBuf, bool)> = expected
        .into_iter()
        .filter(|(p, _)| !skip.contains(&normalize(p)))
        .collect();
    assert!(rows.len() >= 20, "{csv} has only {} rows", rows.len());
    let mismatches: Vec<String> = rows
        .par_iter()
        .filter_map(
            |(path, want)| match explore_file(path, &Options::default()) {
                Ok(r) if pick(&r) == *want => None,
                Ok(r) => Some(format!(
                    "{}: expected {}, got {}\n{r}",
                    path.display(),
                    *want as u8,
                    pick(&r) as u8
                )),
                Err(e) => Some(format!("{e}")),
            },
        )
        .collect();
    assert!(
        mismatches.is_empty(),
        "{} of {} rows of {csv} disagree:\n{}",
        mismatches.len(),
        rows.len(),
        mismatches.join("\n")
    );
}

/// Every reachable/unreachable verdict of `expected.csv` but the skipped one.
#[test]
fn reachability_matches_expected_csv() {
    check("expected.csv", |r| r.reachable);
}

/// Every race verdict of `race-free-expected.csv`.
#[test]
fn race_verdicts_match_race_free_expected_csv() {
    check("race-free-expected.csv", |r| r.race.is_none());
}
