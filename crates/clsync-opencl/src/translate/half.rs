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

use clsync_spirv::spirv::Word;
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

impl Fx<'_, '_> {
    /// `x`, a float, rounded to a half: to nearest even, or as the
    /// instruction's `FPRoundingMode` says (`convert_half_rtz` and the
    /// like; SPIR-V numbers the modes as the helper takes them).
    pub(super) fn round_half(&mut self, x: Value, inst: &Instruction) -> Value {
        let mode = self.rounding(inst).map_or(0, |m| m as i64);
        let mode = self.b.ins().iconst(types::I32, mode);
        self.helper("clsync_round_half", &[x, mode])[0]
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
