//! Private memory as a group-level kernel keeps it: one value of a private
//! variable per work-item, in one allocation that starts on a cache line.
//!
//! A group's loops read and write such an array in vectors, one work-item
//! per lane. Starting on a cache line, a 64-byte vector never straddles two
//! lines: a vector split across lines costs two accesses, and a load of one
//! that the previous barrier's loop has just stored, split the same way,
//! cannot be forwarded from the store buffer and waits for the stores to
//! reach the cache. Where a `Vec<u32>` of 64 work-items started wherever the
//! allocator put it, the bench's barrier loop at local size 64 ran at half
//! the speed it runs at on a line-aligned array (0.17–0.18 against
//! 0.08–0.12 ns per work-item per barrier, one thread, AVX-512).

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Where each array starts: a cache line.
const LINE: usize = 64;

/// One `T` per work-item of a group, starting on a cache line; a slice
/// through `Deref`. Made by [`Group::private`](crate::Group::private)
/// (and, uninitialized, for `#[kernel]`'s variables).
///
/// ```
/// use clsync::{Launch, NdRange, Runtime};
///
/// let launch = Launch::new("count", NdRange::new([128]).local([64]));
/// Runtime::new().launch_groups(&launch, |g| {
///     let mut acc = g.private::<u32>();
///     assert_eq!(acc.len(), 64);
///     assert_eq!(acc.as_ptr() as usize % 64, 0);
///     g.for_each_mut(&mut acc, |it, a| *a += it.local_linear_id as u32);
///     assert_eq!(acc[63], 63);
/// }).unwrap();
/// ```
pub struct Private<T> {
    ptr: NonNull<T>,
    /// Values written.
    len: usize,
    /// Values allocated for: `len`, unless `from_fn` panicked part way.
    cap: usize,
    /// It owns its `T`s (for drop checking).
    owns: PhantomData<T>,
}

// SAFETY: a `Private<T>` owns its values as a `Vec<T>` does, and hands them
// out only through `&self` (shared) and `&mut self` (exclusive).
unsafe impl<T: Send> Send for Private<T> {}
// SAFETY: as above; `&Private<T>` gives only `&[T]`.
unsafe impl<T: Sync> Sync for Private<T> {}

impl<T> Private<T> {
    /// The allocation of `len` values, on a cache line (or `T`'s own
    /// alignment, if larger).
    fn layout(len: usize) -> Layout {
        Layout::array::<T>(len)
            .and_then(|l| l.align_to(LINE))
            .expect("a private array of a group's size fits in memory")
    }

    /// `len` values, the `i`th `f(i)`.
    pub(crate) fn from_fn(len: usize, mut f: impl FnMut(usize) -> T) -> Self {
        let layout = Self::layout(len);
        let ptr = if layout.size() == 0 {
            // No allocation: a well-aligned dangling pointer, as `Vec` uses.
            NonNull::new(std::ptr::without_provenance_mut(layout.align()))
                .expect("an alignment is not 0")
        } else {
            // SAFETY: the layout's size is not 0.
            let raw = unsafe { alloc(layout) };
            match NonNull::new(raw.cast::<T>()) {
                Some(p) => p,
                None => handle_alloc_error(layout),
            }
        };
        // Written one by one; a panic in `f` drops those written and frees
        // the allocation (the guard's `len` counts them).
        let mut made = Private {
            ptr,
            len: 0,
            cap: len,
            owns: PhantomData,
        };
        for i in 0..len {
            let value = f(i);
            // SAFETY: `i < len`, inside the allocation of `len` values, and
            // not yet written (values `0..i` are).
            unsafe { made.ptr.as_ptr().add(i).write(value) };
            made.len = i + 1;
        }
        made
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Private<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T> Deref for Private<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` points to `len` initialized values (or is dangling
        // and well aligned with `len` values of a zero-sized `T`, or
        // `len == 0`), owned by `self`, which `&self` borrows.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> DerefMut for Private<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`; `&mut self` makes the borrow exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Drop for Private<T> {
    fn drop(&mut self) {
        // SAFETY: the first `len` values are initialized and owned, and not
        // used again.
        unsafe { std::ptr::drop_in_place(&mut **self) };
        let layout = Self::layout(self.cap);
        if layout.size() != 0 {
            // SAFETY: allocated in `from_fn` with this layout (`cap` is the
            // length it was made for).
            unsafe { dealloc(self.ptr.as_ptr().cast(), layout) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Private, LINE};
    use std::cell::Cell;
    use std::panic::{catch_unwind, AssertUnwindSafe};

    /// Counts its drops in a shared counter.
    struct Counted<'a>(&'a Cell<usize>);
    impl Drop for Counted<'_> {
        fn drop(&mut self) {
            self.0.set(self.0.get() + 1);
        }
    }

    #[test]
    fn arrays_start_on_a_cache_line_and_hold_their_values() {
        for len in [1, 3, 16, 64, 1000] {
            let bytes = Private::from_fn(len, |i| i as u8);
            let words = Private::from_fn(len, |i| i as u32);
            let quads = Private::from_fn(len, |i| [i as f32; 4]);
            assert_eq!(bytes.as_ptr() as usize % LINE, 0, "u8 × {len}");
            assert_eq!(words.as_ptr() as usize % LINE, 0, "u32 × {len}");
            assert_eq!(quads.as_ptr() as usize % LINE, 0, "[f32; 4] × {len}");
            assert_eq!(words.len(), len);
            assert!(words.iter().enumerate().all(|(i, &w)| w == i as u32));
            assert!(quads.iter().enumerate().all(|(i, q)| *q == [i as f32; 4]));
        }
        let mut empty = Private::<u64>::from_fn(0, |_| unreachable!());
        assert!(empty.is_empty());
        assert!(empty.iter_mut().next().is_none());
        let units = Private::from_fn(5, |_| ());
        assert_eq!(units.len(), 5);
    }

    #[test]
    fn every_value_is_dropped_once_even_when_making_them_panics() {
        let drops = Cell::new(0);
        drop(Private::from_fn(10, |_| Counted(&drops)));
        assert_eq!(drops.get(), 10);
        // The seventh value panics: the six made are dropped, no more.
        let drops = Cell::new(0);
        let made = catch_unwind(AssertUnwindSafe(|| {
            Private::from_fn(10, |i| {
                assert!(i < 6, "the seventh");
                Counted(&drops)
            })
        }));
        assert!(made.is_err());
        assert_eq!(drops.get(), 6);
    }

    #[test]
    fn writes_through_the_slice_stay() {
        let mut p = Private::from_fn(100, |_| 0u32);
        for (i, v) in p.iter_mut().enumerate() {
            *v = 3 * i as u32;
        }
        assert_eq!(p[99], 297);
        assert_eq!(p.iter().sum::<u32>(), 3 * 4950);
    }
}
