//! The work-item context: what compiled code reads and writes of its
//! work-item, laid out as the code generator assumes (`#[repr(C)]`, offsets
//! below).
//!
//! # Pointers
//!
//! A pointer in compiled code is 64 bits: the memory object's *slot* in the
//! top 16 bits, the byte offset into it in the low 48. Every access looks
//! its slot up in the work-item's slot table (base address and length) and
//! checks the offset against the length, so an access out of bounds, of a
//! null pointer (slot 0, length 0) or of a pointer that never pointed
//! anywhere is a report that names the object, never a stray write.
//! Pointer arithmetic is integer arithmetic on the offset; a pointer cast to
//! an integer and back keeps its slot.

use std::any::Any;

use clsync::sync::Site;

/// Bits of a pointer that hold the offset.
pub const OFFSET_BITS: u64 = 48;
/// Mask of the offset.
pub const OFFSET_MASK: u64 = (1 << OFFSET_BITS) - 1;

/// One memory object as compiled code sees it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    /// Its first byte.
    pub base: *mut u8,
    /// Its length in bytes.
    pub len: u64,
}

impl Slot {
    /// No memory: every access faults.
    pub const NULL: Slot = Slot {
        base: std::ptr::null_mut(),
        len: 0,
    };
}

/// Indices into [`ItemCtx::builtins`].
pub mod builtin {
    /// `get_global_id(0..3)`.
    pub const GLOBAL_ID: usize = 0;
    /// `get_local_id(0..3)`.
    pub const LOCAL_ID: usize = 3;
    /// `get_group_id(0..3)`.
    pub const GROUP_ID: usize = 6;
    /// `get_global_size(0..3)`.
    pub const GLOBAL_SIZE: usize = 9;
    /// `get_local_size(0..3)`.
    pub const LOCAL_SIZE: usize = 12;
    /// `get_enqueued_local_size(0..3)`.
    pub const ENQUEUED_LOCAL_SIZE: usize = 15;
    /// `get_num_groups(0..3)`.
    pub const NUM_GROUPS: usize = 18;
    /// `get_global_offset(0..3)`.
    pub const GLOBAL_OFFSET: usize = 21;
    /// `get_global_linear_id()`.
    pub const GLOBAL_LINEAR_ID: usize = 24;
    /// `get_local_linear_id()`.
    pub const LOCAL_LINEAR_ID: usize = 25;
    /// `get_work_dim()`.
    pub const WORK_DIM: usize = 26;
    /// `get_sub_group_size()`.
    pub const SUB_GROUP_SIZE: usize = 27;
    /// `get_max_sub_group_size()`.
    pub const MAX_SUB_GROUP_SIZE: usize = 28;
    /// `get_num_sub_groups()`.
    pub const NUM_SUB_GROUPS: usize = 29;
    /// `get_enqueued_num_sub_groups()`.
    pub const ENQUEUED_NUM_SUB_GROUPS: usize = 30;
    /// `get_sub_group_id()`.
    pub const SUB_GROUP_ID: usize = 31;
    /// `get_sub_group_local_id()`.
    pub const SUB_GROUP_LOCAL_ID: usize = 32;
    /// How many there are.
    pub const COUNT: usize = 33;

    /// Whether built-in `i` differs between the work-items of a group.
    pub const fn per_item(i: usize) -> bool {
        matches!(
            i,
            0..=5
                | GLOBAL_LINEAR_ID
                | LOCAL_LINEAR_ID
                | SUB_GROUP_SIZE
                | SUB_GROUP_ID
                | SUB_GROUP_LOCAL_ID
        )
    }
}

/// Byte offset of [`ItemCtx::slots`].
pub const CTX_SLOTS: i32 = 0;
/// Byte offset of [`ItemCtx::nslots`].
pub const CTX_NSLOTS: i32 = 8;
/// Byte offset of [`ItemCtx::status`].
pub const CTX_STATUS: i32 = 16;
/// Byte offset of [`ItemCtx::builtins`].
pub const CTX_BUILTINS: i32 = 24;
/// Byte offset of [`ItemCtx::scratch`].
pub const CTX_SCRATCH: i32 = 24 + 8 * builtin::COUNT as i32;
/// Bytes of [`ItemCtx::scratch`]: the largest access that a checked launch
/// skips rather than stops at (a `double16` is 128).
pub const SCRATCH_BYTES: usize = 256;

/// Byte offset of [`ItemCtx::answer`].
pub const CTX_ANSWER: i32 = CTX_SCRATCH + SCRATCH_BYTES as i32;
/// Byte offset of [`ItemCtx::quiet`].
pub const CTX_QUIET: i32 = CTX_ANSWER + 8;
/// [`ItemCtx::quiet`]'s bit for an object whose in-bounds reads need no
/// runtime call.
pub const QUIET_READS: u8 = 1;
/// [`ItemCtx::quiet`]'s bit for a buffer whose proven accesses
/// (`translate::slices`) need none, where memory's shadow allows.
pub const QUIET_OWNED: u8 = 2;
/// Byte offset of [`ItemCtx::shadows`].
pub const CTX_SHADOWS: i32 = CTX_QUIET + 8;
/// Byte offset of [`ItemCtx::race_free`].
pub const CTX_RACE_FREE: i32 = CTX_SHADOWS + 8;
/// [`ItemCtx::race_free`]'s bit for the build's proofs that hold in every
/// group (`translate::intervals::Proof::Always`).
pub const RACE_FREE: u64 = 1;
/// [`ItemCtx::race_free`]'s bit for those that hold in a group of one
/// dimension (`Proof::OneDimensional`).
pub const RACE_FREE_1D: u64 = 2;

/// Why compiled code stopped early.
#[derive(Debug)]
pub enum Stop {
    /// An invalid access or another error in the kernel: the message, and
    /// the kernel's line where known (which the launch error then names,
    /// rather than the runtime's own).
    Fault(String, Option<Site>),
    /// A panic unwound out of a runtime call (a cancelled launch unwinding
    /// a barrier): resumed once the compiled code has returned.
    Unwind(Box<dyn Any + Send>),
}

/// One work-item's context.
#[repr(C)]
pub struct ItemCtx {
    /// The slot table.
    pub slots: *const Slot,
    /// Its length, not counting the null sentinel after the last slot
    /// that compiled code reads for a slot past the table.
    pub nslots: u64,
    /// Nonzero once the work-item must stop: compiled code tests it after
    /// each call that can fail and returns.
    pub status: u64,
    /// The work-item functions' values.
    pub builtins: [u64; builtin::COUNT],
    /// Where a checked launch's invalid accesses go once reported, as
    /// Oclgrind skips them: loads read what is here (zero unless an
    /// invalid store wrote it), stores write here.
    pub scratch: [u64; SCRATCH_BYTES / 8],
    /// The result of a helper called through a cold path's trampoline,
    /// which returns nothing in registers.
    pub answer: u64,
    /// In a checked launch, a byte per slot and one for the sentinel
    /// after them: [`QUIET_READS`] where an in-bounds read needs no
    /// runtime call, since nothing in the launch writes the object, the
    /// host wrote all of it and it may be read (see `Setup::quiet`);
    /// [`QUIET_OWNED`] where the build's proofs of the buffer's accesses
    /// hold (`SlotInfo::owned`). Compiled code skips the call there. Null
    /// in unchecked launches.
    pub quiet: *const u8,
    /// In a checked launch, the shadow of each slot's bytes (null: all
    /// initialized): a byte is nonzero once something wrote it. Null in
    /// unchecked launches.
    pub shadows: *const *mut u8,
    /// Which of the build's proofs (`translate::intervals`' race-free
    /// loads and stores, `translate::slices`' buffers) the checker takes
    /// at their word: [`RACE_FREE`] and, in a group of one dimension,
    /// [`RACE_FREE_1D`], in a checked launch that does not run on from
    /// divergent barriers and in a group of work-item loops until it
    /// diverges (see `exec::loops`); 0 for none. Compiled code skips the
    /// call for such an access where memory's shadow allows
    /// (`Fx::note_access`); a proof by rows also tests the group's local
    /// size there.
    pub race_free: u64,
    /// The runtime side, for the calls compiled code makes.
    pub host: *const HostSide<'static>,
    /// Why it stopped.
    pub stop: Option<Stop>,
    /// Its async copies' events.
    pub events: crate::exec::copies::ItemEvents,
    /// How many collectives it made, per scope.
    pub collectives: crate::exec::collectives::ItemCollectives,
    /// In a checked work-item loop: each work-item's private memory and
    /// shadow while the others run (null otherwise).
    pub privates: *mut crate::exec::loops::Privates,
    /// In a checked launch: the address and value of its last atomic load,
    /// and how many loads in a row found them (`exec::checked::spinning`).
    pub spin: (u64, u64, u32),
    /// In a checked launch, the shadow of the value the last atomic
    /// through the runtime read (`exec::checked::clsync_atomic`): nonzero
    /// where some byte of it was never written.
    pub atomic_shadow: u64,
    /// In an unchecked work-item loop: how many barrier intervals the
    /// compiled code ran on its own since the runtime last reset it, each
    /// after a barrier it passed without returning
    /// (`translate::continuation::chain`).
    pub chained: u64,
    /// In an unchecked work-item loop whose compiled code ran only the
    /// work-items below a threshold (`translate::continuation::narrow`):
    /// the first linear id it did not run, `u64::MAX` while none. The
    /// runtime writes their places ([`narrowed_at`](Self::narrowed_at))
    /// and resets it.
    pub narrowed_from: u64,
    /// The barrier those work-items wait at.
    pub narrowed_at: u64,
}

/// Byte offset of [`ItemCtx::atomic_shadow`].
pub const CTX_ATOMIC_SHADOW: i32 = std::mem::offset_of!(ItemCtx, atomic_shadow) as i32;

/// Byte offset of [`ItemCtx::narrowed_from`].
pub const CTX_NARROWED_FROM: i32 = std::mem::offset_of!(ItemCtx, narrowed_from) as i32;

/// Byte offset of [`ItemCtx::narrowed_at`].
pub const CTX_NARROWED_AT: i32 = std::mem::offset_of!(ItemCtx, narrowed_at) as i32;

/// Byte offset of [`ItemCtx::chained`].
pub const CTX_CHAINED: i32 = std::mem::offset_of!(ItemCtx, chained) as i32;

/// What the runtime calls need besides the context.
pub struct HostSide<'a> {
    /// What runs the work-item: its coroutine, or its group's loop.
    pub runner: Runner<'a>,
    /// The program's source locations, by the index compiled code passes.
    pub sites: &'a [Site],
    /// The checker's ids of `sites` (checked launches; empty otherwise).
    pub site_ids: &'a [clsync::checker::engine::SiteId],
    /// What each slot is, for reports.
    pub slot_names: &'a [SlotInfo],
    /// The kernel's name.
    pub kernel: &'a str,
    /// Whether the launch is checked: invalid accesses are reported and
    /// skipped rather than stopping the work-item.
    pub checked: bool,
    /// The reports of a checked launch.
    pub reports: &'a std::sync::Mutex<crate::exec::report::Reports>,
    /// Whether work-group-scope relaxed atomics are OpenCL 1.x atomics.
    pub legacy_atomics: bool,
    /// The groups' async copies, for a checked launch's comparisons.
    pub copies: &'a crate::exec::copies::Copies,
    /// The open exchanges of collectives.
    pub exchanges: &'a crate::exec::collectives::Exchanges,
    /// Which bytes of each copied type are values, not padding (see
    /// `Compiled::significant`).
    pub significant: &'a [Vec<bool>],
    /// The launch's images, by handle minus one.
    pub images: &'a [crate::exec::image::ImageRef],
}

/// What runs a work-item.
#[derive(Clone, Copy)]
pub enum Runner<'a> {
    /// The coroutine engine: the work-item itself, for barriers and the
    /// runtime calls of checked builds.
    Item(&'a clsync::WorkItem<'a>),
    /// A work-item loop of its group (a continuation function: no barrier,
    /// collective or async copy reaches the runtime through it; a checked
    /// build's accesses, atomics and fences do, as the work-item the loop
    /// named last, `Group::name_item`).
    Group(&'a clsync::Group<'a>),
}

impl<'a> Runner<'a> {
    /// The work-item, for the runtime calls that only the coroutine build
    /// makes (barriers, collectives, async copies, sub-group operations):
    /// `continuation::plan` keeps kernels that make them off work-item
    /// loops.
    pub fn item(&self) -> &'a clsync::WorkItem<'a> {
        match self {
            Runner::Item(wi) => wi,
            Runner::Group(_) => {
                unreachable!("a coroutine-only runtime call from a work-item loop")
            }
        }
    }

    /// A cancellation point.
    pub fn cancellation_point(&self) {
        match self {
            Runner::Item(wi) => wi.cancellation_point(),
            Runner::Group(g) => g.cancellation_point(),
        }
    }
}

/// What a slot holds, for reports.
#[derive(Clone, Debug)]
pub struct SlotInfo {
    /// The address space, as Oclgrind's reports name it: `global`,
    /// `constant`, `local` or `private`.
    pub space: &'static str,
    /// The object: an argument's or a variable's name.
    pub name: String,
    /// How the host allowed kernels to use it.
    pub access: crate::exec::Access,
    /// No work-item of the launch can write it: a buffer bound only to
    /// parameters the kernel never writes through (`Param::written`), that
    /// no other buffer argument overlaps. Its reads cannot race, so a
    /// checked launch does not record them.
    pub unwritten: bool,
    /// Its accesses need no record, in a launch of one dimension: a
    /// buffer bound only to a parameter whose accesses the build proves
    /// stay in each group's slice and race with nothing
    /// (`Param::owned`), that no other buffer argument overlaps, and that
    /// the kernel uses as the host allowed.
    pub owned: bool,
}

// Offsets the code generator relies on.
const _: () = {
    assert!(std::mem::offset_of!(ItemCtx, slots) == CTX_SLOTS as usize);
    assert!(std::mem::offset_of!(ItemCtx, nslots) == CTX_NSLOTS as usize);
    assert!(std::mem::offset_of!(ItemCtx, status) == CTX_STATUS as usize);
    assert!(std::mem::offset_of!(ItemCtx, builtins) == CTX_BUILTINS as usize);
    assert!(std::mem::offset_of!(ItemCtx, scratch) == CTX_SCRATCH as usize);
    assert!(std::mem::offset_of!(ItemCtx, answer) == CTX_ANSWER as usize);
    assert!(std::mem::offset_of!(ItemCtx, quiet) == CTX_QUIET as usize);
    assert!(std::mem::offset_of!(ItemCtx, shadows) == CTX_SHADOWS as usize);
    assert!(std::mem::offset_of!(ItemCtx, race_free) == CTX_RACE_FREE as usize);
    assert!(std::mem::size_of::<Slot>() == 16);
};

impl ItemCtx {
    /// Takes the build's race-free loads at their word where `race_free`
    /// (see [`ItemCtx::race_free`]), those of one dimension where the
    /// group the context's built-ins describe is.
    pub fn take_proofs(&mut self, race_free: bool) {
        let one_d = self.builtins[builtin::LOCAL_SIZE + 1] <= 1
            && self.builtins[builtin::LOCAL_SIZE + 2] <= 1;
        self.race_free = match (race_free, one_d) {
            (false, _) => 0,
            (true, false) => RACE_FREE,
            (true, true) => RACE_FREE | RACE_FREE_1D,
        };
    }
}
