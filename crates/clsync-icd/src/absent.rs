//! Entry points for what the device reports absent: pipes and shared
//! virtual memory. Each returns the
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

/// `clSVMAlloc`: the device has no shared virtual memory (`CL_DEVICE_SVM_CAPABILITIES` is 0).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clSVMAlloc(
    _context: cl_context,
    _flags: cl_svm_mem_flags,
    _size: usize,
    _alignment: cl_uint,
) -> *mut c_void {
    std::ptr::null_mut()
}

/// `clSVMFree`: the device has no shared virtual memory (`CL_DEVICE_SVM_CAPABILITIES` is 0).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clSVMFree(_context: cl_context, _svm_pointer: *mut c_void) {
    // Nothing was allocated: nothing to free.
}

/// `clEnqueueSVMFree`: the device has no shared virtual memory (`CL_DEVICE_SVM_CAPABILITIES` is 0).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueSVMFree(
    _command_queue: cl_command_queue,
    _num_svm_pointers: cl_uint,
    _svm_pointers: *mut *mut c_void,
    _pfn_free_func: Option<
        unsafe extern "C" fn(
            queue: cl_command_queue,
            num_svm_pointers: cl_uint,
            svm_pointers: *mut *mut c_void,
            user_data: *mut c_void,
        ),
    >,
    _user_data: *mut c_void,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clEnqueueSVMMemcpy`: the device has no shared virtual memory (`CL_DEVICE_SVM_CAPABILITIES` is 0).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueSVMMemcpy(
    _command_queue: cl_command_queue,
    _blocking_copy: cl_bool,
    _dst_ptr: *mut c_void,
    _src_ptr: *const c_void,
    _size: usize,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clEnqueueSVMMemFill`: the device has no shared virtual memory (`CL_DEVICE_SVM_CAPABILITIES` is 0).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueSVMMemFill(
    _command_queue: cl_command_queue,
    _svm_ptr: *mut c_void,
    _pattern: *const c_void,
    _pattern_size: usize,
    _size: usize,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clEnqueueSVMMap`: the device has no shared virtual memory (`CL_DEVICE_SVM_CAPABILITIES` is 0).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueSVMMap(
    _command_queue: cl_command_queue,
    _blocking_map: cl_bool,
    _flags: cl_map_flags,
    _svm_ptr: *mut c_void,
    _size: usize,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clEnqueueSVMMigrateMem`: the device has no shared virtual memory (`CL_DEVICE_SVM_CAPABILITIES` is 0).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueSVMMigrateMem(
    _command_queue: cl_command_queue,
    _num_svm_pointers: cl_uint,
    _svm_pointers: *mut *const c_void,
    _sizes: *const usize,
    _flags: cl_mem_migration_flags,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clEnqueueSVMUnmap`: the device has no shared virtual memory (`CL_DEVICE_SVM_CAPABILITIES` is 0).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueSVMUnmap(
    _command_queue: cl_command_queue,
    _svm_ptr: *mut c_void,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}
