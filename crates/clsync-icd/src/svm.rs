//! Shared virtual memory: `clSVMAlloc`, `clSVMFree` and the SVM commands.
//!
//! An allocation is host memory registered with the compiler's runtime
//! ([`clsync_opencl::exec::svm`]): kernels use its host addresses as they
//! are, whether passed as arguments (`clSetKernelArgSVMPointer`) or stored
//! in SVM memory by the host, and the host and kernels share its bytes and
//! their atomics. The device offers coarse- and fine-grain buffer SVM with
//! atomics (`CL_DEVICE_SVM_ATOMICS`): a kernel's atomic and the host's
//! C11 atomic on the same word are one atomic, so
//! `memory_scope_all_svm_devices` orders them (spec 001). Fine-grain
//! *system* SVM (any `malloc`'d pointer) is not offered: only registered
//! allocations are reachable.

use std::alloc::Layout;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Mutex;

use clsync_opencl::exec::svm as registry;
use opencl_sys::*;

use crate::api::{self, ClResult};
use crate::context;
use crate::handle::Ref;
use crate::platform;
use crate::queue::{Queue, Work};
use crate::transfer::{enqueue, enqueue_checked, Addr};

/// A context's allocations: address → layout.
#[derive(Default)]
pub struct Allocations(Mutex<HashMap<usize, Layout>>);

impl Allocations {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<usize, Layout>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Frees the allocation at `p`, if it is one of these.
    pub fn free(&self, p: usize) -> bool {
        let Some(layout) = self.lock().remove(&p) else {
            return false;
        };
        registry::unregister(p as *mut u8);
        // SAFETY: allocated with this layout by `clSVMAlloc`, and no longer
        // registered: freed once.
        unsafe { std::alloc::dealloc(p as *mut u8, layout) };
        true
    }

    /// Frees them all (the context is going).
    pub fn free_all(&mut self) {
        let all: Vec<usize> = self.lock().keys().copied().collect();
        for p in all {
            self.free(p);
        }
    }
}

/// The default alignment of an allocation: `CL_DEVICE_MEM_BASE_ADDR_ALIGN`.
const DEFAULT_ALIGN: usize = crate::memory::ALIGN;

/// `clSVMAlloc`: zeroed host memory, registered as shared; null on any
/// error (the API has no error code for it).
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clSVMAlloc(
    context: cl_context,
    flags: cl_svm_mem_flags,
    size: usize,
    alignment: cl_uint,
) -> *mut c_void {
    let Ok(c) = context::get(context) else {
        return std::ptr::null_mut();
    };
    let access = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
    let known = access | CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS;
    if flags & !known != 0
        || (flags & access).count_ones() > 1
        || (flags & CL_MEM_SVM_ATOMICS != 0 && flags & CL_MEM_SVM_FINE_GRAIN_BUFFER == 0)
        || size == 0
        || size as u64 > platform::max_alloc()
        || (alignment != 0 && !alignment.is_power_of_two())
    {
        return std::ptr::null_mut();
    }
    let align = (alignment as usize).max(DEFAULT_ALIGN);
    let Ok(layout) = Layout::from_size_align(size, align) else {
        return std::ptr::null_mut();
    };
    // SAFETY: a non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    if p.is_null() {
        return p.cast();
    }
    registry::register(p, size);
    c.svm.lock().insert(p as usize, layout);
    p.cast()
}

/// `clSVMFree`: frees at once (the application waits for the commands that
/// use it; `clEnqueueSVMFree` is the queued form). A null or foreign
/// pointer is ignored.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clSVMFree(context: cl_context, svm_pointer: *mut c_void) {
    if let Ok(c) = context::get(context) {
        c.svm.free(svm_pointer as usize);
    }
}

/// The application's callback for `clEnqueueSVMFree`.
type FreeFn = unsafe extern "C" fn(cl_command_queue, cl_uint, *mut *mut c_void, *mut c_void);

/// `clEnqueueSVMFree`: after the commands before it, the application's
/// callback frees the pointers, or clsync does.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueSVMFree(
    queue: cl_command_queue,
    num_svm_pointers: cl_uint,
    svm_pointers: *mut *mut c_void,
    pfn_free_func: Option<FreeFn>,
    user_data: *mut c_void,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let checked = |q: &Ref<Queue>| -> ClResult<Work> {
        // SAFETY: `num_svm_pointers` pointers.
        let ptrs: Vec<usize> = unsafe {
            api::slice(
                svm_pointers.cast_const(),
                num_svm_pointers as usize,
                CL_INVALID_VALUE,
            )?
        }
        .iter()
        .map(|&p| p as usize)
        .collect();
        if ptrs.is_empty() {
            return Err(CL_INVALID_VALUE);
        }
        let (qh, list_addr, user) = (queue as usize, svm_pointers as usize, user_data as usize);
        let ctx = q.context.clone();
        let work: Work = Box::new(move || {
            match pfn_free_func {
                // SAFETY: the application's callback with its own list and
                // user data, as it gave them.
                Some(f) => unsafe {
                    f(
                        qh as cl_command_queue,
                        ptrs.len() as cl_uint,
                        list_addr as *mut *mut c_void,
                        user as *mut c_void,
                    )
                },
                None => {
                    for p in ptrs {
                        ctx.svm.free(p);
                    }
                }
            }
            Ok(())
        });
        Ok(work)
    };
    // SAFETY: the caller's contract.
    unsafe { enqueue(queue, n, list, event, CL_COMMAND_SVM_FREE, 0, checked) }
}

/// `clEnqueueSVMMemcpy`.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueSVMMemcpy(
    queue: cl_command_queue,
    blocking_copy: cl_bool,
    dst_ptr: *mut c_void,
    src_ptr: *const c_void,
    size: usize,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let checked = |_: &Ref<Queue>| -> ClResult<Work> {
        if dst_ptr.is_null() || src_ptr.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let (d, s) = (dst_ptr as usize, src_ptr as usize);
        if d < s + size && s < d + size {
            return Err(CL_MEM_COPY_OVERLAP);
        }
        let (d, s) = (Addr(d), Addr(s));
        let work: Work = Box::new(move || {
            // SAFETY: the application's two ranges of `size` bytes (SVM or
            // host memory), not overlapping (checked).
            unsafe { std::ptr::copy_nonoverlapping(s.ptr(), d.ptr(), size) };
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
            CL_COMMAND_SVM_MEMCPY,
            blocking_copy,
            checked,
        )
    }
}

/// `clEnqueueSVMMemFill`.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueSVMMemFill(
    queue: cl_command_queue,
    svm_ptr: *mut c_void,
    pattern: *const c_void,
    pattern_size: usize,
    size: usize,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let checked = |_: &Ref<Queue>| -> ClResult<Work> {
        if svm_ptr.is_null()
            || pattern.is_null()
            || !pattern_size.is_power_of_two()
            || pattern_size > 128
            || !(svm_ptr as usize).is_multiple_of(pattern_size)
            || !size.is_multiple_of(pattern_size)
        {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: `pattern_size` bytes, copied now.
        let bytes =
            unsafe { std::slice::from_raw_parts(pattern.cast::<u8>(), pattern_size) }.to_vec();
        let at = Addr::of(svm_ptr);
        let work: Work = Box::new(move || {
            for i in (0..size).step_by(pattern_size) {
                // SAFETY: the application's `size` bytes at `svm_ptr`.
                unsafe {
                    std::ptr::copy_nonoverlapping(bytes.as_ptr(), at.ptr().add(i), pattern_size)
                };
            }
            Ok(())
        });
        Ok(work)
    };
    // SAFETY: the caller's contract.
    unsafe { enqueue(queue, n, list, event, CL_COMMAND_SVM_MEMFILL, 0, checked) }
}

/// A map, unmap or migration: the host and the device share the bytes, so
/// the command only orders itself after the commands before it.
///
/// # Safety
///
/// The C API's contract.
unsafe fn ordering_only(
    queue: cl_command_queue,
    blocking: cl_bool,
    command: cl_command_type,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> ClResult<()> {
    let nothing = |_: &Ref<Queue>| -> ClResult<Work> { Ok(Box::new(|| Ok(()))) };
    // SAFETY: the caller's contract.
    unsafe { enqueue_checked(queue, n, list, event, command, blocking, nothing) }
}

/// `clEnqueueSVMMap`.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueSVMMap(
    queue: cl_command_queue,
    blocking_map: cl_bool,
    flags: cl_map_flags,
    svm_ptr: *mut c_void,
    size: usize,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    api::status(|| {
        let known = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
        if svm_ptr.is_null() || size == 0 || flags & !known != 0 {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: the caller's contract.
        unsafe { ordering_only(queue, blocking_map, CL_COMMAND_SVM_MAP, n, list, event) }
    })
}

/// `clEnqueueSVMUnmap`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clEnqueueSVMUnmap(
    queue: cl_command_queue,
    svm_ptr: *mut c_void,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    api::status(|| {
        if svm_ptr.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: the caller's contract.
        unsafe { ordering_only(queue, 0, CL_COMMAND_SVM_UNMAP, n, list, event) }
    })
}

/// `clEnqueueSVMMigrateMem`: one device, nothing moves.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueSVMMigrateMem(
    queue: cl_command_queue,
    num_svm_pointers: cl_uint,
    svm_pointers: *mut *const c_void,
    _sizes: *const usize,
    flags: cl_mem_migration_flags,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    api::status(|| {
        if num_svm_pointers == 0
            || svm_pointers.is_null()
            || flags & !(CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED) != 0
        {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: the caller's contract.
        unsafe { ordering_only(queue, 0, CL_COMMAND_SVM_MIGRATE_MEM, n, list, event) }
    })
}

/// Whether `p` is a host address kernels may use (a registered
/// allocation's).
pub fn is_svm(p: *const c_void, size: usize) -> bool {
    registry::contains(p as u64, size as u64)
}
