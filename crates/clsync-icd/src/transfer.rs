//! The commands that move a buffer's bytes: read, write, copy, fill, their
//! rectangular forms, map and unmap, migrate.
//!
//! Each is checked when it is enqueued (every error the specification
//! names is returned then) and runs on the queue's worker; a blocking one
//! waits for its event.

use std::ffi::c_void;
use std::sync::atomic::Ordering;

use opencl_sys::*;

use crate::api::{self, ClResult};
use crate::event::Event;
use crate::handle::Ref;
use crate::memory::{self, Mem};
use crate::queue::{self, Queue, Work};

/// An address the worker may use: the application promises the memory
/// stays valid and untouched until the command completes.
#[derive(Clone, Copy)]
pub(crate) struct Addr(pub(crate) usize);

impl Addr {
    pub(crate) fn of<T>(p: *const T) -> Addr {
        Addr(p as usize)
    }
    pub(crate) fn ptr(self) -> *mut u8 {
        self.0 as *mut u8
    }
}

/// Enqueues a command, hands its event out, waits for it when blocking.
///
/// # Safety
///
/// `event` is null or writable.
pub(crate) unsafe fn submit(
    q: &Ref<Queue>,
    command: cl_command_type,
    wait: Vec<Ref<Event>>,
    blocking: cl_bool,
    event: *mut cl_event,
    work: Work,
) -> ClResult<()> {
    let e = Queue::enqueue(q, command, wait, work);
    // SAFETY: the caller's contract.
    unsafe { queue::give_event(event, &e) };
    if blocking != 0 && e.wait() < 0 {
        return Err(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    }
    Ok(())
}

/// The frame every enqueued command shares: the queue and its wait list
/// checked, then `work` (which checks the command's own arguments and
/// makes what the worker runs), then [`submit`]; errors as the C API
/// returns them.
///
/// # Safety
///
/// `queue`, `list` (`n` events) and `event` as the C API takes them.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn enqueue(
    queue: cl_command_queue,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
    command: cl_command_type,
    blocking: cl_bool,
    work: impl FnOnce(&Ref<Queue>) -> ClResult<Work>,
) -> cl_int {
    // SAFETY: the caller's contract.
    api::status(|| unsafe { enqueue_checked(queue, n, list, event, command, blocking, work) })
}

/// [`enqueue`] inside a caller's own error handling.
///
/// # Safety
///
/// As for [`enqueue`].
pub(crate) unsafe fn enqueue_checked(
    queue: cl_command_queue,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
    command: cl_command_type,
    blocking: cl_bool,
    work: impl FnOnce(&Ref<Queue>) -> ClResult<Work>,
) -> ClResult<()> {
    // SAFETY: the caller's contract.
    let (q, wait) = unsafe { queue::with_wait_list(queue, n, list)? };
    let work = work(&q)?;
    // SAFETY: the caller's contract.
    unsafe { submit(&q, command, wait, blocking, event, work) }
}

/// The buffer behind a handle, of the queue's context.
fn buffer(q: &Ref<Queue>, h: cl_mem) -> ClResult<Ref<Mem>> {
    let m = memory::get(h)?;
    if m.image.is_some() {
        return Err(CL_INVALID_MEM_OBJECT);
    }
    if !std::sync::Arc::ptr_eq(&m.context, &q.context) {
        return Err(CL_INVALID_CONTEXT);
    }
    Ok(m)
}

/// A read (`to_host`) or write of `size` bytes of a buffer at `offset`.
///
/// # Safety
///
/// The C API's contract for `clEnqueueReadBuffer` and
/// `clEnqueueWriteBuffer`.
#[allow(clippy::too_many_arguments)]
unsafe fn buffer_command(
    queue: cl_command_queue,
    buf: cl_mem,
    blocking: cl_bool,
    offset: usize,
    size: usize,
    ptr: *const c_void,
    to_host: bool,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let command = if to_host {
        CL_COMMAND_READ_BUFFER
    } else {
        CL_COMMAND_WRITE_BUFFER
    };
    let checked = |q: &Ref<Queue>| -> ClResult<Work> {
        let m = buffer(q, buf)?;
        if ptr.is_null() || size == 0 || !m.holds(offset, size) {
            return Err(CL_INVALID_VALUE);
        }
        m.host_access(to_host)?;
        let host = Addr::of(ptr);
        let work: Work = Box::new(move || {
            // SAFETY: `offset + size` is within the buffer; the application's
            // `ptr` has `size` bytes until the command completes.
            unsafe {
                if to_host {
                    std::ptr::copy(m.ptr().add(offset), host.ptr(), size)
                } else {
                    std::ptr::copy(host.ptr(), m.ptr().add(offset), size)
                }
            };
            Ok(())
        });
        Ok(work)
    };
    // SAFETY: the caller's contract.
    unsafe { enqueue(queue, n, list, event, command, blocking, checked) }
}

/// `clEnqueueReadBuffer`.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueReadBuffer(
    queue: cl_command_queue,
    buf: cl_mem,
    blocking: cl_bool,
    offset: usize,
    size: usize,
    ptr: *mut c_void,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    // SAFETY: the caller's contract.
    unsafe {
        buffer_command(
            queue, buf, blocking, offset, size, ptr, true, n, list, event,
        )
    }
}

/// `clEnqueueWriteBuffer`.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueWriteBuffer(
    queue: cl_command_queue,
    buf: cl_mem,
    blocking: cl_bool,
    offset: usize,
    size: usize,
    ptr: *const c_void,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    // SAFETY: the caller's contract.
    unsafe {
        buffer_command(
            queue, buf, blocking, offset, size, ptr, false, n, list, event,
        )
    }
}

/// `clEnqueueCopyBuffer`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clEnqueueCopyBuffer(
    queue: cl_command_queue,
    src: cl_mem,
    dst: cl_mem,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let checked = |q: &Ref<Queue>| -> ClResult<Work> {
        let (s, d) = (buffer(q, src)?, buffer(q, dst)?);
        if size == 0 || !s.holds(src_offset, size) || !d.holds(dst_offset, size) {
            return Err(CL_INVALID_VALUE);
        }
        if s.overlaps(src_offset, &d, dst_offset, size) {
            return Err(CL_MEM_COPY_OVERLAP);
        }
        let work: Work = Box::new(move || {
            // SAFETY: both ranges are within their buffers and do not
            // overlap.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    s.ptr().add(src_offset),
                    d.ptr().add(dst_offset),
                    size,
                )
            };
            Ok(())
        });
        Ok(work)
    };
    // SAFETY: the caller's contract.
    unsafe { enqueue(queue, n, list, event, CL_COMMAND_COPY_BUFFER, 0, checked) }
}

/// `clEnqueueFillBuffer`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clEnqueueFillBuffer(
    queue: cl_command_queue,
    buf: cl_mem,
    pattern: *const c_void,
    pattern_size: usize,
    offset: usize,
    size: usize,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let checked = |q: &Ref<Queue>| -> ClResult<Work> {
        let m = buffer(q, buf)?;
        if pattern.is_null()
            || !pattern_size.is_power_of_two()
            || pattern_size > 128
            || !offset.is_multiple_of(pattern_size)
            || !size.is_multiple_of(pattern_size)
            || !m.holds(offset, size)
        {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: the application's pattern has `pattern_size` bytes; it is
        // copied now (the specification lets the application reuse it at
        // once).
        let bytes =
            unsafe { std::slice::from_raw_parts(pattern.cast::<u8>(), pattern_size) }.to_vec();
        let work: Work = Box::new(move || {
            for i in (0..size).step_by(pattern_size) {
                // SAFETY: `offset + i + pattern_size <= offset + size`, within
                // the buffer.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        bytes.as_ptr(),
                        m.ptr().add(offset + i),
                        pattern_size,
                    )
                };
            }
            Ok(())
        });
        Ok(work)
    };
    // SAFETY: the caller's contract.
    unsafe { enqueue(queue, n, list, event, CL_COMMAND_FILL_BUFFER, 0, checked) }
}

/// A rectangle of bytes in a buffer or in host memory: its origin, row and
/// slice pitches.
#[derive(Clone, Copy)]
pub(crate) struct Rect {
    pub(crate) origin: [usize; 3],
    pub(crate) row: usize,
    pub(crate) slice: usize,
}

impl Rect {
    /// The pitches with their defaults (0: tightly packed), checked
    /// against the region.
    fn new(origin: [usize; 3], region: [usize; 3], row: usize, slice: usize) -> ClResult<Rect> {
        let row = if row == 0 { region[0] } else { row };
        let slice = if slice == 0 { region[1] * row } else { slice };
        if row < region[0] || slice < region[1] * row || slice % row != 0 {
            return Err(CL_INVALID_VALUE);
        }
        Ok(Rect { origin, row, slice })
    }

    /// The byte offset of row `y` of slice `z`.
    pub(crate) fn at(&self, y: usize, z: usize) -> usize {
        (self.origin[2] + z) * self.slice + (self.origin[1] + y) * self.row + self.origin[0]
    }

    /// One past the last byte the region touches.
    fn end(&self, region: [usize; 3]) -> Option<usize> {
        let last = (self.origin[2] + region[2] - 1)
            .checked_mul(self.slice)?
            .checked_add((self.origin[1] + region[1] - 1).checked_mul(self.row)?)?;
        last.checked_add(self.origin[0])?.checked_add(region[0])
    }
}

/// Copies a region row by row.
///
/// # Safety
///
/// Every row of both rectangles is valid for `region[0]` bytes.
pub(crate) unsafe fn copy_rect(src: *const u8, s: Rect, dst: *mut u8, d: Rect, region: [usize; 3]) {
    for z in 0..region[2] {
        for y in 0..region[1] {
            // SAFETY: the caller's contract.
            unsafe { std::ptr::copy(src.add(s.at(y, z)), dst.add(d.at(y, z)), region[0]) };
        }
    }
}

/// Reads three sizes from C.
///
/// # Safety
///
/// `p` is null or has three readable `usize`.
pub(crate) unsafe fn triple(p: *const usize) -> ClResult<[usize; 3]> {
    // SAFETY: the caller's contract.
    let s = unsafe { api::slice(p, 3, CL_INVALID_VALUE)? };
    Ok([s[0], s[1], s[2]])
}

/// What the rectangular read and write share: the checked buffer and host
/// rectangles.
///
/// # Safety
///
/// The three arrays are null or have three elements.
#[allow(clippy::too_many_arguments)]
unsafe fn rects(
    m: &Mem,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row: usize,
    buffer_slice: usize,
    host_row: usize,
    host_slice: usize,
) -> ClResult<(Rect, Rect, [usize; 3])> {
    // SAFETY: the caller's contract.
    let (bo, ho, r) = unsafe {
        (
            triple(buffer_origin)?,
            triple(host_origin)?,
            triple(region)?,
        )
    };
    if r.contains(&0) {
        return Err(CL_INVALID_VALUE);
    }
    let b = Rect::new(bo, r, buffer_row, buffer_slice)?;
    let h = Rect::new(ho, r, host_row, host_slice)?;
    if b.end(r).is_none_or(|e| e > m.size) || h.end(r).is_none() {
        return Err(CL_INVALID_VALUE);
    }
    Ok((b, h, r))
}

/// The rectangles of a rectangular read or write, as the C API gives them.
struct RectArgs {
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    /// Buffer row, buffer slice, host row, host slice.
    pitches: [usize; 4],
}

/// A rectangular read (`to_host`) or write of a buffer.
///
/// # Safety
///
/// The C API's contract for `clEnqueueReadBufferRect` and
/// `clEnqueueWriteBufferRect`.
#[allow(clippy::too_many_arguments)]
unsafe fn rect_command(
    queue: cl_command_queue,
    buf: cl_mem,
    blocking: cl_bool,
    a: RectArgs,
    ptr: *const c_void,
    to_host: bool,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let command = if to_host {
        CL_COMMAND_READ_BUFFER_RECT
    } else {
        CL_COMMAND_WRITE_BUFFER_RECT
    };
    let checked = |q: &Ref<Queue>| -> ClResult<Work> {
        let m = buffer(q, buf)?;
        let [br, bs, hr, hs] = a.pitches;
        // SAFETY: the caller's contract.
        let (b, h, r) =
            unsafe { rects(&m, a.buffer_origin, a.host_origin, a.region, br, bs, hr, hs)? };
        if ptr.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        m.host_access(to_host)?;
        let host = Addr::of(ptr);
        let work: Work = Box::new(move || {
            // SAFETY: the buffer's rectangle is within it (checked); the
            // host's is the application's to make valid.
            unsafe {
                if to_host {
                    copy_rect(m.ptr(), b, host.ptr(), h, r)
                } else {
                    copy_rect(host.ptr(), h, m.ptr(), b, r)
                }
            };
            Ok(())
        });
        Ok(work)
    };
    // SAFETY: the caller's contract.
    unsafe { enqueue(queue, n, list, event, command, blocking, checked) }
}

/// `clEnqueueReadBufferRect`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clEnqueueReadBufferRect(
    queue: cl_command_queue,
    buf: cl_mem,
    blocking: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *mut c_void,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let a = RectArgs {
        buffer_origin,
        host_origin,
        region,
        pitches: [
            buffer_row_pitch,
            buffer_slice_pitch,
            host_row_pitch,
            host_slice_pitch,
        ],
    };
    // SAFETY: the caller's contract.
    unsafe { rect_command(queue, buf, blocking, a, ptr, true, n, list, event) }
}

/// `clEnqueueWriteBufferRect`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clEnqueueWriteBufferRect(
    queue: cl_command_queue,
    buf: cl_mem,
    blocking: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *const c_void,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let a = RectArgs {
        buffer_origin,
        host_origin,
        region,
        pitches: [
            buffer_row_pitch,
            buffer_slice_pitch,
            host_row_pitch,
            host_slice_pitch,
        ],
    };
    // SAFETY: the caller's contract.
    unsafe { rect_command(queue, buf, blocking, a, ptr, false, n, list, event) }
}

/// `clEnqueueCopyBufferRect`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clEnqueueCopyBufferRect(
    queue: cl_command_queue,
    src: cl_mem,
    dst: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    src_row_pitch: usize,
    src_slice_pitch: usize,
    dst_row_pitch: usize,
    dst_slice_pitch: usize,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let checked = |q: &Ref<Queue>| -> ClResult<Work> {
        let (s, d) = (buffer(q, src)?, buffer(q, dst)?);
        // SAFETY: the caller's contract.
        let (so, doo, r) = unsafe { (triple(src_origin)?, triple(dst_origin)?, triple(region)?) };
        if r.contains(&0) {
            return Err(CL_INVALID_VALUE);
        }
        let sr = Rect::new(so, r, src_row_pitch, src_slice_pitch)?;
        let dr = Rect::new(doo, r, dst_row_pitch, dst_slice_pitch)?;
        let (Some(se), Some(de)) = (sr.end(r), dr.end(r)) else {
            return Err(CL_INVALID_VALUE);
        };
        if se > s.size || de > d.size {
            return Err(CL_INVALID_VALUE);
        }
        let (s0, d0) = (sr.at(0, 0), dr.at(0, 0));
        // Conservative: the rectangles' spans overlap (their rows might
        // not).
        if s.overlaps(s0, &d, d0, (se - s0).max(de - d0)) {
            return Err(CL_MEM_COPY_OVERLAP);
        }
        let work: Work = Box::new(move || {
            // SAFETY: both rectangles are within their buffers (checked).
            unsafe { copy_rect(s.ptr(), sr, d.ptr(), dr, r) };
            Ok(())
        });
        Ok(work)
    };
    // SAFETY: the caller's contract.
    unsafe {
        enqueue(
            queue,
            n,
            list,
            event,
            CL_COMMAND_COPY_BUFFER_RECT,
            0,
            checked,
        )
    }
}

/// `clEnqueueMapBuffer`: the buffer's own bytes (the device is the host).
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clEnqueueMapBuffer(
    queue: cl_command_queue,
    buf: cl_mem,
    blocking: cl_bool,
    map_flags: cl_map_flags,
    offset: usize,
    size: usize,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe {
        api::object(errcode_ret, || {
            let (q, wait) = queue::with_wait_list(queue, n, list)?;
            let m = buffer(&q, buf)?;
            if size == 0 || !m.holds(offset, size) {
                return Err(CL_INVALID_VALUE);
            }
            memory::check_map_flags(&m, map_flags)?;
            let p = m.map_ptr(offset);
            m.maps.fetch_add(1, Ordering::Relaxed);
            submit(
                &q,
                CL_COMMAND_MAP_BUFFER,
                wait,
                blocking,
                event,
                Box::new(|| Ok(())),
            )
            .map_err(|_| CL_MAP_FAILURE)?;
            Ok(p)
        })
    }
}

/// `clEnqueueUnmapMemObject`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clEnqueueUnmapMemObject(
    queue: cl_command_queue,
    mem: cl_mem,
    mapped: *mut c_void,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let checked = |q: &Ref<Queue>| -> ClResult<Work> {
        let m = memory::get(mem)?;
        if !std::sync::Arc::ptr_eq(&m.context, &q.context) {
            return Err(CL_INVALID_CONTEXT);
        }
        let start = m.ptr() as usize;
        let work = if m.image.is_some() {
            if !m.is_mapped(mapped as usize) {
                return Err(CL_INVALID_VALUE);
            }
            crate::image_commands::unmap_work(&m, mapped as usize)
        } else if (start..start + m.size).contains(&(mapped as usize)) {
            Box::new(|| Ok(())) as Work
        } else {
            return Err(CL_INVALID_VALUE);
        };
        // The count may not go below zero: an unmap of something not
        // mapped is the application's error.
        m.maps
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| c.checked_sub(1))
            .map_err(|_| CL_INVALID_VALUE)?;
        Ok(work)
    };
    // SAFETY: the caller's contract.
    unsafe {
        enqueue(
            queue,
            n,
            list,
            event,
            CL_COMMAND_UNMAP_MEM_OBJECT,
            0,
            checked,
        )
    }
}

/// `clEnqueueMigrateMemObjects`: there is one device, nothing moves.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clEnqueueMigrateMemObjects(
    queue: cl_command_queue,
    num_mem_objects: cl_uint,
    mem_objects: *const cl_mem,
    flags: cl_mem_migration_flags,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    api::status(|| {
        // SAFETY: the caller's contract.
        let (q, wait) = unsafe { queue::with_wait_list(queue, n, list)? };
        // SAFETY: the caller's contract.
        let mems = unsafe { api::slice(mem_objects, num_mem_objects as usize, CL_INVALID_VALUE)? };
        if mems.is_empty()
            || flags & !(CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED) != 0
        {
            return Err(CL_INVALID_VALUE);
        }
        for &h in mems {
            buffer(&q, h)?;
        }
        // SAFETY: the caller's contract.
        unsafe {
            submit(
                &q,
                CL_COMMAND_MIGRATE_MEM_OBJECTS,
                wait,
                0,
                event,
                Box::new(|| Ok(())),
            )
        }
    })
}
