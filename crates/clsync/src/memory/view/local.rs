//! [`LocalView`]: a group-level kernel's handle on local memory.

use std::panic::Location;

use super::ViewMode;
use crate::atomics::{Atomic, AtomicFlag, Global, Local};
use crate::checker::{GroupCheck, Shadow};
use crate::memory::local::LocalSlice;
use crate::memory::scalar::{Element, RawAtomic, Scalar};
use crate::sync::sealed::Sealed;
use crate::AtomicValue;

impl<T: Element> LocalSlice<T> {
    /// A [`LocalView`] of the slice: what group-level kernels use.
    #[inline]
    pub fn view(&self) -> LocalView<'_, T> {
        let (base, len, checked) = self.raw_parts();
        LocalView {
            base,
            len,
            checked,
            cells: std::ptr::null(),
            slice: self,
        }
    }
}

/// A group-level kernel's handle on a [`LocalSlice`]: `Copy`, so that a
/// loop over the group keeps its pointer, length and mode in registers
/// instead of reloading them after every store (as it must through a
/// reference, which the stores might alias).
///
/// Besides the checked [`get`](LocalView::get) and [`set`](LocalView::set),
/// it has [`get_unchecked`](LocalView::get_unchecked) and
/// [`set_unchecked`](LocalView::set_unchecked): OpenCL C's own access, with
/// no bounds check outside checked launches, so that a loop of them can
/// vectorize. In a checked launch they are checked like the rest: an index
/// out of bounds is a report.
///
/// ```
/// use clsync::{Buffer, Launch, NdRange, Runtime};
/// use clsync::sync::LOCAL;
///
/// // Reverse each group of 64 through local memory.
/// let data = Buffer::from_slice(&(0..256u32).collect::<Vec<_>>());
/// let mut launch = Launch::new("reverse", NdRange::new([256]).local([64]));
/// let tile = launch.local::<u32>(64);
/// Runtime::new().launch_groups(&launch, |g| {
///     let t = g.local(tile);
///     g.for_each(|it| t.set(it.local_linear_id, data.get(it.global_linear_id)));
///     g.barrier(LOCAL);
///     g.for_each(|it| data.set(it.global_linear_id, t.get(63 - it.local_linear_id)));
/// }).unwrap();
/// assert_eq!(data.get(0), 63);
/// ```
pub struct LocalView<'a, T: Element> {
    pub(super) base: *const T::LocalSlot,
    pub(super) len: usize,
    pub(super) checked: bool,
    /// Checked, where the group takes race-free accesses at their word
    /// ([`Group::trust_race_free`](crate::Group::trust_race_free)): the
    /// checker's cells for the elements, one each, which
    /// [`get_race_free`](LocalView::get_race_free) reads; else null.
    cells: *const Shadow,
    slice: &'a LocalSlice<T>,
}

impl<T: Element> Clone for LocalView<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Element> Copy for LocalView<'_, T> {}

impl<T: Element> LocalView<'_, T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Its name in reports.
    pub fn name(&self) -> &str {
        self.slice.name()
    }
    /// Its memory as bytes, for code that accesses it itself (compiled
    /// kernels): see [`LocalSlice::raw_bytes`](crate::LocalSlice::raw_bytes).
    pub fn raw_bytes(&self) -> (*mut u8, usize) {
        self.slice.raw_bytes()
    }
    /// The view, its race-free accesses decided by `check`'s cells for it
    /// (see `GroupCheck::race_free_cells`), if it has any.
    pub(crate) fn with_cells(mut self, check: &GroupCheck) -> Self {
        if self.checked {
            let stride = std::mem::size_of::<T::LocalSlot>();
            self.cells = check.race_free_cells(self.base as usize, self.len, stride);
        }
        self
    }
    /// Whether element `index` (in bounds) holds a write of any kind, for
    /// an atomic proven quiet: see [`LocalView::at_quiet`].
    #[inline(always)]
    pub(super) fn written(&self, index: usize) -> bool {
        cell(self.cells, index).is_some_and(Shadow::written)
    }
}

/// Whether element `index` (in bounds) of the view whose cells are `cells`
/// needs nothing from the checker for an access proven race-free: see
/// `checker::race_free`.
#[inline(always)]
fn settled(cells: *const Shadow, index: usize) -> bool {
    cell(cells, index).is_some_and(Shadow::settled)
}

/// Element `index`'s cell (in bounds) of a view whose cells are `cells`,
/// if it has any.
#[inline(always)]
fn cell<'c>(cells: *const Shadow, index: usize) -> Option<&'c Shadow> {
    // SAFETY: a non-null `cells` holds a cell per element, `len` of them
    // (`with_cells`), and our callers pass `index < len`. The cells live
    // as long as the group's check, which outlives the group that lent the
    // view, and the checker reaches a cell through `&mut` only during one
    // of the group's accesses, none of which is running while the kernel's
    // code (the caller, which drops the reference before it returns) is.
    (!cells.is_null()).then(|| unsafe { &*cells.add(index) })
}

impl<T: Scalar + Element<LocalSlot = <T as Scalar>::Raw>> LocalView<'_, T> {
    /// Reads element `index`; out of bounds, as [`LocalSlice::get`].
    #[inline]
    #[track_caller]
    pub fn get(&self, index: usize) -> T {
        self.read(index, self.checked)
    }
    /// Writes element `index`; out of bounds, as [`LocalSlice::set`].
    #[inline]
    #[track_caller]
    pub fn set(&self, index: usize, value: T) {
        self.write(index, value, self.checked)
    }
    /// Reads element `index` with no bounds check outside checked launches.
    ///
    /// # Safety
    ///
    /// `index < self.len()`, unless the launch is checked (where an index out
    /// of bounds is reported, as with [`get`](Self::get)).
    #[inline]
    #[track_caller]
    pub unsafe fn get_unchecked(&self, index: usize) -> T {
        if self.checked {
            return Self::slow_get(self.slice, index);
        }
        // SAFETY: the caller promises `index < len`; the rest as in `read`.
        T::from_raw(unsafe { *(*self.base.add(index)).as_ptr() })
    }
    /// Writes element `index` with no bounds check outside checked launches.
    ///
    /// # Safety
    ///
    /// As [`get_unchecked`](Self::get_unchecked).
    #[inline]
    #[track_caller]
    pub unsafe fn set_unchecked(&self, index: usize, value: T) {
        if self.checked {
            return Self::slow_set(self.slice, index, value);
        }
        // SAFETY: the caller promises `index < len`; the rest as in `read`.
        unsafe { *(*self.base.add(index)).as_ptr() = value.to_raw() }
    }
    /// Reads the `N` elements from `start` with no bounds check outside
    /// checked launches: a row of a tile as one copy, where a loop of
    /// [`get_unchecked`](Self::get_unchecked) would test the launch's mode
    /// per element and stay scalar. Checked, each element is read as by
    /// `get_unchecked`.
    ///
    /// # Safety
    ///
    /// `start + N <= self.len()`, unless the launch is checked.
    ///
    /// # Example
    ///
    /// ```
    /// use clsync::{Buffer, Launch, NdRange, Runtime};
    /// use clsync::sync::LOCAL;
    ///
    /// let out = Buffer::<u32>::new(4);
    /// let mut launch = Launch::new("rows", NdRange::new([16]).local([16]));
    /// let tile = launch.local::<u32>(16);
    /// Runtime::new().launch_groups(&launch, |g| {
    ///     let t = g.local(tile);
    ///     g.for_each(move |it| t.set(it.local_linear_id, it.local_linear_id as u32));
    ///     g.barrier(LOCAL);
    ///     // SAFETY: 12 + 4 <= 16, the array's length.
    ///     let row: [u32; 4] = unsafe { t.get_array_unchecked(12) };
    ///     g.for_each(|it| {
    ///         if it.local_linear_id < 4 {
    ///             out.set(it.local_linear_id, row[it.local_linear_id]);
    ///         }
    ///     });
    /// }).unwrap();
    /// assert_eq!(out.to_vec(), [12, 13, 14, 15]);
    /// ```
    #[inline]
    #[track_caller]
    pub unsafe fn get_array_unchecked<const N: usize>(&self, start: usize) -> [T; N] {
        if self.checked {
            return Self::slow_array(self.slice, start);
        }
        const {
            assert!(size_of::<T>() == size_of::<T::Raw>());
            assert!(align_of::<T>() <= align_of::<T::Raw>());
        }
        // SAFETY: the caller promises `start + N <= len`, and `base` points
        // to the slice's `len` cells, so the `N` cells are in it. Each cell
        // is a std atomic, with the size and bit validity of its integer,
        // and `T` is a bit cast of that integer (see `Scalar`) of the same
        // size and no stricter alignment (asserted above), so the cells read
        // as `[T; N]`. Only this thread reaches them (see
        // `LocalSlice::get`), so the read races with nothing.
        unsafe { std::ptr::read(self.base.add(start).cast::<[T; N]>()) }
    }
}

impl<T: Scalar + Element<LocalSlot = <T as Scalar>::Raw>> LocalView<'_, T> {
    /// [`get`](Self::get) for a read the caller proved race-free: within
    /// its barrier interval (between two work-group barriers that fence
    /// local memory), no other work-item of the group writes the element.
    /// `#[kernel]` proves it for the reads of an interval whose accesses to
    /// the array are all reads, and for accesses at the work-item's own
    /// element (its local id) in an interval whose accesses to the array
    /// are all so.
    ///
    /// In a checked launch whose group takes such accesses at their word
    /// ([`Group::trust_race_free`](crate::Group::trust_race_free)), the
    /// checker is skipped where the element holds a plain write already:
    /// nothing it would record can race with an access it checks (the
    /// `checker::race_free` module's notes give the argument). Elsewhere,
    /// and in any other launch, it is [`get`](Self::get). A false claim
    /// hides a race from the checker; it is no undefined behaviour.
    ///
    /// ```
    /// use clsync::{Buffer, Launch, NdRange, Runtime};
    /// use clsync::sync::LOCAL;
    ///
    /// let out = Buffer::<u32>::new(64);
    /// let mut launch = Launch::new("shift", NdRange::new([64]).local([64])).checked(true);
    /// let tile = launch.local::<u32>(64);
    /// Runtime::new().launch_groups(&launch, |g| {
    ///     g.trust_race_free(true);
    ///     let t = g.local(tile);
    ///     // Each work-item writes its own element, then reads its neighbour's.
    ///     g.for_each(move |it| t.set_race_free(it.local_linear_id, it.local_linear_id as u32));
    ///     g.barrier(LOCAL);
    ///     g.for_each(|it| out.set(it.global_linear_id, t.get_race_free((it.local_linear_id + 1) % 64)));
    /// }).unwrap();
    /// assert_eq!(out.get(0), 1);
    /// ```
    #[inline]
    #[track_caller]
    pub fn get_race_free(&self, index: usize) -> T {
        if self.checked {
            return Self::race_free_get(self.slice, self.base, self.cells, index);
        }
        self.read(index, false)
    }
    /// [`set`](Self::set) for a write the caller proved race-free: within
    /// its barrier interval, no other work-item of the group accesses the
    /// element (see [`get_race_free`](Self::get_race_free)). A checked
    /// launch that takes it at its word skips the checker where the element
    /// holds a plain write already; the first write of an element is
    /// checked, and recorded, as any other.
    #[inline]
    #[track_caller]
    pub fn set_race_free(&self, index: usize, value: T) {
        if self.checked {
            return Self::race_free_set(self.slice, self.base, self.cells, index, value);
        }
        self.write(index, value, false)
    }
    /// A checked [`get_race_free`](Self::get_race_free): a load where the
    /// element is settled, else the checker's. Out of line and cold, as
    /// `slow_get`, and for the same reason: the unchecked loops stay small
    /// enough to vectorize (a reduction's unchecked loop, which its bounds
    /// cannot hoist, took 1.5 times as long with this call not cold).
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn race_free_get(
        slice: &LocalSlice<T>,
        base: *const T::LocalSlot,
        cells: *const Shadow,
        index: usize,
    ) -> T {
        if index < slice.len() && settled(cells, index) {
            // SAFETY: `index < len`, as in `read`.
            return T::from_raw(unsafe { *(*base.add(index)).as_ptr() });
        }
        slice.get(index)
    }
    /// A checked [`set_race_free`](Self::set_race_free), as
    /// `race_free_get`.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn race_free_set(
        slice: &LocalSlice<T>,
        base: *const T::LocalSlot,
        cells: *const Shadow,
        index: usize,
        value: T,
    ) {
        if index < slice.len() && settled(cells, index) {
            // SAFETY: as in `race_free_get`.
            return unsafe { *(*base.add(index)).as_ptr() = value.to_raw() };
        }
        slice.set(index, value)
    }
    /// Reads element `index`, through the checker if `checked`; out of
    /// bounds, as [`LocalSlice::get`].
    #[inline(always)]
    #[track_caller]
    fn read(&self, index: usize, checked: bool) -> T {
        if checked {
            return Self::slow_get(self.slice, index);
        }
        if index >= self.len {
            Self::out_of_bounds(self.slice, index, false)
        }
        // SAFETY: `index < len`, the slice's length, and the slice is
        // borrowed for `'a`, so the cell is live; only this thread reaches
        // it (see `LocalSlice::get`).
        T::from_raw(unsafe { *(*self.base.add(index)).as_ptr() })
    }
    /// Writes element `index`, through the checker if `checked`; out of
    /// bounds, as [`LocalSlice::set`].
    #[inline(always)]
    #[track_caller]
    fn write(&self, index: usize, value: T, checked: bool) {
        if checked {
            return Self::slow_set(self.slice, index, value);
        }
        if index >= self.len {
            Self::out_of_bounds(self.slice, index, true)
        }
        // SAFETY: as in `read`.
        unsafe { *(*self.base.add(index)).as_ptr() = value.to_raw() }
    }
    /// A checked access, or one out of bounds: kept out of line, so that
    /// the loops calling `get` stay small enough to inline and vectorize,
    /// and given the slice rather than the view, so that the view's
    /// address never escapes and it stays in registers.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn slow_array<const N: usize>(slice: &LocalSlice<T>, start: usize) -> [T; N] {
        // A loop rather than `array::from_fn`: a closure would give the
        // reports its own line instead of the caller's.
        let mut out = [T::default(); N];
        for (i, v) in out.iter_mut().enumerate() {
            *v = slice.get(start + i);
        }
        out
    }
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn slow_get(slice: &LocalSlice<T>, index: usize) -> T {
        slice.get(index)
    }
    /// An access (a write if `write`) out of bounds in an unchecked launch:
    /// the slice's own bounds check, which panics there. Diverging, so that
    /// a loop of `get`s has no call that returns into it, and the compiler
    /// can unroll it.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn out_of_bounds(slice: &LocalSlice<T>, index: usize, write: bool) -> ! {
        slice.slot_at(index, write, Location::caller());
        unreachable!("an access out of bounds panics outside checked launches")
    }
    /// As `slow_get`.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn slow_set(slice: &LocalSlice<T>, index: usize, value: T) {
        slice.set(index, value)
    }
}

impl<'a, T: AtomicValue> LocalView<'a, Atomic<T, Global>> {
    /// The local atomic object at `index`; out of bounds, as
    /// [`LocalSlice::at`].
    #[inline]
    #[track_caller]
    pub fn at(&self, index: usize) -> &'a Atomic<T, Local> {
        if self.checked || index >= self.len {
            return Self::slow_at(self.slice, index);
        }
        // SAFETY: `index < len`, the slice's length, and the slice is
        // borrowed for `'a`, so the element is live.
        unsafe { &*self.base.add(index) }
    }
    /// The local atomic object at `index`, with no bounds check outside
    /// checked launches (where an index out of bounds is reported, as with
    /// [`at`](Self::at)): for an index in bounds by construction, such as a
    /// histogram's bin of a byte in 256 bins, as OpenCL C has no check.
    ///
    /// # Safety
    ///
    /// `index < self.len()`, unless the launch is checked.
    ///
    /// ```
    /// use clsync::sync::{Relaxed, WorkGroupScope, LOCAL};
    /// use clsync::{AtomicUint, Buffer, Launch, NdRange, Runtime};
    ///
    /// let bytes = Buffer::from_slice(&[3u8, 200, 3, 7]);
    /// let mut launch = Launch::new("count", NdRange::new([4]).local([4]));
    /// let bins = launch.local::<AtomicUint>(256);
    /// let threes = Buffer::<u32>::new(1);
    /// Runtime::with_threads(1).launch_groups(&launch, |g| {
    ///     let (b, data) = (g.local(bins), g.global(&bytes));
    ///     g.for_each(move |it| b.at(it.local_linear_id).store_explicit_scope(0, Relaxed, WorkGroupScope));
    ///     g.barrier(LOCAL);
    ///     g.for_each(move |it| {
    ///         let v = data.get(it.global_linear_id) as usize;
    ///         // SAFETY: a byte is below 256, the number of bins.
    ///         unsafe { b.at_unchecked(v) }.fetch_add_explicit_scope(1, Relaxed, WorkGroupScope);
    ///     });
    ///     g.barrier(LOCAL);
    ///     threes.set(0, b.at(3).load_explicit_scope(Relaxed, WorkGroupScope));
    /// }).unwrap();
    /// assert_eq!(threes.get(0), 2);
    /// ```
    #[inline]
    #[track_caller]
    pub unsafe fn at_unchecked(&self, index: usize) -> &'a Atomic<T, Local> {
        if self.checked {
            return Self::slow_at(self.slice, index);
        }
        // SAFETY: the caller promises `index < len`, the slice's length,
        // and the slice is borrowed for `'a`, so the element is live.
        unsafe { &*self.base.add(index) }
    }
    /// The group's local atomic objects as a slice, for a kernel whose
    /// indices Rust can bound once: as an array (`<&[_; 256]>::try_from`),
    /// a byte indexes 256 bins with no test at all, where
    /// [`at_unchecked`](Self::at_unchecked) tests the launch's mode per
    /// access. Safe: an index out of bounds of the slice is Rust's own panic
    /// (in checked launches too, where [`at`](Self::at) would report it and
    /// go on); the operations on the objects are checked as any.
    ///
    /// ```
    /// use clsync::sync::{Relaxed, WorkGroupScope, LOCAL};
    /// use clsync::{AtomicUint, Buffer, Launch, NdRange, Runtime};
    /// use clsync::atomics::Local;
    ///
    /// let bytes = Buffer::from_slice(&[3u8, 200, 3, 7]);
    /// let mut launch = Launch::new("count", NdRange::new([4]).local([4]));
    /// let bins = launch.local::<AtomicUint>(256);
    /// let threes = Buffer::<u32>::new(1);
    /// Runtime::with_threads(1).launch_groups(&launch, |g| {
    ///     let b: &[AtomicUint<Local>; 256] = g.local(bins).as_slice().try_into().unwrap();
    ///     g.for_each(|it| b[it.local_linear_id].store_explicit_scope(0, Relaxed, WorkGroupScope));
    ///     g.barrier(LOCAL);
    ///     g.for_each(|it| {
    ///         let v = bytes.get(it.global_linear_id);
    ///         b[usize::from(v)].fetch_add_explicit_scope(1, Relaxed, WorkGroupScope);
    ///     });
    ///     g.barrier(LOCAL);
    ///     threes.set(0, b[3].load_explicit_scope(Relaxed, WorkGroupScope));
    /// }).unwrap();
    /// assert_eq!(threes.get(0), 2);
    /// ```
    #[inline]
    pub fn as_slice(&self) -> &'a [Atomic<T, Local>] {
        // SAFETY: `base` points to the slice's `len` live elements (its
        // scratch element after them is left out), borrowed for `'a`; they
        // are atomics, so shared references to them are what `at` hands out
        // one by one.
        unsafe { std::slice::from_raw_parts(self.base, self.len) }
    }
    /// As `LocalView::slow_get`.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn slow_at(slice: &'a LocalSlice<Atomic<T, Global>>, index: usize) -> &'a Atomic<T, Local> {
        slice.at(index)
    }
}

impl LocalView<'_, AtomicFlag<Global>> {
    /// The local atomic flag at `index`.
    #[inline]
    #[track_caller]
    pub fn at(&self, index: usize) -> &AtomicFlag<Local> {
        self.slice.at(index)
    }
}

impl<T: Element> Sealed for LocalView<'_, T> {}
impl<T: Element> ViewMode for LocalView<'_, T> {
    #[inline(always)]
    fn checked_if(self, checked: bool) -> Self {
        LocalView {
            checked: self.checked && checked,
            ..self
        }
    }
}
