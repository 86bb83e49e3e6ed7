//! A work-item's tables, reused from one work-item to the next on a worker
//! thread: on coroutines each work-item makes its slot table, its private
//! block and, checked, its shadow table and private shadow, and allocating
//! and freeing them was about 6 % of a checked scan (`perf record` of
//! `clsync run --check`), more than filling them.

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};
use std::thread::LocalKey;

use super::ctx::Slot;

/// At most this many vectors of a type are kept per thread (a group's
/// work-items each hold theirs until they return), each of at most
/// [`KEEP_LEN`] elements.
const KEEP: usize = 4096;
const KEEP_LEN: usize = 1 << 16;

thread_local! {
    static WORDS: RefCell<Vec<Vec<u64>>> = const { RefCell::new(Vec::new()) };
    static SLOTS: RefCell<Vec<Vec<Slot>>> = const { RefCell::new(Vec::new()) };
    static POINTERS: RefCell<Vec<Vec<*mut u8>>> = const { RefCell::new(Vec::new()) };
}

/// An element type with a free list of its vectors on each thread.
pub(crate) trait Reusable: Copy + 'static {
    fn free() -> &'static LocalKey<RefCell<Vec<Vec<Self>>>>;
}

impl Reusable for u64 {
    fn free() -> &'static LocalKey<RefCell<Vec<Vec<Self>>>> {
        &WORDS
    }
}

impl Reusable for Slot {
    fn free() -> &'static LocalKey<RefCell<Vec<Vec<Self>>>> {
        &SLOTS
    }
}

impl Reusable for *mut u8 {
    fn free() -> &'static LocalKey<RefCell<Vec<Vec<Self>>>> {
        &POINTERS
    }
}

/// An empty vector from this thread's free list, given back when dropped.
/// It is not `Send`: it goes back to the list of the thread that took it.
pub(crate) struct Reused<T: Reusable>(Vec<T>, std::marker::PhantomData<*mut ()>);

impl<T: Reusable> Reused<T> {
    /// An empty vector.
    pub(crate) fn take() -> Self {
        let mut v = T::free().with(|f| f.borrow_mut().pop()).unwrap_or_default();
        v.clear();
        Reused(v, std::marker::PhantomData)
    }

    /// `n` copies of `value`.
    pub(crate) fn filled(n: usize, value: T) -> Self {
        let mut r = Self::take();
        r.0.resize(n, value);
        r
    }
}

impl<T: Reusable> Deref for Reused<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T: Reusable> DerefMut for Reused<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
}

impl<T: Reusable> Drop for Reused<T> {
    fn drop(&mut self) {
        let v = std::mem::take(&mut self.0);
        if v.capacity() == 0 || v.capacity() > KEEP_LEN {
            return;
        }
        // `try_with`: a thread that is exiting has no list to keep it in.
        let _ = T::free().try_with(|f| {
            let mut f = f.borrow_mut();
            if f.len() < KEEP {
                f.push(v);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_comes_back_empty_with_its_storage() {
        let mut a = Reused::<u64>::filled(5, 7);
        assert_eq!(a.as_slice(), [7; 5]);
        a.push(1);
        let p = a.as_ptr();
        drop(a);
        let b = Reused::<u64>::take();
        assert!(b.is_empty());
        assert_eq!(b.as_ptr(), p, "the same storage, reused");
        drop(b);
        let c = Reused::<u64>::filled(3, 0);
        assert_eq!(c.as_ptr(), p);
        assert_eq!(c.as_slice(), [0; 3], "filled afresh, not from the last one");
        drop(c);
    }
}
