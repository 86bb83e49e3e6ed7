//! `half` arithmetic (cl_khr_fp16, SPIR-V's `Float16`).
//!
//! The code holds a `half` value as the `float` of the same value: every
//! half is a float, so loads convert exactly, and comparisons, conversions
//! to other types and function calls need nothing more. Each instruction
//! whose result is a half rounds it to half precision (to nearest even):
//! for one addition, subtraction, multiplication, division or square root,
//! computing in float and rounding once more is correctly rounded, since a
//! float's 24 bits are at least twice a half's 11 plus two. Memory holds
//! the 16-bit encoding: stores convert, and so does a bitcast to or from
//! the bits (`as_short`, `as_half`).

use std::collections::HashMap;

use clsync_spirv::spirv::{Op, Word};
use clsync_spirv::{Instruction, Module, Type};
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, Module as _};

use super::function::Fx;

/// Whether `ty` is `half`.
pub(crate) fn is_half(m: &Module, ty: Word) -> bool {
    matches!(m.ty(ty), Ok(Type::Float(16)))
}

/// A `half`'s bits (an `i16` or wider integer) as the float the code holds.
pub(crate) fn from_bits(
    b: &mut FunctionBuilder<'_>,
    jit: &mut JITModule,
    helpers: &HashMap<&'static str, FuncId>,
    bits: Value,
) -> Value {
    let w = match b.func.dfg.value_type(bits) {
        types::I32 => bits,
        types::I64 => b.ins().ireduce(types::I32, bits),
        _ => b.ins().uextend(types::I32, bits),
    };
    let f = jit.declare_func_in_func(helpers["clsync_half_to_float"], b.func);
    let call = b.ins().call(f, &[w]);
    b.inst_results(call)[0]
}

/// Whether `op` only moves values that are halves already (no rounding
/// needed): loads (exact), the structural operations, selects, copies,
/// calls (the callee rounded what it returns) and bitcasts (made from
/// the encoding).
fn moves_values(op: Op) -> bool {
    matches!(
        op,
        Op::Load
            | Op::CompositeExtract
            | Op::CompositeInsert
            | Op::CompositeConstruct
            | Op::VectorShuffle
            | Op::VectorExtractDynamic
            | Op::VectorInsertDynamic
            | Op::Select
            | Op::CopyObject
            | Op::FunctionCall
            | Op::Bitcast
    )
}

impl Fx<'_, '_> {
    /// `v`, the result of `inst`, with each lane rounded to a half where
    /// the result is a half or a vector of halves that `inst` computed in
    /// float (see the module's docs); unchanged otherwise. Aggregates hold
    /// halves that other instructions made, rounded already.
    pub(super) fn round_half_result(&mut self, inst: &Instruction, v: Vec<Value>) -> Vec<Value> {
        let Some(t) = inst.result_type else { return v };
        if moves_values(inst.class.opcode) {
            return v;
        }
        let half = match self.m.ty(t) {
            Ok(Type::Vector { elem, .. }) => is_half(self.m, *elem),
            _ => is_half(self.m, t),
        };
        if !half {
            return v;
        }
        v.into_iter().map(|x| self.round_half(x, inst)).collect()
    }

    /// `x`, a float, rounded to a half: to nearest even, or as the
    /// instruction's `FPRoundingMode` says (`convert_half_rtz` and the
    /// like; SPIR-V numbers the modes as the helper takes them).
    fn round_half(&mut self, x: Value, inst: &Instruction) -> Value {
        let mode = self.rounding(inst).map_or(0, |m| m as i64);
        let mode = self.b.ins().iconst(types::I32, mode);
        self.helper("clsync_round_half", &[x, mode])[0]
    }

    /// The half at `addr + offset` in memory (its 16-bit encoding), as the
    /// float the code holds.
    pub(super) fn half_at(&mut self, addr: Value, offset: u64) -> Value {
        let h = self
            .b
            .ins()
            .load(types::I16, super::function::mem(), addr, offset as i32);
        self.half_of_bits(h)
    }

    /// The 16-bit encoding of the half held as float `x`.
    pub(super) fn half_bits(&mut self, x: Value) -> Value {
        let wide = self.b.ins().fpromote(types::F64, x);
        let rte = self.b.ins().iconst(types::I32, 0);
        let h = self.helper("clsync_float_to_half", &[wide, rte])[0];
        self.b.ins().ireduce(types::I16, h)
    }

    /// The float of a half's 16-bit encoding `bits`.
    pub(super) fn half_of_bits(&mut self, bits: Value) -> Value {
        from_bits(&mut self.b, self.jit, &self.s.helpers, bits)
    }
}
