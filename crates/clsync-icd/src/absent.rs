//! Entry points for what the device reports absent: pipes. Each returns the
//! error the specification names for a context whose devices lack the
//! feature, so that a program that asks gets an answer, never a crash.

use std::ffi::c_void;

use opencl_sys::*;

use crate::api;

/// `clCreatePipe`: the device has no pipes (`CL_DEVICE_PIPE_SUPPORT` is false).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreatePipe(
    _context: cl_context,
    _flags: cl_mem_flags,
    _pipe_packet_size: cl_uint,
    _pipe_max_packets: cl_uint,
    _properties: *const cl_pipe_properties,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clGetPipeInfo`: the device has no pipes (`CL_DEVICE_PIPE_SUPPORT` is false).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clGetPipeInfo(
    _pipe: cl_mem,
    _param_name: cl_pipe_info,
    _param_value_size: usize,
    _param_value: *mut c_void,
    _param_value_size_ret: *mut usize,
) -> cl_int {
    CL_INVALID_MEM_OBJECT
}
