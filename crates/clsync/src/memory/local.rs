//! Local memory: one work-group's [`LocalSlice`]s, either sized at launch
//! ([`LocalArg`]) or declared in the kernel
//! ([`WorkItem::local_array`](crate::WorkItem::local_array)).

use std::any::{Any, TypeId};
use std::cell::{Cell, RefCell};
use std::fmt;
use std::marker::PhantomData;
use std::panic::Location;
use std::sync::Arc;

use super::scalar::{Element, RawAtomic, Scalar};
use crate::atomics::{Atomic, AtomicFlag, Global, Local};
use crate::checker::{self, Space};
use crate::scheduler::hooks;
use crate::sync::Site;
use crate::AtomicValue;

/// A run of local memory: one per work-group, shared by its work-items.
///
/// `!Send` and `!Sync`: only the worker thread running the group can reach
/// it, which is what lets local atomics skip locked instructions. Its contents
/// at the start of a group are unspecified, as in OpenCL (here: zero, except
/// that a group-level kernel's group may inherit the previous group's on the
/// same worker).
pub struct LocalSlice<T: Element> {
    /// The elements, then the scratch element of out-of-bounds accesses in
    /// checked launches.
    slots: Box<[T::LocalSlot]>,
    name: Arc<str>,
    /// Whether its launch is checked: accesses then report to the checker.
    /// A field rather than a global, so a loop over local memory can test
    /// it once (the compiler hoists the test) and vectorize.
    checked: bool,
    _not_sync: PhantomData<*const ()>,
}

impl<T: Element> LocalSlice<T> {
    fn new(len: usize, name: Arc<str>, checked: bool) -> Self {
        let slots: Box<[T::LocalSlot]> = (0..=len).map(|_| T::zero_local_slot()).collect();
        // Only checked launches name local arrays in reports; the registry
        // is not worth a lock per group otherwise.
        if checked {
            let stride = std::mem::size_of::<T::LocalSlot>();
            checker::register(slots.as_ptr() as usize, len, stride, Space::Local, &name);
        }
        LocalSlice {
            slots,
            name,
            checked,
            _not_sync: PhantomData,
        }
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.slots.len() - 1
    }
    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements' memory as bytes: the address of the first element and
    /// the length in bytes, for an engine that compiles kernels to native
    /// code (`clsync-opencl`). As with
    /// [`Buffer::raw_bytes`](crate::Buffer::raw_bytes), the elements have
    /// interior mutability; the memory belongs to the group's thread, and
    /// the pointer is valid while the group runs.
    pub fn raw_bytes(&self) -> (*mut u8, usize) {
        (
            self.slots.as_ptr() as *mut u8,
            self.len() * std::mem::size_of::<T::LocalSlot>(),
        )
    }
    /// Its name in reports.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Its elements (the scratch one not included) and whether its launch
    /// is checked.
    pub(crate) fn raw_parts(&self) -> (*const T::LocalSlot, usize, bool) {
        (self.slots.as_ptr(), self.len(), self.checked)
    }
    /// Element `index` (see [`super::element`]).
    #[inline]
    pub(crate) fn slot_at(
        &self,
        index: usize,
        write: bool,
        at: &'static Location<'static>,
    ) -> &T::LocalSlot {
        super::element(&self.slots, Space::Local, &self.name, index, write, at)
    }
}

impl<T: Element> Drop for LocalSlice<T> {
    fn drop(&mut self) {
        if self.checked {
            checker::unregister(self.slots.as_ptr() as usize);
        }
    }
}

impl<T: Scalar + Element<LocalSlot = <T as Scalar>::Raw>> LocalSlice<T> {
    /// Reads element `index`.
    #[inline]
    #[track_caller]
    pub fn get(&self, index: usize) -> T {
        let at = Location::caller();
        let slot = self.slot_at(index, false, at);
        // Out of bounds, the access was reported as such and went to the
        // scratch element, which is not the checker's business.
        if self.checked && index < self.len() {
            checker::plain(slot as *const _ as usize, Space::Local, false, at);
        }
        // SAFETY: the pointer is to a live, aligned, initialized cell of this
        // slice. The slice is neither `Send` nor `Sync` and hands out no
        // reference to its scalar cells, so every access to the cell, atomic
        // or not, happens on this thread: a plain read cannot race. (This is
        // what lets local memory work vectorize.)
        T::from_raw(unsafe { *slot.as_ptr() })
    }
    /// Writes element `index`.
    #[inline]
    #[track_caller]
    pub fn set(&self, index: usize, value: T) {
        let at = Location::caller();
        let slot = self.slot_at(index, true, at);
        if self.checked && index < self.len() {
            checker::plain(slot as *const _ as usize, Space::Local, true, at);
        }
        // SAFETY: as in `get`: only this thread reaches the cell.
        unsafe { *slot.as_ptr() = value.to_raw() }
    }
}

impl<T: AtomicValue> LocalSlice<Atomic<T, Global>> {
    /// The local atomic object at `index`.
    #[inline]
    #[track_caller]
    pub fn at(&self, index: usize) -> &Atomic<T, Local> {
        self.slot_at(index, true, Location::caller())
    }
}

impl LocalSlice<AtomicFlag<Global>> {
    /// The local atomic flag at `index`.
    #[inline]
    #[track_caller]
    pub fn at(&self, index: usize) -> &AtomicFlag<Local> {
        self.slot_at(index, true, Location::caller())
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

/// The most local memory one work-group may have, in bytes: its local
/// arguments and the arrays its kernel declares, together
/// (`CL_DEVICE_LOCAL_MEM_SIZE`). Each worker thread holds one group's local
/// memory at a time. A launch whose arguments ask for more fails before it
/// runs ([`LaunchError::Resource`](crate::LaunchError::Resource)); a
/// declaration that would pass it is a kernel panic at the declaration.
///
/// PoCL's CPU device reports 1 MiB, and GPUs 32–64 KiB (32 KiB is the
/// OpenCL minimum for a full-profile device): a kernel that needs more than
/// that here will not run there.
pub const MAX_LOCAL_MEM_SIZE: usize = 64 << 20;

/// The bytes `len` elements of `T` take in local memory (with the scratch
/// element that checked launches send out-of-bounds accesses to), or `None`
/// past `usize`.
fn local_bytes<T: Element>(len: usize) -> Option<usize> {
    len.checked_add(1)?
        .checked_mul(std::mem::size_of::<T::LocalSlot>())
}

/// A launch-time description of one local argument.
pub(crate) struct LocalDecl {
    pub(crate) make: fn(usize, Arc<str>, bool) -> Box<dyn Any>,
    pub(crate) len: usize,
    pub(crate) name: Arc<str>,
    /// Its size in local memory, or `None` past `usize`.
    pub(crate) bytes: Option<usize>,
}

impl LocalDecl {
    pub(crate) fn new<T: Element>(len: usize, name: Arc<str>) -> Self {
        LocalDecl {
            make: |len, name, checked| Box::new(LocalSlice::<T>::new(len, name, checked)),
            len,
            name,
            bytes: local_bytes::<T>(len),
        }
    }
}

/// A declared array that would take the group past [`MAX_LOCAL_MEM_SIZE`]:
/// a kernel panic at the declaration (`at`).
#[cold]
#[inline(never)]
fn too_much_local(at: &'static Location<'static>, len: usize, used: usize) -> ! {
    hooks::panic_at(
        at,
        format!(
            "a local array of {len} elements does not fit: the work-group already has {used} \
             bytes of local memory, and the limit is {MAX_LOCAL_MEM_SIZE} bytes \
             (MAX_LOCAL_MEM_SIZE)"
        ),
    )
}

/// Checks that a launch's local arguments fit in [`MAX_LOCAL_MEM_SIZE`];
/// the error names the largest and the total.
pub(crate) fn check_local_args(decls: &[LocalDecl]) -> Result<(), String> {
    let total = decls
        .iter()
        .try_fold(0usize, |sum, d| sum.checked_add(d.bytes?));
    match total {
        Some(t) if t <= MAX_LOCAL_MEM_SIZE => Ok(()),
        _ => {
            let largest = decls
                .iter()
                .max_by_key(|d| d.bytes.unwrap_or(usize::MAX))
                .expect("a total over the limit has a term");
            let size =
                |b: Option<usize>| b.map_or("more than usize::MAX".to_string(), |b| format!("{b}"));
            Err(format!(
                "its local arguments need {} bytes of local memory per work-group, `{}` {} of them \
                 ({} elements); the limit is {} bytes (MAX_LOCAL_MEM_SIZE)",
                size(total),
                largest.name,
                size(largest.bytes),
                largest.len,
                MAX_LOCAL_MEM_SIZE
            ))
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
    /// Arrays an earlier group declared (the arena is reused by a worker's
    /// next group in unchecked launches): a group that declares the same
    /// array with the same length takes it over instead of allocating.
    earlier: RefCell<Declared>,
    checked: bool,
    /// Bytes of the local arguments (checked against the limit at launch).
    args_bytes: usize,
    /// Bytes of this group's local memory so far: the arguments and the
    /// arrays declared.
    used: Cell<usize>,
}

impl LocalArena {
    pub(crate) fn new(decls: &[LocalDecl], checked: bool) -> Self {
        let args_bytes = decls.iter().map(|d| d.bytes.unwrap_or(0)).sum();
        LocalArena {
            args_bytes,
            used: Cell::new(args_bytes),
            args: decls
                .iter()
                .map(|d| (d.make)(d.len, d.name.clone(), checked))
                .collect(),
            declared: RefCell::new(Vec::new()),
            earlier: RefCell::new(Vec::new()),
            checked,
        }
    }

    /// Readies a reused arena for the next group: the arrays the last group
    /// declared become `earlier`, so that the next group's declarations
    /// (whose lengths may differ: a non-uniform range's last group is
    /// smaller) are checked against each other only. `&mut self`: no slice
    /// handed out before can be alive after this.
    #[inline]
    pub(crate) fn begin_group(&mut self) {
        self.used.set(self.args_bytes);
        let declared = self.declared.get_mut();
        if !declared.is_empty() {
            self.earlier.get_mut().append(declared);
        }
    }

    pub(crate) fn arg<T: Element>(&self, arg: LocalArg<T>) -> &LocalSlice<T> {
        self.args
            .get(arg.index)
            .and_then(|b| b.downcast_ref::<LocalSlice<T>>())
            .expect("LocalArg used with a launch other than the one that made it")
    }

    pub(crate) fn declared<T: Element>(
        &self,
        at: &'static Location<'static>,
        len: usize,
    ) -> &LocalSlice<T> {
        let site = Site::from_location(at);
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
                let bytes = local_bytes::<T>(len)
                    .and_then(|b| b.checked_add(self.used.get()))
                    .filter(|&total| total <= MAX_LOCAL_MEM_SIZE);
                let Some(total) = bytes else {
                    drop(declared);
                    too_much_local(at, len, self.used.get())
                };
                self.used.set(total);
                let mut earlier = self.earlier.borrow_mut();
                let slice = match earlier.iter().position(|(k, _, _)| *k == key) {
                    // An earlier group's array of the same length: the
                    // contents of local memory are unspecified when a group
                    // starts, so it is this group's as it is.
                    Some(i) if earlier[i].1 == len => earlier.swap_remove(i).2,
                    other => {
                        // Of another length: dropped (no reference to it is
                        // alive; see `begin_group`) and made anew.
                        if let Some(i) = other {
                            earlier.swap_remove(i);
                        }
                        let name: Arc<str> = format!("local array at {site}").into();
                        Box::new(LocalSlice::<T>::new(len, name, self.checked))
                    }
                };
                let ptr: *const LocalSlice<T> = slice
                    .downcast_ref::<LocalSlice<T>>()
                    .expect("keyed by type");
                declared.push((key, len, slice));
                ptr
            }
        };
        drop(declared);
        // SAFETY: `ptr` points into a `Box` owned by `self.declared`. Through
        // `&self`, entries are only ever appended to it, never removed or
        // replaced (only `begin_group`, which takes `&mut self`, moves them
        // out, to `earlier`), and moving a `Box` between the vectors does not
        // move its heap allocation. So the slice lives as long as `&self`,
        // the lifetime returned. No `&mut` to it is ever made.
        unsafe { &*ptr }
    }
}
