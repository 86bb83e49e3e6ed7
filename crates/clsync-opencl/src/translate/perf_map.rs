//! `perf`'s map of JIT code: with `CLSYNC_PERF_MAP=1`, each compiled
//! function's address, size and name are appended to `/tmp/perf-<pid>.map`,
//! the file `perf report` reads for code it finds in no binary (the format
//! of Linux's `tools/perf/Documentation/jit-interface.txt`; wasmtime's
//! `--profile=perfmap` writes the same). Without it, samples in compiled
//! kernels show as bare addresses.

use std::io::Write;

use cranelift_jit::JITModule;
use cranelift_module::FuncId;

/// The functions defined so far, and their code sizes.
#[derive(Default)]
pub(crate) struct PerfMap {
    /// Whether `CLSYNC_PERF_MAP` asked for the map.
    on: bool,
    defined: Vec<(FuncId, String, usize)>,
}

impl PerfMap {
    /// A map that records only where `CLSYNC_PERF_MAP=1`.
    pub fn from_env() -> PerfMap {
        PerfMap {
            on: std::env::var("CLSYNC_PERF_MAP").is_ok_and(|v| v == "1"),
            defined: Vec::new(),
        }
    }

    /// Notes function `id`, just defined from `ctx`, as `name`.
    pub fn defined(&mut self, id: FuncId, name: &str, ctx: &cranelift_codegen::Context) {
        if !self.on {
            return;
        }
        if let Some(code) = ctx.compiled_code() {
            let size = code.code_buffer().len();
            self.defined.push((id, name.to_string(), size));
        }
    }

    /// Appends every noted function, now finalized in `jit`, to the map.
    /// A map that cannot be written is said once on standard error: it
    /// only names code for a profiler.
    pub fn write(&self, jit: &JITModule) {
        if !self.on || self.defined.is_empty() {
            return;
        }
        let mut text = String::new();
        for (id, name, size) in &self.defined {
            let at = jit.get_finalized_function(*id) as usize;
            text.push_str(&format!("{at:x} {size:x} clsync:{name}\n"));
        }
        let path = format!("/tmp/perf-{}.map", std::process::id());
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(text.as_bytes()));
        if let Err(e) = written {
            eprintln!("clsync: CLSYNC_PERF_MAP: writing {path}: {e}");
        }
    }
}
