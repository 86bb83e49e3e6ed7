//! Loads and stores of local memory that race with nothing, by the
//! kernel's barrier intervals: the checked build's counterpart of
//! `#[kernel]`'s proofs (`clsync-macros`' `race_free`).
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
//! Where in an object each access lies relative to its work-item
//! (`indices`) tells two accesses of one object apart in a group of one
//! dimension: a tree reduction's step reads above the elements it writes.
//! A store is race-free where no load and no other write of its interval
//! (the store itself by another work-item included) meets it so.
//!
//! A launch takes the proof at its word where it does not run on from a
//! divergent barrier, and one that does in each group of work-item loops
//! until the group diverges (`exec::checked`, `ItemCtx::race_free`).

use std::collections::{HashMap, HashSet};

use clsync_spirv::spirv::{Op, StorageClass, Word};
use clsync_spirv::{Function, Instruction, Module, Operand, Type};

use super::kernel_code::{boundary, touches_nothing, Bounds, KernelCode, LOCAL_FENCE};
use super::written::makes_pointer;

/// What an instruction is to the intervals.
enum Role {
    /// A work-group barrier fencing local memory: the start of an
    /// interval.
    Boundary,
    /// It may write local memory: the local object it writes, where the
    /// code shows it (see `kernel_code::objects`), and the pointer it writes through.
    Write(Option<Word>, Option<Word>),
    /// A load of local memory, the object it reads, where known, and the
    /// pointer it reads through.
    Load(Word, Option<Word>, Word),
    /// Nothing of the above.
    Other,
}

/// `f`'s loads and stores of local memory that race with nothing (see the
/// module's notes), `code` being `f`'s.
pub(crate) fn race_free(m: &Module, f: &Function, code: &KernelCode) -> RaceFree {
    let KernelCode {
        types,
        objects,
        graph,
        before,
    } = code;
    let roles: Vec<Vec<Role>> = f
        .blocks
        .iter()
        .map(|b| {
            b.instructions
                .iter()
                .map(|(i, _)| role(m, types, objects, i))
                .collect()
        })
        .collect();
    // Where the accesses lie relative to their work-items (`indices`).
    let roots: HashSet<Word> = f
        .params
        .iter()
        .map(|(p, _)| *p)
        .chain(m.globals.iter().map(|g| g.id))
        .filter(|id| objects.contains_key(id))
        .collect();
    let roots = super::kernel_code::with_held(m, f, types, roots);
    let indices = super::indices::local_indices(m, f);
    let places = super::indices::places(m, f, &roots, &indices);
    let ranges = super::indices::ranges(m, f, graph);
    // Each write's boundaries, with the object it writes (`None`: any) and
    // where in it, and each load's.
    let mut writes: Vec<(Option<Word>, Option<Spot>, Bounds)> = Vec::new();
    let mut loads: Vec<(Word, Option<Word>, Option<Spot>, Bounds)> = Vec::new();
    // The stores among the writes, with the pointer each stores through.
    let mut stored: Vec<(Option<Word>, Option<Spot>, Bounds, Word)> = Vec::new();
    for (b, block) in roles.iter().enumerate() {
        let spot = |p: Option<&Word>| {
            Some(Spot {
                place: places.get(p?).copied(),
                range: ranges[b],
            })
        };
        for (k, r) in block.iter().enumerate() {
            let state = &before[b][k];
            match r {
                Role::Write(object, p) => {
                    writes.push((*object, spot(p.as_ref()), state.clone()));
                    if let Some(p) = p {
                        stored.push((*object, spot(Some(p)), state.clone(), *p));
                    }
                }
                Role::Load(id, object, p) => {
                    loads.push((*id, *object, spot(Some(p)), state.clone()))
                }
                Role::Boundary | Role::Other => {}
            }
        }
    }
    // A load and a write race where their boundaries meet, unless they
    // touch two objects the code tells apart, or two elements of one
    // object whatever work-items make them in a group of one dimension.
    let meets = |object: Option<Word>, spot: Option<Spot>, at: &Bounds| {
        let mut proof = Some(Proof::Always);
        for (w, w_spot, bounds) in &writes {
            let apart = matches!((object, w), (Some(a), Some(b)) if a != *b);
            if apart || at.is_disjoint(bounds) {
                continue;
            }
            let same = matches!((object, w), (Some(a), Some(b)) if a == *b);
            let why = match (spot, w_spot) {
                (Some(l), Some(w)) if same => l.apart_from(w),
                _ => None,
            };
            proof = proof.zip(why).map(|(p, q)| p.and(q));
        }
        proof
    };
    let mut proofs = RaceFree::default();
    for (id, object, spot, at) in &loads {
        if at.is_empty() {
            continue;
        }
        // The runtime takes a load's proof that holds always or in one
        // dimension (`ItemCtx::race_free`).
        let proof = meets(*object, *spot, at).filter(|p| !matches!(p, Proof::Rows(_)));
        if let Some(p) = proof {
            proofs.loads.insert(*id, p);
        }
    }
    // A store races with nothing where no write (another work-item's of
    // itself included) and no load meets it so: at best, where the
    // work-items' indices are their own (in one dimension, or by rows).
    // The proof of a pointer holds for each of its stores.
    let mut stores: HashMap<Word, Option<Proof>> = HashMap::new();
    for (object, spot, at, p) in &stored {
        let mut proof = meets(*object, *spot, at).filter(|_| !at.is_empty());
        for (_, o, l_spot, bounds) in &loads {
            if matches!((object, o), (Some(a), Some(b)) if a != b) || at.is_disjoint(bounds) {
                continue;
            }
            let same = matches!((object, o), (Some(a), Some(b)) if a == b);
            let why = match (spot, l_spot) {
                (Some(w), Some(l)) if same => l.apart_from(w),
                _ => None,
            };
            proof = proof.zip(why).map(|(p, q)| p.and(q));
        }
        let entry = stores.entry(*p).or_insert(proof);
        *entry = entry.zip(proof).map(|(p, q)| p.and(q));
    }
    proofs.stores = stores
        .into_iter()
        .filter_map(|(p, proof)| Some((p, proof?)))
        .collect();
    proofs
}

/// The plain accesses of local memory of a kernel's code that race with
/// nothing ([`race_free`]), by why.
#[derive(Debug, Default)]
pub(crate) struct RaceFree {
    /// The loads, by result.
    pub loads: HashMap<Word, Proof>,
    /// The stores, by the pointer they store through.
    pub stores: HashMap<Word, Proof>,
}

/// Why an access races with nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Proof {
    /// No write of its object shares its interval.
    Always,
    /// The writes of its object that share its interval are at other
    /// elements than it, in a group of one dimension (see `indices`).
    OneDimensional,
    /// They are at other elements in a group whose local size is at most
    /// this in dimension 0 and 1 in dimension 2, where the indices
    /// `lid0 + K * lid1` are the work-items' own (`indices::Index`).
    Rows(u64),
}

impl Proof {
    /// The proof that two accesses' proofs give, where both must hold:
    /// a group of one dimension has its indices by rows its own too.
    fn and(self, other: Proof) -> Proof {
        use Proof::*;
        match (self, other) {
            (Always, p) | (p, Always) => p,
            (OneDimensional, _) | (_, OneDimensional) => OneDimensional,
            (Rows(a), Rows(b)) => Rows(a.min(b)),
        }
    }
}

/// Where an access lies in its object relative to its work-item (the
/// index of its element, `indices::Index`, and the type it reaches there),
/// where the code shows it, and what its block's branches say of the
/// local id (`indices`).
#[derive(Clone, Copy, Debug)]
struct Spot {
    place: Option<(super::indices::Index, Word)>,
    range: super::indices::Range,
}

impl Spot {
    /// Where this access and write `w` reach different elements of their
    /// object whenever different work-items make them (one work-item's
    /// are ordered by its program), what proves it: in a group of one
    /// dimension, both at their own elements, or the write at its own
    /// under `id < C` and this at `id + C'`, `C' >= C` (`indices::apart`),
    /// or both made by the one work-item whose local id their branches
    /// allow (a reduction's last step, under `l < 1`); by rows, both at
    /// one index `lid0 + K * lid1 + c`. `None` where nothing does.
    fn apart_from(&self, w: &Spot) -> Option<Proof> {
        if let (Some(a), Some(b)) = (self.range.single(), w.range.single()) {
            if a == b {
                return Some(Proof::OneDimensional);
            }
        }
        let ((at, ty), (w_at, w_ty)) = (self.place?, w.place?);
        if ty != w_ty {
            return None;
        }
        match (at.rows, w_at.rows) {
            (None, None) => super::indices::apart((at.c, self.range), (w_at.c, w.range))
                .then_some(Proof::OneDimensional),
            (Some(a), Some(b)) if a == b && at.c == w_at.c => Some(Proof::Rows(a)),
            _ => None,
        }
    }
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
    let refs = || {
        i.operands.iter().filter_map(|o| match o {
            Operand::IdRef(id) => Some(id),
            _ => None,
        })
    };
    match i.class.opcode {
        _ if boundary(m, i, LOCAL_FENCE) => Role::Boundary,
        Op::ControlBarrier => Role::Other,
        Op::Load => match (i.result_id, i.operands.first()) {
            (Some(id), Some(Operand::IdRef(p))) if space(p) == Some(StorageClass::Workgroup) => {
                Role::Load(id, objects.get(p).copied(), *p)
            }
            _ => Role::Other,
        },
        // A store of a value that is no local pointer, through a pointer
        // into a known object: a write of that object.
        Op::Store => match (i.operands.first(), i.operands.get(1)) {
            (Some(Operand::IdRef(p)), Some(Operand::IdRef(v)))
                if space(p) == Some(StorageClass::Workgroup) && !local(v) =>
            {
                Role::Write(objects.get(p).copied(), Some(*p))
            }
            // A store to a private variable writes no local memory,
            // whatever it stores (an access through a pointer loaded back
            // is one of its own).
            (Some(Operand::IdRef(p)), _) if space(p) == Some(StorageClass::Function) => Role::Other,
            _ if refs().any(local) => Role::Write(None, None),
            _ => Role::Other,
        },
        // Pointers made from pointers, and uses that neither read nor
        // write through them.
        op if makes_pointer(op) || touches_nothing(op) => Role::Other,
        Op::FunctionCall => Role::Write(None, None),
        _ if refs().any(local) => Role::Write(None, None),
        _ => Role::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::race_free;
    use crate::translate::kernel_code::KernelCode;

    /// How many of the loads of local memory in `src`'s functions race
    /// with nothing, built optimized and as `-cl-opt-disable` leaves it.
    fn proven(src: &str) -> [usize; 2] {
        ["", "-cl-opt-disable"].map(|options| {
            let p = crate::Program::build(src, "k.cl", options)
                .unwrap_or_else(|e| panic!("build failed:\n{e}"));
            let m = &p.module;
            m.functions
                .iter()
                .map(|f| KernelCode::of(m, f).map_or(0, |c| race_free(m, f, &c).loads.len()))
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

    /// The proofs of the loads of `src`'s functions, optimized: how many
    /// hold always, and how many in a group of one dimension.
    fn proofs(src: &str) -> (usize, usize) {
        let p =
            crate::Program::build(src, "k.cl", "").unwrap_or_else(|e| panic!("build failed:\n{e}"));
        let m = &p.module;
        let all: Vec<super::Proof> = m
            .functions
            .iter()
            .flat_map(|f| {
                KernelCode::of(m, f)
                    .map(|c| race_free(m, f, &c).loads)
                    .unwrap_or_default()
                    .into_values()
            })
            .collect();
        let always = all.iter().filter(|p| **p == super::Proof::Always).count();
        (always, all.len() - always)
    }

    /// A step `if (l < guard) s[l] += s[l + above];` after a barrier.
    fn step(guard: u32, above: u32) -> String {
        format!(
            "kernel void k(global int *out) {{
                local int s[16];
                size_t l = get_local_id(0);
                s[l] = (int)l;
                barrier(CLK_LOCAL_MEM_FENCE);
                if (l < {guard}) s[l] += s[l + {above}];
                barrier(CLK_LOCAL_MEM_FENCE);
                out[l] = s[l];
            }}"
        )
    }

    #[test]
    fn a_reduction_steps_reads_above_its_guard_race_with_nothing_in_one_dimension() {
        // The step's two reads, in one dimension; the last read, always
        // (no write follows the second barrier).
        assert_eq!(proofs(&step(4, 4)), (1, 2));
        assert_eq!(proofs(&step(4, 6)), (1, 2));
        // Reads of elements the step writes (4 to 7, written by work-items
        // 4 to 7): only the work-item's own read.
        assert_eq!(proofs(&step(8, 4)), (1, 1));
    }
}
