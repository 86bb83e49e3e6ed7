//! Counted loops: loops that cannot run forever, whose back-edges need no
//! cancellation point (`Fx::poll`, a load and a branch per iteration).
//!
//! A back-edge is counted when the branch that takes it continues while an
//! induction variable stays below a bound: the variable is a phi of the
//! loop's header that the back-edge gives its value plus one, the
//! comparison (signed or unsigned `<`, or their mirrored forms) reads the
//! phi or that sum against a bound fixed for the whole loop (a constant, a
//! parameter, or a value defined before the header), and the variable is
//! at most 32 bits wide or the bound a constant. Such a loop ends within
//! the bound's distance from the start, at most 2^32 iterations: no spin
//! loop waiting for another work-item is among them (its condition reads
//! memory), and those keep their cancellation point.

use std::collections::{HashMap, HashSet};

use clsync_spirv::spirv::{Op, Word};
use clsync_spirv::{Constant, Function, Instruction, Module, Operand, Type};

/// The back-edges of `f` that close counted loops, as (the block that
/// branches, the header), given each block's place in reverse postorder.
pub(super) fn counted_back_edges(
    m: &Module,
    f: &Function,
    order: &HashMap<Word, usize>,
) -> HashSet<(Word, Word)> {
    let mut def: HashMap<Word, (&Instruction, Word)> = HashMap::new();
    for b in &f.blocks {
        for (inst, _) in &b.instructions {
            if let Some(r) = inst.result_id {
                def.insert(r, (inst, b.label));
            }
        }
    }
    let params: HashSet<Word> = f.params.iter().map(|(p, _)| *p).collect();
    let mut out = HashSet::new();
    for b in &f.blocks {
        let Some((branch, _)) = b.instructions.last() else {
            continue;
        };
        if branch.class.opcode != Op::BranchConditional {
            continue;
        }
        let ids: Vec<Word> = super::id_operands(branch).collect();
        let [cond, t, e] = ids[..] else { continue };
        let here = order.get(&b.label).copied().unwrap_or(usize::MAX);
        for (header, continues_when) in [(t, true), (e, false)] {
            let Some(&h) = order.get(&header) else {
                continue;
            };
            if h > here {
                continue; // not a back-edge
            }
            let fixed = |w: Word| {
                m.constants.contains_key(&w)
                    || params.contains(&w)
                    || def
                        .get(&w)
                        .is_some_and(|(_, blk)| order.get(blk).is_some_and(|o| *o < h))
            };
            if counted(m, &def, cond, continues_when, header, b.label, &fixed) {
                out.insert((b.label, header));
            }
        }
    }
    out
}

/// Whether branching to `header` while `cond` is `continues_when` is the
/// back-edge of a counted loop (see the module docs).
fn counted(
    m: &Module,
    def: &HashMap<Word, (&Instruction, Word)>,
    cond: Word,
    continues_when: bool,
    header: Word,
    latch: Word,
    fixed: &dyn Fn(Word) -> bool,
) -> bool {
    let Some((c, _)) = def.get(&cond) else {
        return false;
    };
    let [Operand::IdRef(a), Operand::IdRef(b)] = c.operands[..] else {
        return false;
    };
    // (the induction side, the bound) of a comparison that holds while
    // the induction side is below the bound.
    let (x, bound) = match (c.class.opcode, continues_when) {
        (Op::SLessThan | Op::ULessThan, true) => (a, b),
        (Op::SGreaterThan | Op::UGreaterThan, true) => (b, a),
        (Op::SGreaterThanEqual | Op::UGreaterThanEqual, false) => (a, b),
        (Op::SLessThanEqual | Op::ULessThanEqual, false) => (b, a),
        _ => return false,
    };
    if !fixed(bound) {
        return false;
    }
    // The phi of the header, and the value the back-edge gives it.
    let phi_next = |phi: Word| -> Option<Word> {
        let (p, blk) = def.get(&phi)?;
        if p.class.opcode != Op::Phi || *blk != header {
            return None;
        }
        p.operands.chunks(2).find_map(|pair| match pair {
            [Operand::IdRef(v), Operand::IdRef(from)] if *from == latch => Some(*v),
            _ => None,
        })
    };
    let plus_one = |next: Word, phi: Word| -> bool {
        let Some((n, _)) = def.get(&next) else {
            return false;
        };
        if n.class.opcode != Op::IAdd {
            return false;
        }
        match n.operands[..] {
            [Operand::IdRef(p), Operand::IdRef(k)] | [Operand::IdRef(k), Operand::IdRef(p)]
                if p == phi =>
            {
                matches!(m.constants.get(&k), Some(Constant::Scalar { bits: 1, .. }))
            }
            _ => false,
        }
    };
    // The induction side is the phi, or the phi plus one.
    let phi = if let Some(next) = phi_next(x) {
        plus_one(next, x).then_some(x)
    } else {
        def.get(&x).and_then(|(n, _)| match n.operands[..] {
            [Operand::IdRef(p), _] | [_, Operand::IdRef(p)]
                if n.class.opcode == Op::IAdd && phi_next(p) == Some(x) && plus_one(x, p) =>
            {
                Some(p)
            }
            _ => None,
        })
    };
    let Some(phi) = phi else { return false };
    let narrow = def
        .get(&phi)
        .and_then(|(p, _)| p.result_type)
        .is_some_and(|t| matches!(m.ty(t), Ok(Type::Int(w)) if *w <= 32));
    narrow || m.constants.contains_key(&bound)
}
