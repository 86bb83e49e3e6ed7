//! Shared virtual memory: allocations (an OpenCL platform's `clSVMAlloc`)
//! whose host addresses kernels use as they are.
//!
//! A pointer in compiled code is a slot and an offset ([`super::ctx`]); a
//! host address has slot 0, the null object, so its access misses the slot
//! table and reaches the fault handler, which looks it up here: inside a
//! registered allocation it is used as it is (the host's own address, so
//! that the host and the kernel share the bytes and their atomics, as
//! fine-grain SVM requires), anywhere else it is the invalid access it was.
//! A pointer stored in SVM memory by the host is such an address too.
//!
//! The lookup is off the common path (only SVM accesses take it) and takes
//! a read lock; allocations and frees take the write lock.

use std::collections::BTreeMap;
use std::sync::RwLock;

use super::ctx::OFFSET_BITS;

static REGIONS: RwLock<BTreeMap<usize, usize>> = RwLock::new(BTreeMap::new());

/// Makes `len` bytes from `base` shared virtual memory: kernels may access
/// them through their host addresses until [`unregister`].
pub fn register(base: *mut u8, len: usize) {
    REGIONS
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(base as usize, len);
}

/// Forgets the allocation at `base` (before its memory is freed).
pub fn unregister(base: *mut u8) {
    REGIONS
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&(base as usize));
}

/// Whether `size` bytes at host address `ptr` lie inside one registered
/// allocation.
pub fn contains(ptr: u64, size: u64) -> bool {
    if ptr >> OFFSET_BITS != 0 || ptr == 0 {
        return false;
    }
    let r = REGIONS.read().unwrap_or_else(|e| e.into_inner());
    match r.range(..=ptr as usize).next_back() {
        Some((&base, &len)) => ptr
            .checked_add(size)
            .is_some_and(|end| end <= (base + len) as u64),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_registered_bytes_are_shared() {
        let mut mem = vec![0u8; 64];
        let base = mem.as_mut_ptr();
        let at = base as u64;
        assert!(!contains(at, 4));
        register(base, 64);
        assert!(contains(at, 64) && contains(at + 60, 4));
        assert!(!contains(at + 61, 4) && !contains(at - 1, 1));
        // An encoded pointer (a slot above 0) is never a host address.
        assert!(!contains(at | (1 << OFFSET_BITS), 1));
        unregister(base);
        assert!(!contains(at, 1));
    }
}
