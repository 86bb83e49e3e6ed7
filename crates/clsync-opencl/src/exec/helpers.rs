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
    let what = match kind {
        1 => "write",
        _ => "read",
    };
    let at = site_text(ctx, site);
    if kind == 3 {
        return format!("Unreachable code reached\n\tKernel: {}\n\tat {at}", host.kernel);
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
            if kind == 1 { "store" } else { "load" },
            host.kernel
        ),
    }
}

/// An access out of its object's bounds, or through an invalid pointer.
/// Returns 1 when the work-item must stop (an unchecked launch, or an
/// access too large to skip), 0 when a checked launch has reported it and
/// the access goes to the scratch area.
pub extern "C" fn clsync_fault(ctx: *mut ItemCtx, ptr: u64, size: u64, kind: u32, site: u32) -> u32 {
    // SAFETY: compiled code passes its own context, which lives in the
    // work-item's Rust frame for the whole call.
    let ctx = unsafe { &mut *ctx };
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    if host.checked && kind != 3 && size as usize <= super::ctx::SCRATCH_BYTES {
        let headline = headline(ctx, ptr, size, kind);
        let details = fault_details(ctx, ptr);
        let at = host.sites.get(site as usize).copied();
        super::report::add(host, headline, details, at);
        return 0;
    }
    let msg = fault_message(ctx, ptr, size, kind, site);
    stop(ctx, Stop::Fault(msg));
    1
}

/// Oclgrind's headline for an invalid access.
fn headline(ctx: &ItemCtx, ptr: u64, size: u64, kind: u32) -> String {
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    let slot = (ptr >> OFFSET_BITS) as usize;
    let write = kind == 1;
    match host.slot_names.get(slot).filter(|_| slot != 0 && (slot as u64) < ctx.nslots) {
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
    match host.slot_names.get(slot).filter(|_| slot != 0 && (slot as u64) < ctx.nslots) {
        Some(info) => {
            // SAFETY: slot < nslots, the table's length.
            let len = unsafe { (*ctx.slots.add(slot)).len };
            format!("{} `{}` is {len} bytes; the access is at byte {off}", info.space, info.name)
        }
        None => "the pointer points at no memory object".into(),
    }
}

/// `OpControlBarrier`.
pub extern "C" fn clsync_barrier(
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
    let site = host.sites.get(site as usize).copied().unwrap_or(clsync::sync::Site {
        file: "<unknown>",
        line: 0,
        column: 0,
    });
    let r = catch_unwind(AssertUnwindSafe(|| {
        host.wi
            .barrier_dyn_at(kind, fence_flags(semantics), scope(mem_scope), site)
    }));
    match r {
        Ok(Ok(())) => {}
        Ok(Err(e)) => stop(ctx, Stop::Fault(format!("{e}\n\tat {site}"))),
        Err(payload) => stop(ctx, Stop::Unwind(payload)),
    }
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
pub extern "C" fn clsync_memcpy(ctx: *mut ItemCtx, dst: u64, src: u64, size: u64, site: u32) {
    // SAFETY: as in `clsync_fault`.
    let ctx = unsafe { &mut *ctx };
    if size == 0 {
        return;
    }
    let Some(s) = resolve(ctx, src, size) else {
        let msg = fault_message(ctx, src, size, AccessKind::Read as u32, site);
        return stop(ctx, Stop::Fault(msg));
    };
    let Some(d) = resolve(ctx, dst, size) else {
        let msg = fault_message(ctx, dst, size, AccessKind::Write as u32, site);
        return stop(ctx, Stop::Fault(msg));
    };
    // SAFETY: both ranges are inside their objects (checked above); they
    // may overlap, which `copy` allows.
    unsafe { std::ptr::copy(s, d, size as usize) };
}

/// `to_global`, `to_local`, `to_private` (`OpGenericCastToPtrExplicit`):
/// the pointer if its object is in `storage` (SPIR-V's storage class), else
/// null.
pub extern "C" fn clsync_cast_space(ctx: *mut ItemCtx, ptr: u64, storage: u32) -> u64 {
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
math!(clsync_f32_1, clsync_f32_2, clsync_f32_3, f32, std::f32::consts::PI);
math!(clsync_f64_1, clsync_f64_2, clsync_f64_3, f64, std::f64::consts::PI);

/// `pown(x, n)` and `rootn(x, n)` (op 49, 54) on f64; f32 goes through it.
pub extern "C" fn clsync_f64_int(op: u32, x: f64, n: i32) -> f64 {
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
