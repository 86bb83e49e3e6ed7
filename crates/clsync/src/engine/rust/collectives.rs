//! A Rust kernel's work-group and sub-group collectives
//! (`work_group_reduce_add`, `sub_group_scan_inclusive_min`,
//! `work_group_broadcast`, `sub_group_ballot`, ...): OpenCL C's built-ins
//! of the same names, over [`crate::collective`], the implementation
//! compiled OpenCL C uses too.
//!
//! Each is a barrier of its scope at the call's line (with the local
//! memory fence, as the runtime takes no barrier without flags): every
//! work-item of the group (sub-group) must reach it, or the launch fails
//! with a divergence error naming it, as for a barrier. They run on the
//! coroutine engine (`Runtime::launch`), where barriers suspend a
//! work-item.
//!
//! ```
//! use clsync::{Buffer, Launch, NdRange, Runtime};
//!
//! let out: Buffer<u32> = Buffer::new(64);
//! let launch = Launch::new("sums", NdRange::new([64]).local([16]).sub_group_size(8));
//! Runtime::with_threads(2).launch(&launch, |wi| {
//!     let x = wi.get_global_id(0) as u32;
//!     let group = wi.work_group_reduce_add(x);
//!     let before = wi.sub_group_scan_exclusive_add(x);
//!     out.set(wi.get_global_id(0), group * 1000 + before);
//! }).unwrap();
//! // Group 1 is items 16..32 (sum 376); item 20 is lane 4 of its sub-group
//! // of 16..24, after 16 + 17 + 18 + 19 = 70.
//! assert_eq!(out.get(20), 376 * 1000 + 70);
//! ```

use std::panic::Location;

use super::WorkItem;
use crate::collective::{Combine, GroupValue};
use crate::sync::{BarrierKind, MemFlags, MemScope, Site};

impl WorkItem<'_> {
    /// One collective: deposit, the barrier, the result.
    fn collective<T: GroupValue>(
        &self,
        sub: bool,
        how: Combine,
        identity: T,
        op: fn(T, T) -> T,
        x: T,
        at: &'static Location<'static>,
    ) -> T {
        let ids = self.ids;
        let (lane, lanes, which) = if sub {
            (
                ids.sub_group_local_id,
                self.get_sub_group_size() as usize,
                self.get_sub_group_id(),
            )
        } else {
            (
                ids.local_linear_id,
                self.env.local_size.iter().product(),
                u32::MAX,
            )
        };
        let mut counts = self.collectives.get();
        let k = counts[usize::from(sub)];
        counts[usize::from(sub)] += 1;
        self.collectives.set(counts);
        let key = (self.env.group_id, which, k);
        self.env.exchanges.deposit(key, lanes, lane, x.to_bits());
        let (kind, scope) = if sub {
            (BarrierKind::SubGroup, MemScope::SubGroup)
        } else {
            (BarrierKind::WorkGroup, MemScope::WorkGroup)
        };
        self.wait_at(kind, MemFlags::LOCAL, scope, Site::from(at));
        let bits = self
            .env
            .exchanges
            .result(key, lanes, lane, how, identity.to_bits(), |a, b| {
                op(T::from_bits(a), T::from_bits(b)).to_bits()
            });
        bits.map_or(identity, T::from_bits)
    }
}

macro_rules! collectives {
    ($($(#[$doc:meta])* $name:ident: $sub:expr, $how:expr, $id:ident, $op:ident;)*) => {
        impl WorkItem<'_> {$(
            $(#[$doc])*
            #[track_caller]
            pub fn $name<T: GroupValue>(&self, x: T) -> T {
                self.collective($sub, $how, T::$id, T::$op, x, Location::caller())
            }
        )*}
    };
}

collectives! {
    /// `work_group_reduce_add(x)`: the sum of every work-item's `x`.
    work_group_reduce_add: false, Combine::Reduce, ZERO, add;
    /// `work_group_reduce_min(x)`.
    work_group_reduce_min: false, Combine::Reduce, MIN_IDENTITY, min;
    /// `work_group_reduce_max(x)`.
    work_group_reduce_max: false, Combine::Reduce, MAX_IDENTITY, max;
    /// `work_group_scan_inclusive_add(x)`: the sum of `x` of the work-items
    /// up to this one (by local linear id).
    work_group_scan_inclusive_add: false, Combine::InclusiveScan, ZERO, add;
    /// `work_group_scan_inclusive_min(x)`.
    work_group_scan_inclusive_min: false, Combine::InclusiveScan, MIN_IDENTITY, min;
    /// `work_group_scan_inclusive_max(x)`.
    work_group_scan_inclusive_max: false, Combine::InclusiveScan, MAX_IDENTITY, max;
    /// `work_group_scan_exclusive_add(x)`: the sum of the work-items before
    /// this one; 0 for the first.
    work_group_scan_exclusive_add: false, Combine::ExclusiveScan, ZERO, add;
    /// `work_group_scan_exclusive_min(x)`: the largest value for the first.
    work_group_scan_exclusive_min: false, Combine::ExclusiveScan, MIN_IDENTITY, min;
    /// `work_group_scan_exclusive_max(x)`: the smallest value for the first.
    work_group_scan_exclusive_max: false, Combine::ExclusiveScan, MAX_IDENTITY, max;
    /// `sub_group_reduce_add(x)`: the sum over the sub-group.
    sub_group_reduce_add: true, Combine::Reduce, ZERO, add;
    /// `sub_group_reduce_min(x)`.
    sub_group_reduce_min: true, Combine::Reduce, MIN_IDENTITY, min;
    /// `sub_group_reduce_max(x)`.
    sub_group_reduce_max: true, Combine::Reduce, MAX_IDENTITY, max;
    /// `sub_group_scan_inclusive_add(x)` (by sub-group local id).
    sub_group_scan_inclusive_add: true, Combine::InclusiveScan, ZERO, add;
    /// `sub_group_scan_inclusive_min(x)`.
    sub_group_scan_inclusive_min: true, Combine::InclusiveScan, MIN_IDENTITY, min;
    /// `sub_group_scan_inclusive_max(x)`.
    sub_group_scan_inclusive_max: true, Combine::InclusiveScan, MAX_IDENTITY, max;
    /// `sub_group_scan_exclusive_add(x)`: 0 for lane 0.
    sub_group_scan_exclusive_add: true, Combine::ExclusiveScan, ZERO, add;
    /// `sub_group_scan_exclusive_min(x)`.
    sub_group_scan_exclusive_min: true, Combine::ExclusiveScan, MIN_IDENTITY, min;
    /// `sub_group_scan_exclusive_max(x)`.
    sub_group_scan_exclusive_max: true, Combine::ExclusiveScan, MAX_IDENTITY, max;
}

fn and(a: u32, b: u32) -> u32 {
    u32::from(a != 0 && b != 0)
}
fn or(a: u32, b: u32) -> u32 {
    u32::from(a != 0 || b != 0)
}

impl WorkItem<'_> {
    /// `*_all` (`all`) or `*_any` of `predicate` over the work-group or
    /// (`sub`) the sub-group: a reduction of 0 and 1.
    fn vote(&self, sub: bool, all: bool, predicate: bool, at: &'static Location<'static>) -> bool {
        let (identity, op): (u32, fn(u32, u32) -> u32) = if all { (1, and) } else { (0, or) };
        self.collective(sub, Combine::Reduce, identity, op, u32::from(predicate), at) != 0
    }
}

impl WorkItem<'_> {
    /// `work_group_broadcast(x, local_id)`: the `x` of the work-item whose
    /// local linear id is `local_linear_id` (the local id itself in one
    /// dimension).
    #[track_caller]
    pub fn work_group_broadcast<T: GroupValue>(&self, x: T, local_linear_id: usize) -> T {
        let how = Combine::Broadcast(local_linear_id);
        self.collective(false, how, x, |a, _| a, x, Location::caller())
    }
    /// `sub_group_broadcast(x, sub_group_local_id)`: lane
    /// `sub_group_local_id`'s `x`.
    #[track_caller]
    pub fn sub_group_broadcast<T: GroupValue>(&self, x: T, sub_group_local_id: u32) -> T {
        let how = Combine::Broadcast(sub_group_local_id as usize);
        self.collective(true, how, x, |a, _| a, x, Location::caller())
    }
    /// `work_group_all(predicate)`.
    #[track_caller]
    pub fn work_group_all(&self, predicate: bool) -> bool {
        self.vote(false, true, predicate, Location::caller())
    }
    /// `work_group_any(predicate)`.
    #[track_caller]
    pub fn work_group_any(&self, predicate: bool) -> bool {
        self.vote(false, false, predicate, Location::caller())
    }
    /// `sub_group_all(predicate)`.
    #[track_caller]
    pub fn sub_group_all(&self, predicate: bool) -> bool {
        self.vote(true, true, predicate, Location::caller())
    }
    /// `sub_group_any(predicate)`.
    #[track_caller]
    pub fn sub_group_any(&self, predicate: bool) -> bool {
        self.vote(true, false, predicate, Location::caller())
    }
}
