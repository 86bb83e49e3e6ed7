//! The async engine: each work-item is a Rust future, polled by the
//! scheduler; a barrier is `wi.barrier_async(flags).await`.
//!
//! Like the coroutine engine it takes any control flow around barriers, but
//! a work-item is a state machine rather than a stack: resuming it is a
//! call, not a stack switch, and a group of 4096 work-items costs 4096
//! small allocations rather than 4096 stacks.
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
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::{Engine, GroupEnv, ItemFailure, ItemTask, Resume, Suspend, WorkItem};
use crate::geometry::ItemIds;
use crate::scheduler::hooks;
use crate::sync::BarrierWait;

thread_local! {
    /// The barrier the work-item being polled on this thread arrived at.
    static ARRIVED: Cell<Option<BarrierWait>> = const { Cell::new(None) };
}

/// The future of one arrival at a barrier: pending once (the scheduler
/// then holds the work-item until the barrier is released), then ready.
pub(crate) struct Arrive {
    wait: BarrierWait,
    arrived: bool,
}

impl Arrive {
    pub(crate) fn new(wait: BarrierWait) -> Self {
        Arrive {
            wait,
            arrived: false,
        }
    }
}

impl Future for Arrive {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.arrived {
            return Poll::Ready(());
        }
        self.arrived = true;
        ARRIVED.with(|a| a.set(Some(self.wait)));
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
            Ok(Poll::Pending) => match ARRIVED.with(|a| a.take()) {
                Some(wait) => Suspend::Barrier(wait),
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

    fn spawn<'g>(&'g self, env: &'g GroupEnv<'g>, ids: ItemIds) -> Result<AsyncTask<'g>, String> {
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
