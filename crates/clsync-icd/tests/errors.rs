//! Misuse of the API gets the error code the OpenCL 3.0 API specification
//! names for it, never a crash: the entry points called directly, as the
//! ICD loader calls them, with bad handles, sizes, flags and ranges.

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use clsync_icd::{
    context::*, event::*, image::*, image_commands::*, kernel::*, launch::*, memory::*,
    platform::*, program::*, queue::*, sampler::*, svm::*, transfer::*,
};
use opencl_sys::*;

/// A context and an in-order queue on clsync's device.
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
        assert_eq!(err, CL_SUCCESS);
        let q = clCreateCommandQueueWithProperties(ctx, dev, null(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        Setup { ctx, q }
    }
}

/// Builds `src` with `options`; the program and the build's status.
fn program(ctx: cl_context, src: &str, options: &str) -> (cl_program, cl_int) {
    let s = src.as_ptr().cast::<std::ffi::c_char>();
    let len = src.len();
    let opts = format!("{options}\0");
    let dev = device_id();
    let mut err = 0;
    // SAFETY: one string of `len` bytes; a NUL-terminated option string.
    unsafe {
        let p = clCreateProgramWithSource(ctx, 1, &s as *const _ as *mut _, &len, &mut err);
        assert_eq!(err, CL_SUCCESS);
        let status = clBuildProgram(p, 1, &dev, opts.as_ptr().cast(), None, null_mut());
        (p, status)
    }
}

#[test]
fn platform_and_device_queries() {
    let mut n = 7u32;
    let mut dev: cl_device_id = null_mut();
    let mut buf = [0u8; 4];
    let mut size = 0usize;
    // SAFETY: every pointer is valid for what it is passed as; the
    // handles are either clsync's or deliberately not.
    unsafe {
        assert_eq!(
            clGetPlatformIDs(0, null_mut(), null_mut()),
            CL_INVALID_VALUE
        );
        assert_eq!(
            clGetDeviceIDs(platform_id(), CL_DEVICE_TYPE_GPU, 1, &mut dev, &mut n),
            CL_DEVICE_NOT_FOUND
        );
        assert_eq!(n, 0);
        assert_eq!(
            clGetDeviceIDs(platform_id(), 0, 1, &mut dev, &mut n),
            CL_INVALID_DEVICE_TYPE
        );
        assert_eq!(
            clGetDeviceIDs(
                0x40 as cl_platform_id,
                CL_DEVICE_TYPE_ALL,
                1,
                &mut dev,
                &mut n
            ),
            CL_INVALID_PLATFORM
        );
        let fake = &mut buf as *mut _ as cl_device_id;
        assert_eq!(
            clGetDeviceInfo(fake, CL_DEVICE_NAME, 0, null_mut(), &mut size),
            CL_INVALID_DEVICE
        );
        assert_eq!(
            clGetDeviceInfo(device_id(), 0xdead, 0, null_mut(), &mut size),
            CL_INVALID_VALUE
        );
        // Too little room for the name: CL_INVALID_VALUE, nothing written
        // past it.
        assert_eq!(
            clGetDeviceInfo(
                device_id(),
                CL_DEVICE_NAME,
                4,
                buf.as_mut_ptr().cast(),
                null_mut()
            ),
            CL_INVALID_VALUE
        );
        assert_eq!(
            clGetDeviceInfo(device_id(), CL_DEVICE_NAME, 0, null_mut(), &mut size),
            CL_SUCCESS
        );
        assert!(size > 8);
    }
}

#[test]
fn contexts_and_their_properties() {
    let dev = device_id();
    let mut err = 0;
    // SAFETY: as above; the property lists are zero-terminated.
    unsafe {
        assert!(clCreateContext(null(), 0, null(), None, null_mut(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_VALUE);
        let bad_platform = [CL_CONTEXT_PLATFORM, 0x40, 0];
        clCreateContext(bad_platform.as_ptr(), 1, &dev, None, null_mut(), &mut err);
        assert_eq!(err, CL_INVALID_PLATFORM);
        let bad_property = [0x7777isize, 1, 0];
        clCreateContext(bad_property.as_ptr(), 1, &dev, None, null_mut(), &mut err);
        assert_eq!(err, CL_INVALID_PROPERTY);
        clCreateContextFromType(null(), CL_DEVICE_TYPE_GPU, None, null_mut(), &mut err);
        assert_eq!(err, CL_DEVICE_NOT_FOUND);
        let mut garbage = 0u64;
        assert_eq!(
            clRetainContext((&mut garbage as *mut u64).cast()),
            CL_INVALID_CONTEXT
        );
        // A released context is gone: its handle is refused, not followed.
        let s = setup();
        assert_eq!(clReleaseCommandQueue(s.q), CL_SUCCESS);
        assert_eq!(clReleaseContext(s.ctx), CL_SUCCESS);
        assert_eq!(clReleaseContext(s.ctx), CL_INVALID_CONTEXT);
    }
}

#[test]
fn buffers_and_transfers() {
    let s = setup();
    let mut err = 0;
    let mut host = [0u8; 256];
    // SAFETY: as above; `host` outlives every blocking transfer.
    unsafe {
        clCreateBuffer(s.ctx, 0, 0, null_mut(), &mut err);
        assert_eq!(err, CL_INVALID_BUFFER_SIZE);
        clCreateBuffer(s.ctx, CL_MEM_COPY_HOST_PTR, 16, null_mut(), &mut err);
        assert_eq!(err, CL_INVALID_HOST_PTR);
        clCreateBuffer(
            s.ctx,
            CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY,
            16,
            null_mut(),
            &mut err,
        );
        assert_eq!(err, CL_INVALID_VALUE);
        clCreateBuffer(0x40 as cl_context, 0, 16, null_mut(), &mut err);
        assert_eq!(err, CL_INVALID_CONTEXT);
        let b = clCreateBuffer(s.ctx, 0, 256, null_mut(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        let p = host.as_mut_ptr().cast::<c_void>();
        assert_eq!(
            clEnqueueReadBuffer(s.q, b, 1, 200, 100, p, 0, null(), null_mut()),
            CL_INVALID_VALUE
        );
        assert_eq!(
            clEnqueueReadBuffer(s.q, b, 1, 0, 16, null_mut(), 0, null(), null_mut()),
            CL_INVALID_VALUE
        );
        // A wait list whose count and list disagree.
        assert_eq!(
            clEnqueueReadBuffer(s.q, b, 1, 0, 16, p, 1, null(), null_mut()),
            CL_INVALID_EVENT_WAIT_LIST
        );
        assert_eq!(
            clEnqueueCopyBuffer(s.q, b, b, 0, 8, 16, 0, null(), null_mut()),
            CL_MEM_COPY_OVERLAP
        );
        let pattern = 7u32;
        assert_eq!(
            clEnqueueFillBuffer(
                s.q,
                b,
                (&pattern as *const u32).cast(),
                3,
                0,
                12,
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_VALUE
        );
        // Sub-buffers: the origin must be aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN.
        let region = cl_buffer_region {
            origin: 8,
            size: 16,
        };
        clCreateSubBuffer(
            b,
            0,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&region as *const cl_buffer_region).cast(),
            &mut err,
        );
        assert_eq!(err, CL_MISALIGNED_SUB_BUFFER_OFFSET);
        let region = cl_buffer_region {
            origin: 128,
            size: 256,
        };
        clCreateSubBuffer(
            b,
            0,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&region as *const cl_buffer_region).cast(),
            &mut err,
        );
        assert_eq!(err, CL_INVALID_VALUE);
        let region = cl_buffer_region {
            origin: 128,
            size: 64,
        };
        let sub = clCreateSubBuffer(
            b,
            0,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&region as *const cl_buffer_region).cast(),
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS);
        // A sub-buffer's bytes are its parent's: written through it, read
        // through the parent.
        let ones = [1u8; 64];
        assert_eq!(
            clEnqueueWriteBuffer(
                s.q,
                sub,
                1,
                0,
                64,
                ones.as_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(
            clEnqueueReadBuffer(s.q, b, 1, 0, 256, p, 0, null(), null_mut()),
            CL_SUCCESS
        );
        assert!(host[..128].iter().all(|&x| x == 0) && host[128..192].iter().all(|&x| x == 1));
        // The host may not read a buffer made CL_MEM_HOST_NO_ACCESS.
        let hidden = clCreateBuffer(s.ctx, CL_MEM_HOST_NO_ACCESS, 16, null_mut(), &mut err);
        assert_eq!(
            clEnqueueReadBuffer(s.q, hidden, 1, 0, 16, p, 0, null(), null_mut()),
            CL_INVALID_OPERATION
        );
        for m in [sub, hidden, b] {
            assert_eq!(clReleaseMemObject(m), CL_SUCCESS);
        }
        assert_eq!(clReleaseMemObject(b), CL_INVALID_MEM_OBJECT);
    }
}

#[test]
fn programs_kernels_and_launches() {
    let s = setup();
    let mut err = 0;
    // SAFETY: as above.
    unsafe {
        let (bad, status) = program(s.ctx, "kernel void k(global int* a) { a[0] = b; }", "");
        assert_eq!(status, CL_BUILD_PROGRAM_FAILURE);
        let mut log = vec![0u8; 4096];
        let mut n = 0;
        clGetProgramBuildInfo(
            bad,
            device_id(),
            CL_PROGRAM_BUILD_LOG,
            log.len(),
            log.as_mut_ptr().cast(),
            &mut n,
        );
        let log = String::from_utf8_lossy(&log[..n]);
        assert!(
            log.contains("input.cl:1:") && log.contains("error"),
            "{log}"
        );
        clCreateKernel(bad, c"k".as_ptr(), &mut err);
        assert_eq!(err, CL_INVALID_PROGRAM_EXECUTABLE);

        let src = "kernel void k(global int* a, local int* l, int v) { a[get_global_id(0)] = v; }\n\
                   __attribute__((reqd_work_group_size(8, 1, 1))) kernel void r(global int* a) { a[0] = 1; }";
        let (p, status) = program(s.ctx, src, "");
        assert_eq!(status, CL_SUCCESS);
        clCreateKernel(p, c"nope".as_ptr(), &mut err);
        assert_eq!(err, CL_INVALID_KERNEL_NAME);
        let k = clCreateKernel(p, c"k".as_ptr(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        // A program with kernels cannot be built again.
        let dev = device_id();
        assert_eq!(
            clBuildProgram(p, 1, &dev, null(), None, null_mut()),
            CL_INVALID_OPERATION
        );
        let b = clCreateBuffer(s.ctx, 0, 64 * 4, null_mut(), &mut err);
        let v = 5i32;
        assert_eq!(
            clSetKernelArg(k, 3, 4, (&v as *const i32).cast()),
            CL_INVALID_ARG_INDEX
        );
        assert_eq!(
            clSetKernelArg(k, 0, 4, (&b as *const cl_mem).cast()),
            CL_INVALID_ARG_SIZE
        );
        assert_eq!(
            clSetKernelArg(k, 1, 16, (&v as *const i32).cast()),
            CL_INVALID_ARG_VALUE
        );
        assert_eq!(
            clSetKernelArg(k, 2, 8, (&v as *const i32).cast()),
            CL_INVALID_ARG_SIZE
        );
        let g = [64usize, 1, 1];
        let l = [4usize, 1, 1];
        assert_eq!(
            clEnqueueNDRangeKernel(
                s.q,
                k,
                1,
                null(),
                g.as_ptr(),
                l.as_ptr(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_KERNEL_ARGS
        );
        assert_eq!(
            clSetKernelArg(k, 0, 8, (&b as *const cl_mem).cast()),
            CL_SUCCESS
        );
        assert_eq!(clSetKernelArg(k, 1, 16, null()), CL_SUCCESS);
        assert_eq!(
            clSetKernelArg(k, 2, 4, (&v as *const i32).cast()),
            CL_SUCCESS
        );
        assert_eq!(
            clEnqueueNDRangeKernel(
                s.q,
                k,
                0,
                null(),
                g.as_ptr(),
                l.as_ptr(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_WORK_DIMENSION
        );
        let zero = [0usize, 1, 1];
        assert_eq!(
            clEnqueueNDRangeKernel(
                s.q,
                k,
                1,
                null(),
                g.as_ptr(),
                zero.as_ptr(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_WORK_GROUP_SIZE
        );
        // OpenCL C 1.2 (the default): the local size must divide the global.
        let odd = [60usize, 1, 1];
        assert_eq!(
            clEnqueueNDRangeKernel(
                s.q,
                k,
                1,
                null(),
                odd.as_ptr(),
                l.as_ptr(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        let l8 = [8usize, 1, 1];
        assert_eq!(
            clEnqueueNDRangeKernel(
                s.q,
                k,
                1,
                null(),
                odd.as_ptr(),
                l8.as_ptr(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_WORK_GROUP_SIZE
        );
        assert_eq!(clFinish(s.q), CL_SUCCESS);
        let mut out = [0i32; 64];
        assert_eq!(
            clEnqueueReadBuffer(
                s.q,
                b,
                1,
                0,
                256,
                out.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert!(out[..60].iter().all(|&x| x == 5) && out[60..].iter().all(|&x| x == 0));
        // reqd_work_group_size(8,1,1): another local size, or none, is refused.
        let r = clCreateKernel(p, c"r".as_ptr(), &mut err);
        assert_eq!(
            clSetKernelArg(r, 0, 8, (&b as *const cl_mem).cast()),
            CL_SUCCESS
        );
        assert_eq!(
            clEnqueueNDRangeKernel(
                s.q,
                r,
                1,
                null(),
                g.as_ptr(),
                l.as_ptr(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_WORK_GROUP_SIZE
        );
        assert_eq!(
            clEnqueueNDRangeKernel(
                s.q,
                r,
                1,
                null(),
                g.as_ptr(),
                l8.as_ptr(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(clFinish(s.q), CL_SUCCESS);
    }
}

#[test]
fn a_failed_launch_fails_its_event_and_what_waits_for_it() {
    let s = setup();
    let mut err = 0;
    // SAFETY: as above.
    unsafe {
        let (p, status) = program(
            s.ctx,
            "kernel void k(global int* a) { a[get_global_id(0) + 100] = 1; }",
            "",
        );
        assert_eq!(status, CL_SUCCESS);
        let k = clCreateKernel(p, c"k".as_ptr(), &mut err);
        let b = clCreateBuffer(s.ctx, 0, 16, null_mut(), &mut err);
        assert_eq!(
            clSetKernelArg(k, 0, 8, (&b as *const cl_mem).cast()),
            CL_SUCCESS
        );
        let g = 4usize;
        let mut e: cl_event = null_mut();
        assert_eq!(
            clEnqueueNDRangeKernel(s.q, k, 1, null(), &g, null(), 0, null(), &mut e),
            CL_SUCCESS
        );
        // The launch writes out of bounds: stopped, reported, and its event
        // ends in an error; a read waiting for it fails too.
        let mut out = [0i32; 4];
        assert_eq!(
            clEnqueueReadBuffer(s.q, b, 1, 0, 16, out.as_mut_ptr().cast(), 1, &e, null_mut()),
            CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
        );
        assert_eq!(
            clWaitForEvents(1, &e),
            CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
        );
        let mut st = 0i32;
        clGetEventInfo(
            e,
            CL_EVENT_COMMAND_EXECUTION_STATUS,
            4,
            (&mut st as *mut i32).cast(),
            null_mut(),
        );
        assert!(st < 0, "{st}");
        // A user event is set once.
        let u = clCreateUserEvent(s.ctx, &mut err);
        assert_eq!(clSetUserEventStatus(u, CL_COMPLETE), CL_SUCCESS);
        assert_eq!(clSetUserEventStatus(u, CL_COMPLETE), CL_INVALID_OPERATION);
        assert_eq!(clSetUserEventStatus(e, CL_COMPLETE), CL_INVALID_EVENT);
    }
}

#[test]
fn images_and_their_regions() {
    let s = setup();
    let mut err = 0;
    let f = cl_image_format {
        image_channel_order: CL_RGBA,
        image_channel_data_type: CL_UNSIGNED_INT8,
    };
    let desc = |ty, w, h| cl_image_desc {
        image_type: ty,
        image_width: w,
        image_height: h,
        image_depth: 0,
        image_array_size: 0,
        image_row_pitch: 0,
        image_slice_pitch: 0,
        num_mip_levels: 0,
        num_samples: 0,
        buffer: null_mut(),
    };
    // SAFETY: valid descriptions and buffers of the sizes given.
    unsafe {
        let rgb = cl_image_format {
            image_channel_order: CL_RGB,
            image_channel_data_type: CL_UNORM_INT8,
        };
        clCreateImage(
            s.ctx,
            0,
            &rgb,
            &desc(CL_MEM_OBJECT_IMAGE2D, 4, 4),
            null_mut(),
            &mut err,
        );
        assert_eq!(err, CL_IMAGE_FORMAT_NOT_SUPPORTED);
        clCreateImage(
            s.ctx,
            0,
            &f,
            &desc(CL_MEM_OBJECT_IMAGE2D, 0, 4),
            null_mut(),
            &mut err,
        );
        assert_eq!(err, CL_INVALID_IMAGE_SIZE);
        clCreateImage(s.ctx, 0, &f, null(), null_mut(), &mut err);
        assert_eq!(err, CL_INVALID_IMAGE_DESCRIPTOR);
        // A row pitch without the application's memory.
        let mut d = desc(CL_MEM_OBJECT_IMAGE2D, 4, 4);
        d.image_row_pitch = 64;
        clCreateImage(s.ctx, 0, &f, &d, null_mut(), &mut err);
        assert_eq!(err, CL_INVALID_IMAGE_DESCRIPTOR);

        // Depth (cl_khr_depth_images) in 2D images only.
        let depth = cl_image_format {
            image_channel_order: CL_DEPTH,
            image_channel_data_type: CL_FLOAT,
        };
        let mut d3 = desc(CL_MEM_OBJECT_IMAGE3D, 4, 4);
        d3.image_depth = 2;
        clCreateImage(s.ctx, 0, &depth, &d3, null_mut(), &mut err);
        assert_eq!(err, CL_IMAGE_FORMAT_NOT_SUPPORTED);
        let di = clCreateImage(
            s.ctx,
            0,
            &depth,
            &desc(CL_MEM_OBJECT_IMAGE2D, 4, 4),
            null_mut(),
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS);
        clReleaseMemObject(di);

        // Images from buffers: a buffer of 64 bytes holds 16 RGBA8 texels;
        // no buffer, more texels, a host pointer, a host-pointer flag or a
        // wider access than the buffer's are refused; the image is the
        // buffer's memory object.
        let buf = clCreateBuffer(s.ctx, CL_MEM_READ_ONLY, 64, null_mut(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        let mut d = desc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 16, 0);
        clCreateImage(s.ctx, 0, &f, &d, null_mut(), &mut err);
        assert_eq!(err, CL_INVALID_IMAGE_DESCRIPTOR, "no buffer");
        d.buffer = buf;
        d.image_width = 17;
        clCreateImage(s.ctx, 0, &f, &d, null_mut(), &mut err);
        assert_eq!(err, CL_INVALID_IMAGE_SIZE, "17 texels in 64 bytes");
        d.image_width = 16;
        let mut byte = 0u8;
        clCreateImage(s.ctx, 0, &f, &d, (&mut byte as *mut u8).cast(), &mut err);
        assert_eq!(err, CL_INVALID_HOST_PTR);
        clCreateImage(s.ctx, CL_MEM_ALLOC_HOST_PTR, &f, &d, null_mut(), &mut err);
        assert_eq!(err, CL_INVALID_VALUE);
        clCreateImage(s.ctx, CL_MEM_READ_WRITE, &f, &d, null_mut(), &mut err);
        assert_eq!(err, CL_INVALID_VALUE, "wider than the buffer's access");
        let ib = clCreateImage(s.ctx, 0, &f, &d, null_mut(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        let mut flags: cl_mem_flags = 0;
        let mut assoc: cl_mem = null_mut();
        assert_eq!(
            clGetMemObjectInfo(
                ib,
                CL_MEM_FLAGS,
                8,
                (&mut flags as *mut cl_mem_flags).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(flags, CL_MEM_READ_ONLY, "the buffer's access, inherited");
        assert_eq!(
            clGetMemObjectInfo(
                ib,
                CL_MEM_ASSOCIATED_MEMOBJECT,
                8,
                (&mut assoc as *mut cl_mem).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(assoc, buf);
        clReleaseMemObject(ib);
        clReleaseMemObject(buf);

        // CL_MEM_USE_HOST_PTR with a padded row pitch: a map hands out the
        // application's memory, up to date; a write map's bytes go back
        // into the image on unmap.
        let mut host = vec![0u8; 3 * 64];
        for y in 0..3 {
            for x in 0..16 {
                host[y * 64 + x] = (y * 16 + x) as u8;
            }
        }
        let mut d = desc(CL_MEM_OBJECT_IMAGE2D, 4, 3);
        d.image_row_pitch = 64;
        let img = clCreateImage(
            s.ctx,
            CL_MEM_USE_HOST_PTR,
            &f,
            &d,
            host.as_mut_ptr().cast(),
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS);
        let mut packed = [0u8; 48];
        let (o, r) = ([0usize; 3], [4usize, 3, 1]);
        assert_eq!(
            clEnqueueReadImage(
                s.q,
                img,
                1,
                o.as_ptr(),
                r.as_ptr(),
                0,
                0,
                packed.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(
            packed.to_vec(),
            (0..48).map(|i| i as u8).collect::<Vec<_>>()
        );
        let bad = [3usize, 3, 1];
        assert_eq!(
            clEnqueueReadImage(
                s.q,
                img,
                1,
                o.as_ptr(),
                bad.as_ptr(),
                0,
                0,
                packed.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        let past = [2usize, 0, 0];
        assert_eq!(
            clEnqueueReadImage(
                s.q,
                img,
                1,
                past.as_ptr(),
                r.as_ptr(),
                0,
                0,
                packed.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_VALUE
        );
        let (mut row, mut slice) = (0usize, 0usize);
        let one = [1usize, 1, 0];
        let reg = [2usize, 1, 1];
        let p = clEnqueueMapImage(
            s.q,
            img,
            1,
            CL_MAP_WRITE,
            one.as_ptr(),
            reg.as_ptr(),
            &mut row,
            &mut slice,
            0,
            null(),
            null_mut(),
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS);
        assert_eq!(row, 64);
        assert_eq!(p.cast::<u8>(), host.as_mut_ptr().add(64 + 4));
        std::ptr::write_bytes(p.cast::<u8>(), 0xee, 8);
        assert_eq!(
            clEnqueueUnmapMemObject(s.q, img, p, 0, null(), null_mut()),
            CL_SUCCESS
        );
        assert_eq!(
            clEnqueueUnmapMemObject(s.q, img, p, 0, null(), null_mut()),
            CL_INVALID_VALUE
        );
        assert_eq!(
            clEnqueueReadImage(
                s.q,
                img,
                1,
                o.as_ptr(),
                r.as_ptr(),
                0,
                0,
                packed.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert!(packed[20..28].iter().all(|&b| b == 0xee) && packed[19] == 19 && packed[28] == 28);

        // A kernel's image parameter takes an image of its type only.
        let (p, status) = program(
            s.ctx,
            "kernel void k(read_only image3d_t i, global int* o) { o[0] = 1; }",
            "",
        );
        assert_eq!(status, CL_SUCCESS);
        let k = clCreateKernel(p, c"k".as_ptr(), &mut err);
        assert_eq!(
            clSetKernelArg(k, 0, 8, (&img as *const cl_mem).cast()),
            CL_INVALID_ARG_VALUE
        );
        let b = clCreateBuffer(s.ctx, 0, 16, null_mut(), &mut err);
        assert_eq!(
            clSetKernelArg(k, 0, 8, (&b as *const cl_mem).cast()),
            CL_INVALID_MEM_OBJECT
        );
        // And a buffer command takes no image.
        assert_eq!(
            clEnqueueReadBuffer(
                s.q,
                img,
                1,
                0,
                4,
                packed.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_MEM_OBJECT
        );
    }
}

#[test]
fn shared_virtual_memory() {
    let s = setup();
    let mut err = 0;
    let fine = CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER;
    // SAFETY: valid handles; the SVM pointers are used within their sizes.
    unsafe {
        assert!(clSVMAlloc(s.ctx, CL_MEM_SVM_ATOMICS, 64, 0).is_null());
        assert!(clSVMAlloc(s.ctx, fine, 64, 3).is_null());
        assert!(clSVMAlloc(s.ctx, fine, 0, 0).is_null());
        let a = clSVMAlloc(s.ctx, fine, 256, 0).cast::<i32>();
        assert!(!a.is_null() && (a as usize).is_multiple_of(128));
        assert_eq!(
            clEnqueueSVMMemcpy(s.q, 1, a.cast(), a.add(4).cast(), 64, 0, null(), null_mut()),
            CL_MEM_COPY_OVERLAP
        );
        let seven = 7i32;
        assert_eq!(
            clEnqueueSVMMemFill(
                s.q,
                a.cast(),
                (&seven as *const i32).cast(),
                4,
                256,
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(clFinish(s.q), CL_SUCCESS);
        assert!((0..64).all(|i| *a.add(i) == 7));
        let (p, status) = program(
            s.ctx,
            "kernel void k(global int* a, int n) { a[get_global_id(0) + n] += (int)get_global_id(0); }",
            "",
        );
        assert_eq!(status, CL_SUCCESS);
        let k = clCreateKernel(p, c"k".as_ptr(), &mut err);
        assert_eq!(
            clSetKernelArgSVMPointer(k, 1, a.cast()),
            CL_INVALID_ARG_VALUE
        );
        assert_eq!(clSetKernelArgSVMPointer(k, 0, a.cast()), CL_SUCCESS);
        let n = 0i32;
        assert_eq!(
            clSetKernelArg(k, 1, 4, (&n as *const i32).cast()),
            CL_SUCCESS
        );
        let g = 64usize;
        assert_eq!(
            clEnqueueNDRangeKernel(s.q, k, 1, null(), &g, null(), 0, null(), null_mut()),
            CL_SUCCESS
        );
        assert_eq!(clFinish(s.q), CL_SUCCESS);
        assert!((0..64).all(|i| *a.add(i) == 7 + i as i32));
        // Past the allocation's end: the invalid access it is, reported,
        // and the launch's event fails.
        let past = 64i32;
        assert_eq!(
            clSetKernelArg(k, 1, 4, (&past as *const i32).cast()),
            CL_SUCCESS
        );
        let mut e: cl_event = null_mut();
        assert_eq!(
            clEnqueueNDRangeKernel(s.q, k, 1, null(), &g, null(), 0, null(), &mut e),
            CL_SUCCESS
        );
        assert_eq!(
            clWaitForEvents(1, &e),
            CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
        );
        clSVMFree(s.ctx, a.cast());
    }
}

/// Every entry point given a handle that is no object of its type (a stack
/// address, a handle of another type, null) answers with the error for
/// that argument, never touching what the handle points to.
#[test]
fn foreign_handles_are_refused_everywhere() {
    let s = setup();
    let mut junk = [0u64; 16];
    let bad = junk.as_mut_ptr().cast::<c_void>();
    let mut err = 0;
    let mut size = 0usize;
    let mut buf = [0u8; 64];
    let out = buf.as_mut_ptr().cast::<c_void>();
    // SAFETY: every pointer argument is valid for what it is passed as;
    // the handles are deliberately wrong.
    unsafe {
        for h in [bad, null_mut(), s.ctx.cast()] {
            assert_eq!(clRetainCommandQueue(h), CL_INVALID_COMMAND_QUEUE);
            assert_eq!(clFinish(h), CL_INVALID_COMMAND_QUEUE);
            assert_eq!(
                clGetMemObjectInfo(h, CL_MEM_SIZE, 8, out, &mut size),
                CL_INVALID_MEM_OBJECT
            );
            assert_eq!(
                clGetImageInfo(h, CL_IMAGE_WIDTH, 8, out, &mut size),
                CL_INVALID_MEM_OBJECT
            );
            assert_eq!(clReleaseKernel(h), CL_INVALID_KERNEL);
            assert_eq!(clSetKernelArg(h, 0, 4, out), CL_INVALID_KERNEL);
            assert_eq!(
                clGetProgramInfo(h, CL_PROGRAM_NUM_DEVICES, 4, out, &mut size),
                CL_INVALID_PROGRAM
            );
            assert_eq!(
                clBuildProgram(h, 0, null(), null(), None, null_mut()),
                CL_INVALID_PROGRAM
            );
            assert_eq!(
                clGetEventInfo(h, CL_EVENT_COMMAND_TYPE, 4, out, &mut size),
                CL_INVALID_EVENT
            );
            assert_eq!(clWaitForEvents(1, &h), CL_INVALID_EVENT);
            assert_eq!(clSetUserEventStatus(h, CL_COMPLETE), CL_INVALID_EVENT);
            assert_eq!(clReleaseSampler(h), CL_INVALID_SAMPLER);
            assert_eq!(
                clEnqueueReadBuffer(s.q, h, 1, 0, 4, out, 0, null(), null_mut()),
                CL_INVALID_MEM_OBJECT
            );
            assert_eq!(
                clEnqueueNDRangeKernel(s.q, h, 1, null(), &8, null(), 0, null(), null_mut()),
                CL_INVALID_KERNEL
            );
            assert!(clCreateKernel(h, c"k".as_ptr(), &mut err).is_null());
            assert_eq!(err, CL_INVALID_PROGRAM);
        }
        // A queue is no context.
        for h in [bad, null_mut(), s.q.cast()] {
            assert!(clCreateBuffer(h, 0, 16, null_mut(), &mut err).is_null());
            assert_eq!(err, CL_INVALID_CONTEXT);
            assert!(clCreateCommandQueueWithProperties(h, device_id(), null(), &mut err).is_null());
            assert_eq!(err, CL_INVALID_CONTEXT);
            assert!(clCreateUserEvent(h, &mut err).is_null());
            assert_eq!(err, CL_INVALID_CONTEXT);
            assert!(clSVMAlloc(h, CL_MEM_READ_WRITE, 64, 0).is_null());
        }
        assert_eq!(
            clGetContextInfo(bad, CL_CONTEXT_NUM_DEVICES, 4, out, &mut size),
            CL_INVALID_CONTEXT
        );
        // A wait list naming a foreign event.
        assert_eq!(
            clEnqueueMarkerWithWaitList(s.q, 1, &bad, null_mut()),
            CL_INVALID_EVENT_WAIT_LIST
        );
        assert_eq!(junk, [0u64; 16]);
    }
}
