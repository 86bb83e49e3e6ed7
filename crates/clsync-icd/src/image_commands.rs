//! The commands on images: read, write, copy, fill, to and from buffers,
//! map and unmap. Each checks its region against the image and runs on the
//! queue's worker, as the buffer commands do ([`crate::transfer`]).

use std::ffi::c_void;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use opencl_sys::*;

use crate::api::{self, ClResult};
use crate::handle::Ref;
use crate::image::get;
use crate::memory::{self, Mem};
use crate::queue::{self, Queue, Work};
use crate::transfer::{copy_rect, enqueue, submit, triple, Addr, Rect};

/// The image of the queue's context behind a handle.
fn image_of(q: &Ref<Queue>, h: cl_mem) -> ClResult<Ref<Mem>> {
    let m = get(h)?;
    if !Arc::ptr_eq(&m.context, &q.context) {
        return Err(CL_INVALID_CONTEXT);
    }
    Ok(m)
}

/// A read (`to_host`) or write of an image region.
///
/// # Safety
///
/// The C API's contract for `clEnqueueReadImage` / `clEnqueueWriteImage`.
#[allow(clippy::too_many_arguments)]
unsafe fn transfer(
    queue: cl_command_queue,
    image: cl_mem,
    blocking: cl_bool,
    origin: *const usize,
    region: *const usize,
    row_pitch: usize,
    slice_pitch: usize,
    ptr: *const c_void,
    to_host: bool,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let command = if to_host {
        CL_COMMAND_READ_IMAGE
    } else {
        CL_COMMAND_WRITE_IMAGE
    };
    let checked = |q: &Ref<Queue>| -> ClResult<Work> {
        let m = image_of(q, image)?;
        let im = m.image.as_ref().ok_or(CL_INVALID_MEM_OBJECT)?;
        // SAFETY: the caller's contract.
        let (o, r) = unsafe { im.region(triple(origin)?, triple(region)?)? };
        if ptr.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        m.host_access(to_host)?;
        let tb = im.texel();
        let row = if row_pitch == 0 { r[0] * tb } else { row_pitch };
        let slice = if slice_pitch == 0 {
            row * r[1]
        } else {
            slice_pitch
        };
        if row < r[0] * tb || slice < row * r[1] {
            return Err(CL_INVALID_VALUE);
        }
        let host = Rect {
            origin: [0; 3],
            row,
            slice,
        };
        let own = im.rect(o);
        let bytes = [r[0] * tb, r[1], r[2]];
        let base = Addr::of(im.image.raw_bytes().0);
        let app = Addr::of(ptr);
        let work: Work = Box::new(move || {
            let _keep = &m;
            // SAFETY: the image's rectangle is inside it (checked); the
            // application's is its to make valid until the command is done.
            unsafe {
                if to_host {
                    copy_rect(base.ptr(), own, app.ptr(), host, bytes)
                } else {
                    copy_rect(app.ptr(), host, base.ptr(), own, bytes)
                }
            };
            Ok(())
        });
        Ok(work)
    };
    // SAFETY: the caller's contract.
    unsafe { enqueue(queue, n, list, event, command, blocking, checked) }
}

/// `clEnqueueReadImage`.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueReadImage(
    queue: cl_command_queue,
    image: cl_mem,
    blocking_read: cl_bool,
    origin: *const usize,
    region: *const usize,
    row_pitch: usize,
    slice_pitch: usize,
    ptr: *mut c_void,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    // SAFETY: the caller's contract.
    unsafe {
        transfer(
            queue,
            image,
            blocking_read,
            origin,
            region,
            row_pitch,
            slice_pitch,
            ptr,
            true,
            n,
            list,
            event,
        )
    }
}

/// `clEnqueueWriteImage`.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueWriteImage(
    queue: cl_command_queue,
    image: cl_mem,
    blocking_write: cl_bool,
    origin: *const usize,
    region: *const usize,
    input_row_pitch: usize,
    input_slice_pitch: usize,
    ptr: *const c_void,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    // SAFETY: the caller's contract.
    unsafe {
        transfer(
            queue,
            image,
            blocking_write,
            origin,
            region,
            input_row_pitch,
            input_slice_pitch,
            ptr,
            false,
            n,
            list,
            event,
        )
    }
}

/// `clEnqueueCopyImage`: same format on both sides.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueCopyImage(
    queue: cl_command_queue,
    src: cl_mem,
    dst: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let checked = |q: &Ref<Queue>| -> ClResult<Work> {
        let (s, d) = (image_of(q, src)?, image_of(q, dst)?);
        let (si, di) = (
            s.image.as_ref().ok_or(CL_INVALID_MEM_OBJECT)?,
            d.image.as_ref().ok_or(CL_INVALID_MEM_OBJECT)?,
        );
        if si.image.format() != di.image.format() {
            return Err(CL_IMAGE_FORMAT_MISMATCH);
        }
        // SAFETY: the caller's contract.
        let (so, r, doo) = unsafe { (triple(src_origin)?, triple(region)?, triple(dst_origin)?) };
        let (so, sr) = si.region(so, r)?;
        let (doo, _) = di.region(doo, r)?;
        if Arc::ptr_eq(&s, &d) && (0..3).all(|k| so[k] < doo[k] + sr[k] && doo[k] < so[k] + sr[k]) {
            return Err(CL_MEM_COPY_OVERLAP);
        }
        let (sr_, dr_) = (si.rect(so), di.rect(doo));
        let bytes = [sr[0] * si.texel(), sr[1], sr[2]];
        let (sb, db) = (
            Addr::of(si.image.raw_bytes().0),
            Addr::of(di.image.raw_bytes().0),
        );
        let work: Work = Box::new(move || {
            let _keep = (&s, &d);
            // SAFETY: both rectangles are inside their images (checked) and
            // do not overlap.
            unsafe { copy_rect(sb.ptr(), sr_, db.ptr(), dr_, bytes) };
            Ok(())
        });
        Ok(work)
    };
    // SAFETY: the caller's contract.
    unsafe { enqueue(queue, n, list, event, CL_COMMAND_COPY_IMAGE, 0, checked) }
}

/// `clEnqueueFillImage`: the color as `write_image{f,i,ui}` would store
/// it.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clEnqueueFillImage(
    queue: cl_command_queue,
    image: cl_mem,
    fill_color: *const c_void,
    origin: *const usize,
    region: *const usize,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let checked = |q: &Ref<Queue>| -> ClResult<Work> {
        let m = image_of(q, image)?;
        let im = m.image.as_ref().ok_or(CL_INVALID_MEM_OBJECT)?;
        if fill_color.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: the caller's contract.
        let (o, r) = unsafe { im.region(triple(origin)?, triple(region)?)? };
        // SAFETY: a four-component color (float4, int4 or uint4): 16 bytes.
        let color = unsafe { fill_color.cast::<[u32; 4]>().read_unaligned() };
        let texel = im.image.texel_of(color);
        let own = im.rect(o);
        let base = Addr::of(im.image.raw_bytes().0);
        let work: Work = Box::new(move || {
            let _keep = &m;
            for z in 0..r[2] {
                for y in 0..r[1] {
                    for x in 0..r[0] {
                        // SAFETY: inside the image (the region was checked).
                        unsafe {
                            let at = base.ptr().add(own.at(y, z) + x * texel.len());
                            std::ptr::copy_nonoverlapping(texel.as_ptr(), at, texel.len());
                        }
                    }
                }
            }
            Ok(())
        });
        Ok(work)
    };
    // SAFETY: the caller's contract.
    unsafe { enqueue(queue, n, list, event, CL_COMMAND_FILL_IMAGE, 0, checked) }
}

/// A copy between an image region and a buffer's tightly packed bytes.
///
/// # Safety
///
/// The C API's contract for the two commands.
#[allow(clippy::too_many_arguments)]
unsafe fn image_buffer(
    queue: cl_command_queue,
    image: cl_mem,
    buffer: cl_mem,
    origin: *const usize,
    region: *const usize,
    offset: usize,
    to_buffer: bool,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let command = if to_buffer {
        CL_COMMAND_COPY_IMAGE_TO_BUFFER
    } else {
        CL_COMMAND_COPY_BUFFER_TO_IMAGE
    };
    let checked = |q: &Ref<Queue>| -> ClResult<Work> {
        let m = image_of(q, image)?;
        let b = memory::get(buffer)?;
        if b.image.is_some() || !Arc::ptr_eq(&b.context, &q.context) {
            return Err(CL_INVALID_MEM_OBJECT);
        }
        let im = m.image.as_ref().ok_or(CL_INVALID_MEM_OBJECT)?;
        // SAFETY: the caller's contract.
        let (o, r) = unsafe { im.region(triple(origin)?, triple(region)?)? };
        let tb = im.texel();
        let packed = Rect {
            origin: [0; 3],
            row: r[0] * tb,
            slice: r[0] * tb * r[1],
        };
        if !b.holds(offset, r[0] * tb * r[1] * r[2]) {
            return Err(CL_INVALID_VALUE);
        }
        let own = im.rect(o);
        let bytes = [r[0] * tb, r[1], r[2]];
        let base = Addr::of(im.image.raw_bytes().0);
        let work: Work = Box::new(move || {
            let _keep = &m;
            // SAFETY: both sides' regions are inside them (checked).
            unsafe {
                let buf = b.ptr().add(offset);
                if to_buffer {
                    copy_rect(base.ptr(), own, buf, packed, bytes)
                } else {
                    copy_rect(buf, packed, base.ptr(), own, bytes)
                }
            };
            Ok(())
        });
        Ok(work)
    };
    // SAFETY: the caller's contract.
    unsafe { enqueue(queue, n, list, event, command, 0, checked) }
}

/// `clEnqueueCopyImageToBuffer`.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueCopyImageToBuffer(
    queue: cl_command_queue,
    src_image: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    region: *const usize,
    dst_offset: usize,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    // SAFETY: the caller's contract.
    unsafe {
        image_buffer(
            queue, src_image, dst_buffer, src_origin, region, dst_offset, true, n, list, event,
        )
    }
}

/// `clEnqueueCopyBufferToImage`.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueCopyBufferToImage(
    queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_image: cl_mem,
    src_offset: usize,
    dst_origin: *const usize,
    region: *const usize,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    // SAFETY: the caller's contract.
    unsafe {
        image_buffer(
            queue, dst_image, src_buffer, dst_origin, region, src_offset, false, n, list, event,
        )
    }
}

/// `clEnqueueMapImage`: the image's own texels, or, for
/// `CL_MEM_USE_HOST_PTR`, the application's memory brought up to date.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueMapImage(
    queue: cl_command_queue,
    image: cl_mem,
    blocking_map: cl_bool,
    map_flags: cl_map_flags,
    origin: *const usize,
    region: *const usize,
    image_row_pitch: *mut usize,
    image_slice_pitch: *mut usize,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe {
        api::object(errcode_ret, || {
            let (q, wait) = queue::with_wait_list(queue, n, list)?;
            let m = image_of(&q, image)?;
            let im = m.image.as_ref().ok_or(CL_INVALID_MEM_OBJECT)?;
            let (o, r) = im.region(triple(origin)?, triple(region)?)?;
            if image_row_pitch.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            let layered = [
                CL_MEM_OBJECT_IMAGE3D,
                CL_MEM_OBJECT_IMAGE2D_ARRAY,
                CL_MEM_OBJECT_IMAGE1D_ARRAY,
            ];
            if layered.contains(&im.ty) && image_slice_pitch.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            memory::check_map_flags(&m, map_flags)?;
            let own = im.rect(o);
            let (ptr, row, slice, work): (*mut c_void, usize, usize, Work) = match im.host {
                None => {
                    let (row, slice) = im.pitches();
                    let p = im.image.raw_bytes().0.add(own.at(0, 0));
                    (p.cast(), row, slice, Box::new(|| Ok(())))
                }
                Some((h, row, slice)) => {
                    let host = Rect {
                        origin: [o[0] * im.texel(), o[1], o[2]],
                        row,
                        slice,
                    };
                    let bytes = [r[0] * im.texel(), r[1], r[2]];
                    let (base, app) = (Addr::of(im.image.raw_bytes().0), Addr(h));
                    let keep = m.clone();
                    let p = (h as *mut u8).add(host.at(0, 0));
                    (
                        p.cast(),
                        row,
                        slice,
                        Box::new(move || {
                            let _keep = &keep;
                            // SAFETY: the image's rectangle is inside it; the
                            // application's memory has its pitches.
                            copy_rect(base.ptr(), own, app.ptr(), host, bytes);
                            Ok(())
                        }),
                    )
                }
            };
            api::write(image_row_pitch, row);
            api::write(
                image_slice_pitch,
                match im.ty {
                    CL_MEM_OBJECT_IMAGE1D
                    | CL_MEM_OBJECT_IMAGE1D_BUFFER
                    | CL_MEM_OBJECT_IMAGE2D => 0,
                    CL_MEM_OBJECT_IMAGE1D_ARRAY => row,
                    _ => slice,
                },
            );
            m.maps.fetch_add(1, Ordering::Relaxed);
            m.note_map(ptr as usize, o, r, map_flags);
            submit(&q, CL_COMMAND_MAP_IMAGE, wait, blocking_map, event, work)
                .map_err(|_| CL_MAP_FAILURE)?;
            Ok(ptr)
        })
    }
}

/// An unmap of a mapped image: for `CL_MEM_USE_HOST_PTR`, a write map's
/// bytes go back into the image.
pub fn unmap_work(m: &Ref<Mem>, mapped: usize) -> Work {
    let (Some(im), Some((o, r, flags))) = (m.image.as_ref(), m.take_map(mapped)) else {
        return Box::new(|| Ok(()));
    };
    let Some((h, row, slice)) = im.host else {
        return Box::new(|| Ok(()));
    };
    if flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) == 0 {
        return Box::new(|| Ok(()));
    }
    let host = Rect {
        origin: [o[0] * im.texel(), o[1], o[2]],
        row,
        slice,
    };
    let own = im.rect(o);
    let bytes = [r[0] * im.texel(), r[1], r[2]];
    let (base, app) = (Addr::of(im.image.raw_bytes().0), Addr(h));
    let keep = m.clone();
    Box::new(move || {
        let _keep = &keep;
        // SAFETY: as for the map, the other way.
        unsafe { copy_rect(app.ptr(), host, base.ptr(), own, bytes) };
        Ok(())
    })
}
