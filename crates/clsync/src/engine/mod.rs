//! Engines: what runs a work-item.
//!
//! The scheduler knows a work-item only as an [`ItemTask`]: something it can
//! resume, which runs until it waits at a barrier, finishes, or fails, and
//! says which through [`Suspend`]. An [`Engine`] makes the tasks of one
//! work-group. This is the whole contract, so a second kind of work-item (an
//! interpreter stepping SPIR-V until its next `OpControlBarrier`) plugs into
//! the same scheduler, barrier resolution, divergence reports and watchdog as
//! Rust kernels do, and shares their memory and atomics.
//!
//! A barrier reaches the scheduler as a [`BarrierWait`]
//! ([`Suspend::Barrier`]), or, from an engine whose barriers have static
//! source locations, as the two-word [`Arrival`] ([`Suspend::Arrived`]),
//! which a uniform round compares more cheaply; the two are one barrier
//! wherever their waits agree.
//!
//! [`RustEngine`] runs Rust closures, each work-item a stackful coroutine.
//! The [`asynchronous`] engine runs async closures; it is not an `Engine`,
//! because its tasks are the kernel's own futures, whose type cannot be
//! named: it makes each group's tasks itself, in one slice, through the
//! scheduler's group set-up, and drives them through the same rounds.
//! [`loops`] and [`lifted`] run group-level and `#[kernel]`-lifted kernels,
//! whose work-items are loops rather than tasks.

pub mod asynchronous;
pub mod lifted;
pub mod loops;
pub mod rust;

pub use lifted::Lane;
pub use loops::{Block, Group, Item, Linear};
pub use rust::{RustEngine, WorkItem};

use std::any::Any;

use crate::checker::GroupCheck;
use crate::geometry::{Geometry, ItemIds};
use crate::memory::LocalArena;
use crate::scheduler::Plan;
use crate::sync::{Arrival, BarrierWait, Site};

/// Which engine a `#[kernel]`'s `name_launch` runs it on (`name_form()`
/// says): the macro picks the fastest form the kernel's control flow
/// allows.
///
/// ```
/// use clsync::engine::KernelForm;
/// use clsync::sync::LOCAL;
/// use clsync::{kernel, Buffer, WorkItem};
///
/// #[kernel]
/// fn uniform(wi: &WorkItem, out: &Buffer<u32>) {
///     wi.barrier(LOCAL);
///     out.set(wi.get_global_id(0), 1);
/// }
///
/// // The group takes one arm: `n` is the same for every work-item.
/// #[kernel]
/// fn on_a_parameter(wi: &WorkItem, out: &Buffer<u32>, n: u32) {
///     match n {
///         0 => wi.barrier(LOCAL),
///         _ => out.set(wi.get_global_id(0), n),
///     }
/// }
///
/// // Each work-item takes its own arm: only a general engine can follow.
/// #[kernel]
/// fn on_an_id(wi: &WorkItem, out: &Buffer<u32>) {
///     match wi.get_local_id(0) % 2 {
///         0 => wi.barrier(LOCAL),
///         _ => out.set(wi.get_global_id(0), 1),
///     }
/// }
///
/// assert_eq!(uniform_form(), KernelForm::Groups);
/// assert_eq!(on_a_parameter_form(), KernelForm::Groups);
/// assert_eq!(on_an_id_form(), KernelForm::Async);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelForm {
    /// Group-level loops ([`loops`], [`lifted`]): its barriers sit in
    /// control flow the whole group takes together.
    Groups,
    /// The async engine ([`asynchronous`]), each barrier awaited: any control
    /// flow, with every barrier in the kernel's own body.
    Async,
    /// The coroutine engine ([`rust`]): a barrier in a closure or a macro's
    /// arguments, or the work-item handed to a function.
    Coroutines,
}

/// The word a compiled loop's cancellation point tests at its back-edge:
/// zero while no launch is cancelled and no watchdog probation runs, when
/// [`WorkItem::cancellation_point`] would have nothing to do; while it is
/// not, the code calls that (which tests each cause again). A checked
/// launch leaves it down, so that the loops of a checked kernel make no
/// runtime call per iteration. A relaxed load is enough: a cancellation
/// seen one iteration late only delays the unwind, and the word stays
/// raised until the cancelled launch ends.
///
/// ```
/// use std::sync::atomic::Ordering;
/// // Down outside any cancelled launch (when no other test cancels one
/// // meanwhile).
/// let word = clsync::engine::cancellation_gate();
/// let _ = word.load(Ordering::Relaxed);
/// ```
pub fn cancellation_gate() -> &'static std::sync::atomic::AtomicUsize {
    crate::gate::polling_word()
}

/// How the scheduler resumes a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resume {
    /// Run on: the barrier it waited at is released (or, the first time,
    /// start).
    Continue,
    /// The launch is being abandoned (another work-item failed, or the
    /// watchdog fired): unwind and finish with [`ItemFailure::Cancelled`].
    Cancel,
}

/// Why a task stopped running.
#[derive(Debug)]
pub enum Suspend {
    /// It waits at a barrier.
    Barrier(BarrierWait),
    /// It waits at a barrier with a static site: the same as
    /// `Barrier(arrival.wait())`, cheaper for the scheduler to compare (see
    /// [`Arrival`]).
    Arrived(Arrival),
    /// It returned from the kernel.
    Done,
    /// It failed; it cannot be resumed.
    Failed(ItemFailure),
}

/// How a work-item failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ItemFailure {
    /// The kernel panicked.
    Panic {
        /// The panic message.
        message: String,
        /// Where it panicked, if known.
        site: Option<Site>,
    },
    /// It was cancelled; `site` is the last synchronization call it made, if
    /// it was running (not waiting at a barrier) when cancelled.
    Cancelled {
        /// Where it was.
        site: Option<Site>,
    },
}

/// A work-item the scheduler can drive.
pub trait ItemTask {
    /// Runs the work-item until it suspends. Never called again after
    /// [`Suspend::Done`] or [`Suspend::Failed`].
    fn resume(&mut self, signal: Resume) -> Suspend;

    /// `resume(Resume::Continue)`, except that a panic of the kernel may
    /// unwind out of it. The scheduler resumes with `Continue` only this
    /// way, in one loop (a round's fast path, or one work-item of its
    /// general loop) inside one [`catch_unguarded`](Self::catch_unguarded),
    /// and hands the payload of a panic to [`panicked`](Self::panicked).
    ///
    /// An engine that catches panics inside the work-item (the coroutine
    /// engine, whose panics cannot cross a stack switch) keeps the defaults.
    /// One that catches them around each resumption (the async engine, around
    /// each poll) overrides the three: a resumption under a `catch_unwind` of
    /// its own is a call LLVM may leave out of line, and a round then pays a
    /// call, a `Suspend` returned through memory and a landing pad per
    /// work-item.
    #[inline]
    fn resume_unguarded(&mut self) -> Suspend {
        self.resume(Resume::Continue)
    }

    /// Runs `f`, which resumes tasks of this type through
    /// [`resume_unguarded`](Self::resume_unguarded), and catches a panic
    /// that unwinds out of them. The default catches nothing, as the default
    /// `resume_unguarded` does not unwind.
    #[inline(always)]
    fn catch_unguarded<R>(f: impl FnOnce() -> R) -> std::thread::Result<R>
    where
        Self: Sized,
    {
        Ok(f())
    }

    /// The work-item's [`resume_unguarded`](Self::resume_unguarded)
    /// unwound with `payload`: what it failed with. It is not resumed again.
    #[cold]
    fn panicked(&mut self, payload: Box<dyn Any + Send>) -> Suspend {
        Suspend::Failed(crate::scheduler::hooks::failure_from_panic(payload))
    }
}

/// What a work-group's tasks share: the geometry, the group's place in it,
/// and its local memory.
pub struct GroupEnv<'l> {
    pub(crate) geometry: &'l Geometry,
    pub(crate) group_id: [usize; 3],
    pub(crate) local_size: [usize; 3],
    pub(crate) arena: &'l LocalArena,
    pub(crate) launch_id: u64,
    pub(crate) strict_images: bool,
    /// The launch's collectives' exchanges.
    pub(crate) exchanges: &'l crate::collective::Exchanges,
}

impl<'l> GroupEnv<'l> {
    /// The environment of group `linear` of `plan`, with `arena` as its
    /// local memory.
    #[inline]
    pub(crate) fn for_group(plan: &'l Plan<'_>, linear: usize, arena: &'l LocalArena) -> Self {
        let geometry = &plan.geometry;
        let group_id = geometry.group_id(linear);
        let local_size = geometry.local_size_of(group_id);
        GroupEnv {
            geometry,
            group_id,
            local_size,
            arena,
            launch_id: plan.id,
            strict_images: plan.strict_images,
            exchanges: &plan.exchanges,
        }
    }

    /// The checker's state for this group (group `linear` of `plan`, whose
    /// work-items' ids are `ids`), if the launch is checked. Made apart
    /// from the environment: returned together, the two made one large
    /// value copied through the stack per group, which cost more than an
    /// empty group's whole run.
    #[inline]
    pub(crate) fn check(
        &self,
        plan: &Plan<'_>,
        linear: usize,
        ids: &[ItemIds],
    ) -> Option<GroupCheck> {
        plan.check
            .as_ref()
            .map(|c| GroupCheck::new(c.clone(), linear, ids))
    }

    /// Work-items in the group.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.local_size.iter().product()
    }
}

impl GroupEnv<'_> {
    /// The launch's geometry.
    pub fn geometry(&self) -> &Geometry {
        self.geometry
    }
    /// This group's id.
    pub fn group_id(&self) -> [usize; 3] {
        self.group_id
    }
    /// This group's actual local size.
    pub fn local_size(&self) -> [usize; 3] {
        self.local_size
    }
}

/// Makes the work-items of a group.
///
/// An engine is shared by all worker threads of a launch (`Sync`); its tasks
/// stay on the thread that made them.
pub trait Engine: Sync {
    /// A work-item of this engine, borrowing the group's environment.
    type Task<'g>: ItemTask
    where
        Self: 'g;

    /// Makes the task for the work-item `ids` of the group `env`. It must not
    /// run any kernel code until first resumed.
    fn spawn<'g>(
        &'g self,
        env: &'g GroupEnv<'g>,
        ids: &'g ItemIds,
    ) -> Result<Self::Task<'g>, String>;

    /// Takes back a task that has finished or failed, to reuse its resources.
    fn retire(&self, task: Self::Task<'_>);
}
