//! How memory operations reach the checker: a thread-local naming the
//! work-item the scheduler is running, and the entry points the buffers,
//! local memory, images, atomics and fences call.
//!
//! Unchecked launches pay one relaxed load of a global counter per access
//! ([`active`]); the thread-local is read only while a checked launch runs.

use std::cell::Cell;
use std::panic::Location;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::item::{AtomicAccess, Kind};
use super::report::{Access, AccessOp, ReportKind, Space};
use super::state::GroupCheck;
use crate::sync::{MemFlags, MemOrder, MemScope, Site, SyncError};

/// Checked launches running now, in any runtime.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// The group and work-item this thread is running under a checked
    /// launch, or null.
    static CURRENT: Cell<(*const GroupCheck, usize)> = const { Cell::new((ptr::null(), 0)) };
    /// The interpreted program's source location, set by [`at_site`].
    static SITE: Cell<Option<Site>> = const { Cell::new(None) };
}

/// Runs `f` with `site` standing for the source location of every access,
/// fence and argument check it makes on this thread. For interpreters
/// (litmus tests, SPIR-V): their Rust call sites say nothing about the
/// interpreted program, whose file, line and column reports should name.
///
/// ```
/// use clsync::checker::{at_site, ReportKind};
/// use clsync::sync::Site;
/// use clsync::{Buffer, Launch, NdRange, Runtime};
///
/// let cell = Buffer::<u32>::new(1);
/// let site = Site { file: "prog.cl", line: 7, column: 3 };
/// let reports = Runtime::with_threads(1)
///     .check(&Launch::new("interp", NdRange::new([2])), |_wi| {
///         at_site(site, || cell.set(0, 1));
///     })
///     .unwrap();
/// assert_eq!(reports[0].kind, ReportKind::DataRace);
/// assert_eq!(reports[0].site, site);
/// ```
pub fn at_site<R>(site: Site, f: impl FnOnce() -> R) -> R {
    let _scope = SiteScope::enter(site);
    f()
}

/// [`at_site`] as a guard: `site` stands for the source location until the
/// guard is dropped, when the previous one (if any) is back.
#[must_use = "the site applies only while the guard lives"]
pub struct SiteScope(Option<Site>);

impl SiteScope {
    /// Makes `site` the current interpreted source location.
    pub fn enter(site: Site) -> SiteScope {
        SiteScope(SITE.with(|s| s.replace(Some(site))))
    }
}

impl Drop for SiteScope {
    fn drop(&mut self) {
        SITE.with(|s| s.set(self.0));
    }
}

/// The interpreted program's current source location, if an interpreter
/// set one ([`at_site`], [`SiteScope`]): what a cancellation or a panic
/// names instead of the interpreter's own line.
pub(crate) fn interpreted_site() -> Option<Site> {
    SITE.with(|s| s.get())
}

/// The site to report for a Rust call at `at`: the interpreted program's,
/// if an interpreter set one.
fn site_of(at: &'static Location<'static>) -> Site {
    SITE.with(|s| s.get())
        .unwrap_or_else(|| Site::from_location(at))
}

/// [`site_of`]'s site as the checker's id: a Rust call site's is cached by
/// the address of its `Location`, so the common case builds no `Site`.
/// Inlined: every access of a Rust kernel asks.
#[inline(always)]
fn site_id_of(at: &'static Location<'static>) -> std::num::NonZeroU32 {
    match SITE.with(|s| s.get()) {
        Some(site) => super::intern::site(site),
        None => super::intern::location(at),
    }
}

/// Whether any checked launch is running. A hint: `false` means no access
/// anywhere needs checking.
#[inline(always)]
pub(crate) fn active() -> bool {
    // Relaxed: the counter is raised before a checked launch's workers start
    // (the pool's spawn orders it) and lowered after they finish; a thread
    // that runs a checked work-item sees it raised through that ordering.
    ACTIVE.load(Ordering::Relaxed) != 0
}

/// Marks a checked launch as running while it lives.
pub(crate) struct ActiveLaunch(());

impl ActiveLaunch {
    pub(crate) fn start() -> Self {
        // Relaxed: see `active`.
        ACTIVE.fetch_add(1, Ordering::Relaxed);
        crate::gate::raise();
        ActiveLaunch(())
    }
}

impl Drop for ActiveLaunch {
    fn drop(&mut self) {
        // Relaxed: see `active`.
        ACTIVE.fetch_sub(1, Ordering::Relaxed);
        crate::gate::lower();
    }
}

/// Names work-item `index` of `group` as the one running on this thread
/// while it lives.
pub(crate) struct Running(());

impl Running {
    #[inline]
    pub(crate) fn enter(group: &GroupCheck, index: usize) -> Self {
        CURRENT.with(|c| c.set((group as *const GroupCheck, index)));
        Running(())
    }
}

impl Running {
    /// Names work-item `index` of `group` as the one running on this
    /// thread, with no guard: the caller clears the name
    /// ([`Running::clear`], or a [`named_loop`](Running::named_loop)'s
    /// guard) before `group` can be dropped.
    #[inline]
    pub(crate) fn name(group: &GroupCheck, index: usize) {
        CURRENT.with(|c| c.set((group as *const GroupCheck, index)));
    }

    /// No work-item is running on this thread any more.
    #[inline]
    pub(crate) fn clear() {
        CURRENT.with(|c| c.set((ptr::null(), 0)));
    }

    /// A guard for a loop that names each work-item in turn
    /// ([`name`](Running::name)): it clears the name when the loop ends or
    /// unwinds, so that nothing after it is taken for the last work-item's
    /// and no name outlives its group.
    #[inline]
    pub(crate) fn named_loop() -> Running {
        Running(())
    }
}

impl Drop for Running {
    #[inline]
    fn drop(&mut self) {
        CURRENT.with(|c| c.set((ptr::null(), 0)));
    }
}

/// Runs `f` with the checked work-item running on this thread, if any.
#[inline]
fn with_current<R>(f: impl FnOnce(&GroupCheck, usize) -> R) -> Option<R> {
    let (group, index) = CURRENT.with(|c| c.get());
    if group.is_null() {
        return None;
    }
    // SAFETY: a non-null pointer was set by a `Running` guard, which the
    // scheduler holds across the resume of this work-item and drops (clearing
    // the pointer) before the `GroupCheck` it points to can be dropped. The
    // reference does not escape `f`.
    let group = unsafe { &*group };
    Some(f(group, index))
}

/// A plain access by the current work-item (no-op on host threads and in
/// unchecked launches).
#[inline]
pub(crate) fn plain(addr: usize, space: Space, write: bool, at: &'static Location<'static>) {
    if active() {
        plain_slow(addr, space, write, at)
    }
}

// Not `#[cold]`: every access of a checked launch comes here.
#[inline(never)]
fn plain_slow(addr: usize, space: Space, write: bool, at: &'static Location<'static>) {
    let kind = if write { Kind::Write(None) } else { Kind::Read };
    with_current(|g, i| g.plain(i, addr, 1, space, kind, site_id_of(at)));
}

/// A read of the `len` bytes of local memory from `addr` that the
/// engine's compiler proved races with nothing, at an interned site (see
/// `GroupCheck::race_free_read`).
#[inline]
pub(crate) fn race_free_read_at(addr: usize, len: usize, site: std::num::NonZeroU32) {
    if active() {
        with_current(|g, i| g.race_free_read(i, addr, len, site));
    }
}

/// Plain accesses to the `len` bytes from `addr` at a given site, for
/// engines (`checker::engine`): a write of `value` where it is known.
#[inline]
pub(crate) fn plain_at(
    addr: usize,
    len: usize,
    space: Space,
    write: bool,
    value: Option<u64>,
    site: Site,
) {
    if active() {
        plain_at_id(addr, len, space, write, value, super::intern::site(site));
    }
}

/// [`plain_at`] at a site interned already (`checker::engine::SiteId`).
#[inline]
pub(crate) fn plain_at_id(
    addr: usize,
    len: usize,
    space: Space,
    write: bool,
    value: Option<u64>,
    site: std::num::NonZeroU32,
) {
    if active() {
        let kind = match (write, value) {
            (false, _) => Kind::Read,
            (true, v) => Kind::Write(v),
        };
        with_current(|g, i| g.plain(i, addr, len, space, kind, site));
    }
}

/// An atomic operation by the current work-item: `f` performs it and says
/// whether it wrote; a checked work-item reports it first. Reached only
/// behind the gate (`atomics::perform`), out of line.
pub(crate) fn atomic<R>(
    addr: usize,
    local: bool,
    access: AtomicAccess,
    at: &'static Location<'static>,
    f: impl FnOnce() -> (R, bool),
) -> R {
    // A typed object's shadow has a cell per element: its first byte
    // names it.
    atomic_at(addr, 1, local, access, site_id_of(at), f)
}

/// [`atomic`] on `len` bytes at a given site, for engines
/// (`checker::engine`).
pub(crate) fn atomic_at<R>(
    addr: usize,
    len: usize,
    local: bool,
    access: AtomicAccess,
    site: std::num::NonZeroU32,
    f: impl FnOnce() -> (R, bool),
) -> R {
    let space = if local { Space::Local } else { Space::Global };
    let mut f = Some(f);
    let checked = with_current(|g, i| {
        let f = f.take().expect("called once");
        g.access(i, addr, len, space, Kind::Atomic(access), site, f)
    });
    match checked {
        Some(r) => r,
        None => (f.take().expect("not taken when unchecked"))().0,
    }
}

/// A fence by the current work-item.
#[inline]
pub(crate) fn fence(flags: MemFlags, order: MemOrder, scope: MemScope) {
    if active() {
        with_current(|g, i| g.fence(i, flags, order, scope));
    }
}

/// An index out of bounds. Returns `true` if a checked work-item made the
/// access: the report is recorded and the access goes to a scratch element
/// instead; `false` means the caller panics as in an unchecked launch.
#[cold]
#[inline(never)]
pub(crate) fn out_of_bounds(
    space: Space,
    name: &str,
    index: &dyn std::fmt::Display,
    len: usize,
    write: bool,
    at: &'static Location<'static>,
) -> bool {
    if !active() {
        return false;
    }
    with_current(|g, i| {
        let site = site_of(at);
        let item = g.ids(i);
        g.launch.report(
            ReportKind::OutOfBounds,
            None,
            None,
            Some(Access {
                item,
                op: if write {
                    AccessOp::Write
                } else {
                    AccessOp::Read
                },
                site,
            }),
            site,
            format!(
                "index {index} of {} memory `{name}`, which has {len} elements",
                space.name()
            ),
        );
    })
    .is_some()
}

/// A run-time argument the operation does not allow, made by the current
/// work-item.
#[cold]
pub(crate) fn invalid_argument(op: &'static str, error: &SyncError, site: Site) {
    if !active() {
        return;
    }
    with_current(|g, i| {
        let item = g.ids(i);
        g.launch.report(
            ReportKind::InvalidArgument,
            None,
            None,
            Some(Access {
                item,
                op: AccessOp::Call(op),
                site,
            }),
            site,
            error.to_string(),
        );
    });
}

/// A read of an image pixel the same work-item wrote at `written` with no
/// image fence since.
#[cold]
pub(crate) fn unfenced_image_read(addr: usize, written: Site, read: Site) {
    with_current(|g, i| {
        let item = g.ids(i);
        g.launch.report(
            ReportKind::ImageFence,
            Some(addr),
            Some(Access {
                item,
                op: AccessOp::Write,
                site: written,
            }),
            Some(Access {
                item,
                op: AccessOp::Read,
                site: read,
            }),
            read,
            format!(
                "the pixel was written by this work-item at {written}; only \
                 atomic_work_item_fence(CLK_IMAGE_MEM_FENCE, …) makes that write \
                 visible to its reads (000_96da91f170ff246f.txt)"
            ),
        );
    });
}

/// Whether the current thread runs a checked work-item.
pub(crate) fn checking_here() -> bool {
    active() && with_current(|_, _| ()).is_some()
}

/// Passes on an argument check's result; an error made by a checked
/// work-item is also reported.
#[inline]
pub(crate) fn argument<T>(
    op: &'static str,
    checked: Result<T, SyncError>,
    site: impl Into<Site>,
) -> Result<T, SyncError> {
    if let Err(e) = &checked {
        let site = SITE.with(|s| s.get()).unwrap_or(site.into());
        invalid_argument(op, e, site);
    }
    checked
}
