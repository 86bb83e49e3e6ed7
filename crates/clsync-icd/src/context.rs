//! Contexts: `clCreateContext`, `clCreateContextFromType` and their
//! queries and callbacks.

use std::ffi::{c_char, c_void};
use std::sync::Mutex;

use opencl_sys::*;

use crate::api::{self, ClResult};
use crate::handle::{self, Ref};
use crate::info::Value;
use crate::platform::{self, answer};

/// `pfn_notify(errinfo, private_info, cb, user_data)`.
type Notify = unsafe extern "C" fn(*const c_char, *const c_void, usize, *mut c_void);

/// A destructor callback: `pfn_notify(object, user_data)`.
pub type Destructor = unsafe extern "C" fn(*mut c_void, *mut c_void);

/// An object's destructor callbacks (contexts, memory objects).
#[derive(Default)]
pub struct Destructors(Mutex<Vec<(Destructor, usize)>>);

impl Destructors {
    /// Registers `f` with `user_data`; a missing callback is
    /// `CL_INVALID_VALUE`.
    pub fn add(&self, f: Option<Destructor>, user_data: *mut c_void) -> ClResult<()> {
        let f = f.ok_or(CL_INVALID_VALUE)?;
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((f, user_data as usize));
        Ok(())
    }

    /// Runs them, most recently registered first (the specification's
    /// order), with the handle the object had.
    pub fn run(&mut self, handle: usize) {
        let list = std::mem::take(self.0.get_mut().unwrap_or_else(|e| e.into_inner()));
        for (f, user) in list.into_iter().rev() {
            // SAFETY: the application's callback with its own user data;
            // the handle identifies the object, which is going away.
            unsafe { f(handle as *mut c_void, user as *mut c_void) };
        }
    }
}

/// A context: the device, the properties it was made with, its callbacks.
pub struct Context {
    properties: Vec<cl_context_properties>,
    notify: Option<(Notify, usize)>,
    destructors: Destructors,
    /// Its shared virtual memory allocations.
    pub svm: crate::svm::Allocations,
}

impl Context {
    /// Reports an error to the context's callback, as the specification's
    /// `pfn_notify` receives them (and on stderr, where there is none).
    pub fn notify(&self, message: &str) {
        let text = format!("{message}\0");
        match self.notify {
            // SAFETY: the application's callback with its own user data and
            // a NUL-terminated message that lives through the call.
            Some((f, user)) => unsafe {
                f(
                    text.as_ptr().cast(),
                    std::ptr::null(),
                    0,
                    user as *mut c_void,
                )
            },
            None => eprintln!("clsync: {message}"),
        }
    }
}

impl handle::Object for Context {
    fn destroyed(&mut self, h: usize) {
        self.destructors.run(h);
        self.svm.free_all();
    }
}

/// The context behind a handle (`CL_INVALID_CONTEXT` otherwise).
pub fn get(h: cl_context) -> ClResult<Ref<Context>> {
    handle::get::<Context>(h).ok_or(CL_INVALID_CONTEXT)
}

/// Checks a context's properties; returns them as pairs.
///
/// # Safety
///
/// `properties` is null or a zero-terminated list.
unsafe fn properties(properties: *const cl_context_properties) -> ClResult<Vec<(isize, isize)>> {
    // SAFETY: the caller's contract.
    let pairs = unsafe { api::properties(properties) }.map_err(|_| CL_INVALID_PROPERTY)?;
    for (i, &(name, value)) in pairs.iter().enumerate() {
        if pairs[..i].iter().any(|p| p.0 == name) {
            return Err(CL_INVALID_PROPERTY);
        }
        match name {
            CL_CONTEXT_PLATFORM if value as cl_platform_id != platform::platform_id() => {
                return Err(CL_INVALID_PLATFORM)
            }
            CL_CONTEXT_PLATFORM | CL_CONTEXT_INTEROP_USER_SYNC => {}
            _ => return Err(CL_INVALID_PROPERTY),
        }
    }
    Ok(pairs)
}

fn make(
    pairs: Vec<(isize, isize)>,
    given: bool,
    notify: Option<Notify>,
    user_data: *mut c_void,
) -> ClResult<*mut c_void> {
    if notify.is_none() && !user_data.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    let (_, h) = handle::create(Context {
        properties: api::property_list(&pairs, given),
        notify: notify.map(|f| (f, user_data as usize)),
        destructors: Destructors::default(),
        svm: Default::default(),
    });
    Ok(h)
}

/// `clCreateContext`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCreateContext(
    props: *const cl_context_properties,
    num_devices: cl_uint,
    devices: *const cl_device_id,
    pfn_notify: Option<Notify>,
    user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_context {
    // SAFETY: the caller's contract, for errcode_ret and the lists.
    unsafe {
        api::object(errcode_ret, || {
            let pairs = properties(props)?;
            let list = api::slice(devices, num_devices as usize, CL_INVALID_VALUE)?;
            if list.is_empty() {
                return Err(CL_INVALID_VALUE);
            }
            for &d in list {
                platform::check_device(d)?;
            }
            make(pairs, !props.is_null(), pfn_notify, user_data)
        })
    }
}

/// `clCreateContextFromType`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCreateContextFromType(
    props: *const cl_context_properties,
    device_type: cl_device_type,
    pfn_notify: Option<Notify>,
    user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_context {
    // SAFETY: the caller's contract, for errcode_ret and the list.
    unsafe {
        api::object(errcode_ret, || {
            let pairs = properties(props)?;
            let mut n = 0;
            match platform::clGetDeviceIDs(
                std::ptr::null_mut(),
                device_type,
                0,
                std::ptr::null_mut(),
                &mut n,
            ) {
                CL_SUCCESS => {}
                e => return Err(e),
            }
            make(pairs, !props.is_null(), pfn_notify, user_data)
        })
    }
}

/// `clRetainContext`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clRetainContext(context: cl_context) -> cl_int {
    api::status(|| {
        handle::retain::<Context>(context)
            .then_some(())
            .ok_or(CL_INVALID_CONTEXT)
    })
}

/// `clReleaseContext`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clReleaseContext(context: cl_context) -> cl_int {
    api::status(|| {
        handle::release::<Context>(context)
            .then_some(())
            .ok_or(CL_INVALID_CONTEXT)
    })
}

/// `clGetContextInfo`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetContextInfo(
    context: cl_context,
    param_name: cl_context_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    api::status(|| {
        let c = get(context)?;
        let v = match param_name {
            CL_CONTEXT_REFERENCE_COUNT => Ok(Value::of(handle::ref_count(&c))),
            CL_CONTEXT_NUM_DEVICES => Ok(Value::of(1u32)),
            CL_CONTEXT_DEVICES => Ok(Value::of(platform::device_id())),
            CL_CONTEXT_PROPERTIES => Ok(Value::slice(&c.properties)),
            _ => Err(CL_INVALID_VALUE),
        };
        // SAFETY: the caller's buffers.
        unsafe { answer(v, size, value, size_ret) }
    })
}

/// `clSetContextDestructorCallback`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clSetContextDestructorCallback(
    context: cl_context,
    pfn_notify: Option<Destructor>,
    user_data: *mut c_void,
) -> cl_int {
    api::status(|| get(context)?.destructors.add(pfn_notify, user_data))
}
