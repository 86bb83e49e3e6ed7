//! Images made from buffers (`CL_MEM_OBJECT_IMAGE1D_BUFFER`, OpenCL C's
//! `image1d_buffer_t`): a 1D image whose texels are a buffer's bytes, so
//! that a kernel's image writes are the buffer's contents and the buffer's
//! writes the image's texels. Its flags are the buffer's unless narrowed
//! (`clCreateImage`'s rules for `image_desc->buffer`).

use std::ffi::c_void;
use std::sync::Arc;

use clsync_opencl::{Image, ImageFormat};
use opencl_sys::*;

use crate::api::ClResult;
use crate::context::Context;
use crate::handle::Ref;
use crate::image::ImageMem;
use crate::memory::{self, ACCESS, HOST_ACCESS, HOST_PTR};

/// The most texels an image made from a buffer has
/// (`CL_DEVICE_IMAGE_MAX_BUFFER_SIZE`; the specification's minimum is
/// 65536).
pub const MAX_TEXELS: usize = 1 << 27;

/// An image made from the buffer `desc.buffer`: `asked` the flags as the
/// application gave them, `format` what clsync stores for `cl_format`,
/// `host_ptr` the application's (which must be null).
pub(crate) fn create(
    c: Ref<Context>,
    properties: Vec<cl_mem_properties>,
    asked: cl_mem_flags,
    cl_format: cl_image_format,
    format: ImageFormat,
    desc: &cl_image_desc,
    host_ptr: *mut c_void,
) -> ClResult<*mut c_void> {
    if !host_ptr.is_null() {
        return Err(CL_INVALID_HOST_PTR);
    }
    if desc.buffer.is_null()
        || desc.image_row_pitch != 0
        || desc.image_slice_pitch != 0
        || desc.num_mip_levels != 0
        || desc.num_samples != 0
    {
        return Err(CL_INVALID_IMAGE_DESCRIPTOR);
    }
    let buffer = memory::get(desc.buffer).map_err(|_| CL_INVALID_IMAGE_DESCRIPTOR)?;
    if buffer.image.is_some() {
        return Err(CL_INVALID_IMAGE_DESCRIPTOR);
    }
    if !Arc::ptr_eq(&buffer.context, &c) {
        return Err(CL_INVALID_CONTEXT);
    }
    let flags = inherit(asked, buffer.flags)?;
    let bytes = desc
        .image_width
        .checked_mul(format.texel_bytes())
        .filter(|b| (1..=MAX_TEXELS).contains(&desc.image_width) && *b <= buffer.size)
        .ok_or(CL_INVALID_IMAGE_SIZE)?;
    let name = format!("{} (image1d_buffer_t)", buffer.name());
    let keep: Arc<dyn std::any::Any + Send + Sync> = Arc::new(buffer.clone());
    // SAFETY: the buffer's first `bytes` bytes (within its size, checked
    // above) stay allocated while `keep` holds a reference to it; kernels
    // and the host access them under the memory model's rules, as the
    // buffer's own.
    let image = unsafe { Image::over(buffer.ptr(), bytes, format, name, keep) };
    let im = ImageMem {
        image: Arc::new(image),
        ty: CL_MEM_OBJECT_IMAGE1D_BUFFER,
        format: cl_format,
        host: None,
    };
    Ok(memory::create_image(
        c,
        flags,
        properties,
        im,
        std::ptr::null_mut(),
        Some(buffer),
    ))
}

/// The flags of an image made from a buffer with flags `buffer`, the
/// application having asked for `asked`: the buffer's access and host
/// access unless `asked` narrows them, its host-pointer flags always
/// (`CL_INVALID_VALUE` if `asked` gives any, or widens an access).
///
/// ```
/// use clsync_icd::image_buffer::inherit;
/// use opencl_sys::*;
/// let rw = CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR;
/// assert_eq!(inherit(0, rw), Ok(rw));
/// assert_eq!(inherit(CL_MEM_READ_ONLY, rw), Ok(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR));
/// assert_eq!(inherit(CL_MEM_READ_WRITE, CL_MEM_READ_ONLY), Err(CL_INVALID_VALUE));
/// assert_eq!(inherit(CL_MEM_USE_HOST_PTR, rw), Err(CL_INVALID_VALUE));
/// ```
pub fn inherit(asked: cl_mem_flags, buffer: cl_mem_flags) -> ClResult<cl_mem_flags> {
    memory::check_flags(asked)?;
    if asked & HOST_PTR != 0 {
        return Err(CL_INVALID_VALUE);
    }
    // A narrower access is allowed, a wider one is not.
    let access = match (asked & ACCESS, buffer & ACCESS) {
        (0, b) => b,
        (a, b) if a == b || b == CL_MEM_READ_WRITE => a,
        _ => return Err(CL_INVALID_VALUE),
    };
    let host = match (asked & HOST_ACCESS, buffer & HOST_ACCESS) {
        (0, b) => b,
        (a, 0) => a,
        (a, b) if a == b => a,
        // Host-write-only or host-read-only narrowed to no access.
        (CL_MEM_HOST_NO_ACCESS, _) => CL_MEM_HOST_NO_ACCESS,
        _ => return Err(CL_INVALID_VALUE),
    };
    Ok((asked & !(ACCESS | HOST_ACCESS)) | access | host | (buffer & HOST_PTR))
}
