//! Narrowed work-item loops: a tree reduction's interval after barrier `k`
//! is `if (l < h) s[l] += s[l + h];` and then the next barrier, and the
//! work-items from `h` on do nothing in it but reach that barrier. An
//! unchecked function of state `k` whose interval has that shape runs its
//! loop over the work-items below the threshold only (rounded up to whole
//! lane batches), and records the others as waiting at the barrier: a
//! reduction of 256 work-items runs 129 batches in its nine intervals
//! instead of 576.
//!
//! The shape, read from the SPIR-V (`narrowing`):
//!
//! - after barrier `k`, its block computes nothing but pure operations and
//!   reads of built-ins, and ends in a branch on `l < X` (or `X > l`,
//!   `l >= X`, `X <= l`), `l` the local id x or the local linear id, `X` a
//!   constant or a kernel argument;
//! - the side a work-item from the threshold on takes is a block that
//!   starts, after its phis and pure operations, with a barrier or a
//!   return, or with a branch that every such work-item takes alike (a
//!   constant threshold, and a comparison of `l` with a constant whose
//!   result is the same for every `l` from it on: a reduction's last
//!   level's `if (l == 0)` after its `if (l < 1)`), to such a block;
//! - nothing the skipped work-items would compute on that way (in either
//!   block) is kept across that barrier, but values the code computes again
//!   where it resumes: what they keep is what their frames already hold.
//!
//! The launch's group must be of one dimension (x is then the linear id),
//! which the code tests; a group of more runs its whole loop.

use std::collections::HashSet;

use clsync_spirv::spirv::{BuiltIn, Op, Word};
use clsync_spirv::{Constant, Function, Instruction, Module, Operand};

use super::plan::Plan;

/// The threshold `X` of a narrowed loop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Threshold {
    /// A constant, sign-extended from its width.
    Constant(i64),
    /// A kernel argument (a parameter of the kernel's body).
    Parameter(Word),
}

/// How a function of one state narrows its loop (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Narrow {
    /// Work-items whose `l` is at least this skip the interval.
    pub threshold: Threshold,
    /// Whether the comparison is signed (a negative threshold: every
    /// work-item skips).
    pub signed: bool,
    /// The barrier the skipped work-items wait at (counted from 1, as
    /// `BarrierSpec`s are), or 0: they return.
    pub barrier: u32,
}

/// Each barrier of kernel body `f` as (block index, instruction index), in
/// the translation's order (blocks in reverse postorder, instructions in
/// order): barrier `k` is the `k - 1`-th.
pub(crate) fn barrier_sites(f: &Function) -> Vec<(usize, usize)> {
    let order = crate::translate::cfg::reverse_postorder(f);
    order
        .iter()
        .flat_map(|&b| {
            f.blocks[b]
                .instructions
                .iter()
                .enumerate()
                .filter(|(_, (i, _))| i.class.opcode == Op::ControlBarrier)
                .map(move |(at, _)| (b, at))
        })
        .collect()
}

/// The narrowing of state `k`'s loop, if its interval has the shape.
pub(crate) fn narrowing(m: &Module, f: &Function, plan: &Plan, k: u32) -> Option<Narrow> {
    let sites = barrier_sites(f);
    let &(b, at) = sites.get((k as usize).checked_sub(1)?)?;
    let defs: std::collections::HashMap<Word, &Instruction> = f
        .blocks
        .iter()
        .flat_map(|b| &b.instructions)
        .filter_map(|(i, _)| i.result_id.map(|r| (r, i)))
        .collect();
    let block = &f.blocks[b];
    let (term, _) = block.instructions.last()?;
    if term.class.opcode != Op::BranchConditional {
        return None;
    }
    let body = &block.instructions[at + 1..block.instructions.len() - 1];
    let ids = |k: usize| match term.operands.get(k) {
        Some(Operand::IdRef(w)) => Some(*w),
        _ => None,
    };
    let (cond, on_true, on_false) = (ids(0)?, ids(1)?, ids(2)?);
    let c = defs.get(&cond)?;
    let arg = |k: usize| match c.operands.get(k) {
        Some(Operand::IdRef(w)) => Some(*w),
        _ => None,
    };
    // (the id operand, the threshold operand, whether the true side skips)
    let (id, x, skip_on_true, signed) = match c.class.opcode {
        Op::ULessThan => (arg(0)?, arg(1)?, false, false),
        Op::SLessThan => (arg(0)?, arg(1)?, false, true),
        Op::UGreaterThan => (arg(1)?, arg(0)?, false, false),
        Op::SGreaterThan => (arg(1)?, arg(0)?, false, true),
        Op::UGreaterThanEqual => (arg(0)?, arg(1)?, true, false),
        Op::SGreaterThanEqual => (arg(0)?, arg(1)?, true, true),
        Op::ULessThanEqual => (arg(1)?, arg(0)?, true, false),
        Op::SLessThanEqual => (arg(1)?, arg(0)?, true, true),
        // `l == 0` (`l < 1` as compilers write it) and `l != 0`.
        Op::IEqual | Op::INotEqual => {
            let (a, b) = (arg(0)?, arg(1)?);
            let zero =
                |w: Word| matches!(m.constants.get(&w), Some(Constant::Scalar { bits: 0, .. }));
            let id = match (zero(a), zero(b)) {
                (false, true) => a,
                (true, false) => b,
                _ => return None,
            };
            let one = Threshold::Constant(1);
            return (is_local_x(m, &defs, id))
                .then_some(())
                .and_then(|()| {
                    let skip_on_true = c.class.opcode == Op::INotEqual;
                    let skip = if skip_on_true { on_true } else { on_false };
                    waiting(m, f, plan, &defs, &sites, body, skip, Some(1))
                })
                .map(|barrier| Narrow {
                    threshold: one,
                    signed: false,
                    barrier,
                });
        }
        _ => return None,
    };
    if !is_local_x(m, &defs, id) {
        return None;
    }
    let threshold = match m.constants.get(&x) {
        Some(Constant::Scalar { bits, ty }) => {
            let width = match m.ty(*ty) {
                Ok(clsync_spirv::Type::Int(w)) => *w,
                _ => return None,
            };
            let shift = 64 - width.min(64);
            Threshold::Constant(((*bits as i64) << shift) >> shift)
        }
        _ if f.params.iter().any(|(p, _)| *p == x) => Threshold::Parameter(x),
        _ => return None,
    };
    let skip = if skip_on_true { on_true } else { on_false };
    let from = match threshold {
        Threshold::Constant(t) => Some(t),
        Threshold::Parameter(_) => None,
    };
    let barrier = waiting(m, f, plan, &defs, &sites, body, skip, from)?;
    Some(Narrow {
        threshold,
        signed,
        barrier,
    })
}

/// Where the work-items that take the edge to block `skip` wait, with
/// nothing else done (0: they return), if they do: the interval's block
/// (`body`, after the barrier) and `skip` compute only pure operations
/// and reads of built-ins until the barrier (or return), and nothing of
/// it is kept across that barrier but what is computed again. On the way
/// `skip` may branch where the branch is decided for every skipped
/// work-item (`decided`: `l` at least `from`, a constant threshold), as
/// a reduction's last level's `if (l == 0)` after its `if (l < 1)`.
#[allow(clippy::too_many_arguments)]
fn waiting(
    m: &Module,
    f: &Function,
    plan: &Plan,
    defs: &std::collections::HashMap<Word, &Instruction>,
    sites: &[(usize, usize)],
    body: &[(Instruction, clsync_spirv::SourceLine)],
    skip: Word,
    from: Option<i64>,
) -> Option<u32> {
    let pure = |i: &Instruction| {
        crate::translate::uniform::is_pure(i.class.opcode)
            || (i.class.opcode == Op::Load
                && matches!(i.operands.first(), Some(Operand::IdRef(p))
                    if crate::translate::builtin_of(m, *p).is_some()))
    };
    if body.iter().any(|(i, _)| !pure(i)) {
        return None;
    }
    // The skip side: phis and pure operations, then a barrier or return,
    // through decided branches (a few blocks at most).
    let mut label = skip;
    let mut on_way: Vec<&Instruction> = Vec::new();
    for _ in 0..8 {
        let s = f.blocks.iter().position(|blk| blk.label == label)?;
        let insts = &f.blocks[s].instructions;
        let first_other = insts
            .iter()
            .position(|(i, _)| i.class.opcode != Op::Phi && !pure(i))?;
        on_way.extend(insts[..first_other].iter().map(|(i, _)| i));
        let (stop, _) = &insts[first_other];
        let barrier = match stop.class.opcode {
            Op::ControlBarrier => {
                sites.iter().position(|&site| site == (s, first_other))? as u32 + 1
            }
            Op::Return => 0,
            Op::BranchConditional => {
                let id = |k: usize| match stop.operands.get(k) {
                    Some(Operand::IdRef(w)) => Some(*w),
                    _ => None,
                };
                let taken = decided(m, defs, id(0)?, from?)?;
                label = id(if taken { 1 } else { 2 })?;
                continue;
            }
            Op::Branch => {
                label = match stop.operands.first() {
                    Some(Operand::IdRef(w)) => *w,
                    _ => return None,
                };
                continue;
            }
            _ => return None,
        };
        let live: HashSet<Word> = plan
            .live
            .get(&(f.blocks[s].label, first_other))
            .map(|l| l.iter().copied().collect())
            .unwrap_or_default();
        let kept =
            |w: Option<Word>| w.is_some_and(|w| live.contains(&w) && !plan.remat.contains_key(&w));
        if body
            .iter()
            .map(|(i, _)| i)
            .chain(on_way)
            .any(|i| kept(i.result_id))
        {
            return None;
        }
        return Some(barrier);
    }
    None
}

/// The value of condition `cond` for every work-item whose `l` (the local
/// id x, below 2^32) is at least `from`, where it is the same for all of
/// them: `cond` compares `l` with a constant.
fn decided(
    m: &Module,
    defs: &std::collections::HashMap<Word, &Instruction>,
    cond: Word,
    from: i64,
) -> Option<bool> {
    let c = defs.get(&cond)?;
    let arg = |k: usize| match c.operands.get(k) {
        Some(Operand::IdRef(w)) => Some(*w),
        _ => None,
    };
    let constant = |w: Word| match m.constants.get(&w) {
        Some(Constant::Scalar { bits, ty }) => match m.ty(*ty) {
            Ok(clsync_spirv::Type::Int(width)) if (1..=64).contains(width) => {
                let shift = 64 - width;
                Some((((*bits << shift) as i64) >> shift, *width))
            }
            _ => None,
        },
        _ => None,
    };
    // `l op x` with `l` first (an operation with `l` second is turned).
    let (op, x) = match (arg(0)?, arg(1)?) {
        (a, b) if is_local_x(m, defs, a) => (c.class.opcode, constant(b)?),
        (a, b) if is_local_x(m, defs, b) => {
            let turned = match c.class.opcode {
                Op::ULessThan => Op::UGreaterThan,
                Op::UGreaterThan => Op::ULessThan,
                Op::ULessThanEqual => Op::UGreaterThanEqual,
                Op::UGreaterThanEqual => Op::ULessThanEqual,
                Op::SLessThan => Op::SGreaterThan,
                Op::SGreaterThan => Op::SLessThan,
                Op::SLessThanEqual => Op::SGreaterThanEqual,
                Op::SGreaterThanEqual => Op::SLessThanEqual,
                op => op,
            };
            (turned, constant(a)?)
        }
        _ => return None,
    };
    let (x, width) = x;
    // The constant as the comparison reads it: signed as is, unsigned as
    // its width's bits.
    let unsigned = matches!(
        op,
        Op::ULessThan | Op::UGreaterThan | Op::ULessThanEqual | Op::UGreaterThanEqual
    );
    let x: i128 = match unsigned {
        true => (x as u64 & (u64::MAX >> (64 - width))) as i128,
        false => x as i128,
    };
    // Each skipped `l` is in [lo, hi]; `l` fits its width (32 bits or
    // more, `is_local_x`), so both readings of it agree.
    let (lo, hi) = ((from.max(0)) as i128, (u32::MAX as i128));
    if lo > hi {
        return None;
    }
    let at = |l: i128| match op {
        Op::ULessThan | Op::SLessThan => Some(l < x),
        Op::UGreaterThan | Op::SGreaterThan => Some(l > x),
        Op::ULessThanEqual | Op::SLessThanEqual => Some(l <= x),
        Op::UGreaterThanEqual | Op::SGreaterThanEqual => Some(l >= x),
        Op::IEqual => Some(l == x),
        Op::INotEqual => Some(l != x),
        _ => None,
    };
    match op {
        // Equal or not: decided where `x` is outside the range.
        Op::IEqual | Op::INotEqual if (lo..=hi).contains(&x) => None,
        _ => {
            let (a, b) = (at(lo)?, at(hi)?);
            (a == b).then_some(a)
        }
    }
}

/// Whether `id` is the work-item's local id x (component 0 of the local
/// id, or the local linear id), through conversions to 32 bits or more.
fn is_local_x(
    m: &Module,
    defs: &std::collections::HashMap<Word, &Instruction>,
    mut id: Word,
) -> bool {
    loop {
        let Some(i) = defs.get(&id) else {
            return false;
        };
        let first = match i.operands.first() {
            Some(Operand::IdRef(w)) => *w,
            _ => return false,
        };
        match i.class.opcode {
            Op::UConvert | Op::SConvert => {
                let wide = i
                    .result_type
                    .is_some_and(|t| matches!(m.ty(t), Ok(clsync_spirv::Type::Int(w)) if *w >= 32));
                if !wide {
                    return false;
                }
                id = first;
            }
            Op::CompositeExtract => {
                let Some(v) = defs.get(&first) else {
                    return false;
                };
                return matches!(i.operands.get(1), Some(Operand::LiteralBit32(0)))
                    && v.class.opcode == Op::Load
                    && matches!(v.operands.first(), Some(Operand::IdRef(p))
                        if crate::translate::builtin_of(m, *p) == Some(BuiltIn::LocalInvocationId));
            }
            Op::Load => {
                return crate::translate::builtin_of(m, first)
                    == Some(BuiltIn::LocalInvocationIndex);
            }
            _ => return false,
        }
    }
}

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};

use crate::exec::ctx::{CTX_NARROWED_AT, CTX_NARROWED_FROM};
use crate::translate::function::{mem, Fx};

/// A narrowed loop's values in the code: its bound on the linear id and
/// on x (the group's size and local size x where it does not narrow), and
/// the barrier the others wait at.
#[derive(Clone, Copy)]
pub(crate) struct Bounds {
    pub all: Value,
    pub row: Value,
    pub barrier: u32,
}

impl Fx<'_, '_> {
    /// In the prologue of kernel body `f`, once the group's size `n` and
    /// local sizes are made: the narrowed loop's bounds, where this build
    /// (unchecked, of one state after a barrier) narrows.
    pub(super) fn narrow_bounds(
        &mut self,
        f: &Function,
        n: Value,
        sizes: [Value; 3],
    ) -> Option<Bounds> {
        let k = self.resumed_state()?;
        let nw = narrowing(self.m, f, &self.cont.as_ref()?.plan, k)?;
        let x = match nw.threshold {
            Threshold::Constant(v) => self.b.ins().iconst(types::I64, v),
            Threshold::Parameter(p) => {
                let v = *self.vals.get(&p)?.first()?;
                let t = self.b.func.dfg.value_type(v);
                match (t, nw.signed) {
                    (types::I64, _) => v,
                    (t, true) if t.is_int() => self.b.ins().sextend(types::I64, v),
                    (t, false) if t.is_int() => self.b.ins().uextend(types::I64, v),
                    _ => return None,
                }
            }
        };
        let t = match nw.signed {
            true => {
                let zero = self.b.ins().iconst(types::I64, 0);
                self.b.ins().smax(x, zero)
            }
            false => x,
        };
        let mut t = self.b.ins().umin(t, n);
        if self.batched() {
            // Whole batches: the batch that holds the threshold runs, its
            // lanes from it on taking the skipping side themselves.
            let up = self.b.ins().iadd_imm_s(t, super::LANES as i64 - 1);
            let up = self.b.ins().band_imm_s(up, -(super::LANES as i64));
            t = self.b.ins().umin(up, n);
        }
        let yz = self.b.ins().imul(sizes[1], sizes[2]);
        let one_d = self.b.ins().icmp_imm_s(IntCC::Equal, yz, 1);
        Some(Bounds {
            all: self.b.ins().select(one_d, t, n),
            row: self.b.ins().select(one_d, t, sizes[0]),
            barrier: nw.barrier,
        })
    }

    /// At the loop's end of a narrowed build: tells the runtime where the
    /// work-items it did not run wait (`ItemCtx::narrowed_from`, from
    /// which linear id, and `narrowed_at`, at which barrier), which it
    /// writes in their places.
    pub(super) fn narrow_exit(&mut self, bounds: Bounds) {
        let ctx = self.ctx;
        self.b
            .ins()
            .store(mem(), bounds.all, ctx, CTX_NARROWED_FROM);
        let at = self.b.ins().iconst(types::I64, bounds.barrier as i64);
        self.b.ins().store(mem(), at, ctx, CTX_NARROWED_AT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// For each barrier of `src`'s kernel `k`, built optimized, the
    /// narrowing of the state after it.
    fn narrowings(src: &str) -> Vec<Option<Narrow>> {
        let p = crate::Program::build(src, "k.cl", "-cl-std=CL2.0")
            .unwrap_or_else(|e| panic!("build failed:\n{e}"));
        let m = &p.module;
        let e = m.entry_points.iter().find(|e| e.name == "k").expect("k");
        let f = super::super::body(m, m.function(e.function).expect("its function"));
        let plan = super::super::plan(m, f).expect("work-item loops");
        let n = barrier_sites(f).len() as u32;
        (1..=n).map(|k| narrowing(m, f, &plan, k)).collect()
    }

    #[test]
    fn a_reduction_narrows_each_level_to_its_half() {
        let src = "kernel void k(global int *o, local int *s) {\n  size_t l = get_local_id(0);\n  s[l] = l;\n  for (size_t h = 8; h > 0; h /= 2) {\n    barrier(CLK_LOCAL_MEM_FENCE);\n    if (l < h) s[l] += s[l + h];\n  }\n  if (l == 0) o[0] = s[0];\n}\n";
        let found = narrowings(src);
        let thresholds: Vec<_> = found.iter().map(|n| n.map(|n| n.threshold)).collect();
        assert_eq!(
            thresholds,
            [8, 4, 2, 1].map(|h| Some(Threshold::Constant(h))),
            "{found:?}"
        );
        // Each level's skipped work-items wait at the next level's
        // barrier; the last level's return (`l < 1` is `l == 0` there).
        let barriers: Vec<_> = found.iter().map(|n| n.map(|n| n.barrier)).collect();
        assert_eq!(barriers, [Some(2), Some(3), Some(4), Some(0)]);
    }

    #[test]
    fn a_last_level_that_tests_its_id_again_narrows() {
        // The benchmark's reduction: after the last level's `l < 1` (made
        // `l == 0`), the skipped work-items pass `if (l == 0)` (an id
        // compared before the first barrier) on their way to the return.
        let src = "kernel void k(global const float *in, global float *partial, local float *s) {\n  size_t l = get_local_id(0);\n  size_t ahead = get_group_id(0) + 2;\n  if (l == 0 && ahead < get_num_groups(0)) prefetch(in + ahead * 256, 256);\n  s[l] = in[get_global_id(0)];\n  for (size_t h = 128; h > 0; h /= 2) {\n    barrier(CLK_LOCAL_MEM_FENCE);\n    if (l < h) s[l] += s[l + h];\n  }\n  if (l == 0) partial[get_group_id(0)] = s[0];\n}\n";
        let found = narrowings(src);
        let thresholds: Vec<_> = found.iter().map(|n| n.map(|n| n.threshold)).collect();
        assert_eq!(
            thresholds,
            [128, 64, 32, 16, 8, 4, 2, 1].map(|h| Some(Threshold::Constant(h))),
            "{found:?}"
        );
        assert_eq!(found[7].map(|n| n.barrier), Some(0), "the last returns");
        // A test the skipped work-items do not all pass alike (`l == 5`
        // for `l` from 1 on) keeps the whole loop.
        let undecided = "kernel void k(global int *o, local int *s) {\n  size_t l = get_local_id(0);\n  s[l] = l;\n  barrier(CLK_LOCAL_MEM_FENCE);\n  if (l < 1) s[0] += s[1];\n  if (l == 5) o[0] = s[0];\n}\n";
        assert_eq!(narrowings(undecided), [None]);
    }

    #[test]
    fn arguments_and_either_side_narrow_and_kept_values_do_not() {
        let below = "kernel void k(global int *o, int t, uint u) {\n  int l = get_local_id(0);\n  barrier(CLK_LOCAL_MEM_FENCE);\n  if (l < t) o[l] += 1;\n  barrier(CLK_LOCAL_MEM_FENCE);\n  if ((uint)l >= u) {} else o[l] += 100;\n  barrier(CLK_LOCAL_MEM_FENCE);\n  o[l] += 1000;\n}\n";
        let found = narrowings(below);
        assert!(
            matches!(
                found[0],
                Some(Narrow {
                    threshold: Threshold::Parameter(_),
                    signed: true,
                    barrier: 2
                })
            ),
            "{found:?}"
        );
        assert!(
            matches!(
                found[1],
                Some(Narrow {
                    threshold: Threshold::Parameter(_),
                    signed: false,
                    barrier: 3
                })
            ),
            "{found:?}"
        );
        assert_eq!(found[2], None, "no branch after the last barrier");
        let keeps = "kernel void k(global int *o, global const int *in, int t) {\n  int l = get_local_id(0);\n  int v = in[l];\n  barrier(CLK_LOCAL_MEM_FENCE);\n  if (l < t) v = v * 2; else v = v + 7;\n  barrier(CLK_LOCAL_MEM_FENCE);\n  o[l] = v;\n}\n";
        assert_eq!(narrowings(keeps)[0], None);
        let on_y = "kernel void k(global int *o, local int *s) {\n  size_t l = get_local_id(1);\n  s[l] = l;\n  barrier(CLK_LOCAL_MEM_FENCE);\n  if (l < 2) s[l] += s[l + 2];\n  barrier(CLK_LOCAL_MEM_FENCE);\n  o[l] = s[l];\n}\n";
        assert_eq!(narrowings(on_y)[0], None, "a threshold on y");
    }
}
