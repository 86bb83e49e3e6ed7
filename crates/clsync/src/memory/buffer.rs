//! Global memory: [`Buffer`].

use std::fmt;
use std::panic::Location;
use std::sync::atomic::Ordering;

use super::scalar::{Element, RawAtomic, Scalar};
use crate::atomics::{Atomic, AtomicFlag, Global};
use crate::checker::{self, Space};

/// A buffer in global memory, shared by every work-group of a launch and by
/// host threads.
///
/// `T` is a [`Scalar`] (plain accesses with [`get`](Buffer::get) and
/// [`set`](Buffer::set)), an [`Atomic`] or an [`AtomicFlag`] (accessed through
/// [`at`](Buffer::at)). A buffer is `Sync`: a kernel borrows it, host threads
/// may too, while the kernel runs.
///
/// An index out of bounds panics with the buffer's name, the index and the
/// length; inside a kernel the launch then fails naming the work-item.
///
/// ```
/// use clsync::{Buffer, AtomicInt};
/// let data = Buffer::from_slice(&[1.0f32, 2.0, 3.0]).named("data");
/// data.set(1, 5.0);
/// assert_eq!(data.to_vec(), vec![1.0, 5.0, 3.0]);
///
/// let counters: Buffer<AtomicInt> = Buffer::new(4);
/// counters.at(2).fetch_add(7);
/// assert_eq!(counters.to_vec(), vec![0, 0, 7, 0]);
/// ```
pub struct Buffer<T: Element> {
    /// The elements, then one scratch element that a checked launch's
    /// out-of-bounds accesses go to.
    slots: Box<[T::Slot]>,
    name: String,
    id: u64,
}

impl<T: Element> Buffer<T> {
    /// A zero-initialized buffer of `len` elements.
    pub fn new(len: usize) -> Self {
        Self::with_slots((0..=len).map(|_| T::zero_slot()).collect())
    }

    /// A buffer of `slots`, the last of which is the scratch element.
    fn with_slots(slots: Box<[T::Slot]>) -> Self {
        let id = super::next_object_id();
        let b = Buffer {
            slots,
            name: format!("buffer#{id}"),
            id,
        };
        b.register();
        b
    }

    fn register(&self) {
        let stride = std::mem::size_of::<T::Slot>();
        let base = self.slots.as_ptr() as usize;
        checker::register(base, self.len(), stride, Space::Global, &self.name);
    }

    /// The elements, without the scratch one.
    fn elements(&self) -> &[T::Slot] {
        &self.slots[..self.len()]
    }

    /// Gives the buffer a name for reports and errors.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self.register();
        self
    }

    /// The buffer's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The buffer's process-unique id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.slots.len() - 1
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// OpenCL C's `prefetch(p, num_gentypes)` for elements `range`: a hint
    /// that they will be read soon, which brings their cache lines towards
    /// this core and changes nothing a kernel computes (the built-in "does
    /// not affect the functional behavior of the kernel"). Elements past the
    /// end are ignored; it is not an access, so a checked launch reports
    /// nothing for it.
    ///
    /// The processor's own prefetcher follows a loop that streams through
    /// memory, but not a group-level kernel that reads its group's 1 KB and
    /// then works on local memory for longer than that took: a kernel that
    /// knows what a later group will read can ask for it (the bench's
    /// reduction prefetches the group two ahead, which on a worker that
    /// runs groups in order is its own).
    ///
    /// On x86-64 one `prefetcht0` per cache line; elsewhere nothing yet.
    ///
    /// ```
    /// use clsync::{Buffer, Launch, NdRange, Runtime};
    ///
    /// let data = Buffer::from_slice(&(0..1024u32).collect::<Vec<_>>());
    /// let firsts = Buffer::<u32>::new(4);
    /// let launch = Launch::new("firsts", NdRange::new([1024]).local([256]));
    /// Runtime::new().launch_groups(&launch, |g| {
    ///     let group = g.get_group_id(0);
    ///     // A hint for a later group's elements; past the end, ignored.
    ///     data.prefetch((group + 2) * 256..(group + 3) * 256);
    ///     firsts.set(group, data.get(group * 256));
    /// }).unwrap();
    /// assert_eq!(firsts.to_vec(), vec![0, 256, 512, 768]);
    /// ```
    #[inline]
    pub fn prefetch(&self, range: std::ops::Range<usize>) {
        let (base, len) = self.raw_parts();
        prefetch_elements(base, len, range);
    }

    /// The elements' memory as bytes: the address of the first element and
    /// the length in bytes, for an engine that compiles kernels to native
    /// code (`clsync-opencl`) and accesses buffers by address.
    ///
    /// Each element is stored as an atomic of its size, which has interior
    /// mutability, so the memory may be read and written through the pointer
    /// while the buffer is borrowed; accesses of other threads race as a
    /// kernel's relaxed accesses do. The pointer is valid while the buffer
    /// lives.
    ///
    /// ```
    /// use clsync::Buffer;
    /// let b = Buffer::from_slice(&[1u32, 2, 3]);
    /// let (p, len) = b.raw_bytes();
    /// assert_eq!(len, 12);
    /// // SAFETY: byte 4 is the first byte of element 1, inside the buffer.
    /// unsafe { p.add(4).write(7) };
    /// assert_eq!(b.to_vec(), vec![1, 7, 3]);
    /// ```
    pub fn raw_bytes(&self) -> (*mut u8, usize) {
        (
            self.slots.as_ptr() as *mut u8,
            self.len() * std::mem::size_of::<T::Slot>(),
        )
    }

    /// Its elements (the scratch one not included).
    pub(crate) fn raw_parts(&self) -> (*const T::Slot, usize) {
        (self.slots.as_ptr(), self.len())
    }

    /// Element `index` (see [`super::element`]).
    #[inline]
    pub(crate) fn slot_at(
        &self,
        index: usize,
        write: bool,
        at: &'static Location<'static>,
    ) -> &T::Slot {
        super::element(&self.slots, Space::Global, &self.name, index, write, at)
    }
}

impl<T: Element> Drop for Buffer<T> {
    fn drop(&mut self) {
        checker::unregister(self.slots.as_ptr() as usize);
    }
}

impl<T: Scalar + Element<Slot = <T as Scalar>::Raw>> Buffer<T> {
    /// A buffer holding a copy of `data`.
    pub fn from_slice(data: &[T]) -> Self {
        let values = data.iter().copied().chain([T::default()]);
        Self::with_slots(values.map(|v| T::Raw::new(v.to_raw())).collect())
    }

    /// A buffer of `len` copies of `value`.
    pub fn filled(len: usize, value: T) -> Self {
        Self::with_slots((0..=len).map(|_| T::Raw::new(value.to_raw())).collect())
    }

    /// Reads element `index` (a plain, non-atomic access).
    #[inline]
    #[track_caller]
    pub fn get(&self, index: usize) -> T {
        let at = Location::caller();
        let slot = self.slot_at(index, false, at);
        checker::plain(slot as *const _ as usize, Space::Global, false, at);
        // Relaxed: a plain OpenCL access; see the module docs of `memory`
        // for why plain accesses are relaxed atomics. Ordering with other
        // work-items comes from barriers, fences and atomics, not from here.
        T::from_raw(slot.load(Ordering::Relaxed))
    }

    /// [`get`](Self::get) without a record in the checker: an index out of
    /// bounds is still reported (or panics outside checked launches), but
    /// the read itself is not remembered, for a buffer that no work-item
    /// of the launch writes (`BufferView`'s unwritten views).
    #[inline]
    #[track_caller]
    pub(crate) fn get_bounded(&self, index: usize) -> T {
        let slot = self.slot_at(index, false, Location::caller());
        // Relaxed: as in `get`.
        T::from_raw(slot.load(Ordering::Relaxed))
    }

    /// Writes element `index` (a plain, non-atomic access).
    #[inline]
    #[track_caller]
    pub fn set(&self, index: usize, value: T) {
        let at = Location::caller();
        let slot = self.slot_at(index, true, at);
        checker::plain(slot as *const _ as usize, Space::Global, true, at);
        // Relaxed: a plain OpenCL access, as in `get`.
        slot.store(value.to_raw(), Ordering::Relaxed)
    }

    /// A copy of the contents. Call it when no kernel writes the buffer, as
    /// after a launch returns (the launch's end orders every kernel write
    /// before it).
    pub fn to_vec(&self) -> Vec<T> {
        // Relaxed: the caller has synchronized with the writers (the end of a
        // launch is a happens-before edge), so no ordering is needed here.
        self.elements()
            .iter()
            .map(|s| T::from_raw(s.load(Ordering::Relaxed)))
            .collect()
    }

    /// Overwrites the contents from `data`, which must have the same length.
    pub fn copy_from_slice(&self, data: &[T]) {
        assert_eq!(
            data.len(),
            self.len(),
            "copy_from_slice into `{}`: length mismatch",
            self.name
        );
        for (s, v) in self.elements().iter().zip(data) {
            // Relaxed: host-side initialization before a launch; the launch's
            // start orders it before every kernel access.
            s.store(v.to_raw(), Ordering::Relaxed);
        }
    }
}

impl<T: crate::AtomicValue> Buffer<Atomic<T, Global>> {
    /// A buffer of atomics initialized from `values`.
    pub fn from_values(values: &[T]) -> Self {
        let b = Self::new(values.len());
        for (i, v) in values.iter().enumerate() {
            b.at(i).init(*v);
        }
        b
    }

    /// The atomic object at `index`.
    #[inline]
    #[track_caller]
    pub fn at(&self, index: usize) -> &Atomic<T, Global> {
        self.slot_at(index, true, Location::caller())
    }

    /// The current values, read with relaxed loads.
    pub fn to_vec(&self) -> Vec<T> {
        self.elements()
            .iter()
            .map(|a| a.load_explicit(crate::sync::Relaxed))
            .collect()
    }
}

impl Buffer<AtomicFlag<Global>> {
    /// The atomic flag at `index`.
    #[inline]
    #[track_caller]
    pub fn at(&self, index: usize) -> &AtomicFlag<Global> {
        self.slot_at(index, true, Location::caller())
    }
}

impl<T: Element> fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("name", &self.name)
            .field("type", &T::TYPE_NAME)
            .field("len", &self.len())
            .finish()
    }
}

/// OpenCL C's `prefetch` for constant global memory held as a shared slice
/// (a `&[T]` kernel parameter, `global const T*`): a hint that elements
/// `range` of `data` will be read soon, those past the end left out, as
/// [`Buffer::prefetch`] is for a buffer.
///
/// ```
/// use clsync::memory::prefetch;
/// use clsync::{Buffer, Launch, NdRange, Runtime};
///
/// let data: Vec<u32> = (0..1024).collect();
/// let firsts = Buffer::<u32>::new(4);
/// let launch = Launch::new("firsts", NdRange::new([1024]).local([256]));
/// Runtime::new().launch_groups(&launch, |g| {
///     let group = g.get_group_id(0);
///     // A hint for a later group's elements; past the end, ignored.
///     prefetch(&data, (group + 2) * 256..(group + 3) * 256);
///     firsts.set(group, data[group * 256]);
/// }).unwrap();
/// assert_eq!(firsts.to_vec(), vec![0, 256, 512, 768]);
/// ```
#[inline]
pub fn prefetch<T>(data: &[T], range: std::ops::Range<usize>) {
    prefetch_elements(data.as_ptr(), data.len(), range)
}

/// Prefetches elements `range` of the `len` elements from `base`, those past
/// the end left out (a hint; nothing is read).
#[inline]
pub(super) fn prefetch_elements<S>(base: *const S, len: usize, range: std::ops::Range<usize>) {
    let end = range.end.min(len);
    if range.start >= end {
        return;
    }
    let start = base.wrapping_add(range.start) as *const u8;
    prefetch_lines(start, (end - range.start) * std::mem::size_of::<S>());
}

/// Prefetches every cache line of the `bytes` bytes from `start` (a hint;
/// nothing is read).
#[inline]
fn prefetch_lines(start: *const u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        const LINE: usize = 64;
        // From the line that holds the first byte to the one that holds the
        // last.
        let first = start.wrapping_sub(start as usize % LINE);
        let lines = (start as usize % LINE + bytes).div_ceil(LINE);
        for k in 0..lines {
            // SAFETY: a prefetch never faults and writes nothing; it only
            // asks the cache for a line (of the buffer's allocation, or the
            // line that begins it).
            unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(k * LINE) as *const i8) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (start, bytes);
    }
}
