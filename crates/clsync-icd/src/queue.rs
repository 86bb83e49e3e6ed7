//! Command queues: each has a worker thread that runs its commands in the
//! order they were enqueued, each after the events it waits for.
//!
//! An out-of-order queue is allowed to run its commands in order, and does:
//! the specification permits, never requires, reordering. Commands are
//! handed to the worker as they are enqueued, so `clFlush` has nothing to
//! do and `clFinish` waits for the last command's event.

use std::ffi::c_void;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Mutex, MutexGuard};

use opencl_sys::*;

use crate::api::{self, ClResult};
use crate::context::{self, Context};
use crate::event::{self, Event};
use crate::handle::{self, Ref};
use crate::info::Value;
use crate::platform::{self, answer};

/// What a command does once its wait list is complete: `Err` is the status
/// its event ends with.
pub type Work = Box<dyn FnOnce() -> ClResult<()> + Send>;

struct Job {
    event: Ref<Event>,
    wait: Vec<Ref<Event>>,
    work: Work,
}

/// A command queue.
pub struct Queue {
    /// Its context.
    pub context: Ref<Context>,
    properties: cl_command_queue_properties,
    /// The property list it was made with (`CL_QUEUE_PROPERTIES_ARRAY`).
    list: Vec<cl_queue_properties>,
    jobs: Mutex<Sender<Job>>,
    /// The event of the last command enqueued: `clFinish` waits for it, and
    /// a barrier or marker with no wait list waits for it.
    last: Mutex<Option<Ref<Event>>>,
}

impl handle::Object for Queue {}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Queue {
    /// Whether its commands record profiling times.
    pub fn profiling(&self) -> bool {
        self.properties & CL_QUEUE_PROFILING_ENABLE != 0
    }

    /// Enqueues `work` after the events of `wait` (and, the queue being in
    /// order, after every command before it). Returns the command's event.
    pub fn enqueue(
        this: &Ref<Queue>,
        command: cl_command_type,
        wait: Vec<Ref<Event>>,
        work: Work,
    ) -> Ref<Event> {
        let event = Event::command(this, command);
        let mut last = lock(&this.last);
        // Submitted as it is handed to the worker (there is no batch to
        // flush), before the worker can start it.
        Event::set(&event, CL_SUBMITTED);
        // The worker takes jobs in the order they are sent: sending under
        // `last`'s lock keeps that order the order of `last`.
        let job = Job {
            event: event.clone(),
            wait,
            work,
        };
        if lock(&this.jobs).send(job).is_err() {
            // The worker is gone (it panicked): the command fails.
            Event::set(&event, CL_OUT_OF_RESOURCES);
        }
        *last = Some(event.clone());
        event
    }

    /// Waits for every command enqueued so far.
    pub fn finish(&self) {
        let last = lock(&self.last).clone();
        if let Some(e) = last {
            e.wait();
        }
    }

    /// The last command's event, if any.
    pub fn last(&self) -> Option<Ref<Event>> {
        lock(&self.last).clone()
    }
}

/// The worker: runs each job after its wait list.
fn work(jobs: std::sync::mpsc::Receiver<Job>) {
    for job in jobs {
        // A failed event fails the command: no need to wait for the rest.
        let failed = job.wait.iter().any(|e| e.wait() < 0);
        if failed {
            Event::set(&job.event, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
            continue;
        }
        Event::set(&job.event, CL_RUNNING);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job.work));
        let status = match r {
            Ok(Ok(())) => CL_COMPLETE,
            Ok(Err(e)) => e,
            Err(_) => {
                eprintln!("clsync: internal error running a command (see the panic above)");
                CL_OUT_OF_RESOURCES
            }
        };
        Event::set(&job.event, status);
    }
}

/// The queue behind a handle (`CL_INVALID_COMMAND_QUEUE` otherwise).
pub fn get(h: cl_command_queue) -> ClResult<Ref<Queue>> {
    handle::get::<Queue>(h).ok_or(CL_INVALID_COMMAND_QUEUE)
}

fn create(
    context: cl_context,
    device: cl_device_id,
    properties: cl_command_queue_properties,
    list: Vec<cl_queue_properties>,
) -> ClResult<*mut c_void> {
    let c = context::get(context)?;
    platform::check_device(device)?;
    let known = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE;
    if properties & !(known | CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT) != 0 {
        return Err(CL_INVALID_VALUE);
    }
    if properties & !known != 0 {
        // On-device queues: clsync has no device-side enqueue.
        return Err(CL_INVALID_QUEUE_PROPERTIES);
    }
    let (tx, rx) = channel();
    std::thread::Builder::new()
        .name("clsync-queue".into())
        .spawn(move || work(rx))
        .map_err(|_| CL_OUT_OF_HOST_MEMORY)?;
    let (_, h) = handle::create(Queue {
        context: c,
        properties,
        list,
        jobs: Mutex::new(tx),
        last: Mutex::new(None),
    });
    Ok(h)
}

/// `clCreateCommandQueue` (OpenCL 1.x).
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCreateCommandQueue(
    context: cl_context,
    device: cl_device_id,
    properties: cl_command_queue_properties,
    errcode_ret: *mut cl_int,
) -> cl_command_queue {
    // SAFETY: the caller's contract.
    unsafe {
        api::object(errcode_ret, || {
            create(context, device, properties, Vec::new())
        })
    }
}

/// `clCreateCommandQueueWithProperties`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCreateCommandQueueWithProperties(
    context: cl_context,
    device: cl_device_id,
    props: *const cl_queue_properties,
    errcode_ret: *mut cl_int,
) -> cl_command_queue {
    // SAFETY: the caller's contract.
    unsafe {
        api::object(errcode_ret, || {
            let pairs = api::properties(props)?;
            let mut flags = 0;
            for &(name, value) in &pairs {
                match name as cl_uint {
                    CL_QUEUE_PROPERTIES => flags = value,
                    // On-device queues only.
                    CL_QUEUE_SIZE => return Err(CL_INVALID_QUEUE_PROPERTIES),
                    _ => return Err(CL_INVALID_VALUE),
                }
            }
            create(
                context,
                device,
                flags,
                api::property_list(&pairs, !props.is_null()),
            )
        })
    }
}

/// `clRetainCommandQueue`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clRetainCommandQueue(queue: cl_command_queue) -> cl_int {
    api::status(|| {
        handle::retain::<Queue>(queue)
            .then_some(())
            .ok_or(CL_INVALID_COMMAND_QUEUE)
    })
}

/// `clReleaseCommandQueue`: an implicit flush (commands still run).
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clReleaseCommandQueue(queue: cl_command_queue) -> cl_int {
    api::status(|| {
        handle::release::<Queue>(queue)
            .then_some(())
            .ok_or(CL_INVALID_COMMAND_QUEUE)
    })
}

/// `clGetCommandQueueInfo`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetCommandQueueInfo(
    queue: cl_command_queue,
    param_name: cl_command_queue_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    api::status(|| {
        let q = get(queue)?;
        let v = match param_name {
            CL_QUEUE_CONTEXT => Ok(Value::of(handle::handle(&q.context))),
            CL_QUEUE_DEVICE => Ok(Value::of(platform::device_id())),
            CL_QUEUE_REFERENCE_COUNT => Ok(Value::of(handle::ref_count(&q))),
            CL_QUEUE_PROPERTIES => Ok(Value::of(q.properties)),
            CL_QUEUE_PROPERTIES_ARRAY => Ok(Value::slice(&q.list)),
            CL_QUEUE_SIZE => Err(CL_INVALID_COMMAND_QUEUE),
            CL_QUEUE_DEVICE_DEFAULT => Ok(Value::of(std::ptr::null_mut::<c_void>())),
            _ => Err(CL_INVALID_VALUE),
        };
        // SAFETY: the caller's buffers.
        unsafe { answer(v, size, value, size_ret) }
    })
}

/// `clSetCommandQueueProperty` (OpenCL 1.0, deprecated): not supported, as
/// in every OpenCL 1.1+ implementation.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clSetCommandQueueProperty(
    queue: cl_command_queue,
    _properties: cl_command_queue_properties,
    _enable: cl_bool,
    _old: *mut cl_command_queue_properties,
) -> cl_int {
    api::status(|| {
        get(queue)?;
        Err(CL_INVALID_OPERATION)
    })
}

/// `clFlush`: commands are already with the worker.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clFlush(queue: cl_command_queue) -> cl_int {
    api::status(|| get(queue).map(drop))
}

/// `clFinish`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clFinish(queue: cl_command_queue) -> cl_int {
    api::status(|| {
        get(queue)?.finish();
        Ok(())
    })
}

/// Hands a command's event to the application if it asked for one.
///
/// # Safety
///
/// `out` is null or writable.
pub unsafe fn give_event(out: *mut cl_event, e: &Ref<Event>) {
    if !out.is_null() {
        // SAFETY: the caller's pointer.
        unsafe { api::write(out, handle::publish(e)) };
    }
}

/// The queue and its wait list, checked.
///
/// # Safety
///
/// `list` is null or has `n` readable handles.
pub unsafe fn with_wait_list(
    queue: cl_command_queue,
    n: cl_uint,
    list: *const cl_event,
) -> ClResult<(Ref<Queue>, Vec<Ref<Event>>)> {
    let q = get(queue)?;
    // SAFETY: the caller's contract.
    let w = unsafe { event::wait_list(&q.context, n, list)? };
    Ok((q, w))
}

/// A marker or barrier: waits for its wait list, or for every command
/// before it when the list is empty (the queue runs in order, so both are
/// the same command).
///
/// # Safety
///
/// The C API's contract.
unsafe fn marker(
    queue: cl_command_queue,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
    command: cl_command_type,
) -> cl_int {
    api::status(|| {
        // SAFETY: the caller's contract.
        let (q, mut wait) = unsafe { with_wait_list(queue, n, list)? };
        if wait.is_empty() {
            wait.extend(q.last());
        }
        let e = Queue::enqueue(&q, command, wait, Box::new(|| Ok(())));
        // SAFETY: the caller's pointer.
        unsafe { give_event(event, &e) };
        Ok(())
    })
}

/// `clEnqueueMarkerWithWaitList`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clEnqueueMarkerWithWaitList(
    queue: cl_command_queue,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    // SAFETY: the caller's contract.
    unsafe { marker(queue, n, list, event, CL_COMMAND_MARKER) }
}

/// `clEnqueueBarrierWithWaitList`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clEnqueueBarrierWithWaitList(
    queue: cl_command_queue,
    n: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    // SAFETY: the caller's contract.
    unsafe { marker(queue, n, list, event, CL_COMMAND_BARRIER) }
}

/// `clEnqueueMarker` (OpenCL 1.1).
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clEnqueueMarker(queue: cl_command_queue, event: *mut cl_event) -> cl_int {
    if event.is_null() {
        return CL_INVALID_VALUE;
    }
    // SAFETY: the caller's contract.
    unsafe { marker(queue, 0, std::ptr::null(), event, CL_COMMAND_MARKER) }
}

/// `clEnqueueBarrier` (OpenCL 1.1).
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clEnqueueBarrier(queue: cl_command_queue) -> cl_int {
    // SAFETY: the caller's contract.
    unsafe {
        marker(
            queue,
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
            CL_COMMAND_BARRIER,
        )
    }
}

/// `clEnqueueWaitForEvents` (OpenCL 1.1).
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clEnqueueWaitForEvents(
    queue: cl_command_queue,
    num_events: cl_uint,
    event_list: *const cl_event,
) -> cl_int {
    if num_events == 0 || event_list.is_null() {
        return CL_INVALID_VALUE;
    }
    // SAFETY: the caller's contract.
    unsafe {
        marker(
            queue,
            num_events,
            event_list,
            std::ptr::null_mut(),
            CL_COMMAND_BARRIER,
        )
    }
}
