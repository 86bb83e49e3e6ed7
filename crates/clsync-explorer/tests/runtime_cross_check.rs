//! `clsync litmus --run`: every test of `shared/litmus` runs on the clsync
//! runtime, its threads as work-items, and no outcome the runtime shows in
//! a race-free test is one the model forbids.

use std::path::Path;

use clsync::Runtime;
use clsync_explorer::expect::collect;
use clsync_explorer::run::{run, RunError};
use clsync_explorer::{explore, load, Options};

#[test]
fn runtime_shows_only_allowed_outcomes_on_the_whole_folder() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/litmus");
    let files = collect(&[dir]).expect("litmus folder");
    assert!(files.len() >= 150, "only {} litmus files", files.len());
    let rt = Runtime::with_threads(2);
    let (mut ran, mut problems) = (0, Vec::new());
    for f in &files {
        let (test, _) = load(f).expect("parses");
        let model = explore(&test, &Options::default()).expect("explores");
        match run(&test, &model, &rt, 3) {
            Ok(r) => {
                ran += 1;
                if r.unsound() {
                    problems.push(format!(
                        "{}: forbidden outcomes {:?}",
                        f.display(),
                        r.forbidden
                    ));
                }
                if !r.failures.is_empty() {
                    problems.push(format!("{}: {}", f.display(), r.failures.join("; ")));
                }
            }
            // Tests whose local memory spans work-groups have no runtime
            // equivalent; they are reported, not run.
            Err(RunError::Unsupported(why)) => {
                assert!(why.contains("local location"), "{}: {why}", f.display())
            }
        }
    }
    assert!(ran >= 140, "only {ran} tests ran");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
