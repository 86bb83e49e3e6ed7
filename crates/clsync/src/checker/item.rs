//! One work-item's part of the checker: where it is in its group's
//! barriers and its own history, what it knows to happen before its next
//! access (the happens-before test of [`state`](super::state)'s module
//! documentation), and how its fences change that; and what kind of access
//! it makes.

use std::num::NonZeroU32;
use std::sync::Arc;

use super::clock::Clock;
use super::report::{AccessOp, Space};
use super::shadow::{join_opt, PackedOp, Rec, SpaceClocks, SyncEntry, Who};
use crate::geometry::ItemIds;
use crate::sync::{MemFlags, MemOrder, MemScope};

/// One work-item's synchronization state.
pub(crate) struct ItemState {
    /// Who it is (its full ids, needed only in reports, are computed then:
    /// [`LaunchCheck::ids_of`](super::state::LaunchCheck::ids_of); this state is reached at every access, and
    /// small keeps a group's work-items in cache).
    pub(super) who: Who,
    /// Advances at every release and barrier, so a clock entry `item ↦ s`
    /// covers exactly the accesses before them.
    pub(super) step: u32,
    /// Work-group barriers passed, per space.
    pub(super) wg: [u32; 3],
    /// Sub-group and work-group barriers passed, per space.
    pub(super) sg: [u32; 3],
    /// What is known to happen before the next access, per space: `None`
    /// for nothing (most work-items, most of the time), so that starting
    /// and ending a work-item touch no reference count.
    pub(super) vc: [Option<Arc<Clock>>; 3],
    /// The last release fence: its scope and the clocks it published.
    pub(super) fence_release: Option<(MemScope, SpaceClocks)>,
    /// Releases that relaxed loads read, for a later acquire fence.
    pub(super) pending: Vec<SyncEntry>,
}

impl ItemState {
    /// A work-item that knows nothing yet.
    pub(super) fn new(ids: ItemIds, group: u32) -> Self {
        ItemState {
            who: Who {
                item: ids.global_linear_id as u32,
                group,
                lid: ids.local_linear_id as u16,
                sub_group: ids.sub_group_id as u16,
            },
            step: 1,
            wg: [0; 3],
            sg: [0; 3],
            vc: [None, None, None],
            fence_release: None,
            pending: Vec::new(),
        }
    }

    /// Whether this work-item has learned nothing from another in `s`
    /// since it started (an empty clock).
    #[inline]
    pub(super) fn blind(&self, s: usize) -> bool {
        self.vc[s].as_ref().is_none_or(|vc| vc.is_empty())
    }

    /// Whether `p` happens before this work-item's next access in `s`.
    ///
    /// Inlined into every access's path: program order and the group's
    /// barriers decide most tests with a few compares; the clock, out of
    /// line, is asked only where a work-item learned something.
    #[inline(always)]
    pub(super) fn after(&self, p: &Rec, s: usize) -> bool {
        if p.who.item == self.who.item {
            return true;
        }
        if p.who.group == self.who.group
            && (self.wg[s] > p.wg || (p.who.sub_group == self.who.sub_group && self.sg[s] > p.sg))
        {
            return true;
        }
        // Most work-items have learned nothing from other work-items since
        // the last barrier: no clock, and no lookup.
        self.vc[s].is_some() && self.knows(p, s)
    }

    /// Whether this work-item's clock for `s` knows `p`.
    #[inline(never)]
    fn knows(&self, p: &Rec, s: usize) -> bool {
        self.vc[s]
            .as_ref()
            .is_some_and(|vc| !vc.is_empty() && vc.knows(&p.epoch()))
    }

    #[inline]
    pub(super) fn rec(&self, op: AccessOp, s: usize, site: NonZeroU32) -> Rec {
        Rec {
            who: self.who,
            step: self.step,
            wg: self.wg[s],
            sg: self.sg[s],
            op: PackedOp::pack(op),
            site,
        }
    }

    /// This work-item's clock for `s` including its own accesses so far and
    /// its group's before the last barrier (which `vc` leaves out: see
    /// [`GroupCheck::release_group`](super::state::GroupCheck::release_group)).
    pub(super) fn snapshot(&self, s: usize) -> Arc<Clock> {
        let mut c = self.vc[s].as_deref().cloned().unwrap_or_default();
        c.set_item(self.who.item, self.step);
        if self.wg[s] > 0 {
            c.set_group(self.who.group, self.wg[s]);
        }
        Arc::new(c)
    }

    /// A fence by this work-item (`000_96da91f170ff246f.txt`).
    pub(crate) fn fence(&mut self, flags: MemFlags, order: MemOrder, scope: MemScope) {
        let spaces: Vec<usize> = spaces_of(flags).collect();
        if order.is_acquire() {
            for e in &self.pending {
                if !e.applies_to(&self.who, scope) {
                    continue;
                }
                for &s in &spaces {
                    join_opt(&mut self.vc[s], &e.clocks[s]);
                }
            }
        }
        if order.is_release() {
            let mut clocks: SpaceClocks = Default::default();
            for &s in &spaces {
                clocks[s] = Some(self.snapshot(s));
            }
            self.fence_release = Some((scope, clocks));
            self.step += 1;
        }
    }
}

/// The indices of the spaces `flags` names (no allocation: a barrier
/// asks for them once per group).
pub(super) fn spaces_of(flags: MemFlags) -> impl Iterator<Item = usize> {
    [
        (MemFlags::GLOBAL, Space::Global),
        (MemFlags::LOCAL, Space::Local),
        (MemFlags::IMAGE, Space::Image),
    ]
    .into_iter()
    .filter(move |(f, _)| flags.contains(*f))
    .map(|(_, s)| s.index())
}

/// What an atomic operation does to its object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpKind {
    /// Reads it (`atomic_load`).
    Load,
    /// Writes it (`atomic_store`, `atomic_flag_clear`).
    Store,
    /// Reads and writes it in one step: it continues a release sequence.
    Rmw,
}

/// An atomic operation as the checker sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AtomicAccess {
    pub(crate) op: &'static str,
    pub(crate) kind: OpKind,
    pub(crate) order: MemOrder,
    /// A compare-exchange's failure order.
    pub(crate) failure: Option<MemOrder>,
    pub(crate) scope: MemScope,
}

impl AtomicAccess {
    /// A relaxed operation `op` of `kind` at `scope`.
    pub(crate) fn relaxed(op: &'static str, kind: OpKind, scope: MemScope) -> Self {
        AtomicAccess {
            op,
            kind,
            order: MemOrder::Relaxed,
            failure: None,
            scope,
        }
    }

    /// Whether it reads (everything but a store).
    pub(super) fn reads(&self) -> bool {
        self.kind != OpKind::Store
    }
}

/// What an access is: plain read or write, or atomic.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    Read,
    /// A plain write, with the value it writes where the engine knows it
    /// (for uniform writes: see `PackedOp::with_value`).
    Write(Option<u64>),
    Atomic(AtomicAccess),
}
