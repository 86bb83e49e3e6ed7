//! Views for group-level loops ([`Group`](crate::Group)): `Copy` handles on
//! a buffer or a local slice that a loop over the work-items keeps in
//! registers.
//!
//! Through a reference, a loop must reload a slice's pointer, length and
//! mode after every store to memory, since the store might have changed
//! them; that reload, a test and a branch per access is what kept the
//! loops of group-level kernels from vectorizing. A view is a copy of those
//! fields, made once per group: captured by a `move` closure, it lives in
//! registers, the test of the mode is made once per loop, and only the
//! bounds check is left. The `unsafe` `_unchecked` accesses are OpenCL C's
//! own: no bounds check, and for buffers a non-atomic access, so that a
//! loop copying between global and local memory vectorizes.
//!
//! Checked launches take the same paths as [`Buffer`](crate::Buffer) and
//! [`LocalSlice`](crate::LocalSlice), out of line: every access reports to
//! the checker.
//!
//! [`LocalView`] is in `local.rs`, [`BufferView`] in `buffer.rs`, and
//! [`QuietAtomic`], a local atomic a kernel proved quiet, in `quiet.rs`.

mod buffer;
mod local;
mod quiet;

pub use buffer::BufferView;
pub(crate) use buffer::Claim;
pub use local::LocalView;
pub use quiet::QuietAtomic;

use crate::sync::sealed::Sealed;

/// A view of local or global memory whose mode (checked or not)
/// [`Group::in_mode`](crate::Group::in_mode) restates to the compiler:
/// [`LocalView`] and [`BufferView`].
pub trait ViewMode: Copy + Sealed {
    /// The view, checked only if `checked` is true too.
    #[doc(hidden)]
    fn checked_if(self, checked: bool) -> Self;
}
