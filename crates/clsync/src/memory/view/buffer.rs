//! [`BufferView`]: a group-level kernel's handle on global memory.

use std::panic::Location;
use std::sync::atomic::Ordering;

use super::ViewMode;
use crate::atomics::{Atomic, AtomicFlag, Global};
use crate::memory::buffer::Buffer;
use crate::memory::scalar::{Element, RawAtomic, Scalar};
use crate::sync::sealed::Sealed;
use crate::AtomicValue;

/// A group-level kernel's handle on a [`Buffer`], from
/// [`Group::global`](crate::Group::global): `Copy`, held in registers
/// through a loop (see [`engine::loops`](crate::engine::loops)).
///
/// [`get`](BufferView::get) and [`set`](BufferView::set) are those of the
/// buffer: relaxed atomics, bounds-checked, safe whatever the kernel does.
/// [`get_unchecked`](BufferView::get_unchecked) and
/// [`set_unchecked`](BufferView::set_unchecked) are OpenCL C's own: no
/// bounds check and a non-atomic access, which vectorizes; they are
/// `unsafe`, since an index out of bounds or a data race would be undefined
/// behaviour (in a checked launch both are reports instead).
///
/// ```
/// use clsync::{Buffer, Launch, NdRange, Runtime};
///
/// let data = Buffer::from_slice(&[1u32; 512]);
/// let launch = Launch::new("double", NdRange::new([512]).local([128]));
/// Runtime::new().launch_groups(&launch, |g| {
///     let d = g.global(&data);
///     g.for_each(move |it| d.set(it.global_linear_id, 2 * d.get(it.global_linear_id)));
/// }).unwrap();
/// assert_eq!(data.to_vec(), vec![2; 512]);
/// ```
pub struct BufferView<'a, T: Element> {
    base: *const T::Slot,
    len: usize,
    checked: bool,
    /// What the kernel proved of its accesses, which a checked launch
    /// then checks for their bounds only.
    claim: Claim,
    buffer: &'a Buffer<T>,
}

/// What a kernel proved of its accesses to a [`BufferView`], checked: which
/// of them race with nothing, so that a checked launch checks them for
/// their bounds only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Claim {
    /// Nothing: every access is the checker's.
    None,
    /// No work-item of the launch writes the buffer: its reads
    /// ([`Group::global_unwritten`](crate::Group::global_unwritten)).
    Unwritten,
    /// Each work-item accesses only its own element: its reads and writes
    /// ([`Group::global_owned`](crate::Group::global_owned)).
    Owned,
}

impl<T: Element> Clone for BufferView<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Element> Copy for BufferView<'_, T> {}

impl<'a, T: Element> BufferView<'a, T> {
    pub(crate) fn new(buffer: &'a Buffer<T>, checked: bool, claim: Claim) -> Self {
        let (base, len) = buffer.raw_parts();
        BufferView {
            base,
            len,
            checked,
            claim,
            buffer,
        }
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// [`Buffer::prefetch`]: a hint that elements `range` will be read
    /// soon.
    #[inline]
    pub fn prefetch(&self, range: std::ops::Range<usize>) {
        // The view's own pointer and length, held in registers in a loop.
        crate::memory::buffer::prefetch_elements(self.base, self.len, range)
    }
    /// The buffer.
    pub fn buffer(&self) -> &'a Buffer<T> {
        self.buffer
    }
}

impl<T: Scalar + Element<Slot = <T as Scalar>::Raw>> BufferView<'_, T> {
    /// Reads element `index`, as [`Buffer::get`].
    #[inline]
    #[track_caller]
    pub fn get(&self, index: usize) -> T {
        if self.read_is_checked(index) {
            return Self::slow_get(self.buffer, index, self.claim != Claim::None);
        }
        if index >= self.len {
            Self::out_of_bounds(self.buffer, index, false)
        }
        // SAFETY: `index < len`, the buffer's length, and the buffer is
        // borrowed for `'a`, so the element is live.
        let slot = unsafe { &*self.base.add(index) };
        // Relaxed: a plain OpenCL access, as in `Buffer::get`.
        T::from_raw(slot.load(Ordering::Relaxed))
    }
    /// Writes element `index`, as [`Buffer::set`].
    #[inline]
    #[track_caller]
    pub fn set(&self, index: usize, value: T) {
        if self.write_is_checked(index) {
            return Self::slow_set(self.buffer, index, value);
        }
        if index >= self.len {
            Self::out_of_bounds(self.buffer, index, true)
        }
        // SAFETY: as in `get`.
        let slot = unsafe { &*self.base.add(index) };
        // Relaxed: a plain OpenCL access, as in `Buffer::set`.
        slot.store(value.to_raw(), Ordering::Relaxed)
    }
    /// Reads element `index` as [`get`](Self::get) does, a relaxed atomic
    /// load, but with no bounds check outside checked launches: for a loop
    /// whose indices are known in bounds before it runs (`#[kernel]` tests
    /// the largest work-item's index once per loop). Unlike
    /// [`get_unchecked`](Self::get_unchecked), a race with another access
    /// is no undefined behaviour, only an OpenCL data race (which a checked
    /// launch reports).
    ///
    /// # Safety
    ///
    /// Outside checked launches, `index < self.len()`.
    #[inline]
    #[track_caller]
    pub unsafe fn get_relaxed_unchecked(&self, index: usize) -> T {
        if self.read_is_checked(index) {
            return Self::slow_get(self.buffer, index, self.claim != Claim::None);
        }
        // SAFETY: `index < len`, the buffer's length, as the caller promises
        // outside checked launches and the test above makes sure of in
        // them; the buffer is borrowed for `'a`, so the element is live.
        let slot = unsafe { &*self.base.add(index) };
        // Relaxed: a plain OpenCL access, as in `Buffer::get`.
        T::from_raw(slot.load(Ordering::Relaxed))
    }
    /// Writes element `index` as [`set`](Self::set) does, a relaxed atomic
    /// store, but with no bounds check outside checked launches (see
    /// [`get_relaxed_unchecked`](Self::get_relaxed_unchecked)).
    ///
    /// # Safety
    ///
    /// Outside checked launches, `index < self.len()`.
    #[inline]
    #[track_caller]
    pub unsafe fn set_relaxed_unchecked(&self, index: usize, value: T) {
        if self.write_is_checked(index) {
            return Self::slow_set(self.buffer, index, value);
        }
        // SAFETY: as in `get_relaxed_unchecked`.
        let slot = unsafe { &*self.base.add(index) };
        // Relaxed: a plain OpenCL access, as in `Buffer::set`.
        slot.store(value.to_raw(), Ordering::Relaxed)
    }
    /// Reads element `index` as OpenCL C does: no bounds check and a
    /// non-atomic load, so that a loop of them can vectorize (a relaxed
    /// atomic load, what [`get`](Self::get) does, never does). In a checked
    /// launch it is [`get`](Self::get): checked and reported.
    ///
    /// # Safety
    ///
    /// Outside checked launches: `index < self.len()`, and no data race on
    /// the element, that is, nothing writes it while this reads it (no other
    /// work-item unordered with this one by a barrier, fence or atomic, and
    /// no host thread). That is the rule of the OpenCL memory model too,
    /// where a racy program has undefined behaviour; a checked launch of the
    /// same kernel reports any race instead.
    #[inline]
    #[track_caller]
    pub unsafe fn get_unchecked(&self, index: usize) -> T {
        if self.checked {
            return Self::slow_get(self.buffer, index, self.claim != Claim::None);
        }
        // SAFETY: the caller promises `index < len`, so the element is live
        // (the buffer is borrowed for `'a`), and that no write races with
        // this read, so a non-atomic read of the atomic's storage is not a
        // data race in Rust's model either.
        T::from_raw(unsafe { *(*self.base.add(index)).as_ptr() })
    }
    /// Writes element `index` as OpenCL C does: no bounds check and a
    /// non-atomic store. In a checked launch it is [`set`](Self::set).
    ///
    /// # Safety
    ///
    /// Outside checked launches: `index < self.len()`, and no data race on
    /// the element, that is, nothing reads or writes it while this writes it
    /// (as [`get_unchecked`](Self::get_unchecked)).
    #[inline]
    #[track_caller]
    pub unsafe fn set_unchecked(&self, index: usize, value: T) {
        if self.checked {
            return Self::slow_set(self.buffer, index, value);
        }
        // SAFETY: the caller promises `index < len` and that no access races
        // with this write; as in `get_unchecked`.
        unsafe { *(*self.base.add(index)).as_ptr() = value.to_raw() }
    }
    /// Whether a read of element `index` goes the checked way: in a
    /// checked launch, unless the view is unwritten or owned and the index
    /// in bounds, where the read is only a load (see
    /// `Group::global_unwritten`, `Group::global_owned`).
    #[inline(always)]
    fn read_is_checked(&self, index: usize) -> bool {
        self.checked && !(self.claim != Claim::None && index < self.len)
    }
    /// Whether a write of `index` is the checker's: as `read_is_checked`,
    /// where only owned elements are written unchecked.
    #[inline(always)]
    fn write_is_checked(&self, index: usize) -> bool {
        self.checked && !(self.claim == Claim::Owned && index < self.len)
    }
    /// A checked access, or one out of bounds, out of line (see
    /// `LocalView::slow_get`).
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn slow_get(buffer: &Buffer<T>, index: usize, unwritten: bool) -> T {
        if unwritten {
            // Its bounds only: a read races with nothing where no
            // work-item writes.
            buffer.get_bounded(index)
        } else {
            buffer.get(index)
        }
    }
    /// An access out of bounds in an unchecked launch: the buffer's own
    /// bounds check, diverging (as `LocalView`'s).
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn out_of_bounds(buffer: &Buffer<T>, index: usize, write: bool) -> ! {
        buffer.slot_at(index, write, Location::caller());
        unreachable!("an access out of bounds panics outside checked launches")
    }
    /// As `slow_get`.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn slow_set(buffer: &Buffer<T>, index: usize, value: T) {
        buffer.set(index, value)
    }
}

impl<'a, T: AtomicValue> BufferView<'a, Atomic<T, Global>> {
    /// The atomic object at `index`, as [`Buffer::at`]. It borrows the
    /// buffer, not the view, so it may outlive a loop's copy of the view.
    #[inline]
    #[track_caller]
    pub fn at(&self, index: usize) -> &'a Atomic<T, Global> {
        self.buffer.at(index)
    }
}

impl<'a> BufferView<'a, AtomicFlag<Global>> {
    /// The atomic flag at `index`, as [`Buffer::at`].
    #[inline]
    #[track_caller]
    pub fn at(&self, index: usize) -> &'a AtomicFlag<Global> {
        self.buffer.at(index)
    }
}

impl<T: Element> Sealed for BufferView<'_, T> {}
impl<T: Element> ViewMode for BufferView<'_, T> {
    #[inline(always)]
    fn checked_if(self, checked: bool) -> Self {
        BufferView {
            checked: self.checked && checked,
            ..self
        }
    }
}
