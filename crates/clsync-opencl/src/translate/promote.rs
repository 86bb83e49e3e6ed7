//! Private scalar variables kept in registers, in checked builds.
//!
//! A checked build is unoptimized (`-cl-opt-disable`, so that what is
//! checked is what was written), and clang then gives every local variable
//! of the kernel a private `OpVariable` that each use loads and each
//! assignment stores: most of a checked kernel's accesses were to these,
//! each a runtime call that could find nothing but an unwritten byte
//! (private memory is the work-item's own: no race, and a variable is
//! always in bounds). A variable of a scalar, pointer or vector type whose
//! pointer is only loaded from and stored to, as a whole, is instead a
//! Cranelift variable per leaf, with a second one per leaf for its shadow (see
//! `shadow`): unwritten, it holds zero and is poisoned, as its memory
//! would be; a store sets the value and the stored value's shadow; a load
//! reads both. So `int x; if (c) x = 1; out[i] = x;` still reports the
//! `Uninitialized value` where `c` is false, with no runtime call for `x`.
//!
//! On coroutines a variable live across a barrier stays on the work-item's
//! own stack; a work-item loop keeps each promoted variable, value and
//! shadow, in the work-item's frame at every barrier and brings it back
//! where the work-item resumes (`continuation`).

use std::collections::{HashMap, HashSet};

use clsync_spirv::spirv::{Op, StorageClass, Word};
use clsync_spirv::{Function, Module, Operand, Type};
use cranelift_codegen::ir::{types, InstBuilder, Type as ClType};
use cranelift_frontend::Variable;

use super::function::Fx;
use crate::CompileError;

/// A promoted variable: per leaf, its type, the variable holding its value
/// and the one holding its shadow.
pub(crate) type Promoted = Vec<(ClType, Variable, Variable)>;

/// The function-scope variables of `f` that can live in registers: of a
/// scalar, pointer or vector type without `half` leaves, their pointer used
/// only as the pointer of whole loads and stores (and of lifetime markers).
pub(crate) fn promotable(m: &Module, f: &Function) -> HashSet<Word> {
    let mut candidates: HashSet<Word> = HashSet::new();
    for b in &f.blocks {
        for (inst, _) in &b.instructions {
            if inst.class.opcode != Op::Variable {
                continue;
            }
            let function_scope = matches!(
                inst.operands.first(),
                Some(Operand::StorageClass(StorageClass::Function))
            );
            let (Some(id), Some(ptr)) = (inst.result_id, inst.result_type) else {
                continue;
            };
            if function_scope && promotable_type(m, ptr) {
                candidates.insert(id);
            }
        }
    }
    for b in &f.blocks {
        for (inst, _) in &b.instructions {
            let op = inst.class.opcode;
            for (n, o) in inst.operands.iter().enumerate() {
                let Operand::IdRef(w) = o else { continue };
                if !candidates.contains(w) {
                    continue;
                }
                let as_pointer = n == 0
                    && matches!(
                        op,
                        Op::Load | Op::Store | Op::LifetimeStart | Op::LifetimeStop
                    );
                // Debug records name variables without using them.
                if !as_pointer && op != Op::ExtInst {
                    candidates.remove(w);
                }
            }
        }
    }
    candidates
}

/// Whether pointer type `ptr` points at a scalar, a pointer or a vector of
/// scalars, none of them a `half`.
fn promotable_type(m: &Module, ptr: Word) -> bool {
    let Ok(Type::Pointer { pointee, .. }) = m.ty(ptr) else {
        return false;
    };
    let scalar = |t: &Type| {
        matches!(
            t,
            Type::Int(_) | Type::Float(_) | Type::Bool | Type::Pointer { .. }
        )
    };
    let ok = match m.ty(*pointee) {
        Ok(Type::Vector { elem, .. }) => m.ty(*elem).is_ok_and(scalar),
        Ok(t) => scalar(t),
        Err(_) => false,
    };
    ok && m
        .leaves(*pointee)
        .is_ok_and(|l| l.iter().all(|leaf| !super::half::is_half(m, leaf.ty)))
}

impl Fx<'_, '_> {
    /// The variable `id` made a promoted one: its leaves zero and poisoned,
    /// or its initializer's values (`init`, with their shadows).
    pub(super) fn promote(
        &mut self,
        id: Word,
        pointee: Word,
        init: Option<(Vec<cranelift_codegen::ir::Value>, super::shadow::Lanes)>,
    ) -> Result<(), CompileError> {
        let mut vars = Vec::new();
        for (k, leaf) in self.m.leaves(pointee)?.iter().enumerate() {
            let t = super::cl_type(self.m, leaf.ty)?;
            let v = self.b.declare_var(t);
            let sh = self.b.declare_var(types::I8);
            let (x, poisoned) = match &init {
                Some((vals, lanes)) => (
                    vals[k],
                    lanes
                        .get(k)
                        .copied()
                        .flatten()
                        .unwrap_or_else(|| self.b.ins().iconst(types::I8, 0)),
                ),
                None => (self.zero(t), self.b.ins().iconst(types::I8, 1)),
            };
            self.b.def_var(v, x);
            self.b.def_var(sh, poisoned);
            vars.push((t, v, sh));
        }
        self.promoted.insert(id, vars);
        Ok(())
    }

    /// A load of promoted variable `p`: its values, and their shadows for
    /// the `def` that follows.
    pub(super) fn load_promoted(&mut self, p: Word) -> Vec<cranelift_codegen::ir::Value> {
        let vars = self.promoted[&p].clone();
        let mut lanes = Vec::with_capacity(vars.len());
        let vals = vars
            .iter()
            .map(|(_, v, sh)| {
                lanes.push(Some(self.b.use_var(*sh)));
                self.b.use_var(*v)
            })
            .collect();
        self.pending = Some(lanes);
        vals
    }

    /// A store of `v` (shadows `lanes`) to promoted variable `p`.
    pub(super) fn store_promoted(
        &mut self,
        p: Word,
        v: &[cranelift_codegen::ir::Value],
        lanes: &[Option<cranelift_codegen::ir::Value>],
    ) {
        let vars = self.promoted[&p].clone();
        for (k, ((_, var, sh), x)) in vars.iter().zip(v).enumerate() {
            self.b.def_var(*var, *x);
            let s = lanes
                .get(k)
                .copied()
                .flatten()
                .unwrap_or_else(|| self.b.ins().iconst(types::I8, 0));
            self.b.def_var(*sh, s);
        }
    }
}

/// The promoted variables of a function being translated, by id.
pub(crate) type PromotedMap = HashMap<Word, Promoted>;
