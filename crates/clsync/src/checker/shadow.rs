//! Shadow memory: what the checker remembers about each location — the last
//! write, the reads since, and the release clocks an acquire can pick up.

use std::sync::Arc;

use std::num::NonZeroU32;

use super::clock::{Clock, Epoch};
use super::intern;
use super::pool;
pub(crate) use super::reads::{Reader, Reads};
use super::report::AccessOp;
use crate::sync::{MemOrder, MemScope};

/// Who made an access: enough to test scope inclusion and to name the
/// work-item in a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Who {
    /// Global linear id.
    pub(crate) item: u32,
    /// Work-group linear id.
    pub(crate) group: u32,
    /// Local linear id (a group has at most 4096 work-items).
    pub(crate) lid: u16,
    /// Sub-group id within the group.
    pub(crate) sub_group: u16,
}

impl Who {
    /// Whether `other` is in this work-item's instance of `scope`.
    pub(crate) fn scope_includes(&self, scope: MemScope, other: &Who) -> bool {
        match scope {
            MemScope::WorkItem => self.item == other.item,
            MemScope::SubGroup => self.group == other.group && self.sub_group == other.sub_group,
            MemScope::WorkGroup => self.group == other.group,
            MemScope::Device | MemScope::AllSvmDevices => true,
        }
    }
}

/// An [`AccessOp`] in 32 bits: kind, whether it wrote, order, scope and
/// the interned operation name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PackedOp(u32);

const ORDERS: [MemOrder; 5] = [
    MemOrder::Relaxed,
    MemOrder::Acquire,
    MemOrder::Release,
    MemOrder::AcqRel,
    MemOrder::SeqCst,
];

impl PackedOp {
    #[inline]
    pub(crate) fn pack(op: AccessOp) -> Self {
        // The discriminants are the indices into ORDERS and MemScope::ALL (same
        // declaration order; `unpack` and the unit test below rely on it).
        let index = |o: MemOrder| o as u32;
        let sindex = |s: MemScope| s as u32;
        PackedOp(match op {
            AccessOp::Read => 0,
            AccessOp::Write => 1 | 1 << 2,
            AccessOp::Atomic {
                op,
                order,
                scope,
                writes,
            } => {
                2 | (writes as u32) << 2
                    | index(order) << 3
                    | sindex(scope) << 6
                    | u32::from(intern::name(op)) << 16
            }
            AccessOp::Call(op) => 3 | u32::from(intern::name(op)) << 16,
        })
    }

    pub(crate) fn unpack(self) -> AccessOp {
        let v = self.0;
        match v & 3 {
            0 => AccessOp::Read,
            1 => AccessOp::Write,
            2 => AccessOp::Atomic {
                op: intern::name_of((v >> 16) as u16),
                order: ORDERS[(v >> 3 & 7) as usize],
                scope: MemScope::ALL[(v >> 6 & 7) as usize],
                writes: v & 1 << 2 != 0,
            },
            _ => AccessOp::Call(intern::name_of((v >> 16) as u16)),
        }
    }

    #[inline]
    pub(crate) fn writes(self) -> bool {
        self.0 & 1 << 2 != 0
    }

    /// A plain write that knows the value it wrote: bit 9, and a 22-bit
    /// digest of the value in bits 10..32, which a plain write does not
    /// otherwise use (equal values have equal digests; distinct ones share
    /// one about once in four million).
    pub(crate) fn with_value(self, v: u64) -> Self {
        debug_assert_eq!(self.0 & 3, 1, "only plain writes carry a value");
        let digest = (v.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 42) as u32;
        PackedOp(self.0 | 1 << 9 | digest << 10)
    }

    /// Whether both are plain writes of one known value.
    #[inline]
    pub(crate) fn same_value(self, other: PackedOp) -> bool {
        let value = |p: PackedOp| (p.0 & 3 == 1 && p.0 & 1 << 9 != 0).then_some(p.0 >> 10);
        value(self).is_some() && value(self) == value(other)
    }

    #[inline]
    pub(crate) fn is_atomic(self) -> bool {
        self.0 & 3 == 2
    }

    /// The scope of an atomic access.
    pub(crate) fn scope(self) -> Option<MemScope> {
        self.is_atomic()
            .then(|| MemScope::ALL[(self.0 >> 6 & 7) as usize])
    }
}

/// One remembered access, in 32 bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rec {
    pub(crate) who: Who,
    pub(crate) step: u32,
    /// Work-group barriers of the access's space passed before it.
    pub(crate) wg: u32,
    /// Sub-group barriers (work-group ones included) of its space passed.
    pub(crate) sg: u32,
    pub(crate) op: PackedOp,
    pub(crate) site: NonZeroU32,
}

impl Rec {
    #[inline]
    pub(crate) fn epoch(&self) -> Epoch {
        Epoch {
            item: self.who.item,
            group: self.who.group,
            step: self.step,
            barriers: self.wg,
        }
    }

    /// Two atomic accesses are in inclusive scopes when each one's scope
    /// includes the other work-item (OpenCL C 2.0 §3.3.5).
    pub(crate) fn inclusive(&self, other: &Rec) -> bool {
        match (self.op.scope(), other.op.scope()) {
            (Some(a), Some(b)) => {
                self.who.scope_includes(a, &other.who) && other.who.scope_includes(b, &self.who)
            }
            _ => false,
        }
    }
}

/// Clocks per address space: global, local, image.
pub(crate) type SpaceClocks = [Option<Arc<Clock>>; 3];

/// What a release made available at an atomic location: the releasing
/// work-items' clocks, per space, for acquirers whose scope and the
/// releaser's scope include each other.
///
/// Releases at device scope or wider from several work-groups share one
/// entry; `group` is then `None` and the entry no longer synchronizes with a
/// work-group-scope acquire (a documented approximation).
#[derive(Clone, Debug)]
pub(crate) struct SyncEntry {
    pub(crate) scope: MemScope,
    pub(crate) group: Option<u32>,
    pub(crate) sub_group: Option<u16>,
    pub(crate) clocks: SpaceClocks,
}

impl SyncEntry {
    /// Whether an acquire by `who` at `scope` synchronizes with this entry.
    pub(crate) fn applies_to(&self, who: &Who, scope: MemScope) -> bool {
        let same_group = self.group == Some(who.group);
        let same_sub_group = same_group && self.sub_group == Some(who.sub_group);
        let covers = |s: MemScope| match s {
            MemScope::WorkItem => false,
            MemScope::SubGroup => same_sub_group,
            MemScope::WorkGroup => same_group,
            MemScope::Device | MemScope::AllSvmDevices => true,
        };
        covers(self.scope) && covers(scope)
    }

    fn same_key(&self, other: &SyncEntry) -> bool {
        self.scope == other.scope
            && match self.scope {
                MemScope::Device | MemScope::AllSvmDevices => true,
                MemScope::WorkGroup => self.group == other.group,
                _ => self.group == other.group && self.sub_group == other.sub_group,
            }
    }
}

/// Joins `new` into `entries`, one entry per scope instance.
pub(crate) fn merge_entries(entries: &mut Vec<SyncEntry>, new: &[SyncEntry]) {
    for n in new {
        match entries.iter_mut().find(|e| e.same_key(n)) {
            Some(e) => {
                if e.group != n.group {
                    e.group = None;
                }
                if e.sub_group != n.sub_group {
                    e.sub_group = None;
                }
                for (mine, theirs) in e.clocks.iter_mut().zip(&n.clocks) {
                    join_opt(mine, theirs);
                }
            }
            None => entries.push(n.clone()),
        }
    }
}

/// `mine ⊔= theirs`, sharing storage where one already covers the other.
pub(crate) fn join_opt(mine: &mut Option<Arc<Clock>>, theirs: &Option<Arc<Clock>>) {
    let Some(t) = theirs else { return };
    match mine {
        None => *mine = Some(t.clone()),
        Some(m) if Arc::ptr_eq(m, t) || m.covers(t) => {}
        Some(m) if t.covers(m) => *mine = Some(t.clone()),
        Some(m) => Arc::make_mut(m).join(t),
    }
}

/// What a location needs only once atomics touch it.
#[derive(Clone, Debug, Default)]
pub(crate) struct AtomicShadow {
    /// Atomic writes since the last plain write: they do not conflict with
    /// each other when their scopes are inclusive, but each one conflicts
    /// with a later plain access it is not ordered before.
    pub(crate) writes: Vec<Rec>,
    /// The narrowest scope among `writes`, and their work-group if they all
    /// come from one.
    pub(crate) summary: Option<(MemScope, Option<u32>)>,
    /// Length at which `writes` is next pruned.
    pub(crate) prune_at: usize,
    /// The plain write that `writes` followed, until the next plain write:
    /// an access by another work-item that is not ordered after it races
    /// with it even though atomics wrote since (`*p = 0; atomic_dec(p);`
    /// by one work-item, `atomic_dec(p)` by others).
    pub(crate) plain: Option<Rec>,
    /// Release clocks for acquirers.
    pub(crate) sync: Vec<SyncEntry>,
}

/// The checker's memory of one location, as stored: 40 bytes. Most
/// locations are read once, or written and not read since (a buffer of
/// input, a buffer of output); only the others hold a boxed [`Full`].
#[derive(Clone, Debug, Default)]
pub(crate) enum Shadow {
    #[default]
    Untouched,
    /// One read, no write.
    Read(Rec),
    /// A plain write, no read since, no atomic history.
    Written(Rec),
    /// Anything else.
    Full(Box<Full>),
}

impl Shadow {
    /// Runs `f` on the full form of this shadow, and stores the result back
    /// in the smallest form that holds it.
    #[inline]
    pub(crate) fn with_full<R>(&mut self, f: impl FnOnce(&mut Full) -> R) -> R {
        if let Shadow::Full(full) = self {
            return f(full);
        }
        let mut full = match std::mem::take(self) {
            Shadow::Untouched => Full::default(),
            Shadow::Read(r) => Full {
                reads: Reads::One(r),
                ..Full::default()
            },
            Shadow::Written(w) => Full {
                write: Some(w),
                ..Full::default()
            },
            Shadow::Full(_) => unreachable!("handled above"),
        };
        let r = f(&mut full);
        *self = match (&full.write, &full.reads, &full.atomic) {
            (None, Reads::None, None) => Shadow::Untouched,
            (None, Reads::One(r), None) => Shadow::Read(*r),
            (Some(w), Reads::None, None) if !w.op.is_atomic() => Shadow::Written(*w),
            _ => Shadow::Full(pool::boxed(full)),
        };
        r
    }
}

impl Shadow {
    /// Whether a plain access that races with nothing (see
    /// `LocalView::get_race_free`) has nothing to tell the checker here:
    /// the location holds a plain write, and no atomic history. Then a
    /// read of it reads a written value, and everything this shadow
    /// remembers happens before any access that can race with what it
    /// would remember of this one (see `GroupCheck::race_free_cells`).
    #[inline(always)]
    pub(crate) fn settled(&self) -> bool {
        match self {
            Shadow::Written(_) => true,
            Shadow::Full(full) => {
                full.atomic.is_none() && full.write.is_some_and(|w| !w.op.is_atomic())
            }
            _ => false,
        }
    }

    /// Whether the location holds a write, plain or atomic: a read of it
    /// reads a written value (see `LocalView::at_quiet`).
    #[inline(always)]
    pub(crate) fn written(&self) -> bool {
        match self {
            Shadow::Written(_) => true,
            Shadow::Full(full) => full.write.is_some(),
            _ => false,
        }
    }

    /// Empties the shadow, keeping its box (if any) for the next location
    /// that needs one on this thread.
    pub(crate) fn recycle(&mut self) {
        if let Shadow::Full(full) = std::mem::take(self) {
            pool::give_back(full);
        }
    }
}

/// Everything the checker remembers about a location.
#[derive(Clone, Debug, Default)]
pub(crate) struct Full {
    /// The last write (plain or atomic).
    pub(crate) write: Option<Rec>,
    /// Reads since that write.
    pub(crate) reads: Reads,
    /// Atomic history, for locations atomics have touched.
    pub(crate) atomic: Option<Box<AtomicShadow>>,
}

impl Full {
    /// The atomic writes since the last plain write.
    pub(crate) fn atomic_writes(&self) -> &[Rec] {
        self.atomic.as_ref().map_or(&[], |a| &a.writes)
    }

    /// The release clocks an acquire can read.
    pub(crate) fn sync(&self) -> &[SyncEntry] {
        self.atomic.as_ref().map_or(&[], |a| &a.sync)
    }

    pub(crate) fn atomic_mut(&mut self) -> &mut AtomicShadow {
        self.atomic.get_or_insert_with(pool::atomic)
    }

    /// Whether an atomic access at `scope` by `who` is in inclusive scopes
    /// with every one of the atomic writes, by their summary alone.
    pub(crate) fn atomics_inclusive_with(&self, who: &Who, scope: MemScope) -> bool {
        let wide = |s: MemScope| s >= MemScope::Device;
        match self.atomic.as_ref().and_then(|a| a.summary) {
            None => true,
            Some((min, group)) => {
                (wide(min) && wide(scope))
                    || (min >= MemScope::WorkGroup
                        && scope >= MemScope::WorkGroup
                        && group == Some(who.group))
            }
        }
    }

    /// Remembers an atomic write. `ordered` says whether an earlier one
    /// happens before the writer now; those are dropped when the list is
    /// pruned, as is any earlier write by the same work-item.
    pub(crate) fn push_atomic_write(&mut self, rec: Rec, ordered: impl Fn(&Rec) -> bool) {
        let Some(scope) = rec.op.scope() else {
            return;
        };
        let a = self.atomic_mut();
        a.summary = Some(match a.summary {
            None => (scope, Some(rec.who.group)),
            Some((min, group)) => (min.min(scope), group.filter(|&g| g == rec.who.group)),
        });
        if a.writes.len() >= a.prune_at {
            let me = rec.who.item;
            a.writes.retain(|w| w.who.item != me && !ordered(w));
            a.prune_at = 2 * a.writes.len() + 16;
        }
        a.writes.push(rec);
    }

    /// Forgets the atomic writes (after a plain write).
    pub(crate) fn clear_atomic_writes(&mut self) {
        if let Some(a) = self.atomic.as_mut() {
            a.writes.clear();
            a.summary = None;
            a.prune_at = 0;
            a.plain = None;
        }
    }

    /// The plain write the atomic writes since followed, if any.
    pub(crate) fn plain_before_atomics(&self) -> Option<&Rec> {
        self.atomic.as_ref().and_then(|a| a.plain.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every atomic access survives packing: the tables match the enums.
    #[test]
    fn packed_ops_unpack_to_themselves() {
        for order in ORDERS {
            for scope in MemScope::ALL {
                for writes in [false, true] {
                    let op = AccessOp::Atomic {
                        op: "atomic_fetch_add",
                        order,
                        scope,
                        writes,
                    };
                    assert_eq!(PackedOp::pack(op).unpack(), op);
                }
            }
        }
        for op in [
            AccessOp::Read,
            AccessOp::Write,
            AccessOp::Call("atomic_work_item_fence"),
        ] {
            assert_eq!(PackedOp::pack(op).unpack(), op);
        }
    }
}
