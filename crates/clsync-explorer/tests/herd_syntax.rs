//! herd's OpenCL syntaxes (`shared/reference/herd-opencl`), and clear
//! errors for what is not OpenCL.

use std::path::Path;

use clsync_explorer::expect::collect;
use clsync_explorer::{explore_file, Options};

fn herd(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/reference/herd-opencl")
        .join(rel)
}

/// The herd tests that are well-formed OpenCL explore; the rest fail with
/// an error naming line and column.
#[test]
fn every_herd_file_explores_or_names_its_problem() {
    let files = collect(&[herd("")]).expect("herd folder");
    assert!(files.len() >= 30);
    let mut explored = 0;
    for f in &files {
        match explore_file(f, &Options::default()) {
            Ok(_) => explored += 1,
            Err(e) => {
                let msg = e.to_string();
                assert!(
                    msg.contains("remote-scope promotion")
                        || msg.contains("not an OpenCL litmus test")
                        || msg.contains("is not a parameter of this thread"),
                    "{msg}"
                );
                assert!(msg.contains(':'), "{msg}");
            }
        }
    }
    assert!(explored >= 18, "only {explored} herd files explored");
}

/// The column syntax: MP with release/acquire at work-group scope between
/// two work-groups does not synchronize (scopes are not inclusive), so the
/// stale read is allowed; herd's own 2+2W is forbidden.
#[test]
fn herd_verdicts_on_known_shapes() {
    let relacq = explore_file(
        &herd("herdtools7-c0ec933e8f47b12b2e60186a4ee71a7d78c130f2/herd/testsuite/oldOpenCLTests/MP_relacq.litmus"),
        &Options::default(),
    )
    .expect("column syntax explores");
    assert!(relacq.reachable);
    let files = collect(&[herd(
        "herdtools7-c0ec933e8f47b12b2e60186a4ee71a7d78c130f2/herd/testsuite/OpenCLTests/2+2W",
    )])
    .unwrap();
    let w = explore_file(&files[0], &Options::default()).unwrap();
    assert!(!w.reachable);
}

#[test]
fn malformed_files_get_line_and_column() {
    let e = clsync_explorer::syntax::parse(
        "OPENCL T\n{ [x]=0; }\nP0@wg 0, dev 0 (global int* x) {\n  *x = 1\n}\n",
    )
    .unwrap_err();
    assert_eq!(e.span.line, 5);
    assert!(e.message.contains("expected `;`"), "{}", e.message);
    let e = clsync_explorer::syntax::parse("X86 T\n{}\n").unwrap_err();
    assert!(e.message.contains("not an OpenCL litmus test"));
}
