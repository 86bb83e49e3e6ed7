//! Work-group and sub-group collectives: the exchange every work-item of
//! the group (sub-group) deposits its value in before the collective's
//! barrier, and what each computes from all of them after it — a
//! reduction, its inclusive or exclusive scan, a clustered reduction, a
//! broadcast, a ballot.
//!
//! One implementation for both kinds of kernel: Rust kernels call
//! [`WorkItem`](crate::WorkItem)'s collectives (`wi.sub_group_reduce_add`,
//! `wi.work_group_broadcast`, ...), compiled OpenCL C calls the same
//! [`Exchanges`] and [`combine`] through its runtime helper, each with its
//! own barrier (which makes a collective not every work-item reaches a
//! divergence report, never a hang).
//!
//! # Memory ordering
//!
//! The exchange is behind a mutex, so a value deposited before the barrier
//! is seen by every work-item after it whatever the engine; the barrier of
//! a collective fences local memory (the runtime takes no barrier without
//! flags), so the checker takes a collective to order local memory as a
//! barrier does.

use std::collections::HashMap;
use std::sync::Mutex;

/// Which values a work-item's result combines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// All of them (`*_reduce_*`, `*_all`, `*_any`).
    Reduce,
    /// Its own and those before it (`*_scan_inclusive_*`).
    InclusiveScan,
    /// Those before it (`*_scan_exclusive_*`): the identity for the first.
    ExclusiveScan,
    /// Those of its cluster of `n` consecutive lanes
    /// (`sub_group_clustered_reduce_*`).
    Clustered(usize),
    /// The value of lane `n` (`*_broadcast`).
    Broadcast(usize),
    /// A bit per lane whose value is nonzero (`sub_group_ballot`).
    Ballot,
    /// The value of the lowest lane taking part (`sub_group_broadcast_first`,
    /// and `sub_group_elect` with each lane's own id as its value).
    First,
    /// 1 if every lane's value is the same, else 0
    /// (`sub_group_non_uniform_all_equal`).
    AllEqual,
}

/// A collective's identity in its launch: the group, the sub-group
/// (`u32::MAX` for the work-group's collectives), and the number of the
/// collective among that scope's collectives of each work-item.
pub type Key = ([usize; 3], u32, u64);

/// A non-uniform sub-group operation's identity in its launch: the
/// group, the sub-group and the operation (see
/// [`BarrierKind::SubGroupActive`](crate::sync::BarrierKind::SubGroupActive)).
pub type ActiveKey = ([usize; 3], u32, u64);

/// One collective's values, by lane, and how many lanes have read them.
struct Exchange {
    values: Vec<u64>,
    read: usize,
}

/// One run of a non-uniform operation: the values of the lanes that took
/// part (bit `k` of `present` for lane `k`; sub-groups have at most 64
/// lanes), how many have read, and whether its first reader came (after
/// which a lane that arrives at the operation opens the next run).
struct ActiveExchange {
    key: ActiveKey,
    values: [u64; 64],
    present: u64,
    read: u32,
}

/// Which run of a non-uniform operation a lane deposited in: what it
/// reads its result from (see [`Exchanges::deposit_active`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket(u64);

#[derive(Default)]
struct Open {
    uniform: HashMap<Key, Exchange>,
    /// The run of each operation that lanes arriving now deposit in.
    open: HashMap<ActiveKey, u64>,
    /// Every run not yet read by all of its lanes.
    active: HashMap<u64, Box<ActiveExchange>>,
    next: u64,
}

/// The open exchanges (a launch's or a group's).
#[derive(Default)]
pub struct Exchanges(Mutex<Open>);

impl std::fmt::Debug for Exchanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exchanges").finish_non_exhaustive()
    }
}

impl Exchanges {
    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        // Each update is one map operation: a poisoned lock (a panic
        // elsewhere) leaves the map consistent.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Deposits lane `lane`'s value (of `lanes`) before the barrier.
    pub fn deposit(&self, key: Key, lanes: usize, lane: usize, value: u64) {
        let mut all = self.lock();
        let e = all.uniform.entry(key).or_insert_with(|| Exchange {
            values: vec![0; lanes],
            read: 0,
        });
        if let Some(v) = e.values.get_mut(lane) {
            *v = value;
        }
    }

    /// After the barrier: lane `lane`'s result, `how` the values combine
    /// with `op` from `identity`. The last of the `lanes` to read frees the
    /// exchange. `None` if there is no such exchange (the barrier failed).
    pub fn result(
        &self,
        key: Key,
        lanes: usize,
        lane: usize,
        how: Combine,
        identity: u64,
        op: impl Fn(u64, u64) -> u64,
    ) -> Option<u64> {
        let mut all = self.lock();
        let e = all.uniform.get_mut(&key)?;
        let r = combine(&e.values, lane, how, identity, op);
        e.read += 1;
        if e.read == lanes {
            all.uniform.remove(&key);
        }
        Some(r)
    }

    /// Deposits lane `lane`'s value at the non-uniform operation `key`,
    /// before the lane waits there
    /// ([`WorkItem::sub_group_active_at`](crate::WorkItem::sub_group_active_at)):
    /// the lanes released from that wait together are the ones that
    /// deposited in the same run, whose ticket this is.
    ///
    /// Runs are told apart by their first read: the scheduler releases a
    /// run's lanes only once none of the sub-group can run (every lane that
    /// deposits in it has), and each released lane reads before it can
    /// arrive at the operation again, so a lane that arrives after the
    /// first read belongs to the next run.
    pub fn deposit_active(&self, key: ActiveKey, lane: usize, value: u64) -> Ticket {
        let mut all = self.lock();
        let all = &mut *all;
        let t = match all.open.get(&key) {
            Some(t) => *t,
            None => {
                let t = all.next;
                all.next += 1;
                all.open.insert(key, t);
                all.active.insert(
                    t,
                    Box::new(ActiveExchange {
                        key,
                        values: [0; 64],
                        present: 0,
                        read: 0,
                    }),
                );
                t
            }
        };
        if let Some(e) = all.active.get_mut(&t) {
            if let Some(v) = e.values.get_mut(lane) {
                *v = value;
                e.present |= 1 << lane;
            }
        }
        Ticket(t)
    }

    /// After the wait: lane `lane`'s result of the run `ticket`, over the
    /// lanes that took part in it only (see [`combine_active`]). The last
    /// of them to read frees the run. `None` if there is no such run.
    pub fn result_active(
        &self,
        ticket: Ticket,
        lane: usize,
        how: Combine,
        identity: u64,
        op: impl Fn(u64, u64) -> u64,
    ) -> Option<u64> {
        let mut all = self.lock();
        let all = &mut *all;
        let e = all.active.get_mut(&ticket.0)?;
        // The first read closes the run to new lanes.
        if all.open.get(&e.key) == Some(&ticket.0) {
            all.open.remove(&e.key);
        }
        let r = combine_active(&e.values, e.present, lane, how, identity, op);
        e.read += 1;
        if e.read >= e.present.count_ones() {
            all.active.remove(&ticket.0);
        }
        Some(r)
    }
}

/// Lane `lane`'s result from the values of the lanes set in `present`
/// (the active lanes of a non-uniform operation): a reduction or scan over
/// them only, a broadcast from a lane that is not among them reads 0 (the
/// specification leaves it undefined), `First` is the lowest lane's.
///
/// ```
/// use clsync::collective::{combine_active, Combine};
/// let v = [3u64, 1, 4, 1, 5, 9];
/// let add = |a: u64, b: u64| a + b;
/// let present = 0b110110; // lanes 1, 2, 4 and 5
/// assert_eq!(combine_active(&v, present, 4, Combine::Reduce, 0, add), 19);
/// assert_eq!(combine_active(&v, present, 4, Combine::InclusiveScan, 0, add), 10);
/// assert_eq!(combine_active(&v, present, 4, Combine::ExclusiveScan, 0, add), 5);
/// assert_eq!(combine_active(&v, present, 5, Combine::Clustered(2), 0, add), 14);
/// assert_eq!(combine_active(&v, present, 1, Combine::First, 0, add), 1);
/// assert_eq!(combine_active(&v, present, 1, Combine::Broadcast(0), 0, add), 0);
/// assert_eq!(combine_active(&v, present, 1, Combine::Ballot, 0, add), present);
/// ```
pub fn combine_active(
    values: &[u64],
    present: u64,
    lane: usize,
    how: Combine,
    identity: u64,
    op: impl Fn(u64, u64) -> u64,
) -> u64 {
    let values = &values[..values.len().min(64)];
    combine_over(values, |k| present >> k & 1 == 1, lane, how, identity, op)
}

/// Lane `lane`'s result from the values of the lanes `present` says take
/// part ([`combine`]: all of them; [`combine_active`]: the active ones).
fn combine_over(
    values: &[u64],
    present: impl Fn(usize) -> bool,
    lane: usize,
    how: Combine,
    identity: u64,
    op: impl Fn(u64, u64) -> u64,
) -> u64 {
    let n = values.len();
    let lanes = || (0..n).filter(|k| present(*k));
    let (from, upto) = match how {
        Combine::Broadcast(l) if l < n && present(l) => return values[l],
        Combine::Broadcast(_) => return 0,
        Combine::First => return lanes().next().map_or(0, |k| values[k]),
        Combine::AllEqual => {
            let mut vs = lanes().map(|k| values[k]);
            let first = vs.next();
            return u64::from(vs.all(|v| Some(v) == first));
        }
        Combine::Ballot => {
            return lanes()
                .filter(|k| values[*k] != 0 && *k < 64)
                .fold(0, |m, k| m | 1 << k)
        }
        Combine::Reduce => (0, n),
        Combine::InclusiveScan => (0, lane + 1),
        Combine::ExclusiveScan => (0, lane),
        Combine::Clustered(size) => {
            let size = size.max(1);
            (lane / size * size, lane / size * size + size)
        }
    };
    (from.min(n)..upto.min(n))
        .filter(|k| present(*k))
        .fold(identity, |acc, k| op(acc, values[k]))
}

/// Lane `lane`'s result from every lane's value.
///
/// ```
/// use clsync::collective::{combine, Combine};
/// let v = [3u64, 1, 4, 1, 5];
/// let add = |a: u64, b: u64| a + b;
/// assert_eq!(combine(&v, 2, Combine::Reduce, 0, add), 14);
/// assert_eq!(combine(&v, 2, Combine::InclusiveScan, 0, add), 8);
/// assert_eq!(combine(&v, 2, Combine::ExclusiveScan, 0, add), 4);
/// assert_eq!(combine(&v, 3, Combine::Clustered(2), 0, add), 5);
/// assert_eq!(combine(&v, 0, Combine::Broadcast(4), 0, add), 5);
/// assert_eq!(combine(&v, 0, Combine::Ballot, 0, add), 0b11111);
/// ```
pub fn combine(
    values: &[u64],
    lane: usize,
    how: Combine,
    identity: u64,
    op: impl Fn(u64, u64) -> u64,
) -> u64 {
    combine_over(values, |_| true, lane, how, identity, op)
}

/// A value a Rust kernel's collectives take: its bits, and the arithmetic
/// the reductions use.
pub trait GroupValue: Copy {
    /// The value as 64 bits.
    fn to_bits(self) -> u64;
    /// The value from [`to_bits`](GroupValue::to_bits)'s bits.
    fn from_bits(bits: u64) -> Self;
    /// `a + b` (wrapping for integers).
    fn add(a: Self, b: Self) -> Self;
    /// The smaller.
    fn min(a: Self, b: Self) -> Self;
    /// The larger.
    fn max(a: Self, b: Self) -> Self;
    /// The identity of `add`.
    const ZERO: Self;
    /// The identity of `min` (the largest value).
    const MIN_IDENTITY: Self;
    /// The identity of `max` (the smallest value).
    const MAX_IDENTITY: Self;
}

macro_rules! int_value {
    ($($t:ty)*) => {$(
        impl GroupValue for $t {
            fn to_bits(self) -> u64 { self as u64 }
            fn from_bits(bits: u64) -> Self { bits as $t }
            fn add(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            fn min(a: Self, b: Self) -> Self { Ord::min(a, b) }
            fn max(a: Self, b: Self) -> Self { Ord::max(a, b) }
            const ZERO: Self = 0;
            const MIN_IDENTITY: Self = <$t>::MAX;
            const MAX_IDENTITY: Self = <$t>::MIN;
        }
    )*};
}
int_value!(i32 u32 i64 u64);

macro_rules! float_value {
    ($($t:ty)*) => {$(
        impl GroupValue for $t {
            fn to_bits(self) -> u64 { <$t>::to_bits(self) as u64 }
            fn from_bits(bits: u64) -> Self { <$t>::from_bits(bits as _) }
            fn add(a: Self, b: Self) -> Self { a + b }
            fn min(a: Self, b: Self) -> Self { a.min(b) }
            fn max(a: Self, b: Self) -> Self { a.max(b) }
            const ZERO: Self = 0.0;
            const MIN_IDENTITY: Self = <$t>::INFINITY;
            const MAX_IDENTITY: Self = <$t>::NEG_INFINITY;
        }
    )*};
}
float_value!(f32 f64);
