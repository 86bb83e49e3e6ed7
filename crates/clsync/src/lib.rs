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

pub mod atomics;
pub mod checker;
pub mod engine;
mod error;
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
pub use memory::{AtomicValue, Buffer, BufferView, Image2d, LocalArg, LocalSlice, LocalView};
pub use runtime::{Launch, LaunchSummary, Runtime, DEFAULT_WATCHDOG};
pub use scheduler::Schedule;

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
