//! Local memory: one work-group's [`LocalSlice`]s, either sized at launch
//! ([`LocalArg`]) or declared in the kernel
//! ([`WorkItem::local_array`](crate::WorkItem::local_array)).

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;
use std::panic::Location;
use std::sync::atomic::Ordering;

use super::buffer::out_of_bounds;
use super::scalar::{Element, RawAtomic, Scalar};
use crate::atomics::{Atomic, AtomicFlag, Global, Local};
use crate::sync::Site;
use crate::AtomicValue;

/// A run of local memory: one per work-group, shared by its work-items.
///
/// `!Send` and `!Sync`: only the worker thread running the group can reach
/// it, which is what lets local atomics skip locked instructions. Its contents
/// at the start of a group are unspecified, as in OpenCL (here: zero).
pub struct LocalSlice<T: Element> {
    slots: Box<[T::LocalSlot]>,
    name: String,
    _not_sync: PhantomData<*const ()>,
}

impl<T: Element> LocalSlice<T> {
    fn new(len: usize, name: String) -> Self {
        LocalSlice {
            slots: (0..len).map(|_| T::zero_local_slot()).collect(),
            name,
            _not_sync: PhantomData,
        }
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.slots.len()
    }
    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
    /// Its name in reports.
    pub fn name(&self) -> &str {
        &self.name
    }
    #[inline]
    #[track_caller]
    fn slot(&self, index: usize) -> &T::LocalSlot {
        self.slot_at(index, Location::caller())
    }

    #[inline]
    pub(crate) fn slot_at(&self, index: usize, at: &'static Location<'static>) -> &T::LocalSlot {
        match self.slots.get(index) {
            Some(s) => s,
            None => out_of_bounds("local memory", &self.name, index, self.slots.len(), at),
        }
    }
}

impl<T: Scalar + Element<LocalSlot = <T as Scalar>::Raw>> LocalSlice<T> {
    /// Reads element `index`.
    #[inline]
    #[track_caller]
    pub fn get(&self, index: usize) -> T {
        // Relaxed: only this group's thread reaches local memory; program
        // order on that thread, with work-item switches only at barriers, is
        // the ordering.
        T::from_raw(self.slot(index).load(Ordering::Relaxed))
    }
    /// Writes element `index`.
    #[inline]
    #[track_caller]
    pub fn set(&self, index: usize, value: T) {
        // Relaxed: as in `get`.
        self.slot(index).store(value.to_raw(), Ordering::Relaxed)
    }
}

impl<T: AtomicValue> LocalSlice<Atomic<T, Global>> {
    /// The local atomic object at `index`.
    #[inline]
    #[track_caller]
    pub fn at(&self, index: usize) -> &Atomic<T, Local> {
        self.slot(index)
    }
}

impl LocalSlice<AtomicFlag<Global>> {
    /// The local atomic flag at `index`.
    #[inline]
    #[track_caller]
    pub fn at(&self, index: usize) -> &AtomicFlag<Local> {
        self.slot(index)
    }
}

impl<T: Element> fmt::Debug for LocalSlice<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalSlice")
            .field("name", &self.name)
            .field("type", &T::TYPE_NAME)
            .field("len", &self.len())
            .finish()
    }
}

/// A local-memory argument sized at launch, like `clSetKernelArg(k, i, size,
/// NULL)`: get one from [`Launch::local`](crate::Launch::local) and turn it
/// into the group's slice with [`WorkItem::local`](crate::WorkItem::local).
pub struct LocalArg<T: Element> {
    pub(crate) index: usize,
    pub(crate) launch: u64,
    _t: PhantomData<fn() -> T>,
}

impl<T: Element> LocalArg<T> {
    pub(crate) fn new(index: usize, launch: u64) -> Self {
        LocalArg {
            index,
            launch,
            _t: PhantomData,
        }
    }
}

impl<T: Element> Clone for LocalArg<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Element> Copy for LocalArg<T> {}

/// A launch-time description of one local argument.
pub(crate) struct LocalDecl {
    pub(crate) make: fn(usize, String) -> Box<dyn Any>,
    pub(crate) len: usize,
    pub(crate) name: String,
}

impl LocalDecl {
    pub(crate) fn new<T: Element>(len: usize, name: String) -> Self {
        LocalDecl {
            make: |len, name| Box::new(LocalSlice::<T>::new(len, name)),
            len,
            name,
        }
    }
}

/// Key of a kernel-declared local array: its declaration site and type.
#[derive(PartialEq, Eq)]
struct DeclKey {
    site: Site,
    ty: TypeId,
}

/// Kernel-declared arrays: key, length, the slice.
type Declared = Vec<(DeclKey, usize, Box<dyn Any>)>;

/// One work-group's local memory: the launch's local arguments, made when the
/// group starts, and the kernel's declared arrays, made when the first
/// work-item reaches their declaration.
pub(crate) struct LocalArena {
    args: Vec<Box<dyn Any>>,
    declared: RefCell<Declared>,
}

impl LocalArena {
    pub(crate) fn new(decls: &[LocalDecl]) -> Self {
        LocalArena {
            args: decls
                .iter()
                .map(|d| (d.make)(d.len, d.name.clone()))
                .collect(),
            declared: RefCell::new(Vec::new()),
        }
    }

    pub(crate) fn arg<T: Element>(&self, arg: LocalArg<T>) -> &LocalSlice<T> {
        self.args
            .get(arg.index)
            .and_then(|b| b.downcast_ref::<LocalSlice<T>>())
            .expect("LocalArg used with a launch other than the one that made it")
    }

    pub(crate) fn declared<T: Element>(&self, site: Site, len: usize) -> &LocalSlice<T> {
        let key = DeclKey {
            site,
            ty: TypeId::of::<T>(),
        };
        let mut declared = self.declared.borrow_mut();
        let ptr: *const LocalSlice<T> = match declared.iter().find(|(k, _, _)| *k == key) {
            Some((_, have, slice)) => {
                assert_eq!(
                    *have, len,
                    "local array declared at {site} with length {len} by this work-item but {have} by an earlier one"
                );
                slice
                    .downcast_ref::<LocalSlice<T>>()
                    .expect("keyed by type")
            }
            None => {
                let slice = Box::new(LocalSlice::<T>::new(len, format!("local array at {site}")));
                let ptr: *const LocalSlice<T> = &*slice;
                declared.push((key, len, slice));
                ptr
            }
        };
        drop(declared);
        // SAFETY: `ptr` points into a `Box` owned by `self.declared`. Entries
        // are only ever appended, never removed or replaced, until the arena
        // is dropped, and moving the `Box` within the `Vec` does not move its
        // heap allocation. So the slice lives as long as `&self`, the
        // lifetime returned. No `&mut` to it is ever made.
        unsafe { &*ptr }
    }
}
