//! Control flow: the graph's successors and the order blocks are
//! translated in, branches, switches and returns, the edges' phi
//! arguments, and the cancellation point at each loop's back-edge.

use std::collections::HashMap;

use clsync_spirv::spirv::{Op, Word};
use clsync_spirv::{Function, Instruction, Operand};
use cranelift_codegen::ir::{self, types, BlockArg, InstBuilder, MemFlagsData};
use cranelift_frontend::Switch;

use super::function::Fx;
use crate::CompileError;

/// A block's successors.
fn successors(term: &Instruction) -> Vec<Word> {
    let ids = |from: usize, step: usize| {
        term.operands
            .iter()
            .skip(from)
            .step_by(step)
            .filter_map(|o| match o {
                Operand::IdRef(w) => Some(*w),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    match term.class.opcode {
        Op::Branch => ids(0, 1),
        Op::BranchConditional => ids(1, 1).into_iter().take(2).collect(),
        Op::Switch => {
            let mut v = ids(1, 1);
            v.dedup();
            v
        }
        _ => vec![],
    }
}

/// Each block's index by its label, and each block's successors by index.
pub(super) fn block_graph(f: &Function) -> (HashMap<Word, usize>, Vec<Vec<usize>>) {
    let index: HashMap<Word, usize> = f
        .blocks
        .iter()
        .enumerate()
        .map(|(i, b)| (b.label, i))
        .collect();
    let succ = f
        .blocks
        .iter()
        .map(|b| {
            b.instructions
                .last()
                .map(|(t, _)| {
                    successors(t)
                        .iter()
                        .filter_map(|l| index.get(l).copied())
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();
    (index, succ)
}

/// The reachable blocks of `f` in reverse postorder: every block after
/// those that dominate it (llvm-spirv's own order does not always keep
/// that).
pub(super) fn reverse_postorder(f: &Function) -> Vec<usize> {
    let (_, succ) = block_graph(f);
    let mut seen = vec![false; f.blocks.len()];
    let mut post = Vec::with_capacity(f.blocks.len());
    let mut stack = vec![(0usize, 0usize)];
    seen[0] = true;
    while let Some((n, i)) = stack.pop() {
        if i < succ[n].len() {
            stack.push((n, i + 1));
            let s = succ[n][i];
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(n);
        }
    }
    post.reverse();
    post
}

impl Fx<'_, '_> {
    /// Translates a branch, switch or return.
    pub(super) fn control(&mut self, inst: &Instruction) -> Result<(), CompileError> {
        match inst.class.opcode {
            Op::Branch => {
                let to = self.id(inst, 0)?;
                if self.is_back_edge(to) {
                    self.poll();
                }
                let args = self.edge_args(to)?;
                let t = self.target(to)?;
                self.b.ins().jump(t, &args);
            }
            Op::BranchConditional => {
                let c = self.get1(self.id(inst, 0)?)?;
                let (t, e) = (self.id(inst, 1)?, self.id(inst, 2)?);
                let uncounted =
                    |to: Word| self.is_back_edge(to) && !self.counted.contains(&(self.current, to));
                if uncounted(t) || uncounted(e) {
                    self.poll();
                }
                let (ta, ea) = (self.edge_args(t)?, self.edge_args(e)?);
                let (tb, eb) = (self.target(t)?, self.target(e)?);
                self.b.ins().brif(c, tb, &ta, eb, &ea);
            }
            Op::Switch => {
                let sel = self.get1(self.id(inst, 0)?)?;
                if (1..inst.operands.len())
                    .step_by(2)
                    .any(|k| self.id(inst, k).is_ok_and(|t| self.is_back_edge(t)))
                {
                    self.poll();
                }
                let default = self.id(inst, 1)?;
                let mut sw = Switch::new();
                let mut k = 2;
                let mut seen = std::collections::HashSet::new();
                // Targets with phis get a block of their own that passes the
                // edge's values; each is filled once the switch has ended
                // the current block.
                let mut pending = Vec::new();
                while k + 1 < inst.operands.len() + 1 && k < inst.operands.len() {
                    let v = self.lit(inst, k)?;
                    let to = self.id(inst, k + 1)?;
                    if seen.insert(v) {
                        let (eb, fill) = self.edge_block(to)?;
                        pending.extend(fill);
                        sw.set_entry(v as u128, eb);
                    }
                    k += 2;
                }
                let (db, fill) = self.edge_block(default)?;
                pending.extend(fill);
                sw.emit(&mut self.b, sel, db);
                for (eb, to, args) in pending {
                    self.b.switch_to_block(eb);
                    self.b.ins().jump(to, &args);
                }
            }
            Op::Return if self.cont.is_some() => self.interval_end(0),
            Op::Return => {
                self.b.ins().return_(&[]);
            }
            Op::ReturnValue => {
                let v = self.get(self.id(inst, 0)?)?;
                match self.ret_area {
                    Some(area) => {
                        for (i, x) in v.iter().enumerate() {
                            let at = (i as u32 * super::function::RETURN_SLOT) as i32;
                            self.b.ins().store(super::function::mem(), *x, area, at);
                        }
                        self.b.ins().return_(&[]);
                    }
                    None => {
                        self.b.ins().return_(&v);
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Whether the edge from the current block to `to` goes back (a loop).
    pub(super) fn is_back_edge(&self, to: Word) -> bool {
        match (self.order.get(&to), self.order.get(&self.current)) {
            (Some(t), Some(c)) => t <= c,
            _ => false,
        }
    }

    /// The runtime's cancellation gate, nonzero while a launch is
    /// cancelled or on the watchdog's probation
    /// ([`clsync::engine::cancellation_gate`]): what a cancellation point
    /// and a chained barrier (`continuation::chain`) read.
    pub(in crate::translate) fn gate_raised(&mut self) -> ir::Value {
        let gate = clsync::engine::cancellation_gate() as *const _ as i64;
        let addr = self.b.ins().iconst(types::I64, gate);
        // Relaxed in effect (a plain load on x86-64): see
        // `cancellation_gate`.
        self.b
            .ins()
            .atomic_load(types::I64, MemFlagsData::trusted(), addr)
    }

    /// A cancellation point, at a loop's back-edge: a launch the watchdog
    /// or a failed work-item cancels stops here, so a loop that makes no
    /// other runtime call (`while (atomic_load(f) == 0) {}` whose partner
    /// never runs) cannot hang the process. Inline, it is one load of the
    /// runtime's cancellation gate and a branch; the call happens only
    /// while a launch is cancelled or on the watchdog's probation
    /// ([`clsync::engine::cancellation_gate`]), not merely checked.
    pub(super) fn poll(&mut self) {
        let raised = self.gate_raised();
        let call = self.b.create_block();
        self.b.set_cold_block(call);
        let cont = self.b.create_block();
        self.b.ins().brif(raised, call, &[], cont, &[]);
        self.b.switch_to_block(call);
        let ctx = self.ctx;
        self.helper("clsync_poll", &[ctx]);
        self.check_status();
        self.b.ins().jump(cont, &[]);
        self.b.switch_to_block(cont);
    }

    /// The phis of block `to`, each with the value it takes on the edge
    /// from the current block.
    pub(super) fn edge_values(&self, to: Word) -> Result<Vec<(Word, Word)>, CompileError> {
        let phis = self.phis.get(&to).map(Vec::as_slice).unwrap_or_default();
        phis.iter()
            .map(|(id, _, pairs)| {
                let (v, _) = pairs
                    .iter()
                    .find(|(_, p)| *p == self.current)
                    .ok_or_else(|| {
                        CompileError::Invalid(format!(
                            "phi %{id} has no value for the edge from %{}",
                            self.current
                        ))
                    })?;
                Ok((*id, *v))
            })
            .collect()
    }

    /// The block arguments of the edge from the current block to `to`.
    pub(super) fn edge_args(&mut self, to: Word) -> Result<Vec<BlockArg>, CompileError> {
        if let Some(args) = self.serial_edge(to)? {
            return Ok(args);
        }
        let values = self.edge_values(to)?;
        let mut out = Vec::new();
        for &(id, v) in &values {
            // A varying phi of a batched build takes each lane's value, or
            // a vector of them.
            if let Some(v) = self.packed_edge(id, v)? {
                out.extend(v.into_iter().map(BlockArg::Value));
            } else if self.varying_lane(id).is_some() {
                for vs in self.per_lane(|fx, _| fx.get(v))? {
                    out.extend(vs.into_iter().map(BlockArg::Value));
                }
            } else {
                out.extend(self.get(v)?.into_iter().map(BlockArg::Value));
            }
        }
        if self.s.checked {
            for &(_, v) in &values {
                for lane in self.lanes(v) {
                    let x = self.lane_value(lane);
                    out.push(BlockArg::Value(x));
                }
            }
        }
        Ok(out)
    }

    pub(super) fn target(&self, label: Word) -> Result<ir::Block, CompileError> {
        if let Some(b) = self.serial_target(label) {
            return Ok(b);
        }
        self.blocks.get(&label).copied().ok_or_else(|| {
            CompileError::Invalid(format!("a branch to %{label}, which is not a block"))
        })
    }

    /// A block that jumps to `label` with the current edge's arguments
    /// (for switch targets, which take none).
    /// The block a switch goes to for `label`: the target itself, or,
    /// when the edge passes phi values, a new block to fill with a jump to
    /// the target with them (returned, to be filled after the switch: the
    /// values are made here, in the block the switch ends, the new block's
    /// only predecessor).
    #[allow(clippy::type_complexity)]
    pub(super) fn edge_block(
        &mut self,
        label: Word,
    ) -> Result<(ir::Block, Option<(ir::Block, ir::Block, Vec<BlockArg>)>), CompileError> {
        let args = self.edge_args(label)?;
        let to = self.target(label)?;
        if args.is_empty() {
            return Ok((to, None));
        }
        let eb = self.b.create_block();
        Ok((eb, Some((eb, to, args))))
    }
}
