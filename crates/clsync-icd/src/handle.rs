//! Handles: what the ICD loader and the application hold.
//!
//! Every object the loader sees starts with a pointer to the dispatch table
//! (`cl_khr_icd`, cl_icd.h): the loader calls each API function through the
//! table of the function's first object argument. clsync's objects are
//! `Arc<Obj<T>>`, and a handle is the `Arc`'s raw pointer, whose first field
//! is that table pointer.
//!
//! # Validity
//!
//! A handle is checked before it is used: the registry maps every live
//! object's address to a weak reference of its type, so a stale, foreign or
//! garbage handle is an error code (`CL_INVALID_MEM_OBJECT`, ...) and is
//! never dereferenced. The application's reference count (`clRetain*`,
//! `clRelease*`) lives in the registry too; while it is above zero the
//! registry holds a strong reference. Objects also hold each other (a
//! buffer its context, a queued command its buffers), so an object outlives
//! its last `clRelease*` while something still uses it, as the
//! specification requires, and its handle stays valid until then.
//!
//! Every registry operation happens under one mutex; no `Arc<Obj<_>>` is
//! ever dropped while it is held (an object's drop takes it to leave the
//! registry).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::ffi::c_void;
use std::ops::Deref;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use opencl_sys::cl_icd::cl_icd_dispatch;

use crate::dispatch::DISPATCH;

/// What an object type does when its last reference goes.
pub trait Object: Send + Sync + 'static {
    /// Called once, as the object is destroyed, with the handle it had
    /// (for the application's destructor callbacks; the handle is no longer
    /// valid).
    fn destroyed(&mut self, _handle: usize) {}
}

/// An OpenCL object as the loader sees it: the dispatch table, then the
/// object.
#[repr(C)]
pub struct Obj<T: Object> {
    /// Must stay the first field (cl_icd.h).
    dispatch: &'static cl_icd_dispatch,
    inner: T,
}

/// A counted reference to an object.
pub type Ref<T> = Arc<Obj<T>>;

impl<T: Object> Deref for Obj<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T: Object> Drop for Obj<T> {
    fn drop(&mut self) {
        // The object is going: its address may be reused, so it leaves the
        // registry now (before its memory is freed).
        let h = self as *mut Self as usize;
        registry().remove(&h);
        self.inner.destroyed(h);
    }
}

struct Entry {
    ty: TypeId,
    /// A `Weak<Obj<T>>`.
    weak: Box<dyn Any + Send + Sync>,
    /// A `Ref<T>` while the application holds references.
    strong: Option<Box<dyn Any + Send + Sync>>,
    /// The application's reference count.
    refs: u32,
}

static REGISTRY: Mutex<Option<HashMap<usize, Entry>>> = Mutex::new(None);

/// The registry, locked. A panic elsewhere cannot leave it inconsistent
/// (every update is one map operation), so a poisoned lock is taken as is.
struct Registry(MutexGuard<'static, Option<HashMap<usize, Entry>>>);

impl Registry {
    fn map(&mut self) -> &mut HashMap<usize, Entry> {
        self.0.get_or_insert_with(HashMap::new)
    }
    fn remove(&mut self, key: &usize) {
        // Dropping an entry drops a `Weak` and no strong reference: an
        // object's drop only runs once its registry strong reference is
        // gone.
        let _ = self.map().remove(key);
    }
}

fn registry() -> Registry {
    Registry(REGISTRY.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Makes a new object and registers it, with one application reference.
pub fn create<T: Object>(inner: T) -> (Ref<T>, *mut c_void) {
    let obj = Arc::new(Obj {
        dispatch: &DISPATCH,
        inner,
    });
    let h = publish(&obj);
    (obj, h)
}

/// Makes a new object without handing it out (an event nobody asked for).
pub fn internal<T: Object>(inner: T) -> Ref<T> {
    Arc::new(Obj {
        dispatch: &DISPATCH,
        inner,
    })
}

/// Hands an object out: registers it (if it is not yet) and counts one
/// application reference. Returns the handle.
pub fn publish<T: Object>(obj: &Ref<T>) -> *mut c_void {
    let key = Arc::as_ptr(obj) as usize;
    let mut r = registry();
    let e = r.map().entry(key).or_insert_with(|| Entry {
        ty: TypeId::of::<T>(),
        weak: Box::new(Arc::downgrade(obj)),
        strong: None,
        refs: 0,
    });
    e.refs += 1;
    if e.strong.is_none() {
        e.strong = Some(Box::new(obj.clone()));
    }
    key as *mut c_void
}

/// The handle of an object (which may not be registered: internal events
/// are not).
pub fn handle<T: Object>(obj: &Ref<T>) -> *mut c_void {
    Arc::as_ptr(obj) as *mut c_void
}

/// The object behind a handle, if it is a live object of type `T`.
pub fn get<T: Object>(h: *const c_void) -> Option<Ref<T>> {
    if h.is_null() {
        return None;
    }
    let mut r = registry();
    let e = r.map().get(&(h as usize))?;
    if e.ty != TypeId::of::<T>() {
        return None;
    }
    e.weak.downcast_ref::<Weak<Obj<T>>>()?.upgrade()
}

/// `clRetain*`: one more application reference. False if the handle is not
/// a live `T`.
pub fn retain<T: Object>(h: *const c_void) -> bool {
    let Some(obj) = get::<T>(h) else {
        return false;
    };
    publish(&obj);
    true
}

/// `clRelease*`: one application reference less. False if the handle is
/// not a live `T` the application holds.
pub fn release<T: Object>(h: *const c_void) -> bool {
    let last = {
        let mut r = registry();
        let Some(e) = r.map().get_mut(&(h as usize)) else {
            return false;
        };
        if e.ty != TypeId::of::<T>() || e.refs == 0 {
            return false;
        }
        e.refs -= 1;
        if e.refs == 0 {
            e.strong.take()
        } else {
            None
        }
    };
    // Dropped with the registry unlocked: this may be the object's last
    // reference, and its drop takes the lock.
    drop(last);
    true
}

/// The application's reference count of an object (its
/// `CL_*_REFERENCE_COUNT`).
pub fn ref_count<T: Object>(obj: &Ref<T>) -> u32 {
    let mut r = registry();
    r.map()
        .get(&(Arc::as_ptr(obj) as usize))
        .map_or(0, |e| e.refs)
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Object for u64 {}
    impl Object for u32 {}

    #[test]
    fn handles_are_checked_and_counted() {
        let (obj, h) = create(7u64);
        assert_eq!(**get::<u64>(h).unwrap(), 7);
        // Another type's handle, or garbage, is not a u64 object.
        assert!(get::<u32>(h).is_none());
        assert!(get::<u64>(0x1000 as *const c_void).is_none());
        assert!(retain::<u64>(h));
        assert_eq!(ref_count(&obj), 2);
        assert!(release::<u64>(h) && release::<u64>(h));
        assert_eq!(ref_count(&obj), 0);
        // Released by the application, still alive through `obj`: a
        // further release is an error, the object is still there.
        assert!(!release::<u64>(h));
        assert!(get::<u64>(h).is_some());
        drop(obj);
        assert!(get::<u64>(h).is_none());
    }
}
