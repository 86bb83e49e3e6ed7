//! Frames in rows of a batch's lanes: where every state of a kernel runs
//! as lane batches (`batch::all_batchable`), its frames are read by
//! batched functions alone, which lay a batch's [`LANES`] frames out as
//! one block of rows: the value at frame offset `off` (8 bytes a lane) has
//! its row at `LANES * off` in the block, lane `j`'s at `j * 8` in it. A
//! uniform value is stored once, at the row's start; a 32-bit value the
//! batch keeps packed (`packed`) is its vectors, one 16-byte store and
//! load each, so that an accumulator kept across barriers stays in vector
//! registers from one interval to the next. A launch runs every state of
//! such a kernel batched, or none (`translate::compile_kernels`).

use std::collections::HashMap;

use clsync_spirv::spirv::Word;
use cranelift_codegen::ir::{Type as ClType, Value};
use cranelift_frontend::Variable;

use super::batch::LANES;
use super::packed::{Packed, VECTORS, VECTOR_LANES};
use super::Place;
use crate::translate::function::Fx;

/// The packed values kept across barriers of a build with rows: each
/// one's vector variable, and the lanes defined so far of one defined lane
/// by lane.
#[derive(Default)]
pub(crate) struct RowState {
    pub vars: HashMap<Word, Vec<Variable>>,
    pub pending: HashMap<Word, Vec<Value>>,
}

impl Fx<'_, '_> {
    /// Whether this build lays frames out in rows.
    pub(super) fn rows(&self) -> bool {
        self.cont
            .as_ref()
            .and_then(|c| c.batch.as_ref())
            .is_some_and(|b| b.rows)
    }

    /// Whether `id` is kept across barriers as one vector (rows only).
    pub(in crate::translate) fn packed_cross(&self, id: Word) -> bool {
        self.cont
            .as_ref()
            .and_then(|c| c.batch.as_ref())
            .is_some_and(|b| b.rows && b.packed_cross.contains(&id))
    }

    /// Where a value at frame offset `off` kept as `place` is, as (base,
    /// offset) pairs: every place a store writes, the first the one a load
    /// reads.
    pub(super) fn places(
        &self,
        frames: &[Value],
        rows: bool,
        place: Place,
        off: i32,
    ) -> Vec<(Value, i32)> {
        let row = off * LANES as i32;
        match (rows, place) {
            (true, Place::Lane(j)) => vec![(frames[0], row + 8 * j as i32)],
            (true, Place::Vector(k)) => vec![(frames[0], row + 16 * k as i32)],
            (true, _) => vec![(frames[0], row)],
            (false, Place::Lane(j)) => vec![(frames[j], off)],
            (false, _) => frames.iter().map(|f| (*f, off)).collect(),
        }
    }

    /// The vector variables of packed value `id` kept across barriers,
    /// with its frame offset (a place like a scalar's, made on its first
    /// definition) and the vectors' type, made if needed from `t`, the
    /// lanes' type.
    fn row_vars(&mut self, id: Word, t: ClType) -> (Vec<Variable>, i32, ClType) {
        let vector = t
            .by(VECTOR_LANES as u32)
            .expect("four 32-bit lanes make a vector");
        let c = self.cont.as_mut().expect("a continuation build");
        if !c.vars.contains_key(&id) {
            // The place a scalar would have (one leaf), so that every
            // function lays the frame out alike whichever way it defines
            // the value first.
            let own = self.b.declare_var(t);
            c.vars.insert(id, vec![(own, c.frame_bytes, t)]);
            c.frame_bytes += 8;
        }
        let off = c.vars[&id][0].1;
        let rows = &mut c.batch.as_mut().expect("a batched build").rows_state;
        let vars = rows
            .vars
            .entry(id)
            .or_insert_with(|| (0..VECTORS).map(|_| self.b.declare_var(vector)).collect())
            .clone();
        (vars, off, vector)
    }

    /// The vector variables of packed `id` kept across barriers, if it is
    /// one and defined: what a barrier stores.
    pub(super) fn kept_vectors(&mut self, id: Word) -> Option<(Vec<Variable>, i32, ClType)> {
        if !self.packed_cross(id) {
            return None;
        }
        let t = self.cont.as_ref()?.vars.get(&id)?[0].2;
        Some(self.row_vars(id, t))
    }

    /// Defines packed `id`, kept across barriers, as `v`.
    pub(in crate::translate) fn def_row(&mut self, id: Word, v: Packed) {
        let t = self.b.func.dfg.value_type(v[0]).lane_type();
        let (vars, _, _) = self.row_vars(id, t);
        for (var, x) in vars.into_iter().zip(v) {
            self.b.def_var(var, x);
        }
    }

    /// Defines lane `j` of packed `id`, kept across barriers, as `x`: once
    /// every lane is, the vectors of them.
    pub(in crate::translate) fn def_row_lane(&mut self, id: Word, j: usize, x: Value) {
        let rows = &mut self
            .cont
            .as_mut()
            .and_then(|c| c.batch.as_mut())
            .expect("a batched build")
            .rows_state;
        let lanes = rows.pending.entry(id).or_default();
        if j == 0 {
            lanes.clear();
        }
        lanes.push(x);
        if lanes.len() < LANES {
            return;
        }
        let lanes = rows.pending.remove(&id).unwrap_or_default();
        let v = self.pack_lanes(&lanes);
        self.def_row(id, v);
    }

    /// Packed `id`'s vectors here, if it is kept across barriers so.
    pub(in crate::translate) fn use_row(&mut self, id: Word) -> Option<Packed> {
        if !self.packed_cross(id) {
            return None;
        }
        let vars = self
            .cont
            .as_ref()?
            .batch
            .as_ref()?
            .rows_state
            .vars
            .get(&id)
            .cloned()?;
        Some(vars.into_iter().map(|v| self.b.use_var(v)).collect())
    }
}
