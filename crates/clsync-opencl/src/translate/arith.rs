//! Arithmetic, logic, comparisons, selection and conversions, lane by lane.
//!
//! Where OpenCL C leaves a result undefined but a machine instruction would
//! trap (integer division by zero, `INT_MIN / -1`, a float converted to an
//! integer it does not fit), the code computes *some* value instead: the
//! specification allows any, and a trap would kill the process.

use clsync_spirv::spirv::{Decoration, FPRoundingMode, Op};
use clsync_spirv::{Instruction, Operand, Type};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    types, InstBuilder, StackSlotData, StackSlotKind, Type as ClType, Value,
};

use super::flat_types;
use super::function::Fx;
use crate::CompileError;

impl Fx<'_, '_> {
    /// The Cranelift types of the result's leaves.
    pub fn result_types(&self, inst: &Instruction) -> Result<Vec<ClType>, CompileError> {
        flat_types(self.m, inst.result_type.unwrap_or(0))
    }

    fn operands(&mut self, inst: &Instruction) -> Result<Vec<Vec<Value>>, CompileError> {
        let mut out = Vec::new();
        for k in 0..inst.operands.len() {
            out.push(self.get(self.id(inst, k)?)?);
        }
        Ok(out)
    }

    /// A value broadcast to `n` lanes if it is a scalar.
    pub fn widen(v: Vec<Value>, n: usize) -> Vec<Value> {
        if v.len() == 1 && n > 1 {
            vec![v[0]; n]
        } else {
            v
        }
    }

    fn decorated(&self, inst: &Instruction, d: Decoration) -> Option<&[Operand]> {
        self.m
            .decorations
            .get(&inst.result_id.unwrap_or(0))
            .and_then(|x| x.get(d))
    }

    /// `a / b` and `a % b` with no trap: a zero divisor (and, signed,
    /// `MIN / -1`) divides by one instead.
    fn safe_divisor(&mut self, a: Value, d: Value, signed: bool) -> Value {
        let t = self.b.func.dfg.value_type(d);
        let one = self.b.ins().iconst(t, 1);
        let zero = self.b.ins().icmp_imm_s(IntCC::Equal, d, 0);
        let bad = if signed {
            let min = match t {
                types::I8 => i8::MIN as i64,
                types::I16 => i16::MIN as i64,
                types::I32 => i32::MIN as i64,
                _ => i64::MIN,
            };
            let is_min = self.b.ins().icmp_imm_s(IntCC::Equal, a, min);
            let is_m1 = self.b.ins().icmp_imm_s(IntCC::Equal, d, -1);
            let both = self.b.ins().band(is_min, is_m1);
            self.b.ins().bor(zero, both)
        } else {
            zero
        };
        self.b.ins().select(bad, one, d)
    }

    fn int_bin(&mut self, op: Op, a: Value, c: Value) -> Value {
        let b = &mut self.b;
        match op {
            Op::IAdd => b.ins().iadd(a, c),
            Op::ISub => b.ins().isub(a, c),
            Op::IMul => b.ins().imul(a, c),
            Op::BitwiseAnd | Op::LogicalAnd => b.ins().band(a, c),
            Op::BitwiseOr | Op::LogicalOr => b.ins().bor(a, c),
            Op::BitwiseXor | Op::LogicalNotEqual => b.ins().bxor(a, c),
            Op::ShiftLeftLogical => b.ins().ishl(a, c),
            Op::ShiftRightLogical => b.ins().ushr(a, c),
            Op::ShiftRightArithmetic => b.ins().sshr(a, c),
            Op::LogicalEqual => {
                let x = b.ins().bxor(a, c);
                b.ins().bxor_imm_s(x, 1)
            }
            Op::UDiv => {
                let d = self.safe_divisor(a, c, false);
                self.b.ins().udiv(a, d)
            }
            Op::UMod => {
                let d = self.safe_divisor(a, c, false);
                self.b.ins().urem(a, d)
            }
            Op::SDiv => {
                let d = self.safe_divisor(a, c, true);
                self.b.ins().sdiv(a, d)
            }
            Op::SRem => {
                let d = self.safe_divisor(a, c, true);
                self.b.ins().srem(a, d)
            }
            Op::SMod => {
                // The remainder with the divisor's sign.
                let d = self.safe_divisor(a, c, true);
                let r = self.b.ins().srem(a, d);
                let x = self.b.ins().bxor(r, d);
                let differ = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, x, 0);
                let nz = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
                let fix = self.b.ins().band(differ, nz);
                let adj = self.b.ins().iadd(r, d);
                self.b.ins().select(fix, adj, r)
            }
            _ => unreachable!("int_bin called with Op{op:?}"),
        }
    }

    fn float_bin(&mut self, op: Op, a: Value, c: Value) -> Value {
        match op {
            Op::FAdd => self.b.ins().fadd(a, c),
            Op::FSub => self.b.ins().fsub(a, c),
            Op::FMul => self.b.ins().fmul(a, c),
            Op::FDiv => self.b.ins().fdiv(a, c),
            _ => {
                // FRem (C's fmod) and FMod (the divisor's sign).
                let t = self.b.func.dfg.value_type(a);
                let (name, opc) = if t == types::F32 {
                    ("clsync_f32_2", 29)
                } else {
                    ("clsync_f64_2", 29)
                };
                let k = self.b.ins().iconst(types::I32, opc);
                let r = self.helper(name, &[k, a, c])[0];
                if op == Op::FMod {
                    let zero = self.zero(t);
                    let rneg = self.b.ins().fcmp(FloatCC::LessThan, r, zero);
                    let cneg = self.b.ins().fcmp(FloatCC::LessThan, c, zero);
                    let rnz = self.b.ins().fcmp(FloatCC::NotEqual, r, zero);
                    let differ = self.b.ins().bxor(rneg, cneg);
                    let fix = self.b.ins().band(differ, rnz);
                    let adj = self.b.ins().fadd(r, c);
                    self.b.ins().select(fix, adj, r)
                } else {
                    r
                }
            }
        }
    }

    fn int_cc(op: Op) -> Option<IntCC> {
        Some(match op {
            Op::IEqual => IntCC::Equal,
            Op::INotEqual => IntCC::NotEqual,
            Op::UGreaterThan => IntCC::UnsignedGreaterThan,
            Op::SGreaterThan => IntCC::SignedGreaterThan,
            Op::UGreaterThanEqual => IntCC::UnsignedGreaterThanOrEqual,
            Op::SGreaterThanEqual => IntCC::SignedGreaterThanOrEqual,
            Op::ULessThan => IntCC::UnsignedLessThan,
            Op::SLessThan => IntCC::SignedLessThan,
            Op::ULessThanEqual => IntCC::UnsignedLessThanOrEqual,
            Op::SLessThanEqual => IntCC::SignedLessThanOrEqual,
            _ => return None,
        })
    }

    fn float_cc(op: Op) -> Option<FloatCC> {
        Some(match op {
            Op::FOrdEqual => FloatCC::Equal,
            Op::FOrdNotEqual | Op::LessOrGreater => FloatCC::OrderedNotEqual,
            Op::FOrdLessThan => FloatCC::LessThan,
            Op::FOrdGreaterThan => FloatCC::GreaterThan,
            Op::FOrdLessThanEqual => FloatCC::LessThanOrEqual,
            Op::FOrdGreaterThanEqual => FloatCC::GreaterThanOrEqual,
            Op::FUnordEqual => FloatCC::UnorderedOrEqual,
            Op::FUnordNotEqual => FloatCC::NotEqual,
            Op::FUnordLessThan => FloatCC::UnorderedOrLessThan,
            Op::FUnordGreaterThan => FloatCC::UnorderedOrGreaterThan,
            Op::FUnordLessThanEqual => FloatCC::UnorderedOrLessThanOrEqual,
            Op::FUnordGreaterThanEqual => FloatCC::UnorderedOrGreaterThanOrEqual,
            Op::Ordered => FloatCC::Ordered,
            Op::Unordered => FloatCC::Unordered,
            _ => return None,
        })
    }

    /// Translates `inst` if it is arithmetic; false if it is not.
    pub fn arith(&mut self, inst: &Instruction) -> Result<bool, CompileError> {
        let op = inst.class.opcode;
        let bin_int = matches!(
            op,
            Op::IAdd
                | Op::ISub
                | Op::IMul
                | Op::UDiv
                | Op::SDiv
                | Op::UMod
                | Op::SRem
                | Op::SMod
                | Op::BitwiseAnd
                | Op::BitwiseOr
                | Op::BitwiseXor
                | Op::ShiftLeftLogical
                | Op::ShiftRightLogical
                | Op::ShiftRightArithmetic
                | Op::LogicalAnd
                | Op::LogicalOr
                | Op::LogicalEqual
                | Op::LogicalNotEqual
        );
        let bin_float = matches!(
            op,
            Op::FAdd | Op::FSub | Op::FMul | Op::FDiv | Op::FRem | Op::FMod
        );
        if bin_int || bin_float {
            let ops = self.operands(inst)?;
            let n = ops[0].len().max(ops[1].len());
            let (a, c) = (
                Self::widen(ops[0].clone(), n),
                Self::widen(ops[1].clone(), n),
            );
            let mut out = Vec::with_capacity(n);
            for i in 0..n {
                out.push(if bin_int {
                    self.int_bin(op, a[i], c[i])
                } else {
                    self.float_bin(op, a[i], c[i])
                });
            }
            self.def(inst, out);
            return Ok(true);
        }
        if let Some(cc) = Self::int_cc(op) {
            let ops = self.operands(inst)?;
            let out = (0..ops[0].len())
                .map(|i| self.b.ins().icmp(cc, ops[0][i], ops[1][i]))
                .collect();
            self.def(inst, out);
            return Ok(true);
        }
        if let Some(cc) = Self::float_cc(op) {
            let ops = self.operands(inst)?;
            let out = (0..ops[0].len())
                .map(|i| self.b.ins().fcmp(cc, ops[0][i], ops[1][i]))
                .collect();
            self.def(inst, out);
            return Ok(true);
        }
        if inst.result_type.is_none() {
            return Ok(false);
        }
        let ts = self.result_types(inst)?;
        let out: Vec<Value> = match op {
            Op::SNegate => self.map1(inst, |b, _, x| b.ins().ineg(x))?,
            Op::FNegate => self.map1(inst, |b, _, x| b.ins().fneg(x))?,
            Op::Not => self.map1(inst, |b, _, x| b.ins().bnot(x))?,
            Op::BitCount => self.map1(inst, |b, _, x| b.ins().popcnt(x))?,
            Op::BitReverse => self.map1(inst, |b, _, x| b.ins().bitrev(x))?,
            Op::LogicalNot => self.map1(inst, |b, _, x| b.ins().bxor_imm_s(x, 1))?,
            Op::IsNan => self.map1(inst, |b, _, x| b.ins().fcmp(FloatCC::Unordered, x, x))?,
            Op::IsInf | Op::IsFinite | Op::IsNormal => self.map1(inst, |b, _, x| {
                let t = b.func.dfg.value_type(x);
                let a = b.ins().fabs(x);
                let (inf, min) = if t == types::F32 {
                    (
                        b.ins().f32const(f32::INFINITY),
                        b.ins().f32const(f32::MIN_POSITIVE),
                    )
                } else {
                    (
                        b.ins().f64const(f64::INFINITY),
                        b.ins().f64const(f64::MIN_POSITIVE),
                    )
                };
                match op {
                    Op::IsInf => b.ins().fcmp(FloatCC::Equal, a, inf),
                    Op::IsFinite => b.ins().fcmp(FloatCC::LessThan, a, inf),
                    _ => {
                        let lo = b.ins().fcmp(FloatCC::GreaterThanOrEqual, a, min);
                        let hi = b.ins().fcmp(FloatCC::LessThan, a, inf);
                        b.ins().band(lo, hi)
                    }
                }
            })?,
            Op::SignBitSet => self.map1(inst, |b, _, x| {
                let t = b.func.dfg.value_type(x);
                let it = if t == types::F32 {
                    types::I32
                } else {
                    types::I64
                };
                let i = b
                    .ins()
                    .bitcast(it, cranelift_codegen::ir::MemFlagsData::new(), x);
                b.ins().icmp_imm_s(IntCC::SignedLessThan, i, 0)
            })?,
            Op::Any | Op::All => {
                let v = self.get(self.id(inst, 0)?)?;
                let mut r = v[0];
                for x in &v[1..] {
                    r = if op == Op::Any {
                        self.b.ins().bor(r, *x)
                    } else {
                        self.b.ins().band(r, *x)
                    };
                }
                vec![r]
            }
            Op::Dot => {
                let ops = self.operands(inst)?;
                let mut s = self.b.ins().fmul(ops[0][0], ops[1][0]);
                for (x, y) in ops[0].iter().zip(&ops[1]).skip(1) {
                    let p = self.b.ins().fmul(*x, *y);
                    s = self.b.ins().fadd(s, p);
                }
                vec![s]
            }
            Op::Select => {
                let ops = self.operands(inst)?;
                let n = ops[1].len();
                let c = Self::widen(ops[0].clone(), n);
                (0..n)
                    .map(|i| self.b.ins().select(c[i], ops[1][i], ops[2][i]))
                    .collect()
            }
            Op::UConvert | Op::SConvert | Op::SatConvertSToU | Op::SatConvertUToS => {
                let sat = self
                    .decorated(inst, Decoration::SaturatedConversion)
                    .is_some()
                    || matches!(op, Op::SatConvertSToU | Op::SatConvertUToS);
                let signed_src = matches!(op, Op::SConvert | Op::SatConvertSToU);
                let signed_dst = matches!(op, Op::SConvert | Op::SatConvertUToS);
                let v = self.get(self.id(inst, 0)?)?;
                v.iter()
                    .zip(&ts)
                    .map(|(x, t)| self.int_convert(*x, *t, signed_src, signed_dst, sat))
                    .collect()
            }
            Op::FConvert => {
                let v = self.get(self.id(inst, 0)?)?;
                let mut out = Vec::new();
                let to_half = super::half::is_half(
                    self.m,
                    match self.m.ty(inst.result_type.unwrap_or(0))? {
                        Type::Vector { elem, .. } => *elem,
                        _ => inst.result_type.unwrap_or(0),
                    },
                );
                for (x, t) in v.iter().zip(&ts) {
                    let from = self.b.func.dfg.value_type(*x);
                    out.push(if to_half && from == types::F64 {
                        // Rounded once, from the double (a detour through
                        // float would round twice).
                        let mode = self.rounding(inst).map_or(0, |m| m as i64);
                        let mode = self.b.ins().iconst(types::I32, mode);
                        let h = self.helper("clsync_float_to_half", &[*x, mode])[0];
                        self.half_of_bits(h)
                    } else if from == *t {
                        *x
                    } else if *t == types::F64 {
                        self.b.ins().fpromote(*t, *x)
                    } else {
                        self.b.ins().fdemote(*t, *x)
                    });
                }
                out
            }
            Op::ConvertFToU | Op::ConvertFToS => {
                let signed = op == Op::ConvertFToS;
                let rounding = self.rounding(inst);
                let v = self.get(self.id(inst, 0)?)?;
                let mut out = Vec::new();
                for (x, t) in v.iter().zip(&ts) {
                    let x = match rounding {
                        Some(FPRoundingMode::RTE) => self.b.ins().nearest(*x),
                        Some(FPRoundingMode::RTP) => self.b.ins().ceil(*x),
                        Some(FPRoundingMode::RTN) => self.b.ins().floor(*x),
                        _ => *x,
                    };
                    out.push(self.float_to_int(x, *t, signed));
                }
                out
            }
            Op::ConvertSToF | Op::ConvertUToF => {
                let signed = op == Op::ConvertSToF;
                let v = self.get(self.id(inst, 0)?)?;
                let mut out = Vec::new();
                for (x, t) in v.iter().zip(&ts) {
                    let from = self.b.func.dfg.value_type(*x);
                    let x = if from.bits() < 32 {
                        if signed {
                            self.b.ins().sextend(types::I32, *x)
                        } else {
                            self.b.ins().uextend(types::I32, *x)
                        }
                    } else {
                        *x
                    };
                    out.push(if signed {
                        self.b.ins().fcvt_from_sint(*t, x)
                    } else {
                        self.b.ins().fcvt_from_uint(*t, x)
                    });
                }
                out
            }
            Op::ConvertPtrToU | Op::ConvertUToPtr => {
                let v = self.get1(self.id(inst, 0)?)?;
                vec![self.int_convert(v, ts[0], false, false, false)]
            }
            Op::PtrCastToGeneric | Op::GenericCastToPtr => {
                let from = self.id(inst, 0)?;
                // The same pointer: the same root (`roots`), so that an
                // atomic of OpenCL C 2.0 (whose built-ins take generic
                // pointers) is checked from its object's root.
                if let (false, Some(id)) = (self.s.checked, inst.result_id) {
                    let root = self.roots.get(&from).copied().unwrap_or(from);
                    self.roots.insert(id, root);
                }
                vec![self.get1(from)?]
            }
            Op::GenericCastToPtrExplicit => {
                let p = self.get1(self.id(inst, 0)?)?;
                let storage = match inst.operands.get(1) {
                    Some(Operand::StorageClass(s)) => *s as i64,
                    _ => 8,
                };
                let s = self.b.ins().iconst(types::I32, storage);
                let ctx = self.ctx;
                vec![self.helper("clsync_cast_space", &[ctx, p, s])[0]]
            }
            Op::Bitcast => self.bitcast(inst)?,
            _ => return Ok(false),
        };
        self.def(inst, out);
        Ok(true)
    }

    pub(super) fn rounding(&self, inst: &Instruction) -> Option<FPRoundingMode> {
        match self.decorated(inst, Decoration::FPRoundingMode)?.first() {
            Some(Operand::FPRoundingMode(m)) => Some(*m),
            _ => None,
        }
    }

    fn map1(
        &mut self,
        inst: &Instruction,
        f: impl Fn(&mut cranelift_frontend::FunctionBuilder<'_>, usize, Value) -> Value,
    ) -> Result<Vec<Value>, CompileError> {
        let v = self.get(self.id(inst, 0)?)?;
        Ok(v.iter()
            .enumerate()
            .map(|(i, x)| f(&mut self.b, i, *x))
            .collect())
    }

    /// An integer converted to type `t`: truncated, extended, or clamped.
    pub fn int_convert(
        &mut self,
        x: Value,
        t: ClType,
        signed_src: bool,
        signed_dst: bool,
        sat: bool,
    ) -> Value {
        let from = self.b.func.dfg.value_type(x);
        if sat {
            // Clamp in 64 bits, then narrow.
            let wide = if from.bits() == 64 {
                x
            } else if signed_src {
                self.b.ins().sextend(types::I64, x)
            } else {
                self.b.ins().uextend(types::I64, x)
            };
            let bits = t.bits();
            let (lo, hi): (i64, i64) = if signed_dst {
                (
                    -(1i64 << (bits - 1).min(63)),
                    if bits >= 64 {
                        i64::MAX
                    } else {
                        (1i64 << (bits - 1)) - 1
                    },
                )
            } else {
                (
                    0,
                    if bits >= 64 {
                        -1
                    } else {
                        ((1u64 << bits) - 1) as i64
                    },
                )
            };
            let mut v = wide;
            if signed_src {
                if !signed_dst || bits < 64 {
                    let l = self.b.ins().iconst(types::I64, lo);
                    v = self.b.ins().smax(v, l);
                }
                if bits < 64 {
                    let h = self.b.ins().iconst(types::I64, hi);
                    v = self.b.ins().smin(v, h);
                }
            } else if signed_dst || bits < 64 {
                let h = self.b.ins().iconst(types::I64, hi);
                v = self.b.ins().umin(v, h);
            }
            return if t == types::I64 {
                v
            } else {
                self.b.ins().ireduce(t, v)
            };
        }
        match from.bits().cmp(&t.bits()) {
            std::cmp::Ordering::Equal => x,
            std::cmp::Ordering::Greater => self.b.ins().ireduce(t, x),
            std::cmp::Ordering::Less if signed_src => self.b.ins().sextend(t, x),
            std::cmp::Ordering::Less => self.b.ins().uextend(t, x),
        }
    }

    /// A float converted to an integer type, saturating (NaN is 0): the
    /// specification leaves out-of-range conversions undefined without
    /// `_sat`, so saturating is one allowed result, and with `_sat` it is
    /// the required one.
    pub fn float_to_int(&mut self, x: Value, t: ClType, signed: bool) -> Value {
        let wide = if t.bits() < 32 { types::I32 } else { t };
        let v = if signed {
            self.b.ins().fcvt_to_sint_sat(wide, x)
        } else {
            self.b.ins().fcvt_to_uint_sat(wide, x)
        };
        if wide == t {
            return v;
        }
        let bits = t.bits();
        let (lo, hi) = if signed {
            (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
        } else {
            (0, (1i64 << bits) - 1)
        };
        let l = self.b.ins().iconst(types::I32, lo);
        let h = self.b.ins().iconst(types::I32, hi);
        let v = if signed { self.b.ins().smax(v, l) } else { v };
        let v = if signed {
            self.b.ins().smin(v, h)
        } else {
            self.b.ins().umin(v, h)
        };
        self.b.ins().ireduce(t, v)
    }

    /// `as_type`: the same bits as another type; through the stack when
    /// the lanes differ (`as_char4` of an `int`).
    fn bitcast(&mut self, inst: &Instruction) -> Result<Vec<Value>, CompileError> {
        let src = self.id(inst, 0)?;
        let from_ty = self.type_of(src)?;
        let to = inst.result_type.unwrap_or(0);
        // Halves as their 16-bit encodings on both sides (see `half`).
        let mut v = self.get(src)?;
        for (x, leaf) in v.iter_mut().zip(self.m.leaves(from_ty)?) {
            if super::half::is_half(self.m, leaf.ty) {
                *x = self.half_bits(*x);
            }
        }
        let halves: Vec<bool> = self
            .m
            .leaves(to)?
            .iter()
            .map(|l| super::half::is_half(self.m, l.ty))
            .collect();
        let out = self.bits_as(from_ty, to, &v, &halves)?;
        Ok(out
            .into_iter()
            .zip(halves)
            .map(|(x, h)| if h { self.half_of_bits(x) } else { x })
            .collect())
    }

    /// `v` (of type `from_ty`, halves as their encodings) as the lanes of
    /// type `to` (halves, flagged in `halves`, as encodings).
    fn bits_as(
        &mut self,
        from_ty: u32,
        to: u32,
        v: &[Value],
        halves: &[bool],
    ) -> Result<Vec<Value>, CompileError> {
        let ts: Vec<_> = flat_types(self.m, to)?
            .into_iter()
            .zip(halves)
            .map(|(t, h)| if *h { types::I16 } else { t })
            .collect();
        if v.len() == ts.len() {
            return Ok(v
                .iter()
                .zip(&ts)
                .map(|(x, t)| {
                    let from = self.b.func.dfg.value_type(*x);
                    if from == *t {
                        *x
                    } else {
                        self.b
                            .ins()
                            .bitcast(*t, cranelift_codegen::ir::MemFlagsData::new(), *x)
                    }
                })
                .collect());
        }
        let size = self.m.layout(from_ty)?.size.max(self.m.layout(to)?.size);
        let ss = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            size as u32,
            4,
        ));
        for (x, leaf) in v.iter().zip(self.m.leaves(from_ty)?) {
            self.b
                .ins()
                .stack_store(types::I64, *x, ss, leaf.offset as i32);
        }
        let mut out = Vec::new();
        for (leaf, t) in self.m.leaves(to)?.iter().zip(ts) {
            out.push(
                self.b
                    .ins()
                    .stack_load(types::I64, t, ss, leaf.offset as i32),
            );
        }
        Ok(out)
    }

    /// Whether type `ty` is a float type (for the ext instructions).
    pub fn is_float(&self, ty: u32) -> bool {
        matches!(self.m.ty(ty), Ok(Type::Float(_)))
    }
}
