//! Atomics of local memory, as the checked build sees them: which
//! kernels have none (whose race-free loads a plain write settles, see
//! `Fx::note_access`), and which local objects only relaxed atomics of
//! work-group scope or wider touch (whose operations then race with
//! nothing and synchronize nothing, see [`quiet_atomics`]).

use std::collections::{HashMap, HashSet};

use clsync_spirv::spirv::{Op, StorageClass, Word};
use clsync_spirv::{Function, Module, Operand, Type};

use super::kernel_code::{constant, pointer_types, Bounds, KernelCode};
use super::written::makes_pointer;

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
/// memory: one of its operands may point there ([`may_be_local`]).
fn local_atomics(m: &Module, f: &Function) -> bool {
    let local = may_be_local(m, f, &pointer_types(m, f));
    f.blocks.iter().flat_map(|b| &b.instructions).any(|(i, _)| {
        atomic_or_copy(i.class.opcode) && super::id_operands(i).any(|o| local.contains(&o))
    })
}

/// The pointers of `f` that may point into local memory: its local ones,
/// and its generic ones but those made (by a cast, access chain, copy, phi
/// or select) from pointers that cannot; a generic pointer made otherwise,
/// a parameter or a loaded one, may. The built-ins of OpenCL C 2.0 take
/// generic pointers, so clang casts a global atomic's pointer to one.
fn may_be_local(m: &Module, f: &Function, types: &HashMap<Word, Word>) -> HashSet<Word> {
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
    local
}

/// The opcodes the checker records as atomic accesses: atomics, and the
/// work-group copies (`async_work_group_copy`).
pub(super) fn atomic_or_copy(op: Op) -> bool {
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

/// The pointers of `f` through which its atomics reach a local object
/// only relaxed atomic operations of work-group scope or wider touch in
/// the barrier intervals where they do (`kernel_code::bounds_before`), in a
/// whole kernel (`kernel_code::whole_kernel`) that calls no function and
/// has no fence: the checked build's counterpart of `#[kernel]`'s
/// `LocalView::at_quiet`, interval by interval (an OpenCL 1.x histogram
/// clears its bins plainly, counts with `atomic_inc`, and reads them
/// plainly, each between barriers).
///
/// Such operations race with nothing: atomics whose scopes include each
/// other's work-items never race, nothing else touches the object in
/// their intervals (a `local` argument or array: an allocation of its
/// own, which no pointer the analysis cannot follow reaches), and the
/// barriers order them with every other access. They synchronize nothing:
/// relaxed, and no fence gives them an order (a barrier orders everything
/// before it before everything after it without them). So a checked
/// launch that takes the build's proofs performs an operation on bytes
/// that were written already without the checker (`Fx::atomic_checked`):
/// the checker would find nothing, and nothing it would record can matter
/// to a later access. The first write of an element and an access out of
/// bounds are the checker's as before.
///
/// Empty where any pointer into local memory (local or generic) goes
/// where the analysis does not follow it: through a phi or select it
/// cannot tell the object of, to a store, a call, or an instruction it
/// does not know. `code` is `f`'s (`KernelCode::of`).
pub(crate) fn quiet_atomics(m: &Module, f: &Function, code: &KernelCode) -> HashSet<Word> {
    let KernelCode {
        types,
        objects,
        before,
        ..
    } = code;
    let local = may_be_local(m, f, types);
    let localish = |id: &Word| local.contains(id);
    let constant = |o: Option<&Operand>| constant(m, o);
    // For each object, the boundaries that may precede its quiet atomics,
    // and those that may precede its other accesses; and the pointers of
    // the quiet atomics, and of the others.
    let mut atomic_bounds: HashMap<Word, Bounds> = HashMap::new();
    let mut other_bounds: HashMap<Word, Bounds> = HashMap::new();
    let (mut quiet_pointers, mut other_pointers) = (HashSet::new(), HashSet::new());
    for (b, block) in f.blocks.iter().enumerate() {
        for (n, (i, _)) in block.instructions.iter().enumerate() {
            let op = i.class.opcode;
            if matches!(op, Op::MemoryBarrier | Op::FunctionCall) {
                return HashSet::new();
            }
            // Pointers made from pointers, and stores of them: an access
            // through what they make is an instruction of its own
            // (through a pointer of no known object, after a phi or a
            // load, it makes every object checked).
            if makes_pointer(op) {
                continue;
            }
            let operands: Vec<Word> = super::id_operands(i).collect();
            let accessed = match op {
                Op::Store => &operands[..operands.len().min(1)],
                _ => &operands[..],
            };
            let relaxed = |k: usize| constant(i.operands.get(k)).is_some_and(|s| s & 0x1e == 0);
            let wide = constant(i.operands.get(1)).is_some_and(|s| s <= 2);
            let cas = matches!(
                op,
                Op::AtomicCompareExchange | Op::AtomicCompareExchangeWeak
            );
            // The pointer is the first operand; scope and semantics (and a
            // compare-exchange's second) follow. Relaxed: none of Acquire,
            // Release, AcquireRelease, SequentiallyConsistent.
            let group_relaxed = op != Op::GroupAsyncCopy
                && atomic_or_copy(op)
                && wide
                && relaxed(2)
                && (!cas || relaxed(3));
            for (k, p) in accessed.iter().enumerate() {
                if !localish(p) {
                    continue;
                }
                let Some(o) = objects.get(p) else {
                    // It may be any object's.
                    return HashSet::new();
                };
                let quiet = group_relaxed && k == 0;
                let bounds = match quiet {
                    true => &mut atomic_bounds,
                    false => &mut other_bounds,
                };
                bounds.entry(*o).or_default().extend(&before[b][n]);
                if atomic_or_copy(op) && k == 0 {
                    match quiet {
                        true => quiet_pointers.insert(*p),
                        false => other_pointers.insert(*p),
                    };
                }
            }
        }
    }
    // An object's quiet atomics share no interval with its other accesses.
    let apart = |o: &Word| {
        other_bounds
            .get(o)
            .is_none_or(|others| atomic_bounds.get(o).is_none_or(|a| a.is_disjoint(others)))
    };
    quiet_pointers
        .into_iter()
        .filter(|p| !other_pointers.contains(p) && objects.get(p).is_some_and(apart))
        .collect()
}

#[cfg(test)]
mod tests {
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

    /// How many of the atomics of kernel `k` of `src` are quiet, optimized
    /// and unoptimized.
    fn quiet(src: &str) -> [usize; 2] {
        ["-cl-std=CL2.0", "-cl-std=CL2.0 -cl-opt-disable"].map(|options| {
            let p = crate::Program::build(src, "k.cl", options)
                .unwrap_or_else(|e| panic!("build failed:\n{e}"));
            let m = &p.module;
            m.functions
                .iter()
                .map(|f| {
                    let pointers = crate::translate::kernel_code::KernelCode::of(m, f)
                        .map(|c| super::quiet_atomics(m, f, &c))
                        .unwrap_or_default();
                    f.blocks
                        .iter()
                        .flat_map(|b| &b.instructions)
                        .filter(|(i, _)| super::atomic_or_copy(i.class.opcode))
                        .filter(|(i, _)| {
                            matches!(i.operands.first(),
                                Some(clsync_spirv::Operand::IdRef(p)) if pointers.contains(p))
                        })
                        .count()
                })
                .sum()
        })
    }

    /// A histogram's local bins, and one line to put in its middle.
    fn histogram(middle: &str) -> String {
        format!(
            "kernel void k(global const uchar *in, global atomic_uint *bins, local atomic_uint *other) {{
                local atomic_uint lb[256];
                size_t l = get_local_id(0);
                atomic_store_explicit(&lb[l], 0u, memory_order_relaxed, memory_scope_work_group);
                barrier(CLK_LOCAL_MEM_FENCE);
                atomic_fetch_add_explicit(&lb[in[get_global_id(0)]], 1u, memory_order_relaxed, memory_scope_work_group);
                {middle}
                barrier(CLK_LOCAL_MEM_FENCE);
                uint v = atomic_load_explicit(&lb[l], memory_order_relaxed, memory_scope_work_group);
                atomic_fetch_add_explicit(&bins[l], v, memory_order_relaxed, memory_scope_device);
            }}"
        )
    }

    #[test]
    fn a_histograms_relaxed_group_wide_atomics_on_its_own_bins_are_quiet() {
        // The store, the add and the load of `lb`; not the global add.
        assert_eq!(quiet(&histogram("")), [3, 3]);
        // Another local array's atomics do not matter to `lb`'s, and are
        // quiet themselves.
        let other =
            "atomic_fetch_add_explicit(&other[l], 1u, memory_order_relaxed, memory_scope_device);";
        assert_eq!(quiet(&histogram(other)), [4, 4]);
    }

    #[test]
    fn an_ordering_a_narrower_scope_a_plain_access_or_a_fence_makes_them_checked() {
        // An acquire load of one bin: every operation on `lb` synchronizes
        // with something, maybe.
        let acquire =
            "atomic_load_explicit(&lb[0], memory_order_acquire, memory_scope_work_group);";
        assert_eq!(quiet(&histogram(acquire)), [0, 0]);
        // A sub-group's atomic races with other sub-groups' operations.
        let narrow =
            "atomic_fetch_add_explicit(&lb[0], 1u, memory_order_relaxed, memory_scope_sub_group);";
        assert_eq!(quiet(&histogram(narrow)), [0, 0]);
        // A plain read of a bin through a cast pointer.
        let plain = "if (((local uint *)lb)[l] == 7) atomic_fetch_add_explicit(&bins[0], 1u, memory_order_relaxed, memory_scope_device);";
        assert_eq!(quiet(&histogram(plain)), [0, 0]);
        // A fence, anywhere in the kernel.
        let fence = "atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_release, memory_scope_device);";
        assert_eq!(quiet(&histogram(fence)), [0, 0]);
    }

    #[test]
    fn an_opencl_1x_histograms_atomics_between_plain_clearing_and_reading_are_quiet() {
        // Cleared and read plainly, each in an interval of its own: the
        // increments, in the interval between, are quiet. With a plain
        // read in theirs, they are not.
        let src = |middle: &str| {
            format!(
                "kernel void k(global const uchar *in, global uint *bins) {{
                    local uint lb[256];
                    size_t l = get_local_id(0);
                    lb[l] = 0;
                    barrier(CLK_LOCAL_MEM_FENCE);
                    atomic_inc(&lb[in[get_global_id(0)]]);
                    {middle}
                    barrier(CLK_LOCAL_MEM_FENCE);
                    atomic_add(&bins[l], lb[l]);
                }}"
            )
        };
        assert_eq!(quiet(&src("")), [1, 1]);
        assert_eq!(quiet(&src("if (lb[3] == 9) bins[0] = 1;")), [0, 0]);
    }
}
