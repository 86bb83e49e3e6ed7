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

/// A litmus thread that never ends, with an atomic spin or with no memory
/// access at all, is a stall the watchdog reports at the loop's line (the
/// interpreter's back-edge is a cancellation point), and the runs stop
/// there instead of paying the watchdog again for each.
#[test]
fn a_litmus_loop_that_never_ends_stops_the_runs_at_its_line() {
    for body in ["while (atomic_load(x) == 0) { }", "while (1) { }"] {
        let src = format!(
            "OPENCL spin\n{{ [x]=0; }}\n\
             P0@wg 0, dev 0 (global atomic_int* x) {{\n  {body}\n}}\nexists (x=1)\n"
        );
        // On a thread of its own: a loop the watchdog cannot end would hang
        // the test, and this fails it instead.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let test = clsync_explorer::syntax::parse(&src).expect("parses");
            let model = explore(&test, &Options::default()).expect("explores");
            let _ = tx.send(run(&test, &model, &Runtime::with_threads(2), 3));
        });
        let r = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("{body}: the runs did not end"))
            .expect("runs");
        assert_eq!((r.runs, r.skipped), (1, 2), "{body}");
        assert_eq!(r.failures.len(), 1, "{body}");
        assert!(r.failures[0].contains("stuck"), "{}", r.failures[0]);
        // The loop (4:3) or the load in its condition (4:10), whichever
        // polled last when the cancel came.
        assert!(
            r.failures[0].contains("last at spin:4:"),
            "{}",
            r.failures[0]
        );
    }
}
