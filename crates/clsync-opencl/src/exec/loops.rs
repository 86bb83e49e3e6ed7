//! Work-item loops: a compiled kernel's work-group as a [`Group`] of the
//! runtime, each barrier interval one loop over the work-items that calls
//! the kernel's continuation function (see
//! [`crate::translate::continuation`]).
//!
//! A group keeps one slot table, one context and one private block for all
//! its work-items, and calls the continuation function once per barrier
//! interval: the loop over the work-items is in the compiled code. Each
//! work-item has a frame for the values (and private variables) it keeps
//! across barriers. After each interval every work-item must have reached
//! the same barrier, or all returned; anything else is a barrier
//! divergence, reported as the coroutine engine reports it (where each
//! work-item waits, or that it returned).

use clsync::sync::{BarrierKind, BarrierWait, MemFlags};
use clsync::{Group, Launch, LaunchError, LaunchSummary, Place, PlaceRun, Runtime};

use super::ctx::{builtin, ItemCtx, Runner, Slot};
use super::helpers::{fence_flags, scope};
use super::launch::{raise, Setup};
use crate::translate::continuation::{DIVERGED, LANES, STOPPED};
use crate::translate::GroupEntry;

/// Runs the launch as work-item loops.
pub(super) fn run(
    s: &Setup<'_>,
    entry: &GroupEntry,
    rt: &Runtime,
    launch: &Launch,
    lanes: bool,
) -> Result<LaunchSummary, LaunchError> {
    // What every group of the launch shares, found once (see `Shared`).
    let shared = Shared {
        quick: entry
            .barriers
            .iter()
            .map(|b| !s.checked && crate::translate::continuation::chainable(b))
            .collect(),
        builtins: std::sync::OnceLock::new(),
    };
    rt.launch_groups(launch, |g| group(s, entry, g, lanes, &shared))
}

/// What the groups of a launch share, found once for all of them rather
/// than per group: with groups of 64 work-items, the runtime's work per
/// group (its tables, its built-ins, each barrier's checks) took longer
/// than the compiled intervals.
struct Shared {
    /// Per barrier: whether the runtime passes it without checking its
    /// flags and scope again, as compiled code passes a chained one (see
    /// `translate::continuation::chain`): an unchecked launch's barrier of
    /// valid flags and scope whose fence is no hardware one.
    quick: Vec<bool>,
    /// The built-ins of a group, but its ids, and the local size they were
    /// made for: every group of that size has them (a range's last groups
    /// may be smaller).
    builtins: std::sync::OnceLock<([usize; 3], [u64; builtin::COUNT])>,
}

/// A group's vectors: its slot table, private block, frames and places,
/// kept on the worker thread from one group to the next (one thread-local
/// access per group, where each vector from its own free list took four).
#[derive(Default)]
struct GroupScratch {
    slots: Vec<Slot>,
    private: Vec<u64>,
    frames: Vec<u64>,
    reached: Vec<u64>,
}

thread_local! {
    static GROUP_SCRATCH: std::cell::Cell<Option<Box<GroupScratch>>> =
        const { std::cell::Cell::new(None) };
}

/// Gives a group's vectors back to its thread when the group ends (or
/// unwinds).
struct ScratchGuard(Option<Box<GroupScratch>>);

impl Drop for ScratchGuard {
    fn drop(&mut self) {
        let kept = self.0.take();
        // `try_with`: a thread that is exiting keeps nothing.
        let _ = GROUP_SCRATCH.try_with(|c| c.set(kept));
    }
}

/// One work-group.
fn group(s: &Setup<'_>, entry: &GroupEntry, g: &Group<'_>, lanes: bool, shared: &Shared) {
    let n = g.len();
    // Lane batches run where a batch stays in its row.
    let lanes = lanes && g.get_local_size(0).is_multiple_of(LANES);
    // The group's vectors are the last group's on this thread (a nested or
    // first group's are new): allocating the slot table alone was a tenth
    // of a batched scan's interval code.
    let mut guard = ScratchGuard(GROUP_SCRATCH.with(|c| c.take()));
    let v = guard.0.get_or_insert_with(Default::default);
    let GroupScratch {
        slots,
        private,
        frames,
        reached: reached_words,
    } = &mut **v;
    s.group_slots_in(slots, |arg| g.local(arg).raw_bytes().0);
    let nslots = slots.len() - 1;
    let table = slots.as_mut_ptr();
    // One private block that the work-items use in turn: the kernel saves
    // its own variables in each work-item's frame across barriers (see
    // `translate::continuation`).
    private.clear();
    private.resize(s.private_words, 0);
    let pbase = private.as_mut_ptr() as *mut u8;
    // SAFETY: `private` has `private_words` words and `table` is this
    // launch's table.
    unsafe {
        s.init_private(pbase);
        s.point_private(table, pbase);
    }
    let stride = entry.frame_bytes.next_multiple_of(8);
    // Each frame is written before it is read: a value kept across a
    // barrier is stored by the work-item that reaches the barrier before
    // any work-item resumes there; so is each work-item's place.
    // So the frames keep what the last group left there (not cleared:
    // some kilobytes per group).
    frames.resize(frames.len().max(stride / 8 * n), 0);
    let fbase = frames.as_mut_ptr() as *mut u8;
    // `n` words of 32 bits, in words of 64.
    reached_words.resize(reached_words.len().max(n.div_ceil(2)), 0);
    // SAFETY: `reached_words` holds `n` 32-bit words, aligned for them
    // (its words are 8-byte aligned), alive and used as nothing else
    // until the group ends.
    let reached =
        unsafe { std::slice::from_raw_parts_mut(reached_words.as_mut_ptr() as *mut u32, n) };
    let host = s.host(Runner::Group(g));
    let mut ctx = s.context(table, nslots, &host);
    // A checked launch: the shadows of the slots, with one private shadow
    // block that the work-items use in turn, as they use `private`; each
    // keeps its own private memory and shadow while the others run (see
    // `Privates`). (Kept until the group ends: the context points at them.)
    let words = if s.checked { s.private_words } else { 0 };
    let mut private_shadow = vec![0u64; words];
    let mut shadows = Vec::new();
    let mut privates = None;
    if s.checked {
        let p = private_shadow.as_mut_ptr() as *mut u8;
        s.shadows_in(&mut shadows, |arg| g.local(arg).raw_bytes().0, p);
        ctx.shadows = shadows.as_ptr();
        if !entry.private_spans.is_empty() {
            // SAFETY: both blocks are `words` words, which hold the kernel's
            // variables (`plan_slots` laid them out in the private block),
            // alive for the group.
            privates = Some(unsafe { Privates::new(pbase, p, &entry.private_spans, n) });
        }
    }
    if let Some(p) = privates.as_mut() {
        ctx.privates = p;
    }
    // The built-ins of a group of this size, made once per launch (a
    // group of another size, a range's last, makes its own); then its ids.
    let size = [0, 1, 2].map(|d| g.get_local_size(d));
    let made = shared.builtins.get_or_init(|| (size, group_builtins(g)));
    ctx.builtins = match made.0 == size {
        true => made.1,
        false => group_builtins(g),
    };
    for d in 0..3 {
        ctx.builtins[builtin::GROUP_ID + d as usize] = g.get_group_id(d) as u64;
    }
    ctx.take_proofs(s.race_free);
    let args = s.words.as_ptr();
    let mut state = 0u32;
    let mut reported = false;
    loop {
        // SAFETY: the continuation function was compiled for this
        // program's module with this kernel's flattened arguments (`args`);
        // its context's slots point at memory that lives for the group
        // (buffers, the group's local memory, `private`), `frames` holds
        // `n` frames of `stride` bytes and `reached` `n` words, and `state`
        // is 0 or the barrier every work-item stopped at; the code checks
        // every access against the slots and never unwinds.
        // A function for the state where the build has one (see
        // `GroupEntry::by_state`), else the one for every state.
        // And its function of lane batches, where it has one and the
        // group's rows allow.
        let batched = entry.batched.get(state as usize).filter(|_| lanes);
        let func = match batched {
            Some(Ok(f)) => Some(*f),
            _ => entry.by_state.get(state as usize).copied(),
        };
        let func = func.unwrap_or(entry.func);
        let r = unsafe { func(&mut ctx, args, fbase, state, reached.as_mut_ptr()) };
        // The barriers the code passed on its own, each its group's own
        // barrier `state` (`translate::continuation::chain`).
        let chained = std::mem::take(&mut ctx.chained);
        if chained > 0 {
            g.passed_barriers(chained as usize);
        }
        // The work-items a narrowed loop did not run wait at its barrier
        // (`translate::continuation::narrow`): their places are written
        // only where the places differ, for the report.
        let ran = (std::mem::replace(&mut ctx.narrowed_from, u64::MAX) as usize).min(n);
        let rest_at = ctx.narrowed_at as u32;
        // A checked build named each work-item as it ran it; the last one's
        // private memory goes back to its place.
        g.name_item(None);
        if let Some(p) = privates.as_mut() {
            p.put_back();
        }
        if r == STOPPED {
            // The work-item that stopped left its ids in the context: its
            // panic is raised as its own.
            let l = ctx.builtins[builtin::LOCAL_LINEAR_ID] as usize;
            g.for_each_in(l..l + 1, |_| raise(&mut ctx));
            unreachable!("a stopped work-item raises");
        }
        if !all_at(&reached[..ran], r) || (ran < n && rest_at != r) {
            reached[ran..].fill(rest_at);
            // A checked launch that runs on reports it once per group and
            // runs on, as on coroutines: the group meets (for the checker
            // and the fences) at the first waiting work-item's barrier, and
            // each work-item resumes from its own place. Any other stops
            // here.
            if !reported {
                let (site, runs) = divergence(s, entry, reached);
                g.report_divergence(site, runs);
                reported = true;
                // From here the work-items of one interval may have passed
                // different barriers, which the build's proofs take for
                // apart: the group's loads are all checked. (Those made
                // so far each shared its interval with every work-item's
                // accesses since the group's last common barrier, as the
                // proof says, and the group's meeting below orders them
                // before all that follows.)
                ctx.race_free = 0;
            }
            let Some(&k) = reached.iter().find(|k| **k != 0) else {
                unreachable!("places that differ are not all 0")
            };
            barrier(s, entry, g, k);
            state = DIVERGED;
            continue;
        }
        match r {
            0 => return,
            // A barrier the runtime need not check again: what
            // `Group::barrier_dyn` does after its checks, as compiled code
            // does for a chained one. Its fence is program order on this
            // thread (the call into the compiled code orders the
            // compiler's accesses on either side).
            k if shared.quick[k as usize - 1] => {
                g.cancellation_point();
                g.passed_barriers(1);
                state = k;
            }
            k => {
                barrier(s, entry, g, k);
                state = k;
            }
        }
    }
}

/// The built-ins of group `g` that every work-item of it shares.
fn group_builtins(g: &Group<'_>) -> [u64; builtin::COUNT] {
    let mut b = [0; builtin::COUNT];
    super::launch::group_builtins(
        &mut b,
        |d| {
            [
                g.get_group_id(d),
                g.get_global_size(d),
                g.get_local_size(d),
                g.get_enqueued_local_size(d),
                g.get_num_groups(d),
                g.get_global_offset(d),
            ]
        },
        [
            g.get_work_dim(),
            g.get_max_sub_group_size(),
            g.get_num_sub_groups(),
            g.get_enqueued_num_sub_groups(),
        ],
    );
    b
}

/// Whether every work-item's place in `reached` is `r`. Asked after every
/// interval of every group, so it is written to vectorize: each chunk's
/// differences are or-ed without an early exit (which a plain `all` has, and
/// which keeps the compiler from vectorizing it; on the barrier loop at local
/// size 256 that scalar test took as long as the compiled interval itself).
fn all_at(reached: &[u32], r: u32) -> bool {
    reached
        .chunks(64)
        .all(|c| c.iter().fold(0, |d, k| d | (k ^ r)) == 0)
}

/// The group's barrier `k`.
fn barrier(s: &Setup<'_>, entry: &GroupEntry, g: &Group<'_>, k: u32) {
    let spec = &entry.barriers[k as usize - 1];
    let site = s.build.sites[spec.site as usize];
    let flags = fence_flags(spec.semantics);
    if let Err(e) = g.barrier_dyn(flags, scope(spec.mem_scope), site) {
        // As the coroutine engine does: the first work-item to arrive fails
        // with the barrier's error.
        g.for_each_in(0..1, |_| panic!("{e}\n\tat {site}"));
    }
}

/// A checked work-item loop's private memory: the group's one private
/// block and its shadow, which the compiled code reaches through the slot
/// and shadow tables (whose loads it hoists out of the loop), and each
/// work-item's own copy of the parts of both that the kernel keeps in
/// memory (`GroupEntry::private_spans`) while the others run. A work-item
/// starts with the block as `Setup::init_private` fills it and its shadow
/// unwritten, as on coroutines, and keeps every function's variables
/// across barriers, as its own stack would.
pub struct Privates {
    block: *mut u8,
    shadow: *mut u8,
    spans: Vec<(usize, usize)>,
    /// Bytes of one work-item's copy: the spans' bytes, twice.
    each: usize,
    /// Per work-item: its spans of the block, then those of the shadow.
    kept: Vec<u8>,
    /// The work-item whose memory is in the blocks.
    running: Option<usize>,
}

impl Privates {
    /// Each of `n` work-items starts with what the `spans` of `block` and
    /// `shadow` hold now.
    ///
    /// # Safety
    ///
    /// `block` and `shadow` hold every span, apart, alive and used by
    /// nothing else while this lives (but the compiled code between the
    /// calls).
    unsafe fn new(block: *mut u8, shadow: *mut u8, spans: &[(usize, usize)], n: usize) -> Privates {
        let half: usize = spans.iter().map(|(a, b)| b - a).sum();
        let mut p = Privates {
            block,
            shadow,
            spans: spans.to_vec(),
            each: 2 * half,
            kept: vec![0; 2 * half * n],
            running: None,
        };
        for l in 0..n {
            p.running = Some(l);
            p.put_back();
        }
        p
    }

    /// Copies the blocks' spans to work-item `l`'s copy (`save`), or back.
    fn copy(&mut self, l: usize, save: bool) {
        let mine = &mut self.kept[self.each * l..self.each * (l + 1)];
        let mut at = 0;
        for base in [self.block, self.shadow] {
            for &(start, end) in &self.spans {
                let len = end - start;
                // SAFETY: the blocks hold every span (`new`'s contract),
                // apart from `kept`, whose part for `l` has the spans'
                // bytes twice.
                unsafe {
                    let b = base.add(start);
                    let k = mine.as_mut_ptr().add(at);
                    if save {
                        std::ptr::copy_nonoverlapping(b, k, len);
                    } else {
                        std::ptr::copy_nonoverlapping(k, b, len);
                    }
                }
                at += len;
            }
        }
    }

    /// Work-item `l`'s memory into the blocks, the last one's kept.
    fn switch_to(&mut self, l: usize) {
        if self.running == Some(l) || self.each * (l + 1) > self.kept.len() {
            return;
        }
        self.put_back();
        self.copy(l, false);
        self.running = Some(l);
    }

    /// The running work-item's memory back to its place.
    fn put_back(&mut self) {
        if let Some(l) = self.running.take() {
            self.copy(l, true);
        }
    }
}

/// A checked build's work-item loop starts work-item `l`'s interval: the
/// runtime names it as the one running (the checker's accesses from now
/// on are its), and its private memory and shadow are put in the group's
/// blocks.
///
/// # Safety
///
/// `ctx` is the context of the group whose loop makes the call (as the
/// compiled code passes it), alive for the call.
pub(crate) unsafe extern "C" fn clsync_next_item(ctx: *mut ItemCtx, l: u64) {
    // SAFETY: our contract.
    let ctx = unsafe { &mut *ctx };
    item_ids(&mut ctx.builtins, l);
    // SAFETY: `host` points at the group's `HostSide`, which outlives the
    // compiled code's calls (see `Setup::context`).
    let host = unsafe { &*ctx.host };
    if let Runner::Group(g) = host.runner {
        g.name_item(Some(l as usize));
    }
    // SAFETY: `group` points it at its `Privates`, alive while its loop
    // runs, and nothing else holds a reference to it during the call.
    if let Some(p) = unsafe { ctx.privates.as_mut() } {
        p.switch_to(l as usize);
    }
}

/// A divergence's site and places: where each work-item is (`reached`: 0
/// returned, k at barrier k), in runs of first appearance, and the first
/// barrier a work-item waits at.
#[cold]
fn divergence(
    s: &Setup<'_>,
    entry: &GroupEntry,
    reached: &[u32],
) -> (clsync::sync::Site, Vec<PlaceRun>) {
    let place = |k: u32| match k {
        0 => Place::Exited,
        k => {
            let spec = &entry.barriers[k as usize - 1];
            Place::AtBarrier(BarrierWait {
                kind: BarrierKind::WorkGroup,
                site: s.build.sites[spec.site as usize],
                flags: MemFlags::from_bits(fence_flags(spec.semantics)).unwrap_or(MemFlags::ALL),
                scope: scope(spec.mem_scope),
            })
        }
    };
    let mut runs: Vec<PlaceRun> = Vec::new();
    for (l, k) in reached.iter().enumerate() {
        let p = place(*k);
        match runs.iter_mut().find(|r| r.place == p) {
            Some(r) => r.items.push(l),
            None => runs.push(PlaceRun {
                place: p,
                items: vec![l],
            }),
        }
    }
    let first = reached.iter().find(|k| **k != 0).copied().unwrap_or(1);
    let site = s.build.sites[entry.barriers[first as usize - 1].site as usize];
    (site, runs)
}

/// Stores the ids of the group's work-item `l` (its local linear id) in
/// the context: what a work-item loop's calls and fault path read there
/// (`translate::continuation` counts only the ids its code reads).
///
/// # Safety
///
/// As [`clsync_next_item`]'s.
pub(crate) unsafe extern "C" fn clsync_item_ids(ctx: *mut ItemCtx, l: u64) {
    // SAFETY: our contract.
    let ctx = unsafe { &mut *ctx };
    item_ids(&mut ctx.builtins, l);
}

/// The per-work-item built-ins of the work-item with local linear id `l`,
/// from the group's built-ins in `b` (its id, sizes and offsets), as the
/// compiled loop's head computes them.
pub(crate) fn item_ids(b: &mut [u64; builtin::COUNT], l: u64) {
    use builtin::*;
    let (sx, sy) = (b[LOCAL_SIZE].max(1), b[LOCAL_SIZE + 1].max(1));
    // A row's work-items, and every one of a one-dimensional group, divide
    // nothing.
    let local = if l < sx {
        [l, 0, 0]
    } else {
        let rest = l / sx;
        [l % sx, rest % sy, rest / sy]
    };
    for (d, id) in local.into_iter().enumerate() {
        b[LOCAL_ID + d] = id;
        b[GLOBAL_ID + d] = b[GROUP_ID + d]
            .wrapping_mul(b[ENQUEUED_LOCAL_SIZE + d])
            .wrapping_add(b[GLOBAL_OFFSET + d])
            .wrapping_add(id);
    }
    // (gz - oz) * GSy * GSx + (gy - oy) * GSx + (gx - ox).
    b[GLOBAL_LINEAR_ID] = (0..3).rev().fold(0u64, |lin, d| {
        lin.wrapping_mul(b[GLOBAL_SIZE + d])
            .wrapping_add(b[GLOBAL_ID + d].wrapping_sub(b[GLOBAL_OFFSET + d]))
    });
    b[LOCAL_LINEAR_ID] = l;
    let sg = b[MAX_SUB_GROUP_SIZE].max(1);
    let n = sx * sy * b[LOCAL_SIZE + 2].max(1);
    // A shift where the size is a power of two (always, for the sizes
    // clsync gives sub-groups): a checked loop calls this for every
    // work-item at every barrier, and a division was a fifth of a checked
    // reduction's time.
    let id = if sg.is_power_of_two() {
        l >> sg.trailing_zeros()
    } else {
        l / sg
    };
    let start = id * sg;
    b[SUB_GROUP_ID] = id;
    b[SUB_GROUP_LOCAL_ID] = l - start;
    b[SUB_GROUP_SIZE] = sg.min(n.saturating_sub(start));
}
