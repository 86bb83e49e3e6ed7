//! OpenCL C 2.0 atomics: `atomic_int` … `atomic_double`, the pointer-sized
//! types and `atomic_flag`, with every function in its plain, `_explicit`
//! and `_explicit` + scope forms (`001_b96d5603ef61627c.txt`).
//!
//! An atomic object only exists inside global memory ([`Buffer`](crate::Buffer))
//! or local memory ([`LocalSlice`](crate::LocalSlice)); there is no
//! constructor, so none can live in private memory, where the specification
//! leaves atomics undefined (`001_b96d5603ef61627c.txt`, Restrictions):
//!
//! ```compile_fail
//! let private = clsync::AtomicInt::new(0);
//! ```
//!
//! No operator works on an atomic type; every operation is a named function
//! (`001_b96d5603ef61627c.txt`: "Using atomic types with operators should
//! result in a compilation error"):
//!
//! ```compile_fail
//! fn f(a: &clsync::AtomicInt) -> i32 { a + 1 }
//! ```
//!
//! ```compile_fail
//! fn f(a: &mut clsync::AtomicInt) { *a += 1; }
//! ```
//!
//! ```compile_fail
//! fn f(a: &clsync::AtomicInt, b: &clsync::AtomicInt) -> bool { a == b }
//! ```
//!
//! ```compile_fail
//! fn f(a: &clsync::AtomicUint) -> u32 { !*a }
//! ```
//!
//! ```compile_fail
//! fn f(a: &clsync::AtomicInt, b: &clsync::AtomicInt) -> bool { a < b }
//! ```
//!
//! ```compile_fail
//! fn f(a: &clsync::AtomicInt) { let copy = *a; }
//! ```
//!
//! Floating-point atomics have no `atomic_fetch_*` functions in OpenCL C 2.0:
//!
//! ```compile_fail
//! fn f(a: &clsync::AtomicFloat) { a.fetch_add(1.0); }
//! ```
//!
//! All of them are lock-free: each is one `std` atomic of its size, and the
//! build fails on a target without native atomics of that size.

mod atomic;
mod flag;
mod perform;
mod space;

pub(crate) use perform::{perform, raised, unchecked, Effect};

pub use atomic::{
    Atomic, AtomicDouble, AtomicFloat, AtomicInt, AtomicIntptr, AtomicLong, AtomicPtrdiff,
    AtomicSize, AtomicUint, AtomicUintptr, AtomicUlong,
};
pub use flag::AtomicFlag;
pub use space::{Global, Local, Space};

// 001_b96d5603ef61627c.txt: "OpenCL C requires that the built-in atomic
// functions on atomic types are lock-free." Refuse to build where they would
// not be.
#[cfg(not(all(
    target_has_atomic = "32",
    target_has_atomic = "64",
    target_has_atomic = "ptr"
)))]
compile_error!("clsync needs lock-free 32-bit, 64-bit and pointer-sized atomics");
