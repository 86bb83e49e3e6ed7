//! Loads of local memory that race with nothing, by the kernel's barrier
//! intervals: the checked build's counterpart of `#[kernel]`'s proofs
//! (`clsync-macros`' `race_free`).
//!
//! An interval is the code between two work-group barriers that fence
//! local memory. Two work-items' accesses race only if they fall in one
//! interval (a barrier orders the others), and in a kernel whose barriers
//! sit in control flow the group takes together (a divergence is a report,
//! and the launch stops there), two work-items in one interval have passed
//! the same barrier last. So each access gets the barriers that may be the
//! last one passed before it, on any path through the kernel's blocks
//! (the kernel's start counts as one); a load of local memory whose
//! barriers meet no write's is in intervals where nothing writes local
//! memory, and races with nothing: a matrix product's reads of its tiles,
//! between the barrier after the tiles are written and the one before
//! they are written again.
//!
//! A store through a pointer into a local object the code names (a
//! kernel's `local` parameter or `local` array, through access chains:
//! `objects`) writes that object only, and a load of another object the
//! code names does not meet it: a scan's reads of one of its two arrays
//! while it writes the other. Conservative where it cannot see: a store
//! through another local or generic pointer, an atomic or copy through
//! one, any instruction this module does not know that takes such a
//! pointer, and every function call (a callee may write a module-scope
//! local variable) count as writes of all local memory; a
//! barrier that is not a work-group barrier fencing local memory (or one in
//! a callee) bounds nothing. Only a kernel's whole code is looked at (a
//! kernel no function calls, or the body that clang's stub for a kernel
//! calls once): a callee's intervals are its callers'.
//!
//! A launch takes the proof at its word where it does not run on from a
//! divergent barrier, and one that does in each group of work-item loops
//! until the group diverges (`exec::checked`, `ItemCtx::race_free`).

use std::collections::{BTreeSet, HashMap, HashSet};

use clsync_spirv::spirv::{Op, StorageClass, Word};
use clsync_spirv::{Constant, Function, Instruction, Module, Operand, Type};

use super::cfg::block_graph;
use super::written::makes_pointer;

/// What an instruction is to the intervals.
enum Role {
    /// A work-group barrier fencing local memory: the start of an
    /// interval.
    Boundary,
    /// It may write local memory: the local object it writes, where the
    /// code shows it (see [`objects`]).
    Write(Option<Word>),
    /// A load of local memory, and the object it reads, where known.
    Load(Word, Option<Word>),
    /// Nothing of the above.
    Other,
}

/// The result ids of `f`'s loads of local memory that race with nothing
/// (see the module's notes); empty where `f` is not a whole kernel's code
/// ([`whole_kernel`]).
pub(crate) fn race_free_loads(m: &Module, f: &Function) -> HashSet<Word> {
    if !whole_kernel(m, f) || f.blocks.is_empty() {
        return HashSet::new();
    }
    let types = pointer_types(m, f);
    let objects = objects(m, f, &types);
    let roles: Vec<Vec<Role>> = f
        .blocks
        .iter()
        .map(|b| {
            b.instructions
                .iter()
                .map(|(i, _)| role(m, &types, &objects, i))
                .collect()
        })
        .collect();
    // Each boundary's number (the kernel's start is 0).
    let mut sites: HashMap<(usize, usize), usize> = HashMap::new();
    for (b, block) in roles.iter().enumerate() {
        for (k, r) in block.iter().enumerate() {
            if matches!(r, Role::Boundary) {
                let n = sites.len() + 1;
                sites.insert((b, k), n);
            }
        }
    }
    // The boundaries that may be the last passed, at each block's start:
    // the kernel's start at the entry, joined over predecessors, until
    // nothing changes.
    let (_, succ) = block_graph(f);
    let mut entry: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); f.blocks.len()];
    entry[0].insert(0);
    let mut changed = true;
    while changed {
        changed = false;
        for (b, next) in succ.iter().enumerate() {
            let mut state = entry[b].clone();
            walk(&roles[b], b, &sites, &mut state, |_, _| {});
            for &s in next {
                if !state.is_subset(&entry[s]) {
                    entry[s].extend(state.iter().copied());
                    changed = true;
                }
            }
        }
    }

    // Each write's boundaries, by the object it writes (`None`: any), and
    // each load's.
    let mut written: HashMap<Option<Word>, BTreeSet<usize>> = HashMap::new();
    let mut loads: Vec<(Word, Option<Word>, BTreeSet<usize>)> = Vec::new();
    for (b, start) in entry.iter().enumerate() {
        let mut state = start.clone();
        walk(&roles[b], b, &sites, &mut state, |r, state| match r {
            Role::Write(object) => written
                .entry(*object)
                .or_default()
                .extend(state.iter().copied()),
            Role::Load(id, object) => loads.push((*id, *object, state.clone())),
            Role::Boundary | Role::Other => {}
        });
    }
    // A load and a write race where their boundaries meet, unless they
    // touch two objects the code tells apart.
    loads
        .into_iter()
        .filter(|(_, object, at)| {
            !at.is_empty()
                && written.iter().all(|(w, bounds)| {
                    let apart = matches!((object, w), (Some(a), Some(b)) if a != b);
                    apart || at.is_disjoint(bounds)
                })
        })
        .map(|(id, _, _)| id)
        .collect()
}

/// The local object each pointer of `f` points into, where the code
/// shows it: a `local` parameter of the kernel or a module-scope local
/// variable (a kernel's `local` array), followed through access chains.
/// Two such objects are apart: each `local` argument of a launch is an
/// allocation of its own, and so is each variable. For the body that
/// clang's stub calls, a parameter is the stub's argument it receives,
/// where that is one of the stub's parameters.
fn objects(m: &Module, f: &Function, types: &HashMap<Word, Word>) -> HashMap<Word, Word> {
    let local = |id: Word| {
        matches!(
            types.get(&id).map(|t| m.ty(*t)),
            Some(Ok(Type::Pointer {
                storage: StorageClass::Workgroup,
                ..
            }))
        )
    };
    let mut of: HashMap<Word, Word> = HashMap::new();
    for g in &m.globals {
        if local(g.id) {
            of.insert(g.id, g.id);
        }
    }
    // The body's caller, where `f` is the body of clang's stub (which
    // `whole_kernel` has checked).
    let kernel = m.entry_points.iter().any(|e| e.function == f.id);
    let stub_call = if kernel {
        None
    } else {
        calls_of(m, f.id).first().copied()
    };
    for (k, (p, _)) in f.params.iter().enumerate() {
        if !local(*p) {
            continue;
        }
        match stub_call {
            None => {
                of.insert(*p, *p);
            }
            Some((stub, call)) => {
                if let Some(Operand::IdRef(a)) = call.operands.get(k + 1) {
                    if stub.params.iter().any(|(q, _)| q == a) {
                        of.insert(*p, *a);
                    }
                }
            }
        }
    }
    // Access chains, in as many passes as their order needs.
    loop {
        let before = of.len();
        for (i, _) in f.blocks.iter().flat_map(|b| &b.instructions) {
            let chain = matches!(
                i.class.opcode,
                Op::AccessChain
                    | Op::InBoundsAccessChain
                    | Op::PtrAccessChain
                    | Op::InBoundsPtrAccessChain
            );
            if let (true, Some(id), Some(Operand::IdRef(base))) =
                (chain, i.result_id, i.operands.first())
            {
                if let Some(o) = of.get(base).copied() {
                    of.insert(id, o);
                }
            }
        }
        if of.len() == before {
            return of;
        }
    }
}

/// Walks block `b`'s instructions (their `roles`) from `state`, the
/// boundaries that may be the last passed at its start: a boundary (its
/// number in `sites`) replaces them; `at` sees every other instruction
/// with them.
fn walk(
    roles: &[Role],
    b: usize,
    sites: &HashMap<(usize, usize), usize>,
    state: &mut BTreeSet<usize>,
    mut at: impl FnMut(&Role, &BTreeSet<usize>),
) {
    for (k, r) in roles.iter().enumerate() {
        match sites.get(&(b, k)) {
            Some(&n) => {
                state.clear();
                state.insert(n);
            }
            None => at(r, state),
        }
    }
}

/// Whether `f`'s code is all of a kernel's, from its start to its end: a
/// kernel no function calls, or a function whose one call is from such a
/// kernel that does nothing else a barrier interval would see (clang
/// makes each kernel a stub that calls the kernel's body, a function of
/// its own).
fn whole_kernel(m: &Module, f: &Function) -> bool {
    let kernel = |id: Word| m.entry_points.iter().any(|e| e.function == id);
    let callers = calls_of(m, f.id);
    if kernel(f.id) {
        return callers.is_empty();
    }
    let [(stub, _)] = callers.as_slice() else {
        return false;
    };
    if !kernel(stub.id) || !calls_of(m, stub.id).is_empty() {
        return false;
    }
    // The stub's own code: the call, and nothing that touches local
    // memory or waits.
    let types = pointer_types(m, stub);
    stub.blocks.iter().all(|b| {
        b.instructions.iter().all(|(i, _)| {
            let the_call = i.class.opcode == Op::FunctionCall
                && matches!(i.operands.first(), Some(Operand::IdRef(c)) if *c == f.id);
            the_call || matches!(role(m, &types, &HashMap::new(), i), Role::Other)
        })
    })
}

/// The functions that call function `id`, each with its call, once per
/// call.
fn calls_of(m: &Module, id: Word) -> Vec<(&Function, &Instruction)> {
    m.functions
        .iter()
        .flat_map(|g| {
            g.blocks.iter().flat_map(move |b| {
                b.instructions.iter().filter_map(move |(i, _)| {
                    let call = i.class.opcode == Op::FunctionCall
                        && matches!(i.operands.first(), Some(Operand::IdRef(c)) if *c == id);
                    call.then_some((g, i))
                })
            })
        })
        .collect()
}

/// The functions of `m` that only kernels whose atomic operations and
/// async copies never reach local memory (their pointer is no local or
/// generic one) run, in any function they call. The checker records those
/// operations as atomic accesses, after which a cell of local memory is no
/// longer [settled](clsync::checker::engine::race_free_read_at) by a
/// plain write alone; a launch of such a kernel may skip the checker for
/// a race-free load of bytes a plain write wrote (`Fx::note_access`).
pub(crate) fn settled_by_writes(m: &Module) -> HashSet<Word> {
    let atomic: HashSet<Word> = m
        .functions
        .iter()
        .filter(|f| local_atomics(m, f))
        .map(|f| f.id)
        .collect();
    let mut unsettled = HashSet::new();
    for e in &m.entry_points {
        let runs = super::reachable_from(m, vec![e.function]);
        if !runs.is_disjoint(&atomic) {
            unsettled.extend(runs);
        }
    }
    m.functions
        .iter()
        .map(|f| f.id)
        .filter(|id| !unsettled.contains(id))
        .collect()
}

/// Whether an atomic operation or an async copy of `f` may reach local
/// memory: one of its operands is a local pointer, or a generic one that
/// may have been made from a local pointer (a generic pointer made by a
/// cast, access chain, copy, phi or select from other pointers reaches
/// local memory where one of those does; any other generic pointer, a
/// parameter or a loaded one, may). The built-ins of OpenCL C 2.0 take
/// generic pointers, so clang casts a global atomic's pointer to one.
fn local_atomics(m: &Module, f: &Function) -> bool {
    let types = pointer_types(m, f);
    let storage = |id: &Word| match types.get(id).map(|t| m.ty(*t)) {
        Some(Ok(Type::Pointer { storage, .. })) => Some(*storage),
        _ => None,
    };
    // The generic pointers made from other pointers, with those.
    let mut made: HashMap<Word, Vec<Word>> = HashMap::new();
    for (i, _) in f.blocks.iter().flat_map(|b| &b.instructions) {
        let Some(id) = i.result_id else { continue };
        if !makes_pointer(i.class.opcode) || storage(&id) != Some(StorageClass::Generic) {
            continue;
        }
        let from: Vec<Word> = super::id_operands(i)
            .filter(|o| storage(o).is_some())
            .collect();
        if !from.is_empty() {
            made.insert(id, from);
        }
    }
    let mut local: HashSet<Word> = types
        .keys()
        .copied()
        .filter(|id| match storage(id) {
            Some(StorageClass::Workgroup) => true,
            Some(StorageClass::Generic) => !made.contains_key(id),
            _ => false,
        })
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for (id, from) in &made {
            if !local.contains(id) && from.iter().any(|p| local.contains(p)) {
                local.insert(*id);
                changed = true;
            }
        }
    }
    f.blocks.iter().flat_map(|b| &b.instructions).any(|(i, _)| {
        atomic_or_copy(i.class.opcode) && super::id_operands(i).any(|o| local.contains(&o))
    })
}

/// The opcodes the checker records as atomic accesses: atomics, and the
/// work-group copies (`async_work_group_copy`).
fn atomic_or_copy(op: Op) -> bool {
    matches!(
        op,
        Op::AtomicLoad
            | Op::AtomicStore
            | Op::AtomicExchange
            | Op::AtomicCompareExchange
            | Op::AtomicCompareExchangeWeak
            | Op::AtomicIIncrement
            | Op::AtomicIDecrement
            | Op::AtomicIAdd
            | Op::AtomicISub
            | Op::AtomicSMin
            | Op::AtomicUMin
            | Op::AtomicSMax
            | Op::AtomicUMax
            | Op::AtomicAnd
            | Op::AtomicOr
            | Op::AtomicXor
            | Op::AtomicFlagTestAndSet
            | Op::AtomicFlagClear
            | Op::AtomicFAddEXT
            | Op::AtomicFMinEXT
            | Op::AtomicFMaxEXT
            | Op::GroupAsyncCopy
    )
}

/// The type of each pointer id `f` can name: its parameters', its
/// instructions' results, the module's variables.
fn pointer_types(m: &Module, f: &Function) -> HashMap<Word, Word> {
    let mut types: HashMap<Word, Word> = f.params.iter().copied().collect();
    types.extend(m.globals.iter().map(|g| (g.id, g.ty)));
    for block in &f.blocks {
        for (i, _) in &block.instructions {
            if let (Some(id), Some(ty)) = (i.result_id, i.result_type) {
                types.insert(id, ty);
            }
        }
    }
    types
}

/// What `i` is to the intervals (see [`Role`]).
fn role(
    m: &Module,
    types: &HashMap<Word, Word>,
    objects: &HashMap<Word, Word>,
    i: &Instruction,
) -> Role {
    // The address space of the pointer `id`, if it is one.
    let space = |id: &Word| match types.get(id).map(|t| m.ty(*t)) {
        Some(Ok(Type::Pointer { storage, .. })) => Some(*storage),
        _ => None,
    };
    let local = |id: &Word| {
        matches!(
            space(id),
            Some(StorageClass::Workgroup | StorageClass::Generic)
        )
    };
    let constant = |o: Option<&Operand>| match o {
        Some(Operand::IdRef(id) | Operand::IdScope(id) | Operand::IdMemorySemantics(id)) => {
            match m.constants.get(id) {
                Some(Constant::Scalar { bits, .. }) => Some(*bits),
                _ => None,
            }
        }
        _ => None,
    };
    let refs = || {
        i.operands.iter().filter_map(|o| match o {
            Operand::IdRef(id) => Some(id),
            _ => None,
        })
    };
    match i.class.opcode {
        Op::ControlBarrier => {
            // Work-group execution; memory scope of the work-group or
            // wider (CrossDevice 0, Device 1, Workgroup 2); semantics
            // with WorkgroupMemory (the runtime's CLK_LOCAL_MEM_FENCE).
            let exec = constant(i.operands.first());
            let scope = constant(i.operands.get(1));
            let semantics = constant(i.operands.get(2));
            match (exec, scope, semantics) {
                (Some(2), Some(0..=2), Some(s)) if s & 0x100 != 0 => Role::Boundary,
                _ => Role::Other,
            }
        }
        Op::Load => match (i.result_id, i.operands.first()) {
            (Some(id), Some(Operand::IdRef(p))) if space(p) == Some(StorageClass::Workgroup) => {
                Role::Load(id, objects.get(p).copied())
            }
            _ => Role::Other,
        },
        // A store of a value that is no local pointer, through a pointer
        // into a known object: a write of that object.
        Op::Store => match (i.operands.first(), i.operands.get(1)) {
            (Some(Operand::IdRef(p)), Some(Operand::IdRef(v)))
                if space(p) == Some(StorageClass::Workgroup) && !local(v) =>
            {
                Role::Write(objects.get(p).copied())
            }
            _ if refs().any(local) => Role::Write(None),
            _ => Role::Other,
        },
        // Pointers made from pointers, and uses that neither read nor
        // write through them.
        op if makes_pointer(op) => Role::Other,
        Op::PtrEqual
        | Op::PtrNotEqual
        | Op::PtrDiff
        | Op::LifetimeStart
        | Op::LifetimeStop
        | Op::Name
        | Op::Line
        | Op::NoLine => Role::Other,
        Op::FunctionCall => Role::Write(None),
        _ if refs().any(local) => Role::Write(None),
        _ => Role::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::race_free_loads;

    /// How many of the loads of local memory in `src`'s functions race
    /// with nothing, built optimized and as `-cl-opt-disable` leaves it.
    fn proven(src: &str) -> [usize; 2] {
        ["", "-cl-opt-disable"].map(|options| {
            let p = crate::Program::build(src, "k.cl", options)
                .unwrap_or_else(|e| panic!("build failed:\n{e}"));
            let m = &p.module;
            m.functions
                .iter()
                .map(|f| race_free_loads(m, f).len())
                .sum()
        })
    }

    #[test]
    fn a_tiles_reads_between_barriers_race_with_nothing() {
        let src = "kernel void k(global const float *a, global float *c) {
            local float t[64];
            size_t l = get_local_id(0);
            float acc = 0.0f;
            for (int i = 0; i < 4; i++) {
                t[l] = a[i * 64 + l];
                barrier(CLK_LOCAL_MEM_FENCE);
                for (int j = 0; j < 64; j++) acc += t[j];
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            c[get_global_id(0)] = acc;
        }";
        // Optimized; unoptimized, the local pointers kept in private
        // variables are stored values, which count as writes (nothing is
        // asserted of that build).
        let [o2, _] = proven(src);
        assert!(o2 >= 1, "optimized: {o2}");
    }

    #[test]
    fn a_read_and_a_write_after_one_barrier_share_its_interval() {
        // Work-item 0 reads t[5] while the others write it: one branch
        // each, after the same barrier.
        let src = "kernel void k(global int *out) {
            local int t[64];
            size_t l = get_local_id(0);
            t[l] = 1;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (l == 0) out[0] = t[5]; else t[5] = (int)l;
        }";
        assert_eq!(proven(src), [0, 0]);
    }

    #[test]
    fn a_barrier_of_global_memory_bounds_no_interval() {
        let src = "kernel void k(global int *out) {
            local int t[64];
            size_t l = get_local_id(0);
            t[l] = 1;
            barrier(CLK_GLOBAL_MEM_FENCE);
            out[l] = t[(l + 1) % 64];
        }";
        assert_eq!(proven(src), [0, 0]);
    }

    #[test]
    fn reads_of_one_local_object_while_another_is_written_race_with_nothing() {
        // `a`'s reads share their interval with writes of `b` only; `b`'s
        // read after the second barrier, with nothing.
        let src = "kernel void k(global int *out, local int *a, local int *b) {
            size_t l = get_local_id(0);
            a[l] = (int)l;
            barrier(CLK_LOCAL_MEM_FENCE);
            b[l] = a[(l + 1) % 64] + a[l];
            barrier(CLK_LOCAL_MEM_FENCE);
            out[get_global_id(0)] = b[(l + 3) % 64];
        }";
        let [o2, _] = proven(src);
        assert_eq!(o2, 3, "optimized");
    }

    #[test]
    fn a_write_through_a_pointer_to_either_object_is_a_write_of_both() {
        let src = "kernel void k(global int *out, local int *a, local int *b, int which) {
            size_t l = get_local_id(0);
            a[l] = (int)l;
            b[l] = 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            local int *p = which ? a : b;
            p[l] = a[(l + 1) % 64];
        }";
        assert_eq!(proven(src), [0, 0]);
    }

    #[test]
    fn a_call_in_the_interval_counts_as_a_write() {
        let src = "void put(local int *t, size_t i) { t[i] = 2; }
        kernel void k(global int *out) {
            local int t[64];
            size_t l = get_local_id(0);
            t[l] = 1;
            barrier(CLK_LOCAL_MEM_FENCE);
            out[l] = t[(l + 1) % 64];
            put(t, l);
        }";
        // Optimized, `put` is inlined: its store is the interval's write.
        assert_eq!(proven(src), [0, 0]);
    }

    #[test]
    fn only_kernels_without_local_atomics_have_their_reads_settled_by_writes() {
        use std::collections::HashSet;

        use clsync_spirv::spirv::Word;

        // `h` counts into local atomics through a helper; `s` shares
        // another helper with `h` (unoptimized: optimized, each has it
        // inlined), which `h` runs; `t` has only its own code, and a global
        // atomic (through a generic pointer, as OpenCL C 2.0's built-ins
        // take it). What `h` runs is not settled by writes; the rest is.
        let src = "void count(local atomic_uint *c, uint v) {
                atomic_fetch_add_explicit(c, v, memory_order_relaxed, memory_scope_work_group);
            }
            int twice(int v) { return 2 * v; }
            kernel void h(global int *out) {
                local atomic_uint c[1];
                count(c, 1u);
                out[0] = twice(1);
            }
            kernel void s(global int *out) { out[0] = twice(2); }
            kernel void t(global atomic_int *out) {
                local int a[4];
                a[get_local_id(0)] = 1;
                barrier(CLK_LOCAL_MEM_FENCE);
                atomic_fetch_add(out, a[0]);
            }";
        for options in ["-cl-std=CL2.0", "-cl-std=CL2.0 -cl-opt-disable"] {
            let p = crate::Program::build(src, "k.cl", options)
                .unwrap_or_else(|e| panic!("build failed:\n{e}"));
            let m = &p.module;
            let settled = super::settled_by_writes(m);
            let runs = |k: &str| {
                let e = m.entry_points.iter().find(|e| e.name == k).unwrap();
                crate::translate::reachable_from(m, vec![e.function])
            };
            let (h, s, t) = (runs("h"), runs("s"), runs("t"));
            assert!(h.is_disjoint(&settled), "{options}");
            let shared: HashSet<Word> = s.intersection(&h).copied().collect();
            assert_eq!(shared.is_empty(), !options.contains("disable"), "{options}");
            assert!(
                shared.is_disjoint(&settled),
                "{options}: `twice` is `h`'s too"
            );
            assert!(s.difference(&h).all(|f| settled.contains(f)), "{options}");
            assert!(t.is_subset(&settled), "{options}");
        }
    }
}
