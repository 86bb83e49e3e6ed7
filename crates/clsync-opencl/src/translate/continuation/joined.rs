//! Packed joins: where a region that the batch may run together
//! (`continuation::together`) meets the rest of the code again, a varying
//! 32-bit phi of its join is vector variables of the lanes (four to a
//! vector) instead of a variable per lane. The copy for the batch together defines it with
//! its packed value as it is; each lane's own copy (the batch's first
//! batch of a scan, where its lanes part) puts its lane in. After the join
//! the phi is packed: scan's chain `v = data[g]; if (l >= 1) v += data[g -
//! 1]; if (l >= 2) ...; dst[l] = v` keeps `v` in one vector register from
//! the first load to the store, where each join took the vector apart into
//! scalars and the store put them back together (a third of the
//! state's samples in `perf`). Each lane's scalar is taken out of the
//! vector where that lane's own code uses it.

use clsync_spirv::spirv::Word;
use cranelift_codegen::ir::{InstBuilder, Value};
use cranelift_frontend::Variable;

use super::packed::VECTOR_LANES;
use super::LANES;
use crate::translate::function::Fx;
use crate::CompileError;

impl Fx<'_, '_> {
    /// Whether phi `id` of the join of a region with a copy for the batch
    /// together is joined as one vector: varying, a 32-bit `int` or
    /// `float`, not kept across a barrier (whose lanes the frames keep).
    pub(super) fn joins_packed(&self, id: Word, region: usize) -> bool {
        let Some(c) = self.cont.as_ref() else {
            return false;
        };
        let together = self
            .serial()
            .is_some_and(|s| !s.regions[region].together.is_empty());
        together
            && !c.plan.cross.contains(&id)
            && self.varying_lane(id).is_some()
            && self
                .types_of
                .get(&id)
                .and_then(|ty| self.packable(*ty))
                .is_some()
    }

    /// Join phi `id`'s vector variables, if it is joined packed.
    pub(super) fn join_vector(&self, id: Word) -> Option<Vec<Variable>> {
        self.serial()?.join_vectors.get(&id).cloned()
    }

    /// On lane `j`'s edge to the join: puts lane value `x` of phi `id` in
    /// its vector (the first lane of a vector starts it: every lane's copy
    /// runs after the one before).
    pub(super) fn join_lane(&mut self, vars: &[Variable], j: usize, x: Value) {
        let t = self.b.func.dfg.value_type(x);
        let vector = t
            .by(VECTOR_LANES as u32)
            .expect("four 32-bit lanes make a vector");
        let var = vars[j / VECTOR_LANES];
        let v = match j % VECTOR_LANES {
            0 => self.b.ins().splat(vector, x),
            k => {
                let v = self.b.use_var(var);
                self.b.ins().insertlane(v, x, k as u8)
            }
        };
        self.b.def_var(var, v);
    }

    /// On the batch's edge to the join: phi `id`'s vectors are `v`'s,
    /// packed as it is, or made of its lanes.
    pub(super) fn join_together(&mut self, vars: &[Variable], v: Word) -> Result<(), CompileError> {
        let packed = self.packed_of(v)?;
        for (var, x) in vars.iter().zip(packed) {
            self.b.def_var(*var, x);
        }
        Ok(())
    }

    /// At the join: phi `id`, joined as vector variables `vars`, is packed,
    /// each lane its element (taken out only where a lane's code uses it).
    pub(super) fn join_packed(&mut self, id: Word, vars: &[Variable]) {
        let v: Vec<Value> = vars.iter().map(|var| self.b.use_var(*var)).collect();
        for j in 0..LANES {
            let x = self.packed_lane(&v, j);
            self.set_lane_value(id, j, vec![x]);
        }
        self.cont
            .as_mut()
            .and_then(|c| c.batch.as_mut())
            .expect("a batched build")
            .packed
            .insert(id, v);
    }
}
