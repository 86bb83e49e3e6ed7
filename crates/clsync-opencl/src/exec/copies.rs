//! `async_work_group_copy`, `async_work_group_strided_copy` and
//! `wait_group_events` (SPIR-V `OpGroupAsyncCopy`, `OpGroupWaitEvents`).
//!
//! Every work-item of a group calls a copy with the same arguments, and the
//! copy is done once `wait_group_events` returns. Here the copy belongs to
//! the group, as in Oclgrind: the first work-item to reach a group's copy
//! `k` records its arguments, the others compare theirs with them, and the
//! last of the group to arrive performs all of it (or the first to wait for
//! it, where some work-item never arrives); the wait is a work-group
//! barrier on local and global memory, after which the copy is visible to
//! every work-item. A work-item's events are the numbers
//! of its copies, from 1; a copy given an event joins it.
//!
//! In a checked launch the copy's bytes are shown to the checker as relaxed
//! work-group atomics, at the copy's line, of the first work-item to wait
//! for it, when it arrives at the wait: a plain access of another work-item
//! that the wait does not order against it is a data race (Oclgrind's
//! `Write-write data race` for the destination), while the copy never races
//! with itself. A copy nobody waits for is never made, as in Oclgrind, and
//! races with nothing; it is reported as never waited for. The checked launch
//! also reports a copy whose arguments differ between work-items
//! (`Work-group divergence detected (async copy)`), waits on different
//! events (`(barrier)`), an event no copy returned (`Invalid wait event`),
//! and a work-item that ends with a copy it never waited for (`Work-item
//! finished without waiting for events`).

use std::collections::HashMap;
use std::sync::Mutex;

use super::ctx::{HostSide, ItemCtx, Stop};
use super::helpers;

/// One copy of a group: its arguments, how many work-items made it, and
/// whether it is done.
struct GroupCopy {
    args: [u64; 6],
    /// The event the first work-item to make it got.
    event: u64,
    arrived: usize,
    done: bool,
    /// The copy's site; in a checked launch, whether its accesses were
    /// shown to the checker.
    site: u32,
    noted: bool,
}

/// One group's copies and waits, in the order the work-items make them.
#[derive(Default)]
pub struct GroupCopies {
    copies: Vec<GroupCopy>,
    waits: Vec<Vec<u64>>,
}

/// Every group's, by group.
pub type Copies = Mutex<HashMap<[usize; 3], GroupCopies>>;

/// One work-item's events: whether each was waited for, and the site of
/// the copy that made it.
#[derive(Default, Debug)]
pub struct ItemEvents {
    waited: Vec<bool>,
    made_at: Vec<u32>,
    copies: usize,
    waits: usize,
}

/// Runs `f` on the copies of the group of the work-item `host` runs, with
/// the launch's copies locked.
fn with_group<R>(host: &HostSide<'_>, f: impl FnOnce(&mut GroupCopies) -> R) -> R {
    let wi = host.runner.item();
    let group = [wi.get_group_id(0), wi.get_group_id(1), wi.get_group_id(2)];
    let mut all = host.copies.lock().unwrap_or_else(|e| e.into_inner());
    f(all.entry(group).or_default())
}

fn report(ctx: &ItemCtx, headline: &str, details: String, site: u32) {
    // SAFETY: the context's host side lives for the work-item's run (see
    // `exec::run`).
    let host = unsafe { &*ctx.host };
    let at = host.sites.get(site as usize).copied();
    super::report::add(ctx, headline.to_string(), details, at);
}

/// `OpGroupAsyncCopy`: copies this work-item's share of `n` elements of
/// `size` bytes; `dst_stride` and `src_stride` in elements. Returns the
/// event.
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call (as
/// compiled code passes it), alive for the call.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "C" fn clsync_async_copy(
    ctx: *mut ItemCtx,
    dst: u64,
    src: u64,
    size: u64,
    n: u64,
    dst_stride: u64,
    src_stride: u64,
    event: u64,
    site: u32,
) -> u64 {
    // SAFETY: compiled code passes its own context, alive for the call.
    let c = unsafe { &mut *ctx };
    // SAFETY: as in `report`.
    let host = unsafe { &*c.host };
    let wi = host.runner.item();
    let index = c.events.copies;
    c.events.copies += 1;
    let args = [dst, src, size, n, dst_stride, src_stride];
    let group_size = wi.get_local_size(0) * wi.get_local_size(1) * wi.get_local_size(2);
    let ev = if event != 0 {
        event
    } else {
        c.events.waited.len() as u64 + 1
    };
    let (last, theirs) = with_group(host, |g| {
        if g.copies.len() <= index {
            g.copies.push(GroupCopy {
                args,
                event: ev,
                arrived: 0,
                done: false,
                site,
                noted: false,
            });
        }
        let copy = &mut g.copies[index];
        copy.arrived += 1;
        let theirs = copy.args;
        // A checked launch shows the copy to the checker when the first
        // work-item arrives at a wait for it, and moves the bytes past that
        // wait's first barrier, as Oclgrind does: only the events the
        // group's first waiting work-item names (what a divergent wait
        // leaves undone is then Oclgrind's).
        let last = copy.arrived == group_size && !copy.done && !host.checked;
        if last {
            copy.done = true;
        }
        (last, theirs)
    });
    if theirs != args && host.checked {
        report(
            c,
            "Work-group divergence detected (async copy)",
            format!("copy {} of this work-item has other arguments than the work-item that made it first", index + 1),
            site,
        );
    }
    if last && !copy(c, theirs, site, false, true) {
        return 0;
    }
    if event != 0 {
        return event;
    }
    c.events.waited.push(false);
    c.events.made_at.push(site);
    c.events.waited.len() as u64
}

/// `OpGroupWaitEvents`: the events at `list` (`n` of them), then a
/// work-group barrier on local and global memory.
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call (as
/// compiled code passes it), alive for the call.
pub(crate) unsafe extern "C" fn clsync_wait_events(
    ctx: *mut ItemCtx,
    n: u64,
    list: u64,
    site: u32,
) {
    // SAFETY: as in `clsync_async_copy`.
    let c = unsafe { &mut *ctx };
    // SAFETY: as in `report`.
    let host = unsafe { &*c.host };
    let mut events = Vec::new();
    for k in 0..n {
        let p = list.wrapping_add(8 * k);
        match helpers::resolve_checked(c, p, 8) {
            // SAFETY: `resolve_checked` found 8 bytes inside an object.
            Some(a) => events.push(unsafe { (a as *const u64).read_unaligned() }),
            None => {
                // Reported and skipped (0: the work-item stopped).
                // SAFETY: `ctx` is this call's own context (our contract).
                if unsafe { helpers::clsync_fault(&mut *c, p, 8, 0, site) } == 0 {
                    return;
                }
            }
        }
    }
    for e in &events {
        match c.events.waited.get_mut((*e as usize).wrapping_sub(1)) {
            Some(w) if *e != 0 => *w = true,
            _ if host.checked => report(
                c,
                "Invalid wait event",
                format!("event {e:#x} was not returned by an async copy of this work-item"),
                site,
            ),
            _ => {}
        }
    }
    let index = c.events.waits;
    if host.checked {
        let differs = with_group(host, |g| match g.waits.get(index) {
            None => {
                g.waits.push(events.clone());
                false
            }
            Some(first) => *first != events,
        });
        if differs {
            report(
                c,
                "Work-group divergence detected (barrier)",
                format!(
                    "wait_group_events {} waits for events {events:?}, the group's first work-item for others",
                    index + 1
                ),
                site,
            );
        }
    }
    c.events.waits += 1;
    if host.checked && !note_waited(c, &events) {
        return;
    }
    // Local and global memory, work-group scope: CLK_LOCAL_MEM_FENCE |
    // CLK_GLOBAL_MEM_FENCE as SPIR-V semantics. Past the first barrier
    // every work-item that will make this group's copies has made them;
    // one that some work-item never reached is performed then, by the first
    // to get there, and the second barrier orders it before every
    // work-item's next access.
    // SAFETY: `ctx` is this call's own context (our contract).
    unsafe { helpers::clsync_barrier(&mut *c, 2, 2, 0x300, site) };
    if c.status != 0 {
        return;
    }
    // Copies of this work-item that some work-item of the group never
    // reached (in a checked launch: every copy of an event the wait names):
    // performed now, by the first to wait.
    let wi = host.runner.item();
    let (pending, short): (Vec<[u64; 6]>, _) = with_group(host, |g| {
        let named = g.waits.get(index).cloned().unwrap_or(events);
        let checked = host.checked;
        // A copy that not every work-item of the group made (each that
        // waits has made all of its copies by now).
        let size = wi.get_local_size(0) * wi.get_local_size(1) * wi.get_local_size(2);
        let short = g
            .copies
            .iter()
            .enumerate()
            .take(c.events.copies)
            .find(|(_, k)| k.arrived < size)
            .map(|(n, k)| (n, k.arrived, size));
        let pending = g
            .copies
            .iter_mut()
            .take(c.events.copies)
            .filter(|k| !k.done && (!checked || named.contains(&k.event)))
            .map(|k| {
                k.done = true;
                k.args
            })
            .collect();
        (pending, short)
    });
    if let (true, Some((n, made, size))) = (host.checked, short) {
        report(
            c,
            "Work-group divergence detected (async copy)",
            format!(
                "copy {} was made by {made} of the group's {size} work-items",
                n + 1
            ),
            site,
        );
    }
    for a in pending {
        // A checked launch's copy showed its accesses on arrival.
        if !copy(c, a, site, false, true) {
            return;
        }
    }
    // SAFETY: `ctx` is this call's own context (our contract).
    unsafe { helpers::clsync_barrier(&mut *c, 2, 2, 0x300, site) };
}

/// In a checked launch, on arrival at a wait for `events`: shows the
/// checker the accesses of this work-item's copies of those events that no
/// work-item has shown yet, as this work-item's, at each copy's line (see
/// the module's docs); false when the work-item must stop.
fn note_waited(c: &mut ItemCtx, events: &[u64]) -> bool {
    // SAFETY: as in `report`.
    let host = unsafe { &*c.host };
    let todo: Vec<([u64; 6], u32)> = with_group(host, |g| {
        g.copies
            .iter_mut()
            .take(c.events.copies)
            .filter(|k| !k.noted && events.contains(&k.event))
            .map(|k| {
                k.noted = true;
                (k.args, k.site)
            })
            .collect()
    });
    todo.into_iter()
        .all(|(a, site)| copy(c, a, site, true, false))
}

/// Performs a copy (`[dst, src, size, n, dst_stride, src_stride]`): in a
/// checked launch, reports its accesses (`note`) and moves its bytes and
/// their shadows (`moves`); false when the work-item must stop.
fn copy(c: &mut ItemCtx, a: [u64; 6], site: u32, note: bool, moves: bool) -> bool {
    let [dst, src, size, n, dst_stride, src_stride] = a;
    // SAFETY: as in `report`.
    let checked = unsafe { &*c.host }.checked;
    for e in 0..n {
        let s = src.wrapping_add(e.wrapping_mul(src_stride).wrapping_mul(size));
        let d = dst.wrapping_add(e.wrapping_mul(dst_stride).wrapping_mul(size));
        let (Some(sa), Some(da)) = (
            helpers::resolve_checked(c, s, size),
            helpers::resolve_checked(c, d, size),
        ) else {
            let (p, write) = if helpers::resolve_checked(c, s, size).is_none() {
                (s, 0)
            } else {
                (d, 1)
            };
            // SAFETY: `ctx` is the calling work-item's context (the callers'
            // contract).
            // 0: the work-item stopped; else reported and skipped.
            if unsafe { helpers::clsync_fault(&mut *c, p, size, write, site) } == 0 {
                return false;
            }
            continue;
        };
        if checked && note {
            super::checked::note_group_access(c, s, sa, size, false, site);
            super::checked::note_group_access(c, d, da, size, true, site);
        }
        if !moves {
            continue;
        }
        if checked {
            super::checked::copy_shadow(c, d, s, size);
        }
        // SAFETY: both ranges are inside their objects (resolved above);
        // `copy` allows overlap.
        unsafe { std::ptr::copy(sa, da, size as usize) };
    }
    true
}

/// At the end of a checked work-item: a copy it never waited for.
pub(crate) fn finish(ctx: &mut ItemCtx) {
    // SAFETY: as in `report`.
    let host = unsafe { &*ctx.host };
    if !host.checked || matches!(ctx.stop, Some(Stop::Unwind(_))) {
        return;
    }
    if let Some(i) = ctx.events.waited.iter().position(|w| !w) {
        let site = ctx.events.made_at[i];
        report(
            ctx,
            "Work-item finished without waiting for events",
            format!("the event of its async copy {} was never waited for", i + 1),
            site,
        );
    }
}
