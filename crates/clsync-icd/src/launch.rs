//! `clEnqueueNDRangeKernel` and `clEnqueueTask`: the ND-range checked as
//! the specification says, the arguments captured, and the launch on the
//! queue's worker. A launch runs on the platform's runtime, checked when
//! `CLSYNC_CHECK` is set: what a checked launch finds is printed on stderr
//! with the kernel's source lines, as `clsync run --check` prints it, and
//! the launch goes on as Oclgrind's does; a launch that fails (an invalid
//! access, a divergent barrier of an unchecked launch) prints its report
//! and ends its event with `CL_OUT_OF_RESOURCES`.

use std::ffi::c_void;
use std::sync::Arc;

use clsync::checker::engine::{forget_memory, name_memory};
use clsync::checker::Space;
use clsync::geometry::MAX_WORK_GROUP_SIZE;
use clsync::NdRange;
use clsync_opencl::exec::report;
use clsync_opencl::{Arg, RunError};
use opencl_sys::*;

use crate::api::{self, ClResult};
use crate::kernel::{get, ArgValue};
use crate::memory::View;
use crate::platform::{self, LOCAL_MEM_SIZE};
use crate::queue::{self, Queue, Work};

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
            (ArgValue::Image(m), _) => match &m.image {
                Some(i) => Arg::Image(&i.image),
                None => Arg::Null,
            },
            (ArgValue::Sampler(s), _) => Arg::Sampler(*s),
            (ArgValue::Svm(p), _) => Arg::Svm(*p),
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
                say(&d.to_string());
            }
            for r in &found.checker {
                say(&report::render(r));
            }
            Ok(())
        }
        Err(RunError::Launch { error, diagnostics }) => {
            for d in &diagnostics {
                say(&d.to_string());
            }
            say(&report::launch_error(&error));
            Err(CL_OUT_OF_RESOURCES)
        }
        Err(e) => {
            say(&format!("error: {e}"));
            Err(CL_OUT_OF_RESOURCES)
        }
    }
}

/// Prints a report on stderr, and appends its first line to the file
/// `CLSYNC_REPORTS_FILE` names, if any (`clsync run --error-exitcode N --
/// ./app` counts them there).
fn say(report: &str) {
    eprintln!("{report}");
    if let Some(path) = std::env::var_os("CLSYNC_REPORTS_FILE") {
        use std::io::Write;
        let line = report.lines().next().unwrap_or("");
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| writeln!(f, "{line}"));
        if let Err(e) = written {
            eprintln!(
                "clsync: cannot record the report in {}: {e}",
                path.to_string_lossy()
            );
        }
    }
}
