//! The checker's entry points for engines that run compiled code and reach
//! memory by address (`clsync-opencl`): what [`Buffer`](crate::Buffer) and
//! [`LocalSlice`](crate::LocalSlice) accesses and the atomic types report
//! for Rust kernels, with the source location of the compiled program.
//!
//! Each call is a no-op unless a checked launch is running and the calling
//! thread is running one of its work-items (the scheduler names it), so an
//! engine may call them from every access of a checked build.
//!
//! An access is recorded at the byte address given: an engine reports each
//! scalar of a vector or aggregate access at its own address. The memory
//! object it falls in names it in reports, when one is registered there (a
//! buffer, or a launch's local memory); accesses two objects' shadows
//! cannot tell apart are those at the same address.

use crate::sync::{MemFlags, MemOrder, MemScope, Site};

use super::context::{
    atomic_at, fence, plain_at, plain_at_id, race_free_read_at as race_free_read_at_id,
};
use super::item::{AtomicAccess, OpKind};
use super::Space;

/// A source location interned for the checker ([`SiteId::new`]): what
/// [`plain_range_at`] takes, so that an engine that reports many accesses
/// at few sites (a compiled program's) names each site once per launch
/// rather than once per access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SiteId(std::num::NonZeroU32);

impl SiteId {
    /// The id of `site` (the same for equal sites, for the process's life).
    pub fn new(site: Site) -> SiteId {
        SiteId(super::intern::site(site))
    }
}

/// [`plain_range`] at a site interned already.
///
/// ```
/// use clsync::checker::engine::{self, SiteId};
/// use clsync::checker::{ReportKind, Space};
/// use clsync::sync::Site;
/// use clsync::{Buffer, Launch, NdRange, Runtime};
///
/// let out = Buffer::<u8>::new(4);
/// let site = SiteId::new(Site { file: "k.cl", line: 3, column: 1 });
/// let reports = Runtime::with_threads(1)
///     .check(&Launch::new("k", NdRange::new([2])), |wi| {
///         let v = wi.get_global_id(0) as u64;
///         engine::plain_range_at(out.raw_bytes().0 as usize, 4, Space::Global, true, Some(v), site);
///     })
///     .unwrap();
/// assert_eq!(reports.len(), 1);
/// assert_eq!(reports[0].site.line, 3);
/// ```
#[inline]
pub fn plain_range_at(
    addr: usize,
    len: usize,
    space: Space,
    write: bool,
    value: Option<u64>,
    site: SiteId,
) {
    plain_at_id(addr, len, space, write, value, site.0)
}

/// [`plain_range_at`] for a read of local memory that the engine's
/// compiler proved races with nothing: no access of another work-item
/// that may share its barrier interval writes local memory. Where the
/// bytes' shadow already holds a plain write, there is nothing to check
/// (the argument is `#[kernel]`'s, in the `checker::race_free` module's
/// notes); elsewhere (bytes nothing wrote: a report) it is
/// [`plain_range_at`]'s read. The engine vouches for the proof: in a
/// launch that runs on from divergent barriers
/// ([`Launch::runs_on_divergence`](crate::Launch::runs_on_divergence)) it
/// may call this only for a group that has not diverged yet.
#[inline]
pub fn race_free_read_at(addr: usize, len: usize, site: SiteId) {
    race_free_read_at_id(addr, len, site.0)
}

/// What an atomic operation does, for [`atomic`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicKind {
    /// It reads only (`atomic_load`).
    Load,
    /// It writes only (`atomic_store`, `atomic_flag_clear`).
    Store,
    /// It reads and writes in one step (`atomic_fetch_add`, exchange,
    /// compare-exchange, the 1.x atomics).
    ReadModifyWrite,
}

/// A plain load (`write` false) or store by the current work-item at
/// `addr` in `space`, at `site` of the compiled program.
///
/// ```
/// use clsync::checker::{engine, ReportKind, Space};
/// use clsync::sync::Site;
/// use clsync::{Buffer, Launch, NdRange, Runtime};
///
/// // Compiled code would make these calls for `out[0] = x;` in each
/// // work-item: a race, at the compiled program's line.
/// let out = Buffer::<u32>::new(1).named("out");
/// let site = Site { file: "k.cl", line: 3, column: 5 };
/// let reports = Runtime::with_threads(1)
///     .check(&Launch::new("k", NdRange::new([2])), |_wi| {
///         engine::plain(out.raw_bytes().0 as usize, Space::Global, true, site);
///     })
///     .unwrap();
/// assert_eq!(reports[0].kind, ReportKind::DataRace);
/// assert_eq!(reports[0].site, site);
/// ```
#[inline]
pub fn plain(addr: usize, space: Space, write: bool, site: Site) {
    plain_at(addr, 1, space, write, None, site)
}

/// A plain write at `addr` by the current work-item of a scalar whose
/// value is `value` (every byte of one scalar is reported with the whole
/// scalar's value): [`plain`] with the value written, so that two
/// unordered writes of the same value are not reported as a race (a
/// *uniform write*, which Oclgrind allows too: `*flag = 1;` in every
/// work-item). Values are compared by a 22-bit digest.
///
/// ```
/// use clsync::checker::engine;
/// use clsync::checker::Space;
/// use clsync::sync::Site;
/// use clsync::{Buffer, Launch, NdRange, Runtime};
///
/// let out = Buffer::<u8>::new(1);
/// let site = Site { file: "k.cl", line: 1, column: 1 };
/// let check = |value: fn(usize) -> u64| {
///     Runtime::with_threads(1)
///         .check(&Launch::new("k", NdRange::new([4])), |wi| {
///             let v = value(wi.get_global_id(0));
///             engine::plain_write(out.raw_bytes().0 as usize, Space::Global, v, site);
///         })
///         .unwrap()
/// };
/// assert!(check(|_| 1).is_empty()); // every work-item writes 1
/// assert_eq!(check(|i| i as u64).len(), 1); // different values: a race
/// ```
#[inline]
pub fn plain_write(addr: usize, space: Space, value: u64, site: Site) {
    plain_at(addr, 1, space, true, Some(value), site)
}

/// One plain access of `len` bytes from `addr` by the current work-item:
/// each byte recorded as [`plain`] (a read, or a write whose value is not
/// known) or [`plain_write`] (a write of the scalar `value`, every byte with
/// the whole scalar's value) would record it, in one call. What a compiled
/// kernel's checked build reports for each scalar it loads or stores.
///
/// ```
/// use clsync::checker::{engine, ReportKind, Space};
/// use clsync::sync::Site;
/// use clsync::{Buffer, Launch, NdRange, Runtime};
///
/// // Each work-item writes its id to the same 4 bytes: a race, reported
/// // once for the access (not once per byte).
/// let out = Buffer::<u8>::new(4);
/// let site = Site { file: "k.cl", line: 2, column: 1 };
/// let reports = Runtime::with_threads(1)
///     .check(&Launch::new("k", NdRange::new([2])), |wi| {
///         let v = wi.get_global_id(0) as u64;
///         engine::plain_range(out.raw_bytes().0 as usize, 4, Space::Global, true, Some(v), site);
///     })
///     .unwrap();
/// assert_eq!(reports.len(), 1);
/// assert_eq!(reports[0].kind, ReportKind::DataRace);
/// ```
#[inline]
pub fn plain_range(
    addr: usize,
    len: usize,
    space: Space,
    write: bool,
    value: Option<u64>,
    site: Site,
) {
    plain_at(addr, len, space, write, value, site)
}

/// An atomic operation by the current work-item on the `len` bytes at
/// `addr` (its object's size), at `site`: `f` performs it and returns its
/// result and whether it wrote (a failed compare-exchange does not). The
/// checker runs `f` once, with the location's shadow held, so that the
/// value and the happens-before it carries stay together; with no checked
/// launch running, `f` just runs.
#[allow(clippy::too_many_arguments)]
pub fn atomic<R>(
    addr: usize,
    len: usize,
    local: bool,
    op: &'static str,
    kind: AtomicKind,
    order: MemOrder,
    failure: Option<MemOrder>,
    scope: MemScope,
    site: Site,
    f: impl FnOnce() -> (R, bool),
) -> R {
    let site = SiteId::new(site);
    atomic_at_id(addr, len, local, op, kind, order, failure, scope, site, f)
}

/// [`atomic`] at a site interned once ([`SiteId`]), as
/// [`plain_range_at`] is [`plain_range`]: what an engine that runs the same
/// program's atomics many times calls.
#[allow(clippy::too_many_arguments)]
pub fn atomic_at_id<R>(
    addr: usize,
    len: usize,
    local: bool,
    op: &'static str,
    kind: AtomicKind,
    order: MemOrder,
    failure: Option<MemOrder>,
    scope: MemScope,
    site: SiteId,
    f: impl FnOnce() -> (R, bool),
) -> R {
    let kind = match kind {
        AtomicKind::Load => OpKind::Load,
        AtomicKind::Store => OpKind::Store,
        AtomicKind::ReadModifyWrite => OpKind::Rmw,
    };
    let access = AtomicAccess {
        op,
        kind,
        order,
        failure,
        scope,
    };
    atomic_at(addr, len, local, access, site.0, f)
}

/// A fence by the current work-item (`atomic_work_item_fence`,
/// `mem_fence`): release, acquire or both on the memory `flags` name.
pub fn memory_fence(flags: MemFlags, order: MemOrder, scope: MemScope) {
    fence(flags, order, scope)
}

/// Names memory for reports: `len` elements of `stride` bytes from `base`
/// are object `name` in `space` (an engine's own kind of object over a
/// buffer's bytes: a compiled kernel's image, whose texels a report then
/// counts). It replaces what was registered at `base`; the buffer that
/// owns the bytes forgets it when dropped.
pub fn name_memory(base: usize, len: usize, stride: usize, space: Space, name: &str) {
    super::objects::register(base, len, stride, space, name);
}

/// Forgets what [`name_memory`] named at `base`: an engine whose memory
/// outlives the names it gives it (an OpenCL platform's buffer, named after
/// the kernel argument it is during a launch) takes the name back after.
pub fn forget_memory(base: usize) {
    super::objects::unregister(base);
}
