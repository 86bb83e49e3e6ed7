//! A barrier arrival in two words, for engines whose barriers have a static
//! source location (Rust kernels, through `#[track_caller]`).

use std::panic::Location;

use super::{BarrierKind, BarrierWait, MemFlags, MemScope, Site};

/// Which barrier a work-item arrived at, as the site's static [`Location`]
/// and the kind, flags and scope packed in one word: what
/// [`Suspend::Arrived`](crate::engine::Suspend::Arrived) carries.
///
/// It stands for the [`BarrierWait`] that [`Arrival::wait`] makes, and is
/// cheaper to move and compare: the scheduler checks a uniform round's
/// arrivals against its first one as two words, and makes the
/// [`BarrierWait`] (reading the file name out of the `Location`) only for a
/// round that is not uniform. Two arrivals are equal when both words are;
/// two at the same site through two copies of its `Location` (one per
/// instance of a generic kernel) compare unequal here, so the scheduler
/// compares their waits before it calls them different barriers.
///
/// ```
/// use std::panic::Location;
/// use clsync::sync::{Arrival, BarrierKind, MemFlags, MemScope};
///
/// let at = Location::caller();
/// let a = Arrival::new(BarrierKind::WorkGroup, MemFlags::LOCAL, MemScope::WorkGroup, at);
/// let w = a.wait();
/// assert_eq!((w.kind, w.flags, w.scope), (BarrierKind::WorkGroup, MemFlags::LOCAL, MemScope::WorkGroup));
/// assert_eq!(w.site.line, at.line());
/// assert_eq!(a, Arrival::new(BarrierKind::WorkGroup, MemFlags::LOCAL, MemScope::WorkGroup, at));
/// assert_ne!(a, Arrival::new(BarrierKind::SubGroup, MemFlags::LOCAL, MemScope::WorkGroup, at));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    at: &'static Location<'static>,
    how: u32,
}

impl PartialEq for Arrival {
    #[inline]
    fn eq(&self, other: &Arrival) -> bool {
        // The same `Location` by address: two words compared, no file name
        // read.
        std::ptr::eq(self.at, other.at) && self.how == other.how
    }
}

impl Eq for Arrival {}

impl Arrival {
    /// The arrival at the barrier of `kind`, `flags` and `scope` at `at`.
    #[inline]
    pub fn new(
        kind: BarrierKind,
        flags: MemFlags,
        scope: MemScope,
        at: &'static Location<'static>,
    ) -> Self {
        let kind = match kind {
            BarrierKind::WorkGroup => 0,
            BarrierKind::SubGroup => 1,
            // Its wait carries the operation's identity, which these two
            // words have no room for: such a wait goes to the scheduler
            // whole (`WorkItem::sub_group_active_at`), never as an arrival.
            BarrierKind::SubGroupActive { .. } => {
                debug_assert!(false, "a non-uniform operation is not an Arrival");
                1
            }
        };
        // A scope's discriminant is its index in `MemScope::ALL`.
        let scope = scope as u32;
        Arrival {
            at,
            how: kind | (u32::from(flags.bits()) << 1) | (scope << 4),
        }
    }

    /// Work-group or sub-group barrier.
    #[inline]
    pub fn kind(self) -> BarrierKind {
        if self.how & 1 == 0 {
            BarrierKind::WorkGroup
        } else {
            BarrierKind::SubGroup
        }
    }

    /// Its fence flags.
    #[inline]
    pub fn flags(self) -> MemFlags {
        MemFlags(((self.how >> 1) & 7) as u8)
    }

    /// Its fence scope.
    #[inline]
    pub fn scope(self) -> MemScope {
        MemScope::ALL[(self.how >> 4) as usize]
    }

    /// Where the barrier is.
    #[inline]
    pub fn site(self) -> Site {
        Site::from(self.at)
    }

    /// The barrier wait this arrival stands for.
    #[inline]
    pub fn wait(self) -> BarrierWait {
        BarrierWait {
            kind: self.kind(),
            site: self.site(),
            flags: self.flags(),
            scope: self.scope(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every barrier a work-item can wait at survives the packing: each
    /// kind, each of the seven legal flag sets (`000_96da91f170ff246f.txt`)
    /// and each scope give back the same `BarrierWait`, and arrivals are equal exactly when their
    /// waits are (at one `Location`).
    #[test]
    fn arrivals_unpack_to_their_barrier() {
        let at = Location::caller();
        let mut all = Vec::new();
        for kind in [BarrierKind::WorkGroup, BarrierKind::SubGroup] {
            for bits in 1..=7 {
                let flags = MemFlags::from_bits(bits).expect("a legal set");
                for scope in MemScope::ALL {
                    let want = BarrierWait {
                        kind,
                        site: Site::from(at),
                        flags,
                        scope,
                    };
                    let a = Arrival::new(kind, flags, scope, at);
                    assert_eq!(a.wait(), want);
                    all.push((a, want));
                }
            }
        }
        for (a, w) in &all {
            for (b, v) in &all {
                assert_eq!(a == b, w == v, "{w} against {v}");
            }
        }
    }
}
