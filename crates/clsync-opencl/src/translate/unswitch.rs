//! Work-item loops unswitched on a condition the group shares.
//!
//! A barrier inside a loop ends the interval with the loop's own test:
//! `for (i = 0; i < n; i++) { barrier(..); acc = acc * 3 + 1; }
//! out[g] = acc;` resumes after the barrier, steps `acc` and `i`, and then
//! either reaches the barrier again or leaves the loop and stores `out[g]`.
//! `i` is the group's (it is read once per interval, `hoisted`), so every
//! work-item of the interval goes the same way, but the work-item loop
//! tests it once per work-item (or lane batch), and it holds the exit
//! path's values (the buffer's address, its bounds, the global id's base)
//! in registers through every pass: regalloc2 weighs a value by its uses
//! in the loop, and the exit path, with its per-lane fallbacks, uses those
//! many times. It spilled the loop's own counters instead.
//!
//! So once the function is built, its work-item loop is *unswitched* (as
//! LLVM's `SimpleLoopUnswitch` does, and as PoCL gets from running the
//! loop's test between its work-item loops): the first branch in the loop
//! whose condition is computed from values defined before the loop (by
//! instructions that neither trap nor touch memory) is decided once in a
//! new preheader, which enters one of two copies of the loop; each copy
//! takes one side of the branch unconditionally, and Cranelift's removal
//! of unreachable code drops the other side's blocks from it. The loop
//! that reaches the barrier again carries no exit path at all.
//!
//! A value of the loop that code after the loop uses reaches it through a
//! new parameter of the block the loop leaves to, which both copies pass
//! their own. Where that cannot be done (a block that code after the loop
//! uses the value in is reached from more than one exit, or an exit is
//! also entered from outside the loop), or the loop holds a jump table or
//! more than [`MAX_INSTS`] instructions, the function is left as it was.

use std::collections::HashMap;

use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    Block, BlockArg, BlockCall, DataFlowGraph, Function, Inst, InstructionData, Opcode, Value,
    ValueListPool,
};
use cranelift_codegen::loop_analysis::LoopAnalysis;

/// How many instructions deep an invariant condition is looked for.
const DEPTH: u32 = 8;

/// The most instructions a loop is copied with. The copy costs code
/// generation until Cranelift drops its dead side: SGEMM's batched loops
/// (about 1,800 instructions each) built in the same time as before, and
/// a loop of this size would take about ten times theirs.
const MAX_INSTS: usize = 20_000;

/// Unswitches the loop headed by `header` on its first invariant branch
/// (see the module docs); whether it did. `func`'s aliases must be
/// resolved.
pub(crate) fn unswitch(func: &mut Function, header: Block) -> bool {
    let Some(plan) = Plan::make(func, header) else {
        return false;
    };
    plan.apply(func);
    true
}

/// What an unswitching changes, found before anything is changed.
struct Plan {
    header: Block,
    /// The loop's blocks, dominators first.
    body: Vec<Block>,
    /// The branch, and its condition.
    branch: Inst,
    cond: Value,
    /// The predecessors of the header outside the loop.
    entries: Vec<Inst>,
    /// Each exit block whose code after it reads values of the loop: the
    /// values, and the blocks (outside the loop, dominated by the exit)
    /// that read them.
    exits: Vec<(Block, Vec<Value>, Vec<Block>)>,
}

impl Plan {
    fn make(func: &Function, header: Block) -> Option<Plan> {
        let cfg = ControlFlowGraph::with_function(func);
        let domtree = DominatorTree::with_function(func, &cfg);
        let mut loops = LoopAnalysis::new();
        loops.compute(func, &cfg, &domtree);
        let lp = loops.is_loop_header(header)?;
        let body: Vec<Block> = domtree
            .cfg_rpo()
            .copied()
            .filter(|b| loops.is_in_loop(*b, lp))
            .collect();
        let in_loop = |b: Block| loops.is_in_loop(b, lp);
        let size: usize = body
            .iter()
            .map(|b| func.layout.block_insts(*b).count())
            .sum();
        if size > MAX_INSTS {
            return None;
        }
        let def_block = |v: Value| match func.dfg.value_def(v) {
            cranelift_codegen::ir::ValueDef::Result(i, _) => func.layout.inst_block(i),
            cranelift_codegen::ir::ValueDef::Param(b, _) => Some(b),
            _ => None,
        };
        let defined_in_loop = |v: Value| def_block(v).is_some_and(in_loop);
        // A jump table's blocks would need copies of the table.
        for &b in &body {
            let last = func.layout.last_inst(b)?;
            if matches!(func.dfg.insts[last], InstructionData::BranchTable { .. }) {
                return None;
            }
        }
        // The first branch of the loop, dominators first, on a condition
        // invariant in it; not in a cold block (a fallback's).
        let (branch, cond) = body.iter().find_map(|&b| {
            if func.layout.is_cold(b) {
                return None;
            }
            let last = func.layout.last_inst(b)?;
            let InstructionData::Brif { arg, blocks, .. } = func.dfg.insts[last] else {
                return None;
            };
            let pool = &func.dfg.value_lists;
            let differ = blocks[0].block(pool) != blocks[1].block(pool);
            (differ && invariant(func, arg, &defined_in_loop, DEPTH)).then_some((last, arg))
        })?;
        let entries: Vec<Inst> = cfg
            .pred_iter(header)
            .filter(|p| !in_loop(p.block))
            .map(|p| p.inst)
            .collect();
        if entries.is_empty() {
            return None;
        }
        // The exits, with every predecessor in the loop.
        let mut exit_blocks: Vec<Block> = Vec::new();
        for &b in &body {
            for s in cfg.succ_iter(b) {
                if !in_loop(s) && !exit_blocks.contains(&s) {
                    exit_blocks.push(s);
                }
            }
        }
        // (The function's entry has no predecessor, so it is none.)
        let clean = |e: Block| cfg.pred_iter(e).all(|p| in_loop(p.block));
        // The loop's values that code outside it reads.
        let mut exits: Vec<(Block, Vec<Value>, Vec<Block>)> = Vec::new();
        for ob in func.layout.blocks() {
            if in_loop(ob) {
                continue;
            }
            for inst in func.layout.block_insts(ob) {
                for v in func.dfg.inst_values(inst) {
                    if !defined_in_loop(v) {
                        continue;
                    }
                    let mut by = exit_blocks
                        .iter()
                        .filter(|e| domtree.dominates(**e, ob, &func.layout));
                    let (Some(&e), None) = (by.next(), by.next()) else {
                        return None;
                    };
                    if !clean(e) {
                        return None;
                    }
                    // The value must be there on every edge into the exit.
                    let d = def_block(v)?;
                    if !cfg
                        .pred_iter(e)
                        .all(|p| domtree.dominates(d, p.block, &func.layout))
                    {
                        return None;
                    }
                    let at = match exits.iter().position(|x| x.0 == e) {
                        Some(at) => at,
                        None => {
                            exits.push((e, Vec::new(), Vec::new()));
                            exits.len() - 1
                        }
                    };
                    if !exits[at].1.contains(&v) {
                        exits[at].1.push(v);
                    }
                }
            }
        }
        // The blocks each exit dominates read its values: all of them are
        // rewritten (a block outside the loop reads the loop's values only
        // through the one exit that dominates it, as checked above).
        for x in &mut exits {
            x.2 = func
                .layout
                .blocks()
                .filter(|ob| !in_loop(*ob) && domtree.dominates(x.0, *ob, &func.layout))
                .collect();
        }
        Some(Plan {
            header,
            body,
            branch,
            cond,
            entries,
            exits,
        })
    }

    fn apply(self, func: &mut Function) {
        let in_loop: std::collections::HashSet<Block> = self.body.iter().copied().collect();
        // The copy: blocks, their parameters, then each instruction with
        // its operands and in-loop destinations mapped (dominators first,
        // so each operand's copy exists where it is read).
        let mut vmap: HashMap<Value, Value> = HashMap::new();
        let mut bmap: HashMap<Block, Block> = HashMap::new();
        let mut imap: HashMap<Inst, Inst> = HashMap::new();
        // The copies are laid out in the originals' order (the blocks a
        // hot path falls through stay so), after the function's blocks.
        let laid: Vec<Block> = func
            .layout
            .blocks()
            .filter(|b| in_loop.contains(b))
            .collect();
        for b in laid {
            let nb = func.dfg.make_block();
            for &p in func.dfg.block_params(b).to_vec().iter() {
                let ty = func.dfg.value_type(p);
                vmap.insert(p, func.dfg.append_block_param(nb, ty));
            }
            func.layout.append_block(nb);
            if func.layout.is_cold(b) {
                func.layout.set_cold(nb);
            }
            bmap.insert(b, nb);
        }
        for &b in &self.body {
            let insts: Vec<Inst> = func.layout.block_insts(b).collect();
            for inst in insts {
                let new = func.dfg.clone_inst(inst);
                func.dfg
                    .map_inst_values(new, |v| vmap.get(&v).copied().unwrap_or(v));
                destinations(&mut func.dfg, new, |call, pool| {
                    if let Some(&nb) = bmap.get(&call.block(pool)) {
                        call.set_block(nb, pool);
                    }
                });
                let old: Vec<Value> = func.dfg.inst_results(inst).to_vec();
                let fresh: Vec<Value> = func.dfg.inst_results(new).to_vec();
                vmap.extend(old.into_iter().zip(fresh));
                func.layout.append_inst(new, bmap[&b]);
                let loc = func.srcloc(inst);
                func.set_srcloc(new, loc);
                imap.insert(inst, new);
            }
        }
        // The exits' new parameters, passed by both copies' edges; the
        // code after the exit reads them.
        for (e, vals, readers) in &self.exits {
            let mut params = HashMap::new();
            for &v in vals {
                let ty = func.dfg.value_type(v);
                params.insert(v, func.dfg.append_block_param(*e, ty));
            }
            for &b in &self.body {
                let Some(last) = func.layout.last_inst(b) else {
                    continue;
                };
                for (inst, own) in [(last, true), (imap[&last], false)] {
                    destinations(&mut func.dfg, inst, |call, pool| {
                        if call.block(pool) == *e {
                            for &v in vals {
                                let arg = if own { v } else { vmap[&v] };
                                call.append_argument(arg, pool);
                            }
                        }
                    });
                }
            }
            for &ob in readers {
                debug_assert!(!in_loop.contains(&ob));
                let insts: Vec<Inst> = func.layout.block_insts(ob).collect();
                for inst in insts {
                    func.dfg
                        .map_inst_values(inst, |v| params.get(&v).copied().unwrap_or(v));
                }
            }
        }
        // Each copy takes one side of the branch.
        let InstructionData::Brif { blocks, .. } = func.dfg.insts[self.branch] else {
            unreachable!("the plan's branch is a brif");
        };
        func.dfg.insts[self.branch] = InstructionData::Jump {
            opcode: Opcode::Jump,
            destination: blocks[0],
        };
        let copy = imap[&self.branch];
        let InstructionData::Brif { blocks, .. } = func.dfg.insts[copy] else {
            unreachable!("a copy of a brif is a brif");
        };
        func.dfg.insts[copy] = InstructionData::Jump {
            opcode: Opcode::Jump,
            destination: blocks[1],
        };
        // The preheader: the condition, computed again from the values
        // the loop read it from, and the branch to either copy.
        let pre = func.dfg.make_block();
        let params: Vec<Value> = func
            .dfg
            .block_params(self.header)
            .to_vec()
            .into_iter()
            .map(|p| {
                let ty = func.dfg.value_type(p);
                func.dfg.append_block_param(pre, ty)
            })
            .collect();
        func.layout.insert_block(pre, self.header);
        let mut hoisted = HashMap::new();
        let cond = hoist(func, self.cond, &in_loop, pre, &mut hoisted);
        // Each copy is entered from a block of its own, where Cranelift
        // hoists what that copy alone computes before its loop (the exit
        // path's addresses): the other copy's entry does not pay for it.
        let args: Vec<BlockArg> = params.iter().map(|p| BlockArg::Value(*p)).collect();
        let entry_of = |func: &mut Function, header: Block| {
            let block = func.dfg.make_block();
            func.layout.insert_block(block, self.header);
            let pool = &mut func.dfg.value_lists;
            let to = BlockCall::new(header, args.iter().copied(), pool);
            let jump = func.dfg.make_inst(InstructionData::Jump {
                opcode: Opcode::Jump,
                destination: to,
            });
            func.layout.append_inst(jump, block);
            BlockCall::new(block, [], &mut func.dfg.value_lists)
        };
        let then = entry_of(func, self.header);
        let other = entry_of(func, bmap[&self.header]);
        let br = func.dfg.make_inst(InstructionData::Brif {
            opcode: Opcode::Brif,
            arg: cond,
            blocks: [then, other],
        });
        func.layout.append_inst(br, pre);
        for &inst in &self.entries {
            destinations(&mut func.dfg, inst, |call, pool| {
                if call.block(pool) == self.header {
                    call.set_block(pre, pool);
                }
            });
        }
    }
}

/// Calls `f` with each destination of branch `inst`.
fn destinations(
    dfg: &mut DataFlowGraph,
    inst: Inst,
    mut f: impl FnMut(&mut BlockCall, &mut ValueListPool),
) {
    let DataFlowGraph {
        insts,
        value_lists,
        jump_tables,
        exception_tables,
        ..
    } = dfg;
    for call in insts[inst].branch_destination_mut(jump_tables, exception_tables) {
        f(call, value_lists);
    }
}

/// Whether `v` is computed from values defined before the loop, by
/// instructions with no effect (no trap, no memory, no call) at most
/// `depth` deep.
fn invariant(func: &Function, v: Value, in_loop: &impl Fn(Value) -> bool, depth: u32) -> bool {
    if !in_loop(v) {
        return true;
    }
    let Some(inst) = func.dfg.value_def(v).inst() else {
        return false;
    };
    depth > 0
        && pure(func, inst)
        && func
            .dfg
            .inst_args(inst)
            .iter()
            .all(|a| invariant(func, *a, in_loop, depth - 1))
}

/// An instruction that computes its one result from its operands alone.
fn pure(func: &Function, inst: Inst) -> bool {
    let op = func.dfg.insts[inst].opcode();
    !(op.can_trap()
        || op.can_load()
        || op.can_store()
        || op.is_call()
        || op.is_branch()
        || op.is_terminator()
        || op.other_side_effects())
        && func.dfg.inst_results(inst).len() == 1
}

/// `v` computed in block `pre` (at its end): copies of the instructions of
/// the loop that compute it, operands first.
fn hoist(
    func: &mut Function,
    v: Value,
    in_loop: &std::collections::HashSet<Block>,
    pre: Block,
    done: &mut HashMap<Value, Value>,
) -> Value {
    if let Some(&h) = done.get(&v) {
        return h;
    }
    let Some(inst) = func.dfg.value_def(v).inst() else {
        return v;
    };
    if !func
        .layout
        .inst_block(inst)
        .is_some_and(|b| in_loop.contains(&b))
    {
        return v;
    }
    let args: Vec<Value> = func.dfg.inst_args(inst).to_vec();
    let mapped: Vec<Value> = args
        .iter()
        .map(|a| hoist(func, *a, in_loop, pre, done))
        .collect();
    let new = func.dfg.clone_inst(inst);
    let mut it = mapped.into_iter();
    func.dfg
        .map_inst_values(new, |_| it.next().expect("one value per operand"));
    func.layout.append_inst(new, pre);
    let h = func.dfg.first_result(new);
    done.insert(v, h);
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::cursor::{Cursor, FuncCursor};
    use cranelift_codegen::ir::condcodes::IntCC;
    use cranelift_codegen::ir::{types, AbiParam, InstBuilder, Signature, UserFuncName};
    use cranelift_codegen::settings::{self, Configurable};
    use cranelift_module::Module;

    /// `fn(n: i32, k: i32) -> i64`: a loop of `max(n, 1)` passes that
    /// adds 3 to its accumulator where `k > 0` (a test of values from
    /// before the loop, through a `sextend`) and doubles it and adds 1
    /// otherwise; after it, `10 * acc + i`, two of the loop's values. Or,
    /// with `loaded`, the test reads memory in the loop instead (`k` is
    /// then an address's low bits, never read: the function is not run).
    /// `pad` additions of nothing anyone reads make the loop longer.
    fn looped(
        call_conv: cranelift_codegen::isa::CallConv,
        loaded: bool,
        pad: usize,
    ) -> (Function, Block) {
        let mut sig = Signature::new(call_conv);
        sig.params.push(AbiParam::new(types::I32));
        sig.params.push(AbiParam::new(types::I32));
        sig.returns.push(AbiParam::new(types::I64));
        let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
        let [entry, header, a, b, latch, exit] = [0; 6].map(|_| func.dfg.make_block());
        let [n, k] = [0; 2].map(|_| func.dfg.append_block_param(entry, types::I32));
        let [i, acc] = [0; 2].map(|_| func.dfg.append_block_param(header, types::I64));
        let acc3 = func.dfg.append_block_param(latch, types::I64);
        let mut pos = FuncCursor::new(&mut func);
        pos.insert_block(entry);
        let zero = pos.ins().iconst(types::I64, 0);
        pos.ins().jump(header, &[zero.into(), zero.into()]);
        pos.insert_block(header);
        let kk = pos.ins().sextend(types::I64, k);
        let c = if loaded {
            let v = pos
                .ins()
                .load(types::I64, crate::translate::function::mem(), kk, 0);
            pos.ins().icmp_imm_s(IntCC::SignedGreaterThan, v, 0)
        } else {
            pos.ins().icmp_imm_s(IntCC::SignedGreaterThan, kk, 0)
        };
        pos.ins().brif(c, a, &[], b, &[]);
        pos.insert_block(a);
        for _ in 0..pad {
            pos.ins().iadd_imm_s(acc, 1);
        }
        let acc1 = pos.ins().iadd_imm_s(acc, 3);
        pos.ins().jump(latch, &[acc1.into()]);
        pos.insert_block(b);
        let acc2 = pos.ins().imul_imm_s(acc, 2);
        let acc2 = pos.ins().iadd_imm_s(acc2, 1);
        pos.ins().jump(latch, &[acc2.into()]);
        pos.insert_block(latch);
        let i1 = pos.ins().iadd_imm_s(i, 1);
        let nn = pos.ins().sextend(types::I64, n);
        let more = pos.ins().icmp(IntCC::SignedLessThan, i1, nn);
        pos.ins()
            .brif(more, header, &[i1.into(), acc3.into()], exit, &[]);
        pos.insert_block(exit);
        let r = pos.ins().imul_imm_s(acc3, 10);
        let r = pos.ins().iadd(r, i1);
        pos.ins().return_(&[r]);
        (func, header)
    }

    /// The unswitched loop computes what the loop did, for either side
    /// of its test and for one pass and several; the copies each take one
    /// side, and the preheader decides.
    #[test]
    fn an_unswitched_loop_computes_what_the_loop_did() {
        let mut flags = settings::builder();
        flags.set("opt_level", "speed").unwrap();
        let isa = cranelift_native::builder()
            .unwrap()
            .finish(settings::Flags::new(flags.clone()))
            .unwrap();
        let (mut func, header) = looped(isa.default_call_conv(), false, 0);
        assert!(unswitch(&mut func, header));
        let text = func.display().to_string();
        cranelift_codegen::verify_function(&func, &settings::Flags::new(flags))
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let brifs = func
            .layout
            .blocks()
            .filter_map(|b| func.layout.last_inst(b))
            .filter(|i| func.dfg.insts[*i].opcode() == Opcode::Brif)
            .count();
        // The preheader's and each copy's latch; the test is gone from
        // both loops, each entered from a block of its own.
        assert_eq!(brifs, 3, "{text}");
        let mut jb =
            cranelift_jit::JITBuilder::with_isa(isa, cranelift_module::default_libcall_names());
        jb.symbol_lookup_fn(Box::new(|_| None));
        let mut jit = cranelift_jit::JITModule::new(jb);
        let id = jit
            .declare_function("looped", cranelift_module::Linkage::Local, &func.signature)
            .unwrap();
        let mut ctx = cranelift_codegen::Context::for_function(func);
        jit.define_function(id, &mut ctx)
            .unwrap_or_else(|e| panic!("{e:?}\n{text}"));
        jit.finalize_definitions().unwrap();
        let code = jit.get_finalized_function(id);
        // SAFETY: `code` is the function just compiled, of the signature
        // `(i32, i32) -> i64` in the platform's C convention
        // (`default_call_conv`), and the module that holds it lives until
        // the end of the test.
        let f: extern "C" fn(i32, i32) -> i64 = unsafe { std::mem::transmute(code) };
        for (n, k) in [(1, 1), (5, 1), (5, -1), (0, -3), (7, 0), (3, i32::MAX)] {
            let passes = n.max(1) as i64;
            let acc = (0..passes).fold(0i64, |acc, _| if k > 0 { acc + 3 } else { acc * 2 + 1 });
            assert_eq!(f(n, k), 10 * acc + passes, "n = {n}, k = {k}");
        }
    }

    /// A test that reads memory in the loop is not the loop's invariant.
    #[test]
    fn a_test_that_reads_memory_in_the_loop_stays() {
        let (mut func, header) = looped(cranelift_codegen::isa::CallConv::SystemV, true, 0);
        let before = func.display().to_string();
        assert!(!unswitch(&mut func, header));
        assert_eq!(func.display().to_string(), before);
    }

    /// A loop of more than `MAX_INSTS` instructions is not copied; one of
    /// fewer is.
    #[test]
    fn a_loop_too_large_to_copy_stays() {
        let conv = cranelift_codegen::isa::CallConv::SystemV;
        // The loop's instructions: every block's but the entry's and the
        // exit's.
        let size = |func: &Function| {
            let blocks: Vec<Block> = func.layout.blocks().collect();
            blocks[1..blocks.len() - 1]
                .iter()
                .map(|b| func.layout.block_insts(*b).count())
                .sum::<usize>()
        };
        let (mut func, header) = looped(conv, false, MAX_INSTS);
        assert!(size(&func) > MAX_INSTS);
        let before = func.display().to_string();
        assert!(!unswitch(&mut func, header));
        assert_eq!(func.display().to_string(), before);
        let (mut func, header) = looped(conv, false, MAX_INSTS / 4);
        assert!(size(&func) <= MAX_INSTS);
        assert!(unswitch(&mut func, header), "under the limit");
    }
}
