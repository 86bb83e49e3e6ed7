//! Memory: checked accesses through the slot table, address arithmetic,
//! variables, copies, async copies and the work-item built-ins (atomics are
//! in `atomics`, a checked build's reports of accesses in `checks`).

use clsync_spirv::spirv::{BuiltIn, MemoryAccess, Op, StorageClass, Word};
use clsync_spirv::{Instruction, Operand, Type};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, BlockArg, InstBuilder, InstructionData, Opcode, Value};

use super::cl_type;
use super::function::{mem, Fx};
use crate::exec::ctx::{builtin, CTX_BUILTINS, OFFSET_BITS, OFFSET_MASK};
use crate::exec::helpers::AccessKind;
use crate::CompileError;

impl Fx<'_, '_> {
    /// The native address of an access of `size` bytes at `ptr`, after the
    /// checks: the slot exists and the bytes are inside it. A failed check
    /// calls the fault handler and returns from the function.
    pub fn address(
        &mut self,
        ptr: Value,
        size: u64,
        kind: AccessKind,
        storage: StorageClass,
    ) -> Value {
        self.address_in(ptr, ptr, size, kind, storage)
    }

    /// [`address`](Self::address) of `ptr`, whose slot is `slot_of`'s: the
    /// pointer an access chain started from, where known (see `roots`),
    /// which is the same for every pointer in bounds of its object (one out
    /// of bounds fails the length check either way) and invariant where
    /// that pointer is, so that Cranelift hoists the table's loads out of
    /// the loops that index it.
    pub fn address_in(
        &mut self,
        ptr: Value,
        slot_of: Value,
        size: u64,
        kind: AccessKind,
        storage: StorageClass,
    ) -> Value {
        let (ok, native) = self.bounds(ptr, slot_of, size);
        self.in_bounds = Some(ok);
        let fault = self.b.create_block();
        self.b.set_cold_block(fault);
        let good = self.b.create_block();
        let addr = self.b.append_block_param(good, types::I64);
        self.b
            .ins()
            .brif(ok, good, &[BlockArg::Value(native)], fault, &[]);
        self.b.switch_to_block(fault);
        let site = self.site();
        let args = [
            self.ctx,
            ptr,
            self.b.ins().iconst(types::I64, size as i64),
            self.b
                .ins()
                .iconst(types::I32, kind as i64 | (space_code(storage) << 8)),
            self.b.ins().iconst(types::I32, site),
        ];
        // The address to use instead: a host address in shared virtual
        // memory, the context's scratch area for an access reported and
        // skipped (a checked launch), or none (0): the work-item stopped.
        let instead = self.helper("clsync_fault", &args)[0];
        let bail = self.bail_block();
        self.b
            .ins()
            .brif(instead, good, &[BlockArg::Value(instead)], bail, &[]);
        self.b.switch_to_block(good);
        addr
    }

    /// The checks of [`address_in`](Self::address_in) without their fault
    /// path: whether the `size` bytes at `ptr` are inside its object, and
    /// their native address where they are.
    pub fn bounds(&mut self, ptr: Value, slot_of: Value, size: u64) -> (Value, Value) {
        let slot = self.b.ins().ushr_imm_s(slot_of, OFFSET_BITS as i64);
        // With the root known, the offset is the root's and the distance to
        // it: `(root + x) - root` is `x` to Cranelift's rules, so an
        // indexed access computes no tagged pointer at all (the fault path
        // makes one if it runs). A distance below the root wraps to an
        // offset past any object.
        let rooted = slot_of != ptr;
        let off = if rooted {
            // The root's offset as `root - (root & !mask)`: Cranelift
            // rematerializes a `band` with a constant in every block that
            // uses it, inside the loops too, while this is computed once
            // where the root is (no rule of Cranelift's folds it back).
            let tag = self.b.ins().band_imm_s(slot_of, !OFFSET_MASK as i64);
            let base = self.b.ins().isub(slot_of, tag);
            let d = self.distance(ptr, slot_of);
            self.b.ins().iadd(base, d)
        } else {
            self.b.ins().band_imm_s(ptr, OFFSET_MASK as i64)
        };
        // A slot past the table reads its sentinel, the null object after
        // the last slot (every table has one), whose length fails every
        // access: one comparison for both checks, and a load that is in
        // bounds wherever Cranelift hoists it.
        let slot = self.b.ins().umin(slot, self.nslots);
        let idx = self.b.ins().ishl_imm_s(slot, 4);
        let entry = self.b.ins().iadd(self.slots, idx);
        let fixed = super::function::fixed();
        let base = self.b.ins().load(types::I64, fixed, entry, 0);
        let len = self.b.ins().load(types::I64, fixed, entry, 8);
        let ok = if rooted {
            // In bounds: `off < len + 1 - size`, a limit the loop hoists
            // with the slot's loads (zero where the object is smaller than
            // the access), which no wrapped offset passes.
            let fits = self
                .b
                .ins()
                .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, len, size as i64);
            let limit = self.b.ins().iadd_imm_s(len, 1 - size as i64);
            let zero = self.b.ins().iconst(types::I64, 0);
            let limit = self.b.ins().select(fits, limit, zero);
            self.b.ins().icmp(IntCC::UnsignedLessThan, off, limit)
        } else {
            let end = self.b.ins().iadd_imm_s(off, size as i64);
            self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, len)
        };
        let native = self.b.ins().iadd(base, off);
        (ok, native)
    }

    /// `ptr - root`, where access chains made `ptr` from `root`: the sum of
    /// the additions on the way, read back from the function's code, so
    /// that an index's arithmetic is all the offset costs (Cranelift folds
    /// `(root + x) - root` but not `((root + x) + c) - root`, which its
    /// rules make of `root + (x + c)`); `isub` where the way is not plain
    /// additions (a phi, a select).
    fn distance(&mut self, ptr: Value, root: Value) -> Value {
        match self.added_to(ptr, root, 8) {
            Some(Some(d)) => d,
            Some(None) => self.b.ins().iconst(types::I64, 0),
            None => self.b.ins().isub(ptr, root),
        }
    }

    /// What additions of at most `depth` levels added to `root` to make
    /// `v`: `Some(None)` for `root` itself.
    fn added_to(&mut self, v: Value, root: Value, depth: u32) -> Option<Option<Value>> {
        let dfg = &self.b.func.dfg;
        let v = dfg.resolve_aliases(v);
        if v == root {
            return Some(None);
        }
        if depth == 0 {
            return None;
        }
        let inst = dfg.value_def(v).inst()?;
        let InstructionData::Binary {
            opcode: Opcode::Iadd,
            args: [a, b],
        } = dfg.insts[inst]
        else {
            return None;
        };
        for (x, y) in [(a, b), (b, a)] {
            if let Some(d) = self.added_to(x, root, depth - 1) {
                // `y` is an operand of `v`'s definition, which dominates
                // the access: so it does here.
                return Some(Some(match d {
                    None => y,
                    Some(d) => self.b.ins().iadd(d, y),
                }));
            }
        }
        None
    }

    /// The value of the pointer access chains made `ptr` from, if they
    /// did (see `roots`).
    pub(super) fn root_value(&mut self, ptr: Word) -> Result<Option<Value>, CompileError> {
        match self.roots.get(&ptr).copied() {
            Some(root) => Ok(Some(self.get1(root)?)),
            None => Ok(None),
        }
    }

    /// The pointee type and address space of a pointer-typed id.
    pub fn pointee(&self, ptr: Word) -> Result<(Word, StorageClass), CompileError> {
        match self.m.ty(self.type_of(ptr)?)? {
            Type::Pointer { pointee, storage } => Ok((*pointee, *storage)),
            t => Err(CompileError::Invalid(format!(
                "%{ptr} is a {t:?}, not a pointer"
            ))),
        }
    }

    pub(super) fn builtin_of(&self, id: Word) -> Option<BuiltIn> {
        super::builtin_of(self.m, id)
    }

    /// A load of a work-item built-in variable.
    fn load_builtin(&mut self, inst: &Instruction, b: BuiltIn) -> Result<Vec<Value>, CompileError> {
        use builtin::*;
        let (first, n) = match b {
            BuiltIn::GlobalInvocationId => (GLOBAL_ID, 3),
            BuiltIn::LocalInvocationId => (LOCAL_ID, 3),
            BuiltIn::WorkgroupId => (GROUP_ID, 3),
            BuiltIn::GlobalSize => (GLOBAL_SIZE, 3),
            BuiltIn::WorkgroupSize => (LOCAL_SIZE, 3),
            BuiltIn::EnqueuedWorkgroupSize => (ENQUEUED_LOCAL_SIZE, 3),
            BuiltIn::NumWorkgroups => (NUM_GROUPS, 3),
            BuiltIn::GlobalOffset => (GLOBAL_OFFSET, 3),
            BuiltIn::GlobalLinearId => (GLOBAL_LINEAR_ID, 1),
            BuiltIn::LocalInvocationIndex => (LOCAL_LINEAR_ID, 1),
            BuiltIn::WorkDim => (WORK_DIM, 1),
            BuiltIn::SubgroupSize => (SUB_GROUP_SIZE, 1),
            BuiltIn::SubgroupMaxSize => (MAX_SUB_GROUP_SIZE, 1),
            BuiltIn::NumSubgroups => (NUM_SUB_GROUPS, 1),
            BuiltIn::NumEnqueuedSubgroups => (ENQUEUED_NUM_SUB_GROUPS, 1),
            BuiltIn::SubgroupId => (SUB_GROUP_ID, 1),
            BuiltIn::SubgroupLocalInvocationId => (SUB_GROUP_LOCAL_ID, 1),
            other => {
                return Err(CompileError::Unsupported(format!(
                    "the built-in variable {other:?}"
                )))
            }
        };
        self.s.builtins_used |= ((1u64 << n) - 1) << first;
        let ts = self.result_types(inst)?;
        let mut out = Vec::new();
        // In a work-item loop, the components of the vector nothing reads
        // (`continuation::plan::ids_read`) are never made.
        let unread = |c: &crate::translate::continuation::Cont, k: usize| {
            let read = inst.result_id.and_then(|r| c.plan.components.get(&r));
            n > 1 && read.is_some_and(|m| m & (1 << k) == 0)
        };
        for (k, t) in ts.iter().enumerate().take(n) {
            // A work-item loop's own ids are values of its head.
            let id = self.cont.as_ref().and_then(|c| c.ids.get(&(first + k)));
            let v = if let Some(v) = id {
                *v
            } else if self.cont.as_ref().is_some_and(|c| unread(c, k)) {
                self.b.ins().iconst(types::I64, 0)
            } else if self.cont.is_some() && builtin::per_item(first + k) {
                return Err(CompileError::Internal(format!(
                    "built-in {b:?} read by a work-item loop that does not count it"
                )));
            } else {
                self.b.ins().load(
                    types::I64,
                    super::function::fixed(),
                    self.ctx,
                    CTX_BUILTINS + 8 * (first + k) as i32,
                )
            };
            out.push(if *t == types::I64 {
                v
            } else {
                self.b.ins().ireduce(*t, v)
            });
        }
        Ok(out)
    }

    /// `base` advanced by the indices of an access chain from operand
    /// `from`, starting at type `ty` (for `Ptr` chains the first index
    /// steps over whole `ty`s).
    fn chain(
        &mut self,
        mut ptr: Value,
        mut ty: Word,
        inst: &Instruction,
        from: usize,
        ptr_chain: bool,
    ) -> Result<Value, CompileError> {
        for k in from..inst.operands.len() {
            let idx_id = self.id(inst, k)?;
            if ptr_chain && k == from {
                let size = self.m.layout(ty)?.size;
                ptr = self.advance(ptr, idx_id, size)?;
                continue;
            }
            match self.m.ty(ty)?.clone() {
                Type::Struct { .. } => {
                    let i = self.const_u64(idx_id)?;
                    let offs = self.m.member_offsets(ty)?;
                    let off = *offs.get(i as usize).ok_or_else(|| {
                        CompileError::Invalid(format!("member {i} of a struct of {}", offs.len()))
                    })?;
                    ptr = self.b.ins().iadd_imm_s(ptr, off as i64);
                    ty = self.m.part_type(ty, i)?;
                }
                Type::Array { elem, len } => {
                    // Only run-time indices: a constant one at the end is
                    // the compiler's address arithmetic (clang addresses a
                    // struct's padding as one past an array's end).
                    if self.s.checked && self.const_u64(idx_id).is_err() {
                        self.index_check(idx_id, len)?;
                    }
                    let size = self.m.layout(elem)?.size;
                    ptr = self.advance(ptr, idx_id, size)?;
                    ty = elem;
                }
                Type::Vector { elem, .. } => {
                    let size = self.m.layout(elem)?.size;
                    ptr = self.advance(ptr, idx_id, size)?;
                    ty = elem;
                }
                t => {
                    return Err(CompileError::Invalid(format!(
                        "an access chain into a {t:?}"
                    )))
                }
            }
        }
        Ok(ptr)
    }

    /// In the checked build: reports an index into an array of `len`
    /// elements that is past its end (or negative).
    fn index_check(&mut self, index: Word, len: u64) -> Result<(), CompileError> {
        let i = self.get1(index)?;
        let i = if self.b.func.dfg.value_type(i) == types::I64 {
            i
        } else {
            self.b.ins().sextend(types::I64, i)
        };
        let bad = self
            .b
            .ins()
            .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, i, len as i64);
        let report = self.b.create_block();
        self.b.set_cold_block(report);
        let cont = self.b.create_block();
        self.b.ins().brif(bad, report, &[], cont, &[]);
        self.b.switch_to_block(report);
        let site = self.site();
        let args = [
            self.ctx,
            i,
            self.b.ins().iconst(types::I64, len as i64),
            self.b.ins().iconst(types::I32, site),
        ];
        self.helper("clsync_index_exceeds", &args);
        self.b.ins().jump(cont, &[]);
        self.b.switch_to_block(cont);
        Ok(())
    }

    /// In the checked build: reports a load or store whose pointer is not
    /// aligned as the instruction's `Aligned` memory operand (at operand
    /// `at`) says; the access itself is still made, as on the CPU.
    fn check_alignment(&mut self, inst: &Instruction, at: usize, ptr: Value, write: bool) {
        let align = match (inst.operands.get(at), inst.operands.get(at + 1)) {
            (Some(Operand::MemoryAccess(m)), Some(Operand::LiteralBit32(a)))
                if m.contains(MemoryAccess::ALIGNED) =>
            {
                *a as i64
            }
            _ => return,
        };
        if !self.s.checked || align <= 1 || !(align as u64).is_power_of_two() {
            return;
        }
        // An element of a module-scope array (a kernel's `local` tile) is
        // as aligned as its size's power of two: no test.
        let pointer = match inst.operands.first() {
            Some(Operand::IdRef(p)) => self.aligned.get(p).copied(),
            _ => None,
        };
        if pointer.is_some_and(|a| a >= align as u64) {
            return;
        }
        let low = self.b.ins().band_imm_s(ptr, align - 1);
        let report = self.b.create_block();
        self.b.set_cold_block(report);
        let cont = self.b.create_block();
        self.b.ins().brif(low, report, &[], cont, &[]);
        self.b.switch_to_block(report);
        let site = self.site();
        let args = [
            self.ctx,
            ptr,
            self.b.ins().iconst(types::I64, align),
            self.b.ins().iconst(types::I32, write as i64),
            self.b.ins().iconst(types::I32, site),
        ];
        self.helper("clsync_misaligned", &args);
        self.b.ins().jump(cont, &[]);
        self.b.switch_to_block(cont);
    }

    /// The alignment an access chain's result has whatever its index, in
    /// a checked build, where it is one element of a module-scope
    /// variable (each has a slot of its own, at offset 0): a `local` or
    /// `constant` array's element (`AccessChain var i`, `PtrAccessChain
    /// var 0 i`), or the variable's `i`th whole (`PtrAccessChain var i`).
    /// The largest power of two that divides the element's size.
    fn element_aligned(
        &self,
        base: Word,
        pointee: Word,
        inst: &Instruction,
        ptr_chain: bool,
    ) -> Result<Option<u64>, CompileError> {
        if !self.m.globals.iter().any(|g| g.id == base) {
            return Ok(None);
        }
        let array = |fx: &Self| match fx.m.ty(pointee) {
            Ok(Type::Array { elem, .. }) => Some(*elem),
            _ => None,
        };
        let elem = match (ptr_chain, inst.operands.len()) {
            (false, 2) => array(self),
            (true, 2) => Some(pointee),
            (true, 3) if self.const_u64(self.id(inst, 1)?).ok() == Some(0) => array(self),
            _ => None,
        };
        let Some(elem) = elem else { return Ok(None) };
        let size = self.m.layout(elem)?.size;
        Ok((size > 0).then(|| 1 << size.trailing_zeros()))
    }

    /// `ptr + index * size`, the index sign-extended.
    fn advance(&mut self, ptr: Value, index: Word, size: u64) -> Result<Value, CompileError> {
        if let Ok(c) = self.const_u64(index) {
            let bits = match self.m.ty(self.type_of(index)?)? {
                Type::Int(w) => *w,
                _ => 64,
            };
            let c = if bits < 64 {
                ((c << (64 - bits)) as i64) >> (64 - bits)
            } else {
                c as i64
            };
            return Ok(self.b.ins().iadd_imm_s(ptr, c.wrapping_mul(size as i64)));
        }
        let i = self.get1(index)?;
        let i = if self.b.func.dfg.value_type(i) == types::I64 {
            i
        } else {
            self.b.ins().sextend(types::I64, i)
        };
        let scaled = self.b.ins().imul_imm_s(i, size as i64);
        Ok(self.b.ins().iadd(ptr, scaled))
    }

    /// Loads a value of type `ty` at `ptr`, whose slot is `slot_of`'s
    /// where given (see [`address_in`](Self::address_in)).
    pub fn load_value(
        &mut self,
        ptr: Value,
        slot_of: Option<Value>,
        ty: Word,
        kind: AccessKind,
        storage: StorageClass,
    ) -> Result<Vec<Value>, CompileError> {
        let size = self.m.layout(ty)?.size;
        let addr = self.address_in(ptr, slot_of.unwrap_or(ptr), size, kind, storage);
        let mut out = Vec::new();
        let mut lanes = Vec::new();
        for leaf in self.m.leaves(ty)? {
            if super::half::is_half(self.m, leaf.ty) {
                lanes.push(self.note_access(ptr, addr, leaf.offset, 2, None));
                out.push(self.half_at(addr, leaf.offset));
                continue;
            }
            let t = cl_type(self.m, leaf.ty)?;
            lanes.push(self.note_access(ptr, addr, leaf.offset, t.bytes() as u64, None));
            out.push(self.b.ins().load(t, mem(), addr, leaf.offset as i32));
        }
        if self.s.checked {
            self.pending = Some(lanes);
        }
        Ok(out)
    }

    /// Stores `v`, a value of type `ty` whose shadow is `lanes` (empty:
    /// initialized), at `ptr`.
    pub fn store_value(
        &mut self,
        ptr: Value,
        slot_of: Option<Value>,
        ty: Word,
        v: &[Value],
        lanes: &[Option<Value>],
        storage: StorageClass,
    ) -> Result<(), CompileError> {
        let size = self.m.layout(ty)?.size;
        let slot_of = slot_of.unwrap_or(ptr);
        let addr = self.address_in(ptr, slot_of, size, AccessKind::Write, storage);
        for (k, (leaf, x)) in self.m.leaves(ty)?.iter().zip(v).enumerate() {
            let half;
            let x = if super::half::is_half(self.m, leaf.ty) {
                half = self.half_bits(*x);
                &half
            } else {
                x
            };
            let n = self.b.func.dfg.value_type(*x).bytes() as u64;
            let lane = lanes.get(k).copied().flatten();
            self.note_access(ptr, addr, leaf.offset, n, Some((*x, lane)));
            self.b.ins().store(mem(), *x, addr, leaf.offset as i32);
        }
        Ok(())
    }

    /// Translates `inst` if it is a memory instruction; false if not.
    pub fn memory(&mut self, inst: &Instruction) -> Result<bool, CompileError> {
        let op = inst.class.opcode;
        match op {
            Op::Load => {
                let p = self.id(inst, 0)?;
                if let Some(b) = self.builtin_of(p) {
                    let v = self.load_builtin(inst, b)?;
                    self.def(inst, v);
                    return Ok(true);
                }
                if self.promoted.contains_key(&p) {
                    let v = self.load_promoted(p);
                    self.def(inst, v);
                    return Ok(true);
                }
                let (_, storage) = self.pointee(p)?;
                self.check_address(p);
                let ptr = self.get1(p)?;
                self.check_alignment(inst, 1, ptr, false);
                let slot_of = self.root_value(p)?;
                self.lvalue_load = inst
                    .result_id
                    .is_some_and(|r| self.lvalue_loads.contains(&r));
                self.race_free_load = inst
                    .result_id
                    .and_then(|r| self.race_free_loads.get(&r).copied());
                self.owned_access = self.owned_pointers.contains(&p);
                let v = self.load_value(
                    ptr,
                    slot_of,
                    inst.result_type.unwrap_or(0),
                    AccessKind::Read,
                    storage,
                );
                self.lvalue_load = false;
                self.race_free_load = None;
                self.owned_access = false;
                let v = v?;
                self.def(inst, v);
            }
            Op::Store => {
                let p = self.id(inst, 0)?;
                if self.promoted.contains_key(&p) {
                    let value = self.id(inst, 1)?;
                    let v = self.get(value)?;
                    let lanes = self.lanes(value);
                    self.store_promoted(p, &v, &lanes);
                    return Ok(true);
                }
                let (ty, storage) = self.pointee(p)?;
                self.check_address(p);
                let ptr = self.get1(p)?;
                self.check_alignment(inst, 2, ptr, true);
                let value = self.id(inst, 1)?;
                let v = self.get(value)?;
                let lanes = if self.s.checked {
                    self.lanes(value)
                } else {
                    Vec::new()
                };
                let slot_of = self.root_value(p)?;
                self.owned_access = self.owned_pointers.contains(&p);
                self.race_free_store = self.race_free_stores.get(&p).copied();
                let stored = self.store_value(ptr, slot_of, ty, &v, &lanes, storage);
                self.owned_access = false;
                self.race_free_store = None;
                stored?;
            }
            Op::Variable => {
                let id = inst.result_id.unwrap_or(0);
                let slot =
                    *self.s.plan.of.get(&id).ok_or_else(|| {
                        CompileError::Internal(format!("variable %{id} has no slot"))
                    })?;
                let p = self
                    .b
                    .ins()
                    .iconst(types::I64, (slot << OFFSET_BITS) as i64);
                self.def(inst, vec![p]);
                if self.promotable.contains(&id) {
                    let (ty, _) = self.pointee(id)?;
                    let init = match inst.operands.get(1) {
                        Some(_) => {
                            let w = self.id(inst, 1)?;
                            Some((self.get(w)?, self.lanes(w)))
                        }
                        None => None,
                    };
                    self.promote(id, ty, init)?;
                } else if inst.operands.len() > 1 {
                    let init = self.get(self.id(inst, 1)?)?;
                    let (ty, _) = self.pointee(id)?;
                    self.store_value(p, None, ty, &init, &[], StorageClass::Function)?;
                }
            }
            Op::AccessChain
            | Op::InBoundsAccessChain
            | Op::PtrAccessChain
            | Op::InBoundsPtrAccessChain => {
                let base = self.id(inst, 0)?;
                let (ty, _) = self.pointee(base)?;
                let p = self.get1(base)?;
                let ptr_chain = matches!(op, Op::PtrAccessChain | Op::InBoundsPtrAccessChain);
                let r = self.chain(p, ty, inst, 1, ptr_chain)?;
                if let (false, Some(id)) = (self.s.checked, inst.result_id) {
                    let root = self.roots.get(&base).copied().unwrap_or(base);
                    self.roots.insert(id, root);
                }
                if let (true, Some(id)) = (self.s.checked, inst.result_id) {
                    if let Some(a) = self.element_aligned(base, ty, inst, ptr_chain)? {
                        self.aligned.insert(id, a);
                    }
                }
                self.def(inst, vec![r]);
            }
            Op::CopyMemory | Op::CopyMemorySized => {
                let dst = self.id(inst, 0)?;
                let src = self.id(inst, 1)?;
                let size = if op == Op::CopyMemory {
                    let (ty, _) = self.pointee(dst)?;
                    let s = self.m.layout(ty)?.size;
                    self.b.ins().iconst(types::I64, s as i64)
                } else {
                    let s = self.get1(self.id(inst, 2)?)?;
                    if self.b.func.dfg.value_type(s) == types::I64 {
                        s
                    } else {
                        self.b.ins().uextend(types::I64, s)
                    }
                };
                let (d, s) = (self.get1(dst)?, self.get1(src)?);
                let site = self.site();
                let site = self.b.ins().iconst(types::I32, site);
                let mask = self.significant_bytes(src);
                let mask = self.b.ins().iconst(types::I32, mask as i64);
                let ctx = self.ctx;
                self.helper("clsync_memcpy", &[ctx, d, s, size, site, mask]);
                self.check_status();
            }
            Op::LifetimeStart | Op::LifetimeStop => {}
            Op::GroupAsyncCopy => {
                let dst = self.id(inst, 1)?;
                let (elem, storage) = self.pointee(dst)?;
                let size = self.m.layout(elem)?.size as i64;
                let d = self.get1(dst)?;
                let s = self.get1(self.id(inst, 2)?)?;
                let n = self.get1(self.id(inst, 3)?)?;
                let stride = self.get1(self.id(inst, 4)?)?;
                let event = self.get1(self.id(inst, 5)?)?;
                let wide = |fx: &mut Self, v: Value| {
                    if fx.b.func.dfg.value_type(v) == types::I64 {
                        v
                    } else {
                        fx.b.ins().uextend(types::I64, v)
                    }
                };
                let (n, stride) = (wide(self, n), wide(self, stride));
                let one = self.b.ins().iconst(types::I64, 1);
                // The stride applies to the global side: the source when
                // copying into local memory, else the destination.
                let (dst_stride, src_stride) = if storage == StorageClass::Workgroup {
                    (one, stride)
                } else {
                    (stride, one)
                };
                let site = self.site();
                let args = [
                    self.ctx,
                    d,
                    s,
                    self.b.ins().iconst(types::I64, size),
                    n,
                    dst_stride,
                    src_stride,
                    event,
                    self.b.ins().iconst(types::I32, site),
                ];
                let e = self.helper("clsync_async_copy", &args)[0];
                self.def(inst, vec![e]);
                self.check_status();
            }
            Op::GroupWaitEvents => {
                let n = self.get1(self.id(inst, 1)?)?;
                let n = if self.b.func.dfg.value_type(n) == types::I64 {
                    n
                } else {
                    self.b.ins().uextend(types::I64, n)
                };
                let list = self.get1(self.id(inst, 2)?)?;
                let site = self.site();
                let args = [self.ctx, n, list, self.b.ins().iconst(types::I32, site)];
                self.helper("clsync_wait_events", &args);
                self.check_status();
            }
            _ => return self.atomic(inst),
        }
        Ok(true)
    }
}

/// The code of an address space in a fault's `kind` argument (bits 8 and
/// up): what Oclgrind's headline names for a pointer that points nowhere.
pub(super) fn space_code(storage: StorageClass) -> i64 {
    match storage {
        StorageClass::CrossWorkgroup => 1,
        StorageClass::Workgroup => 2,
        StorageClass::Function => 3,
        StorageClass::UniformConstant => 4,
        _ => 0,
    }
}
