//! Parameters passed by value (`FuncParamAttr ByVal`).
//!
//! A struct or union argument reaches its function as a pointer decorated
//! `ByVal`: the memory belongs to the callee, which may change it, and the
//! caller's object must not see the change (clang passes the caller's own
//! variable, relying on the callee's copy). Where a function may write
//! through such a parameter, it gets a private slot of the parameter's size
//! and copies the argument there on entry; a parameter that is only read
//! keeps the caller's memory, so the common case costs nothing.

use clsync_spirv::spirv::{Decoration, FunctionParameterAttribute, Op, Word};
use clsync_spirv::{Function, Module, Operand};
use cranelift_codegen::ir::{types, InstBuilder};

use super::function::Fx;
use crate::exec::ctx::OFFSET_BITS;
use crate::CompileError;

/// Whether parameter `id` is decorated `FuncParamAttr ByVal`.
pub(crate) fn is_byval(m: &Module, id: Word) -> bool {
    m.decorations.get(&id).is_some_and(|d| {
        d.list.iter().any(|(k, o)| {
            *k == Decoration::FuncParamAttr
                && matches!(
                    o.first(),
                    Some(Operand::FunctionParameterAttribute(
                        FunctionParameterAttribute::ByVal
                    ))
                )
        })
    })
}

/// The by-value parameters of `f` that it may write through: a store, a
/// copy, an atomic or a call reached from the parameter through address
/// arithmetic and casts (a call may write through what it is given).
pub(crate) fn written(m: &Module, f: &Function) -> Vec<Word> {
    let mut out = Vec::new();
    for (p, _) in &f.params {
        if !is_byval(m, *p) {
            continue;
        }
        // The ids derived from `p`, grown to a fixed point (blocks may be
        // in any order).
        let mut derived = std::collections::HashSet::from([*p]);
        let mut writes = false;
        loop {
            let before = derived.len();
            for b in &f.blocks {
                for (inst, _) in &b.instructions {
                    let uses = |k: usize| matches!(inst.operands.get(k), Some(Operand::IdRef(r)) if derived.contains(r));
                    let any_use = (0..inst.operands.len()).any(uses);
                    if !any_use {
                        continue;
                    }
                    match inst.class.opcode {
                        Op::AccessChain
                        | Op::InBoundsAccessChain
                        | Op::PtrAccessChain
                        | Op::InBoundsPtrAccessChain
                        | Op::Bitcast
                        | Op::PtrCastToGeneric
                        | Op::GenericCastToPtr
                        | Op::Phi
                        | Op::Select
                        | Op::CopyObject => {
                            if let Some(r) = inst.result_id {
                                derived.insert(r);
                            }
                        }
                        Op::Store | Op::CopyMemory | Op::CopyMemorySized => writes |= uses(0),
                        Op::Load | Op::ConvertPtrToU | Op::PtrEqual | Op::PtrNotEqual => {}
                        // Passed on as a by-value argument: the callee
                        // copies it if it writes it (the kernel's entry
                        // wrapper passes its arguments so).
                        Op::FunctionCall if passes_byval(m, inst, &derived) => {}
                        // Atomics, calls, anything else: taken as a write.
                        _ => writes = true,
                    }
                }
            }
            if writes || derived.len() == before {
                break;
            }
        }
        if writes {
            out.push(*p);
        }
    }
    out
}

/// Whether call `inst` passes the ids of `derived` only as by-value
/// arguments of its callee.
fn passes_byval(
    m: &Module,
    inst: &clsync_spirv::Instruction,
    derived: &std::collections::HashSet<Word>,
) -> bool {
    let Some(Operand::IdRef(callee)) = inst.operands.first() else {
        return false;
    };
    let Some(g) = m.function(*callee) else {
        return false;
    };
    inst.operands[1..].iter().enumerate().all(|(k, o)| match o {
        Operand::IdRef(r) if derived.contains(r) => {
            g.params.get(k).is_some_and(|(p, _)| is_byval(m, *p))
        }
        _ => true,
    })
}

impl Fx<'_, '_> {
    /// On entry to `f`: each by-value parameter that `f` may write is
    /// copied into its private slot, and the parameter stands for the copy
    /// from here on.
    pub(super) fn copy_byval_params(&mut self, f: &Function) -> Result<(), CompileError> {
        for (id, _) in &f.params {
            let Some(&slot) = self.s.plan.of.get(id) else {
                continue;
            };
            let (ty, _) = self.pointee(*id)?;
            let size = self.m.layout(ty)?.size as i64;
            let src = self.get1(*id)?;
            let dst = self
                .b
                .ins()
                .iconst(types::I64, (slot << OFFSET_BITS) as i64);
            let site = self.site();
            let args = [
                self.ctx,
                dst,
                src,
                self.b.ins().iconst(types::I64, size),
                self.b.ins().iconst(types::I32, site),
                self.b.ins().iconst(types::I32, -1),
            ];
            self.helper("clsync_memcpy", &args);
            self.check_status();
            self.vals.insert(*id, vec![dst]);
        }
        Ok(())
    }
}
