//! Atomics: inline in the fast build (the code generator's atomics), through
//! the runtime under the checker in the checked build.

use clsync_spirv::spirv::{Op, StorageClass};
use clsync_spirv::Instruction;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{self, types, AtomicRmwOp, InstBuilder, MemFlagsData, Value};

use super::cl_type;
use super::function::Fx;
use crate::exec::ctx::{CTX_ATOMIC_SHADOW, RACE_FREE};
use crate::exec::helpers::AccessKind;
use crate::CompileError;

impl Fx<'_, '_> {
    /// The atomics. The code generator's atomics are sequentially
    /// consistent, at least as strong as any order and scope a kernel
    /// names, so each pairs with every other atomic, fence and barrier of
    /// the launch and with the host's.
    pub(super) fn atomic(&mut self, inst: &Instruction) -> Result<bool, CompileError> {
        let op = inst.class.opcode;
        if rmw_op(op).is_none()
            && !matches!(
                op,
                Op::AtomicLoad
                    | Op::AtomicStore
                    | Op::AtomicCompareExchange
                    | Op::AtomicCompareExchangeWeak
                    | Op::AtomicFlagTestAndSet
                    | Op::AtomicFlagClear
                    | Op::AtomicFAddEXT
            )
        {
            return Ok(false);
        }
        let p = self.id(inst, 0)?;
        let (ty, storage) = self.pointee(p)?;
        let ptr = self.get1(p)?;
        let t = cl_type(self.m, ty)?;
        let size = self.m.layout(ty)?.size;
        if self.s.checked && size <= 8 {
            let quiet = self.quiet_atomics.contains(&p);
            return self.atomic_checked(inst, ptr, storage, t, size, quiet);
        }
        let width = atomic_width(op, size);
        // Checked from the object's root where the access chain is known,
        // as loads and stores are (`address_in`).
        let root = self.root_value(p)?.unwrap_or(ptr);
        let addr = self.address_in(ptr, root, width, AccessKind::Atomic, storage);
        let plain = self.group_private_atomic(inst, p, storage)?;
        if let Some(v) = self.atomic_native(inst, addr, t, plain)? {
            self.def(inst, vec![v]);
        }
        Ok(true)
    }

    /// Performs atomic `inst` on the object of type `t` at native address
    /// `addr` with the code generator's atomics, or as plain code where
    /// only the group's thread reaches it (`plain`, see `group_atomics`);
    /// its result, if it has one.
    fn atomic_native(
        &mut self,
        inst: &Instruction,
        addr: Value,
        t: cranelift_codegen::ir::Type,
        plain: bool,
    ) -> Result<Option<Value>, CompileError> {
        let op = inst.class.opcode;
        let flags = MemFlagsData::trusted();
        let is_float = t == types::F32 || t == types::F64;
        let it = t.as_int();
        let to_int = |fx: &mut Self, v: Value| {
            if is_float {
                fx.b.ins().bitcast(it, MemFlagsData::new(), v)
            } else {
                v
            }
        };
        let from_int = |fx: &mut Self, v: Value| {
            if is_float {
                fx.b.ins().bitcast(t, MemFlagsData::new(), v)
            } else {
                v
            }
        };
        if let Some(rop) = rmw_op(op) {
            let val = match op {
                Op::AtomicIIncrement | Op::AtomicIDecrement => self.b.ins().iconst(it, 1),
                _ => {
                    let v = self.get1(self.id(inst, 3)?)?;
                    to_int(self, v)
                }
            };
            let old = match plain {
                true => self.rmw_in_group(it, rop, addr, val),
                false => self.b.ins().atomic_rmw(it, flags, rop, addr, val),
            };
            return Ok(Some(from_int(self, old)));
        }
        Ok(match op {
            Op::AtomicLoad => {
                let v = self.b.ins().atomic_load(it, flags, addr);
                Some(from_int(self, v))
            }
            Op::AtomicStore => {
                let v = self.get1(self.id(inst, 3)?)?;
                let v = to_int(self, v);
                self.store_atomic(inst, flags, v, addr)?;
                None
            }
            Op::AtomicCompareExchange | Op::AtomicCompareExchangeWeak => {
                let v = self.get1(self.id(inst, 4)?)?;
                let c = self.get1(self.id(inst, 5)?)?;
                let (v, c) = (to_int(self, v), to_int(self, c));
                let old = match plain {
                    true => self.cas_in_group(addr, c, v),
                    false => self.b.ins().atomic_cas(flags, addr, c, v),
                };
                Some(from_int(self, old))
            }
            Op::AtomicFlagTestAndSet => {
                let one = self.b.ins().iconst(types::I32, 1);
                let old = self
                    .b
                    .ins()
                    .atomic_rmw(types::I32, flags, AtomicRmwOp::Xchg, addr, one);
                Some(self.b.ins().icmp_imm_s(IntCC::NotEqual, old, 0))
            }
            Op::AtomicFlagClear => {
                let zero = self.b.ins().iconst(types::I32, 0);
                self.store_atomic(inst, flags, zero, addr)?;
                None
            }
            Op::AtomicFAddEXT => {
                // A compare-and-swap loop: read, add, swap if unchanged.
                let v = self.get1(self.id(inst, 3)?)?;
                let first = self.b.ins().atomic_load(it, flags, addr);
                let looph = self.b.create_block();
                let done = self.b.create_block();
                let cur = self.b.append_block_param(looph, it);
                let old = self.b.append_block_param(done, it);
                self.b
                    .ins()
                    .jump(looph, &[cranelift_codegen::ir::BlockArg::Value(first)]);
                self.b.switch_to_block(looph);
                let f = self.b.ins().bitcast(t, MemFlagsData::new(), cur);
                let sum = self.b.ins().fadd(f, v);
                let si = self.b.ins().bitcast(it, MemFlagsData::new(), sum);
                let seen = self.b.ins().atomic_cas(flags, addr, cur, si);
                let same = self.b.ins().icmp(IntCC::Equal, seen, cur);
                self.b.ins().brif(
                    same,
                    done,
                    &[cranelift_codegen::ir::BlockArg::Value(seen)],
                    looph,
                    &[cranelift_codegen::ir::BlockArg::Value(seen)],
                );
                self.b.switch_to_block(done);
                Some(self.b.ins().bitcast(t, MemFlagsData::new(), old))
            }
            _ => {
                return Err(CompileError::Internal(format!(
                    "Op{op:?} is no atomic the translator performs"
                )))
            }
        })
    }

    /// An atomic in the checked build: the runtime performs it under the
    /// checker (`clsync_atomic`), which sees its order and scope. A
    /// `quiet` one (through a pointer of `local_atomics::quiet_atomics`) is
    /// performed inline instead where the launch takes the build's proofs
    /// and an operation wrote its bytes already ([`written`](Self::written)):
    /// it races with nothing and synchronizes nothing, so the checker
    /// would find nothing and record nothing a later access needs.
    fn atomic_checked(
        &mut self,
        inst: &Instruction,
        ptr: Value,
        storage: StorageClass,
        t: cranelift_codegen::ir::Type,
        size: u64,
        quiet: bool,
    ) -> Result<bool, CompileError> {
        let (is_float, it) = (t.is_float(), t.as_int());
        let op = inst.class.opcode;
        // Orders and scopes as the kernel names them, constant or not: the
        // checker judges by them.
        let scope = self.u32_operand(self.id(inst, 1)?)?;
        let sem = self.u32_operand(self.id(inst, 2)?)?;
        let zero = self.b.ins().iconst(types::I64, 0);
        let widen = |fx: &mut Self, v: Value| -> Value {
            let v = if is_float {
                fx.b.ins().bitcast(it, MemFlagsData::new(), v)
            } else {
                v
            };
            if fx.b.func.dfg.value_type(v) == types::I64 {
                v
            } else {
                fx.b.ins().uextend(types::I64, v)
            }
        };
        let (value, cmp, fail_sem) = match op {
            Op::AtomicLoad
            | Op::AtomicIIncrement
            | Op::AtomicIDecrement
            | Op::AtomicFlagTestAndSet
            | Op::AtomicFlagClear => (zero, zero, None),
            Op::AtomicCompareExchange | Op::AtomicCompareExchangeWeak => {
                let v = self.get1(self.id(inst, 4)?)?;
                let c = self.get1(self.id(inst, 5)?)?;
                let fail = self.u32_operand(self.id(inst, 3)?)?;
                (widen(self, v), widen(self, c), Some(fail))
            }
            _ => {
                let v = self.get1(self.id(inst, 3)?)?;
                (widen(self, v), zero, None)
            }
        };
        let fail_sem = fail_sem.unwrap_or_else(|| self.b.ins().iconst(types::I32, 0));
        let width = atomic_width(op, size);
        let addr = self.address(ptr, width, AccessKind::Atomic, storage);
        let join = self.b.create_block();
        let result = match op {
            Op::AtomicStore | Op::AtomicFlagClear => None,
            Op::AtomicFlagTestAndSet => Some(self.b.append_block_param(join, types::I8)),
            _ => Some(self.b.append_block_param(join, t)),
        };
        // The result's shadow: nonzero where the runtime found a byte it
        // read unwritten (an inline operation reads written bytes only).
        let shadow = result.map(|_| self.b.append_block_param(join, types::I8));
        let in_bounds = self.in_bounds.filter(|_| quiet && matches!(width, 4 | 8));
        if let Some(ok) = in_bounds {
            let fast = self.b.create_block();
            let slow = self.b.create_block();
            self.written(RACE_FREE, ptr, 0, width, ok, fast, slow);
            self.b.switch_to_block(fast);
            let v = self.atomic_native(inst, addr, t, false)?;
            let clean = shadow.map(|_| self.b.ins().iconst(types::I8, 0));
            let args: Vec<_> = v
                .into_iter()
                .chain(clean)
                .map(ir::BlockArg::Value)
                .collect();
            self.b.ins().jump(join, &args);
            self.b.switch_to_block(slow);
        }
        let site = self.site();
        let args = [
            self.ctx,
            ptr,
            addr,
            self.b.ins().iconst(types::I32, op as i64),
            self.b
                .ins()
                .iconst(types::I32, width as i64 | if is_float { 0x100 } else { 0 }),
            value,
            cmp,
            sem,
            fail_sem,
            scope,
            self.b.ins().iconst(types::I32, site),
        ];
        let old = self.helper("clsync_atomic", &args)[0];
        self.check_status();
        let v = match op {
            Op::AtomicStore | Op::AtomicFlagClear => None,
            Op::AtomicFlagTestAndSet => Some(self.b.ins().icmp_imm_s(IntCC::NotEqual, old, 0)),
            _ => {
                let v = if it == types::I64 {
                    old
                } else {
                    self.b.ins().ireduce(it, old)
                };
                Some(if is_float {
                    self.b.ins().bitcast(t, MemFlagsData::new(), v)
                } else {
                    v
                })
            }
        };
        // (Written by the call: no load the code generator may move.)
        let read = shadow.map(|_| {
            self.b.ins().load(
                types::I8,
                MemFlagsData::trusted(),
                self.ctx,
                CTX_ATOMIC_SHADOW,
            )
        });
        let args: Vec<_> = v.into_iter().chain(read).map(ir::BlockArg::Value).collect();
        self.b.ins().jump(join, &args);
        self.b.switch_to_block(join);
        if let Some(v) = result {
            self.pending = Some(vec![shadow]);
            self.def(inst, vec![v]);
        }
        Ok(true)
    }

    /// An atomic store (`OpAtomicStore`, `OpAtomicFlagClear`: semantics
    /// are operand 2). Cranelift's atomic store is sequentially consistent
    /// (a locked exchange on x86-64); a relaxed or release store needs no
    /// more than x86-64's plain store, whose total store order gives it
    /// release semantics, and which Cranelift neither removes nor moves
    /// across other memory operations. A seq_cst store, one whose order is
    /// known only at run time, and every store elsewhere, stay
    /// Cranelift's.
    fn store_atomic(
        &mut self,
        inst: &Instruction,
        flags: MemFlagsData,
        v: Value,
        addr: Value,
    ) -> Result<(), CompileError> {
        let seq_cst = self
            .known_u64(self.id(inst, 2)?)
            .is_none_or(|sem| sem & 0x10 != 0);
        if cfg!(target_arch = "x86_64") && !seq_cst {
            self.b.ins().store(flags, v, addr, 0);
        } else {
            self.b.ins().atomic_store(flags, v, addr);
        }
        Ok(())
    }
}

/// The code generator's read-modify-write of `op`, where it is one.
fn rmw_op(op: Op) -> Option<AtomicRmwOp> {
    Some(match op {
        Op::AtomicExchange => AtomicRmwOp::Xchg,
        Op::AtomicIAdd | Op::AtomicIIncrement => AtomicRmwOp::Add,
        Op::AtomicISub | Op::AtomicIDecrement => AtomicRmwOp::Sub,
        Op::AtomicSMin => AtomicRmwOp::Smin,
        Op::AtomicUMin => AtomicRmwOp::Umin,
        Op::AtomicSMax => AtomicRmwOp::Smax,
        Op::AtomicUMax => AtomicRmwOp::Umax,
        Op::AtomicAnd => AtomicRmwOp::And,
        Op::AtomicOr => AtomicRmwOp::Or,
        Op::AtomicXor => AtomicRmwOp::Xor,
        _ => return None,
    })
}

/// The bytes atomic `op` on an object of `size` bytes reaches: a flag's
/// are an `int`'s.
fn atomic_width(op: Op, size: u64) -> u64 {
    if matches!(op, Op::AtomicFlagTestAndSet | Op::AtomicFlagClear) {
        4
    } else {
        size
    }
}
