//! # clsync-icd
//!
//! clsync as an OpenCL platform: an installable client driver
//! (`cl_khr_icd`) that the system's ICD loader (ocl-icd's `libOpenCL.so`)
//! finds through a vendors file, so that unmodified OpenCL host programs,
//! pyopencl and the opencl3 crate run their kernels on clsync: compiled
//! from OpenCL C or SPIR-V by [`clsync_opencl`], run on clsync's runtime,
//! and checked by its checker when `CLSYNC_CHECK` is set
//! (`clsync run -- ./app` sets it).
//!
//! ```sh
//! cargo build --release -p clsync-icd
//! mkdir -p ~/.clsync-icd
//! echo "$PWD/target/release/libclsync_icd.so" > ~/.clsync-icd/clsync.icd
//! OCL_ICD_VENDORS=~/.clsync-icd clinfo        # the clsync platform alone
//! ```
//!
//! `scripts/setup-debian.sh` registers it system-wide
//! (`/etc/OpenCL/vendors/clsync.icd`).
//!
//! Where to start reading: [`handle`] (what a `cl_*` handle is and how
//! every one is checked), [`queue`] (how commands run), [`kernel`] (how a
//! launch reaches the runtime). Each OpenCL object has its module;
//! [`dispatch`] is the table the loader calls through.
//!
//! What the platform does not offer yet is reported absent by its queries
//! (images and samplers, SVM, pipes, device-side enqueue, partitioning)
//! and its entry points answer with the specification's error code
//! ([`absent`], [`interop`]).

// The entry points carry the C API's names.
#![allow(non_snake_case)]

pub mod absent;
pub mod api;
pub mod context;
pub mod dispatch;
pub mod event;
pub mod handle;
pub mod image;
pub mod image_buffer;
pub mod image_commands;
pub mod info;
pub mod interop;
pub mod kernel;
pub mod launch;
pub mod link;
pub mod memory;
pub mod platform;
pub mod program;
pub mod queue;
pub mod sampler;
pub mod svm;
pub mod transfer;

use std::ffi::{c_char, c_void, CStr};

use opencl_sys::{
    cl_int, cl_platform_id, cl_uint, CL_INVALID_VALUE, CL_PLATFORM_NOT_FOUND_KHR, CL_SUCCESS,
};

impl handle::Object for platform::Platform {}
impl handle::Object for platform::Device {}

/// `clIcdGetPlatformIDsKHR`: the loader's way in. Exported, with
/// [`clGetExtensionFunctionAddress`], for the ICD loader.
///
/// # Safety
///
/// The C API's contract.
#[no_mangle]
pub unsafe extern "C" fn clIcdGetPlatformIDsKHR(
    num_entries: cl_uint,
    platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> cl_int {
    // SAFETY: the caller's contract, the same as clGetPlatformIDs'.
    match unsafe { platform::clGetPlatformIDs(num_entries, platforms, num_platforms) } {
        CL_SUCCESS => CL_SUCCESS,
        CL_INVALID_VALUE => CL_INVALID_VALUE,
        _ => CL_PLATFORM_NOT_FOUND_KHR,
    }
}

/// The extension functions clsync offers, by name.
fn extension_function(name: &str) -> *mut c_void {
    match name {
        "clIcdGetPlatformIDsKHR" => clIcdGetPlatformIDsKHR as *mut c_void,
        "clGetKernelSubGroupInfoKHR" => kernel::clGetKernelSubGroupInfo as *mut c_void,
        "clCreateProgramWithILKHR" => program::clCreateProgramWithIL as *mut c_void,
        _ => std::ptr::null_mut(),
    }
}

/// `clGetExtensionFunctionAddress`: exported, the one symbol the ICD loader
/// looks up by name.
///
/// # Safety
///
/// `func_name` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn clGetExtensionFunctionAddress(func_name: *const c_char) -> *mut c_void {
    if func_name.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: NUL-terminated by the caller's contract.
    let name = unsafe { CStr::from_ptr(func_name) };
    name.to_str()
        .map_or(std::ptr::null_mut(), extension_function)
}

/// `clGetExtensionFunctionAddressForPlatform`.
///
/// # Safety
///
/// `func_name` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn clGetExtensionFunctionAddressForPlatform(
    platform: cl_platform_id,
    func_name: *const c_char,
) -> *mut c_void {
    if platform != platform::platform_id() {
        return std::ptr::null_mut();
    }
    // SAFETY: the caller's contract.
    unsafe { clGetExtensionFunctionAddress(func_name) }
}

/// `clGetPlatformInfo`, exported by name as well: ocl-icd looks the symbol
/// up to ask a driver's platform for its `cl_khr_icd` extension and suffix
/// before it uses the dispatch table.
///
/// # Safety
///
/// The C API's contract.
#[no_mangle]
pub unsafe extern "C" fn clGetPlatformInfo(
    platform: cl_platform_id,
    param_name: opencl_sys::cl_platform_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    // SAFETY: the caller's contract.
    unsafe { platform::clGetPlatformInfo(platform, param_name, size, value, size_ret) }
}
