//! [`WorkItem`]: what a Rust kernel sees of its work-item — the work-item
//! functions, barriers, fences and local memory.

use std::cell::RefCell;
use std::fmt;
use std::panic::Location;

use corosensei::Yielder;

use crate::checker;
use crate::engine::asynchronous::Arrive;
use crate::engine::{GroupEnv, Resume};
use crate::geometry::ItemIds;
use crate::memory::{Element, LocalArg, LocalSlice};
use crate::scheduler::hooks;
use crate::sync::{
    fence_effect, validate, AcqRel, Acquire, Arrival, BarrierKind, BarrierScope, BarrierWait,
    FenceFlags, FenceOrder, FenceScopeFor, MemFlags, MemOrder, MemScope, Release, Site,
    SubGroupScope, SyncError, WorkGroupScope,
};
use crate::trace::{self, SyncEvent};

/// One work-item of a running Rust kernel.
///
/// A kernel is a closure `Fn(&WorkItem)`, called once per work-item. The
/// OpenCL C work-item functions keep their names (`get_global_id` …), and
/// take a dimension index; out of range, they return what OpenCL C returns
/// (1 for sizes, 0 for ids and offsets).
///
/// ```
/// use clsync::{Buffer, Launch, NdRange, Runtime};
/// use clsync::sync::LOCAL;
///
/// // Reverse each group of 64 through local memory.
/// let data = Buffer::from_slice(&(0..256).collect::<Vec<u32>>());
/// let mut launch = Launch::new("reverse", NdRange::new([256]).local([64]));
/// let tile = launch.local::<u32>(64);
/// Runtime::with_threads(2).launch(&launch, |wi| {
///     let (l, g) = (wi.get_local_id(0), wi.get_global_id(0));
///     let tile = wi.local(tile);
///     tile.set(l, data.get(g));
///     wi.barrier(LOCAL);
///     data.set(g, tile.get(63 - l));
/// }).unwrap();
/// assert_eq!(data.get(0), 63);
/// assert_eq!(data.get(64), 127);
/// ```
pub struct WorkItem<'g> {
    /// Held by reference: the group keeps every work-item's ids in one
    /// table, so a suspended work-item's own state stays small (an async
    /// work-item's future is polled once per barrier, and a group's futures
    /// should fit the cache together).
    pub(crate) ids: &'g ItemIds,
    pub(crate) env: &'g GroupEnv<'g>,
    /// The coroutine to suspend at a barrier; `None` on the async engine,
    /// whose barriers are awaited.
    pub(crate) yielder: Option<&'g Yielder<Resume, super::Yielded>>,
    /// Image writes not yet fenced (strict image mode and checked
    /// launches).
    pub(crate) image_pending: RefCell<Vec<PendingImageWrite>>,
    /// How many work-group and sub-group collectives it has made.
    pub(crate) collectives: std::cell::Cell<[u64; 2]>,
}

/// An image write its work-item has not fenced yet.
pub(crate) struct PendingImageWrite {
    image: u64,
    index: usize,
    /// The pixel before the write: what strict mode lets the writer read.
    old: [u32; 4],
    /// Where the write was.
    site: Site,
}

impl fmt::Debug for WorkItem<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkItem").field("ids", &self.ids).finish()
    }
}

/// Work-item functions (OpenCL C 2.0 §6.13.1 and the sub-group functions of
/// `cl_khr_subgroups` / OpenCL C 2.1).
impl WorkItem<'_> {
    /// All ids of this work-item at once.
    pub fn ids(&self) -> &ItemIds {
        self.ids
    }
    /// `get_work_dim`.
    pub fn get_work_dim(&self) -> u32 {
        self.env.geometry.dims as u32
    }
    /// `get_global_size(dim)`.
    pub fn get_global_size(&self, dim: u32) -> usize {
        self.env.geometry.in_dim(dim, self.env.geometry.global, 1)
    }
    /// `get_global_id(dim)`.
    #[inline]
    pub fn get_global_id(&self, dim: u32) -> usize {
        self.env.geometry.in_dim(dim, self.ids.global_id, 0)
    }
    /// `get_global_offset(dim)`.
    pub fn get_global_offset(&self, dim: u32) -> usize {
        self.env.geometry.in_dim(dim, self.env.geometry.offset, 0)
    }
    /// `get_local_size(dim)`: this group's actual size, smaller than the
    /// enqueued size in the last group of a non-uniform dimension.
    pub fn get_local_size(&self, dim: u32) -> usize {
        self.env.geometry.in_dim(dim, self.ids.local_size, 1)
    }
    /// `get_enqueued_local_size(dim)`: the local size the range was
    /// launched with.
    pub fn get_enqueued_local_size(&self, dim: u32) -> usize {
        self.env.geometry.in_dim(dim, self.env.geometry.local, 1)
    }
    /// `get_local_id(dim)`.
    #[inline]
    pub fn get_local_id(&self, dim: u32) -> usize {
        self.env.geometry.in_dim(dim, self.ids.local_id, 0)
    }
    /// `get_num_groups(dim)`.
    pub fn get_num_groups(&self, dim: u32) -> usize {
        self.env
            .geometry
            .in_dim(dim, self.env.geometry.num_groups, 1)
    }
    /// `get_group_id(dim)`.
    #[inline]
    pub fn get_group_id(&self, dim: u32) -> usize {
        self.env.geometry.in_dim(dim, self.ids.group_id, 0)
    }
    /// `get_global_linear_id`.
    pub fn get_global_linear_id(&self) -> usize {
        self.ids.global_linear_id
    }
    /// `get_local_linear_id`.
    pub fn get_local_linear_id(&self) -> usize {
        self.ids.local_linear_id
    }
    /// `get_sub_group_size`: this sub-group's size (the last of a group may
    /// be partial).
    pub fn get_sub_group_size(&self) -> u32 {
        self.ids.sub_group_size as u32
    }
    /// `get_max_sub_group_size`.
    pub fn get_max_sub_group_size(&self) -> u32 {
        self.env.geometry.max_sub_group_size() as u32
    }
    /// `get_num_sub_groups`: sub-groups in this group.
    pub fn get_num_sub_groups(&self) -> u32 {
        self.ids.num_sub_groups as u32
    }
    /// `get_enqueued_num_sub_groups`: sub-groups in a full group.
    pub fn get_enqueued_num_sub_groups(&self) -> u32 {
        self.env.geometry.enqueued_num_sub_groups() as u32
    }
    /// `get_sub_group_id`.
    pub fn get_sub_group_id(&self) -> u32 {
        self.ids.sub_group_id as u32
    }
    /// `get_sub_group_local_id`.
    pub fn get_sub_group_local_id(&self) -> u32 {
        self.ids.sub_group_local_id as u32
    }
}

/// Barriers (`003_2caebc1f01141481.txt`, `004_bfca21a36d7bd2da.txt`,
/// `002_6c32435e912a3710.txt`).
///
/// A barrier suspends the work-item until every work-item of its group (or
/// sub-group) has reached the same barrier — same call site, flags and
/// scope. If they cannot all get there (one returned, one waits at another
/// barrier, a loop ran a different number of times) the launch fails with a
/// divergence error naming the barrier and where every work-item was; it
/// never hangs.
///
/// # Memory ordering
///
/// Each barrier is a release fence, the wait, and an acquire fence, on the
/// memory its flags name, at its scope. A group's work-items all run on one
/// thread, so for work-group and sub-group scope the fences only keep the
/// compiler from moving accesses across the barrier; for device and all-SVM
/// scope on global or image memory they are `std` fences that pair with
/// other groups' and host threads' fences and atomics.
impl WorkItem<'_> {
    /// `barrier(flags)`: the OpenCL 1.2 name of
    /// `work_group_barrier(flags)`.
    #[inline]
    #[track_caller]
    pub fn barrier<F: FenceFlags>(&self, flags: F) {
        self.wait_at_location(
            BarrierKind::WorkGroup,
            flags.mem_flags(),
            MemScope::WorkGroup,
            Location::caller(),
        )
    }
    /// `work_group_barrier(flags)`: work-group scope.
    #[inline]
    #[track_caller]
    pub fn work_group_barrier<F: FenceFlags>(&self, flags: F) {
        self.wait_at_location(
            BarrierKind::WorkGroup,
            flags.mem_flags(),
            MemScope::WorkGroup,
            Location::caller(),
        )
    }
    /// `work_group_barrier(flags, scope)`.
    #[inline]
    #[track_caller]
    pub fn work_group_barrier_scope<F: FenceFlags, S: BarrierScope>(&self, flags: F, _scope: S) {
        self.wait_at_location(
            BarrierKind::WorkGroup,
            flags.mem_flags(),
            S::SCOPE,
            Location::caller(),
        )
    }
    /// `sub_group_barrier(flags)`: sub-group scope.
    #[inline]
    #[track_caller]
    pub fn sub_group_barrier<F: FenceFlags>(&self, flags: F) {
        self.wait_at_location(
            BarrierKind::SubGroup,
            flags.mem_flags(),
            MemScope::SubGroup,
            Location::caller(),
        )
    }
    /// `sub_group_barrier(flags, scope)`.
    #[inline]
    #[track_caller]
    pub fn sub_group_barrier_scope<F: FenceFlags, S: BarrierScope>(&self, flags: F, _scope: S) {
        self.wait_at_location(
            BarrierKind::SubGroup,
            flags.mem_flags(),
            S::SCOPE,
            Location::caller(),
        )
    }
    /// A barrier with run-time arguments: raw `cl_mem_fence_flags` bits and
    /// a scope, checked; on an error the work-item does not wait.
    #[track_caller]
    pub fn barrier_dyn(
        &self,
        kind: BarrierKind,
        flags: u32,
        scope: MemScope,
    ) -> Result<(), SyncError> {
        self.barrier_dyn_at(kind, flags, scope, Site::caller())
    }
    /// [`barrier_dyn`](WorkItem::barrier_dyn) at a given source location,
    /// for interpreters: `site` is where the barrier is in the interpreted
    /// program, so two different barriers of that program stay different
    /// barriers for divergence detection and reports.
    pub fn barrier_dyn_at(
        &self,
        kind: BarrierKind,
        flags: u32,
        scope: MemScope,
        site: Site,
    ) -> Result<(), SyncError> {
        let op = match kind {
            BarrierKind::WorkGroup => "work_group_barrier",
            BarrierKind::SubGroup => "sub_group_barrier",
            BarrierKind::SubGroupActive { op } => {
                self.sub_group_active_at(site, op);
                return Ok(());
            }
        };
        let flags = checker::argument(op, validate::barrier(op, flags, scope), site)?;
        self.wait_at(kind, flags, scope, site);
        Ok(())
    }

    /// Waits at the non-uniform sub-group operation `op` at `site` (see
    /// [`BarrierKind::SubGroupActive`]) until the scheduler releases the
    /// work-items of this sub-group that wait there together: its active
    /// set. For interpreters and compiled code; Rust kernels call the
    /// operations themselves ([`sub_group_elect`](WorkItem::sub_group_elect),
    /// ...). It fences nothing; a work-item of the sub-group that never
    /// comes is not waited for.
    pub fn sub_group_active_at(&self, site: Site, op: u64) {
        self.wait_at(
            BarrierKind::SubGroupActive { op },
            MemFlags(0),
            MemScope::SubGroup,
            site,
        );
    }

    /// A point where a cancelled launch may stop this work-item, for
    /// interpreters: call it at each loop back-edge of the interpreted
    /// program, so that a loop that touches no atomic, fence or barrier
    /// (`while (1) {}`) can still be ended by the watchdog (see
    /// [`Launch::watchdog`](crate::Launch::watchdog)). Atomics, fences and
    /// barriers are such points already. While nothing is cancelled or on
    /// probation it costs one load of a global.
    ///
    /// ```
    /// use std::time::Duration;
    /// use clsync::{Launch, LaunchError, NdRange, Runtime};
    ///
    /// // An interpreted `while (1) {}`: the back-edge is the only call.
    /// let launch = Launch::new("spin", NdRange::new([1]))
    ///     .watchdog(Some(Duration::from_millis(50)));
    /// let e = Runtime::with_threads(1)
    ///     .launch(&launch, |wi| loop {
    ///         wi.cancellation_point();
    ///     })
    ///     .unwrap_err();
    /// assert!(matches!(e, LaunchError::Stalled(_)));
    /// ```
    #[inline]
    #[track_caller]
    pub fn cancellation_point(&self) {
        hooks::poll(Location::caller());
    }

    /// What every barrier does before it waits: the release half of its
    /// fence, the image fence, the trace (`site` is asked for only while a
    /// trace is captured).
    #[inline]
    pub(crate) fn arrive(
        &self,
        kind: BarrierKind,
        flags: MemFlags,
        scope: MemScope,
        site: impl FnOnce() -> Site,
    ) {
        arrive_unowned(kind, flags, scope, site);
        self.barrier_images(flags);
    }

    /// A barrier's image fence: with the IMAGE flag, this work-item's own
    /// image writes become visible to its reads.
    #[inline]
    pub(crate) fn barrier_images(&self, flags: MemFlags) {
        self.image_fence(flags, MemOrder::AcqRel);
    }

    /// Waits at the barrier at `site`, an interpreted program's.
    #[inline]
    pub(super) fn wait_at(&self, kind: BarrierKind, flags: MemFlags, scope: MemScope, site: Site) {
        let wait = BarrierWait {
            kind,
            site,
            flags,
            scope,
        };
        // Set here, taken by the task after the switch (see `Yielded`).
        super::WAITING_AT.with(|w| w.set(Some(wait)));
        self.wait(kind, flags, scope, || site, None);
    }

    /// Waits at the barrier at `at`, a Rust kernel's: the scheduler gets the
    /// two-word [`Arrival`], the cheaper to compare.
    #[inline]
    fn wait_at_location(
        &self,
        kind: BarrierKind,
        flags: MemFlags,
        scope: MemScope,
        at: &'static Location<'static>,
    ) {
        let arrival = Arrival::new(kind, flags, scope, at);
        let site = || Site::from(at);
        self.wait(kind, flags, scope, site, Some(arrival));
    }

    /// Arrives at the barrier, suspends with `suspend` (which stands for
    /// it) and, once released, takes the barrier's acquire half. `site` is
    /// only asked for when it is needed (a trace, a cancellation, a misuse),
    /// so that a barrier with a static location reads no file name.
    ///
    /// Always inlined: as a call it took `suspend` through memory, stored
    /// in pieces by the caller and read back whole, which the processor
    /// cannot forward from its store buffer (a stall per barrier).
    #[inline(always)]
    fn wait(
        &self,
        kind: BarrierKind,
        flags: MemFlags,
        scope: MemScope,
        site: impl Fn() -> Site + Copy,
        suspend: super::Yielded,
    ) {
        self.arrive(kind, flags, scope, site);
        let Some(yielder) = self.yielder else {
            let wait = BarrierWait {
                kind,
                site: site(),
                flags,
                scope,
            };
            panic!("{wait}: a kernel on the async engine awaits its barriers (`barrier_async(…).await`)");
        };
        match yielder.suspend(suspend) {
            Resume::Continue => {}
            Resume::Cancel => hooks::cancel_unwind(Some(site())),
        }
        // Acquire half.
        fence_effect(flags, MemOrder::Acquire, scope);
    }
}

/// What every barrier does before it waits that needs no work-item: the
/// release half of its fence and the trace (`site` is asked for only while
/// a trace is captured). [`WorkItem::arrive`] adds the image fence; the async
/// engine does that after the poll, so that its barrier futures need not hold
/// their work-item.
#[inline]
pub(crate) fn arrive_unowned(
    kind: BarrierKind,
    flags: MemFlags,
    scope: MemScope,
    site: impl FnOnce() -> Site,
) {
    fence_effect(flags, MemOrder::Release, scope);
    trace::note(|| {
        SyncEvent::Barrier(BarrierWait {
            kind,
            site: site(),
            flags,
            scope,
        })
    });
}

/// Barriers of the async engine ([`crate::engine::asynchronous`]): the same
/// barriers, awaited. The work-item's future returns `Pending` at each one,
/// which is how the scheduler learns it waits.
impl<'g> WorkItem<'g> {
    /// `barrier(flags)`, awaited.
    #[track_caller]
    pub fn barrier_async<F: FenceFlags + 'static>(
        &self,
        _flags: F,
    ) -> impl std::future::Future<Output = ()> + '_ {
        Arrive::<F, WorkGroupScope, false>::new(Location::caller())
    }
    /// `work_group_barrier(flags)`, awaited.
    #[track_caller]
    pub fn work_group_barrier_async<F: FenceFlags + 'static>(
        &self,
        _flags: F,
    ) -> impl std::future::Future<Output = ()> + '_ {
        Arrive::<F, WorkGroupScope, false>::new(Location::caller())
    }
    /// `work_group_barrier(flags, scope)`, awaited.
    #[track_caller]
    pub fn work_group_barrier_scope_async<F: FenceFlags + 'static, S: BarrierScope + 'static>(
        &self,
        _flags: F,
        _scope: S,
    ) -> impl std::future::Future<Output = ()> + '_ {
        Arrive::<F, S, false>::new(Location::caller())
    }
    /// `sub_group_barrier(flags)`, awaited.
    #[track_caller]
    pub fn sub_group_barrier_async<F: FenceFlags + 'static>(
        &self,
        _flags: F,
    ) -> impl std::future::Future<Output = ()> + '_ {
        Arrive::<F, SubGroupScope, true>::new(Location::caller())
    }
    /// `sub_group_barrier(flags, scope)`, awaited.
    #[track_caller]
    pub fn sub_group_barrier_scope_async<F: FenceFlags + 'static, S: BarrierScope + 'static>(
        &self,
        _flags: F,
        _scope: S,
    ) -> impl std::future::Future<Output = ()> + '_ {
        Arrive::<F, S, true>::new(Location::caller())
    }
}

/// Fences (`000_96da91f170ff246f.txt`, `003_2caebc1f01141481.txt`).
impl WorkItem<'_> {
    /// `atomic_work_item_fence(flags, order, scope)`.
    ///
    /// `memory_scope_work_item` is accepted only with `IMAGE` alone; other
    /// combinations do not compile.
    #[track_caller]
    pub fn atomic_work_item_fence<F: FenceFlags, O: FenceOrder, S: FenceScopeFor<F>>(
        &self,
        flags: F,
        _order: O,
        _scope: S,
    ) {
        self.fence(flags.mem_flags(), O::ORDER, S::SCOPE)
    }
    /// `mem_fence(flags)`: `atomic_work_item_fence(flags,
    /// memory_order_acq_rel, memory_scope_work_group)`.
    #[track_caller]
    pub fn mem_fence<F: FenceFlags>(&self, flags: F) {
        self.atomic_work_item_fence(flags, AcqRel, WorkGroupScope)
    }
    /// `read_mem_fence(flags)`: `atomic_work_item_fence(flags,
    /// memory_order_acquire, memory_scope_work_group)`.
    #[track_caller]
    pub fn read_mem_fence<F: FenceFlags>(&self, flags: F) {
        self.atomic_work_item_fence(flags, Acquire, WorkGroupScope)
    }
    /// `write_mem_fence(flags)`: `atomic_work_item_fence(flags,
    /// memory_order_release, memory_scope_work_group)`.
    #[track_caller]
    pub fn write_mem_fence<F: FenceFlags>(&self, flags: F) {
        self.atomic_work_item_fence(flags, Release, WorkGroupScope)
    }
    /// `atomic_work_item_fence` with run-time arguments, checked.
    #[track_caller]
    pub fn atomic_work_item_fence_dyn(
        &self,
        flags: u32,
        order: MemOrder,
        scope: MemScope,
    ) -> Result<(), SyncError> {
        let flags = checker::argument(
            "atomic_work_item_fence",
            validate::fence(flags, scope),
            Site::caller(),
        )?;
        self.fence(flags, order, scope);
        Ok(())
    }

    #[track_caller]
    fn fence(&self, flags: MemFlags, order: MemOrder, scope: MemScope) {
        hooks::poll(std::panic::Location::caller());
        trace::note(|| SyncEvent::Fence {
            flags,
            order,
            scope,
        });
        fence_effect(flags, order, scope);
        checker::fence(flags, order, scope);
        self.image_fence(flags, order);
    }

    /// An image fence (or a barrier with the IMAGE flag) makes this
    /// work-item's own image writes visible to its reads.
    #[inline]
    fn image_fence(&self, flags: MemFlags, order: MemOrder) {
        if flags.contains(MemFlags::IMAGE) && order != MemOrder::Relaxed && self.tracks_images() {
            self.image_pending.borrow_mut().clear();
        }
    }

    /// Whether this work-item remembers its unfenced image writes: in strict
    /// image mode, and for the checker.
    #[inline]
    fn tracks_images(&self) -> bool {
        self.env.strict_images || checker::checking_here()
    }

    /// In strict image mode, the value this work-item still sees at a pixel
    /// it wrote without an image fence since.
    /// Reports the read to the checker if the write was unfenced.
    pub(crate) fn unfenced_image_write(
        &self,
        image: u64,
        index: usize,
        addr: usize,
        read: Site,
    ) -> Option<[u32; 4]> {
        if !self.tracks_images() {
            return None;
        }
        let (old, written) = self
            .image_pending
            .borrow()
            .iter()
            .find(|p| p.image == image && p.index == index)
            .map(|p| (p.old, p.site))?;
        if checker::checking_here() {
            checker::unfenced_image_read(addr, written, read);
        }
        self.env.strict_images.then_some(old)
    }

    /// Records an image write for strict image mode.
    pub(crate) fn note_image_write(
        &self,
        image: u64,
        index: usize,
        site: Site,
        old: impl FnOnce() -> [u32; 4],
    ) {
        if !self.tracks_images() {
            return;
        }
        let mut pending = self.image_pending.borrow_mut();
        if !pending.iter().any(|p| p.image == image && p.index == index) {
            pending.push(PendingImageWrite {
                image,
                index,
                old: old(),
                site,
            });
        }
    }
}

/// Local memory.
impl<'g> WorkItem<'g> {
    /// The group's slice for a local argument sized at launch.
    pub fn local<T: Element>(&self, arg: LocalArg<T>) -> &LocalSlice<T> {
        assert_eq!(
            arg.launch, self.env.launch_id,
            "LocalArg used with a launch other than the one that made it"
        );
        self.env.arena.arg(arg)
    }

    /// A local array declared in the kernel, like `__local float tile[N];`:
    /// every work-item of the group that reaches this call site gets the same
    /// slice. Its length must be the same for all of them.
    #[track_caller]
    pub fn local_array<T: Element>(&self, len: usize) -> &LocalSlice<T> {
        self.env.arena.declared(Location::caller(), len)
    }
}
