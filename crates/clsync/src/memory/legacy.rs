//! The OpenCL 1.x atomic functions (`atomic_add`, `atomic_inc`,
//! `atomic_cmpxchg` …, and the `atom_*` 64-bit ones of `cl_khr_int64_*`),
//! which work on plain `int`/`uint`/`long`/`ulong` elements of global and
//! local memory (and `atomic_xchg` on `float`).
//!
//! OpenCL C 2.0 gives them `memory_order_relaxed` and the scope of the memory
//! they touch: `memory_scope_device` for global, `memory_scope_work_group`
//! for local. Every element is stored in a Rust atomic, so they are atomic
//! read-modify-writes on the same storage the plain accesses use.
//!
//! ```
//! use clsync::Buffer;
//! let counters = Buffer::<u32>::new(2);
//! assert_eq!(counters.atomic_inc(1), 0);
//! assert_eq!(counters.atomic_add(1, 5), 1);
//! assert_eq!(counters.atomic_cmpxchg(1, 6, 9), 6);
//! assert_eq!(counters.get(1), 9);
//! ```

use std::panic::Location;
use std::sync::atomic::Ordering;

use super::scalar::{AtomicInteger, Element, RawAtomic, RmwOp, Scalar};
use super::{Buffer, LocalSlice};
use crate::atomics::Effect;
use crate::checker::OpKind;
use crate::sync::{MemOrder, MemScope};

/// Where a legacy atomic runs: a global element (hardware atomic) or a local
/// one (load/store pair: only the group's thread reaches it).
trait Cells<T: Scalar> {
    const LOCAL: bool;
    fn cell(&self, index: usize, at: &'static Location<'static>) -> &T::Raw;
}

impl<T: Scalar + Element<Slot = <T as Scalar>::Raw>> Cells<T> for Buffer<T> {
    const LOCAL: bool = false;
    fn cell(&self, index: usize, at: &'static Location<'static>) -> &T::Raw {
        self.slot_at(index, true, at)
    }
}

impl<T: Scalar + Element<LocalSlot = <T as Scalar>::Raw>> Cells<T> for LocalSlice<T> {
    const LOCAL: bool = true;
    fn cell(&self, index: usize, at: &'static Location<'static>) -> &T::Raw {
        self.slot_at(index, true, at)
    }
}

/// A legacy read-modify-write: returns the old value.
#[inline]
fn rmw<T: AtomicInteger, C: Cells<T>>(
    c: &C,
    index: usize,
    op: RmwOp,
    v: T,
    name: &'static str,
    at: &'static Location<'static>,
) -> T {
    let cell = c.cell(index, at);
    checked::<T, C, _>(cell, name, at, || {
        let old = if C::LOCAL {
            // Relaxed: local memory is reached only by its group's thread,
            // and no work-item switch comes between the load and the store.
            let old = cell.load(Ordering::Relaxed);
            cell.store(<T::Raw as RawAtomic>::apply(op, old, v), Ordering::Relaxed);
            old
        } else {
            // Relaxed: OpenCL C 2.0 gives the legacy atomics relaxed order.
            cell.rmw(op, v, Ordering::Relaxed)
        };
        (
            old,
            Effect::rmw(old, <T::Raw as RawAtomic>::apply(op, old, v)),
        )
    })
}

/// Runs a legacy atomic under the checker: relaxed, at the scope of the
/// memory it touches.
#[inline(always)]
fn checked<T: Scalar, C: Cells<T>, R>(
    cell: &T::Raw,
    name: &'static str,
    at: &'static Location<'static>,
    f: impl FnOnce() -> (R, Effect),
) -> R {
    let scope = if C::LOCAL {
        MemScope::WorkGroup
    } else {
        MemScope::Device
    };
    let addr = cell as *const T::Raw as usize;
    crate::atomics::perform(
        addr,
        C::LOCAL,
        name,
        OpKind::Rmw,
        MemOrder::Relaxed,
        None,
        scope,
        at,
        f,
    )
}

#[inline]
fn xchg<T: Scalar, C: Cells<T>>(c: &C, index: usize, v: T, at: &'static Location<'static>) -> T {
    let cell = c.cell(index, at);
    checked::<T, C, _>(cell, "atomic_xchg", at, || {
        let old = if C::LOCAL {
            // Relaxed: as in `rmw`.
            let old = cell.load(Ordering::Relaxed);
            cell.store(v.to_raw(), Ordering::Relaxed);
            old
        } else {
            // Relaxed: as in `rmw`.
            cell.swap(v.to_raw(), Ordering::Relaxed)
        };
        (T::from_raw(old), Effect::rmw(old, v.to_raw()))
    })
}

#[inline]
fn cmpxchg<T: AtomicInteger, C: Cells<T>>(
    c: &C,
    index: usize,
    cmp: T,
    v: T,
    at: &'static Location<'static>,
) -> T {
    let cell = c.cell(index, at);
    checked::<T, C, _>(cell, "atomic_cmpxchg", at, || {
        let old = if C::LOCAL {
            // Relaxed: as in `rmw`.
            let old = cell.load(Ordering::Relaxed);
            if old == cmp {
                cell.store(v, Ordering::Relaxed);
            }
            old
        } else {
            // Relaxed: as in `rmw`.
            match cell.cas(cmp, v, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(old) | Err(old) => old,
            }
        };
        let effect = if old == cmp {
            Effect::rmw(old, v)
        } else {
            Effect::Read
        };
        (old, effect)
    })
}

macro_rules! legacy_api {
    ($ty:ident, $bound:ident) => {
        impl<T: AtomicInteger + Element<$bound = <T as Scalar>::Raw>> $ty<T> {
            /// `atomic_add(p, val)`: returns the old value.
            #[track_caller]
            pub fn atomic_add(&self, index: usize, val: T) -> T {
                rmw(
                    self,
                    index,
                    RmwOp::Add,
                    val,
                    "atomic_add",
                    Location::caller(),
                )
            }
            /// `atomic_sub(p, val)`: returns the old value.
            #[track_caller]
            pub fn atomic_sub(&self, index: usize, val: T) -> T {
                rmw(
                    self,
                    index,
                    RmwOp::Sub,
                    val,
                    "atomic_sub",
                    Location::caller(),
                )
            }
            /// `atomic_inc(p)`: returns the old value.
            #[track_caller]
            pub fn atomic_inc(&self, index: usize) -> T {
                rmw(
                    self,
                    index,
                    RmwOp::Add,
                    T::from_raw(<T::Raw as RawAtomic>::ONE),
                    "atomic_inc",
                    Location::caller(),
                )
            }
            /// `atomic_dec(p)`: returns the old value.
            #[track_caller]
            pub fn atomic_dec(&self, index: usize) -> T {
                rmw(
                    self,
                    index,
                    RmwOp::Sub,
                    T::from_raw(<T::Raw as RawAtomic>::ONE),
                    "atomic_dec",
                    Location::caller(),
                )
            }
            /// `atomic_min(p, val)`: returns the old value.
            #[track_caller]
            pub fn atomic_min(&self, index: usize, val: T) -> T {
                rmw(
                    self,
                    index,
                    RmwOp::Min,
                    val,
                    "atomic_min",
                    Location::caller(),
                )
            }
            /// `atomic_max(p, val)`: returns the old value.
            #[track_caller]
            pub fn atomic_max(&self, index: usize, val: T) -> T {
                rmw(
                    self,
                    index,
                    RmwOp::Max,
                    val,
                    "atomic_max",
                    Location::caller(),
                )
            }
            /// `atomic_and(p, val)`: returns the old value.
            #[track_caller]
            pub fn atomic_and(&self, index: usize, val: T) -> T {
                rmw(
                    self,
                    index,
                    RmwOp::And,
                    val,
                    "atomic_and",
                    Location::caller(),
                )
            }
            /// `atomic_or(p, val)`: returns the old value.
            #[track_caller]
            pub fn atomic_or(&self, index: usize, val: T) -> T {
                rmw(self, index, RmwOp::Or, val, "atomic_or", Location::caller())
            }
            /// `atomic_xor(p, val)`: returns the old value.
            #[track_caller]
            pub fn atomic_xor(&self, index: usize, val: T) -> T {
                rmw(
                    self,
                    index,
                    RmwOp::Xor,
                    val,
                    "atomic_xor",
                    Location::caller(),
                )
            }
            /// `atomic_cmpxchg(p, cmp, val)`: stores `val` if the element
            /// equals `cmp`; returns the old value either way.
            #[track_caller]
            pub fn atomic_cmpxchg(&self, index: usize, cmp: T, val: T) -> T {
                cmpxchg(self, index, cmp, val, Location::caller())
            }
            /// `atomic_xchg(p, val)`: returns the old value.
            #[track_caller]
            pub fn atomic_xchg(&self, index: usize, val: T) -> T {
                xchg(self, index, val, Location::caller())
            }
        }
    };
}
legacy_api!(Buffer, Slot);
legacy_api!(LocalSlice, LocalSlot);

impl Buffer<f32> {
    /// `atomic_xchg(p, val)` on a `float`: returns the old value.
    #[track_caller]
    pub fn atomic_xchg(&self, index: usize, val: f32) -> f32 {
        xchg(self, index, val, Location::caller())
    }
}

impl LocalSlice<f32> {
    /// `atomic_xchg(p, val)` on a `float`: returns the old value.
    #[track_caller]
    pub fn atomic_xchg(&self, index: usize, val: f32) -> f32 {
        xchg(self, index, val, Location::caller())
    }
}
