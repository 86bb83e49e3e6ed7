//! Which memory object an address belongs to, for naming it in reports.
//!
//! Atomic operations reach the checker with only the address of their
//! object (`&Atomic<T>` does not know its buffer), so buffers, images and,
//! while any checked launch runs, local arrays register their element range
//! here. Lookups happen only when a report is written.

use std::collections::BTreeMap;

use super::report::{MemoryRef, Space};
// `std`'s mutex, not `primitive`'s: a static needs a `const` constructor, and
// this registry is report bookkeeping, not a scheduler protocol.
use std::sync::Mutex;

struct Object {
    end: usize,
    stride: usize,
    space: Space,
    name: String,
}

static OBJECTS: Mutex<BTreeMap<usize, Object>> = Mutex::new(BTreeMap::new());

fn objects() -> std::sync::MutexGuard<'static, BTreeMap<usize, Object>> {
    OBJECTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers `len` elements of `stride` bytes from `base`. An empty object
/// has no addresses and is not registered.
pub(crate) fn register(base: usize, len: usize, stride: usize, space: Space, name: &str) {
    if len == 0 || stride == 0 {
        return;
    }
    objects().insert(
        base,
        Object {
            end: base + len * stride,
            stride,
            space,
            name: name.to_string(),
        },
    );
}

/// Forgets the object at `base`.
pub(crate) fn unregister(base: usize) {
    objects().remove(&base);
}

/// The object and element at `addr`, if it belongs to a registered object.
pub(crate) fn describe(addr: usize) -> Option<MemoryRef> {
    let objects = objects();
    let (&base, o) = objects.range(..=addr).next_back()?;
    (addr < o.end).then(|| MemoryRef {
        space: o.space,
        name: o.name.clone(),
        index: (addr - base) / o.stride,
    })
}

/// The extent of the object holding `addr`: its base, element count and
/// element size.
pub(crate) fn extent(addr: usize) -> Option<(usize, usize, usize)> {
    let objects = objects();
    let (&base, o) = objects.range(..=addr).next_back()?;
    (addr < o.end).then(|| (base, (o.end - base) / o.stride, o.stride))
}
