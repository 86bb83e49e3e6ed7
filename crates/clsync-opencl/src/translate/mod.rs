//! SPIR-V to native code through Cranelift.
//!
//! Every function of the module becomes one Cranelift function whose first
//! parameter is the work-item's [`ItemCtx`](crate::exec::ctx::ItemCtx) and whose
//! other parameters and results are the SPIR-V values *flattened*: a vector,
//! struct or array value is its scalars in order ([`Module::leaves`]), each
//! a Cranelift value, so that vector arithmetic is lane-wise scalar code and
//! aggregates need no memory. Each kernel also gets an entry stub,
//! `extern "C" fn(*mut ItemCtx, *const u64)`, which reads the flattened
//! arguments, one 64-bit word each, and calls the kernel's function.
//!
//! Memory accesses go through the slot table (see [`crate::exec::ctx`]);
//! barriers, copies, faults and most of the math library are calls into
//! [`crate::exec::helpers`]. After each call that can stop the work-item
//! the code tests [`ItemCtx::status`](crate::exec::ctx::ItemCtx::status) and
//! returns.

mod arith;
mod atomics;
mod byval;
mod cfg;
mod checks;
mod composite;
pub mod continuation;
mod counted;
mod ext;
mod fold;
mod function;
mod group;
mod group_atomics;
mod half;
mod image;
mod indices;
mod intervals;
mod kernel_code;
mod local_atomics;
mod memory;
mod perf_map;
mod promote;
mod shadow;
mod slices;
mod slots;
mod symbols;
mod uniform;
mod unswitch;
mod written;

use std::collections::HashMap;

use clsync::sync::Site;
use clsync_spirv::spirv::{Op, Word};
use clsync_spirv::{Module, Operand, SourceLine, Type};
use cranelift_codegen::ir::{types, Type as ClType};
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncId, Linkage, Module as _};

use crate::CompileError;

/// The entry stub's type.
pub type EntryFn = unsafe extern "C" fn(*mut crate::exec::ctx::ItemCtx, *const u64);

/// A continuation function's type (see [`continuation`]): context,
/// arguments, frames (each `GroupEntry::frame_bytes` rounded up to words,
/// the stride the code has as a constant), state, where each work-item
/// stopped; where the group stopped.
pub type ContinuationFn =
    unsafe extern "C" fn(*mut crate::exec::ctx::ItemCtx, *const u64, *mut u8, u32, *mut u32) -> u32;

pub(crate) use byval::is_byval;
pub use function::BarrierSpec;
pub(crate) use slices::owned_params;
pub use slices::Use as BufferUse;
use slots::plan_slots;
pub use slots::SlotPlan;
use symbols::{cold_trampolines, helper_symbols, sig};
pub(crate) use written::written_params;

/// The most barriers of a kernel whose unchecked build also has a
/// continuation function per state (each is a compilation of the kernel).
const MAX_SPECIALIZED_BARRIERS: usize = 8;

/// The address space reserved for one module's code: far more than the
/// largest program's, and within the ±2 GiB a PC-relative call reaches.
const CODE_RESERVE: usize = 256 << 20;

impl Drop for Compiled {
    fn drop(&mut self) {
        if let Some(jit) = self.jit.take() {
            // SAFETY: the function pointers of this module are in `entries`
            // and `groups`, which die with it; a launch runs them only
            // while it borrows this `Compiled` (`Program` owns it, and the
            // platform's kernels and commands hold the `Program`), so none
            // runs now or later.
            unsafe { jit.free_memory() };
        }
    }
}

/// A kernel compiled to run as work-item loops.
pub struct GroupEntry {
    /// Its continuation function.
    pub func: ContinuationFn,
    /// Unchecked builds of kernels of few barriers: a function for each
    /// state (index 0 starts the kernel, `k` resumes after barrier `k`),
    /// whose loop carries only what that state's code uses; empty
    /// otherwise.
    pub by_state: Vec<ContinuationFn>,
    /// Beside `by_state`: for each state, its function of lane batches
    /// (see [`continuation::batch`](continuation)), which a group whose
    /// local size along x is a multiple of [`continuation::LANES`] runs,
    /// or why the state has none.
    pub batched: Vec<Result<ContinuationFn, String>>,
    /// Its barriers, by number minus one.
    pub barriers: Vec<BarrierSpec>,
    /// Bytes of a work-item's frame.
    pub frame_bytes: usize,
    /// Checked builds: the byte ranges of the private block that the
    /// kernel and what it calls keep in memory (their variables that are
    /// not promoted to registers), which each work-item keeps while the
    /// others run (`exec::loops::Privates`). Empty in unchecked builds.
    pub private_spans: Vec<(usize, usize)>,
}

/// A compiled module.
pub struct Compiled {
    /// Keeps the code alive (freed with it: see `Drop`).
    jit: Option<JITModule>,
    /// Each kernel's entry stub.
    pub entries: HashMap<String, EntryFn>,
    /// The kernels that run as work-item loops.
    pub groups: HashMap<String, GroupEntry>,
    /// Why each other kernel runs on coroutines.
    pub refusals: HashMap<String, String>,
    /// The work-item built-ins the module reads, a bit per index of
    /// [`ItemCtx::builtins`](crate::exec::ctx::ItemCtx::builtins).
    pub builtins_used: u64,
    /// Which bytes of each type a checked build copies are values rather
    /// than padding (a copy of unwritten padding to global memory is no
    /// error; of an unwritten value, it is).
    pub significant: Vec<Vec<bool>>,
    /// Source locations by the index the code passes.
    pub sites: Vec<Site>,
    /// The variables' slots.
    pub plan: SlotPlan,
}

// SAFETY: the JIT module is only kept alive, never touched after
// finalization; the code it owns is immutable and may run on any thread.
unsafe impl Send for Compiled {}
// SAFETY: as for Send: nothing mutates it after construction.
unsafe impl Sync for Compiled {}

/// The Cranelift type of a scalar SPIR-V type.
pub(crate) fn cl_type(m: &Module, ty: Word) -> Result<ClType, CompileError> {
    Ok(match m.ty(ty)? {
        Type::Bool => types::I8,
        Type::Int(8) => types::I8,
        Type::Int(16) => types::I16,
        Type::Int(32) => types::I32,
        Type::Int(64) => types::I64,
        Type::Float(32) => types::F32,
        Type::Float(64) => types::F64,
        // A half is held as the float of its value (see `half`).
        Type::Float(16) => types::F32,
        Type::Pointer { .. } | Type::Event | Type::Opaque(_) => types::I64,
        other => {
            return Err(CompileError::Unsupported(format!(
                "a value of type {other:?} (%{ty})"
            )))
        }
    })
}

/// The flattened Cranelift types of a SPIR-V type.
pub(crate) fn flat_types(m: &Module, ty: Word) -> Result<Vec<ClType>, CompileError> {
    m.leaves(ty)?
        .iter()
        .map(|l| cl_type(m, l.ty))
        .collect::<Result<_, _>>()
}

/// Interned source file names (a [`Site`] holds a `&'static str`): each
/// distinct name is leaked once per process.
fn intern(name: &str) -> &'static str {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut set = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(s) = set.get(name) {
        return s;
    }
    let s: &'static str = Box::leak(name.to_string().into_boxed_str());
    set.insert(s);
    s
}

/// The program's source locations, shared by the functions as they are
/// translated.
#[derive(Default)]
pub(crate) struct Sites {
    list: Vec<Site>,
    index: HashMap<(Word, u32, u32), u32>,
}

impl Sites {
    /// The index of `line`'s site.
    pub(crate) fn of(&mut self, m: &Module, line: SourceLine) -> u32 {
        let key = (line.file, line.line, line.column);
        if let Some(i) = self.index.get(&key) {
            return *i;
        }
        let file = m.file_name(line);
        let file = file.rsplit('/').next().unwrap_or(file);
        let i = self.list.len() as u32;
        self.list.push(Site {
            file: intern(file),
            line: line.line,
            column: line.column.max(1),
        });
        self.index.insert(key, i);
        i
    }
}

/// What every function translation shares.
pub(crate) struct Shared<'m> {
    pub m: &'m Module,
    pub plan: &'m SlotPlan,
    pub funcs: HashMap<Word, FuncId>,
    pub helpers: HashMap<&'static str, FuncId>,
    /// The helpers called on cold paths through a trampoline that
    /// preserves every register (see `cold_trampolines`): its name, its
    /// id, whether the helper returns a value.
    pub cold: HashMap<&'static str, (&'static str, FuncId, bool)>,
    pub sites: Sites,
    /// Whether this is the checked build: every access is reported to the
    /// checker, atomics and fences go through the runtime.
    pub checked: bool,
    /// The checked build: the functions that only kernels whose atomics
    /// and async copies never reach local memory run
    /// (`local_atomics::settled_by_writes`), where a race-free load of bytes a
    /// plain write wrote needs no runtime call.
    pub settled_by_writes: std::collections::HashSet<Word>,
    /// The work-item built-ins the code reads, a bit per index of
    /// [`ItemCtx::builtins`](crate::exec::ctx::ItemCtx::builtins).
    pub builtins_used: u64,
    /// Which bytes of a copied type are values rather than padding, by the
    /// index the checked build's copies pass.
    pub significant: Vec<Vec<bool>>,
    /// The functions to name in `perf`'s map (`CLSYNC_PERF_MAP=1`).
    pub perf_map: perf_map::PerfMap,
}

/// Compiles every function and kernel of `m`; `checked`: the build whose
/// accesses, atomics and fences the checker sees. A panic of the code
/// generator (an assertion of Cranelift's on code the translator got wrong)
/// is an internal compiler error naming it, not a crash of the program.
pub fn compile(m: &Module, checked: bool) -> Result<Compiled, CompileError> {
    compile_kernels(m, checked, None)
}

/// [`compile`], for one kernel when `only` names it: its entry, its
/// work-item loops and the functions it calls, not the module's other
/// kernels (`clsync run` launches one; PoCL likewise generates a kernel's
/// code at its first launch).
pub fn compile_kernels(
    m: &Module,
    checked: bool,
    only: Option<&str>,
) -> Result<Compiled, CompileError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        compile_module(m, checked, only)
    }))
    .unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic".into());
        Err(CompileError::Internal(format!(
            "the code generator panicked: {what}"
        )))
    })
}

/// The functions kernel `name`'s entry point reaches through calls.
fn reachable(m: &Module, name: &str) -> std::collections::HashSet<Word> {
    let roots = m.entry_points.iter().filter(|e| e.name == name);
    reachable_from(m, roots.map(|e| e.function).collect())
}

/// The built-in variable `id` is, if it is one (its `BuiltIn` decoration).
pub(crate) fn builtin_of(m: &Module, id: Word) -> Option<clsync_spirv::spirv::BuiltIn> {
    let d = m
        .decorations
        .get(&id)?
        .get(clsync_spirv::spirv::Decoration::BuiltIn)?;
    match d.first() {
        Some(Operand::BuiltIn(b)) => Some(*b),
        _ => None,
    }
}

/// The ids among `inst`'s operands, in order.
pub(crate) fn id_operands(inst: &clsync_spirv::Instruction) -> impl Iterator<Item = Word> + '_ {
    inst.operands.iter().filter_map(|o| match o {
        Operand::IdRef(w) => Some(*w),
        _ => None,
    })
}

/// The functions `roots` are and reach through calls.
pub(crate) fn reachable_from(m: &Module, mut todo: Vec<Word>) -> std::collections::HashSet<Word> {
    let mut seen = std::collections::HashSet::new();
    while let Some(id) = todo.pop() {
        if !seen.insert(id) {
            continue;
        }
        let Some(f) = m.function(id) else { continue };
        for (inst, _) in f.blocks.iter().flat_map(|b| &b.instructions) {
            if let (Op::FunctionCall, Some(Operand::IdRef(c))) =
                (inst.class.opcode, inst.operands.first())
            {
                todo.push(*c);
            }
        }
    }
    seen
}

fn compile_module(m: &Module, checked: bool, only: Option<&str>) -> Result<Compiled, CompileError> {
    let wanted = only.map(|k| reachable(m, k));
    let compiles = |id: Word| wanted.as_ref().is_none_or(|w| w.contains(&id));
    let launched = |name: &str| only.is_none_or(|k| k == name);
    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| {
        f.set(k, v)
            .map_err(|e| CompileError::Internal(format!("cranelift setting {k}: {e}")))
    };
    set(&mut flags, "opt_level", "speed")?;
    // The IR verifier runs in debug builds (the tests'), where it catches a
    // translator's mistake at its instruction; release builds skip it (a
    // sixth of a checked build's code generation).
    let verify = if cfg!(debug_assertions) {
        "true"
    } else {
        "false"
    };
    set(&mut flags, "enable_verifier", verify)?;
    set(&mut flags, "is_pic", "false")?;
    set(&mut flags, "use_colocated_libcalls", "false")?;
    let isa = cranelift_native::builder()
        .map_err(|e| CompileError::Internal(format!("this machine: {e}")))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| CompileError::Internal(format!("code generator: {e}")))?;
    let call_conv = isa.default_call_conv();
    let mut jb = JITBuilder::with_isa(isa, default_libcall_names());
    // All the module's code in one reserved region (address space, not
    // memory, until used): calls between its functions are 32-bit
    // PC-relative, which code in segments mapped far apart (the default
    // provider's) can overflow.
    let arena = cranelift_jit::ArenaMemoryProvider::new_with_size(CODE_RESERVE)
        .map_err(|e| CompileError::Internal(format!("reserving code memory: {e}")))?;
    jb.memory_provider(Box::new(arena));
    let hs = helper_symbols();
    for (name, addr, _, _) in &hs {
        jb.symbol(*name, *addr);
    }
    let mut jit = JITModule::new(jb);
    let plan = plan_slots(m)?;
    let mut shared = Shared {
        m,
        plan: &plan,
        funcs: HashMap::new(),
        helpers: HashMap::new(),
        cold: HashMap::new(),
        sites: Sites::default(),
        checked,
        settled_by_writes: if checked {
            local_atomics::settled_by_writes(m)
        } else {
            Default::default()
        },
        builtins_used: 0,
        significant: Vec::new(),
        perf_map: perf_map::PerfMap::from_env(),
    };
    let jerr = |e: cranelift_module::ModuleError| CompileError::Internal(format!("{e:?}"));
    for (name, _, params, rets) in &hs {
        let id = jit
            .declare_function(name, Linkage::Import, &sig(call_conv, params, rets))
            .map_err(jerr)?;
        shared.helpers.insert(*name, id);
    }
    let mut ctx = jit.make_context();
    let mut fbc = cranelift_frontend::FunctionBuilderContext::new();
    cold_trampolines(&mut shared, &mut jit, &mut ctx, &mut fbc, &hs)?;
    for f in m.functions.iter().filter(|f| compiles(f.id)) {
        let s = function::signature(m, f, call_conv)?;
        let id = jit
            .declare_function(&format!("f{}", f.id), Linkage::Local, &s)
            .map_err(jerr)?;
        shared.funcs.insert(f.id, id);
    }
    for f in m.functions.iter().filter(|f| compiles(f.id)) {
        ctx.func.signature = function::signature(m, f, call_conv)?;
        function::translate(&mut shared, &mut jit, &mut ctx.func, &mut fbc, f)?;
        let id = shared.funcs[&f.id];
        prepare(&mut ctx, jit.isa()).map_err(|e| {
            CompileError::Internal(format!("code generation of `{}`: {e:?}", f.name))
        })?;
        dump(&f.name, &mut ctx);
        jit.define_function(id, &mut ctx).map_err(|e| {
            CompileError::Internal(format!(
                "code generation of `{}`: {e:?}",
                if f.name.is_empty() { "?" } else { &f.name }
            ))
        })?;
        shared.perf_map.defined(id, &f.name, &ctx);
        jit.clear_context(&mut ctx);
    }
    let mut entry_ids = Vec::new();
    for e in m.entry_points.iter().filter(|e| launched(&e.name)) {
        let f = m
            .function(e.function)
            .ok_or_else(|| CompileError::Invalid(format!("kernel `{}` has no body", e.name)))?;
        ctx.func.signature = sig(call_conv, &[types::I64, types::I64], &[]);
        function::entry_stub(&mut shared, &mut jit, &mut ctx.func, &mut fbc, f)?;
        let id = jit
            .declare_function(
                &format!("kernel_{}", e.name),
                Linkage::Local,
                &ctx.func.signature,
            )
            .map_err(jerr)?;
        jit.define_function(id, &mut ctx).map_err(jerr)?;
        shared
            .perf_map
            .defined(id, &format!("kernel_{}", e.name), &ctx);
        jit.clear_context(&mut ctx);
        entry_ids.push((e.name.clone(), id));
    }
    let mut cont_ids = Vec::new();
    let mut refusals = HashMap::new();
    for e in m.entry_points.iter().filter(|e| launched(&e.name)) {
        let Some(f) = m.function(e.function) else {
            continue;
        };
        let general = continuation_function(
            &mut shared,
            &mut jit,
            &mut ctx,
            f,
            &e.name,
            call_conv,
            None,
            false,
        );
        jit.clear_context(&mut ctx);
        match general {
            Ok((id, barriers, frame_bytes)) => {
                let spans = match checked {
                    true => continuation::private_spans(m, &plan, f),
                    false => Vec::new(),
                };
                // A function for state `k` alone, one work-item or lane
                // batches per iteration. Each was translated from the same
                // plan in the same order, so it lays the frame out alike
                // (checked).
                let mut one = |k: u32, lanes: bool| {
                    let r = continuation_function(
                        &mut shared,
                        &mut jit,
                        &mut ctx,
                        f,
                        &e.name,
                        call_conv,
                        Some(k),
                        lanes,
                    );
                    jit.clear_context(&mut ctx);
                    match r {
                        Ok((id, b, bytes)) if b.len() == barriers.len() && bytes == frame_bytes => {
                            Ok(id)
                        }
                        Ok(_) => Err("its frame is laid out otherwise".to_string()),
                        Err(why) => Err(why),
                    }
                };
                // An unchecked kernel of few barriers also gets a function
                // per state, and, where it has them, one of lane batches.
                let mut by_state = Vec::new();
                if !checked && barriers.len() <= MAX_SPECIALIZED_BARRIERS {
                    for k in 0..=barriers.len() as u32 {
                        match one(k, false) {
                            Ok(id) => by_state.push(id),
                            Err(_) => {
                                by_state.clear();
                                break;
                            }
                        }
                    }
                }
                let mut batched: Vec<_> =
                    (0..by_state.len() as u32).map(|k| one(k, true)).collect();
                // Frames in rows of lanes (every state batchable) are
                // read by batched functions alone: all of them, or none.
                if let Some(Err(why)) = batched.iter().find(|r| r.is_err()).cloned() {
                    if lane_rows(m, f) {
                        batched = vec![Err(why); batched.len()];
                    }
                }
                let parts = (by_state, batched, barriers, frame_bytes, spans);
                cont_ids.push((e.name.clone(), id, parts))
            }
            Err(why) => {
                refusals.insert(e.name.clone(), why);
            }
        }
    }
    jit.finalize_definitions().map_err(jerr)?;
    shared.perf_map.write(&jit);
    let mut entries = HashMap::new();
    for (name, id) in entry_ids {
        let p = jit.get_finalized_function(id);
        // SAFETY: the stub was generated with exactly `EntryFn`'s signature
        // (two 64-bit parameters, no result) in the platform's calling
        // convention, which is the C one.
        let f: EntryFn = unsafe { std::mem::transmute::<*const u8, EntryFn>(p) };
        entries.insert(name, f);
    }
    let mut groups = HashMap::new();
    let function = |id: FuncId| {
        let p = jit.get_finalized_function(id);
        // SAFETY: generated with `continuation_signature`, exactly
        // `ContinuationFn`'s parameters and result in the platform's C
        // calling convention.
        unsafe { std::mem::transmute::<*const u8, ContinuationFn>(p) }
    };
    for (name, id, (by_state, batched, barriers, frame_bytes, private_spans)) in cont_ids {
        groups.insert(
            name,
            GroupEntry {
                func: function(id),
                by_state: by_state.into_iter().map(function).collect(),
                batched: batched.into_iter().map(|r| r.map(function)).collect(),
                barriers,
                frame_bytes,
                private_spans,
            },
        );
    }
    let sites = std::mem::take(&mut shared.sites.list);
    Ok(Compiled {
        jit: Some(jit),
        entries,
        groups,
        refusals,
        builtins_used: shared.builtins_used,
        significant: std::mem::take(&mut shared.significant),
        sites,
        plan,
    })
}

/// Whether kernel `f`'s batched functions lay frames out in rows (see
/// `continuation::all_batchable`).
fn lane_rows(m: &Module, f: &clsync_spirv::Function) -> bool {
    let f = continuation::body(m, f);
    let Ok(plan) = continuation::plan(m, f) else {
        return false;
    };
    let u = uniform::analyze(m, f);
    let order = cfg::reverse_postorder(f);
    continuation::all_batchable(m, f, &order, &u, &plan.cross)
}

/// Compiles kernel `f` as a continuation function, or says why it runs on
/// coroutines: its shape ([`continuation::plan`]), or an error of the
/// translation or of Cranelift's verifier, which leave the coroutine build
/// as it was.
#[allow(clippy::too_many_arguments)]
fn continuation_function(
    shared: &mut Shared<'_>,
    jit: &mut JITModule,
    ctx: &mut cranelift_codegen::Context,
    f: &clsync_spirv::Function,
    name: &str,
    call_conv: CallConv,
    only_state: Option<u32>,
    lanes: bool,
) -> Result<(FuncId, Vec<BarrierSpec>, usize), String> {
    let f = continuation::body(shared.m, f);
    let mut plan = continuation::plan(shared.m, f)?;
    plan.only_state = only_state;
    if let (true, Some(k)) = (lanes, only_state) {
        let u = uniform::analyze(shared.m, f);
        let order = cfg::reverse_postorder(f);
        let rows = continuation::all_batchable(shared.m, f, &order, &u, &plan.cross);
        plan.lanes = Some(continuation::batchable(
            shared.m,
            f,
            &order,
            u,
            k,
            &plan.cross,
            rows,
        )?);
    }
    if shared.checked {
        // What a checked build computes again may report again (an access
        // chain's static index): it keeps every value in the frame.
        plan.remat.clear();
    }
    ctx.func.signature = function::continuation_signature(call_conv);
    let mut fbc = cranelift_frontend::FunctionBuilderContext::new();
    let (barriers, frame_bytes, head) =
        function::translate_continuation(shared, jit, &mut ctx.func, &mut fbc, f, plan)
            .map_err(|e| e.to_string())?;
    let symbol = match only_state {
        Some(k) if lanes => format!("continuation_{name}_state{k}_lanes"),
        Some(k) => format!("continuation_{name}_state{k}"),
        None => format!("continuation_{name}"),
    };
    let id = jit
        .declare_function(&symbol, Linkage::Local, &ctx.func.signature)
        .map_err(|e| format!("{e:?}"))?;
    prepare(ctx, jit.isa()).map_err(|e| format!("code generation: {e:?}"))?;
    if unswitch::unswitch(&mut ctx.func, head) {
        // The copies' dead sides go before the dump shows them.
        ctx.compute_cfg();
        ctx.compute_domtree();
        ctx.eliminate_unreachable_code(jit.isa())
            .map_err(|e| format!("code generation: {e:?}"))?;
    }
    dump(&symbol, ctx);
    jit.define_function(id, ctx)
        .map_err(|e| format!("code generation: {e:?}"))?;
    shared.perf_map.defined(id, &symbol, ctx);
    dump_code(ctx);
    Ok((id, barriers, frame_bytes))
}

/// Cranelift's first passes (unreachable code, constant phis), then the
/// translation's own folds (`fold`), before `define_function` compiles
/// the function (whose passes find nothing more to do there).
fn prepare(
    ctx: &mut cranelift_codegen::Context,
    isa: &dyn cranelift_codegen::isa::TargetIsa,
) -> cranelift_codegen::CodegenResult<()> {
    ctx.compute_cfg();
    ctx.compute_domtree();
    ctx.eliminate_unreachable_code(isa)?;
    ctx.remove_constant_phis(isa)?;
    ctx.func.dfg.resolve_all_aliases();
    fold::distances(&mut ctx.func);
    Ok(())
}

/// With `CLSYNC_DUMP_CLIF` set: prints the function's Cranelift IR to
/// standard error, and asks for its machine code's listing, which
/// [`dump_code`] prints once it is made; for reading what the translator
/// made.
fn dump(name: &str, ctx: &mut cranelift_codegen::Context) {
    if std::env::var_os("CLSYNC_DUMP_CLIF").is_none() {
        return;
    }
    eprintln!("; {name}\n{}", ctx.func.display());
    ctx.want_disasm = true;
}

/// The machine code listing [`dump`] asked for.
fn dump_code(ctx: &cranelift_codegen::Context) {
    if let Some(text) = ctx.compiled_code().and_then(|c| c.vcode.as_ref()) {
        eprintln!("; machine code\n{text}");
    }
}

#[cfg(test)]
mod tests {
    /// Every runtime call the translator emits (`self.helper("name", ..)`)
    /// is declared to the JIT: an undeclared one would be a panic at
    /// compile time of the first kernel that needs it.
    #[test]
    fn every_helper_the_translator_calls_is_declared() {
        let declared: Vec<&str> = super::helper_symbols().iter().map(|h| h.0).collect();
        let sources = [
            include_str!("function.rs"),
            include_str!("memory.rs"),
            include_str!("arith.rs"),
            include_str!("ext.rs"),
            include_str!("group.rs"),
            include_str!("atomics.rs"),
            include_str!("composite.rs"),
            include_str!("cfg.rs"),
            include_str!("continuation/mod.rs"),
            include_str!("shadow.rs"),
            include_str!("image.rs"),
            include_str!("half.rs"),
            include_str!("byval.rs"),
        ];
        let mut called = 0;
        for src in sources {
            for part in src.split("helper(\"").skip(1) {
                let name = part.split('"').next().unwrap();
                assert!(
                    declared.contains(&name),
                    "`{name}` is called but not declared"
                );
                called += 1;
            }
            for part in src.split("let name = match").skip(1) {
                for piece in part.split("=> \"").skip(1).take(6) {
                    let name = piece.split('"').next().unwrap();
                    if name.starts_with("clsync_") {
                        assert!(
                            declared.contains(&name),
                            "`{name}` is called but not declared"
                        );
                    }
                }
            }
        }
        assert!(
            called >= 10,
            "the sources were not read: {called} calls found"
        );
    }
}
