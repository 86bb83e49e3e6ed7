//! Agreed intervals: a state whose work-items all stop at the same place
//! (the same barrier, or all return) is one whose place the last
//! work-item's tells. Such a state's unchecked function writes no place
//! per work-item (or per batch) and, where it chains (`chain`), notes no
//! difference per batch: it tells the runtime once, at the loop's end,
//! that every work-item waits there, as a narrowed loop of no work-item
//! would (`ItemCtx::narrowed_from` 0, `narrowed_at` the place; `narrow`).
//! The runtime then has no places to compare.
//!
//! The place is the group's where either holds:
//!
//! - **One way out.** Every path from the state's start meets the same
//!   barrier first, or every path returns: a reduction's level (`if (l <
//!   h) s[l] += s[l + h];` and the next barrier), a scan's first and last
//!   steps, a histogram's phases. No divergence can happen in such an
//!   interval; the next one that has two ways out compares its places.
//! - **Branches the group shares.** Every branch on the way is on a value
//!   that is the same in every work-item of the group
//!   (`uniform::analyze_group`), so the group takes one path: a barrier
//!   loop (`for (...) { barrier(...); acc = acc * 3 + 1; }`), a tiled
//!   SGEMM's steps: branches on loop counters, sizes and arguments. The
//!   work-items all start at the state's barrier (the runtime calls a
//!   state's function only then). That a load of an address the group
//!   shares reads one value relies on the interval having no data race on
//!   it, as the batches' uniform loads and the group's hoisted values do: a
//!   race there is undefined behaviour, whose result may be any, and the
//!   accesses stay checked.

use std::collections::HashSet;

use clsync_spirv::spirv::Op;
use clsync_spirv::{Function, Module};
use cranelift_codegen::ir::{types, InstBuilder, Value};

use crate::exec::ctx::{CTX_NARROWED_AT, CTX_NARROWED_FROM};
use crate::translate::function::{mem, Fx};

/// Where state `k`'s interval of kernel body `f` can end, and the blocks
/// whose branches it takes on the way: the interval runs from the start
/// of the kernel for `k` 0, from right after barrier `k` otherwise, to the
/// first barrier or return on each path. Barriers count from 1 in the
/// translation's order (`narrow::barrier_sites`); none where `k` is no
/// barrier.
pub(crate) struct Interval {
    /// Each way out: a barrier's index in `narrow::barrier_sites` (barrier
    /// `k` is `k - 1`), [`Interval::RETURN`], or [`Interval::OTHER`] (a
    /// block that ends the function otherwise).
    pub exits: HashSet<usize>,
    /// The blocks the interval leaves by their branch.
    pub branching: Vec<usize>,
}

impl Interval {
    pub const RETURN: usize = usize::MAX;
    pub const OTHER: usize = usize::MAX - 1;

    /// State `k`'s interval (see the type's docs).
    pub(crate) fn of(f: &Function, k: u32) -> Option<Interval> {
        let barriers = super::narrow::barrier_sites(f);
        let start = match k {
            0 => (0, None),
            k => {
                let &(b, at) = barriers.get(k as usize - 1)?;
                (b, Some(at))
            }
        };
        let (_, succ) = crate::translate::cfg::block_graph(f);
        let mut i = Interval {
            exits: HashSet::new(),
            branching: Vec::new(),
        };
        let mut seen = HashSet::new();
        let mut todo = vec![start];
        while let Some((b, from)) = todo.pop() {
            // The interval ends at the block's first barrier after where it
            // entered the block, before the block's branch.
            let first = barriers
                .iter()
                .enumerate()
                .filter(|(_, &(x, at))| x == b && from.is_none_or(|f| at > f))
                .min_by_key(|(_, &(_, at))| at);
            if let Some((n, _)) = first {
                i.exits.insert(n);
                continue;
            }
            let blk = f.blocks.get(b)?;
            i.branching.push(b);
            if succ[b].is_empty() {
                let term = blk.instructions.last().map(|(t, _)| t.class.opcode);
                i.exits.insert(match term {
                    Some(Op::Return | Op::ReturnValue) => Interval::RETURN,
                    _ => Interval::OTHER,
                });
            }
            for &x in &succ[b] {
                if seen.insert(x) {
                    todo.push((x, None));
                }
            }
        }
        Some(i)
    }
}

/// Whether every work-item of a group stops at the same place in state
/// `k`'s interval of kernel body `f` ([`Interval`]): it has one way out,
/// or every branch on the way is on a value the group shares (see the
/// module docs).
pub(crate) fn agreed(m: &Module, f: &Function, k: u32) -> bool {
    let Some(i) = Interval::of(f, k) else {
        return false;
    };
    if i.exits.contains(&Interval::OTHER) || i.exits.is_empty() {
        return false;
    }
    i.exits.len() == 1 || {
        let u = crate::translate::uniform::analyze_group(m, f);
        i.branching
            .iter()
            .all(|&b| !u.diverging.contains(&f.blocks[b].label))
    }
}

impl Fx<'_, '_> {
    /// Whether this build is an unchecked function of one state whose
    /// interval is agreed (see the module docs).
    pub(super) fn agreed_state(&self, f: &Function) -> bool {
        let Some(c) = self.cont.as_ref() else {
            return false;
        };
        match c.plan.only_state {
            Some(k) if !self.s.checked => agreed(self.m, f, k),
            _ => false,
        }
    }

    /// At the loop's end of an agreed build, where the last work-item
    /// stopped at `r`: every work-item waits there, which the runtime
    /// reads as a narrowed loop of no work-item whose others wait at `r`.
    pub(super) fn agreed_exit(&mut self, r: Value) {
        let ctx = self.ctx;
        let none = self.b.ins().iconst(types::I64, 0);
        self.b.ins().store(mem(), none, ctx, CTX_NARROWED_FROM);
        let at = self.b.ins().uextend(types::I64, r);
        self.b.ins().store(mem(), at, ctx, CTX_NARROWED_AT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// For the start and each barrier of `src`'s kernel `k`, whether its
    /// interval is agreed.
    fn agreements(src: &str) -> Vec<bool> {
        let p = crate::Program::build(src, "k.cl", "-cl-std=CL2.0")
            .unwrap_or_else(|e| panic!("build failed:\n{e}"));
        let m = &p.module;
        let e = m.entry_points.iter().find(|e| e.name == "k").expect("k");
        let f = super::super::body(m, m.function(e.function).expect("its function"));
        let n = super::super::narrow::barrier_sites(f).len() as u32;
        (0..=n).map(|k| agreed(m, f, k)).collect()
    }

    #[test]
    fn one_way_out_agrees_whatever_the_branches() {
        let reduce = "kernel void k(global int *o, local int *s) {\n  size_t l = get_local_id(0);\n  s[l] = l;\n  for (size_t h = 8; h > 0; h /= 2) {\n    barrier(CLK_LOCAL_MEM_FENCE);\n    if (l < h) s[l] += s[l + h];\n  }\n  if (l == 0) o[0] = s[0];\n}\n";
        // Unrolled: each level branches on `l` and meets the next level's
        // barrier (the last returns).
        assert_eq!(agreements(reduce), [true; 5]);
        let data = "kernel void k(global int *o, global const int *in) {\n  if (in[get_global_id(0)] > 0) o[get_global_id(0)] = 1;\n  barrier(CLK_LOCAL_MEM_FENCE);\n  if (get_local_id(1) == 0) o[0] = 1;\n}\n";
        assert_eq!(agreements(data), [true, true]);
    }

    #[test]
    fn branches_on_counters_and_arguments_agree() {
        let looped = "kernel void k(global int *o, int n) {\n  int a = get_local_id(0);\n  for (int i = 0; i < n; i++) { barrier(CLK_LOCAL_MEM_FENCE); a = a * 3 + 1; }\n  o[get_global_id(0)] = a;\n}\n";
        assert_eq!(agreements(looped), [true, true]);
        let tiled = "kernel void k(global const float *a, global float *c, int n) {\n  local float t[64];\n  size_t x = get_local_id(0), y = get_local_id(1);\n  float acc = 0;\n  for (int s = 0; s < n; s++) {\n    t[y * 8 + x] = a[s * 64 + y * 8 + x];\n    barrier(CLK_LOCAL_MEM_FENCE);\n    for (int j = 0; j < 8; j++) acc += t[y * 8 + j];\n    barrier(CLK_LOCAL_MEM_FENCE);\n  }\n  c[get_global_id(1) * get_global_size(0) + get_global_id(0)] = acc;\n}\n";
        assert_eq!(agreements(tiled), [true, true, true]);
        // (One barrier on one side, two on the other: the compiler cannot
        // make them one, and the kernel has four with the first.)
        let picked = "kernel void k(global int *o, int n) {\n  barrier(CLK_LOCAL_MEM_FENCE);\n  if (n > 3) { o[0] = 1; barrier(CLK_LOCAL_MEM_FENCE); o[1] = 1; }\n  else { o[2] = 2; barrier(CLK_LOCAL_MEM_FENCE); o[3] = 2; barrier(CLK_LOCAL_MEM_FENCE); o[4] = 2; }\n}\n";
        assert_eq!(agreements(picked), [true; 4]);
    }

    #[test]
    fn two_ways_out_on_the_ids_or_their_data_do_not() {
        let on_x = "kernel void k(global int *o) {\n  barrier(CLK_LOCAL_MEM_FENCE);\n  if (get_local_id(0) < 3) { o[0] = 1; barrier(CLK_LOCAL_MEM_FENCE); o[1] = 1; }\n  else { o[2] = 2; barrier(CLK_LOCAL_MEM_FENCE); o[3] = 2; barrier(CLK_LOCAL_MEM_FENCE); o[4] = 2; }\n}\n";
        assert_eq!(agreements(on_x), [true, false, true, true]);
        let on_y = "kernel void k(global int *o) {\n  barrier(CLK_LOCAL_MEM_FENCE);\n  if (get_local_id(1) == 0) return;\n  barrier(CLK_LOCAL_MEM_FENCE);\n  o[0] = 1;\n}\n";
        assert_eq!(
            agreements(on_y),
            [true, false, true],
            "y differs between rows"
        );
        let data = "kernel void k(global int *o, global const int *in) {\n  barrier(CLK_LOCAL_MEM_FENCE);\n  if (in[get_global_id(0)] > 0) return;\n  barrier(CLK_LOCAL_MEM_FENCE);\n  o[0] = 1;\n}\n";
        assert_eq!(agreements(data), [true, false, true]);
        let trips = "kernel void k(global int *o) {\n  for (size_t i = 0; i < get_local_id(0); i++) barrier(CLK_LOCAL_MEM_FENCE);\n  o[0] = 1;\n}\n";
        assert_eq!(agreements(trips), [false, false], "a trip count of the id");
    }
}
