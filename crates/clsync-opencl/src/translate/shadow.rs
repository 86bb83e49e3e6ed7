//! Uninitialized values, in checked builds: Oclgrind's `Uninitialized
//! value` and `Uninitialized address`, found as memory sanitizers find
//! them.
//!
//! Each leaf of a value may have a *shadow*: an `i8` that is nonzero when
//! the leaf is (or depends on) memory nothing wrote. A leaf without one is
//! initialized, known at compile time, and costs nothing. Shadows come
//! from loads (the runtime call that reports each access to the checker
//! also answers whether its bytes were written: private and local memory
//! start unwritten, and so do buffers created without data, `noinit` in a
//! `.sim` file), from `OpUndef`, and from invalid reads; they travel
//! through arithmetic (a result leaf is poisoned when an operand leaf it
//! depends on is), through structural operations leaf by leaf, through
//! `select` by the condition, and through phis as block parameters; stores
//! put them back into memory's shadow.
//!
//! A report is made where Oclgrind makes one: a poisoned value stored to
//! global memory (`Uninitialized value`), and an access through a poisoned
//! pointer (`Uninitialized address`). Copying an uninitialized value
//! around private and local memory, or a struct with its padding, is not
//! an error.

use clsync_spirv::spirv::{Op, Word};
use clsync_spirv::Instruction;
use cranelift_codegen::ir::{types, InstBuilder, Value};

use super::function::Fx;

/// The loads of `f` whose values only go back where they were loaded from,
/// through component insertions and shuffles into a store to the same
/// pointer: what a compiler makes of `p[i].z = 7; p[i].y = 42;` on a vector
/// (an *lvalue load*, which is no read of a write-only buffer); and the
/// loads whose values nothing uses.
pub(crate) fn lvalue_loads(f: &clsync_spirv::Function) -> std::collections::HashSet<Word> {
    use clsync_spirv::Operand;
    use std::collections::{HashMap, HashSet};
    let insts: Vec<&Instruction> = f
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter().map(|(i, _)| i))
        .collect();
    let mut users: HashMap<Word, Vec<(usize, usize)>> = HashMap::new();
    for (k, i) in insts.iter().enumerate() {
        for (n, o) in i.operands.iter().enumerate() {
            if let Operand::IdRef(w) = o {
                users.entry(*w).or_default().push((k, n));
            }
        }
    }
    let id_at = |i: &Instruction, n: usize| match i.operands.get(n) {
        Some(Operand::IdRef(w)) => Some(*w),
        _ => None,
    };
    let mut out = HashSet::new();
    for load in insts.iter().filter(|i| i.class.opcode == Op::Load) {
        let (Some(r), Some(p)) = (load.result_id, id_at(load, 0)) else {
            continue;
        };
        // A load nobody uses: what clang makes at -O0 of the lvalue in
        // `p[i].wzyx = q[i]`, read and dropped.
        if !users.contains_key(&r) {
            out.insert(r);
            continue;
        }
        let mut todo = vec![r];
        let mut stored = false;
        let mut ok = true;
        while let (Some(v), true) = (todo.pop(), ok) {
            for (k, n) in users.get(&v).map_or(&[][..], |u| u.as_slice()) {
                let u = insts[*k];
                match (u.class.opcode, n) {
                    (Op::Store, 1) if id_at(u, 0) == Some(p) => stored = true,
                    (Op::CompositeInsert, 1) | (Op::VectorShuffle, 0 | 1) => {
                        todo.extend(u.result_id)
                    }
                    _ => ok = false,
                }
            }
        }
        if ok && stored {
            out.insert(r);
        }
    }
    out
}

/// A value's shadow: per leaf, `None` (initialized) or an `i8`, nonzero
/// when poisoned.
pub(crate) type Lanes = Vec<Option<Value>>;

impl Fx<'_, '_> {
    /// The number of leaves of `id`'s value.
    fn leaf_count(&self, id: Word) -> usize {
        if let Some(v) = self.vals.get(&id) {
            return v.len();
        }
        self.type_of(id)
            .ok()
            .and_then(|t| self.m.leaves(t).ok())
            .map_or(1, |l| l.len())
    }

    /// The shadow of `id`, one entry per leaf: its own, or a constant's
    /// (poisoned where it is or holds a module-scope `OpUndef`).
    pub(super) fn lanes(&mut self, id: Word) -> Lanes {
        if let Some(l) = self.cross_lanes(id) {
            return l;
        }
        if let Some(l) = self.shadows.get(&id) {
            return l.clone();
        }
        if self.m.constants.contains_key(&id) && self.holds_undef(id) {
            return self.constant_lanes(id);
        }
        vec![None; self.leaf_count(id)]
    }

    /// Whether constant `id` is or holds an `OpUndef`.
    fn holds_undef(&self, id: Word) -> bool {
        if self.m.undefined.contains(&id) {
            return true;
        }
        match self.m.constants.get(&id) {
            Some(clsync_spirv::Constant::Composite { parts, .. }) => {
                parts.iter().any(|p| self.holds_undef(*p))
            }
            _ => false,
        }
    }

    /// A constant's shadow, leaf by leaf.
    fn constant_lanes(&mut self, id: Word) -> Lanes {
        if self.m.undefined.contains(&id) {
            let p = self.b.ins().iconst(types::I8, 1);
            return vec![Some(p); self.leaf_count(id)];
        }
        match self.m.constants.get(&id).cloned() {
            Some(clsync_spirv::Constant::Composite { parts, .. }) => {
                parts.iter().flat_map(|p| self.constant_lanes(*p)).collect()
            }
            _ => vec![None; self.leaf_count(id)],
        }
    }

    /// Nonzero when any of `lanes` is poisoned; `None` when none can be.
    pub(super) fn poisoned(&mut self, lanes: &[Option<Value>]) -> Option<Value> {
        lanes
            .iter()
            .flatten()
            .copied()
            .reduce(|a, b| self.b.ins().bor(a, b))
    }

    /// A lane as an `i8` value: zero when initialized.
    pub(super) fn lane_value(&mut self, lane: Option<Value>) -> Value {
        match lane {
            Some(v) => v,
            None => self.b.ins().iconst(types::I8, 0),
        }
    }

    /// The shadow of `inst`'s result of `n` leaves, from its operands'.
    pub(super) fn propagate(&mut self, inst: &Instruction, n: usize) -> Lanes {
        let op = inst.class.opcode;
        let ids: Vec<Word> = inst
            .operands
            .iter()
            .filter_map(|o| match o {
                clsync_spirv::Operand::IdRef(w) => Some(*w),
                _ => None,
            })
            .collect();
        let name = format!("{op:?}");
        if name.starts_with("Atomic") || matches!(op, Op::Variable) {
            // An atomic's result is what the runtime read; a variable's
            // address is a constant.
            return vec![None; n];
        }
        match op {
            Op::Undef => {
                let p = self.b.ins().iconst(types::I8, 1);
                return vec![Some(p); n];
            }
            Op::CompositeConstruct => {
                let lanes: Lanes = ids.iter().flat_map(|id| self.lanes(*id)).collect();
                if lanes.len() == n {
                    return lanes;
                }
            }
            Op::CompositeExtract => {
                let src = ids[0];
                let lanes = self.lanes(src);
                if let Ok((start, k)) = self.type_of(src).and_then(|t| self.leaf_range(t, inst, 1))
                {
                    if start + k <= lanes.len() && k == n {
                        return lanes[start..start + k].to_vec();
                    }
                }
            }
            Op::CompositeInsert => {
                let (obj, comp) = (ids[0], ids[1]);
                let mut lanes = self.lanes(comp);
                let part = self.lanes(obj);
                if let Ok((start, k)) = self.type_of(comp).and_then(|t| self.leaf_range(t, inst, 2))
                {
                    if start + k <= lanes.len() && k == part.len() && lanes.len() == n {
                        lanes[start..start + k].copy_from_slice(&part);
                        return lanes;
                    }
                }
            }
            Op::VectorShuffle => {
                let mut all = self.lanes(ids[0]);
                all.extend(self.lanes(ids[1]));
                let picked: Lanes = (2..inst.operands.len())
                    .map(|k| {
                        self.lit(inst, k)
                            .ok()
                            .and_then(|c| all.get(c as usize).copied().flatten())
                    })
                    .collect();
                if picked.len() == n {
                    return picked;
                }
            }
            Op::Select => return self.select_lanes(&ids, n),
            _ => {}
        }
        // Anything else: lane by lane when every shadowed operand has the
        // result's leaves (component-wise arithmetic), else every leaf
        // depends on every operand.
        let shadowed: Vec<Word> = ids
            .iter()
            .copied()
            .filter(|id| {
                self.shadows.contains_key(id)
                    || self.has_cross_lanes(*id)
                    || (self.m.constants.contains_key(id) && self.holds_undef(*id))
            })
            .collect();
        let ops: Vec<Lanes> = shadowed.into_iter().map(|id| self.lanes(id)).collect();
        if ops.is_empty() {
            return vec![None; n];
        }
        if ops.iter().all(|l| l.len() == n) {
            return (0..n)
                .map(|i| {
                    let lane: Vec<Option<Value>> = ops.iter().map(|l| l[i]).collect();
                    self.poisoned(&lane)
                })
                .collect();
        }
        let all: Lanes = ops.into_iter().flatten().collect();
        let any = self.poisoned(&all);
        vec![any; n]
    }

    /// `select(c, a, b)`: the chosen operand's shadow, and the condition's.
    fn select_lanes(&mut self, ids: &[Word], n: usize) -> Lanes {
        let (c, a, b) = (ids[0], ids[1], ids[2]);
        let (sc, sa, sb) = (self.lanes(c), self.lanes(a), self.lanes(b));
        let Ok(cv) = self.get(c) else {
            return vec![None; n];
        };
        (0..n)
            .map(|i| {
                let chosen = match (sa.get(i).copied().flatten(), sb.get(i).copied().flatten()) {
                    (None, None) => None,
                    (x, y) => {
                        let (x, y) = (self.lane_value(x), self.lane_value(y));
                        let ci = cv[i.min(cv.len() - 1)];
                        Some(self.b.ins().select(ci, x, y))
                    }
                };
                let cond = sc.get(i.min(sc.len().saturating_sub(1))).copied().flatten();
                self.poisoned(&[chosen, cond])
            })
            .collect()
    }

    /// In a checked build, the index (in `Compiled::significant`) of which
    /// bytes of the type a copy from `src` copies are a value's rather than
    /// padding, seen through the casts to `i8*` that `llvm.memcpy` takes;
    /// `u32::MAX` when the type is not known (every byte counts).
    pub(super) fn significant_bytes(&mut self, src: Word) -> u32 {
        if !self.s.checked {
            return u32::MAX;
        }
        let mut id = src;
        while let Some(from) = self.casts.get(&id) {
            id = *from;
        }
        let Ok((ty, _)) = self.pointee(id) else {
            return u32::MAX;
        };
        let (Ok(layout), Ok(leaves)) = (self.m.layout(ty), self.m.leaves(ty)) else {
            return u32::MAX;
        };
        let mut mask = vec![false; layout.size as usize];
        for leaf in leaves {
            let n = self.m.layout(leaf.ty).map_or(1, |l| l.size) as usize;
            let at = leaf.offset as usize;
            for b in mask.iter_mut().skip(at).take(n) {
                *b = true;
            }
        }
        if mask.iter().all(|b| *b) {
            return u32::MAX;
        }
        self.s.significant.push(mask);
        self.s.significant.len() as u32 - 1
    }

    /// In a checked build, reports at run time an access through pointer
    /// `id` when the pointer is poisoned: Oclgrind's `Uninitialized
    /// address`. The access itself goes on, as Oclgrind's does.
    pub(super) fn check_address(&mut self, id: Word) {
        if !self.s.checked {
            return;
        }
        let lanes = self.lanes(id);
        let Some(p) = self.poisoned(&lanes) else {
            return;
        };
        let report = self.b.create_block();
        self.b.set_cold_block(report);
        let cont = self.b.create_block();
        self.b.ins().brif(p, report, &[], cont, &[]);
        self.b.switch_to_block(report);
        let site = self.site();
        let args = [
            self.ctx,
            self.b.ins().iconst(types::I32, 1),
            self.b.ins().iconst(types::I32, site),
        ];
        self.helper("clsync_uninit", &args);
        self.b.ins().jump(cont, &[]);
        self.b.switch_to_block(cont);
    }
}
