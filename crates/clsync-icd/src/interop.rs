//! Entry points of the interop extensions (OpenGL, Direct3D, DX9 media,
//! EGL), device fission and on-device queues, which clsync's platform does
//! not offer: each fills the dispatch table with its exact signature and
//! returns `CL_INVALID_OPERATION`, so that a call reaching it through the
//! ICD loader gets an error code, never a crash.

use std::ffi::c_void;

use opencl_sys::cl_d3d10::*;
use opencl_sys::cl_d3d11::*;
use opencl_sys::cl_dx9_media_sharing::*;
use opencl_sys::cl_egl::*;
use opencl_sys::*;

use crate::api;

/// `clCreateFromGLBuffer`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateFromGLBuffer(
    _context: cl_context,
    _flags: cl_mem_flags,
    _bufobj: cl_GLuint,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clCreateFromGLTexture2D`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateFromGLTexture2D(
    _context: cl_context,
    _flags: cl_mem_flags,
    _target: cl_GLenum,
    _miplevel: cl_GLint,
    _texture: cl_GLuint,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clCreateFromGLTexture3D`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateFromGLTexture3D(
    _context: cl_context,
    _flags: cl_mem_flags,
    _target: cl_GLenum,
    _miplevel: cl_GLint,
    _texture: cl_GLuint,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clCreateFromGLRenderbuffer`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateFromGLRenderbuffer(
    _context: cl_context,
    _flags: cl_mem_flags,
    _renderbuffer: cl_GLuint,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clGetGLObjectInfo`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clGetGLObjectInfo(
    _memobj: cl_mem,
    _gl_object_type: *mut cl_gl_object_type,
    _gl_object_name: *mut cl_GLuint,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clGetGLTextureInfo`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clGetGLTextureInfo(
    _memobj: cl_mem,
    _param_name: cl_gl_texture_info,
    _param_value_size: usize,
    _param_value: *mut c_void,
    _param_value_size_ret: *mut usize,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clEnqueueAcquireGLObjects`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueAcquireGLObjects(
    _command_queue: cl_command_queue,
    _num_objects: cl_uint,
    _mem_objects: *const cl_mem,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clEnqueueReleaseGLObjects`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueReleaseGLObjects(
    _command_queue: cl_command_queue,
    _num_objects: cl_uint,
    _mem_objects: *const cl_mem,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clGetGLContextInfoKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clGetGLContextInfoKHR(
    _properties: *const cl_context_properties,
    _param_name: cl_gl_context_info,
    _param_value_size: usize,
    _param_value: *mut c_void,
    _param_value_size_ret: *mut usize,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clGetDeviceIDsFromD3D10KHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clGetDeviceIDsFromD3D10KHR(
    _platform: cl_platform_id,
    _d3d_device_source: cl_d3d10_device_source_khr,
    _d3d_object: *mut c_void,
    _d3d_device_set: cl_d3d10_device_set_khr,
    _num_entries: cl_uint,
    _devices: *mut cl_device_id,
    _num_devices: *mut cl_uint,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clCreateFromD3D10BufferKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateFromD3D10BufferKHR(
    _context: cl_context,
    _flags: cl_mem_flags,
    _resource: ID3D10Buffer_ptr,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clCreateFromD3D10Texture2DKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateFromD3D10Texture2DKHR(
    _context: cl_context,
    _flags: cl_mem_flags,
    _resource: ID3D10Texture2D_ptr,
    _subresource: cl_uint,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clCreateFromD3D10Texture3DKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateFromD3D10Texture3DKHR(
    _context: cl_context,
    _flags: cl_mem_flags,
    _resource: ID3D10Texture3D_ptr,
    _subresource: cl_uint,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clEnqueueAcquireD3D10ObjectsKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueAcquireD3D10ObjectsKHR(
    _command_queue: cl_command_queue,
    _num_objects: cl_uint,
    _mem_objects: *const cl_mem,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clEnqueueReleaseD3D10ObjectsKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueReleaseD3D10ObjectsKHR(
    _command_queue: cl_command_queue,
    _num_objects: cl_uint,
    _mem_objects: *const cl_mem,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clCreateSubDevicesEXT`: the device cannot be partitioned.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateSubDevicesEXT(
    _in_device: cl_device_id,
    _properties: *const cl_device_partition_property_ext,
    _num_entries: cl_uint,
    _out_devices: *mut cl_device_id,
    _num_devices: *mut cl_uint,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clRetainDeviceEXT`: the device cannot be partitioned.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clRetainDeviceEXT(_device: cl_device_id) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clReleaseDeviceEXT`: the device cannot be partitioned.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clReleaseDeviceEXT(_device: cl_device_id) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clCreateEventFromGLsyncKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateEventFromGLsyncKHR(
    _context: cl_context,
    _sync: cl_GLsync,
    errcode_ret: *mut cl_int,
) -> cl_event {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clCreateFromGLTexture`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateFromGLTexture(
    _context: cl_context,
    _flags: cl_mem_flags,
    _target: cl_GLenum,
    _miplevel: cl_GLint,
    _texture: cl_GLuint,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clGetDeviceIDsFromD3D11KHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clGetDeviceIDsFromD3D11KHR(
    _platform: cl_platform_id,
    _d3d_device_source: cl_d3d11_device_source_khr,
    _d3d_object: *mut c_void,
    _d3d_device_set: cl_d3d11_device_set_khr,
    _num_entries: cl_uint,
    _devices: *mut cl_device_id,
    _num_devices: *mut cl_uint,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clCreateFromD3D11BufferKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateFromD3D11BufferKHR(
    _context: cl_context,
    _flags: cl_mem_flags,
    _resource: ID3D11Buffer_ptr,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clCreateFromD3D11Texture2DKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateFromD3D11Texture2DKHR(
    _context: cl_context,
    _flags: cl_mem_flags,
    _resource: ID3D11Texture2D_ptr,
    _subresource: cl_uint,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clCreateFromD3D11Texture3DKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateFromD3D11Texture3DKHR(
    _context: cl_context,
    _flags: cl_mem_flags,
    _resource: ID3D11Texture3D_ptr,
    _subresource: cl_uint,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clCreateFromDX9MediaSurfaceKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateFromDX9MediaSurfaceKHR(
    _context: cl_context,
    _flags: cl_mem_flags,
    _adapter_type: cl_dx9_media_adapter_type_khr,
    _surface_info: *mut c_void,
    _plane: cl_uint,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clEnqueueAcquireD3D11ObjectsKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueAcquireD3D11ObjectsKHR(
    _command_queue: cl_command_queue,
    _num_objects: cl_uint,
    _mem_objects: *const cl_mem,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clEnqueueReleaseD3D11ObjectsKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueReleaseD3D11ObjectsKHR(
    _command_queue: cl_command_queue,
    _num_objects: cl_uint,
    _mem_objects: *const cl_mem,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clGetDeviceIDsFromDX9MediaAdapterKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clGetDeviceIDsFromDX9MediaAdapterKHR(
    _platform: cl_platform_id,
    _num_media_adapters: cl_uint,
    _media_adapter_type: *mut cl_dx9_media_adapter_type_khr,
    _media_adapters: *mut c_void,
    _media_adapter_set: cl_dx9_media_adapter_set_khr,
    _num_entries: cl_uint,
    _devices: *mut cl_device_id,
    _num_devices: *mut cl_uint,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clEnqueueAcquireDX9MediaSurfacesKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueAcquireDX9MediaSurfacesKHR(
    _command_queue: cl_command_queue,
    _num_objects: cl_uint,
    _mem_objects: *const cl_mem,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clEnqueueReleaseDX9MediaSurfacesKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueReleaseDX9MediaSurfacesKHR(
    _command_queue: cl_command_queue,
    _num_objects: cl_uint,
    _mem_objects: *const cl_mem,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clCreateFromEGLImageKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateFromEGLImageKHR(
    _context: cl_context,
    _egldisplay: CLeglDisplayKHR,
    _eglimage: CLeglImageKHR,
    _flags: cl_mem_flags,
    _properties: *const cl_egl_image_properties_khr,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clEnqueueAcquireEGLObjectsKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueAcquireEGLObjectsKHR(
    _command_queue: cl_command_queue,
    _num_objects: cl_uint,
    _mem_objects: *const cl_mem,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clEnqueueReleaseEGLObjectsKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueReleaseEGLObjectsKHR(
    _command_queue: cl_command_queue,
    _num_objects: cl_uint,
    _mem_objects: *const cl_mem,
    _num_events_in_wait_list: cl_uint,
    _event_wait_list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    CL_INVALID_OPERATION
}

/// `clCreateEventFromEGLSyncKHR`: the platform has no window-system or media interop.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateEventFromEGLSyncKHR(
    _context: cl_context,
    _sync: CLeglSyncKHR,
    _display: CLeglDisplayKHR,
    errcode_ret: *mut cl_int,
) -> cl_event {
    // SAFETY: the caller's pointer, null or writable.
    unsafe { api::write(errcode_ret, CL_INVALID_OPERATION) };
    std::ptr::null_mut()
}

/// `clSetDefaultDeviceCommandQueue`: the device has no on-device queues.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clSetDefaultDeviceCommandQueue(
    _context: cl_context,
    _device: cl_device_id,
    _command_queue: cl_command_queue,
) -> cl_int {
    CL_INVALID_OPERATION
}
