//! What the checked build's analyses of a whole kernel's code share
//! (`translate::intervals` for local memory, `translate::local_atomics`
//! for its atomics, `translate::slices` for buffers): which functions are
//! a whole kernel's code, the objects its pointers point into, and the
//! work-group barriers that may be the last passed before each
//! instruction.

use std::collections::{BTreeSet, HashMap, HashSet};

use clsync_spirv::spirv::{Op, StorageClass, Word};
use clsync_spirv::{Constant, Function, Instruction, Module, Operand, Type};

use super::cfg::block_graph;
use super::written::derives_pointer;

/// What the checked build's analyses of a whole kernel's code
/// ([`whole_kernel`]) share, made once per function: its pointers' types,
/// the local objects they point into ([`objects`]), its block graph and
/// the boundaries before each instruction ([`bounds_before`]).
pub(crate) struct KernelCode {
    pub(super) types: HashMap<Word, Word>,
    pub(super) objects: HashMap<Word, Word>,
    pub(super) graph: (HashMap<Word, usize>, Vec<Vec<usize>>),
    pub(super) before: Vec<Vec<Bounds>>,
}

impl KernelCode {
    /// `f`'s, where it is a whole kernel's code with blocks.
    pub(crate) fn of(m: &Module, f: &Function) -> Option<KernelCode> {
        if !whole_kernel(m, f) || f.blocks.is_empty() {
            return None;
        }
        let types = pointer_types(m, f);
        let objects = objects(m, f, &types);
        let graph = block_graph(f);
        let before = bounds_before(m, f, &graph, LOCAL_FENCE);
        Some(KernelCode {
            types,
            objects,
            graph,
            before,
        })
    }
}

/// The boundaries that may be the last an access passed.
pub(super) type Bounds = BTreeSet<usize>;

/// The local object each pointer of `f` points into, where the code
/// shows it: a `local` parameter of the kernel or a module-scope local
/// variable (a kernel's `local` array), followed through access chains,
/// casts, and the private variables that hold them ([`held_pointers`]).
/// Two such objects are apart: each `local` argument of a launch is an
/// allocation of its own, and so is each variable. For the body that
/// clang's stub calls, a parameter is the stub's argument it receives,
/// where that is one of the stub's parameters.
pub(super) fn objects(
    m: &Module,
    f: &Function,
    types: &HashMap<Word, Word>,
) -> HashMap<Word, Word> {
    objects_in(m, f, types, StorageClass::Workgroup)
}

/// [`objects`] of storage class `storage`: for `CrossWorkgroup`, the
/// kernel's `global` parameters (a launch's buffer arguments are apart
/// where it says so, `exec::bind`), for `Workgroup`, its local objects.
pub(super) fn objects_in(
    m: &Module,
    f: &Function,
    types: &HashMap<Word, Word>,
    storage: StorageClass,
) -> HashMap<Word, Word> {
    let local = |id: Word| {
        matches!(
            types.get(&id).map(|t| m.ty(*t)),
            Some(Ok(Type::Pointer { storage: s, .. })) if *s == storage
        )
    };
    let mut of: HashMap<Word, Word> = HashMap::new();
    for g in &m.globals {
        if storage == StorageClass::Workgroup && local(g.id) {
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
    let held = held_pointers(m, f, types);
    // Access chains, casts and private variables, in as many passes as
    // their order needs.
    loop {
        let before = of.len();
        for (loads, stored) in held.values() {
            let mut objects = stored.iter().map(|v| of.get(v).copied());
            let Some(Some(o)) = objects.next() else {
                continue;
            };
            if objects.all(|x| x == Some(o)) {
                for l in loads {
                    of.insert(*l, o);
                }
            }
        }
        for (i, _) in f.blocks.iter().flat_map(|b| &b.instructions) {
            // Casts keep the object too (a generic pointer made from a
            // local one, as OpenCL C 2.0's atomics take them).
            let chain = derives_pointer(i.class.opcode);
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

/// The private variables of `f` that hold pointers and nothing else
/// reaches: each variable's loads and the values stored to it, where every
/// use of the variable is a load from it or a store to it. An unoptimized
/// build keeps each parameter and pointer variable of the kernel in such a
/// variable (clang's `-O0` stores every argument to a stack slot); a load
/// from one points into the object every stored value points into.
pub(super) fn held_pointers(
    m: &Module,
    f: &Function,
    types: &HashMap<Word, Word>,
) -> HashMap<Word, (Vec<Word>, Vec<Word>)> {
    let mut held: HashMap<Word, (Vec<Word>, Vec<Word>)> = HashMap::new();
    for (i, _) in f.blocks.iter().flat_map(|b| &b.instructions) {
        if let (Op::Variable, Some(v)) = (i.class.opcode, i.result_id) {
            let private = matches!(
                types.get(&v).map(|t| m.ty(*t)),
                Some(Ok(Type::Pointer {
                    storage: StorageClass::Function,
                    ..
                }))
            );
            if private {
                held.insert(v, (Vec::new(), Vec::new()));
            }
        }
    }
    let mut escaped = HashSet::new();
    for (i, _) in f.blocks.iter().flat_map(|b| &b.instructions) {
        let first = match i.operands.first() {
            Some(Operand::IdRef(p)) => Some(*p),
            _ => None,
        };
        for (k, id) in super::id_operands(i).enumerate() {
            let Some(entry) = held.get_mut(&id) else {
                continue;
            };
            match (i.class.opcode, k, first == Some(id), i.result_id) {
                (Op::Load, 0, true, Some(r)) => entry.0.push(r),
                (Op::Store, 0, true, _) => {
                    if let Some(Operand::IdRef(v)) = i.operands.get(1) {
                        entry.1.push(*v);
                    }
                }
                _ => {
                    escaped.insert(id);
                }
            }
        }
    }
    held.retain(|v, _| !escaped.contains(v));
    held
}

/// `roots` (pointers to objects' first elements) and the loads of the
/// private variables of `f` that hold them ([`held_pointers`]) where every
/// value stored there is one of them: an unoptimized build loads a
/// kernel's parameter from its stack slot at each use.
pub(super) fn with_held(
    m: &Module,
    f: &Function,
    types: &HashMap<Word, Word>,
    mut roots: HashSet<Word>,
) -> HashSet<Word> {
    for (loads, stored) in held_pointers(m, f, types).values() {
        if !stored.is_empty() && stored.iter().all(|v| roots.contains(v)) {
            roots.extend(loads.iter().copied());
        }
    }
    roots
}

/// For each instruction of `f` (by block and index), the boundaries that
/// may be the last one passed before it, on any path through the kernel's
/// blocks (`graph`, `cfg::block_graph`): a boundary is a work-group
/// barrier fencing the memory of `fence` ([`boundary`]), numbered from 1
/// in the code's order; the kernel's start is 0.
pub(super) fn bounds_before(
    m: &Module,
    f: &Function,
    (_, succ): &(HashMap<Word, usize>, Vec<Vec<usize>>),
    fence: u64,
) -> Vec<Vec<Bounds>> {
    let mut number = 0;
    let sites: Vec<Vec<Option<usize>>> = f
        .blocks
        .iter()
        .map(|b| {
            b.instructions
                .iter()
                .map(|(i, _)| {
                    boundary(m, i, fence).then(|| {
                        number += 1;
                        number
                    })
                })
                .collect()
        })
        .collect();
    // Walks block `b` from `state` (the boundaries that may be the last
    // passed at its start): a boundary replaces them; `at` sees the state
    // before each instruction.
    let walk = |b: usize, state: &mut Bounds, at: &mut dyn FnMut(&Bounds)| {
        for site in &sites[b] {
            at(state);
            if let Some(n) = site {
                state.clear();
                state.insert(*n);
            }
        }
    };
    // At each block's start: the kernel's start at the entry, joined over
    // predecessors, until nothing changes.
    let mut entry: Vec<Bounds> = vec![Bounds::new(); f.blocks.len()];
    entry[0].insert(0);
    let mut changed = true;
    while changed {
        changed = false;
        for (b, next) in succ.iter().enumerate() {
            let mut state = entry[b].clone();
            walk(b, &mut state, &mut |_| {});
            for &s in next {
                if !state.is_subset(&entry[s]) {
                    entry[s].extend(state.iter().copied());
                    changed = true;
                }
            }
        }
    }
    entry
        .into_iter()
        .enumerate()
        .map(|(b, mut state)| {
            let mut out = Vec::new();
            walk(b, &mut state, &mut |s| out.push(s.clone()));
            out
        })
        .collect()
}

/// The memory semantics bit of a barrier that fences local memory
/// (WorkgroupMemory, the runtime's `CLK_LOCAL_MEM_FENCE`).
pub(super) const LOCAL_FENCE: u64 = 0x100;

/// The memory semantics bit of a barrier that fences global memory
/// (CrossWorkgroupMemory, `CLK_GLOBAL_MEM_FENCE`).
pub(super) const GLOBAL_FENCE: u64 = 0x200;

/// Whether `i` is a work-group barrier fencing the memory of semantics bit
/// `fence` ([`LOCAL_FENCE`], [`GLOBAL_FENCE`]): work-group execution;
/// memory scope of the work-group or wider (CrossDevice 0, Device 1,
/// Workgroup 2); semantics with that bit.
pub(super) fn boundary(m: &Module, i: &Instruction, fence: u64) -> bool {
    if i.class.opcode != Op::ControlBarrier {
        return false;
    }
    let exec = constant(m, i.operands.first());
    let scope = constant(m, i.operands.get(1));
    let semantics = constant(m, i.operands.get(2));
    matches!((exec, scope, semantics), (Some(2), Some(0..=2), Some(s)) if s & fence != 0)
}

/// Whether `f`'s code is all of a kernel's, from its start to its end: a
/// kernel no function calls, or the body that such a kernel's stub calls
/// ([`stub_body`]) and nothing else calls (clang makes each kernel a stub
/// that calls the kernel's body, a function of its own).
pub(super) fn whole_kernel(m: &Module, f: &Function) -> bool {
    let kernel = |id: Word| m.entry_points.iter().any(|e| e.function == id);
    let callers = calls_of(m, f.id);
    if kernel(f.id) {
        return callers.is_empty();
    }
    let [(stub, _)] = callers.as_slice() else {
        return false;
    };
    kernel(stub.id)
        && calls_of(m, stub.id).is_empty()
        && stub_body(m, stub).is_some_and(|b| b.id == f.id)
}

/// The function that kernel `stub` calls, where that is the stub's one
/// call and its other instructions take no pointer and wait for nothing:
/// clang's stub, which calls the kernel's body with its arguments.
pub(super) fn stub_body<'m>(m: &'m Module, stub: &Function) -> Option<&'m Function> {
    let types = pointer_types(m, stub);
    let pointer = |id: &Word| {
        matches!(
            types.get(id).map(|t| m.ty(*t)),
            Some(Ok(Type::Pointer { .. }))
        )
    };
    let mut body = None;
    for (i, _) in stub.blocks.iter().flat_map(|b| &b.instructions) {
        match i.class.opcode {
            Op::FunctionCall => {
                let Some(Operand::IdRef(callee)) = i.operands.first() else {
                    return None;
                };
                if body.replace(*callee).is_some() {
                    return None;
                }
            }
            Op::ControlBarrier | Op::MemoryBarrier => return None,
            _ if super::id_operands(i).any(|id| pointer(&id)) => return None,
            _ => {}
        }
    }
    m.function(body?)
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

/// The type of each pointer id `f` can name: its parameters', its
/// instructions' results, the module's variables.
pub(super) fn pointer_types(m: &Module, f: &Function) -> HashMap<Word, Word> {
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

/// The value of operand `o`, where it names a scalar constant (a scope's,
/// a memory semantics').
pub(super) fn constant(m: &Module, o: Option<&Operand>) -> Option<u64> {
    match o {
        Some(Operand::IdRef(id) | Operand::IdScope(id) | Operand::IdMemorySemantics(id)) => {
            match m.constants.get(id) {
                Some(Constant::Scalar { bits, .. }) => Some(*bits),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether `op` takes pointers but neither reads nor writes through them
/// (a comparison, a lifetime's mark, a debug record).
pub(super) fn touches_nothing(op: Op) -> bool {
    matches!(
        op,
        Op::PtrEqual
            | Op::PtrNotEqual
            | Op::PtrDiff
            | Op::LifetimeStart
            | Op::LifetimeStop
            | Op::Name
            | Op::Line
            | Op::NoLine
    )
}
