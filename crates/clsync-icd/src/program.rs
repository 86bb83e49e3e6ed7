//! Programs: from OpenCL C source, from SPIR-V (IL) and from the binaries
//! clsync hands out (which are SPIR-V); builds, build logs and queries.
//!
//! A build runs clsync's front end (clang-15, llvm-spirv-15) and compiler
//! (`clsync_opencl::Program`). When launches are checked (`CLSYNC_CHECK`,
//! as `clsync run -- ./app` sets it), sources are built unoptimized, as
//! `clsync run --check` and Oclgrind build them, so that the checker sees
//! the program as written.

use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use clsync_opencl::frontend::Unit;
use clsync_opencl::BuildError;
use opencl_sys::*;

use crate::api::{self, ClResult};
use crate::context::{self, Context};
use crate::handle::{self, Ref};
use crate::info::Value;
use crate::platform::{self, answer};

/// Where a program came from.
pub(crate) enum Origin {
    Source(String),
    Il(Vec<u8>),
    Binary(Vec<u8>),
    /// Made by `clLinkProgram`.
    Linked,
}

/// A program object.
pub struct Program {
    pub(crate) context: Ref<Context>,
    pub(crate) origin: Origin,
    pub(crate) build: Mutex<Build>,
    /// Kernel objects made from it: a program with kernels cannot be built
    /// again (`CL_INVALID_OPERATION`).
    pub kernels: AtomicUsize,
}

impl handle::Object for Program {}

/// A program's build state.
pub(crate) struct Build {
    pub(crate) status: cl_build_status,
    pub(crate) options: String,
    pub(crate) log: String,
    /// The built program.
    pub(crate) built: Option<Arc<clsync_opencl::Program>>,
    /// Whether non-uniform work-groups are allowed: not for OpenCL C 1.x
    /// nor with `-cl-uniform-work-group-size`.
    pub(crate) non_uniform: bool,
    /// A compiled object's or a library's units (`clCompileProgram`,
    /// `clLinkProgram -create-library`), for `clLinkProgram`.
    pub(crate) units: Vec<Unit>,
    /// `CL_PROGRAM_BINARY_TYPE`.
    pub(crate) binary_type: cl_program_binary_type,
}

impl Build {
    pub(crate) fn new() -> Build {
        Build {
            status: CL_BUILD_NONE,
            options: String::new(),
            log: String::new(),
            built: None,
            non_uniform: false,
            units: Vec::new(),
            binary_type: CL_PROGRAM_BINARY_TYPE_NONE,
        }
    }
}

impl Program {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Build> {
        self.build.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The built program, `CL_INVALID_PROGRAM_EXECUTABLE` if there is none.
    pub fn built(&self) -> ClResult<Arc<clsync_opencl::Program>> {
        self.lock()
            .built
            .clone()
            .ok_or(CL_INVALID_PROGRAM_EXECUTABLE)
    }

    /// Whether its kernels may run on non-uniform work-groups.
    pub fn non_uniform(&self) -> bool {
        self.lock().non_uniform
    }

    /// Its context.
    pub fn context(&self) -> &Ref<Context> {
        &self.context
    }
}

/// The program behind a handle (`CL_INVALID_PROGRAM` otherwise).
pub fn get(h: cl_program) -> ClResult<Ref<Program>> {
    handle::get::<Program>(h).ok_or(CL_INVALID_PROGRAM)
}

/// Whether launches are checked in this process (`CLSYNC_CHECK`).
pub(crate) fn checking() -> bool {
    clsync::checker::enabled_by_env()
}

/// Whether `options` allow non-uniform work-groups: OpenCL C 2.0 or later
/// and no `-cl-uniform-work-group-size` (OpenCL 3.0, 5.8.4.7).
pub(crate) fn allows_non_uniform(options: &str) -> bool {
    let mut std2 = false;
    for w in options.split_whitespace() {
        if w == "-cl-uniform-work-group-size" {
            return false;
        }
        if let Some(v) = w.strip_prefix("-cl-std=") {
            std2 = matches!(v, "CL2.0" | "CL3.0" | "CLC++" | "CLC++1.0" | "CLC++2021");
        }
    }
    std2
}

fn new(context: cl_context, origin: Origin) -> ClResult<*mut c_void> {
    let c = context::get(context)?;
    let (_, h) = handle::create(Program {
        context: c,
        origin,
        build: Mutex::new(Build::new()),
        kernels: AtomicUsize::new(0),
    });
    Ok(h)
}

/// `clCreateProgramWithSource`: the strings are joined, each with its
/// length or up to its NUL.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCreateProgramWithSource(
    context: cl_context,
    count: cl_uint,
    strings: *mut *const c_char,
    lengths: *const usize,
    errcode_ret: *mut cl_int,
) -> cl_program {
    // SAFETY: the caller's contract.
    unsafe {
        api::object(errcode_ret, || {
            let ptrs = api::slice(strings, count as usize, CL_INVALID_VALUE)?;
            if ptrs.is_empty() {
                return Err(CL_INVALID_VALUE);
            }
            let lens = if lengths.is_null() {
                None
            } else {
                Some(std::slice::from_raw_parts(lengths, ptrs.len()))
            };
            let mut source = Vec::new();
            for (i, &p) in ptrs.iter().enumerate() {
                if p.is_null() {
                    return Err(CL_INVALID_VALUE);
                }
                match lens.map(|l| l[i]) {
                    Some(n) if n > 0 => {
                        source.extend_from_slice(std::slice::from_raw_parts(p.cast::<u8>(), n))
                    }
                    _ => source.extend_from_slice(std::ffi::CStr::from_ptr(p).to_bytes()),
                }
            }
            let source = String::from_utf8(source).map_err(|_| CL_INVALID_VALUE)?;
            new(context, Origin::Source(source))
        })
    }
}

/// `clCreateProgramWithIL`: a SPIR-V module.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCreateProgramWithIL(
    context: cl_context,
    il: *const c_void,
    length: usize,
    errcode_ret: *mut cl_int,
) -> cl_program {
    // SAFETY: the caller's contract.
    unsafe {
        api::object(errcode_ret, || {
            let bytes = api::slice(il.cast::<u8>(), length, CL_INVALID_VALUE)?;
            if bytes.len() < 20 || bytes[..4] != [0x03, 0x02, 0x23, 0x07] {
                return Err(CL_INVALID_VALUE);
            }
            new(context, Origin::Il(bytes.to_vec()))
        })
    }
}

/// `clCreateProgramWithBinary`: a binary clsync handed out (a SPIR-V
/// module).
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCreateProgramWithBinary(
    context: cl_context,
    num_devices: cl_uint,
    devices: *const cl_device_id,
    lengths: *const usize,
    binaries: *mut *const u8,
    binary_status: *mut cl_int,
    errcode_ret: *mut cl_int,
) -> cl_program {
    // SAFETY: the caller's contract.
    unsafe {
        api::object(errcode_ret, || {
            let ds = api::slice(devices, num_devices as usize, CL_INVALID_VALUE)?;
            if ds.len() != 1 {
                return Err(if ds.is_empty() {
                    CL_INVALID_VALUE
                } else {
                    CL_INVALID_DEVICE
                });
            }
            platform::check_device(ds[0])?;
            if lengths.is_null() || binaries.is_null() || *lengths == 0 || (*binaries).is_null() {
                return Err(CL_INVALID_VALUE);
            }
            let bytes = std::slice::from_raw_parts(*binaries, *lengths);
            let ok = bytes.len() >= 20 && bytes[..4] == [0x03, 0x02, 0x23, 0x07];
            api::write(
                binary_status,
                if ok { CL_SUCCESS } else { CL_INVALID_BINARY },
            );
            if !ok {
                return Err(CL_INVALID_BINARY);
            }
            new(context, Origin::Binary(bytes.to_vec()))
        })
    }
}

/// `clCreateProgramWithBuiltInKernels`: the device has none.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCreateProgramWithBuiltInKernels(
    context: cl_context,
    _num_devices: cl_uint,
    _devices: *const cl_device_id,
    _kernel_names: *const c_char,
    errcode_ret: *mut cl_int,
) -> cl_program {
    // SAFETY: the caller's contract.
    unsafe {
        api::object(errcode_ret, || {
            context::get(context)?;
            Err(CL_INVALID_VALUE)
        })
    }
}

/// `clBuildProgram`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clBuildProgram(
    program: cl_program,
    num_devices: cl_uint,
    devices: *const cl_device_id,
    options: *const c_char,
    pfn_notify: Option<unsafe extern "C" fn(cl_program, *mut c_void)>,
    user_data: *mut c_void,
) -> cl_int {
    api::status(|| {
        let p = get(program)?;
        // SAFETY: the caller's contract.
        unsafe { check_build_args(num_devices, devices, pfn_notify.is_some(), user_data)? };
        let options = if options.is_null() {
            String::new()
        } else {
            // SAFETY: a NUL-terminated string by the caller's contract.
            unsafe { api::c_str(options)? }.to_string()
        };
        let r = build(&p, &options);
        if let Some(f) = pfn_notify {
            // SAFETY: the application's callback with its own user data.
            unsafe { f(program, user_data) };
        }
        r
    })
}

/// The device list and callback of a build, compile or link: only
/// clsync's device; user data only with a callback.
///
/// # Safety
///
/// `devices` is null or has `num_devices` readable handles.
pub(crate) unsafe fn check_build_args(
    num_devices: cl_uint,
    devices: *const cl_device_id,
    has_callback: bool,
    user_data: *mut c_void,
) -> ClResult<()> {
    api::pair(devices, num_devices, CL_INVALID_VALUE)?;
    // SAFETY: the caller's contract.
    for &d in unsafe { api::slice(devices, num_devices as usize, CL_INVALID_VALUE)? } {
        platform::check_device(d)?;
    }
    if !has_callback && !user_data.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    Ok(())
}

fn build(p: &Program, options: &str) -> ClResult<()> {
    if p.kernels.load(Ordering::Relaxed) > 0 {
        return Err(CL_INVALID_OPERATION);
    }
    let mut b = p.lock();
    if b.status == CL_BUILD_IN_PROGRESS {
        return Err(CL_INVALID_OPERATION);
    }
    b.status = CL_BUILD_IN_PROGRESS;
    b.options = options.to_string();
    let result = match &p.origin {
        Origin::Source(src) => {
            let options = crate::link::front_end_options(options);
            // Checked launches only, in a checked process: the checked
            // code is the build's.
            if checking() {
                clsync_opencl::Program::build_checked(src, "input.cl", &options)
            } else {
                clsync_opencl::Program::build(src, "input.cl", &options)
            }
        }
        Origin::Il(bytes) | Origin::Binary(bytes) => clsync_opencl::Program::from_spirv(bytes),
        // A linked program has no source to build again.
        Origin::Linked => {
            b.status = CL_BUILD_ERROR;
            return Err(CL_INVALID_OPERATION);
        }
    };
    let (status, code) = match result {
        Ok(built) => {
            b.log = built.build_log().to_string();
            b.non_uniform = match p.origin {
                Origin::Source(_) => allows_non_uniform(options),
                // SPIR-V says nothing of a language version here; OpenCL
                // 2.0+ consumers allow non-uniform groups unless asked not
                // to.
                _ => !options.contains("-cl-uniform-work-group-size"),
            };
            b.built = Some(Arc::new(built));
            b.binary_type = CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
            (CL_BUILD_SUCCESS, CL_SUCCESS)
        }
        Err(e) => {
            b.built = None;
            let code = match e {
                BuildError::Options(_) => CL_INVALID_BUILD_OPTIONS,
                BuildError::Spirv(_) if !matches!(p.origin, Origin::Source(_)) => CL_INVALID_BINARY,
                _ => CL_BUILD_PROGRAM_FAILURE,
            };
            b.log = match e {
                BuildError::Compile { log } => log,
                other => format!("{other}\n"),
            };
            (CL_BUILD_ERROR, code)
        }
    };
    b.status = status;
    if code == CL_SUCCESS {
        Ok(())
    } else {
        Err(code)
    }
}

/// `clUnloadCompiler` and `clUnloadPlatformCompiler`: nothing to unload
/// (the front end runs as separate processes).
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clUnloadPlatformCompiler(platform: cl_platform_id) -> cl_int {
    if platform != platform::platform_id() {
        return CL_INVALID_PLATFORM;
    }
    CL_SUCCESS
}

/// `clUnloadCompiler` (OpenCL 1.1).
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clUnloadCompiler() -> cl_int {
    CL_SUCCESS
}

/// `clRetainProgram`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clRetainProgram(program: cl_program) -> cl_int {
    api::status(|| {
        handle::retain::<Program>(program)
            .then_some(())
            .ok_or(CL_INVALID_PROGRAM)
    })
}

/// `clReleaseProgram`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clReleaseProgram(program: cl_program) -> cl_int {
    api::status(|| {
        handle::release::<Program>(program)
            .then_some(())
            .ok_or(CL_INVALID_PROGRAM)
    })
}

/// `clGetProgramInfo`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetProgramInfo(
    program: cl_program,
    param_name: cl_program_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    api::status(|| {
        let p = get(program)?;
        let built = p.lock().built.clone();
        let binary = built
            .as_ref()
            .map(|b| b.spirv().to_vec())
            .unwrap_or_default();
        let v = match param_name {
            CL_PROGRAM_REFERENCE_COUNT => Ok(Value::of(handle::ref_count(&p))),
            CL_PROGRAM_CONTEXT => Ok(Value::of(handle::handle(&p.context))),
            CL_PROGRAM_NUM_DEVICES => Ok(Value::of(1u32)),
            CL_PROGRAM_DEVICES => Ok(Value::of(platform::device_id())),
            CL_PROGRAM_SOURCE => Ok(Value::str(match &p.origin {
                Origin::Source(s) => s,
                _ => "",
            })),
            CL_PROGRAM_IL => Ok(match &p.origin {
                Origin::Il(b) => Value(b.clone()),
                _ => Value(Vec::new()),
            }),
            CL_PROGRAM_BINARY_SIZES => Ok(Value::of(binary.len())),
            CL_PROGRAM_BINARIES => {
                // An array of one pointer to where the binary goes.
                if !value.is_null() {
                    if size < std::mem::size_of::<*mut u8>() {
                        return Err(CL_INVALID_VALUE);
                    }
                    // SAFETY: the caller gave room for one pointer, which
                    // points to room for the binary (CL_PROGRAM_BINARY_SIZES).
                    unsafe {
                        let dst = value.cast::<*mut u8>().read_unaligned();
                        if !dst.is_null() {
                            std::ptr::copy_nonoverlapping(binary.as_ptr(), dst, binary.len());
                        }
                    }
                }
                // SAFETY: the caller's pointer.
                unsafe { api::write(size_ret, std::mem::size_of::<*mut u8>()) };
                return Ok(());
            }
            CL_PROGRAM_NUM_KERNELS => built
                .as_ref()
                .map(|b| Value::of(b.kernels().len()))
                .ok_or(CL_INVALID_PROGRAM_EXECUTABLE),
            CL_PROGRAM_KERNEL_NAMES => built
                .as_ref()
                .map(|b| {
                    let names: Vec<_> = b.kernels().iter().map(|k| k.name.as_str()).collect();
                    Value::str(&names.join(";"))
                })
                .ok_or(CL_INVALID_PROGRAM_EXECUTABLE),
            CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT | CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT => {
                Ok(Value::bool(false))
            }
            _ => Err(CL_INVALID_VALUE),
        };
        // SAFETY: the caller's buffers.
        unsafe { answer(v, size, value, size_ret) }
    })
}

/// `clGetProgramBuildInfo`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetProgramBuildInfo(
    program: cl_program,
    device: cl_device_id,
    param_name: cl_program_build_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    api::status(|| {
        let p = get(program)?;
        platform::check_device(device)?;
        let b = p.lock();
        let v = match param_name {
            CL_PROGRAM_BUILD_STATUS => Ok(Value::of(b.status)),
            CL_PROGRAM_BUILD_OPTIONS => Ok(Value::str(&b.options)),
            CL_PROGRAM_BUILD_LOG => Ok(Value::str(&b.log)),
            CL_PROGRAM_BINARY_TYPE => Ok(Value::of(b.binary_type)),
            CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE => Ok(Value::of(0usize)),
            _ => Err(CL_INVALID_VALUE),
        };
        drop(b);
        // SAFETY: the caller's buffers.
        unsafe { answer(v, size, value, size_ret) }
    })
}

/// `clSetProgramReleaseCallback`: deprecated in OpenCL 3.0 for devices
/// without global constructors or destructors, which returns
/// `CL_INVALID_OPERATION`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clSetProgramReleaseCallback(
    program: cl_program,
    _pfn_notify: Option<unsafe extern "C" fn(cl_program, *mut c_void)>,
    _user_data: *mut c_void,
) -> cl_int {
    api::status(|| {
        get(program)?;
        Err(CL_INVALID_OPERATION)
    })
}

/// `clSetProgramSpecializationConstant`: the programs clsync builds from
/// OpenCL C have none; setting one is refused.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clSetProgramSpecializationConstant(
    program: cl_program,
    _spec_id: cl_uint,
    _spec_size: usize,
    _spec_value: *const c_void,
) -> cl_int {
    api::status(|| {
        let p = get(program)?;
        match p.origin {
            Origin::Il(_) => Err(CL_INVALID_SPEC_ID),
            _ => Err(CL_INVALID_PROGRAM),
        }
    })
}
