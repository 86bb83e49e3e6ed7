//! Where an access lies relative to its work-item, as the checked build's
//! proofs need it (`translate::intervals` for local objects,
//! `translate::slices` for buffers): its element's index is the
//! work-item's id in dimension 0 (the local id for a local object, the
//! global id for a buffer) plus a constant; and what the code's branches
//! say of the local id in each block (`local id < C`, `local id != C`...).
//!
//! In a group of one dimension, the local ids are the work-items' own:
//! two work-items' accesses at `id + c` reach two elements, and an
//! element a work-item writes under `lid < C` is below every element read
//! at `lid + C'` with `C' >= C`. A tree reduction's step
//! (`if (l < h) s[l] += s[l + h];`, which an optimizing build unrolls into
//! one step per constant `h`) reads and writes only so; so does a scan's
//! first step, `if (l >= k) v += data[g - k];`. The indices and the
//! branches are read from the code as clang makes them: the id is the
//! first component of the `LocalInvocationId` or `GlobalInvocationId`
//! built-in, converted or not; an index is that, plus or minus a constant.

use std::collections::{HashMap, HashSet};

use clsync_spirv::spirv::{BuiltIn, Op, Word};
use clsync_spirv::{Constant, Function, Module, Operand, Type};

/// The bound below which an index's constant must lie (either way), so
/// that no sum wraps.
const SMALL: i64 = 1 << 31;

/// The ids of `f` that hold the work-item's id of built-in `which`
/// (`LocalInvocationId` or `GlobalInvocationId`) in dimension 0: the
/// first component of a load of the built-in, and conversions of it
/// to a width of 32 bits or more. A local id fits those; a global id fits
/// 32 bits where the launch's range does (`slices` takes its proofs only
/// there).
fn ids(m: &Module, f: &Function, which: BuiltIn) -> HashSet<Word> {
    ids_in(m, f, &kept_values(f), which, 0)
}

/// [`ids`] in dimension `dim`, `kept` being `f`'s [`kept_values`].
fn ids_in(
    m: &Module,
    f: &Function,
    kept: &HashMap<Word, Word>,
    which: BuiltIn,
    dim: u32,
) -> HashSet<Word> {
    let wide = |ty: Option<Word>| matches!(ty.map(|t| m.ty(t)), Some(Ok(Type::Int(w))) if *w >= 32);
    let mut loaded = HashSet::new();
    let mut ids = HashSet::new();
    for (i, _) in f.blocks.iter().flat_map(|b| &b.instructions) {
        let ops: Vec<Word> = super::id_operands(i).collect();
        match (i.class.opcode, i.result_id, &ops[..]) {
            (Op::Load, Some(r), [v]) if super::builtin_of(m, *v) == Some(which) => {
                loaded.insert(r);
            }
            (Op::CompositeExtract, Some(r), [v])
                if loaded.contains(v) && i.operands.get(1) == Some(&Operand::LiteralBit32(dim)) =>
            {
                ids.insert(r);
            }
            // Conversions to 32 bits or more (a narrower one wraps).
            (Op::UConvert | Op::SConvert, Some(r), [v])
                if ids.contains(v) && wide(i.result_type) =>
            {
                ids.insert(r);
            }
            (Op::Load, Some(r), [_]) if kept.get(&r).is_some_and(|x| ids.contains(x)) => {
                ids.insert(r);
            }
            _ => {}
        }
    }
    ids
}

/// The loads of `f`'s private variables that are set once before any use
/// (clang's unoptimized `size_t l = get_local_id(0);`), each with the
/// value it loads: the variable's one store comes before each load from
/// it (earlier in the load's block, or in a block every path to the
/// load's passes), and nothing else uses the variable. (The value is the
/// one that store stored; the indices take such values only where they
/// are the same in every run of the store: made from built-ins and
/// constants.)
fn kept_values(f: &Function) -> HashMap<Word, Word> {
    let private: HashSet<Word> = f
        .blocks
        .iter()
        .flat_map(|b| &b.instructions)
        .filter_map(|(i, _)| {
            // (One with an initializer is stored to at its start.)
            let function = matches!(
                i.operands[..],
                [Operand::StorageClass(
                    clsync_spirv::spirv::StorageClass::Function
                )]
            );
            (i.class.opcode == Op::Variable && function).then_some(i.result_id?)
        })
        .collect();
    // Per variable: its stores (block, index, value), its loads, and
    // whether something else uses it.
    let mut stores: HashMap<Word, Vec<(usize, usize, Word)>> = HashMap::new();
    let mut loads: HashMap<Word, Vec<(usize, usize, Word)>> = HashMap::new();
    let mut other: HashSet<Word> = HashSet::new();
    for (b, block) in f.blocks.iter().enumerate() {
        for (k, (i, _)) in block.instructions.iter().enumerate() {
            let ops: Vec<Word> = super::id_operands(i).collect();
            for (n, id) in ops.iter().enumerate() {
                if !private.contains(id) || i.class.opcode == Op::Variable {
                    continue;
                }
                match (i.class.opcode, n, i.result_id, ops.get(1)) {
                    (Op::Load, 0, Some(r), _) => loads.entry(*id).or_default().push((b, k, r)),
                    (Op::Store, 0, _, Some(v)) => stores.entry(*id).or_default().push((b, k, *v)),
                    _ => {
                        other.insert(*id);
                    }
                }
            }
        }
    }
    let (_, succ) = super::cfg::block_graph(f);
    // The blocks the entry reaches without passing block `s`.
    let around = |s: usize| {
        let mut seen = vec![false; succ.len()];
        let mut todo = vec![0];
        while let Some(b) = todo.pop() {
            if b == s || std::mem::replace(&mut seen[b], true) {
                continue;
            }
            todo.extend(succ[b].iter().copied());
        }
        seen
    };
    let mut out = HashMap::new();
    for (v, list) in stores {
        let [(bs, at, value)] = list[..] else {
            continue;
        };
        if other.contains(&v) {
            continue;
        }
        let Some(reads) = loads.get(&v) else { continue };
        // Every load after the store: later in its block, or in a block
        // that every path from the entry reaches through the store's.
        let reached = around(bs);
        if reads
            .iter()
            .all(|&(b, k, _)| if b == bs { k > at } else { !reached[b] })
        {
            out.extend(reads.iter().map(|&(_, _, r)| (r, value)));
        }
    }
    out
}

/// The signed value of integer constant `id`, where it is one of at most
/// 64 bits.
fn signed(m: &Module, id: &Word) -> Option<i64> {
    let Some(Constant::Scalar { ty, bits }) = m.constants.get(id) else {
        return None;
    };
    match m.ty(*ty) {
        Ok(Type::Int(w)) if (1..=64).contains(w) => {
            let shift = 64 - w;
            Some(((*bits << shift) as i64) >> shift)
        }
        _ => None,
    }
}

/// Each value of `f` that is an id of `ids` plus a constant `c`, with `c`
/// (0 for the ids themselves): `id + c`, `c + id` and `id - c`, for a
/// small `c`, and a conversion of such a value between integer widths
/// (or a shift left and back by the same at most 32 bits) where `c <= 0`. (Those are exact wherever the value is at least 0: a
/// value below 2^31 keeps its value through a narrowing and a widening.
/// Where `id + c` is below 0, the index has wrapped to one far past any
/// local object's end, which the access's bounds test catches; a proof
/// about a buffer makes sure that `id + c >= 0` for every id its block
/// allows, see [`ranges`].)
fn offsets(
    m: &Module,
    f: &Function,
    kept: &HashMap<Word, Word>,
    ids: &HashSet<Word>,
) -> HashMap<Word, i64> {
    let mut of: HashMap<Word, i64> = ids.iter().map(|i| (*i, 0)).collect();
    let wide = |ty: Option<Word>| matches!(ty.map(|t| m.ty(t)), Some(Ok(Type::Int(w))) if *w >= 32);
    // Values shifted left by at most 32 bits: `(x << k) >> k` keeps the
    // low `64 - k` bits of `x`, sign- or zero-extended (clang's `(long)(int)
    // x`), which is `x` for an `x` below 2^31.
    let mut shifted: HashMap<Word, (i64, u64)> = HashMap::new();
    let bits = |id: &Word| match m.constants.get(id) {
        Some(Constant::Scalar { bits, .. }) => Some(*bits),
        _ => None,
    };
    // Definitions come before their uses, phis aside (which this does not
    // follow): one pass in the code's order.
    for (i, _) in f.blocks.iter().flat_map(|b| &b.instructions) {
        let Some(r) = i.result_id else { continue };
        let ops: Vec<Word> = super::id_operands(i).collect();
        if let (Op::ShiftLeftLogical, [a, k]) = (i.class.opcode, &ops[..]) {
            if let (Some(c), Some(k)) = (of.get(a), bits(k).filter(|k| *k <= 32)) {
                if *c <= 0 {
                    shifted.insert(r, (*c, k));
                }
            }
            continue;
        }
        let c = match (i.class.opcode, &ops[..]) {
            (Op::ShiftRightArithmetic | Op::ShiftRightLogical, [a, k]) => shifted
                .get(a)
                .filter(|(_, by)| bits(k) == Some(*by))
                .map(|(c, _)| *c),
            (Op::IAdd, [a, b]) => match (of.get(a), of.get(b)) {
                (Some(x), None) => signed(m, b).map(|c| x + c),
                (None, Some(x)) => signed(m, a).map(|c| x + c),
                _ => None,
            },
            (Op::ISub, [a, b]) => of.get(a).and_then(|x| signed(m, b).map(|c| x - c)),
            (Op::UConvert | Op::SConvert, [a]) if wide(i.result_type) => {
                of.get(a).copied().filter(|c| *c <= 0)
            }
            (Op::Load, [_]) => kept.get(&r).and_then(|x| of.get(x).copied()),
            _ => None,
        };
        if let Some(c) = c.filter(|c| c.abs() < SMALL) {
            of.insert(r, c);
        }
    }
    of
}

/// Where an index lies: the id in dimension 0 plus `c`, plus `rows` times
/// the local id in dimension 1 where given (a tile's `ty * TILE + tx`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Index {
    pub c: i64,
    pub rows: Option<u64>,
}

/// The indices of `f`'s values into local objects: [`offsets`] of the
/// local id, and those plus `K` times the local id in dimension 1 (a
/// shift left by a constant, or a product with one, below 2^31). In a
/// group whose local size in dimension 0 is at most `K` (and 1 in
/// dimension 2), `lid0 + K * lid1` is the work-item's own.
pub(super) fn local_indices(m: &Module, f: &Function) -> HashMap<Word, Index> {
    let kept = kept_values(f);
    let first = ids_in(m, f, &kept, BuiltIn::LocalInvocationId, 0);
    let flat = offsets(m, f, &kept, &first);
    let second = ids_in(m, f, &kept, BuiltIn::LocalInvocationId, 1);
    let mut rows: HashMap<Word, u64> = HashMap::new();
    let mut out: HashMap<Word, Index> = flat
        .iter()
        .map(|(v, c)| (*v, Index { c: *c, rows: None }))
        .collect();
    for (i, _) in f.blocks.iter().flat_map(|b| &b.instructions) {
        let Some(r) = i.result_id else { continue };
        let ops: Vec<Word> = super::id_operands(i).collect();
        let k = match (i.class.opcode, &ops[..]) {
            (Op::ShiftLeftLogical, [a, k]) if second.contains(a) => signed(m, k)
                .filter(|k| (0..31).contains(k))
                .map(|k| 1u64 << k),
            (Op::IMul, [a, k]) | (Op::IMul, [k, a]) if second.contains(a) => signed(m, k)
                .filter(|k| (1..SMALL).contains(k))
                .map(|k| k as u64),
            _ => None,
        };
        if let Some(k) = k {
            rows.insert(r, k);
            continue;
        }
        let by_rows = |v: &Word| out.get(v).filter(|x| x.rows.is_some()).copied();
        let index = match (i.class.opcode, &ops[..]) {
            (Op::IAdd, [a, b]) => match (flat.get(a), rows.get(b), flat.get(b), rows.get(a)) {
                (Some(c), Some(k), _, _) | (_, _, Some(c), Some(k)) => Some(Index {
                    c: *c,
                    rows: Some(*k),
                }),
                // Such an index plus a constant.
                _ => match (by_rows(a), by_rows(b)) {
                    (Some(x), None) => signed(m, b).map(|k| Index { c: x.c + k, ..x }),
                    (None, Some(x)) => signed(m, a).map(|k| Index { c: x.c + k, ..x }),
                    _ => None,
                },
            },
            _ => None,
        };
        let index = index.filter(|x| x.c.abs() < SMALL);
        if let Some(x) = index {
            out.insert(r, x);
        }
    }
    out
}

/// The indices of `f`'s values into buffers: [`offsets`] of the global id.
pub(super) fn global_indices(m: &Module, f: &Function) -> HashMap<Word, Index> {
    let kept = kept_values(f);
    let ids = ids_in(m, f, &kept, BuiltIn::GlobalInvocationId, 0);
    offsets(m, f, &kept, &ids)
        .into_iter()
        .map(|(v, c)| (v, Index { c, rows: None }))
        .collect()
}

/// The places of `f`'s pointers that start at an object's first element
/// (`roots`), or at a constant element of a pointer root, and index it
/// once by a value of `indices`: each pointer's index (that of the
/// element, from the object's first), with the type of the element it
/// points at.
pub(super) fn places(
    m: &Module,
    f: &Function,
    roots: &HashSet<Word>,
    indices: &HashMap<Word, Index>,
) -> HashMap<Word, (Index, Word)> {
    let zero = |id: &Word| matches!(m.constants.get(id), Some(Constant::Scalar { bits: 0, .. }));
    // The pointers to an element of a root that a constant names, by
    // that constant (`PtrAccessChain root k`): a scan's `a + PAD`.
    let mut starts: HashMap<Word, i64> = HashMap::new();
    for (i, _) in f.blocks.iter().flat_map(|b| &b.instructions) {
        let ops: Vec<Word> = super::id_operands(i).collect();
        if let (Op::PtrAccessChain | Op::InBoundsPtrAccessChain, Some(r), [base, k]) =
            (i.class.opcode, i.result_id, &ops[..])
        {
            if let (true, Some(k)) = (roots.contains(base), signed(m, k)) {
                if k.abs() < SMALL {
                    starts.insert(r, k);
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
            (Op::PtrAccessChain | Op::InBoundsPtrAccessChain, [base, z, i]) if zero(z) => {
                Some((base, i))
            }
            (Op::AccessChain | Op::InBoundsAccessChain, [base, i]) => Some((base, i)),
            _ => None,
        };
        let Some((base, at)) = idx else { continue };
        // From a root, or (a pointer's element) from a start.
        let start = match (roots.contains(base), starts.get(base), ops.len()) {
            (true, _, _) => 0,
            (false, Some(k), 2)
                if matches!(
                    i.class.opcode,
                    Op::PtrAccessChain | Op::InBoundsPtrAccessChain
                ) =>
            {
                *k
            }
            _ => continue,
        };
        if let (Some(x), Ok(Type::Pointer { pointee, .. })) = (indices.get(at), m.ty(ty)) {
            let c = start + x.c;
            out.insert(r, (Index { c, ..*x }, *pointee));
        }
    }
    out
}

/// What a block's branches say of the local id in dimension 0: it is at
/// least `lo`, and below `hi` where that is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Range {
    pub lo: u64,
    pub hi: Option<u64>,
}

impl Range {
    /// The one id the range allows, where it allows one only.
    pub fn single(&self) -> Option<u64> {
        (self.hi == Some(self.lo + 1)).then_some(self.lo)
    }
}

#[cfg(test)]
impl Range {
    /// Nothing known.
    pub const ALL: Range = Range { lo: 0, hi: None };
}

/// A comparison of the local id with a constant, as a branch reads it.
#[derive(Clone, Copy)]
enum Fact {
    /// `id < c` where true, `id >= c` where false.
    Below(u64),
    /// `id == c` where true, `id != c` where false.
    Is(u64),
}

/// For each block of `f` (by index), what the conditional branches on the
/// local id say of it there, on every path into the block: a range per
/// block, which each branch's side narrows and each join of paths widens
/// to take both. `graph` is `f`'s block graph (`cfg::block_graph`).
pub(super) fn ranges(
    m: &Module,
    f: &Function,
    (label, succ): &(HashMap<Word, usize>, Vec<Vec<usize>>),
) -> Vec<Range> {
    let ids = ids(m, f, BuiltIn::LocalInvocationId);
    let n = f.blocks.len();
    // The comparisons `id < C`, `id > C`, `id == C`... by result: a local
    // id is below 2^31, so that signed and unsigned ones agree for a
    // constant that is too.
    let mut facts: HashMap<Word, Fact> = HashMap::new();
    let mut negated: HashSet<Word> = HashSet::new();
    for (i, _) in f.blocks.iter().flat_map(|b| &b.instructions) {
        let ops: Vec<Word> = super::id_operands(i).collect();
        let (Some(r), [a, b]) = (i.result_id, &ops[..]) else {
            continue;
        };
        let (c, flipped) = match (ids.contains(a), ids.contains(b)) {
            (true, false) => (signed(m, b), false),
            (false, true) => (signed(m, a), true),
            _ => continue,
        };
        let Some(c) = c.filter(|c| (0..SMALL).contains(c)).map(|c| c as u64) else {
            continue;
        };
        use Op::*;
        // As `id OP c`: `c OP id` flips the comparison.
        let op = match (i.class.opcode, flipped) {
            (ULessThan | SLessThan, true) => UGreaterThan,
            (UGreaterThan | SGreaterThan, true) => ULessThan,
            (ULessThanEqual | SLessThanEqual, true) => UGreaterThanEqual,
            (UGreaterThanEqual | SGreaterThanEqual, true) => ULessThanEqual,
            (SLessThan, false) => ULessThan,
            (SGreaterThan, false) => UGreaterThan,
            (SLessThanEqual, false) => ULessThanEqual,
            (SGreaterThanEqual, false) => UGreaterThanEqual,
            (op, _) => op,
        };
        // Each as `id < k` or `id == k`, and whether the branch's true
        // side is that or its negation.
        let fact = match op {
            ULessThan => (Fact::Below(c), true),
            ULessThanEqual => (Fact::Below(c + 1), true),
            UGreaterThan => (Fact::Below(c + 1), false),
            UGreaterThanEqual => (Fact::Below(c), false),
            IEqual => (Fact::Is(c), true),
            INotEqual => (Fact::Is(c), false),
            _ => continue,
        };
        facts.insert(r, fact.0);
        if !fact.1 {
            negated.insert(r);
        }
    }
    // What holds on the edge from a block to `to`, given what holds at
    // the block's end.
    let refine = |b: usize, to: usize, r: Range| {
        let Some((t, _)) = f.blocks[b].instructions.last() else {
            return r;
        };
        let ops: Vec<Word> = super::id_operands(t).collect();
        let (Op::BranchConditional, [cond, yes, no]) = (t.class.opcode, &ops[..]) else {
            return r;
        };
        let side = match (label.get(yes) == Some(&to), label.get(no) == Some(&to)) {
            (true, false) => true,
            (false, true) => false,
            _ => return r,
        };
        let Some(fact) = facts.get(cond) else {
            return r;
        };
        let Range { mut lo, mut hi } = r;
        let below = |hi: Option<u64>, k: u64| Some(hi.map_or(k, |h| h.min(k)));
        match (*fact, side != negated.contains(cond)) {
            (Fact::Below(k), true) => hi = below(hi, k),
            (Fact::Below(k), false) => lo = lo.max(k),
            (Fact::Is(k), true) => {
                lo = lo.max(k);
                hi = below(hi, k + 1);
            }
            // `id != k` at an end of the range moves that end.
            (Fact::Is(k), false) if k == lo => lo = k + 1,
            (Fact::Is(k), false) if Some(k + 1) == hi => hi = Some(k),
            (Fact::Is(_), false) => {}
        }
        Range { lo, hi }
    };
    // Forward over the block graph from the entry, where nothing is
    // known: a block's range joins those its edges bring, until nothing
    // changes (a join only widens, to bounds among finitely many).
    let mut at: Vec<Option<Range>> = vec![None; n];
    if n > 0 {
        at[0] = Some(Range { lo: 0, hi: None });
    }
    let mut changed = true;
    while changed {
        changed = false;
        for b in 0..n {
            let Some(r) = at[b] else { continue };
            for &s in &succ[b] {
                let edge = refine(b, s, r);
                let joined = match at[s] {
                    None => edge,
                    Some(old) => Range {
                        lo: old.lo.min(edge.lo),
                        hi: old.hi.zip(edge.hi).map(|(a, b)| a.max(b)),
                    },
                };
                if at[s] != Some(joined) {
                    at[s] = Some(joined);
                    changed = true;
                }
            }
        }
    }
    // A block the entry does not reach: nothing known.
    at.into_iter()
        .map(|r| r.unwrap_or(Range { lo: 0, hi: None }))
        .collect()
}

/// Whether two work-items of one group of one dimension that make
/// accesses at `id + a.0` (where `a.1` holds of the first's local id) and
/// `id + w.0` (where `w.1` holds of the second's) reach different
/// elements, whenever the two work-items are different: `id1 + a = id2 +
/// w` takes `id1 - id2 = w - a`, which is 0 (one work-item) or outside
/// what the ranges allow. (In a group, two work-items' global ids differ
/// as their local ids do.)
pub(super) fn apart(a: (i64, Range), w: (i64, Range)) -> bool {
    let d = i128::from(w.0) - i128::from(a.0);
    if d == 0 {
        return true;
    }
    // `id1 - id2` lies in [a.lo - (w.hi - 1), (a.hi - 1) - w.lo], either
    // end open where a bound is unknown.
    let low = w.1.hi.map(|h| i128::from(a.1.lo) - (i128::from(h) - 1));
    let high = a.1.hi.map(|h| (i128::from(h) - 1) - i128::from(w.1.lo));
    // A range that allows no id: no such access.
    let empty = a.1.hi.is_some_and(|h| h <= a.1.lo) || w.1.hi.is_some_and(|h| h <= w.1.lo);
    empty || low.is_some_and(|l| d < l) || high.is_some_and(|h| d > h)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::{apart, ranges, Range};

    fn r(lo: u64, hi: Option<u64>) -> Range {
        Range { lo, hi }
    }

    #[test]
    fn accesses_apart_by_their_offsets_and_ranges() {
        // Each at its own element.
        assert!(apart((0, Range::ALL), (0, Range::ALL)));
        // A read at `id + 4` and a write at `id` under `id < 4`: apart;
        // under `id < 5`, work-item 4 writes what work-item 0 reads.
        assert!(apart((4, Range::ALL), (0, r(0, Some(4)))));
        assert!(!apart((4, Range::ALL), (0, r(0, Some(5)))));
        // A read at `id - 1` (from `id >= 1`) and a write at `id`: the
        // write of work-item k is read by work-item k + 1.
        assert!(!apart((-1, r(1, None)), (0, Range::ALL)));
        // ...even where only work-item 0 writes (work-item 1 reads it);
        // but not where those that read are below 5 and those that write
        // at or above it.
        assert!(!apart((-1, r(1, None)), (0, r(0, Some(1)))));
        assert!(apart((-1, r(1, Some(5))), (0, r(5, None))));
        // Writes at `id` under `id < 192` and at `id + 192`: apart.
        assert!(apart((0, r(0, Some(192))), (192, Range::ALL)));
        assert!(apart((192, Range::ALL), (0, r(0, Some(192)))));
        assert!(!apart((191, Range::ALL), (0, r(0, Some(192)))));
    }

    /// The ranges of the blocks of `src`'s kernel `k` (built optimized)
    /// that store to `out`, by the value each stores.
    fn stores(src: &str) -> BTreeSet<(u64, Range)> {
        use clsync_spirv::spirv::Op;
        let p =
            crate::Program::build(src, "k.cl", "").unwrap_or_else(|e| panic!("build failed:\n{e}"));
        let m = &p.module;
        let mut out = BTreeSet::new();
        for f in &m.functions {
            let graph = crate::translate::cfg::block_graph(f);
            let at = ranges(m, f, &graph);
            for (b, block) in f.blocks.iter().enumerate() {
                for (i, _) in &block.instructions {
                    let ops: Vec<_> = crate::translate::id_operands(i).collect();
                    if let (Op::Store, [_, v]) = (i.class.opcode, &ops[..]) {
                        if let Some(clsync_spirv::Constant::Scalar { bits, .. }) =
                            m.constants.get(v)
                        {
                            out.insert((*bits, at[b]));
                        }
                    }
                }
            }
        }
        out
    }

    #[test]
    fn a_blocks_range_takes_each_branch_on_the_way() {
        // `l != 0` then `l != 1` leaves `l >= 2` (clang makes it one
        // comparison here, and two in a scan); `l == 3` a single id; a
        // comparison the other way round reads the same; another value's
        // comparison says nothing. (Joins: the scan's, in `slices` and
        // `race_free`.)
        let src = "kernel void a(global int *out) {
            size_t l = get_local_id(0);
            if (l != 0 && l != 1) out[0] = 11;
        }
        kernel void b(global int *out) {
            if (get_local_id(0) == 3) out[1] = 12;
        }
        kernel void c(global int *out) {
            if (20 > get_local_id(0)) out[3] = 14;
        }
        kernel void d(global int *out, int x) {
            if (x < 5) out[4] = 15;
        }";
        let found = stores(src);
        let want = [
            (11, r(2, None)),
            (12, r(3, Some(4))),
            (14, r(0, Some(20))),
            (15, r(0, None)),
        ];
        assert_eq!(found, BTreeSet::from(want));
    }
}
