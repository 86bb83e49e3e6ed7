//! Samplers: `clCreateSampler*`, their queries, and the `sampler_t` bits a
//! kernel argument gets.

use std::ffi::c_void;

use clsync_opencl::Sampler as ClSampler;
use opencl_sys::*;

use crate::api::{self, ClResult};
use crate::context::{self, Context};
use crate::handle::{self, Ref};
use crate::info::Value;
use crate::platform::answer;

/// A sampler object.
pub struct Sampler {
    context: Ref<Context>,
    normalized: bool,
    addressing: cl_addressing_mode,
    filter: cl_filter_mode,
    properties: Vec<cl_sampler_properties>,
}

impl handle::Object for Sampler {}

impl Sampler {
    /// The `sampler_t` bits a kernel gets.
    pub fn bits(&self) -> ClSampler {
        let a = match self.addressing {
            CL_ADDRESS_CLAMP_TO_EDGE => ClSampler::CLAMP_TO_EDGE,
            CL_ADDRESS_CLAMP => ClSampler::CLAMP,
            CL_ADDRESS_REPEAT => ClSampler::REPEAT,
            CL_ADDRESS_MIRRORED_REPEAT => ClSampler::MIRRORED_REPEAT,
            _ => 0,
        };
        let f = if self.filter == CL_FILTER_LINEAR {
            ClSampler::LINEAR
        } else {
            ClSampler::NEAREST
        };
        ClSampler((u32::from(self.normalized) * ClSampler::NORMALIZED) | a | f)
    }

    /// Its context.
    pub fn context(&self) -> &Ref<Context> {
        &self.context
    }
}

/// The sampler behind a handle (`CL_INVALID_SAMPLER` otherwise).
pub fn sampler(h: cl_sampler) -> ClResult<Ref<Sampler>> {
    handle::get::<Sampler>(h).ok_or(CL_INVALID_SAMPLER)
}

fn make_sampler(
    context: cl_context,
    normalized: cl_bool,
    addressing: cl_addressing_mode,
    filter: cl_filter_mode,
    properties: Vec<cl_sampler_properties>,
) -> ClResult<*mut c_void> {
    let c = context::get(context)?;
    if normalized > 1
        || !(CL_ADDRESS_NONE..=CL_ADDRESS_MIRRORED_REPEAT).contains(&addressing)
        || ![CL_FILTER_NEAREST, CL_FILTER_LINEAR].contains(&filter)
    {
        return Err(CL_INVALID_VALUE);
    }
    let (_, h) = handle::create(Sampler {
        context: c,
        normalized: normalized == 1,
        addressing,
        filter,
        properties,
    });
    Ok(h)
}

/// `clCreateSampler` (OpenCL 1.x).
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCreateSampler(
    context: cl_context,
    normalized_coords: cl_bool,
    addressing_mode: cl_addressing_mode,
    filter_mode: cl_filter_mode,
    errcode_ret: *mut cl_int,
) -> cl_sampler {
    // SAFETY: the caller's contract.
    unsafe {
        api::object(errcode_ret, || {
            make_sampler(
                context,
                normalized_coords,
                addressing_mode,
                filter_mode,
                Vec::new(),
            )
        })
    }
}

/// `clCreateSamplerWithProperties`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCreateSamplerWithProperties(
    context: cl_context,
    props: *const cl_sampler_properties,
    errcode_ret: *mut cl_int,
) -> cl_sampler {
    // SAFETY: the caller's contract.
    unsafe {
        api::object(errcode_ret, || {
            let pairs = api::properties(props)?;
            let (mut norm, mut addr, mut filter) = (1, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST);
            for &(name, value) in &pairs {
                match name as cl_uint {
                    CL_SAMPLER_NORMALIZED_COORDS => norm = value as cl_bool,
                    CL_SAMPLER_ADDRESSING_MODE => addr = value as cl_uint,
                    CL_SAMPLER_FILTER_MODE => filter = value as cl_uint,
                    _ => return Err(CL_INVALID_VALUE),
                }
            }
            make_sampler(
                context,
                norm,
                addr,
                filter,
                api::property_list(&pairs, !props.is_null()),
            )
        })
    }
}

/// `clRetainSampler`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clRetainSampler(s: cl_sampler) -> cl_int {
    api::status(|| {
        handle::retain::<Sampler>(s)
            .then_some(())
            .ok_or(CL_INVALID_SAMPLER)
    })
}

/// `clReleaseSampler`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clReleaseSampler(s: cl_sampler) -> cl_int {
    api::status(|| {
        handle::release::<Sampler>(s)
            .then_some(())
            .ok_or(CL_INVALID_SAMPLER)
    })
}

/// `clGetSamplerInfo`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetSamplerInfo(
    s: cl_sampler,
    param_name: cl_sampler_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    api::status(|| {
        let x = sampler(s)?;
        let v = match param_name {
            CL_SAMPLER_REFERENCE_COUNT => Ok(Value::of(handle::ref_count(&x))),
            CL_SAMPLER_CONTEXT => Ok(Value::of(handle::handle(&x.context))),
            CL_SAMPLER_NORMALIZED_COORDS => Ok(Value::bool(x.normalized)),
            CL_SAMPLER_ADDRESSING_MODE => Ok(Value::of(x.addressing)),
            CL_SAMPLER_FILTER_MODE => Ok(Value::of(x.filter)),
            CL_SAMPLER_PROPERTIES => Ok(Value::slice(&x.properties)),
            _ => Err(CL_INVALID_VALUE),
        };
        // SAFETY: the caller's buffers.
        unsafe { answer(v, size, value, size_ret) }
    })
}
