//! Which kernels run as work-item loops, and what each barrier keeps: the
//! values live right after it (a backward liveness analysis over the
//! function's blocks, phis used on their edges), less those the loop's
//! head already has (the work-item's ids) and those cheap enough to
//! compute again where a work-item resumes.

use std::collections::{HashMap, HashSet};

use clsync_spirv::spirv::{Op, Word};
use clsync_spirv::{Function, Instruction, Module, Operand};

/// The continuation plan of one kernel.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// Every value live across some barrier.
    pub cross: HashSet<Word>,
    /// The values live right after each barrier, by (block label, index of
    /// the barrier in the block).
    pub live: HashMap<(Word, usize), Vec<Word>>,
    /// Values computed again where a work-item resumes rather than kept in
    /// its frame (see [`rematerialized`]), with their instructions.
    pub remat: HashMap<Word, Instruction>,
    /// The work-item built-ins the kernel's body reads, a bit per index of
    /// the context's built-ins (see [`ids_read`]): what the loop's head
    /// makes.
    pub ids_read: u64,
    /// Each load of a built-in vector in the body, with the components
    /// anything reads (a bit each): the others are never made.
    pub components: HashMap<Word, u8>,
    /// A function for one state only (see `translate::continuation`):
    /// its loop goes straight to that state's code, and the code only the
    /// other states reach is left out.
    pub only_state: Option<u32>,
    /// A function of lane batches (see `continuation::batch`), with what
    /// it needs to know of the kernel.
    pub lanes: Option<super::batch::LanePlan>,
}

/// Why a kernel runs on coroutines instead (for tests and `CLSYNC_DEBUG`).
pub(crate) type Refusal = String;

/// Whether `op` is a group operation other than a work-group barrier:
/// collectives, async copies and their events, sub-group operations. Each
/// needs the work-items of its group at one point together, which the
/// coroutine engine gives and a continuation would need more states for.
fn is_group_op(op: Op) -> bool {
    let name = format!("{op:?}");
    name.starts_with("Group") || name.contains("Subgroup")
}

/// The plan for kernel `f`, or why it cannot run as work-item loops: each
/// barrier must be a work-group barrier in the kernel's own body (a called
/// function returns to its caller, not to the group's loop), and neither
/// it nor what it calls may use collectives, async copies or sub-group
/// operations.
pub(crate) fn plan(m: &Module, f: &Function) -> Result<Plan, Refusal> {
    // Its copy would be made again on each resume.
    if !crate::translate::byval::written(m, f).is_empty() {
        return Err("a by-value argument that the kernel writes".into());
    }
    let mut seen = HashSet::new();
    let mut todo = vec![(f.id, true)];
    while let Some((id, is_kernel)) = todo.pop() {
        if !seen.insert(id) {
            continue;
        }
        let Some(g) = m.function(id) else { continue };
        for b in &g.blocks {
            for (inst, _) in &b.instructions {
                let op = inst.class.opcode;
                if op == Op::ControlBarrier {
                    if !is_kernel {
                        return Err(format!("`{}` calls a barrier", g.name));
                    }
                    let exec = scope_of(m, inst).ok_or("a barrier with a run-time scope")?;
                    if exec != 2 {
                        return Err("a sub-group barrier".into());
                    }
                } else if is_group_op(op) {
                    return Err(format!("Op{op:?}"));
                } else if op == Op::FunctionCall {
                    if let Some(Operand::IdRef(c)) = inst.operands.first() {
                        todo.push((*c, false));
                    }
                }
            }
        }
    }
    let mut plan = liveness(f);
    // The work-item's own ids are values of the loop's head, which
    // dominates every block: what only reads them needs no frame.
    let free = head_values(m, f);
    plan.cross.retain(|id| !free.contains(id));
    for live in plan.live.values_mut() {
        live.retain(|id| !free.contains(id));
    }
    plan.remat = rematerialized(m, f, &free);
    (plan.ids_read, plan.components) = ids_read(m, f);
    Ok(plan)
}

/// The work-item built-ins body `f` reads (its callees read theirs from
/// the context), a bit per index of the context's built-ins, and for each
/// load of a built-in vector the components that anything reads: a load's
/// components are read where a `OpCompositeExtract` with a constant index
/// takes them, and all of them where anything else uses the vector. (The
/// SPIR-V built-ins are vectors of three: `get_global_id(0)` is a load of
/// all three and an extract of the first.)
pub(crate) fn ids_read(m: &Module, f: &Function) -> (u64, HashMap<Word, u8>) {
    use crate::exec::ctx::builtin::*;
    use clsync_spirv::spirv::BuiltIn;
    let first = |ptr: &Word| {
        Some(match crate::translate::builtin_of(m, *ptr)? {
            BuiltIn::GlobalInvocationId => (GLOBAL_ID, 3),
            BuiltIn::LocalInvocationId => (LOCAL_ID, 3),
            BuiltIn::GlobalLinearId => (GLOBAL_LINEAR_ID, 1),
            BuiltIn::LocalInvocationIndex => (LOCAL_LINEAR_ID, 1),
            BuiltIn::SubgroupId => (SUB_GROUP_ID, 1),
            BuiltIn::SubgroupLocalInvocationId => (SUB_GROUP_LOCAL_ID, 1),
            BuiltIn::SubgroupSize => (SUB_GROUP_SIZE, 1),
            _ => return None,
        })
    };
    let insts = || {
        f.blocks
            .iter()
            .flat_map(|b| &b.instructions)
            .map(|(i, _)| i)
    };
    let mut loads: HashMap<Word, (usize, usize)> = HashMap::new();
    for inst in insts() {
        if let (Op::Load, Some(r), Some(Operand::IdRef(p))) =
            (inst.class.opcode, inst.result_id, inst.operands.first())
        {
            if let Some(b) = first(p) {
                loads.insert(r, b);
            }
        }
    }
    let mut components: HashMap<Word, u8> = loads.keys().map(|r| (*r, 0)).collect();
    for inst in insts() {
        for (k, o) in inst.operands.iter().enumerate() {
            let Operand::IdRef(w) = o else { continue };
            let Some(c) = components.get_mut(w) else {
                continue;
            };
            *c |= match (inst.class.opcode, k, inst.operands.get(1)) {
                (Op::CompositeExtract, 0, Some(Operand::LiteralBit32(i))) if *i < 3 => 1 << i,
                _ => 0b111,
            };
        }
    }
    let mut read = 0u64;
    for (r, (first, n)) in &loads {
        let mask = if *n == 1 { 1 } else { components[r] };
        for k in 0..*n {
            if mask & (1 << k) != 0 {
                read |= 1 << (first + k);
            }
        }
    }
    (read, components)
}

/// Whether `op` is integer arithmetic (but division), a comparison, a
/// conversion between integer widths or an extract: what reads no memory,
/// has no effect and cannot trap, so that it may run again or ahead of its
/// block (a shift past the width is the translation's masked shift
/// wherever it runs).
pub(super) fn pure_integer(op: Op) -> bool {
    matches!(
        op,
        Op::IAdd
            | Op::ISub
            | Op::IMul
            | Op::ShiftLeftLogical
            | Op::ShiftRightLogical
            | Op::ShiftRightArithmetic
            | Op::BitwiseAnd
            | Op::BitwiseOr
            | Op::BitwiseXor
            | Op::UConvert
            | Op::SConvert
            | Op::IEqual
            | Op::INotEqual
            | Op::ULessThan
            | Op::ULessThanEqual
            | Op::UGreaterThan
            | Op::UGreaterThanEqual
            | Op::SLessThan
            | Op::SLessThanEqual
            | Op::SGreaterThan
            | Op::SGreaterThanEqual
            | Op::CompositeExtract
    )
}

/// The values of `f` cheap enough to compute again where a work-item
/// resumes instead of keeping them in its frame: integer arithmetic,
/// comparisons, conversions, extracts and access chains whose operands are
/// constants, the kernel's parameters, program-scope variables, the
/// work-item's ids ([`head_values`]) or other such values (the pointer
/// `s + get_local_id(0)` that a reduction keeps across each barrier, say).
fn rematerialized(m: &Module, f: &Function, free: &HashSet<Word>) -> HashMap<Word, Instruction> {
    let params: HashSet<Word> = f.params.iter().map(|(p, _)| *p).collect();
    let cheap = |op: Op| {
        pure_integer(op)
            || matches!(
                op,
                Op::AccessChain
                    | Op::InBoundsAccessChain
                    | Op::PtrAccessChain
                    | Op::InBoundsPtrAccessChain
            )
    };
    let mut remat: HashMap<Word, Instruction> = HashMap::new();
    // A value's operands come first in dominance order, which is not
    // always the blocks' order: passes until nothing is added.
    loop {
        let before = remat.len();
        for b in &f.blocks {
            for (inst, _) in &b.instructions {
                let Some(r) = inst.result_id else { continue };
                if remat.contains_key(&r) || free.contains(&r) || !cheap(inst.class.opcode) {
                    continue;
                }
                let available = inst.operands.iter().all(|o| match o {
                    Operand::IdRef(w) => {
                        m.constants.contains_key(w)
                            || params.contains(w)
                            || free.contains(w)
                            || remat.contains_key(w)
                            || m.globals.iter().any(|g| g.id == *w)
                    }
                    _ => true,
                });
                if available {
                    remat.insert(r, inst.clone());
                }
            }
        }
        if remat.len() == before {
            return remat;
        }
    }
}

/// The instructions that compute `live`'s rematerialized values again,
/// with the rematerialized values they read, each after what it reads.
pub(super) fn remat_order<'p>(plan: &'p Plan, live: &[Word]) -> Vec<&'p Instruction> {
    fn visit<'p>(
        plan: &'p Plan,
        id: Word,
        seen: &mut HashSet<Word>,
        out: &mut Vec<&'p Instruction>,
    ) {
        let Some(inst) = plan.remat.get(&id) else {
            return;
        };
        if !seen.insert(id) {
            return;
        }
        for o in &inst.operands {
            if let Operand::IdRef(w) = o {
                visit(plan, *w, seen, out);
            }
        }
        out.push(inst);
    }
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for id in live {
        visit(plan, *id, &mut seen, &mut out);
    }
    out
}

/// The values of `f` that a continuation build translates to values of
/// the work-item loop's head (see `Fx::head_ids`): loads of the work-item's
/// 64-bit ids (`get_global_id`, `get_local_id` and the linear ones on a
/// 64-bit device), and components extracted from them.
fn head_values(m: &Module, f: &Function) -> HashSet<Word> {
    use clsync_spirv::spirv::BuiltIn;
    let per_item = |ptr: &Word| {
        matches!(
            crate::translate::builtin_of(m, *ptr),
            Some(
                BuiltIn::GlobalInvocationId
                    | BuiltIn::LocalInvocationId
                    | BuiltIn::GlobalLinearId
                    | BuiltIn::LocalInvocationIndex
            )
        )
    };
    let all_64 = |ty: Option<Word>| {
        ty.and_then(|t| m.leaves(t).ok()).is_some_and(|leaves| {
            leaves
                .iter()
                .all(|l| matches!(m.ty(l.ty), Ok(clsync_spirv::Type::Int(64))))
        })
    };
    let mut free = HashSet::new();
    // Blocks in order: a load comes before the extracts that read it in
    // every block order llvm-spirv writes (its definition dominates them);
    // one that does not is simply kept in the frame.
    for b in &f.blocks {
        for (inst, _) in &b.instructions {
            let (Some(r), Some(Operand::IdRef(from))) = (inst.result_id, inst.operands.first())
            else {
                continue;
            };
            let is_free = match inst.class.opcode {
                Op::Load => per_item(from) && all_64(inst.result_type),
                Op::CompositeExtract => free.contains(from),
                _ => false,
            };
            if is_free {
                free.insert(r);
            }
        }
    }
    free
}

/// The function that is the kernel's body: `f` itself, or the function it
/// only calls with its own parameters (llvm-spirv makes a kernel's entry
/// point such a wrapper around the kernel's function).
pub(crate) fn body<'m>(m: &'m Module, f: &'m Function) -> &'m Function {
    let [b] = f.blocks.as_slice() else { return f };
    let [(call, _), (ret, _)] = b.instructions.as_slice() else {
        return f;
    };
    if call.class.opcode != Op::FunctionCall || ret.class.opcode != Op::Return {
        return f;
    }
    let passes_params = call.operands.len() == f.params.len() + 1
        && call.operands[1..]
            .iter()
            .zip(&f.params)
            .all(|(o, (p, _))| *o == Operand::IdRef(*p));
    match call.operands.first() {
        Some(Operand::IdRef(c)) if passes_params => m.function(*c).unwrap_or(f),
        _ => f,
    }
}

/// The constant execution scope of a barrier.
fn scope_of(m: &Module, inst: &Instruction) -> Option<u64> {
    match inst.operands.first() {
        Some(Operand::IdScope(w)) | Some(Operand::IdRef(w)) => match m.constants.get(w) {
            Some(clsync_spirv::Constant::Scalar { bits, .. }) => Some(*bits),
            _ => None,
        },
        _ => None,
    }
}

/// The value ids an instruction reads (phis excepted: theirs are read on
/// the edges). A load or store also reads the pointer its pointer's access
/// chains started from, whose slot the access looks up (`Fx::address`).
fn uses<'a>(
    inst: &'a Instruction,
    defs: &'a HashSet<Word>,
    roots: &'a HashMap<Word, Word>,
) -> impl Iterator<Item = Word> + 'a {
    let root = match (inst.class.opcode, inst.operands.first()) {
        (Op::Load | Op::Store, Some(Operand::IdRef(p))) => roots.get(p).copied(),
        _ => None,
    };
    crate::translate::id_operands(inst)
        .chain(root)
        .filter(move |w| defs.contains(w))
}

/// Each pointer an access chain makes, with the pointer its chains started
/// from (as `Fx::address` finds it).
fn chain_roots(f: &Function) -> HashMap<Word, Word> {
    let mut base = HashMap::new();
    for b in &f.blocks {
        for (inst, _) in &b.instructions {
            let chain = matches!(
                inst.class.opcode,
                Op::AccessChain
                    | Op::InBoundsAccessChain
                    | Op::PtrAccessChain
                    | Op::InBoundsPtrAccessChain
            );
            if let (true, Some(r), Some(Operand::IdRef(from))) =
                (chain, inst.result_id, inst.operands.first())
            {
                base.insert(r, *from);
            }
        }
    }
    let mut roots = HashMap::new();
    for (&r, &from) in &base {
        let mut root = from;
        // Chains are acyclic in valid SPIR-V (a base is defined first);
        // the bound keeps invalid input from looping.
        for _ in 0..base.len() {
            match base.get(&root) {
                Some(b) => root = *b,
                None => break,
            }
        }
        roots.insert(r, root);
    }
    roots
}

/// Backward liveness of `f`'s values, then the set live after each
/// barrier.
fn liveness(f: &Function) -> Plan {
    let defs: HashSet<Word> = f
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter().filter_map(|(i, _)| i.result_id))
        .collect();
    let n = f.blocks.len();
    let roots = chain_roots(f);
    let (index, succ) = crate::translate::cfg::block_graph(f);
    // Per block: upward-exposed uses, definitions, and the values its
    // successors' phis take on the edge from it.
    let mut gen = vec![HashSet::new(); n];
    let mut kill = vec![HashSet::new(); n];
    let mut edge_uses = vec![HashSet::new(); n];
    for (bi, b) in f.blocks.iter().enumerate() {
        for (inst, _) in &b.instructions {
            if inst.class.opcode != Op::Phi {
                for u in uses(inst, &defs, &roots) {
                    if !kill[bi].contains(&u) {
                        gen[bi].insert(u);
                    }
                }
            }
            if let Some(r) = inst.result_id {
                kill[bi].insert(r);
            }
        }
    }
    for b in &f.blocks {
        for (inst, _) in &b.instructions {
            if inst.class.opcode != Op::Phi {
                continue;
            }
            for pair in inst.operands.chunks(2) {
                if let [Operand::IdRef(v), Operand::IdRef(p)] = pair {
                    if let (true, Some(pi)) = (defs.contains(v), index.get(p)) {
                        edge_uses[*pi].insert(*v);
                    }
                }
            }
        }
    }
    let mut live_in: Vec<HashSet<Word>> = vec![HashSet::new(); n];
    let mut live_out: Vec<HashSet<Word>> = vec![HashSet::new(); n];
    let mut changed = true;
    while changed {
        changed = false;
        for bi in (0..n).rev() {
            let mut out = edge_uses[bi].clone();
            for s in &succ[bi] {
                out.extend(live_in[*s].iter().copied());
            }
            let mut inn = gen[bi].clone();
            inn.extend(out.iter().filter(|v| !kill[bi].contains(v)).copied());
            if inn.len() != live_in[bi].len() || out.len() != live_out[bi].len() {
                changed = true;
                live_in[bi] = inn;
                live_out[bi] = out;
            }
        }
    }
    let mut plan = Plan::default();
    for (bi, b) in f.blocks.iter().enumerate() {
        let mut live = live_out[bi].clone();
        for (k, (inst, _)) in b.instructions.iter().enumerate().rev() {
            if inst.class.opcode == Op::ControlBarrier {
                let mut l: Vec<Word> = live.iter().copied().collect();
                l.sort_unstable();
                plan.cross.extend(l.iter().copied());
                plan.live.insert((b.label, k), l);
                continue;
            }
            if let Some(r) = inst.result_id {
                live.remove(&r);
            }
            if inst.class.opcode != Op::Phi {
                live.extend(uses(inst, &defs, &roots));
            }
        }
    }
    plan
}
