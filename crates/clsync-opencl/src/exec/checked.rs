//! The runtime calls of the checked build: every access reported to the
//! runtime's checker, atomics and fences performed under it, and the
//! checked build's own findings (static array indices, read-only buffers,
//! uninitialized values: see `translate::shadow` for the shadows compiled
//! code keeps, and [`ItemCtx::shadows`] for memory's).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU8, Ordering};

use clsync::sync::MemScope;

use super::ctx::{ItemCtx, Runner, Stop, OFFSET_BITS, OFFSET_MASK};
use super::helpers::{fence_flags, scope, site_at, site_text, stop};

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
    space_of(host.slot_names.get(slot)?)
}

/// [`checked_space`] of a slot's info: its space told by its name's first
/// byte (`local`, `global`, and `constant`, `private`, `null` for the
/// others), which every access asks.
#[inline]
fn space_of(info: &super::ctx::SlotInfo) -> Option<bool> {
    match info.space.as_bytes().first() {
        Some(b'l') => Some(true),
        Some(b'g') => Some(false),
        _ => None,
    }
}

/// `write` is 1 for a write of `bits` (the scalar's little-endian bytes:
/// two work-items writing the same bytes unordered are a uniform write,
/// not a race, as in Oclgrind), 3 for a write whose bytes are not known
/// (a copy), 0 for a read, 2 for a read that only feeds a store of the
/// value back (a compiler's load of a vector to store some of its
/// components: no read of a write-only buffer), 4 for a read of local
/// memory that races with nothing (`translate::intervals`), 6 for one that
/// races with nothing in a group of one dimension.
///
/// A plain access of `size` bytes in the checked build, reported to the
/// checker byte by byte (so that accesses of different sizes and
/// alignments meet in the shadow): `ptr` is the tagged pointer (which names
/// the object's space), `addr` the native address.
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call (as
/// compiled code passes it), alive for the call.
///
/// It also keeps memory's shadow: a write marks its bytes written, unless
/// the value it stores is poisoned (`poisoned` nonzero), which in global
/// memory is Oclgrind's `Uninitialized value`; a read returns 1 when any of
/// its bytes was never written, or the access is invalid (what an invalid
/// read yields is no value anything wrote), else 0.
pub(crate) unsafe extern "C" fn clsync_check_access(
    ctx: *mut ItemCtx,
    ptr: u64,
    addr: u64,
    size: u64,
    write: u32,
    site: u32,
    poisoned: u32,
    bits: u64,
) -> u32 {
    // SAFETY: as in `clsync_fault`.
    let ctx = unsafe { &*ctx };
    let is_write = write == 1 || write == 3;
    let read_poisoned = shadow_access(ctx, ptr, size, is_write, poisoned != 0, site);
    check_plain(ctx, ptr, addr, size, write, bits, site);
    read_poisoned as u32
}

/// The shadow of `size` bytes at tagged pointer `ptr`: `Err(())` when the
/// range is not inside a memory object, `Ok(None)` when the object has no
/// shadow (all initialized), else its first shadow byte.
fn shadow_of(ctx: &ItemCtx, ptr: u64, size: u64) -> Result<Option<*mut u8>, ()> {
    let slot = ptr >> OFFSET_BITS;
    let off = ptr & OFFSET_MASK;
    // Shared virtual memory has no shadow: the host writes it as it likes.
    if slot == 0 && super::svm::contains(ptr, size) {
        return Ok(None);
    }
    if slot == 0 || slot >= ctx.nslots {
        return Err(());
    }
    // SAFETY: slot < nslots, the table's length.
    let s = unsafe { *ctx.slots.add(slot as usize) };
    if off.checked_add(size).is_none_or(|end| end > s.len) {
        return Err(());
    }
    if ctx.shadows.is_null() {
        return Ok(None);
    }
    // SAFETY: the shadow table has an entry per slot (`Setup::shadows`).
    let sh = unsafe { *ctx.shadows.add(slot as usize) };
    // SAFETY: a slot's shadow has a byte per byte of the object, and the
    // range is inside it.
    Ok((!sh.is_null()).then(|| unsafe { sh.add(off as usize) }))
}

/// The shadow bytes at `sh`, as atomics: global memory's shadow is shared by
/// every thread that runs the launch (relaxed: a shadow byte carries no
/// data but itself, and the accesses it shadows are ordered, or reported
/// as races, by the checker).
///
/// # Safety
///
/// `sh` points at `n` shadow bytes that live for the launch.
unsafe fn shadow_bytes<'a>(sh: *mut u8, n: u64) -> &'a [AtomicU8] {
    // SAFETY: our contract; `AtomicU8` has `u8`'s layout.
    unsafe { std::slice::from_raw_parts(sh.cast::<AtomicU8>(), n as usize) }
}

/// Keeps memory's shadow for an access and reports a poisoned value stored
/// to global memory; returns whether a read is poisoned.
fn shadow_access(
    ctx: &ItemCtx,
    ptr: u64,
    size: u64,
    write: bool,
    poisoned: bool,
    site: u32,
) -> bool {
    let sh = match shadow_of(ctx, ptr, size) {
        Err(()) => return !write,
        Ok(sh) => sh,
    };
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    let slot = (ptr >> OFFSET_BITS) as usize;
    if write {
        if poisoned
            && host
                .slot_names
                .get(slot)
                .is_some_and(|i| i.space == "global")
        {
            let info = &host.slot_names[slot];
            let details = format!(
                "the value stored to global `{}` at byte {} depends on memory nothing wrote",
                info.name,
                ptr & OFFSET_MASK
            );
            super::report::add(
                ctx,
                "Uninitialized value".into(),
                details,
                Some(site_at(ctx, site)),
            );
        }
        if let Some(sh) = sh {
            // SAFETY: `shadow_of` found `size` shadow bytes there.
            for b in unsafe { shadow_bytes(sh, size) } {
                b.store(u8::from(!poisoned), Ordering::Relaxed);
            }
        }
        false
    } else {
        // SAFETY: as above.
        sh.is_some_and(|sh| {
            unsafe { shadow_bytes(sh, size) }
                .iter()
                .any(|b| b.load(Ordering::Relaxed) == 0)
        })
    }
}

/// Marks the `size` bytes at `ptr` written (`initialized`) or written with
/// a value that depends on memory nothing wrote, in memory's shadow.
fn mark_written(ctx: &ItemCtx, ptr: u64, size: u64, initialized: bool) {
    if let Ok(Some(sh)) = shadow_of(ctx, ptr, size) {
        // SAFETY: `shadow_of` found `size` shadow bytes there.
        for b in unsafe { shadow_bytes(sh, size) } {
            b.store(u8::from(initialized), Ordering::Relaxed);
        }
    }
}

/// Copies the shadow of `size` bytes from `src` to `dst` (a copy of memory
/// copies whether its bytes were written: a struct's padding stays
/// unwritten, and is no error).
pub(crate) fn copy_shadow(ctx: &ItemCtx, dst: u64, src: u64, size: u64) {
    let Ok(Some(d)) = shadow_of(ctx, dst, size) else {
        return;
    };
    let s = shadow_of(ctx, src, size).ok().flatten();
    // SAFETY: `shadow_of` found `size` shadow bytes at each.
    let d = unsafe { shadow_bytes(d, size) };
    match s {
        // SAFETY: as above.
        Some(s) => {
            for (d, s) in d.iter().zip(unsafe { shadow_bytes(s, size) }) {
                d.store(s.load(Ordering::Relaxed), Ordering::Relaxed);
            }
        }
        None => d.iter().for_each(|b| b.store(1, Ordering::Relaxed)),
    }
}

/// A copy to global memory of bytes nothing wrote that are a value's, not
/// padding (`significant`: an index into the build's masks, `u32::MAX`
/// for every byte): Oclgrind's `Uninitialized value`.
pub(crate) fn copy_to_global(
    ctx: &ItemCtx,
    dst: u64,
    src: u64,
    size: u64,
    significant: u32,
    site: u32,
) {
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    let slot = (dst >> OFFSET_BITS) as usize;
    if host
        .slot_names
        .get(slot)
        .is_none_or(|i| i.space != "global")
    {
        return;
    }
    let Ok(Some(s)) = shadow_of(ctx, src, size) else {
        return;
    };
    let mask = host.significant.get(significant as usize);
    // SAFETY: `shadow_of` found `size` shadow bytes there.
    let bytes = unsafe { shadow_bytes(s, size) };
    let unwritten = bytes.iter().enumerate().any(|(k, b)| {
        let counts = mask.is_none_or(|m| m.is_empty() || m[k % m.len()]);
        counts && b.load(Ordering::Relaxed) == 0
    });
    if unwritten {
        let details = format!(
            "a copy to global `{}` at byte {} copies a value nothing wrote",
            host.slot_names[slot].name,
            dst & OFFSET_MASK
        );
        super::report::add(
            ctx,
            "Uninitialized value".into(),
            details,
            Some(site_at(ctx, site)),
        );
    }
}

/// An access through a pointer computed from an uninitialized value
/// (`kind` 1, Oclgrind's `Uninitialized address`), or another use of an
/// uninitialized value that Oclgrind reports (`kind` 0, `Uninitialized
/// value`), at `site`.
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call (as
/// compiled code passes it), alive for the call.
pub(crate) unsafe extern "C" fn clsync_uninit(ctx: *mut ItemCtx, kind: u32, site: u32) {
    // SAFETY: our contract.
    let ctx = unsafe { &*ctx };
    let (headline, details) = match kind {
        1 => (
            "Uninitialized address",
            "the address of an access depends on memory nothing wrote",
        ),
        _ => (
            "Uninitialized value",
            "a value that depends on memory nothing wrote was used",
        ),
    };
    super::report::add(
        ctx,
        headline.into(),
        details.into(),
        Some(site_at(ctx, site)),
    );
}

/// The checker's part of a plain access, and a write to a read-only buffer.
/// Whether `CLSYNC_UNIFORM_WRITES=1` asks for uniform writes to be
/// reported as races, as `OCLGRIND_UNIFORM_WRITES=1` does for Oclgrind
/// (the specification makes them races; Oclgrind and clsync let them pass
/// by default).
fn uniform_writes_are_races() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("CLSYNC_UNIFORM_WRITES").is_ok_and(|v| v == "1"))
}

/// Whether access `code` (of `clsync_check_access`) is a read the build
/// proved races with nothing (4: in any group, 6: in a group of one
/// dimension) and the launch takes that proof now.
fn proven(ctx: &ItemCtx, code: u32) -> bool {
    use super::ctx::{RACE_FREE, RACE_FREE_1D};
    match code {
        4 => ctx.race_free & RACE_FREE != 0,
        6 => ctx.race_free & RACE_FREE_1D != 0,
        _ => false,
    }
}

/// `code` and `bits` as `clsync_check_access` takes them.
fn check_plain(ctx: &ItemCtx, ptr: u64, addr: u64, size: u64, code: u32, bits: u64, site: u32) {
    let write = code == 1 || code == 3;
    let lvalue = code == 2;
    let value = (code == 1 && !uniform_writes_are_races()).then_some(bits);
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    let slot = (ptr >> OFFSET_BITS) as usize;
    if slot == 0 || slot as u64 >= ctx.nslots {
        return;
    }
    let Some(info) = host.slot_names.get(slot) else {
        return;
    };
    let misuse = match info.access {
        crate::exec::Access::ReadOnly if write => Some("Invalid write to read-only buffer"),
        crate::exec::Access::WriteOnly if !write && !lvalue => {
            Some("Invalid read from write-only buffer")
        }
        _ => None,
    };
    if let Some(headline) = misuse {
        let details = format!("{} `{}`, byte {}", info.space, info.name, ptr & OFFSET_MASK);
        super::report::add(ctx, headline.to_string(), details, Some(site_at(ctx, site)));
    }
    // Nothing in the launch writes it (`translate::written`): its reads
    // race with nothing. (A write there would be the analysis's error: the
    // tests' debug builds stop on it; a release build records it.)
    if info.unwritten {
        debug_assert!(!write, "a write to `{}`, found unwritten", info.name);
        if !write {
            return;
        }
    }
    let Some(local) = space_of(info) else {
        return;
    };
    let space = if local {
        clsync::checker::Space::Local
    } else {
        clsync::checker::Space::Global
    };
    // Each byte with the whole scalar's value: a typed buffer's shadow may
    // keep one record per element.
    let (addr, len) = (addr as usize, size as usize);
    match host.site_ids.get(site as usize) {
        // A read of local memory the build proved races with nothing.
        Some(&id) if local && proven(ctx, code) => {
            clsync::checker::engine::race_free_read_at(addr, len, id)
        }
        Some(&id) => clsync::checker::engine::plain_range_at(addr, len, space, write, value, id),
        None => {
            clsync::checker::engine::plain_range(addr, len, space, write, value, site_at(ctx, site))
        }
    }
}

/// An access of a group-wide operation (an async copy) in a checked
/// launch: its bytes as one relaxed work-group atomic access of the calling
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
    engine::atomic(
        addr as usize,
        size as usize,
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
/// The atomic opcodes `clsync_atomic` performs, by their numbers: the run
/// from `OpAtomicLoad` to `OpAtomicXor` (the numbers the asserts below
/// hold them to), then the flag operations and the float addition. Decoded
/// here rather than by `Op::from_u32`, a match over every SPIR-V opcode that
/// took 2.5 % of a checked histogram's run (one call per atomic).
const ATOMIC_RUN: [rspirv::spirv::Op; 16] = {
    use rspirv::spirv::Op::*;
    [
        AtomicLoad,
        AtomicStore,
        AtomicExchange,
        AtomicCompareExchange,
        AtomicCompareExchangeWeak,
        AtomicIIncrement,
        AtomicIDecrement,
        AtomicIAdd,
        AtomicISub,
        AtomicSMin,
        AtomicUMin,
        AtomicSMax,
        AtomicUMax,
        AtomicAnd,
        AtomicOr,
        AtomicXor,
    ]
};
const _: () = {
    let mut i = 0;
    while i < ATOMIC_RUN.len() {
        assert!(ATOMIC_RUN[i] as u32 == rspirv::spirv::Op::AtomicLoad as u32 + i as u32);
        i += 1;
    }
};

/// The atomic operation of opcode number `op` (`OpNop` for any other).
fn atomic_op(op: u32) -> rspirv::spirv::Op {
    use rspirv::spirv::Op;
    let i = op.wrapping_sub(Op::AtomicLoad as u32) as usize;
    if let Some(o) = ATOMIC_RUN.get(i) {
        return *o;
    }
    [
        Op::AtomicFlagTestAndSet,
        Op::AtomicFlagClear,
        Op::AtomicFAddEXT,
    ]
    .into_iter()
    .find(|o| *o as u32 == op)
    .unwrap_or(Op::Nop)
}

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
    let opcode = atomic_op(op);
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
        let width = bytes * 8;
        let f = |b: u64| super::bits::float(b, width);
        let unf = |v: f64| super::bits::float_bits(v, width);
        let sx = |v: u64| super::bits::signed(v, width);
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
    // Memory's shadow, as Oclgrind keeps it: the value an operation reads
    // is uninitialized where a byte of it was never written (the
    // operation's result, `ItemCtx::atomic_shadow`); what it writes is
    // initialized, unless it computed it from such a value (an increment
    // of an uncleared counter); a compare-and-exchange that fails writes
    // nothing.
    let unwritten = shadow_access(ctx_ref, ptr, bytes as u64, false, false, site);
    let from_old = !matches!(
        opcode,
        Op::AtomicStore
            | Op::AtomicExchange
            | Op::AtomicFlagClear
            | Op::AtomicFlagTestAndSet
            | Op::AtomicCompareExchange
            | Op::AtomicCompareExchangeWeak
    );
    let wrote = std::cell::Cell::new(false);
    let perform = || {
        let (old, w) = perform();
        wrote.set(w);
        (old, w)
    };
    let mark = || {
        if wrote.get() {
            mark_written(ctx_ref, ptr, bytes as u64, !(unwritten && from_old));
        }
    };
    // SAFETY: as in `clsync_fault`; no reference to the context is live
    // across this write but `ctx_ref`, which reads other fields.
    unsafe { (*ctx).atomic_shadow = u64::from(unwritten) };
    let Some(local) = checked_space(ctx_ref, ptr) else {
        // Private memory, or the scratch area of a skipped invalid access.
        let old = perform().0;
        mark();
        return old;
    };
    let fail = matches!(
        opcode,
        Op::AtomicCompareExchange | Op::AtomicCompareExchangeWeak
    )
    .then(|| order(fail_semantics));
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx_ref.host };
    let legacy = host.legacy_atomics && scope_id == 2 && semantics & 0x1e == 0;
    // An OpenCL 1.x atomic is atomic for every work-item that reaches its
    // memory: the device, for global memory (see
    // `frontend::calls_legacy_atomics`).
    let scope_id = if legacy && !local { 1 } else { scope_id };
    // The launch interned its sites once; a site it did not is interned
    // here.
    let id = match host.site_ids.get(site as usize) {
        Some(&id) => id,
        None => engine::SiteId::new(site_at(ctx_ref, site)),
    };
    let r = catch_unwind(AssertUnwindSafe(|| {
        engine::atomic_at_id(
            addr as usize,
            bytes as usize,
            local,
            name,
            kind,
            order(semantics),
            fail,
            scope(scope_id),
            id,
            perform,
        )
    }));
    match r {
        Ok(v) => {
            mark();
            if kind == AtomicKind::Load {
                // SAFETY: as in `clsync_fault`.
                spinning(unsafe { &mut *ctx }, addr, v);
            }
            v
        }
        Err(payload) => {
            // SAFETY: as in `clsync_fault`.
            stop(unsafe { &mut *ctx }, Stop::Unwind(payload));
            0
        }
    }
}

/// After an atomic load by the work-item of `ctx` that found `value` at
/// `addr`: where its loads there found that value before, it is waiting
/// for another work-item to change it, and backs off before its next, 2
/// to 16 spin-loop hints (more, the longer it waits).
///
/// The checker performs each atomic under the lock of the location's cell,
/// and a spinning load takes it again at once after it lets it go: the
/// work-item that is to store there, asleep in the lock, woke to find it
/// taken again, and went back to sleep. On the 2-core VM that convoy set in
/// for whole stretches of time: `checker_overhead`'s message passing, a
/// ping-pong of 1000 rounds, took 46–56 ms checked with a futex wait per
/// round (`perf`: 10,067 context switches in ten launches), against 2.2 ms
/// at other times. With the backoff: 8.4–9.8 ms and 197 context switches
/// then, and 2.1–2.3 ms at other times (alternating processes). Waiting
/// longer (128 hints) or yielding the thread measured the same.
fn spinning(ctx: &mut ItemCtx, addr: u64, value: u64) {
    let (a, v, n) = ctx.spin;
    let n = if (a, v) == (addr, value) {
        n.saturating_add(1)
    } else {
        0
    };
    ctx.spin = (addr, value, n);
    if n > 0 {
        for _ in 0..1u32 << n.min(4) {
            std::hint::spin_loop();
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
        let at = site_at(ctx, site);
        let _at = clsync::checker::SiteScope::enter(at);
        let (order, scope) = (order(semantics), scope(scope_id));
        match host.runner {
            Runner::Item(wi) => wi.atomic_work_item_fence_dyn(flags, order, scope),
            Runner::Group(g) => g.atomic_work_item_fence_dyn(flags, order, scope, at),
        }
    }));
    match r {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            let at = site_text(ctx, site);
            let s = Some(site_at(ctx, site));
            stop(ctx, Stop::Fault(format!("{e}\n\tat {at}"), s));
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
    super::report::add(
        ctx,
        format!("Index exceeds static array size ({len} elements)"),
        format!("index {}", index as i64),
        Some(site_at(ctx, site)),
    );
}

/// A load or store through a pointer not aligned as its instruction says
/// (checked builds): reported with Oclgrind's headline; the access itself
/// is still made, as the CPU makes it.
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call (as
/// compiled code passes it), alive for the call.
pub(crate) unsafe extern "C" fn clsync_misaligned(
    ctx: *mut ItemCtx,
    ptr: u64,
    align: u64,
    write: u32,
    site: u32,
) {
    // SAFETY: our contract.
    let ctx = unsafe { &*ctx };
    // SAFETY: as in `site_text`.
    let host = unsafe { &*ctx.host };
    let slot = (ptr >> OFFSET_BITS) as usize;
    let object = host
        .slot_names
        .get(slot)
        .map_or_else(String::new, |i| format!("{} `{}`, ", i.space, i.name));
    let headline = if write != 0 {
        "Invalid memory store - source pointer is not aligned to the pointed type"
    } else {
        "Invalid memory load - source pointer is not aligned to the pointed type"
    };
    super::report::add(
        ctx,
        headline.to_string(),
        format!(
            "{object}byte {}, which is not a multiple of {align}",
            ptr & OFFSET_MASK
        ),
        Some(site_at(ctx, site)),
    );
}
