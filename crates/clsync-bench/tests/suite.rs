//! The suite's binary, run as a user runs it (at the tests' small sizes):
//! it prints every workload's row with both ratios, says whether its caches
//! are cold (the default) or warm, says why the PoCL column is empty when it
//! is, and refuses an `--only` that names no workload. No time is asserted.

use std::process::Command;

fn suite(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_clsync-bench"))
        .args(["--small", "--reps", "1", "--threads", "2"])
        .args(args)
        .output()
        .expect("the suite runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The row of `name`: its figures, each a number or `-` (no PoCL).
fn row<'a>(stdout: &'a str, name: &str) -> Vec<&'a str> {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))
        .unwrap_or_else(|| panic!("no row `{name}` in:\n{stdout}"));
    line[name.len()..].split_whitespace().take(5).collect()
}

#[test]
fn every_workload_has_its_row_with_cold_caches_by_default() {
    let (ok, stdout, stderr) = suite(&[]);
    assert!(ok, "the suite failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("caches: cold (each run first reads"),
        "{stdout}"
    );
    assert!(
        stdout.contains("OpenCL device:") || stdout.contains("PoCL: not run:"),
        "the PoCL column must say why it is empty:\n{stdout}"
    );
    for name in [
        "barrier loop/16",
        "barrier loop/64",
        "barrier loop/256",
        "reduce",
        "scan",
        "sgemm",
        "histogram",
        "message passing",
    ] {
        let figures = row(&stdout, name);
        // clsync, PoCL, limit, clsync/PoCL, clsync/limit.
        assert_eq!(figures.len(), 5, "{name}: {figures:?}");
        for (i, f) in figures.iter().enumerate() {
            let is_number = f.parse::<f64>().is_ok_and(|v| v.is_finite() && v > 0.0);
            assert!(
                is_number || (*f == "-" && (i == 1 || i == 3)),
                "{name}: figure {i} is {f:?}"
            );
        }
    }
    for engine in ["  coroutines", "  async"] {
        let line = stdout.lines().find(|l| l.starts_with(engine)).unwrap();
        assert!(
            line.contains("per thread") && line.contains("all threads"),
            "{line}"
        );
    }
}

#[test]
fn warm_caches_are_said_and_an_unknown_workload_is_refused() {
    let (ok, stdout, _) = suite(&["--warm-caches", "--only", "reduce"]);
    assert!(ok);
    assert!(stdout.contains("caches: warm"), "{stdout}");
    assert_eq!(row(&stdout, "reduce").len(), 5);
    assert!(
        !stdout.contains("\nscan "),
        "--only reduce ran scan:\n{stdout}"
    );

    let (ok, _, stderr) = suite(&["--only", "fft"]);
    assert!(!ok, "an --only that names no workload must fail");
    assert!(
        stderr.contains("\"fft\" matches no workload") && stderr.contains("histogram"),
        "{stderr}"
    );
}

/// `--spread` prints, under a row, one line per side that ran: its fastest
/// run, quartiles and slowest run in the row's unit, in order from fastest
/// to slowest, with the row's own figure (the median) in the middle.
#[test]
fn spread_lines_put_each_sides_runs_in_order_around_the_rows_median() {
    let out = Command::new(env!("CARGO_BIN_EXE_clsync-bench"))
        .args(["--small", "--reps", "5", "--threads", "2"])
        .args(["--spread", "--only", "reduce"])
        .output()
        .expect("the suite runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let figures = row(&stdout, "reduce");
    let spread = |side: &str| -> Vec<f64> {
        let prefix = format!("  spread {side} ");
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no spread line for {side}:\n{stdout}"));
        assert!(line.ends_with("(5 runs, GB/s)"), "{line}");
        line[prefix.len()..]
            .split_whitespace()
            .filter_map(|w| w.parse::<f64>().ok())
            .collect()
    };
    // clsync's median is the row's first figure, the limit's its third.
    for (side, column) in [("clsync", 0), ("limit", 2)] {
        let v = spread(side);
        assert_eq!(v.len(), 5, "{side}: {v:?}");
        // GB/s: the fastest run has the largest figure.
        assert!(v.windows(2).all(|w| w[0] >= w[1]), "{side}: {v:?}");
        assert_eq!(format!("{:.3}", v[2]), figures[column], "{side}: {v:?}");
    }
    // The lifted kernel has its line too; PoCL has one only if it ran.
    assert_eq!(spread("#[kernel]").len(), 5);
    assert_eq!(
        stdout.contains("  spread PoCL "),
        figures[1] != "-",
        "{stdout}"
    );
}

/// `--threads` reaches PoCL's device too (through its thread variable,
/// unless the environment sets one): with PoCL present, the device line
/// names as many compute units as clsync has workers, and a count the
/// environment sets is said to differ.
#[test]
fn pocl_runs_as_many_threads_as_the_suite_asks_for() {
    let run = |threads: &str, var: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_clsync-bench"));
        cmd.args([
            "--small",
            "--reps",
            "1",
            "--threads",
            threads,
            "--only",
            "reduce",
        ]);
        cmd.env_remove("POCL_MAX_PTHREAD_COUNT");
        if let Some(v) = var {
            cmd.env("POCL_MAX_PTHREAD_COUNT", v);
        }
        let out = cmd.output().expect("the suite runs");
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let one = run("1", None);
    if one.contains("PoCL: not run:") {
        // No PoCL here (or built without the feature): nothing to count.
        return;
    }
    assert!(one.contains(", 1 compute units)"), "{one}");
    assert!(!one.contains("threads, not"), "{one}");
    let three = run("3", None);
    assert!(three.contains(", 3 compute units)"), "{three}");
    let forced = run("1", Some("2"));
    assert!(forced.contains(", 2 compute units)"), "{forced}");
    assert!(
        forced.contains("PoCL: 2 threads, not 1 (POCL_MAX_PTHREAD_COUNT=2 in the environment)"),
        "{forced}"
    );
}

/// `--ceiling` puts the machine's multiply-add rate before the table, all
/// threads' and per thread.
#[test]
fn the_ceiling_line_gives_the_rate_of_all_threads_and_of_one() {
    let (ok, stdout, stderr) = suite(&["--ceiling", "--only", "reduce"]);
    assert!(ok, "{stdout}\n{stderr}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("ceiling: "))
        .unwrap_or_else(|| panic!("no ceiling line:\n{stdout}"));
    let numbers: Vec<f64> = line
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter_map(|w| w.parse().ok())
        .collect();
    // All threads' rate, the thread count (2), the rate per thread.
    assert_eq!(numbers.len(), 3, "{line}");
    assert_eq!(numbers[1], 2.0, "{line}");
    // Positive however slow the run (a loaded machine's `--small` ceiling
    // once printed as 0.0), and each to three significant digits, so half
    // the one is the other within their rounding.
    assert!(numbers[0] > 0.0 && numbers[2] > 0.0, "{line}");
    assert!(
        (numbers[0] / 2.0 - numbers[2]).abs() <= 0.02 * numbers[2],
        "{line}"
    );
}

/// `--scaling` prints one line per column, each with a figure and an
/// efficiency per count (100 % at the first), and its efficiency over the
/// ceiling's at the last, then each clsync form's ratio to its limit; it
/// takes no `--threads`.
#[test]
fn the_scaling_table_has_every_column_at_every_count() {
    let out = Command::new(env!("CARGO_BIN_EXE_clsync-bench"))
        .args(["--small", "--reps", "1", "--scaling", "1,2"])
        .output()
        .expect("the suite runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let lines: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("threads:"))
        .collect();
    let names = [
        "ceiling GFLOP/s",
        "reduce GB/s",
        "reduce limit GB/s",
        "reduce #[kernel] GB/s",
        "sgemm GFLOP/s",
        "sgemm limit GFLOP/s",
        "sgemm #[kernel] GFLOP/s",
        "scan GB/s",
        "histogram GB/s",
        "async engine (local 64) ns/item/barrier/thread",
    ];
    assert_eq!(lines.len(), 1 + names.len() + 4, "{stdout}");
    for (line, name) in lines[1..=names.len()].iter().zip(names) {
        assert!(line.starts_with(name), "{line}");
        let cells: Vec<&str> = line[name.len()..].split_whitespace().collect();
        // figure (eff %) twice, then the ratio to the ceiling (but on
        // the ceiling's own line).
        let want = if name.starts_with("ceiling") { 6 } else { 7 };
        assert_eq!(cells.len(), want, "{line}");
        assert_eq!(&cells[1..3], ["(100", "%)"], "{line}");
        for figure in [cells[0], cells[3]] {
            assert!(figure.parse::<f64>().is_ok_and(|v| v > 0.0), "{line}");
        }
    }

    // Then each clsync form's ratio of times to its limit, at each count.
    for (line, name) in lines[1 + names.len()..].iter().zip([
        "reduce / reduce limit (times)",
        "reduce #[kernel] / reduce limit (times)",
        "sgemm / sgemm limit (times)",
        "sgemm #[kernel] / sgemm limit (times)",
    ]) {
        assert!(line.starts_with(name), "{line}");
        let ratios: Vec<f64> = line[name.len()..]
            .split_whitespace()
            .map(|r| r.parse().unwrap())
            .collect();
        assert_eq!(ratios.len(), 2, "{line}");
        assert!(ratios.iter().all(|r| *r > 0.0), "{line}");
    }

    let refused = Command::new(env!("CARGO_BIN_EXE_clsync-bench"))
        .args(["--small", "--scaling", "1,2", "--threads", "2"])
        .output()
        .expect("the suite runs");
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("cannot be used with"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}

/// `--json FILE` writes the table's figures as rows a script can read:
/// one per side that ran, each with its median and its figure in the
/// row's unit.
#[test]
fn json_writes_every_sides_median() {
    let path = std::env::temp_dir().join(format!("clsync-bench-{}.json", std::process::id()));
    let (ok, stdout, stderr) = suite(&["--only", "reduce", "--json", path.to_str().unwrap()]);
    assert!(ok, "the suite failed:\n{stdout}\n{stderr}");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).ok();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    let sides: Vec<&str> = rows.iter().map(|r| r["side"].as_str().unwrap()).collect();
    for side in ["clsync", "clsync-kernel", "clsync-opencl-c", "limit"] {
        assert!(sides.contains(&side), "{side} missing: {sides:?}");
    }
    for r in &rows {
        assert_eq!(r["workload"], "reduce");
        assert!(r["median_ms"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["figure"].as_f64().unwrap() > 0.0, "{r}");
        assert_eq!(r["unit"], "GB/s");
        assert_eq!(r["threads"], 2);
    }
}
