//! Entry points for what the device reports absent: images and samplers
//! (`CL_DEVICE_IMAGE_SUPPORT` is false until the platform passes images to
//! compiled kernels), pipes and shared virtual memory. Each returns the
//! error the specification names for a context whose devices lack the
//! feature, so that a program that asks gets an answer, never a crash.

use std::ffi::c_void;

use opencl_sys::*;

use crate::api;

/// `clCreateImage2D`: the device has no image support yet (`CL_DEVICE_IMAGE_SUPPORT` is false).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateImage2D(
    _context: cl_context,
    _flags: cl_mem_flags,
    _image_format: *const cl_image_format,
    _image_width: usize,
    _image_height: usize,
    _image_row_pitch: usize,
    _host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clCreateImage3D`: the device has no image support yet (`CL_DEVICE_IMAGE_SUPPORT` is false).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateImage3D(
    _context: cl_context,
    _flags: cl_mem_flags,
    _image_format: *const cl_image_format,
    _image_width: usize,
    _image_height: usize,
    _image_depth: usize,
    _image_row_pitch: usize,
    _image_slice_pitch: usize,
    _host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clCreateImage`: the device has no image support yet (`CL_DEVICE_IMAGE_SUPPORT` is false).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateImage(
    _context: cl_context,
    _flags: cl_mem_flags,
    _image_format: *const cl_image_format,
    _image_desc: *const cl_image_desc,
    _host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clCreateImageWithProperties`: the device has no image support yet (`CL_DEVICE_IMAGE_SUPPORT` is false).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateImageWithProperties(
    _context: cl_context,
    _properties: *const cl_mem_properties,
    _flags: cl_mem_flags,
    _image_format: *const cl_image_format,
    _image_desc: *const cl_image_desc,
    _host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clGetImageInfo`: the device has no image support yet (`CL_DEVICE_IMAGE_SUPPORT` is false).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clGetImageInfo(
    _image: cl_mem,
    _param_name: cl_image_info,
    _param_value_size: usize,
    _param_value: *mut c_void,
    _param_value_size_ret: *mut usize,
) -> cl_int {
    CL_INVALID_MEM_OBJECT
}

/// `clCreateSampler`: the device has no image support yet (`CL_DEVICE_IMAGE_SUPPORT` is false).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateSampler(
    _context: cl_context,
    _normalized_coords: cl_bool,
    _addressing_mode: cl_addressing_mode,
    _filter_mode: cl_filter_mode,
    errcode_ret: *mut cl_int,
) -> cl_sampler {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clCreateSamplerWithProperties`: the device has no image support yet (`CL_DEVICE_IMAGE_SUPPORT` is false).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateSamplerWithProperties(
    _context: cl_context,
    _sampler_properties: *const cl_sampler_properties,
    errcode_ret: *mut cl_int,
) -> cl_sampler {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clRetainSampler`: the device has no image support yet (`CL_DEVICE_IMAGE_SUPPORT` is false).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clRetainSampler(_sampler: cl_sampler) -> cl_int {
    CL_INVALID_SAMPLER
}

/// `clReleaseSampler`: the device has no image support yet (`CL_DEVICE_IMAGE_SUPPORT` is false).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clReleaseSampler(_sampler: cl_sampler) -> cl_int {
    CL_INVALID_SAMPLER
}

/// `clGetSamplerInfo`: the device has no image support yet (`CL_DEVICE_IMAGE_SUPPORT` is false).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clGetSamplerInfo(
    _sampler: cl_sampler,
    _param_name: cl_sampler_info,
    _param_value_size: usize,
    _param_value: *mut c_void,
    _param_value_size_ret: *mut usize,
) -> cl_int {
    CL_INVALID_SAMPLER
}

/// `clEnqueueReadImage`: the device has no image support yet (`CL_DEVICE_IMAGE_SUPPORT` is false).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueReadImage(
    _command_queue: cl_command_queue,
    _image: cl_mem,
    _blocking_read: cl_bool,
    _origin: *const usize,
    _region: *const usize,
    _row_pitch: usize,
    _slice_pitch: usize,
    _ptr: *mut c_void,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clEnqueueWriteImage`: the device has no image support yet (`CL_DEVICE_IMAGE_SUPPORT` is false).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueWriteImage(
    _command_queue: cl_command_queue,
    _image: cl_mem,
    _blocking_write: cl_bool,
    _origin: *const usize,
    _region: *const usize,
    _input_row_pitch: usize,
    _input_slice_pitch: usize,
    _ptr: *const c_void,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clEnqueueCopyImage`: the device has no image support yet (`CL_DEVICE_IMAGE_SUPPORT` is false).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueCopyImage(
    _command_queue: cl_command_queue,
    _src_image: cl_mem,
    _dst_image: cl_mem,
    _src_origin: *const usize,
    _dst_origin: *const usize,
    _region: *const usize,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clEnqueueCopyImageToBuffer`: the device has no image support yet (`CL_DEVICE_IMAGE_SUPPORT` is false).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueCopyImageToBuffer(
    _command_queue: cl_command_queue,
    _src_image: cl_mem,
    _dst_buffer: cl_mem,
    _src_origin: *const usize,
    _region: *const usize,
    _dst_offset: usize,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clEnqueueCopyBufferToImage`: the device has no image support yet (`CL_DEVICE_IMAGE_SUPPORT` is false).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueCopyBufferToImage(
    _command_queue: cl_command_queue,
    _src_buffer: cl_mem,
    _dst_image: cl_mem,
    _src_offset: usize,
    _dst_origin: *const usize,
    _region: *const usize,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clEnqueueMapImage`: the device has no image support yet (`CL_DEVICE_IMAGE_SUPPORT` is false).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueMapImage(
    _command_queue: cl_command_queue,
    _image: cl_mem,
    _blocking_map: cl_bool,
    _map_flags: cl_map_flags,
    _origin: *const usize,
    _region: *const usize,
    _image_row_pitch: *mut usize,
    _image_slice_pitch: *mut usize,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clEnqueueFillImage`: the device has no image support yet (`CL_DEVICE_IMAGE_SUPPORT` is false).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueFillImage(
    _command_queue: cl_command_queue,
    _image: cl_mem,
    _fill_color: *const c_void,
    _origin: *const usize,
    _region: *const usize,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

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

/// `clGetSupportedImageFormats`: no format, the device having no image
/// support.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetSupportedImageFormats(
    context: cl_context,
    _flags: cl_mem_flags,
    _image_type: cl_mem_object_type,
    _num_entries: cl_uint,
    _image_formats: *mut cl_image_format,
    num_image_formats: *mut cl_uint,
) -> cl_int {
    api::status(|| {
        crate::context::get(context)?;
        // SAFETY: the caller's pointer, null or writable.
        unsafe { api::write(num_image_formats, 0) };
        Ok(())
    })
}
