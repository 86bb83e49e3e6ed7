//! Work-item loops: a kernel compiled as a *continuation function* that
//! runs every work-item of a group from one barrier to the next, in a loop
//! inside the compiled code, so that a work-group is one call per barrier
//! interval instead of one coroutine per work-item (PoCL's work-item loops,
//! Karrenberg and Hack's continuations).
//!
//! The function is `fn(ctx, args, frames, state, reached) -> u32`:
//! `state` 0 starts the kernel, `k` resumes it after its `k`-th barrier.
//! For each work-item in local linear order it computes the work-item's
//! ids (by counting, from the group's), runs the work-item until it
//! reaches a barrier or returns, and records where it stopped in
//! `reached[l]` (0 returned, `k` at barrier `k`). It returns the last
//! work-item's place (the caller compares the others' with it: a
//! difference is a barrier divergence), or [`STOPPED`] as soon as one
//! stopped (a fault, a cancelled launch; its ids are then in the context).
//! The ids a work-item's code reads are made in the loop's head from its
//! counters, the others only where a call given the context may read
//! them (called functions, the fault handler), which stores them there.
//!
//! The loop carries as few values as it can, so that they stay in
//! registers: the local linear id, the local x id, the y and z ids only
//! where the code reads an id that needs them (a call or the fault path
//! divides the linear id instead), and the work-item's frame pointer,
//! which steps by the frame's size, a constant of the code.
//!
//! The values that live across a barrier are stored in the work-item's
//! frame (`stride` bytes at `frames + l * stride`) before the next
//! work-item runs and loaded from it when the work-item resumes. The
//! kernel's own private variables are one block that every work-item of
//! the group uses in turn: a kernel with barriers saves them in the frame
//! with the live values and brings them back when it resumes (variables of
//! called functions live only during the call, which has no barrier). So
//! the slot table does not change during a call, and its loads, the
//! arguments' and the group's constants are hoisted out of the work-item
//! loop by Cranelift.
//!
//! `plan` decides which kernels can run so and which values each barrier
//! keeps; this module generates the code. In it the values live across a
//! barrier are Cranelift variables, so that the resume blocks' definitions
//! (loaded from the frame, or computed again) meet the original ones where
//! control flow joins.

use std::collections::HashMap;

use clsync_spirv::spirv::{Op, Word};
use clsync_spirv::{Function, Instruction};
use cranelift_codegen::ir::{self, types, InstBuilder, Type as ClType, Value};
use cranelift_frontend::Variable;

use cranelift_codegen::ir::condcodes::IntCC;

use super::function::{fixed, mem, Fx};
use crate::exec::ctx::{builtin, CTX_BUILTINS, CTX_NSLOTS, CTX_SLOTS};
use crate::CompileError;

mod plan;

use plan::remat_order;
pub(crate) use plan::{body, plan, Plan};

/// What a continuation function returns when a work-item stopped.
pub const STOPPED: u32 = u32::MAX;

/// The state a checked launch passes after a barrier divergence: each
/// work-item resumes at its own place, the one it left in `reached` (0:
/// it returned, and stays so).
pub const DIVERGED: u32 = u32::MAX - 1;

/// One barrier of a continuation build: what the group's loop does
/// between the intervals it separates.
#[derive(Clone, Copy, Debug)]
pub struct BarrierSpec {
    /// Its memory scope (SPIR-V `Scope`).
    pub mem_scope: u32,
    /// Its memory semantics (SPIR-V `MemorySemantics`).
    pub semantics: u32,
    /// Its site index.
    pub site: u32,
}

/// The work-item loop's counters, the parameters of its head block: the
/// local linear id, the local id per dimension where the loop counts it
/// (x always; y and z where the code reads an id made of them), and the
/// work-item's frame.
#[derive(Clone, Copy)]
pub(crate) struct Counters {
    pub l: Value,
    pub local: [Option<Value>; 3],
}

/// A continuation build's state (see the module docs).
pub(crate) struct Cont {
    pub plan: Plan,
    /// The current work-item's frame, the state to resume at.
    pub frame: Value,
    pub state: Value,
    /// The block that dispatches on the state.
    pub dispatch: ir::Block,
    /// The block a work-item goes to once it reached a barrier or
    /// returned (its parameter: where), which runs the next one.
    pub next: ir::Block,
    /// The loop's head.
    pub head: ir::Block,
    pub counters: Option<Counters>,
    /// The frames' stride (a constant, made once the frame's size is
    /// known: `settle_stride`), `reached`, the group's size and local
    /// sizes.
    pub stride: Value,
    pub reached: Value,
    pub n: Value,
    pub sizes: [Value; 3],
    /// The work-item's ids, by index of the context's built-ins, as
    /// values of the loop's head (the code reads these rather than the
    /// context, whose loads would be hoisted out of the loop).
    pub ids: HashMap<usize, Value>,
    /// The kernel's private variables, saved across barriers: the slot of
    /// the first and the bytes from its start to the last one's end (they
    /// are contiguous), or none.
    pub private: Option<(u64, u64)>,
    /// The variables of the values live across a barrier, each with its
    /// byte offset in the frame.
    pub vars: HashMap<Word, Vec<(Variable, i32, ClType)>>,
    /// Checked builds: the shadow variables of those values, a byte per
    /// leaf (zero where a leaf is known initialized), each with its byte
    /// offset in the frame (see `translate::shadow`).
    pub shadow_vars: HashMap<Word, Vec<(Variable, i32)>>,
    /// Checked builds: the frame's places of the kernel's promoted
    /// variables (see `translate::promote`), a value and a shadow per leaf.
    pub promoted_at: HashMap<Word, Vec<(i32, i32)>>,
    /// Checked builds: the work-item's ids are in the context for its whole
    /// interval (stored once in the loop's head), so a call need not store
    /// them again.
    pub ids_in_ctx: bool,
    pub frame_bytes: i32,
    /// Each barrier's resume block, in order (barrier `k` is index `k - 1`).
    pub resumes: Vec<ir::Block>,
    pub barriers: Vec<BarrierSpec>,
}

impl Cont {
    /// A fresh state for `plan`, with the blocks the loop needs.
    pub fn new(b: &mut cranelift_frontend::FunctionBuilder<'_>, plan: Plan) -> Cont {
        let zero = Value::from_u32(0);
        Cont {
            plan,
            frame: zero,
            state: zero,
            dispatch: b.create_block(),
            next: b.create_block(),
            head: b.create_block(),
            counters: None,
            stride: zero,
            reached: zero,
            n: zero,
            sizes: [zero; 3],
            ids: HashMap::new(),
            private: None,
            vars: HashMap::new(),
            shadow_vars: HashMap::new(),
            promoted_at: HashMap::new(),
            ids_in_ctx: false,
            frame_bytes: 0,
            resumes: Vec::new(),
            barriers: Vec::new(),
        }
    }
}

/// The byte ranges of the private block that kernel `f` (its body) and
/// the functions it calls keep in memory in a checked build: their
/// function-scope variables that are not promoted to registers
/// (`promote::promotable` decides it for each function as its translation
/// does), merged where they touch.
pub(crate) fn private_spans(
    m: &clsync_spirv::Module,
    slots: &super::SlotPlan,
    f: &Function,
) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    for id in super::reachable_from(m, vec![body(m, f).id]) {
        let Some(g) = m.function(id) else { continue };
        let promoted = super::promote::promotable(m, g);
        for (inst, _) in g.blocks.iter().flat_map(|b| &b.instructions) {
            match (inst.class.opcode, inst.result_id) {
                (Op::Variable, Some(v)) if !promoted.contains(&v) => {
                    let Some((_, _, off)) = slots.private.iter().find(|(id, _, _)| *id == v) else {
                        continue;
                    };
                    let size = match inst.result_type.map(|t| m.ty(t)) {
                        Some(Ok(clsync_spirv::Type::Pointer { pointee, .. })) => {
                            m.layout(*pointee).map_or(0, |l| l.size)
                        }
                        _ => 0,
                    };
                    spans.push((*off as usize, (off + size) as usize));
                }
                _ => {}
            }
        }
    }
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

impl Fx<'_, '_> {
    /// A continuation function's first block: the context, the kernel's
    /// arguments read from their words (as the entry stub reads them), the
    /// slot table, the group's constants; then the loop's head, which
    /// makes the work-item's ids and frame and goes to the dispatch on the
    /// state. What the first block defines dominates every block, and what
    /// the head defines every block of the work-item's code.
    pub(super) fn prologue(&mut self, f: &Function) -> Result<(), CompileError> {
        let pro = self.b.create_block();
        self.b.append_block_params_for_function_params(pro);
        self.b.switch_to_block(pro);
        let p = self.b.block_params(pro).to_vec();
        self.ctx = p[0];
        let mut k = 0i32;
        for (id, ty) in &f.params {
            let mut vs = Vec::new();
            for leaf in self.m.leaves(*ty)? {
                // As the entry stub reads them: a half's word holds its
                // 16-bit encoding.
                let v = if super::half::is_half(self.m, leaf.ty) {
                    let bits = self.b.ins().load(types::I32, fixed(), p[1], k * 8);
                    self.half_of_bits(bits)
                } else {
                    let t = super::cl_type(self.m, leaf.ty)?;
                    self.b.ins().load(t, fixed(), p[1], k * 8)
                };
                vs.push(v);
                k += 1;
            }
            self.vals.insert(*id, vs);
            self.types_of.insert(*id, *ty);
        }
        self.slots = self.b.ins().load(types::I64, fixed(), self.ctx, CTX_SLOTS);
        self.nslots = self.b.ins().load(types::I64, fixed(), self.ctx, CTX_NSLOTS);
        let private = self.kernel_private(f)?;
        let sizes: [Value; 3] = std::array::from_fn(|d| self.group_value(builtin::LOCAL_SIZE + d));
        let n = self.b.ins().imul(sizes[0], sizes[1]);
        let n = self.b.ins().imul(n, sizes[2]);
        // Made a constant by `settle_stride` once every variable of the
        // frame has its place.
        let stride = self.b.ins().iconst(types::I64, 0);
        let c = self.cont.as_mut().expect("a continuation build");
        c.state = p[3];
        c.stride = stride;
        c.reached = p[4];
        c.n = n;
        c.sizes = sizes;
        // A checked build's work-items keep their whole private memory, and
        // its shadow, in the runtime (`exec::loops::Privates`).
        let private = private.filter(|_| !self.s.checked);
        c.private = private;
        c.frame_bytes = private.map_or(0, |(_, bytes)| bytes as i32);
        let (head, dispatch, frames) = (c.head, c.dispatch, p[2]);
        let used = c.plan.ids_read;
        let reads = |ids: &[usize]| ids.iter().any(|i| used & (1 << i) != 0);
        let linear = builtin::GLOBAL_LINEAR_ID;
        let z = reads(&[builtin::LOCAL_ID + 2, builtin::GLOBAL_ID + 2, linear]);
        let y = z || reads(&[builtin::LOCAL_ID + 1, builtin::GLOBAL_ID + 1, linear]);
        let carried = [true, y, z];
        let zero = self.b.ins().iconst(types::I64, 0);
        let mut args = vec![ir::BlockArg::Value(zero)];
        args.extend(
            carried
                .iter()
                .filter(|c| **c)
                .map(|_| ir::BlockArg::Value(zero)),
        );
        args.push(ir::BlockArg::Value(frames));
        self.b.ins().jump(head, &args);

        // The head: the work-item's ids and frame.
        self.b.switch_to_block(head);
        let l = self.b.append_block_param(head, types::I64);
        let local: [Option<Value>; 3] = std::array::from_fn(|d| {
            carried[d].then(|| self.b.append_block_param(head, types::I64))
        });
        let frame = self.b.append_block_param(head, types::I64);
        let c = self.cont.as_mut().expect("a continuation build");
        c.frame = frame;
        c.counters = Some(Counters { l, local });
        let ids = self.item_ids(used);
        self.cont.as_mut().expect("a continuation build").ids = ids;
        if self.s.checked {
            // The runtime learns which work-item runs (the checker's
            // accesses are its), and its private shadow starts unwritten;
            // the call stores every id in the context, where they stay for
            // the interval (every checked access passes the context).
            self.cont.as_mut().expect("a continuation build").ids_in_ctx = true;
            let ctx = self.ctx;
            self.helper("clsync_next_item", &[ctx, l]);
        }
        self.b.ins().jump(dispatch, &[]);
        Ok(())
    }

    /// A built-in that every work-item of the group shares, from the
    /// context (a load Cranelift hoists out of the work-item loop).
    fn group_value(&mut self, i: usize) -> Value {
        let ctx = self.ctx;
        self.b
            .ins()
            .load(types::I64, fixed(), ctx, CTX_BUILTINS + 8 * i as i32)
    }

    /// The current work-item's ids whose bits are set in `mask` (by index
    /// of the context's built-ins), computed here from the loop's counters
    /// and the group's constants, or taken from the head where it made
    /// them.
    fn item_ids(&mut self, mask: u64) -> HashMap<usize, Value> {
        let c = self.cont.as_ref().expect("a continuation build");
        let (Some(k), made, n) = (c.counters, c.ids.clone(), c.n) else {
            return HashMap::new();
        };
        let wanted = |i: usize| mask & (1 << i) != 0;
        let mut ids = HashMap::new();
        let mut global = [None; 3];
        let lin = wanted(builtin::GLOBAL_LINEAR_ID);
        let mut local = k.local;
        for (d, id) in local.iter_mut().enumerate() {
            if id.is_none()
                && (lin || wanted(builtin::GLOBAL_ID + d) || wanted(builtin::LOCAL_ID + d))
            {
                *id = Some(self.uncounted_local_id(k.l, d));
            }
        }
        for (d, (g, local)) in global.iter_mut().zip(local).enumerate() {
            if wanted(builtin::GLOBAL_ID + d) || lin {
                let local = local.expect("made above");
                let v = match made.get(&(builtin::GLOBAL_ID + d)) {
                    Some(v) => *v,
                    None => {
                        let gid = self.group_value(builtin::GROUP_ID + d);
                        let size = self.group_value(builtin::ENQUEUED_LOCAL_SIZE + d);
                        let off = self.group_value(builtin::GLOBAL_OFFSET + d);
                        let base = self.b.ins().imul(gid, size);
                        let base = self.b.ins().iadd(base, off);
                        self.b.ins().iadd(base, local)
                    }
                };
                *g = Some(v);
                if wanted(builtin::GLOBAL_ID + d) {
                    ids.insert(builtin::GLOBAL_ID + d, v);
                }
            }
            if wanted(builtin::LOCAL_ID + d) {
                ids.insert(builtin::LOCAL_ID + d, local.expect("made above"));
            }
        }
        if wanted(builtin::LOCAL_LINEAR_ID) {
            ids.insert(builtin::LOCAL_LINEAR_ID, k.l);
        }
        if wanted(builtin::GLOBAL_LINEAR_ID) {
            let v = match made.get(&builtin::GLOBAL_LINEAR_ID) {
                Some(v) => *v,
                None => {
                    // (gz - oz) * GSy * GSx + (gy - oy) * GSx + (gx - ox).
                    let mut lin = self.b.ins().iconst(types::I64, 0);
                    for (d, g) in global.iter().enumerate().rev() {
                        let size = self.group_value(builtin::GLOBAL_SIZE + d);
                        let off = self.group_value(builtin::GLOBAL_OFFSET + d);
                        let g = g.expect("made above");
                        let rel = self.b.ins().isub(g, off);
                        lin = self.b.ins().imul(lin, size);
                        lin = self.b.ins().iadd(lin, rel);
                    }
                    lin
                }
            };
            ids.insert(builtin::GLOBAL_LINEAR_ID, v);
        }
        let sub_group = [
            builtin::SUB_GROUP_ID,
            builtin::SUB_GROUP_LOCAL_ID,
            builtin::SUB_GROUP_SIZE,
        ];
        if sub_group.iter().any(|i| wanted(*i)) {
            if made.contains_key(&builtin::SUB_GROUP_ID) {
                for i in sub_group {
                    ids.insert(i, made[&i]);
                }
            } else {
                let sg = self.group_value(builtin::MAX_SUB_GROUP_SIZE);
                let one = self.b.ins().iconst(types::I64, 1);
                let sg = self.b.ins().umax(sg, one);
                let id = self.b.ins().udiv(k.l, sg);
                let start = self.b.ins().imul(id, sg);
                let lid = self.b.ins().isub(k.l, start);
                let left = self.b.ins().isub(n, start);
                let size = self.b.ins().umin(sg, left);
                ids.insert(builtin::SUB_GROUP_ID, id);
                ids.insert(builtin::SUB_GROUP_LOCAL_ID, lid);
                ids.insert(builtin::SUB_GROUP_SIZE, size);
            }
        }
        ids
    }

    /// In a continuation build, stores every id of the current work-item
    /// in the context, for a call that may read them there (a called
    /// function, the fault handler, any runtime call given the context):
    /// the runtime makes them from the local linear id
    /// (`exec::loops::clsync_item_ids`, through a trampoline that keeps
    /// every register), so that the loop keeps none of the values they are
    /// made of.
    pub(super) fn store_ids(&mut self) {
        let Some(c) = self.cont.as_ref().filter(|c| !c.ids_in_ctx) else {
            return;
        };
        let Some(k) = c.counters else { return };
        let cold = self.s.cold["clsync_item_ids"];
        let ctx = self.ctx;
        self.cold_call(cold, &[ctx, k.l]);
    }

    /// The kernel body's own private variables: the slot of the first and
    /// the bytes they span (`plan_slots` lays a function's variables out
    /// one after another), if it has any and any barrier.
    fn kernel_private(&self, f: &Function) -> Result<Option<(u64, u64)>, CompileError> {
        let c = self.cont.as_ref().expect("a continuation build");
        if c.plan.live.is_empty() {
            return Ok(None);
        }
        let mut span: Option<(u64, u64, u64)> = None; // slot, start, end
        let variables = f
            .blocks
            .iter()
            .flat_map(|b| &b.instructions)
            .filter(|(i, _)| i.class.opcode == Op::Variable);
        for (i, _) in variables {
            let id = i.result_id.unwrap_or(0);
            let Some((_, slot, off)) = self.s.plan.private.iter().find(|(v, _, _)| *v == id) else {
                continue;
            };
            let size = match self.m.ty(i.result_type.unwrap_or(0))? {
                clsync_spirv::Type::Pointer { pointee, .. } => self.m.layout(*pointee)?.size,
                _ => 0,
            };
            span = Some(match span {
                None => (*slot, *off, off + size),
                Some((_, start, end)) if *off < start => (*slot, *off, end.max(off + size)),
                Some((s, start, end)) => (s, start, end.max(off + size)),
            });
        }
        // Whole words: the variables start at multiples of 8 and the
        // private block is whole words.
        Ok(span.map(|(slot, start, end)| (slot, (end - start).next_multiple_of(8))))
    }

    /// Copies the kernel's private variables to (`save`) or from the
    /// work-item's frame.
    fn private_copy(&mut self, save: bool) {
        let c = self.cont.as_ref().expect("a continuation build");
        let (Some((slot, bytes)), frame) = (c.private, c.frame) else {
            return;
        };
        let fixed = fixed();
        let entry = self.b.ins().iadd_imm_s(self.slots, (slot * 16) as i64);
        let block = self.b.ins().load(types::I64, fixed, entry, 0);
        let (dst, src) = if save { (frame, block) } else { (block, frame) };
        let cfg = cranelift_module::Module::target_config(&*self.jit);
        self.b
            .emit_small_memory_copy(cfg, dst, src, bytes, 8, 8, true, mem());
    }

    /// In a continuation build, makes the block's phis that live across a
    /// barrier variables (defined by their block parameters here).
    pub(super) fn phi_vars(&mut self, label: Word) {
        if self.cont.is_none() {
            return;
        }
        let ids: Vec<Word> = self
            .phis
            .get(&label)
            .map(|p| p.iter().map(|(id, _, _)| *id).collect())
            .unwrap_or_default();
        for id in ids {
            if let Some(v) = self.vals.get(&id).cloned() {
                self.define_var(id, &v);
            }
        }
    }

    /// In a continuation build, if `id` lives across a barrier: its
    /// variables (made on its first definition, each with a place in the
    /// frame) are defined as `v` here.
    pub(super) fn define_var(&mut self, id: Word, v: &[Value]) {
        let Some(c) = self.cont.as_mut() else { return };
        if !c.plan.cross.contains(&id) {
            return;
        }
        if !c.vars.contains_key(&id) {
            let mut vars = Vec::new();
            for x in v {
                let t = self.b.func.dfg.value_type(*x);
                vars.push((self.b.declare_var(t), c.frame_bytes, t));
                c.frame_bytes += 8;
            }
            c.vars.insert(id, vars);
            if self.s.checked {
                let mut shadows = Vec::new();
                for _ in v {
                    shadows.push((self.b.declare_var(types::I8), c.frame_bytes));
                    c.frame_bytes += 8;
                }
                c.shadow_vars.insert(id, shadows);
            }
        }
        for ((var, _, _), x) in c.vars[&id].iter().zip(v) {
            self.b.def_var(*var, *x);
        }
        if let Some(shadows) = c.shadow_vars.get(&id).cloned() {
            let lanes = self.shadows.get(&id).cloned().unwrap_or_default();
            for (k, (var, _)) in shadows.into_iter().enumerate() {
                let s = match lanes.get(k).copied().flatten() {
                    Some(s) => s,
                    None => self.b.ins().iconst(types::I8, 0),
                };
                self.b.def_var(var, s);
            }
        }
    }

    /// In a checked continuation build, the shadow of `id` if it lives
    /// across a barrier: its shadow variables' values here.
    pub(super) fn cross_lanes(&mut self, id: Word) -> Option<super::shadow::Lanes> {
        let vars = self.cont.as_ref()?.shadow_vars.get(&id)?.clone();
        Some(
            vars.into_iter()
                .map(|(var, _)| Some(self.b.use_var(var)))
                .collect(),
        )
    }

    /// Whether `id` lives across a barrier with a shadow (checked builds).
    pub(super) fn has_cross_lanes(&self, id: Word) -> bool {
        self.cont
            .as_ref()
            .is_some_and(|c| c.shadow_vars.contains_key(&id))
    }

    /// Checked builds: stores the kernel's promoted variables, values and
    /// shadows, in the work-item's frame (`save`), or defines them from it.
    fn promoted_copy(&mut self, save: bool) {
        if !self.s.checked {
            return;
        }
        let mut ids: Vec<Word> = self.promoted.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let vars = self.promoted[&id].clone();
            let c = self.cont.as_mut().expect("a continuation build");
            let frame = c.frame;
            let places = c
                .promoted_at
                .entry(id)
                .or_insert_with(|| {
                    (0..vars.len())
                        .map(|_| {
                            c.frame_bytes += 16;
                            (c.frame_bytes - 16, c.frame_bytes - 8)
                        })
                        .collect()
                })
                .clone();
            for ((t, var, sh), (at, sh_at)) in vars.into_iter().zip(places) {
                if save {
                    let v = self.b.use_var(var);
                    self.b.ins().store(mem(), v, frame, at);
                    let s = self.b.use_var(sh);
                    self.b.ins().store(mem(), s, frame, sh_at);
                } else {
                    let v = self.b.ins().load(t, mem(), frame, at);
                    self.b.def_var(var, v);
                    let s = self.b.ins().load(types::I8, mem(), frame, sh_at);
                    self.b.def_var(sh, s);
                }
            }
        }
    }

    /// The work-item is done with this interval: it reached barrier `k`, or
    /// returned (0). Goes on with the next work-item.
    pub(super) fn interval_end(&mut self, k: u32) {
        let next = self.cont.as_ref().expect("a continuation build").next;
        let r = self.b.ins().iconst(types::I32, k as i64);
        self.b.ins().jump(next, &[ir::BlockArg::Value(r)]);
    }

    /// The local id of dimension `d` (y or z), which the loop does not
    /// count, from the linear id `l`: `(l / sx) % sy` or `l / (sx * sy)`.
    /// Made where a call or the fault path needs it, not in the loop.
    fn uncounted_local_id(&mut self, l: Value, d: usize) -> Value {
        let sizes = self.cont.as_ref().expect("a continuation build").sizes;
        if d == 1 {
            let row = self.b.ins().udiv(l, sizes[0]);
            self.b.ins().urem(row, sizes[1])
        } else {
            let plane = self.b.ins().imul(sizes[0], sizes[1]);
            self.b.ins().udiv(l, plane)
        }
    }

    /// The loop's step, once every block is translated: records where the
    /// work-item stopped and runs the next one, or returns that place once
    /// the last one ran (the caller compares the places in `reached`).
    pub(super) fn loop_step(&mut self) {
        let c = self.cont.as_ref().expect("a continuation build");
        let (next, head, n, sizes, reached) = (c.next, c.head, c.n, c.sizes, c.reached);
        let (frame, stride) = (c.frame, c.stride);
        let Some(Counters { l, local }) = c.counters else {
            return;
        };
        self.b.switch_to_block(next);
        let r = self.b.append_block_param(next, types::I32);
        let at = self.b.ins().ishl_imm_s(l, 2);
        let at = self.b.ins().iadd(reached, at);
        self.b.ins().store(mem(), r, at, 0);
        let l1 = self.b.ins().iadd_imm_s(l, 1);
        let frame1 = self.b.ins().iadd(frame, stride);
        let x = local[0].expect("x is always counted");
        let x = self.b.ins().iadd_imm_s(x, 1);
        // Along a row only x counts; y and z at the row's end.
        let in_row = self.b.ins().icmp(IntCC::NotEqual, x, sizes[0]);
        let wrap = self.b.create_block();
        let args = |x: Value, yz: [Option<Value>; 2]| {
            let mut a = vec![ir::BlockArg::Value(l1), ir::BlockArg::Value(x)];
            a.extend(yz.into_iter().flatten().map(ir::BlockArg::Value));
            a.push(ir::BlockArg::Value(frame1));
            a
        };
        let same = args(x, [local[1], local[2]]);
        self.b.ins().brif(in_row, head, &same, wrap, &[]);

        self.b.switch_to_block(wrap);
        let done = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, l1, n);
        let exit = self.b.create_block();
        let row = self.b.create_block();
        self.b.ins().brif(done, exit, &[], row, &[]);

        self.b.switch_to_block(exit);
        self.b.ins().return_(&[r]);

        self.b.switch_to_block(row);
        let zero = self.b.ins().iconst(types::I64, 0);
        let yz = match (local[1], local[2]) {
            (Some(y), z) => {
                let y = self.b.ins().iadd_imm_s(y, 1);
                let wrap_y = self.b.ins().icmp(IntCC::Equal, y, sizes[1]);
                let y = self.b.ins().select(wrap_y, zero, y);
                let z = z.map(|z| {
                    let carry = self.b.ins().uextend(types::I64, wrap_y);
                    self.b.ins().iadd(z, carry)
                });
                [Some(y), z]
            }
            (None, _) => [None, None],
        };
        let next_row = args(zero, yz);
        self.b.ins().jump(head, &next_row);
    }

    /// Makes the frames' stride the constant it is: the frame's bytes, in
    /// whole words, once every value kept across a barrier has its place
    /// (the runtime lays the frames out so, `exec::loops`).
    pub(super) fn settle_stride(&mut self) {
        let c = self.cont.as_ref().expect("a continuation build");
        let bytes = (c.frame_bytes as u64).next_multiple_of(8) as i64;
        if let Some(inst) = self.b.func.dfg.value_def(c.stride).inst() {
            self.b.func.replace(inst).iconst(types::I64, bytes);
        }
    }

    /// A work-group barrier of a continuation build: the values live after
    /// it (and the kernel's private variables) go to the frame, the
    /// work-item's interval ends at the barrier's number, and translation
    /// goes on in the block that resumes there, which loads them back.
    pub(super) fn continuation_barrier(&mut self, inst: &Instruction) -> Result<(), CompileError> {
        let memscope = self.const_u64(self.id(inst, 1)?)?;
        let sem = self.const_u64(self.id(inst, 2)?)?;
        let site = self.site();
        let key = (self.current, self.at);
        let c = self.cont.as_ref().expect("a continuation build");
        let live = c.plan.live.get(&key).cloned().unwrap_or_default();
        let again: Vec<Instruction> = remat_order(&c.plan, &live).into_iter().cloned().collect();
        let mut kept = Vec::new();
        for id in live.iter().filter(|id| !c.plan.remat.contains_key(id)) {
            let Some(vars) = self.cont.as_ref().and_then(|c| c.vars.get(id)).cloned() else {
                return Err(CompileError::Unsupported(format!(
                    "%{id} lives across a barrier but has no value there"
                )));
            };
            let frame = self.cont.as_ref().expect("a continuation build").frame;
            for (var, off, t) in vars {
                let v = self.b.use_var(var);
                self.b.ins().store(mem(), v, frame, off);
                kept.push((var, off, t));
            }
            let shadows = self
                .cont
                .as_ref()
                .and_then(|c| c.shadow_vars.get(id))
                .cloned();
            for (var, off) in shadows.unwrap_or_default() {
                let v = self.b.use_var(var);
                self.b.ins().store(mem(), v, frame, off);
                kept.push((var, off, types::I8));
            }
        }
        self.private_copy(true);
        self.promoted_copy(true);
        let c = self.cont.as_mut().expect("a continuation build");
        c.barriers.push(BarrierSpec {
            mem_scope: memscope as u32,
            semantics: sem as u32,
            site: site as u32,
        });
        let k = c.barriers.len() as u32;
        let resume = self.b.create_block();
        c.resumes.push(resume);
        self.interval_end(k);
        self.b.switch_to_block(resume);
        self.private_copy(false);
        self.promoted_copy(false);
        let frame = self.cont.as_ref().expect("a continuation build").frame;
        for (var, off, t) in kept {
            let v = self.b.ins().load(t, mem(), frame, off);
            self.b.def_var(var, v);
        }
        // The rematerialized values, computed again from what the resume
        // block has: a value live across the barrier is defined here as its
        // variable; the values only they read are put back as they were
        // (their definitions here do not dominate the code after).
        let saved: Vec<(Word, Option<Vec<Value>>)> = again
            .iter()
            .filter_map(|i| i.result_id)
            .map(|id| (id, self.vals.get(&id).cloned()))
            .collect();
        for inst in &again {
            self.instruction(inst)?;
        }
        for (id, v) in saved {
            match v {
                Some(v) => self.vals.insert(id, v),
                None => self.vals.remove(&id),
            };
        }
        Ok(())
    }
}
