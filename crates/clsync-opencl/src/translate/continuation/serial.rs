//! Where the work-items of a lane batch part: a region after a branch
//! that diverges (`if (l < h) s[l] += s[l + h];`, a loop whose trip count
//! varies), up to the block where they meet again, its immediate
//! post-dominator (the *join*). A batched build runs such a region one
//! work-item at a time: the region's blocks are translated once per lane,
//! as plain scalar code of that work-item, and chained: the block that
//! enters the region takes its branch for the first lane, whose copy of
//! the region leaves it for the second lane's entry, and so on; the last
//! lane's goes on to the join, from where the batch runs together again.
//! The join's phis are variables each lane's edges define.
//!
//! Most batches of such a region do not part at all: `l < h` is true for
//! every lane of a batch but one batch when `h` is a multiple of the batch's
//! width. So a
//! region whose diverging branches all test values made before it (or
//! made in it of those by pure integer arithmetic) has a third version
//! (`together`): a copy for the batch together, translated as batched
//! code with the first lane's conditions, its accesses coalesced. The entry compares
//! every lane's conditions with the first lane's, a compare and a jump
//! each, and takes that copy where all agree (Shin's branch on superword
//! condition codes, as Karrenberg and Hack's whole-function vectorizer
//! uses it), the lanes one at a time where any differs.
//!
//! A region qualifies where it is single-entry (one block outside
//! branches into it, to it or to the join only), every edge out of it goes
//! to the join, and the join is reached from the region and its entry only;
//! it holds no barrier, return or switch. Branches inside that diverge too
//! are part of it (they are plain branches in each lane's copy). A state
//! whose interval has a divergent branch of another shape runs one
//! work-item per iteration.

use std::collections::{HashMap, HashSet};

use clsync_spirv::spirv::{Op, Word};
use clsync_spirv::{Function, Instruction, Module};
use cranelift_codegen::ir::{self, BlockArg};
use cranelift_frontend::Variable;

use super::batch::LANES;
use crate::translate::function::Fx;
use crate::translate::uniform::{region, Uniformity};
use crate::CompileError;

/// A region a batch runs one work-item at a time (see the module docs).
#[derive(Debug)]
pub(crate) struct Serial {
    /// The block whose branch enters it.
    pub entry: Word,
    /// Its blocks, in translation order.
    pub blocks: Vec<Word>,
    /// Where its work-items meet again.
    pub join: Word,
    /// The conditions of its branches that diverge, the entry's first,
    /// where the batch may run it together when every lane's value of each
    /// is the same (see `enter_region`): each is made before the region
    /// (so all can be compared at its entry), and nothing the region
    /// defines is used past it but by the join's phis. Empty where not.
    pub together: Vec<Word>,
    /// The region's instructions that make those conditions, made again
    /// at its entry to compare them there (pure integer arithmetic and
    /// comparisons of values made before the region), in order.
    pub speculated: Vec<Instruction>,
    /// For each of `together`, the integer comparison that makes it (its
    /// opcode and operands), where one does (see
    /// `together::Fx::monotone_agreement`).
    pub compares: Vec<Option<(Op, Word, Word)>>,
}

/// The regions of an interval (the blocks `whole` whose branches it
/// reaches) where a batch's work-items part, in translation order
/// (`order`), or why one does not qualify.
pub(crate) fn regions(
    m: &Module,
    f: &Function,
    order: &[usize],
    succ: &[Vec<usize>],
    u: &Uniformity,
    whole: &HashSet<usize>,
) -> Result<Vec<Serial>, String> {
    let mut preds = vec![Vec::new(); f.blocks.len()];
    for (b, ss) in succ.iter().enumerate() {
        for &s in ss {
            preds[s].push(b);
        }
    }
    let label = |b: usize| f.blocks[b].label;
    let diverges = |b: usize| u.diverging.contains(&label(b));
    let never = || "a branch after which the work-items never meet".to_string();
    let mut owned: HashSet<usize> = HashSet::new();
    let mut out = Vec::new();
    for &b in order {
        if !whole.contains(&b) || !diverges(b) || owned.contains(&b) {
            continue;
        }
        let join = u.ipdom[b].ok_or_else(never)?;
        let mut blocks = region(succ, b, Some(join));
        // Branches inside that diverge too, whose work-items meet inside
        // or at the join.
        let mut todo: Vec<usize> = blocks.iter().copied().collect();
        while let Some(x) = todo.pop() {
            if !diverges(x) {
                continue;
            }
            let j = u.ipdom[x].ok_or_else(never)?;
            if j != join && !blocks.contains(&j) {
                return Err("nested branches whose work-items meet elsewhere".into());
            }
            for y in region(succ, x, Some(j)) {
                if y != join && blocks.insert(y) {
                    todo.push(y);
                }
            }
        }
        for &x in &blocks {
            if succ[x].iter().any(|s| *s != join && !blocks.contains(s)) {
                return Err("a region left other than where its work-items meet".into());
            }
            for (inst, _) in &f.blocks[x].instructions {
                match inst.class.opcode {
                    Op::ControlBarrier | Op::Return | Op::ReturnValue => {
                        return Err("a barrier or a return where the work-items part".into())
                    }
                    Op::Switch => return Err("a switch where the work-items part".into()),
                    _ => {}
                }
            }
        }
        // A loop there that may wait for another work-item (a spin lock:
        // the first lane, holding the lock, would release it only once
        // every lane had taken it) keeps the batch out.
        let rank = |x: usize| order.iter().position(|y| *y == x);
        let looped = blocks.iter().any(|&x| {
            succ[x]
                .iter()
                .any(|s| blocks.contains(s) && rank(*s) <= rank(x))
        });
        let waits = blocks
            .iter()
            .any(|&x| f.blocks[x].instructions.iter().any(|(i, _)| may_wait(i)));
        if looped && waits {
            return Err("a loop of atomics where the work-items part".into());
        }
        let outside: HashSet<usize> = blocks
            .iter()
            .flat_map(|&x| preds[x].iter().copied())
            .filter(|p| !blocks.contains(p))
            .collect();
        let [entry] = outside.into_iter().collect::<Vec<_>>()[..] else {
            return Err("a region entered from several places".into());
        };
        let term = f.blocks[entry]
            .instructions
            .last()
            .map(|(i, _)| i.class.opcode);
        if !matches!(term, Some(Op::Branch | Op::BranchConditional))
            || succ[entry]
                .iter()
                .any(|s| *s != join && !blocks.contains(s))
        {
            return Err("a region's entry branches elsewhere too".into());
        }
        if preds[join]
            .iter()
            .any(|p| *p != entry && !blocks.contains(p))
        {
            return Err("a join reached from outside its region".into());
        }
        if owned.contains(&entry) || blocks.iter().any(|x| owned.contains(x)) {
            return Err("regions that overlap".into());
        }
        owned.extend(blocks.iter().copied());
        let (together, speculated) =
            super::together::together_conds(m, f, &blocks, entry, join, diverges);
        let compares = super::together::comparisons(f, &together);
        let in_order = order
            .iter()
            .filter(|x| blocks.contains(x))
            .map(|x| label(*x))
            .collect();
        out.push(Serial {
            entry: label(entry),
            blocks: in_order,
            join: label(join),
            together,
            speculated,
            compares,
        });
    }
    // A join or an entry inside another region would be run per lane
    // there and per batch here.
    for s in &out {
        let inside = |w: Word| out.iter().any(|r| r.blocks.contains(&w));
        if inside(s.entry) || inside(s.join) {
            return Err("regions that overlap".into());
        }
    }
    Ok(out)
}

/// Whether `inst` reads what another work-item may change meanwhile: an
/// atomic operation or a volatile load.
fn may_wait(inst: &Instruction) -> bool {
    let op = inst.class.opcode;
    format!("{op:?}").starts_with("Atomic")
        || (op == Op::Load && crate::translate::uniform::volatile(inst))
}

/// A phi of a block of a region's copy for the batch together: its id,
/// and its values (one set, or one per lane).
pub(crate) type TogetherPhi = (Word, Vec<Vec<Value>>);

/// The translation's state of a batched build's regions.
#[derive(Default)]
pub(crate) struct SerialState {
    pub regions: Vec<Serial>,
    /// Each region block's copy for each lane.
    pub copies: HashMap<(Word, usize), ir::Block>,
    /// For each region, where each lane enters it (lane `LANES`: the
    /// join's block).
    pub entries: HashMap<(usize, usize), ir::Block>,
    /// The variables of each lane's value of each join's phis.
    pub join_vars: HashMap<(Word, usize), Vec<Variable>>,
    /// The join phis joined as one vector instead (`continuation::joined`).
    pub join_vectors: HashMap<Word, Vec<Variable>>,
    /// The region whose copy (or entry) is being translated.
    pub inside: Option<usize>,
    /// The region whose copy for the batch together is being translated.
    pub together: Option<usize>,
    /// The phis of the blocks of those copies, by region: one set of
    /// values for a uniform phi, one per lane for a varying one.
    pub together_phis: HashMap<usize, Vec<TogetherPhi>>,
}

impl SerialState {
    pub fn new(regions: Vec<Serial>) -> SerialState {
        SerialState {
            regions,
            ..SerialState::default()
        }
    }
}

impl Fx<'_, '_> {
    pub(super) fn serial(&self) -> Option<&SerialState> {
        Some(&self.cont.as_ref()?.batch.as_ref()?.serial)
    }

    pub(super) fn serial_mut(&mut self) -> &mut SerialState {
        &mut self
            .cont
            .as_mut()
            .and_then(|c| c.batch.as_mut())
            .expect("a batched build")
            .serial
    }

    /// The region block `label` is in, in a batched build.
    pub(in crate::translate) fn region_of(&self, label: Word) -> Option<usize> {
        self.serial()?
            .regions
            .iter()
            .position(|r| r.blocks.contains(&label))
    }

    /// The region whose entry block `label` is.
    pub(in crate::translate) fn entering(&self, label: Word) -> Option<usize> {
        self.serial()?.regions.iter().position(|r| r.entry == label)
    }

    /// Whether `label` is a region's join.
    pub(in crate::translate) fn joining(&self, label: Word) -> bool {
        self.serial()
            .is_some_and(|s| s.regions.iter().any(|r| r.join == label))
    }

    /// The first block of region `r`.
    pub(in crate::translate) fn first_of_region(&self, r: usize) -> Option<Word> {
        self.serial()?.regions.get(r)?.blocks.first().copied()
    }

    /// The lane whose copy of a region is being translated.
    pub(in crate::translate) fn copy_lane(&self) -> Option<usize> {
        let b = self.cont.as_ref()?.batch.as_ref()?;
        b.serial.inside.and(b.lane)
    }

    /// Makes the blocks of region block `label`'s copies, with parameters
    /// for its phis (`(id, flattened types)`), each lane's values of them.
    /// Its own block becomes the first lane's copy.
    pub(in crate::translate) fn region_block(
        &mut self,
        label: Word,
        phis: &[(Word, Vec<cranelift_codegen::ir::Type>)],
    ) {
        for j in 0..LANES {
            let cb = self.b.create_block();
            for (id, ts) in phis {
                let params = ts
                    .iter()
                    .map(|t| self.b.append_block_param(cb, *t))
                    .collect();
                self.set_lane_value(*id, j, params);
            }
            self.serial_mut().copies.insert((label, j), cb);
            if j == 0 {
                self.blocks.insert(label, cb);
            }
        }
        // The batch's copy, where the region has one: lane `LANES` of the
        // copies.
        let Some(r) = self.region_of(label).filter(|r| {
            self.serial()
                .is_some_and(|s| !s.regions[*r].together.is_empty())
        }) else {
            return;
        };
        let cb = self.b.create_block();
        for (id, ts) in phis {
            let sets = self.varying_lane(*id).map_or(1, |_| LANES);
            let values = (0..sets)
                .map(|_| {
                    ts.iter()
                        .map(|t| self.b.append_block_param(cb, *t))
                        .collect()
                })
                .collect();
            self.serial_mut()
                .together_phis
                .entry(r)
                .or_default()
                .push((*id, values));
        }
        self.serial_mut().copies.insert((label, LANES), cb);
    }

    /// Makes the variables of join `label`'s phis, if it is one: true then.
    pub(in crate::translate) fn join_phis(
        &mut self,
        label: Word,
        phis: &[(Word, Vec<cranelift_codegen::ir::Type>)],
    ) -> bool {
        if !self.joining(label) {
            return false;
        }
        let region = self
            .serial()
            .and_then(|s| s.regions.iter().position(|r| r.join == label))
            .expect("a join's region");
        for (id, ts) in phis {
            if ts.len() == 1 && self.joins_packed(*id, region) {
                let vector = ts[0]
                    .by(super::packed::VECTOR_LANES as u32)
                    .expect("four 32-bit lanes make a vector");
                let vars = (0..super::packed::VECTORS)
                    .map(|_| self.b.declare_var(vector))
                    .collect();
                self.serial_mut().join_vectors.insert(*id, vars);
                continue;
            }
            for j in 0..LANES {
                let vars = ts.iter().map(|t| self.b.declare_var(*t)).collect();
                self.serial_mut().join_vars.insert((*id, j), vars);
            }
        }
        true
    }

    /// At a join, phi `id`'s values, each lane's from its variables (the
    /// first lane's for a uniform phi).
    pub(in crate::translate) fn join_phi(&mut self, id: Word) {
        if let Some(vars) = self.join_vector(id) {
            self.join_packed(id, &vars);
            return;
        }
        let varies = self.varying_lane(id).is_some();
        for j in 0..LANES {
            let Some(vars) = self
                .serial()
                .and_then(|s| s.join_vars.get(&(id, j)).cloned())
            else {
                return;
            };
            let v: Vec<Value> = vars.into_iter().map(|v| self.b.use_var(v)).collect();
            match (varies, j) {
                (true, _) => self.set_lane_value(id, j, v),
                (false, 0) => {
                    self.vals.insert(id, v);
                }
                (false, _) => {}
            }
        }
    }

    /// Inside a region's copy: the block an edge to `to` goes to, where
    /// that is another: `to`'s copy of the same lane, or the next lane's
    /// entry for the join.
    pub(in crate::translate) fn serial_target(&self, to: Word) -> Option<ir::Block> {
        // The batch's copy: the same copy of `to`, or the join itself.
        if let Some(r) = self.serial().and_then(|s| s.together) {
            let s = self.serial()?;
            if to == s.regions[r].join {
                return self.blocks.get(&to).copied();
            }
            return s.copies.get(&(to, LANES)).copied();
        }
        let j = self.copy_lane()?;
        let s = self.serial()?;
        let r = s.inside?;
        if to == s.regions[r].join {
            return match j + 1 {
                LANES => self.blocks.get(&to).copied(),
                next => s.entries.get(&(r, next)).copied(),
            };
        }
        s.copies.get(&(to, j)).copied()
    }

    /// Inside a region's copy: the arguments of the edge to `to`, `to`'s
    /// phis' values of this lane; none for the join, whose phis' variables
    /// of this lane are defined instead.
    pub(in crate::translate) fn serial_edge(
        &mut self,
        to: Word,
    ) -> Result<Option<Vec<BlockArg>>, CompileError> {
        if let Some(r) = self.serial().and_then(|s| s.together) {
            return self.together_edge(r, to);
        }
        let Some(j) = self.copy_lane() else {
            return Ok(None);
        };
        let mut out = Vec::new();
        for (id, v) in self.edge_values(to)? {
            if let Some(vars) = self.join_vector(id) {
                let x = self.get1(v)?;
                self.join_lane(&vars, j, x);
                continue;
            }
            let vals = self.get(v)?;
            let vars = self
                .serial()
                .and_then(|s| s.join_vars.get(&(id, j)).cloned());
            match vars {
                Some(vars) => {
                    for (var, x) in vars.into_iter().zip(vals) {
                        self.b.def_var(var, x);
                    }
                }
                None => out.extend(vals.into_iter().map(BlockArg::Value)),
            }
        }
        Ok(Some(out))
    }

    /// The terminator of region `r`'s entry block: the batch goes to the
    /// first lane's entry, where that lane takes the branch into its copy
    /// of the region (or straight to the next lane's entry, by the join);
    /// each lane's entry does so in turn. Where the region has a copy for
    /// the batch together and every lane's condition is the same, the
    /// batch takes the branch once, into that copy (the branch on the
    /// superword condition code of Shin's and Karrenberg's vectorizers).
    pub(in crate::translate) fn enter_region(
        &mut self,
        r: usize,
        term: &Instruction,
    ) -> Result<(), CompileError> {
        let entries: Vec<ir::Block> = (0..LANES).map(|_| self.b.create_block()).collect();
        for (j, e) in entries.iter().enumerate() {
            self.serial_mut().entries.insert((r, j), *e);
        }
        use cranelift_codegen::ir::InstBuilder;
        let conds = self.serial().expect("a batched build").regions[r]
            .together
            .clone();
        if conds.is_empty() {
            self.b.ins().jump(entries[0], &[]);
        } else {
            self.enter_together(r, term, &conds, entries[0])?;
        }
        for (j, e) in entries.into_iter().enumerate() {
            self.b.switch_to_block(e);
            self.in_region_lane(r, j, |fx| fx.instruction(term))?;
        }
        Ok(())
    }

    /// Runs `f` as lane `j` inside region `r`.
    fn in_region_lane(
        &mut self,
        r: usize,
        j: usize,
        f: impl FnOnce(&mut Self) -> Result<(), CompileError>,
    ) -> Result<(), CompileError> {
        self.per_one_lane(j, |fx| {
            fx.serial_mut().inside = Some(r);
            let res = f(fx);
            fx.serial_mut().inside = None;
            res
        })
    }

    /// Translates region `r`'s copies, lane after lane, each block as that
    /// lane's scalar code.
    pub(in crate::translate) fn region_copies(
        &mut self,
        r: usize,
        f: &Function,
    ) -> Result<(), CompileError> {
        let labels = self.serial().expect("a batched build").regions[r]
            .blocks
            .clone();
        if !self.serial().expect("a batched build").regions[r]
            .together
            .is_empty()
        {
            self.together_copy(r, f, &labels)?;
        }
        for j in 0..LANES {
            self.in_region_lane(r, j, |fx| {
                for label in &labels {
                    let Some(blk) = f.blocks.iter().find(|b| b.label == *label) else {
                        continue;
                    };
                    let cb = fx.serial().expect("a batched build").copies[&(*label, j)];
                    fx.b.switch_to_block(cb);
                    fx.block_body(blk, false)?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }
}

use cranelift_codegen::ir::Value;
