//! Kernels: objects, arguments, queries, and `clEnqueueNDRangeKernel`.
//!
//! Arguments are checked against the kernel's parameters when set, and
//! captured when the kernel is enqueued (the specification lets the
//! application set new ones at once). A launch runs on the platform's
//! runtime, checked when `CLSYNC_CHECK` is set: what a checked launch
//! finds is printed on stderr with the kernel's source lines, as
//! `clsync run --check` prints it, and the launch goes on as Oclgrind's
//! does; a launch that fails (an invalid access, a divergent barrier of an
//! unchecked launch) prints its report and ends its event with
//! `CL_OUT_OF_RESOURCES`.

use std::ffi::{c_char, c_void};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};

use clsync::checker::engine::{forget_memory, name_memory};
use clsync::checker::Space;
use clsync::geometry::{DEFAULT_SUB_GROUP_SIZE, MAX_WORK_GROUP_SIZE};
use clsync::NdRange;
use clsync_opencl::exec::report;
use clsync_opencl::{Arg, ArgKind, KernelInfo, RunError};
use opencl_sys::*;

use crate::api::{self, ClResult};
use crate::handle::{self, Ref};
use crate::info::Value;
use crate::memory::{self, View};
use crate::platform::{self, answer, LOCAL_MEM_SIZE, MAX_SUB_GROUPS};
use crate::program::{self, Program};
use crate::queue::{self, Queue, Work};

/// An argument as set.
#[derive(Clone)]
enum ArgValue {
    /// A buffer, or null.
    Mem(Option<Ref<memory::Mem>>),
    /// Local memory of this many bytes.
    Local(usize),
    /// A value's bytes.
    Value(Vec<u8>),
}

/// A kernel object.
pub struct Kernel {
    program: Ref<Program>,
    built: Arc<clsync_opencl::Program>,
    info: KernelInfo,
    args: Mutex<Vec<Option<ArgValue>>>,
}

impl handle::Object for Kernel {
    fn destroyed(&mut self, _h: usize) {
        self.program.kernels.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Kernel {
    fn args(&self) -> MutexGuard<'_, Vec<Option<ArgValue>>> {
        self.args.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Local memory the kernel's local arguments take, in bytes.
    fn local_bytes(&self) -> usize {
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
        let param = k
            .info
            .params
            .get(arg_index as usize)
            .ok_or(CL_INVALID_ARG_INDEX)?;
        let handle_size = std::mem::size_of::<cl_mem>();
        let v = match &param.kind {
            ArgKind::Global | ArgKind::Constant => {
                if arg_size != handle_size {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                // SAFETY: a non-null `arg_value` points to a `cl_mem`
                // (arg_size says so).
                let h = if arg_value.is_null() {
                    std::ptr::null_mut()
                } else {
                    unsafe { arg_value.cast::<cl_mem>().read_unaligned() }
                };
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
            // The device has no image support (CL_DEVICE_IMAGE_SUPPORT):
            // no image or sampler object can be made to pass.
            ArgKind::Image { .. } => return Err(CL_INVALID_MEM_OBJECT),
            ArgKind::Sampler => return Err(CL_INVALID_SAMPLER),
            ArgKind::Unsupported(_) => return Err(CL_INVALID_ARG_VALUE),
        };
        k.args()[arg_index as usize] = Some(v);
        Ok(())
    })
}

/// `clSetKernelArgSVMPointer`: the device has no SVM.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clSetKernelArgSVMPointer(
    kernel: cl_kernel,
    _arg_index: cl_uint,
    _arg_value: *const c_void,
) -> cl_int {
    api::status(|| {
        get(kernel)?;
        Err(CL_INVALID_OPERATION)
    })
}

/// `clSetKernelExecInfo`: its parameters are all about SVM, which the
/// device has not.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clSetKernelExecInfo(
    kernel: cl_kernel,
    _param_name: cl_kernel_exec_info,
    _size: usize,
    _value: *const c_void,
) -> cl_int {
    api::status(|| {
        get(kernel)?;
        Err(CL_INVALID_OPERATION)
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
        let p = k
            .info
            .params
            .get(arg_index as usize)
            .ok_or(CL_INVALID_ARG_INDEX)?;
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
            CL_KERNEL_ARG_ACCESS_QUALIFIER => Ok(Value::of(CL_KERNEL_ARG_ACCESS_NONE)),
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

/// Reads `n` sizes from C.
///
/// # Safety
///
/// `p` is null or has `n` readable sizes.
unsafe fn sizes(p: *const usize, n: usize) -> Option<[usize; 3]> {
    if p.is_null() {
        return None;
    }
    let mut out = [1; 3];
    // SAFETY: the caller's contract.
    out[..n].copy_from_slice(unsafe { std::slice::from_raw_parts(p, n) });
    Some(out)
}

/// The ND-range of `dims` dimensions.
fn nd_range(
    dims: usize,
    global: [usize; 3],
    offset: [usize; 3],
    local: Option<[usize; 3]>,
) -> NdRange {
    let r = match dims {
        1 => NdRange::new([global[0]]).offset([offset[0]]),
        2 => NdRange::new([global[0], global[1]]).offset([offset[0], offset[1]]),
        _ => NdRange::new(global).offset(offset),
    };
    match (dims, local) {
        (_, None) => r,
        (1, Some(l)) => r.local([l[0]]),
        (2, Some(l)) => r.local([l[0], l[1]]),
        (_, Some(l)) => r.local(l),
    }
}

/// `clEnqueueNDRangeKernel`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clEnqueueNDRangeKernel(
    queue: cl_command_queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const usize,
    global_work_size: *const usize,
    local_work_size: *const usize,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    api::status(|| {
        // SAFETY: the caller's contract.
        let (q, wait) = unsafe { queue::with_wait_list(queue, n, list)? };
        let k = get(kernel)?;
        if !Arc::ptr_eq(&q.context, k.program.context()) {
            return Err(CL_INVALID_CONTEXT);
        }
        let dims = work_dim as usize;
        if !(1..=3).contains(&dims) {
            return Err(CL_INVALID_WORK_DIMENSION);
        }
        // SAFETY: each array is null or has `work_dim` sizes.
        let (global, offset, local) = unsafe {
            (
                sizes(global_work_size, dims).ok_or(CL_INVALID_GLOBAL_WORK_SIZE)?,
                sizes(global_work_offset, dims).map_or([0; 3], |mut o| {
                    o[dims..].fill(0);
                    o
                }),
                sizes(local_work_size, dims),
            )
        };
        if (0..3).any(|d| global[d].checked_add(offset[d]).is_none()) {
            return Err(CL_INVALID_GLOBAL_OFFSET);
        }
        let reqd = k.info.required_local_size.map(|r| r.map(|x| x as usize));
        if let Some(l) = local {
            if l.contains(&0) || l.iter().product::<usize>() > MAX_WORK_GROUP_SIZE {
                return Err(CL_INVALID_WORK_GROUP_SIZE);
            }
            if l.iter().any(|&x| x > MAX_WORK_GROUP_SIZE) {
                return Err(CL_INVALID_WORK_ITEM_SIZE);
            }
            if reqd.is_some_and(|r| r != l) {
                return Err(CL_INVALID_WORK_GROUP_SIZE);
            }
            if !k.program.non_uniform() && (0..dims).any(|d| global[d] % l[d] != 0) {
                return Err(CL_INVALID_WORK_GROUP_SIZE);
            }
        } else if reqd.is_some() {
            return Err(CL_INVALID_WORK_GROUP_SIZE);
        }
        let args: Vec<ArgValue> = k
            .args()
            .iter()
            .cloned()
            .collect::<Option<_>>()
            .ok_or(CL_INVALID_KERNEL_ARGS)?;
        if k.local_bytes() as u64 > LOCAL_MEM_SIZE {
            return Err(CL_OUT_OF_RESOURCES);
        }
        let empty = global[..dims].contains(&0);
        let range = nd_range(dims, global, offset, local);
        if !empty {
            range.resolve().map_err(|_| CL_INVALID_WORK_GROUP_SIZE)?;
        }
        let (built, name) = (k.built.clone(), k.info.name.clone());
        let work: Work = Box::new(move || {
            if empty {
                return Ok(());
            }
            launch(&built, &name, range, &args)
        });
        let e = Queue::enqueue(&q, CL_COMMAND_NDRANGE_KERNEL, wait, work);
        // SAFETY: the caller's pointer.
        unsafe { queue::give_event(event, &e) };
        Ok(())
    })
}

/// `clEnqueueTask`: a kernel over one work-item.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clEnqueueTask(
    queue: cl_command_queue,
    kernel: cl_kernel,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let one = 1usize;
    // SAFETY: the caller's contract; the sizes are ours.
    unsafe {
        clEnqueueNDRangeKernel(
            queue,
            kernel,
            1,
            std::ptr::null(),
            &one,
            &one,
            n,
            list,
            event,
        )
    }
}

/// `clEnqueueNativeKernel`: the device cannot run native kernels
/// (`CL_DEVICE_EXECUTION_CAPABILITIES` has only `CL_EXEC_KERNEL`).
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueNativeKernel(
    queue: cl_command_queue,
    _user_func: Option<unsafe extern "C" fn(*mut c_void)>,
    _args: *mut c_void,
    _cb_args: usize,
    _num_mem_objects: cl_uint,
    _mem_list: *const cl_mem,
    _args_mem_loc: *mut *const c_void,
    _n: cl_uint,
    _list: *const cl_event,
    _event: *mut cl_event,
) -> cl_int {
    api::status(|| {
        queue::get(queue)?;
        Err(CL_INVALID_OPERATION)
    })
}

/// Takes the launch's names of buffers back when it ends.
struct Forget(Vec<usize>);

impl Drop for Forget {
    fn drop(&mut self) {
        for &base in &self.0 {
            forget_memory(base);
        }
    }
}

/// Runs one launch on the worker: prints what a checked launch finds, and
/// a failed launch's report.
fn launch(
    built: &clsync_opencl::Program,
    name: &str,
    range: NdRange,
    args: &[ArgValue],
) -> ClResult<()> {
    let kernel = built.kernel(name).map_err(|_| CL_INVALID_KERNEL)?;
    let views: Vec<Option<View>> = args
        .iter()
        .map(|a| match a {
            ArgValue::Mem(Some(m)) => Some(View(m.clone())),
            _ => None,
        })
        .collect();
    let bound: Vec<Arg<'_>> = args
        .iter()
        .zip(&views)
        .map(|(a, v)| match (a, v) {
            (_, Some(v)) => Arg::Buffer(v),
            (ArgValue::Mem(_), None) => Arg::Null,
            (ArgValue::Local(n), _) => Arg::Local(*n),
            (ArgValue::Value(b), _) => Arg::Value(b.clone()),
        })
        .collect();
    let rt = platform::runtime();
    let checked = rt.checking();
    // A checked launch's reports name each buffer after its parameter, as
    // `clsync run` names a `.sim` file's (`counter`[0]), element by
    // element of the type it points to.
    let named: Vec<usize> = if checked {
        views
            .iter()
            .zip(&kernel.info().params)
            .filter_map(|(v, p)| {
                let m = &v.as_ref()?.0;
                let stride = p.elem_size.max(1);
                let base = m.ptr() as usize;
                name_memory(base, m.size / stride, stride, Space::Global, &p.name);
                Some(base)
            })
            .collect()
    } else {
        Vec::new()
    };
    let _forget = Forget(named);
    match kernel.run_with(rt, range, &bound, |l| l.run_on_divergence(checked), false) {
        Ok(found) => {
            for d in &found.diagnostics {
                eprintln!("{d}");
            }
            for r in &found.checker {
                eprintln!("{}", report::render(r));
            }
            Ok(())
        }
        Err(RunError::Launch { error, diagnostics }) => {
            for d in &diagnostics {
                eprintln!("{d}");
            }
            eprintln!("{}", report::launch_error(&error));
            Err(CL_OUT_OF_RESOURCES)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Err(CL_OUT_OF_RESOURCES)
        }
    }
}
