//! Accesses a compiler proved race-free, and what the checker still needs
//! of them: the shadow cells of a local array, which a view reads between
//! the group's accesses to skip the checker for such an access where the
//! cell says nothing would change.
//!
//! # The proof, and why the checker may skip
//!
//! `#[kernel]` proves an access to a local array race-free when no access
//! of another work-item that may fall in the same barrier interval (the
//! code between two work-group barriers that fence local memory) can
//! conflict with it: for each access that may share its interval (itself
//! included, by another work-item), both read, or both are at their
//! work-items' own elements (their local ids), or one is below a value the
//! whole group shares through the interval and the other at or above it.
//! Then:
//!
//! * no access of its interval races with it, so checking it finds
//!   nothing;
//! * every access that can race with one it would be recorded as (an
//!   access to the same element, unordered with it) lies in its interval:
//!   accesses in other intervals of the group are ordered with it by a
//!   barrier that fences local memory, and other groups have other local
//!   memory. Such an access is not race-free by the same proof, so it is
//!   checked, against a shadow that lacks only what this access would have
//!   added, which happens before it.
//!
//! What the record would still have said is whether the element was
//! written: a read of local memory no work-item wrote is a report. So the
//! skip is taken only where the cell holds a plain write and no atomic
//! history ([`Shadow::settled`]); elsewhere (the first write of an
//! element, a read before any write) the access is checked as any other,
//! and the report, if any, is the same.
//!
//! A local array of atomics whose every access is a relaxed operation of
//! work-group scope or wider, in a kernel with no fence
//! (`LocalView::at_quiet`), is the same argument without intervals: no two
//! such atomics race (their scopes include each other's work-items), none
//! synchronizes anything (relaxed, and no fence to order them), and
//! nothing else touches the array. What the checker still needs is whether
//! an element was written before an operation reads it ([`Shadow::written`]).
//!
//! The proof assumes the group runs barrier by barrier: a checked launch
//! that runs on from a divergent barrier
//! ([`Launch::run_on_divergence`](crate::Launch::run_on_divergence)) takes
//! no access at its word (`Group::trust_race_free`).

use std::num::NonZeroU32;

use super::item::Kind;
use super::objects;
use super::report::Space;
use super::shadow::Shadow;
use super::state::GroupCheck;
use super::storage::{to_front, Covers, Found, LocalDense};

impl GroupCheck {
    /// The shadow cells of the local array of `len` elements of `stride`
    /// bytes from `base` (element `i`'s at `i`), made now if this group has
    /// none yet, for a view's race-free accesses
    /// (`LocalView::get_race_free`); null if there are none laid out so.
    ///
    /// The pointer is valid while this group's check lives, which outlives
    /// the group's views, and may be read only between the group's
    /// accesses: each access reaches a cell through `&mut`, and none is
    /// live while a kernel's own code runs.
    pub(crate) fn race_free_cells(&self, base: usize, len: usize, stride: usize) -> *const Shadow {
        if len == 0 {
            return std::ptr::null();
        }
        let mut dense = self.local_dense.borrow_mut();
        let made = || {
            objects::extent(base)
                .filter(|&(b, n, s)| (b, n, s) == (base, len, stride))
                .map(|(b, n, s)| LocalDense::new(b, n, s, s))
        };
        if !to_front(&mut dense, base, made) {
            return std::ptr::null();
        }
        dense[0]
            .element_cells(base, stride)
            .unwrap_or(std::ptr::null())
    }

    /// A read by work-item `i` of the `len` bytes of local memory from
    /// `addr`, proven race-free by a compiler (`clsync-opencl`'s
    /// `translate::intervals`): nothing to do where the cell of those bytes
    /// in one of the group's two front shadows holds a plain write
    /// ([`Shadow::settled`]); anything else is [`plain`](Self::plain)'s
    /// read.
    pub(crate) fn race_free_read(&self, i: usize, addr: usize, len: usize, site: NonZeroU32) {
        let end = addr + len;
        {
            let mut dense = self.local_dense.borrow_mut();
            if let Some(d) = dense.iter_mut().take(2).find(|d| d.covers(addr)) {
                if let (Found::Cell(cell), next) = d.cell(addr, end, self.spill(Space::Local)) {
                    if next == end && cell.settled() {
                        return;
                    }
                }
            }
        }
        self.plain(i, addr, len, Space::Local, Kind::Read, site);
    }
}
