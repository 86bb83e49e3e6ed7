//! The checker agrees with the memory model on which herd litmus tests have
//! a data race: every test of `shared/litmus/herd` listed in
//! `race-free-expected.csv` runs as a kernel (its threads as work-items) on
//! a checking runtime, and the checker reports a race exactly when the
//! expectation file says the test is not race-free.
//!
//! The checker judges the executions it sees, and a race that only some
//! executions have (one where a flag was read before it was set) needs the
//! work-items to run in the order that makes it. So each test runs on two
//! workers a number of times, and on one worker under shuffled schedules,
//! which run its work-groups one after another in varying orders. A
//! race-free test must stay clean in every run.

use std::path::Path;

use clsync::{Runtime, Schedule};
use clsync_explorer::run::{run_scheduled, RunError};
use clsync_explorer::{explore, load, Options};

const RUNS: usize = 20;

#[test]
fn checker_race_verdicts_match_race_free_expected_csv() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/litmus");
    let csv = std::fs::read_to_string(root.join("race-free-expected.csv")).expect("csv");
    let parallel = Runtime::with_threads(2).with_checking(true);
    let serial = Runtime::with_threads(1).with_checking(true);
    let shuffled: Vec<Schedule> = (0..RUNS as u64).map(Schedule::Shuffled).collect();
    let in_order = vec![Schedule::InOrder; RUNS];
    let (mut compared, mut unsupported, mut problems) = (0, Vec::new(), Vec::new());
    for line in csv.lines().filter(|l| !l.trim().is_empty()) {
        let (name, free) = line.split_once(',').expect("name,0|1");
        let race_free = free.trim() == "1";
        let (test, _) = load(&root.join(name)).expect("parses");
        let model = explore(&test, &Options::default()).expect("explores");
        assert_eq!(model.race.is_none(), race_free, "{name}: the model itself");
        let runs = [(&parallel, &in_order), (&serial, &shuffled)]
            .map(|(rt, schedules)| run_scheduled(&test, &model, rt, schedules));
        let reports = match runs {
            [Ok(a), Ok(b)] => [a, b],
            [Err(RunError::Unsupported(why)), _] | [_, Err(RunError::Unsupported(why))] => {
                unsupported.push(format!("{name}: {why}"));
                continue;
            }
        };
        compared += 1;
        let races: Vec<&String> = reports
            .iter()
            .inspect(|r| assert!(r.failures.is_empty(), "{name}: {:?}", r.failures))
            .flat_map(|r| &r.checker_reports)
            .filter(|r| {
                r.starts_with("data race")
                    || r.starts_with("atomic and non-atomic")
                    || r.starts_with("atomic scope too narrow")
            })
            .collect();
        if race_free != races.is_empty() {
            problems.push(format!(
                "{name}: expected race-free = {race_free}, checker reported {races:#?}"
            ));
        }
    }
    eprintln!("compared {compared} tests; not runnable as kernels: {unsupported:?}");
    // 18 of the 23: the other five share local memory across work-groups.
    assert!(compared >= 18, "only {compared} tests compared");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
