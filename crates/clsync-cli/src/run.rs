//! `clsync run`: an OpenCL C kernel from an Oclgrind `.sim` file, or from a
//! `.cl` file with its range and arguments on the command line, compiled,
//! run on clsync's runtime, and (with `--check`) checked.
//!
//! Oclgrind's habits carry over: `clsync run --check k.sim` takes the same
//! files and options as `oclgrind-kernel`, prints each diagnostic with
//! `error:` and Oclgrind's headline first, and dumps the marked buffers in
//! its format. As with `oclgrind-kernel`, diagnostics alone leave the exit
//! status 0; `--error-exitcode N` makes them fail the run, as in valgrind.

use std::path::PathBuf;
use std::process::ExitCode;

use clsync::{NdRange, Runtime};
use clsync_opencl::sim::{self, Sim, SimArg};
use clsync_opencl::{BuildError, Program, RunError};

/// `clsync run`'s arguments.
#[derive(clap::Args)]
pub struct RunArgs {
    /// An Oclgrind `.sim` file, or an OpenCL C `.cl` file (then give
    /// --kernel, --global and the arguments). Or none, and a host program
    /// after `--`.
    #[arg(required_unless_present = "program")]
    file: Option<PathBuf>,
    /// A host program and its arguments, after `--`: run it with every
    /// kernel it launches on clsync's OpenCL platform, checked, as
    /// `oclgrind ./app` does (`clsync run -- ./app args`).
    #[arg(last = true, num_args = 1..)]
    program: Vec<String>,
    /// Check the run: invalid accesses are reported and skipped, barrier
    /// divergence is reported. The program is built unoptimized
    /// (`-cl-opt-disable`), so that what is checked is what was written.
    #[arg(long)]
    check: bool,
    /// OpenCL build options (`-cl-std=CL2.0 -D N=4`).
    #[arg(long, allow_hyphen_values = true, default_value = "")]
    build_options: String,
    /// Worker threads (default: one per core).
    #[arg(long, value_parser = crate::at_least_one)]
    threads: Option<usize>,
    /// Print one JSON document on stdout instead of the text: the kernel,
    /// every diagnostic (Oclgrind's headline, the work-items, the lines),
    /// a launch error if any, and the dumped buffers.
    #[arg(long)]
    json: bool,
    /// Exit with this status when a diagnostic was printed (default: 0, as
    /// oclgrind-kernel); with a host program, when any launch reported.
    #[arg(long, default_value_t = 0)]
    error_exitcode: u8,
    /// Print how long the build took on stderr: the front end (or the
    /// kernel cache's read) and the code generation. `--json` always has
    /// them.
    #[arg(long)]
    build_time: bool,
    /// With a `.cl` file: the kernel.
    #[arg(long)]
    kernel: Option<String>,
    /// With a `.cl` file: the global size, `X[,Y[,Z]]`.
    #[arg(long)]
    global: Option<String>,
    /// With a `.cl` file: the local size, `X[,Y[,Z]]`.
    #[arg(long)]
    local: Option<String>,
    /// With a `.cl` file: one argument, as a `.sim` line gives it
    /// (`"<size=64 fill=0 dump>"`, `256`); repeat for each, in order.
    #[arg(long = "arg", allow_hyphen_values = true)]
    args: Vec<String>,
    /// Oclgrind options that clsync takes and needs not (its checks are
    /// always on with --check): `--data-races`, `--uninitialized`, `-q`.
    #[arg(long, hide = true)]
    data_races: bool,
    /// See `--data-races`.
    #[arg(long, hide = true)]
    uninitialized: bool,
}

fn sizes(s: &str, what: &str) -> Result<String, String> {
    let v: Vec<&str> = s.split([',', 'x', ' ']).filter(|w| !w.is_empty()).collect();
    if v.is_empty() || v.len() > 3 || v.iter().any(|w| w.parse::<usize>().is_err()) {
        return Err(format!("--{what} {s}: one to three sizes, `X[,Y[,Z]]`"));
    }
    Ok(v.join(" "))
}

/// The `.sim` text the command line describes for a `.cl` file.
fn sim_of_command_line(a: &RunArgs, file: &std::path::Path) -> Result<Sim, String> {
    let kernel = a
        .kernel
        .as_deref()
        .ok_or("with a .cl file, --kernel NAME is needed")?;
    let global = sizes(
        a.global
            .as_deref()
            .ok_or("with a .cl file, --global X[,Y[,Z]] is needed")?,
        "global",
    )?;
    let local = match &a.local {
        Some(l) => sizes(l, "local")?,
        None => "0 0 0".to_string(),
    };
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut text = format!("{name}\n{kernel}\n{global}\n{local}\n");
    for arg in &a.args {
        text.push_str(arg);
        text.push('\n');
    }
    let virtual_path = file.with_extension("sim");
    Sim::parse(&text, &virtual_path).map_err(|e| e.to_string())
}

pub fn main(a: &RunArgs) -> ExitCode {
    let file = match (&a.file, a.program.is_empty()) {
        (None, false) => return crate::host::run(&a.program, a.threads, a.error_exitcode),
        (Some(f), true) => f,
        (Some(_), false) => {
            eprintln!("error: give a .sim or .cl file, or a host program after `--`, not both");
            return ExitCode::from(2);
        }
        (None, true) => unreachable!("clap requires one"),
    };
    let is_cl = file.extension().is_some_and(|e| e == "cl");
    let sim = if is_cl {
        sim_of_command_line(a, file)
    } else {
        Sim::load(file).map_err(|e| e.to_string())
    };
    let sim = match sim {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    // A checked run checks the program as written, as Oclgrind does (it
    // runs clang's unoptimized code): the optimizer is free to fold away
    // what undefined behaviour it proves, an index past a static array's
    // end in a loop it unrolls, say, and the checker could not report it.
    let options = if a.check {
        format!("{} -cl-opt-disable", a.build_options)
    } else {
        a.build_options.clone()
    };
    // The build the run uses is the one made (a checked run compiles the
    // checked code only), for the one kernel it runs.
    let built = Program::build_file_for(&sim.kernel_file, &options, &sim.kernel, a.check);
    let program = match built {
        Ok(p) => p,
        Err(BuildError::Compile { log }) => {
            eprint!("{log}");
            eprintln!("error: {} did not compile", sim.kernel_file.display());
            return ExitCode::from(1);
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    if !program.build_log().is_empty() {
        eprint!("{}", program.build_log());
    }
    let times = program.build_times();
    if a.build_time {
        eprintln!(
            "clsync: built {} in {:.3} s: front end {:.3} s{}, code {:.3} s",
            sim.kernel_file.display(),
            (times.front_end + times.code).as_secs_f64(),
            times.front_end.as_secs_f64(),
            if times.cached { " (kernel cache)" } else { "" },
            times.code.as_secs_f64(),
        );
    }
    let kernel = match program.kernel(&sim.kernel) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("error: {}: {e}", sim.path.display());
            return ExitCode::from(2);
        }
    };
    let args = match sim.arguments(kernel.info()) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let rt = match a.threads {
        Some(n) => Runtime::with_threads(n),
        None => Runtime::new(),
    }
    .with_checking(a.check);
    let mut range = NdRange::new(sim.global);
    if let Some(l) = sim.local {
        range = range.local(l);
    }
    let bound: Vec<_> = args.iter().map(SimArg::arg).collect();
    let mut found: Vec<serde_json::Value> = Vec::new();
    let mut launch_error = None;
    // A checked run goes on after a divergent barrier, as Oclgrind's does,
    // so that the buffers it dumps are the ones Oclgrind's users expect.
    match kernel.run_with(&rt, range, &bound, |l| l.run_on_divergence(true), a.check) {
        Ok(f) => {
            for r in &f.diagnostics {
                found.push(r.to_json());
                if !a.json {
                    eprintln!("{r}");
                }
            }
            for r in &f.checker {
                let mut v = r.to_json();
                v["headline"] = clsync_opencl::exec::report::headline(r).into();
                found.push(v);
                if !a.json {
                    eprintln!("{}", clsync_opencl::exec::report::render(r));
                }
            }
        }
        Err(RunError::Arguments { kernel, message }) => {
            eprintln!(
                "error: {}: kernel `{kernel}`: {message}",
                sim.path.display()
            );
            return ExitCode::from(2);
        }
        Err(e @ (RunError::CheckedBuild { .. } | RunError::Found(_))) => {
            // run_with returns findings rather than `Found`; a checked
            // build that fails where the fast one built is clsync's bug.
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
        Err(RunError::Launch {
            error,
            diagnostics: f,
        }) => {
            for r in &f {
                found.push(r.to_json());
                if !a.json {
                    eprintln!("{r}");
                }
            }
            if !a.json {
                eprintln!("{}", clsync_opencl::exec::report::launch_error(&error));
            }
            launch_error = Some(error.to_string());
        }
    }
    let diagnostics = found.len() + usize::from(launch_error.is_some());
    if a.json {
        let dumps: Vec<serde_json::Value> = sim::dump_values(kernel.info(), &args)
            .into_iter()
            .map(|d| serde_json::json!({"argument": d.name, "bytes": d.bytes, "values": d.values}))
            .collect();
        let doc = serde_json::json!({
            "kernel": sim.kernel,
            "checked": a.check,
            "build": {
                "front_end_s": times.front_end.as_secs_f64(),
                "cached": times.cached,
                "code_s": times.code.as_secs_f64(),
            },
            "diagnostics": found,
            "launch_error": launch_error,
            "dumps": dumps,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("JSON values always serialize")
        );
    } else {
        print!("{}", sim::dumps(kernel.info(), &args));
    }
    if diagnostics > 0 && a.error_exitcode != 0 {
        return ExitCode::from(a.error_exitcode);
    }
    ExitCode::SUCCESS
}
