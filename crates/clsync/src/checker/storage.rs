//! Where shadow memory lives: dense per buffer or image (shared by the
//! worker threads, a lock per cell, pages made on first touch), dense per
//! local array of a work-group (one thread, no lock), a cell per element or
//! per granule of bytes ([`Grain`]); and a hash map for addresses outside
//! any registered object and the bytes of split granules.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::shadow::Shadow;

/// Shadow memory, keyed by element address.
pub(crate) type ShadowMap = HashMap<usize, Shadow, BuildHasherDefault<AddrHasher>>;

/// A hasher for element addresses: one multiplication (Fibonacci hashing).
/// Addresses are not attacker-chosen, so no keyed hash is needed.
#[derive(Default)]
pub(crate) struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(26);
    }
}

/// Cells per page of a dense shadow.
const PAGE: usize = 4096;

/// One page of a dense shadow's cells, and their spans (see [`Grain`]).
struct Page {
    cells: Box<[Mutex<Shadow>]>,
    /// A span per cell for a byte-granular shadow, else empty. Read and
    /// written only under the cell's lock, which orders them (relaxed).
    spans: Box<[AtomicU16]>,
}

/// How a dense shadow maps addresses to its cells.
///
/// A typed object (a `Buffer<f32>`, an image) is accessed an element at a
/// time: a cell per element, and an access to any of its bytes is one to
/// the element. A byte object (the buffers and local arrays of compiled
/// OpenCL C kernels, whose accesses are scalars and vectors of any width)
/// would need a cell per byte, and a check per byte of every access: four
/// for a `float`. Instead it has a cell per aligned *granule*, the size of
/// the first access the launch made to it (a power of two up to 16 bytes),
/// which holds the shadow of the bytes the accesses it has seen covered
/// (its *span*; the granule's other bytes are untouched). An access to
/// exactly those bytes is one check, the same check each byte would have
/// had, since each byte's shadow is the cell's. An access to other bytes
/// of the granule (a `char` of a `float`'s, an atomic's first byte)
/// *splits* it: each byte of the span takes a copy of the cell's shadow in
/// the space's map, the cell is marked split, and from then on the
/// granule's bytes are checked one at a time, there, as without granules.
#[derive(Clone, Copy)]
pub(crate) enum Grain {
    /// A cell per element of the stride.
    Element(Stride),
    /// A cell per aligned granule of `1 << shift` bytes.
    Granule(u32),
}

/// A granule's span: the first byte (bits 0..5) and the end (bits 5..10)
/// the cell's shadow covers, or [`SPLIT`]; `0`, before any access.
const SPLIT: u16 = 1 << 10;

impl Grain {
    /// The grain for an object of `stride`-byte elements whose first access
    /// covers `first` bytes.
    fn new(stride: usize, first: usize) -> Self {
        if stride == 1 && first.is_power_of_two() && (2..=16).contains(&first) {
            Grain::Granule(first.trailing_zeros())
        } else {
            Grain::Element(Stride::new(stride))
        }
    }

    /// How many cells cover `len` elements of `stride` bytes from `base`.
    fn cells(self, base: usize, end: usize) -> usize {
        match self {
            Grain::Element(s) => s.index(end - base),
            Grain::Granule(k) if end > base => ((end - 1) >> k) - (base >> k) + 1,
            Grain::Granule(_) => 0,
        }
    }

    /// Where the part of an access from `a` to `end` that lies in one cell
    /// goes (for a granule, with its span and first byte).
    #[inline]
    fn part(self, base: usize, a: usize, end: usize) -> Part {
        match self {
            Grain::Element(s) => {
                let cell = s.index(a - base);
                Part {
                    cell,
                    next: end.min(base + (cell + 1) * s.bytes),
                    span: 0,
                    start: 0,
                }
            }
            Grain::Granule(k) => {
                let start = a >> k << k;
                let next = end.min(start + (1 << k));
                Part {
                    cell: (a >> k) - (base >> k),
                    next,
                    span: (a - start) as u16 | ((next - start) as u16) << 5,
                    start,
                }
            }
        }
    }
}

/// The part of an access that lies in one cell.
struct Part {
    cell: usize,
    /// The first byte after the part.
    next: usize,
    /// Its span in a granule.
    span: u16,
    /// The granule's first byte.
    start: usize,
}

/// Where the part of an access goes.
pub(crate) enum Found<C> {
    /// The cell holds its shadow.
    Cell(C),
    /// The granule is split: each byte of the part has its shadow in the
    /// space's map.
    Bytes,
}

impl Part {
    /// Whether this part of an access to a granule whose cell holds
    /// `shadow` over `span` is made on the cell; if not, the granule is
    /// split (or was): `spill` is given each byte of the span and its copy
    /// of the shadow, and `span` marks the split.
    /// The common case (the bytes the cell covers already, or an empty
    /// cell) inlined into every access; a split out of line.
    #[inline(always)]
    fn on_cell(
        &self,
        shadow: &mut Shadow,
        span: &mut u16,
        spill: impl FnMut(usize, Shadow),
    ) -> bool {
        if *span & SPLIT != 0 {
            return false;
        }
        if *span == self.span || matches!(shadow, Shadow::Untouched) {
            *span = self.span;
            return true;
        }
        self.split(shadow, span, spill);
        false
    }

    /// Splits the granule whose cell holds `shadow` over `span`: each byte
    /// of the span gets its copy of the shadow from `spill`.
    #[inline(never)]
    fn split(&self, shadow: &mut Shadow, span: &mut u16, mut spill: impl FnMut(usize, Shadow)) {
        let whole = std::mem::take(shadow);
        for b in *span & 31..*span >> 5 & 31 {
            spill(self.start + b as usize, whole.clone());
        }
        *span = SPLIT;
    }
}

/// The shadow of one buffer or image: a cell per element or granule (see
/// [`Grain`]), each behind its own lock (the elements are reached from
/// every worker thread). Pages of cells are made when first touched, by
/// the thread that touches them, so a large buffer costs shadow only where
/// the kernel goes.
pub(crate) struct DenseShadow {
    base: usize,
    end: usize,
    grain: Grain,
    cells: usize,
    pages: Box<[OnceLock<Page>]>,
}

/// An element size, as a shift where it is a power of two (nearly always:
/// a division per access cost more than the rest of the lookup).
#[derive(Clone, Copy)]
pub(crate) struct Stride {
    bytes: usize,
    shift: Option<u32>,
}

impl Stride {
    fn new(bytes: usize) -> Self {
        Stride {
            bytes,
            shift: bytes.is_power_of_two().then(|| bytes.trailing_zeros()),
        }
    }

    /// The element at byte offset `offset`.
    #[inline]
    fn index(self, offset: usize) -> usize {
        match self.shift {
            Some(k) => offset >> k,
            None => offset / self.bytes,
        }
    }
}

impl DenseShadow {
    /// The shadow of `len` elements of `stride` bytes from `base`, whose
    /// first access covers `first` bytes.
    pub(crate) fn new(base: usize, len: usize, stride: usize, first: usize) -> Self {
        let end = base + len * stride;
        let grain = Grain::new(stride, first);
        let cells = grain.cells(base, end);
        DenseShadow {
            base,
            end,
            grain,
            cells,
            pages: (0..cells.div_ceil(PAGE)).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The cell of the part of an access from `a` (in the object) to `end`
    /// that lies in one cell, locked, or `Found::Bytes` when it lies in a
    /// split granule; and the first byte after the part. A split made here
    /// gives `spill` the bytes' shadows (under the cell's lock, so that
    /// they are in the map before another thread finds the granule split).
    #[inline]
    pub(crate) fn cell(
        &self,
        a: usize,
        end: usize,
        spill: impl FnMut(usize, Shadow),
    ) -> (Found<MutexGuard<'_, Shadow>>, usize) {
        debug_assert!((self.base..self.end).contains(&a));
        let part = self.grain.part(self.base, a, end);
        let (i, next) = (part.cell, part.next);
        let byte_grain = matches!(self.grain, Grain::Granule(_));
        let page = self.pages[i / PAGE].get_or_init(|| {
            let n = PAGE.min(self.cells - i / PAGE * PAGE);
            Page {
                cells: page_pool::take(n),
                spans: if byte_grain {
                    (0..n).map(|_| AtomicU16::new(0)).collect()
                } else {
                    Box::default()
                },
            }
        });
        let mut cell = page.cells[i % PAGE]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if !byte_grain {
            return (Found::Cell(cell), next);
        }
        // Relaxed: the span is read and written under the cell's lock.
        let mut span = page.spans[i % PAGE].load(Ordering::Relaxed);
        let here = part.on_cell(&mut cell, &mut span, spill);
        page.spans[i % PAGE].store(span, Ordering::Relaxed);
        (
            if here {
                Found::Cell(cell)
            } else {
                Found::Bytes
            },
            next,
        )
    }
}

/// The shadow of one local array of one work-group: as [`DenseShadow`],
/// without locks (one thread runs the group).
pub(crate) struct LocalDense {
    base: usize,
    end: usize,
    grain: Grain,
    cells: Cells,
    /// A span per cell for a byte-granular shadow, else empty.
    spans: Box<[u16]>,
}

impl LocalDense {
    /// As [`DenseShadow::new`].
    pub(crate) fn new(base: usize, len: usize, stride: usize, first: usize) -> Self {
        let end = base + len * stride;
        let grain = Grain::new(stride, first);
        let cells = grain.cells(base, end);
        LocalDense {
            base,
            end,
            grain,
            cells: Cells::new(local_pool::take(cells)),
            spans: match grain {
                Grain::Granule(_) => vec![0; cells].into_boxed_slice(),
                Grain::Element(_) => Box::default(),
            },
        }
    }

    /// As [`DenseShadow::cell`].
    #[inline]
    pub(crate) fn cell(
        &mut self,
        a: usize,
        end: usize,
        spill: impl FnMut(usize, Shadow),
    ) -> (Found<&mut Shadow>, usize) {
        let part = self.grain.part(self.base, a, end);
        let (i, next) = (part.cell, part.next);
        if let Grain::Element(_) = self.grain {
            return (Found::Cell(self.cells.get_mut(i)), next);
        }
        let here = part.on_cell(self.cells.get_mut(i), &mut self.spans[i], spill);
        (
            if here {
                Found::Cell(self.cells.get_mut(i))
            } else {
                Found::Bytes
            },
            next,
        )
    }
}

impl Drop for DenseShadow {
    /// Gives the pages back for the next launch (see `page_pool`).
    fn drop(&mut self) {
        for page in self.pages.iter_mut() {
            if let Some(page) = page.take() {
                page_pool::give_back(page.cells);
            }
        }
    }
}

impl LocalDense {
    /// Its cells, one per element of `stride` bytes from `base` (element
    /// `i`'s at `i`), for views that read them between accesses
    /// ([`GroupCheck::race_free_cells`](super::state::GroupCheck::race_free_cells));
    /// `None` if its cells are laid out otherwise (a byte array that an
    /// earlier access read as wider granules). Valid while `self` lives,
    /// and only between the group's accesses: each access reaches a cell
    /// through `&mut`.
    pub(crate) fn element_cells(&self, base: usize, stride: usize) -> Option<*const Shadow> {
        match self.grain {
            Grain::Element(s) if s.bytes == stride && self.base == base => {
                Some(self.cells.ptr.as_ptr().cast_const())
            }
            _ => None,
        }
    }
}

impl Drop for LocalDense {
    fn drop(&mut self) {
        local_pool::give_back(self.cells.take());
    }
}

/// A local array's cells, owned through a raw pointer instead of a `Box`,
/// so that the views the group's loops hold can read them between the
/// group's accesses through copies of the pointer
/// ([`LocalDense::element_cells`]): each access reborrows one cell from
/// the pointer, and a `Box` would claim all of them for every one.
struct Cells {
    ptr: NonNull<Shadow>,
    len: usize,
}

impl Cells {
    fn new(cells: Box<[Shadow]>) -> Self {
        let len = cells.len();
        // `into_raw` of a boxed slice is never null.
        let ptr = NonNull::new(Box::into_raw(cells).cast::<Shadow>()).expect("a box is not null");
        Cells { ptr, len }
    }

    #[inline]
    fn get_mut(&mut self, i: usize) -> &mut Shadow {
        assert!(i < self.len, "cell {i} of {}", self.len);
        // SAFETY: `ptr` holds `len` initialized cells, owned by `self`
        // (from `Box::into_raw` in `new`), and `i < len`. `&mut self` is
        // the only way to a `&mut` cell, so none other is live; the views'
        // reads through copies of the pointer happen between accesses,
        // never while this borrow lives (see `LocalDense::element_cells`).
        unsafe { &mut *self.ptr.as_ptr().add(i) }
    }

    /// The cells as the box they came from, leaving `self` empty.
    fn take(&mut self) -> Box<[Shadow]> {
        let (ptr, len) = (self.ptr, std::mem::replace(&mut self.len, 0));
        self.ptr = NonNull::dangling();
        // SAFETY: `ptr` and `len` are those `new` took from
        // `Box::into_raw` (a dangling pointer and 0, an empty box, after a
        // `take`), not yet given back: `self` no longer holds them.
        unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr.as_ptr(), len)) }
    }
}

/// Local memory's shadows kept per thread for the next work-group: every
/// group of a launch has the same local arrays, so each group's shadow is
/// the previous one's cells, emptied (and their boxes reused), instead of
/// a fresh allocation per group and array.
mod local_pool {
    use super::Shadow;
    use std::cell::RefCell;

    /// At most this many arrays are kept per thread.
    const KEEP: usize = 16;

    thread_local! {
        static FREE: RefCell<Vec<Box<[Shadow]>>> = const { RefCell::new(Vec::new()) };
    }

    /// `len` empty cells.
    pub(super) fn take(len: usize) -> Box<[Shadow]> {
        let found = FREE.with(|f| {
            let mut f = f.borrow_mut();
            let i = f.iter().position(|c| c.len() == len)?;
            Some(f.swap_remove(i))
        });
        found.unwrap_or_else(|| (0..len).map(|_| Shadow::default()).collect())
    }

    /// Empties `cells` and keeps them for reuse.
    pub(super) fn give_back(mut cells: Box<[Shadow]>) {
        if cells.is_empty() {
            return;
        }
        cells.iter_mut().for_each(Shadow::recycle);
        FREE.with(|f| {
            let mut f = f.borrow_mut();
            if f.len() == KEEP {
                f.remove(0);
            }
            f.push(cells);
        });
    }
}

/// Pages of the buffers' shadows kept for the next checked launch: a
/// buffer's shadow is some ten times its size, and a fresh page is
/// faulted in and zeroed by the kernel, then filled with empty cells,
/// which cost a checked reduction of 16M elements a third of its time.
/// A program that checks launch after launch (a test suite, a benchmark)
/// reuses the pages of the last ones instead, emptied as their shadows
/// are dropped. At most `KEEP_BYTES` are kept, for the whole process.
mod page_pool {
    use super::{Shadow, PAGE};
    use std::sync::Mutex;

    /// The most memory kept in free pages.
    const KEEP_BYTES: usize = 1 << 30;
    const KEEP: usize = KEEP_BYTES / (PAGE * std::mem::size_of::<Mutex<Shadow>>());

    // `std`'s mutex: a static needs a `const` constructor.
    static FREE: Mutex<Vec<Box<[Mutex<Shadow>]>>> = Mutex::new(Vec::new());

    /// `len` empty cells: a kept page where `len` is a whole page.
    pub(super) fn take(len: usize) -> Box<[Mutex<Shadow>]> {
        if len == PAGE {
            if let Some(p) = FREE.lock().unwrap_or_else(|e| e.into_inner()).pop() {
                return p;
            }
        }
        (0..len).map(|_| Mutex::default()).collect()
    }

    /// Empties a page's cells (their boxes go to this thread's pool) and
    /// keeps the page, if it is a whole one and there is room.
    pub(super) fn give_back(mut cells: Box<[Mutex<Shadow>]>) {
        for c in cells.iter_mut() {
            c.get_mut().unwrap_or_else(|e| e.into_inner()).recycle();
        }
        let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
        if cells.len() == PAGE && free.len() < KEEP {
            free.push(cells);
        }
    }
}

/// A shadow covering a range of addresses.
pub(crate) trait Covers {
    fn covers(&self, addr: usize) -> bool;
}

impl Covers for Arc<DenseShadow> {
    #[inline]
    fn covers(&self, addr: usize) -> bool {
        (self.base..self.end).contains(&addr)
    }
}

impl Covers for LocalDense {
    #[inline]
    fn covers(&self, addr: usize) -> bool {
        (self.base..self.end).contains(&addr)
    }
}

/// Moves the shadow covering `addr` to the front of `list` (a kernel
/// touches a few objects, and most accesses the one it touched last),
/// making it with `make` if the list has none. Whether there is one.
#[inline]
pub(crate) fn to_front<T: Covers>(
    list: &mut Vec<T>,
    addr: usize,
    make: impl FnOnce() -> Option<T>,
) -> bool {
    // The front one first, without a swap of it with itself (a local
    // array's shadow is a few words: moved three times per access).
    if list.first().is_some_and(|d| d.covers(addr)) {
        return true;
    }
    if let Some(i) = list.iter().position(|d| d.covers(addr)) {
        list.swap(0, i);
        return true;
    }
    match make() {
        Some(d) => {
            list.insert(0, d);
            true
        }
        None => false,
    }
}
