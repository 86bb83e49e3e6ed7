//! [`Schedule`]: the order the scheduler runs work-groups and work-items in.
//!
//! OpenCL promises no order between work-groups, nor between the work-items
//! of a group between two barriers. A kernel that is only correct in one
//! order has a bug the default order may hide; a checked run under several
//! shuffled schedules shows it, as a different interleaving (and so a
//! different execution for the checker to judge).

/// The order of work-groups and work-items.
///
/// ```
/// use clsync::{Buffer, Launch, NdRange, Runtime, Schedule};
/// let order = Buffer::<u32>::new(8);
/// let next = Buffer::<u32>::new(1);
/// let launch = Launch::new("order", NdRange::new([8]).local([1]))
///     .schedule(Schedule::Shuffled(7));
/// Runtime::with_threads(1).launch(&launch, |wi| {
///     let k = next.atomic_inc(0);
///     order.set(k as usize, wi.get_group_id(0) as u32);
/// }).unwrap();
/// let mut seen = order.to_vec();
/// seen.sort();
/// assert_eq!(seen, (0..8).collect::<Vec<_>>());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Schedule {
    /// Groups in linear order; in each round, a group's work-items in local
    /// linear order.
    #[default]
    InOrder,
    /// Groups in a pseudo-random order drawn from the seed; in each round,
    /// a group's work-items in a fresh pseudo-random order.
    Shuffled(u64),
}

impl Schedule {
    /// The order to hand out `total` groups in, or `None` for linear order.
    pub(crate) fn group_order(self, total: usize) -> Option<Vec<usize>> {
        match self {
            Schedule::InOrder => None,
            Schedule::Shuffled(seed) => {
                let mut order: Vec<usize> = (0..total).collect();
                fastrand::Rng::with_seed(seed).shuffle(&mut order);
                Some(order)
            }
        }
    }

    /// A source of work-item orders for the group `linear`, or `None` for
    /// local linear order.
    pub(crate) fn item_orders(self, linear: usize) -> Option<fastrand::Rng> {
        match self {
            Schedule::InOrder => None,
            Schedule::Shuffled(seed) => Some(fastrand::Rng::with_seed(
                seed ^ (linear as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            )),
        }
    }
}
