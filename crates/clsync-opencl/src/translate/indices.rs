//! Where an access to a local object lies relative to its work-item, as
//! `translate::intervals` needs it to tell a load from the writes of its
//! interval: at the work-item's own element (the index is its local id in
//! dimension 0), or at or above a constant (the local id plus it); and
//! under which guard `local id < C` a block runs.
//!
//! In a group of one dimension, the local ids are the work-items' own:
//! two work-items' own elements are two elements, and an element a
//! work-item writes under `lid < C` is below every element read at
//! `lid + C'` with `C' >= C`. A tree reduction's step
//! (`if (l < h) s[l] += s[l + h];`, which an optimizing build unrolls into
//! one step per constant `h`) reads and writes only so. The guard and the
//! indices are read from the code as clang makes them: the local id is
//! the first component of the `LocalInvocationId` built-in, converted or
//! not; an index is that, or it plus a constant.

use std::collections::{HashMap, HashSet};

use clsync_spirv::spirv::{BuiltIn, Op, Word};
use clsync_spirv::{Constant, Function, Module, Operand};

/// Where an access lies, by its index into its object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Place {
    /// At the work-item's local id (dimension 0).
    Own,
    /// At the local id plus this constant.
    Above(u64),
}

/// The places of `f`'s pointers into local objects that start at an
/// object's first element (`roots`: a `local` parameter or array) and
/// index it once by the local id or the local id plus a constant, with the
/// type of the element each points at.
pub(super) fn places(
    m: &Module,
    f: &Function,
    roots: &HashSet<Word>,
) -> HashMap<Word, (Place, Word)> {
    let ids = local_ids(m, f);
    let constant = |id: &Word| match m.constants.get(id) {
        Some(Constant::Scalar { bits, .. }) => Some(*bits),
        _ => None,
    };
    // Each index value's place: the id, or the id plus a constant.
    let mut index: HashMap<Word, Place> = ids.iter().map(|i| (*i, Place::Own)).collect();
    for (i, _) in f.blocks.iter().flat_map(|b| &b.instructions) {
        if let (Op::IAdd, Some(r)) = (i.class.opcode, i.result_id) {
            let ops: Vec<Word> = super::id_operands(i).collect();
            if let [a, b] = ops[..] {
                let c = match (ids.contains(&a), ids.contains(&b)) {
                    (true, false) => constant(&b),
                    (false, true) => constant(&a),
                    _ => None,
                };
                // A small constant: the sum does not wrap.
                if let Some(c) = c.filter(|c| *c < 1 << 31) {
                    index.insert(r, Place::Above(c));
                }
            }
        }
    }
    let mut out = HashMap::new();
    for (i, _) in f.blocks.iter().flat_map(|b| &b.instructions) {
        let (Some(r), Some(ty)) = (i.result_id, i.result_type) else {
            continue;
        };
        let ops: Vec<Word> = super::id_operands(i).collect();
        // The chain's base, and its index into the object's elements: a
        // pointer's element (`PtrAccessChain base i`), or an array's
        // (`AccessChain base i`, `PtrAccessChain base 0 i`).
        let idx = match (i.class.opcode, &ops[..]) {
            (Op::PtrAccessChain | Op::InBoundsPtrAccessChain, [base, i]) => Some((base, i)),
            (Op::PtrAccessChain | Op::InBoundsPtrAccessChain, [base, z, i])
                if constant(z) == Some(0) =>
            {
                Some((base, i))
            }
            (Op::AccessChain | Op::InBoundsAccessChain, [base, i]) => Some((base, i)),
            _ => None,
        };
        let Some((base, at)) = idx else { continue };
        if !roots.contains(base) {
            continue;
        }
        if let (Some(p), Some(Ok(clsync_spirv::Type::Pointer { pointee, .. }))) =
            (index.get(at), Some(m.ty(ty)))
        {
            out.insert(r, (*p, *pointee));
        }
    }
    out
}

/// The ids of `f` that hold the local id in dimension 0: the first
/// component of a load of the `LocalInvocationId` built-in, and
/// conversions of it between integer widths (a local id fits any).
fn local_ids(m: &Module, f: &Function) -> HashSet<Word> {
    let mut loaded = HashSet::new();
    let mut ids = HashSet::new();
    for (i, _) in f.blocks.iter().flat_map(|b| &b.instructions) {
        let ops: Vec<Word> = super::id_operands(i).collect();
        match (i.class.opcode, i.result_id, &ops[..]) {
            (Op::Load, Some(r), [v])
                if super::builtin_of(m, *v) == Some(BuiltIn::LocalInvocationId) =>
            {
                loaded.insert(r);
            }
            (Op::CompositeExtract, Some(r), [v]) if loaded.contains(v) => {
                if matches!(i.operands.get(1), Some(Operand::LiteralBit32(0))) {
                    ids.insert(r);
                }
            }
            (Op::UConvert | Op::SConvert, Some(r), [v]) if ids.contains(v) => {
                ids.insert(r);
            }
            _ => {}
        }
    }
    ids
}

/// For each block of `f` (by index), the constant `C` of a guard
/// `local id < C` it runs under, where it has one: the nearest
/// conditional branch up its chain of single predecessors that comes to
/// it on the true side of an unsigned `id < C`. `label` and `succ` are
/// `f`'s block graph (`cfg::block_graph`).
pub(super) fn guards(
    m: &Module,
    f: &Function,
    (label, succ): &(HashMap<Word, usize>, Vec<Vec<usize>>),
) -> Vec<Option<u64>> {
    let ids = local_ids(m, f);
    let n = f.blocks.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (b, next) in succ.iter().enumerate() {
        for &s in next {
            preds[s].push(b);
        }
    }
    // The comparisons `id < C`, by result.
    let mut below: HashMap<Word, u64> = HashMap::new();
    for (i, _) in f.blocks.iter().flat_map(|b| &b.instructions) {
        let ops: Vec<Word> = super::id_operands(i).collect();
        if let (Op::ULessThan, Some(r), [a, c]) = (i.class.opcode, i.result_id, &ops[..]) {
            if let (true, Some(Constant::Scalar { bits, .. })) =
                (ids.contains(a), m.constants.get(c))
            {
                below.insert(r, *bits);
            }
        }
    }
    (0..n)
        .map(|b| {
            let mut cur = b;
            let mut seen = HashSet::new();
            while let [p] = preds[cur][..] {
                if !seen.insert(p) {
                    return None;
                }
                if let Some((t, _)) = f.blocks[p].instructions.last() {
                    let ops: Vec<Word> = super::id_operands(t).collect();
                    if let (Op::BranchConditional, [cond, yes, _]) = (t.class.opcode, &ops[..]) {
                        if label.get(yes) == Some(&cur) {
                            if let Some(c) = below.get(cond) {
                                return Some(*c);
                            }
                        }
                    }
                }
                cur = p;
            }
            None
        })
        .collect()
}
