//! Lane batches: a state's work-item loop that runs [`LANES`] consecutive
//! work-items of a row per iteration, each instruction once for the batch
//! where its value is uniform (see `translate::uniform`) and once per
//! work-item, in order, where it varies. The loop's bookkeeping (the
//! counters, the state's dispatch, the frame's step) and the uniform work
//! (a loop counter, an address every work-item reads, the bounds it is
//! checked against) are paid once per batch instead of once per work-item.
//!
//! Where a branch diverges, the batch's work-items run one at a time up to
//! where they meet again (see `serial`). A state runs so when each such
//! region of its interval qualifies, its interval makes no call (a called
//! function may print, whose order the work-items' interleaving would
//! change) and uses no `printf`, and the kernel keeps no private variable
//! in memory (the work-items of a batch would share the one block). A launch uses the batched function of a
//! state for a group whose local size along x is a multiple of
//! [`LANES`] (so a batch never leaves its row, and the y and z ids are
//! the batch's); other groups, and states that do not qualify, run the
//! work-item loop of one work-item per iteration.
//!
//! The work-items of a batch interleave: the second one's instruction runs
//! before the first one's next. OpenCL C orders nothing between the
//! work-items of an interval but atomics and fences, which still run in
//! each work-item's program order; two of them touching one location
//! unordered is a data race, whose outcome is undefined either way.
//!
//! Values of the batch's work-items live as Cranelift values per lane (or
//! packed in vectors of four: `packed`). In a kernel with a state that
//! cannot run in batches, those kept across a barrier go to each
//! work-item's own frame at the same offsets as in the one-work-item
//! functions, so that a group can switch between the two at any barrier;
//! a uniform one is stored to every frame and loaded from the first.
//! Where every state runs in batches, the frames are laid out in rows
//! instead (`rows`), and a launch runs every state batched or none.

use std::collections::{HashMap, HashSet};

use clsync_spirv::spirv::{Op, OpenclStd100Op as X, Word};
use clsync_spirv::{Function, Instruction, Module, Operand};
use cranelift_codegen::ir::{InstBuilder, Type as ClType, Value};
use cranelift_frontend::Variable;

use super::serial::Serial;
use super::Counters;
use crate::exec::ctx::builtin;
use crate::translate::function::Fx;
use crate::translate::uniform::Uniformity;
pub use crate::translate::uniform::LANES;
use crate::CompileError;

/// A batched build's state (see the module docs).
pub(crate) struct Batch {
    pub u: Uniformity,
    /// The lane being translated, or none while an instruction runs once
    /// for the batch (which then reads the first lane's values of any
    /// varying operand: the y and z ids of an id vector).
    pub lane: Option<usize>,
    /// Each lane's values of varying ids.
    pub vals: Vec<HashMap<Word, Vec<Value>>>,
    /// The variables of varying values kept across barriers, for lanes
    /// after the first (whose are the build's own, `Cont::vars`), at the
    /// same offsets in each lane's frame.
    pub vars: Vec<HashMap<Word, Vec<Variable>>>,
    /// Each lane's ids, loop counters and frame, swapped into the build's
    /// own while the lane is translated.
    pub ids: Vec<HashMap<usize, Value>>,
    pub counters: Vec<Option<Counters>>,
    pub frames: Vec<Value>,
    /// `j * stride` for each lane `j`, made constants with the stride.
    pub strides: Vec<Value>,
    /// The regions run one work-item at a time, and their translation.
    pub serial: super::serial::SerialState,
    /// Varying 32-bit values the batch has as one vector of its lanes
    /// (see `packed`), whose lanes are taken where a lane's code uses them.
    pub packed: HashMap<Word, super::packed::Packed>,
    /// The phis that are such vectors.
    pub packed_phis: HashSet<Word>,
    /// Whether frames are laid out in rows, the values kept across
    /// barriers as vectors there, and their variables (see `rows`).
    pub rows: bool,
    pub packed_cross: HashSet<Word>,
    pub rows_state: super::rows::RowState,
    /// See [`LanePlan::group_varying`].
    pub group_varying: HashSet<Word>,
}

impl Batch {
    pub fn new(plan: LanePlan) -> Batch {
        Batch {
            u: plan.u,
            serial: super::serial::SerialState::new(plan.serial),
            packed: HashMap::new(),
            packed_phis: plan.packed_phis,
            rows: plan.rows,
            packed_cross: plan.packed_cross,
            rows_state: Default::default(),
            group_varying: plan.group_varying,
            lane: None,
            vals: vec![HashMap::new(); LANES],
            vars: vec![HashMap::new(); LANES],
            ids: vec![HashMap::new(); LANES],
            counters: vec![None; LANES],
            frames: Vec::new(),
            strides: Vec::new(),
        }
    }
}

/// The ids that differ between the lanes of a batch by the lane's number
/// (the others are the batch's).
const STEPPED: [usize; 4] = [
    builtin::GLOBAL_ID,
    builtin::LOCAL_ID,
    builtin::GLOBAL_LINEAR_ID,
    builtin::LOCAL_LINEAR_ID,
];

/// What a batched build of a state knows of the kernel: its uniform
/// values, and the regions of the state's interval where the batch's
/// work-items part, which run one work-item at a time (`serial`).
#[derive(Debug, Default)]
pub(crate) struct LanePlan {
    pub u: Uniformity,
    pub serial: Vec<Serial>,
    /// The phis whose lanes the batch keeps as one vector (see `packed`).
    pub packed_phis: HashSet<Word>,
    /// Whether every state of the kernel runs in batches where one does,
    /// so that the frames are laid out in rows of lanes (see
    /// `frame_slot`).
    pub rows: bool,
    /// With rows: the values kept across barriers as vectors.
    pub packed_cross: HashSet<Word>,
    /// The values that may differ between the group's work-items
    /// (`uniform::analyze_group`); the others are the group's own.
    pub group_varying: HashSet<Word>,
}

/// The plan of lane batches for state `state` of kernel body `f` (0: its
/// start, `k`: after its `k`-th barrier in translation order, `order`), or
/// why the state cannot run so (see the module docs).
pub(crate) fn batchable(
    m: &Module,
    f: &Function,
    order: &[usize],
    u: Uniformity,
    state: u32,
    cross: &HashSet<Word>,
    rows: bool,
) -> Result<LanePlan, String> {
    let ids_read = super::plan::ids_read(m, f).0;
    let sub_group = [
        builtin::SUB_GROUP_ID,
        builtin::SUB_GROUP_LOCAL_ID,
        builtin::SUB_GROUP_SIZE,
    ];
    if sub_group.iter().any(|i| ids_read & (1 << i) != 0) {
        return Err("reads a sub-group id".into());
    }
    let all = || f.blocks.iter().flat_map(|b| &b.instructions);
    if all().any(|(i, _)| i.class.opcode == Op::Variable) {
        return Err("private variables in memory".into());
    }
    let (_, succ) = crate::translate::cfg::block_graph(f);
    // Where the state starts: the kernel's first instruction, or the one
    // after its barrier.
    let mut start = (state == 0).then_some((0, 0));
    let mut barriers = order.iter().flat_map(|&b| {
        f.blocks[b]
            .instructions
            .iter()
            .enumerate()
            .filter(|(_, (i, _))| i.class.opcode == Op::ControlBarrier)
            .map(move |(at, _)| (b, at + 1))
    });
    if state > 0 {
        start = barriers.nth(state as usize - 1);
    }
    let start = start.ok_or_else(|| format!("no barrier {state}"))?;
    // The blocks whose branch the interval reaches.
    let mut whole = HashSet::new();
    let mut seen = HashSet::new();
    let mut todo = vec![start];
    while let Some((b, from)) = todo.pop() {
        if !seen.insert((b, from)) {
            continue;
        }
        let blk = &f.blocks[b];
        let mut ended = false;
        for (inst, _) in &blk.instructions[from..] {
            match inst.class.opcode {
                // The interval ends here.
                Op::ControlBarrier => {
                    ended = true;
                    break;
                }
                Op::FunctionCall => return Err("a call".into()),
                Op::ExtInst if is_printf(inst) => return Err("printf".into()),
                _ => {}
            }
        }
        if ended {
            continue;
        }
        whole.insert(b);
        todo.extend(succ[b].iter().map(|s| (*s, 0)));
    }
    let serial = super::serial::regions(m, f, order, &succ, &u, &whole)?;
    let (packed_phis, packed) = super::packed::predict(m, f, &u, &serial, cross, rows);
    let packed_cross = match rows {
        true => packed.intersection(cross).copied().collect(),
        false => HashSet::new(),
    };
    Ok(LanePlan {
        u,
        serial,
        packed_phis,
        rows,
        packed_cross,
        group_varying: crate::translate::uniform::analyze_group(m, f).varying,
    })
}

/// Whether every state of kernel body `f` (its blocks in translation
/// order, `order`) can run as lane batches: then its batched functions lay
/// the frames out in rows of lanes, which only they read.
pub(crate) fn all_batchable(
    m: &Module,
    f: &Function,
    order: &[usize],
    u: &Uniformity,
    cross: &HashSet<Word>,
) -> bool {
    let barriers = order
        .iter()
        .flat_map(|&b| &f.blocks[b].instructions)
        .filter(|(i, _)| i.class.opcode == Op::ControlBarrier)
        .count();
    (0..=barriers as u32).all(|k| batchable(m, f, order, u.clone(), k, cross, false).is_ok())
}

/// Whether `inst` (an `OpExtInst`) is OpenCL.std's `printf`.
fn is_printf(inst: &Instruction) -> bool {
    matches!(inst.operands.get(1), Some(Operand::LiteralExtInstInteger(n)) if *n == X::printf as u32)
}

impl Fx<'_, '_> {
    /// The lane whose values of `id` a batched build reads now, if `id`
    /// varies: the one being translated, or the first.
    pub(in crate::translate) fn varying_lane(&self, id: Word) -> Option<usize> {
        let b = self.cont.as_ref()?.batch.as_ref()?;
        b.u.varies(id).then(|| b.lane.unwrap_or(0))
    }

    /// Lane `j`'s value of varying `id`: its variables' (kept across a
    /// barrier) or its values', if it has one.
    pub(in crate::translate) fn value_in_lane(&mut self, id: Word, j: usize) -> Option<Vec<Value>> {
        // A vector kept across barriers: its lane, taken here.
        if let Some(v) = self.use_row(id) {
            return Some(vec![self.packed_lane(&v, j)]);
        }
        let c = self.cont.as_ref()?;
        let b = c.batch.as_ref()?;
        let vars: Option<Vec<Variable>> = match j {
            0 => c.vars.get(&id).map(|v| v.iter().map(|x| x.0).collect()),
            _ => b.vars[j].get(&id).cloned(),
        };
        if let Some(vars) = vars {
            return Some(vars.into_iter().map(|v| self.b.use_var(v)).collect());
        }
        if let Some(v) = b.vals[j].get(&id) {
            return Some(v.clone());
        }
        // A value the batch has as one vector: its lane, taken here (one
        // kept across a barrier has variables, above).
        let packed = b.packed.get(&id).cloned()?;
        Some(vec![self.packed_lane(&packed, j)])
    }

    /// Makes `v` lane `j`'s value of varying `id`.
    pub(in crate::translate) fn set_lane_value(&mut self, id: Word, j: usize, v: Vec<Value>) {
        if let Some(b) = self.cont.as_mut().and_then(|c| c.batch.as_mut()) {
            b.vals[j].insert(id, v);
        }
    }

    /// Whether this is a batched build.
    pub(in crate::translate) fn batched(&self) -> bool {
        self.cont.as_ref().is_some_and(|c| c.batch.is_some())
    }

    /// Makes lane `j`'s ids, counters and frame the build's own, until
    /// [`leave_lane`](Self::leave_lane).
    fn enter_lane(&mut self, j: usize) {
        let c = self.cont.as_mut().expect("a continuation build");
        let b = c.batch.as_mut().expect("a batched build");
        std::mem::swap(&mut c.ids, &mut b.ids[j]);
        std::mem::swap(&mut c.counters, &mut b.counters[j]);
        c.frame = b.frames[j];
        b.lane = Some(j);
    }

    /// Puts the first lane's back (see [`enter_lane`](Self::enter_lane)).
    fn leave_lane(&mut self, j: usize) {
        let c = self.cont.as_mut().expect("a continuation build");
        let b = c.batch.as_mut().expect("a batched build");
        std::mem::swap(&mut c.ids, &mut b.ids[j]);
        std::mem::swap(&mut c.counters, &mut b.counters[j]);
        c.frame = b.frames[0];
        b.lane = None;
    }

    /// Runs `f` as lane `j`, with its values.
    pub(in crate::translate) fn per_one_lane<T>(
        &mut self,
        j: usize,
        f: impl FnOnce(&mut Self) -> Result<T, CompileError>,
    ) -> Result<T, CompileError> {
        self.enter_lane(j);
        let r = f(self);
        self.leave_lane(j);
        r
    }

    /// A phi's values in lane `j`, as its block defines them (its
    /// parameters, or a join's variables).
    pub(in crate::translate) fn phi_in_lane(&self, id: Word, j: usize) -> Option<Vec<Value>> {
        self.cont.as_ref()?.batch.as_ref()?.vals[j]
            .get(&id)
            .cloned()
    }

    /// Runs `f` once per lane, each with its lane's values.
    pub(in crate::translate) fn per_lane<T>(
        &mut self,
        mut f: impl FnMut(&mut Self, usize) -> Result<T, CompileError>,
    ) -> Result<Vec<T>, CompileError> {
        let mut out = Vec::with_capacity(LANES);
        for j in 0..LANES {
            self.enter_lane(j);
            let r = f(self, j);
            self.leave_lane(j);
            out.push(r?);
        }
        Ok(out)
    }

    /// Translates `inst` in a batched build: once for the batch where it
    /// runs once (control flow, barriers, uniform values), else once per
    /// lane.
    pub(in crate::translate) fn batch_instruction(
        &mut self,
        inst: &Instruction,
    ) -> Result<(), CompileError> {
        if !self.batched() {
            return self.instruction(inst);
        }
        let once = match inst.class.opcode {
            Op::Branch
            | Op::BranchConditional
            | Op::Switch
            | Op::Return
            | Op::Unreachable
            | Op::ControlBarrier
            | Op::Phi
            | Op::SelectionMerge
            | Op::LoopMerge
            | Op::Nop => true,
            _ => inst
                .result_id
                .is_some_and(|r| self.varying_lane(r).is_none()),
        };
        if once {
            return self.instruction(inst);
        }
        if self.packed_op(inst)? || self.coalesced(inst)? {
            return Ok(());
        }
        self.per_lane(|fx, _| fx.instruction(inst)).map(|_| ())
    }

    /// The loop head's lanes: the first lane's ids, counters and frame are
    /// the head's; lane `j`'s are `j` further along x.
    pub(super) fn batch_head(&mut self) {
        let c = self.cont.as_ref().expect("a continuation build");
        let (ids, counters, frame, stride) = (c.ids.clone(), c.counters, c.frame, c.stride);
        let mut lanes_ids = vec![ids.clone()];
        let mut lanes_counters = vec![counters];
        let mut frames = vec![frame];
        let mut strides = vec![stride];
        for j in 1..LANES {
            let mut own = ids.clone();
            for i in STEPPED {
                if let Some(v) = ids.get(&i) {
                    own.insert(i, self.b.ins().iadd_imm_s(*v, j as i64));
                }
            }
            lanes_ids.push(own);
            lanes_counters.push(counters.map(|k| Counters {
                l: self.b.ins().iadd_imm_s(k.l, j as i64),
                local: [
                    k.local[0].map(|x| self.b.ins().iadd_imm_s(x, j as i64)),
                    k.local[1],
                    k.local[2],
                ],
            }));
            // Made `j * stride` by `settle_stride`.
            let s = self.b.ins().iconst(cranelift_codegen::ir::types::I64, 0);
            strides.push(s);
            frames.push(self.b.ins().iadd(frame, s));
        }
        let b = self
            .cont
            .as_mut()
            .and_then(|c| c.batch.as_mut())
            .expect("a batched build");
        b.ids = lanes_ids;
        b.counters = lanes_counters;
        b.frames = frames;
        b.strides = strides;
    }

    /// Each lane's frame (the work-item's alone in a build of one).
    pub(super) fn lane_frames(&self) -> Vec<Value> {
        let c = self.cont.as_ref().expect("a continuation build");
        match &c.batch {
            Some(b) => b.frames.clone(),
            None => vec![c.frame],
        }
    }

    /// The variables of `id`, kept across barriers, with their offsets and
    /// types: one set for a uniform value (`None`), one per lane for a
    /// varying one; none if it has none yet.
    #[allow(clippy::type_complexity)]
    pub(super) fn kept_vars(
        &self,
        id: Word,
    ) -> Option<Vec<(Option<usize>, Vec<(Variable, i32, ClType)>)>> {
        let c = self.cont.as_ref()?;
        let own = c.vars.get(&id)?.clone();
        let Some(b) = c.batch.as_ref().filter(|b| b.u.varies(id)) else {
            return Some(vec![(None, own)]);
        };
        let mut out = vec![(Some(0), own.clone())];
        for j in 1..LANES {
            let vars = b.vars[j].get(&id)?;
            let lane = vars
                .iter()
                .zip(&own)
                .map(|(v, (_, off, t))| (*v, *off, *t))
                .collect();
            out.push((Some(j), lane));
        }
        Some(out)
    }

    /// The values of `ids` as they are now, in every lane and packed, for
    /// [`restore_values`](Self::restore_values).
    pub(super) fn save_values(&self, ids: &[Word]) -> Saved {
        let lanes = self.cont.as_ref().and_then(|c| c.batch.as_ref());
        ids.iter()
            .map(|id| Kept {
                id: *id,
                own: self.vals.get(id).cloned(),
                lanes: lanes
                    .map(|b| b.vals.iter().map(|v| v.get(id).cloned()).collect())
                    .unwrap_or_default(),
                packed: lanes.and_then(|b| b.packed.get(id).cloned()),
            })
            .collect()
    }

    /// Puts back what [`save_values`](Self::save_values) saved.
    pub(super) fn restore_values(&mut self, saved: Saved) {
        for k in saved {
            match k.own {
                Some(v) => self.vals.insert(k.id, v),
                None => self.vals.remove(&k.id),
            };
            if let Some(b) = self.cont.as_mut().and_then(|c| c.batch.as_mut()) {
                for (j, v) in k.lanes.into_iter().enumerate() {
                    match v {
                        Some(v) => b.vals[j].insert(k.id, v),
                        None => b.vals[j].remove(&k.id),
                    };
                }
                match k.packed {
                    Some(v) => b.packed.insert(k.id, v),
                    None => b.packed.remove(&k.id),
                };
            }
        }
    }
}

/// A value as `save_values` saved it: the build's own, each lane's, the
/// batch's vector.
pub(super) struct Kept {
    id: Word,
    own: Option<Vec<Value>>,
    lanes: Vec<Option<Vec<Value>>>,
    packed: Option<super::packed::Packed>,
}

/// Values saved by `save_values`.
pub(super) type Saved = Vec<Kept>;
