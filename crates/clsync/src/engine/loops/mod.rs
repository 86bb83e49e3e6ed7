//! Group-level kernels: the code between two barriers runs as a loop over
//! the work-items of a group, as PoCL's work-item loops and SYCL's
//! hierarchical parallelism do, instead of one coroutine per work-item.
//!
//! A kernel is a closure called once per work-group with a [`Group`]. Work
//! done per work-item is written as [`Group::for_each`]; values that live
//! across a barrier are kept per work-item in private arrays
//! ([`Group::private`]); a barrier is [`Group::barrier`] between two loops.
//! Every barrier is reached by the whole group by construction — control
//! flow around barriers is the group's, so it is uniform, and divergence
//! cannot be written. Kernels whose barriers sit in divergent control flow
//! need the general engine ([`Runtime::launch`](crate::Runtime::launch)).
//!
//! A barrier here costs nothing at run time but its fences; the work-items'
//! code runs back to back and can vectorize. The checker works as in the
//! general engine: in a checked launch each iteration of `for_each` is its
//! work-item, and each barrier synchronizes the group.
//!
//! # Writing loops that vectorize
//!
//! * Reach memory through views: [`Group::global`] and [`Group::local`]
//!   give [`BufferView`]s and [`LocalView`]s, `Copy` handles that a `move`
//!   closure holds in registers (through a reference, every store would
//!   force a reload of the pointer, length and mode, and the loop would stay
//!   scalar).
//! * Keep private variables that live across barriers in
//!   [`Group::private`] arrays (on a cache line, so that no vector of them
//!   straddles two) and update them with [`Group::for_each_mut`], which
//!   hands each work-item its element with no index to check.
//! * Where an index is in bounds by construction, [`LocalView::get_unchecked`]
//!   and [`LocalView::set_unchecked`] drop the bounds check, as OpenCL C has
//!   none; checked launches still check them and report an index out of
//!   bounds.
//! * Write `if (l < n)` as [`Group::for_each_in`]`(0..n, …)`, and a branch on
//!   the id as two ranges, so the loop body has no branch.
//! * To read a row or a whole tile of local memory at once (to keep it in
//!   registers while the work of several work-items uses it), use
//!   [`LocalView::get_array_unchecked`]: one copy, where a loop of
//!   `get_unchecked` tests the launch's mode per element.
//! * A group that reads a block of global memory and then works in local
//!   memory for longer than the read took leaves the processor's stream
//!   prefetcher behind: ask for a later group's block with
//!   [`BufferView::prefetch`] (OpenCL C's `prefetch`; a worker runs its
//!   groups in order, so the group two ahead is usually its own). The
//!   bench's reduction doubled its speed so.
//! * Work-items' independent work may be reordered across them (a
//!   register-blocked loop that computes a row of work-items at once) in
//!   unchecked launches only: the checker knows an access as a work-item's
//!   only inside `for_each`. [`Group::is_checked`] chooses the form.
//!   [`Group::for_each_block`] cuts the rows into blocks for such code, and
//!   runs every work-item alone in a checked launch.
//! * A loop that needs no id but the local linear one can be
//!   [`Group::for_each_linear`], which counts nothing else: for a short
//!   loop (a row of 64), the counting of [`Group::for_each`] is a fair part
//!   of its time.
//!
//! ```
//! use clsync::{Buffer, Launch, NdRange, Runtime};
//! use clsync::sync::LOCAL;
//!
//! // A tree reduction per group of 256, one barrier per level.
//! let input = Buffer::from_slice(&(1..=1024u32).collect::<Vec<_>>());
//! let sums = Buffer::<u32>::new(4);
//! let mut launch = Launch::new("reduce", NdRange::new([1024]).local([256]));
//! let scratch = launch.local::<u32>(256);
//! Runtime::new().launch_groups(&launch, |g| {
//!     let (s, input) = (g.local(scratch), g.global(&input));
//!     g.for_each(move |it| s.set(it.local_linear_id, input.get(it.global_linear_id)));
//!     let mut half = 128;
//!     while half > 0 {
//!         g.barrier(LOCAL);
//!         g.for_each_in(0..half, move |it| {
//!             let l = it.local_linear_id;
//!             s.set(l, s.get(l) + s.get(l + half));
//!         });
//!         half /= 2;
//!     }
//!     sums.set(g.get_group_id(0), s.get(0));
//! }).unwrap();
//! assert_eq!(sums.get(0), 256 * 257 / 2);
//! ```

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe, Location};

use super::lifted::Disagreement;
use crate::checker::{GroupCheck, Running};
use crate::engine::{GroupEnv, ItemFailure};
use crate::error::{GroupStall, KernelPanic, LaunchError, Place, PlaceRun};
use crate::geometry::ItemIds;
use crate::memory::{Buffer, BufferView, Claim, Element, LocalArg, LocalView, Private, ViewMode};
use crate::scheduler::{hooks, GroupFailure, GroupRunner, Progress, Shared, Worker};
use race_free::apart;

mod barriers;
mod blocks;
mod race_free;

pub use blocks::Block;

/// One work-item as a group-level loop sees it: its ids, made by counting
/// rather than dividing, so a loop over the group stays cheap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item {
    /// `get_local_linear_id`.
    pub local_linear_id: usize,
    /// `get_global_linear_id`.
    pub global_linear_id: usize,
    /// `get_local_id`, per dimension.
    pub local_id: [usize; 3],
    /// `get_global_id`, per dimension (with the global offset).
    pub global_id: [usize; 3],
}

/// One work-item as [`Group::for_each_linear`] sees it: its local linear
/// id alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Linear {
    /// `get_local_linear_id`.
    pub local_linear_id: usize,
}

/// One work-group of a group-level kernel.
pub struct Group<'g> {
    env: &'g GroupEnv<'g>,
    len: usize,
    check: Option<&'g GroupCheck>,
    /// The kernel's name, for a divergence a checked launch reports.
    kernel: &'g str,
    /// Whether a checked launch runs on from a divergence.
    run_on: bool,
    /// The work-item `for_each` is running, for panic reports.
    current: Cell<Option<usize>>,
    /// What a barrier must do besides its fence, poll and count: nothing
    /// (0), or what [`IN_LOOP`] and [`CHECKED`] say. One test on the
    /// barrier's fast path for both.
    barrier_extra: Cell<u8>,
    /// Whether the local views made now take race-free accesses at their
    /// word ([`trust_race_free`](Self::trust_race_free)).
    race_free: Cell<bool>,
    progress: Progress<'g>,
}

/// `for_each` is running: a barrier now is a mistake.
const IN_LOOP: u8 = 1;
/// The launch is checked: a barrier releases the checker's group.
const CHECKED: u8 = 2;

impl Group<'_> {
    /// Work-items in this group.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the group has no work-items (never: ranges are not empty).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether this launch is checked. In a checked launch each access
    /// must be made inside [`for_each`](Self::for_each) to be known as its
    /// work-item's; code that reorders the work-items' independent work
    /// across them (a register-blocked loop, say) is for unchecked launches,
    /// and takes the per-work-item form when this is true.
    pub fn is_checked(&self) -> bool {
        self.check.is_some()
    }

    /// All ids of the work-item with local linear id `l` (sub-group ids
    /// included).
    pub fn ids(&self, l: usize) -> ItemIds {
        ItemIds::new(self.env.geometry, self.env.group_id, self.env.local_size, l)
    }

    /// Names work-item `l` (by local linear id) as the one running, or
    /// none: for engines whose compiled code runs the loop over the
    /// work-items itself (`clsync-opencl`'s work-item loops), so that in a
    /// checked launch the checker's entry points
    /// ([`checker::engine`](crate::checker::engine)) called from then on
    /// are work-item `l`'s accesses, as inside [`for_each`](Self::for_each).
    /// The name holds until another is given, `for_each` runs, or the
    /// group's code returns. A panic in group-level code while `l` is named
    /// is reported as `l`'s. An unchecked launch records only the latter.
    #[inline]
    pub fn name_item(&self, l: Option<usize>) {
        self.current.set(l.filter(|l| *l < self.len));
        if let Some(check) = self.check {
            match l {
                Some(l) if l < self.len => Running::name(check, l),
                _ => Running::clear(),
            }
        }
    }

    /// A barrier divergence, which a checked launch that runs on from one
    /// ([`Launch::run_on_divergence`](crate::Launch::run_on_divergence))
    /// reports and runs on from, as the coroutine engine does (and
    /// Oclgrind): the report is added to the launch's, and the caller lets
    /// each work-item go on from where it is. In any other launch it is
    /// [`diverged`](Self::diverged): the group stops.
    pub fn report_divergence(&self, barrier: crate::sync::Site, places: Vec<PlaceRun>) {
        let Some(check) = self.check.filter(|_| self.run_on) else {
            self.diverged(barrier, places)
        };
        let d = Disagreement { barrier, places }.into_divergence(
            self.kernel,
            self.env.group_id,
            self.env.geometry.dims,
        );
        check
            .launch
            .add(crate::checker::Report::from_divergence(&d));
    }

    /// Runs `f` once per work-item of the group, in local linear order.
    #[inline]
    pub fn for_each(&self, f: impl FnMut(&Item)) {
        self.for_each_in(0..self.len, f)
    }

    /// Runs `f` for the work-items whose local linear ids are in `range`,
    /// in order: `for_each` with `if range.contains(l)` around the body.
    #[inline]
    pub fn for_each_in(&self, range: std::ops::Range<usize>, mut f: impl FnMut(&Item)) {
        // Which work-item panicked, written only while unwinding: a store
        // per work-item would keep the loop from vectorizing.
        let mut marker = Marker {
            current: &self.current,
            at: range.start,
        };
        let outer = self.barrier_extra.get();
        self.barrier_extra.set(outer | IN_LOOP);
        match self.check {
            // Two copies of the loop, so that the unchecked one has nothing
            // in it but `f`.
            None => self.rows(range, |item| {
                marker.at = item.local_linear_id;
                f(item)
            }),
            // Each work-item named before its body runs, and the name
            // cleared once, when the loop ends or unwinds: a guard per
            // work-item cost two thread-local stores and two calls per
            // work-item and statement (a quarter of a checked reduce
            // whose accesses were not checked).
            Some(check) => {
                let _named = Running::named_loop();
                self.rows(range, |item| {
                    marker.at = item.local_linear_id;
                    Running::name(check, item.local_linear_id);
                    f(item)
                })
            }
        }
        std::mem::forget(marker);
        self.barrier_extra.set(outer);
    }

    /// Runs `f` once per work-item of the group, in local linear order,
    /// with its local linear id alone: [`for_each`](Self::for_each) for
    /// code that needs no other id, whose loop counts nothing else.
    #[inline]
    pub fn for_each_linear(&self, mut f: impl FnMut(&Linear)) {
        let mut marker = Marker {
            current: &self.current,
            at: 0,
        };
        let outer = self.barrier_extra.get();
        self.barrier_extra.set(outer | IN_LOOP);
        match self.check {
            None => {
                for l in 0..self.len {
                    marker.at = l;
                    f(&Linear { local_linear_id: l })
                }
            }
            Some(check) => {
                let _named = Running::named_loop();
                for l in 0..self.len {
                    marker.at = l;
                    Running::name(check, l);
                    f(&Linear { local_linear_id: l })
                }
            }
        }
        std::mem::forget(marker);
        self.barrier_extra.set(outer);
    }

    /// The loop of `for_each_in`: counting through z, y, x instead of
    /// dividing the linear id, so that the innermost loop is over x,
    /// unit-stride, as vector code wants.
    #[inline(always)]
    fn rows(&self, range: std::ops::Range<usize>, mut f: impl FnMut(&Item)) {
        // Copies of the geometry, so that the loop keeps them in registers
        // (stores in `f` might alias the geometry behind a reference).
        let geo = self.env.geometry;
        let (offset, g, ls) = (geo.offset, geo.global, self.env.local_size);
        let end = range.end.min(self.len);
        let base: [usize; 3] =
            std::array::from_fn(|d| self.env.group_id[d] * geo.local[d] + offset[d]);
        let row = ls[0];
        let plane = ls[0] * ls[1];
        let mut l = range.start;
        if l >= end {
            return;
        }
        // Where the range starts: by dividing only for a range that starts
        // inside a 2-D or 3-D group (a division costs as much as a short
        // row of work-items); then count.
        let (mut z, mut y, mut x0) = if row == self.len || l == 0 {
            (0, 0, l)
        } else {
            let (z, rem) = (l / plane, l % plane);
            (z, rem / row, rem % row)
        };
        loop {
            let x_end = row.min(x0 + (end - l));
            let (gy, gz) = (base[1] + y, base[2] + z);
            // The global linear id of the row's x = 0 (without the offset).
            let row_base =
                (gz - offset[2]) * g[1] * g[0] + (gy - offset[1]) * g[0] + base[0] - offset[0];
            for x in x0..x_end {
                f(&Item {
                    local_linear_id: l + (x - x0),
                    global_linear_id: row_base + x,
                    local_id: [x, y, z],
                    global_id: [base[0] + x, gy, gz],
                });
            }
            l += x_end - x0;
            if l >= end {
                return;
            }
            x0 = 0;
            y += 1;
            if y == ls[1] {
                y = 0;
                z += 1;
            }
        }
    }

    /// Runs `f` once per work-item with the work-item's element of
    /// `private`, the group's vector of a private variable that lives
    /// across barriers (see [`Group::private`]): `acc[l] += …` without an
    /// index, so without a bounds check per work-item.
    ///
    /// # Panics
    ///
    /// If `private` does not have one element per work-item.
    #[inline]
    pub fn for_each_mut<T>(&self, private: &mut [T], mut f: impl FnMut(&Item, &mut T)) {
        assert_eq!(
            private.len(),
            self.len,
            "for_each_mut: the private vector needs one element per work-item"
        );
        let base = private.as_mut_ptr();
        self.for_each(|it| {
            // SAFETY: `for_each` makes its items itself, each with a
            // distinct `local_linear_id < self.len == private.len()`, so
            // this is an element of `private`, and no other reference to it
            // lives: each is handed out once, for one call of `f`, while
            // `private` is mutably borrowed by this function.
            f(it, unsafe { &mut *base.add(it.local_linear_id) })
        })
    }

    /// One default value per work-item, starting on a cache line (see
    /// [`Private`]): a private variable that lives across barriers.
    pub fn private<T: Default>(&self) -> Private<T> {
        Private::from_fn(self.len, |_| T::default())
    }

    /// `get_work_dim`.
    pub fn get_work_dim(&self) -> u32 {
        self.env.geometry.dims as u32
    }
    /// `get_group_id(dim)`.
    pub fn get_group_id(&self, dim: u32) -> usize {
        self.env.geometry.in_dim(dim, self.env.group_id, 0)
    }
    /// `get_num_groups(dim)`.
    pub fn get_num_groups(&self, dim: u32) -> usize {
        self.env
            .geometry
            .in_dim(dim, self.env.geometry.num_groups, 1)
    }
    /// `get_local_size(dim)`: this group's actual size.
    pub fn get_local_size(&self, dim: u32) -> usize {
        self.env.geometry.in_dim(dim, self.env.local_size, 1)
    }
    /// `get_enqueued_local_size(dim)`.
    pub fn get_enqueued_local_size(&self, dim: u32) -> usize {
        self.env.geometry.in_dim(dim, self.env.geometry.local, 1)
    }
    /// `get_global_size(dim)`.
    pub fn get_global_size(&self, dim: u32) -> usize {
        self.env.geometry.in_dim(dim, self.env.geometry.global, 1)
    }
    /// `get_global_offset(dim)`.
    pub fn get_global_offset(&self, dim: u32) -> usize {
        self.env.geometry.in_dim(dim, self.env.geometry.offset, 0)
    }
    /// `get_max_sub_group_size`.
    pub fn get_max_sub_group_size(&self) -> u32 {
        self.env.geometry.max_sub_group_size() as u32
    }
    /// `get_num_sub_groups`: sub-groups in this group.
    pub fn get_num_sub_groups(&self) -> u32 {
        self.ids(0).num_sub_groups as u32
    }
    /// `get_enqueued_num_sub_groups`: sub-groups in a full group.
    pub fn get_enqueued_num_sub_groups(&self) -> u32 {
        self.env.geometry.enqueued_num_sub_groups() as u32
    }
    /// The range's sub-group size (the last sub-group of a group may be
    /// smaller).
    #[inline]
    pub(super) fn sub_group_size(&self) -> usize {
        self.env.geometry.sub_group_size
    }
    /// `v[dim]` for a dimension of the range, else `default`.
    #[inline]
    pub(super) fn in_dim(&self, dim: u32, v: [usize; 3], default: usize) -> usize {
        self.env.geometry.in_dim(dim, v, default)
    }

    /// A view of `buffer` for this group's loops (see [`BufferView`]).
    #[inline]
    pub fn global<'b, T: Element>(&self, buffer: &'b Buffer<T>) -> BufferView<'b, T> {
        BufferView::new(buffer, self.check.is_some(), Claim::None)
    }

    /// [`global`](Self::global) for a buffer that the kernel only reads:
    /// `written` is the memory of everything else the kernel may write
    /// (each as [`Buffer::raw_bytes`] gives it). Where none of it overlaps
    /// `buffer`, no work-item of the launch writes the buffer, and a read
    /// races with nothing: a checked launch checks the view's reads for
    /// their bounds only, and remembers none of them (no shadow, which is
    /// some ten times the buffer's size, and no record per read). This is
    /// the proof a compiled OpenCL C kernel makes for its read-only
    /// buffers, which `#[kernel]` makes for a Rust kernel's `&Buffer`
    /// parameters whose every use is a read, passing the others as
    /// `written`.
    ///
    /// The promise is the caller's: a write to `buffer` that `written`
    /// leaves out (through another view of it) races with these reads
    /// unreported. Unchecked launches are not affected.
    ///
    /// ```
    /// use clsync::{Buffer, Launch, NdRange, Runtime};
    ///
    /// let input = Buffer::from_slice(&(0..64u32).collect::<Vec<_>>());
    /// let out = Buffer::<u32>::new(64);
    /// let launch = Launch::new("double", NdRange::new([64]).local([16])).checked(true);
    /// Runtime::new().launch_groups(&launch, |g| {
    ///     let i = g.global_unwritten(&input, &[out.raw_bytes()]);
    ///     let o = g.global(&out);
    ///     g.for_each(move |it| o.set(it.global_linear_id, 2 * i.get(it.global_linear_id)));
    /// }).unwrap();
    /// assert_eq!(out.get(63), 126);
    /// ```
    #[inline]
    pub fn global_unwritten<'b, T: Element>(
        &self,
        buffer: &'b Buffer<T>,
        written: &[(*mut u8, usize)],
    ) -> BufferView<'b, T> {
        let claim = if apart(buffer, written) {
            Claim::Unwritten
        } else {
            Claim::None
        };
        BufferView::new(buffer, self.check.is_some(), claim)
    }

    /// A view of the group's slice for a local argument sized at launch
    /// (see [`LocalView`]).
    pub fn local<T: Element>(&self, arg: LocalArg<T>) -> LocalView<'_, T> {
        assert_eq!(
            arg.launch, self.env.launch_id,
            "LocalArg used with a launch other than the one that made it"
        );
        self.with_race_free(self.env.arena.arg(arg).view())
    }

    /// `view` itself, with the compiler told that its mode (checked or not)
    /// is this group's, as it always is for a view made in this group (of
    /// its local memory, or of a buffer by [`global`](Self::global)).
    ///
    /// Each access of a view without a bounds check
    /// ([`LocalView::get_unchecked`], [`BufferView::get_relaxed_unchecked`]
    /// and the like) tests the view's mode, to report in checked launches.
    /// A loop with a few of them has the tests taken out of it by the
    /// compiler (one copy of the loop per mode); a longer one keeps a
    /// branch per access, and stays scalar. Made again by this function
    /// under a test of `!g.is_checked()`, the view is known unchecked there,
    /// and its tests fold away. `#[kernel]` does this in the loops whose
    /// bounds checks it hoists.
    ///
    /// ```
    /// use clsync::{Buffer, Launch, NdRange, Runtime};
    ///
    /// let out = Buffer::<u32>::new(64);
    /// let mut launch = Launch::new("squares", NdRange::new([64]).local([64]));
    /// let tile = launch.local::<u32>(64);
    /// Runtime::new().launch_groups(&launch, |g| {
    ///     let t = g.local(tile);
    ///     if !g.is_checked() {
    ///         let t = g.in_mode(t);
    ///         // SAFETY: local_linear_id < 64, the array's length.
    ///         g.for_each(move |it| unsafe {
    ///             let l = it.local_linear_id;
    ///             t.set_unchecked(l, (l * l) as u32);
    ///         });
    ///     } else {
    ///         g.for_each(move |it| {
    ///             let l = it.local_linear_id;
    ///             t.set(l, (l * l) as u32);
    ///         });
    ///     }
    ///     g.for_each(|it| out.set(it.global_linear_id, t.get(it.local_linear_id)));
    /// }).unwrap();
    /// assert_eq!(out.get(9), 81);
    /// ```
    #[inline(always)]
    pub fn in_mode<V: ViewMode>(&self, view: V) -> V {
        // A view made in this group is checked exactly when the group is
        // (both come from the launch's mode), so this changes nothing
        // but what the compiler knows.
        view.checked_if(self.is_checked())
    }

    /// A local array declared in the kernel (`__local T name[len];`).
    #[track_caller]
    pub fn local_array<T: Element>(&self, len: usize) -> LocalView<'_, T> {
        self.with_race_free(self.env.arena.declared(Location::caller(), len).view())
    }
}

/// Records, when dropped by unwinding out of an unchecked `for_each`, the
/// work-item that was running (a normal exit forgets it). Kept in a
/// register until then, unlike a store per work-item.
struct Marker<'a> {
    current: &'a Cell<Option<usize>>,
    at: usize,
}

impl Drop for Marker<'_> {
    fn drop(&mut self) {
        self.current.set(Some(self.at));
    }
}

/// Runs a group-level kernel as the scheduler's group runner.
pub(crate) struct Loops<'k, F>(pub(crate) &'k F);

impl<F> GroupRunner for Loops<'_, F>
where
    F: Fn(&Group<'_>) + Sync,
{
    fn run_group(
        &self,
        shared: &Shared<'_>,
        linear: usize,
        worker: &mut Worker<'_>,
    ) -> Result<(), GroupFailure> {
        let plan = &shared.plan;
        let geo = &plan.geometry;
        let (arena, progress, ids) = worker.parts(plan);
        let env = GroupEnv::for_group(plan, linear, arena);
        // The ids are for the checker alone (`for_each` counts its own), so
        // they are filled only when it runs.
        let check = match plan.check {
            Some(_) => env.check(plan, linear, ids.fill(geo, env.group_id, env.local_size)),
            None => None,
        };
        let (group_id, len) = (env.group_id, env.len());
        let group = Group {
            env: &env,
            len,
            check: check.as_ref(),
            kernel: &plan.kernel,
            run_on: plan.run_on_divergence,
            current: Cell::new(None),
            barrier_extra: Cell::new(if check.is_some() { CHECKED } else { 0 }),
            race_free: Cell::new(false),
            progress: progress.fork(),
        };
        let result = catch_unwind(AssertUnwindSafe(|| (self.0)(&group)));
        if check.is_some() {
            // A work-item `name_item` named is no longer running; the
            // checker's group it points at is dropped below.
            Running::clear();
        }
        let n = group.len;
        progress.join(&group.progress, n);
        let at = group.current.get();
        let Err(payload) = result else {
            // Moved out rather than dropped as an `Option`: an unchecked
            // launch's `None` then costs a test, not a call of the drop glue
            // per group.
            if let Some(check) = check {
                drop(check);
            }
            return Ok(());
        };
        let ids = group.ids(at.unwrap_or(0));
        let payload = match payload.downcast::<Disagreement>() {
            Ok(d) => {
                let d = d.into_divergence(&plan.kernel, group_id, geo.dims);
                return Err(GroupFailure::Error(LaunchError::Divergence(Box::new(d))));
            }
            Err(other) => other,
        };
        match hooks::failure_from_panic(payload) {
            ItemFailure::Panic { message, site } => Err(GroupFailure::Error(LaunchError::Panic(
                Box::new(KernelPanic {
                    kernel: plan.kernel.clone(),
                    dims: geo.dims,
                    ids,
                    message: match at {
                        Some(_) => message,
                        None => format!("{message} (in group-level code, outside for_each)"),
                    },
                    site,
                }),
            ))),
            ItemFailure::Cancelled { site } => Err(GroupFailure::Cancelled(GroupStall {
                group_id,
                places: vec![PlaceRun {
                    place: Place::Running(site),
                    items: at.map_or_else(|| (0..n).collect(), |i| vec![i]),
                }],
            })),
        }
    }
}
