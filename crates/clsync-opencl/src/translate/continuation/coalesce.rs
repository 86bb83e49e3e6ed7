//! Coalesced accesses of a lane batch: a load or store of a 4- or 8-byte
//! scalar whose lanes' addresses follow one another (`s[l]`, `in[g - 1]`,
//! `tb[k * 16 + tx]`: an address whose step from one lane to the next,
//! `Uniformity::steps`, is the scalar's size) is one access of the batch's
//! lanes' bytes (a 16-byte vector access for each 16 of them), with one
//! bounds check, instead of one a lane.
//!
//! The step is proved modulo the values' widths; a widening conversion of
//! an `int` id could still wrap between two lanes (an id past 2^31). So
//! the code compares the last lane's address with the first's and takes
//! the wide access only where they are exactly the span apart and the
//! whole span is inside the object; otherwise (and for any lane out of
//! bounds, so that the fault names the lane's own work-item) each lane
//! makes its own access as it would alone.

use clsync_spirv::spirv::{Op, Word};
use clsync_spirv::Instruction;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{self, types, BlockArg, InstBuilder, MemFlagsData, Value};

use super::batch::LANES;
use super::packed::{VECTORS, VECTOR_LANES};
use crate::translate::function::Fx;
use crate::CompileError;

impl Fx<'_, '_> {
    /// The step of varying `id` from one lane to the next, where known.
    fn lane_step(&self, id: Word) -> Option<i64> {
        let b = self.cont.as_ref()?.batch.as_ref()?;
        b.u.steps.get(&id).copied()
    }

    /// Translates `inst`, a load or a store of a batched build, as a
    /// coalesced access where it is one (see the module docs): true then.
    pub(super) fn coalesced(&mut self, inst: &Instruction) -> Result<bool, CompileError> {
        let op = inst.class.opcode;
        if !matches!(op, Op::Load | Op::Store) || self.copy_lane().is_some() {
            return Ok(false);
        }
        let p = self.id(inst, 0)?;
        let Some(step) = self.lane_step(p) else {
            return Ok(false);
        };
        if crate::translate::uniform::volatile(inst) {
            return Ok(false);
        }
        let (ty, _) = self.pointee(p)?;
        let leaves = self.m.leaves(ty)?;
        let [leaf] = leaves.as_slice() else {
            return Ok(false);
        };
        if crate::translate::half::is_half(self.m, leaf.ty) {
            return Ok(false);
        }
        let t = crate::translate::cl_type(self.m, leaf.ty)?;
        let size = t.bytes() as i64;
        if !(size == 4 || size == 8) || step != size || t.is_vector() {
            return Ok(false);
        }
        let Some(wide) = t.by(16 / size as u32) else {
            return Ok(false);
        };
        let per_vector = 16 / size as usize;
        let ptrs = self.per_lane(|fx, _| fx.get1(p))?;
        let root = match self.roots.get(&p).copied() {
            Some(r) => Some(self.per_one_lane(0, |fx| fx.get1(r))?),
            None => None,
        };
        // A 32-bit value packed in vectors stays so (see `packed`): a
        // load makes its vectors, a store of one stores them.
        let pack = per_vector == VECTOR_LANES;
        let stored = match op {
            Op::Store => Some(self.id(inst, 1)?),
            _ => None,
        };
        let packed_store = stored.and_then(|v| self.packed_value(v)).filter(|_| pack);
        let values = match (stored, &packed_store) {
            (Some(v), None) => self.per_lane(|fx, _| fx.get1(v))?,
            _ => Vec::new(),
        };
        let span = size * LANES as i64;
        let check = self.b.create_block();
        let slow = self.b.create_block();
        // The lanes one at a time, where they are not consecutive or not
        // all inside: out of the hot loop's way (cold blocks are laid out
        // at the function's end).
        self.b.set_cold_block(slow);
        let fast = self.b.create_block();
        let join = self.b.create_block();
        let d = self.b.ins().isub(ptrs[LANES - 1], ptrs[0]);
        let apart = self.b.ins().icmp_imm_s(IntCC::Equal, d, span - size);
        self.b.ins().brif(apart, check, &[], slow, &[]);

        self.b.switch_to_block(check);
        let (inside, native) = self.bounds(ptrs[0], root.unwrap_or(ptrs[0]), span as u64);
        self.b
            .ins()
            .brif(inside, fast, &[BlockArg::Value(native)], slow, &[]);

        // The lanes at once.
        self.b.switch_to_block(fast);
        let native = self.b.append_block_param(fast, types::I64);
        let flags = MemFlagsData::new().with_notrap();
        let mut results = Vec::new();
        for k in 0..LANES / per_vector {
            let at = (k * 16) as i32;
            match op {
                Op::Load if pack => {
                    let v = self.b.ins().load(wide, flags, native, at);
                    results.push(BlockArg::Value(v));
                }
                Op::Load => {
                    let v = self.b.ins().load(wide, flags, native, at);
                    for j in 0..per_vector {
                        results.push(BlockArg::Value(self.b.ins().extractlane(v, j as u8)));
                    }
                }
                _ if packed_store.is_some() => {
                    let v = packed_store.as_ref().expect("a packed value")[k];
                    self.b.ins().store(flags, v, native, at);
                }
                _ => {
                    let lanes = &values[k * per_vector..(k + 1) * per_vector];
                    let mut v = self.b.ins().splat(wide, lanes[0]);
                    for (j, x) in lanes.iter().enumerate().skip(1) {
                        v = self.b.ins().insertlane(v, *x, j as u8);
                    }
                    self.b.ins().store(flags, v, native, at);
                }
            }
        }
        self.b.ins().jump(join, &results);

        // Each lane alone: its blocks (each lane's checks and their ends)
        // are cold too.
        self.b.switch_to_block(slow);
        let first_new = self.b.func.dfg.num_blocks();
        self.per_lane(|fx, _| fx.instruction(inst))?;
        for b in first_new..self.b.func.dfg.num_blocks() {
            self.b.set_cold_block(ir::Block::from_u32(b as u32));
        }
        let mut alone = Vec::new();
        if let (Op::Load, Some(r)) = (op, inst.result_id) {
            let mut lanes = Vec::new();
            for j in 0..LANES {
                lanes.extend(self.value_in_lane(r, j).unwrap_or_default());
            }
            if pack {
                lanes = self.pack_lanes(&lanes);
            }
            alone.extend(lanes.into_iter().map(BlockArg::Value));
        }
        self.b.ins().jump(join, &alone);

        self.b.switch_to_block(join);
        if op == Op::Load && pack {
            let v: Vec<Value> = (0..VECTORS)
                .map(|_| self.b.append_block_param(join, wide))
                .collect();
            // The slow path defined the lanes: the vector replaces them.
            if let Some(r) = inst.result_id {
                for j in 0..LANES {
                    if let Some(b) = self.cont.as_mut().and_then(|c| c.batch.as_mut()) {
                        b.vals[j].remove(&r);
                    }
                }
            }
            self.def_packed(inst, v)?;
        } else if op == Op::Load {
            let params: Vec<Value> = (0..LANES)
                .map(|_| self.b.append_block_param(join, t))
                .collect();
            self.per_lane(|fx, j| {
                fx.def(inst, vec![params[j]]);
                Ok(())
            })?;
        }
        Ok(true)
    }
}
