//! `clsync litmus`: the memory-model explorer on files and folders.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clsync::Runtime;
use clsync_explorer::enumerate::program::Limits;
use clsync_explorer::expect::{collect, normalize, read_expectations, read_list};
use clsync_explorer::run::{run, RunReport};
use clsync_explorer::{explore, load, Exploration, Options};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

#[derive(clap::Args)]
pub struct LitmusArgs {
    /// Litmus files, or folders searched for `*.litmus`.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Compare each test's verdict (condition reachable: 1, not: 0) with an
    /// expectation file of `path,0|1` rows; exit non-zero on a mismatch.
    #[arg(long, value_name = "CSV")]
    expect: Option<PathBuf>,
    /// Compare each test's race verdict (race-free: 1, racy: 0) with an
    /// expectation file; exit non-zero on a mismatch.
    #[arg(long, value_name = "CSV")]
    expect_race_free: Option<PathBuf>,
    /// Leave out the tests an expectation-style file lists.
    #[arg(long, value_name = "CSV")]
    skip: Option<PathBuf>,
    /// Also run each test N times on the clsync runtime, its threads as
    /// work-items, and report what it showed; an outcome the model forbids
    /// in a race-free test is an error.
    #[arg(long, value_name = "N", value_parser = crate::at_least_one)]
    run: Option<usize>,
    /// Worker threads of the runtime for --run (default: one per core).
    #[arg(long, requires = "run", value_parser = crate::at_least_one)]
    threads: Option<usize>,
    /// With --run: run the tests under the checker and print what it
    /// reports (its race verdict next to the model's).
    #[arg(long, requires = "run")]
    check: bool,
    /// How many times a loop body may run in the exploration.
    #[arg(long, default_value_t = Limits::default().unroll)]
    unroll: usize,
    /// Print the results as JSON.
    #[arg(long)]
    json: bool,
}

/// One test's results.
struct Entry {
    path: PathBuf,
    result: Result<(Exploration, Vec<String>), String>,
    run: Option<Result<RunReport, String>>,
}

pub fn main(args: &LitmusArgs) -> ExitCode {
    let mut files = match collect(&args.paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(skip) = &args.skip {
        match read_list(skip) {
            Ok(list) => {
                let list: Vec<PathBuf> = list.iter().map(|p| normalize(p)).collect();
                files.retain(|f| !list.contains(&normalize(f)));
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    if files.is_empty() {
        eprintln!("error: no .litmus files under the given paths");
        return ExitCode::from(2);
    }
    let expectations = |p: &Option<PathBuf>| -> Result<Option<BTreeMap<PathBuf, bool>>, String> {
        p.as_ref()
            .map(|p| {
                read_expectations(p)
                    .map(|m| m.into_iter().map(|(k, v)| (normalize(&k), v)).collect())
                    .map_err(|e| e.to_string())
            })
            .transpose()
    };
    let (expect, expect_race) = match (
        expectations(&args.expect),
        expectations(&args.expect_race_free),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match (args.run, args.threads) {
        (None, _) => None,
        (Some(_), Some(n)) => Some(Runtime::with_threads(n).with_checking(args.check)),
        (Some(_), None) => Some(Runtime::new().with_checking(args.check)),
    };
    let options = Options {
        limits: Limits {
            unroll: args.unroll,
            ..Limits::default()
        },
    };
    let bar = if files.len() > 1 && !args.json {
        ProgressBar::new(files.len() as u64)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").expect("a valid template"),
    );
    let start = Instant::now();
    let explore_one = |path: &PathBuf| -> (Entry, Option<clsync_explorer::syntax::Test>) {
        let r = load(path)
            .map_err(|e| e.to_string())
            .and_then(|(test, warnings)| {
                let w = warnings
                    .iter()
                    .map(|w| format!("{}:{w}", path.display()))
                    .collect();
                explore(&test, &options)
                    .map(|x| (x, w, test))
                    .map_err(|e| format!("{}: {e}", path.display()))
            });
        bar.inc(1);
        match r {
            Ok((x, w, test)) => (
                Entry {
                    path: path.clone(),
                    result: Ok((x, w)),
                    run: None,
                },
                Some(test),
            ),
            Err(e) => (
                Entry {
                    path: path.clone(),
                    result: Err(e),
                    run: None,
                },
                None,
            ),
        }
    };
    let explored: Vec<(Entry, Option<clsync_explorer::syntax::Test>)> =
        files.par_iter().map(explore_one).collect();
    let explore_time = start.elapsed();
    bar.finish_and_clear();
    let mut entries = Vec::with_capacity(explored.len());
    for (mut entry, test) in explored {
        if let (Some(rt), Some(n), Some(test), Ok((x, _))) =
            (&runtime, args.run, &test, &entry.result)
        {
            entry.run = Some(run(test, x, rt, n).map_err(|e| e.to_string()));
        }
        entries.push(entry);
    }
    // Verdicts against expectations.
    let mut mismatches = Vec::new();
    let (mut errors, mut unsound) = (0, 0);
    for e in &entries {
        let key = normalize(&e.path);
        match &e.result {
            Ok((x, _)) => {
                if let Some(want) = expect.as_ref().and_then(|m| m.get(&key)) {
                    if x.reachable != *want {
                        mismatches.push(format!(
                            "{}: expected {}, the model gives {}",
                            e.path.display(),
                            if *want { "reachable" } else { "unreachable" },
                            if x.reachable {
                                "reachable"
                            } else {
                                "unreachable"
                            }
                        ));
                    }
                }
                if let Some(want) = expect_race.as_ref().and_then(|m| m.get(&key)) {
                    if x.race.is_none() != *want {
                        mismatches.push(format!(
                            "{}: expected {}, the model finds {}",
                            e.path.display(),
                            if *want { "race-free" } else { "a race" },
                            if x.race.is_none() {
                                "no race"
                            } else {
                                "a race"
                            }
                        ));
                    }
                }
            }
            Err(_) => errors += 1,
        }
        if let Some(Ok(r)) = &e.run {
            if r.unsound() {
                unsound += 1;
            }
        }
    }
    if args.json {
        let list: Vec<serde_json::Value> = entries.iter().map(to_json).collect();
        let doc = serde_json::json!({
            "tests": list,
            "errors": errors,
            "mismatches": mismatches,
            "unsound": unsound,
            "seconds": explore_time.as_secs_f64(),
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("serializable")
        );
    } else {
        for e in &entries {
            print_entry(e);
        }
        let ok = entries.iter().filter(|e| e.result.is_ok()).count();
        println!(
            "{} test(s) explored in {:.2} s, {} error(s){}",
            ok,
            explore_time.as_secs_f64(),
            errors,
            if expect.is_some() || expect_race.is_some() {
                format!(", {} mismatch(es) with the expectations", mismatches.len())
            } else {
                String::new()
            }
        );
        for m in &mismatches {
            println!("MISMATCH {m}");
        }
        if runtime.is_some() {
            println!("runtime: {unsound} test(s) showed an outcome the model forbids");
        }
    }
    if !mismatches.is_empty() || unsound > 0 {
        ExitCode::FAILURE
    } else if errors > 0 {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

fn print_entry(e: &Entry) {
    match &e.result {
        Err(msg) => println!("error: {msg}\n"),
        Ok((x, warnings)) => {
            println!("{}", e.path.display());
            for w in warnings {
                println!("  {w}");
            }
            print!("{x}");
            match &e.run {
                None => {}
                Some(Err(why)) => println!("  runtime: {why}"),
                Some(Ok(r)) => {
                    let seen: Vec<String> = r
                        .observed
                        .iter()
                        .map(|(v, n)| {
                            let state: Vec<String> = x
                                .observed
                                .iter()
                                .zip(v)
                                .map(|(k, x)| format!("{k}={x}"))
                                .collect();
                            format!("{} ×{n}", state.join("; "))
                        })
                        .collect();
                    println!("  runtime, {} run(s): {}", r.runs, seen.join(", "));
                    for f in &r.failures {
                        println!("  runtime launch failed: {f}");
                    }
                    if r.skipped > 0 {
                        println!("  runtime: {} run(s) skipped after the stall", r.skipped);
                    }
                    for c in &r.checker_reports {
                        println!("  checker: {}", c.replace('\n', "\n    "));
                    }
                    if !r.forbidden.is_empty() {
                        println!(
                            "  {} the runtime showed {} outcome(s) the model forbids",
                            if r.racy {
                                "note (racy test, undefined behaviour):"
                            } else {
                                "ERROR:"
                            },
                            r.forbidden.len()
                        );
                    }
                }
            }
            println!();
        }
    }
}

fn to_json(e: &Entry) -> serde_json::Value {
    let mut v = serde_json::json!({ "path": e.path.display().to_string() });
    match &e.result {
        Ok((x, warnings)) => {
            v["result"] = serde_json::to_value(x).expect("serializable");
            v["verdict"] = serde_json::Value::from(x.verdict_word());
            v["warnings"] = serde_json::to_value(warnings).expect("serializable");
        }
        Err(msg) => v["error"] = serde_json::Value::from(msg.as_str()),
    }
    match &e.run {
        Some(Ok(r)) => v["run"] = serde_json::to_value(r).expect("serializable"),
        Some(Err(why)) => v["run_error"] = serde_json::Value::from(why.as_str()),
        None => {}
    }
    v
}
