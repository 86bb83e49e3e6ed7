//! Separate compilation: `clCompileProgram` makes a unit of LLVM IR from
//! the source and its embedded headers, `clLinkProgram` links units (of
//! compiled objects and libraries) into an executable with `llvm-link-15`,
//! or keeps them together as a library.

use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use clsync_opencl::frontend;
use clsync_opencl::BuildError;
use opencl_sys::*;

use crate::api::{self, ClResult};
use crate::context;
use crate::handle;
use crate::program::{allows_non_uniform, check_build_args, checking, get, Build, Origin, Program};

/// Build options as the front end gets them: unoptimized when launches
/// are checked.
pub(crate) fn front_end_options(options: &str) -> String {
    if checking() {
        format!("{options} -cl-opt-disable")
    } else {
        options.to_string()
    }
}

/// The application's options string, or "".
///
/// # Safety
///
/// `options` is null or NUL-terminated.
unsafe fn options_of(options: *const c_char) -> ClResult<String> {
    if options.is_null() {
        return Ok(String::new());
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { api::c_str(options)? }.to_string())
}

/// `clCompileProgram`: the source (with its embedded headers, each at its
/// include name) compiled to a unit for `clLinkProgram`.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCompileProgram(
    program: cl_program,
    num_devices: cl_uint,
    devices: *const cl_device_id,
    options: *const c_char,
    num_input_headers: cl_uint,
    input_headers: *const cl_program,
    header_include_names: *mut *const c_char,
    pfn_notify: Option<unsafe extern "C" fn(cl_program, *mut c_void)>,
    user_data: *mut c_void,
) -> cl_int {
    api::status(|| {
        let p = get(program)?;
        // SAFETY: the caller's contract.
        unsafe { check_build_args(num_devices, devices, pfn_notify.is_some(), user_data)? };
        api::pair(input_headers, num_input_headers, CL_INVALID_VALUE)?;
        if (num_input_headers == 0) != header_include_names.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: the caller's contract: `num_input_headers` programs and
        // as many NUL-terminated names.
        let (hs, names) = unsafe {
            (
                api::slice(input_headers, num_input_headers as usize, CL_INVALID_VALUE)?,
                api::slice(
                    header_include_names.cast_const(),
                    num_input_headers as usize,
                    CL_INVALID_VALUE,
                )?,
            )
        };
        let mut headers = Vec::new();
        for (&h, &n) in hs.iter().zip(names) {
            let hp = get(h)?;
            let Origin::Source(text) = &hp.origin else {
                return Err(CL_INVALID_OPERATION);
            };
            // SAFETY: NUL-terminated by the caller's contract.
            headers.push((unsafe { api::c_str(n)? }.to_string(), text.clone()));
        }
        let Origin::Source(src) = &p.origin else {
            return Err(CL_INVALID_OPERATION);
        };
        if p.kernels.load(Ordering::Relaxed) > 0 {
            return Err(CL_INVALID_OPERATION);
        }
        // SAFETY: the caller's contract.
        let options = unsafe { options_of(options)? };
        let r = {
            let mut b = p.lock();
            b.options = options.clone();
            b.built = None;
            match frontend::compile_unit(src, "input.cl", &front_end_options(&options), &headers) {
                Ok(u) => {
                    b.log = u.log.clone();
                    b.units = vec![u];
                    b.status = CL_BUILD_SUCCESS;
                    b.binary_type = CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT;
                    b.non_uniform = allows_non_uniform(&options);
                    Ok(())
                }
                Err(e) => {
                    let code = match e {
                        BuildError::Options(_) => CL_INVALID_COMPILER_OPTIONS,
                        _ => CL_COMPILE_PROGRAM_FAILURE,
                    };
                    b.log = match e {
                        BuildError::Compile { log } => log,
                        other => format!("{other}\n"),
                    };
                    b.units.clear();
                    b.status = CL_BUILD_ERROR;
                    Err(code)
                }
            }
        };
        if let Some(f) = pfn_notify {
            // SAFETY: the application's callback with its own user data.
            unsafe { f(program, user_data) };
        }
        r
    })
}

/// `clLinkProgram`: the inputs' units linked (`llvm-link-15`) into an
/// executable, or kept together as a library with `-create-library`.
///
/// # Safety
///
/// The C API's contract.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clLinkProgram(
    context: cl_context,
    num_devices: cl_uint,
    devices: *const cl_device_id,
    options: *const c_char,
    num_input_programs: cl_uint,
    input_programs: *const cl_program,
    pfn_notify: Option<unsafe extern "C" fn(cl_program, *mut c_void)>,
    user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_program {
    // SAFETY: the caller's contract.
    unsafe {
        let mut code = CL_SUCCESS;
        let h = api::object(errcode_ret, || {
            let c = context::get(context)?;
            check_build_args(num_devices, devices, pfn_notify.is_some(), user_data)?;
            let inputs = api::slice(
                input_programs,
                num_input_programs as usize,
                CL_INVALID_VALUE,
            )?;
            if inputs.is_empty() {
                return Err(CL_INVALID_VALUE);
            }
            let options = options_of(options)?;
            let mut units = Vec::new();
            let mut non_uniform = !options.contains("-cl-uniform-work-group-size");
            for &i in inputs {
                let p = get(i)?;
                let b = p.lock();
                if b.units.is_empty() {
                    return Err(CL_INVALID_PROGRAM);
                }
                units.extend(b.units.iter().cloned());
                non_uniform &= b.non_uniform;
            }
            let mut b = Build::new();
            b.options = options.clone();
            b.non_uniform = non_uniform;
            if options.split_whitespace().any(|w| w == "-create-library") {
                b.units = units;
                b.status = CL_BUILD_SUCCESS;
                b.binary_type = CL_PROGRAM_BINARY_TYPE_LIBRARY;
            } else {
                match clsync_opencl::Program::link(&units) {
                    Ok(built) => {
                        b.log = built.build_log().to_string();
                        b.built = Some(Arc::new(built));
                        b.status = CL_BUILD_SUCCESS;
                        b.binary_type = CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
                    }
                    Err(e) => {
                        // The program is made, with its log, and the call
                        // says the link failed.
                        b.log = match e {
                            BuildError::Compile { log } => log,
                            other => format!("{other}\n"),
                        };
                        b.status = CL_BUILD_ERROR;
                        code = CL_LINK_PROGRAM_FAILURE;
                    }
                }
            }
            let (_, h) = handle::create(Program {
                context: c,
                origin: Origin::Linked,
                build: Mutex::new(b),
                kernels: AtomicUsize::new(0),
            });
            if let Some(f) = pfn_notify {
                f(h, user_data);
            }
            Ok(h)
        });
        if !h.is_null() && code != CL_SUCCESS {
            api::write(errcode_ret, code);
        }
        h
    }
}
