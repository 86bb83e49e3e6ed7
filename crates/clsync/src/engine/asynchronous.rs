//! The async engine: each work-item is a Rust future, polled by the
//! scheduler; a barrier is `wi.barrier_async(flags).await`.
//!
//! Like the coroutine engine it takes any control flow around barriers, but
//! a work-item is a state machine rather than a stack: resuming it is a
//! call, not a stack switch, and a group of 4096 work-items costs 4096
//! small allocations rather than 4096 stacks.
//!
//! # What a barrier costs
//!
//! A resumption is a poll through the future's vtable, and an arrival two
//! words in thread-locals (`Arrival`); the scheduler compares it with the
//! round's first arrival and moves on (`scheduler::group`'s fast path). About
//! 10 ns per work-item per barrier on the development machine, the coroutine
//! engine's figure there; 15–27 ns on a 16-core Xeon, against the coroutine
//! engine's 27–33. What once made it 30 ns: a future that held its
//! work-item's ids (144 bytes) and an `async fn` barrier, and a barrier
//! record stored field by field and read back in one wider load within the
//! same poll, which the processor cannot forward from its store buffer.
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

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::panic::Location;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::{Engine, GroupEnv, ItemFailure, ItemTask, Resume, Suspend, WorkItem};
use crate::geometry::ItemIds;
use crate::scheduler::hooks;
use crate::sync::{fence_effect, BarrierKind, BarrierWait, MemFlags, MemOrder, MemScope, Site};

thread_local! {
    /// Where the work-item being polled on this thread arrived at a barrier
    /// (`None`: it did not).
    static ARRIVED_AT: Cell<Option<&'static Location<'static>>> = const { Cell::new(None) };
    /// Which barrier it was, packed ([`Arrival::how`]).
    static ARRIVED_HOW: Cell<u32> = const { Cell::new(0) };
}

/// A barrier arrival, as the future hands it to the scheduler: the site as
/// its static `Location`, made into a [`Site`] only when the scheduler reads
/// it, and the kind, flags and scope packed in one word.
///
/// Each goes through the thread-locals as a single scalar store and load.
/// Copying a whole [`BarrierWait`] through the future and a thread-local
/// within one poll cost a stalled load per arrival: a value stored in
/// pieces and read back in one wider load cannot be forwarded from the
/// store buffer, and that stall was most of an async barrier's cost.
#[derive(Clone, Copy)]
struct Arrival {
    at: &'static Location<'static>,
    how: u32,
}

impl Arrival {
    #[inline]
    fn new(
        kind: BarrierKind,
        flags: MemFlags,
        scope: MemScope,
        at: &'static Location<'static>,
    ) -> Self {
        let kind = match kind {
            BarrierKind::WorkGroup => 0,
            BarrierKind::SubGroup => 1,
        };
        // A scope's discriminant is its index in `MemScope::ALL`.
        let scope = scope as u32;
        Arrival {
            at,
            how: kind | (u32::from(flags.bits()) << 1) | (scope << 4),
        }
    }

    #[inline]
    fn kind(self) -> BarrierKind {
        if self.how & 1 == 0 {
            BarrierKind::WorkGroup
        } else {
            BarrierKind::SubGroup
        }
    }

    #[inline]
    fn flags(self) -> MemFlags {
        MemFlags(((self.how >> 1) & 7) as u8)
    }

    #[inline]
    fn scope(self) -> MemScope {
        MemScope::ALL[(self.how >> 4) as usize]
    }

    #[inline]
    fn wait(self) -> BarrierWait {
        BarrierWait {
            kind: self.kind(),
            site: Site::from(self.at),
            flags: self.flags(),
            scope: self.scope(),
        }
    }

    /// Hands the arrival to the scheduler.
    #[inline]
    fn post(self) {
        ARRIVED_HOW.with(|c| c.set(self.how));
        ARRIVED_AT.with(|c| c.set(Some(self.at)));
    }

    /// What the last poll on this thread posted, if anything.
    #[inline]
    fn take() -> Option<Arrival> {
        let at = ARRIVED_AT.with(|c| c.take())?;
        Some(Arrival {
            at,
            how: ARRIVED_HOW.with(|c| c.get()),
        })
    }
}

/// The future of one arrival at a barrier: at its first poll the
/// work-item arrives (the barrier's release half) and it is pending (the
/// scheduler then holds the work-item until the barrier is released); at the
/// next it takes the barrier's acquire half and is ready.
///
/// Written by hand rather than as an `async fn`, so that it holds no more
/// than the barrier and its work-item: a suspended work-item's future is this
/// plus the kernel's own live values, and the smaller a group's futures, the
/// more of them stay in the cache from one barrier to the next.
pub(crate) struct Arrive<'w, 'g> {
    wi: &'w WorkItem<'g>,
    arrival: Arrival,
    arrived: bool,
}

impl<'w, 'g> Arrive<'w, 'g> {
    #[inline]
    pub(crate) fn new(
        wi: &'w WorkItem<'g>,
        kind: BarrierKind,
        flags: MemFlags,
        scope: MemScope,
        at: &'static Location<'static>,
    ) -> Self {
        Arrive {
            wi,
            arrival: Arrival::new(kind, flags, scope, at),
            arrived: false,
        }
    }
}

impl Future for Arrive<'_, '_> {
    type Output = ();
    #[inline]
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        let a = self.arrival;
        if self.arrived {
            // Released: the acquire half.
            fence_effect(a.flags(), MemOrder::Acquire, a.scope());
            return Poll::Ready(());
        }
        self.arrived = true;
        self.wi
            .arrive(a.kind(), a.flags(), a.scope(), || Site::from(a.at));
        a.post();
        Poll::Pending
    }
}

/// Runs an async Rust kernel.
pub struct AsyncEngine<'k, F> {
    kernel: &'k F,
}

impl<'k, F> AsyncEngine<'k, F>
where
    F: AsyncFn(&WorkItem<'_>) + Sync,
{
    /// An engine for `kernel`.
    pub fn new(kernel: &'k F) -> Self {
        AsyncEngine { kernel }
    }
}

/// One work-item of an async kernel.
pub struct AsyncTask<'g> {
    future: Option<Pin<Box<dyn Future<Output = ()> + 'g>>>,
}

impl ItemTask for AsyncTask<'_> {
    #[inline]
    fn resume(&mut self, signal: Resume) -> Suspend {
        let Some(future) = self.future.as_mut() else {
            return Suspend::Failed(ItemFailure::Cancelled { site: None });
        };
        if signal == Resume::Cancel {
            // Dropping the future unwinds nothing: its state is freed.
            self.future = None;
            return Suspend::Failed(ItemFailure::Cancelled { site: None });
        }
        let mut cx = Context::from_waker(Waker::noop());
        match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut cx))) {
            Ok(Poll::Ready(())) => {
                self.future = None;
                Suspend::Done
            }
            Ok(Poll::Pending) => match Arrival::take() {
                Some(arrival) => Suspend::Barrier(arrival.wait()),
                None => {
                    self.future = None;
                    Suspend::Failed(ItemFailure::Panic {
                        message: "the kernel awaited something other than a clsync barrier; \
                                  work-items cannot wait for anything else"
                            .to_string(),
                        site: None,
                    })
                }
            },
            Err(payload) => {
                self.future = None;
                Suspend::Failed(hooks::failure_from_panic(payload))
            }
        }
    }
}

impl<F> Engine for AsyncEngine<'_, F>
where
    F: AsyncFn(&WorkItem<'_>) + Sync,
{
    type Task<'g>
        = AsyncTask<'g>
    where
        Self: 'g;

    fn spawn<'g>(
        &'g self,
        env: &'g GroupEnv<'g>,
        ids: &'g ItemIds,
    ) -> Result<AsyncTask<'g>, String> {
        let kernel = self.kernel;
        let future = async move {
            let wi = WorkItem {
                ids,
                env,
                yielder: None,
                image_pending: RefCell::new(Vec::new()),
            };
            kernel(&wi).await
        };
        Ok(AsyncTask {
            future: Some(Box::pin(future)),
        })
    }

    fn retire(&self, task: AsyncTask<'_>) {
        drop(task);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every barrier an async work-item can wait at reaches the scheduler
    /// as itself: each kind, each of the seven legal flag sets
    /// (`000_96da91f170ff246f.txt`) and each scope survive the packing into
    /// one word, and the site is the arrival's.
    #[test]
    fn arrivals_unpack_to_their_barrier() {
        let at = Location::caller();
        for kind in [BarrierKind::WorkGroup, BarrierKind::SubGroup] {
            for bits in 1..=7 {
                let flags = MemFlags::from_bits(bits).expect("a legal set");
                for scope in MemScope::ALL {
                    let want = BarrierWait {
                        kind,
                        site: Site::from(at),
                        flags,
                        scope,
                    };
                    assert_eq!(Arrival::new(kind, flags, scope, at).wait(), want);
                }
            }
        }
    }
}
