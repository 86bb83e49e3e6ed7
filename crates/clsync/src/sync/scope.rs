//! `memory_scope`: the set of work-items an atomic operation or fence
//! synchronizes with.
//!
//! Restrictions (OpenCL C 2.0 §6.13.11 and `000_96da91f170ff246f.txt`):
//! `memory_scope_work_item` is only for `atomic_work_item_fence` with
//! `CLK_IMAGE_MEM_FENCE` alone, so atomics and barriers never take it.
//!
//! ```compile_fail
//! use clsync::sync::{Relaxed, WorkItemScope};
//! fn f(a: &clsync::AtomicInt) { a.load_explicit_scope(Relaxed, WorkItemScope); }
//! ```
//!
//! ```compile_fail
//! use clsync::sync::{AcqRel, WorkItemScope, GLOBAL};
//! fn f(wi: &clsync::WorkItem) { wi.atomic_work_item_fence(GLOBAL, AcqRel, WorkItemScope); }
//! ```
//!
//! ```
//! use clsync::sync::{AcqRel, WorkItemScope, IMAGE};
//! fn f(wi: &clsync::WorkItem) { wi.atomic_work_item_fence(IMAGE, AcqRel, WorkItemScope); }
//! ```

use std::fmt;

use super::flags::{FenceFlags, Flags};
use super::sealed::Sealed;

/// A memory scope as a run-time value, narrowest first, so `a <= b` means
/// "`b` includes at least the work-items of `a`".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemScope {
    /// `memory_scope_work_item`: the work-item itself (image fences only).
    WorkItem,
    /// `memory_scope_sub_group`: the work-items of one sub-group.
    SubGroup,
    /// `memory_scope_work_group`: the work-items of one work-group.
    WorkGroup,
    /// `memory_scope_device`: every work-item of the device.
    Device,
    /// `memory_scope_all_svm_devices`: every device and the host, through
    /// fine-grained SVM.
    AllSvmDevices,
}

impl MemScope {
    /// Every scope, narrowest first; a scope's discriminant is its index
    /// here.
    pub const ALL: [MemScope; 5] = [
        MemScope::WorkItem,
        MemScope::SubGroup,
        MemScope::WorkGroup,
        MemScope::Device,
        MemScope::AllSvmDevices,
    ];

    /// The OpenCL C spelling.
    pub fn name(self) -> &'static str {
        match self {
            MemScope::WorkItem => "memory_scope_work_item",
            MemScope::SubGroup => "memory_scope_sub_group",
            MemScope::WorkGroup => "memory_scope_work_group",
            MemScope::Device => "memory_scope_device",
            MemScope::AllSvmDevices => "memory_scope_all_svm_devices",
        }
    }
    /// Whether the scope reaches beyond one work-group, and so beyond the
    /// worker thread that runs the group.
    pub fn crosses_groups(self) -> bool {
        self >= MemScope::Device
    }
}

impl fmt::Display for MemScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A memory scope known at compile time.
pub trait Scope: Copy + Sealed {
    /// The scope as a value.
    const SCOPE: MemScope;
}
/// Scopes an atomic operation may take: all but work_item.
pub trait AtomicScope: Scope {}
/// Scopes a barrier's fence may take: all but work_item.
pub trait BarrierScope: Scope {}
/// Atomic scopes that include every work-item of a work-group:
/// work_group, device and all_svm_devices. Two atomics of such scopes on
/// one work-group's local memory never race (their scopes include each
/// other's work-items).
pub trait GroupScope: AtomicScope {}
/// Scopes a fence with flags `F` may take: work_item only with the image
/// flag alone, the others with any flags.
pub trait FenceScopeFor<F>: Scope {}

macro_rules! scopes {
    ($($name:ident => $v:ident, $doc:literal;)*) => {$(
        #[doc = $doc]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name;
        impl Sealed for $name {}
        impl Scope for $name { const SCOPE: MemScope = MemScope::$v; }
    )*};
}
scopes! {
    WorkItemScope => WorkItem, "`memory_scope_work_item`.";
    SubGroupScope => SubGroup, "`memory_scope_sub_group`.";
    WorkGroupScope => WorkGroup, "`memory_scope_work_group`.";
    DeviceScope => Device, "`memory_scope_device`.";
    AllSvmDevicesScope => AllSvmDevices, "`memory_scope_all_svm_devices`.";
}

macro_rules! wide_scopes {
    ($($name:ident)*) => {$(
        impl AtomicScope for $name {}
        impl BarrierScope for $name {}
        impl<F: FenceFlags> FenceScopeFor<F> for $name {}
    )*};
}
wide_scopes!(SubGroupScope WorkGroupScope DeviceScope AllSvmDevicesScope);
impl FenceScopeFor<Flags<4>> for WorkItemScope {}
impl GroupScope for WorkGroupScope {}
impl GroupScope for DeviceScope {}
impl GroupScope for AllSvmDevicesScope {}
