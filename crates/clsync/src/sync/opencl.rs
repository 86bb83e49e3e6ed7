//! OpenCL C's own names for fence flags, orders and scopes, for kernels that
//! read like the OpenCL C they were ported from.
//!
//! ```
//! use clsync::sync::opencl::*;
//! fn f(wi: &clsync::WorkItem, flag: &clsync::AtomicInt) {
//!     wi.barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
//!     flag.store_explicit_scope(1, memory_order_release, memory_scope_device);
//! }
//! ```
#![allow(non_upper_case_globals)]

use super::*;

/// `CLK_LOCAL_MEM_FENCE`.
pub const CLK_LOCAL_MEM_FENCE: Flags<1> = LOCAL;
/// `CLK_GLOBAL_MEM_FENCE`.
pub const CLK_GLOBAL_MEM_FENCE: Flags<2> = GLOBAL;
/// `CLK_IMAGE_MEM_FENCE`.
pub const CLK_IMAGE_MEM_FENCE: Flags<4> = IMAGE;
/// `memory_order_relaxed`.
pub const memory_order_relaxed: Relaxed = Relaxed;
/// `memory_order_acquire`.
pub const memory_order_acquire: Acquire = Acquire;
/// `memory_order_release`.
pub const memory_order_release: Release = Release;
/// `memory_order_acq_rel`.
pub const memory_order_acq_rel: AcqRel = AcqRel;
/// `memory_order_seq_cst`.
pub const memory_order_seq_cst: SeqCst = SeqCst;
/// `memory_scope_work_item`.
pub const memory_scope_work_item: WorkItemScope = WorkItemScope;
/// `memory_scope_sub_group`.
pub const memory_scope_sub_group: SubGroupScope = SubGroupScope;
/// `memory_scope_work_group`.
pub const memory_scope_work_group: WorkGroupScope = WorkGroupScope;
/// `memory_scope_device`.
pub const memory_scope_device: DeviceScope = DeviceScope;
/// `memory_scope_all_svm_devices`.
pub const memory_scope_all_svm_devices: AllSvmDevicesScope = AllSvmDevicesScope;
