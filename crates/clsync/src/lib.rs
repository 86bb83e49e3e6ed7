//! # clsync
//!
//! OpenCL C's synchronization model, made real on the CPU. Kernels written
//! in Rust run over an OpenCL ND-range with the semantics of `barrier`,
//! `work_group_barrier`, `sub_group_barrier`, `mem_fence`,
//! `read_mem_fence`, `write_mem_fence`, `atomic_work_item_fence` and the
//! OpenCL C 2.0 atomics, as the specification extracts in the project's
//! `shared/spec/` define them.
//!
//! ```
//! use clsync::{AtomicUint, Buffer, Launch, NdRange, Runtime};
//! use clsync::sync::LOCAL;
//!
//! // Sum 4096 numbers: a tree reduction in local memory per group of 256,
//! // then one atomic add per group.
//! let input = Buffer::from_slice(&(1..=4096).collect::<Vec<u32>>());
//! let total: Buffer<AtomicUint> = Buffer::new(1);
//! let mut launch = Launch::new("reduce", NdRange::new([4096]).local([256]));
//! let scratch = launch.local::<u32>(256);
//! Runtime::new().launch(&launch, |wi| {
//!     let l = wi.get_local_id(0);
//!     let s = wi.local(scratch);
//!     s.set(l, input.get(wi.get_global_id(0)));
//!     let mut half = 128;
//!     while half > 0 {
//!         wi.barrier(LOCAL);
//!         if l < half {
//!             s.set(l, s.get(l) + s.get(l + half));
//!         }
//!         half /= 2;
//!     }
//!     if l == 0 {
//!         total.at(0).fetch_add(s.get(0));
//!     }
//! }).unwrap();
//! assert_eq!(total.at(0).load(), 4096 * 4097 / 2);
//! ```
//!
//! ## Layers
//!
//! | module | what it is |
//! | --- | --- |
//! | [`geometry`] | ND-ranges, their validation, and every work-item id function |
//! | [`memory`] | global buffers, local memory, images, and how they map onto Rust atomics |
//! | [`sync`] | fence flags, memory orders and scopes, as types and as values; fences |
//! | [`atomics`] | `atomic_int` … `atomic_flag`, in global and local memory |
//! | [`engine`] | what runs a work-item: the Rust coroutine engine, group-level loops, the async engine, and the trait another engine implements |
//! | [`scheduler`](crate::Runtime) | groups over threads, barriers, divergence, the watchdog |
//! | [`checker`] | checked launches: races, divergence, scopes, bounds, as reports |
//! | [`trace`] | recording which synchronization operations code performs |
//!
//! ## Soundness
//!
//! Safe code cannot cause undefined behaviour through this API. Every
//! access to user-visible memory is a Rust atomic access, so a kernel with a
//! data race (undefined in OpenCL) reads some written value instead of
//! having undefined behaviour in Rust. Local memory is `!Send`/`!Sync` and
//! only reachable from its group's thread. See the [`memory`] module docs.
//!
//! Where to start reading: [`Runtime::launch`] and [`WorkItem`], then the
//! layer a question is about, in the table above. The design, the checker,
//! the explorer and the measurements are in the repository's `docs/`.

pub mod atomics;
pub mod checker;
pub mod collective;
pub mod engine;
mod error;
mod gate;
pub mod geometry;
pub mod memory;
mod primitive;
mod runtime;
pub(crate) mod scheduler;
pub mod sync;
pub mod trace;

pub use atomics::{
    Atomic, AtomicDouble, AtomicFlag, AtomicFloat, AtomicInt, AtomicIntptr, AtomicLong,
    AtomicPtrdiff, AtomicSize, AtomicUint, AtomicUintptr, AtomicUlong,
};
pub use engine::{Group, Item, WorkItem};
pub use error::{
    Divergence, GroupStall, KernelPanic, LaunchError, Place, PlaceRun, Reported, Stall,
};
pub use geometry::{
    Geometry, ItemIds, NdRange, RangeError, MAX_GROUPS, MAX_SUB_GROUP_SIZE, MAX_WORK_GROUP_SIZE,
};
pub use memory::{
    AtomicValue, Buffer, BufferView, Image2d, ImageSizeError, LocalArg, LocalSlice, LocalView,
    QuietAtomic, MAX_IMAGE2D_SIZE, MAX_LOCAL_MEM_SIZE,
};
pub use runtime::{Launch, LaunchSummary, Runtime, DEFAULT_WATCHDOG, MIN_WATCHDOG};
pub use scheduler::Schedule;

// The code `#[kernel]` writes names this crate `::clsync`, inside it too.
extern crate self as clsync;

/// A kernel written per work-item, as in OpenCL C, that runs as group-level
/// loops (PoCL's work-item loops) when its barriers sit in control flow the
/// whole group takes together, and on the general engine otherwise.
///
/// On `fn name(wi: &WorkItem, params…)` it keeps the function as it is (the
/// general engine's form, for [`Runtime::launch`]) and adds:
///
/// * `name_groups(g: &Group, params…)`, the group-level form, when the
///   kernel can be lifted: the code between two barriers becomes one
///   [`Group::for_each`] loop, with `wi` a [`Lane`](engine::Lane) (the same
///   ids, fences and local memory), and every variable that lives across a
///   barrier is kept per work-item ([`engine::lifted`]), except ids (`let
///   (tx, ty) = (wi.get_local_id(0), wi.get_local_id(1))`, global ids, the
///   local linear id), which each loop takes from its work-item again, and
///   uniform values, which the group keeps once;
/// * `name_launch(rt, launch, params…)`, which runs the group-level form if
///   there is one, else the general engine: the async engine, with each
///   barrier awaited, when every barrier is the kernel's own (in its body,
///   not in a closure, a macro's arguments or a function the work-item is
///   handed to), else the coroutine engine;
/// * `name_form()`, which says which of the three that is
///   ([`KernelForm`](engine::KernelForm)).
///
/// `#[kernel(groups)]` makes a kernel that cannot be lifted a compile
/// error naming the reason, instead of a silent fall-back.
///
/// # What can be lifted
///
/// Barriers (`barrier`, `work_group_barrier`, `sub_group_barrier` and their
/// `_scope` forms) as statements, at the top of the body or inside `for`,
/// `while`, `loop` and `if` statements, blocks and `match`es, themselves
/// nested that way.
///
/// * The condition of an `if` or `while`, and a `for`'s iterator, is
///   evaluated by every work-item and must come out the same for all
///   (`003_2caebc1f01141481.txt`: "If barrier is inside a loop, all
///   work-items must execute the barrier for each iteration of the loop
///   before any are allowed to continue execution beyond the barrier");
///   when it does not, the launch fails with a [`Divergence`] (checked: a
///   barrier divergence report), as on the general engine. Its type needs
///   `PartialEq` and `Debug` (a `bool`, a range).
/// * A value *uniform by its syntax* needs no such test: literals,
///   parameters, constants, group ids and sizes, variables the group holds
///   (`let mut half = 128; … half /= 2;`), combined by operators.
/// * A `match` is lifted when its value and its guards are uniform by their
///   syntax; the group takes the arm.
/// * A loop may be left, and the kernel ended, by the whole group at once:
///   `break;`, `continue;` and `return;` (no label, no value), alone or as
///   the whole body of an `if` with no `else` whose condition is uniform by
///   its syntax: `if half == 0 { break; }`, `if wi.get_group_id(0) == skip {
///   return; }`.
/// * `if cond { break; }` with any other condition, when that `break` is
///   its loop's only exit and a work-group barrier stands at the top of the
///   loop's body: every work-item evaluates the condition, and work-items
///   that disagree are a divergence at that barrier (those that stay reach
///   it, those that leave never do again). A loop that decides through
///   local memory (`if done.get(0) != 0 { break; }`) lifts so.
///
/// # How the lifted loops are shaped
///
/// * A `for` loop with no barrier whose body assigns a per-work-item
///   variable declared before it (`for k in 0..TILE { acc += … }`) is
///   interchanged with the loop over the work-items when its iterator is
///   uniform by its syntax and nothing leaves it early: the group runs the
///   `for`, each iteration one loop over the work-items. Consecutive
///   work-items' iterations then overlap, where each work-item's own loop
///   waits for its last iteration's value. Between two barriers OpenCL
///   orders no work-item's statements before another's
///   (`004_bfca21a36d7bd2da.txt`: a barrier is what orders them), and each
///   work-item's own statements keep their order, so this is one of the
///   runs the kernel allows; with atomics, the interleaving shows
///   (`tests/kernel_macro_interchange.rs`). When its iterator is a range
///   and its body a few assignments and calls, it is also unrolled and
///   jammed: four iterations of each work-item in one loop over the group,
///   then the rest one at a time. In an unchecked launch whose rows hold
///   eight work-items or more, such a loop over a range runs in register
///   blocks instead ([`Group::for_each_block`]): the whole loop for sixteen
///   (or eight) work-items of a row at a time, their carried values in
///   vector registers (`tests/kernel_macro_blocks.rs`).
/// * A stretch between barriers that names no id but the local linear one
///   loops over that id alone ([`Group::for_each_linear`]).
/// * A local array's `get(i)` and `set(i, v)` through the group's view of it
///   (`let t = wi.local(tile)`), or a buffer parameter's, at an index that
///   only grows with the ids (`+`, `*` and `/` by a uniform value, of local
///   or global ids and values uniform by their syntax: `ty * TILE + k`,
///   `l + half`, `row * n + col`), is checked once per loop over the
///   work-items instead of once per access: when the index of the
///   work-item with the largest ids is in bounds, the loop runs with
///   `get_unchecked` and `set_unchecked` (a buffer's
///   `get_relaxed_unchecked` and `set_relaxed_unchecked`, still relaxed
///   atomics), so that it can vectorize; otherwise, and in checked
///   launches, it runs as written, and an index out of bounds is the same
///   panic or report, at the same line, for the same work-item
///   (`tests/kernel_macro_bounds.rs`). The same holds for `src[i]` on a
///   `&[T]` parameter, OpenCL C's `global const T*`: memory no one writes
///   while the kernel borrows it, read with plain loads, which vectorize
///   (`tests/kernel_macro_slices.rs`).
/// * `let (l, n) = (wi.get_local_id(0), wi.get_local_size(0));` is taken as
///   two `let`s, so that the group holds `n` and each loop takes `l` from
///   its work-item (not where a value names what an earlier name of the
///   pattern binds: in `let (x, y) = (l * 2, x);`, `y` is the outer `x`).
///
/// A kernel stays on a general engine when a barrier sits anywhere else
/// (a `match` on a per-work-item value, a labelled loop, a closure, an
/// argument), when code between barriers can leave the work-item's path (a
/// `return`, `?`, or a `break` out of a loop that holds a barrier, behind a
/// condition that is not uniform by its syntax), when a sub-group barrier
/// sits under a condition that is not uniform by its syntax (the
/// group-level form would hold the whole group to it, where only each
/// sub-group must agree: `002_6c32435e912a3710.txt`), or when `wi` is used
/// other than to call a function [`Lane`](engine::Lane) also has (passed
/// to an image read, say).
/// The async engine takes any of these as long as each barrier is the
/// kernel's own to await; a barrier in a closure, a barrier with run-time
/// flags (`barrier_dyn`), or `wi` handed to a function (which may wait at a
/// barrier it cannot await) keeps the kernel on the coroutine engine.
///
/// Parameters must be `Copy` (references, numbers, [`LocalArg`]s): each
/// group gets them by value. Variables that live across a barrier must be
/// `Copy` too, as OpenCL C's private scalars and vectors are.
///
/// ```
/// use clsync::sync::LOCAL;
/// use clsync::{kernel, AtomicUint, Buffer, Launch, LocalArg, NdRange, Runtime, WorkItem};
///
/// // The crate docs' tree reduction, written per work-item.
/// #[kernel(groups)]
/// fn reduce(wi: &WorkItem, input: &Buffer<u32>, total: &Buffer<AtomicUint>, scratch: LocalArg<u32>) {
///     let l = wi.get_local_id(0);
///     let s = wi.local(scratch);
///     s.set(l, input.get(wi.get_global_id(0)));
///     let mut half = 128;
///     while half > 0 {
///         wi.barrier(LOCAL);
///         if l < half {
///             s.set(l, s.get(l) + s.get(l + half));
///         }
///         half /= 2;
///     }
///     if l == 0 {
///         total.at(0).fetch_add(s.get(0));
///     }
/// }
///
/// let input = Buffer::from_slice(&(1..=4096).collect::<Vec<u32>>());
/// let total: Buffer<AtomicUint> = Buffer::new(1);
/// let mut launch = Launch::new("reduce", NdRange::new([4096]).local([256]));
/// let scratch = launch.local::<u32>(256);
/// let rt = Runtime::new();
/// reduce_launch(&rt, &launch, &input, &total, scratch).unwrap();
/// // The same kernel on the general engine: the same sum.
/// rt.launch(&launch, |wi| reduce(wi, &input, &total, scratch)).unwrap();
/// assert_eq!(total.at(0).load(), 2 * (4096 * 4097 / 2));
/// ```
///
/// A barrier in a `match` on a per-work-item value keeps a kernel on the
/// general engine; with `groups` that is an error:
///
/// ```compile_fail
/// use clsync::{kernel, WorkItem};
/// use clsync::sync::LOCAL;
///
/// #[kernel(groups)]
/// fn k(wi: &WorkItem) {
///     match wi.get_local_id(0) {
///         0 => wi.barrier(LOCAL),
///         _ => {}
///     }
/// }
/// ```
///
/// So is a `return` behind a per-work-item condition (it would end one
/// work-item's run of the group's loops early), and handing `wi` to a
/// function (which expects
/// a [`WorkItem`], not a [`Lane`](engine::Lane)):
///
/// ```compile_fail
/// use clsync::{kernel, Buffer, WorkItem};
/// use clsync::sync::LOCAL;
///
/// #[kernel(groups)]
/// fn k(wi: &WorkItem, out: &Buffer<u32>) {
///     if wi.get_local_id(0) == 0 {
///         return;
///     }
///     wi.barrier(LOCAL);
///     out.set(wi.get_global_id(0), 1);
/// }
/// ```
///
/// ```compile_fail
/// use clsync::{kernel, Buffer, Image2d, WorkItem};
/// use clsync::sync::IMAGE;
///
/// #[kernel(groups)]
/// fn k(wi: &WorkItem, img: &Image2d<[f32; 4]>) {
///     let p = img.read(wi, [0, 0]);
///     wi.barrier(IMAGE);
///     img.write(wi, [0, 0], p);
/// }
/// ```
///
/// Without `groups`, the same kernels compile and `k_launch` runs them on
/// a general engine (this one on the async engine):
///
/// ```
/// use clsync::{kernel, Buffer, Launch, NdRange, Runtime, WorkItem};
/// use clsync::sync::LOCAL;
///
/// #[kernel]
/// fn k(wi: &WorkItem, out: &Buffer<u32>) {
///     if wi.get_local_id(0) == 0 {
///         return;
///     }
///     out.set(wi.get_global_id(0), 1);
///     wi.barrier(LOCAL);
/// }
///
/// assert_eq!(k_form(), clsync::engine::KernelForm::Async);
/// let out = Buffer::<u32>::new(8);
/// // Work-item 0 returns before the barrier: divergence, reported, not a hang.
/// let e = k_launch(&Runtime::new(), &Launch::new("k", NdRange::new([8])), &out).unwrap_err();
/// assert!(e.to_string().contains("barrier divergence"), "{e}");
/// ```
pub use clsync_macros::kernel;

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;

/// The examples of `docs/kernels.md`, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/kernels.md")]
struct KernelsDocDoctests;
