//! The `clGet*Info` convention: a value's bytes, copied out where the caller
//! gave room, and their size.

use std::ffi::c_void;

use opencl_sys::{cl_image_format, cl_int, cl_name_version, CL_INVALID_VALUE, CL_SUCCESS};

/// A plain value whose bytes are its representation in the C API.
///
/// # Safety
///
/// Implementors have no padding and no pointers the caller could not use:
/// every byte of a value is initialized.
pub unsafe trait Pod: Copy {}
// SAFETY: integers and pointers have no padding.
unsafe impl Pod for u32 {}
// SAFETY: as above.
unsafe impl Pod for i32 {}
// SAFETY: as above.
unsafe impl Pod for u64 {}
// SAFETY: as above.
unsafe impl Pod for i64 {}
// SAFETY: as above.
unsafe impl Pod for usize {}
// SAFETY: as above.
unsafe impl Pod for isize {}
// SAFETY: as above.
unsafe impl Pod for *mut c_void {}
// SAFETY: a u32 and 64 bytes: no padding.
unsafe impl Pod for cl_name_version {}
// SAFETY: two u32.
unsafe impl Pod for cl_image_format {}

/// A query's answer, as bytes.
pub struct Value(pub Vec<u8>);

impl Value {
    /// One plain value.
    pub fn of<T: Pod>(v: T) -> Value {
        Value::slice(&[v])
    }

    /// An array of plain values.
    pub fn slice<T: Pod>(v: &[T]) -> Value {
        let n = std::mem::size_of_val(v);
        // SAFETY: `T: Pod` has every byte initialized; the slice's bytes are
        // read within its length.
        let bytes = unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), n) };
        Value(bytes.to_vec())
    }

    /// A string, NUL-terminated.
    pub fn str(s: &str) -> Value {
        let mut v = s.as_bytes().to_vec();
        v.push(0);
        Value(v)
    }

    /// A `cl_bool`.
    pub fn bool(b: bool) -> Value {
        Value::of(u32::from(b))
    }

    /// Copies the answer out: `CL_INVALID_VALUE` if `param_value` has less
    /// room than the answer needs.
    ///
    /// # Safety
    ///
    /// `param_value` is null or has `size` writable bytes; `size_ret` is null
    /// or writable.
    pub unsafe fn write(
        &self,
        size: usize,
        param_value: *mut c_void,
        size_ret: *mut usize,
    ) -> cl_int {
        if !param_value.is_null() {
            if size < self.0.len() {
                return CL_INVALID_VALUE;
            }
            // SAFETY: the caller gave `size` writable bytes, no fewer than
            // the answer's.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    self.0.as_ptr(),
                    param_value.cast::<u8>(),
                    self.0.len(),
                )
            };
        }
        if !size_ret.is_null() {
            // SAFETY: the caller's pointer, writable by contract.
            unsafe { size_ret.write_unaligned(self.0.len()) };
        }
        CL_SUCCESS
    }
}

/// A `cl_name_version`.
pub fn name_version(major: u32, minor: u32, name: &str) -> cl_name_version {
    let mut n = cl_name_version {
        version: version(major, minor),
        name: [0; 64],
    };
    for (d, s) in n.name.iter_mut().zip(name.bytes().take(63)) {
        *d = s;
    }
    n
}

/// `CL_MAKE_VERSION(major, minor, 0)`.
pub fn version(major: u32, minor: u32) -> u32 {
    (major << 22) | (minor << 12)
}
