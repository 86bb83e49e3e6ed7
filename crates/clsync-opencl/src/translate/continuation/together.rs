//! A divergent region that a lane batch runs together where its lanes do
//! not part (see `serial`'s module docs): which regions have such a copy
//! and the conditions their batches compare, the entry's comparisons, and
//! the copy's translation.

use std::collections::{HashMap, HashSet};

use clsync_spirv::spirv::{Op, Word};
use clsync_spirv::{Function, Instruction, Module, Operand};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{self, BlockArg, InstBuilder};

use super::batch::LANES;
use crate::translate::function::Fx;
use crate::CompileError;

/// The conditions a batch compares to run region `blocks` together, and
/// the instructions of the region that make them (see `Serial::together`),
/// or none.
pub(super) fn together_conds(
    m: &Module,
    f: &Function,
    blocks: &HashSet<usize>,
    entry: usize,
    join: usize,
    diverges: impl Fn(usize) -> bool,
) -> (Vec<Word>, Vec<Instruction>) {
    let none = (Vec::new(), Vec::new());
    let made: HashMap<Word, &Instruction> = blocks
        .iter()
        .flat_map(|&b| &f.blocks[b].instructions)
        .filter_map(|(i, _)| Some((i.result_id?, i)))
        .collect();
    let defined: HashSet<Word> = made.keys().copied().collect();
    let mut conds = Vec::new();
    let mut inner: Vec<usize> = blocks.iter().copied().filter(|b| diverges(*b)).collect();
    inner.sort_unstable();
    for b in std::iter::once(entry).chain(inner) {
        match f.blocks[b].instructions.last() {
            Some((i, _)) if i.class.opcode == Op::BranchConditional => match i.operands.first() {
                Some(Operand::IdRef(c)) if !conds.contains(c) => conds.push(*c),
                Some(Operand::IdRef(_)) => {}
                _ => return none,
            },
            _ => return none,
        }
    }
    // What the region makes of them, each before its uses.
    let mut speculated: Vec<Instruction> = Vec::new();
    let mut todo: Vec<(Word, bool)> = conds.iter().map(|c| (*c, false)).collect();
    let mut seen = HashSet::new();
    while let Some((id, operands_done)) = todo.pop() {
        let Some(inst) = made.get(&id) else { continue };
        if operands_done {
            speculated.push((*inst).clone());
            continue;
        }
        if !seen.insert(id) {
            continue;
        }
        // A work-item built-in's value is the group's or the work-item's
        // own, whatever block reads it.
        let builtin = inst.class.opcode == Op::Load
            && !crate::translate::uniform::volatile(inst)
            && matches!(inst.operands.first(),
                Some(Operand::IdRef(p)) if crate::translate::builtin_of(m, *p).is_some());
        // A division by a constant that is positive at its width cannot
        // trap (not 0, not -1).
        let divides = matches!(
            inst.class.opcode,
            Op::UDiv | Op::SDiv | Op::UMod | Op::SRem | Op::SMod
        ) && matches!(inst.operands.get(1), Some(Operand::IdRef(d)) if positive(m, *d));
        let pure = builtin || divides || speculable(inst.class.opcode);
        if !pure || speculated.len() + todo.len() > 64 {
            return none;
        }
        todo.push((id, true));
        for o in &inst.operands {
            if let Operand::IdRef(w) = o {
                todo.push((*w, false));
            }
        }
    }
    if escapes(f, blocks, &defined, join) {
        return none;
    }
    (conds, speculated)
}

/// For each of `conds`, the integer comparison of `f` that makes it
/// (opcode and operands), where one does.
pub(super) fn comparisons(f: &Function, conds: &[Word]) -> Vec<Option<(Op, Word, Word)>> {
    let find = |c: Word| {
        let inst = f
            .blocks
            .iter()
            .flat_map(|b| &b.instructions)
            .map(|(i, _)| i)
            .find(|i| i.result_id == Some(c))?;
        let op = inst.class.opcode;
        if !matches!(
            op,
            Op::IEqual
                | Op::INotEqual
                | Op::SLessThan
                | Op::SLessThanEqual
                | Op::SGreaterThan
                | Op::SGreaterThanEqual
                | Op::ULessThan
                | Op::ULessThanEqual
                | Op::UGreaterThan
                | Op::UGreaterThanEqual
        ) {
            return None;
        }
        match inst.operands[..] {
            [Operand::IdRef(a), Operand::IdRef(b)] => Some((op, a, b)),
            _ => None,
        }
    };
    conds.iter().map(|c| find(*c)).collect()
}

/// Whether `id` is an integer constant above zero as a signed number of
/// its width.
fn positive(m: &Module, id: Word) -> bool {
    let Some(clsync_spirv::Constant::Scalar { ty, bits }) = m.constants.get(&id) else {
        return false;
    };
    match m.ty(*ty) {
        Ok(clsync_spirv::Type::Int(w)) if (1..=64).contains(w) => {
            *bits > 0 && *bits < 1u64 << (w - 1)
        }
        _ => false,
    }
}

/// Whether an instruction of `op` may run where its block would not (see
/// `plan::pure_integer`; and the logical operations and selects).
fn speculable(op: Op) -> bool {
    super::plan::pure_integer(op)
        || matches!(
            op,
            Op::LogicalAnd
                | Op::LogicalOr
                | Op::LogicalNot
                | Op::LogicalEqual
                | Op::LogicalNotEqual
                | Op::Select
                | Op::Not
                | Op::SNegate
        )
}

/// Whether a value that region `blocks` defines (`defined`) is used
/// outside them, other than by a phi of `join`.
fn escapes(f: &Function, blocks: &HashSet<usize>, defined: &HashSet<Word>, join: usize) -> bool {
    f.blocks.iter().enumerate().any(|(b, blk)| {
        !blocks.contains(&b)
            && blk.instructions.iter().any(|(i, _)| {
                !(b == join && i.class.opcode == Op::Phi)
                    && i.operands
                        .iter()
                        .any(|o| matches!(o, Operand::IdRef(w) if defined.contains(w)))
            })
    })
}

impl Fx<'_, '_> {
    /// The entry of region `r` (whose terminator is `term`) where the
    /// region has a copy for the batch together: compares every lane's
    /// `conds` with the first lane's and goes to the copy where all agree,
    /// else to `serial_entry`, the first lane's entry of the region.
    pub(super) fn enter_together(
        &mut self,
        r: usize,
        term: &Instruction,
        conds: &[Word],
        serial_entry: ir::Block,
    ) -> Result<(), CompileError> {
        let speculated = self.serial().expect("a batched build").regions[r]
            .speculated
            .clone();
        for inst in &speculated {
            self.batch_instruction(inst)?;
        }
        // Per lane, the conditions' values; then, on the first lane's
        // entry condition, a branch to each side, and there, for each
        // condition, whether every lane's value is the first lane's: at
        // once where the condition compares a value that steps from lane
        // to lane with one the batch shares (`monotone_agreement`), else
        // (or where that test cannot tell) a compare and a jump for each
        // lane; any that differs goes to the lanes one at a time.
        let mut lanes = Vec::new();
        for cond in conds {
            lanes.push(self.per_lane(|fx, _| fx.get1(*cond))?);
        }
        let compares = self.serial().expect("a batched build").regions[r]
            .compares
            .clone();
        let mut at_once = Vec::new();
        for (cs, compare) in lanes.iter().zip(&compares) {
            at_once.push(match compare {
                Some(c) => self.monotone_agreement(*c, cs)?,
                None => None,
            });
        }
        let targets = [self.id(term, 1)?, self.id(term, 2)?];
        let sides = [self.b.create_block(), self.b.create_block()];
        self.b.ins().brif(lanes[0][0], sides[0], &[], sides[1], &[]);
        for (side, to) in sides.into_iter().zip(targets) {
            self.b.switch_to_block(side);
            for (cs, fast) in lanes.iter().zip(&at_once) {
                self.lanes_agree(cs, *fast, serial_entry);
            }
            // Every lane goes to `to`, together.
            self.serial_mut().together = Some(r);
            let edge = self.together_jump(to);
            self.serial_mut().together = None;
            edge?;
        }
        Ok(())
    }

    /// Goes on (in a new block) where every lane's condition `cs` is the
    /// first lane's, else to `serial_entry`: where `fast` (the lanes agree
    /// for certain) holds at once; otherwise, on a cold path, each lane's
    /// compared with the first's.
    fn lanes_agree(&mut self, cs: &[ir::Value], fast: Option<ir::Value>, serial_entry: ir::Block) {
        let next = self.b.create_block();
        if let Some(fast) = fast {
            let each = self.b.create_block();
            self.b.set_cold_block(each);
            self.b.ins().brif(fast, next, &[], each, &[]);
            self.b.switch_to_block(each);
        }
        for c in &cs[1..] {
            let more = self.b.create_block();
            if fast.is_some() {
                self.b.set_cold_block(more);
            }
            let same = self.b.ins().icmp(IntCC::Equal, cs[0], *c);
            self.b.ins().brif(same, more, &[], serial_entry, &[]);
            self.b.switch_to_block(more);
        }
        self.b.ins().jump(next, &[]);
        self.b.switch_to_block(next);
    }

    /// Where `compare` (an integer comparison's opcode and operands, its
    /// lanes' results `cs`) compares a value that steps by a constant
    /// from lane to lane with one the batch shares: a value that is true
    /// only where every lane's result is the first lane's. The lanes'
    /// values are then the first's plus multiples of the step, so where
    /// the last lane's lies past the first's in the step's direction (no
    /// wrap, in the comparison's order) they run monotonically:
    ///
    /// - an ordering comparison's results then change at most once along
    ///   the lanes, and agree where the first's and the last's do;
    /// - an equality's are all false (or, `!=`, all true) where the shared
    ///   value lies outside the lanes' range.
    ///
    /// Where that is false the lanes may still agree (an equality of a
    /// step over 1), which the caller then tests lane by lane.
    fn monotone_agreement(
        &mut self,
        compare: (Op, Word, Word),
        cs: &[ir::Value],
    ) -> Result<Option<ir::Value>, CompileError> {
        let (op, a, b) = compare;
        let Some(batch) = self.cont.as_ref().and_then(|c| c.batch.as_ref()) else {
            return Ok(None);
        };
        let stepping = |w: Word| batch.u.steps.get(&w).copied().filter(|s| *s != 0);
        let (x, k, step) = match (stepping(a), stepping(b)) {
            (Some(s), None) if !batch.u.varies(b) => (a, b, s),
            (None, Some(s)) if !batch.u.varies(a) => (b, a, s),
            _ => return Ok(None),
        };
        let first = self.per_one_lane(0, |fx| fx.get1(x))?;
        let last = self.per_one_lane(LANES - 1, |fx| fx.get1(x))?;
        let bits = self.b.func.dfg.value_type(first).bits();
        // The lanes' span must be far from the width's range, so that "the
        // last past the first" means no wrap.
        let span = step.unsigned_abs().saturating_mul(LANES as u64 - 1);
        if bits < 8 || span >= 1u64 << (bits - 2).min(62) {
            return Ok(None);
        }
        let shared = self.get1(k)?;
        let signed = matches!(
            op,
            Op::SLessThan | Op::SLessThanEqual | Op::SGreaterThan | Op::SGreaterThanEqual
        );
        let past = match (step > 0, signed) {
            (true, true) => IntCC::SignedGreaterThanOrEqual,
            (true, false) => IntCC::UnsignedGreaterThanOrEqual,
            (false, true) => IntCC::SignedLessThanOrEqual,
            (false, false) => IntCC::UnsignedLessThanOrEqual,
        };
        let no_wrap = self.b.ins().icmp(past, last, first);
        let agree = match op {
            Op::IEqual | Op::INotEqual => {
                let (lo, hi) = if step > 0 {
                    (first, last)
                } else {
                    (last, first)
                };
                let below = self.b.ins().icmp(IntCC::UnsignedLessThan, shared, lo);
                let above = self.b.ins().icmp(IntCC::UnsignedGreaterThan, shared, hi);
                self.b.ins().bor(below, above)
            }
            _ => self.b.ins().icmp(IntCC::Equal, cs[0], cs[LANES - 1]),
        };
        Ok(Some(self.b.ins().band(no_wrap, agree)))
    }

    /// In the batch's copy of region `r`: the edge to `to`. To the join,
    /// every lane's variables of its phis are defined (a uniform phi's
    /// with its one value) and the edge passes nothing; inside the copy
    /// the edge is a batch's (none here: `edge_args` makes it).
    pub(super) fn together_edge(
        &mut self,
        r: usize,
        to: Word,
    ) -> Result<Option<Vec<BlockArg>>, CompileError> {
        let join = self.serial().expect("a batched build").regions[r].join;
        if to != join {
            return Ok(None);
        }
        for (id, v) in self.edge_values(to)? {
            if let Some(vars) = self.join_vector(id) {
                self.join_together(&vars, v)?;
                continue;
            }
            let lanes = match self.varying_lane(v) {
                Some(_) => self.per_lane(|fx, _| fx.get(v))?,
                None => vec![self.get(v)?; LANES],
            };
            for (j, vals) in lanes.into_iter().enumerate() {
                let vars = self
                    .serial()
                    .and_then(|s| s.join_vars.get(&(id, j)).cloned())
                    .unwrap_or_default();
                for (var, x) in vars.into_iter().zip(vals) {
                    self.b.def_var(var, x);
                }
            }
        }
        Ok(Some(Vec::new()))
    }

    /// The batch's jump to `to`, the block or the batch's copy, with the
    /// edge's values (a loop's back-edge polls first, as `control`'s).
    fn together_jump(&mut self, to: Word) -> Result<(), CompileError> {
        use cranelift_codegen::ir::InstBuilder;
        if self.is_back_edge(to) {
            self.poll();
        }
        let args = self.edge_args(to)?;
        let t = self.target(to)?;
        self.b.ins().jump(t, &args);
        Ok(())
    }

    /// Translates region `r`'s copy for the batch together: its blocks
    /// (`labels`) as batched code, the copies' phis their own. What the
    /// region defines is put back as it was after (each lane's copy
    /// defines it again, and nothing past the region uses it).
    pub(super) fn together_copy(
        &mut self,
        r: usize,
        f: &Function,
        labels: &[Word],
    ) -> Result<(), CompileError> {
        let blocks: Vec<&clsync_spirv::Block> = labels
            .iter()
            .filter_map(|l| f.blocks.iter().find(|b| b.label == *l))
            .collect();
        let defined: Vec<Word> = blocks
            .iter()
            .flat_map(|b| &b.instructions)
            .filter_map(|(i, _)| i.result_id)
            .collect();
        let saved = self.save_values(&defined);
        let phis = self
            .serial_mut()
            .together_phis
            .remove(&r)
            .unwrap_or_default();
        for (id, sets) in phis {
            match sets.as_slice() {
                [one] => {
                    self.vals.insert(id, one.clone());
                }
                lanes => {
                    for (j, v) in lanes.iter().enumerate() {
                        self.set_lane_value(id, j, v.clone());
                    }
                }
            }
        }
        self.serial_mut().together = Some(r);
        let mut res = Ok(());
        for blk in blocks {
            let cb = self.serial().expect("a batched build").copies[&(blk.label, LANES)];
            self.b.switch_to_block(cb);
            res = self.block_body(blk, true);
            if res.is_err() {
                break;
            }
        }
        self.serial_mut().together = None;
        self.restore_values(saved);
        res
    }
}
