//! Work-item loops: a compiled kernel's work-group as a [`Group`] of the
//! runtime, each barrier interval one loop over the work-items that calls
//! the kernel's continuation function (see
//! [`crate::translate::continuation`]).
//!
//! A group keeps one slot table and one context for all its work-items:
//! between two calls only the work-item's ids and its private slots
//! change. Each work-item has a frame for the values it keeps across
//! barriers and a private block for its variables. After each loop every
//! work-item must have reached the same barrier, or all returned; anything
//! else is a barrier divergence, reported as the coroutine engine reports
//! it (where each work-item waits, or that it returned).

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
    // One pointer for the context's reads and the private slots' writes.
    let table = slots.as_mut_ptr();
    let stride = s.private_words;
    let mut private = vec![0u64; stride * n];
    let pbase = private.as_mut_ptr() as *mut u8;
    for l in 0..n {
        // SAFETY: work-item l's block is `stride` words at l * stride.
        unsafe { s.init_private(pbase.add(l * stride * 8)) };
    }
    let fstride = entry.frame_bytes.div_ceil(8);
    let mut frames = vec![0u64; fstride * n];
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
    let sg = (g.get_max_sub_group_size() as usize).max(1);
    // The sub-group ids cost two divisions per work-item and interval:
    // computed only for code that reads them.
    let sub_group_ids = (1 << builtin::SUB_GROUP_SIZE)
        | (1 << builtin::SUB_GROUP_ID)
        | (1 << builtin::SUB_GROUP_LOCAL_ID);
    let sub_groups = s.build.builtins_used & sub_group_ids != 0;
    let args = s.words.as_ptr();
    let mut state = 0u32;
    loop {
        let mut first = None;
        let mut same = true;
        g.for_each(|it| {
            let l = it.local_linear_id;
            let b = &mut ctx.builtins;
            for d in 0..3 {
                b[builtin::GLOBAL_ID + d] = it.global_id[d] as u64;
                b[builtin::LOCAL_ID + d] = it.local_id[d] as u64;
            }
            b[builtin::GLOBAL_LINEAR_ID] = it.global_linear_id as u64;
            b[builtin::LOCAL_LINEAR_ID] = l as u64;
            if sub_groups {
                b[builtin::SUB_GROUP_ID] = (l / sg) as u64;
                b[builtin::SUB_GROUP_LOCAL_ID] = (l % sg) as u64;
                b[builtin::SUB_GROUP_SIZE] = sg.min(n - l / sg * sg) as u64;
            }
            // SAFETY: `table` is this launch's table and work-item l's
            // private block is `stride` words at l * stride.
            unsafe { s.point_private(table, pbase.add(l * stride * 8)) };
            // SAFETY: the continuation function was compiled for this
            // program's module with this kernel's flattened arguments
            // (`args`); its context's slots point at memory that lives
            // for the group (buffers, the group's local memory, `private`),
            // its frame is work-item l's `fstride` words, and `state` is 0
            // or a barrier this work-item returned at; the code checks
            // every access against the slots and never unwinds.
            let r = unsafe { (entry.func)(&mut ctx, args, fbase.add(l * fstride * 8), state) };
            if r == STOPPED {
                raise(&mut ctx);
            }
            reached[l] = r;
            match first {
                None => first = Some(r),
                Some(f) => same &= f == r,
            }
        });
        if !same {
            diverged(s, entry, g, &reached);
        }
        let Some(k) = first.filter(|k| *k != 0) else {
            return;
        };
        let spec = &entry.barriers[k as usize - 1];
        let site = s.build.sites[spec.site as usize];
        let flags = fence_flags(spec.semantics);
        if let Err(e) = g.barrier_dyn(flags, scope(spec.mem_scope), site) {
            // As the coroutine engine does: the first work-item to arrive
            // fails with the barrier's error.
            g.for_each_in(0..1, |_| panic!("{e}\n\tat {site}"));
        }
        state = k;
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
