//! The control-flow graph: successors and the order blocks are translated
//! in.

use std::collections::HashMap;

use clsync_spirv::spirv::{Op, Word};
use clsync_spirv::{Function, Instruction, Operand};

/// A block's successors.
pub(super) fn successors(term: &Instruction) -> Vec<Word> {
    let ids = |from: usize, step: usize| {
        term.operands
            .iter()
            .skip(from)
            .step_by(step)
            .filter_map(|o| match o {
                Operand::IdRef(w) => Some(*w),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    match term.class.opcode {
        Op::Branch => ids(0, 1),
        Op::BranchConditional => ids(1, 1).into_iter().take(2).collect(),
        Op::Switch => {
            let mut v = ids(1, 1);
            v.dedup();
            v
        }
        _ => vec![],
    }
}

/// The reachable blocks of `f` in reverse postorder: every block after
/// those that dominate it (llvm-spirv's own order does not always keep
/// that).
pub(super) fn reverse_postorder(f: &Function) -> Vec<usize> {
    let index: HashMap<Word, usize> = f
        .blocks
        .iter()
        .enumerate()
        .map(|(i, b)| (b.label, i))
        .collect();
    let succ: Vec<Vec<usize>> = f
        .blocks
        .iter()
        .map(|b| {
            b.instructions
                .last()
                .map(|(t, _)| {
                    successors(t)
                        .iter()
                        .filter_map(|l| index.get(l).copied())
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();
    let mut seen = vec![false; f.blocks.len()];
    let mut post = Vec::with_capacity(f.blocks.len());
    let mut stack = vec![(0usize, 0usize)];
    seen[0] = true;
    while let Some((n, i)) = stack.pop() {
        if i < succ[n].len() {
            stack.push((n, i + 1));
            let s = succ[n][i];
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(n);
        }
    }
    post.reverse();
    post
}
