//! The OpenCL.std extended instructions: the math, integer, common and
//! geometric built-ins, `vloadn`/`vstoren`, `shuffle` and `printf`.
//!
//! Exact operations are inline code; the transcendental functions call the
//! Rust standard library's (correctly rounded or within a few ULP, inside
//! the bounds of the specification's table 7.4.4 for full-profile
//! `float`).

use clsync_spirv::spirv::OpenclStd100Op as X;
use clsync_spirv::{Instruction, Type};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    types, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, Value,
};
use cranelift_frontend::FunctionBuilder;

use super::cl_type;
use super::function::Fx;
use crate::exec::helpers::AccessKind;
use crate::CompileError;

/// A literal operand of an `OpExtInst` (a vector size, a rounding mode),
/// which the reader, not knowing the extended set's grammar, may give as an
/// id.
fn ext_literal(inst: &Instruction, i: usize) -> Result<u64, CompileError> {
    match inst.operands.get(i) {
        Some(clsync_spirv::Operand::IdRef(w)) => Ok(*w as u64),
        Some(clsync_spirv::Operand::LiteralBit32(w)) => Ok(*w as u64),
        Some(clsync_spirv::Operand::LiteralExtInstInteger(w)) => Ok(*w as u64),
        o => Err(CompileError::Invalid(format!(
            "OpExtInst: operand {i} is {o:?}, not a literal"
        ))),
    }
}

impl Fx<'_, '_> {
    fn args(&mut self, inst: &Instruction) -> Result<Vec<Vec<Value>>, CompileError> {
        let mut out = Vec::new();
        for k in 2..inst.operands.len() {
            out.push(self.get(self.id(inst, k)?)?);
        }
        Ok(out)
    }

    /// Translates an `OpExtInst`.
    pub fn ext_inst(&mut self, inst: &Instruction) -> Result<(), CompileError> {
        let set = self.id(inst, 0)?;
        let set_name = self.m.ext_sets.get(&set).cloned().unwrap_or_default();
        if set_name != "OpenCL.std" {
            return Err(CompileError::Unsupported(format!(
                "extended instruction set `{set_name}`"
            )));
        }
        let n = self.lit(inst, 1)? as u32;
        let op = X::from_u32(n)
            .ok_or_else(|| CompileError::Unsupported(format!("OpenCL.std instruction {n}")))?;
        let rty = inst.result_type.unwrap_or(0);
        let elem = match self.m.ty(rty)? {
            Type::Vector { elem, .. } => *elem,
            _ => rty,
        };
        let float = self.is_float(elem);
        match op {
            X::printf => return self.printf(inst),
            X::prefetch => return Ok(()),
            X::vloadn => {
                // Operand 4, the vector size, is a literal: not a value.
                let off = self.get1(self.id(inst, 2)?)?;
                let ptr_id = self.id(inst, 3)?;
                let p = self.get1(ptr_id)?;
                let count = ext_literal(inst, 4)?;
                let es = self.m.layout(elem)?.size;
                let et = cl_type(self.m, elem)?;
                let base = self.scaled(p, off, es * count);
                let (_, storage) = self.pointee(ptr_id)?;
                let addr = self.address(base, es * count, AccessKind::Read, storage);
                let mut out = Vec::new();
                let mut lanes = Vec::new();
                let half = super::half::is_half(self.m, elem);
                for k in 0..count {
                    lanes.push(self.note_access(base, addr, k * es, es, None));
                    out.push(if half {
                        self.half_at(addr, k * es)
                    } else {
                        self.b
                            .ins()
                            .load(et, super::function::mem(), addr, (k * es) as i32)
                    });
                }
                if self.s.checked {
                    self.pending = Some(lanes);
                }
                self.def(inst, out);
                return Ok(());
            }
            X::vstoren => {
                let a = self.args(inst)?;
                let (data, off, p) = (a[0].clone(), a[1][0], a[2][0]);
                let dty = self.type_of(self.id(inst, 2)?)?;
                let et = match self.m.ty(dty)? {
                    Type::Vector { elem, .. } => *elem,
                    _ => dty,
                };
                let es = self.m.layout(et)?.size;
                let count = data.len() as u64;
                let base = self.scaled(p, off, es * count);
                let (_, storage) = self.pointee(self.id(inst, 4)?)?;
                let addr = self.address(base, es * count, AccessKind::Write, storage);
                let lanes = if self.s.checked {
                    self.lanes(self.id(inst, 2)?)
                } else {
                    Vec::new()
                };
                let half = super::half::is_half(self.m, et);
                for (k, v) in data.iter().enumerate() {
                    let lane = lanes.get(k).copied().flatten();
                    // A half in memory is its 16-bit encoding.
                    let v = &if half { self.half_bits(*v) } else { *v };
                    self.note_access(base, addr, k as u64 * es, es, Some((*v, lane)));
                    self.b
                        .ins()
                        .store(super::function::mem(), *v, addr, (k as u64 * es) as i32);
                }
                return Ok(());
            }
            X::shuffle | X::shuffle2 => {
                let a = self.args(inst)?;
                let (mask, all) = if op == X::shuffle {
                    (a[1].clone(), a[0].clone())
                } else {
                    let mut all = a[0].clone();
                    all.extend(a[1].iter().copied());
                    (a[2].clone(), all)
                };
                let n = all.len() as i64;
                let mut out = Vec::new();
                for m in mask {
                    let idx = self.b.ins().urem_imm_u(m, n);
                    let mut r = all[0];
                    for (k, lane) in all.iter().enumerate().skip(1) {
                        let is = self.b.ins().icmp_imm_s(IntCC::Equal, idx, k as i64);
                        r = self.b.ins().select(is, *lane, r);
                    }
                    out.push(r);
                }
                self.def(inst, out);
                return Ok(());
            }
            X::vload_half | X::vload_halfn | X::vloada_halfn => return self.load_half(inst, op),
            X::vstore_half
            | X::vstore_half_r
            | X::vstore_halfn
            | X::vstore_halfn_r
            | X::vstorea_halfn
            | X::vstorea_halfn_r => return self.store_half(inst, op),
            X::fract | X::modf | X::sincos | X::frexp | X::remquo | X::lgamma_r => {
                return self.split_math(inst, op);
            }
            X::ilogb => {
                // An int per component of a float or double argument.
                let a = self.args(inst)?;
                let mut out = Vec::new();
                for &x in &a[0] {
                    let v = if self.b.func.dfg.value_type(x) == types::F32 {
                        self.b.ins().fpromote(types::F64, x)
                    } else {
                        x
                    };
                    out.push(self.helper("clsync_ilogb", &[v])[0]);
                }
                self.def(inst, out);
                return Ok(());
            }
            X::select | X::bitselect => {
                // select(a, b, c): c's most significant bit per component of
                // a vector, c != 0 for a scalar; on any element type (a
                // float's bits for bitselect).
                let a = self.args(inst)?;
                let vector = matches!(
                    self.m.ty(self.type_of(self.id(inst, 4)?)?)?,
                    Type::Vector { .. }
                );
                let mut out = Vec::new();
                for ((&x, &y), &c) in a[0].iter().zip(&a[1]).zip(&a[2]) {
                    let t = self.b.func.dfg.value_type(x);
                    let ct = self.b.func.dfg.value_type(c);
                    let int = |b: &mut FunctionBuilder<'_>, v: Value| {
                        if t.is_float() {
                            b.ins().bitcast(t.as_int(), MemFlagsData::new(), v)
                        } else {
                            v
                        }
                    };
                    let r = if op == X::select {
                        let c = if ct.is_float() {
                            int(&mut self.b, c)
                        } else {
                            c
                        };
                        let cc = if vector {
                            IntCC::SignedLessThan
                        } else {
                            IntCC::NotEqual
                        };
                        let pick = self.b.ins().icmp_imm_s(cc, c, 0);
                        self.b.ins().select(pick, y, x)
                    } else {
                        let (xi, yi, ci) = (
                            int(&mut self.b, x),
                            int(&mut self.b, y),
                            int(&mut self.b, c),
                        );
                        let keep = self.b.ins().band_not(xi, ci);
                        let take = self.b.ins().band(yi, ci);
                        let r = self.b.ins().bor(keep, take);
                        if t.is_float() {
                            self.b.ins().bitcast(t, MemFlagsData::new(), r)
                        } else {
                            r
                        }
                    };
                    out.push(r);
                }
                self.def(inst, out);
                return Ok(());
            }
            X::length | X::fast_length | X::distance | X::fast_distance => {
                let a = self.args(inst)?;
                let v = if matches!(op, X::distance | X::fast_distance) {
                    a[0].iter()
                        .zip(&a[1])
                        .map(|(x, y)| self.b.ins().fsub(*x, *y))
                        .collect()
                } else {
                    a[0].clone()
                };
                let w = v.clone();
                let mut s = self.b.ins().fmul(v[0], w[0]);
                for k in 1..v.len() {
                    let p = self.b.ins().fmul(v[k], w[k]);
                    s = self.b.ins().fadd(s, p);
                }
                let r = self.b.ins().sqrt(s);
                self.def(inst, vec![r]);
                return Ok(());
            }
            X::normalize | X::fast_normalize => {
                let a = self.args(inst)?;
                let v = a[0].clone();
                let mut s = self.b.ins().fmul(v[0], v[0]);
                for x in &v[1..] {
                    let p = self.b.ins().fmul(*x, *x);
                    s = self.b.ins().fadd(s, p);
                }
                let l = self.b.ins().sqrt(s);
                let out = v.iter().map(|x| self.b.ins().fdiv(*x, l)).collect();
                self.def(inst, out);
                return Ok(());
            }
            X::cross => {
                let a = self.args(inst)?;
                let (x, y) = (&a[0], &a[1]);
                let mut out = Vec::new();
                for (i, j) in [(1, 2), (2, 0), (0, 1)] {
                    let p = self.b.ins().fmul(x[i], y[j]);
                    let q = self.b.ins().fmul(x[j], y[i]);
                    out.push(self.b.ins().fsub(p, q));
                }
                if x.len() == 4 {
                    let z = self.zero(self.b.func.dfg.value_type(x[0]));
                    out.push(z);
                }
                self.def(inst, out);
                return Ok(());
            }
            _ => {}
        }
        let a = self.args(inst)?;
        let lanes = a.iter().map(Vec::len).max().unwrap_or(1);
        let a: Vec<Vec<Value>> = a.into_iter().map(|v| Self::widen(v, lanes)).collect();
        let mut out = Vec::with_capacity(lanes);
        for k in 0..lanes {
            let x: Vec<Value> = a.iter().map(|v| v[k]).collect();
            out.push(if float {
                self.float_lane(op, &x)?
            } else {
                self.int_lane(op, &x)?
            });
        }
        self.def(inst, out);
        Ok(())
    }

    /// `p + off * size` (vloadn's address).
    fn scaled(&mut self, p: Value, off: Value, size: u64) -> Value {
        let off = if self.b.func.dfg.value_type(off) == types::I64 {
            off
        } else {
            self.b.ins().uextend(types::I64, off)
        };
        let s = self.b.ins().imul_imm_s(off, size as i64);
        self.b.ins().iadd(p, s)
    }

    /// `vload_half`, `vload_halfn`, `vloada_halfn`: `half`s at `p` (element
    /// `offset` of vectors of `n`, aligned vectors of 3 taking 4), as
    /// floats.
    fn load_half(&mut self, inst: &Instruction, op: X) -> Result<(), CompileError> {
        let off = self.get1(self.id(inst, 2)?)?;
        let ptr_id = self.id(inst, 3)?;
        let p = self.get1(ptr_id)?;
        let n = if op == X::vload_half {
            1
        } else {
            ext_literal(inst, 4)?
        };
        let stride = if op == X::vloada_halfn && n == 3 {
            4
        } else {
            n
        };
        let base = self.scaled(p, off, 2 * stride);
        let (_, storage) = self.pointee(ptr_id)?;
        let addr = self.address(base, 2 * n, AccessKind::Read, storage);
        let mut out = Vec::new();
        let mut lanes = Vec::new();
        for k in 0..n {
            lanes.push(self.note_access(base, addr, 2 * k, 2, None));
            out.push(self.half_at(addr, 2 * k));
        }
        if self.s.checked {
            self.pending = Some(lanes);
        }
        self.def(inst, out);
        Ok(())
    }

    /// `vstore_half` and its vector, aligned and rounding forms: `data`
    /// (float or double) as `half`s, rounded to nearest even unless the
    /// `_r` form names a mode.
    fn store_half(&mut self, inst: &Instruction, op: X) -> Result<(), CompileError> {
        let data_id = self.id(inst, 2)?;
        let data = self.get(data_id)?;
        let off = self.get1(self.id(inst, 3)?)?;
        let ptr_id = self.id(inst, 4)?;
        let p = self.get1(ptr_id)?;
        let mode = match inst.operands.get(5) {
            None => 0,
            Some(clsync_spirv::Operand::FPRoundingMode(m)) => *m as i64,
            Some(_) => ext_literal(inst, 5)? as i64,
        };
        let n = data.len() as u64;
        let aligned = matches!(op, X::vstorea_halfn | X::vstorea_halfn_r);
        let stride = if aligned && n == 3 { 4 } else { n };
        let base = self.scaled(p, off, 2 * stride);
        let (_, storage) = self.pointee(ptr_id)?;
        let addr = self.address(base, 2 * n, AccessKind::Write, storage);
        let lanes = if self.s.checked {
            self.lanes(data_id)
        } else {
            Vec::new()
        };
        let m = self.b.ins().iconst(types::I32, mode);
        for (k, x) in data.iter().enumerate() {
            let x = if self.b.func.dfg.value_type(*x) == types::F32 {
                self.b.ins().fpromote(types::F64, *x)
            } else {
                *x
            };
            let h = self.helper("clsync_float_to_half", &[x, m])[0];
            let h = self.b.ins().ireduce(types::I16, h);
            let lane = lanes.get(k).copied().flatten();
            self.note_access(base, addr, 2 * k as u64, 2, Some((h, lane)));
            self.b
                .ins()
                .store(super::function::mem(), h, addr, (2 * k) as i32);
        }
        Ok(())
    }

    /// The functions with a second result stored through their last
    /// argument, a pointer: `fract`, `modf`, `sincos` (a float there),
    /// `frexp`, `remquo` (an int).
    fn split_math(&mut self, inst: &Instruction, op: X) -> Result<(), CompileError> {
        let a = self.args(inst)?;
        let nvals = a.len() - 1;
        let ptr_id = self.id(inst, 2 + nvals)?;
        let ptr = a[nvals][0];
        let t = self.b.func.dfg.value_type(a[0][0]);
        let name = if t == types::F32 {
            "clsync_f32_split"
        } else {
            "clsync_f64_split"
        };
        let slot =
            self.b
                .create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 8, 3));
        let (pty, storage) = self.pointee(ptr_id)?;
        let leaves = self.m.leaves(pty)?;
        let mut out = Vec::new();
        let mut second = Vec::new();
        for (k, &x) in a[0].iter().enumerate() {
            let y = if nvals > 1 { a[1][k] } else { x };
            let code = self.b.ins().iconst(types::I32, op as i64);
            let addr = self.b.ins().stack_addr(types::I64, slot, 0);
            out.push(self.helper(name, &[code, x, y, addr])[0]);
            let o = self.b.ins().stack_load(types::I64, t, slot, 0);
            let lt = match leaves.get(k) {
                Some(l) => cl_type(self.m, l.ty)?,
                None => t,
            };
            second.push(if lt.is_float() {
                o
            } else {
                self.b.ins().fcvt_to_sint_sat(lt, o)
            });
        }
        let lanes = if self.s.checked {
            self.lanes(self.id(inst, 2)?)
        } else {
            Vec::new()
        };
        self.store_value(ptr, None, pty, &second, &lanes, storage)?;
        self.def(inst, out);
        Ok(())
    }

    fn call_math(&mut self, op: X, x: &[Value]) -> Value {
        let t = self.b.func.dfg.value_type(x[0]);
        let name = match (t == types::F32, x.len()) {
            (true, 1) => "clsync_f32_1",
            (true, 2) => "clsync_f32_2",
            (true, _) => "clsync_f32_3",
            (false, 1) => "clsync_f64_1",
            (false, 2) => "clsync_f64_2",
            (false, _) => "clsync_f64_3",
        };
        let k = self.b.ins().iconst(types::I32, op as i64);
        let mut args = vec![k];
        args.extend_from_slice(x);
        self.helper(name, &args)[0]
    }

    fn float_lane(&mut self, op: X, x: &[Value]) -> Result<Value, CompileError> {
        let t = self.b.func.dfg.value_type(x[0]);
        let b = &mut self.b;
        Ok(match op {
            X::fabs => b.ins().fabs(x[0]),
            X::nan => {
                // nan(nancode): a quiet NaN with the code in its payload;
                // `x` is the unsigned code, the result type's width.
                let (quiet, payload) = if t == types::I32 {
                    (0x7fc0_0000i64, 0x003f_ffffi64)
                } else {
                    (0x7ff8_0000_0000_0000, 0x0007_ffff_ffff_ffff)
                };
                let code = b.ins().band_imm_s(x[0], payload);
                let bits = b.ins().bor_imm_s(code, quiet);
                let ft = if t == types::I32 {
                    types::F32
                } else {
                    types::F64
                };
                b.ins().bitcast(ft, MemFlagsData::new(), bits)
            }
            X::sqrt | X::half_sqrt | X::native_sqrt => b.ins().sqrt(x[0]),
            X::floor => b.ins().floor(x[0]),
            X::ceil => b.ins().ceil(x[0]),
            X::trunc => b.ins().trunc(x[0]),
            X::rint => b.ins().nearest(x[0]),
            X::copysign => b.ins().fcopysign(x[0], x[1]),
            X::fma | X::mad => b.ins().fma(x[0], x[1], x[2]),
            X::fmin | X::fmin_common | X::fmax | X::fmax_common => {
                // fmin/fmax: a NaN operand yields the other one.
                let is_min = matches!(op, X::fmin | X::fmin_common);
                let m = if is_min {
                    b.ins().fmin(x[0], x[1])
                } else {
                    b.ins().fmax(x[0], x[1])
                };
                let xn = b.ins().fcmp(FloatCC::Unordered, x[0], x[0]);
                let yn = b.ins().fcmp(FloatCC::Unordered, x[1], x[1]);
                let r = b.ins().select(yn, x[0], m);
                b.ins().select(xn, x[1], r)
            }
            X::fclamp => {
                let lo = b.ins().fmax(x[0], x[1]);
                b.ins().fmin(lo, x[2])
            }
            X::mix => {
                let d = b.ins().fsub(x[1], x[0]);
                b.ins().fma(d, x[2], x[0])
            }
            X::native_divide | X::half_divide => b.ins().fdiv(x[0], x[1]),
            X::native_recip | X::half_recip => {
                let one = if t == types::F32 {
                    b.ins().f32const(1.0)
                } else {
                    b.ins().f64const(1.0)
                };
                b.ins().fdiv(one, x[0])
            }
            X::pown | X::rootn | X::ldexp => {
                let k = self.b.ins().iconst(types::I32, op as i64);
                let n = x[1];
                let n = if self.b.func.dfg.value_type(n) == types::I32 {
                    n
                } else {
                    self.b.ins().ireduce(types::I32, n)
                };
                let v = if t == types::F32 {
                    self.b.ins().fpromote(types::F64, x[0])
                } else {
                    x[0]
                };
                let r = self.helper("clsync_f64_int", &[k, v, n])[0];
                if t == types::F32 {
                    self.b.ins().fdemote(types::F32, r)
                } else {
                    r
                }
            }
            X::acos
            | X::acosh
            | X::acospi
            | X::asin
            | X::asinh
            | X::asinpi
            | X::atan
            | X::atanh
            | X::atanpi
            | X::cbrt
            | X::cos
            | X::cosh
            | X::cospi
            | X::exp
            | X::exp2
            | X::exp10
            | X::expm1
            | X::erf
            | X::erfc
            | X::lgamma
            | X::tgamma
            | X::nextafter
            | X::log
            | X::log2
            | X::log10
            | X::log1p
            | X::logb
            | X::round
            | X::rsqrt
            | X::sin
            | X::sinh
            | X::sinpi
            | X::tan
            | X::tanh
            | X::tanpi
            | X::degrees
            | X::radians
            | X::sign
            | X::half_cos
            | X::half_exp
            | X::half_exp2
            | X::half_exp10
            | X::half_log
            | X::half_log2
            | X::half_log10
            | X::half_rsqrt
            | X::half_sin
            | X::half_tan
            | X::native_cos
            | X::native_exp
            | X::native_exp2
            | X::native_exp10
            | X::native_log
            | X::native_log2
            | X::native_log10
            | X::native_rsqrt
            | X::native_sin
            | X::native_tan
            | X::atan2
            | X::atan2pi
            | X::fdim
            | X::fmod
            | X::hypot
            | X::maxmag
            | X::minmag
            | X::pow
            | X::powr
            | X::remainder
            | X::half_powr
            | X::native_powr
            | X::step
            | X::smoothstep => self.call_math(op, x),
            other => {
                return Err(CompileError::Unsupported(format!(
                    "the built-in `{other:?}` on floating-point values"
                )))
            }
        })
    }

    fn int_lane(&mut self, op: X, x: &[Value]) -> Result<Value, CompileError> {
        let t = self.b.func.dfg.value_type(x[0]);
        let bits = t.bits() as i64;
        let b = &mut self.b;
        Ok(match op {
            X::s_abs => {
                let n = b.ins().ineg(x[0]);
                let neg = b.ins().icmp_imm_s(IntCC::SignedLessThan, x[0], 0);
                b.ins().select(neg, n, x[0])
            }
            X::u_abs => x[0],
            X::s_min => b.ins().smin(x[0], x[1]),
            X::u_min => b.ins().umin(x[0], x[1]),
            X::s_max => b.ins().smax(x[0], x[1]),
            X::u_max => b.ins().umax(x[0], x[1]),
            X::s_clamp => {
                let lo = b.ins().smax(x[0], x[1]);
                b.ins().smin(lo, x[2])
            }
            X::u_clamp => {
                let lo = b.ins().umax(x[0], x[1]);
                b.ins().umin(lo, x[2])
            }
            X::clz => b.ins().clz(x[0]),
            X::ctz => b.ins().ctz(x[0]),
            X::popcount => b.ins().popcnt(x[0]),
            X::rotate => b.ins().rotl(x[0], x[1]),
            X::s_mul_hi => b.ins().smulhi(x[0], x[1]),
            X::u_mul_hi => b.ins().umulhi(x[0], x[1]),
            X::s_mad_hi => {
                let h = b.ins().smulhi(x[0], x[1]);
                b.ins().iadd(h, x[2])
            }
            X::u_mad_hi => {
                let h = b.ins().umulhi(x[0], x[1]);
                b.ins().iadd(h, x[2])
            }
            X::s_mul24 | X::u_mul24 => b.ins().imul(x[0], x[1]),
            X::s_mad24 | X::u_mad24 => {
                let p = b.ins().imul(x[0], x[1]);
                b.ins().iadd(p, x[2])
            }
            X::s_abs_diff | X::u_abs_diff => {
                let signed = op == X::s_abs_diff;
                let cc = if signed {
                    IntCC::SignedGreaterThan
                } else {
                    IntCC::UnsignedGreaterThan
                };
                let gt = b.ins().icmp(cc, x[0], x[1]);
                let d1 = b.ins().isub(x[0], x[1]);
                let d2 = b.ins().isub(x[1], x[0]);
                b.ins().select(gt, d1, d2)
            }
            X::s_hadd | X::u_hadd | X::s_rhadd | X::u_rhadd => {
                // (x >> 1) + (y >> 1) + carry, with no overflow.
                let signed = matches!(op, X::s_hadd | X::s_rhadd);
                let round = matches!(op, X::s_rhadd | X::u_rhadd);
                let (hx, hy) = if signed {
                    (b.ins().sshr_imm_s(x[0], 1), b.ins().sshr_imm_s(x[1], 1))
                } else {
                    (b.ins().ushr_imm_s(x[0], 1), b.ins().ushr_imm_s(x[1], 1))
                };
                let s = b.ins().iadd(hx, hy);
                let lo = if round {
                    b.ins().bor(x[0], x[1])
                } else {
                    b.ins().band(x[0], x[1])
                };
                let c = b.ins().band_imm_s(lo, 1);
                b.ins().iadd(s, c)
            }
            X::s_mad_sat | X::u_mad_sat if bits == 64 => {
                // Cranelift's x64 back end lacks some 128-bit operations:
                // the runtime computes it in i128.
                let signed = b.ins().iconst(types::I32, i64::from(op == X::s_mad_sat));
                return Ok(self.helper("clsync_mad_sat64", &[x[0], x[1], x[2], signed])[0]);
            }
            X::s_mad_sat | X::u_mad_sat => {
                // a * b + c exactly in twice the width, then clamped to
                // the type's range.
                let signed = op == X::s_mad_sat;
                let wide = t.double_width().unwrap_or(types::I64);
                let ext = |b: &mut FunctionBuilder<'_>, v: Value| {
                    if signed {
                        b.ins().sextend(wide, v)
                    } else {
                        b.ins().uextend(wide, v)
                    }
                };
                let (a, c, d) = (ext(b, x[0]), ext(b, x[1]), ext(b, x[2]));
                let prod = b.ins().imul(a, c);
                let sum = b.ins().iadd(prod, d);
                let (lo, hi): (i128, i128) = if signed {
                    (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
                } else {
                    (0, (1i128 << bits) - 1)
                };
                let konst = |b: &mut FunctionBuilder<'_>, v: i128| b.ins().iconst(wide, v as i64);
                let (lo, hi) = (konst(b, lo), konst(b, hi));
                let (below, above) = if signed {
                    (
                        b.ins().icmp(IntCC::SignedLessThan, sum, lo),
                        b.ins().icmp(IntCC::SignedGreaterThan, sum, hi),
                    )
                } else {
                    // Unsigned operands cannot go below zero.
                    (
                        b.ins().iconst(types::I8, 0),
                        b.ins().icmp(IntCC::UnsignedGreaterThan, sum, hi),
                    )
                };
                let r = b.ins().select(below, lo, sum);
                let r = b.ins().select(above, hi, r);
                b.ins().ireduce(t, r)
            }
            X::s_add_sat | X::u_add_sat | X::s_sub_sat | X::u_sub_sat => {
                let signed = matches!(op, X::s_add_sat | X::s_sub_sat);
                let add = matches!(op, X::s_add_sat | X::u_add_sat);
                return Ok(self.sat_arith(x[0], x[1], signed, add, bits));
            }
            X::bitselect => {
                let a = b.ins().band_not(x[0], x[2]);
                let c = b.ins().band(x[1], x[2]);
                b.ins().bor(a, c)
            }
            X::select => {
                // select(a, b, c): the MSB of c (vectors) or c != 0 (scalars);
                // SPIR-V gives the vector form here.
                let neg = b.ins().icmp_imm_s(IntCC::SignedLessThan, x[2], 0);
                b.ins().select(neg, x[1], x[0])
            }
            X::u_upsample | X::s_upsample => {
                let wide = t.double_width().unwrap_or(t);
                let hi = b.ins().uextend(wide, x[0]);
                let lo = b.ins().uextend(wide, x[1]);
                let hi = b.ins().ishl_imm_s(hi, bits);
                b.ins().bor(hi, lo)
            }
            other => {
                return Err(CompileError::Unsupported(format!(
                    "the built-in `{other:?}` on integers"
                )))
            }
        })
    }

    /// Saturating add or subtract, through a type twice as wide (64-bit
    /// values by the overflow flags).
    fn sat_arith(&mut self, x: Value, y: Value, signed: bool, add: bool, bits: i64) -> Value {
        let t = self.b.func.dfg.value_type(x);
        if bits < 64 {
            let w = types::I64;
            let (a, c) = if signed {
                (self.b.ins().sextend(w, x), self.b.ins().sextend(w, y))
            } else {
                (self.b.ins().uextend(w, x), self.b.ins().uextend(w, y))
            };
            let r = if add {
                self.b.ins().iadd(a, c)
            } else {
                self.b.ins().isub(a, c)
            };
            let (lo, hi) = if signed {
                (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
            } else {
                (0, (1i64 << bits) - 1)
            };
            let l = self.b.ins().iconst(w, lo);
            let h = self.b.ins().iconst(w, hi);
            let r = self.b.ins().smax(r, l);
            let r = self.b.ins().smin(r, h);
            return self.b.ins().ireduce(t, r);
        }
        let r = if add {
            self.b.ins().iadd(x, y)
        } else {
            self.b.ins().isub(x, y)
        };
        if signed {
            // Overflow: for x + y when the result's sign differs from both
            // operands'; for x - y when the operands' signs differ and the
            // result's differs from x's.
            let (p, q) = if add {
                (self.b.ins().bxor(x, r), self.b.ins().bxor(y, r))
            } else {
                (self.b.ins().bxor(x, y), self.b.ins().bxor(x, r))
            };
            let of = self.b.ins().band(p, q);
            let ovf = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, of, 0);
            let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, x, 0);
            let min = self.b.ins().iconst(t, i64::MIN);
            let max = self.b.ins().iconst(t, i64::MAX);
            let sat = self.b.ins().select(neg, min, max);
            self.b.ins().select(ovf, sat, r)
        } else if add {
            let ovf = self.b.ins().icmp(IntCC::UnsignedLessThan, r, x);
            let max = self.b.ins().iconst(t, -1);
            self.b.ins().select(ovf, max, r)
        } else {
            let ovf = self.b.ins().icmp(IntCC::UnsignedLessThan, x, y);
            let zero = self.b.ins().iconst(t, 0);
            self.b.ins().select(ovf, zero, r)
        }
    }

    /// `printf(format, args...)`: the arguments' scalars go to the
    /// runtime as (tag, bits) word pairs.
    fn printf(&mut self, inst: &Instruction) -> Result<(), CompileError> {
        let fmt = self.get1(self.id(inst, 2)?)?;
        let mut words: Vec<(i64, Value)> = Vec::new();
        for k in 3..inst.operands.len() {
            let id = self.id(inst, k)?;
            let ty = self.type_of(id)?;
            let leaves = self.m.leaves(ty)?;
            let vals = self.get(id)?;
            let vector = matches!(self.m.ty(ty)?, Type::Vector { .. });
            for (leaf, v) in leaves.iter().zip(vals) {
                let t = self.b.func.dfg.value_type(v);
                let (tag, bits) = match t {
                    types::F32 => {
                        let d = self.b.ins().fpromote(types::F64, v);
                        (
                            1,
                            self.b.ins().bitcast(
                                types::I64,
                                cranelift_codegen::ir::MemFlagsData::new(),
                                d,
                            ),
                        )
                    }
                    types::F64 => (
                        1,
                        self.b.ins().bitcast(
                            types::I64,
                            cranelift_codegen::ir::MemFlagsData::new(),
                            v,
                        ),
                    ),
                    types::I64 => (
                        if matches!(self.m.ty(leaf.ty)?, Type::Pointer { .. }) {
                            2
                        } else {
                            0
                        },
                        v,
                    ),
                    _ => (0, self.b.ins().sextend(types::I64, v)),
                };
                words.push((tag | if vector { 4 } else { 0 }, bits));
            }
        }
        let ss = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            (words.len().max(1) * 16) as u32,
            3,
        ));
        for (k, (tag, v)) in words.iter().enumerate() {
            let tv = self.b.ins().iconst(types::I64, *tag);
            self.b
                .ins()
                .stack_store(types::I64, tv, ss, (k * 16) as i32);
            self.b
                .ins()
                .stack_store(types::I64, *v, ss, (k * 16 + 8) as i32);
        }
        let addr = self.b.ins().stack_addr(types::I64, ss, 0);
        let n = self.b.ins().iconst(types::I32, words.len() as i64);
        let site = self.site();
        let site = self.b.ins().iconst(types::I32, site);
        let ctx = self.ctx;
        let r = self.helper("clsync_printf", &[ctx, fmt, addr, n, site])[0];
        self.def(inst, vec![r]);
        self.check_status();
        Ok(())
    }
}
