//! The `clsync` command as a user runs it: exit codes, what goes to stdout
//! and stderr, and errors that name what is wrong.
//!
//! Exit codes: 0 all well; 1 a mismatch with an expectation file, a sample
//! that does not verify, or a runtime outcome the model forbids; 2 bad
//! input (arguments, files).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn clsync(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clsync"))
        .args(args)
        .output()
        .expect("the clsync binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn litmus(rel: &str) -> String {
    let p: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/litmus")
        .join(rel);
    p.to_string_lossy().into_owned()
}

/// A scratch file with `contents`, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, contents: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("clsync-cli-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        let path = dir.join(name);
        std::fs::write(&path, contents).expect("a scratch file");
        Scratch(path)
    }
    fn path(&self) -> &str {
        self.0.to_str().expect("a UTF-8 path")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn every_sample_runs_and_verifies_at_the_small_size() {
    let out = clsync(&["samples", "--size", "small", "--threads", "2"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let rows: Vec<&str> = stdout
        .lines()
        .skip(2)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(rows.len(), 5, "{stdout}");
    assert!(rows.iter().all(|r| r.ends_with("yes")), "{stdout}");
    // Then the same workloads' OpenCL C source, compiled by clsync: six
    // rows, each verified against its reference.
    let cl: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("OpenCL C"))
        .skip(1)
        .collect();
    assert_eq!(cl.len(), 6, "{stdout}");
    assert!(cl.iter().all(|r| r.ends_with("yes")), "{stdout}");
}

#[test]
fn an_unknown_sample_is_refused_with_the_list_of_names() {
    let out = clsync(&["samples", "--only", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("`nope`"), "{stderr}");
    assert!(stderr.contains("reduce, scan, histogram"), "{stderr}");
}

#[test]
fn counts_of_zero_are_refused_naming_the_option() {
    for args in [
        &["samples", "--threads", "0"][..],
        &["litmus", "--run", "0", "x.litmus"],
        &["litmus", "--run", "1", "--threads", "0", "x.litmus"],
    ] {
        let out = clsync(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(stderr.contains("must be at least 1"), "{args:?}: {stderr}");
        assert!(stderr.contains(args[args.len() - 2]), "{args:?}: {stderr}");
    }
}

#[test]
fn litmus_threads_without_run_is_refused() {
    let out = clsync(&["litmus", "--threads", "2", &litmus("herd/MP.litmus")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--run"), "{}", text(&out.stderr));
}

#[test]
fn a_litmus_test_is_explored_and_agrees_with_its_expectation() {
    let out = clsync(&[
        "litmus",
        &litmus("herd/MP.litmus"),
        "--expect",
        &litmus("expected.csv"),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("1 test(s) explored") && stdout.contains("0 mismatch(es)"),
        "{stdout}"
    );
}

#[test]
fn a_mismatch_with_the_expectations_fails_with_code_1() {
    // The same test, expected the other way round.
    let mp = litmus("herd/MP.litmus");
    let real = std::fs::read_to_string(litmus("expected.csv")).expect("expected.csv");
    let bit = real
        .lines()
        .find_map(|l| l.strip_prefix("herd/MP.litmus,"))
        .expect("MP has an expectation");
    let flipped = if bit.trim() == "1" { "0" } else { "1" };
    let csv = Scratch::new("flipped.csv", &format!("{mp},{flipped}\n"));
    let out = clsync(&["litmus", &mp, "--expect", csv.path()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("MISMATCH"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn bad_litmus_input_names_the_file_and_place() {
    let bad = Scratch::new(
        "bad.litmus",
        "OPENCL bad\n{ [x]=0; }\nP0@wg 0, dev 0 (global atomic_int* x) {\n  atomic_store(x, );\n}\n",
    );
    let out = clsync(&["litmus", bad.path()]);
    assert_eq!(out.status.code(), Some(2));
    let all = text(&out.stdout) + &text(&out.stderr);
    assert!(all.contains(&format!("{}:4:", bad.path())), "{all}");

    let out = clsync(&["litmus", "no/such/folder"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no/such/folder"),
        "{}",
        text(&out.stderr)
    );

    let csv = Scratch::new("bad.csv", "herd/MP.litmus,maybe\n");
    let out = clsync(&["litmus", &litmus("herd/MP.litmus"), "--expect", csv.path()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains(&format!("{}:1:", csv.path())), "{stderr}");
}

#[test]
fn litmus_json_is_json_with_the_verdict_and_the_runs() {
    let out = clsync(&["litmus", "--json", "--run", "2", &litmus("herd/MP.litmus")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let test = &doc["tests"][0];
    assert!(test["verdict"].is_string(), "{doc}");
    assert_eq!(test["run"]["runs"], 2, "{doc}");
    assert_eq!(doc["unsound"], 0, "{doc}");
}

/// A `.sim` file and the `.cl` file it names beside it, removed when
/// dropped.
struct SimPair {
    _cl: Scratch,
    sim: Scratch,
}

fn sim_pair(name: &str, cl: &str, sim: &str) -> SimPair {
    SimPair {
        _cl: Scratch::new(&format!("{name}.cl"), cl),
        sim: Scratch::new(&format!("{name}.sim"), sim),
    }
}

#[test]
fn run_dumps_a_sim_files_buffers_in_oclgrinds_format() {
    let p = sim_pair(
        "twice",
        "kernel void twice(global int *x) { x[get_global_id(0)] *= 2; }\n",
        "twice.cl\ntwice\n4 1 1\n2 1 1\n<size=16 range=1:1:4 dump>\n",
    );
    let out = clsync(&["run", "--check", p.sim.path()]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("Argument 'x': 16 bytes\n  x[0] = 2\n  x[1] = 4\n  x[2] = 6\n  x[3] = 8\n"),
        "{stdout}"
    );
}

#[test]
fn run_reports_an_invalid_write_with_oclgrinds_headline_and_the_line() {
    let p = sim_pair(
        "oob",
        "kernel void oob(global int *x) {\n  x[get_global_id(0) + 1] = 1;\n}\n",
        "oob.cl\noob\n4 1 1\n4 1 1\n<size=16 fill=0 dump>\n",
    );
    let out = clsync(&["run", "--check", p.sim.path()]);
    let stderr = text(&out.stderr);
    // As oclgrind-kernel: diagnostics leave the exit status 0 ...
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("error: Invalid write of size 4 at global memory"),
        "{stderr}"
    );
    assert!(stderr.contains("oob.cl:2"), "{stderr}");
    assert!(stderr.contains("Global(3,0,0)"), "{stderr}");
    // ... unless asked otherwise.
    let out = clsync(&["run", "--check", "--error-exitcode", "3", p.sim.path()]);
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn run_check_checks_the_program_as_written_not_as_optimized() {
    // clang -O2 folds the loop, reads of `s.a[4]` and `s.a[5]` included,
    // to a constant: only the unoptimized build that --check makes keeps
    // the indexes to report.
    let p = sim_pair(
        "folded",
        "struct S { int a[4]; int b[4]; };\nkernel void folded(global int *out) {\n  struct S s = {{1, 2, 3, 4}, {5, 6, 7, 8}};\n  int x = 0;\n  for (int i = 0; i < 6; i++) x += s.a[i];\n  out[0] = x;\n}\n",
        "folded.cl\nfolded\n1 1 1\n1 1 1\n<size=4 fill=0 dump>\n",
    );
    let out = clsync(&["run", "--check", p.sim.path()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("error: Index exceeds static array size (4 elements)"),
        "{stderr}"
    );
    assert!(stderr.contains("folded.cl:5"), "{stderr}");
    assert!(stdout.contains("out[0] = 21"), "{stdout}");
    let out = clsync(&["run", p.sim.path()]);
    assert!(text(&out.stderr).is_empty(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("out[0] = 21"));
}

#[test]
fn a_plain_write_against_atomics_is_one_race_of_both_kinds() {
    // Work-item 0 writes before its group's barrier; the other group's
    // atomic increments read and write the same int unordered with it.
    let p = sim_pair(
        "intergroup",
        "kernel void intergroup(global int *data) {\n  if (get_global_id(0) == 0) *data = 0;\n  barrier(CLK_GLOBAL_MEM_FENCE);\n  atomic_inc(data);\n}\n",
        "intergroup.cl\nintergroup\n8 1 1\n4 1 1\n<size=4 fill=-1 dump>\n",
    );
    let out = clsync(&["run", "--check", p.sim.path()]);
    let stderr = text(&out.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].starts_with("error: Read-write data race at global memory address `data`[0]"),
        "{stderr}"
    );
    assert!(
        stderr.contains("\n\tWrite-write data race at global memory address `data`[0] as well"),
        "{stderr}"
    );
    assert!(stderr.contains("intergroup.cl:2"), "{stderr}");
    assert!(stderr.contains("intergroup.cl:4"), "{stderr}");
    // Groups run at once: the reset may come after some increments.
    assert!(text(&out.stdout).contains("data[0] = "));
}

#[test]
fn run_names_the_sim_line_that_does_not_parse() {
    let p = sim_pair(
        "bad",
        "kernel void bad(global int *x) {}\n",
        "bad.cl\nbad\n4 1 1\n4 1 1\n<size=16 fil=0>\n",
    );
    let out = clsync(&["run", p.sim.path()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("bad.sim:5:") && stderr.contains("unknown option `fil=0`"),
        "{stderr}"
    );
}

#[test]
fn run_refuses_a_range_that_does_not_fill_its_buffer() {
    let p = sim_pair(
        "short",
        "kernel void short_range(global int *x) {}\n",
        "short.cl\nshort_range\n4 1 1\n4 1 1\n<size=16 range=0:1:2>\n",
    );
    let out = clsync(&["run", p.sim.path()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("short.sim:5:")
            && stderr.contains("range=0:1:2 gives 3 values; the buffer holds 4"),
        "{stderr}"
    );
}

#[test]
fn run_shows_a_build_error_as_clang_printed_it() {
    let p = sim_pair(
        "broken",
        "kernel void broken(global int *x) { x[0] = nope; }\n",
        "broken.cl\nbroken\n1 1 1\n1 1 1\n<size=4 fill=0>\n",
    );
    let out = clsync(&["run", p.sim.path()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("broken.cl:1:") && stderr.contains("nope"),
        "{stderr}"
    );
}

#[test]
fn run_takes_a_cl_file_with_the_range_and_arguments_on_the_command_line() {
    let cl = Scratch::new("sq.cl", "kernel void sq(global float *x, float k) { size_t i = get_global_id(0); x[i] = x[i] * x[i] + k; }\n");
    let out = clsync(&[
        "run",
        cl.path(),
        "--kernel",
        "sq",
        "--global",
        "3",
        "--arg",
        "<size=12 range=1:1:3 dump>",
        "--arg",
        "0.5",
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("  x[0] = 1.5\n  x[1] = 4.5\n  x[2] = 9.5\n"),
        "{stdout}"
    );
    let out = clsync(&["run", cl.path(), "--global", "3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--kernel"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn run_json_gives_the_findings_and_dumps_as_one_document() {
    let p = sim_pair(
        "race",
        "kernel void race(global int *x) {\n  x[0] = get_global_id(0);\n}\n",
        "race.cl\nrace\n4 1 1\n4 1 1\n<size=4 fill=0 dump>\n",
    );
    let out = clsync(&["run", "--check", "--json", p.sim.path()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["kernel"], "race");
    let d = &doc["diagnostics"][0];
    assert!(
        d["headline"]
            .as_str()
            .unwrap()
            .starts_with("Write-write data race at global memory"),
        "{doc}"
    );
    assert!(
        d["site"].as_str().unwrap().ends_with("race.cl:2:8"),
        "{doc}"
    );
    assert_eq!(doc["dumps"][0]["argument"], "x");
    assert_eq!(doc["dumps"][0]["bytes"], 4);
}

/// `clsync run -- ./app`: a plain C host program (the OpenCL platform's
/// own test program, built here with `cc -lOpenCL`) runs on clsync's
/// platform with every launch checked, and its racy kernel is reported
/// with both work-items and the source line, as `oclgrind ./app` reports
/// it; the program's own exit status comes back.
#[test]
fn run_checks_every_kernel_of_a_host_program() {
    let dir = std::env::temp_dir().join(format!("clsync-cli-host-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("host");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../clsync-icd/tests/host/host.c");
    let cc = Command::new("cc")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .arg("-lOpenCL")
        .output()
        .expect("cc (build-essential) runs");
    assert!(cc.status.success(), "{}", text(&cc.stderr));
    let exe = exe.to_string_lossy().into_owned();
    let out = clsync(&["run", "--", &exe, "clsync", "--racy"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("PASS racy"), "{stdout}");
    assert!(
        stderr.starts_with("error: Read-write data race at global memory address `counter`[0]\n"),
        "{stderr}"
    );
    assert!(
        stderr.contains("in kernel `racy` at input.cl:2:"),
        "{stderr}"
    );
    assert!(stderr.contains("by work-item global (0)"), "{stderr}");
    // With --error-exitcode, a run that reported exits with it; a clean one
    // keeps the program's status.
    for (what, status) in [("--racy", 7), ("--events-only", 0)] {
        let out = clsync(&["run", "--error-exitcode", "7", "--", &exe, "clsync", what]);
        assert_eq!(
            out.status.code(),
            Some(status),
            "{what}: {}",
            text(&out.stderr)
        );
    }
    // The platform is the program's only one: asked for PoCL, it finds none
    // and says so (exit status 1 is the program's).
    let out = clsync(&["run", "--", &exe, "Portable"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("FAIL platform: none named Portable"));
    // Neither a file nor a program: refused.
    let out = clsync(&["run"]);
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}
