//! `clsync`: run and check OpenCL-style kernels on the CPU.
//!
//! With no arguments it runs the bundled sample kernels at full size, checks
//! each against its sequential reference, and prints a table; `--check`
//! runs them under the checker. `clsync litmus PATH…` explores litmus tests
//! under the OpenCL memory model. `clsync run k.sim` runs an OpenCL C
//! kernel as `oclgrind-kernel` does.
//!
//! Where to start reading: [`Command`] (one subcommand a module: `litmus`,
//! `run`, and the samples here, with `tour_cl` for their OpenCL C table).

mod host;
mod litmus;
mod run;
mod tour_cl;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use clsync::{LaunchError, Runtime};
use clsync_samples::Size;

#[derive(Parser)]
#[command(
    name = "clsync",
    version,
    about = "OpenCL C's synchronization model on the CPU"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the sample kernels and check them against sequential references
    /// (the default).
    Samples(SamplesArgs),
    /// Explore litmus tests: every outcome the OpenCL memory model allows,
    /// whether the final condition is reachable, and data races.
    Litmus(litmus::LitmusArgs),
    /// Run an OpenCL C kernel from an Oclgrind `.sim` file or a `.cl` file,
    /// compiled to native code; `--check` checks it.
    Run(run::RunArgs),
}

#[derive(clap::Args, Default)]
struct SamplesArgs {
    /// Problem size.
    #[arg(long, value_enum, default_value_t = SizeArg::Full)]
    size: SizeArg,
    /// Worker threads (default: one per core).
    #[arg(long, value_parser = at_least_one)]
    threads: Option<usize>,
    /// Run only the samples whose name contains this.
    #[arg(long)]
    only: Option<String>,
    /// Run every launch under the checker (races, divergence, scopes,
    /// bounds); what it finds is printed and fails the run. `CLSYNC_CHECK=1`
    /// does the same.
    #[arg(long)]
    check: bool,
    /// With --check: print the checker's reports as JSON on stdout.
    #[arg(long, requires = "check")]
    json: bool,
}

#[derive(Clone, Copy, Default, ValueEnum)]
enum SizeArg {
    Small,
    #[default]
    Full,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli
        .command
        .unwrap_or(Command::Samples(SamplesArgs::default()))
    {
        Command::Samples(args) => samples(&args),
        Command::Litmus(args) => litmus::main(&args),
        Command::Run(args) => run::main(&args),
    }
}

/// A table row's last column for a result checked against its reference:
/// `yes`, or `NO:` and why, counted in `failed`.
fn verdict(verified: &Result<(), String>, failed: &mut usize) -> String {
    match verified {
        Ok(()) => "yes".to_string(),
        Err(e) => {
            *failed += 1;
            format!("NO: {e}")
        }
    }
}

/// A count of at least one (`--threads`, `--run`): zero threads could run
/// nothing, and zero runs would report on runs never made.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

fn samples(args: &SamplesArgs) -> ExitCode {
    let chosen: Vec<_> = clsync_samples::all()
        .into_iter()
        .filter(|s| {
            args.only
                .as_ref()
                .is_none_or(|o| s.name().contains(o.as_str()))
        })
        .collect();
    if chosen.is_empty() {
        let names: Vec<&str> = clsync_samples::all().iter().map(|s| s.name()).collect();
        eprintln!(
            "error: no sample's name contains `{}`; the samples are: {}",
            args.only.as_deref().unwrap_or_default(),
            names.join(", ")
        );
        return ExitCode::from(2);
    }
    let rt = match args.threads {
        Some(n) => Runtime::with_threads(n),
        None => Runtime::new(),
    }
    .with_checking(args.check);
    let size = match args.size {
        SizeArg::Small => Size::Small,
        SizeArg::Full => Size::Full,
    };
    println!(
        "clsync samples on {} worker thread(s){}",
        rt.threads(),
        if rt.checking() { ", checked" } else { "" }
    );
    println!(
        "{:<22} {:<48} {:>11} {:>20}  verified",
        "kernel", "size", "time", "throughput"
    );
    let mut failed = 0;
    for sample in chosen {
        match sample.run(&rt, size) {
            Ok(r) => {
                let verdict = verdict(&r.verified, &mut failed);
                println!(
                    "{:<22} {:<48} {:>9.2}ms {:>11.3} {:<8}  {}",
                    r.name,
                    r.size,
                    r.elapsed.as_secs_f64() * 1e3,
                    r.throughput.0,
                    r.throughput.1,
                    verdict
                );
            }
            Err(LaunchError::Reported(r)) if args.json => {
                failed += 1;
                println!("{}", clsync::checker::to_json(&r.reports));
            }
            Err(e) => {
                failed += 1;
                println!("{:<22} launch failed: {e}", sample.name());
            }
        }
    }
    if !args.json {
        failed += tour_cl::run(&rt, args.check, args.only.as_deref());
    }
    if failed > 0 {
        eprintln!("{failed} sample(s) failed");
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
