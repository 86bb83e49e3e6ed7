//! The synchronization primitives the runtime's own bookkeeping is built on.
//!
//! Under `--cfg loom` these are loom's model-checked types, so the scheduler's
//! protocols (group dispensing, cancellation, completion) can be explored
//! exhaustively by the `loom_*` tests; otherwise they are `std`'s. Only the
//! runtime internals go through this module: the storage of user-visible
//! memory (buffers, local memory, images) always uses `std` atomics, because
//! its semantics are the OpenCL model's, checked by the checker and the
//! explorer rather than by loom.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU64};
#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64};
#[cfg(not(loom))]
pub(crate) use std::sync::{Condvar, Mutex};
