//! Types and their layout.
//!
//! OpenCL C lays out data as C does on the device: each scalar and vector
//! aligned to its size (a 3-component vector takes the size and alignment
//! of the 4-component one), a struct's members in order, each at the next
//! offset its alignment allows, the struct aligned to its largest member
//! and padded to a multiple of that, unless the struct is packed (SPIR-V's
//! `CPacked` decoration: no padding, alignment 1).

use rspirv::spirv::{StorageClass, Word};

use crate::reader::invalid;
use crate::{Module, SpirvError};

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

/// Layout: sizes, alignments, offsets and the flattened scalars of types.
impl Module {
    /// The layout of type `id` in memory.
    pub fn layout(&self, id: Word) -> Result<Layout, SpirvError> {
        let l = |size: u64| Layout { size, align: size };
        Ok(match self.ty(id)? {
            Type::Void => l(1),
            Type::Bool => l(1),
            Type::Int(w) | Type::Float(w) => l((*w as u64).div_ceil(8).max(1)),
            Type::Pointer { .. } | Type::Event | Type::Opaque(_) => l(8),
            Type::Vector { elem, count } => {
                let e = self.layout(*elem)?.size;
                let n = if *count == 3 { 4 } else { *count as u64 };
                l(e * n)
            }
            Type::Array { elem, len } => {
                let e = self.layout(*elem)?;
                Layout {
                    size: e.size * len,
                    align: e.align,
                }
            }
            Type::Struct { members, packed } => {
                let (mut off, mut align) = (0u64, 1u64);
                for m in members {
                    let ml = self.layout(*m)?;
                    if !packed {
                        off = off.next_multiple_of(ml.align);
                        align = align.max(ml.align);
                    }
                    off += ml.size;
                }
                Layout {
                    size: off.next_multiple_of(align),
                    align,
                }
            }
            Type::Function { .. } => {
                return Err(invalid(format!("%{id}: a function type has no layout")))
            }
        })
    }

    /// The byte offsets of a struct's members.
    pub fn member_offsets(&self, id: Word) -> Result<Vec<u64>, SpirvError> {
        let Type::Struct { members, packed } = self.ty(id)? else {
            return Err(invalid(format!("%{id} is not a struct")));
        };
        let mut off = 0u64;
        let mut out = Vec::with_capacity(members.len());
        for m in members {
            let ml = self.layout(*m)?;
            if !packed {
                off = off.next_multiple_of(ml.align);
            }
            out.push(off);
            off += ml.size;
        }
        Ok(out)
    }

    /// The scalars of type `id`, flattened in order, with their offsets.
    pub fn leaves(&self, id: Word) -> Result<Vec<Leaf>, SpirvError> {
        let mut out = Vec::new();
        self.leaves_into(id, 0, &mut out)?;
        Ok(out)
    }

    fn leaves_into(&self, id: Word, base: u64, out: &mut Vec<Leaf>) -> Result<(), SpirvError> {
        const MAX_LEAVES: usize = 4096;
        if out.len() > MAX_LEAVES {
            return Err(SpirvError::Unsupported(format!(
                "a value of type %{id} has more than {MAX_LEAVES} scalars; clsync holds aggregate values in registers"
            )));
        }
        match self.ty(id)? {
            Type::Vector { elem, count } => {
                let e = self.layout(*elem)?.size;
                for k in 0..*count as u64 {
                    out.push(Leaf {
                        offset: base + k * e,
                        ty: *elem,
                    });
                }
            }
            Type::Array { elem, len } => {
                let e = self.layout(*elem)?.size;
                for k in 0..*len {
                    self.leaves_into(*elem, base + k * e, out)?;
                }
            }
            Type::Struct { members, .. } => {
                let offs = self.member_offsets(id)?;
                for (m, o) in members.clone().iter().zip(offs) {
                    self.leaves_into(*m, base + o, out)?;
                }
            }
            Type::Void | Type::Function { .. } => {}
            _ => out.push(Leaf {
                offset: base,
                ty: id,
            }),
        }
        Ok(())
    }

    /// How many leaves each member (struct), element (array) or component
    /// (vector) of `id` has, in order.
    pub fn part_leaf_counts(&self, id: Word) -> Result<Vec<usize>, SpirvError> {
        Ok(match self.ty(id)? {
            Type::Vector { count, .. } => vec![1; *count as usize],
            Type::Array { elem, len } => vec![self.leaves(*elem)?.len(); *len as usize],
            Type::Struct { members, .. } => members
                .iter()
                .map(|m| self.leaves(*m).map(|l| l.len()))
                .collect::<Result<_, _>>()?,
            _ => return Err(invalid(format!("%{id} is not a composite type"))),
        })
    }

    /// The type of part `index` of composite type `id`.
    pub fn part_type(&self, id: Word, index: u64) -> Result<Word, SpirvError> {
        Ok(match self.ty(id)? {
            Type::Vector { elem, .. } | Type::Array { elem, .. } => *elem,
            Type::Struct { members, .. } => *members.get(index as usize).ok_or_else(|| {
                invalid(format!(
                    "member {index} of struct %{id}, which has {}",
                    members.len()
                ))
            })?,
            _ => return Err(invalid(format!("%{id} is not a composite type"))),
        })
    }
}
