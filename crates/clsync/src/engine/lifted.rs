//! What [`#[kernel]`](crate::kernel) lifts a work-item kernel onto: the
//! work-item as a group-level loop sees it ([`Lane`]), per-work-item storage
//! for values that live across a barrier ([`Slots`]), and the evaluation of a
//! condition that decides whether a barrier is reached
//! ([`Group::uniform`]).
//!
//! A kernel written per work-item, `fn k(wi: &WorkItem, …)`, becomes a
//! group-level kernel: each stretch of code between two barriers is one
//! [`Group::for_each`] loop, in which `wi` is a [`Lane`] (the same ids,
//! fences and local memory, but no barrier: barriers sit between the loops).
//! A `let` whose value is used after a barrier is kept in a [`Slots`] vector,
//! one element per work-item, copied into the loop body and back out. A
//! loop or `if` with a barrier inside is run by the group, once; its
//! condition is evaluated by every work-item and must come out the same for
//! all of them (`003_2caebc1f01141481.txt`: the barrier must be encountered
//! by all work-items of a work-group, in every iteration of a loop). If it
//! does not, the launch fails with a [`Divergence`], or, checked, a barrier
//! divergence report, as on the general engine.
//!
//! These items are public for the code the macro writes; kernels rarely
//! name them.

use std::fmt::Debug;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::panic::Location;

use super::loops::{Group, Item};
use crate::error::{Divergence, Place, PlaceRun};
use crate::geometry::{sub_group_len, ItemIds};
use crate::memory::{Element, LocalArg, LocalView, Private};
use crate::sync::{
    AcqRel, Acquire, BarrierKind, FenceFlags, FenceOrder, FenceScopeFor, Release, Site,
    WorkGroupScope,
};

/// One work-item inside a group-level loop, with the work-item functions of
/// [`WorkItem`](crate::WorkItem) except the barriers: what `wi` is in the
/// loops [`#[kernel]`](crate::kernel) writes.
///
/// ```
/// use clsync::{Buffer, Launch, NdRange, Runtime};
///
/// let out = Buffer::<u32>::new(64);
/// let launch = Launch::new("ids", NdRange::new([64]).local([16]));
/// Runtime::new().launch_groups(&launch, |g| {
///     g.for_each(|it| {
///         let wi = g.lane(it);
///         out.set(wi.get_global_id(0), (wi.get_group_id(0) * 100 + wi.get_local_id(0)) as u32);
///     });
/// }).unwrap();
/// assert_eq!(out.get(17), 101);
/// ```
#[derive(Clone, Copy)]
pub struct Lane<'a, 'g> {
    group: &'a Group<'g>,
    item: Item,
}

impl<'g> Group<'g> {
    /// The work-item `item` as a [`Lane`], for code written against the
    /// work-item functions.
    #[inline]
    pub fn lane(&self, item: &Item) -> Lane<'_, 'g> {
        Lane {
            group: self,
            item: *item,
        }
    }
}

impl Lane<'_, '_> {
    /// All ids of this work-item at once (computed: prefer the getters in
    /// hot loops).
    pub fn ids(&self) -> ItemIds {
        self.group.ids(self.item.local_linear_id)
    }
    /// `get_work_dim`.
    #[inline]
    pub fn get_work_dim(&self) -> u32 {
        self.group.get_work_dim()
    }
    /// `get_global_size(dim)`.
    #[inline]
    pub fn get_global_size(&self, dim: u32) -> usize {
        self.group.get_global_size(dim)
    }
    /// `get_global_id(dim)`.
    #[inline]
    pub fn get_global_id(&self, dim: u32) -> usize {
        self.group.in_dim(dim, self.item.global_id, 0)
    }
    /// `get_global_offset(dim)`.
    #[inline]
    pub fn get_global_offset(&self, dim: u32) -> usize {
        self.group.get_global_offset(dim)
    }
    /// `get_local_size(dim)`: this group's actual size.
    #[inline]
    pub fn get_local_size(&self, dim: u32) -> usize {
        self.group.get_local_size(dim)
    }
    /// `get_enqueued_local_size(dim)`.
    #[inline]
    pub fn get_enqueued_local_size(&self, dim: u32) -> usize {
        self.group.get_enqueued_local_size(dim)
    }
    /// `get_local_id(dim)`.
    #[inline]
    pub fn get_local_id(&self, dim: u32) -> usize {
        self.group.in_dim(dim, self.item.local_id, 0)
    }
    /// `get_num_groups(dim)`.
    #[inline]
    pub fn get_num_groups(&self, dim: u32) -> usize {
        self.group.get_num_groups(dim)
    }
    /// `get_group_id(dim)`.
    #[inline]
    pub fn get_group_id(&self, dim: u32) -> usize {
        self.group.get_group_id(dim)
    }
    /// `get_global_linear_id`.
    #[inline]
    pub fn get_global_linear_id(&self) -> usize {
        self.item.global_linear_id
    }
    /// `get_local_linear_id`.
    #[inline]
    pub fn get_local_linear_id(&self) -> usize {
        self.item.local_linear_id
    }
    /// `get_sub_group_size`: this sub-group's size (the last one of a
    /// group may be partial).
    #[inline]
    pub fn get_sub_group_size(&self) -> u32 {
        let sg = self.group.sub_group_size();
        sub_group_len(self.group.len(), sg, self.item.local_linear_id / sg) as u32
    }
    /// `get_max_sub_group_size`.
    #[inline]
    pub fn get_max_sub_group_size(&self) -> u32 {
        self.group.get_max_sub_group_size()
    }
    /// `get_num_sub_groups`: sub-groups in this group.
    #[inline]
    pub fn get_num_sub_groups(&self) -> u32 {
        self.group.get_num_sub_groups()
    }
    /// `get_enqueued_num_sub_groups`.
    #[inline]
    pub fn get_enqueued_num_sub_groups(&self) -> u32 {
        self.group.get_enqueued_num_sub_groups()
    }
    /// `get_sub_group_id`.
    #[inline]
    pub fn get_sub_group_id(&self) -> u32 {
        (self.item.local_linear_id / self.group.sub_group_size()) as u32
    }
    /// `get_sub_group_local_id`.
    #[inline]
    pub fn get_sub_group_local_id(&self) -> u32 {
        (self.item.local_linear_id % self.group.sub_group_size()) as u32
    }

    /// `atomic_work_item_fence(flags, order, scope)`.
    #[track_caller]
    pub fn atomic_work_item_fence<F: FenceFlags, O: FenceOrder, S: FenceScopeFor<F>>(
        &self,
        flags: F,
        order: O,
        scope: S,
    ) {
        self.group.atomic_work_item_fence(flags, order, scope)
    }
    /// `mem_fence(flags)`: acq_rel, work-group scope.
    #[track_caller]
    pub fn mem_fence<F: FenceFlags>(&self, flags: F) {
        self.group
            .atomic_work_item_fence(flags, AcqRel, WorkGroupScope)
    }
    /// `read_mem_fence(flags)`: acquire, work-group scope.
    #[track_caller]
    pub fn read_mem_fence<F: FenceFlags>(&self, flags: F) {
        self.group
            .atomic_work_item_fence(flags, Acquire, WorkGroupScope)
    }
    /// `write_mem_fence(flags)`: release, work-group scope.
    #[track_caller]
    pub fn write_mem_fence<F: FenceFlags>(&self, flags: F) {
        self.group
            .atomic_work_item_fence(flags, Release, WorkGroupScope)
    }
}

/// Local memory: views that live as long as the group, not the lane, so
/// that a `let` of one can live across a barrier.
impl<'a> Lane<'a, '_> {
    /// The group's slice for a local argument, as a [`LocalView`].
    #[inline]
    pub fn local<T: Element>(&self, arg: LocalArg<T>) -> LocalView<'a, T> {
        self.group.local(arg)
    }
    /// A local array declared in the kernel (see
    /// [`WorkItem::local_array`](crate::WorkItem::local_array)).
    #[track_caller]
    pub fn local_array<T: Element>(&self, len: usize) -> LocalView<'a, T> {
        self.group.local_array(len)
    }
}

/// One value per work-item of a group, for a variable that lives across a
/// barrier: the storage behind a `let` in a [`#[kernel]`](crate::kernel).
/// Made uninitialized by [`Group::slots`]; a [`SlotPtr`] reads and writes
/// it inside the loops.
pub struct Slots<T> {
    /// On a cache line, as a group's private arrays are (see [`Private`]).
    values: Private<MaybeUninit<T>>,
}

/// A `Copy` handle on a [`Slots`], for `move` closures (see [`LocalView`]
/// for why loops want handles in registers).
pub struct SlotPtr<'s, T> {
    base: *mut MaybeUninit<T>,
    _slots: PhantomData<&'s mut Slots<T>>,
}

impl<T> Clone for SlotPtr<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SlotPtr<'_, T> {}

impl Group<'_> {
    /// Storage for one `T` per work-item, uninitialized.
    pub fn slots<T: Copy>(&self) -> Slots<T> {
        Slots {
            values: Private::from_fn(self.len(), |_| MaybeUninit::uninit()),
        }
    }
}

impl<T: Copy> Slots<T> {
    /// The handle the loops use. It borrows the slots mutably for as long
    /// as it lives.
    pub fn ptr(&mut self) -> SlotPtr<'_, T> {
        SlotPtr {
            base: self.values.as_mut_ptr(),
            _slots: PhantomData,
        }
    }
}

impl<T: Copy> SlotPtr<'_, T> {
    /// Work-item `l`'s value.
    ///
    /// # Safety
    ///
    /// `l` is below the group's size, and work-item `l`'s value was written
    /// (the macro reads a variable only after the statement that declares
    /// it, which every work-item ran).
    #[inline(always)]
    pub unsafe fn read(self, l: usize) -> T {
        // SAFETY: the caller promises `l` is in bounds and initialized; the
        // slots are borrowed for `'s`, and `T: Copy`, so the read leaves
        // them valid.
        unsafe { (*self.base.add(l)).assume_init() }
    }
    /// Sets work-item `l`'s value.
    ///
    /// # Safety
    ///
    /// `l` is below the group's size, and no reference into the slots is
    /// alive (the loops only copy values in and out).
    #[inline(always)]
    pub unsafe fn write(self, l: usize, value: T) {
        // SAFETY: the caller promises `l` is in bounds; `T: Copy` has no
        // destructor, so overwriting an initialized value leaks nothing.
        unsafe { self.base.add(l).write(MaybeUninit::new(value)) }
    }
}

/// The unwind payload of a condition that work-items disagree on; the group
/// runner turns it into a [`Divergence`].
pub(crate) struct Disagreement {
    pub(crate) barrier: Site,
    pub(crate) places: Vec<PlaceRun>,
}

impl Group<'_> {
    /// Evaluates `f`, the condition of a loop or `if` that contains a
    /// barrier, for every work-item (side effects included, as each
    /// work-item runs it), and returns the value, which must be the same
    /// for all of them. If it is not, the group stops with a barrier
    /// divergence at `barrier`, the first barrier inside the construct,
    /// naming the work-items by the value they got.
    #[track_caller]
    pub fn uniform<T: PartialEq + Debug>(
        &self,
        barrier: &'static Location<'static>,
        mut f: impl FnMut(&Item) -> T,
    ) -> T {
        let mut first: Option<T> = None;
        let mut differs = false;
        let mut values = Vec::new();
        self.for_each(|it| {
            let v = f(it);
            match &first {
                None => first = Some(v),
                Some(x) if differs || *x != v => {
                    differs = true;
                    values.push((it.local_linear_id, v));
                }
                Some(_) => {}
            }
        });
        let first = first.expect("a group has at least one work-item");
        if differs {
            self.disagree(barrier, Location::caller(), first, values)
        }
        first
    }

    #[cold]
    #[inline(never)]
    fn disagree<T: PartialEq + Debug>(
        &self,
        barrier: &'static Location<'static>,
        at: &'static Location<'static>,
        first: T,
        rest: Vec<(usize, T)>,
    ) -> ! {
        // Work-items 0.. up to the first that differs had `first`; then
        // every work-item is listed with its own value, in runs.
        let mut places: Vec<PlaceRun> = Vec::new();
        let upto = rest.first().map_or(self.len(), |r| r.0);
        let site = Site::from_location(at);
        places.push(PlaceRun {
            place: Place::Decided {
                site,
                value: format!("{first:?}"),
            },
            items: (0..upto).collect(),
        });
        for (l, v) in rest {
            let value = format!("{v:?}");
            match places.last_mut() {
                Some(p) if matches!(&p.place, Place::Decided { value: w, .. } if *w == value) => {
                    p.items.push(l)
                }
                _ => places.push(PlaceRun {
                    place: Place::Decided { site, value },
                    items: vec![l],
                }),
            }
        }
        std::panic::resume_unwind(Box::new(Disagreement {
            barrier: Site::from_location(barrier),
            places,
        }))
    }
}

impl Group<'_> {
    /// Stops the group with a barrier divergence at `barrier`, the work-items
    /// being where `places` says (by local linear id): for group-level code
    /// that finds its work-items at different barriers, or some at a barrier
    /// and some returned (compiled kernels run as work-item loops).
    pub fn diverged(&self, barrier: Site, places: Vec<PlaceRun>) -> ! {
        std::panic::resume_unwind(Box::new(Disagreement { barrier, places }))
    }
}

impl Disagreement {
    /// The launch error, for the group this happened in.
    pub(crate) fn into_divergence(
        self,
        kernel: &str,
        group_id: [usize; 3],
        dims: usize,
    ) -> Divergence {
        Divergence {
            kernel: kernel.to_string(),
            group_id,
            dims,
            kind: BarrierKind::WorkGroup,
            sub_group: None,
            barrier: self.barrier,
            places: self.places,
        }
    }
}

/// The location of the expression it is called at: the macro calls it
/// with the span of a barrier, to name that barrier in a divergence.
#[track_caller]
#[inline]
pub fn here() -> &'static Location<'static> {
    Location::caller()
}
