//! The element types of memory, and the Rust atomics that store them.

use std::fmt::Debug;
use std::sync::atomic::{
    AtomicI16, AtomicI32, AtomicI64, AtomicI8, AtomicIsize, AtomicU16, AtomicU32, AtomicU64,
    AtomicU8, AtomicUsize, Ordering,
};

use crate::sync::sealed::Sealed;

/// A read-modify-write operation of the OpenCL C 2.0 `atomic_fetch_*` family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RmwOp {
    /// `atomic_fetch_add` (wrapping).
    Add,
    /// `atomic_fetch_sub` (wrapping).
    Sub,
    /// `atomic_fetch_or`.
    Or,
    /// `atomic_fetch_xor`.
    Xor,
    /// `atomic_fetch_and`.
    And,
    /// `atomic_fetch_min`.
    Min,
    /// `atomic_fetch_max`.
    Max,
}

impl RmwOp {
    /// The OpenCL C function.
    pub fn name(self) -> &'static str {
        match self {
            RmwOp::Add => "atomic_fetch_add",
            RmwOp::Sub => "atomic_fetch_sub",
            RmwOp::Or => "atomic_fetch_or",
            RmwOp::Xor => "atomic_fetch_xor",
            RmwOp::And => "atomic_fetch_and",
            RmwOp::Min => "atomic_fetch_min",
            RmwOp::Max => "atomic_fetch_max",
        }
    }
}

/// A Rust atomic integer used as storage. Implemented for the `std` atomics
/// of 8 to 64 bits.
pub trait RawAtomic: Send + Sync + Sealed + 'static {
    /// The plain integer type it holds.
    type Value: Copy + PartialEq + Debug + Send + Sync + 'static;
    /// The value 1.
    const ONE: Self::Value;
    /// A new cell.
    fn new(v: Self::Value) -> Self;
    /// `load`.
    fn load(&self, o: Ordering) -> Self::Value;
    /// `store`.
    fn store(&self, v: Self::Value, o: Ordering);
    /// `as_ptr`: the cell's storage, for non-atomic access where no other
    /// thread can reach the cell (local memory).
    fn as_ptr(&self) -> *mut Self::Value;
    /// `swap`.
    fn swap(&self, v: Self::Value, o: Ordering) -> Self::Value;
    /// `compare_exchange`.
    fn cas(
        &self,
        cur: Self::Value,
        new: Self::Value,
        s: Ordering,
        f: Ordering,
    ) -> Result<Self::Value, Self::Value>;
    /// `compare_exchange_weak`.
    fn cas_weak(
        &self,
        cur: Self::Value,
        new: Self::Value,
        s: Ordering,
        f: Ordering,
    ) -> Result<Self::Value, Self::Value>;
    /// The `fetch_*` operation `op`.
    fn rmw(&self, op: RmwOp, v: Self::Value, o: Ordering) -> Self::Value;
    /// What `op` computes from the old value and the operand.
    fn apply(op: RmwOp, old: Self::Value, v: Self::Value) -> Self::Value;
}

macro_rules! raw_atomic {
    ($($a:ty => $v:ty;)*) => {$(
        impl Sealed for $a {}
        impl RawAtomic for $a {
            type Value = $v;
            const ONE: $v = 1;
            #[inline] fn new(v: $v) -> Self { <$a>::new(v) }
            #[inline] fn load(&self, o: Ordering) -> $v { <$a>::load(self, o) }
            #[inline] fn store(&self, v: $v, o: Ordering) { <$a>::store(self, v, o) }
            #[inline] fn as_ptr(&self) -> *mut $v { <$a>::as_ptr(self) }
            #[inline] fn swap(&self, v: $v, o: Ordering) -> $v { <$a>::swap(self, v, o) }
            #[inline] fn cas(&self, c: $v, n: $v, s: Ordering, f: Ordering) -> Result<$v, $v> {
                <$a>::compare_exchange(self, c, n, s, f)
            }
            #[inline] fn cas_weak(&self, c: $v, n: $v, s: Ordering, f: Ordering) -> Result<$v, $v> {
                <$a>::compare_exchange_weak(self, c, n, s, f)
            }
            #[inline] fn rmw(&self, op: RmwOp, v: $v, o: Ordering) -> $v {
                match op {
                    RmwOp::Add => self.fetch_add(v, o),
                    RmwOp::Sub => self.fetch_sub(v, o),
                    RmwOp::Or => self.fetch_or(v, o),
                    RmwOp::Xor => self.fetch_xor(v, o),
                    RmwOp::And => self.fetch_and(v, o),
                    RmwOp::Min => self.fetch_min(v, o),
                    RmwOp::Max => self.fetch_max(v, o),
                }
            }
            #[inline] fn apply(op: RmwOp, old: $v, v: $v) -> $v {
                match op {
                    RmwOp::Add => old.wrapping_add(v),
                    RmwOp::Sub => old.wrapping_sub(v),
                    RmwOp::Or => old | v,
                    RmwOp::Xor => old ^ v,
                    RmwOp::And => old & v,
                    RmwOp::Min => old.min(v),
                    RmwOp::Max => old.max(v),
                }
            }
        }
    )*};
}
raw_atomic! {
    AtomicI8 => i8; AtomicU8 => u8; AtomicI16 => i16; AtomicU16 => u16;
    AtomicI32 => i32; AtomicU32 => u32; AtomicI64 => i64; AtomicU64 => u64;
    AtomicIsize => isize; AtomicUsize => usize;
}

/// A plain OpenCL C scalar (`char` … `double`, `size_t`) that global, local
/// and image memory can hold, with the atomic cell that stores it.
///
/// Every implementation (the trait is sealed) is an integer or float of the
/// cell's size whose `to_raw`/`from_raw` are bit casts, so a run of cells
/// may be read as an array of the scalar.
pub trait Scalar: Copy + PartialEq + Debug + Default + Send + Sync + Sealed + 'static {
    /// The storage cell.
    type Raw: RawAtomic;
    /// The OpenCL C name of the type.
    const NAME: &'static str;
    /// To the cell's representation.
    fn to_raw(self) -> <Self::Raw as RawAtomic>::Value;
    /// From the cell's representation.
    fn from_raw(raw: <Self::Raw as RawAtomic>::Value) -> Self;
}

macro_rules! int_scalar {
    ($($t:ty => $a:ty, $name:literal;)*) => {$(
        impl Sealed for $t {}
        impl Scalar for $t {
            type Raw = $a;
            const NAME: &'static str = $name;
            #[inline] fn to_raw(self) -> $t { self }
            #[inline] fn from_raw(r: $t) -> $t { r }
        }
    )*};
}
int_scalar! {
    i8 => AtomicI8, "char"; u8 => AtomicU8, "uchar"; i16 => AtomicI16, "short";
    u16 => AtomicU16, "ushort"; i32 => AtomicI32, "int"; u32 => AtomicU32, "uint";
    i64 => AtomicI64, "long"; u64 => AtomicU64, "ulong"; isize => AtomicIsize, "ptrdiff_t";
    usize => AtomicUsize, "size_t";
}

macro_rules! float_scalar {
    ($($t:ty => $a:ty, $bits:ty, $name:literal;)*) => {$(
        impl Sealed for $t {}
        impl Scalar for $t {
            type Raw = $a;
            const NAME: &'static str = $name;
            #[inline] fn to_raw(self) -> $bits { self.to_bits() }
            #[inline] fn from_raw(r: $bits) -> $t { <$t>::from_bits(r) }
        }
    )*};
}
float_scalar! { f32 => AtomicU32, u32, "float"; f64 => AtomicU64, u64, "double"; }

/// The value types of OpenCL C 2.0's atomic types: `int`, `uint`, `long`,
/// `ulong`, `float`, `double`, and the pointer-sized `intptr_t`/`ptrdiff_t`
/// (`isize`) and `uintptr_t`/`size_t` (`usize`).
///
/// `001_b96d5603ef61627c.txt`: `atomic_bool`, `atomic_char`, `atomic_uchar`,
/// `atomic_short`, `atomic_ushort`, `atomic_intmax_t` and `atomic_uintmax_t`
/// are not supported, so no atomic of those exists here:
///
/// ```compile_fail
/// let b: clsync::Buffer<clsync::Atomic<u8>> = clsync::Buffer::new(1);
/// ```
///
/// ```compile_fail
/// let b: clsync::Buffer<clsync::Atomic<bool>> = clsync::Buffer::new(1);
/// ```
///
/// ```compile_fail
/// let b: clsync::Buffer<clsync::Atomic<i16>> = clsync::Buffer::new(1);
/// ```
pub trait AtomicValue: Scalar {
    /// The OpenCL C name of the atomic type.
    const ATOMIC_NAME: &'static str;
}
macro_rules! atomic_value {
    ($($t:ty => $name:literal;)*) => {$( impl AtomicValue for $t { const ATOMIC_NAME: &'static str = $name; } )*};
}
atomic_value! {
    i32 => "atomic_int"; u32 => "atomic_uint"; i64 => "atomic_long"; u64 => "atomic_ulong";
    f32 => "atomic_float"; f64 => "atomic_double"; isize => "atomic_intptr_t"; usize => "atomic_size_t";
}

/// The atomic integer types, which alone have the `atomic_fetch_*` functions.
pub trait AtomicInteger: AtomicValue + Scalar<Raw: RawAtomic<Value = Self>> {}
impl AtomicInteger for i32 {}
impl AtomicInteger for u32 {}
impl AtomicInteger for i64 {}
impl AtomicInteger for u64 {}
impl AtomicInteger for isize {}
impl AtomicInteger for usize {}

/// Anything an element of a buffer or of local memory can be: a [`Scalar`],
/// an [`Atomic`](crate::Atomic) or an [`AtomicFlag`](crate::AtomicFlag).
pub trait Element: Sealed + 'static {
    /// How a global buffer stores one.
    type Slot: Send + Sync + 'static;
    /// How local memory stores one.
    type LocalSlot: 'static;
    /// The OpenCL C name of the type.
    const TYPE_NAME: &'static str;
    /// A zero-initialized global slot.
    fn zero_slot() -> Self::Slot;
    /// A zero-initialized local slot.
    fn zero_local_slot() -> Self::LocalSlot;
}

macro_rules! scalar_element {
    ($($t:ty)*) => {$(
        impl Element for $t {
            type Slot = <$t as Scalar>::Raw;
            type LocalSlot = <$t as Scalar>::Raw;
            const TYPE_NAME: &'static str = <$t as Scalar>::NAME;
            #[inline] fn zero_slot() -> Self::Slot { RawAtomic::new(<$t>::default().to_raw()) }
            #[inline] fn zero_local_slot() -> Self::LocalSlot { RawAtomic::new(<$t>::default().to_raw()) }
        }
    )*};
}
scalar_element!(i8 u8 i16 u16 i32 u32 i64 u64 isize usize f32 f64);
