//! The runtime calls compiled code makes: barriers, faults, copies,
//! address-space casts (the checked build's are in [`super::checked`], the
//! math library in [`super::math`]). Each is `extern "C"`, takes the work-item's context first,
//! and never unwinds: a panic inside (a cancelled launch unwinding out of
//! a barrier) is caught, kept in the context, and the call sets
//! [`ItemCtx::status`]; the compiled code then returns, and the runtime
//! side resumes the panic once it is back in Rust frames (unwinding through
//! generated frames, which have no unwind tables, would abort).

use std::panic::{catch_unwind, AssertUnwindSafe};

use clsync::sync::{BarrierKind, MemScope};

use super::ctx::{ItemCtx, Slot, Stop, OFFSET_BITS, OFFSET_MASK};

/// What an access that faulted was doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum AccessKind {
    /// A load.
    Read = 0,
    /// A store.
    Write = 1,
    /// An atomic read-modify-write, load or store.
    Atomic = 2,
}

/// SPIR-V's `Scope` operand as the runtime's scope.
pub fn scope(spirv: u32) -> MemScope {
    match spirv {
        0 => MemScope::AllSvmDevices,
        1 => MemScope::Device,
        2 => MemScope::WorkGroup,
        3 => MemScope::SubGroup,
        _ => MemScope::WorkItem,
    }
}

/// SPIR-V memory semantics' storage bits as `cl_mem_fence_flags`.
pub fn fence_flags(semantics: u32) -> u32 {
    let mut f = 0;
    if semantics & 0x100 != 0 {
        f |= 1; // WorkgroupMemory: CLK_LOCAL_MEM_FENCE
    }
    if semantics & 0x200 != 0 {
        f |= 2; // CrossWorkgroupMemory: CLK_GLOBAL_MEM_FENCE
    }
    if semantics & 0x800 != 0 {
        f |= 4; // ImageMemory: CLK_IMAGE_MEM_FENCE
    }
    f
}

/// Marks the work-item stopped for `why`.
pub(crate) fn stop(ctx: &mut ItemCtx, why: Stop) {
    ctx.status = 1;
    if ctx.stop.is_none() {
        ctx.stop = Some(why);
    }
}

/// The place of a site index, for messages.
pub(crate) fn site_text(ctx: &ItemCtx, site: u32) -> String {
    // SAFETY: `host` is set by the launch before compiled code runs and
    // outlives the call (see `exec::launch`).
    let host = unsafe { &*ctx.host };
    host.sites
        .get(site as usize)
        .map(|s| s.to_string())
        .unwrap_or_else(|| "<unknown>".into())
}

/// The message of an invalid access, Oclgrind's headline first.
pub(crate) fn fault_message(ctx: &ItemCtx, ptr: u64, size: u64, kind: u32, site: u32) -> String {
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    let slot = (ptr >> OFFSET_BITS) as usize;
    let off = ptr & OFFSET_MASK;
    let what = match kind & 0xff {
        1 => "write",
        _ => "read",
    };
    let at = site_text(ctx, site);
    if kind == 3 {
        return format!(
            "Unreachable code reached\n\tKernel: {}\n\tat {at}",
            host.kernel
        );
    }
    match host.slot_names.get(slot).filter(|_| slot != 0 && (slot as u64) < ctx.nslots) {
        Some(info) => {
            // SAFETY: slot < nslots, the table's length.
            let len = unsafe { (*ctx.slots.add(slot)).len };
            format!(
                "Invalid {what} of size {size} at {} memory address {ptr:#x}\n\tKernel: {}\n\t{} `{}` is {len} bytes; the access is at byte {off}\n\tat {at}",
                info.space, host.kernel, info.space, info.name
            )
        }
        None => format!(
            "Invalid memory {} of size {size} at address {ptr:#x} (a null or invalid pointer)\n\tKernel: {}\n\tat {at}",
            if kind & 0xff == 1 { "store" } else { "load" },
            host.kernel
        ),
    }
}

/// An access that missed the slot table: out of its object's bounds,
/// through an invalid pointer, or through a host address in shared virtual
/// memory ([`super::svm`]). Returns the address the access goes to: the
/// host address for shared virtual memory; the context's scratch area when
/// a checked launch has reported the access and skips it; 0 when the
/// work-item must stop (an unchecked launch, or an access too large to
/// skip).
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call (as
/// compiled code passes it), alive for the call.
pub(crate) unsafe extern "C" fn clsync_fault(
    ctx: *mut ItemCtx,
    ptr: u64,
    size: u64,
    kind: u32,
    site: u32,
) -> u64 {
    // A host address in shared virtual memory: used as it is.
    if kind & 0xff != 3 && super::svm::contains(ptr, size) {
        return ptr;
    }
    // SAFETY: compiled code passes its own context, which lives in the
    // work-item's Rust frame for the whole call.
    let ctx = unsafe { &mut *ctx };
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    if host.checked && kind & 0xff != 3 && size as usize <= super::ctx::SCRATCH_BYTES {
        let headline = headline(ctx, ptr, size, kind);
        let details = fault_details(ctx, ptr);
        let at = host.sites.get(site as usize).copied();
        super::report::add(ctx, headline, details, at);
        // Reported and skipped: the access goes to the context's scratch
        // area.
        return std::ptr::addr_of_mut!(ctx.scratch) as u64;
    }
    let msg = fault_message(ctx, ptr, size, kind, site);
    let at = host.sites.get(site as usize).copied();
    stop(ctx, Stop::Fault(msg, at));
    0
}

/// The address space a fault's `kind` names (bits 8 and up), from the
/// pointer's type: what the headline says for a pointer to no object.
fn static_space(kind: u32) -> Option<&'static str> {
    match kind >> 8 {
        1 => Some("global"),
        2 => Some("local"),
        3 => Some("private"),
        4 => Some("constant"),
        _ => None,
    }
}

/// Oclgrind's headline for an invalid access.
fn headline(ctx: &ItemCtx, ptr: u64, size: u64, kind: u32) -> String {
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    let slot = (ptr >> OFFSET_BITS) as usize;
    let write = kind & 0xff == 1;
    if let (None, Some(space)) = (
        host.slot_names
            .get(slot)
            .filter(|_| slot != 0 && (slot as u64) < ctx.nslots),
        static_space(kind),
    ) {
        return format!(
            "Invalid {} of size {size} at {space} memory address {ptr:#x}",
            if write { "write" } else { "read" }
        );
    }
    match host
        .slot_names
        .get(slot)
        .filter(|_| slot != 0 && (slot as u64) < ctx.nslots)
    {
        Some(info) => format!(
            "Invalid {} of size {size} at {} memory address {ptr:#x}",
            if write { "write" } else { "read" },
            info.space
        ),
        None => format!(
            "Invalid memory {} of size {size} at address {ptr:#x} (a null or invalid pointer)",
            if write { "store" } else { "load" }
        ),
    }
}

/// The object and offset of an invalid access, for a report's details.
fn fault_details(ctx: &ItemCtx, ptr: u64) -> String {
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    let slot = (ptr >> OFFSET_BITS) as usize;
    let off = ptr & OFFSET_MASK;
    match host
        .slot_names
        .get(slot)
        .filter(|_| slot != 0 && (slot as u64) < ctx.nslots)
    {
        Some(info) => {
            // SAFETY: slot < nslots, the table's length.
            let len = unsafe { (*ctx.slots.add(slot)).len };
            format!(
                "{} `{}` is {len} bytes; the access is at byte {off}",
                info.space, info.name
            )
        }
        None => "the pointer points at no memory object".into(),
    }
}

/// `OpControlBarrier`.
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call (as
/// compiled code passes it), alive for the call.
pub(crate) unsafe extern "C" fn clsync_barrier(
    ctx: *mut ItemCtx,
    exec_scope: u32,
    mem_scope: u32,
    semantics: u32,
    site: u32,
) {
    // SAFETY: as in `clsync_fault`.
    let ctx = unsafe { &mut *ctx };
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    let kind = if exec_scope == 3 {
        BarrierKind::SubGroup
    } else {
        BarrierKind::WorkGroup
    };
    let site = site_at(ctx, site);
    // A barrier with a run-time site: the scheduler compares its wait in a
    // round's general loop. (Giving compiled barriers the two-word arrival
    // of the fast path, by a `&'static Site`, was measured to slow the Rust
    // coroutine engine's barriers from 9.3 to 23 ns, and backed out.)
    let r = catch_unwind(AssertUnwindSafe(|| {
        host.runner
            .item()
            .barrier_dyn_at(kind, fence_flags(semantics), scope(mem_scope), site)
    }));
    match r {
        Ok(Ok(())) => {}
        Ok(Err(e)) => stop(ctx, Stop::Fault(format!("{e}\n\tat {site}"), Some(site))),
        Err(payload) => stop(ctx, Stop::Unwind(payload)),
    }
}

/// The wait of a non-uniform sub-group operation at site index `site`
/// (`WorkItem::sub_group_active_at`): the work-item is released with the
/// others of its sub-group that wait at operation `id` with it. A
/// cancellation stops the work-item, as at a barrier.
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call, alive
/// for the call.
pub(crate) unsafe fn clsync_sub_group_wait(ctx: *mut ItemCtx, site: u32, id: u64) {
    // SAFETY: as in `clsync_fault`.
    let ctx = unsafe { &mut *ctx };
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    let site = site_at(ctx, site);
    let r = catch_unwind(AssertUnwindSafe(|| {
        host.runner.item().sub_group_active_at(site, id)
    }));
    if let Err(payload) = r {
        stop(ctx, Stop::Unwind(payload));
    }
}

/// A loop's back-edge: the runtime's cancellation point for engines
/// (`WorkItem::cancellation_point`), which unwinds a cancelled work-item;
/// the unwind is kept and the work-item stops.
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call (as
/// compiled code passes it), alive for the call.
pub(crate) unsafe extern "C" fn clsync_poll(ctx: *mut ItemCtx) {
    // SAFETY: our contract.
    let ctx = unsafe { &mut *ctx };
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| host.runner.cancellation_point())) {
        stop(ctx, Stop::Unwind(payload));
    }
}

/// Resolves `ptr` for an access of `size` bytes, or `None` (for the
/// runtime calls that access memory themselves).
pub(crate) fn resolve_checked(ctx: &ItemCtx, ptr: u64, size: u64) -> Option<*mut u8> {
    resolve(ctx, ptr, size)
}

/// Resolves `ptr` for an access of `size` bytes, or `None`.
fn resolve(ctx: &ItemCtx, ptr: u64, size: u64) -> Option<*mut u8> {
    let slot = ptr >> OFFSET_BITS;
    let off = ptr & OFFSET_MASK;
    if slot == 0 && super::svm::contains(ptr, size) {
        return Some(ptr as *mut u8);
    }
    if slot == 0 || slot >= ctx.nslots {
        return None;
    }
    // SAFETY: slot < nslots, the table's length.
    let s: Slot = unsafe { *ctx.slots.add(slot as usize) };
    if off.checked_add(size)? > s.len {
        return None;
    }
    // SAFETY: off + size <= len: inside the object.
    Some(unsafe { s.base.add(off as usize) })
}

/// `OpCopyMemorySized` and `OpCopyMemory`: both ranges checked.
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call (as
/// compiled code passes it), alive for the call.
pub(crate) unsafe extern "C" fn clsync_memcpy(
    ctx: *mut ItemCtx,
    dst: u64,
    src: u64,
    size: u64,
    site: u32,
    significant: u32,
) {
    // SAFETY: as in `clsync_fault`.
    let ctx = unsafe { &mut *ctx };
    if size == 0 {
        return;
    }
    let Some(s) = resolve(ctx, src, size) else {
        // SAFETY: `ctx` is this call's own context (our contract).
        unsafe { clsync_fault(ctx, src, size, AccessKind::Read as u32, site) };
        return;
    };
    let Some(d) = resolve(ctx, dst, size) else {
        // SAFETY: as above.
        unsafe { clsync_fault(ctx, dst, size, AccessKind::Write as u32, site) };
        return;
    };
    // SAFETY: as in `site_text`.
    if unsafe { &*ctx.host }.checked {
        // SAFETY: `ctx` is this call's own context (our contract).
        unsafe {
            super::checked::clsync_check_access(ctx, src, s as u64, size, 0, site, 0, 0);
            super::checked::clsync_check_access(ctx, dst, d as u64, size, 3, site, 0, 0);
        }
        super::checked::copy_to_global(ctx, dst, src, size, significant, site);
        super::checked::copy_shadow(ctx, dst, src, size);
    }
    // SAFETY: both ranges are inside their objects (checked above); they
    // may overlap, which `copy` allows.
    unsafe { std::ptr::copy(s, d, size as usize) };
}

/// `to_global`, `to_local`, `to_private` (`OpGenericCastToPtrExplicit`):
/// the pointer if its object is in `storage` (SPIR-V's storage class), else
/// null.
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call (as
/// compiled code passes it), alive for the call.
pub(crate) unsafe extern "C" fn clsync_cast_space(
    ctx: *mut ItemCtx,
    ptr: u64,
    storage: u32,
) -> u64 {
    // SAFETY: as in `clsync_fault`.
    let ctx = unsafe { &*ctx };
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    let slot = (ptr >> OFFSET_BITS) as usize;
    let want = match storage {
        5 => "global",   // CrossWorkgroup
        4 => "local",    // Workgroup
        7 => "private",  // Function
        0 => "constant", // UniformConstant
        _ => return ptr,
    };
    match host.slot_names.get(slot) {
        // Shared virtual memory is global memory.
        _ if slot == 0 && want == "global" && super::svm::contains(ptr, 1) => ptr,
        Some(i) if slot != 0 && i.space == want => ptr,
        _ => 0,
    }
}

/// The site of index `site` (a placeholder for an index the program does
/// not have, which compiled code never passes).
pub(crate) fn site_at(ctx: &ItemCtx, site: u32) -> clsync::sync::Site {
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    host.sites
        .get(site as usize)
        .copied()
        .unwrap_or(clsync::sync::Site {
            file: "<unknown>",
            line: 0,
            column: 0,
        })
}
