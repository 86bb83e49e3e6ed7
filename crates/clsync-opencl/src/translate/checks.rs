//! The checked build's report of each plain access to the runtime
//! (`clsync_check_access`), and the inline tests that spare the call where
//! it would find nothing: an in-bounds read of an object nothing in the
//! launch writes, a race-free read of written local memory, and (for
//! `atomics`) a quiet atomic on written bytes.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{self, types, BlockArg, InstBuilder, MemFlagsData, Value};

use super::function::Fx;
use super::intervals::Proof;
use crate::exec::ctx::{
    builtin, CTX_BUILTINS, CTX_QUIET, CTX_RACE_FREE, CTX_SHADOWS, OFFSET_BITS, OFFSET_MASK,
    QUIET_OWNED, QUIET_READS, RACE_FREE, RACE_FREE_1D,
};

/// What lets an access go unrecorded ([`Fx::unrecorded`]).
#[derive(Clone, Copy)]
enum Gate {
    /// The launch's mark of the buffer (`translate::slices`).
    Buffer,
    /// The group's bit of [`ItemCtx::race_free`](crate::exec::ctx::ItemCtx::race_free).
    Proof(u64),
    /// The group's [`RACE_FREE`], in a group whose local size is at most
    /// this in dimension 0 and 1 in dimension 2 (`intervals::Proof::Rows`).
    Rows(u64),
}

impl Fx<'_, '_> {
    /// In the checked build, reports the access of one scalar of `size`
    /// bytes at `offset` from `ptr` (native address `addr`) to the checker:
    /// a write (`store`: the value it stores, for uniform writes, and that
    /// value's shadow) or a read, for which it returns the shadow of the
    /// value read (an `i8`, nonzero when some byte was never written).
    pub fn note_access(
        &mut self,
        ptr: Value,
        addr: Value,
        offset: u64,
        size: u64,
        store: Option<(Value, Option<Value>)>,
    ) -> Option<Value> {
        if !self.s.checked {
            return None;
        }
        let write = store.is_some();
        let shadow = store.and_then(|s| s.1);
        let bits = match store.map(|s| s.0) {
            Some(v) => {
                let t = self.b.func.dfg.value_type(v);
                let v = if t.is_float() {
                    self.b.ins().bitcast(t.as_int(), MemFlagsData::new(), v)
                } else {
                    v
                };
                if t.bits() < 64 {
                    self.b.ins().uextend(types::I64, v)
                } else {
                    v
                }
            }
            None => self.b.ins().iconst(types::I64, 0),
        };
        let p = self.b.ins().iadd_imm_s(ptr, offset as i64);
        let a = self.b.ins().iadd_imm_s(addr, offset as i64);
        let n = self.b.ins().iconst(types::I64, size as i64);
        // 2: a read that only feeds a store of the value back; 4: a read
        // of local memory that races with nothing, 6: one that does in a
        // group of one dimension (`intervals`).
        let code = if write {
            1
        } else if let Some(proof) = self.race_free_load {
            match proof {
                Proof::Always => 4,
                Proof::OneDimensional => 6,
                // (A load takes no proof by rows: `intervals::race_free`.)
                Proof::Rows(_) => 0,
            }
        } else if self.lvalue_load {
            2
        } else {
            0
        };
        let w = self.b.ins().iconst(types::I32, code);
        let site = self.site();
        let site = self.b.ins().iconst(types::I32, site);
        let ctx = self.ctx;
        let sh = match shadow {
            Some(x) => self.b.ins().uextend(types::I32, x),
            None => self.b.ins().iconst(types::I32, 0),
        };
        let args = [ctx, p, a, n, w, site, sh, bits];
        let scalar = matches!(size, 1 | 2 | 4 | 8);
        let owned = self.owned_access && scalar;
        // A race-free store of local memory, where no atomic or copy
        // reaches it (`settled_reads`), as for the loads.
        let settled_store = self
            .race_free_store
            .filter(|_| scalar && self.settled_reads);
        let ok = match self.in_bounds {
            Some(ok) if !write || owned || settled_store.is_some() => ok,
            _ => {
                let r = self.helper("clsync_check_access", &args)[0];
                return (!write).then(|| self.b.ins().ireduce(types::I8, r));
            }
        };
        let call = self.b.create_block();
        let join = self.b.create_block();
        let read = self.b.append_block_param(join, types::I8);
        if owned || (write && settled_store.is_some()) {
            let gate = match settled_store.filter(|_| !owned) {
                None => Gate::Buffer,
                Some(Proof::Always) => Gate::Proof(RACE_FREE),
                Some(Proof::OneDimensional) => Gate::Proof(RACE_FREE_1D),
                Some(Proof::Rows(k)) => Gate::Rows(k),
            };
            let store = write.then_some(shadow);
            self.unrecorded(gate, ptr, offset, size, ok, store, call, join);
        } else if matches!(code, 4 | 6) && self.settled_reads && matches!(size, 1 | 2 | 4 | 8) {
            self.settled_read(ptr, offset, size, ok, code == 6, call, join);
        } else {
            // An in-bounds read of an object that the launch marks quiet
            // (no writer, all written by the host, readable) has nothing
            // to report and reads nothing uninitialized: no call.
            let table = self
                .b
                .ins()
                .load(types::I64, super::function::fixed(), ctx, CTX_QUIET);
            let slot = self.b.ins().ushr_imm_s(ptr, OFFSET_BITS as i64);
            let slot = self.b.ins().umin(slot, self.nslots);
            let at = self.b.ins().iadd(table, slot);
            let quiet = self
                .b
                .ins()
                .uload8(types::I32, super::function::fixed(), at, 0);
            let quiet = self.b.ins().band_imm_s(quiet, i64::from(QUIET_READS));
            let ok = self.b.ins().uextend(types::I32, ok);
            let quiet = self.b.ins().band(quiet, ok);
            let clean = self.b.ins().iconst(types::I8, 0);
            self.b
                .ins()
                .brif(quiet, join, &[BlockArg::Value(clean)], call, &[]);
        }
        self.b.switch_to_block(call);
        let r = self.helper("clsync_check_access", &args)[0];
        let r = self.b.ins().ireduce(types::I8, r);
        self.b.ins().jump(join, &[BlockArg::Value(r)]);
        self.b.switch_to_block(join);
        (!write).then_some(read)
    }

    /// The inline test of an access of `size` bytes at `offset` from
    /// `ptr`, in bounds where `ok`, that the checker need not record: one
    /// through a pointer of a buffer the build proves
    /// (`translate::slices`), or a store of local memory that races with
    /// nothing (`translate::intervals`), as `gate` says. It goes to `join`
    /// with a clean shadow, and no call, where the launch takes the proof
    /// (for a buffer, its [`QUIET_OWNED`] and the group's [`RACE_FREE`];
    /// else the group's bit of `gate`) and memory's shadow allows; else to
    /// `call`. A read needs every byte written (or no shadow: the host
    /// wrote the buffer); a write (`store`: the stored value's shadow,
    /// `None` where it is clean) needs a clean value, and marks its bytes
    /// written.
    ///
    /// The call would have found nothing to report: no other work-item's
    /// access races with it, so the checker's records of the bytes would
    /// answer nothing (what a later interval's access finds there is
    /// ordered before it by a barrier, or is its own work-item's); the
    /// launch found a buffer used as the host allowed; the bytes are in
    /// bounds; and the shadow is kept here as the call keeps it. (Only
    /// this work-item writes these bytes in its interval, so the plain
    /// store of their shadow meets no other access.)
    #[allow(clippy::too_many_arguments)]
    fn unrecorded(
        &mut self,
        gate: Gate,
        ptr: Value,
        offset: u64,
        size: u64,
        ok: Value,
        store: Option<Option<Value>>,
        call: ir::Block,
        join: ir::Block,
    ) {
        let fixed = super::function::fixed();
        let slot = self.b.ins().ushr_imm_s(ptr, OFFSET_BITS as i64);
        let slot = self.b.ins().umin(slot, self.nslots);
        let taken = self
            .b
            .ins()
            .uload8(types::I32, fixed, self.ctx, CTX_RACE_FREE);
        let go = match gate {
            Gate::Buffer => {
                let table = self.b.ins().load(types::I64, fixed, self.ctx, CTX_QUIET);
                let at = self.b.ins().iadd(table, slot);
                let quiet = self.b.ins().uload8(types::I32, fixed, at, 0);
                let owned = self
                    .b
                    .ins()
                    .ushr_imm_s(quiet, QUIET_OWNED.trailing_zeros() as i64);
                let go = self.b.ins().band(owned, taken);
                self.b.ins().band_imm_s(go, RACE_FREE as i64)
            }
            Gate::Proof(bit) => {
                let go = self.b.ins().band_imm_s(taken, bit as i64);
                let go = self.b.ins().icmp_imm_s(IntCC::NotEqual, go, 0);
                self.b.ins().uextend(types::I32, go)
            }
            Gate::Rows(k) => {
                // The group's local size: at most `k` in dimension 0, 1
                // in dimension 2.
                let size = |d: usize| CTX_BUILTINS + 8 * (builtin::LOCAL_SIZE + d) as i32;
                let x = self.b.ins().load(types::I64, fixed, self.ctx, size(0));
                let z = self.b.ins().load(types::I64, fixed, self.ctx, size(2));
                let x = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::UnsignedLessThanOrEqual, x, k as i64);
                let z = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::UnsignedLessThanOrEqual, z, 1);
                let go = self.b.ins().band(x, z);
                let go = self.b.ins().uextend(types::I32, go);
                let taken = self.b.ins().band_imm_s(taken, RACE_FREE as i64);
                self.b.ins().band(go, taken)
            }
        };
        let ok = self.b.ins().uextend(types::I32, ok);
        let mut go = self.b.ins().band(go, ok);
        if let Some(Some(poisoned)) = store {
            let clean = self.b.ins().icmp_imm_s(IntCC::Equal, poisoned, 0);
            let clean = self.b.ins().uextend(types::I32, clean);
            go = self.b.ins().band(go, clean);
        }
        let entry = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(go, entry, &[], call, &[]);
        self.b.switch_to_block(entry);
        // The slot's shadow: none where the host wrote the buffer.
        let shadow = self.slot_shadow(slot);
        let bytes = self.b.create_block();
        self.b.ins().brif(shadow, bytes, &[], done, &[]);
        self.b.switch_to_block(bytes);
        let (at, ty, all) = self.shadow_word(shadow, ptr, size);
        let flags = MemFlagsData::new().with_notrap();
        if store.is_some() {
            let ones = self.b.ins().iconst(ty, all);
            self.b.ins().store(flags, ones, at, offset as i32);
            self.b.ins().jump(done, &[]);
        } else {
            let v = self.b.ins().load(ty, flags, at, offset as i32);
            let written = self.b.ins().icmp_imm_s(IntCC::Equal, v, all);
            self.b.ins().brif(written, done, &[], call, &[]);
        }
        self.b.switch_to_block(done);
        let zero = self.b.ins().iconst(types::I8, 0);
        self.b.ins().jump(join, &[BlockArg::Value(zero)]);
    }

    /// The inline test of a race-free read of local memory (code 4 of
    /// `clsync_check_access`) of `size` bytes at `offset` from `ptr`, in
    /// bounds where `ok`: it goes to `join` with a clean shadow, and no
    /// call, where the launch takes the build's proofs and every byte's
    /// shadow says a value was written there ([`written`](Self::written));
    /// else to `call`.
    ///
    /// The call would have found nothing to do. Memory's shadow of local
    /// memory is fresh for each group (a checked launch's local memory
    /// is), and a byte of it is set only by a write of an unpoisoned
    /// value, which the checker recorded as a plain write of those bytes
    /// in this group (no atomic or async copy of the build reaches local
    /// memory in a launch that runs this function:
    /// `Shared::settled_by_writes`). So the read reads a written value,
    /// and the checker's cells of the bytes are settled, where the
    /// runtime skips the read too (`checker::engine::race_free_read_at`).
    #[allow(clippy::too_many_arguments)]
    fn settled_read(
        &mut self,
        ptr: Value,
        offset: u64,
        size: u64,
        ok: Value,
        one_d: bool,
        call: ir::Block,
        join: ir::Block,
    ) {
        let clean = self.b.create_block();
        let proof = match one_d {
            true => RACE_FREE_1D,
            false => RACE_FREE,
        };
        self.written(proof, ptr, offset, size, ok, clean, call);
        self.b.switch_to_block(clean);
        let zero = self.b.ins().iconst(types::I8, 0);
        self.b.ins().jump(join, &[BlockArg::Value(zero)]);
    }

    /// Goes to `yes` where a checked launch takes the build's proofs of
    /// kind `proof` (a bit of
    /// [`ItemCtx::race_free`](crate::exec::ctx::ItemCtx::race_free)), the
    /// `size` bytes (1, 2, 4 or 8) at `offset` from `ptr` are in bounds
    /// (`ok`) and memory's shadow says each was written, by a value that
    /// depends on nothing unwritten; else to `no`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn written(
        &mut self,
        proof: u64,
        ptr: Value,
        offset: u64,
        size: u64,
        ok: Value,
        yes: ir::Block,
        no: ir::Block,
    ) {
        let fixed = super::function::fixed();
        let taken = self
            .b
            .ins()
            .uload8(types::I32, fixed, self.ctx, CTX_RACE_FREE);
        let taken = self.b.ins().band_imm_s(taken, proof as i64);
        let ok = self.b.ins().uextend(types::I32, ok);
        let ok = self.b.ins().imul_imm_s(ok, proof as i64);
        let go = self.b.ins().band(taken, ok);
        let entry = self.b.create_block();
        self.b.ins().brif(go, entry, &[], no, &[]);
        self.b.switch_to_block(entry);
        // In bounds: the slot is in the table, which has a shadow per
        // slot.
        let slot = self.b.ins().ushr_imm_s(ptr, OFFSET_BITS as i64);
        let shadow = self.slot_shadow(slot);
        let bytes = self.b.create_block();
        self.b.ins().brif(shadow, bytes, &[], no, &[]);
        self.b.switch_to_block(bytes);
        let (at, ty, all) = self.shadow_word(shadow, ptr, size);
        let flags = MemFlagsData::new().with_notrap();
        let v = self.b.ins().load(ty, flags, at, offset as i32);
        let written = self.b.ins().icmp_imm_s(IntCC::Equal, v, all);
        self.b.ins().brif(written, yes, &[], no, &[]);
    }

    /// The shadow of the object in slot `slot` (one of the table's): its
    /// first byte, or null where it has none.
    fn slot_shadow(&mut self, slot: Value) -> Value {
        let fixed = super::function::fixed();
        let table = self.b.ins().load(types::I64, fixed, self.ctx, CTX_SHADOWS);
        let idx = self.b.ins().ishl_imm_s(slot, 3);
        let at = self.b.ins().iadd(table, idx);
        self.b
            .ins()
            .load(types::I64, MemFlagsData::trusted(), at, 0)
    }

    /// Where in `shadow`, its object's shadow, the shadow of the `size`
    /// bytes (1, 2, 4 or 8) at `ptr` lies (before the access's offset),
    /// the integer type that holds them, and its value where each is 1
    /// (written, and not poisoned).
    fn shadow_word(&mut self, shadow: Value, ptr: Value, size: u64) -> (Value, types::Type, i64) {
        let off = self.b.ins().band_imm_s(ptr, OFFSET_MASK as i64);
        let at = self.b.ins().iadd(shadow, off);
        let ty = types::Type::int(size as u16 * 8).expect("1, 2, 4 or 8 bytes");
        let all = (0..size).fold(0i64, |a, k| a | 1 << (8 * k));
        (at, ty, all)
    }
}
