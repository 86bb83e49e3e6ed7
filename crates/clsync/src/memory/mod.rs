//! The address spaces a kernel sees: global buffers shared by every
//! work-group and by host threads, local memory owned by one work-group,
//! `read_write` images, and private memory (ordinary Rust locals; in a
//! group-level kernel, a [`Private`] array of one value per work-item).
//!
//! # How memory maps onto Rust's memory model
//!
//! OpenCL lets a racy kernel have undefined behaviour; Rust does not let safe
//! code have any. So every element of user-visible memory is stored in a
//! Rust atomic of its size, and a plain OpenCL access (`buf[i] = x`) is a
//! `Relaxed` atomic access. On x86-64 and AArch64 a relaxed load or store is
//! the same instruction as a plain one, so this costs nothing but some
//! auto-vectorization. A racy kernel then reads *some* value written to that
//! location, never torn memory, and the checker reports the race. OpenCL
//! atomics map to Rust atomics with the same C11 order; fences map to
//! `std::sync::atomic::fence` (see [`crate::sync::fence_effect`]).
//!
//! The one exception is opt-in and `unsafe`: a group-level kernel's
//! [`BufferView::get_unchecked`] and [`BufferView::set_unchecked`] are
//! non-atomic accesses, as OpenCL C's are, so that loops of them vectorize.
//! Their contract is OpenCL's own rule, no data race (and an index in
//! bounds); a checked launch performs them as the safe accesses and reports
//! any race.
//!
//! Local memory is only reachable from the worker thread that runs its
//! work-group: its types are `!Send` and `!Sync`, and a kernel only ever gets
//! a borrow of it that ends with the work-item. Its atomics therefore need
//! no locked instruction: a work-item switch happens only at a barrier, never
//! inside an atomic operation, so a plain load-modify-store is indivisible.

mod buffer;
mod image;
mod legacy;
mod local;
mod private;
mod scalar;
mod view;

pub use buffer::{prefetch, Buffer};
pub use image::{Image2d, ImageSizeError, Pixel, MAX_IMAGE2D_SIZE};
pub use local::{LocalArg, LocalSlice, MAX_LOCAL_MEM_SIZE};
pub use private::Private;
pub use scalar::{AtomicInteger, AtomicValue, Element, RawAtomic, RmwOp, Scalar};
pub(crate) use view::Claim;
pub use view::{BufferView, LocalView, QuietAtomic, ViewMode};

pub(crate) use local::{check_local_args, LocalArena, LocalDecl};

/// A process-unique id for a memory object, used in reports.
pub(crate) fn next_object_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    // Relaxed: only uniqueness matters; the id orders nothing.
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Element `index` of `slots`, whose last element is a scratch one that no
/// index reaches. Out of bounds, a checked work-item gets a report and the
/// scratch element (so the kernel runs on); anything else panics naming the
/// object, the index and the length. `write` says what the access is, for
/// the report.
#[inline]
pub(crate) fn element<'a, S>(
    slots: &'a [S],
    space: crate::checker::Space,
    name: &str,
    index: usize,
    write: bool,
    at: &'static std::panic::Location<'static>,
) -> &'a S {
    if index < slots.len() - 1 {
        // SAFETY: `index < slots.len() - 1`, so it is in bounds; one
        // comparison instead of two on this hot path.
        unsafe { slots.get_unchecked(index) }
    } else {
        beyond(slots, space, name, index, write, at)
    }
}

#[cold]
#[inline(never)]
fn beyond<'a, S>(
    slots: &'a [S],
    space: crate::checker::Space,
    name: &str,
    index: usize,
    write: bool,
    at: &'static std::panic::Location<'static>,
) -> &'a S {
    let len = slots.len() - 1;
    if crate::checker::out_of_bounds(space, name, &index, len, write, at) {
        return &slots[len];
    }
    let what = match space {
        crate::checker::Space::Local => "local memory",
        _ => "global buffer",
    };
    crate::scheduler::hooks::panic_at(
        at,
        format!(
            "out-of-bounds access to {what} `{name}`: index {index}, length {len}, at {}",
            crate::sync::Site::from_location(at)
        ),
    )
}
