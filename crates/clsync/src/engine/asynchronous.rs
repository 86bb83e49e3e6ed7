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
//! fold at compile time; the arrival goes back to the scheduler through the
//! poll's own context (`Posted`), and the scheduler's fast path compares it
//! with the round's first as two words ([`Arrival`]).
//!
//! The scheduler resumes every task in one loop (`resume_while_same`),
//! so the kernel's `poll` has one call site and LLVM inlines it there
//! whatever its size; and polls there are not wrapped one by one in
//! `catch_unwind` ([`ItemTask::resume_unguarded`]): the loop catches a panic
//! once, around the round. About 37 instructions per work-item per barrier
//! (`valgrind --tool=callgrind`, local 256, the barrier bench's loop, ten of
//! them the kernel's own), 49 with the arrival through thread-locals and a
//! barrier future that held its work-item, 81 with a catch per poll and the
//! poll out of line, 190 before that.
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
use std::mem::ManuallyDrop;
use std::panic::Location;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

use super::rust::arrive_unowned;
use super::{ItemFailure, ItemTask, Resume, Suspend, WorkItem};
use crate::scheduler::{hooks, with_group, GroupFailure, GroupRunner, Shared, Worker};
use crate::sync::{
    fence_effect, Arrival, BarrierKind, FenceFlags, MemFlags, MemOrder, Scope, Site,
};

/// Where a barrier future's first poll leaves its arrival for the
/// scheduler: the data of the waker in the context of each poll, which
/// lives on the polling task's stack for that one poll.
///
/// Carried by the context rather than a thread-local, so that once the
/// kernel's `poll` is inlined into the scheduler's round (see
/// `resume_while_same`) the compiler sees the store and the load of one
/// local: the arrival stays in registers, where two thread-local stores and
/// a load cost six instructions per work-item per barrier.
struct Posted(Cell<Option<Arrival>>);

/// The waker of a poll by this engine: its data is a [`Posted`].
///
/// Only a poll's own context holds such a waker: a clone is a waker of
/// [`INERT`], so that a waker kept past its poll never leads to its
/// (gone) `Posted`. Waking does nothing: a work-item is resumed by its
/// group's rounds, never by a wake.
static POSTING: RawWakerVTable = RawWakerVTable::new(clone_inert, ignore, ignore, ignore);

/// A waker that leads nowhere: what a clone of a [`POSTING`] waker is.
static INERT: RawWakerVTable = RawWakerVTable::new(clone_inert, ignore, ignore, ignore);

fn clone_inert(_: *const ()) -> RawWaker {
    RawWaker::new(std::ptr::null(), &INERT)
}

fn ignore(_: *const ()) {}

/// Hands `arrival` to the engine through `cx` (read back by
/// [`AsyncTask::poll`]).
///
/// A barrier polled through a context this engine did not make (another
/// executor inside the kernel, say) is a panic that says so: its work-item
/// could never be resumed past it. So is a second arrival in one poll (two
/// barrier futures polled side by side, as a `join` would): a work-item
/// waits at one barrier at a time. Where the kernel's poll is inlined into
/// the scheduler's round, the compiler sees that a plain `.await` posts
/// once per poll, and that test folds away.
#[inline]
fn post(cx: &Context<'_>, arrival: Arrival) {
    let waker = cx.waker();
    // The data is tested too: a clone's is null, so that even a build that
    // folded the two tables, alike as they are, into one would tell them
    // apart.
    if !std::ptr::eq(waker.vtable(), &POSTING) || waker.data().is_null() {
        foreign_poll(arrival);
    }
    // SAFETY: a waker with the `POSTING` table and non-null data is made
    // only by `AsyncTask::poll`, with its data the address of a `Posted` on
    // its stack, and lent only inside that poll's context (a clone gets the
    // `INERT` table and null data): `cx` borrows it, so the `Posted` is
    // alive now.
    let posted = unsafe { &*waker.data().cast::<Posted>() };
    if let Some(first) = posted.0.get() {
        two_arrivals(first, arrival);
    }
    posted.0.set(Some(arrival));
}

#[cold]
#[inline(never)]
fn two_arrivals(first: Arrival, second: Arrival) -> ! {
    panic!(
        "{}: the work-item arrived here while it already waited at {}; \
         a work-item waits at one barrier at a time (await each barrier before the next)",
        second.wait(),
        first.wait()
    )
}

#[cold]
#[inline(never)]
fn foreign_poll(arrival: Arrival) -> ! {
    panic!(
        "{}: a barrier future was polled by something other than clsync's \
         scheduler (an executor inside the kernel?); await barriers in the kernel's own future",
        arrival.wait()
    )
}

/// The future of one arrival at a barrier: at its first poll the
/// work-item arrives (the barrier's release half) and it is pending (the
/// scheduler then holds the work-item until the barrier is released); at the
/// next it takes the barrier's acquire half and is ready.
///
/// Written by hand rather than as an `async fn`, so that it holds one word:
/// its site until it arrives, `None` after. A suspended work-item's future
/// is this plus the kernel's own live values, and the smaller a group's
/// futures, the more of them stay in the cache from one barrier to the next;
/// and as one word, the site stored when the future is made and the `None`
/// stored at its first poll, in the same resumption, fold into the one
/// store of `None`. What needs the work-item itself, a barrier's image
/// fence, the engine does after the poll ([`AsyncTask::poll`]). The
/// barrier's kind (`SUB`), flags (`F`) and scope (`S`) are types, as the
/// kernel wrote them, so its fences fold to what they need at compile time
/// (a compiler fence, for a local barrier) and its arrival to a constant.
pub(crate) struct Arrive<F, S, const SUB: bool> {
    /// Where the barrier is, until the work-item arrives there.
    at: Option<&'static Location<'static>>,
    // `fn() -> _`: the types are markers, borrowed from no one.
    barrier: PhantomData<fn() -> (F, S)>,
}

impl<F: FenceFlags, S: Scope, const SUB: bool> Arrive<F, S, SUB> {
    const KIND: BarrierKind = if SUB {
        BarrierKind::SubGroup
    } else {
        BarrierKind::WorkGroup
    };
    const FLAGS: MemFlags = MemFlags(F::BITS);

    #[inline]
    pub(crate) fn new(at: &'static Location<'static>) -> Self {
        Arrive {
            at: Some(at),
            barrier: PhantomData,
        }
    }
}

impl<F: FenceFlags, S: Scope, const SUB: bool> Future for Arrive<F, S, SUB> {
    type Output = ();
    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(at) = self.at else {
            // Released: the acquire half.
            fence_effect(Self::FLAGS, MemOrder::Acquire, S::SCOPE);
            return Poll::Ready(());
        };
        // Not `take`, which would store `None` again on this path.
        self.at = None;
        arrive_unowned(Self::KIND, Self::FLAGS, S::SCOPE, || Site::from(at));
        post(cx, Arrival::new(Self::KIND, Self::FLAGS, S::SCOPE, at));
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
/// slice, and the work-item it borrows.
///
/// A future is never polled again once it has returned, panicked or been
/// cancelled: the scheduler resumes only work-items that wait at a barrier
/// (their slots say which). So it carries no "finished" state of its own to
/// test per poll; every future is dropped in place with its group's slice,
/// and a cancelled one's live values with it.
struct AsyncTask<'a, 'w, Fut> {
    future: Pin<&'a mut Fut>,
    item: &'w WorkItem<'w>,
}

impl<Fut: Future<Output = ()>> ItemTask for AsyncTask<'_, '_, Fut> {
    #[inline]
    fn resume(&mut self, signal: Resume) -> Suspend {
        if signal == Resume::Cancel {
            // Its state is dropped with the group's futures; nothing
            // unwinds.
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
        // An arrival posted in the poll that panicked went with its
        // context.
        Suspend::Failed(hooks::failure_from_panic(payload))
    }
}

impl<Fut: Future<Output = ()>> AsyncTask<'_, '_, Fut> {
    /// Polls the future once; a panic unwinds out of it.
    #[inline(always)]
    fn poll(&mut self) -> Suspend {
        let posted = Posted(Cell::new(None));
        // SAFETY: the waker's data is `posted`, which outlives the context
        // (both are this poll's locals), and its table is `POSTING`, whose
        // functions never read the data (a clone gets `INERT`): `post`
        // alone reads it, inside this poll.
        //
        // Never dropped: its table's `drop` does nothing, and a call to it,
        // through a table another crate's code cannot see into, would be one
        // per poll.
        let waker = ManuallyDrop::new(unsafe {
            Waker::from_raw(RawWaker::new(std::ptr::from_ref(&posted).cast(), &POSTING))
        });
        let mut cx = Context::from_waker(&waker);
        match self.future.as_mut().poll(&mut cx) {
            Poll::Ready(()) => Suspend::Done,
            Poll::Pending => match posted.0.get() {
                Some(arrival) => {
                    // The barrier's image fence, which its future leaves
                    // to the engine; nothing unless its flags have IMAGE
                    // (decided at compile time where the poll is inlined).
                    self.item.barrier_images(arrival.flags());
                    Suspend::Arrived(arrival)
                }
                None => Suspend::Failed(ItemFailure::Panic {
                    message: "the kernel awaited something other than a clsync barrier; \
                              work-items cannot wait for anything else"
                        .to_string(),
                    site: None,
                }),
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
                    collectives: Default::default(),
                })
                .collect();
            let mut futures: Pin<Box<[_]>> = items
                .iter()
                .map(|wi| kernel(wi))
                .collect::<Box<[_]>>()
                .into();
            // SAFETY: each element of a pinned slice is pinned too: the
            // slice stays where it is, in its box, until the box is dropped,
            // which drops each future in place, and `futures` is not touched
            // again while the tasks borrow it. No future is moved out of it:
            // a task only polls its own through `Pin`.
            let slots = unsafe { futures.as_mut().get_unchecked_mut() };
            let mut tasks: Vec<AsyncTask<'_, '_, _>> = slots
                .iter_mut()
                .zip(&items)
                // SAFETY: as above; each element is lent to one task only.
                .map(|(f, item)| AsyncTask {
                    future: unsafe { Pin::new_unchecked(f) },
                    item,
                })
                .collect();
            run.drive(&mut tasks)
        })
    }
}
