//! Types and their layout.
//!
//! OpenCL C lays out data as C does on the device: each scalar and vector
//! aligned to its size (a 3-component vector takes the size and alignment
//! of the 4-component one), a struct's members in order, each at the next
//! offset its alignment allows, the struct aligned to its largest member
//! and padded to a multiple of that, unless the struct is packed (SPIR-V's
//! `CPacked` decoration: no padding, alignment 1).

use rspirv::spirv::{StorageClass, Word};

/// A SPIR-V type, as an OpenCL kernel uses it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Type {
    /// `OpTypeVoid`.
    Void,
    /// `OpTypeBool`: the result of comparisons; not storable.
    Bool,
    /// `OpTypeInt`: OpenCL's SPIR-V leaves the sign to each instruction.
    Int(u32),
    /// `OpTypeFloat` of 16, 32 or 64 bits.
    Float(u32),
    /// `OpTypeVector` of `count` (2, 3, 4, 8 or 16) scalars.
    Vector {
        /// The component type.
        elem: Word,
        /// Number of components.
        count: u32,
    },
    /// `OpTypeArray` with a constant length.
    Array {
        /// The element type.
        elem: Word,
        /// Number of elements.
        len: u64,
    },
    /// `OpTypeStruct`.
    Struct {
        /// The member types.
        members: Vec<Word>,
        /// Whether it is `CPacked`.
        packed: bool,
    },
    /// `OpTypePointer`.
    Pointer {
        /// The address space.
        storage: StorageClass,
        /// What it points to.
        pointee: Word,
    },
    /// `OpTypeFunction`.
    Function {
        /// The return type.
        ret: Word,
        /// The parameter types.
        params: Vec<Word>,
    },
    /// `OpTypeEvent` (`event_t`), an opaque handle.
    Event,
    /// An opaque type held as a 64-bit handle: `OpTypeImage`,
    /// `OpTypeSampler`, `OpTypeOpaque`, `OpTypeSampledImage`,
    /// `OpTypeQueue`, `OpTypeReserveId`, `OpTypePipe`, `OpTypeDeviceEvent`.
    Opaque(&'static str),
}

/// Size and alignment in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Size, a multiple of `align` (except in packed structs' members).
    pub size: u64,
    /// Alignment, a power of two.
    pub align: u64,
}

/// One scalar of a type's flattened form: where it is, and what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leaf {
    /// Byte offset from the start of the value.
    pub offset: u64,
    /// The scalar's type id (an `Int`, `Float`, `Bool`, `Pointer`, `Event`
    /// or `Opaque` type).
    pub ty: Word,
}
