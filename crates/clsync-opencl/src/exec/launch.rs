//! One launch: the memory each work-item's slot table points at, shared by
//! both engines ([`Setup`]), the choice of engine, and the coroutine
//! engine's work-item.

use std::panic::resume_unwind;
use std::sync::atomic::AtomicU8;
use std::sync::Mutex;

use clsync::{Launch, LaunchError, LocalArg, Runtime, WorkItem};

use super::collectives::Exchanges;
use super::copies::{self, Copies};
use super::ctx::{self, builtin, HostSide, ItemCtx, Runner, Slot, SlotInfo, Stop, QUIET_OWNED};
use super::report::Reports;
use super::scratch::Reused;
use super::{aligned, loops, Bound, Findings, RunError, SendPtr, ALIGN};
use crate::program::{ArgKind, KernelInfo, Program};
use crate::translate::{Compiled, EntryFn};

/// Whether `CLSYNC_LANES=0` asks for work-item loops of one work-item
/// per iteration, without lane batches (to compare the two).
fn lanes_off() -> bool {
    std::env::var("CLSYNC_LANES").is_ok_and(|v| v == "0")
}

/// Whether `CLSYNC_ENGINE=coroutines` asks for the coroutine engine for
/// every kernel (to compare the engines on one kernel).
fn coroutines_only() -> bool {
    std::env::var("CLSYNC_ENGINE").is_ok_and(|v| v == "coroutines")
}

/// What the work-items of a launch share.
pub(super) struct Setup<'a> {
    pub p: &'a Program,
    pub k: &'a KernelInfo,
    pub build: &'a Compiled,
    /// The flattened argument words.
    pub words: Vec<u64>,
    /// What each slot is, for reports.
    infos: Vec<SlotInfo>,
    /// The slot table's part that every work-item shares.
    table: Vec<(SendPtr, u64)>,
    /// Local arguments: (slot, bytes) and the launch's local memory for it.
    locals: Vec<(usize, u64, LocalArg<u8>)>,
    /// The kernels' `local` variables, one block.
    workgroup: Option<LocalArg<u8>>,
    /// By-value struct arguments: (offset in the private block, bytes).
    byval: Vec<(usize, Vec<u8>)>,
    /// Each private variable and by-value argument: (slot, offset in the
    /// work-item's private block, bytes).
    pub private: Vec<(usize, usize, u64)>,
    /// Words of a work-item's private block.
    pub private_words: usize,
    pub checked: bool,
    /// A checked launch that does not run on from divergent barriers, or
    /// runs as work-item loops (which stop taking them in a group once it
    /// diverged): the build's race-free loads are taken at their word (see
    /// `ItemCtx::race_free`).
    pub(super) race_free: bool,
    /// Checked launches: the checker's id of each source location of the
    /// build, by the index compiled code passes (interned once here, not
    /// at each access).
    site_ids: Vec<clsync::checker::engine::SiteId>,
    /// Checked launches: the shadows of buffers the host did not write
    /// (zero bytes: unwritten), by slot.
    global_shadows: Vec<(usize, Box<[AtomicU8]>)>,
    /// Checked launches: the shadows of the local arguments and of the
    /// block of `local` variables, in the group's local memory (which
    /// starts zeroed, so unwritten).
    local_shadows: Vec<(usize, LocalArg<u8>)>,
    workgroup_shadow: Option<LocalArg<u8>>,
    /// Checked launches: the slots whose in-bounds reads compiled code
    /// need not report (`ItemCtx::quiet`), a byte per slot and one for the
    /// sentinel: buffers that nothing in the launch writes
    /// (`SlotInfo::unwritten`), that the host wrote (no shadow) and that
    /// may be read. The race checker leaves such reads out anyway, and
    /// there is nothing uninitialized for them to read.
    quiet: Vec<u8>,
    reports: Mutex<Reports>,
    copies: Copies,
    exchanges: Exchanges,
    /// The image arguments, by handle minus one.
    images: Vec<super::image::ImageRef>,
}

impl Setup<'_> {
    /// The slot table of a group whose local memory `local` gives, in
    /// `slots` (emptied first), and after its last slot the sentinel that
    /// compiled code reads for a slot past the table (see `Fx::address`):
    /// its length is the context's `nslots` plus one.
    pub(super) fn group_slots_in(
        &self,
        slots: &mut Vec<Slot>,
        local: impl Fn(LocalArg<u8>) -> *mut u8,
    ) {
        slots.clear();
        slots.extend(self.table.iter().map(|(b, len)| Slot {
            base: b.0,
            len: *len,
        }));
        if let Some(wg) = self.workgroup {
            let base = aligned(local(wg));
            for (id, slot, off) in &self.build.plan.workgroup {
                // SAFETY: the group's block holds every workgroup variable
                // at its planned offset (`plan_slots` summed their sizes).
                slots[*slot as usize] = Slot {
                    base: unsafe { base.add(*off as usize) },
                    len: self.p.variable_size(*id),
                };
            }
        }
        for (slot, bytes, arg) in &self.locals {
            slots[*slot] = Slot {
                base: aligned(local(*arg)),
                len: *bytes,
            };
        }
        slots.push(Slot::NULL);
    }

    /// A checked launch's shadow table for a work-item, in `t`: the
    /// group's local memory from `local`, the work-item's private shadow
    /// block `private` (`private_words` words, as its private block).
    pub(super) fn shadows_in(
        &self,
        t: &mut Vec<*mut u8>,
        local: impl Fn(LocalArg<u8>) -> *mut u8,
        private: *mut u8,
    ) {
        t.clear();
        t.resize(self.table.len(), std::ptr::null_mut());
        for (slot, sh) in &self.global_shadows {
            t[*slot] = sh.as_ptr() as *mut u8;
        }
        if let Some(wg) = self.workgroup_shadow {
            let base = local(wg);
            for (_, slot, off) in &self.build.plan.workgroup {
                // SAFETY: the shadow block is as large as the variables' block.
                t[*slot as usize] = unsafe { base.add(*off as usize) };
            }
        }
        for (slot, arg) in &self.local_shadows {
            t[*slot] = local(*arg);
        }
        for (slot, off, _) in &self.private {
            // SAFETY: `private` is a block as large as the private block.
            t[*slot] = unsafe { private.add(*off) };
        }
        // By-value arguments are written by the host.
        for (off, bytes) in &self.byval {
            // SAFETY: as above; `bind` placed them inside the block.
            unsafe { std::ptr::write_bytes(private.add(*off), 1, bytes.len()) };
        }
    }

    /// Fills a work-item's fresh private block: the by-value arguments.
    ///
    /// # Safety
    ///
    /// `block` points at `private_words` writable words.
    pub unsafe fn init_private(&self, block: *mut u8) {
        for (off, bytes) in &self.byval {
            // SAFETY: `bind` placed each by-value argument inside
            // `private_bytes`, which the block holds.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), block.add(*off), bytes.len()) };
        }
    }

    /// Points the private slots of `slots` at the work-item's `block`.
    ///
    /// # Safety
    ///
    /// `slots` is a table of this launch (as `group_slots_in` makes it) and
    /// `block` a private block of `private_words` words.
    #[inline]
    pub unsafe fn point_private(&self, slots: *mut Slot, block: *mut u8) {
        for (slot, off, len) in &self.private {
            // SAFETY: the slot is in the table and the offset inside the
            // block (our contract, and `plan_slots`/`bind` laid them out).
            unsafe {
                *slots.add(*slot) = Slot {
                    base: block.add(*off),
                    len: *len,
                }
            };
        }
    }

    /// The runtime side of a work-item run by `runner`.
    pub fn host<'s>(&'s self, runner: Runner<'s>) -> HostSide<'s> {
        HostSide {
            runner,
            sites: &self.build.sites,
            site_ids: &self.site_ids,
            slot_names: &self.infos,
            kernel: &self.k.name,
            checked: self.checked,
            reports: &self.reports,
            legacy_atomics: self.p.legacy_atomics,
            copies: &self.copies,
            exchanges: &self.exchanges,
            significant: &self.build.significant,
            images: &self.images,
        }
    }

    /// A context for a work-item whose slot table is `slots`.
    pub fn context(&self, slots: *const Slot, nslots: usize, host: &HostSide<'_>) -> ItemCtx {
        ItemCtx {
            slots,
            nslots: nslots as u64,
            status: 0,
            builtins: [0; builtin::COUNT],
            scratch: [0; ctx::SCRATCH_BYTES / 8],
            answer: 0,
            quiet: if self.quiet.is_empty() {
                std::ptr::null()
            } else {
                self.quiet.as_ptr()
            },
            host: (host as *const HostSide<'_>).cast(),
            stop: None,
            events: Default::default(),
            collectives: Default::default(),
            shadows: std::ptr::null(),
            race_free: 0,
            privates: std::ptr::null_mut(),
            spin: (0, 0, 0),
            atomic_shadow: 0,
            chained: 0,
            narrowed_from: u64::MAX,
            narrowed_at: 0,
        }
    }
}

/// Re-raises why compiled code stopped its work-item, as a panic of that
/// work-item: a fault's message, or the unwind (a cancelled launch) that a
/// runtime call caught.
pub(super) fn raise(ctx: &mut ItemCtx) {
    match ctx.stop.take() {
        None => {}
        Some(Stop::Unwind(payload)) => resume_unwind(payload),
        Some(Stop::Fault(message, site)) => {
            // The panic's site is the kernel's line, not this one.
            let _at = site.map(clsync::checker::SiteScope::enter);
            panic!("{message}")
        }
    }
}

/// Runs kernel `k` with its bound arguments on the engine that fits it.
#[allow(clippy::too_many_arguments)]
pub(super) fn run(
    p: &Program,
    build: &Compiled,
    k: &KernelInfo,
    entry: EntryFn,
    rt: &Runtime,
    mut launch: Launch,
    bound: Bound,
    checked: bool,
    engine: super::Engine,
) -> Result<Findings, RunError> {
    // Local memory as bytes: a checked launch keeps its shadow per
    // element, and a byte is the one element size that never puts two
    // scalars of a kernel in one shadow cell. ALIGN spare bytes let the
    // kernel's memory start aligned (`aligned`).
    let local_params = k.params.iter().filter(|p| p.kind == ArgKind::Local);
    let locals = bound
        .locals
        .iter()
        .zip(local_params)
        .map(|((slot, bytes, _), param)| {
            let arg = launch.local_named::<u8>(param.name.clone(), bytes + ALIGN);
            (*slot, *bytes as u64, arg)
        })
        .collect();
    let plan = &build.plan;
    let workgroup = (plan.workgroup_bytes > 0).then(|| {
        launch.local_named::<u8>("local variables", plan.workgroup_bytes as usize + ALIGN)
    });
    let (mut local_shadows, mut workgroup_shadow, mut global_shadows) =
        (Vec::new(), None, Vec::new());
    if checked {
        for (slot, bytes, _) in &bound.locals {
            local_shadows.push((*slot, launch.local_named::<u8>("(shadow)", (*bytes).max(1))));
        }
        workgroup_shadow = (plan.workgroup_bytes > 0)
            .then(|| launch.local_named::<u8>("(shadow)", plan.workgroup_bytes as usize));
        for (slot, len) in &bound.uninitialized {
            global_shadows.push((*slot, (0..*len).map(|_| AtomicU8::new(0)).collect()));
        }
    }
    let mut private: Vec<(usize, usize, u64)> = plan
        .private
        .iter()
        .map(|(id, slot, off)| (*slot as usize, *off as usize, p.variable_size(*id)))
        .collect();
    private.extend(
        bound
            .byval
            .iter()
            .map(|(slot, off, bytes)| (*slot, *off, bytes.len() as u64)),
    );
    // The build's proofs of buffers (`SlotInfo::owned`) hold in a range of
    // one dimension, whose global ids fit 31 bits.
    let one_d = launch.range().resolve().is_ok_and(|g| {
        let (size, offset) = (g.global(), g.offset());
        size[1] == 1 && size[2] == 1 && offset[0].saturating_add(size[0]) <= 1 << 31
    });
    let quiet = if checked {
        let mut q = vec![0u8; bound.table.len() + 1];
        for (slot, info) in bound.infos.iter().enumerate() {
            let shadowed = global_shadows.iter().any(|(s, _)| *s == slot);
            let readable = info.access != crate::exec::Access::WriteOnly;
            q[slot] = u8::from(info.unwritten && !shadowed && readable)
                | if info.owned && one_d { QUIET_OWNED } else { 0 };
        }
        q
    } else {
        Vec::new()
    };
    let group_entry = build
        .groups
        .get(&k.name)
        .filter(|_| !engine.coroutines && !coroutines_only());
    let loops = group_entry.is_some();
    let setup = Setup {
        p,
        k,
        build,
        words: bound.words,
        images: bound.images,
        infos: bound.infos,
        table: bound
            .table
            .iter()
            .map(|s| (SendPtr(s.base), s.len))
            .collect(),
        locals,
        workgroup,
        byval: bound.byval.into_iter().map(|(_, o, b)| (o, b)).collect(),
        private,
        private_words: bound.private_bytes.div_ceil(8),
        checked,
        race_free: checked && (!launch.runs_on_divergence() || loops),
        site_ids: if checked {
            build
                .sites
                .iter()
                .map(|&s| clsync::checker::engine::SiteId::new(s))
                .collect()
        } else {
            Vec::new()
        },
        global_shadows,
        local_shadows,
        workgroup_shadow,
        quiet,
        reports: Mutex::default(),
        copies: Copies::default(),
        exchanges: Exchanges::default(),
    };
    let result = match group_entry {
        Some(g) => loops::run(&setup, g, rt, &launch, !engine.no_lanes && !lanes_off()),
        None => on_coroutines(&setup, entry, rt, &launch),
    };
    let diagnostics = setup
        .reports
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_vec();
    match result {
        Ok(_) => Ok(Findings {
            diagnostics,
            checker: Vec::new(),
        }),
        // The checker's reads of local memory no work-item wrote are left
        // to the shadows of the checked build, which report only what
        // Oclgrind does (an uninitialized value stored to global memory,
        // not a struct's padding copied through local memory).
        Err(LaunchError::Reported(r)) => Ok(Findings {
            diagnostics,
            checker: r
                .reports
                .into_iter()
                .filter(|r| r.kind != clsync::checker::ReportKind::UninitializedLocal)
                .collect(),
        }),
        Err(error) => Err(RunError::Launch { error, diagnostics }),
    }
}

/// The coroutine engine: each work-item calls the kernel's entry stub
/// with its own context, and a barrier suspends it.
fn on_coroutines(
    s: &Setup<'_>,
    entry: EntryFn,
    rt: &Runtime,
    launch: &Launch,
) -> Result<clsync::LaunchSummary, LaunchError> {
    rt.launch(launch, |wi| {
        // The work-item's tables, from the thread's free lists (see
        // `scratch`).
        let mut slots = Reused::<Slot>::take();
        s.group_slots_in(&mut slots, |arg| wi.local(arg).raw_bytes().0);
        let mut private = Reused::filled(s.private_words, 0u64);
        let pbase = private.as_mut_ptr() as *mut u8;
        // SAFETY: `private` has `private_words` words and `slots` is this
        // launch's table.
        unsafe {
            s.init_private(pbase);
            s.point_private(slots.as_mut_ptr(), pbase);
        }
        let host = s.host(Runner::Item(wi));
        let mut ctx = s.context(slots.as_ptr(), slots.len() - 1, &host);
        ctx.builtins = builtins(wi);
        ctx.take_proofs(s.race_free);
        let mut private_shadow = Reused::<u64>::take();
        let mut shadows = Reused::<*mut u8>::take();
        if s.checked {
            private_shadow.resize(s.private_words, 0);
            let p = private_shadow.as_mut_ptr() as *mut u8;
            s.shadows_in(&mut shadows, |arg| wi.local(arg).raw_bytes().0, p);
        }
        if s.checked {
            ctx.shadows = shadows.as_ptr();
        }
        // SAFETY: `entry` was compiled for this program's module and takes
        // its context and the flattened arguments `bind` made for this
        // kernel; every slot points at memory that lives until the call
        // returns (the buffers outlive the launch, local memory the group,
        // `private` and `slots` this frame); the code checks every access
        // against the slots and never unwinds.
        unsafe { entry(&mut ctx, s.words.as_ptr()) };
        copies::finish(&mut ctx);
        drop(private);
        drop(private_shadow);
        raise(&mut ctx);
    })
}

/// Fills the built-ins that are the same for a whole group: `per_dim(d)`
/// gives the group id, global size, local size, enqueued local size,
/// number of groups and global offset in dimension `d`; `counts` the work
/// dimension, maximum sub-group size, number of sub-groups and enqueued
/// number of sub-groups.
pub(super) fn group_builtins(
    b: &mut [u64; builtin::COUNT],
    per_dim: impl Fn(u32) -> [usize; 6],
    counts: [u32; 4],
) {
    use builtin::*;
    for d in 0..3u32 {
        let firsts = [
            GROUP_ID,
            GLOBAL_SIZE,
            LOCAL_SIZE,
            ENQUEUED_LOCAL_SIZE,
            NUM_GROUPS,
            GLOBAL_OFFSET,
        ];
        for (first, v) in firsts.into_iter().zip(per_dim(d)) {
            b[first + d as usize] = v as u64;
        }
    }
    let singles = [
        WORK_DIM,
        MAX_SUB_GROUP_SIZE,
        NUM_SUB_GROUPS,
        ENQUEUED_NUM_SUB_GROUPS,
    ];
    for (i, v) in singles.into_iter().zip(counts) {
        b[i] = v as u64;
    }
}

/// Every built-in of a coroutine's work-item.
fn builtins(wi: &WorkItem<'_>) -> [u64; builtin::COUNT] {
    let mut b = [0u64; builtin::COUNT];
    group_builtins(
        &mut b,
        |d| {
            [
                wi.get_group_id(d),
                wi.get_global_size(d),
                wi.get_local_size(d),
                wi.get_enqueued_local_size(d),
                wi.get_num_groups(d),
                wi.get_global_offset(d),
            ]
        },
        [
            wi.get_work_dim(),
            wi.get_max_sub_group_size(),
            wi.get_num_sub_groups(),
            wi.get_enqueued_num_sub_groups(),
        ],
    );
    for d in 0..3u32 {
        b[builtin::GLOBAL_ID + d as usize] = wi.get_global_id(d) as u64;
        b[builtin::LOCAL_ID + d as usize] = wi.get_local_id(d) as u64;
    }
    b[builtin::GLOBAL_LINEAR_ID] = wi.get_global_linear_id() as u64;
    b[builtin::LOCAL_LINEAR_ID] = wi.get_local_linear_id() as u64;
    b[builtin::SUB_GROUP_SIZE] = wi.get_sub_group_size() as u64;
    b[builtin::SUB_GROUP_ID] = wi.get_sub_group_id() as u64;
    b[builtin::SUB_GROUP_LOCAL_ID] = wi.get_sub_group_local_id() as u64;
    b
}
