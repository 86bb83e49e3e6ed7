//! Packed lanes: a batch's varying `int` or `float` value made by a
//! coalesced load (`continuation::coalesce`) or by arithmetic on such
//! values and uniform ones is one 128-bit vector of its four lanes, and
//! the arithmetic one vector instruction (`dst[l] = src[i] + src[i - s]`:
//! four loads, three adds and a store for the batch). A lane's code that
//! uses such a value takes its lane out of the vector where it uses it;
//! a value kept across a barrier is also given its lanes where it is made.
//! A phi whose every incoming value is packed or uniform (an accumulator
//! of such values) is packed too, as its block's vector parameter, so
//! that a loop keeps its lanes in one register.

use std::collections::HashSet;

use clsync_spirv::spirv::{Op, Word};
use clsync_spirv::{Function, Instruction, Module, Operand, Type};
use cranelift_codegen::ir::{self, types, InstBuilder, Type as ClType, Value};

use super::batch::LANES;
use crate::translate::function::Fx;
use crate::CompileError;

/// The operations made on packed lanes, each lane as the scalar operation
/// would (integer arithmetic wraps alike, IEEE float operations round
/// alike).
fn packs(op: Op) -> bool {
    matches!(
        op,
        Op::IAdd
            | Op::ISub
            | Op::IMul
            | Op::FAdd
            | Op::FSub
            | Op::FMul
            | Op::FDiv
            | Op::BitwiseAnd
            | Op::BitwiseOr
            | Op::BitwiseXor
    )
}

/// The phis of kernel body `f` that a batched build packs (see the module
/// docs): varying 32-bit phis outside the regions run one work-item at a
/// time, not kept across barriers, whose incoming values the translation
/// will have packed or uniform, as far as the same rules predict (an
/// optimistic fixpoint: a wrong guess costs the lanes' packing on that
/// edge, not correctness).
pub(super) fn packed_phis(
    m: &Module,
    f: &Function,
    u: &crate::translate::uniform::Uniformity,
    serial: &[super::serial::Serial],
    cross: &HashSet<Word>,
) -> HashSet<Word> {
    let in_region = |label: Word| serial.iter().any(|r| r.blocks.contains(&label));
    let joins: HashSet<Word> = serial.iter().map(|r| r.join).collect();
    let words = |ty: Option<Word>| {
        ty.is_some_and(|t| matches!(m.ty(t), Ok(Type::Int(32) | Type::Float(32))))
    };
    let id = |inst: &Instruction, k: usize| match inst.operands.get(k) {
        Some(Operand::IdRef(w)) => Some(*w),
        _ => None,
    };
    // What the translation packs: coalesced loads, then (below) the
    // operations on them, phis assumed packed until shown not.
    let mut packed: HashSet<Word> = HashSet::new();
    let mut phis: HashSet<Word> = HashSet::new();
    for b in f.blocks.iter().filter(|b| !in_region(b.label)) {
        for (inst, _) in &b.instructions {
            let Some(r) = inst.result_id else { continue };
            if !u.varies(r) || cross.contains(&r) || !words(inst.result_type) {
                continue;
            }
            match inst.class.opcode {
                Op::Phi if !joins.contains(&b.label) => {
                    phis.insert(r);
                }
                Op::Load => {
                    let volatile = matches!(inst.operands.get(1),
                        Some(Operand::MemoryAccess(a)) if a.bits() & 1 != 0);
                    let step = id(inst, 0).and_then(|p| u.steps.get(&p));
                    if step == Some(&4) && !volatile {
                        packed.insert(r);
                    }
                }
                _ => {}
            }
        }
    }
    let usable = |w: Word, packed: &HashSet<Word>| !u.varies(w) || packed.contains(&w);
    let order = crate::translate::cfg::reverse_postorder(f);
    let loads = packed.clone();
    loop {
        // The operations packed, given the phis still assumed packed (in
        // block order each operand comes first, but phis).
        packed = loads.union(&phis).copied().collect();
        for &i in &order {
            let b = &f.blocks[i];
            if in_region(b.label) {
                continue;
            }
            for (inst, _) in &b.instructions {
                let Some(r) = inst.result_id else { continue };
                if !packs(inst.class.opcode)
                    || !u.varies(r)
                    || cross.contains(&r)
                    || !words(inst.result_type)
                {
                    continue;
                }
                let (x, y) = (id(inst, 0), id(inst, 1));
                let all = [x, y].iter().all(|w| w.is_some_and(|w| usable(w, &packed)));
                if all && [x, y].iter().flatten().any(|w| packed.contains(w)) {
                    packed.insert(r);
                }
            }
        }
        // Then the phis whose incoming values are not all so.
        let before = phis.len();
        phis.retain(|p| {
            let inst = f
                .blocks
                .iter()
                .flat_map(|b| &b.instructions)
                .find(|(i, _)| i.result_id == Some(*p));
            inst.is_some_and(|(i, _)| {
                i.operands.chunks(2).all(|c| match c.first() {
                    Some(Operand::IdRef(v)) => usable(*v, &packed),
                    _ => false,
                })
            })
        });
        if phis.len() == before {
            break;
        }
    }
    phis
}

impl Fx<'_, '_> {
    /// The scalar type of a value of type `ty` that packs four to a vector
    /// (a 32-bit `int` or `float`), if it is one.
    pub(super) fn packable(&self, ty: Word) -> Option<ClType> {
        if self.narrow_width(ty).is_some() || crate::translate::half::is_half(self.m, ty) {
            return None;
        }
        let t = crate::translate::cl_type(self.m, ty).ok()?;
        matches!(t, types::I32 | types::F32).then_some(t)
    }

    /// Varying `id`'s vector of its lanes, if the batch has one. Not for a
    /// value kept across a barrier: where a work-item resumes, its lanes
    /// come from the frames, and the vector made before does not reach
    /// there.
    pub(super) fn packed_value(&self, id: Word) -> Option<Value> {
        let c = self.cont.as_ref()?;
        if c.plan.cross.contains(&id) {
            return None;
        }
        c.batch.as_ref()?.packed.get(&id).copied()
    }

    /// Makes `v` the vector of the lanes of `inst`'s result, and gives a
    /// value kept across a barrier its lanes.
    pub(super) fn def_packed(&mut self, inst: &Instruction, v: Value) -> Result<(), CompileError> {
        let id = inst.result_id.unwrap_or(0);
        if let Some(t) = inst.result_type {
            self.types_of.insert(id, t);
        }
        let c = self.cont.as_mut().expect("a continuation build");
        let cross = c.plan.cross.contains(&id);
        c.batch
            .as_mut()
            .expect("a batched build")
            .packed
            .insert(id, v);
        if cross {
            self.per_lane(|fx, j| {
                let x = fx.b.ins().extractlane(v, j as u8);
                fx.define_var(id, &[x]);
                Ok(())
            })?;
        }
        Ok(())
    }

    /// Translates `inst` on packed lanes where it can (see the module
    /// docs): a binary operation on 32-bit values, each operand packed or
    /// uniform, one at least packed. True then.
    pub(super) fn packed_op(&mut self, inst: &Instruction) -> Result<bool, CompileError> {
        if !packs(inst.class.opcode) || self.copy_lane().is_some() {
            return Ok(false);
        }
        let Some(t) = inst.result_type.and_then(|ty| self.packable(ty)) else {
            return Ok(false);
        };
        let (a, b) = (self.id(inst, 0)?, self.id(inst, 1)?);
        let vector = t.by(LANES as u32).expect("four 32-bit lanes make a vector");
        let mut operands = Vec::new();
        for w in [a, b] {
            match (self.packed_value(w), self.varying_lane(w)) {
                (Some(v), _) => operands.push(Some(v)),
                (None, None) => operands.push(None),
                // Varying, as separate lanes: not here.
                (None, Some(_)) => return Ok(false),
            }
        }
        if operands.iter().all(Option::is_none) {
            return Ok(false);
        }
        let mut vs = Vec::new();
        for (w, v) in [a, b].into_iter().zip(operands) {
            vs.push(match v {
                Some(v) => v,
                None => {
                    let x = self.get1(w)?;
                    self.b.ins().splat(vector, x)
                }
            });
        }
        let (x, y) = (vs[0], vs[1]);
        let ins = self.b.ins();
        let r = match inst.class.opcode {
            Op::IAdd => ins.iadd(x, y),
            Op::ISub => ins.isub(x, y),
            Op::IMul => ins.imul(x, y),
            Op::FAdd => ins.fadd(x, y),
            Op::FSub => ins.fsub(x, y),
            Op::FMul => ins.fmul(x, y),
            Op::FDiv => ins.fdiv(x, y),
            Op::BitwiseAnd => ins.band(x, y),
            Op::BitwiseOr => ins.bor(x, y),
            _ => ins.bxor(x, y),
        };
        self.def_packed(inst, r)?;
        Ok(true)
    }

    /// Makes phi `id` a vector parameter of block `cb` if the batch packs
    /// it: true then.
    pub(in crate::translate) fn packed_phi(&mut self, id: Word, cb: ir::Block) -> bool {
        let packs = self
            .cont
            .as_ref()
            .and_then(|c| c.batch.as_ref())
            .is_some_and(|b| b.packed_phis.contains(&id));
        let t = self.types_of.get(&id).and_then(|ty| self.packable(*ty));
        let (true, Some(t)) = (packs, t) else {
            return false;
        };
        let vector = t.by(LANES as u32).expect("four 32-bit lanes make a vector");
        let p = self.b.append_block_param(cb, vector);
        let b = self
            .cont
            .as_mut()
            .and_then(|c| c.batch.as_mut())
            .expect("a batched build");
        b.packed.insert(id, p);
        true
    }

    /// The argument for packed phi `id` of value `v` on an edge: `v`'s
    /// vector, a uniform `v` in every lane, or a varying one's lanes put
    /// together; none if the phi is not packed.
    pub(in crate::translate) fn packed_edge(
        &mut self,
        id: Word,
        v: Word,
    ) -> Result<Option<Value>, CompileError> {
        let packs = self
            .cont
            .as_ref()
            .and_then(|c| c.batch.as_ref())
            .is_some_and(|b| b.packed_phis.contains(&id) && b.packed.contains_key(&id));
        let t = self.types_of.get(&id).and_then(|ty| self.packable(*ty));
        let (true, Some(t)) = (packs, t) else {
            return Ok(None);
        };
        if let Some(p) = self.packed_value(v) {
            return Ok(Some(p));
        }
        let vector = t.by(LANES as u32).expect("four 32-bit lanes make a vector");
        if self.varying_lane(v).is_none() {
            let x = self.get1(v)?;
            return Ok(Some(self.b.ins().splat(vector, x)));
        }
        let lanes = self.per_lane(|fx, _| fx.get1(v))?;
        let mut p = self.b.ins().splat(vector, lanes[0]);
        for (j, x) in lanes.iter().enumerate().skip(1) {
            p = self.b.ins().insertlane(p, *x, j as u8);
        }
        Ok(Some(p))
    }
}
