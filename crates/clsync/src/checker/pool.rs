//! Boxes of [`Full`] and lists of reads kept per thread for reuse: a
//! work-group's local memory takes a box per location it both writes and
//! reads, and gives them all back when the group ends; a location read by
//! several work-items takes a list, and gives it back at the next write. So
//! a launch allocates them once per thread, not once per group, location
//! and barrier interval. The atomic history of a location (a local
//! histogram's bins) is kept the same way, with its list's capacity.

use std::cell::RefCell;
use std::thread::LocalKey;

use super::shadow::{AtomicShadow, Full, Rec};

/// At most this many boxes, and lists, are kept per thread.
const KEEP_BOXES: usize = 1 << 16;
const KEEP_LISTS: usize = 1 << 14;

/// A list that grew past this many reads is freed, not kept: a kept list
/// holds its capacity.
const LIST_CAPACITY: usize = 64;

thread_local! {
    // The boxes are the point: each is an allocation a shadow takes as
    // it is, by moving the pointer.
    #[allow(clippy::vec_box)]
    static BOXES: RefCell<Vec<Box<Full>>> = const { RefCell::new(Vec::new()) };
    static LISTS: RefCell<Vec<Vec<Rec>>> = const { RefCell::new(Vec::new()) };
    #[allow(clippy::vec_box)]
    static ATOMICS: RefCell<Vec<Box<AtomicShadow>>> = const { RefCell::new(Vec::new()) };
}

/// Keeps `value` in `free` unless it holds `limit` already.
fn keep<T: 'static>(free: &'static LocalKey<RefCell<Vec<T>>>, value: T, limit: usize) {
    free.with(|f| {
        let mut f = f.borrow_mut();
        if f.len() < limit {
            f.push(value);
        }
    });
}

/// An empty list for several reads (room for a few: a location read by
/// many is read by a sub-group or a group), reused if one is free.
pub(crate) fn reads() -> Vec<Rec> {
    LISTS
        .with(|f| f.borrow_mut().pop())
        .unwrap_or_else(|| Vec::with_capacity(8))
}

/// Keeps `v` (emptied) for reuse.
pub(crate) fn give_back_reads(mut v: Vec<Rec>) {
    if v.capacity() <= LIST_CAPACITY {
        v.clear();
        keep(&LISTS, v, KEEP_LISTS);
    }
}

/// `full` in a box, reused if one is free.
pub(crate) fn boxed(full: Full) -> Box<Full> {
    match BOXES.with(|f| f.borrow_mut().pop()) {
        Some(mut b) => {
            *b = full;
            b
        }
        None => Box::new(full),
    }
}

/// Keeps `b` (emptied) for reuse, and its atomic history's box.
pub(crate) fn give_back(mut b: Box<Full>) {
    b.reads.clear();
    if let Some(a) = b.atomic.take() {
        give_back_atomic(a);
    }
    *b = Full::default();
    keep(&BOXES, b, KEEP_BOXES);
}

/// An empty atomic history, reused if one is free (with the capacity its
/// list of atomic writes had).
pub(crate) fn atomic() -> Box<AtomicShadow> {
    ATOMICS.with(|f| f.borrow_mut().pop()).unwrap_or_default()
}

/// Keeps `a` (emptied) for reuse, unless its list grew past
/// 4096 writes (more than a group of work-items leaves at one location
/// in an interval).
fn give_back_atomic(mut a: Box<AtomicShadow>) {
    if a.writes.capacity() > 4096 {
        return;
    }
    // Empty as a new one is, with the lists' storage kept.
    let (mut writes, mut sync) = (std::mem::take(&mut a.writes), std::mem::take(&mut a.sync));
    writes.clear();
    sync.clear();
    *a = AtomicShadow {
        writes,
        sync,
        ..AtomicShadow::default()
    };
    keep(&ATOMICS, a, KEEP_LISTS);
}
