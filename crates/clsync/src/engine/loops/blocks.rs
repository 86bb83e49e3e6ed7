//! Register blocks: a loop over the work-items cut into blocks of `X`
//! consecutive work-items of a row, so that code which carries a value per
//! work-item through a loop of its own (a tiled SGEMM's accumulator through
//! its `k` loop) can keep a block's values in registers for the whole loop,
//! a vector of `X` lanes, instead of reading and writing each work-item's
//! value once per iteration.
//!
//! Running a block's work-items' iterations interleaved (iteration `k` of
//! every work-item of the block, then iteration `k + 1`) keeps each
//! work-item's own statements in order, which is all a group owes its
//! work-items between two barriers: without a barrier, their statements may
//! run in any interleaving (`004_bfca21a36d7bd2da.txt`; the memory model of
//! the OpenCL C specification's section 3.3, short of atomics and fences).
//! Like every reordering of work across work-items, it is for unchecked
//! launches: the checker knows an access as a work-item's only inside
//! [`Group::for_each`].

use std::cell::Cell;

use super::{Group, Item, IN_LOOP};

/// `X` consecutive work-items of one row of a group (the same local ids in
/// dimensions 1 and 2): the work-items one call of
/// [`Group::for_each_block`]'s block function runs.
///
/// ```
/// use clsync::{Buffer, Launch, NdRange, Runtime};
///
/// // Each work-item sums 0..=its global id; a block's 8 sums are carried
/// // in registers through the whole loop.
/// let out = Buffer::<u32>::new(40);
/// let launch = Launch::new("sums", NdRange::new([40]).local([20]));
/// Runtime::new().launch_groups(&launch, |g| {
///     let steps = 40;
///     g.for_each_block::<8>(
///         |b| {
///             let mut sums = [0u32; 8];
///             for k in 0..steps {
///                 b.each(|x, it| {
///                     if k <= it.global_linear_id {
///                         sums[x] += k as u32;
///                     }
///                 });
///             }
///             b.each(|x, it| out.set(it.global_linear_id, sums[x]));
///         },
///         |it| out.set(it.global_linear_id, (0..=it.global_linear_id as u32).sum()),
///     );
/// }).unwrap();
/// assert_eq!(out.get(39), 39 * 40 / 2);
/// assert_eq!(out.get(20), 20 * 21 / 2);
/// ```
pub struct Block<'a, const X: usize> {
    /// The block's first work-item.
    first: Item,
    /// The work-item `each` is running, for panic reports.
    at: &'a Cell<usize>,
}

impl<const X: usize> Block<'_, X> {
    /// The block's work-item `x` (`x < X`).
    #[inline(always)]
    pub fn item(&self, x: usize) -> Item {
        debug_assert!(x < X, "work-item {x} of a block of {X}");
        shifted(&self.first, x)
    }

    /// Runs `f` for every work-item of the block, in order, with its place
    /// in the block: a loop of `X`, which the compiler unrolls and
    /// vectorizes.
    #[inline(always)]
    pub fn each(&self, mut f: impl FnMut(usize, &Item)) {
        for x in 0..X {
            let item = self.item(x);
            // A store to a stack slot that nothing in the loop reads: it
            // does not keep the loop from vectorizing.
            self.at.set(item.local_linear_id);
            f(x, &item);
        }
    }
}

impl Group<'_> {
    /// Runs the group's work-items in [`Block`]s of `X`: `block` once per
    /// block, and `item` once for each work-item in no block (those past a
    /// row's last whole block). Every work-item is run by exactly one of
    /// the two, and which, in what order, is the group's choice, as between
    /// two barriers.
    ///
    /// A block function that carries its work-items' values through a loop
    /// of its own keeps them in an array of `X`, in registers: the form
    /// [`#[kernel]`](crate::kernel) gives a loop that carries a value
    /// (`for k in 0..TILE { acc += … }`), which then runs iteration `k` of
    /// the block's work-items together, as vectors, and iteration `k + 1`
    /// next.
    ///
    /// A checked launch runs `item` for every work-item, through
    /// [`for_each`](Self::for_each), so that the checker sees each access as
    /// its work-item's.
    #[inline]
    pub fn for_each_block<const X: usize>(
        &self,
        mut block: impl FnMut(&Block<'_, X>),
        mut item: impl FnMut(&Item),
    ) {
        const { assert!(X > 0, "a block has at least one work-item") };
        if self.check.is_some() {
            return self.for_each(&mut item);
        }
        let at = Cell::new(0);
        let marker = BlockMarker {
            current: &self.current,
            at: &at,
        };
        let outer = self.barrier_extra.get();
        self.barrier_extra.set(outer | IN_LOOP);
        let ls = self.env.local_size;
        let whole = ls[0] / X * X;
        for z in 0..ls[2] {
            for y in 0..ls[1] {
                let start = self.row_start(y, z);
                for x0 in (0..whole).step_by(X) {
                    let first = shifted(&start, x0);
                    // A panic before the block's first `each` is its first
                    // work-item's.
                    at.set(first.local_linear_id);
                    block(&Block { first, at: &at });
                }
                for x in whole..ls[0] {
                    let it = shifted(&start, x);
                    at.set(it.local_linear_id);
                    item(&it);
                }
            }
        }
        std::mem::forget(marker);
        self.barrier_extra.set(outer);
    }

    /// The work-item at local id `[0, y, z]`.
    #[inline]
    fn row_start(&self, y: usize, z: usize) -> Item {
        let geo = self.env.geometry;
        let (offset, g, ls) = (geo.offset, geo.global, self.env.local_size);
        let base: [usize; 3] =
            std::array::from_fn(|d| self.env.group_id[d] * geo.local[d] + offset[d]);
        let (gy, gz) = (base[1] + y, base[2] + z);
        Item {
            local_linear_id: (z * ls[1] + y) * ls[0],
            global_linear_id: (gz - offset[2]) * g[1] * g[0] + (gy - offset[1]) * g[0] + base[0]
                - offset[0],
            local_id: [0, y, z],
            global_id: [base[0], gy, gz],
        }
    }
}

/// `start` moved `x` work-items along its row.
#[inline(always)]
fn shifted(start: &Item, x: usize) -> Item {
    Item {
        local_linear_id: start.local_linear_id + x,
        global_linear_id: start.global_linear_id + x,
        local_id: [start.local_id[0] + x, start.local_id[1], start.local_id[2]],
        global_id: [
            start.global_id[0] + x,
            start.global_id[1],
            start.global_id[2],
        ],
    }
}

/// Records, when dropped by unwinding out of `for_each_block`, the
/// work-item that was running (a normal exit forgets it).
struct BlockMarker<'a> {
    current: &'a Cell<Option<usize>>,
    at: &'a Cell<usize>,
}

impl Drop for BlockMarker<'_> {
    fn drop(&mut self) {
        self.current.set(Some(self.at.get()));
    }
}
