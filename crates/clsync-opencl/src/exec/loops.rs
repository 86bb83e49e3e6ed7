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

use super::ctx::{builtin, Runner};
use super::helpers::{fence_flags, scope};
use super::launch::{raise, Setup};
use crate::translate::continuation::STOPPED;
use crate::translate::GroupEntry;

/// Runs the launch as work-item loops.
pub(super) fn run(
    s: &Setup<'_>,
    entry: &GroupEntry,
    rt: &Runtime,
    launch: &Launch,
) -> Result<LaunchSummary, LaunchError> {
    rt.launch_groups(launch, |g| group(s, entry, g))
}

/// One work-group.
fn group(s: &Setup<'_>, entry: &GroupEntry, g: &Group<'_>) {
    let n = g.len();
    let mut slots = s.group_slots(|arg| g.local(arg).raw_bytes().0);
    let nslots = slots.len() - 1;
    let table = slots.as_mut_ptr();
    // One private block that the work-items use in turn: the kernel saves
    // its own variables in each work-item's frame across barriers (see
    // `translate::continuation`).
    let mut private = vec![0u64; s.private_words];
    let pbase = private.as_mut_ptr() as *mut u8;
    // SAFETY: `private` has `private_words` words and `table` is this
    // launch's table.
    unsafe {
        s.init_private(pbase);
        s.point_private(table, pbase);
    }
    let stride = entry.frame_bytes.next_multiple_of(8);
    let mut frames = vec![0u64; stride / 8 * n];
    let fbase = frames.as_mut_ptr() as *mut u8;
    let mut reached = vec![0u32; n];
    let host = s.host(Runner::Group(g));
    let mut ctx = s.context(table, nslots, &host);
    super::launch::group_builtins(
        &mut ctx.builtins,
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
    let args = s.words.as_ptr();
    let mut state = 0u32;
    loop {
        // SAFETY: the continuation function was compiled for this
        // program's module with this kernel's flattened arguments (`args`);
        // its context's slots point at memory that lives for the group
        // (buffers, the group's local memory, `private`), `frames` holds
        // `n` frames of `stride` bytes and `reached` `n` words, and `state`
        // is 0 or the barrier every work-item stopped at; the code checks
        // every access against the slots and never unwinds.
        let r = unsafe {
            (entry.func)(
                &mut ctx,
                args,
                fbase,
                state,
                stride as u64,
                reached.as_mut_ptr(),
            )
        };
        if r == STOPPED {
            // The work-item that stopped left its ids in the context: its
            // panic is raised as its own.
            let l = ctx.builtins[builtin::LOCAL_LINEAR_ID] as usize;
            g.for_each_in(l..l + 1, |_| raise(&mut ctx));
            unreachable!("a stopped work-item raises");
        }
        if reached.iter().any(|k| *k != r) {
            diverged(s, entry, g, &reached);
        }
        match r {
            0 => return,
            k => {
                let spec = &entry.barriers[k as usize - 1];
                let site = s.build.sites[spec.site as usize];
                let flags = fence_flags(spec.semantics);
                if let Err(e) = g.barrier_dyn(flags, scope(spec.mem_scope), site) {
                    // As the coroutine engine does: the first work-item to
                    // arrive fails with the barrier's error.
                    g.for_each_in(0..1, |_| panic!("{e}\n\tat {site}"));
                }
                state = k;
            }
        }
    }
}

/// Stops the group with a barrier divergence: where each work-item is
/// (`reached`: 0 returned, k at barrier k), in runs of first appearance,
/// at the first barrier a work-item waits at.
#[cold]
fn diverged(s: &Setup<'_>, entry: &GroupEntry, g: &Group<'_>, reached: &[u32]) -> ! {
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
    g.diverged(site, runs)
}
