//! Programs and kernels: what a build makes and what a launch takes.

use std::collections::HashMap;
use std::path::Path;

use clsync::{Launch, NdRange, Runtime};
use clsync_spirv::spirv::{Op, StorageClass, Word};
use clsync_spirv::{Constant, Module, Type};

use crate::exec::ctx::OFFSET_BITS;
use crate::exec::{self, Arg, RunError};
use crate::frontend::{self, ArgInfo};
use crate::translate::{self, Compiled, SlotPlan};
use crate::{BuildError, CompileError};

/// How a kernel parameter is passed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// A `global` pointer: a buffer (or null).
    Global,
    /// A `constant` pointer: a buffer (or null).
    Constant,
    /// A `local` pointer: a size in bytes.
    Local,
    /// A value: its size, and each scalar's (offset, bytes).
    Value {
        /// Bytes of the type.
        size: usize,
        /// Its scalars' offsets and sizes.
        leaves: Vec<(usize, usize)>,
    },
    /// A struct passed by value, which SPIR-V passes as a pointer to a
    /// private copy.
    ByVal {
        /// Bytes of the struct.
        size: usize,
    },
    /// An image (`image1d_t` ... `image2d_array_t`): its dimensionality
    /// (SPIR-V's `Dim`: 0 1D, 1 2D, 2 3D) and whether it is an array.
    Image {
        /// SPIR-V's `Dim`.
        dim: u32,
        /// Whether an array of images.
        arrayed: bool,
    },
    /// A `sampler_t`.
    Sampler,
    /// Something clsync cannot pass yet (pipes, queues).
    Unsupported(String),
}

impl ArgKind {
    /// What the kernel takes, in words.
    pub fn describe(&self) -> String {
        match self {
            ArgKind::Global => "a global buffer".into(),
            ArgKind::Constant => "a constant buffer".into(),
            ArgKind::Local => "local memory (a size)".into(),
            ArgKind::Value { size, .. } => format!("a value of {size} bytes"),
            ArgKind::ByVal { size } => format!("a struct of {size} bytes by value"),
            ArgKind::Image { dim, arrayed } => {
                let d = match dim {
                    0 => "1D",
                    1 => "2D",
                    2 => "3D",
                    5 => "buffer",
                    _ => "other",
                };
                format!("a {d} image{}", if *arrayed { " array" } else { "" })
            }
            ArgKind::Sampler => "a sampler".into(),
            ArgKind::Unsupported(what) => format!("{what}, which clsync does not pass yet"),
        }
    }
}

/// A kernel parameter.
#[derive(Clone, Debug)]
pub struct Param {
    /// Its name in the source (`argN` where unknown).
    pub name: String,
    /// Its OpenCL C type name (`uint*`, `float4`), where known.
    pub type_name: String,
    /// Its type qualifiers as clang gives them (`const`, `restrict`,
    /// `volatile`, space-separated), where known.
    pub type_qual: String,
    /// Its access qualifier (`read_only`, `write_only`, `read_write` for
    /// an image; `none`), where known.
    pub access_qual: String,
    /// How it is passed.
    pub kind: ArgKind,
    /// For pointers: the size of what it points to (the element size a
    /// dump of it uses), else the value's size.
    pub elem_size: usize,
    /// For pointers: whether the kernel may write through it (false for the
    /// other parameters). False for a pointer only
    /// where the compiler proves that every use of the pointer reads (see
    /// `translate::written`); a checked launch then leaves the reads of a
    /// buffer bound only to such parameters out of the race checker's
    /// records, since nothing can race with them.
    pub written: bool,
    /// For buffer pointers: how the kernel uses the buffer, where the
    /// compiler proves that each work-item reaches it only in its group's
    /// slice, in an order that races with no other work-item
    /// (`translate::slices`); a checked launch of one dimension then
    /// leaves its accesses out of the race checker's records. `None`
    /// for the rest.
    pub owned: Option<translate::BufferUse>,
}

/// A kernel's interface.
#[derive(Clone, Debug)]
pub struct KernelInfo {
    /// Its name.
    pub name: String,
    /// Its parameters.
    pub params: Vec<Param>,
    /// `reqd_work_group_size`, if declared.
    pub required_local_size: Option<[u32; 3]>,
}

/// A built program: its module, its compiled code, its program-scope
/// variables' memory.
pub struct Program {
    pub(crate) module: Module,
    /// Where each variable lives (both builds lay them out alike).
    pub(crate) plan: SlotPlan,
    /// The unchecked build and the checked one: one is made when the
    /// program is built (its errors are the build's), the other on the
    /// first launch that needs it.
    unchecked: std::sync::OnceLock<Result<Compiled, CompileError>>,
    checked: std::sync::OnceLock<Result<Compiled, CompileError>>,
    kernels: Vec<KernelInfo>,
    /// Program-scope variables' memory (global and constant), by id, as
    /// buffers of words (8-byte aligned); and each variable's size.
    memory: HashMap<Word, clsync::Buffer<u8>>,
    sizes: HashMap<Word, u64>,
    log: String,
    /// The SPIR-V module it was built from (a program's binary).
    spirv: Vec<u8>,
    /// Whether work-group-scope relaxed atomics are OpenCL 1.x atomics
    /// (see [`frontend::calls_legacy_atomics`]).
    pub(crate) legacy_atomics: bool,
    times: BuildTimes,
    /// The one kernel its builds compile, if it was built for one
    /// ([`Program::build_file_for`]).
    only: Option<String>,
}

/// How long a program took to build, and where its front end's work came
/// from.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BuildTimes {
    /// The front end: clang and llvm-spirv, or the kernel cache's read
    /// (zero for a program loaded from SPIR-V).
    pub front_end: std::time::Duration,
    /// Whether the front end's output came from the kernel cache
    /// ([`crate::cache`]).
    pub cached: bool,
    /// Reading the SPIR-V and generating the native code.
    pub code: std::time::Duration,
}

/// One kernel of a program.
pub struct Kernel<'p> {
    program: &'p Program,
    info: &'p KernelInfo,
    /// What its launches may run on (the coroutine engine whatever the
    /// kernel's shape; work-item loops without lane batches).
    engine: exec::Engine,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("kernels", &self.kernels)
            .finish_non_exhaustive()
    }
}

impl Program {
    /// Builds OpenCL C source; `name` is the file name reports give it.
    /// `options` are OpenCL build options (`-cl-std=CL2.0 -D N=4`).
    ///
    /// The front end's output is kept in the kernel cache
    /// ([`crate::cache`]), so a second build of the same source with the
    /// same options skips clang and llvm-spirv ([`Program::build_times`]).
    pub fn build(source: &str, name: &str, options: &str) -> Result<Program, BuildError> {
        Self::build_source(source, name, options, false)
    }

    /// Builds OpenCL C source, as [`Program::build`] does, for checked
    /// launches (see [`Program::build_file_checked`]).
    pub fn build_checked(source: &str, name: &str, options: &str) -> Result<Program, BuildError> {
        Self::build_source(source, name, options, true)
    }

    /// [`build`](Self::build) or [`build_checked`](Self::build_checked).
    fn build_source(
        source: &str,
        name: &str,
        options: &str,
        checked: bool,
    ) -> Result<Program, BuildError> {
        let start = std::time::Instant::now();
        let t = frontend::compile_source(source, name, options)?;
        Self::from_translated(t, start.elapsed(), checked, None)
    }

    /// Builds an OpenCL C file, as [`Program::build`] does.
    pub fn build_file(path: &Path, options: &str) -> Result<Program, BuildError> {
        Self::build_path(path, options, false, None)
    }

    /// [`build_file`](Self::build_file),
    /// [`build_file_checked`](Self::build_file_checked) or
    /// [`build_file_for`](Self::build_file_for) (`only`).
    fn build_path(
        path: &Path,
        options: &str,
        checked: bool,
        only: Option<&str>,
    ) -> Result<Program, BuildError> {
        let start = std::time::Instant::now();
        let t = frontend::compile_file(path, options)?;
        Self::from_translated(t, start.elapsed(), checked, only)
    }

    /// Builds an OpenCL C file for launches of one kernel, `kernel`: its
    /// builds (the checked one now when `checked`, else the unchecked one)
    /// generate code for that kernel and the functions it calls, not for
    /// the file's other kernels, whose launches it refuses
    /// ([`Program::kernel`] names the one it has). What `clsync run` uses:
    /// a file of many kernels costs the code of the one it runs.
    pub fn build_file_for(
        path: &Path,
        options: &str,
        kernel: &str,
        checked: bool,
    ) -> Result<Program, BuildError> {
        Self::build_path(path, options, checked, Some(kernel))
    }

    /// How long the build took.
    pub fn build_times(&self) -> BuildTimes {
        self.times
    }

    /// Links compiled units ([`frontend::compile_unit`]) into a program,
    /// as `clLinkProgram` does.
    pub fn link(units: &[frontend::Unit]) -> Result<Program, BuildError> {
        let start = std::time::Instant::now();
        let t = frontend::link(units)?;
        Self::from_translated(t, start.elapsed(), false, None)
    }

    /// Loads a SPIR-V module (what `clCreateProgramWithIL` takes).
    ///
    /// Without the source, a work-group-scope relaxed atomic on global
    /// memory is taken for an OpenCL 1.x atomic (device scope), the
    /// encoding llvm-spirv gives those.
    pub fn from_spirv(bytes: &[u8]) -> Result<Program, BuildError> {
        Self::new(bytes, &HashMap::new(), String::new(), true, false, None)
    }

    /// Builds an OpenCL C file, as [`Program::build_file`] does, for
    /// checked launches: the checked build is made now (its errors are the
    /// build's) and the unchecked one only if an unchecked launch comes,
    /// where `build_file` makes the unchecked one now. What `clsync run
    /// --check` uses: a program's code is generated once, not twice.
    pub fn build_file_checked(path: &Path, options: &str) -> Result<Program, BuildError> {
        Self::build_path(path, options, true, None)
    }

    fn from_translated(
        t: frontend::Translated,
        front_end: std::time::Duration,
        checked: bool,
        only: Option<&str>,
    ) -> Result<Program, BuildError> {
        let mut p = Self::new(&t.spirv, &t.args, t.log, t.legacy_atomics, checked, only)?;
        p.times.front_end = front_end;
        p.times.cached = t.cached;
        Ok(p)
    }

    fn new(
        bytes: &[u8],
        args: &HashMap<String, ArgInfo>,
        log: String,
        legacy_atomics: bool,
        checked: bool,
        only: Option<&str>,
    ) -> Result<Program, BuildError> {
        let start = std::time::Instant::now();
        let module = Module::from_bytes(bytes)?;
        let compiled =
            translate::compile_kernels(&module, checked, only).map_err(BuildError::Translate)?;
        let plan = compiled.plan.clone();
        let (unchecked, checked) = if checked {
            (
                std::sync::OnceLock::new(),
                std::sync::OnceLock::from(Ok(compiled)),
            )
        } else {
            (
                std::sync::OnceLock::from(Ok(compiled)),
                std::sync::OnceLock::new(),
            )
        };
        let mut kernels = Vec::new();
        for e in &module.entry_points {
            kernels
                .push(kernel_info(&module, e, args.get(&e.name)).map_err(BuildError::Translate)?);
        }
        let mut p = Program {
            module,
            plan,
            unchecked,
            checked,
            kernels,
            memory: HashMap::new(),
            sizes: HashMap::new(),
            log,
            spirv: bytes.to_vec(),
            legacy_atomics,
            times: BuildTimes::default(),
            only: only.map(str::to_string),
        };
        p.allocate().map_err(BuildError::Translate)?;
        p.times.code = start.elapsed();
        Ok(p)
    }

    /// Sizes every variable; allocates and initializes the program-scope
    /// ones.
    fn allocate(&mut self) -> Result<(), CompileError> {
        let m = &self.module;
        let plan = &self.plan;
        let ids = plan
            .program
            .iter()
            .map(|(id, _)| *id)
            .chain(plan.workgroup.iter().map(|(id, _, _)| *id))
            .chain(plan.private.iter().map(|(id, _, _)| *id))
            .collect::<Vec<_>>();
        for id in ids {
            let pointee = pointee_of(m, id, &self.plan)?;
            self.sizes.insert(id, m.layout(pointee)?.size);
        }
        for (id, _) in &plan.program {
            let size = self.sizes[id] as usize;
            let name = m
                .globals
                .iter()
                .find(|g| g.id == *id)
                .map(|g| g.name.clone())
                .unwrap_or_default();
            let buf = clsync::Buffer::<u8>::new(size + exec::ALIGN).named(name);
            let g = m
                .globals
                .iter()
                .find(|g| g.id == *id)
                .expect("planned from the globals");
            if let Some(init) = g.initializer {
                let mut bytes = vec![0u8; size];
                const_bytes(m, &self.plan, init, &mut bytes)?;
                let p = exec::aligned(buf.raw_bytes().0);
                // SAFETY: the buffer has `size` bytes after its aligned
                // start, and no kernel runs yet.
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, size) };
            }
            self.memory.insert(*id, buf);
        }
        Ok(())
    }

    /// clang's warnings from the build.
    pub fn build_log(&self) -> &str {
        &self.log
    }

    /// The SPIR-V module the program was built from: what
    /// [`Program::from_spirv`] loads again (the binary an OpenCL platform
    /// hands out for `CL_PROGRAM_BINARIES`).
    pub fn spirv(&self) -> &[u8] {
        &self.spirv
    }

    /// The kernels, in the module's order.
    pub fn kernels(&self) -> &[KernelInfo] {
        &self.kernels
    }

    /// The kernel named `name`.
    pub fn kernel(&self, name: &str) -> Result<Kernel<'_>, BuildError> {
        // A program built for one kernel has no code for the others.
        let built = |k: &&KernelInfo| self.only.as_deref().is_none_or(|o| o == k.name);
        let info = self
            .kernels
            .iter()
            .filter(built)
            .find(|k| k.name == name)
            .ok_or_else(|| BuildError::NoKernel {
                name: name.to_string(),
                available: self
                    .kernels
                    .iter()
                    .filter(built)
                    .map(|k| k.name.clone())
                    .collect(),
            })?;
        Ok(Kernel {
            program: self,
            info,
            engine: exec::Engine::default(),
        })
    }

    /// The build for a checked (`true`) or unchecked launch, made now if
    /// it was not made with the program.
    pub(crate) fn build_for(&self, checked: bool) -> Result<&Compiled, CompileError> {
        let build = if checked {
            &self.checked
        } else {
            &self.unchecked
        };
        build
            .get_or_init(|| translate::compile_kernels(&self.module, checked, self.only.as_deref()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// A program-scope variable's memory.
    pub(crate) fn program_memory(&self, id: Word) -> (*mut u8, usize) {
        let b = &self.memory[&id];
        (exec::aligned(b.raw_bytes().0), self.sizes[&id] as usize)
    }

    /// The size of a variable.
    pub(crate) fn variable_size(&self, id: Word) -> u64 {
        self.sizes.get(&id).copied().unwrap_or(0)
    }
}

impl Kernel<'_> {
    /// The kernel's interface.
    pub fn info(&self) -> &KernelInfo {
        self.info
    }

    /// How an unchecked launch of the kernel runs: as work-item loops
    /// (`Ok`), or on the coroutine engine, with the reason (`Err`): a
    /// barrier in a called function or in a sub-group, a collective, an
    /// async copy. [`engine_for`](Self::engine_for) says it for either
    /// build.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let p = clsync_opencl::Program::build(
    ///     "kernel void k(global int* a) { a[get_global_id(0)] = 1; }",
    ///     "k.cl",
    ///     "",
    /// )?;
    /// assert!(p.kernel("k")?.engine().is_ok());
    /// # Ok(()) }
    /// ```
    pub fn engine(&self) -> Result<(), String> {
        self.engine_for(false)
    }

    /// How a checked (`true`) or unchecked launch of the kernel runs, as
    /// [`engine`](Self::engine) says it for unchecked ones (the build it
    /// asks about is made now if it was not).
    pub fn engine_for(&self, checked: bool) -> Result<(), String> {
        if self.engine.coroutines {
            return Err("asked for the coroutine engine".into());
        }
        let c = self.program.build_for(checked).map_err(|e| e.to_string())?;
        match (
            c.groups.contains_key(&self.info.name),
            c.refusals.get(&self.info.name),
        ) {
            (true, _) => Ok(()),
            (false, Some(why)) => Err(why.clone()),
            (false, None) => Err("not compiled as work-item loops".into()),
        }
    }

    /// The kernel, to run on the coroutine engine even where it could run
    /// as work-item loops: to compare the two engines on one kernel (as
    /// `CLSYNC_ENGINE=coroutines` does for every kernel).
    pub fn on_coroutines(self) -> Self {
        Kernel {
            engine: exec::Engine {
                coroutines: true,
                ..self.engine
            },
            ..self
        }
    }

    /// The kernel, to run its work-item loops one work-item per iteration
    /// even where it has lane batches (see [`lanes`](Self::lanes)): to
    /// compare the two on one kernel.
    pub fn without_lanes(self) -> Self {
        Kernel {
            engine: exec::Engine {
                no_lanes: true,
                ..self.engine
            },
            ..self
        }
    }

    /// For each state of the kernel's unchecked work-item loops (0: its
    /// start, `k`: after its `k`-th barrier), whether it has a function of
    /// lane batches, which runs four work-items of a row per iteration, or
    /// why not (a branch that diverges, a call). Empty where the kernel
    /// runs on coroutines or has too many barriers for functions per
    /// state.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let p = clsync_opencl::Program::build(
    ///     "kernel void k(global int* a) { a[get_global_id(0)] *= 2; }",
    ///     "k.cl",
    ///     "",
    /// )?;
    /// assert_eq!(p.kernel("k")?.lanes(), vec![Ok(())]);
    /// # Ok(()) }
    /// ```
    pub fn lanes(&self) -> Vec<Result<(), String>> {
        let Ok(c) = self.program.build_for(false) else {
            return Vec::new();
        };
        c.groups.get(&self.info.name).map_or(Vec::new(), |g| {
            g.batched
                .iter()
                .map(|r| r.as_ref().map(|_| ()).map_err(Clone::clone))
                .collect()
        })
    }

    /// Runs the kernel over `range` with `args` on `rt`. An invalid
    /// access stops the work-item and fails the launch, naming it. On a
    /// runtime [with checking](Runtime::with_checking) (or with
    /// `CLSYNC_CHECK` set) the launch is checked, and what it finds is the
    /// error [`RunError::Found`].
    pub fn run(&self, rt: &Runtime, range: NdRange, args: &[Arg<'_>]) -> Result<(), RunError> {
        let found = self.run_with(rt, range, args, |l| l, false)?;
        if found.is_empty() {
            Ok(())
        } else {
            Err(RunError::Found(Box::new(found)))
        }
    }

    /// Runs the kernel with `configure` setting up the launch (schedule,
    /// watchdog, `checked`). The launch is checked when `checked`, the
    /// configured launch or the runtime asks for it: an invalid access is
    /// then reported and skipped, as Oclgrind does, and the launch goes on;
    /// the findings are returned.
    pub fn run_with(
        &self,
        rt: &Runtime,
        range: NdRange,
        args: &[Arg<'_>],
        configure: impl FnOnce(Launch) -> Launch,
        checked: bool,
    ) -> Result<exec::Findings, RunError> {
        let launch = configure(Launch::new(self.info.name.clone(), range));
        let checked = checked || launch.is_checked() || rt.checking();
        let build = self
            .program
            .build_for(checked)
            .map_err(|error| RunError::CheckedBuild {
                kernel: self.info.name.clone(),
                error,
            })?;
        // Every entry point of the module has its stub in either build.
        let entry = build.entries[&self.info.name];
        exec::run(
            self.program,
            build,
            self.info,
            entry,
            rt,
            launch.checked(checked),
            args,
            checked,
            self.engine,
        )
    }
}

fn pointee_of(m: &Module, id: Word, _c: &SlotPlan) -> Result<Word, CompileError> {
    if let Some(g) = m.globals.iter().find(|g| g.id == id) {
        return Ok(g.pointee);
    }
    for f in &m.functions {
        // A by-value parameter's private copy (see `translate::byval`).
        if let Some((_, ty)) = f.params.iter().find(|(p, _)| *p == id) {
            if let Type::Pointer { pointee, .. } = m.ty(*ty)? {
                return Ok(*pointee);
            }
        }
        for b in &f.blocks {
            for (i, _) in &b.instructions {
                if i.result_id == Some(id) {
                    if let Type::Pointer { pointee, .. } = m.ty(i.result_type.unwrap_or(0))? {
                        return Ok(*pointee);
                    }
                }
            }
        }
    }
    Err(CompileError::Internal(format!("variable %{id} not found")))
}

fn kernel_info(
    m: &Module,
    e: &clsync_spirv::EntryPoint,
    args: Option<&ArgInfo>,
) -> Result<KernelInfo, CompileError> {
    let f = m
        .function(e.function)
        .ok_or_else(|| CompileError::Invalid(format!("kernel `{}` has no body", e.name)))?;
    let spirv_types = m.kernel_arg_types.get(&e.name);
    let written = translate::written_params(m, f);
    let owned = translate::owned_params(m, f);
    let mut params = Vec::new();
    for (i, (id, ty)) in f.params.iter().enumerate() {
        let name = args
            .and_then(|a| a.names.get(i).cloned())
            .or_else(|| m.names.get(id).cloned())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| format!("arg{i}"));
        let type_name = args
            .and_then(|a| a.type_names.get(i).cloned())
            .or_else(|| spirv_types.and_then(|t| t.get(i).cloned()))
            .unwrap_or_default();
        let type_qual = args
            .and_then(|a| a.type_quals.get(i).cloned())
            .unwrap_or_default();
        let access_qual = args
            .and_then(|a| a.access_quals.get(i).cloned())
            .unwrap_or_default();
        let byval = translate::is_byval(m, *id);
        let (kind, elem_size) = match m.ty(*ty)? {
            Type::Pointer { storage, pointee } => {
                let es = m.layout(*pointee).map(|l| l.size as usize).unwrap_or(1);
                let kind = match storage {
                    _ if byval => ArgKind::ByVal { size: es },
                    StorageClass::CrossWorkgroup | StorageClass::Generic => ArgKind::Global,
                    StorageClass::UniformConstant => ArgKind::Constant,
                    StorageClass::Workgroup => ArgKind::Local,
                    other => ArgKind::Unsupported(format!("a pointer to {other:?}")),
                };
                (kind, es)
            }
            Type::Opaque("image") => {
                let (dim, arrayed) = m.images.get(ty).copied().unwrap_or((1, false));
                (ArgKind::Image { dim, arrayed }, 8)
            }
            Type::Opaque("sampler") => (ArgKind::Sampler, 8),
            Type::Opaque(what) => (ArgKind::Unsupported(format!("an {what}")), 8),
            Type::Event => (ArgKind::Unsupported("an event".into()), 8),
            _ => {
                let size = m.layout(*ty)?.size as usize;
                let leaves = m
                    .leaves(*ty)?
                    .iter()
                    .map(|l| Ok((l.offset as usize, m.layout(l.ty)?.size as usize)))
                    .collect::<Result<Vec<_>, CompileError>>()?;
                (ArgKind::Value { size, leaves }, size)
            }
        };
        params.push(Param {
            name,
            type_name,
            type_qual,
            access_qual,
            kind,
            elem_size,
            written: written.get(i).copied().unwrap_or(true),
            owned: owned.get(i).copied().flatten(),
        });
    }
    Ok(KernelInfo {
        name: e.name.clone(),
        params,
        required_local_size: e.required_local_size,
    })
}

/// The bytes of constant `id`, written into `out` (which is zeroed).
fn const_bytes(m: &Module, c: &SlotPlan, id: Word, out: &mut [u8]) -> Result<(), CompileError> {
    if let Some(p) = const_pointer(m, c, id)? {
        let n = out.len().min(8);
        out[..n].copy_from_slice(&p.to_le_bytes()[..n]);
        return Ok(());
    }
    match m.constants.get(&id) {
        Some(Constant::Scalar { bits, .. }) | Some(Constant::Sampler { bits, .. }) => {
            let n = out.len().min(8);
            out[..n].copy_from_slice(&bits.to_le_bytes()[..n]);
        }
        Some(Constant::Null { .. }) => {}
        Some(Constant::Composite { ty, parts }) => {
            let offsets: Vec<u64> = match m.ty(*ty)? {
                Type::Struct { .. } => m.member_offsets(*ty)?,
                Type::Vector { elem, .. } | Type::Array { elem, .. } => {
                    let s = m.layout(*elem)?.size;
                    (0..parts.len() as u64).map(|k| k * s).collect()
                }
                t => {
                    return Err(CompileError::Invalid(format!(
                        "a composite constant of type {t:?}"
                    )))
                }
            };
            for (k, part) in parts.iter().enumerate() {
                let pty = m.part_type(*ty, k as u64)?;
                let size = m.layout(pty)?.size as usize;
                let off = offsets[k] as usize;
                const_bytes(m, c, *part, &mut out[off..off + size])?;
            }
        }
        Some(Constant::Op { op, .. }) => {
            return Err(CompileError::Unsupported(format!(
                "the constant expression Op{op:?} in an initializer"
            )))
        }
        None => {
            return Err(CompileError::Invalid(format!(
                "initializer %{id} is not a constant"
            )))
        }
    }
    Ok(())
}

/// The pointer value of a constant address expression, if `id` is one.
fn const_pointer(m: &Module, c: &SlotPlan, id: Word) -> Result<Option<u64>, CompileError> {
    if let Some(slot) = c.of.get(&id) {
        return Ok(Some(slot << OFFSET_BITS));
    }
    let Some(Constant::Op { op, operands, .. }) = m.constants.get(&id) else {
        return Ok(None);
    };
    let base = operands.first().copied().unwrap_or(0);
    match op {
        Op::PtrCastToGeneric | Op::GenericCastToPtr | Op::Bitcast => const_pointer(m, c, base),
        Op::AccessChain
        | Op::InBoundsAccessChain
        | Op::PtrAccessChain
        | Op::InBoundsPtrAccessChain => {
            let Some(mut p) = const_pointer(m, c, base)? else {
                return Ok(None);
            };
            let base_ty = match m.constants.get(&base) {
                Some(k) => k.ty(),
                None => m
                    .globals
                    .iter()
                    .find(|g| g.id == base)
                    .map(|g| g.ty)
                    .unwrap_or(0),
            };
            let Type::Pointer { mut pointee, .. } = m.ty(base_ty)?.clone() else {
                return Err(CompileError::Invalid(
                    "an access chain on a non-pointer".into(),
                ));
            };
            let value = |w: Word| match m.constants.get(&w) {
                Some(Constant::Scalar { bits, .. }) => Ok(*bits),
                Some(Constant::Null { .. }) => Ok(0),
                _ => Err(CompileError::Unsupported(
                    "a run-time index in a constant expression".into(),
                )),
            };
            let ptr_chain = matches!(op, Op::PtrAccessChain | Op::InBoundsPtrAccessChain);
            for (k, w) in operands[1..].iter().enumerate() {
                let i = value(*w)?;
                if ptr_chain && k == 0 {
                    p = p.wrapping_add(i.wrapping_mul(m.layout(pointee)?.size));
                    continue;
                }
                match m.ty(pointee)? {
                    Type::Struct { .. } => {
                        p += m.member_offsets(pointee)?[i as usize];
                    }
                    _ => {
                        let e = m.part_type(pointee, i)?;
                        p = p.wrapping_add(i.wrapping_mul(m.layout(e)?.size));
                    }
                }
                pointee = m.part_type(pointee, i)?;
            }
            Ok(Some(p))
        }
        _ => Ok(None),
    }
}
