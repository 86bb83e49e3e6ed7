//! What every entry point does the same way: error codes as results, panics
//! kept from crossing into C, the caller's pointers read with their checks.

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use opencl_sys::{cl_int, CL_INVALID_VALUE, CL_OUT_OF_HOST_MEMORY, CL_SUCCESS};

/// An API result: the value, or the error code the specification names.
pub type ClResult<T> = Result<T, cl_int>;

/// Runs the body of a function that returns its status. A panic (a bug of
/// clsync's) is reported on stderr and returned as `CL_OUT_OF_HOST_MEMORY`,
/// never unwound into the caller.
pub fn status(f: impl FnOnce() -> ClResult<()>) -> cl_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => CL_SUCCESS,
        Ok(Err(e)) => e,
        Err(_) => {
            eprintln!("clsync: internal error in an OpenCL call (see the panic above)");
            CL_OUT_OF_HOST_MEMORY
        }
    }
}

/// Runs the body of a function that returns an object and its status
/// through `errcode_ret`.
///
/// # Safety
///
/// `errcode_ret` is null or writable.
pub unsafe fn object(
    errcode_ret: *mut cl_int,
    f: impl FnOnce() -> ClResult<*mut c_void>,
) -> *mut c_void {
    let mut h = std::ptr::null_mut();
    let code = status(|| {
        h = f()?;
        Ok(())
    });
    // SAFETY: the caller's pointer, null or writable.
    unsafe { write(errcode_ret, code) };
    h
}

/// Writes `v` where `p` points, unless `p` is null.
///
/// # Safety
///
/// `p` is null or writable (alignment not required).
pub unsafe fn write<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: the caller's pointer, writable by contract.
        unsafe { p.write_unaligned(v) };
    }
}

/// The caller's array of `n` elements: empty for `n == 0`,
/// `CL_INVALID_VALUE` (or `err`) if it is null with `n > 0`.
///
/// # Safety
///
/// A non-null `p` points to `n` readable, aligned elements that stay
/// unchanged during the call.
pub unsafe fn slice<'a, T>(p: *const T, n: usize, err: cl_int) -> ClResult<&'a [T]> {
    match (p.is_null(), n) {
        (_, 0) => Ok(&[]),
        (true, _) => Err(err),
        // SAFETY: non-null with `n` elements by the caller's contract.
        (false, n) => Ok(unsafe { std::slice::from_raw_parts(p, n) }),
    }
}

/// A list and its count must agree: both given or both absent
/// (`CL_INVALID_VALUE`, or `err`).
pub fn pair<T>(p: *const T, n: u32, err: cl_int) -> ClResult<()> {
    if p.is_null() != (n == 0) {
        return Err(err);
    }
    Ok(())
}

/// A NUL-terminated string from C, `CL_INVALID_VALUE` if null or not UTF-8.
///
/// # Safety
///
/// A non-null `p` points to a NUL-terminated string.
pub unsafe fn c_str<'a>(p: *const c_char) -> ClResult<&'a str> {
    if p.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    // SAFETY: NUL-terminated by the caller's contract.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| CL_INVALID_VALUE)
}

/// A zero-terminated property list (`cl_context_properties`,
/// `cl_queue_properties`, ...) as (name, value) pairs; at most 64 pairs.
///
/// # Safety
///
/// A non-null `p` points to a zero-terminated list of name-value pairs.
pub unsafe fn properties<T: Copy + PartialEq + Default>(p: *const T) -> ClResult<Vec<(T, T)>> {
    let mut out = Vec::new();
    if p.is_null() {
        return Ok(out);
    }
    for i in 0..64 {
        // SAFETY: the list is zero-terminated: every element up to the
        // terminator is readable, and we stop at it.
        let name = unsafe { *p.add(2 * i) };
        if name == T::default() {
            return Ok(out);
        }
        // SAFETY: a name other than the terminator is followed by its value.
        let value = unsafe { *p.add(2 * i + 1) };
        out.push((name, value));
    }
    Err(CL_INVALID_VALUE)
}

/// The properties back as the caller gave them (zero-terminated), for the
/// `*_PROPERTIES` queries; empty if none were given.
pub fn property_list<T: Copy + Default>(pairs: &[(T, T)], given: bool) -> Vec<T> {
    if !given {
        return Vec::new();
    }
    let mut v: Vec<T> = pairs.iter().flat_map(|&(n, x)| [n, x]).collect();
    v.push(T::default());
    v
}
