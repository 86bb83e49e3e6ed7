//! The vocabulary of OpenCL C synchronization: fence flags, memory orders and
//! memory scopes, each twice over.
//!
//! * As **types** ([`Flags`], [`Relaxed`]…[`SeqCst`], [`WorkGroupScope`]…),
//!   so that a Rust kernel cannot spell an argument combination the
//!   specification forbids: the traits [`LoadOrder`], [`StoreOrder`],
//!   [`FailureOrderFor`], [`AtomicScope`] and [`FenceScopeFor`] admit only the
//!   legal ones, and the compiler rejects the rest.
//! * As **values** ([`MemFlags`], [`MemOrder`], [`MemScope`]), for work-items
//!   whose arguments are only known at run time (an interpreted SPIR-V
//!   kernel). [`validate`] checks those against the same rules and returns a
//!   [`SyncError`] naming what is wrong.
//!
//! The [`opencl`] module spells the same values with OpenCL C's names
//! (`CLK_LOCAL_MEM_FENCE`, `memory_order_acquire`, `memory_scope_device`…).

mod arrival;
mod fence;
mod flags;
pub mod opencl;
mod order;
mod scope;
pub mod validate;

pub use arrival::Arrival;
pub use fence::{fence_effect, fence_kind, BarrierKind, BarrierWait, FenceKind, Site};
pub use flags::{FenceFlags, Flags, MemFlags, GLOBAL, IMAGE, LOCAL};
pub use order::{
    AcqRel, Acquire, FailureOrderFor, FenceOrder, LoadOrder, MemOrder, Order, Relaxed, Release,
    RmwOrder, SeqCst, StoreOrder,
};
pub use scope::{
    AllSvmDevicesScope, AtomicScope, BarrierScope, DeviceScope, FenceScopeFor, GroupScope,
    MemScope, Scope, SubGroupScope, WorkGroupScope, WorkItemScope,
};
pub use validate::SyncError;

/// Seals the marker traits so that only this module's types implement them.
pub(crate) mod sealed {
    pub trait Sealed {}
}
