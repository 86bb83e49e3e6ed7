//! One function: its blocks in reverse postorder (`cfg`), phis as block
//! parameters, and the dispatch of each instruction to the module that
//! translates it (vectors and aggregates in `composite`, arithmetic in
//! `arith`, memory in `memory`, atomics in `atomics`, collectives in
//! `group`, OpenCL.std in `ext`).

use std::collections::HashMap;

use clsync_spirv::spirv::{Op, StorageClass, Word};
use clsync_spirv::{Constant, Function, Instruction, Module, Operand, SourceLine};
use cranelift_codegen::ir::{
    self, types, AbiParam, FuncRef, InstBuilder, MemFlagsData, Signature, StackSlotData,
    StackSlotKind, Type as ClType, Value,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Switch, Variable};
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, Module as _};

use super::cfg::reverse_postorder;
pub use super::continuation::BarrierSpec;
use super::continuation::{self, Cont, STOPPED};
use super::{cl_type, flat_types, Shared};
use crate::exec::ctx::{CTX_ANSWER, CTX_NSLOTS, CTX_SLOTS, CTX_STATUS, OFFSET_BITS};
use crate::CompileError;

/// The Cranelift signature of `f`: the context, then the flattened
/// parameters; the flattened result. A result of more than one value
/// (a struct, a vector of vectors) goes through a return area instead,
/// whose address comes second: see [`RETURN_SLOT`].
pub(crate) fn signature(m: &Module, f: &Function, cc: CallConv) -> Result<Signature, CompileError> {
    let mut s = Signature::new(cc);
    s.params.push(AbiParam::new(types::I64));
    let rets = flat_types(m, f.ret)?;
    if rets.len() > 1 {
        s.params.push(AbiParam::new(types::I64));
    }
    for (_, ty) in &f.params {
        for t in flat_types(m, *ty)? {
            s.params.push(AbiParam::new(t));
        }
    }
    if rets.len() == 1 {
        s.returns.push(AbiParam::new(rets[0]));
    }
    Ok(s)
}

/// Bytes each value of a result has in a return area (the widest value
/// is a 128-bit vector). The machine has as few return registers as two:
/// a function returning more values (pyopencl's random generators return
/// structs of four counters) writes them to an area its caller gives.
/// Every caller and callee is compiled here, so this is clsync's own
/// convention, not the platform's.
pub(crate) const RETURN_SLOT: u32 = 16;

/// A phi: its result, its type, and (value, predecessor) pairs.
type Phi = (Word, Word, Vec<(Word, Word)>);

/// The state of one function's translation.
pub(crate) struct Fx<'a, 'm> {
    pub s: &'a mut Shared<'m>,
    pub jit: &'a mut JITModule,
    pub b: FunctionBuilder<'a>,
    pub m: &'m Module,
    /// Flattened values by id.
    pub vals: HashMap<Word, Vec<Value>>,
    /// The type of each id with one.
    pub types_of: HashMap<Word, Word>,
    pub(super) blocks: HashMap<Word, ir::Block>,
    /// Each block's place in reverse postorder: an edge to a block not
    /// after the current one is a loop's back-edge.
    pub(super) order: HashMap<Word, usize>,
    pub(super) phis: HashMap<Word, Vec<Phi>>,
    refs: HashMap<&'static str, FuncRef>,
    /// The context, the slot table and its length.
    pub ctx: Value,
    pub slots: Value,
    pub nslots: Value,
    pub(super) bail: Option<ir::Block>,
    pub(super) rets: Vec<ClType>,
    /// The return area, for a function whose result has several values.
    pub(super) ret_area: Option<Value>,
    /// The source line of the instruction being translated.
    pub line: SourceLine,
    /// The label of the block being translated.
    pub(super) current: Word,
    /// The opcode being translated, for messages.
    op: Op,
    /// The index of the instruction being translated in its block.
    pub(super) at: usize,
    /// The shadows of values that may be uninitialized (checked builds;
    /// see `shadow`).
    pub shadows: HashMap<Word, super::shadow::Lanes>,
    /// The shadow of the value the next `def` defines, where the
    /// instruction computed it (a load).
    pub pending: Option<super::shadow::Lanes>,
    /// The last access's bounds check (`address_in`): true when it was in
    /// bounds, in the block that performs it.
    pub in_bounds: Option<Value>,
    /// Pointers made by casting another (`OpBitcast` and the generic
    /// casts), or that point at its first byte (an access chain of zero
    /// indices): that pointer.
    pub casts: HashMap<Word, Word>,
    /// Checked builds: the loads whose values only go back to where they
    /// were loaded from, some components replaced (see
    /// `shadow::lvalue_loads`), and whether the load being translated is
    /// one.
    pub lvalue_loads: std::collections::HashSet<Word>,
    pub lvalue_load: bool,
    /// The loads of local memory that race with nothing (checked builds;
    /// see `intervals`), and whether the load being translated is one.
    pub race_free_loads: HashMap<Word, super::intervals::Proof>,
    pub race_free_load: Option<super::intervals::Proof>,
    /// The stores of local memory that race with nothing, by the pointer
    /// they store through (checked builds; see `intervals`), and the
    /// proof of the store being translated.
    pub race_free_stores: HashMap<Word, super::intervals::Proof>,
    pub race_free_store: Option<super::intervals::Proof>,
    /// Whether such a load of bytes a plain write wrote needs no runtime
    /// call: no launch that runs this function has local atomics
    /// (`Shared::settled_by_writes`).
    pub settled_reads: bool,
    /// Checked builds: the pointers through which atomics reach a local
    /// object that only relaxed, group-wide atomics touch (see
    /// `local_atomics::quiet_atomics`).
    pub quiet_atomics: std::collections::HashSet<Word>,
    /// Checked builds: the pointers of the accesses of buffers that stay
    /// in their group's slice and race with nothing (see `slices`), and
    /// whether the access being translated is through one.
    pub owned_pointers: std::collections::HashSet<Word>,
    pub owned_access: bool,
    /// Checked builds: the function's private variables that live in
    /// registers (see `promote`), and those already declared.
    pub promotable: std::collections::HashSet<Word>,
    pub promoted: super::promote::PromotedMap,
    /// Whether `get` gives values of odd-width integer types sign-extended
    /// from their width (for the operation being translated).
    signed_view: bool,
    /// The state of a continuation build (work-item loops).
    pub(super) cont: Option<Cont>,
    /// Pointers made by access chains: the pointer the first chain
    /// started from, whose slot they have (unchecked builds).
    pub(super) roots: HashMap<Word, Word>,
    /// Checked builds: pointers made by access chains that are aligned
    /// to this whatever their index (`Fx::element_aligned`), whose
    /// accesses need no alignment test.
    pub(super) aligned: HashMap<Word, u64>,
    /// The back-edges of counted loops, which need no cancellation point
    /// (see `counted`).
    pub(super) counted: std::collections::HashSet<(Word, Word)>,
}

/// Flags of plain accesses: the slot table and checked objects are never
/// at an address that traps.
pub(crate) fn mem() -> MemFlagsData {
    MemFlagsData::trusted()
}

/// Flags of loads of what no code changes while a function runs: the slot
/// table (its entries change only between two calls of a work-item loop),
/// the context's built-ins, the arguments. Cranelift may then share such a
/// load and hoist it out of loops (a readonly, non-trapping, movable load
/// is pure to its e-graph); each is in bounds wherever it moves, the slot
/// table's entry by its sentinel (see `Fx::address`).
pub(crate) fn fixed() -> MemFlagsData {
    MemFlagsData::trusted().with_readonly().with_can_move()
}

/// Translates `f` into `func`.
pub(crate) fn translate(
    s: &mut Shared<'_>,
    jit: &mut JITModule,
    func: &mut ir::Function,
    fbc: &mut FunctionBuilderContext,
    f: &Function,
) -> Result<(), CompileError> {
    translate_as(s, jit, func, fbc, f, None).map(|_| ())
}

/// The signature of a continuation function: context, arguments, frames,
/// state, where each work-item stopped; the place the group reached (see
/// [`continuation`]).
pub(crate) fn continuation_signature(cc: CallConv) -> Signature {
    let mut s = Signature::new(cc);
    let params = [types::I64, types::I64, types::I64, types::I32, types::I64];
    for t in params {
        s.params.push(AbiParam::new(t));
    }
    s.returns.push(AbiParam::new(types::I32));
    s
}

/// Translates kernel `f` into `func` as a continuation function (see
/// [`continuation`]): its barriers and the bytes of its frame.
pub(crate) fn translate_continuation(
    s: &mut Shared<'_>,
    jit: &mut JITModule,
    func: &mut ir::Function,
    fbc: &mut FunctionBuilderContext,
    f: &Function,
    plan: continuation::Plan,
) -> Result<(Vec<BarrierSpec>, usize, ir::Block), CompileError> {
    let c = translate_as(s, jit, func, fbc, f, Some(plan))?;
    let c = c.ok_or_else(|| CompileError::Internal("no continuation state".into()))?;
    Ok((c.barriers, c.frame_bytes as usize, c.head))
}

fn translate_as(
    s: &mut Shared<'_>,
    jit: &mut JITModule,
    func: &mut ir::Function,
    fbc: &mut FunctionBuilderContext,
    f: &Function,
    plan: Option<continuation::Plan>,
) -> Result<Option<Cont>, CompileError> {
    let m = s.m;
    let b = FunctionBuilder::new(func, fbc);
    let mut fx = Fx {
        s,
        jit,
        b,
        m,
        vals: HashMap::new(),
        types_of: HashMap::new(),
        blocks: HashMap::new(),
        order: HashMap::new(),
        phis: HashMap::new(),
        refs: HashMap::new(),
        ctx: Value::from_u32(0),
        slots: Value::from_u32(0),
        nslots: Value::from_u32(0),
        bail: None,
        rets: flat_types(m, f.ret)?,
        ret_area: None,
        line: SourceLine::default(),
        current: 0,
        op: Op::Nop,
        at: 0,
        shadows: HashMap::new(),
        pending: None,
        in_bounds: None,
        casts: HashMap::new(),
        lvalue_loads: Default::default(),
        promotable: Default::default(),
        promoted: Default::default(),
        lvalue_load: false,
        race_free_loads: Default::default(),
        race_free_stores: Default::default(),
        race_free_store: None,
        race_free_load: None,
        settled_reads: false,
        quiet_atomics: Default::default(),
        owned_pointers: Default::default(),
        owned_access: false,
        signed_view: false,
        cont: None,
        roots: HashMap::new(),
        aligned: HashMap::new(),
        counted: Default::default(),
    };
    if let Some(plan) = plan {
        fx.rets = vec![types::I32];
        fx.cont = Some(Cont::new(&mut fx.b, plan));
    }
    fx.body(f)
        .map_err(|e| e.in_function(&f.name, fx.m, fx.line, fx.op))?;
    if fx.cont.is_some() {
        fx.settle_stride();
    }
    fx.b.seal_all_blocks();
    let cfg = fx.jit.target_config();
    fx.b.finalize(cfg);
    Ok(fx.cont)
}

/// The kernel's entry stub: reads the flattened arguments from the array,
/// one 64-bit word each, and calls the kernel.
pub(crate) fn entry_stub(
    s: &mut Shared<'_>,
    jit: &mut JITModule,
    func: &mut ir::Function,
    fbc: &mut FunctionBuilderContext,
    f: &Function,
) -> Result<(), CompileError> {
    let mut b = FunctionBuilder::new(func, fbc);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let ctx = b.block_params(entry)[0];
    let args = b.block_params(entry)[1];
    let mut call_args = vec![ctx];
    let mut k = 0i32;
    for (_, ty) in &f.params {
        for leaf in s.m.leaves(*ty)? {
            // A half argument's word holds its 16-bit encoding.
            let v = if super::half::is_half(s.m, leaf.ty) {
                let bits = b.ins().load(types::I32, mem(), args, k * 8);
                super::half::from_bits(&mut b, jit, &s.helpers, bits)
            } else {
                b.ins().load(cl_type(s.m, leaf.ty)?, mem(), args, k * 8)
            };
            call_args.push(v);
            k += 1;
        }
    }
    let callee = jit.declare_func_in_func(s.funcs[&f.id], b.func);
    b.ins().call(callee, &call_args);
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(jit.target_config());
    Ok(())
}

impl<'a, 'm> Fx<'a, 'm> {
    fn body(&mut self, f: &Function) -> Result<(), CompileError> {
        let order = reverse_postorder(f);
        for (n, &i) in order.iter().enumerate() {
            self.order.insert(f.blocks[i].label, n);
        }
        self.counted = super::counted::counted_back_edges(self.m, f, &self.order);
        if self.s.checked {
            self.lvalue_loads = super::shadow::lvalue_loads(f);
            if let Some(code) = super::kernel_code::KernelCode::of(self.m, f) {
                let proofs = super::intervals::race_free(self.m, f, &code);
                self.race_free_loads = proofs.loads;
                self.race_free_stores = proofs.stores;
                self.quiet_atomics = super::local_atomics::quiet_atomics(self.m, f, &code);
                self.owned_pointers = super::slices::slices(self.m, f, &code).pointers;
            }
            self.settled_reads = self.s.settled_by_writes.contains(&f.id);
            self.promotable = super::promote::promotable(self.m, f);
        }
        let zero = |o: &Operand| match o {
            Operand::IdRef(w) => matches!(
                self.m.constants.get(w),
                Some(Constant::Scalar { bits: 0, .. } | Constant::Null { .. })
            ),
            _ => false,
        };
        for b in &f.blocks {
            for (inst, _) in &b.instructions {
                let cast = match inst.class.opcode {
                    Op::Bitcast | Op::PtrCastToGeneric | Op::GenericCastToPtr => true,
                    Op::AccessChain
                    | Op::InBoundsAccessChain
                    | Op::PtrAccessChain
                    | Op::InBoundsPtrAccessChain => inst.operands[1..].iter().all(zero),
                    _ => false,
                };
                if let (true, Some(r), Some(Operand::IdRef(from))) =
                    (cast, inst.result_id, inst.operands.first())
                {
                    self.casts.insert(r, *from);
                }
            }
        }
        for &i in &order {
            let blk = &f.blocks[i];
            let cb = self.b.create_block();
            self.blocks.insert(blk.label, cb);
            let mut phis = Vec::new();
            let mut flat = Vec::new();
            for (inst, _) in &blk.instructions {
                if inst.class.opcode != Op::Phi {
                    continue;
                }
                let ty = inst.result_type.unwrap_or(0);
                let mut pairs = Vec::new();
                for c in inst.operands.chunks(2) {
                    if let [Operand::IdRef(v), Operand::IdRef(p)] = c {
                        pairs.push((*v, *p));
                    }
                }
                let id = inst.result_id.unwrap_or(0);
                self.types_of.insert(id, ty);
                flat.push((id, flat_types(self.m, ty)?));
                phis.push((id, ty, pairs));
            }
            // A batched build: a region's block has a copy per lane, and a
            // join's phis are variables (`continuation::serial`).
            if self.region_of(blk.label).is_some() {
                self.region_block(blk.label, &flat);
            } else if !self.join_phis(blk.label, &flat) {
                for (id, ts) in &flat {
                    if self.packed_phi(*id, cb) {
                        continue;
                    }
                    // A varying phi of a batched build has each lane's
                    // values.
                    let lanes = self.varying_lane(*id).map_or(1, |_| continuation::LANES);
                    for j in 0..lanes {
                        let params = ts
                            .iter()
                            .map(|t| self.b.append_block_param(cb, *t))
                            .collect();
                        match lanes {
                            1 => {
                                self.vals.insert(*id, params);
                            }
                            _ => self.set_lane_value(*id, j, params),
                        }
                    }
                }
            }
            // A checked build's phis carry their shadows, after the values.
            if self.s.checked {
                for (id, _, _) in &phis {
                    let n = self.vals[id].len();
                    let lanes = (0..n)
                        .map(|_| Some(self.b.append_block_param(cb, types::I8)))
                        .collect();
                    self.shadows.insert(*id, lanes);
                }
            }
            self.phis.insert(blk.label, phis);
        }
        let entry = self.blocks[&f.blocks[0].label];
        if self.cont.is_some() {
            self.prologue(f)?;
        } else {
            self.b.append_block_params_for_function_params(entry);
            self.b.switch_to_block(entry);
            let params = self.b.block_params(entry).to_vec();
            self.ctx = params[0];
            let mut k = 1;
            if self.rets.len() > 1 {
                self.ret_area = Some(params[1]);
                k = 2;
            }
            for (id, ty) in &f.params {
                let n = self.m.leaves(*ty)?.len();
                self.vals.insert(*id, params[k..k + n].to_vec());
                self.types_of.insert(*id, *ty);
                k += n;
            }
            self.slots = self.b.ins().load(types::I64, fixed(), self.ctx, CTX_SLOTS);
            self.nslots = self.b.ins().load(types::I64, fixed(), self.ctx, CTX_NSLOTS);
            self.copy_byval_params(f)?;
        }
        for (n, &i) in order.iter().enumerate() {
            let blk = &f.blocks[i];
            // A batched build translates a region's copies where its first
            // block comes.
            if let Some(r) = self.region_of(blk.label) {
                if self.first_of_region(r) == Some(blk.label) {
                    self.region_copies(r, f)?;
                }
                continue;
            }
            if n > 0 || self.cont.is_some() {
                let cb = self.blocks[&blk.label];
                self.b.switch_to_block(cb);
            }
            self.block_body(blk, true)?;
        }
        if let Some(bail) = self.bail {
            self.b.switch_to_block(bail);
            if self.cont.is_some() {
                let r = self.b.ins().iconst(types::I32, STOPPED as i64);
                self.b.ins().return_(&[r]);
            } else if self.ret_area.is_some() {
                // The caller reads what the area holds: the work-item
                // stopped, and the caller's status check returns at once.
                self.b.ins().return_(&[]);
            } else {
                let zeros: Vec<Value> = self
                    .rets
                    .clone()
                    .into_iter()
                    .map(|t| self.zero(t))
                    .collect();
                self.b.ins().return_(&zeros);
            }
        }
        if let Some(c) = &self.cont {
            // State 0 starts the kernel, k resumes after barrier k.
            let (dispatch, state, resumes) = (c.dispatch, c.state, c.resumes.clone());
            let only = c.plan.only_state;
            let (next, reached, counters) = (c.next, c.reached, c.counters);
            let switch = |b: &mut FunctionBuilder<'_>, on: Value| {
                let mut sw = Switch::new();
                for (k, r) in resumes.iter().enumerate() {
                    sw.set_entry(k as u128 + 1, *r);
                }
                sw.emit(b, on, entry);
            };
            self.b.switch_to_block(dispatch);
            match counters {
                // A checked launch runs on after a barrier divergence, each
                // work-item from where it stopped: its own place in
                // `reached`, where one that returned stays returned.
                Some(k) if self.s.checked => {
                    let own = self.b.create_block();
                    let same = self.b.create_block();
                    let mark = self
                        .b
                        .ins()
                        .iconst(types::I32, continuation::DIVERGED as i64);
                    let diverged = self.b.ins().icmp(
                        cranelift_codegen::ir::condcodes::IntCC::Equal,
                        state,
                        mark,
                    );
                    self.b.ins().brif(diverged, own, &[], same, &[]);
                    self.b.switch_to_block(same);
                    switch(&mut self.b, state);
                    self.b.switch_to_block(own);
                    let at = self.b.ins().ishl_imm_s(k.l, 2);
                    let at = self.b.ins().iadd(reached, at);
                    let place = self.b.ins().load(types::I32, mem(), at, 0);
                    let resume = self.b.create_block();
                    let zero = self.b.ins().iconst(types::I32, 0);
                    self.b
                        .ins()
                        .brif(place, resume, &[], next, &[ir::BlockArg::Value(zero)]);
                    self.b.switch_to_block(resume);
                    switch(&mut self.b, place);
                }
                // A function for one state goes there, the others' code
                // unreachable (and left out by Cranelift).
                _ => match only.map(|k| k as usize) {
                    Some(0) => {
                        self.b.ins().jump(entry, &[]);
                    }
                    Some(k) if k <= resumes.len() => {
                        self.b.ins().jump(resumes[k - 1], &[]);
                    }
                    _ => switch(&mut self.b, state),
                },
            }
            self.loop_step();
        }
        Ok(())
    }

    /// Translates block `blk`'s phis' variables and instructions into the
    /// current block: in a batched build once per batch or per lane as
    /// each needs (`batch`), or as the current lane's only.
    pub(super) fn block_body(
        &mut self,
        blk: &clsync_spirv::Block,
        batch: bool,
    ) -> Result<(), CompileError> {
        self.current = blk.label;
        self.phi_vars(blk.label);
        let last = blk.instructions.len().saturating_sub(1);
        for (at, (inst, line)) in blk.instructions.iter().enumerate() {
            self.line = *line;
            self.op = inst.class.opcode;
            self.at = at;
            if !batch {
                self.instruction(inst)?;
                continue;
            }
            match self.entering(blk.label) {
                Some(r) if at == last => self.enter_region(r, inst)?,
                _ => self.batch_instruction(inst)?,
            }
        }
        Ok(())
    }

    /// The block every early return goes through.
    pub fn bail_block(&mut self) -> ir::Block {
        if let Some(b) = self.bail {
            return b;
        }
        let b = self.b.create_block();
        self.b.set_cold_block(b);
        self.bail = Some(b);
        b
    }

    /// Returns if the work-item was stopped by the call just made.
    pub fn check_status(&mut self) {
        let st = self.b.ins().load(types::I64, mem(), self.ctx, CTX_STATUS);
        let cont = self.b.create_block();
        let bail = self.bail_block();
        self.b.ins().brif(st, bail, &[], cont, &[]);
        self.b.switch_to_block(cont);
    }

    /// The site index of the current line.
    pub fn site(&mut self) -> i64 {
        self.s.sites.of(self.m, self.line) as i64
    }

    /// Calls a runtime helper.
    pub fn helper(&mut self, name: &'static str, args: &[Value]) -> Vec<Value> {
        if let Some(&cold) = self.s.cold.get(name) {
            return self.cold_helper(cold, args);
        }
        let r = self.func_ref(name);
        // A runtime call given the context may read the work-item's ids.
        if args.contains(&self.ctx) {
            self.store_ids();
        }
        let call = self.b.ins().call(r, args);
        self.b.inst_results(call).to_vec()
    }

    /// The reference to runtime function `name` in the function being
    /// built.
    pub(super) fn func_ref(&mut self, name: &'static str) -> ir::FuncRef {
        if let Some(r) = self.refs.get(name) {
            return *r;
        }
        // Every name the translator calls is in `helper_symbols` (the test
        // `every_helper_the_translator_calls_is_declared` reads the sources
        // to hold it so).
        let id = self.s.helpers[name];
        let r = self.jit.declare_func_in_func(id, self.b.func);
        self.refs.insert(name, r);
        r
    }

    /// Calls a helper of a cold path through its trampoline (see
    /// `translate::cold_trampolines`): its result, if it has one, is read
    /// back from the context.
    fn cold_helper(&mut self, cold: (&'static str, FuncId, bool), args: &[Value]) -> Vec<Value> {
        if args.contains(&self.ctx) {
            self.store_ids();
        }
        self.cold_call(cold, args)
    }

    /// [`cold_helper`](Self::cold_helper) without storing the work-item's
    /// ids first (the call that stores them).
    pub(super) fn cold_call(
        &mut self,
        (name, id, returns): (&'static str, FuncId, bool),
        args: &[Value],
    ) -> Vec<Value> {
        let r = match self.refs.get(name) {
            Some(r) => *r,
            None => {
                let r = self.jit.declare_func_in_func(id, self.b.func);
                self.refs.insert(name, r);
                r
            }
        };
        self.b.ins().call(r, args);
        if !returns {
            return Vec::new();
        }
        let ctx = self.ctx;
        vec![self.b.ins().load(types::I64, mem(), ctx, CTX_ANSWER)]
    }

    /// A zero of type `t`.
    pub fn zero(&mut self, t: ClType) -> Value {
        match t {
            types::F32 => self.b.ins().f32const(0.0),
            types::F64 => self.b.ins().f64const(0.0),
            t => self.b.ins().iconst(t, 0),
        }
    }

    /// The type of an id.
    pub fn type_of(&self, id: Word) -> Result<Word, CompileError> {
        if let Some(t) = self.types_of.get(&id) {
            return Ok(*t);
        }
        if let Some(c) = self.m.constants.get(&id) {
            return Ok(c.ty());
        }
        if let Some(g) = self.m.globals.iter().find(|g| g.id == id) {
            return Ok(g.ty);
        }
        Err(CompileError::Invalid(format!("%{id} has no type")))
    }

    /// The flattened value of `id`: defined earlier, or a constant or a
    /// module-scope variable's address made here.
    pub fn get(&mut self, id: Word) -> Result<Vec<Value>, CompileError> {
        let v = self.get_stored(id)?;
        if !self.signed_view {
            return Ok(v);
        }
        match self.type_of(id).ok().and_then(|t| self.narrow_width(t)) {
            Some(w) => Ok(v
                .into_iter()
                .map(|x| {
                    let s = self.b.func.dfg.value_type(x).bits() as i64 - w as i64;
                    let up = self.b.ins().ishl_imm_s(x, s);
                    self.b.ins().sshr_imm_s(up, s)
                })
                .collect()),
            None => Ok(v),
        }
    }

    /// The declared width of an odd-width integer type (or of a vector's
    /// elements), if `ty` is one.
    pub fn narrow_width(&self, ty: Word) -> Option<u32> {
        if let Some(w) = self.m.narrow.get(&ty) {
            return Some(*w);
        }
        match self.m.ty(ty).ok()? {
            clsync_spirv::Type::Vector { elem, .. } => self.m.narrow.get(elem).copied(),
            _ => None,
        }
    }

    /// The flattened value of `id` as kept.
    fn get_stored(&mut self, id: Word) -> Result<Vec<Value>, CompileError> {
        if let Some(j) = self.varying_lane(id) {
            if let Some(v) = self.value_in_lane(id, j) {
                return Ok(v);
            }
            return Err(CompileError::Invalid(format!(
                "%{id} is used before it is defined"
            )));
        }
        if let Some(vars) = self.cont.as_ref().and_then(|c| c.vars.get(&id)) {
            let vars: Vec<Variable> = vars.iter().map(|(v, _, _)| *v).collect();
            return Ok(vars.into_iter().map(|v| self.b.use_var(v)).collect());
        }
        if let Some(v) = self.vals.get(&id) {
            return Ok(v.clone());
        }
        if let Some(slot) = self.s.plan.of.get(&id).copied() {
            if self.m.globals.iter().any(|g| g.id == id) {
                return Ok(vec![self
                    .b
                    .ins()
                    .iconst(types::I64, (slot << OFFSET_BITS) as i64)]);
            }
        }
        if let Some(c) = self.m.constants.get(&id).cloned() {
            return self.constant(&c);
        }
        if self
            .m
            .globals
            .iter()
            .any(|g| g.id == id && g.storage == StorageClass::Input)
        {
            return Err(CompileError::Unsupported(format!(
                "a built-in variable (%{id}) used other than by a load"
            )));
        }
        Err(CompileError::Invalid(format!(
            "%{id} is used before it is defined"
        )))
    }

    /// One scalar operand.
    pub fn get1(&mut self, id: Word) -> Result<Value, CompileError> {
        let v = self.get(id)?;
        v.first()
            .copied()
            .ok_or_else(|| CompileError::Invalid(format!("%{id} has no value")))
    }

    fn constant(&mut self, c: &Constant) -> Result<Vec<Value>, CompileError> {
        Ok(match c {
            Constant::Scalar { ty, bits } if super::half::is_half(self.m, *ty) => {
                let f = crate::exec::math::clsync_half_to_float(*bits as u32);
                vec![self.b.ins().f32const(f)]
            }
            Constant::Scalar { ty, bits } => {
                let t = cl_type(self.m, *ty)?;
                vec![match t {
                    types::F32 => self.b.ins().f32const(f32::from_bits(*bits as u32)),
                    types::F64 => self.b.ins().f64const(f64::from_bits(*bits)),
                    t => self.b.ins().iconst(t, *bits as i64),
                }]
            }
            Constant::Sampler { bits, .. } => vec![self.b.ins().iconst(types::I64, *bits as i64)],
            Constant::Composite { parts, .. } => {
                let mut out = Vec::new();
                for p in parts {
                    out.extend(self.get(*p)?);
                }
                out
            }
            Constant::Null { ty } => {
                let ts = flat_types(self.m, *ty)?;
                ts.into_iter().map(|t| self.zero(t)).collect()
            }
            Constant::Op { ty, op, operands } => {
                let ops: Vec<Operand> = operands.iter().map(|w| Operand::IdRef(*w)).collect();
                let inst = Instruction::new(*op, Some(*ty), Some(0), ops);
                return self.value_of(&inst);
            }
        })
    }

    /// Translates an instruction that computes a value into that value
    /// (for constant expressions).
    fn value_of(&mut self, inst: &Instruction) -> Result<Vec<Value>, CompileError> {
        self.instruction(inst)?;
        self.vals.remove(&0).ok_or_else(|| {
            CompileError::Unsupported(format!("constant expression Op{:?}", inst.class.opcode))
        })
    }

    /// An id operand.
    pub fn id(&self, inst: &Instruction, i: usize) -> Result<Word, CompileError> {
        match inst.operands.get(i) {
            Some(Operand::IdRef(w))
            | Some(Operand::IdScope(w))
            | Some(Operand::IdMemorySemantics(w)) => Ok(*w),
            o => Err(CompileError::Invalid(format!(
                "Op{:?}: operand {i} is {o:?}, not an id",
                inst.class.opcode
            ))),
        }
    }

    /// A literal operand.
    pub fn lit(&self, inst: &Instruction, i: usize) -> Result<u64, CompileError> {
        match inst.operands.get(i) {
            Some(Operand::LiteralBit32(w)) => Ok(*w as u64),
            Some(Operand::LiteralBit64(w)) => Ok(*w),
            Some(Operand::LiteralExtInstInteger(w)) => Ok(*w as u64),
            o => Err(CompileError::Invalid(format!(
                "Op{:?}: operand {i} is {o:?}, not a literal",
                inst.class.opcode
            ))),
        }
    }

    /// The value of a constant id operand (scopes, semantics, struct
    /// indices).
    pub fn const_u64(&self, id: Word) -> Result<u64, CompileError> {
        self.known_u64(id).ok_or_else(|| {
            CompileError::Unsupported(format!(
                "%{id} must be a constant here (a run-time scope, order or struct index)"
            ))
        })
    }

    /// The constant `id` holds, or None where it is a run-time value.
    pub fn known_u64(&self, id: Word) -> Option<u64> {
        match self.m.constants.get(&id) {
            Some(Constant::Scalar { bits, .. }) => Some(*bits),
            Some(Constant::Null { .. }) => Some(0),
            _ => None,
        }
    }

    /// A scope or semantics operand as a 32-bit value: its constant, or
    /// the value it has at run time. An OpenCL C 2.0 atomic's order and
    /// scope are arguments of type `memory_order` and `memory_scope`
    /// (`001_b96d5603ef61627c.txt`), which a kernel may compute; llvm-spirv
    /// maps such values to SPIR-V's with helper functions and passes the
    /// results.
    pub fn u32_operand(&mut self, id: Word) -> Result<Value, CompileError> {
        if let Some(c) = self.known_u64(id) {
            return Ok(self.b.ins().iconst(types::I32, c as u32 as i64));
        }
        let v = self.get1(id)?;
        Ok(match self.b.func.dfg.value_type(v) {
            types::I32 => v,
            t if t.bits() > 32 => self.b.ins().ireduce(types::I32, v),
            _ => self.b.ins().uextend(types::I32, v),
        })
    }

    /// Defines the result of `inst`.
    pub fn def(&mut self, inst: &Instruction, v: Vec<Value>) {
        let id = inst.result_id.unwrap_or(0);
        if let Some(t) = inst.result_type {
            self.types_of.insert(id, t);
        }
        // A value of an odd-width integer type is kept zero-extended from
        // its width, whatever the wider operation made.
        let v = match inst.result_type.and_then(|t| self.narrow_width(t)) {
            Some(w) => v
                .into_iter()
                .map(|x| {
                    let t = self.b.func.dfg.value_type(x);
                    if t.is_int() && t.bits() > w {
                        self.b.ins().band_imm_s(x, ((1u64 << w) - 1) as i64)
                    } else {
                        x
                    }
                })
                .collect(),
            None => v,
        };
        let v = self.round_half_result(inst, v);
        if self.s.checked && id != 0 {
            let lanes = match self.pending.take() {
                Some(l) => l,
                None => self.propagate(inst, v.len()),
            };
            if lanes.iter().any(Option::is_some) {
                self.shadows.insert(id, lanes);
            } else {
                self.shadows.remove(&id);
            }
        }
        self.define_var(id, &v);
        match self.varying_lane(id) {
            Some(j) => self.set_lane_value(id, j, v),
            None => {
                self.vals.insert(id, v);
            }
        }
    }

    pub(super) fn instruction(&mut self, inst: &Instruction) -> Result<(), CompileError> {
        // An operation that reads its integer operands as signed sees a
        // value of an odd width (kept zero-extended) sign-extended from it.
        self.signed_view = matches!(
            inst.class.opcode,
            Op::SConvert
                | Op::SDiv
                | Op::SRem
                | Op::SMod
                | Op::ShiftRightArithmetic
                | Op::SLessThan
                | Op::SLessThanEqual
                | Op::SGreaterThan
                | Op::SGreaterThanEqual
                | Op::ConvertSToF
                | Op::SatConvertSToU
        ) && !self.m.narrow.is_empty();
        let r = self.dispatch(inst);
        self.signed_view = false;
        r
    }

    fn dispatch(&mut self, inst: &Instruction) -> Result<(), CompileError> {
        let op = inst.class.opcode;
        match op {
            Op::Phi | Op::SelectionMerge | Op::LoopMerge | Op::Nop => {}
            Op::Branch | Op::BranchConditional | Op::Switch | Op::Return | Op::ReturnValue => {
                self.control(inst)?
            }
            Op::Unreachable => {
                let site = self.site();
                let args = [
                    self.ctx,
                    self.b.ins().iconst(types::I64, 0),
                    self.b.ins().iconst(types::I64, 0),
                    self.b.ins().iconst(types::I32, 3),
                    self.b.ins().iconst(types::I32, site),
                ];
                self.helper("clsync_fault", &args);
                let bail = self.bail_block();
                self.b.ins().jump(bail, &[]);
            }
            Op::FunctionCall => self.call(inst)?,
            Op::Undef => {
                let ts = flat_types(self.m, inst.result_type.unwrap_or(0))?;
                let z = ts.into_iter().map(|t| self.zero(t)).collect();
                self.def(inst, z);
            }
            Op::CopyObject => {
                let v = self.get(self.id(inst, 0)?)?;
                self.def(inst, v);
            }
            Op::ExtInst => self.ext_inst(inst)?,
            Op::ControlBarrier if self.cont.is_some() => self.continuation_barrier(inst)?,
            Op::ControlBarrier => {
                let exec = self.const_u64(self.id(inst, 0)?)?;
                let memscope = self.const_u64(self.id(inst, 1)?)?;
                let sem = self.const_u64(self.id(inst, 2)?)?;
                let site = self.site();
                let args = [
                    self.ctx,
                    self.b.ins().iconst(types::I32, exec as i64),
                    self.b.ins().iconst(types::I32, memscope as i64),
                    self.b.ins().iconst(types::I32, sem as i64),
                    self.b.ins().iconst(types::I32, site),
                ];
                self.helper("clsync_barrier", &args);
                self.check_status();
            }
            Op::MemoryBarrier if self.s.checked => {
                let scope = self.const_u64(self.id(inst, 0)?)?;
                let sem = self.const_u64(self.id(inst, 1)?)?;
                let site = self.site();
                let args = [
                    self.ctx,
                    self.b.ins().iconst(types::I32, scope as i64),
                    self.b.ins().iconst(types::I32, sem as i64),
                    self.b.ins().iconst(types::I32, site),
                ];
                self.helper("clsync_fence", &args);
                self.check_status();
            }
            Op::MemoryBarrier => {
                let scope = self.const_u64(self.id(inst, 0)?)?;
                // A work-group's work-items run on one thread and switch
                // only inside runtime calls, which the code generator does
                // not move accesses across: a fence narrower than the
                // device orders nothing more. Device and wider pair with
                // other groups' and the host's fences and atomics.
                if scope <= 1 {
                    self.b.ins().fence();
                }
            }
            _ => {
                if self.composite(inst)?
                    || self.arith(inst)?
                    || self.memory(inst)?
                    || self.group(inst)?
                    || self.image(inst)?
                {
                    return Ok(());
                }
                return Err(CompileError::Unsupported(format!(
                    "the instruction Op{op:?}"
                )));
            }
        }
        Ok(())
    }

    fn call(&mut self, inst: &Instruction) -> Result<(), CompileError> {
        let callee = self.id(inst, 0)?;
        let Some(fid) = self.s.funcs.get(&callee).copied() else {
            let name = self
                .m
                .imports
                .get(&callee)
                .cloned()
                .unwrap_or_else(|| format!("%{callee}"));
            return Err(CompileError::Unsupported(format!(
                "a call to `{name}`, which the program does not define (a built-in clsync does not have yet, or an undefined function)"
            )));
        };
        let mut args = vec![self.ctx];
        let rets = match inst.result_type {
            Some(t) => flat_types(self.m, t)?,
            None => Vec::new(),
        };
        let area = (rets.len() > 1).then(|| {
            self.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                RETURN_SLOT * rets.len() as u32,
                4,
            ))
        });
        if let Some(ss) = area {
            args.push(self.b.ins().stack_addr(types::I64, ss, 0));
        }
        for k in 1..inst.operands.len() {
            args.extend(self.get(self.id(inst, k)?)?);
        }
        let r = self.jit.declare_func_in_func(fid, self.b.func);
        // The callee reads the work-item's ids from the context.
        self.store_ids();
        let call = self.b.ins().call(r, &args);
        let results = match area {
            Some(ss) => rets
                .iter()
                .enumerate()
                .map(|(i, &t)| {
                    self.b
                        .ins()
                        .stack_load(types::I64, t, ss, (i as u32 * RETURN_SLOT) as i32)
                })
                .collect(),
            None => self.b.inst_results(call).to_vec(),
        };
        self.def(inst, results);
        self.check_status();
        Ok(())
    }
}
