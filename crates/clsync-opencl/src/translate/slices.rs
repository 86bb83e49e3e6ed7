//! Buffers that each work-item reaches only in its group's slice, in an
//! order no other work-item's access can race with: the checked build's
//! proofs for global memory, as `translate::intervals` makes them for
//! local memory.
//!
//! In a launch of one dimension, the work-items of a group have the
//! global ids `base .. base + L` (the group's slice: `base` is the offset
//! plus the group's number times the local size `L`), and two groups'
//! slices are apart. An access of a buffer at `global id + c`, where the
//! branches before it say that the local id is at least `-c` (`c <= 0`),
//! stays in its group's slice: a scan's `data[g]`, and its
//! `if (l >= k) v += data[g - k];`. Where every access of a buffer
//! parameter is so, the accesses of two groups never meet, and two
//! work-items of one group race only within one interval between
//! work-group barriers that fence global memory, and only at one element
//! (`indices::apart`): the scan's reads come before the barrier that
//! orders them with its write, and the write is each work-item's own. An
//! element-wise kernel's `c[i] = a[i] + b[i]` is the simplest case.
//!
//! Such a buffer's accesses have nothing to tell the race checker, and a
//! checked launch leaves them out of its records altogether (compiled
//! code keeps memory's shadow itself: `Fx::unrecorded`). The launch
//! marks a buffer so where its argument is bound to such a parameter
//! only and no other buffer argument shares a byte with it, the range is
//! of one dimension and below 2^31 (so that a global id converted to 32
//! bits keeps its value), and the kernel uses it as the host allowed
//! (`exec::launch`). A kernel that makes a pointer from an integer, or
//! reaches global memory through a pointer whose buffer the code does not
//! show, proves nothing; a buffer whose pointer goes anywhere but a load,
//! a store or a private variable that only holds it is not proven.

use std::collections::{HashMap, HashSet};

use clsync_spirv::spirv::{Op, OpenclStd100Op as X, StorageClass, Word};
use clsync_spirv::{Function, Module, Operand, Type};

use super::indices::{self, Range};
use super::kernel_code::{self, Bounds, KernelCode, GLOBAL_FENCE};
use super::written::makes_pointer;

/// How a kernel uses a buffer parameter whose accesses the build proves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Use {
    /// It reads it.
    pub reads: bool,
    /// It writes it.
    pub writes: bool,
}

/// The proofs of a whole kernel's code.
#[derive(Debug, Default)]
pub(crate) struct Slices {
    /// The pointers through which the proven accesses load and store.
    pub pointers: HashSet<Word>,
    /// The proven buffer parameters (the stub's, for clang's body of a
    /// kernel, see `kernel_code::objects`), with their uses.
    pub objects: HashMap<Word, Use>,
}

/// One load or store of a buffer.
struct Access {
    write: bool,
    ptr: Word,
    /// Its element's index less the global id, and the element's type.
    place: Option<(i64, Word)>,
    range: Range,
    bounds: Bounds,
}

/// The buffers of `f` (a whole kernel's code, `code` being its) whose
/// every access stays in its group's slice and races with nothing (see
/// the module's notes).
pub(crate) fn slices(m: &Module, f: &Function, code: &KernelCode) -> Slices {
    let types = &code.types;
    let objects = kernel_code::objects_in(m, f, types, StorageClass::CrossWorkgroup);
    let storage = |id: &Word| match types.get(id).map(|t| m.ty(*t)) {
        Some(Ok(Type::Pointer { storage, .. })) => Some(*storage),
        _ => None,
    };
    // A pointer that may reach global memory: a global one, or a generic
    // one the code does not show to be into a local object.
    let global = |id: &Word| match storage(id) {
        Some(StorageClass::CrossWorkgroup) => true,
        Some(StorageClass::Generic) => !code.objects.contains_key(id),
        _ => false,
    };
    let held = kernel_code::held_pointers(m, f, types);
    let before = kernel_code::bounds_before(m, f, &code.graph, GLOBAL_FENCE);
    let global_indices = indices::global_indices(m, f);
    let roots: HashSet<Word> = f
        .params
        .iter()
        .map(|(p, _)| *p)
        .filter(|p| objects.contains_key(p))
        .collect();
    let roots = kernel_code::with_held(m, f, types, roots);
    let places = indices::places(m, f, &roots, &global_indices);
    let ranges = indices::ranges(m, f, &code.graph);

    let mut accesses: HashMap<Word, Vec<Access>> = HashMap::new();
    // The pointers that go where this cannot follow them; whether some
    // pointer of no known buffer may reach global memory.
    let mut lost: Vec<Word> = Vec::new();
    let mut unknown = false;
    for (b, block) in f.blocks.iter().enumerate() {
        for (k, (i, _)) in block.instructions.iter().enumerate() {
            let ops: Vec<Word> = super::id_operands(i).collect();
            let mut access = |write: bool, p: &Word| match objects.get(p) {
                Some(o) => accesses.entry(*o).or_default().push(Access {
                    write,
                    ptr: *p,
                    place: places.get(p).map(|(x, ty)| (x.c, *ty)),
                    range: ranges[b],
                    bounds: before[b][k].clone(),
                }),
                None => unknown = true,
            };
            match (i.class.opcode, &ops[..]) {
                (Op::ConvertUToPtr, _) => unknown = true,
                (Op::Load, [p, ..]) if global(p) => access(false, p),
                (Op::Store, [p, v, ..]) => {
                    if global(p) {
                        access(true, p);
                    }
                    // A pointer stored anywhere but to a private variable
                    // that only holds pointers escapes.
                    if global(v) && !held.contains_key(p) {
                        lost.push(*v);
                    }
                }
                // Pointers made from pointers (followed by `objects`),
                // and uses that neither read nor write through them.
                (op, _) if makes_pointer(op) || kernel_code::touches_nothing(op) => {}
                (Op::ExtInst, _) if prefetch(m, i) => {}
                _ => lost.extend(ops.iter().filter(|id| global(id))),
            }
        }
    }
    // A lost pointer of no known buffer may be any buffer's.
    let lost: HashSet<Option<Word>> = lost.iter().map(|p| objects.get(p).copied()).collect();
    if unknown || lost.contains(&None) {
        return Slices::default();
    }
    let mut out = Slices::default();
    for (o, list) in accesses {
        if lost.contains(&Some(o)) || !in_slices(&list) {
            continue;
        }
        out.pointers.extend(list.iter().map(|a| a.ptr));
        out.objects.insert(
            o,
            Use {
                reads: list.iter().any(|a| !a.write),
                writes: list.iter().any(|a| a.write),
            },
        );
    }
    out
}

/// Whether one buffer's accesses `list` each stay in their group's slice,
/// at elements of one type, and each write meets every access of its
/// interval (itself included, made by another work-item) at another
/// element.
fn in_slices(list: &[Access]) -> bool {
    let Some(first) = list.iter().find_map(|a| a.place.map(|p| p.1)) else {
        return false;
    };
    let mut places = Vec::new();
    for a in list {
        let Some((c, ty)) = a.place else {
            return false;
        };
        // `id + c` in the slice: at least its first element (the local id
        // is at least `range.lo`), and below the work-item's own.
        if c > 0 || i128::from(a.range.lo) + i128::from(c) < 0 || ty != first {
            return false;
        }
        places.push((c, a.range));
    }
    list.iter().zip(&places).all(|(a, pa)| {
        list.iter()
            .zip(&places)
            .all(|(w, pw)| !w.write || a.bounds.is_disjoint(&w.bounds) || indices::apart(*pa, *pw))
    })
}

/// Whether `i` (an `OpExtInst`) is OpenCL's `prefetch`, which accesses
/// nothing.
fn prefetch(m: &Module, i: &clsync_spirv::Instruction) -> bool {
    let set = match i.operands.first() {
        Some(Operand::IdRef(s)) => m.ext_sets.get(s).map(String::as_str),
        _ => None,
    };
    let n = match i.operands.get(1) {
        Some(Operand::LiteralExtInstInteger(n)) => Some(*n),
        _ => None,
    };
    set == Some("OpenCL.std") && n.and_then(X::from_u32) == Some(X::prefetch)
}

/// For each parameter of kernel `kernel`, how it uses the buffer its
/// argument binds where the build proves its accesses (see [`slices`]):
/// the analysis of the kernel's whole code, which is that of the body
/// clang's stub calls (where the stub does nothing else with a pointer),
/// or the kernel's own where it calls nothing.
pub(crate) fn owned_params(m: &Module, kernel: &Function) -> Vec<Option<Use>> {
    let none = vec![None; kernel.params.len()];
    let body = kernel_code::stub_body(m, kernel)
        .filter(|b| kernel_code::whole_kernel(m, b))
        .or(kernel_code::whole_kernel(m, kernel).then_some(kernel));
    let Some(body) = body else {
        return none;
    };
    let Some(code) = KernelCode::of(m, body) else {
        return none;
    };
    let found = slices(m, body, &code);
    kernel
        .params
        .iter()
        .map(|(p, _)| found.objects.get(p).copied())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{owned_params, Use};

    /// The uses of each of `src`'s kernel `k`'s parameters that the build
    /// proves, built optimized.
    fn owned(src: &str) -> Vec<Option<Use>> {
        owned_with(src, "")
    }

    /// [`owned`], built with `options`.
    fn owned_with(src: &str, options: &str) -> Vec<Option<Use>> {
        let p = crate::Program::build(src, "k.cl", options)
            .unwrap_or_else(|e| panic!("build failed:\n{e}"));
        let m = &p.module;
        let e = m.entry_points.iter().find(|e| e.name == "k").expect("k");
        owned_params(m, m.function(e.function).expect("its function"))
    }

    const RW: Option<Use> = Some(Use {
        reads: true,
        writes: true,
    });
    const R: Option<Use> = Some(Use {
        reads: true,
        writes: false,
    });
    const W: Option<Use> = Some(Use {
        reads: false,
        writes: true,
    });

    #[test]
    fn an_element_wise_kernels_buffers_are_proven() {
        let src = "kernel void k(global const float *a, global float *b, global float *c) {
            int i = get_global_id(0);
            c[i] = a[i] + b[i];
            b[i] = 0.0f;
        }";
        assert_eq!(owned(src), [R, RW, W]);
    }

    #[test]
    fn reads_below_the_own_element_within_the_slice_before_a_global_barrier() {
        let step = |flags: &str, guard: &str| {
            format!(
                "kernel void k(global int *d, local int *t) {{
                    size_t l = get_local_id(0), g = get_global_id(0);
                    int v = d[g];
                    if ({guard}) v += d[g - 1];
                    if (l >= 2) v += d[g - 2];
                    t[l] = v;
                    barrier({flags});
                    d[g] = t[l];
                }}"
            )
        };
        assert_eq!(owned(&step("CLK_GLOBAL_MEM_FENCE", "l >= 1")), [RW, None]);
        assert_eq!(owned(&step("CLK_GLOBAL_MEM_FENCE", "l != 0")), [RW, None]);
        // The barrier orders no global memory: work-item 1 reads what
        // work-item 0 writes, in one interval.
        assert_eq!(owned(&step("CLK_LOCAL_MEM_FENCE", "l >= 1")), [None, None]);
        // A read that leaves the slice (work-item 0 reads the group
        // before's last element).
        assert_eq!(owned(&step("CLK_GLOBAL_MEM_FENCE", "l < 2")), [None, None]);
    }

    #[test]
    fn a_read_of_another_work_items_element_is_not_proven() {
        let src = "kernel void k(global int *a) {
            size_t g = get_global_id(0);
            a[g] = a[g + 1];
        }";
        assert_eq!(owned(src), [None]);
        let src = "kernel void k(global int *a, global int *b) {
            size_t g = get_global_id(0);
            b[g] = a[get_group_id(0)];
            a[g] = 1;
        }";
        assert_eq!(owned(src), [None, W]);
    }

    #[test]
    fn a_pointer_that_goes_elsewhere_proves_nothing_of_its_buffer() {
        // An atomic, a call, and a pointer of no known buffer.
        let src = "kernel void k(global int *a, global int *b) {
            size_t g = get_global_id(0);
            a[g] = 1;
            atomic_inc(a);
            b[g] = 2;
        }";
        assert_eq!(owned(src), [None, W]);
        let src = "kernel void k(global int *a, global int *b, int which) {
            size_t g = get_global_id(0);
            global int *p = which ? a : b;
            p[g] = 1;
            b[g] = 2;
        }";
        assert_eq!(owned(src), [None, None, None]);
    }

    #[test]
    fn unoptimized_an_index_kept_in_a_variable_set_once_before_its_uses_is_followed() {
        // clang's `-O0` keeps `g` in a stack slot, stored once where it is
        // declared, and the pointers in theirs.
        let src = "kernel void k(global int *a, global int *b) {
            size_t l = get_local_id(0);
            if (l == 0) a[get_global_id(0)] = 0;
            size_t g = get_global_id(0);
            a[g] = b[g] + 1;
        }";
        assert_eq!(owned_with(src, "-cl-opt-disable"), [W, R]);
        // Set on one path only (the store does not come before every
        // load), or twice: not followed.
        let src = "kernel void k(global int *a) {
            size_t g;
            if (get_local_id(0) == 0) g = get_global_id(0);
            a[g] = 1;
        }";
        assert_eq!(owned_with(src, "-cl-opt-disable"), [None]);
        let src = "kernel void k(global int *a) {
            size_t g = get_global_id(0);
            if (get_local_id(0) == 0) g = 0;
            a[g] = 1;
        }";
        assert_eq!(owned_with(src, "-cl-opt-disable"), [None]);
    }
}
