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

use clsync_spirv::spirv::Word;
use clsync_spirv::{Function, Instruction};
use cranelift_codegen::ir::{self, types, InstBuilder, Type as ClType, Value};
use cranelift_frontend::Variable;

use cranelift_codegen::ir::condcodes::IntCC;

use super::function::{fixed, mem, Fx};
use crate::exec::ctx::{builtin, CTX_NSLOTS, CTX_SLOTS};
use crate::CompileError;

mod agreed;
mod batch;
mod chain;
mod coalesce;
mod frame;
mod hoisted;
mod ids;
mod joined;
mod narrow;
mod packed;
mod plan;
mod rows;
mod serial;
mod step;
mod together;

pub use batch::LANES;
pub(crate) use batch::{all_batchable, batchable};
pub(crate) use chain::chainable;

pub(crate) use frame::private_spans;
use plan::remat_order;
pub(crate) use plan::{body, plan, Plan};

/// Where a value kept across a barrier goes in the frames of a batch (see
/// `Fx::places`).
#[derive(Clone, Copy)]
pub(crate) enum Place {
    /// One lane's.
    Lane(usize),
    /// A uniform value's, every lane's alike.
    All,
    /// Vector `k` of a packed value's (frames in rows).
    Vector(usize),
    /// The group's, read once per interval (`hoisted`); stored as `All`.
    Group,
}

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
    /// Checked builds of kernels that keep no private memory: whether the
    /// runtime has been told which work-item runs (an `i8` variable, 0 at
    /// the loop's head). It is told at the work-item's first runtime call
    /// of the interval ([`name_item`](Fx::name_item)), so that a work-item
    /// with nothing to report in an interval (most of a reduction's, whose
    /// `if (l < h)` is false) costs no call.
    pub unnamed: Option<Variable>,
    pub frame_bytes: i32,
    /// Each barrier's resume block, in order (barrier `k` is index `k - 1`).
    pub resumes: Vec<ir::Block>,
    pub barriers: Vec<BarrierSpec>,
    /// A batched build's lanes (see [`batch`]).
    pub batch: Option<batch::Batch>,
    /// A build that chains its intervals (see [`chain`]): the register of
    /// the places' differences from its state.
    pub chain: Option<Variable>,
    /// The block between the prologue and the loop's head, where a chained
    /// interval starts again, and the group's first frame (see `hoisted`).
    pub group_block: Option<(ir::Block, Value)>,
    /// A narrowed loop's bounds (see [`narrow`]), and the block its end
    /// goes to with the place it returns.
    pub narrow: Option<(narrow::Bounds, ir::Block)>,
    /// A build whose group stops at one place (see [`agreed`]): its loop
    /// writes no place per work-item.
    pub agreed: bool,
}

impl Cont {
    /// A fresh state for `plan`, with the blocks the loop needs.
    pub fn new(b: &mut cranelift_frontend::FunctionBuilder<'_>, mut plan: Plan) -> Cont {
        let zero = Value::from_u32(0);
        let batch = plan.lanes.take().map(batch::Batch::new);
        Cont {
            batch,
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
            unnamed: None,
            frame_bytes: 0,
            resumes: Vec::new(),
            barriers: Vec::new(),
            chain: None,
            group_block: None,
            narrow: None,
            agreed: false,
        }
    }
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
        let narrow = self.narrow_bounds(f, n, sizes);
        let c = self.cont.as_mut().expect("a continuation build");
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
        // The group's block: each interval (a chained one too) starts here.
        let group = self.b.create_block();
        self.b.ins().jump(group, &[]);
        self.b.switch_to_block(group);
        let c = self.cont.as_mut().expect("a continuation build");
        c.group_block = Some((group, frames));
        if let Some(diff) = self.chain_start(f) {
            self.cont.as_mut().expect("a continuation build").chain = Some(diff);
        }
        let agreed = self.agreed_state(f);
        self.cont.as_mut().expect("a continuation build").agreed = agreed;
        match narrow {
            // A loop of no work-item: every one waits at the barrier.
            Some(bounds) => {
                let end = self.b.create_block();
                self.b.append_block_param(end, types::I32);
                self.cont.as_mut().expect("a continuation build").narrow = Some((bounds, end));
                let none = self.b.ins().icmp_imm_s(IntCC::Equal, bounds.all, 0);
                let empty = self.b.create_block();
                self.b.ins().brif(none, empty, &[], head, &args);
                self.b.switch_to_block(empty);
                let at = self.b.ins().iconst(types::I32, bounds.barrier as i64);
                self.b.ins().jump(end, &[ir::BlockArg::Value(at)]);
            }
            None => {
                self.b.ins().jump(head, &args);
            }
        }

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
        let ids = self.head_ids(used);
        self.cont.as_mut().expect("a continuation build").ids = ids;
        if self.batched() {
            self.batch_head();
        }
        if self.s.checked {
            // The runtime learns which work-item runs (the checker's
            // accesses are its), and its private shadow starts unwritten;
            // the call stores every id in the context, where they stay for
            // the interval (every checked access passes the context).
            // Where the kernel keeps no private memory, whose blocks the
            // call switches, it is made at the interval's first call that
            // passes the context (`name_item`), if any.
            let keeps_private = !private_spans(self.m, self.s.plan, f).is_empty();
            let c = self.cont.as_mut().expect("a continuation build");
            c.ids_in_ctx = true;
            if keeps_private || c.batch.is_some() {
                let ctx = self.ctx;
                self.helper("clsync_next_item", &[ctx, l]);
            } else {
                let named = self.b.declare_var(types::I8);
                let no = self.b.ins().iconst(types::I8, 0);
                self.b.def_var(named, no);
                self.cont.as_mut().expect("a continuation build").unnamed = Some(named);
            }
        }
        self.b.ins().jump(dispatch, &[]);
        Ok(())
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
        let lanes = c
            .batch
            .as_ref()
            .map(|b| b.strides.clone())
            .unwrap_or_default();
        for (j, s) in lanes.into_iter().enumerate().skip(1) {
            if let Some(inst) = self.b.func.dfg.value_def(s).inst() {
                self.b
                    .func
                    .replace(inst)
                    .iconst(types::I64, bytes * j as i64);
            }
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
        let frames = self.lane_frames();
        let rows = self.rows();
        // This barrier's number, once pushed below.
        let k_here = c.barriers.len() as u32 + 1;
        let mut kept = Vec::new();
        let kept_ids: Vec<Word> = live
            .iter()
            .filter(|id| !c.plan.remat.contains_key(id))
            .copied()
            .collect();
        for id in &kept_ids {
            // A value a batch keeps packed: one store of each vector to
            // its row.
            if let Some((vars, off, t)) = self.kept_vectors(*id) {
                for (k, var) in vars.into_iter().enumerate() {
                    let v = self.b.use_var(var);
                    let (base, at) = self.places(&frames, rows, Place::Vector(k), off)[0];
                    self.b.ins().store(mem(), v, base, at);
                    kept.push((var, off, t, Place::Vector(k)));
                }
                continue;
            }
            let Some(lanes) = self.kept_vars(*id) else {
                return Err(CompileError::Unsupported(format!(
                    "%{id} lives across a barrier but has no value there"
                )));
            };
            for (lane, vars) in lanes {
                for (var, off, t) in vars {
                    let v = self.b.use_var(var);
                    let place = match lane {
                        Some(j) => Place::Lane(j),
                        None => Place::All,
                    };
                    for (base, at) in self.places(&frames, rows, place, off) {
                        self.b.ins().store(mem(), v, base, at);
                    }
                    let place = match self.hoists(*id, k_here, place) {
                        true => Place::Group,
                        false => place,
                    };
                    kept.push((var, off, t, place));
                }
            }
            let shadows = self
                .cont
                .as_ref()
                .and_then(|c| c.shadow_vars.get(id))
                .cloned();
            let frame = frames[0];
            for (var, off) in shadows.unwrap_or_default() {
                let v = self.b.use_var(var);
                self.b.ins().store(mem(), v, frame, off);
                kept.push((var, off, types::I8, Place::All));
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
        for (var, off, t, place) in kept {
            let v = match place {
                Place::Group => self.load_hoisted(t, off),
                _ => {
                    // (A value in every lane's frame is read from the
                    // first's.)
                    let (base, at) = self.places(&frames, rows, place, off)[0];
                    self.b.ins().load(t, mem(), base, at)
                }
            };
            self.b.def_var(var, v);
        }
        // The rematerialized values, computed again from what the resume
        // block has: a value live across the barrier is defined here as its
        // variable; the values only they read are put back as they were
        // (their definitions here do not dominate the code after).
        let ids: Vec<Word> = again.iter().filter_map(|i| i.result_id).collect();
        let saved = self.save_values(&ids);
        for inst in &again {
            self.batch_instruction(inst)?;
        }
        self.restore_values(saved);
        Ok(())
    }
}
