//! Kernels: objects, arguments and queries. Arguments are checked against
//! the kernel's parameters when set, and captured when the kernel is
//! enqueued ([`crate::launch`]), so that the application may set new ones
//! at once.

use std::ffi::{c_char, c_void};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};

use clsync::geometry::{DEFAULT_SUB_GROUP_SIZE, MAX_WORK_GROUP_SIZE};
use clsync_opencl::{ArgKind, KernelInfo};
use opencl_sys::*;

use crate::api::{self, ClResult};
use crate::handle::{self, Ref};
use crate::image;
use crate::info::Value;
use crate::memory;
use crate::platform::{self, answer, MAX_SUB_GROUPS};
use crate::program::{self, Program};

/// An argument as set.
#[derive(Clone)]
pub(crate) enum ArgValue {
    /// A buffer, or null.
    Mem(Option<Ref<memory::Mem>>),
    /// Local memory of this many bytes.
    Local(usize),
    /// A value's bytes.
    Value(Vec<u8>),
    /// An image.
    Image(Ref<memory::Mem>),
    /// A sampler's `sampler_t` bits.
    Sampler(clsync_opencl::Sampler),
    /// A host address in shared virtual memory (or null).
    Svm(u64),
}

/// A kernel object.
pub struct Kernel {
    pub(crate) program: Ref<Program>,
    pub(crate) built: Arc<clsync_opencl::Program>,
    pub(crate) info: KernelInfo,
    args: Mutex<Vec<Option<ArgValue>>>,
}

impl handle::Object for Kernel {
    fn destroyed(&mut self, _h: usize) {
        self.program.kernels.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Kernel {
    /// Parameter `index`, or the specification's error for an index past
    /// the last.
    pub(crate) fn param(&self, index: cl_uint) -> ClResult<&clsync_opencl::Param> {
        self.info
            .params
            .get(index as usize)
            .ok_or(CL_INVALID_ARG_INDEX)
    }

    pub(crate) fn args(&self) -> MutexGuard<'_, Vec<Option<ArgValue>>> {
        self.args.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Local memory the kernel's local arguments take, in bytes.
    pub(crate) fn local_bytes(&self) -> usize {
        self.args()
            .iter()
            .map(|a| match a {
                Some(ArgValue::Local(n)) => *n,
                _ => 0,
            })
            .sum()
    }
}

/// The kernel behind a handle (`CL_INVALID_KERNEL` otherwise).
pub fn get(h: cl_kernel) -> ClResult<Ref<Kernel>> {
    handle::get::<Kernel>(h).ok_or(CL_INVALID_KERNEL)
}

fn make(p: &Ref<Program>, built: &Arc<clsync_opencl::Program>, info: &KernelInfo) -> *mut c_void {
    p.kernels.fetch_add(1, Ordering::Relaxed);
    let (_, h) = handle::create(Kernel {
        program: p.clone(),
        built: built.clone(),
        info: info.clone(),
        args: Mutex::new(vec![None; info.params.len()]),
    });
    h
}

/// `clCreateKernel`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCreateKernel(
    program: cl_program,
    kernel_name: *const c_char,
    errcode_ret: *mut cl_int,
) -> cl_kernel {
    // SAFETY: the caller's contract.
    unsafe {
        api::object(errcode_ret, || {
            let p = program::get(program)?;
            let name = api::c_str(kernel_name)?;
            let built = p.built()?;
            let info = built
                .kernels()
                .iter()
                .find(|k| k.name == name)
                .ok_or(CL_INVALID_KERNEL_NAME)?;
            Ok(make(&p, &built, info))
        })
    }
}

/// `clCreateKernelsInProgram`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCreateKernelsInProgram(
    program: cl_program,
    num_kernels: cl_uint,
    kernels: *mut cl_kernel,
    num_kernels_ret: *mut cl_uint,
) -> cl_int {
    api::status(|| {
        let p = program::get(program)?;
        let built = p.built()?;
        let all = built.kernels();
        if !kernels.is_null() && (num_kernels as usize) < all.len() {
            return Err(CL_INVALID_VALUE);
        }
        if !kernels.is_null() {
            for (i, info) in all.iter().enumerate() {
                // SAFETY: the caller gave room for `num_kernels` >= all.len()
                // handles.
                unsafe { kernels.add(i).write(make(&p, &built, info)) };
            }
        }
        // SAFETY: the caller's pointer.
        unsafe { api::write(num_kernels_ret, all.len() as cl_uint) };
        Ok(())
    })
}

/// `clCloneKernel`: the same kernel with the same arguments.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCloneKernel(source: cl_kernel, errcode_ret: *mut cl_int) -> cl_kernel {
    // SAFETY: the caller's contract.
    unsafe {
        api::object(errcode_ret, || {
            let k = get(source)?;
            let h = make(&k.program, &k.built, &k.info);
            let args = k.args().clone();
            *get(h)?.args() = args;
            Ok(h)
        })
    }
}

/// `clRetainKernel`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clRetainKernel(kernel: cl_kernel) -> cl_int {
    api::status(|| {
        handle::retain::<Kernel>(kernel)
            .then_some(())
            .ok_or(CL_INVALID_KERNEL)
    })
}

/// `clReleaseKernel`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clReleaseKernel(kernel: cl_kernel) -> cl_int {
    api::status(|| {
        handle::release::<Kernel>(kernel)
            .then_some(())
            .ok_or(CL_INVALID_KERNEL)
    })
}

/// `clSetKernelArg`, checked against the parameter's kind.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clSetKernelArg(
    kernel: cl_kernel,
    arg_index: cl_uint,
    arg_size: usize,
    arg_value: *const c_void,
) -> cl_int {
    api::status(|| {
        let k = get(kernel)?;
        let param = k.param(arg_index)?;
        // An object argument's handle (`cl_mem`, `cl_sampler`: one
        // pointer), or null.
        let handle = || -> ClResult<*mut c_void> {
            if arg_size != std::mem::size_of::<cl_mem>() {
                return Err(CL_INVALID_ARG_SIZE);
            }
            if arg_value.is_null() {
                return Ok(std::ptr::null_mut());
            }
            // SAFETY: a non-null `arg_value` points to a handle (arg_size
            // says so).
            Ok(unsafe { arg_value.cast::<*mut c_void>().read_unaligned() })
        };
        let v = match &param.kind {
            ArgKind::Global | ArgKind::Constant => {
                let h = handle()?;
                if h.is_null() {
                    ArgValue::Mem(None)
                } else {
                    let m = memory::get(h)?;
                    if !Arc::ptr_eq(&m.context, k.program.context()) {
                        return Err(CL_INVALID_MEM_OBJECT);
                    }
                    ArgValue::Mem(Some(m))
                }
            }
            ArgKind::Local => {
                if !arg_value.is_null() {
                    return Err(CL_INVALID_ARG_VALUE);
                }
                if arg_size == 0 {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                ArgValue::Local(arg_size)
            }
            ArgKind::Value { size, .. } | ArgKind::ByVal { size } => {
                if arg_size != *size {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                if arg_value.is_null() {
                    return Err(CL_INVALID_ARG_VALUE);
                }
                // SAFETY: `arg_value` has `arg_size` readable bytes.
                ArgValue::Value(
                    unsafe { std::slice::from_raw_parts(arg_value.cast::<u8>(), arg_size) }
                        .to_vec(),
                )
            }
            ArgKind::Image { dim, arrayed } => {
                let h = handle()?;
                if h.is_null() {
                    return Err(CL_INVALID_ARG_VALUE);
                }
                let m = image::get(h)?;
                if !Arc::ptr_eq(&m.context, k.program.context()) {
                    return Err(CL_INVALID_MEM_OBJECT);
                }
                // The image's type must be the parameter's (SPIR-V's `Dim`:
                // 0 1D, 1 2D, 2 3D, 5 buffer).
                let shape = match m.image.as_ref().map(|i| i.ty) {
                    Some(CL_MEM_OBJECT_IMAGE1D) => (0, false),
                    Some(CL_MEM_OBJECT_IMAGE1D_BUFFER) => (5, false),
                    Some(CL_MEM_OBJECT_IMAGE2D) => (1, false),
                    Some(CL_MEM_OBJECT_IMAGE3D) => (2, false),
                    Some(CL_MEM_OBJECT_IMAGE1D_ARRAY) => (0, true),
                    _ => (1, true),
                };
                if shape != (*dim, *arrayed) {
                    return Err(CL_INVALID_ARG_VALUE);
                }
                ArgValue::Image(m)
            }
            ArgKind::Sampler => {
                let h = handle()?;
                if h.is_null() {
                    return Err(CL_INVALID_SAMPLER);
                }
                let s = crate::sampler::sampler(h)?;
                if !Arc::ptr_eq(s.context(), k.program.context()) {
                    return Err(CL_INVALID_SAMPLER);
                }
                ArgValue::Sampler(s.bits())
            }
            ArgKind::Unsupported(_) => return Err(CL_INVALID_ARG_VALUE),
        };
        k.args()[arg_index as usize] = Some(v);
        Ok(())
    })
}

/// `clSetKernelArgSVMPointer`: a host address for a `global` or
/// `constant` pointer parameter. It is not checked against the
/// allocations here (a pointer anywhere into one, or past it, is valid to
/// pass); an access through it outside every allocation is the invalid
/// access it is.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clSetKernelArgSVMPointer(
    kernel: cl_kernel,
    arg_index: cl_uint,
    arg_value: *const c_void,
) -> cl_int {
    api::status(|| {
        let k = get(kernel)?;
        let param = k.param(arg_index)?;
        if !matches!(param.kind, ArgKind::Global | ArgKind::Constant) {
            return Err(CL_INVALID_ARG_VALUE);
        }
        k.args()[arg_index as usize] = Some(ArgValue::Svm(arg_value as u64));
        Ok(())
    })
}

/// `clSetKernelExecInfo`: the SVM pointers a kernel reaches other than
/// through its arguments need no telling (every allocation is reachable);
/// fine-grain system SVM is not offered.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clSetKernelExecInfo(
    kernel: cl_kernel,
    param_name: cl_kernel_exec_info,
    size: usize,
    value: *const c_void,
) -> cl_int {
    api::status(|| {
        get(kernel)?;
        if value.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        match param_name {
            CL_KERNEL_EXEC_INFO_SVM_PTRS
                if size.is_multiple_of(std::mem::size_of::<*const c_void>()) =>
            {
                Ok(())
            }
            CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM if size == std::mem::size_of::<cl_bool>() => {
                // SAFETY: a `cl_bool`, by its size.
                match unsafe { value.cast::<cl_bool>().read_unaligned() } {
                    0 => Ok(()),
                    _ => Err(CL_INVALID_OPERATION),
                }
            }
            _ => Err(CL_INVALID_VALUE),
        }
    })
}

/// `clGetKernelInfo`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetKernelInfo(
    kernel: cl_kernel,
    param_name: cl_kernel_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    api::status(|| {
        let k = get(kernel)?;
        let v = match param_name {
            CL_KERNEL_FUNCTION_NAME => Ok(Value::str(&k.info.name)),
            CL_KERNEL_NUM_ARGS => Ok(Value::of(k.info.params.len() as cl_uint)),
            CL_KERNEL_REFERENCE_COUNT => Ok(Value::of(handle::ref_count(&k))),
            CL_KERNEL_CONTEXT => Ok(Value::of(handle::handle(k.program.context()))),
            CL_KERNEL_PROGRAM => Ok(Value::of(handle::handle(&k.program))),
            CL_KERNEL_ATTRIBUTES => Ok(Value::str(&match k.info.required_local_size {
                Some([x, y, z]) => format!("reqd_work_group_size({x},{y},{z})"),
                None => String::new(),
            })),
            _ => Err(CL_INVALID_VALUE),
        };
        // SAFETY: the caller's buffers.
        unsafe { answer(v, size, value, size_ret) }
    })
}

/// `clGetKernelArgInfo`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetKernelArgInfo(
    kernel: cl_kernel,
    arg_index: cl_uint,
    param_name: cl_kernel_arg_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    api::status(|| {
        let k = get(kernel)?;
        let p = k.param(arg_index)?;
        if p.type_name.is_empty() {
            // Built from SPIR-V: the names and types are not known.
            return Err(CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
        }
        let v = match param_name {
            CL_KERNEL_ARG_ADDRESS_QUALIFIER => Ok(Value::of(match p.kind {
                ArgKind::Global => CL_KERNEL_ARG_ADDRESS_GLOBAL,
                ArgKind::Constant => CL_KERNEL_ARG_ADDRESS_CONSTANT,
                ArgKind::Local => CL_KERNEL_ARG_ADDRESS_LOCAL,
                ArgKind::Image { .. } => CL_KERNEL_ARG_ADDRESS_GLOBAL,
                _ => CL_KERNEL_ARG_ADDRESS_PRIVATE,
            })),
            CL_KERNEL_ARG_ACCESS_QUALIFIER => Ok(Value::of(match p.kind {
                _ if p.access_qual == "write_only" => CL_KERNEL_ARG_ACCESS_WRITE_ONLY,
                _ if p.access_qual == "read_write" => CL_KERNEL_ARG_ACCESS_READ_WRITE,
                _ if p.access_qual == "read_only" => CL_KERNEL_ARG_ACCESS_READ_ONLY,
                _ => CL_KERNEL_ARG_ACCESS_NONE,
            })),
            CL_KERNEL_ARG_TYPE_NAME => Ok(Value::str(&p.type_name)),
            CL_KERNEL_ARG_TYPE_QUALIFIER => {
                let mut q = 0;
                for w in p.type_qual.split_whitespace() {
                    q |= match w {
                        "const" => CL_KERNEL_ARG_TYPE_CONST,
                        "restrict" => CL_KERNEL_ARG_TYPE_RESTRICT,
                        "volatile" => CL_KERNEL_ARG_TYPE_VOLATILE,
                        "pipe" => CL_KERNEL_ARG_TYPE_PIPE,
                        _ => 0,
                    };
                }
                Ok(Value::of(q))
            }
            CL_KERNEL_ARG_NAME => Ok(Value::str(&p.name)),
            _ => Err(CL_INVALID_VALUE),
        };
        // SAFETY: the caller's buffers.
        unsafe { answer(v, size, value, size_ret) }
    })
}

/// `clGetKernelWorkGroupInfo`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetKernelWorkGroupInfo(
    kernel: cl_kernel,
    device: cl_device_id,
    param_name: cl_kernel_work_group_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    api::status(|| {
        let k = get(kernel)?;
        if !device.is_null() {
            platform::check_device(device)?;
        }
        let v = match param_name {
            CL_KERNEL_WORK_GROUP_SIZE => Ok(Value::of(MAX_WORK_GROUP_SIZE)),
            CL_KERNEL_COMPILE_WORK_GROUP_SIZE => Ok(Value::slice(
                &k.info
                    .required_local_size
                    .map_or([0usize; 3], |r| r.map(|x| x as usize)),
            )),
            CL_KERNEL_LOCAL_MEM_SIZE => Ok(Value::of(k.local_bytes() as u64)),
            CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE => Ok(Value::of(DEFAULT_SUB_GROUP_SIZE)),
            CL_KERNEL_PRIVATE_MEM_SIZE => Ok(Value::of(0u64)),
            // Only for custom devices and built-in kernels.
            _ => Err(CL_INVALID_VALUE),
        };
        // SAFETY: the caller's buffers.
        unsafe { answer(v, size, value, size_ret) }
    })
}

/// `clGetKernelSubGroupInfo` (and its `KHR` form): sub-groups of
/// `DEFAULT_SUB_GROUP_SIZE` work-items, the last one of a group smaller.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetKernelSubGroupInfo(
    kernel: cl_kernel,
    device: cl_device_id,
    param_name: cl_kernel_sub_group_info,
    input_size: usize,
    input: *const c_void,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    api::status(|| {
        let k = get(kernel)?;
        if !device.is_null() {
            platform::check_device(device)?;
        }
        let sg = DEFAULT_SUB_GROUP_SIZE;
        // The local size given as input: 1 to 3 `size_t`.
        let local = || -> ClResult<usize> {
            let n = input_size / std::mem::size_of::<usize>();
            if input.is_null()
                || !input_size.is_multiple_of(std::mem::size_of::<usize>())
                || !(1..=3).contains(&n)
            {
                return Err(CL_INVALID_VALUE);
            }
            // SAFETY: `input` has `n` readable sizes.
            let l = unsafe { std::slice::from_raw_parts(input.cast::<usize>(), n) };
            Ok(l.iter().product())
        };
        let v = match param_name {
            CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE => Value::of(local()?.min(sg)),
            CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE => Value::of(local()?.div_ceil(sg)),
            CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT => {
                if input.is_null() || input_size != std::mem::size_of::<usize>() {
                    return Err(CL_INVALID_VALUE);
                }
                // SAFETY: `input` is one `size_t`.
                let count = unsafe { input.cast::<usize>().read_unaligned() };
                let n = count * sg;
                // The answer has as many dimensions as the output has room
                // for; 0 where no local size gives that count.
                let dims = (size / std::mem::size_of::<usize>()).clamp(1, 3);
                let mut out = vec![1usize; dims];
                out[0] = if count == 0 || n > MAX_WORK_GROUP_SIZE {
                    0
                } else {
                    n
                };
                Value::slice(&out)
            }
            CL_KERNEL_MAX_NUM_SUB_GROUPS => Value::of(MAX_SUB_GROUPS),
            CL_KERNEL_COMPILE_NUM_SUB_GROUPS => Value::of(0usize),
            _ => return Err(CL_INVALID_VALUE),
        };
        let _ = &k;
        // SAFETY: the caller's buffers.
        unsafe { answer(Ok(v), size, value, size_ret) }
    })
}
