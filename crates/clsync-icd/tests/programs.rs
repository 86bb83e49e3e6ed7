//! Programs through the API: separate compilation with embedded headers,
//! linking (libraries too), binaries handed out and built again, each run
//! and its result checked.

use std::ffi::{c_char, c_void};
use std::ptr::{null, null_mut};

use clsync_icd::{
    context::*, kernel::*, launch::*, link::*, memory::*, platform::*, program::*, queue::*,
    transfer::*,
};
use opencl_sys::*;

struct Setup {
    ctx: cl_context,
    q: cl_command_queue,
}

fn setup() -> Setup {
    let dev = device_id();
    let mut err = 0;
    // SAFETY: valid arguments; `err` is writable.
    unsafe {
        let ctx = clCreateContext(null(), 1, &dev, None, null_mut(), &mut err);
        let q = clCreateCommandQueueWithProperties(ctx, dev, null(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        Setup { ctx, q }
    }
}

fn source(ctx: cl_context, src: &str) -> cl_program {
    let s = src.as_ptr().cast::<c_char>();
    let len = src.len();
    let mut err = 0;
    // SAFETY: one string of `len` bytes.
    let p = unsafe { clCreateProgramWithSource(ctx, 1, &s as *const _ as *mut _, &len, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    p
}

fn log(p: cl_program) -> String {
    let mut buf = vec![0u8; 8192];
    let mut n = 0;
    // SAFETY: `buf` has room for its length.
    unsafe {
        clGetProgramBuildInfo(
            p,
            device_id(),
            CL_PROGRAM_BUILD_LOG,
            buf.len(),
            buf.as_mut_ptr().cast(),
            &mut n,
        )
    };
    String::from_utf8_lossy(&buf[..n.saturating_sub(1)]).into_owned()
}

/// Runs `name` of `p` over 64 work-items on a buffer of 64 ints; the ints.
fn run(s: &Setup, p: cl_program, name: &std::ffi::CStr) -> Vec<i32> {
    let mut err = 0;
    let mut out = vec![0i32; 64];
    // SAFETY: valid handles; `out` outlives the blocking read.
    unsafe {
        let k = clCreateKernel(p, name.as_ptr(), &mut err);
        assert_eq!(err, CL_SUCCESS, "{}", log(p));
        let b = clCreateBuffer(s.ctx, 0, 256, null_mut(), &mut err);
        assert_eq!(
            clSetKernelArg(k, 0, 8, (&b as *const cl_mem).cast()),
            CL_SUCCESS
        );
        let g = 64usize;
        assert_eq!(
            clEnqueueNDRangeKernel(s.q, k, 1, null(), &g, null(), 0, null(), null_mut()),
            CL_SUCCESS
        );
        assert_eq!(
            clEnqueueReadBuffer(
                s.q,
                b,
                1,
                0,
                256,
                out.as_mut_ptr().cast::<c_void>(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        clReleaseMemObject(b);
        clReleaseKernel(k);
    }
    out
}

#[test]
fn compiled_units_with_headers_link_and_run() {
    let s = setup();
    let dev = device_id();
    // SAFETY: valid handles and NUL-terminated strings.
    unsafe {
        let header = source(s.ctx, "#define SCALE 3\nint scaled(int x);\n");
        let lib = source(
            s.ctx,
            "#include \"inc/scale.h\"\nint scaled(int x) { return SCALE * x; }\n",
        );
        let main = source(
            s.ctx,
            "#include \"inc/scale.h\"\nkernel void k(global int* o) { int i = get_global_id(0); o[i] = scaled(i) + SCALE; }\n",
        );
        let name = c"inc/scale.h".as_ptr();
        let mut names = [name];
        for p in [lib, main] {
            assert_eq!(
                clCompileProgram(
                    p,
                    1,
                    &dev,
                    null(),
                    1,
                    &header,
                    names.as_mut_ptr(),
                    None,
                    null_mut()
                ),
                CL_SUCCESS,
                "{}",
                log(p)
            );
        }
        let mut err = 0;
        // A library of one unit, then the executable from it and the main unit.
        let l = clLinkProgram(
            s.ctx,
            1,
            &dev,
            c"-create-library".as_ptr(),
            1,
            &lib,
            None,
            null_mut(),
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS);
        let inputs = [main, l];
        let exe = clLinkProgram(
            s.ctx,
            1,
            &dev,
            null(),
            2,
            inputs.as_ptr(),
            None,
            null_mut(),
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS, "{}", log(exe));
        let want: Vec<i32> = (0..64).map(|i| 3 * i + 3).collect();
        assert_eq!(run(&s, exe, c"k"), want);
        // A program with only a compiled object has no kernels to make.
        clCreateKernel(main, c"k".as_ptr(), &mut err);
        assert_eq!(err, CL_INVALID_PROGRAM_EXECUTABLE);
        // Missing a definition: the link fails, with the linker's words.
        let bad = clLinkProgram(s.ctx, 1, &dev, null(), 1, &main, None, null_mut(), &mut err);
        assert_eq!(err, CL_LINK_PROGRAM_FAILURE);
        assert!(!bad.is_null());
        let mut status = 0i32;
        clGetProgramBuildInfo(
            bad,
            dev,
            CL_PROGRAM_BUILD_STATUS,
            4,
            (&mut status as *mut i32).cast(),
            null_mut(),
        );
        assert_eq!(status, CL_BUILD_ERROR);
        // A header that does not compile is the compile's failure.
        let broken = source(
            s.ctx,
            "#include \"inc/scale.h\"\nkernel void k(global int* o) { o[0] = nope; }\n",
        );
        assert_eq!(
            clCompileProgram(
                broken,
                1,
                &dev,
                null(),
                1,
                &header,
                names.as_mut_ptr(),
                None,
                null_mut()
            ),
            CL_COMPILE_PROGRAM_FAILURE
        );
        assert!(log(broken).contains("input.cl:2:"), "{}", log(broken));
    }
}

#[test]
fn a_binary_handed_out_builds_and_runs_again() {
    let s = setup();
    let dev = device_id();
    // SAFETY: valid handles; the binary buffer has the size asked for.
    unsafe {
        let p = source(
            s.ctx,
            "kernel void k(global int* o) { o[get_global_id(0)] = 7 * (int)get_global_id(0); }",
        );
        assert_eq!(
            clBuildProgram(p, 1, &dev, null(), None, null_mut()),
            CL_SUCCESS
        );
        let mut size = 0usize;
        assert_eq!(
            clGetProgramInfo(
                p,
                CL_PROGRAM_BINARY_SIZES,
                8,
                (&mut size as *mut usize).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        let mut bin = vec![0u8; size];
        let mut ptr = bin.as_mut_ptr();
        assert_eq!(
            clGetProgramInfo(
                p,
                CL_PROGRAM_BINARIES,
                8,
                (&mut ptr as *mut *mut u8).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        let mut status = 0;
        let mut err = 0;
        let mut bp = bin.as_ptr();
        let again =
            clCreateProgramWithBinary(s.ctx, 1, &dev, &size, &mut bp, &mut status, &mut err);
        assert_eq!((err, status), (CL_SUCCESS, CL_SUCCESS));
        assert_eq!(
            clBuildProgram(again, 1, &dev, null(), None, null_mut()),
            CL_SUCCESS
        );
        let want: Vec<i32> = (0..64).map(|i| 7 * i).collect();
        assert_eq!(run(&s, again, c"k"), want);
        // Not a binary of clsync's.
        let junk = [1u8; 32];
        let mut jp = junk.as_ptr();
        let len = junk.len();
        clCreateProgramWithBinary(s.ctx, 1, &dev, &len, &mut jp, &mut status, &mut err);
        assert_eq!((err, status), (CL_INVALID_BINARY, CL_INVALID_BINARY));
    }
}
