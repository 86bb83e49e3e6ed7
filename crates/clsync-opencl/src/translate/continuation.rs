//! Work-item loops: a kernel compiled as a *continuation function* that
//! runs one work-item from one barrier to the next and returns, so that a
//! work-group runs as a loop over its work-items per barrier interval
//! instead of one coroutine per work-item (PoCL's work-item loops,
//! Karrenberg and Hack's continuations).
//!
//! The function is `fn(ctx, args, frame, state) -> u32`: `state` 0 starts
//! the kernel, `k` resumes it after its `k`-th barrier; it returns 0 when
//! the work-item returned from the kernel, `k` when it reached barrier `k`,
//! and [`STOPPED`] when it stopped (a fault, a cancelled launch). The
//! values that live across a barrier are stored in the work-item's `frame`
//! before it returns and loaded from it when it resumes; everything else
//! (private variables in their slots, the arguments, local memory) is where
//! the coroutine build keeps it.
//!
//! This module decides which kernels can run so (`plan`) and which values
//! each barrier keeps (the SPIR-V values live right after it: a backward
//! liveness analysis over the function's blocks, phis used on their
//! edges). In the generated code those values are Cranelift variables, so
//! that the resume blocks' definitions meet the original ones where control
//! flow joins.

use std::collections::{HashMap, HashSet};

use clsync_spirv::spirv::{Op, Word};
use clsync_spirv::{Function, Instruction, Module, Operand};
use cranelift_codegen::ir::{self, types, InstBuilder, Type as ClType, Value};
use cranelift_frontend::Variable;

use super::function::{fixed, mem, Fx};
use crate::exec::ctx::{CTX_NSLOTS, CTX_SLOTS};
use crate::CompileError;

/// What a continuation function returns when its work-item stopped.
pub const STOPPED: u32 = u32::MAX;

/// The continuation plan of one kernel.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// Every value live across some barrier.
    pub cross: HashSet<Word>,
    /// The values live right after each barrier, by (block label, index of
    /// the barrier in the block).
    pub live: HashMap<(Word, usize), Vec<Word>>,
}

/// Why a kernel runs on coroutines instead (for tests and `CLSYNC_DEBUG`).
pub(crate) type Refusal = String;

/// Whether `op` is a group operation other than a work-group barrier:
/// collectives, async copies and their events, sub-group operations. Each
/// needs the work-items of its group at one point together, which the
/// coroutine engine gives and a continuation would need more states for.
fn is_group_op(op: Op) -> bool {
    let name = format!("{op:?}");
    name.starts_with("Group") || name.contains("Subgroup")
}

/// The plan for kernel `f`, or why it cannot run as work-item loops: each
/// barrier must be a work-group barrier in the kernel's own body (a called
/// function returns to its caller, not to the group's loop), and neither
/// it nor what it calls may use collectives, async copies or sub-group
/// operations.
pub(crate) fn plan(m: &Module, f: &Function) -> Result<Plan, Refusal> {
    // Its copy would be made again on each resume.
    if !super::byval::written(m, f).is_empty() {
        return Err("a by-value argument that the kernel writes".into());
    }
    let mut seen = HashSet::new();
    let mut todo = vec![(f.id, true)];
    while let Some((id, is_kernel)) = todo.pop() {
        if !seen.insert(id) {
            continue;
        }
        let Some(g) = m.function(id) else { continue };
        for b in &g.blocks {
            for (inst, _) in &b.instructions {
                let op = inst.class.opcode;
                if op == Op::ControlBarrier {
                    if !is_kernel {
                        return Err(format!("`{}` calls a barrier", g.name));
                    }
                    let exec = scope_of(m, inst).ok_or("a barrier with a run-time scope")?;
                    if exec != 2 {
                        return Err("a sub-group barrier".into());
                    }
                } else if is_group_op(op) {
                    return Err(format!("Op{op:?}"));
                } else if op == Op::FunctionCall {
                    if let Some(Operand::IdRef(c)) = inst.operands.first() {
                        todo.push((*c, false));
                    }
                }
            }
        }
    }
    Ok(liveness(f))
}

/// The function that is the kernel's body: `f` itself, or the function it
/// only calls with its own parameters (llvm-spirv makes a kernel's entry
/// point such a wrapper around the kernel's function).
pub(crate) fn body<'m>(m: &'m Module, f: &'m Function) -> &'m Function {
    let [b] = f.blocks.as_slice() else { return f };
    let [(call, _), (ret, _)] = b.instructions.as_slice() else {
        return f;
    };
    if call.class.opcode != Op::FunctionCall || ret.class.opcode != Op::Return {
        return f;
    }
    let passes_params = call.operands.len() == f.params.len() + 1
        && call.operands[1..]
            .iter()
            .zip(&f.params)
            .all(|(o, (p, _))| *o == Operand::IdRef(*p));
    match call.operands.first() {
        Some(Operand::IdRef(c)) if passes_params => m.function(*c).unwrap_or(f),
        _ => f,
    }
}

/// The constant execution scope of a barrier.
fn scope_of(m: &Module, inst: &Instruction) -> Option<u64> {
    match inst.operands.first() {
        Some(Operand::IdScope(w)) | Some(Operand::IdRef(w)) => match m.constants.get(w) {
            Some(clsync_spirv::Constant::Scalar { bits, .. }) => Some(*bits),
            _ => None,
        },
        _ => None,
    }
}

/// The value ids an instruction reads (phis excepted: theirs are read on
/// the edges).
fn uses<'a>(inst: &'a Instruction, defs: &'a HashSet<Word>) -> impl Iterator<Item = Word> + 'a {
    inst.operands.iter().filter_map(move |o| match o {
        Operand::IdRef(w) if defs.contains(w) => Some(*w),
        _ => None,
    })
}

/// Backward liveness of `f`'s values, then the set live after each
/// barrier.
fn liveness(f: &Function) -> Plan {
    let defs: HashSet<Word> = f
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter().filter_map(|(i, _)| i.result_id))
        .collect();
    let n = f.blocks.len();
    let (index, succ) = super::cfg::block_graph(f);
    // Per block: upward-exposed uses, definitions, and the values its
    // successors' phis take on the edge from it.
    let mut gen = vec![HashSet::new(); n];
    let mut kill = vec![HashSet::new(); n];
    let mut edge_uses = vec![HashSet::new(); n];
    for (bi, b) in f.blocks.iter().enumerate() {
        for (inst, _) in &b.instructions {
            if inst.class.opcode != Op::Phi {
                for u in uses(inst, &defs) {
                    if !kill[bi].contains(&u) {
                        gen[bi].insert(u);
                    }
                }
            }
            if let Some(r) = inst.result_id {
                kill[bi].insert(r);
            }
        }
    }
    for b in &f.blocks {
        for (inst, _) in &b.instructions {
            if inst.class.opcode != Op::Phi {
                continue;
            }
            for pair in inst.operands.chunks(2) {
                if let [Operand::IdRef(v), Operand::IdRef(p)] = pair {
                    if let (true, Some(pi)) = (defs.contains(v), index.get(p)) {
                        edge_uses[*pi].insert(*v);
                    }
                }
            }
        }
    }
    let mut live_in: Vec<HashSet<Word>> = vec![HashSet::new(); n];
    let mut live_out: Vec<HashSet<Word>> = vec![HashSet::new(); n];
    let mut changed = true;
    while changed {
        changed = false;
        for bi in (0..n).rev() {
            let mut out = edge_uses[bi].clone();
            for s in &succ[bi] {
                out.extend(live_in[*s].iter().copied());
            }
            let mut inn = gen[bi].clone();
            inn.extend(out.iter().filter(|v| !kill[bi].contains(v)).copied());
            if inn.len() != live_in[bi].len() || out.len() != live_out[bi].len() {
                changed = true;
                live_in[bi] = inn;
                live_out[bi] = out;
            }
        }
    }
    let mut plan = Plan::default();
    for (bi, b) in f.blocks.iter().enumerate() {
        let mut live = live_out[bi].clone();
        for (k, (inst, _)) in b.instructions.iter().enumerate().rev() {
            if inst.class.opcode == Op::ControlBarrier {
                let mut l: Vec<Word> = live.iter().copied().collect();
                l.sort_unstable();
                plan.cross.extend(l.iter().copied());
                plan.live.insert((b.label, k), l);
                continue;
            }
            if let Some(r) = inst.result_id {
                live.remove(&r);
            }
            if inst.class.opcode != Op::Phi {
                live.extend(uses(inst, &defs));
            }
        }
    }
    plan
}

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

/// A continuation build's state (see the module docs).
pub(crate) struct Cont {
    pub plan: Plan,
    /// The work-item's frame and the state to resume at.
    pub frame: Value,
    pub state: Value,
    /// The block that dispatches on the state.
    pub dispatch: ir::Block,
    /// The variables of the values live across a barrier, each with its
    /// byte offset in the frame.
    pub vars: HashMap<Word, Vec<(Variable, i32, ClType)>>,
    pub frame_bytes: i32,
    /// Each barrier's resume block, in order (barrier `k` is index `k - 1`).
    pub resumes: Vec<ir::Block>,
    pub barriers: Vec<BarrierSpec>,
}

impl Fx<'_, '_> {
    /// A continuation function's first block: the context, the kernel's
    /// arguments read from their words (as the entry stub reads them), the
    /// slot table; then the dispatch on the state. Everything it defines
    /// dominates every block, the resume blocks included.
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
        let c = self.cont.as_mut().expect("a continuation build");
        c.frame = p[2];
        c.state = p[3];
        let dispatch = c.dispatch;
        self.b.ins().jump(dispatch, &[]);
        Ok(())
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
        }
        for ((var, _, _), x) in c.vars[&id].iter().zip(v) {
            self.b.def_var(*var, *x);
        }
    }

    /// A work-group barrier of a continuation build: the values live after
    /// it go to the frame, the function returns the barrier's number, and
    /// translation goes on in the block that resumes there, which loads
    /// them back.
    pub(super) fn continuation_barrier(&mut self, inst: &Instruction) -> Result<(), CompileError> {
        let memscope = self.const_u64(self.id(inst, 1)?)?;
        let sem = self.const_u64(self.id(inst, 2)?)?;
        let site = self.site();
        let key = (self.current, self.at);
        let c = self.cont.as_ref().expect("a continuation build");
        let live = c.plan.live.get(&key).cloned().unwrap_or_default();
        let frame = c.frame;
        let mut kept = Vec::new();
        for id in &live {
            let Some(vars) = self.cont.as_ref().and_then(|c| c.vars.get(id)).cloned() else {
                return Err(CompileError::Unsupported(format!(
                    "%{id} lives across a barrier but has no value there"
                )));
            };
            for (var, off, t) in vars {
                let v = self.b.use_var(var);
                self.b.ins().store(mem(), v, frame, off);
                kept.push((var, off, t));
            }
        }
        let c = self.cont.as_mut().expect("a continuation build");
        c.barriers.push(BarrierSpec {
            mem_scope: memscope as u32,
            semantics: sem as u32,
            site: site as u32,
        });
        let k = c.barriers.len() as i64;
        let resume = self.b.create_block();
        c.resumes.push(resume);
        let r = self.b.ins().iconst(types::I32, k);
        self.b.ins().return_(&[r]);
        self.b.switch_to_block(resume);
        for (var, off, t) in kept {
            let v = self.b.ins().load(t, mem(), frame, off);
            self.b.def_var(var, v);
        }
        Ok(())
    }
}
