//! Where the module's variables live: a slot of the context's table for
//! each program-scope, `local` and function-scope variable, and the
//! layout of the group's and the work-item's blocks of them.

use std::collections::HashMap;

use clsync_spirv::spirv::{StorageClass, Word};
use clsync_spirv::{Module, Type};

use super::byval;
use crate::exec::ctx::{SlotInfo, OFFSET_BITS};
use crate::CompileError;

/// Where each module-scope and function-scope variable lives.
#[derive(Debug, Default, Clone)]
pub struct SlotPlan {
    /// Program-scope variables in global or constant memory: (id, slot).
    pub program: Vec<(Word, u64)>,
    /// `local` variables declared in kernels: (id, slot, byte offset in
    /// the group's block of them).
    pub workgroup: Vec<(Word, u64, u64)>,
    /// Bytes of the group's block of `local` variables.
    pub workgroup_bytes: u64,
    /// Function-scope variables: (id, slot, byte offset in the work-item's
    /// private block).
    pub private: Vec<(Word, u64, u64)>,
    /// Bytes of the private block.
    pub private_bytes: u64,
    /// Every static slot's description; kernel arguments' slots follow.
    pub infos: Vec<SlotInfo>,
    /// Slot of each variable id.
    pub of: HashMap<Word, u64>,
}

/// Assigns slots to the module's variables.
pub(super) fn plan_slots(m: &Module) -> Result<SlotPlan, CompileError> {
    let mut p = SlotPlan {
        infos: vec![SlotInfo {
            space: "null",
            name: "NULL".into(),
            access: Default::default(),
            unwritten: false,
            owned: false,
        }],
        ..Default::default()
    };
    for g in &m.globals {
        let space = match g.storage {
            StorageClass::CrossWorkgroup => "global",
            StorageClass::UniformConstant => "constant",
            // llvm-spirv writes LLVM's private constants (the initializer
            // clang emits for a large aggregate that is then copied into a
            // private variable) as module-scope Function variables: one
            // read-only copy for the program, like a constant.
            StorageClass::Function if g.initializer.is_some() => "constant",
            StorageClass::Workgroup => "local",
            StorageClass::Input => continue,
            other => {
                return Err(CompileError::Unsupported(format!(
                    "a module-scope variable `{}` in storage class {other:?}",
                    g.name
                )))
            }
        };
        let slot = p.infos.len() as u64;
        let name = if g.name.is_empty() {
            format!("variable %{}", g.id)
        } else {
            g.name.clone()
        };
        p.infos.push(SlotInfo {
            space,
            name,
            access: Default::default(),
            unwritten: false,
            owned: false,
        });
        p.of.insert(g.id, slot);
        if g.storage == StorageClass::Workgroup {
            let l = m.layout(g.pointee)?;
            let off = p.workgroup_bytes.next_multiple_of(l.align.max(16));
            p.workgroup.push((g.id, slot, off));
            p.workgroup_bytes = off + l.size;
        } else {
            p.program.push((g.id, slot));
        }
    }
    // Function-scope variables, and the by-value parameters a function
    // writes (a private copy each, see `byval`).
    for f in &m.functions {
        let variables = f
            .blocks
            .iter()
            .flat_map(|b| &b.instructions)
            .filter(|(i, _)| i.class.opcode == clsync_spirv::spirv::Op::Variable)
            .map(|(i, _)| {
                let (id, ty) = (i.result_id.unwrap_or(0), i.result_type.unwrap_or(0));
                (id, ty, "a private variable")
            });
        let copies = byval::written(m, f).into_iter().map(|id| {
            let ty = f
                .params
                .iter()
                .find(|(q, _)| *q == id)
                .map_or(0, |(_, t)| *t);
            (id, ty, "a by-value argument")
        });
        for (id, ty, what) in variables.chain(copies) {
            let Type::Pointer { pointee, .. } = m.ty(ty)? else {
                return Err(CompileError::Invalid(format!(
                    "{what} %{id} is not a pointer"
                )));
            };
            let l = m.layout(*pointee)?;
            let slot = p.infos.len() as u64;
            let name = m
                .names
                .get(&id)
                .cloned()
                .unwrap_or_else(|| format!("{what} of `{}`", f.name));
            p.infos.push(SlotInfo {
                space: "private",
                name,
                access: Default::default(),
                unwritten: false,
                owned: false,
            });
            p.of.insert(id, slot);
            let off = p.private_bytes.next_multiple_of(l.align.max(8));
            p.private.push((id, slot, off));
            p.private_bytes = off + l.size;
        }
    }
    if p.infos.len() as u64 >= (1 << (64 - OFFSET_BITS)) / 2 {
        return Err(CompileError::Unsupported(format!(
            "{} variables; clsync addresses at most 32768 memory objects",
            p.infos.len()
        )));
    }
    Ok(p)
}
