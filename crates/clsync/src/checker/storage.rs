//! Where shadow memory lives: dense per buffer or image (shared by the
//! worker threads, a lock per element, pages made on first touch), dense
//! per local array of a work-group (one thread, no lock), and a hash map for
//! addresses outside any registered object.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
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

/// Elements per page of a dense shadow.
const PAGE: usize = 4096;

/// One page of a dense shadow's cells.
type Page = Box<[Mutex<Shadow>]>;

/// The shadow of one buffer or image: a cell per element, each behind its
/// own lock (the elements are reached from every worker thread). Pages of
/// cells are made when first touched, by the thread that touches them, so
/// a large buffer costs shadow only where the kernel goes.
pub(crate) struct DenseShadow {
    base: usize,
    end: usize,
    stride: Stride,
    pages: Box<[OnceLock<Page>]>,
}

/// An element size, as a shift where it is a power of two (nearly always:
/// a division per access cost more than the rest of the lookup).
#[derive(Clone, Copy)]
struct Stride {
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
    pub(crate) fn new(base: usize, len: usize, stride: usize) -> Self {
        DenseShadow {
            base,
            end: base + len * stride,
            stride: Stride::new(stride),
            pages: (0..len.div_ceil(PAGE)).map(|_| OnceLock::new()).collect(),
        }
    }

    #[inline]
    pub(crate) fn cell(&self, addr: usize) -> Option<MutexGuard<'_, Shadow>> {
        (self.base..self.end).contains(&addr).then(|| {
            let i = self.stride.index(addr - self.base);
            let len = self.stride.index(self.end - self.base);
            let page = self.pages[i / PAGE].get_or_init(|| {
                let n = PAGE.min(len - i / PAGE * PAGE);
                (0..n).map(|_| Mutex::default()).collect()
            });
            page[i % PAGE].lock().unwrap_or_else(|e| e.into_inner())
        })
    }
}

/// The shadow of one local array of one work-group.
pub(crate) struct LocalDense {
    base: usize,
    end: usize,
    stride: Stride,
    cells: Box<[Shadow]>,
}

impl LocalDense {
    pub(crate) fn new(base: usize, len: usize, stride: usize) -> Self {
        LocalDense {
            base,
            end: base + len * stride,
            stride: Stride::new(stride),
            cells: local_pool::take(len),
        }
    }

    #[inline]
    pub(crate) fn cell(&mut self, addr: usize) -> &mut Shadow {
        &mut self.cells[self.stride.index(addr - self.base)]
    }
}

impl Drop for LocalDense {
    fn drop(&mut self) {
        local_pool::give_back(std::mem::take(&mut self.cells));
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
pub(crate) fn to_front<T: Covers>(
    list: &mut Vec<T>,
    addr: usize,
    make: impl FnOnce() -> Option<T>,
) -> bool {
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
