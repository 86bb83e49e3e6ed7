//! A group's barriers and fences. Between two loops over the work-items, a
//! barrier is the group's release and acquire fences (and, in a checked
//! launch, the checker's release of the group or of each sub-group);
//! inside `for_each` it is refused, with a panic that says so.

use std::panic::Location;

use super::{Group, IN_LOOP};
use crate::checker::GroupCheck;
use crate::scheduler::hooks;
use crate::sync::{
    fence_effect, validate, BarrierKind, BarrierScope, BarrierWait, FenceFlags, FenceOrder,
    FenceScopeFor, MemFlags, MemScope, Site, SyncError,
};

/// Barriers and fences (`003_2caebc1f01141481.txt`,
/// `004_bfca21a36d7bd2da.txt`, `002_6c32435e912a3710.txt`,
/// `000_96da91f170ff246f.txt`).
///
/// # Memory ordering
///
/// A barrier is the release fence of every work-item, then the acquire
/// fence of every work-item, on the memory its flags name at its scope:
/// the group runs on one thread, so within the group this is program order
/// (and a compiler fence); at device scope it is a `std` fence pairing with
/// other groups and host threads.
impl Group<'_> {
    /// `barrier(flags)`: OpenCL C 2.0's `work_group_barrier(flags)`.
    #[inline]
    #[track_caller]
    pub fn barrier<F: FenceFlags>(&self, flags: F) {
        self.work_group_barrier(flags)
    }
    /// `work_group_barrier(flags)`: work-group scope.
    #[inline]
    #[track_caller]
    pub fn work_group_barrier<F: FenceFlags>(&self, flags: F) {
        self.wait(
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
        self.wait(
            BarrierKind::WorkGroup,
            flags.mem_flags(),
            S::SCOPE,
            Location::caller(),
        )
    }
    /// `sub_group_barrier(flags)`. Running the whole group to this point
    /// also brings every sub-group to it.
    #[inline]
    #[track_caller]
    pub fn sub_group_barrier<F: FenceFlags>(&self, flags: F) {
        self.wait(
            BarrierKind::SubGroup,
            flags.mem_flags(),
            MemScope::SubGroup,
            Location::caller(),
        )
    }

    /// `sub_group_barrier(flags, scope)`.
    #[track_caller]
    pub fn sub_group_barrier_scope<F: FenceFlags, S: BarrierScope>(&self, flags: F, _scope: S) {
        self.wait(
            BarrierKind::SubGroup,
            flags.mem_flags(),
            S::SCOPE,
            Location::caller(),
        )
    }

    /// A work-group barrier whose flags and scope are known only at run
    /// time: what a compiled OpenCL C kernel's barrier does between two of
    /// its loops over the group (`clsync-opencl`'s work-item loops).
    /// Its flags are checked as
    /// [`WorkItem::barrier_dyn_at`](crate::WorkItem::barrier_dyn_at) checks
    /// them (an error names `site`).
    #[inline]
    #[track_caller]
    pub fn barrier_dyn(&self, flags: u32, scope: MemScope, site: Site) -> Result<(), SyncError> {
        let op = "work_group_barrier";
        let flags = crate::checker::argument(op, validate::barrier(op, flags, scope), site)?;
        self.wait(BarrierKind::WorkGroup, flags, scope, Location::caller());
        Ok(())
    }

    /// `n` work-group barriers that code running the group's loops itself
    /// passed without calling [`barrier_dyn`](Self::barrier_dyn): compiled
    /// code that checked every work-item's arrival, the barrier's flags and
    /// scope, and the cancellation gate
    /// ([`cancellation_gate`](crate::engine::cancellation_gate)) before each,
    /// at work-group scope (its fences are program order on this thread).
    /// What is left is the group's progress, which the watchdog reads. An
    /// unchecked launch's only: a checked barrier is the checker's too.
    ///
    /// ```
    /// use clsync::{Launch, NdRange, Runtime};
    /// let launch = Launch::new("k", NdRange::new([8]).local([4]));
    /// Runtime::new()
    ///     .launch_groups(&launch, |g| g.passed_barriers(3))
    ///     .unwrap();
    /// ```
    #[inline]
    pub fn passed_barriers(&self, n: usize) {
        debug_assert!(self.check.is_none(), "a checked barrier is the checker's");
        self.progress.steps(self.len * n);
    }

    /// A cancellation point outside a barrier (a loop's back-edge in code
    /// that runs inside [`for_each`](Self::for_each)): a launch the watchdog
    /// or a failed group cancelled unwinds here, as
    /// [`WorkItem::cancellation_point`](crate::WorkItem::cancellation_point)
    /// does.
    #[inline]
    #[track_caller]
    pub fn cancellation_point(&self) {
        hooks::poll(Location::caller());
    }

    /// `atomic_work_item_fence(flags, order, scope)` by the work-item
    /// `for_each` is running.
    #[track_caller]
    pub fn atomic_work_item_fence<F: FenceFlags, O: FenceOrder, S: FenceScopeFor<F>>(
        &self,
        flags: F,
        _order: O,
        _scope: S,
    ) {
        self.fence(flags.mem_flags(), O::ORDER, S::SCOPE, Location::caller());
    }

    /// `atomic_work_item_fence(flags, order, scope)` with flags, order and
    /// scope known only at run time, by the work-item named last (see
    /// [`name_item`](Self::name_item)) or the one `for_each` is running: what
    /// a compiled OpenCL C kernel's fence does in a work-item loop. Its
    /// flags and scope are checked as
    /// [`WorkItem::atomic_work_item_fence_dyn`](crate::WorkItem::atomic_work_item_fence_dyn)
    /// checks them (an error names `site`).
    #[track_caller]
    pub fn atomic_work_item_fence_dyn(
        &self,
        flags: u32,
        order: crate::sync::MemOrder,
        scope: MemScope,
        site: Site,
    ) -> Result<(), SyncError> {
        let op = "atomic_work_item_fence";
        let flags = crate::checker::argument(op, validate::fence(flags, scope), site)?;
        self.fence(flags, order, scope, Location::caller());
        Ok(())
    }

    /// A fence by the work-item `for_each` runs or the one named last: a
    /// poll, the fence, the checker's part.
    fn fence(
        &self,
        flags: MemFlags,
        order: crate::sync::MemOrder,
        scope: MemScope,
        at: &'static Location<'static>,
    ) {
        hooks::poll(at);
        fence_effect(flags, order, scope);
        crate::checker::fence(flags, order, scope);
    }

    /// A barrier of the group, inlined into the kernel: as a call, a barrier
    /// between two short loops (64 work-items, a few vector instructions
    /// each) cost as much as one of the loops. The checker's part is out of
    /// line.
    ///
    /// Its fast path tests one byte for anything more to do (a barrier
    /// inside `for_each`, a checked launch), then polls for cancellation,
    /// fences and counts the group's work-items: about a dozen
    /// instructions, where testing each case apart and counting through a
    /// `RefCell` took about seventeen (callgrind: 152.8 → 148.0 per barrier
    /// of 64 work-items, SSE2).
    #[inline]
    fn wait(&self, kind: BarrierKind, flags: MemFlags, scope: MemScope, at: &'static Location) {
        let extra = self.barrier_extra.get();
        if extra != 0 {
            return self.wait_extra(extra, kind, flags, scope, at);
        }
        hooks::poll(at);
        fence_effect(flags, crate::sync::MemOrder::AcqRel, scope);
        self.progress.steps(self.len);
    }

    /// A barrier with more to do than its fast path: refused inside
    /// `for_each`; in a checked launch, also the checker's release of the
    /// group or each of its sub-groups.
    #[cold]
    #[inline(never)]
    fn wait_extra(
        &self,
        extra: u8,
        kind: BarrierKind,
        flags: MemFlags,
        scope: MemScope,
        at: &'static Location,
    ) {
        assert!(
            extra & IN_LOOP == 0,
            "a barrier inside for_each: barriers belong between the loops"
        );
        hooks::poll(at);
        fence_effect(flags, crate::sync::MemOrder::AcqRel, scope);
        if let Some(check) = self.check {
            self.release_checked(check, kind, flags, scope, at);
        }
        self.progress.steps(self.len);
    }

    /// The checker's side of a barrier: releases the group or each of its
    /// sub-groups.
    fn release_checked(
        &self,
        check: &GroupCheck,
        kind: BarrierKind,
        flags: MemFlags,
        scope: MemScope,
        at: &'static Location,
    ) {
        let wait = BarrierWait {
            kind,
            site: Site::from_location(at),
            flags,
            scope,
        };
        match kind {
            BarrierKind::WorkGroup => check.release_group(wait),
            BarrierKind::SubGroup => {
                let sg = self.env.geometry.sub_group_size;
                for first in (0..self.len).step_by(sg) {
                    check.release_sub_group(first, (first + sg).min(self.len), wait);
                }
            }
            // Not a barrier of these loops (their kernels' collectives run
            // on the coroutine engine), and it orders no memory.
            BarrierKind::SubGroupActive { .. } => {}
        }
    }
}
