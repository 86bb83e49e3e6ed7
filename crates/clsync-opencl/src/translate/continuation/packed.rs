//! Packed lanes: a batch's varying `int` or `float` value made by a
//! coalesced load (`continuation::coalesce`) or by arithmetic on such
//! values and uniform ones is its lanes in 128-bit vectors of four
//! ([`VECTORS`] of them, a [`Packed`]), and the arithmetic one vector
//! instruction per vector (`dst[l] = src[i] + src[i - s]`: four loads,
//! three adds and a store per vector of the batch). A lane's code that
//! uses such a value takes its lane out of the vector where it uses it;
//! a value kept across a barrier is also given its lanes where it is made.
//! A phi whose every incoming value is packed or uniform (an accumulator
//! of such values) is packed too, as its block's vector parameter, so
//! that a loop keeps its lanes in one register.

use std::collections::HashSet;

use clsync_spirv::spirv::{Op, Word};
use clsync_spirv::{Function, Instruction, Module, Operand, Type};
use cranelift_codegen::ir::{self, types, InstBuilder, Type as ClType, Value};

use crate::translate::function::Fx;
pub use crate::translate::uniform::{VECTORS, VECTOR_LANES};
use crate::CompileError;

/// A batch's packed value: its lanes, [`VECTOR_LANES`] to a vector, the
/// first vector the first lanes'.
pub(crate) type Packed = Vec<Value>;

/// Whether `inst` is OpenCL.std's `fma` or `mad` (the translation makes
/// both a fused multiply-add, packed lanes alike).
fn is_fma(inst: &Instruction) -> bool {
    use clsync_spirv::spirv::OpenclStd100Op as X;
    inst.class.opcode == Op::ExtInst
        && matches!(inst.operands.get(1), Some(Operand::LiteralExtInstInteger(n))
            if *n == X::fma as u32 || *n == X::mad as u32)
}

/// The operands of `inst` that packs: the two of a binary operation, the
/// three of a fused multiply-add.
fn pack_operands(inst: &Instruction) -> Option<Vec<Word>> {
    let ids = |from: usize, n: usize| -> Option<Vec<Word>> {
        (from..from + n)
            .map(|k| match inst.operands.get(k) {
                Some(Operand::IdRef(w)) => Some(*w),
                _ => None,
            })
            .collect()
    };
    if is_fma(inst) {
        return ids(2, 3);
    }
    packs(inst.class.opcode).then(|| ids(0, 2)).flatten()
}

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

/// What a batched build of kernel body `f` packs (see the module docs), as
/// far as the translation's rules predict: the phis it packs (varying
/// 32-bit phis outside the regions run one work-item at a time whose
/// incoming values are packed or uniform: an optimistic fixpoint, where a
/// wrong guess costs the lanes' packing on that edge, not correctness),
/// and every value it packs. Values in `cross` (kept across barriers) are
/// left out, but where `rows` lays the frames out in rows of lanes.
pub(super) fn predict(
    m: &Module,
    f: &Function,
    u: &crate::translate::uniform::Uniformity,
    serial: &[super::serial::Serial],
    cross: &HashSet<Word>,
    rows: bool,
) -> (HashSet<Word>, HashSet<Word>) {
    let empty = HashSet::new();
    let cross = if rows { &empty } else { cross };
    // The regions where work-items part and their joins: this state's, or
    // with rows, where every state's function must predict alike, those
    // of every divergent branch.
    let mut regions: HashSet<Word> = serial.iter().flat_map(|r| r.blocks.clone()).collect();
    let mut joins: HashSet<Word> = serial.iter().map(|r| r.join).collect();
    if rows {
        let (_, succ) = crate::translate::cfg::block_graph(f);
        for (b, blk) in f.blocks.iter().enumerate() {
            if !u.diverging.contains(&blk.label) {
                continue;
            }
            let region = crate::translate::uniform::region(&succ, b, u.ipdom[b]);
            regions.extend(region.into_iter().map(|x| f.blocks[x].label));
            joins.extend(u.ipdom[b].map(|j| f.blocks[j].label));
        }
    }
    let in_region = |label: Word| regions.contains(&label);
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
    let mut steps: HashSet<Word> = HashSet::new();
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
                // A 32-bit value that steps from lane to lane is its first
                // lane's plus the steps where a vector needs it (see
                // `stepped`).
                _ if u.steps.contains_key(&r) => {
                    steps.insert(r);
                }
                Op::Load => {
                    let step = id(inst, 0).and_then(|p| u.steps.get(&p));
                    if step == Some(&4) && !crate::translate::uniform::volatile(inst) {
                        packed.insert(r);
                    }
                }
                _ => {}
            }
        }
    }
    let usable =
        |w: Word, packed: &HashSet<Word>| !u.varies(w) || packed.contains(&w) || steps.contains(&w);
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
                let Some(ops) = pack_operands(inst) else {
                    continue;
                };
                if !u.varies(r) || cross.contains(&r) || !words(inst.result_type) {
                    continue;
                }
                let all = ops.iter().all(|w| usable(*w, &packed));
                if all && ops.iter().any(|w| packed.contains(w)) {
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
    (phis, packed)
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
    pub(super) fn packed_value(&mut self, id: Word) -> Option<Packed> {
        if let Some(v) = self.use_row(id) {
            return Some(v);
        }
        let c = self.cont.as_ref()?;
        if c.plan.cross.contains(&id) {
            return None;
        }
        match c.batch.as_ref()?.packed.get(&id).cloned() {
            Some(v) => Some(v),
            None => self.stepped(id),
        }
    }

    /// Lane `j` of packed value `p`, taken out.
    pub(in crate::translate) fn packed_lane(&mut self, p: &[Value], j: usize) -> Value {
        self.b
            .ins()
            .extractlane(p[j / VECTOR_LANES], (j % VECTOR_LANES) as u8)
    }

    /// The packed value of `lanes` (one scalar a lane), put together.
    pub(in crate::translate) fn pack_lanes(&mut self, lanes: &[Value]) -> Packed {
        let t = self.b.func.dfg.value_type(lanes[0]);
        let vector = t
            .by(VECTOR_LANES as u32)
            .expect("four 32-bit lanes make a vector");
        lanes
            .chunks(VECTOR_LANES)
            .map(|chunk| {
                let mut v = self.b.ins().splat(vector, chunk[0]);
                for (k, x) in chunk.iter().enumerate().skip(1) {
                    v = self.b.ins().insertlane(v, *x, k as u8);
                }
                v
            })
            .collect()
    }

    /// Uniform `x` in every lane of a packed value.
    pub(in crate::translate) fn splat_packed(&mut self, x: Value) -> Packed {
        let t = self.b.func.dfg.value_type(x);
        let vector = t
            .by(VECTOR_LANES as u32)
            .expect("four 32-bit lanes make a vector");
        let v = self.b.ins().splat(vector, x);
        vec![v; VECTORS]
    }

    /// A 32-bit varying `id` whose lanes step by a constant (see
    /// `Uniformity::steps`), as a vector: its first lane's value in every
    /// lane plus `[0, s, 2s, 3s]` (an id, or a value made of one).
    fn stepped(&mut self, id: Word) -> Option<Packed> {
        let step = *self.cont.as_ref()?.batch.as_ref()?.u.steps.get(&id)?;
        let t = self.types_of.get(&id).and_then(|ty| self.packable(*ty))?;
        if t != types::I32 {
            return None;
        }
        let first = self.value_in_lane(id, 0)?.first().copied()?;
        let vector = t.by(VECTOR_LANES as u32)?;
        let all = self.b.ins().splat(vector, first);
        let mut out = Vec::with_capacity(VECTORS);
        for k in 0..VECTORS as i64 {
            let mut bytes = Vec::new();
            for j in 0..VECTOR_LANES as i64 {
                let lane = k * VECTOR_LANES as i64 + j;
                bytes.extend_from_slice(&(step.wrapping_mul(lane) as i32).to_le_bytes());
            }
            let c = self.b.func.dfg.constants.insert(bytes.into());
            let steps = self.b.ins().vconst(vector, c);
            out.push(self.b.ins().iadd(all, steps));
        }
        Some(out)
    }

    /// Whether the batch has `id` as a vector already (not one it would
    /// make of steps).
    fn has_vector(&self, id: Word) -> bool {
        let Some(b) = self.cont.as_ref().and_then(|c| c.batch.as_ref()) else {
            return false;
        };
        (b.rows && b.packed_cross.contains(&id) && b.rows_state.vars.contains_key(&id))
            || (b.packed.contains_key(&id)
                && !self
                    .cont
                    .as_ref()
                    .is_some_and(|c| c.plan.cross.contains(&id)))
    }

    /// Packed phi `id`'s own parameters (not a variable's value).
    pub(in crate::translate) fn packed_param(&self, id: Word) -> Option<Packed> {
        self.cont.as_ref()?.batch.as_ref()?.packed.get(&id).cloned()
    }

    /// Makes `v` the vector of the lanes of `inst`'s result, and gives a
    /// value kept across a barrier its lanes.
    pub(super) fn def_packed(&mut self, inst: &Instruction, v: Packed) -> Result<(), CompileError> {
        let id = inst.result_id.unwrap_or(0);
        if let Some(t) = inst.result_type {
            self.types_of.insert(id, t);
        }
        if self.packed_cross(id) {
            self.def_row(id, v);
            return Ok(());
        }
        let c = self.cont.as_mut().expect("a continuation build");
        let cross = c.plan.cross.contains(&id);
        c.batch
            .as_mut()
            .expect("a batched build")
            .packed
            .insert(id, v.clone());
        if cross {
            self.per_lane(|fx, j| {
                let x = fx.packed_lane(&v, j);
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
        let Some(ids) = pack_operands(inst) else {
            return Ok(false);
        };
        if self.copy_lane().is_some() {
            return Ok(false);
        }
        let Some(t) = inst.result_type.and_then(|ty| self.packable(ty)) else {
            return Ok(false);
        };
        if is_fma(inst) && t != types::F32 {
            return Ok(false);
        }
        // A vector operand at least; a stepped one is made a vector only
        // beside it (alone, its lanes serve the lanes' own code better).
        if !ids.iter().any(|w| self.has_vector(*w)) {
            return Ok(false);
        }
        let mut operands = Vec::new();
        for &w in &ids {
            match (self.packed_value(w), self.varying_lane(w)) {
                (Some(v), _) => operands.push(Some(v)),
                (None, None) => operands.push(None),
                // Varying, as separate lanes: not here.
                (None, Some(_)) => return Ok(false),
            }
        }
        let mut vs: Vec<Packed> = Vec::new();
        for (w, v) in ids.iter().copied().zip(operands) {
            vs.push(match v {
                Some(v) => v,
                None => {
                    let x = self.get1(w)?;
                    self.splat_packed(x)
                }
            });
        }
        // One instruction per vector: the k-th vectors of the operands.
        let mut r = Vec::with_capacity(VECTORS);
        for (k, (&x, &y)) in vs[0].iter().zip(&vs[1]).enumerate() {
            let ins = self.b.ins();
            r.push(match inst.class.opcode {
                Op::ExtInst => ins.fma(x, y, vs[2][k]),
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
            });
        }
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
        let vector = t
            .by(VECTOR_LANES as u32)
            .expect("four 32-bit lanes make a vector");
        let p: Packed = (0..VECTORS)
            .map(|_| self.b.append_block_param(cb, vector))
            .collect();
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
    ) -> Result<Option<Packed>, CompileError> {
        let packs = self
            .cont
            .as_ref()
            .and_then(|c| c.batch.as_ref())
            .is_some_and(|b| b.packed_phis.contains(&id) && b.packed.contains_key(&id));
        let t = self.types_of.get(&id).and_then(|ty| self.packable(*ty));
        let (true, Some(_)) = (packs, t) else {
            return Ok(None);
        };
        self.packed_of(v).map(Some)
    }

    /// 32-bit `v` as a packed value: its own, a uniform `v` in every lane,
    /// or a varying one's lanes put together.
    pub(super) fn packed_of(&mut self, v: Word) -> Result<Packed, CompileError> {
        if let Some(p) = self.packed_value(v) {
            return Ok(p);
        }
        if self.varying_lane(v).is_none() {
            let x = self.get1(v)?;
            return Ok(self.splat_packed(x));
        }
        let lanes = self.per_lane(|fx, _| fx.get1(v))?;
        Ok(self.pack_lanes(&lanes))
    }
}
