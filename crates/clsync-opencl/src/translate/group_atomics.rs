//! Atomics of local memory in work-item loops: a continuation function
//! (`continuation`) runs every work-item of its group on one thread, and
//! no other thread reaches the group's local memory. An atomic
//! read-modify-write there is then a plain load, the operation and a
//! plain store, which no other access can come between: the lanes of a
//! batch run theirs one after another, in the code's order. The locked
//! instruction it replaces (`lock add`, `lock cmpxchg`) takes some twenty
//! cycles and drains the store buffer; a histogram's local bins take one
//! per byte.
//!
//! Only where nothing outside the group could tell: the object is local
//! memory (the pointer's, or that of the variable its access chain started
//! from, `roots`), and the operation orders nothing beyond the group
//! (relaxed, or of work-group scope or narrower, whose order among the
//! group's work-items program order on one thread gives). A sequentially
//! consistent atomic of device scope keeps its locked instruction, so its
//! place in the launch's single total order stays the hardware's.

use clsync_spirv::spirv::{Op, StorageClass};
use clsync_spirv::Instruction;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, AtomicRmwOp, InstBuilder, MemFlagsData, Value};

use super::function::Fx;
use crate::CompileError;

/// SPIR-V's `Scope`s of the group or narrower: Workgroup, Subgroup,
/// Invocation.
const IN_GROUP: [u64; 3] = [2, 3, 4];

/// The ordering bits of SPIR-V's `MemorySemantics` (Acquire, Release,
/// AcquireRelease, SequentiallyConsistent).
const ORDERING: u64 = 0x2 | 0x4 | 0x8 | 0x10;

impl Fx<'_, '_> {
    /// Whether atomic `inst` on pointer `p` (of address space `storage`)
    /// runs as plain code here (see the module docs).
    pub(super) fn group_private_atomic(
        &self,
        inst: &Instruction,
        p: clsync_spirv::spirv::Word,
        storage: StorageClass,
    ) -> Result<bool, CompileError> {
        if self.cont.is_none() || self.s.checked {
            return Ok(false);
        }
        let local = storage == StorageClass::Workgroup
            || match self.roots.get(&p) {
                Some(root) => self.pointee(*root)?.1 == StorageClass::Workgroup,
                None => false,
            };
        if !local {
            return Ok(false);
        }
        // An order or scope known only at run time may be any: the
        // operation keeps its locked instruction.
        let known = |fx: &Self, k: usize| -> Result<Option<u64>, CompileError> {
            Ok(fx.known_u64(fx.id(inst, k)?))
        };
        let scope = known(self, 1)?;
        let semantics = known(self, 2)?;
        // A compare-exchange has a second semantics (its failure's): both
        // count.
        let failure = match inst.class.opcode {
            Op::AtomicCompareExchange | Op::AtomicCompareExchangeWeak => known(self, 3)?,
            _ => Some(0),
        };
        if scope.is_some_and(|s| IN_GROUP.contains(&s)) {
            return Ok(true);
        }
        Ok(matches!((semantics, failure), (Some(s), Some(f)) if (s | f) & ORDERING == 0))
    }

    /// Read-modify-write `rop` of `val` at native address `addr` as plain
    /// code: the old value.
    pub(super) fn rmw_in_group(
        &mut self,
        it: types::Type,
        rop: AtomicRmwOp,
        addr: Value,
        val: Value,
    ) -> Value {
        let flags = MemFlagsData::trusted();
        let old = self.b.ins().load(it, flags, addr, 0);
        let new = match rop {
            AtomicRmwOp::Add => self.b.ins().iadd(old, val),
            AtomicRmwOp::Sub => self.b.ins().isub(old, val),
            AtomicRmwOp::And => self.b.ins().band(old, val),
            AtomicRmwOp::Or => self.b.ins().bor(old, val),
            AtomicRmwOp::Xor => self.b.ins().bxor(old, val),
            AtomicRmwOp::Nand => {
                let a = self.b.ins().band(old, val);
                self.b.ins().bnot(a)
            }
            AtomicRmwOp::Xchg => val,
            AtomicRmwOp::Smin => self.b.ins().smin(old, val),
            AtomicRmwOp::Smax => self.b.ins().smax(old, val),
            AtomicRmwOp::Umin => self.b.ins().umin(old, val),
            AtomicRmwOp::Umax => self.b.ins().umax(old, val),
        };
        self.b.ins().store(flags, new, addr, 0);
        old
    }

    /// Compare-exchange at native address `addr` as plain code: stores `v`
    /// where the old value is `c`; the old value.
    pub(super) fn cas_in_group(&mut self, addr: Value, c: Value, v: Value) -> Value {
        let flags = MemFlagsData::trusted();
        let it = self.b.func.dfg.value_type(v);
        let old = self.b.ins().load(it, flags, addr, 0);
        let same = self.b.ins().icmp(IntCC::Equal, old, c);
        let new = self.b.ins().select(same, v, old);
        self.b.ins().store(flags, new, addr, 0);
        old
    }
}
