//! Work-group and sub-group collectives (`OpGroup*`): a runtime call each
//! ([`crate::exec::collectives`]), with the value as 64 bits and its type
//! encoded beside it.

use clsync_spirv::spirv::{GroupOperation, Op};
use clsync_spirv::{Instruction, Operand, Type};
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};

use super::function::{mem, Fx};
use crate::exec::collectives::{op, ty};
use crate::exec::ctx::{builtin, CTX_BUILTINS};
use crate::CompileError;

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
            _ => return Ok(false),
        };
        let scope = self.const_u64(self.id(inst, 0)?)?;
        if scope != 2 && scope != 3 {
            return Err(CompileError::Unsupported(format!(
                "a collective of scope {scope}"
            )));
        }
        let arithmetic = matches!(code, op::ADD | op::MIN | op::MAX);
        let (group_op, value_at) = if arithmetic {
            let g = match inst.operands.get(1) {
                Some(Operand::GroupOperation(GroupOperation::Reduce)) => 0,
                Some(Operand::GroupOperation(GroupOperation::InclusiveScan)) => 1,
                Some(Operand::GroupOperation(GroupOperation::ExclusiveScan)) => 2,
                other => {
                    return Err(CompileError::Unsupported(format!(
                        "the group operation {other:?}"
                    )))
                }
            };
            (g, 2)
        } else {
            (0, 1)
        };
        let rty = inst.result_type.unwrap_or(0);
        let t = super::cl_type(self.m, rty)?;
        if !matches!(self.m.ty(rty)?, Type::Int(_) | Type::Float(_) | Type::Bool) {
            return Err(CompileError::Unsupported(
                "a collective of a vector or aggregate".into(),
            ));
        }
        let v = self.get1(self.id(inst, value_at)?)?;
        let vt = self.b.func.dfg.value_type(v);
        let bits = vt.bits() as i64;
        let as_int = if vt.is_float() {
            self.b.ins().bitcast(vt.as_int(), MemFlagsData::new(), v)
        } else {
            v
        };
        let wide = if as_int.eq(&v) && vt == types::I64 || vt == types::F64 {
            as_int
        } else {
            self.b.ins().uextend(types::I64, as_int)
        };
        let arg = if code == op::BROADCAST {
            self.broadcast_lane(inst, scope)?
        } else {
            self.b.ins().iconst(types::I64, 0)
        };
        let site = self.site();
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
        let r = self.helper("clsync_collective", &args)[0];
        self.check_status();
        let narrow = if t.bits() == 64 {
            r
        } else {
            self.b.ins().ireduce(t.as_int(), r)
        };
        let out = if t.is_float() {
            self.b.ins().bitcast(t, MemFlagsData::new(), narrow)
        } else {
            narrow
        };
        self.def(inst, vec![out]);
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
}
