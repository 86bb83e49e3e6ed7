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
    stride: usize,
    pages: Box<[OnceLock<Page>]>,
}

impl DenseShadow {
    pub(crate) fn new(base: usize, len: usize, stride: usize) -> Self {
        DenseShadow {
            base,
            end: base + len * stride,
            stride,
            pages: (0..len.div_ceil(PAGE)).map(|_| OnceLock::new()).collect(),
        }
    }

    pub(crate) fn cell(&self, addr: usize) -> Option<MutexGuard<'_, Shadow>> {
        (self.base..self.end).contains(&addr).then(|| {
            let i = (addr - self.base) / self.stride;
            let len = (self.end - self.base) / self.stride;
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
    stride: usize,
    cells: Box<[Shadow]>,
}

impl LocalDense {
    pub(crate) fn new(base: usize, len: usize, stride: usize) -> Self {
        LocalDense {
            base,
            end: base + len * stride,
            stride,
            cells: (0..len).map(|_| Shadow::default()).collect(),
        }
    }

    pub(crate) fn cell(&mut self, addr: usize) -> &mut Shadow {
        &mut self.cells[(addr - self.base) / self.stride]
    }
}

/// A shadow covering a range of addresses.
pub(crate) trait Covers {
    fn covers(&self, addr: usize) -> bool;
}

impl Covers for Arc<DenseShadow> {
    fn covers(&self, addr: usize) -> bool {
        (self.base..self.end).contains(&addr)
    }
}

impl Covers for LocalDense {
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
