//! Events: a command's status, its profiling times, the callbacks waiting
//! on it; user events; `clWaitForEvents`.
//!
//! # States
//!
//! A command's event goes `CL_QUEUED` (enqueued) → `CL_SUBMITTED` (handed
//! to the queue's worker, at once: there is no batching to flush) →
//! `CL_RUNNING` (the worker starts it) → `CL_COMPLETE`, or to a negative
//! error code instead of `CL_COMPLETE` (the command failed, or an event it
//! waited for did). A user event starts `CL_SUBMITTED` and is set once, by
//! `clSetUserEventStatus`. Each transition records its time and runs the
//! callbacks registered for that status or an earlier one, outside the lock.

use std::ffi::c_void;
use std::sync::{Condvar, Mutex, MutexGuard, Weak};

use opencl_sys::*;

use crate::api::{self, ClResult};
use crate::context::Context;
use crate::handle::{self, Obj, Ref};
use crate::info::Value;
use crate::platform::{self, answer};
use crate::queue::Queue;

/// `pfn_notify(event, status, user_data)`.
type Callback = unsafe extern "C" fn(cl_event, cl_int, *mut c_void);

/// A command's or user's event.
pub struct Event {
    context: Ref<Context>,
    /// The queue of a command's event (weak: the queue holds its last event).
    queue: Option<(Weak<Obj<Queue>>, usize)>,
    command: cl_command_type,
    state: Mutex<State>,
    changed: Condvar,
}

impl handle::Object for Event {}

struct State {
    status: cl_int,
    /// Queued, submitted, started, ended: ns on the device's timer.
    times: [u64; 4],
    callbacks: Vec<(cl_int, Callback, usize)>,
}

impl Event {
    /// A command's event, queued now.
    pub fn command(queue: &Ref<Queue>, command: cl_command_type) -> Ref<Event> {
        let t = platform::now_ns();
        handle::internal(Event {
            context: queue.context.clone(),
            queue: Some((
                std::sync::Arc::downgrade(queue),
                handle::handle(queue) as usize,
            )),
            command,
            state: Mutex::new(State {
                status: CL_QUEUED,
                times: [t, 0, 0, 0],
                callbacks: Vec::new(),
            }),
            changed: Condvar::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The context.
    pub fn context(&self) -> &Ref<Context> {
        &self.context
    }

    /// The current status.
    pub fn status(&self) -> cl_int {
        self.lock().status
    }

    /// Moves to `status` (a later one, or an error), recording the time and
    /// running the callbacks it satisfies.
    pub fn set(this: &Ref<Event>, status: cl_int) {
        let due = {
            let mut s = this.lock();
            // Only forward: complete or failed is final, and a later state
            // is never undone by an earlier one set after it.
            if s.status <= CL_COMPLETE || status >= s.status {
                return;
            }
            let t = platform::now_ns();
            let mark = |s: &mut State, i: usize| {
                if s.times[i] == 0 {
                    s.times[i] = t;
                }
            };
            if status <= CL_SUBMITTED {
                mark(&mut s, 1);
            }
            if status <= CL_RUNNING {
                mark(&mut s, 2);
            }
            if status <= CL_COMPLETE {
                mark(&mut s, 3);
            }
            s.status = status;
            let (due, keep): (Vec<_>, Vec<_>) = s.callbacks.drain(..).partition(|c| status <= c.0);
            s.callbacks = keep;
            due
        };
        this.changed.notify_all();
        let h = handle::handle(this);
        for (_, f, user) in due {
            // SAFETY: the application's callback with its own user data; the
            // event is alive (`this`) through the call.
            unsafe { f(h, status, user as *mut c_void) };
        }
    }

    /// Blocks until the event is complete or failed; its final status.
    pub fn wait(&self) -> cl_int {
        let mut s = self.lock();
        while s.status > CL_COMPLETE {
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.status
    }
}

/// The event behind a handle (`CL_INVALID_EVENT` otherwise).
pub fn get(h: cl_event) -> ClResult<Ref<Event>> {
    handle::get::<Event>(h).ok_or(CL_INVALID_EVENT)
}

/// A wait list: every event valid and of `context`.
///
/// # Safety
///
/// `list` is null or has `n` readable handles.
pub unsafe fn wait_list(
    context: &Ref<Context>,
    n: cl_uint,
    list: *const cl_event,
) -> ClResult<Vec<Ref<Event>>> {
    api::pair(list, n, CL_INVALID_EVENT_WAIT_LIST)?;
    // SAFETY: the caller's contract.
    let hs = unsafe { api::slice(list, n as usize, CL_INVALID_EVENT_WAIT_LIST)? };
    hs.iter()
        .map(|&h| {
            let e = get(h).map_err(|_| CL_INVALID_EVENT_WAIT_LIST)?;
            if !std::sync::Arc::ptr_eq(&e.context, context) {
                return Err(CL_INVALID_CONTEXT);
            }
            Ok(e)
        })
        .collect()
}

/// `clWaitForEvents`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clWaitForEvents(
    num_events: cl_uint,
    event_list: *const cl_event,
) -> cl_int {
    api::status(|| {
        // SAFETY: the caller's contract.
        let hs = unsafe { api::slice(event_list, num_events as usize, CL_INVALID_VALUE)? };
        if hs.is_empty() {
            return Err(CL_INVALID_VALUE);
        }
        let events: Vec<_> = hs.iter().map(|&h| get(h)).collect::<ClResult<_>>()?;
        if events
            .iter()
            .any(|e| !std::sync::Arc::ptr_eq(&e.context, &events[0].context))
        {
            return Err(CL_INVALID_CONTEXT);
        }
        let mut failed = false;
        for e in &events {
            failed |= e.wait() < 0;
        }
        if failed {
            return Err(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        }
        Ok(())
    })
}

/// `clGetEventInfo`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetEventInfo(
    event: cl_event,
    param_name: cl_event_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    api::status(|| {
        let e = get(event)?;
        let v = match param_name {
            CL_EVENT_COMMAND_QUEUE => {
                Ok(Value::of(e.queue.as_ref().map_or(0, |q| q.1) as *mut c_void))
            }
            CL_EVENT_CONTEXT => Ok(Value::of(handle::handle(&e.context))),
            CL_EVENT_COMMAND_TYPE => Ok(Value::of(e.command)),
            CL_EVENT_COMMAND_EXECUTION_STATUS => Ok(Value::of(e.status())),
            CL_EVENT_REFERENCE_COUNT => Ok(Value::of(handle::ref_count(&e))),
            _ => Err(CL_INVALID_VALUE),
        };
        // SAFETY: the caller's buffers.
        unsafe { answer(v, size, value, size_ret) }
    })
}

/// `clGetEventProfilingInfo`: the times of a command's event whose queue
/// profiles.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetEventProfilingInfo(
    event: cl_event,
    param_name: cl_profiling_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    api::status(|| {
        let e = get(event)?;
        let profiled = e
            .queue
            .as_ref()
            .and_then(|q| q.0.upgrade())
            .is_some_and(|q| q.profiling());
        let s = e.lock();
        if !profiled || s.status != CL_COMPLETE {
            return Err(CL_PROFILING_INFO_NOT_AVAILABLE);
        }
        let t = match param_name {
            CL_PROFILING_COMMAND_QUEUED => s.times[0],
            CL_PROFILING_COMMAND_SUBMIT => s.times[1],
            CL_PROFILING_COMMAND_START => s.times[2],
            CL_PROFILING_COMMAND_END | CL_PROFILING_COMMAND_COMPLETE => s.times[3],
            _ => return Err(CL_INVALID_VALUE),
        };
        drop(s);
        // SAFETY: the caller's buffers.
        unsafe { answer(Ok(Value::of(t)), size, value, size_ret) }
    })
}

/// `clRetainEvent`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clRetainEvent(event: cl_event) -> cl_int {
    api::status(|| {
        handle::retain::<Event>(event)
            .then_some(())
            .ok_or(CL_INVALID_EVENT)
    })
}

/// `clReleaseEvent`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clReleaseEvent(event: cl_event) -> cl_int {
    api::status(|| {
        handle::release::<Event>(event)
            .then_some(())
            .ok_or(CL_INVALID_EVENT)
    })
}

/// `clCreateUserEvent`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCreateUserEvent(
    context: cl_context,
    errcode_ret: *mut cl_int,
) -> cl_event {
    // SAFETY: the caller's contract.
    unsafe {
        api::object(errcode_ret, || {
            let c = crate::context::get(context)?;
            let t = platform::now_ns();
            let (_, h) = handle::create(Event {
                context: c,
                queue: None,
                command: CL_COMMAND_USER,
                state: Mutex::new(State {
                    status: CL_SUBMITTED,
                    times: [t, t, 0, 0],
                    callbacks: Vec::new(),
                }),
                changed: Condvar::new(),
            });
            Ok(h)
        })
    }
}

/// `clSetUserEventStatus`: once, to `CL_COMPLETE` or an error.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clSetUserEventStatus(event: cl_event, execution_status: cl_int) -> cl_int {
    api::status(|| {
        let e = get(event)?;
        if e.command != CL_COMMAND_USER {
            return Err(CL_INVALID_EVENT);
        }
        if execution_status > CL_COMPLETE {
            return Err(CL_INVALID_VALUE);
        }
        if e.status() <= CL_COMPLETE {
            return Err(CL_INVALID_OPERATION);
        }
        Event::set(&e, execution_status);
        Ok(())
    })
}

/// `clSetEventCallback`: runs at once if the event is already there.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clSetEventCallback(
    event: cl_event,
    command_exec_callback_type: cl_int,
    pfn_notify: Option<Callback>,
    user_data: *mut c_void,
) -> cl_int {
    api::status(|| {
        let e = get(event)?;
        let f = pfn_notify.ok_or(CL_INVALID_VALUE)?;
        if ![CL_SUBMITTED, CL_RUNNING, CL_COMPLETE].contains(&command_exec_callback_type) {
            return Err(CL_INVALID_VALUE);
        }
        let now = {
            let mut s = e.lock();
            if s.status <= command_exec_callback_type {
                Some(s.status)
            } else {
                s.callbacks
                    .push((command_exec_callback_type, f, user_data as usize));
                None
            }
        };
        if let Some(status) = now {
            // SAFETY: the application's callback with its own user data; the
            // event is alive through the call.
            unsafe { f(event, status, user_data) };
        }
        Ok(())
    })
}
