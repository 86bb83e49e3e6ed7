//! A Rust kernel's non-uniform sub-group operations (`sub_group_elect`,
//! `sub_group_ballot`, `sub_group_non_uniform_reduce_add`, ...): OpenCL C's
//! built-ins of the `cl_khr_subgroup_ballot`, `_non_uniform_vote`,
//! `_non_uniform_arithmetic` and `_clustered_reduce` extensions, over
//! [`crate::collective`]'s active exchange, which compiled OpenCL C uses too.
//!
//! Unlike the collectives of `cl_khr_subgroups`, these need not be reached
//! by every work-item of the sub-group: the work-items that reach one
//! together are its *active set* and the result is computed over them only
//! (a reduction of the active lanes' values, a scan over the active lanes
//! before this one, the lowest active lane elected). Which work-items are
//! together is the scheduler's rule (see
//! [`BarrierKind::SubGroupActive`](crate::sync::BarrierKind::SubGroupActive)):
//! those waiting at the same operation once none of the sub-group can run
//! on, the earliest operation in the source first. They order no memory.
//!
//! ```
//! use clsync::{Buffer, Launch, NdRange, Runtime};
//!
//! let out: Buffer<u32> = Buffer::new(16);
//! let launch = Launch::new("odd", NdRange::new([16]).local([16]).sub_group_size(8));
//! Runtime::with_threads(1).launch(&launch, |wi| {
//!     let lane = wi.get_sub_group_local_id();
//!     if lane % 2 == 1 {
//!         // Only the odd lanes: 1 + 3 + 5 + 7, and lane 1 is elected.
//!         let sum = wi.sub_group_non_uniform_reduce_add(lane);
//!         out.set(wi.get_global_id(0), sum * 10 + u32::from(wi.sub_group_elect()));
//!     }
//! }).unwrap();
//! assert_eq!(out.get(1), 161);
//! assert_eq!(out.get(3), 160);
//! assert_eq!(out.get(0), 0);
//! ```

use std::panic::Location;

use super::WorkItem;
use crate::collective::{Combine, GroupValue};
use crate::sync::Site;

impl WorkItem<'_> {
    /// One non-uniform operation: deposit, the wait for the active set, the
    /// result over it.
    fn active<T: GroupValue>(
        &self,
        how: Combine,
        identity: T,
        op: fn(T, T) -> T,
        x: T,
        at: &'static Location<'static>,
    ) -> T {
        // The call site's address tells two operations apart; every
        // work-item of a launch runs the same closure, so one site has one
        // `Location`.
        let id = at as *const Location<'static> as u64;
        let key = (self.env.group_id, self.get_sub_group_id(), id);
        let lane = self.ids.sub_group_local_id;
        let ticket = self.env.exchanges.deposit_active(key, lane, x.to_bits());
        self.sub_group_active_at(Site::from(at), id);
        self.env
            .exchanges
            .result_active(ticket, lane, how, identity.to_bits(), |a, b| {
                op(T::from_bits(a), T::from_bits(b)).to_bits()
            })
            .map_or(identity, T::from_bits)
    }
}

macro_rules! non_uniform {
    ($($(#[$doc:meta])* $name:ident: $how:expr, $id:ident, $op:ident;)*) => {
        impl WorkItem<'_> {$(
            $(#[$doc])*
            #[track_caller]
            pub fn $name<T: GroupValue>(&self, x: T) -> T {
                self.active($how, T::$id, T::$op, x, Location::caller())
            }
        )*}
    };
}

non_uniform! {
    /// `sub_group_non_uniform_reduce_add(x)`: the sum over the active lanes.
    sub_group_non_uniform_reduce_add: Combine::Reduce, ZERO, add;
    /// `sub_group_non_uniform_reduce_min(x)`.
    sub_group_non_uniform_reduce_min: Combine::Reduce, MIN_IDENTITY, min;
    /// `sub_group_non_uniform_reduce_max(x)`.
    sub_group_non_uniform_reduce_max: Combine::Reduce, MAX_IDENTITY, max;
    /// `sub_group_non_uniform_scan_inclusive_add(x)`: the sum over the
    /// active lanes up to this one.
    sub_group_non_uniform_scan_inclusive_add: Combine::InclusiveScan, ZERO, add;
    /// `sub_group_non_uniform_scan_inclusive_min(x)`.
    sub_group_non_uniform_scan_inclusive_min: Combine::InclusiveScan, MIN_IDENTITY, min;
    /// `sub_group_non_uniform_scan_inclusive_max(x)`.
    sub_group_non_uniform_scan_inclusive_max: Combine::InclusiveScan, MAX_IDENTITY, max;
    /// `sub_group_non_uniform_scan_exclusive_add(x)`: the sum over the
    /// active lanes before this one; 0 for the first.
    sub_group_non_uniform_scan_exclusive_add: Combine::ExclusiveScan, ZERO, add;
    /// `sub_group_non_uniform_scan_exclusive_min(x)`.
    sub_group_non_uniform_scan_exclusive_min: Combine::ExclusiveScan, MIN_IDENTITY, min;
    /// `sub_group_non_uniform_scan_exclusive_max(x)`.
    sub_group_non_uniform_scan_exclusive_max: Combine::ExclusiveScan, MAX_IDENTITY, max;
    /// `sub_group_broadcast_first(x)`: the `x` of the lowest active lane.
    sub_group_broadcast_first: Combine::First, ZERO, add;
}

fn first(a: u32, _: u32) -> u32 {
    a
}

impl WorkItem<'_> {
    /// `sub_group_elect()`: true in the active lane with the lowest
    /// sub-group local id, false in the others.
    #[track_caller]
    pub fn sub_group_elect(&self) -> bool {
        let lane = self.ids.sub_group_local_id as u32;
        self.active(Combine::First, 0, first, lane, Location::caller()) == lane
    }
    /// `sub_group_non_uniform_broadcast(x, sub_group_local_id)`: lane
    /// `sub_group_local_id`'s `x`, which must be active (0 if it is not:
    /// the specification leaves the value undefined).
    #[track_caller]
    pub fn sub_group_non_uniform_broadcast<T: GroupValue>(
        &self,
        x: T,
        sub_group_local_id: u32,
    ) -> T {
        let how = Combine::Broadcast(sub_group_local_id as usize);
        self.active(how, T::ZERO, T::add, x, Location::caller())
    }
    /// `sub_group_non_uniform_all(predicate)`: whether it holds in every
    /// active lane.
    #[track_caller]
    pub fn sub_group_non_uniform_all(&self, predicate: bool) -> bool {
        let and = |a: u32, b: u32| u32::from(a != 0 && b != 0);
        self.active(
            Combine::Reduce,
            1,
            and,
            u32::from(predicate),
            Location::caller(),
        ) != 0
    }
    /// `sub_group_non_uniform_any(predicate)`: whether it holds in some
    /// active lane.
    #[track_caller]
    pub fn sub_group_non_uniform_any(&self, predicate: bool) -> bool {
        let or = |a: u32, b: u32| u32::from(a != 0 || b != 0);
        self.active(
            Combine::Reduce,
            0,
            or,
            u32::from(predicate),
            Location::caller(),
        ) != 0
    }
    /// `sub_group_non_uniform_all_equal(x)`: whether every active lane's
    /// `x` is the same.
    #[track_caller]
    pub fn sub_group_non_uniform_all_equal<T: GroupValue>(&self, x: T) -> bool {
        let how = Combine::AllEqual;
        self.active(how, T::ZERO, T::add, x, Location::caller())
            .to_bits()
            != 0
    }
    /// `sub_group_ballot(predicate)` (`cl_khr_subgroup_ballot`): bit `k`
    /// set where lane `k` is active and its predicate holds (sub-groups
    /// have at most 64 lanes).
    #[track_caller]
    pub fn sub_group_ballot(&self, predicate: bool) -> u64 {
        let x = u64::from(predicate);
        self.active(Combine::Ballot, 0, first64, x, Location::caller())
    }
    /// `sub_group_clustered_reduce_add(x, clustersize)`
    /// (`cl_khr_subgroup_clustered_reduce`): the sum over the active lanes
    /// of this lane's cluster of `cluster` consecutive lanes.
    #[track_caller]
    pub fn sub_group_clustered_reduce_add<T: GroupValue>(&self, x: T, cluster: usize) -> T {
        let how = Combine::Clustered(cluster);
        self.active(how, T::ZERO, T::add, x, Location::caller())
    }
}

fn first64(a: u64, _: u64) -> u64 {
    a
}
