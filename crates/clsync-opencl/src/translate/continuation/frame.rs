//! What a work-item keeps in its frame across a barrier: the values live
//! there (as Cranelift variables, with their shadows in checked builds),
//! the kernel's private variables and its promoted ones.

use clsync_spirv::spirv::{Op, Word};
use clsync_spirv::Function;
use cranelift_codegen::ir::{types, InstBuilder, Type as ClType, Value};

use super::body;
use crate::translate::function::{fixed, mem, Fx};
use crate::CompileError;

/// The byte ranges of the private block that kernel `f` (its body) and
/// the functions it calls keep in memory in a checked build: their
/// function-scope variables that are not promoted to registers
/// (`promote::promotable` decides it for each function as its translation
/// does), merged where they touch.
pub(crate) fn private_spans(
    m: &clsync_spirv::Module,
    slots: &crate::translate::SlotPlan,
    f: &Function,
) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    for id in crate::translate::reachable_from(m, vec![body(m, f).id]) {
        let Some(g) = m.function(id) else { continue };
        let promoted = crate::translate::promote::promotable(m, g);
        for (inst, _) in g.blocks.iter().flat_map(|b| &b.instructions) {
            match (inst.class.opcode, inst.result_id) {
                (Op::Variable, Some(v)) if !promoted.contains(&v) => {
                    let Some((_, _, off)) = slots.private.iter().find(|(id, _, _)| *id == v) else {
                        continue;
                    };
                    let size = match inst.result_type.map(|t| m.ty(t)) {
                        Some(Ok(clsync_spirv::Type::Pointer { pointee, .. })) => {
                            m.layout(*pointee).map_or(0, |l| l.size)
                        }
                        _ => 0,
                    };
                    spans.push((*off as usize, (off + size) as usize));
                }
                _ => {}
            }
        }
    }
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

impl Fx<'_, '_> {
    /// The kernel body's own private variables: the slot of the first and
    /// the bytes they span (`plan_slots` lays a function's variables out
    /// one after another), if it has any and any barrier.
    pub(super) fn kernel_private(&self, f: &Function) -> Result<Option<(u64, u64)>, CompileError> {
        let c = self.cont.as_ref().expect("a continuation build");
        if c.plan.live.is_empty() {
            return Ok(None);
        }
        let mut span: Option<(u64, u64, u64)> = None; // slot, start, end
        let variables = f
            .blocks
            .iter()
            .flat_map(|b| &b.instructions)
            .filter(|(i, _)| i.class.opcode == Op::Variable);
        for (i, _) in variables {
            let id = i.result_id.unwrap_or(0);
            let Some((_, slot, off)) = self.s.plan.private.iter().find(|(v, _, _)| *v == id) else {
                continue;
            };
            let size = match self.m.ty(i.result_type.unwrap_or(0))? {
                clsync_spirv::Type::Pointer { pointee, .. } => self.m.layout(*pointee)?.size,
                _ => 0,
            };
            span = Some(match span {
                None => (*slot, *off, off + size),
                Some((_, start, end)) if *off < start => (*slot, *off, end.max(off + size)),
                Some((s, start, end)) => (s, start, end.max(off + size)),
            });
        }
        // Whole words: the variables start at multiples of 8 and the
        // private block is whole words.
        Ok(span.map(|(slot, start, end)| (slot, (end - start).next_multiple_of(8))))
    }

    /// Copies the kernel's private variables to (`save`) or from the
    /// work-item's frame.
    pub(super) fn private_copy(&mut self, save: bool) {
        let c = self.cont.as_ref().expect("a continuation build");
        let (Some((slot, bytes)), frame) = (c.private, c.frame) else {
            return;
        };
        let fixed = fixed();
        let entry = self.b.ins().iadd_imm_s(self.slots, (slot * 16) as i64);
        let block = self.b.ins().load(types::I64, fixed, entry, 0);
        let (dst, src) = if save { (frame, block) } else { (block, frame) };
        let cfg = cranelift_module::Module::target_config(&*self.jit);
        self.b
            .emit_small_memory_copy(cfg, dst, src, bytes, 8, 8, true, mem());
    }

    /// In a continuation build, makes the block's phis that live across a
    /// barrier variables (defined by their block parameters here).
    pub(in crate::translate) fn phi_vars(&mut self, label: Word) {
        if self.cont.is_none() {
            return;
        }
        let ids: Vec<Word> = self
            .phis
            .get(&label)
            .map(|p| p.iter().map(|(id, _, _)| *id).collect())
            .unwrap_or_default();
        let join = self.joining(label);
        for id in ids {
            if let Some(j) = self.copy_lane() {
                // A region's copy: this lane's only.
                if let Some(v) = self.phi_in_lane(id, j) {
                    self.define_var(id, &v);
                }
                continue;
            }
            if join {
                self.join_phi(id);
            }
            if self.packed_cross(id) {
                if let Some(p) = self.packed_param(id) {
                    self.def_row(id, p);
                    continue;
                }
            }
            if self.varying_lane(id).is_some() {
                let _ = self.per_lane(|fx, j| {
                    if let Some(v) = fx.phi_in_lane(id, j) {
                        fx.define_var(id, &v);
                    }
                    Ok(())
                });
            } else if let Some(v) = self.vals.get(&id).cloned() {
                self.define_var(id, &v);
            }
        }
    }

    /// In a continuation build, if `id` lives across a barrier: its
    /// variables (made on its first definition, each with a place in the
    /// frame) are defined as `v` here.
    pub(in crate::translate) fn define_var(&mut self, id: Word, v: &[Value]) {
        let Some(c) = self.cont.as_mut() else { return };
        if !c.plan.cross.contains(&id) {
            return;
        }
        // A value kept as one vector in rows: its lanes make the vector.
        if self.packed_cross(id) {
            let j = self
                .cont
                .as_ref()
                .and_then(|c| c.batch.as_ref())
                .and_then(|b| b.lane)
                .unwrap_or(0);
            if let Some(x) = v.first() {
                self.def_row_lane(id, j, *x);
            }
            return;
        }
        let Some(c) = self.cont.as_mut() else { return };
        // A varying value's lanes after the first have variables of their
        // own, at the first lane's places in their frames.
        let lane = c.batch.as_ref().filter(|b| b.u.varies(id));
        if let Some(j) = lane.and_then(|b| b.lane).filter(|j| *j > 0) {
            let types: Vec<ClType> = match c.vars.get(&id) {
                Some(vars) => vars.iter().map(|(_, _, t)| *t).collect(),
                None => return,
            };
            let b = c.batch.as_mut().expect("a batched build");
            let vars = b.vars[j]
                .entry(id)
                .or_insert_with(|| types.iter().map(|t| self.b.declare_var(*t)).collect());
            for (var, x) in vars.iter().zip(v) {
                self.b.def_var(*var, *x);
            }
            return;
        }
        if !c.vars.contains_key(&id) {
            let mut vars = Vec::new();
            for x in v {
                let t = self.b.func.dfg.value_type(*x);
                vars.push((self.b.declare_var(t), c.frame_bytes, t));
                c.frame_bytes += 8;
            }
            c.vars.insert(id, vars);
            if self.s.checked {
                let mut shadows = Vec::new();
                for _ in v {
                    shadows.push((self.b.declare_var(types::I8), c.frame_bytes));
                    c.frame_bytes += 8;
                }
                c.shadow_vars.insert(id, shadows);
            }
        }
        for ((var, _, _), x) in c.vars[&id].iter().zip(v) {
            self.b.def_var(*var, *x);
        }
        if let Some(shadows) = c.shadow_vars.get(&id).cloned() {
            let lanes = self.shadows.get(&id).cloned().unwrap_or_default();
            for (k, (var, _)) in shadows.into_iter().enumerate() {
                let s = match lanes.get(k).copied().flatten() {
                    Some(s) => s,
                    None => self.b.ins().iconst(types::I8, 0),
                };
                self.b.def_var(var, s);
            }
        }
    }

    /// In a checked continuation build, the shadow of `id` if it lives
    /// across a barrier: its shadow variables' values here.
    pub(in crate::translate) fn cross_lanes(
        &mut self,
        id: Word,
    ) -> Option<crate::translate::shadow::Lanes> {
        let vars = self.cont.as_ref()?.shadow_vars.get(&id)?.clone();
        Some(
            vars.into_iter()
                .map(|(var, _)| Some(self.b.use_var(var)))
                .collect(),
        )
    }

    /// Whether `id` lives across a barrier with a shadow (checked builds).
    pub(in crate::translate) fn has_cross_lanes(&self, id: Word) -> bool {
        self.cont
            .as_ref()
            .is_some_and(|c| c.shadow_vars.contains_key(&id))
    }

    /// Checked builds: stores the kernel's promoted variables, values and
    /// shadows, in the work-item's frame (`save`), or defines them from it.
    pub(super) fn promoted_copy(&mut self, save: bool) {
        if !self.s.checked {
            return;
        }
        let mut ids: Vec<Word> = self.promoted.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let vars = self.promoted[&id].clone();
            let c = self.cont.as_mut().expect("a continuation build");
            let frame = c.frame;
            let places = c
                .promoted_at
                .entry(id)
                .or_insert_with(|| {
                    (0..vars.len())
                        .map(|_| {
                            c.frame_bytes += 16;
                            (c.frame_bytes - 16, c.frame_bytes - 8)
                        })
                        .collect()
                })
                .clone();
            for ((t, var, sh), (at, sh_at)) in vars.into_iter().zip(places) {
                if save {
                    let v = self.b.use_var(var);
                    self.b.ins().store(mem(), v, frame, at);
                    let s = self.b.use_var(sh);
                    self.b.ins().store(mem(), s, frame, sh_at);
                } else {
                    let v = self.b.ins().load(t, mem(), frame, at);
                    self.b.def_var(var, v);
                    let s = self.b.ins().load(types::I8, mem(), frame, sh_at);
                    self.b.def_var(sh, s);
                }
            }
        }
    }
}
