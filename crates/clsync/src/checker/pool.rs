//! Boxes of [`Full`] and lists of reads kept per thread for reuse: a
//! work-group's local memory takes a box per location it both writes and
//! reads, and gives them all back when the group ends; a location read by
//! several work-items takes a list, and gives it back at the next write. So
//! a launch allocates them once per thread, not once per group, location
//! and barrier interval.

use std::cell::RefCell;

use super::shadow::{Full, Rec};

/// At most this many boxes are kept per thread (about 8 MiB).
const KEEP: usize = 1 << 17;

thread_local! {
    // The boxes are the point: each is an allocation a shadow takes as
    // it is, by moving the pointer.
    #[allow(clippy::vec_box)]
    static FREE: RefCell<Vec<Box<Full>>> = const { RefCell::new(Vec::new()) };
}

thread_local! {
    static READS: RefCell<Vec<Vec<Rec>>> = const { RefCell::new(Vec::new()) };
}

/// An empty list for several reads (room for a few: a location read by
/// many is read by a sub-group or a group), reused if one is free.
pub(crate) fn reads() -> Vec<Rec> {
    READS
        .with(|f| f.borrow_mut().pop())
        .unwrap_or_else(|| Vec::with_capacity(8))
}

/// Keeps `v` (emptied) for reuse.
pub(crate) fn give_back_reads(mut v: Vec<Rec>) {
    v.clear();
    READS.with(|f| {
        let mut f = f.borrow_mut();
        if f.len() < KEEP {
            f.push(v);
        }
    });
}

/// `full` in a box, reused if one is free.
pub(crate) fn boxed(full: Full) -> Box<Full> {
    match FREE.with(|f| f.borrow_mut().pop()) {
        Some(mut b) => {
            *b = full;
            b
        }
        None => Box::new(full),
    }
}

/// Keeps `b` (emptied) for reuse.
pub(crate) fn give_back(mut b: Box<Full>) {
    b.reads.clear();
    *b = Full::default();
    FREE.with(|f| {
        let mut f = f.borrow_mut();
        if f.len() < KEEP {
            f.push(b);
        }
    });
}
