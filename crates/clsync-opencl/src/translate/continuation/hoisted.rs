//! Values of the group, read once per interval: in an unchecked function of
//! lane batches for one state `k`, a value kept across barrier `k` that is
//! the same in every work-item of the group (`uniform::analyze_group`: a
//! loop counter, a pointer every work-item swaps alike, the group's
//! constants) is loaded once, in the block between the function's
//! prologue and its work-item loop (`Cont::group_block`, which a chained
//! interval goes back to), from the group's first frame, rather than from
//! each batch's. What the code computes of such values alone (`i + 1 < n`,
//! `src + 4 * (l - s)`'s base) is then the loop's invariant, which
//! Cranelift hoists out of it: the barrier loop's counter is one compare
//! per interval instead of a load, an add and a compare per batch.
//!
//! Every batch still stores the value where it reaches the barrier (the
//! same value in every work-item), so the first frame holds it whichever
//! batches or work-items of the group ran last; and a function of one
//! work-item per iteration, which a group may run the next state with,
//! reads each work-item's frame as before.

use clsync_spirv::spirv::Word;
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{InstBuilder, Type as ClType, Value};

use super::Place;
use crate::translate::function::{mem, Fx};

impl Fx<'_, '_> {
    /// Whether `id`, kept across barrier `k` as `place`, is loaded once
    /// per interval where the work-items resume there (see the module
    /// docs).
    pub(super) fn hoists(&self, id: Word, k: u32, place: Place) -> bool {
        let batch = self.cont.as_ref().and_then(|c| c.batch.as_ref());
        matches!(place, Place::All)
            && self.resumed_state() == Some(k)
            && batch.is_some_and(|b| !b.group_varying.contains(&id))
    }

    /// A load of the value at frame offset `off` (kept as `Place::All`) of
    /// type `t` from the group's first frame, made in the group's block
    /// before its jump to the loop.
    pub(super) fn load_hoisted(&mut self, t: ClType, off: i32) -> Value {
        let c = self.cont.as_ref().expect("a continuation build");
        let (block, first) = c.group_block.expect("a group block");
        let rows = self.rows();
        let (_, at) = self.places(&[first; super::LANES], rows, Place::All, off)[0];
        let jump = self
            .b
            .func
            .layout
            .last_inst(block)
            .expect("the group block ends in its jump");
        let mut pos = FuncCursor::new(self.b.func).at_inst(jump);
        pos.ins().load(t, mem(), first, at)
    }
}
