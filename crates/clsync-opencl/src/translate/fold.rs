//! Distances folded before code generation: an access's bounds check
//! measures the pointer from its object's root (`ptr - root`, see
//! `memory::Fx::bounds`). Where the pointer is a sum with the root among its
//! terms (`(root + 768) + 4 * l`, the scan's `src[i]` with `src = a +
//! PAD`), the distance is the other terms. The translator folds it as it
//! goes where it sees the sum, but a pointer kept in a variable reaches it
//! as a block parameter, which Cranelift's removal of constant phis later
//! makes the sum again; and Cranelift's rules fold `(x + y) - x` only where
//! `x` is the outer sum's own operand. So once the phis are gone, each
//! `isub` whose first operand is a tree of `iadd`s holding its second is
//! made the sum of the tree's other terms: two instructions fewer per
//! access in the loop, and one value fewer live in it.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{Function, InstBuilder, InstructionData, Opcode, Value};

/// The levels of `iadd` looked through.
const DEPTH: u32 = 6;

/// Folds every such distance of `func` (see the module docs). `func`'s
/// aliases must be resolved.
pub(crate) fn distances(func: &mut Function) {
    let mut pos = FuncCursor::new(func);
    while pos.next_block().is_some() {
        while let Some(inst) = pos.next_inst() {
            let InstructionData::Binary {
                opcode: Opcode::Isub,
                args: [x, root],
            } = pos.func.dfg.insts[inst]
            else {
                continue;
            };
            // Scalar integers only: the replacement's zero is an `iconst`
            // (a batch's packed lanes subtract vectors).
            let ty = pos.func.dfg.value_type(x);
            if ty.is_vector() || !ty.is_int() {
                continue;
            }
            let mut terms = Vec::new();
            if !sum_terms(pos.func, x, DEPTH, &mut terms) {
                continue;
            }
            let Some(at) = terms.iter().position(|t| *t == root) else {
                continue;
            };
            terms.remove(at);
            // The other terms are operands of the sum's `iadd`s, each of
            // which dominates the `isub`: so they do. The `isub` becomes
            // the last addition (`x + 0` where one term is left, which
            // Cranelift's rules fold).
            let (last, rest) = match terms.split_last() {
                None => {
                    pos.func.replace(inst).iconst(ty, 0);
                    continue;
                }
                Some((last, [])) => (pos.ins().iconst(ty, 0), *last),
                Some((last, rest)) => {
                    let acc = rest[1..]
                        .iter()
                        .fold(rest[0], |acc, t| pos.ins().iadd(acc, *t));
                    (acc, *last)
                }
            };
            pos.func.replace(inst).iadd(last, rest);
        }
    }
}

/// The terms of `v` as a tree of `iadd`s at most `depth` deep, in `terms`
/// (`v` itself where it is no `iadd`); false where the tree is deeper.
fn sum_terms(func: &Function, v: Value, depth: u32, terms: &mut Vec<Value>) -> bool {
    let v = func.dfg.resolve_aliases(v);
    let def = func.dfg.value_def(v).inst().map(|i| func.dfg.insts[i]);
    match def {
        Some(InstructionData::Binary {
            opcode: Opcode::Iadd,
            args: [a, b],
        }) => {
            depth > 0
                && sum_terms(func, a, depth - 1, terms)
                && sum_terms(func, b, depth - 1, terms)
        }
        _ => {
            terms.push(v);
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::ir::{types, AbiParam, Signature};
    use cranelift_codegen::isa::CallConv;

    /// Whether `v`'s definitions reach `root`.
    fn reads(func: &Function, v: Value, root: Value) -> bool {
        let v = func.dfg.resolve_aliases(v);
        v == root
            || func.dfg.value_def(v).inst().is_some_and(|i| {
                func.dfg
                    .inst_values(i)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .any(|a| reads(func, a, root))
            })
    }

    /// `(root + 768) + 4 * l - root` folds to `768 + 4 * l`, and `4 * l +
    /// (root + 16) - root` to `4 * l + 16`; a distance from a value that
    /// is not among the terms stays.
    #[test]
    fn a_root_among_the_terms_folds_out() {
        let mut sig = Signature::new(CallConv::SystemV);
        for _ in 0..3 {
            sig.params.push(AbiParam::new(types::I64));
        }
        for _ in 0..4 {
            sig.returns.push(AbiParam::new(types::I64));
        }
        let mut func = Function::with_name_signature(Default::default(), sig);
        let entry = func.dfg.make_block();
        let [root, l, other] = [0; 3].map(|_| func.dfg.append_block_param(entry, types::I64));
        let mut pos = FuncCursor::new(&mut func);
        pos.insert_block(entry);
        let pad = pos.ins().iconst(types::I64, 768);
        let base = pos.ins().iadd(root, pad);
        let four = pos.ins().imul_imm_s(l, 4);
        let ptr = pos.ins().iadd(base, four);
        let d = pos.ins().isub(ptr, root);
        let sixteen = pos.ins().iconst(types::I64, 16);
        let shifted = pos.ins().iadd(root, sixteen);
        let ptr2 = pos.ins().iadd(four, shifted);
        let d2 = pos.ins().isub(ptr2, root);
        let kept = pos.ins().isub(ptr, other);
        // Packed lanes: `(x + y) - x` of vectors stays as it is.
        let (a, b) = (
            pos.ins().ireduce(types::I32, pad),
            pos.ins().ireduce(types::I32, four),
        );
        let x = pos.ins().splat(types::I32X4, a);
        let y = pos.ins().splat(types::I32X4, b);
        let sum = pos.ins().iadd(x, y);
        let lanes = pos.ins().isub(sum, x);
        let lane = pos.ins().extractlane(lanes, 0);
        let lane = pos.ins().uextend(types::I64, lane);
        pos.ins().return_(&[d, d2, kept, lane]);
        distances(&mut func);
        let text = func.display().to_string();
        let flags = cranelift_codegen::settings::Flags::new(cranelift_codegen::settings::builder());
        cranelift_codegen::verify_function(&func, &flags).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert!(!reads(&func, d, root), "{text}");
        assert!(!reads(&func, d2, root), "{text}");
        assert!(reads(&func, kept, root), "{text}");
        let kept_def = func.dfg.value_def(kept).inst().expect("an instruction");
        assert_eq!(func.dfg.insts[kept_def].opcode(), Opcode::Isub, "{text}");
        let lanes_def = func.dfg.value_def(lanes).inst().expect("an instruction");
        assert_eq!(func.dfg.insts[lanes_def].opcode(), Opcode::Isub, "{text}");
    }
}
