//! The address space an atomic object lives in.

use std::marker::PhantomData;

use crate::sync::sealed::Sealed;

/// Global or local memory. The space decides how an atomic operation is
/// carried out: global atomics are hardware atomics with the requested
/// order; local atomics, which only the worker thread of their work-group
/// can reach, are plain loads and stores (see the `memory` module docs).
pub trait Space: Sealed + 'static {
    /// Whether this is local memory.
    const LOCAL: bool;
    /// The OpenCL C address-space qualifier.
    const NAME: &'static str;
}

/// Global memory (`__global`): shared by all work-groups and host threads.
#[derive(Debug)]
pub struct Global;

/// Local memory (`__local`): one work-group's. Not `Send`, not `Sync`, so an
/// atomic in local memory cannot leave its work-group's thread.
#[derive(Debug)]
pub struct Local(PhantomData<*const ()>);

impl Sealed for Global {}
impl Sealed for Local {}
impl Space for Global {
    const LOCAL: bool = false;
    const NAME: &'static str = "global";
}
impl Space for Local {
    const LOCAL: bool = true;
    const NAME: &'static str = "local";
}
