//! The async engine: each work-item is a Rust future, polled by the
//! scheduler; a barrier is `wi.barrier_async(flags).await`.
//!
//! Like the coroutine engine it takes any control flow around barriers, but
//! a work-item is a state machine rather than a stack: resuming it is a
//! call, not a stack switch, and a group's work-items are one slice of
//! futures rather than one stack each.
//!
//! # What a barrier costs
//!
//! The engine is not an [`Engine`](super::Engine): its tasks are the
//! kernel's own futures, whose type no one can name, so it makes each
//! group's tasks itself (the scheduler's `with_group` hands it the group)
//! and keeps them side by side in one pinned slice. A resumption is then a
//! direct call of the kernel's `poll`, not one through a vtable; the
//! barrier's kind, flags and scope are types (`Arrive`), so its fences
//! fold at compile time; the arrival is two words through thread-locals,
//! and the scheduler's fast path compares it with the round's first as two
//! words ([`Arrival`]).
//!
//! The scheduler resumes every task in one loop (`resume_while_same`),
//! so the kernel's `poll` has one call site and LLVM inlines it there
//! whatever its size; and polls there are not wrapped one by one in
//! `catch_unwind` ([`ItemTask::resume_unguarded`]): the loop catches a panic
//! once, around the round. About 47 instructions per work-item per barrier
//! (`valgrind --tool=callgrind`, local 256, the suite's barrier loop), 80
//! with a catch per poll and the poll out of line, 190 before that: about
//! 2.1 ns per worker thread on the development machine, 3.7 ns before.
//!
//! ```
//! use clsync::sync::LOCAL;
//! use clsync::{Buffer, Launch, NdRange, Runtime};
//!
//! let data = Buffer::from_slice(&(0..256).collect::<Vec<u32>>());
//! let mut launch = Launch::new("reverse", NdRange::new([256]).local([64]));
//! let tile = launch.local::<u32>(64);
//! Runtime::with_threads(2).launch_async(&launch, async |wi| {
//!     let (l, g) = (wi.get_local_id(0), wi.get_global_id(0));
//!     let t = wi.local(tile);
//!     t.set(l, data.get(g));
//!     wi.barrier_async(LOCAL).await;
//!     data.set(g, t.get(63 - l));
//! }).unwrap();
//! assert_eq!(data.get(0), 63);
//! ```

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::marker::PhantomData;
use std::panic::Location;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::{ItemFailure, ItemTask, Resume, Suspend, WorkItem};
use crate::scheduler::{hooks, with_group, GroupFailure, GroupRunner, Shared, Worker};
use crate::sync::{
    fence_effect, Arrival, BarrierKind, FenceFlags, MemFlags, MemOrder, Scope, Site,
};

thread_local! {
    /// Where the work-item being polled on this thread arrived at a barrier
    /// (`None`: it did not).
    static ARRIVED_AT: Cell<Option<&'static Location<'static>>> = const { Cell::new(None) };
    /// Which barrier it was, packed ([`Arrival::how`]).
    static ARRIVED_HOW: Cell<u32> = const { Cell::new(0) };
}

/// Hands `arrival` to the scheduler, across the thread-locals as its two
/// words, each a single scalar store (read back by [`take`]).
///
/// Copying a whole [`BarrierWait`](crate::sync::BarrierWait) through the
/// future and a thread-local within one poll cost a stalled load per arrival:
/// a value stored in pieces and read back in one wider load cannot be
/// forwarded from the store buffer, and that stall was most of an async
/// barrier's cost.
#[inline]
fn post(arrival: Arrival) {
    let (at, how) = arrival.parts();
    ARRIVED_HOW.with(|c| c.set(how));
    ARRIVED_AT.with(|c| c.set(Some(at)));
}

/// What the last poll on this thread [`post`]ed, if anything.
#[inline]
fn take() -> Option<Arrival> {
    let at = ARRIVED_AT.with(|c| c.take())?;
    Some(Arrival::from_parts(at, ARRIVED_HOW.with(|c| c.get())))
}

/// The future of one arrival at a barrier: at its first poll the
/// work-item arrives (the barrier's release half) and it is pending (the
/// scheduler then holds the work-item until the barrier is released); at the
/// next it takes the barrier's acquire half and is ready.
///
/// Written by hand rather than as an `async fn`, so that it holds no more
/// than its work-item, its site and one flag: a suspended work-item's future
/// is this plus the kernel's own live values, and the smaller a group's
/// futures, the more of them stay in the cache from one barrier to the next.
/// The barrier's kind (`SUB`), flags (`F`) and scope (`S`) are types, as the
/// kernel wrote them, so its fences fold to what they need at compile time
/// (a compiler fence, for a local barrier) and its arrival to a constant.
pub(crate) struct Arrive<'w, 'g, F, S, const SUB: bool> {
    wi: &'w WorkItem<'g>,
    at: &'static Location<'static>,
    arrived: bool,
    // `fn() -> _`: the types are markers, borrowed from no one.
    barrier: PhantomData<fn() -> (F, S)>,
}

impl<'w, 'g, F: FenceFlags, S: Scope, const SUB: bool> Arrive<'w, 'g, F, S, SUB> {
    const KIND: BarrierKind = if SUB {
        BarrierKind::SubGroup
    } else {
        BarrierKind::WorkGroup
    };
    const FLAGS: MemFlags = MemFlags(F::BITS);

    #[inline]
    pub(crate) fn new(wi: &'w WorkItem<'g>, at: &'static Location<'static>) -> Self {
        Arrive {
            wi,
            at,
            arrived: false,
            barrier: PhantomData,
        }
    }
}

impl<F: FenceFlags, S: Scope, const SUB: bool> Future for Arrive<'_, '_, F, S, SUB> {
    type Output = ();
    #[inline]
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.arrived {
            // Released: the acquire half.
            fence_effect(Self::FLAGS, MemOrder::Acquire, S::SCOPE);
            return Poll::Ready(());
        }
        self.arrived = true;
        let at = self.at;
        self.wi
            .arrive(Self::KIND, Self::FLAGS, S::SCOPE, || Site::from(at));
        post(Arrival::new(Self::KIND, Self::FLAGS, S::SCOPE, at));
        Poll::Pending
    }
}

/// Runs an async Rust kernel.
///
/// Not an [`Engine`](super::Engine): its tasks are the kernel's own futures,
/// a type no one can name, so it makes each group's tasks itself (through
/// the scheduler's `with_group`), all in one pinned slice. Polling them is
/// then a direct call the compiler can inline into the scheduler's rounds,
/// not one through a vtable, and a group's futures lie side by side.
pub(crate) struct AsyncEngine<'k, F> {
    kernel: &'k F,
}

impl<'k, F> AsyncEngine<'k, F>
where
    F: AsyncFn(&WorkItem<'_>) + Sync,
{
    /// An engine for `kernel`.
    pub(crate) fn new(kernel: &'k F) -> Self {
        AsyncEngine { kernel }
    }
}

/// One work-item of an async kernel: its future, in its group's pinned
/// slice (`None` once it has finished or was cancelled).
struct AsyncTask<'a, Fut> {
    future: Pin<&'a mut Option<Fut>>,
}

impl<Fut: Future<Output = ()>> ItemTask for AsyncTask<'_, Fut> {
    #[inline]
    fn resume(&mut self, signal: Resume) -> Suspend {
        if signal == Resume::Cancel {
            // Dropping the future (in place) unwinds nothing: its state is
            // freed.
            self.future.set(None);
            return Suspend::Failed(ItemFailure::Cancelled { site: None });
        }
        match catch_unwind(AssertUnwindSafe(|| self.poll())) {
            Ok(suspend) => suspend,
            Err(payload) => self.panicked(payload),
        }
    }

    #[inline(always)]
    fn resume_unguarded(&mut self) -> Suspend {
        self.poll()
    }

    #[inline(always)]
    fn catch_unguarded<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
        catch_unwind(AssertUnwindSafe(f))
    }

    #[cold]
    fn panicked(&mut self, payload: Box<dyn Any + Send>) -> Suspend {
        self.future.set(None);
        // A future that arrived and then panicked in the same poll (by
        // polling an arrival itself) leaves no arrival behind.
        let _ = take();
        Suspend::Failed(hooks::failure_from_panic(payload))
    }
}

impl<Fut: Future<Output = ()>> AsyncTask<'_, Fut> {
    /// Polls the future once; a panic unwinds out of it.
    #[inline(always)]
    fn poll(&mut self) -> Suspend {
        let Some(future) = self.future.as_mut().as_pin_mut() else {
            return Suspend::Failed(ItemFailure::Cancelled { site: None });
        };
        let mut cx = Context::from_waker(Waker::noop());
        match future.poll(&mut cx) {
            Poll::Ready(()) => {
                self.future.set(None);
                Suspend::Done
            }
            Poll::Pending => match take() {
                Some(arrival) => Suspend::Arrived(arrival),
                None => {
                    self.future.set(None);
                    Suspend::Failed(ItemFailure::Panic {
                        message: "the kernel awaited something other than a clsync barrier; \
                                  work-items cannot wait for anything else"
                            .to_string(),
                        site: None,
                    })
                }
            },
        }
    }
}

impl<F> GroupRunner for AsyncEngine<'_, F>
where
    F: AsyncFn(&WorkItem<'_>) + Sync,
{
    fn run_group(
        &self,
        shared: &Shared<'_>,
        linear: usize,
        worker: &mut Worker<'_>,
    ) -> Result<(), GroupFailure> {
        let kernel = self.kernel;
        with_group(shared, linear, worker, |env, ids, run| {
            // The work-items apart from their futures, which borrow them:
            // a future is then the kernel's own, not one that also holds
            // its work-item and awaits the kernel's (one state machine per
            // resumption rather than two).
            let items: Vec<WorkItem<'_>> = ids
                .iter()
                .map(|ids| WorkItem {
                    ids,
                    env,
                    yielder: None,
                    image_pending: RefCell::new(Vec::new()),
                })
                .collect();
            let mut futures: Pin<Box<[_]>> = items
                .iter()
                .map(|wi| Some(kernel(wi)))
                .collect::<Box<[_]>>()
                .into();
            // SAFETY: each element of a pinned slice is pinned too: the
            // slice stays where it is, in its box, until the box is dropped,
            // which drops each future in place, and `futures` is not touched
            // again while the tasks borrow it. No future is moved out of it:
            // a task only polls its own through `Pin` and replaces it through
            // `Pin::set`, which drops it in place.
            let slots = unsafe { futures.as_mut().get_unchecked_mut() };
            let mut tasks: Vec<AsyncTask<'_, _>> = slots
                .iter_mut()
                // SAFETY: as above; each element is lent to one task only.
                .map(|f| AsyncTask {
                    future: unsafe { Pin::new_unchecked(f) },
                })
                .collect();
            run.drive(&mut tasks)
        })
    }
}
