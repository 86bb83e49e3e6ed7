//! The checker's state for a launch, a work-group and a work-item, and the
//! happens-before test every access goes through.
//!
//! # Happens-before
//!
//! An earlier access `p` happens before the current work-item's next access
//! to a location in space `s` when one of these holds:
//!
//! 1. the same work-item made it (program order);
//! 2. the same work-group made it, and a work-group barrier whose flags
//!    cover `s` has been passed since: the group's barrier count for `s` is
//!    higher now than it was at `p` (`003_2caebc1f01141481.txt`: the barrier
//!    "queues a memory fence" for the spaces its flags name, and no other);
//! 3. the same sub-group made it, and a sub-group (or work-group) barrier
//!    covering `s` has been passed since (`002_6c32435e912a3710.txt`);
//! 4. the work-item's vector clock for `s` knows `p`: some chain of
//!    release/acquire atomics, fences and barriers leads from `p` to here.
//!
//! Clocks grow at synchronization: an acquire that reads a release (of
//! inclusive scope) joins the release's clock; an acquire fence joins what
//! earlier relaxed loads read; a barrier joins the clocks of every
//! work-item it releases, and a sub-group barrier adds the sub-group's
//! work-items up to it. A work-group barrier's own entry (the group up to
//! the barrier) is left out of the clocks, since rule 2 covers the group
//! itself; a release adds it to the clock it publishes. This is C11's
//! synchronizes-with, per address space,
//! with OpenCL's scope inclusion (OpenCL C 2.0 §3.3) and the fence forms of
//! `000_96da91f170ff246f.txt`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, MutexGuard};

use super::intern;
use super::item::{spaces_of, AtomicAccess, ItemState, Kind, OpKind};
use super::objects;
use super::pool;
use super::report::{Access, AccessOp, Report, ReportKind, ReportSet, Space};
use super::shadow::{
    join_opt, merge_entries, Full, Reader, Reads, Rec, Shadow, SpaceClocks, SyncEntry, Who,
};
use super::storage::{to_front, Covers, DenseShadow, Found, LocalDense, ShadowMap};
use crate::geometry::{Geometry, ItemIds};
use crate::sync::{MemFlags, MemOrder, MemScope, Site};

const SHARDS: usize = 64;

/// One checked launch: the shadow of global and image memory, and the
/// reports so far. Shared by the worker threads.
pub(crate) struct LaunchCheck {
    pub(crate) kernel: String,
    pub(crate) geometry: Geometry,
    /// Dense shadows of the registered objects accessed so far, by base.
    dense: Mutex<HashMap<usize, Arc<DenseShadow>>>,
    /// The shadow of addresses outside any registered object.
    shards: Box<[Mutex<ShadowMap>]>,
    reports: Mutex<ReportSet>,
}

impl LaunchCheck {
    pub(crate) fn new(kernel: &str, geometry: Geometry) -> Self {
        LaunchCheck {
            kernel: kernel.to_string(),
            geometry,
            dense: Mutex::default(),
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            reports: Mutex::default(),
        }
    }

    /// The dense shadow of the registered object holding `addr`, made on
    /// first use (by an access of `first` bytes: see `Grain`).
    fn dense_for(&self, addr: usize, first: usize) -> Option<Arc<DenseShadow>> {
        let (base, len, stride) = objects::extent(addr)?;
        let mut dense = self.dense.lock().unwrap_or_else(|e| e.into_inner());
        let d = dense
            .entry(base)
            .or_insert_with(|| Arc::new(DenseShadow::new(base, len, stride, first)));
        Some(d.clone())
    }

    fn shard(&self, addr: usize) -> MutexGuard<'_, ShadowMap> {
        // Fibonacci hashing of the element address spreads neighbouring
        // elements over shards.
        let h = (addr as u64 >> 2).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58;
        self.shards[h as usize % SHARDS]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn add(&self, report: Report) {
        self.reports
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .add(report);
    }

    /// The reports, deduplicated and in a fixed order.
    pub(crate) fn take_reports(&self) -> Vec<Report> {
        std::mem::take(&mut *self.reports.lock().unwrap_or_else(|e| e.into_inner())).into_sorted()
    }

    /// A remembered access, with its work-item's ids.
    fn access_of(&self, r: &Rec) -> Access {
        Access {
            item: self.ids_of(&r.who),
            op: r.op.unpack(),
            site: intern::site_of(r.site),
        }
    }

    /// The current access of work-item `who`.
    fn access_by(&self, who: &Who, op: AccessOp, site: Site) -> Access {
        Access {
            item: self.ids_of(who),
            op,
            site,
        }
    }

    pub(crate) fn ids_of(&self, who: &Who) -> ItemIds {
        let g = &self.geometry;
        let group = g.group_id(who.group as usize);
        ItemIds::new(g, group, g.local_size_of(group), who.lid as usize)
    }

    /// A report about the current work-item's access.
    pub(crate) fn report(
        &self,
        kind: ReportKind,
        addr: Option<usize>,
        first: Option<Access>,
        second: Option<Access>,
        site: Site,
        detail: String,
    ) {
        self.add(Report {
            kind,
            kernel: self.kernel.clone(),
            dims: self.geometry.dims,
            memory: addr.and_then(objects::describe),
            first,
            second,
            site,
            detail,
            count: 1,
            group: None,
        });
    }
}

/// One work-group's checker state. Lives on the worker thread running the
/// group.
pub(crate) struct GroupCheck {
    pub(crate) launch: Arc<LaunchCheck>,
    pub(super) sub_group_size: usize,
    pub(crate) items: Box<[RefCell<ItemState>]>,
    /// Local memory's shadow: dense per local array, most recently used
    /// first, and a map for anything unregistered.
    pub(super) local_dense: RefCell<Vec<LocalDense>>,
    local: RefCell<ShadowMap>,
    /// The dense shadows this group has used, so that most accesses find
    /// theirs without a lock.
    dense: RefCell<Vec<Arc<DenseShadow>>>,
    /// What the current access reported so far, by kind and the other
    /// access's site, where it spans several cells (see `plain`).
    seen: RefCell<Vec<(ReportKind, Option<NonZeroU32>)>>,
    /// The spaces (a bit per space index) in which some work-item's clock
    /// may have changed since the last work-group barrier of that space
    /// (an acquire, an acquire fence, a sub-group barrier): until one
    /// does, they all hold the clock that barrier gave them, and the next
    /// one need not compare them (see `release_group`).
    pub(super) learned: std::cell::Cell<u8>,
}

impl GroupCheck {
    pub(crate) fn new(launch: Arc<LaunchCheck>, group: usize, ids: &[ItemIds]) -> Self {
        let sub_group_size = launch.geometry.sub_group_size;
        GroupCheck {
            launch,
            sub_group_size,
            items: ids
                .iter()
                .map(|&i| RefCell::new(ItemState::new(i, group as u32)))
                .collect(),
            local_dense: RefCell::default(),
            local: RefCell::default(),
            dense: RefCell::default(),
            seen: RefCell::default(),
            learned: std::cell::Cell::new(0),
        }
    }

    /// An atomic access by work-item `i` to the `len` bytes from `addr`;
    /// `f` performs it (under the shadow's lock of its first cell, so the
    /// value and the clocks it carries stay together) and says whether it
    /// wrote. Each cell the bytes span (one, unless a granule is split)
    /// remembers it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn access<R>(
        &self,
        i: usize,
        addr: usize,
        len: usize,
        space: Space,
        kind: Kind,
        site: NonZeroU32,
        f: impl FnOnce() -> (R, bool),
    ) -> R {
        let mut item = self.items[i].borrow_mut();
        let mut f = Some(f);
        let mut value = None;
        let mut wrote = false;
        let (mut a, end) = (addr, addr + len.max(1));
        while a < end {
            a = self.with_part(a, end, space, |b, shadow| {
                let Some(f) = f.take() else {
                    // The operation is done: the other cells record it.
                    shadow.with_full(|full| {
                        self.on_shadow(&mut item, full, b, space, kind, site, true, || ((), wrote))
                    });
                    return;
                };
                let s = space.index();
                if let (Shadow::Full(full), Kind::Atomic(at)) = (&mut *shadow, kind) {
                    if atomic_fast(&item, full, s, at) {
                        let (v, w) = f();
                        wrote = w;
                        if w {
                            let op = AccessOp::Atomic {
                                op: at.op,
                                order: at.order,
                                scope: at.scope,
                                writes: true,
                            };
                            let rec = item.rec(op, s, site);
                            full.push_atomic_write(rec, |p| item.after(p, s));
                            full.write = Some(rec);
                            value = Some(v);
                            return;
                        }
                        // It did not write after all: the general path,
                        // with what it did.
                        value = Some(shadow.with_full(|full| {
                            self.on_shadow(&mut item, full, b, space, kind, site, true, || (v, w))
                        }));
                        return;
                    }
                }
                value = Some(shadow.with_full(|full| {
                    self.on_shadow(&mut item, full, b, space, kind, site, true, || {
                        let (v, w) = f();
                        wrote = w;
                        (v, w)
                    })
                }));
            });
        }
        // What it reported, across its cells, was one access's.
        self.seen.borrow_mut().clear();
        value.expect("the first cell performed the operation")
    }

    /// Plain accesses by work-item `i` to the `len` bytes from `addr` (one
    /// scalar, or each byte of one): the work-item, its record and the
    /// object's shadow are found once for all of them. Inlined into the
    /// checker's entry points, so that an access saves and restores its
    /// registers once.
    #[inline(always)]
    pub(crate) fn plain(
        &self,
        i: usize,
        addr: usize,
        len: usize,
        space: Space,
        kind: Kind,
        site: NonZeroU32,
    ) {
        let write = matches!(kind, Kind::Write(_));
        let mut item = self.items[i].borrow_mut();
        let op = if write {
            AccessOp::Write
        } else {
            AccessOp::Read
        };
        let mut rec = item.rec(op, space.index(), site);
        if let Kind::Write(Some(v)) = kind {
            rec.op = rec.op.with_value(v);
        }
        let end = addr + len;
        // The common case, lean: the access lies in one cell of one of the
        // two shadows at the front of the group's list (a kernel that reads
        // one local array and writes another, or multiplies two tiles,
        // alternates between them), in a compact state or a record
        // `full_fast` decides. Straight-line code, no closure: its captures
        // cost more than the decision (a frame of 200 bytes per access).
        if space == Space::Local {
            let mut dense = self.local_dense.borrow_mut();
            if let Some(d) = dense.iter_mut().take(2).find(|d| d.covers(addr)) {
                if let (Found::Cell(cell), next) = d.cell(addr, end, self.spill(space)) {
                    if next == end {
                        if !plain_fast(&item, cell, space, rec) {
                            self.plain_general(&mut item, cell, addr, space, kind, site, false);
                        }
                        return;
                    }
                }
            }
        } else {
            let dense = self.dense.borrow();
            if let Some(d) = dense.iter().take(2).find(|d| d.covers(addr)) {
                if let (Found::Cell(mut cell), next) = d.cell(addr, end, self.spill(space)) {
                    if next == end {
                        if !plain_fast(&item, &mut cell, space, rec) {
                            self.plain_general(
                                &mut item, &mut cell, addr, space, kind, site, false,
                            );
                        }
                        return;
                    }
                }
            }
        }
        self.plain_parts(&mut item, addr, end, space, kind, site, rec);
    }

    /// [`plain`](Self::plain) cell by cell: an access over several cells
    /// (the bytes of a split granule, a vector over granules), or to
    /// another object than the last one. Several cells report one access
    /// once (see `on_shadow`'s `once`).
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn plain_parts(
        &self,
        item: &mut ItemState,
        addr: usize,
        end: usize,
        space: Space,
        kind: Kind,
        site: NonZeroU32,
        rec: Rec,
    ) {
        let mut slow = false;
        let mut a = addr;
        while a < end {
            a = self.with_part(a, end, space, |at, shadow| {
                if !plain_fast(item, shadow, space, rec) {
                    slow = true;
                    self.plain_general(item, shadow, at, space, kind, site, true);
                }
            });
        }
        if slow {
            self.seen.borrow_mut().clear();
        }
    }

    /// A plain access `plain_fast` did not decide: the general path, out of
    /// line.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn plain_general(
        &self,
        item: &mut ItemState,
        shadow: &mut Shadow,
        at: usize,
        space: Space,
        kind: Kind,
        site: NonZeroU32,
        once: bool,
    ) {
        let write = matches!(kind, Kind::Write(_));
        shadow.with_full(|full| {
            self.on_shadow(item, full, at, space, kind, site, once, || ((), write))
        });
    }

    /// Where a split granule of `space` puts its bytes' shadows: the
    /// group's map (local memory) or the launch's (see `storage::Grain`).
    pub(super) fn spill(&self, space: Space) -> impl Fn(usize, Shadow) + '_ {
        move |b, s| {
            if space == Space::Local {
                self.local.borrow_mut().insert(b, s);
            } else {
                self.launch.shard(b).insert(b, s);
            }
        }
    }

    /// Runs `f` on the shadow of the part of an access from `a` to `end`
    /// that lies in one cell (held for the call), or on each byte's where
    /// that cell is a split granule, with the address of the byte; returns
    /// the first byte after the part. A registered object's dense shadow
    /// (made on first use) is kept at the front of the group's list: most
    /// accesses go where the last one went. Other addresses are in a map,
    /// a byte at a time.
    #[inline]
    fn with_part(
        &self,
        a: usize,
        end: usize,
        space: Space,
        mut f: impl FnMut(usize, &mut Shadow),
    ) -> usize {
        if space == Space::Local {
            let mut dense = self.local_dense.borrow_mut();
            let made = || {
                objects::extent(a)
                    .map(|(base, len, stride)| LocalDense::new(base, len, stride, end - a))
            };
            if to_front(&mut dense, a, made) {
                let next = match dense[0].cell(a, end, self.spill(space)) {
                    (Found::Cell(cell), next) => {
                        f(a, cell);
                        return next;
                    }
                    (Found::Bytes, next) => next,
                };
                drop(dense);
                let mut map = self.local.borrow_mut();
                (a..next).for_each(|b| f(b, map.entry(b).or_default()));
                return next;
            }
            drop(dense);
            f(a, self.local.borrow_mut().entry(a).or_default());
        } else {
            let mut dense = self.dense.borrow_mut();
            if to_front(&mut dense, a, || self.launch.dense_for(a, end - a)) {
                let next = match dense[0].cell(a, end, self.spill(space)) {
                    (Found::Cell(mut cell), next) => {
                        f(a, &mut cell);
                        return next;
                    }
                    (Found::Bytes, next) => next,
                };
                drop(dense);
                (a..next).for_each(|b| f(b, self.launch.shard(b).entry(b).or_default()));
                return next;
            }
            drop(dense);
            f(a, self.launch.shard(a).entry(a).or_default());
        }
        a + 1
    }

    #[allow(clippy::too_many_arguments)]
    fn on_shadow<R>(
        &self,
        item: &mut ItemState,
        shadow: &mut Full,
        addr: usize,
        space: Space,
        kind: Kind,
        site: NonZeroU32,
        once: bool,
        f: impl FnOnce() -> (R, bool),
    ) -> R {
        // The site's text, for reports only (it takes the table's lock).
        let at = || intern::site_of(site);
        // Whether this access has not yet made the report of `kind` with
        // an access at `other`: an access of several cells (`once`) is
        // one access, reported once per kind and pair of sites, however
        // many of its bytes find the conflict.
        let first_time = |kind: ReportKind, other: Option<NonZeroU32>| {
            if !once {
                return true;
            }
            let mut seen = self.seen.borrow_mut();
            let new = !seen.contains(&(kind, other));
            if new {
                seen.push((kind, other));
            }
            new
        };
        let s = space.index();
        let (value, wrote) = f();
        let op = match kind {
            Kind::Read => AccessOp::Read,
            Kind::Write(_) => AccessOp::Write,
            Kind::Atomic(a) => AccessOp::Atomic {
                op: a.op,
                order: if wrote || !a.reads() {
                    a.order
                } else {
                    a.failure.unwrap_or(a.order)
                },
                scope: a.scope,
                writes: wrote,
            },
        };
        let mut rec = item.rec(op, s, site);
        if let Kind::Write(Some(v)) = kind {
            rec.op = rec.op.with_value(v);
        }
        let launch = &self.launch;
        let conflict = |p: &Rec| -> Option<ReportKind> {
            if !(p.op.writes() || op.writes()) || item.after(p, s) {
                return None;
            }
            match (p.op.is_atomic(), op.is_atomic()) {
                (true, true) if p.inclusive(&rec) => None,
                (true, true) => Some(ReportKind::ScopeTooNarrow),
                // Two plain writes of the same byte value: a uniform write,
                // which Oclgrind does not report (nor does this checker
                // when the engine gave both values).
                (false, false) if p.op.same_value(rec.op) => None,
                (false, false) => Some(ReportKind::DataRace),
                _ => Some(ReportKind::MixedAccess),
            }
        };
        let mut found: Vec<(ReportKind, Rec)> = Vec::new();
        match &shadow.write {
            Some(w) => {
                if let Some(k) = conflict(w) {
                    found.push((k, *w));
                }
            }
            None if space == Space::Local
                && !op.writes()
                && first_time(ReportKind::UninitializedLocal, None) =>
            {
                launch.report(
                    ReportKind::UninitializedLocal,
                    Some(addr),
                    None,
                    Some(launch.access_by(&item.who, op, at())),
                    at(),
                    String::new(),
                );
            }
            None => {}
        }
        if op.writes() {
            for r in shadow.reads.as_slice() {
                if let Some(k) = conflict(r) {
                    found.push((k, *r));
                }
            }
        }
        let scan_atomics = match op {
            AccessOp::Atomic { scope, .. } => !shadow.atomics_inclusive_with(&item.who, scope),
            _ => true,
        };
        if scan_atomics {
            for w in shadow.atomic_writes() {
                if let Some(k) = conflict(w) {
                    found.push((k, *w));
                }
            }
        }
        // One report per kind and pair of sites is enough for this access.
        found.sort_by_key(|(k, p)| (*k, p.site));
        found.dedup_by_key(|(k, p)| (*k, p.site));
        for (k, p) in found {
            if !first_time(k, Some(p.site)) {
                continue;
            }
            launch.report(
                k,
                Some(addr),
                Some(launch.access_of(&p)),
                Some(launch.access_by(&item.who, op, at())),
                at(),
                String::new(),
            );
        }
        if let Kind::Atomic(a) = kind {
            self.synchronize(item, shadow, s, a, op, wrote);
            // The plain write that atomics followed: ordered before this
            // atomic when the write it read released it (an acquire of a
            // release by the writer), so judged after the acquire.
            if let Some(p) = shadow.plain_before_atomics().copied() {
                let ordered = item.after(&p, s);
                if (p.op.writes() || op.writes()) && !ordered {
                    launch.report(
                        ReportKind::MixedAccess,
                        Some(addr),
                        Some(launch.access_of(&p)),
                        Some(launch.access_by(&item.who, op, at())),
                        at(),
                        String::new(),
                    );
                }
            }
        }
        if op.writes() {
            if op.is_atomic() {
                // The first atomic write after a plain one keeps it: later
                // accesses of other work-items still race with it.
                if let Some(w) = shadow.write.filter(|w| !w.op.is_atomic()) {
                    shadow.atomic_mut().plain = Some(w);
                }
                shadow.push_atomic_write(rec, |w| item.after(w, s));
            } else {
                shadow.clear_atomic_writes();
            }
            shadow.write = Some(rec);
            shadow.reads.clear();
        } else {
            add_read(item, shadow, s, rec);
        }
        value
    }

    /// Notes that some work-item's clock for space `s` may have changed
    /// since the last work-group barrier (see `learned`).
    pub(super) fn learn(&self, s: usize) {
        self.learned.set(self.learned.get() | 1 << s);
    }

    /// A fence by work-item `i` (`000_96da91f170ff246f.txt`): an acquire
    /// may join clocks into the work-item's, in the spaces `flags` names.
    pub(crate) fn fence(&self, i: usize, flags: MemFlags, order: MemOrder, scope: MemScope) {
        if order.is_acquire() {
            spaces_of(flags).for_each(|s| self.learn(s));
        }
        self.items[i].borrow_mut().fence(flags, order, scope)
    }

    /// The ids of work-item `i` of this group, for a report.
    pub(crate) fn ids(&self, i: usize) -> ItemIds {
        self.launch.ids_of(&self.items[i].borrow().who)
    }

    /// The acquire and release effects of an atomic operation.
    fn synchronize(
        &self,
        item: &mut ItemState,
        shadow: &mut Full,
        s: usize,
        a: AtomicAccess,
        op: AccessOp,
        wrote: bool,
    ) {
        let AccessOp::Atomic { order, scope, .. } = op else {
            return;
        };
        if a.reads() && !shadow.sync().is_empty() {
            let who = item.who;
            if order.is_acquire() {
                self.learn(s);
                // In place: a spinning acquire load reads the same
                // entries again and again, which its clock covers after
                // the first (no copy, no reference count touched).
                for e in shadow.sync().iter().filter(|e| e.applies_to(&who, scope)) {
                    join_opt(&mut item.vc[s], &e.clocks[s]);
                }
            }
            // A relaxed read (or the other spaces of an acquire) can still
            // synchronize through a later acquire fence.
            merge_entries(&mut item.pending, shadow.sync());
        }
        if !wrote {
            return;
        }
        let mut published = Vec::new();
        let entry = |scope: MemScope, clocks: SpaceClocks| SyncEntry {
            scope,
            group: Some(item.who.group),
            sub_group: Some(item.who.sub_group),
            clocks,
        };
        if let Some((fence_scope, clocks)) = &item.fence_release {
            published.push(entry(scope.min(*fence_scope), clocks.clone()));
        }
        if order.is_release() {
            let mut clocks: SpaceClocks = Default::default();
            clocks[s] = Some(item.snapshot(s));
            published.push(entry(scope, clocks));
            item.step += 1;
        }
        if a.kind == OpKind::Rmw {
            // A read-modify-write continues the release sequence.
            if !published.is_empty() {
                merge_entries(&mut shadow.atomic_mut().sync, &published);
            }
        } else if !published.is_empty() {
            shadow.atomic_mut().sync = published;
        } else if let Some(a) = shadow.atomic.as_mut() {
            // A store that publishes nothing ends every release sequence.
            a.sync.clear();
        }
    }
}

/// A plain access (`rec`, by `item`) to a location in one of the compact
/// states that leaves it in one of them and reports nothing, decided
/// without unpacking the shadow: what [`GroupCheck::on_shadow`] would do
/// there, for the cases most accesses are (the first access, a work-item's
/// own next access, an access ordered after the previous one). Whether it
/// was one of them; if not, the shadow is untouched and the caller takes
/// the general path.
#[inline(always)]
fn plain_fast(item: &ItemState, shadow: &mut Shadow, space: Space, rec: Rec) -> bool {
    let s = space.index();
    let writes = rec.op.writes();
    let next = match shadow {
        Shadow::Full(full) => return full_fast(item, full, space, rec),
        // A read of local memory nothing wrote is a report.
        Shadow::Untouched if !writes && space == Space::Local => return false,
        Shadow::Untouched if writes => Shadow::Written(rec),
        Shadow::Untouched => Shadow::Read(rec),
        // Local memory only read so far: each read is reported.
        Shadow::Read(_) if !writes && space == Space::Local => return false,
        // Ordered after the read (the same work-item's reads are): the
        // read is redundant, and a write does not conflict with it.
        Shadow::Read(r) if item.after(r, s) => {
            if writes {
                Shadow::Written(rec)
            } else {
                Shadow::Read(rec)
            }
        }
        // A write ordered after the last write (no reads since, no
        // atomics): no conflict, and it is the last write now.
        Shadow::Written(w) if writes && item.after(w, s) => Shadow::Written(rec),
        // A read ordered after the write: both are kept (a later write
        // races with the read unless ordered after it too), in a box.
        Shadow::Written(w) if item.after(w, s) => Shadow::Full(pool::boxed(Full {
            write: Some(*w),
            reads: Reads::One(rec),
            atomic: None,
        })),
        // Another work-item's read of global memory that nothing wrote
        // (reads do not conflict): both reads are kept (a scan's element
        // that the work-items of the next three read too).
        Shadow::Read(r) if !writes => {
            let mut full = Full {
                write: None,
                reads: Reads::One(*r),
                atomic: None,
            };
            add_read(item, &mut full, s, rec);
            Shadow::Full(pool::boxed(full))
        }
        _ => return false,
    };
    *shadow = next;
    true
}

/// Whether an atomic access `a` by `item` to a location whose record is
/// `full` only adds itself to the atomic writes, if it writes (a
/// read-modify-write or a store; a compare-exchange that fails goes the
/// general way with what it did): it releases nothing (no release order,
/// no release fence before it); the location has only atomic writes since
/// its last plain write, which happens before this access if there is one,
/// no reads since the last of them and no release to acquire; and the
/// atomic writes' scopes include this one's and it includes theirs (their
/// summary says so). Then [`GroupCheck::on_shadow`] would report nothing,
/// synchronize nothing, and remember it as the last write and one more
/// atomic write (a work-group's histogram bins, incremented by its
/// work-items with relaxed atomics).
#[inline]
fn atomic_fast(item: &ItemState, full: &Full, s: usize, a: AtomicAccess) -> bool {
    a.kind != OpKind::Load
        && !a.order.is_release()
        && item.fence_release.is_none()
        && matches!(full.reads, Reads::None)
        && full.write.is_some_and(|w| w.op.is_atomic())
        && full
            .atomic
            .as_ref()
            .is_some_and(|at| at.sync.is_empty() && at.plain.is_none_or(|p| item.after(&p, s)))
        && full.atomics_inclusive_with(&item.who, a.scope)
}

/// [`plain_fast`] on a boxed record with no atomic history, and a plain
/// write that this access is ordered after, or no write (in global
/// memory, or a write to local memory: a read of local memory that
/// nothing wrote is a report). A read conflicts with neither the write
/// nor the reads (reads do not conflict), and is added to them as
/// [`GroupCheck::on_shadow`] adds it (a local element that several
/// work-items of an interval read: a scan's four, a tile's sixteen); a
/// write ordered after every read too replaces them all (a local element
/// its owner writes and reads interval after interval, or that others read
/// in the interval before). What `on_shadow` would do, without its
/// reports' machinery.
#[inline(always)]
fn full_fast(item: &ItemState, full: &mut Full, space: Space, rec: Rec) -> bool {
    let s = space.index();
    if full.atomic.is_some() {
        return false;
    }
    // By reference: a copy of the record costs more than the tests.
    match &full.write {
        Some(w) if w.op.is_atomic() || !item.after(w, s) => return false,
        Some(_) => {}
        None if space == Space::Local && !rec.op.writes() => return false,
        None => {}
    }
    if rec.op.writes() {
        // Ordered after every read since the write too (a scan's element
        // that four work-items read in the interval before): no conflict,
        // and it is the last write now.
        if !full.reads.as_slice().iter().all(|r| item.after(r, s)) {
            return false;
        }
        full.write = Some(rec);
        full.reads.clear();
    } else {
        add_read(item, full, s, rec);
    }
    true
}

/// Adds a read (`rec`, by `item`) to `full`'s reads, as
/// [`GroupCheck::on_shadow`] does: it makes those of its own work-item and
/// those ordered before it redundant.
#[inline(always)]
fn add_read(item: &ItemState, full: &mut Full, s: usize, rec: Rec) {
    let me = rec.who.item;
    let reader = Reader {
        wg: item.wg[s],
        blind: item.blind(s),
    };
    full.reads
        .add(rec, reader, |r| r.who.item == me || item.after(r, s));
}
