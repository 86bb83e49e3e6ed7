//! Which values of a kernel are the same in every work-item of a *lane
//! batch*: the consecutive work-items along x ([`LANES`], aligned, in one row of
//! the group) that a batched work-item loop runs together (see
//! `continuation::batch`). A value is *uniform* when it is computed by a
//! pure operation from uniform values under control flow that every
//! work-item of the batch takes alike, and *varying* otherwise. The
//! analysis is the classic divergence analysis of SIMT compilers (Karrenberg
//! and Hack's "Whole-function vectorization", CGO 2011), conservative
//! where it is cheap to be:
//!
//! - The x components of the work-item ids, and the linear ids, vary. The
//!   y and z components do not: a batch never leaves its row. Every other
//!   built-in (sizes, the group's id, offsets) is uniform.
//! - An operation that writes, calls, or reads what another work-item may
//!   change in between (atomics, images, volatile loads) runs per
//!   work-item, and its result varies. A plain load of a uniform address
//!   is uniform: another work-item's write to it in the same interval
//!   would be a data race.
//! - A branch on a varying condition diverges. Then every phi of a block it
//!   reaches before its immediate post-dominator (that post-dominator
//!   included) varies, and so does every value defined in those blocks
//!   (they may be used after the work-items meet again, each with its
//!   own: a loop whose exit condition varies).

use std::collections::{HashMap, HashSet};

use clsync_spirv::spirv::{BuiltIn, Op, Word};
use clsync_spirv::{Function, Instruction, Module, Operand};

use super::cfg::block_graph;

/// The work-items of a lane batch (see the module docs).
pub const LANES: usize = 8;

/// The 32-bit lanes of one 128-bit vector, the widest Cranelift emits: a
/// batch's packed value is [`VECTORS`] of them.
pub const VECTOR_LANES: usize = 4;

/// The vectors of a batch's packed 32-bit value.
pub const VECTORS: usize = LANES / VECTOR_LANES;

/// The result of the analysis for one function.
#[derive(Clone, Debug, Default)]
pub(crate) struct Uniformity {
    /// The ids whose values vary across a batch.
    pub varying: HashSet<Word>,
    /// The labels of the blocks whose branch (or switch) diverges.
    pub diverging: HashSet<Word>,
    /// Each block's immediate post-dominator, by index in the function.
    pub ipdom: Vec<Option<usize>>,
    /// Varying integers and pointers that step by a constant from one
    /// lane to the next, as arithmetic modulo their width goes (a pointer
    /// in bytes): lane `j`'s value is the first lane's plus `j` times it.
    /// A widening conversion keeps the step only while no lane wraps,
    /// which the code that relies on it checks (`continuation::coalesce`).
    pub steps: HashMap<Word, i64>,
}

impl Uniformity {
    /// Whether `id` may differ between the work-items of a batch.
    pub fn varies(&self, id: Word) -> bool {
        self.varying.contains(&id)
    }
}

/// Whether `op` computes its result from its operands alone, touching no
/// memory: run once for a batch when its operands are uniform.
pub(crate) fn is_pure(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        CompositeExtract
            | CompositeInsert
            | CompositeConstruct
            | VectorShuffle
            | VectorExtractDynamic
            | VectorInsertDynamic
            | CopyObject
            | Undef
            | ConvertFToU
            | ConvertFToS
            | ConvertSToF
            | ConvertUToF
            | UConvert
            | SConvert
            | FConvert
            | ConvertPtrToU
            | ConvertUToPtr
            | SatConvertSToU
            | SatConvertUToS
            | PtrCastToGeneric
            | GenericCastToPtr
            | GenericCastToPtrExplicit
            | Bitcast
            | SNegate
            | FNegate
            | IAdd
            | FAdd
            | ISub
            | FSub
            | IMul
            | FMul
            | UDiv
            | SDiv
            | FDiv
            | UMod
            | SRem
            | SMod
            | FRem
            | FMod
            | VectorTimesScalar
            | Dot
            | IAddCarry
            | ISubBorrow
            | UMulExtended
            | SMulExtended
            | ShiftRightLogical
            | ShiftRightArithmetic
            | ShiftLeftLogical
            | BitwiseOr
            | BitwiseXor
            | BitwiseAnd
            | Not
            | BitFieldInsert
            | BitFieldSExtract
            | BitFieldUExtract
            | BitReverse
            | BitCount
            | Any
            | All
            | IsNan
            | IsInf
            | IsFinite
            | IsNormal
            | SignBitSet
            | LessOrGreater
            | Ordered
            | Unordered
            | LogicalEqual
            | LogicalNotEqual
            | LogicalOr
            | LogicalAnd
            | LogicalNot
            | Select
            | IEqual
            | INotEqual
            | UGreaterThan
            | SGreaterThan
            | UGreaterThanEqual
            | SGreaterThanEqual
            | ULessThan
            | SLessThan
            | ULessThanEqual
            | SLessThanEqual
            | FOrdEqual
            | FUnordEqual
            | FOrdNotEqual
            | FUnordNotEqual
            | FOrdLessThan
            | FUnordLessThan
            | FOrdGreaterThan
            | FUnordGreaterThan
            | FOrdLessThanEqual
            | FUnordLessThanEqual
            | FOrdGreaterThanEqual
            | FUnordGreaterThanEqual
            | AccessChain
            | InBoundsAccessChain
            | PtrAccessChain
            | InBoundsPtrAccessChain
    )
}

/// Whether `inst`, a load, reads a built-in whose x component or whole
/// value differs between a batch's work-items.
fn loads_per_item_builtin(m: &Module, inst: &Instruction) -> Option<BuiltIn> {
    let Some(Operand::IdRef(p)) = inst.operands.first() else {
        return None;
    };
    let b = super::builtin_of(m, *p)?;
    matches!(
        b,
        BuiltIn::GlobalInvocationId
            | BuiltIn::LocalInvocationId
            | BuiltIn::GlobalLinearId
            | BuiltIn::LocalInvocationIndex
            | BuiltIn::SubgroupId
            | BuiltIn::SubgroupLocalInvocationId
            | BuiltIn::SubgroupSize
    )
    .then_some(b)
}

/// Whether a load's or store's memory operands make it volatile.
pub(crate) fn volatile(inst: &Instruction) -> bool {
    let at = if inst.class.opcode == Op::Store { 2 } else { 1 };
    matches!(inst.operands.get(at),
        Some(Operand::MemoryAccess(a)) if a.contains(clsync_spirv::spirv::MemoryAccess::VOLATILE))
}

/// Whether `inst` runs once for a batch when its operands are uniform (see
/// [`is_pure`]; a load of a uniform address but a per-item built-in).
pub(crate) fn runs_once(m: &Module, inst: &Instruction) -> bool {
    match inst.class.opcode {
        Op::Load => loads_per_item_builtin(m, inst).is_none() && !volatile(inst),
        op => is_pure(op),
    }
}

/// The analysis of `f` (see the module docs).
pub(crate) fn analyze(m: &Module, f: &Function) -> Uniformity {
    analyze_for(m, f, true)
}

/// The same analysis for the whole work-group rather than a batch: every
/// component of the work-item ids varies (the group's rows differ in y and
/// z). What it finds uniform is the same in every work-item of the group
/// that computes it (`continuation::hoisted`).
pub(crate) fn analyze_group(m: &Module, f: &Function) -> Uniformity {
    analyze_for(m, f, false)
}

/// [`analyze`] (`in_rows`: the y and z ids are uniform, as in a batch of
/// one row) or [`analyze_group`].
fn analyze_for(m: &Module, f: &Function, in_rows: bool) -> Uniformity {
    let (_, succ) = block_graph(f);
    let ipdom = immediate_post_dominators(&succ);
    let id_vectors: HashSet<Word> = f
        .blocks
        .iter()
        .flat_map(|b| &b.instructions)
        .filter(|(i, _)| i.class.opcode == Op::Load)
        .filter(|(i, _)| {
            matches!(
                loads_per_item_builtin(m, i),
                Some(BuiltIn::GlobalInvocationId | BuiltIn::LocalInvocationId)
            )
        })
        .filter_map(|(i, _)| i.result_id)
        .collect();
    let mut u = Uniformity {
        ipdom: ipdom.clone(),
        ..Uniformity::default()
    };
    // Blocks inside a divergent branch's region, whose values vary, and
    // the blocks where its work-items meet again, whose phis vary.
    let mut affected: HashSet<usize> = HashSet::new();
    let mut joins: HashSet<usize> = HashSet::new();
    loop {
        let before = (
            u.varying.len(),
            u.diverging.len(),
            affected.len(),
            joins.len(),
        );
        for (bi, blk) in f.blocks.iter().enumerate() {
            for (inst, _) in &blk.instructions {
                let op = inst.class.opcode;
                let ids = || super::id_operands(inst);
                if matches!(op, Op::BranchConditional | Op::Switch) {
                    if ids().next().is_some_and(|c| u.varies(c)) {
                        u.diverging.insert(blk.label);
                        affected.extend(region(&succ, bi, ipdom[bi]));
                        joins.extend(ipdom[bi]);
                    }
                    continue;
                }
                let Some(r) = inst.result_id else { continue };
                if u.varying.contains(&r) {
                    continue;
                }
                let varies = affected.contains(&bi)
                    || match op {
                        // The y and z components of the ids are the
                        // batch's.
                        Op::CompositeExtract
                            if ids().next().is_some_and(|v| id_vectors.contains(&v)) =>
                        {
                            !in_rows
                                || !matches!(
                                    inst.operands.get(1),
                                    Some(Operand::LiteralBit32(1 | 2))
                                )
                        }
                        Op::Phi => joins.contains(&bi)
                            || inst.operands.chunks(2).any(
                                |c| matches!(c.first(), Some(Operand::IdRef(v)) if u.varies(*v)),
                            ),
                        _ => !runs_once(m, inst) || ids().any(|v| u.varies(v)),
                    };
                if varies {
                    u.varying.insert(r);
                }
            }
        }
        let after = (
            u.varying.len(),
            u.diverging.len(),
            affected.len(),
            joins.len(),
        );
        if after == before {
            break;
        }
    }
    u.steps = steps(m, f, &u, &id_vectors);
    u
}

/// The steps of a kernel's varying values (see [`Uniformity::steps`]), in
/// one pass over its blocks in their order, where each value comes after
/// what it is made of (a phi's step is not known).
fn steps(
    m: &Module,
    f: &Function,
    u: &Uniformity,
    id_vectors: &HashSet<Word>,
) -> HashMap<Word, i64> {
    let order = super::cfg::reverse_postorder(f);
    let mut steps: HashMap<Word, i64> = HashMap::new();
    let mut types: HashMap<Word, Word> = f.params.iter().copied().collect();
    types.extend(m.globals.iter().map(|g| (g.id, g.ty)));
    for (inst, _) in f.blocks.iter().flat_map(|b| &b.instructions) {
        if let (Some(r), Some(t)) = (inst.result_id, inst.result_type) {
            types.insert(r, t);
        }
    }
    let constant = |w: Word| match m.constants.get(&w) {
        Some(clsync_spirv::Constant::Scalar { bits, ty }) => {
            let width = match m.ty(*ty) {
                Ok(clsync_spirv::Type::Int(w)) => *w,
                _ => return None,
            };
            // Sign-extended from the constant's width.
            let shift = 64 - width.min(64);
            Some(((*bits as i64) << shift) >> shift)
        }
        _ => None,
    };
    for &b in &order {
        for (inst, _) in &f.blocks[b].instructions {
            let Some(r) = inst.result_id else { continue };
            if !u.varies(r) {
                continue;
            }
            let id = |k: usize| match inst.operands.get(k) {
                Some(Operand::IdRef(w)) => Some(*w),
                _ => None,
            };
            // The step of an operand: zero where it is uniform.
            let of = |w: Option<Word>, steps: &HashMap<Word, i64>| {
                let w = w?;
                if u.varies(w) {
                    steps.get(&w).copied()
                } else {
                    Some(0)
                }
            };
            let step = match inst.class.opcode {
                Op::Load => match loads_per_item_builtin(m, inst) {
                    Some(BuiltIn::GlobalLinearId | BuiltIn::LocalInvocationIndex) => Some(1),
                    _ => None,
                },
                Op::CompositeExtract if id(0).is_some_and(|v| id_vectors.contains(&v)) => {
                    match inst.operands.get(1) {
                        Some(Operand::LiteralBit32(0)) => Some(1),
                        _ => None,
                    }
                }
                Op::IAdd => of(id(0), &steps)
                    .zip(of(id(1), &steps))
                    .map(|(a, b)| a.wrapping_add(b)),
                Op::ISub => of(id(0), &steps)
                    .zip(of(id(1), &steps))
                    .map(|(a, b)| a.wrapping_sub(b)),
                Op::IMul => match (id(0).and_then(constant), id(1).and_then(constant)) {
                    (_, Some(c)) => of(id(0), &steps).map(|a| a.wrapping_mul(c)),
                    (Some(c), _) => of(id(1), &steps).map(|a| a.wrapping_mul(c)),
                    _ => None,
                },
                Op::ShiftLeftLogical => match id(1).and_then(constant) {
                    Some(k) if (0..32).contains(&k) => of(id(0), &steps).map(|a| a << k),
                    _ => None,
                },
                Op::SConvert
                | Op::UConvert
                | Op::Bitcast
                | Op::CopyObject
                | Op::PtrCastToGeneric
                | Op::GenericCastToPtr
                | Op::GenericCastToPtrExplicit
                | Op::ConvertPtrToU
                | Op::ConvertUToPtr => of(id(0), &steps),
                Op::AccessChain
                | Op::InBoundsAccessChain
                | Op::PtrAccessChain
                | Op::InBoundsPtrAccessChain => {
                    chain_step(m, &types, inst, |w| of(Some(w), &steps))
                }
                _ => None,
            };
            if let Some(s) = step {
                steps.insert(r, s);
            }
        }
    }
    steps
}

/// The byte step of an access chain's pointer, from its base's and its
/// indices' steps (`of`).
fn chain_step(
    m: &Module,
    types: &HashMap<Word, Word>,
    inst: &Instruction,
    of: impl Fn(Word) -> Option<i64>,
) -> Option<i64> {
    use clsync_spirv::Type;
    let ids: Vec<Word> = super::id_operands(inst).collect();
    let (base, indices) = ids.split_first()?;
    let mut step = of(*base)?;
    let mut ty = match m.ty(*types.get(base)?).ok()? {
        Type::Pointer { pointee, .. } => *pointee,
        _ => return None,
    };
    let ptr_chain = matches!(
        inst.class.opcode,
        Op::PtrAccessChain | Op::InBoundsPtrAccessChain
    );
    for (k, idx) in indices.iter().enumerate() {
        let s = of(*idx)?;
        if k == 0 && ptr_chain {
            let size = m.layout(ty).ok()?.size as i64;
            step = step.wrapping_add(s.wrapping_mul(size));
            continue;
        }
        ty = match m.ty(ty).ok()? {
            Type::Array { elem, .. } | Type::Vector { elem, .. } => {
                let size = m.layout(*elem).ok()?.size as i64;
                step = step.wrapping_add(s.wrapping_mul(size));
                *elem
            }
            Type::Struct { members, .. } if s == 0 => {
                let c = match m.constants.get(idx) {
                    Some(clsync_spirv::Constant::Scalar { bits, .. }) => *bits as usize,
                    _ => return None,
                };
                *members.get(c)?
            }
            _ => return None,
        };
    }
    Some(step)
}

/// The blocks a branch at block `b` reaches before `join`, its immediate
/// post-dominator, or every block it reaches where it has none. (`b` is
/// one of them where a loop brings it back.)
pub(crate) fn region(succ: &[Vec<usize>], b: usize, join: Option<usize>) -> HashSet<usize> {
    let mut seen = HashSet::new();
    let mut todo: Vec<usize> = succ[b].clone();
    while let Some(n) = todo.pop() {
        if Some(n) == join || !seen.insert(n) {
            continue;
        }
        todo.extend(succ[n].iter().copied());
    }
    seen
}

/// Each block's immediate post-dominator, where it has one: the blocks
/// without successors are the exits, a virtual exit post-dominates them,
/// and a block that reaches no exit (an endless loop) has none.
fn immediate_post_dominators(succ: &[Vec<usize>]) -> Vec<Option<usize>> {
    let n = succ.len();
    let words = n.div_ceil(64).max(1);
    let full = vec![u64::MAX; words];
    // pdom[b]: the blocks that post-dominate b (b included), as bits.
    let mut pdom: Vec<Vec<u64>> = (0..n)
        .map(|b| {
            if succ[b].is_empty() {
                let mut s = vec![0; words];
                s[b / 64] |= 1 << (b % 64);
                s
            } else {
                full.clone()
            }
        })
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..n).rev() {
            if succ[b].is_empty() {
                continue;
            }
            let mut s = full.clone();
            for &x in &succ[b] {
                for (w, y) in s.iter_mut().zip(&pdom[x]) {
                    *w &= y;
                }
            }
            s[b / 64] |= 1 << (b % 64);
            if s != pdom[b] {
                pdom[b] = s;
                changed = true;
            }
        }
    }
    let count = |s: &[u64]| s.iter().map(|w| w.count_ones()).sum::<u32>();
    let has = |s: &[u64], x: usize| s[x / 64] & (1 << (x % 64)) != 0;
    (0..n)
        .map(|b| {
            // A block that reaches no exit keeps every bit (and more than
            // the blocks there are, past `n`).
            if pdom[b] == full {
                return None;
            }
            let own = count(&pdom[b]);
            // The nearest strict post-dominator: the one post-dominated by
            // all the others, whose own set is one smaller.
            (0..n).find(|&p| p != b && has(&pdom[b], p) && count(&pdom[p]) + 1 == own)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diamond_joins_at_its_post_dominator() {
        // 0 -> 1, 2; 1 -> 3; 2 -> 3; 3 exits.
        let succ = vec![vec![1, 2], vec![3], vec![3], vec![]];
        let ip = immediate_post_dominators(&succ);
        assert_eq!(ip, vec![Some(3), Some(3), Some(3), None]);
        assert_eq!(region(&succ, 0, ip[0]), HashSet::from([1, 2]));
    }

    #[test]
    fn a_loop_exit_reaches_the_whole_loop() {
        // 0 -> 1; 1 -> 2, 3 (exit test); 2 -> 1 (back-edge); 3 exits.
        let succ = vec![vec![1], vec![2, 3], vec![1], vec![]];
        let ip = immediate_post_dominators(&succ);
        assert_eq!(ip[1], Some(3));
        assert_eq!(region(&succ, 1, ip[1]), HashSet::from([1, 2]));
    }

    #[test]
    fn an_endless_loop_has_no_post_dominator() {
        let succ = vec![vec![1, 2], vec![1], vec![]];
        let ip = immediate_post_dominators(&succ);
        // Block 1 never reaches an exit; the work-items that leave block 0
        // for block 2 meet nobody there, and block 2 is where they would.
        assert_eq!(ip[1], None);
        assert_eq!(ip[0], Some(2));
    }
}
