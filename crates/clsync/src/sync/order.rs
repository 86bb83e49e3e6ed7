//! `memory_order`: the five orders, and which operations may take which.
//!
//! The restrictions (OpenCL C 2.0 §6.13.11, "memory order" restrictions; the
//! extract `000_96da91f170ff246f.txt` points to them): a load takes relaxed,
//! acquire or seq_cst; a store takes relaxed, release or seq_cst; a
//! compare-exchange's failure order is relaxed, acquire or seq_cst and no
//! stronger than its success order. The traits below admit exactly those.
//!
//! A load cannot take release:
//!
//! ```compile_fail
//! fn f(a: &clsync::AtomicInt) { a.load_explicit(clsync::sync::Release); }
//! ```
//!
//! A store cannot take acquire:
//!
//! ```compile_fail
//! fn f(a: &clsync::AtomicInt) { a.store_explicit(1, clsync::sync::Acquire); }
//! ```
//!
//! A failure order cannot be release, nor stronger than the success order:
//!
//! ```compile_fail
//! use clsync::sync::{Release, SeqCst};
//! fn f(a: &clsync::AtomicInt) { let _ = a.compare_exchange_strong_explicit(0, 1, SeqCst, Release); }
//! ```
//!
//! ```compile_fail
//! use clsync::sync::{Acquire, Relaxed};
//! fn f(a: &clsync::AtomicInt) { let _ = a.compare_exchange_strong_explicit(0, 1, Relaxed, Acquire); }
//! ```

use std::fmt;
use std::sync::atomic::Ordering;

use super::sealed::Sealed;

/// A memory order as a run-time value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemOrder {
    /// `memory_order_relaxed`.
    Relaxed,
    /// `memory_order_acquire`.
    Acquire,
    /// `memory_order_release`.
    Release,
    /// `memory_order_acq_rel`.
    AcqRel,
    /// `memory_order_seq_cst`.
    SeqCst,
}

impl MemOrder {
    /// The Rust ordering with the same C11 meaning. OpenCL's orders are
    /// C11's, so the mapping is one to one.
    pub fn to_std(self) -> Ordering {
        match self {
            MemOrder::Relaxed => Ordering::Relaxed,
            MemOrder::Acquire => Ordering::Acquire,
            MemOrder::Release => Ordering::Release,
            MemOrder::AcqRel => Ordering::AcqRel,
            MemOrder::SeqCst => Ordering::SeqCst,
        }
    }
    /// Whether the order has acquire semantics.
    pub fn is_acquire(self) -> bool {
        matches!(
            self,
            MemOrder::Acquire | MemOrder::AcqRel | MemOrder::SeqCst
        )
    }
    /// Whether the order has release semantics.
    pub fn is_release(self) -> bool {
        matches!(
            self,
            MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst
        )
    }
    /// The OpenCL C spelling.
    pub fn name(self) -> &'static str {
        match self {
            MemOrder::Relaxed => "memory_order_relaxed",
            MemOrder::Acquire => "memory_order_acquire",
            MemOrder::Release => "memory_order_release",
            MemOrder::AcqRel => "memory_order_acq_rel",
            MemOrder::SeqCst => "memory_order_seq_cst",
        }
    }
}

impl fmt::Display for MemOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A memory order known at compile time.
pub trait Order: Copy + Sealed {
    /// The order as a value.
    const ORDER: MemOrder;
}

/// Orders a load may take: relaxed, acquire, seq_cst.
pub trait LoadOrder: Order {}
/// Orders a store may take: relaxed, release, seq_cst.
pub trait StoreOrder: Order {}
/// Orders a read-modify-write may take: all five.
pub trait RmwOrder: Order {}
/// Orders a fence may take: all five (relaxed has no effect).
pub trait FenceOrder: Order {}
/// Failure orders of a compare-exchange whose success order is `S`: relaxed,
/// acquire or seq_cst, and no stronger than `S`.
pub trait FailureOrderFor<S: Order>: Order {}

macro_rules! orders {
    ($($name:ident => $v:ident, $doc:literal;)*) => {$(
        #[doc = $doc]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name;
        impl Sealed for $name {}
        impl Order for $name { const ORDER: MemOrder = MemOrder::$v; }
        impl RmwOrder for $name {}
        impl FenceOrder for $name {}
    )*};
}
orders! {
    Relaxed => Relaxed, "`memory_order_relaxed`.";
    Acquire => Acquire, "`memory_order_acquire`.";
    Release => Release, "`memory_order_release`.";
    AcqRel => AcqRel, "`memory_order_acq_rel`.";
    SeqCst => SeqCst, "`memory_order_seq_cst`.";
}

impl LoadOrder for Relaxed {}
impl LoadOrder for Acquire {}
impl LoadOrder for SeqCst {}
impl StoreOrder for Relaxed {}
impl StoreOrder for Release {}
impl StoreOrder for SeqCst {}

impl<S: Order> FailureOrderFor<S> for Relaxed {}
impl FailureOrderFor<Acquire> for Acquire {}
impl FailureOrderFor<AcqRel> for Acquire {}
impl FailureOrderFor<SeqCst> for Acquire {}
impl FailureOrderFor<SeqCst> for SeqCst {}
