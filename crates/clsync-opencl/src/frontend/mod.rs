//! The front end: OpenCL C to SPIR-V with Debian's `clang-15` and
//! `llvm-spirv-15`.
//!
//! clang writes LLVM IR as text (`-S -emit-llvm`), from which the kernels'
//! argument names and type names are read (`-cl-kernel-arg-info`
//! metadata, which SPIR-V does not carry); `llvm-as-15` assembles it and
//! `llvm-spirv-15` translates it. Line tables come from
//! `-gline-tables-only`: full `-g` makes llvm-spirv-15 abort on some kernels
//! at `-O2`, and the line table is all a report needs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::BuildError;

mod rewrite;
pub use rewrite::{freeze_as_bitcast, run_time_sync_args};

/// What clang needs to know of one kernel's parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArgInfo {
    /// Parameter names, in order.
    pub names: Vec<String>,
    /// Their OpenCL C type names (`uint*`, `float4`).
    pub type_names: Vec<String>,
    /// Their qualifiers (`const`, `restrict`, `volatile`), as clang gives
    /// them.
    pub type_quals: Vec<String>,
    /// Their access qualifiers (`read_only`, `write_only`, `read_write`
    /// for images; `none` for the rest), as clang gives them.
    pub access_quals: Vec<String>,
}

/// The front end's output.
#[derive(Debug)]
pub struct Translated {
    /// The SPIR-V module.
    pub spirv: Vec<u8>,
    /// Per kernel, its parameters' names and types.
    pub args: HashMap<String, ArgInfo>,
    /// clang's warnings, as it printed them.
    pub log: String,
    /// Whether the source calls an OpenCL 1.x atomic function (see
    /// [`calls_legacy_atomics`]).
    pub legacy_atomics: bool,
    /// Whether it came from the kernel cache (see [`crate::cache`]).
    pub cached: bool,
}

/// Whether LLVM IR calls an OpenCL 1.x atomic function (`atomic_add`,
/// `atom_inc`, ...; mangled `_Z10atomic_addPU3AS1Vii`). llvm-spirv writes
/// them as SPIR-V atomics of work-group scope with relaxed semantics, the
/// same as a 2.0 `memory_scope_work_group` relaxed atomic; the 1.x
/// functions are atomic for every work-item that reaches the memory (the
/// device for global memory), so a program that uses them gets that
/// reading of the encoding.
pub fn calls_legacy_atomics(ir: &str) -> bool {
    const OPS: [&str; 11] = [
        "add", "sub", "xchg", "inc", "dec", "cmpxchg", "min", "max", "and", "or", "xor",
    ];
    ir.lines()
        .filter(|l| l.contains("call") || l.starts_with("declare"))
        .any(|l| {
            OPS.iter().any(|op| {
                let a = format!("atomic_{op}P");
                let b = format!("atom_{op}P");
                l.contains(&format!("{}{a}", a.len() - 1))
                    || l.contains(&format!("{}{b}", b.len() - 1))
            })
        })
}

/// The tools, by name; `CLSYNC_CLANG` and `CLSYNC_LLVM_SPIRV` override.
/// The front end's programs: the variable that names each, and its
/// default.
pub(crate) const TOOLS: [(&str, &str); 4] = [
    ("CLSYNC_CLANG", "clang-15"),
    ("CLSYNC_LLVM_AS", "llvm-as-15"),
    ("CLSYNC_LLVM_LINK", "llvm-link-15"),
    ("CLSYNC_LLVM_SPIRV", "llvm-spirv-15"),
];

/// The program the variable `var` names, or `default`.
pub(crate) fn tool(var: &str, default: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| default.to_string())
}

/// Maps OpenCL build options to clang's: `-cl-std`, `-D`, `-I`, `-w`,
/// `-Werror` and the `-cl-*` math options are clang's own; `-cl-opt-disable`
/// is `-O0`; `-g` is already on (line tables).
fn clang_options(options: &str) -> Result<(Vec<String>, bool, bool), BuildError> {
    let words = shell_words(options)?;
    let mut out = Vec::new();
    let mut std_given = false;
    let mut opt = true;
    let mut it = words.into_iter().peekable();
    while let Some(w) = it.next() {
        match w.as_str() {
            "-cl-opt-disable" => opt = false,
            "-g" | "-cl-kernel-arg-info" => {}
            "-D" | "-I" => {
                let v = it.next().ok_or_else(|| BuildError::Options(format!("`{w}` needs a value")))?;
                out.push(format!("{w}{v}"));
            }
            _ if w.starts_with("-cl-std=") => {
                std_given = true;
                out.push(w);
            }
            _ if w.starts_with("-D") || w.starts_with("-I") || w.starts_with("-W") || w == "-w" => out.push(w),
            "-cl-fast-relaxed-math"
            | "-cl-mad-enable"
            | "-cl-no-signed-zeros"
            | "-cl-finite-math-only"
            | "-cl-unsafe-math-optimizations"
            | "-cl-denorms-are-zero"
            | "-cl-single-precision-constant"
            | "-cl-fp32-correctly-rounded-divide-sqrt"
            | "-cl-uniform-work-group-size"
            | "-cl-no-subgroup-ifp" => out.push(w),
            _ => {
                return Err(BuildError::Options(format!(
                    "unknown build option `{w}` (clsync takes the OpenCL C compiler options of the OpenCL specification's section 5.8.4)"
                )))
            }
        }
    }
    Ok((out, std_given, opt))
}

/// Splits build options as a shell would (quotes, backslashes).
fn shell_words(s: &str) -> Result<Vec<String>, BuildError> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let mut quote: Option<char> = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), '\\') | (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    has = true;
                }
            }
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                has = true;
            }
            (None, c) if c.is_whitespace() => {
                if has {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            (None, c) => {
                cur.push(c);
                has = true;
            }
        }
    }
    if quote.is_some() {
        return Err(BuildError::Options(format!(
            "unterminated quote in build options `{s}`"
        )));
    }
    if has {
        out.push(cur);
    }
    Ok(out)
}

/// A fresh scratch folder, removed on drop.
struct Scratch(PathBuf);
impl Scratch {
    fn new() -> Result<Scratch, BuildError> {
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("clsync-build-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&p).map_err(|e| BuildError::Io(format!("{}: {e}", p.display())))?;
        Ok(Scratch(p))
    }
}
impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(cmd: &mut Command, what: &str) -> Result<(String, bool), BuildError> {
    let out = cmd.output().map_err(|e| {
        BuildError::Tool(format!(
            "{what} could not be started ({e}); `bash scripts/setup-debian.sh` installs clang-15 and llvm-spirv-15"
        ))
    })?;
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    Ok((log, out.status.success()))
}

/// Compiles the OpenCL C file `path` with `options`, through the kernel
/// cache ([`crate::cache`]).
pub fn compile_file(path: &Path, options: &str) -> Result<Translated, BuildError> {
    let build = || link(&[compile_unit_file(path, options)?]);
    let Ok(source) = std::fs::read(path) else {
        // clang says what is wrong with it.
        return build();
    };
    let name = path.file_name().unwrap_or_default().as_encoded_bytes();
    let parts: [&[u8]; 4] = [b"file", name, options.as_bytes(), &source];
    through_cache(&parts, &source, || preprocess_file(path, options), build)
}

/// `build`'s result from the kernel cache under the key of `parts`, or
/// built and kept there. A source that may include files (it says
/// `include`) is keyed by its text as `preprocess` gives it too, or not
/// cached if that fails.
fn through_cache(
    parts: &[&[u8]],
    source: &[u8],
    preprocess: impl FnOnce() -> Option<Vec<u8>>,
    build: impl FnOnce() -> Result<Translated, BuildError>,
) -> Result<Translated, BuildError> {
    if crate::cache::dir().is_none() {
        return build();
    }
    let expanded;
    let mut parts = parts.to_vec();
    if source.windows(7).any(|w| w == b"include") {
        match preprocess() {
            Some(p) => expanded = p,
            None => return build(),
        }
        parts.push(&expanded);
    }
    let key = crate::cache::key(&parts);
    if let Some(t) = crate::cache::load(&key) {
        return Ok(t);
    }
    let t = build()?;
    crate::cache::store(&key, &t);
    Ok(t)
}

/// A compiled translation unit, to be linked ([`link`]): its LLVM
/// bitcode, and its LLVM IR text, which units are linked from (LLVM 15's
/// bitcode marks a module without pointers as of opaque pointers, and
/// `llvm-link-15` then refuses it beside one with typed pointers) and
/// which keeps what SPIR-V does not (the parameters' names and types, the
/// 1.x atomics).
#[derive(Clone, Debug)]
pub struct Unit {
    bitcode: Vec<u8>,
    ir: String,
    /// clang's warnings, as it printed them.
    pub log: String,
}

/// clang, set up to compile `path` with `options` (the target, line
/// tables, argument info, the default header, the options, the file's
/// folder as the working and include folder), with the file name to give
/// it and whether to optimize; the caller adds the mode and the output.
fn clang_for(path: &Path, options: &str) -> Result<(Command, PathBuf, bool), BuildError> {
    let (opts, std_given, opt) = clang_options(options)?;
    let mut clang = Command::new(tool("CLSYNC_CLANG", "clang-15"));
    clang.args([
        "-target",
        "spir64",
        "-gline-tables-only",
        "-cl-kernel-arg-info",
    ]);
    clang.args(["-Xclang", "-finclude-default-header"]);
    if !std_given {
        // The specification's default: the highest OpenCL C 1.x version.
        clang.arg("-cl-std=CL1.2");
    }
    // Run in the file's folder on its bare name, so that the compiler's
    // messages name the file as the user knows it (a program built from
    // source lives in a scratch folder whose path would mean nothing).
    let mut source: &Path = path;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let dir = dir
            .canonicalize()
            .map_err(|e| BuildError::Io(format!("{}: {e}", dir.display())))?;
        clang.arg(format!("-I{}", dir.display()));
        clang.current_dir(&dir);
        source = Path::new(path.file_name().unwrap_or(path.as_os_str()));
    }
    // Include folders the user named relative to where they are: made
    // absolute, as clang runs elsewhere.
    let here = std::env::current_dir().unwrap_or_default();
    let opts: Vec<String> = opts
        .into_iter()
        .map(|o| match o.strip_prefix("-I") {
            Some(d) if !d.is_empty() && Path::new(d).is_relative() => {
                format!("-I{}", here.join(d).display())
            }
            _ => o,
        })
        .collect();
    clang.args(&opts);
    Ok((clang, source.to_path_buf(), opt))
}

/// `path` preprocessed as `compile_unit_file` compiles it (what it
/// includes expanded): the kernel cache's key for a source that includes
/// files. None if clang fails (the build then reports why).
fn preprocess_file(path: &Path, options: &str) -> Option<Vec<u8>> {
    let (mut clang, source, _) = clang_for(path, options).ok()?;
    // Without line markers, which name the file where it was (a scratch
    // folder for source built from memory).
    let out = clang.args(["-E", "-P"]).arg(source).output().ok()?;
    out.status.success().then_some(out.stdout)
}

/// Compiles the OpenCL C file `path` to a [`Unit`]; its `#include`s are
/// found beside it and in the options' `-I` folders.
pub fn compile_unit_file(path: &Path, options: &str) -> Result<Unit, BuildError> {
    let scratch = Scratch::new()?;
    let ll = scratch.0.join("k.ll");
    let bc = scratch.0.join("k.bc");
    let ll = ll
        .canonicalize()
        .or_else(|_| std::env::current_dir().map(|c| c.join(&ll)))
        .unwrap_or(ll);
    let (mut clang, source, opt) = clang_for(path, options)?;
    clang.args(["-emit-llvm", "-S"]);
    clang.arg(if opt { "-O2" } else { "-O0" });
    clang.arg("-o").arg(&ll).arg(source);
    let (log, ok) = run(&mut clang, "clang-15")?;
    if !ok {
        return Err(BuildError::Compile { log });
    }
    // LLVM's `freeze` (clang -O2 makes it of some loops) has no SPIR-V form
    // in llvm-spirv-15: it is rewritten to a no-op cast first.
    let mut text = std::fs::read_to_string(&ll)
        .map_err(|e| BuildError::Io(format!("{}: {e}", ll.display())))?;
    // Barriers and fences with run-time arguments, which llvm-spirv-15
    // aborts on, call dispatch functions over constants.
    let thawed = freeze_as_bitcast(&text);
    let rewritten = run_time_sync_args(thawed.as_deref().unwrap_or(&text)).or(thawed);
    if let Some(t) = rewritten {
        std::fs::write(&ll, &t).map_err(|e| BuildError::Io(format!("{}: {e}", ll.display())))?;
        text = t;
    }
    let (alog, ok) = run(
        Command::new(tool("CLSYNC_LLVM_AS", "llvm-as-15"))
            .arg(&ll)
            .arg("-o")
            .arg(&bc),
        "llvm-as-15",
    )?;
    if !ok {
        return Err(BuildError::Tool(format!("llvm-as-15 failed:\n{alog}")));
    }
    let bitcode =
        std::fs::read(&bc).map_err(|e| BuildError::Io(format!("{}: {e}", bc.display())))?;
    Ok(Unit {
        bitcode,
        ir: text,
        log,
    })
}

/// Compiles OpenCL C source held in memory to a [`Unit`], with `headers`
/// (include name, text) that its `#include "name"` finds, as
/// `clCompileProgram`'s embedded headers; `name` is the file name its
/// reports give.
pub fn compile_unit(
    source: &str,
    name: &str,
    options: &str,
    headers: &[(String, String)],
) -> Result<Unit, BuildError> {
    let scratch = Scratch::new()?;
    let write = |rel: &str, text: &str| -> Result<PathBuf, BuildError> {
        let rel = Path::new(rel);
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return Err(BuildError::Options(format!(
                "header name {}: a relative path inside the include folder",
                rel.display()
            )));
        }
        let p = scratch.0.join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d)
                .map_err(|e| BuildError::Io(format!("{}: {e}", d.display())))?;
        }
        std::fs::write(&p, text).map_err(|e| BuildError::Io(format!("{}: {e}", p.display())))?;
        Ok(p)
    };
    for (n, text) in headers {
        write(n, text)?;
    }
    let file = write(
        &Path::new(name)
            .file_name()
            .unwrap_or(std::ffi::OsStr::new("kernel.cl"))
            .to_string_lossy(),
        source,
    )?;
    let mut u = compile_unit_file(&file, options)?;
    let prefix = format!("{}/", scratch.0.display());
    u.log = u.log.replace(&prefix, "");
    Ok(u)
}

/// Links compiled units into one program (`llvm-link-15`) and translates
/// it to SPIR-V. One unit is translated as it is.
pub fn link(units: &[Unit]) -> Result<Translated, BuildError> {
    let scratch = Scratch::new()?;
    let spv = scratch.0.join("k.spv");
    let write = |name: String, bytes: &[u8]| -> Result<PathBuf, BuildError> {
        let p = scratch.0.join(name);
        std::fs::write(&p, bytes).map_err(|e| BuildError::Io(format!("{}: {e}", p.display())))?;
        Ok(p)
    };
    let bc = match units {
        [] => return Err(BuildError::Options("nothing to link".into())),
        [one] => write("u.bc".into(), &one.bitcode)?,
        many => {
            let mut inputs = Vec::new();
            for (i, u) in many.iter().enumerate() {
                inputs.push(write(format!("u{i}.ll"), u.ir.as_bytes())?);
            }
            let out = scratch.0.join("linked.bc");
            let (llog, ok) = run(
                Command::new(tool("CLSYNC_LLVM_LINK", "llvm-link-15"))
                    .args(&inputs)
                    .arg("-o")
                    .arg(&out),
                "llvm-link-15",
            )?;
            if !ok {
                return Err(BuildError::Compile { log: llog });
            }
            out
        }
    };
    let (slog, ok) = run(
        Command::new(tool("CLSYNC_LLVM_SPIRV", "llvm-spirv-15"))
            // Every extension but the aliasing one: its declarations
            // (`OpAliasDomainDeclINTEL`, from `restrict` and `noalias`) are
            // hints clsync has no use for, and rspirv cannot place them.
            .arg("--spirv-ext=+all,-SPV_INTEL_memory_access_aliasing")
            .arg(&bc)
            .arg("-o")
            .arg(&spv),
        "llvm-spirv-15",
    )?;
    if !ok {
        return Err(BuildError::Tool(format!(
            "llvm-spirv-15 could not translate the kernel:\n{slog}"
        )));
    }
    let spirv =
        std::fs::read(&spv).map_err(|e| BuildError::Io(format!("{}: {e}", spv.display())))?;
    let mut args = HashMap::new();
    for u in units {
        args.extend(kernel_arg_info(&u.ir));
    }
    Ok(Translated {
        spirv,
        args,
        legacy_atomics: units.iter().any(|u| calls_legacy_atomics(&u.ir)),
        log: units.iter().map(|u| u.log.as_str()).collect(),
        cached: false,
    })
}

/// Compiles OpenCL C source held in memory; `name` is the file name its
/// reports give.
pub fn compile_source(source: &str, name: &str, options: &str) -> Result<Translated, BuildError> {
    let parts: [&[u8]; 4] = [
        b"source",
        name.as_bytes(),
        options.as_bytes(),
        source.as_bytes(),
    ];
    let preprocess = || {
        let scratch = Scratch::new().ok()?;
        let file = scratch.0.join(Path::new(name).file_name()?);
        std::fs::write(&file, source).ok()?;
        preprocess_file(&file, options)
    };
    through_cache(&parts, source.as_bytes(), preprocess, || {
        link(&[compile_unit(source, name, options, &[])?])
    })
}

/// Reads `-cl-kernel-arg-info` metadata from LLVM IR text: each `define
/// ... spir_kernel ... @name(...)` line's `!kernel_arg_name !N` and
/// `!kernel_arg_type !M`, and the `!N = !{!"a", !"b"}` lines they name.
pub fn kernel_arg_info(ir: &str) -> HashMap<String, ArgInfo> {
    let mut nodes: HashMap<&str, Vec<String>> = HashMap::new();
    for line in ir.lines() {
        let Some(rest) = line.strip_prefix('!') else {
            continue;
        };
        let Some((id, body)) = rest.split_once(" = !{") else {
            continue;
        };
        let body = body.trim_end_matches('}');
        let items = body
            .split(", ")
            .filter_map(|x| {
                x.strip_prefix("!\"")
                    .map(|s| s.trim_end_matches('"').to_string())
            })
            .collect::<Vec<_>>();
        if !items.is_empty() || body.is_empty() {
            nodes.insert(id, items);
        }
    }
    let mut out = HashMap::new();
    for line in ir.lines() {
        if !line.starts_with("define") || !line.contains("spir_kernel") {
            continue;
        }
        let Some(at) = line.find('@') else { continue };
        let name: String = line[at + 1..].chars().take_while(|c| *c != '(').collect();
        let name = name.trim_matches('"').to_string();
        let meta = |key: &str| -> Vec<String> {
            let k = format!("!{key} !");
            line.find(&k)
                .map(|p| {
                    let id: String = line[p + k.len()..]
                        .chars()
                        .take_while(|c| c.is_ascii_digit())
                        .collect();
                    nodes.get(id.as_str()).cloned().unwrap_or_default()
                })
                .unwrap_or_default()
        };
        out.insert(
            name,
            ArgInfo {
                names: meta("kernel_arg_name"),
                type_names: meta("kernel_arg_type"),
                type_quals: meta("kernel_arg_type_qual"),
                access_quals: meta("kernel_arg_access_qual"),
            },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_map_to_clang() {
        let (o, std, opt) =
            clang_options("-cl-std=CL2.0 -D N=4 -DM=2 -I inc -cl-mad-enable").unwrap();
        assert!(std && opt);
        assert_eq!(
            o,
            vec!["-cl-std=CL2.0", "-DN=4", "-DM=2", "-Iinc", "-cl-mad-enable"]
        );
        let (_, std, opt) = clang_options("-cl-opt-disable").unwrap();
        assert!(!std && !opt);
        let e = clang_options("-fno-such-thing").unwrap_err();
        assert!(e.to_string().contains("-fno-such-thing"), "{e}");
        assert!(clang_options("-D \"A=1").is_err());
        assert!(clang_options("-D").is_err());
    }

    #[test]
    fn legacy_atomic_calls_are_found_by_their_mangled_names() {
        assert!(calls_legacy_atomics(
            "  %3 = call spir_func i32 @_Z10atomic_incPU3AS1Vi(ptr addrspace(1) %0)"
        ));
        assert!(calls_legacy_atomics(
            "declare spir_func i64 @_Z8atom_addPU3AS1Vmm(ptr, i64)"
        ));
        assert!(!calls_legacy_atomics("  %3 = call spir_func i32 @_Z25atomic_fetch_add_explicitPU3AS4VU7_Atomicii12memory_order12memory_scope(ptr %0, i32 1, i32 0, i32 1)"));
    }

    #[test]
    fn arg_info_from_ir_metadata() {
        let ir = "define dso_local spir_kernel void @k(i32 noundef %0, ptr addrspace(1) %1) #0 !kernel_arg_addr_space !4 !kernel_arg_type !6 !kernel_arg_type_qual !7 !kernel_arg_name !9 {\n\
                  !6 = !{!\"uint\", !\"float*\"}\n!7 = !{!\"\", !\"const\"}\n!9 = !{!\"n\", !\"data\"}\n";
        let a = &kernel_arg_info(ir)["k"];
        assert_eq!(a.names, vec!["n", "data"]);
        assert_eq!(a.type_names, vec!["uint", "float*"]);
        assert_eq!(a.type_quals, vec!["", "const"]);
    }
}
