//! `cl_mem_fence_flags`: LOCAL, GLOBAL, IMAGE and their combinations.
//!
//! `000_96da91f170ff246f.txt`: "flags must be set to CLK_GLOBAL_MEM_FENCE,
//! CLK_LOCAL_MEM_FENCE, CLK_IMAGE_MEM_FENCE or a combination of these values
//! ORed together; otherwise the behavior is undefined." [`Flags`] makes the
//! undefined cases unspellable: the only values are the three constants and
//! what `|` makes of them, so zero and unknown bits cannot occur.
//!
//! ```
//! use clsync::sync::{FenceFlags, GLOBAL, IMAGE, LOCAL};
//! fn bits<F: FenceFlags>(_: F) -> u8 { F::BITS }
//! assert_eq!(bits(LOCAL | GLOBAL), 0b011);
//! assert_eq!(bits(GLOBAL | IMAGE | LOCAL), 0b111);
//! ```
//!
//! There is no way to make an empty set: flags only combine with `|`, and
//! `Flags` has no public constructor.
//!
//! ```compile_fail
//! use clsync::sync::{GLOBAL, LOCAL};
//! let none = LOCAL & GLOBAL;
//! ```
//!
//! ```compile_fail
//! let none = clsync::sync::Flags::<0>(());
//! ```

use std::fmt;
use std::ops::BitOr;

use super::sealed::Sealed;

/// A fence-flag set known at compile time; `BITS` is a combination of
/// LOCAL (1), GLOBAL (2) and IMAGE (4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flags<const BITS: u8>(());

/// `CLK_LOCAL_MEM_FENCE`: orders local memory.
pub const LOCAL: Flags<1> = Flags(());
/// `CLK_GLOBAL_MEM_FENCE`: orders global memory.
pub const GLOBAL: Flags<2> = Flags(());
/// `CLK_IMAGE_MEM_FENCE`: orders image memory.
pub const IMAGE: Flags<4> = Flags(());

/// Implemented by the seven legal flag sets.
pub trait FenceFlags: Copy + Sealed {
    /// The flag bits.
    const BITS: u8;
    /// The same set as a run-time value.
    fn mem_flags(self) -> MemFlags {
        MemFlags(Self::BITS)
    }
}

macro_rules! legal_flags {
    ($($b:literal)*) => {$(
        impl Sealed for Flags<$b> {}
        impl FenceFlags for Flags<$b> { const BITS: u8 = $b; }
    )*};
}
legal_flags!(1 2 3 4 5 6 7);

macro_rules! flags_or {
    ($($a:literal | $b:literal = $c:literal;)*) => {$(
        impl BitOr<Flags<$b>> for Flags<$a> {
            type Output = Flags<$c>;
            fn bitor(self, _: Flags<$b>) -> Flags<$c> { Flags(()) }
        }
    )*};
}
flags_or! {
    1|1=1; 1|2=3; 1|3=3; 1|4=5; 1|5=5; 1|6=7; 1|7=7;
    2|1=3; 2|2=2; 2|3=3; 2|4=6; 2|5=7; 2|6=6; 2|7=7;
    3|1=3; 3|2=3; 3|3=3; 3|4=7; 3|5=7; 3|6=7; 3|7=7;
    4|1=5; 4|2=6; 4|3=7; 4|4=4; 4|5=5; 4|6=6; 4|7=7;
    5|1=5; 5|2=7; 5|3=7; 5|4=5; 5|5=5; 5|6=7; 5|7=7;
    6|1=7; 6|2=6; 6|3=7; 6|4=6; 6|5=7; 6|6=6; 6|7=7;
    7|1=7; 7|2=7; 7|3=7; 7|4=7; 7|5=7; 7|6=7; 7|7=7;
}

/// A fence-flag set as a run-time value, always one of the seven legal sets.
/// Build one from raw bits with [`MemFlags::from_bits`], which rejects zero
/// and unknown bits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MemFlags(pub(crate) u8);

impl MemFlags {
    /// `CLK_LOCAL_MEM_FENCE`.
    pub const LOCAL: MemFlags = MemFlags(1);
    /// `CLK_GLOBAL_MEM_FENCE`.
    pub const GLOBAL: MemFlags = MemFlags(2);
    /// `CLK_IMAGE_MEM_FENCE`.
    pub const IMAGE: MemFlags = MemFlags(4);
    /// All three.
    pub const ALL: MemFlags = MemFlags(7);

    /// Checks raw `cl_mem_fence_flags` bits (LOCAL = 1, GLOBAL = 2,
    /// IMAGE = 4, as in OpenCL's headers).
    pub fn from_bits(bits: u32) -> Result<MemFlags, super::SyncError> {
        if bits == 0 {
            Err(super::SyncError::ZeroFlags)
        } else if bits & !7 != 0 {
            Err(super::SyncError::UnknownFlags { bits })
        } else {
            Ok(MemFlags(bits as u8))
        }
    }
    /// The raw bits.
    pub fn bits(self) -> u8 {
        self.0
    }
    /// Whether every flag of `other` is set here.
    pub fn contains(self, other: MemFlags) -> bool {
        self.0 & other.0 == other.0
    }
    /// Whether any flag of `other` is set here.
    pub fn intersects(self, other: MemFlags) -> bool {
        self.0 & other.0 != 0
    }
    /// The union of two sets.
    pub fn union(self, other: MemFlags) -> MemFlags {
        MemFlags(self.0 | other.0)
    }
}

impl fmt::Debug for MemFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for MemFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (bit, name) in [
            (1, "CLK_LOCAL_MEM_FENCE"),
            (2, "CLK_GLOBAL_MEM_FENCE"),
            (4, "CLK_IMAGE_MEM_FENCE"),
        ] {
            if self.0 & bit != 0 {
                if !first {
                    f.write_str(" | ")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        if first {
            f.write_str("0")?;
        }
        Ok(())
    }
}
