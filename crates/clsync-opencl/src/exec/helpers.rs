//! The runtime calls compiled code makes: barriers, faults, copies, the
//! math library. Each is `extern "C"`, takes the work-item's context first,
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
fn stop(ctx: &mut ItemCtx, why: Stop) {
    ctx.status = 1;
    if ctx.stop.is_none() {
        ctx.stop = Some(why);
    }
}

/// The place of a site index, for messages.
fn site_text(ctx: &ItemCtx, site: u32) -> String {
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

/// An access out of its object's bounds, or through an invalid pointer.
/// Returns 1 when the work-item must stop (an unchecked launch, or an
/// access too large to skip), 0 when a checked launch has reported it and
/// the access goes to the scratch area.
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
) -> u32 {
    // SAFETY: compiled code passes its own context, which lives in the
    // work-item's Rust frame for the whole call.
    let ctx = unsafe { &mut *ctx };
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    if host.checked && kind & 0xff != 3 && size as usize <= super::ctx::SCRATCH_BYTES {
        let headline = headline(ctx, ptr, size, kind);
        let details = fault_details(ctx, ptr);
        let at = host.sites.get(site as usize).map(|s| **s);
        super::report::add(host, headline, details, at);
        return 0;
    }
    let msg = fault_message(ctx, ptr, size, kind, site);
    stop(ctx, Stop::Fault(msg));
    1
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
    let site = static_site(ctx, site);
    // A barrier with a run-time site: the scheduler compares its wait in a
    // round's general loop. (Giving compiled barriers the two-word arrival
    // of the fast path, by a `&'static Site`, was measured to slow the Rust
    // coroutine engine's barriers from 9.3 to 23 ns, and backed out.)
    let r = catch_unwind(AssertUnwindSafe(|| {
        host.wi
            .barrier_dyn_at(kind, fence_flags(semantics), scope(mem_scope), *site)
    }));
    match r {
        Ok(Ok(())) => {}
        Ok(Err(e)) => stop(ctx, Stop::Fault(format!("{e}\n\tat {site}"))),
        Err(payload) => stop(ctx, Stop::Unwind(payload)),
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
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| host.wi.cancellation_point())) {
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
            clsync_check_access(ctx, src, s as u64, size, 0, site);
            clsync_check_access(ctx, dst, d as u64, size, 1, site);
        }
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
        Some(i) if slot != 0 && i.space == want => ptr,
        _ => 0,
    }
}

macro_rules! math {
    ($un:ident, $bin:ident, $tern:ident, $t:ident, $pi:expr) => {
        /// A one-argument function of OpenCL.std, by its number.
        pub extern "C" fn $un(op: u32, x: $t) -> $t {
            const PI: $t = $pi;
            match op {
                0 => x.acos(),
                1 => x.acosh(),
                2 => x.acos() / PI,
                3 => x.asin(),
                4 => x.asinh(),
                5 => x.asin() / PI,
                6 => x.atan(),
                8 => x.atanh(),
                9 => x.atan() / PI,
                11 => x.cbrt(),
                14 | 67 | 81 => x.cos(),
                15 => x.cosh(),
                16 => (x * PI).cos(),
                19 | 69 | 83 => x.exp(),
                20 | 70 | 84 => x.exp2(),
                21 | 71 | 85 => (10.0 as $t).powf(x),
                22 => x.exp_m1(),
                30 => x - x.floor(),
                37 | 72 | 86 => x.ln(),
                38 | 73 | 87 => x.log2(),
                39 | 74 | 88 => x.log10(),
                40 => x.ln_1p(),
                41 => {
                    if x == 0.0 {
                        <$t>::NEG_INFINITY
                    } else {
                        x.abs().log2().floor()
                    }
                }
                55 => x.round(),
                56 | 77 | 91 => 1.0 / x.sqrt(),
                57 | 78 | 92 => x.sin(),
                59 => x.sinh(),
                60 => (x * PI).sin(),
                62 | 80 | 94 => x.tan(),
                63 => x.tanh(),
                64 => (x * PI).tan(),
                76 | 90 => 1.0 / x,
                96 => x.to_degrees(),
                100 => x.to_radians(),
                103 => {
                    if x.is_nan() {
                        0.0
                    } else if x > 0.0 {
                        1.0
                    } else if x < 0.0 {
                        -1.0
                    } else {
                        x
                    }
                }
                _ => <$t>::NAN,
            }
        }
        /// A two-argument function of OpenCL.std, by its number.
        pub extern "C" fn $bin(op: u32, x: $t, y: $t) -> $t {
            const PI: $t = $pi;
            match op {
                7 => x.atan2(y),
                10 => x.atan2(y) / PI,
                24 => {
                    if x > y {
                        x - y
                    } else if x.is_nan() || y.is_nan() {
                        <$t>::NAN
                    } else {
                        0.0
                    }
                }
                29 => x % y,
                32 => x.hypot(y),
                43 => {
                    if x.abs() > y.abs() {
                        x
                    } else if y.abs() > x.abs() {
                        y
                    } else {
                        x.max(y)
                    }
                }
                44 => {
                    if x.abs() < y.abs() {
                        x
                    } else if y.abs() < x.abs() {
                        y
                    } else {
                        x.min(y)
                    }
                }
                48 | 50 | 75 | 89 => x.powf(y),
                51 => {
                    let n = (x / y).round_ties_even();
                    x - n * y
                }
                68 | 82 => x / y,
                101 => {
                    if y < x {
                        0.0
                    } else {
                        1.0
                    }
                }
                _ => <$t>::NAN,
            }
        }
        /// A three-argument function of OpenCL.std, by its number.
        pub extern "C" fn $tern(op: u32, x: $t, y: $t, z: $t) -> $t {
            match op {
                102 => {
                    // smoothstep(edge0, edge1, x)
                    let t = ((z - x) / (y - x)).clamp(0.0, 1.0);
                    t * t * (3.0 - 2.0 * t)
                }
                _ => <$t>::NAN,
            }
        }
    };
}
math!(
    clsync_f32_1,
    clsync_f32_2,
    clsync_f32_3,
    f32,
    std::f32::consts::PI
);
math!(
    clsync_f64_1,
    clsync_f64_2,
    clsync_f64_3,
    f64,
    std::f64::consts::PI
);

/// `pown(x, n)` and `rootn(x, n)` (op 49, 54) on f64; f32 goes through it.
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call (as
/// compiled code passes it), alive for the call.
pub(crate) unsafe extern "C" fn clsync_f64_int(op: u32, x: f64, n: i32) -> f64 {
    match op {
        49 => x.powi(n),
        54 => {
            if n == 0 {
                f64::NAN
            } else if x < 0.0 && n % 2 != 0 {
                -(-x).powf(1.0 / n as f64)
            } else {
                x.powf(1.0 / n as f64)
            }
        }
        34 => x * (2.0f64).powi(n),
        _ => f64::NAN,
    }
}

/// The address space a tagged pointer's object is in, as the checker
/// knows them: `Some(true)` local, `Some(false)` global, `None` for
/// private and constant memory (one work-item's, or never written) and
/// invalid pointers.
fn checked_space(ctx: &ItemCtx, ptr: u64) -> Option<bool> {
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    let slot = (ptr >> OFFSET_BITS) as usize;
    if slot == 0 || slot as u64 >= ctx.nslots {
        return None;
    }
    match host.slot_names.get(slot)?.space {
        "local" => Some(true),
        "global" => Some(false),
        _ => None,
    }
}

fn site_at(ctx: &ItemCtx, site: u32) -> clsync::sync::Site {
    *static_site(ctx, site)
}

/// The interned site of index `site` (a placeholder for an index the
/// program does not have, which compiled code never passes).
fn static_site(ctx: &ItemCtx, site: u32) -> &'static clsync::sync::Site {
    static UNKNOWN: clsync::sync::Site = clsync::sync::Site {
        file: "<unknown>",
        line: 0,
        column: 0,
    };
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    host.sites.get(site as usize).copied().unwrap_or(&UNKNOWN)
}

/// A plain access of `size` bytes in the checked build, reported to the
/// checker byte by byte (so that accesses of different sizes and
/// alignments meet in the shadow): `ptr` is the tagged pointer (which names
/// the object's space), `addr` the native address.
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call (as
/// compiled code passes it), alive for the call.
pub(crate) unsafe extern "C" fn clsync_check_access(
    ctx: *mut ItemCtx,
    ptr: u64,
    addr: u64,
    size: u64,
    write: u32,
    site: u32,
) {
    // SAFETY: as in `clsync_fault`.
    let ctx = unsafe { &*ctx };
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    let slot = (ptr >> OFFSET_BITS) as usize;
    let misuse = match host.slot_names.get(slot).map(|i| i.access) {
        Some(crate::exec::Access::ReadOnly) if write != 0 => {
            Some("Invalid write to read-only buffer")
        }
        _ => None,
    };
    if let Some(headline) = misuse {
        let details = format!(
            "{} `{}`, byte {}",
            host.slot_names[slot].space,
            host.slot_names[slot].name,
            ptr & OFFSET_MASK
        );
        super::report::add(
            host,
            headline.to_string(),
            details,
            Some(site_at(ctx, site)),
        );
    }
    let Some(local) = checked_space(ctx, ptr) else {
        return;
    };
    let space = if local {
        clsync::checker::Space::Local
    } else {
        clsync::checker::Space::Global
    };
    let site = site_at(ctx, site);
    for k in 0..size as usize {
        clsync::checker::engine::plain(addr as usize + k, space, write != 0, site);
    }
}

/// An access of a group-wide operation (an async copy) in a checked
/// launch: each byte as a relaxed work-group atomic of the calling
/// work-item, so that it races with the unordered plain accesses of others
/// but not with itself.
pub(crate) fn note_group_access(
    ctx: &ItemCtx,
    ptr: u64,
    addr: *mut u8,
    size: u64,
    write: bool,
    site: u32,
) {
    use clsync::checker::engine::{self, AtomicKind};
    let Some(local) = checked_space(ctx, ptr) else {
        return;
    };
    let site = site_at(ctx, site);
    let kind = if write {
        AtomicKind::Store
    } else {
        AtomicKind::Load
    };
    for k in 0..size as usize {
        engine::atomic(
            addr as usize + k,
            local,
            "async_work_group_copy",
            kind,
            clsync::sync::MemOrder::Relaxed,
            None,
            MemScope::WorkGroup,
            site,
            || ((), write),
        );
    }
}

/// SPIR-V memory semantics' order bits as a memory order.
fn order(semantics: u32) -> clsync::sync::MemOrder {
    use clsync::sync::MemOrder;
    if semantics & 0x10 != 0 {
        MemOrder::SeqCst
    } else if semantics & 0x8 != 0 || semantics & 0x6 == 0x6 {
        MemOrder::AcqRel
    } else if semantics & 0x4 != 0 {
        MemOrder::Release
    } else if semantics & 0x2 != 0 {
        MemOrder::Acquire
    } else {
        MemOrder::Relaxed
    }
}

/// An atomic operation of the checked build, performed here under the
/// checker. `op` is the SPIR-V opcode; `width` the bytes (4 or 8), plus
/// 0x100 for a float; the result is the old value's bits.
///
/// # Memory ordering
///
/// Every operation is `SeqCst` on the hardware, at least as strong as the
/// order the kernel names: it pairs with every other atomic, fence and
/// barrier of the launch and the host's. The checker judges the kernel by
/// the order and scope it named.
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call (as
/// compiled code passes it), alive for the call.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "C" fn clsync_atomic(
    ctx: *mut ItemCtx,
    ptr: u64,
    addr: u64,
    op: u32,
    width: u32,
    value: u64,
    cmp: u64,
    semantics: u32,
    fail_semantics: u32,
    scope_id: u32,
    site: u32,
) -> u64 {
    use clsync::checker::engine::{self, AtomicKind};
    use rspirv::spirv::Op;
    use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::SeqCst};
    // SAFETY: as in `clsync_fault`.
    let ctx_ref = unsafe { &*ctx };
    let float = width & 0x100 != 0;
    let bytes = width & 0xff;
    let opcode = Op::from_u32(op).unwrap_or(Op::Nop);
    let (name, kind) = match opcode {
        Op::AtomicLoad => ("atomic_load", AtomicKind::Load),
        Op::AtomicStore => ("atomic_store", AtomicKind::Store),
        Op::AtomicFlagClear => ("atomic_flag_clear", AtomicKind::Store),
        Op::AtomicFlagTestAndSet => ("atomic_flag_test_and_set", AtomicKind::ReadModifyWrite),
        Op::AtomicExchange => ("atomic_exchange", AtomicKind::ReadModifyWrite),
        Op::AtomicCompareExchange | Op::AtomicCompareExchangeWeak => {
            ("atomic_compare_exchange", AtomicKind::ReadModifyWrite)
        }
        _ => ("atomic_fetch_op", AtomicKind::ReadModifyWrite),
    };
    // One step of the operation on the old value: (new value, wrote).
    let step = move |old: u64| -> (u64, bool) {
        let f = |bits: u64| {
            if bytes == 4 {
                f32::from_bits(bits as u32) as f64
            } else {
                f64::from_bits(bits)
            }
        };
        let unf = |v: f64| {
            if bytes == 4 {
                (v as f32).to_bits() as u64
            } else {
                v.to_bits()
            }
        };
        let sx = |v: u64| {
            if bytes == 4 {
                v as u32 as i32 as i64
            } else {
                v as i64
            }
        };
        match opcode {
            Op::AtomicLoad => (old, false),
            Op::AtomicStore | Op::AtomicExchange => (value, true),
            Op::AtomicFlagClear => (0, true),
            Op::AtomicFlagTestAndSet => (1, true),
            Op::AtomicCompareExchange | Op::AtomicCompareExchangeWeak => {
                if old == cmp {
                    (value, true)
                } else {
                    (old, false)
                }
            }
            Op::AtomicIIncrement => (old.wrapping_add(1), true),
            Op::AtomicIDecrement => (old.wrapping_sub(1), true),
            Op::AtomicIAdd => (old.wrapping_add(value), true),
            Op::AtomicISub => (old.wrapping_sub(value), true),
            Op::AtomicAnd => (old & value, true),
            Op::AtomicOr => (old | value, true),
            Op::AtomicXor => (old ^ value, true),
            Op::AtomicUMin => (old.min(value), true),
            Op::AtomicUMax => (old.max(value), true),
            Op::AtomicSMin => (if sx(value) < sx(old) { value } else { old }, true),
            Op::AtomicSMax => (if sx(value) > sx(old) { value } else { old }, true),
            Op::AtomicFAddEXT if float => (unf(f(old) + f(value)), true),
            _ => (old, false),
        }
    };
    let perform = || -> (u64, bool) {
        // A compare-and-swap loop performs every operation: read, compute,
        // swap if unchanged. SeqCst on both sides; see the doc above.
        if bytes == 4 {
            // SAFETY: the code checked that `addr` has 4 bytes inside a
            // live object; objects are at least 4-byte aligned for 4-byte
            // atomics (buffers and local memory are allocated aligned).
            let a = unsafe { AtomicU32::from_ptr(addr as *mut u32) };
            let mut old = a.load(SeqCst);
            loop {
                let (new, wrote) = step(old as u64);
                if !wrote {
                    return (old as u64, false);
                }
                match a.compare_exchange(old, new as u32, SeqCst, SeqCst) {
                    Ok(_) => return (old as u64, true),
                    Err(now) => old = now,
                }
            }
        } else {
            // SAFETY: as above, for 8 bytes.
            let a = unsafe { AtomicU64::from_ptr(addr as *mut u64) };
            let mut old = a.load(SeqCst);
            loop {
                let (new, wrote) = step(old);
                if !wrote {
                    return (old, false);
                }
                match a.compare_exchange(old, new, SeqCst, SeqCst) {
                    Ok(_) => return (old, true),
                    Err(now) => old = now,
                }
            }
        }
    };
    let Some(local) = checked_space(ctx_ref, ptr) else {
        // Private memory, or the scratch area of a skipped invalid access.
        return perform().0;
    };
    let fail = matches!(
        opcode,
        Op::AtomicCompareExchange | Op::AtomicCompareExchangeWeak
    )
    .then(|| order(fail_semantics));
    let site = site_at(ctx_ref, site);
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx_ref.host };
    let legacy = host.legacy_atomics && scope_id == 2 && semantics & 0x1e == 0;
    // An OpenCL 1.x atomic is atomic for every work-item that reaches its
    // memory: the device, for global memory (see
    // `frontend::calls_legacy_atomics`).
    let scope_id = if legacy && !local { 1 } else { scope_id };
    let r = catch_unwind(AssertUnwindSafe(|| {
        engine::atomic(
            addr as usize,
            local,
            name,
            kind,
            order(semantics),
            fail,
            scope(scope_id),
            site,
            perform,
        )
    }));
    match r {
        Ok(v) => v,
        Err(payload) => {
            // SAFETY: as in `clsync_fault`.
            stop(unsafe { &mut *ctx }, Stop::Unwind(payload));
            0
        }
    }
}

/// `OpMemoryBarrier` in the checked build: the fence, seen by the checker.
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call (as
/// compiled code passes it), alive for the call.
pub(crate) unsafe extern "C" fn clsync_fence(
    ctx: *mut ItemCtx,
    scope_id: u32,
    semantics: u32,
    site: u32,
) {
    // SAFETY: as in `clsync_fault`.
    let ctx = unsafe { &mut *ctx };
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    let flags = fence_flags(semantics);
    if flags == 0 {
        return;
    }
    let r = catch_unwind(AssertUnwindSafe(|| {
        let _at = clsync::checker::SiteScope::enter(site_at(ctx, site));
        host.wi
            .atomic_work_item_fence_dyn(flags, order(semantics), scope(scope_id))
    }));
    match r {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            let at = site_text(ctx, site);
            stop(ctx, Stop::Fault(format!("{e}\n\tat {at}")));
        }
        Err(payload) => stop(ctx, Stop::Unwind(payload)),
    }
}

/// An index into an array type past its end (checked builds): Oclgrind's
/// `exceeds static array size`, reported; the access itself is still
/// checked against its object's bounds.
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call (as
/// compiled code passes it), alive for the call.
pub(crate) unsafe extern "C" fn clsync_index_exceeds(
    ctx: *mut ItemCtx,
    index: u64,
    len: u64,
    site: u32,
) {
    // SAFETY: our contract.
    let ctx = unsafe { &*ctx };
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    super::report::add(
        host,
        format!("Index exceeds static array size ({len} elements)"),
        format!("index {}", index as i64),
        Some(site_at(ctx, site)),
    );
}
