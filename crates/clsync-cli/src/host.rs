//! `clsync run -- ./app args`: an OpenCL host program run on clsync's
//! platform with every kernel it launches checked, as `oclgrind ./app`
//! runs one on Oclgrind's.
//!
//! The program sees clsync's platform alone: the ICD loader is pointed
//! (`OCL_ICD_VENDORS`) at a vendors folder of its own that names only
//! clsync's driver, `libclsync_icd.so` beside this executable, and
//! `CLSYNC_CHECK=1` has the driver check every launch. Reports go to
//! stderr with the kernels' source lines; the program's exit status is
//! clsync's.

use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// The driver: `CLSYNC_ICD` if set, else `libclsync_icd.so` beside this
/// executable or in cargo's `deps` folder beside it (where a build of the
/// command leaves the driver it depends on), the newer of the two.
fn driver() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("CLSYNC_ICD") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find clsync's own path: {e}"))?;
    let dir = exe.parent().unwrap_or(std::path::Path::new("."));
    // Beside it (a build of the driver itself puts it there) or in `deps`
    // (a build of this command does): the newer, where both are.
    let newest = [
        dir.join("libclsync_icd.so"),
        dir.join("deps/libclsync_icd.so"),
    ]
    .into_iter()
    .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
    .max_by_key(|(t, _)| *t);
    let lib = dir.join("libclsync_icd.so");
    if let Some((_, p)) = newest {
        Ok(p)
    } else {
        Err(format!(
            "clsync's OpenCL driver is not built: no {} (build it with \
             `cargo build --release -p clsync-icd`, or set CLSYNC_ICD to its path)",
            lib.display()
        ))
    }
}

/// Runs `program` with its arguments; `threads` sets the driver's worker
/// count. With `error_exitcode` nonzero, a run that printed a report exits
/// with it (the program's own status otherwise), for scripts and CI.
pub fn run(program: &[String], threads: Option<usize>, error_exitcode: u8) -> ExitCode {
    let lib = match driver() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let vendors = std::env::temp_dir().join(format!("clsync-run-{}", std::process::id()));
    let icd = vendors.join("clsync.icd");
    if let Err(e) = std::fs::create_dir_all(&vendors)
        .and_then(|_| std::fs::write(&icd, format!("{}\n", lib.display())))
    {
        eprintln!("error: cannot write {}: {e}", icd.display());
        return ExitCode::from(2);
    }
    let mut cmd = Command::new(&program[0]);
    cmd.args(&program[1..])
        .env("OCL_ICD_VENDORS", &vendors)
        .env("CLSYNC_CHECK", "1");
    if let Some(n) = threads {
        cmd.env("CLSYNC_THREADS", n.to_string());
    }
    // The driver appends each report's first line here.
    let reports = vendors.join("reports");
    cmd.env("CLSYNC_REPORTS_FILE", &reports);
    let status = cmd.status();
    let found = std::fs::read_to_string(&reports).map_or(0, |s| s.lines().count());
    let _ = std::fs::remove_dir_all(&vendors);
    if found > 0 && error_exitcode != 0 {
        if let Ok(s) = &status {
            if s.code().is_some() {
                return ExitCode::from(error_exitcode);
            }
        }
    }
    match status {
        Ok(s) => match s.code() {
            Some(c) => ExitCode::from(c.clamp(0, 255) as u8),
            None => {
                eprintln!("error: {} was killed by a signal", program[0]);
                ExitCode::from(128)
            }
        },
        Err(e) => {
            eprintln!("error: cannot run {}: {e}", program[0]);
            ExitCode::from(127)
        }
    }
}
