//! What fences and barriers do on the CPU, and how a barrier wait is
//! described to the scheduler.
//!
//! # How a fence maps onto Rust's memory model
//!
//! Every access to user-visible memory is a Rust atomic access (plain
//! accesses are `Relaxed`), so OpenCL's C11-style fence rules carry over to
//! `std::sync::atomic::fence` unchanged: a release fence followed by a
//! relaxed store synchronizes with a relaxed load, reading it, followed by an
//! acquire fence (C11 §7.17.4, which OpenCL 2.0 §3.3.6 adopts).
//!
//! A work-group runs on one worker thread, so everything a fence of
//! `memory_scope_work_group` or narrower must order is already ordered by
//! that thread's program order; such fences, and all fences on local memory
//! (which only the group's thread can reach), need only a compiler fence.
//! Fences of device or all-SVM scope on global or image memory can pair with
//! other threads, so they are real fences.

use std::fmt;
use std::panic::Location;
use std::sync::atomic::{compiler_fence, fence};

use super::{MemFlags, MemOrder, MemScope};

/// What a fence must do on this machine to have its OpenCL meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FenceKind {
    /// Nothing: `memory_order_relaxed`.
    None,
    /// Keep the compiler from moving accesses across it: every party in its
    /// scope runs on this thread.
    Compiler,
    /// A `std::sync::atomic::fence`: it pairs with other threads.
    Hardware,
}

/// Decides what `atomic_work_item_fence(flags, order, scope)` needs.
///
/// * `000_96da91f170ff246f.txt`: a relaxed fence "has no effects".
/// * Local memory is only reached by the group's own thread, and work-group
///   or narrower scope only includes work-items of that thread, so those
///   need only a compiler fence.
/// * Global or image memory at device or all-SVM scope can be shared with
///   other worker threads and host threads: a hardware fence. With both
///   GLOBAL and LOCAL the fence is one fence for both, as the extract says
///   ("through some shared atomic action").
pub fn fence_kind(flags: MemFlags, order: MemOrder, scope: MemScope) -> FenceKind {
    if order == MemOrder::Relaxed {
        FenceKind::None
    } else if scope.crosses_groups() && flags.intersects(MemFlags::GLOBAL.union(MemFlags::IMAGE)) {
        FenceKind::Hardware
    } else {
        FenceKind::Compiler
    }
}

/// Performs the thread-ordering side of `atomic_work_item_fence(flags,
/// order, scope)` (`000_96da91f170ff246f.txt`), as [`fence_kind`] decides.
/// Image visibility for the work-item itself is handled by the image
/// module.
#[inline]
pub fn fence_effect(flags: MemFlags, order: MemOrder, scope: MemScope) {
    match fence_kind(flags, order, scope) {
        FenceKind::None => {}
        // Pairs with the opposite-direction fence (or acquire/release atomic)
        // of another work-group or of a host thread, through the relaxed
        // accesses that every buffer and image access is.
        FenceKind::Hardware => fence(order.to_std()),
        // Every party within the scope runs on this thread.
        FenceKind::Compiler => compiler_fence(order.to_std()),
    }
}

/// A source location: where a barrier, fence or access is in the kernel.
///
/// Rust kernels get it from `#[track_caller]`; an interpreted kernel can
/// build one from its debug information.
#[derive(Clone, Copy, Eq, PartialOrd, Ord)]
pub struct Site {
    /// Source file.
    pub file: &'static str,
    /// Line, from 1.
    pub line: u32,
    /// Column, from 1.
    pub column: u32,
}

impl PartialEq for Site {
    #[inline]
    fn eq(&self, other: &Site) -> bool {
        // Line and column first, then the file name: by address, which is
        // the common case for one call site, else by content.
        self.line == other.line
            && self.column == other.column
            && (std::ptr::eq(self.file, other.file) || self.file == other.file)
    }
}

impl std::hash::Hash for Site {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // By content, as equality is.
        self.file.hash(state);
        self.line.hash(state);
        self.column.hash(state);
    }
}

impl Site {
    /// The site of a Rust caller.
    pub fn from_location(loc: &'static Location<'static>) -> Site {
        Site {
            file: loc.file(),
            line: loc.line(),
            column: loc.column(),
        }
    }
    /// The site of the calling function's caller (for `#[track_caller]`
    /// functions).
    #[track_caller]
    #[inline]
    pub fn caller() -> Site {
        Site::from_location(Location::caller())
    }
}

impl From<&'static Location<'static>> for Site {
    fn from(loc: &'static Location<'static>) -> Site {
        Site::from_location(loc)
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

impl fmt::Debug for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Which barrier a work-item waits at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierKind {
    /// `barrier` / `work_group_barrier`: every work-item of the group.
    WorkGroup,
    /// `sub_group_barrier`: every work-item of the sub-group.
    SubGroup,
    /// A non-uniform sub-group operation (`sub_group_elect`,
    /// `sub_group_non_uniform_reduce_add`, `sub_group_ballot`, ...; SPIR-V's
    /// `OpGroupNonUniform*`): the work-items of the sub-group that wait at
    /// it together are its *active* set, and the others are not waited
    /// for. `op` tells two operations at one site apart. It neither fences
    /// nor orders memory. Where members of a sub-group wait at several
    /// such operations, the set at the earliest in the source (line, then
    /// column, then `op`) is released first, so that work-items a
    /// divergent branch left out join the set at the next operation they
    /// all reach.
    SubGroupActive {
        /// The operation's identity in its kernel (a compiled program's
        /// instruction index, a Rust call site's address).
        op: u64,
    },
}

impl BarrierKind {
    /// Whether work-items wait here for other work-items of their
    /// sub-group only (a sub-group barrier or a non-uniform operation).
    #[inline]
    pub fn is_sub_group(self) -> bool {
        !matches!(self, BarrierKind::WorkGroup)
    }
}

impl fmt::Display for BarrierKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BarrierKind::WorkGroup => "work_group_barrier",
            BarrierKind::SubGroup => "sub_group_barrier",
            BarrierKind::SubGroupActive { .. } => "sub_group_non_uniform",
        })
    }
}

/// A work-item waiting at a barrier: the event a work-item hands to the
/// scheduler when it suspends. Two work-items are at *the same* barrier when
/// kind, site, flags and scope all agree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BarrierWait {
    /// Work-group or sub-group barrier.
    pub kind: BarrierKind,
    /// Where the barrier is.
    pub site: Site,
    /// Its fence flags.
    pub flags: MemFlags,
    /// Its fence scope.
    pub scope: MemScope,
}

impl fmt::Display for BarrierWait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}({}, {}) at {}",
            self.kind, self.flags, self.scope, self.site
        )
    }
}
