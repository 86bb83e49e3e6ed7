//! `clsync-bench`: the six workloads in clsync, on PoCL and in plain Rust,
//! run interleaved; prints medians and the ratios clsync/PoCL and
//! clsync/limit (ratios of times: lower is better for clsync).
//!
//! ```text
//! cargo run --release -p clsync-bench --features pocl -- [--reps N] [--threads N] [--small] [--only NAME] [--warm-caches] [--spread] [--ceiling]
//! ```
//!
//! Without the `pocl` feature, or with no OpenCL device, the PoCL column
//! says why it is empty and the rest still runs.

use std::time::Duration;

use clsync::Runtime;
use clsync_bench::opencl_c::OpenClC;
use clsync_bench::timing::Spread;
use clsync_bench::{
    ceiling, figure, kernels, limit, reference, scaling, Inputs, Run, Sizes, Workload,
};

/// The median of runs, of which there is at least one (`--reps` is).
fn median(v: &[Duration]) -> Duration {
    Spread::of(v).expect("at least one run").median
}

/// clsync side by side with PoCL and with plain Rust.
#[derive(clap::Parser)]
#[command(name = "clsync-bench")]
struct Cli {
    /// Interleaved runs per workload; figures are their medians.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    reps: u32,
    /// Worker threads for clsync, PoCL's device (through
    /// `POCL_MAX_PTHREAD_COUNT`, unless that is set) and the rayon pool
    /// (default: the machine's).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    /// The tests' small sizes instead of the issue's.
    #[arg(long)]
    small: bool,
    /// Only the workloads whose name contains this.
    #[arg(long)]
    only: Option<String>,
    /// Leave the caches as the previous run left them, instead of reading
    /// twice the last-level cache's size of scratch before each run (so
    /// that every run, at every thread count, finds its input in memory).
    #[arg(long)]
    warm_caches: bool,
    /// Under each row, each side's fastest run, quartiles and slowest run
    /// (in the row's unit), to show how far its median can be trusted.
    #[arg(long)]
    spread: bool,
    /// Before the table, the machine's own ceiling at this thread count:
    /// every thread multiplying and adding from registers (see
    /// `clsync_bench::ceiling`), whose scaling bounds a compute-bound
    /// workload's.
    #[arg(long)]
    ceiling: bool,
    /// Instead of the side-by-side table, the scaling table: the ceiling,
    /// reduce, SGEMM (each with its limit and `#[kernel]` form), scan,
    /// histogram and the async engine at each of these thread counts
    /// (`1,2,4,8,16`), with each one's parallel efficiency, that over the
    /// ceiling's, and each clsync form's ratio to its limit (see
    /// `clsync_bench::scaling`). PoCL, whose thread count is fixed when it
    /// loads, is left out.
    #[arg(
        long,
        value_delimiter = ',',
        conflicts_with_all = ["threads", "only"],
        value_parser = clap::value_parser!(u32).range(1..=1024)
    )]
    scaling: Option<Vec<u32>>,
    /// Also write every figure of the side-by-side table to FILE, as a
    /// JSON array of rows `{"workload", "side", "median_ms", "figure",
    /// "unit", "threads", "reps"}`; sides `clsync`, `clsync-kernel`
    /// (`#[kernel]`), `clsync-opencl-c`, `pocl`, `intel`, `clsync-icd`
    /// (kernels.cl through the OpenCL API on clsync's platform), `limit`.
    #[arg(long, value_name = "FILE", conflicts_with = "scaling")]
    json: Option<std::path::PathBuf>,
    /// Run the OpenCL C side from this SPIR-V of `kernels.cl` (as
    /// `--write-spirv` writes it) instead of building the source: for a
    /// machine without clang-15 and llvm-spirv-15.
    #[arg(long, value_name = "FILE")]
    spirv: Option<std::path::PathBuf>,
    /// Build `kernels.cl` as the OpenCL C side does, write its SPIR-V to
    /// FILE and exit.
    #[arg(long, value_name = "FILE")]
    write_spirv: Option<std::path::PathBuf>,
}

struct Args {
    reps: usize,
    threads: usize,
    sizes: Sizes,
    only: Option<String>,
    warm_caches: bool,
    spread: bool,
    ceiling: bool,
    scaling: Option<Vec<usize>>,
    json: Option<std::path::PathBuf>,
    spirv: Option<std::path::PathBuf>,
    write_spirv: Option<std::path::PathBuf>,
}

/// Where the OpenCL C side's SPIR-V comes from (`--spirv`), if not from
/// building `kernels.cl`.
static SPIRV: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

fn args() -> Args {
    let cli = <Cli as clap::Parser>::parse();
    Args {
        reps: cli.reps as usize,
        threads: cli.threads.map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get()),
            |t| t as usize,
        ),
        sizes: if cli.small { Sizes::SMALL } else { Sizes::FULL },
        only: cli.only,
        warm_caches: cli.warm_caches,
        spread: cli.spread,
        ceiling: cli.ceiling,
        scaling: cli
            .scaling
            .map(|c| c.into_iter().map(|t| t as usize).collect()),
        json: cli.json,
        spirv: cli.spirv,
        write_spirv: cli.write_spirv,
    }
}

/// The OpenCL side.
#[cfg(feature = "pocl")]
type Opencl = clsync_bench::pocl::Pocl;
#[cfg(not(feature = "pocl"))]
type Opencl = NoPocl;

/// The OpenCL sides (PoCL, Intel's runtime, clsync's platform), each or
/// why it is not there.
type OpenclSides = (
    Result<Opencl, String>,
    Result<Opencl, String>,
    Result<Opencl, String>,
);

/// The OpenCL side, or why there is none.
#[cfg(feature = "pocl")]
fn opencl() -> Result<clsync_bench::pocl::Pocl, String> {
    clsync_bench::pocl::Pocl::new()
}

/// Intel's CPU runtime, the second OpenCL side, or why there is none.
#[cfg(feature = "pocl")]
fn intel() -> Result<clsync_bench::pocl::Pocl, String> {
    clsync_bench::pocl::Pocl::on(clsync_bench::pocl::INTEL)
}

#[cfg(not(feature = "pocl"))]
fn intel() -> Result<NoPocl, String> {
    Err("built without the `pocl` feature".to_string())
}

/// clsync's own OpenCL platform, the third OpenCL side: `kernels.cl`
/// through the OpenCL API, or why there is none.
#[cfg(feature = "pocl")]
fn clsync_platform() -> Result<clsync_bench::pocl::Pocl, String> {
    clsync_bench::pocl::Pocl::on(clsync_bench::pocl::CLSYNC)
}

#[cfg(not(feature = "pocl"))]
fn clsync_platform() -> Result<NoPocl, String> {
    Err("built without the `pocl` feature".to_string())
}

#[cfg(not(feature = "pocl"))]
struct NoPocl;

#[cfg(not(feature = "pocl"))]
fn opencl() -> Result<NoPocl, String> {
    Err("built without the `pocl` feature".to_string())
}

fn main() {
    let args = args();
    if let Some(out) = &args.write_spirv {
        let written = OpenClC::new(false)
            .and_then(|k| std::fs::write(out, k.spirv()).map_err(|e| e.to_string()));
        if let Err(e) = written {
            eprintln!("error: --write-spirv {}: {e}", out.display());
            std::process::exit(1);
        }
        return;
    }
    if let Some(p) = &args.spirv {
        let _ = SPIRV.set(p.clone());
    }
    // First, while the process has one thread: PoCL reads its thread count
    // from the environment.
    #[cfg(feature = "pocl")]
    clsync_bench::pocl::request_threads(args.threads);
    if let Some(only) = &args.only {
        if !Workload::ALL
            .iter()
            .any(|w| w.name().contains(only.as_str()))
        {
            let names: Vec<_> = Workload::ALL.iter().map(|w| w.name()).collect();
            eprintln!(
                "error: --only {only:?} matches no workload ({})",
                names.join(", ")
            );
            std::process::exit(2);
        }
    }
    let s = args.sizes;
    reference::check_sizes(s.reduce, s.scan, s.histogram, s.sgemm);
    if let Some(counts) = &args.scaling {
        scaling_table(&args, counts);
        return;
    }
    let rt = Runtime::with_threads(args.threads);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads)
        .build()
        .expect("pool");
    let cl = opencl();
    println!(
        "clsync-bench: {} thread(s), {} interleaved run(s), medians",
        args.threads, args.reps
    );
    match &cl {
        #[cfg(feature = "pocl")]
        Ok(p) => {
            println!("OpenCL device: {}", p.description);
            if p.compute_units as usize != args.threads {
                let var = clsync_bench::pocl::THREADS_VAR;
                println!(
                    "PoCL: {} threads, not {} ({var}={} in the environment)",
                    p.compute_units,
                    args.threads,
                    std::env::var(var).unwrap_or_default()
                );
            }
        }
        #[cfg(not(feature = "pocl"))]
        Ok(_) => {}
        Err(why) => println!("PoCL: not run: {why}"),
    }
    let intel = intel();
    match &intel {
        #[cfg(feature = "pocl")]
        Ok(p) => println!(
            "Intel's CPU runtime: {} ({}={})",
            p.description,
            clsync_bench::pocl::INTEL_THREADS_VAR,
            std::env::var(clsync_bench::pocl::INTEL_THREADS_VAR).unwrap_or_default()
        ),
        #[cfg(not(feature = "pocl"))]
        Ok(_) => {}
        Err(why) => println!("Intel's CPU runtime: not run: {why}"),
    }
    let icd = clsync_platform();
    match &icd {
        #[cfg(feature = "pocl")]
        Ok(p) => println!("clsync's OpenCL platform: {}", p.description),
        #[cfg(not(feature = "pocl"))]
        Ok(_) => {}
        Err(why) => println!("clsync's OpenCL platform: not run: {why}"),
    }
    let cl = (cl, intel, icd);
    say_caches(&args);
    let inputs = Inputs::new(&s);
    if args.ceiling {
        ceiling_row(&args, &pool);
    }
    println!(
        "{:<18} {:>13} {:>13} {:>13} {:>12} {:>12} {:>6}  unit",
        "workload", "clsync", "PoCL", "limit", "clsync/PoCL", "clsync/limit", "goal"
    );
    for w in Workload::ALL {
        if args.only.as_deref().is_some_and(|o| !w.name().contains(o)) {
            continue;
        }
        if w == Workload::MessagePassing && args.threads < 2 {
            // Two work-groups that wait for each other need two workers.
            println!("{:<18} (needs two threads)", w.name());
            continue;
        }
        if w == Workload::BarrierLoop {
            for local in s.barrier_locals {
                let name = format!("barrier loop/{local}");
                row(
                    w,
                    &name,
                    &args,
                    &s.with_barrier_local(local),
                    &rt,
                    &pool,
                    &cl,
                    &inputs,
                );
            }
            general_engine_rows(&args, &rt);
        } else {
            row(w, w.name(), &args, &s, &rt, &pool, &cl, &inputs);
        }
    }
    if let Some(path) = &args.json {
        let rows = JSON_ROWS.lock().unwrap_or_else(|e| e.into_inner());
        let text = serde_json::to_string_pretty(&*rows).expect("rows serialize");
        if let Err(e) = std::fs::write(path, text + "\n") {
            eprintln!("error: --json {}: {e}", path.display());
            std::process::exit(1);
        }
        println!("figures written to {}", path.display());
    }
}

/// The rows `--json` writes, as the table prints them.
static JSON_ROWS: std::sync::Mutex<Vec<serde_json::Value>> = std::sync::Mutex::new(Vec::new());

/// Records one side's median for `--json`.
fn record(name: &str, side: &str, w: Workload, s: &Sizes, args: &Args, median: Duration) {
    let (figure, unit) = figure(w, s, median);
    JSON_ROWS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(serde_json::json!({
            "workload": name,
            "side": side,
            "median_ms": median.as_secs_f64() * 1e3,
            "figure": figure,
            "unit": unit,
            "threads": args.threads,
            "reps": args.reps,
        }));
}

/// Measures one workload three ways (and lifted, where it has that form),
/// interleaved, and prints its row.
#[allow(clippy::too_many_arguments)]
fn row(
    w: Workload,
    name: &str,
    args: &Args,
    s: &Sizes,
    rt: &Runtime,
    pool: &rayon::ThreadPool,
    (cl, intel, icd): &OpenclSides,
    inputs: &Inputs,
) {
    let (mut c, mut p, mut l) = (Vec::new(), Vec::new(), Vec::new());
    // kernels.cl on Intel's CPU runtime.
    let mut icl = Vec::new();
    // kernels.cl through the OpenCL API on clsync's own platform.
    let mut api = Vec::new();
    // The kernel written per work-item and lifted by `#[kernel]`.
    let mut lifted = Vec::new();
    // kernels.cl compiled by clsync.
    let mut occ = Vec::new();
    for rep in 0..args.reps {
        // Rotate who goes first, so no side always meets a warm cache.
        for side in 0..3 {
            match (side + rep) % 3 {
                0 => {
                    c.push(checked(w, "clsync", run_clsync(w, rt, s, inputs)));
                    if let Some(r) = run_lifted(w, rt, s, inputs) {
                        lifted.push(checked(w, "#[kernel]", r));
                    }
                    if let Some(k) = opencl_c() {
                        occ.push(checked(w, "OpenCL C", run_opencl_c(w, k, rt, s, inputs)));
                    }
                }
                1 => {
                    if let Ok(cl) = cl {
                        if pocl_can_run(w, cl) {
                            p.push(checked(w, "PoCL", run_pocl(w, cl, s, inputs)));
                        }
                    }
                    if let Ok(cl) = intel {
                        if pocl_can_run(w, cl) {
                            icl.push(checked(w, "Intel", run_pocl(w, cl, s, inputs)));
                        }
                    }
                    if let Ok(cl) = icd {
                        if pocl_can_run(w, cl) {
                            api.push(checked(w, "clsync ICD", run_pocl(w, cl, s, inputs)));
                        }
                    }
                }
                _ => l.push(checked(w, "limit", run_limit(w, pool, s, inputs))),
            }
        }
    }
    let runs = [
        ("clsync", c),
        ("#[kernel]", lifted),
        ("OpenCL C", occ),
        ("PoCL", p),
        ("limit", l),
        ("Intel", icl),
        ("clsync ICD", api),
    ];
    for (side, label) in [
        ("clsync", "clsync"),
        ("#[kernel]", "clsync-kernel"),
        ("OpenCL C", "clsync-opencl-c"),
        ("PoCL", "pocl"),
        ("limit", "limit"),
        ("Intel", "intel"),
        ("clsync ICD", "clsync-icd"),
    ] {
        if let Some((_, r)) = runs.iter().find(|(n, r)| *n == side && !r.is_empty()) {
            record(name, label, w, s, args, median(r));
        }
    }
    let [(_, c), (_, lifted), (_, occ), (_, p), (_, l), (_, icl), (_, api)] = &runs;
    let c = median(c);
    let l = median(l);
    let p = (!p.is_empty()).then(|| median(p));
    let (cf, unit) = figure(w, s, c);
    let pf = p.map_or("-".to_string(), |p| format!("{:.3}", figure(w, s, p).0));
    let to_pocl = p.map_or("-".to_string(), |p| ratio(c, p));
    let goal = match w {
        Workload::BarrierLoop | Workload::Sgemm => "<=1.0",
        _ => "<=0.5",
    };
    println!(
        "{:<18} {:>13.3} {:>13} {:>13.3} {:>12} {:>12} {:>6}  {unit}",
        name,
        cf,
        pf,
        figure(w, s, l).0,
        to_pocl,
        ratio(c, l),
        goal
    );
    let sub_rows = [
        (
            "  #[kernel]",
            lifted,
            "written per work-item, lifted by #[kernel]",
        ),
        ("  OpenCL C", occ, "kernels.cl compiled by clsync-opencl"),
    ];
    for (label, runs, what) in sub_rows {
        if runs.is_empty() {
            continue;
        }
        let k = median(runs);
        println!(
            "{:<18} {:>13.3} {:>13} {:>13} {:>12} {:>12} {:>6}  {unit} ({what})",
            label,
            figure(w, s, k).0,
            "",
            "",
            p.map_or("-".to_string(), |p| ratio(k, p)),
            ratio(k, l),
            goal
        );
    }
    if !icl.is_empty() {
        // Intel's CPU runtime: its figure, and each clsync side's time as a
        // multiple of its time.
        let i = median(icl);
        let of = |r: &Vec<Duration>| {
            if r.is_empty() {
                "-".to_string()
            } else {
                ratio(median(r), i)
            }
        };
        println!(
            "{:<18} {:>13.3}  {unit} (Intel's CPU runtime): Intel/PoCL {}, clsync/Intel {}, #[kernel]/Intel {}, OpenCL C/Intel {}",
            "  Intel",
            figure(w, s, i).0,
            p.map_or("-".to_string(), |p| ratio(i, p)),
            ratio(c, i),
            of(lifted),
            of(occ),
        );
    }
    if !api.is_empty() {
        // clsync's platform: the OpenCL C side through the API, as a host
        // program sees it.
        let a = median(api);
        println!(
            "{:<18} {:>13.3}  {unit} (kernels.cl through the OpenCL API on clsync's platform): ICD/PoCL {}, ICD/OpenCL C {}",
            "  clsync ICD",
            figure(w, s, a).0,
            p.map_or("-".to_string(), |p| ratio(a, p)),
            if occ.is_empty() {
                "-".to_string()
            } else {
                ratio(a, median(occ))
            },
        );
    }
    if args.spread {
        print_spread(w, s, &runs);
    }
}

/// `kernels.cl` compiled by clsync (the [`OpenClC`] side), built once;
/// `None`, with the reason printed, where the front end is missing.
fn opencl_c() -> Option<&'static OpenClC> {
    static SIDE: std::sync::OnceLock<Option<OpenClC>> = std::sync::OnceLock::new();
    let side = || match SPIRV.get() {
        Some(p) => std::fs::read(p)
            .map_err(|e| format!("{}: {e}", p.display()))
            .and_then(|b| OpenClC::from_spirv(&b, false)),
        None => OpenClC::new(false),
    };
    SIDE.get_or_init(|| match side() {
        Ok(k) => Some(k),
        Err(why) => {
            println!("OpenCL C on clsync: not run: {why}");
            None
        }
    })
    .as_ref()
}

fn run_opencl_c(w: Workload, k: &OpenClC, rt: &Runtime, s: &Sizes, i: &Inputs) -> Run {
    match w {
        Workload::BarrierLoop => k.barrier_loop(rt, s),
        Workload::Reduce => k.reduce(rt, &i.reduce),
        Workload::Scan => k.scan(rt, &i.scan),
        Workload::Sgemm => k.sgemm(rt, &i.a, &i.b, s.sgemm),
        Workload::Histogram => k.histogram(rt, &i.bytes),
        Workload::MessagePassing => k.message_passing(rt, s.rounds),
    }
}

/// Each side's [`Spread`] (of the sides that ran), in the row's unit,
/// under its row.
fn print_spread(w: Workload, s: &Sizes, sides: &[(&str, Vec<Duration>)]) {
    for (side, runs) in sides {
        spread_line(side, runs, |d| figure(w, s, d));
    }
}

/// One side's spread line, each time converted by `figure` (value, unit).
fn spread_line(side: &str, runs: &[Duration], figure: impl Fn(Duration) -> (f64, &'static str)) {
    let Some(sp) = Spread::of(runs) else { return };
    let f = |d: Duration| figure(d).0;
    println!(
        "  spread {side:<10} fastest {:.3}  quartiles {:.3} / {:.3} / {:.3}  slowest {:.3}  ({} runs, {})",
        f(sp.fastest),
        f(sp.lower_quartile),
        f(sp.median),
        f(sp.upper_quartile),
        f(sp.slowest),
        runs.len(),
        figure(sp.median).1
    );
}

/// `a / b`, to two decimals, or to two significant digits below 0.01 (a
/// tiny ratio is still a ratio, not 0.00).
fn ratio(a: Duration, b: Duration) -> String {
    let r = a.as_secs_f64() / b.as_secs_f64();
    if r > 0.0 && r < 0.01 {
        significant(r, 2)
    } else {
        format!("{r:.2}")
    }
}

/// `x` to `digits` significant digits (at least one decimal): a rate of a
/// small or loaded run is still a rate, not 0.0 (a fixed one decimal printed
/// the ceiling of `--small` on a machine busier than its cores as 0.0).
fn significant(x: f64, digits: i32) -> String {
    if !x.is_finite() || x <= 0.0 {
        return format!("{x:.1}");
    }
    let decimals = (digits - 1 - x.log10().floor() as i32).max(1) as usize;
    format!("{x:.decimals$}")
}

/// Empties the caches before each run unless `--warm-caches`, and says
/// which.
fn say_caches(args: &Args) {
    if args.warm_caches {
        println!("caches: warm (as the previous run left them)");
    } else {
        let bytes = clsync_bench::timing::cold_caches();
        println!(
            "caches: cold (each run first reads {} MiB of scratch, twice the last-level cache)",
            bytes >> 20
        );
    }
}

/// The scaling table (`--scaling`): the columns at each of `counts`
/// threads, interleaved, with their efficiencies.
fn scaling_table(args: &Args, counts: &[usize]) {
    println!(
        "clsync-bench: scaling at {counts:?} thread(s), {} interleaved run(s), medians; \
         efficiency: rate per thread over the first count's",
        args.reps
    );
    say_caches(args);
    let s = &args.sizes;
    let inputs = Inputs::new(s);
    let rts: Vec<Runtime> = counts.iter().map(|&t| Runtime::with_threads(t)).collect();
    let pools: Vec<rayon::ThreadPool> = counts
        .iter()
        .map(|&t| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .expect("pool")
        })
        .collect();
    let columns = scaling::suite(s, &inputs, &rts, &pools);
    match scaling::measure(counts, args.reps, &columns) {
        Ok(table) => print!("{}", scaling::render(&table, &columns, Some(0))),
        Err(e) => panic!("a wrong result: {e}"),
    }
}

/// The machine's multiply-add ceiling at the pool's thread count, median
/// of `--reps` runs.
fn ceiling_row(args: &Args, pool: &rayon::ThreadPool) {
    let steps = if args.sizes == Sizes::SMALL {
        ceiling::SMALL_STEPS
    } else {
        ceiling::STEPS
    };
    let runs: Vec<Duration> = (0..args.reps)
        .map(|_| {
            let r = ceiling::fma(pool, steps);
            if let Err(e) = r.verified {
                panic!("{e}");
            }
            r.time
        })
        .collect();
    let rate = |t: Duration| ceiling::flops(args.threads, steps) / t.as_secs_f64() / 1e9;
    let all = rate(median(&runs));
    println!(
        "ceiling: {} GFLOP/s of register multiply-adds on {} thread(s), {} per thread",
        significant(all, 3),
        args.threads,
        significant(all / args.threads as f64, 3)
    );
    if args.spread {
        spread_line("ceiling", &runs, |t| (rate(t), "GFLOP/s"));
    }
}

/// The barrier loop on the general engines, at the sizes' own local size.
fn general_engine_rows(args: &Args, rt: &Runtime) {
    let s = &args.sizes;
    let w = Workload::BarrierLoop;
    type General = fn(&Runtime, &Sizes) -> Run;
    let engines: [(&str, General); 2] = [
        ("  coroutines", kernels::barrier_loop_general),
        ("  async", kernels::barrier_loop_async),
    ];
    for (name, run) in engines {
        let runs: Vec<Duration> = (0..args.reps)
            .map(|_| checked(w, name, run(rt, s)))
            .collect();
        let g = median(&runs);
        let (n, local, b) = s.barrier;
        // Per thread: what one core spends per work-item and barrier (the
        // goal is read so); all threads: the barrier loop rows' unit.
        let per_thread = |t: Duration| t.as_secs_f64() * 1e9 / (n * b) as f64 * args.threads as f64;
        let wall = g.as_secs_f64() * 1e9 / (n * b) as f64;
        println!(
            "{:<18} {:>13.3} {:>13} {:>13} {:>12} {:>12} {:>6}  ns/item/barrier per thread (general engine, local {local}; {wall:.3} all threads)",
            name,
            per_thread(g),
            "",
            "",
            "",
            "",
            "<=3"
        );
        if args.spread {
            spread_line(name.trim(), &runs, |t| {
                (per_thread(t), "ns/item/barrier per thread")
            });
        }
    }
}

fn checked(w: Workload, side: &str, r: Run) -> Duration {
    if let Err(e) = r.verified {
        panic!("{} on {side} gave a wrong result: {e}", w.name());
    }
    r.time
}

fn run_clsync(w: Workload, rt: &Runtime, s: &Sizes, i: &Inputs) -> Run {
    match w {
        Workload::BarrierLoop => kernels::barrier_loop(rt, s),
        Workload::Reduce => kernels::reduce(rt, &i.reduce),
        Workload::Scan => kernels::scan(rt, &i.scan),
        Workload::Sgemm => kernels::sgemm(rt, &i.a, &i.b, s.sgemm),
        Workload::Histogram => kernels::histogram(rt, &i.bytes),
        Workload::MessagePassing => kernels::message_passing(rt, s.rounds),
    }
}

/// The workload written per work-item, as the OpenCL C kernel is, and
/// lifted by `#[kernel]`, where the suite has that form.
fn run_lifted(w: Workload, rt: &Runtime, s: &Sizes, i: &Inputs) -> Option<Run> {
    match w {
        Workload::BarrierLoop => Some(kernels::barrier_loop_lifted(rt, s)),
        Workload::Reduce => Some(kernels::reduce_lifted(rt, &i.reduce)),
        Workload::Sgemm => Some(kernels::sgemm_lifted(rt, &i.a, &i.b, s.sgemm)),
        _ => None,
    }
}

fn run_limit(w: Workload, pool: &rayon::ThreadPool, s: &Sizes, i: &Inputs) -> Run {
    match w {
        Workload::BarrierLoop => limit::barrier_loop(pool, s),
        Workload::Reduce => limit::reduce(pool, &i.reduce),
        Workload::Scan => limit::scan(pool, &i.scan),
        Workload::Sgemm => limit::sgemm(pool, &i.a, &i.b, s.sgemm),
        Workload::Histogram => limit::histogram(pool, &i.bytes),
        Workload::MessagePassing => limit::message_passing(pool, s.rounds),
    }
}

/// Whether the OpenCL device can run `w` (the ping-pong needs two
/// compute units, or it would never end).
#[cfg(feature = "pocl")]
fn pocl_can_run(w: Workload, cl: &clsync_bench::pocl::Pocl) -> bool {
    w != Workload::MessagePassing || cl.compute_units >= 2
}

#[cfg(not(feature = "pocl"))]
fn pocl_can_run(_: Workload, _: &NoPocl) -> bool {
    false
}

#[cfg(feature = "pocl")]
fn run_pocl(w: Workload, cl: &clsync_bench::pocl::Pocl, s: &Sizes, i: &Inputs) -> Run {
    match w {
        Workload::BarrierLoop => cl.barrier_loop(s),
        Workload::Reduce => cl.reduce(&i.reduce),
        Workload::Scan => cl.scan(&i.scan),
        Workload::Sgemm => cl.sgemm(&i.a, &i.b, s.sgemm),
        Workload::Histogram => cl.histogram(&i.bytes),
        Workload::MessagePassing => cl.message_passing(s.rounds),
    }
}

#[cfg(not(feature = "pocl"))]
fn run_pocl(_: Workload, _: &NoPocl, _: &Sizes, _: &Inputs) -> Run {
    unreachable!("no OpenCL side without the `pocl` feature")
}

#[cfg(test)]
mod tests {
    use super::{ratio, significant};
    use std::time::Duration;

    #[test]
    fn rates_keep_three_significant_digits() {
        assert_eq!(significant(971.24, 3), "971.2");
        assert_eq!(significant(46.31, 3), "46.3");
        assert_eq!(significant(1.947, 3), "1.95");
        assert_eq!(significant(0.0234, 3), "0.0234");
        assert_eq!(significant(0.0, 3), "0.0");
    }

    #[test]
    fn ratios_keep_two_significant_digits_below_a_hundredth() {
        let ms = Duration::from_millis;
        assert_eq!(ratio(ms(3), ms(2)), "1.50");
        assert_eq!(ratio(ms(5), ms(100)), "0.05");
        assert_eq!(ratio(ms(42), ms(10_000)), "0.0042");
        assert_eq!(ratio(ms(3), ms(100_000)), "0.000030");
    }
}
