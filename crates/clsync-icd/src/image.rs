//! Images: `clCreateImage*`, the formats, `clGetImageInfo`. The commands
//! on them are in [`crate::image_commands`], samplers in
//! [`crate::sampler`].
//!
//! An image's texels are a [`clsync_opencl::Image`], what compiled kernels
//! read and write: tightly packed rows, `width` texels each, `height` rows
//! a slice or layer (a 1D array's layers are its slices). The memory object
//! ([`Mem`]) sees those bytes as its storage. For `CL_MEM_USE_HOST_PTR` the
//! application's memory is copied in when the image is made, copied out
//! when a map hands out the application's pointer (as the specification
//! requires) and back in when a write map is unmapped: the image's own
//! texels are the copy kernels use, as the specification allows.

use std::ffi::c_void;
use std::sync::Arc;

use clsync_opencl::{ChannelOrder, ChannelType, Image, ImageFormat, ImageShape};
use opencl_sys::*;

use crate::api::{self, ClResult};
use crate::context;
use crate::handle::Ref;
use crate::info::Value;
use crate::memory::{self, Mem};
use crate::platform::answer;
use crate::transfer::{copy_rect, Rect};

/// The largest 2D image side, and the most layers of an array.
pub const MAX_2D: usize = 16384;
/// The largest 3D image side.
pub const MAX_3D: usize = 2048;
/// The most layers of an image array.
pub const MAX_LAYERS: usize = 2048;

/// What an image memory object is, beside its bytes.
pub struct ImageMem {
    /// The texels, as kernels see them.
    pub image: Arc<Image>,
    /// `CL_MEM_TYPE`.
    pub ty: cl_mem_object_type,
    /// The format as the application gave it.
    pub format: cl_image_format,
    /// The application's memory of a `CL_MEM_USE_HOST_PTR` image, with its
    /// row and slice pitches.
    pub host: Option<(usize, usize, usize)>,
}

impl ImageMem {
    /// Bytes of one texel.
    pub fn texel(&self) -> usize {
        self.image.format().texel_bytes()
    }
    /// `[width, height, depth or layers]` as the texels lie.
    pub fn extent(&self) -> [usize; 3] {
        self.image.shape().extent()
    }
    /// The image's own row and slice pitches.
    pub fn pitches(&self) -> (usize, usize) {
        let [w, h, _] = self.extent();
        (w * self.texel(), w * h * self.texel())
    }
    /// An origin or region as the API gives it, in the texels' layout: a 1D
    /// array's layer (the API's second coordinate) is its third.
    fn lay(&self, v: [usize; 3], fill: usize) -> [usize; 3] {
        match self.ty {
            CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE1D_BUFFER => [v[0], fill, fill],
            CL_MEM_OBJECT_IMAGE1D_ARRAY => [v[0], fill, v[1]],
            CL_MEM_OBJECT_IMAGE2D => [v[0], v[1], fill],
            _ => v,
        }
    }
    /// Checks an origin and region against the image (`CL_INVALID_VALUE`);
    /// returns them in the texels' layout.
    pub(crate) fn region(
        &self,
        origin: [usize; 3],
        region: [usize; 3],
    ) -> ClResult<([usize; 3], [usize; 3])> {
        // The coordinates a type does not have must be 0 (origin) and 1
        // (region).
        let used = match self.ty {
            CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE1D_BUFFER => 1,
            CL_MEM_OBJECT_IMAGE2D | CL_MEM_OBJECT_IMAGE1D_ARRAY => 2,
            _ => 3,
        };
        if (used..3).any(|d| origin[d] != 0 || region[d] != 1) || region.contains(&0) {
            return Err(CL_INVALID_VALUE);
        }
        let (o, r) = (self.lay(origin, 0), self.lay(region, 1));
        let e = self.extent();
        if (0..3).any(|d| o[d].checked_add(r[d]).is_none_or(|end| end > e[d])) {
            return Err(CL_INVALID_VALUE);
        }
        Ok((o, r))
    }
    /// The image's own rectangle at a texel origin.
    pub(crate) fn rect(&self, o: [usize; 3]) -> Rect {
        let (row, slice) = self.pitches();
        Rect {
            origin: [o[0] * self.texel(), o[1], o[2]],
            row,
            slice,
        }
    }
}

/// The channel order of a `cl_channel_order`.
// OpenCL's own names (`CL_RGBx`, `CL_sRGBA`) in the patterns.
#[allow(non_upper_case_globals)]
fn order(o: cl_channel_order) -> Option<ChannelOrder> {
    Some(match o {
        CL_R => ChannelOrder::R,
        CL_A => ChannelOrder::A,
        CL_RG => ChannelOrder::Rg,
        CL_RA => ChannelOrder::Ra,
        CL_RGB => ChannelOrder::Rgb,
        CL_DEPTH => ChannelOrder::Depth,
        CL_RGBx => ChannelOrder::Rgbx,
        CL_RGBA => ChannelOrder::Rgba,
        CL_sRGBx => ChannelOrder::Srgbx,
        CL_sRGBA => ChannelOrder::Srgba,
        CL_sBGRA => ChannelOrder::Sbgra,
        CL_ABGR => ChannelOrder::Abgr,
        CL_BGRA => ChannelOrder::Bgra,
        CL_ARGB => ChannelOrder::Argb,
        CL_INTENSITY => ChannelOrder::Intensity,
        CL_LUMINANCE => ChannelOrder::Luminance,
        _ => return None,
    })
}

/// The channel type of a `cl_channel_type`.
fn channel(t: cl_channel_type) -> Option<ChannelType> {
    Some(match t {
        CL_SNORM_INT8 => ChannelType::SnormInt8,
        CL_SNORM_INT16 => ChannelType::SnormInt16,
        CL_UNORM_INT8 => ChannelType::UnormInt8,
        CL_UNORM_INT16 => ChannelType::UnormInt16,
        CL_UNORM_SHORT_565 => ChannelType::UnormShort565,
        CL_UNORM_SHORT_555 => ChannelType::UnormShort555,
        CL_UNORM_INT_101010 => ChannelType::UnormInt101010,
        CL_UNORM_INT_101010_2 => ChannelType::UnormInt101010_2,
        CL_SIGNED_INT8 => ChannelType::SignedInt8,
        CL_SIGNED_INT16 => ChannelType::SignedInt16,
        CL_SIGNED_INT32 => ChannelType::SignedInt32,
        CL_UNSIGNED_INT8 => ChannelType::UnsignedInt8,
        CL_UNSIGNED_INT16 => ChannelType::UnsignedInt16,
        CL_UNSIGNED_INT32 => ChannelType::UnsignedInt32,
        CL_HALF_FLOAT => ChannelType::HalfFloat,
        CL_FLOAT => ChannelType::Float,
        _ => return None,
    })
}

const ALL_TYPES: [cl_channel_type; 16] = [
    CL_SNORM_INT8,
    CL_SNORM_INT16,
    CL_UNORM_INT8,
    CL_UNORM_INT16,
    CL_SIGNED_INT8,
    CL_SIGNED_INT16,
    CL_SIGNED_INT32,
    CL_UNSIGNED_INT8,
    CL_UNSIGNED_INT16,
    CL_UNSIGNED_INT32,
    CL_HALF_FLOAT,
    CL_FLOAT,
    CL_UNORM_SHORT_565,
    CL_UNORM_SHORT_555,
    CL_UNORM_INT_101010,
    CL_UNORM_INT_101010_2,
];

/// Whether clsync stores a format: R, A, RG, RA, RGBA of every type of
/// whole channels; BGRA, ARGB and ABGR of the 8-bit types; intensity and
/// luminance of the normalized and float types; RGB and RGBx of the packed
/// 565, 555 and 101010 types, RGBA of 101010_2; sRGBA, sBGRA and sRGBx of
/// 8-bit normalized channels (the combinations OpenCL defines whose texels
/// are a power of two bytes: not `CL_sRGB`'s three).
fn supported(f: &cl_image_format) -> Option<ImageFormat> {
    let (o, t) = (
        order(f.image_channel_order)?,
        channel(f.image_channel_data_type)?,
    );
    use ChannelType::{UnormInt101010, UnormInt101010_2, UnormInt8, UnormShort555, UnormShort565};
    let ok = match (o, t) {
        (
            ChannelOrder::Rgb | ChannelOrder::Rgbx,
            UnormShort565 | UnormShort555 | UnormInt101010,
        ) => true,
        (ChannelOrder::Rgba, UnormInt101010_2) => true,
        (_, _) if t.packed().is_some() => false,
        (ChannelOrder::Rgb | ChannelOrder::Rgbx, _) => false,
        (ChannelOrder::Srgba | ChannelOrder::Sbgra | ChannelOrder::Srgbx, _) => t == UnormInt8,
        (ChannelOrder::Bgra | ChannelOrder::Argb | ChannelOrder::Abgr, _) => t.bytes() == 1,
        (ChannelOrder::Intensity | ChannelOrder::Luminance, _) => t.is_float(),
        (ChannelOrder::Depth, _) => matches!(t, ChannelType::UnormInt16 | ChannelType::Float),
        _ => true,
    };
    ok.then_some(ImageFormat { order: o, ty: t })
}

/// Whether clsync stores format `f` in images of `image_type`: depth in 2D
/// images and 2D arrays only (`cl_khr_depth_images`).
fn supported_for(f: &cl_image_format, image_type: cl_mem_object_type) -> Option<ImageFormat> {
    let fmt = supported(f)?;
    let planar = matches!(
        image_type,
        CL_MEM_OBJECT_IMAGE2D | CL_MEM_OBJECT_IMAGE2D_ARRAY
    );
    (fmt.order != ChannelOrder::Depth || planar).then_some(fmt)
}

/// Every format supported in images of `image_type`.
fn formats(image_type: cl_mem_object_type) -> Vec<cl_image_format> {
    let orders = [
        CL_R,
        CL_A,
        CL_RG,
        CL_RA,
        CL_RGB,
        CL_RGBx,
        CL_RGBA,
        CL_BGRA,
        CL_ARGB,
        CL_ABGR,
        CL_INTENSITY,
        CL_LUMINANCE,
        CL_sRGBx,
        CL_sRGBA,
        CL_sBGRA,
        CL_DEPTH,
    ];
    let mut v = Vec::new();
    for o in orders {
        for t in ALL_TYPES {
            let f = cl_image_format {
                image_channel_order: o,
                image_channel_data_type: t,
            };
            if supported_for(&f, image_type).is_some() {
                v.push(f);
            }
        }
    }
    v
}

/// Makes an image.
///
/// # Safety
///
/// `format` and `desc` are null or valid; a non-null `host_ptr` has the
/// bytes the description's pitches say.
unsafe fn create(
    context: cl_context,
    properties: Vec<cl_mem_properties>,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    desc: *const cl_image_desc,
    host_ptr: *mut c_void,
) -> ClResult<*mut c_void> {
    let c = context::get(context)?;
    let asked = flags;
    let flags = memory::check_flags(flags)?;
    if format.is_null() {
        return Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
    }
    // SAFETY: non-null, the caller's contract.
    let (f, d) = unsafe { (format.read_unaligned(), desc.as_ref().copied()) };
    // A format OpenCL defines (CL_R .. CL_ABGR, CL_SNORM_INT8 ..
    // CL_UNORM_INT_101010_2) that clsync does not store is "not
    // supported"; anything else is not a format.
    if !(CL_R..=CL_ABGR).contains(&f.image_channel_order)
        || !(CL_SNORM_INT8..=CL_UNORM_INT_101010_2).contains(&f.image_channel_data_type)
    {
        return Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
    }
    let d = d.ok_or(CL_INVALID_IMAGE_DESCRIPTOR)?;
    let fmt = supported_for(&f, d.image_type).ok_or(CL_IMAGE_FORMAT_NOT_SUPPORTED)?;
    if d.num_mip_levels != 0 || d.num_samples != 0 {
        return Err(CL_INVALID_IMAGE_DESCRIPTOR);
    }
    if d.image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER {
        return crate::image_buffer::create(c, properties, asked, f, fmt, &d, host_ptr);
    }
    // Null unless an image is made from a buffer: image1d_buffer_t only
    // (cl_khr_image2d_from_buffer is not offered).
    if !d.buffer.is_null() {
        return Err(CL_INVALID_IMAGE_DESCRIPTOR);
    }
    let (w, h, depth, layers) = (
        d.image_width,
        d.image_height,
        d.image_depth,
        d.image_array_size,
    );
    let bad = |ok: bool| {
        if ok {
            Ok(())
        } else {
            Err(CL_INVALID_IMAGE_SIZE)
        }
    };
    let shape = match d.image_type {
        CL_MEM_OBJECT_IMAGE1D => {
            bad((1..=MAX_2D).contains(&w))?;
            ImageShape::D1 { width: w }
        }
        CL_MEM_OBJECT_IMAGE2D => {
            bad((1..=MAX_2D).contains(&w) && (1..=MAX_2D).contains(&h))?;
            ImageShape::D2 {
                width: w,
                height: h,
            }
        }
        CL_MEM_OBJECT_IMAGE3D => {
            bad([w, h, depth].iter().all(|x| (1..=MAX_3D).contains(x)))?;
            ImageShape::D3 {
                width: w,
                height: h,
                depth,
            }
        }
        CL_MEM_OBJECT_IMAGE1D_ARRAY => {
            bad((1..=MAX_2D).contains(&w) && (1..=MAX_LAYERS).contains(&layers))?;
            ImageShape::D1Array { width: w, layers }
        }
        CL_MEM_OBJECT_IMAGE2D_ARRAY => {
            bad((1..=MAX_2D).contains(&w)
                && (1..=MAX_2D).contains(&h)
                && (1..=MAX_LAYERS).contains(&layers))?;
            ImageShape::D2Array {
                width: w,
                height: h,
                layers,
            }
        }
        _ => return Err(CL_INVALID_IMAGE_DESCRIPTOR),
    };
    let image = Arc::new(Image::new(shape, fmt));
    let tb = fmt.texel_bytes();
    let [ew, eh, ed] = shape.extent();
    // The application's pitches: given only with its memory.
    let wants_ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR) != 0;
    if wants_ptr == host_ptr.is_null() {
        return Err(CL_INVALID_HOST_PTR);
    }
    if host_ptr.is_null() && (d.image_row_pitch != 0 || d.image_slice_pitch != 0) {
        return Err(CL_INVALID_IMAGE_DESCRIPTOR);
    }
    let row = if d.image_row_pitch == 0 {
        ew * tb
    } else {
        d.image_row_pitch
    };
    let default_slice = if d.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY {
        row
    } else {
        row * eh
    };
    let slice = if d.image_slice_pitch == 0 {
        default_slice
    } else {
        d.image_slice_pitch
    };
    if row < ew * tb || row % tb != 0 || slice < default_slice || slice % row != 0 {
        return Err(CL_INVALID_IMAGE_DESCRIPTOR);
    }
    if !host_ptr.is_null() {
        let host = Rect {
            origin: [0; 3],
            row,
            slice,
        };
        let own = Rect {
            origin: [0; 3],
            row: ew * tb,
            slice: ew * eh * tb,
        };
        // SAFETY: the application's memory has the pitches it gave for the
        // whole image; the image's bytes are its own, new.
        unsafe {
            copy_rect(
                host_ptr.cast(),
                host,
                image.raw_bytes().0,
                own,
                [ew * tb, eh, ed],
            )
        };
    }
    let host = (flags & CL_MEM_USE_HOST_PTR != 0).then_some((host_ptr as usize, row, slice));
    let im = ImageMem {
        image,
        ty: d.image_type,
        format: f,
        host,
    };
    Ok(memory::create_image(
        c, flags, properties, im, host_ptr, None,
    ))
}

/// `clCreateImage`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCreateImage(
    context: cl_context,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_desc: *const cl_image_desc,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's contract.
    unsafe {
        api::object(errcode_ret, || {
            create(
                context,
                Vec::new(),
                flags,
                image_format,
                image_desc,
                host_ptr,
            )
        })
    }
}

/// `clCreateImageWithProperties`: no image property is supported.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCreateImageWithProperties(
    context: cl_context,
    props: *const cl_mem_properties,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_desc: *const cl_image_desc,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's contract.
    unsafe {
        api::object(errcode_ret, || {
            let pairs = api::properties(props)?;
            if !pairs.is_empty() {
                return Err(CL_INVALID_PROPERTY);
            }
            let list = api::property_list(&pairs, !props.is_null());
            create(context, list, flags, image_format, image_desc, host_ptr)
        })
    }
}

fn desc(
    ty: cl_mem_object_type,
    w: usize,
    h: usize,
    d: usize,
    row: usize,
    slice: usize,
) -> cl_image_desc {
    cl_image_desc {
        image_type: ty,
        image_width: w,
        image_height: h,
        image_depth: d,
        image_array_size: 0,
        image_row_pitch: row,
        image_slice_pitch: slice,
        num_mip_levels: 0,
        num_samples: 0,
        buffer: std::ptr::null_mut(),
    }
}

/// `clCreateImage2D` (OpenCL 1.1).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateImage2D(
    context: cl_context,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_width: usize,
    image_height: usize,
    image_row_pitch: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let d = desc(
        CL_MEM_OBJECT_IMAGE2D,
        image_width,
        image_height,
        0,
        image_row_pitch,
        0,
    );
    // SAFETY: the caller's contract; `d` is ours.
    unsafe { clCreateImage(context, flags, image_format, &d, host_ptr, errcode_ret) }
}

/// `clCreateImage3D` (OpenCL 1.1).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateImage3D(
    context: cl_context,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_width: usize,
    image_height: usize,
    image_depth: usize,
    image_row_pitch: usize,
    image_slice_pitch: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let d = desc(
        CL_MEM_OBJECT_IMAGE3D,
        image_width,
        image_height,
        image_depth,
        image_row_pitch,
        image_slice_pitch,
    );
    // SAFETY: the caller's contract; `d` is ours.
    unsafe { clCreateImage(context, flags, image_format, &d, host_ptr, errcode_ret) }
}

/// `clGetSupportedImageFormats`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetSupportedImageFormats(
    context: cl_context,
    flags: cl_mem_flags,
    image_type: cl_mem_object_type,
    num_entries: cl_uint,
    image_formats: *mut cl_image_format,
    num_image_formats: *mut cl_uint,
) -> cl_int {
    api::status(|| {
        context::get(context)?;
        memory::check_flags(flags)?;
        let all = match image_type {
            CL_MEM_OBJECT_IMAGE1D
            | CL_MEM_OBJECT_IMAGE2D
            | CL_MEM_OBJECT_IMAGE3D
            | CL_MEM_OBJECT_IMAGE1D_ARRAY
            | CL_MEM_OBJECT_IMAGE2D_ARRAY
            | CL_MEM_OBJECT_IMAGE1D_BUFFER => formats(image_type),
            _ => return Err(CL_INVALID_VALUE),
        };
        if num_entries == 0 && !image_formats.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        if !image_formats.is_null() {
            for (i, f) in all.iter().take(num_entries as usize).enumerate() {
                // SAFETY: the caller gave room for `num_entries` formats.
                unsafe { image_formats.add(i).write_unaligned(*f) };
            }
        }
        // SAFETY: the caller's pointer, null or writable.
        unsafe { api::write(num_image_formats, all.len() as cl_uint) };
        Ok(())
    })
}

/// The image behind a handle: `CL_INVALID_MEM_OBJECT` for anything else.
pub fn get(h: cl_mem) -> ClResult<Ref<Mem>> {
    let m = memory::get(h)?;
    if m.image.is_none() {
        return Err(CL_INVALID_MEM_OBJECT);
    }
    Ok(m)
}

/// `clGetImageInfo`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetImageInfo(
    image: cl_mem,
    param_name: cl_image_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    api::status(|| {
        let m = get(image)?;
        let im = m.image.as_ref().ok_or(CL_INVALID_MEM_OBJECT)?;
        let [w, h, d] = im.extent();
        let (row, slice) = im.pitches();
        let arrayed = matches!(
            im.ty,
            CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D_ARRAY
        );
        let v = match param_name {
            CL_IMAGE_FORMAT => Ok(Value::of(im.format)),
            CL_IMAGE_ELEMENT_SIZE => Ok(Value::of(im.texel())),
            CL_IMAGE_ROW_PITCH => Ok(Value::of(row)),
            CL_IMAGE_SLICE_PITCH => Ok(Value::of(match im.ty {
                CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE1D_BUFFER | CL_MEM_OBJECT_IMAGE2D => 0,
                CL_MEM_OBJECT_IMAGE1D_ARRAY => row,
                _ => slice,
            })),
            CL_IMAGE_WIDTH => Ok(Value::of(w)),
            CL_IMAGE_HEIGHT => Ok(Value::of(match im.ty {
                CL_MEM_OBJECT_IMAGE1D
                | CL_MEM_OBJECT_IMAGE1D_BUFFER
                | CL_MEM_OBJECT_IMAGE1D_ARRAY => 0,
                _ => h,
            })),
            CL_IMAGE_DEPTH => Ok(Value::of(if im.ty == CL_MEM_OBJECT_IMAGE3D {
                d
            } else {
                0
            })),
            CL_IMAGE_ARRAY_SIZE => Ok(Value::of(if arrayed { d } else { 0 })),
            CL_IMAGE_BUFFER => Ok(Value::of(match (m.parent(), im.ty) {
                (Some(b), CL_MEM_OBJECT_IMAGE1D_BUFFER) => crate::handle::handle(b),
                _ => std::ptr::null_mut(),
            })),
            CL_IMAGE_NUM_MIP_LEVELS | CL_IMAGE_NUM_SAMPLES => Ok(Value::of(0u32)),
            _ => Err(CL_INVALID_VALUE),
        };
        // SAFETY: the caller's buffers.
        unsafe { answer(v, size, value, size_ret) }
    })
}
