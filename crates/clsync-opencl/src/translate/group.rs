//! Work-group and sub-group collectives (`OpGroup*`): a runtime call each
//! ([`crate::exec::collectives`]), with the value as 64 bits and its type
//! encoded beside it.

use clsync_spirv::spirv::{GroupOperation, Op};
use clsync_spirv::{Instruction, Operand, Type};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};

use super::function::{mem, Fx};
use crate::exec::collectives::{op, ty};
use crate::exec::ctx::{builtin, CTX_BUILTINS};
use crate::CompileError;

/// A collective's group operation (operand 1), as the runtime's exchange
/// numbers them: reduce 0, inclusive scan 1, exclusive scan 2, clustered
/// reduce 3 (`cl_khr_subgroup_clustered_reduce`, its cluster size the
/// operand after the value).
fn group_operation(inst: &Instruction) -> Result<i64, CompileError> {
    match inst.operands.get(1) {
        Some(Operand::GroupOperation(GroupOperation::Reduce)) => Ok(0),
        Some(Operand::GroupOperation(GroupOperation::InclusiveScan)) => Ok(1),
        Some(Operand::GroupOperation(GroupOperation::ExclusiveScan)) => Ok(2),
        Some(Operand::GroupOperation(GroupOperation::ClusteredReduce)) => Ok(3),
        other => Err(CompileError::Unsupported(format!(
            "the group operation {other:?}"
        ))),
    }
}

/// An exchange's 64-bit result `r` as a value of type `t`.
fn narrow(fx: &mut Fx<'_, '_>, r: Value, t: cranelift_codegen::ir::Type) -> Value {
    let n = if t.bits() == 64 {
        r
    } else {
        fx.b.ins().ireduce(t.as_int(), r)
    };
    if t.is_float() {
        fx.b.ins().bitcast(t, MemFlagsData::new(), n)
    } else {
        n
    }
}

impl Fx<'_, '_> {
    /// Translates a collective; false if `inst` is not one.
    pub fn group(&mut self, inst: &Instruction) -> Result<bool, CompileError> {
        let (code, kind) = match inst.class.opcode {
            Op::GroupAll => (op::ALL, ty::UNSIGNED),
            Op::GroupAny => (op::ANY, ty::UNSIGNED),
            Op::GroupBroadcast => (op::BROADCAST, ty::UNSIGNED),
            Op::GroupIAdd => (op::ADD, ty::UNSIGNED),
            Op::GroupFAdd => (op::ADD, ty::FLOAT),
            Op::GroupSMin => (op::MIN, ty::SIGNED),
            Op::GroupUMin => (op::MIN, ty::UNSIGNED),
            Op::GroupFMin => (op::MIN, ty::FLOAT),
            Op::GroupSMax => (op::MAX, ty::SIGNED),
            Op::GroupUMax => (op::MAX, ty::UNSIGNED),
            Op::GroupFMax => (op::MAX, ty::FLOAT),
            _ => return self.non_uniform(inst),
        };
        let scope = self.const_u64(self.id(inst, 0)?)?;
        if scope != 2 && scope != 3 {
            return Err(CompileError::Unsupported(format!(
                "a collective of scope {scope}"
            )));
        }
        let arithmetic = matches!(code, op::ADD | op::MIN | op::MAX);
        let (group_op, value_at) = if arithmetic {
            (group_operation(inst)?, 2)
        } else {
            (0, 1)
        };
        let rty = inst.result_type.unwrap_or(0);
        // A broadcast may carry a vector (cl_khr_subgroup_extended_types):
        // one exchange per component.
        let elem = match self.m.ty(rty)? {
            Type::Vector { elem, .. } if code == op::BROADCAST => *elem,
            Type::Int(_) | Type::Float(_) | Type::Bool => rty,
            _ => {
                return Err(CompileError::Unsupported(
                    "a collective of a vector or aggregate".into(),
                ))
            }
        };
        let t = super::cl_type(self.m, elem)?;
        let vs = self.get(self.id(inst, value_at)?)?;
        let arg = if code == op::BROADCAST {
            self.broadcast_lane(inst, scope)?
        } else {
            self.b.ins().iconst(types::I64, 0)
        };
        let mut out = Vec::with_capacity(vs.len());
        for v in vs {
            let r = self.exchange(scope, code, group_op, kind, v, arg, None);
            self.check_status();
            out.push(narrow(self, r, t));
        }
        self.def(inst, out);
        Ok(true)
    }

    /// A broadcast's source lane: the sub-group local id, or the local id
    /// (1 to 3 components) as the local linear id.
    fn broadcast_lane(&mut self, inst: &Instruction, scope: u64) -> Result<Value, CompileError> {
        let ids = self.get(self.id(inst, 2)?)?;
        let wide: Vec<Value> = ids
            .iter()
            .map(|v| {
                if self.b.func.dfg.value_type(*v) == types::I64 {
                    *v
                } else {
                    self.b.ins().uextend(types::I64, *v)
                }
            })
            .collect();
        if scope == 3 || wide.len() == 1 {
            return Ok(wide[0]);
        }
        // x + size_x * (y + size_y * z)
        let size = |fx: &mut Self, d: usize| {
            fx.b.ins().load(
                types::I64,
                mem(),
                fx.ctx,
                CTX_BUILTINS + 8 * (builtin::LOCAL_SIZE + d) as i32,
            )
        };
        let mut lin = wide[wide.len() - 1];
        for d in (0..wide.len() - 1).rev() {
            let s = size(self, d);
            let m = self.b.ins().imul(lin, s);
            lin = self.b.ins().iadd(m, wide[d]);
        }
        Ok(lin)
    }

    /// The runtime's exchange of the scope's lanes (`clsync_collective`),
    /// or with `active` (a non-uniform sub-group operation's result id) of
    /// the lanes that reach it together (`clsync_sub_group_active`): `v` as
    /// 64 bits with its type beside it; the 64-bit result. Returns from the
    /// function if the work-item was stopped there.
    #[allow(clippy::too_many_arguments)]
    fn exchange(
        &mut self,
        scope: u64,
        code: u32,
        group_op: i64,
        kind: u32,
        v: Value,
        arg: Value,
        active: Option<u64>,
    ) -> Value {
        let vt = self.b.func.dfg.value_type(v);
        let bits = vt.bits() as i64;
        let as_int = if vt.is_float() {
            self.b.ins().bitcast(vt.as_int(), MemFlagsData::new(), v)
        } else {
            v
        };
        let wide = if vt.bits() == 64 {
            as_int
        } else {
            self.b.ins().uextend(types::I64, as_int)
        };
        let site = self.site();
        if let Some(id) = active {
            let args = [
                self.ctx,
                self.b.ins().iconst(types::I32, code as i64),
                self.b.ins().iconst(types::I32, group_op),
                self.b.ins().iconst(types::I32, kind as i64 | (bits << 8)),
                wide,
                arg,
                self.b.ins().iconst(types::I32, site),
                self.b.ins().iconst(types::I64, id as i64),
            ];
            return self.helper("clsync_sub_group_active", &args)[0];
        }
        let args = [
            self.ctx,
            self.b.ins().iconst(types::I32, scope as i64),
            self.b.ins().iconst(types::I32, code as i64),
            self.b.ins().iconst(types::I32, group_op),
            self.b.ins().iconst(types::I32, kind as i64 | (bits << 8)),
            wide,
            arg,
            self.b.ins().iconst(types::I32, site),
        ];
        self.helper("clsync_collective", &args)[0]
    }

    /// The sub-group operations of `cl_khr_subgroup_*` (SPIR-V's
    /// `OpGroupNonUniform*`): elections, votes, broadcasts, ballots,
    /// shuffles and the arithmetic collectives with their scans and
    /// clustered reductions. They need not be reached by every lane: each
    /// is computed over the lanes that reach it together, its active set
    /// (`clsync_sub_group_active`), so that `if (x) sub_group_elect()`
    /// elects the lowest lane where `x` holds. False if `inst` is none of
    /// them.
    fn non_uniform(&mut self, inst: &Instruction) -> Result<bool, CompileError> {
        let opc = inst.class.opcode;
        let arith = match opc {
            Op::GroupNonUniformIAdd => Some((op::ADD, ty::UNSIGNED)),
            Op::GroupNonUniformFAdd => Some((op::ADD, ty::FLOAT)),
            Op::GroupNonUniformIMul => Some((op::MUL, ty::UNSIGNED)),
            Op::GroupNonUniformFMul => Some((op::MUL, ty::FLOAT)),
            Op::GroupNonUniformSMin => Some((op::MIN, ty::SIGNED)),
            Op::GroupNonUniformUMin => Some((op::MIN, ty::UNSIGNED)),
            Op::GroupNonUniformFMin => Some((op::MIN, ty::FLOAT)),
            Op::GroupNonUniformSMax => Some((op::MAX, ty::SIGNED)),
            Op::GroupNonUniformUMax => Some((op::MAX, ty::UNSIGNED)),
            Op::GroupNonUniformFMax => Some((op::MAX, ty::FLOAT)),
            Op::GroupNonUniformBitwiseAnd | Op::GroupNonUniformLogicalAnd => {
                Some((op::AND, ty::UNSIGNED))
            }
            Op::GroupNonUniformBitwiseOr | Op::GroupNonUniformLogicalOr => {
                Some((op::OR, ty::UNSIGNED))
            }
            Op::GroupNonUniformBitwiseXor | Op::GroupNonUniformLogicalXor => {
                Some((op::XOR, ty::UNSIGNED))
            }
            _ => None,
        };
        let known = arith.is_some()
            || matches!(
                opc,
                Op::GroupNonUniformElect
                    | Op::GroupNonUniformAll
                    | Op::GroupNonUniformAny
                    | Op::GroupNonUniformAllEqual
                    | Op::GroupNonUniformBroadcast
                    | Op::GroupNonUniformBroadcastFirst
                    | Op::GroupNonUniformBallot
                    | Op::GroupNonUniformInverseBallot
                    | Op::GroupNonUniformBallotBitExtract
                    | Op::GroupNonUniformBallotBitCount
                    | Op::GroupNonUniformBallotFindLSB
                    | Op::GroupNonUniformBallotFindMSB
                    | Op::GroupNonUniformShuffle
                    | Op::GroupNonUniformShuffleXor
                    | Op::GroupNonUniformShuffleUp
                    | Op::GroupNonUniformShuffleDown
            );
        if !known {
            return Ok(false);
        }
        let scope = self.const_u64(self.id(inst, 0)?)?;
        if scope != 2 && scope != 3 {
            return Err(CompileError::Unsupported(format!(
                "Op{opc:?} of scope {scope}"
            )));
        }
        let lane = self.b.ins().load(
            types::I64,
            mem(),
            self.ctx,
            CTX_BUILTINS
                + 8 * (if scope == 3 {
                    builtin::SUB_GROUP_LOCAL_ID
                } else {
                    builtin::LOCAL_LINEAR_ID
                }) as i32,
        );
        let rty = inst.result_type.unwrap_or(0);
        let rt = super::cl_type(
            self.m,
            match self.m.ty(rty)? {
                Type::Vector { elem, .. } => *elem,
                _ => rty,
            },
        )?;
        // A ballot's 128 bits as one word: sub-groups have at most 64 lanes.
        let mask_of = |fx: &mut Self, id| -> Result<Value, CompileError> {
            let v = fx.get(id)?;
            let lo = fx.b.ins().uextend(types::I64, v[0]);
            let hi = fx.b.ins().uextend(types::I64, v[1]);
            let hi = fx.b.ins().ishl_imm_s(hi, 32);
            Ok(fx.b.ins().bor(lo, hi))
        };
        let zero = self.b.ins().iconst(types::I64, 0);
        // Sub-group operations wait for their active set; a work-group
        // scope's (which OpenCL C does not make) for every work-item.
        let active = (scope == 3).then_some(u64::from(inst.result_id.unwrap_or(0)) << 8);
        let out: Vec<Value> = match opc {
            Op::GroupNonUniformElect => {
                // The lowest active lane's id, compared with this lane's.
                let first = self.exchange(scope, op::FIRST, 0, ty::UNSIGNED, lane, zero, active);
                self.check_status();
                vec![self.b.ins().icmp(IntCC::Equal, first, lane)]
            }
            Op::GroupNonUniformAllEqual => {
                let v = self.get1(self.id(inst, 1)?)?;
                let r = self.exchange(scope, op::ALL_EQUAL, 0, ty::UNSIGNED, v, zero, active);
                self.check_status();
                vec![self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0)]
            }
            Op::GroupNonUniformAll | Op::GroupNonUniformAny => {
                let code = if opc == Op::GroupNonUniformAll {
                    op::ALL
                } else {
                    op::ANY
                };
                let v = self.get1(self.id(inst, 1)?)?;
                let r = self.exchange(scope, code, 0, ty::UNSIGNED, v, zero, active);
                self.check_status();
                vec![self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0)]
            }
            Op::GroupNonUniformBroadcast
            | Op::GroupNonUniformBroadcastFirst
            | Op::GroupNonUniformShuffle
            | Op::GroupNonUniformShuffleXor
            | Op::GroupNonUniformShuffleUp
            | Op::GroupNonUniformShuffleDown => {
                // A broadcast may carry a vector (cl_khr_subgroup_ballot):
                // one exchange per component, each its own operation.
                let vs = self.get(self.id(inst, 1)?)?;
                let (code, from) = match opc {
                    Op::GroupNonUniformBroadcastFirst => (op::FIRST, zero),
                    _ => {
                        let a = self.get1(self.id(inst, 2)?)?;
                        let a = if self.b.func.dfg.value_type(a) == types::I64 {
                            a
                        } else {
                            self.b.ins().uextend(types::I64, a)
                        };
                        let from = match opc {
                            Op::GroupNonUniformShuffleXor => self.b.ins().bxor(lane, a),
                            Op::GroupNonUniformShuffleUp => self.b.ins().isub(lane, a),
                            Op::GroupNonUniformShuffleDown => self.b.ins().iadd(lane, a),
                            _ => a,
                        };
                        (op::BROADCAST, from)
                    }
                };
                let mut out = Vec::with_capacity(vs.len());
                for (k, v) in vs.into_iter().enumerate() {
                    let op_id = active.map(|id| id | k as u64);
                    let r = self.exchange(scope, code, 0, ty::UNSIGNED, v, from, op_id);
                    self.check_status();
                    out.push(narrow(self, r, rt));
                }
                out
            }
            Op::GroupNonUniformBallot => {
                let v = self.get1(self.id(inst, 1)?)?;
                let r = self.exchange(scope, op::BALLOT, 0, ty::UNSIGNED, v, zero, active);
                self.check_status();
                let lo = self.b.ins().ireduce(types::I32, r);
                let hi = self.b.ins().ushr_imm_s(r, 32);
                let hi = self.b.ins().ireduce(types::I32, hi);
                let z = self.b.ins().iconst(types::I32, 0);
                vec![lo, hi, z, z]
            }
            Op::GroupNonUniformInverseBallot => {
                let m = mask_of(self, self.id(inst, 1)?)?;
                let bit = self.b.ins().ushr(m, lane);
                let bit = self.b.ins().band_imm_s(bit, 1);
                vec![self.b.ins().icmp_imm_s(IntCC::NotEqual, bit, 0)]
            }
            Op::GroupNonUniformBallotBitExtract => {
                let m = mask_of(self, self.id(inst, 1)?)?;
                let i = self.get1(self.id(inst, 2)?)?;
                let i = if self.b.func.dfg.value_type(i) == types::I64 {
                    i
                } else {
                    self.b.ins().uextend(types::I64, i)
                };
                let bit = self.b.ins().ushr(m, i);
                let bit = self.b.ins().band_imm_s(bit, 1);
                vec![self.b.ins().icmp_imm_s(IntCC::NotEqual, bit, 0)]
            }
            Op::GroupNonUniformBallotBitCount => {
                let g = match inst.operands.get(1) {
                    Some(Operand::GroupOperation(g)) => *g,
                    other => {
                        return Err(CompileError::Invalid(format!(
                            "OpGroupNonUniformBallotBitCount with {other:?}"
                        )))
                    }
                };
                let m = mask_of(self, self.id(inst, 2)?)?;
                // The lanes counted: all, up to this one, or before it.
                let upto = match g {
                    GroupOperation::InclusiveScan => self.b.ins().iadd_imm_s(lane, 1),
                    GroupOperation::ExclusiveScan => lane,
                    _ => self.b.ins().iconst(types::I64, 64),
                };
                let one = self.b.ins().iconst(types::I64, 1);
                let big = self
                    .b
                    .ins()
                    .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, upto, 64);
                let sh = self.b.ins().ishl(one, upto);
                let below = self.b.ins().iadd_imm_s(sh, -1);
                let all = self.b.ins().iconst(types::I64, -1);
                let below = self.b.ins().select(big, all, below);
                let m = self.b.ins().band(m, below);
                let c = self.b.ins().popcnt(m);
                vec![narrow(self, c, rt)]
            }
            Op::GroupNonUniformBallotFindLSB | Op::GroupNonUniformBallotFindMSB => {
                let m = mask_of(self, self.id(inst, 1)?)?;
                let r = if opc == Op::GroupNonUniformBallotFindLSB {
                    self.b.ins().ctz(m)
                } else {
                    let z = self.b.ins().clz(m);
                    let k = self.b.ins().iconst(types::I64, 63);
                    self.b.ins().isub(k, z)
                };
                vec![narrow(self, r, rt)]
            }
            _ => {
                let (code, kind) = arith.expect("an arithmetic operation");
                let group_op = group_operation(inst)?;
                let v = self.get1(self.id(inst, 2)?)?;
                // A cluster's size: a constant power of two, at least 1
                // (the specification's requirement, checked here).
                let cluster = if group_op == 3 {
                    let n = self.const_u64(self.id(inst, 3)?)?;
                    if n == 0 || !n.is_power_of_two() {
                        return Err(CompileError::Invalid(format!(
                            "a clustered reduction over clusters of {n}, not a power of two"
                        )));
                    }
                    self.b.ins().iconst(types::I64, n as i64)
                } else {
                    zero
                };
                let r = self.exchange(scope, code, group_op, kind, v, cluster, active);
                self.check_status();
                vec![narrow(self, r, rt)]
            }
        };
        self.def(inst, out);
        Ok(true)
    }
}
