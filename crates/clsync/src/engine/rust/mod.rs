//! The Rust engine: a kernel is a Rust closure, each work-item a stackful
//! coroutine on its group's worker thread.
//!
//! A barrier suspends the coroutine (a register save and a stack switch, a
//! few nanoseconds) and hands the scheduler a [`Suspend::Arrived`] (or, for
//! a barrier with no static site, a [`Suspend::Barrier`]); the scheduler
//! resumes it once the barrier is released. Any control flow around
//! barriers works, because each work-item has its own stack.
//!
//! What crosses the switch is small on purpose (`Yielded`): the coroutine
//! library moves a yielded value through memory, and a whole `Suspend`
//! (40 bytes) built on the work-item's stack and read back on the
//! scheduler's cost about 16 of 93 instructions per work-item per barrier
//! (`valgrind --tool=callgrind`, local 256; 77 with `Yielded`).

mod collectives;
mod item;
mod non_uniform;
mod stack;

pub(crate) use item::arrive_unowned;
pub use item::WorkItem;
pub use stack::DEFAULT_STACK_SIZE;

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};

use corosensei::{Coroutine, CoroutineResult, Yielder};

use super::{Engine, GroupEnv, ItemFailure, ItemTask, Resume, Suspend};
use crate::geometry::ItemIds;
use crate::scheduler::hooks;
use crate::sync::{Arrival, BarrierWait};
use stack::ItemStack;

/// Runs a Rust kernel closure.
pub struct RustEngine<'k, F> {
    kernel: &'k F,
    stack_size: usize,
}

impl<'k, F> RustEngine<'k, F>
where
    F: Fn(&WorkItem<'_>) + Sync,
{
    /// An engine for `kernel`, with work-item stacks of `stack_size` bytes.
    pub fn new(kernel: &'k F, stack_size: usize) -> Self {
        RustEngine { kernel, stack_size }
    }
}

/// What a work-item's coroutine yields at a barrier: its [`Arrival`], or
/// `None` for a barrier with no static site, whose [`BarrierWait`] waits in
/// [`WAITING_AT`] (a work-item yields nothing else: it returns its `Done` or
/// `Failed`).
pub(crate) type Yielded = Option<Arrival>;

thread_local! {
    /// The barrier a work-item of this thread waits at when it yielded
    /// `None` (an interpreted program's barrier, with no static site): set
    /// just before the switch, taken by its task just after.
    pub(super) static WAITING_AT: Cell<Option<BarrierWait>> = const { Cell::new(None) };
}

/// One work-item of a Rust kernel.
pub struct RustTask<'g> {
    co: Coroutine<Resume, Yielded, Suspend, ItemStack>,
    _borrows: PhantomData<&'g ()>,
}

impl ItemTask for RustTask<'_> {
    #[inline]
    fn resume(&mut self, signal: Resume) -> Suspend {
        match self.co.resume(signal) {
            CoroutineResult::Yield(Some(arrival)) => Suspend::Arrived(arrival),
            CoroutineResult::Yield(None) => {
                let wait = WAITING_AT.with(Cell::take);
                Suspend::Barrier(wait.expect("a work-item yields `None` after setting WAITING_AT"))
            }
            CoroutineResult::Return(s) => s,
        }
    }
}

impl<F> Engine for RustEngine<'_, F>
where
    F: Fn(&WorkItem<'_>) + Sync,
{
    type Task<'g>
        = RustTask<'g>
    where
        Self: 'g;

    fn spawn<'g>(
        &'g self,
        env: &'g GroupEnv<'g>,
        ids: &'g ItemIds,
    ) -> Result<RustTask<'g>, String> {
        let stack = stack::take(self.stack_size)?;
        let kernel = self.kernel;
        let body = move |yielder: &Yielder<Resume, Yielded>, first: Resume| -> Suspend {
            if first == Resume::Cancel {
                return Suspend::Failed(ItemFailure::Cancelled { site: None });
            }
            let wi = WorkItem {
                ids,
                env,
                yielder: Some(yielder),
                image_pending: RefCell::new(Vec::new()),
                collectives: Default::default(),
            };
            match catch_unwind(AssertUnwindSafe(|| kernel(&wi))) {
                Ok(()) => Suspend::Done,
                Err(payload) => Suspend::Failed(hooks::failure_from_panic(payload)),
            }
        };
        // SAFETY: the closure borrows `env` and `kernel` for `'g`, and the
        // returned task is tied to `'g` by its `PhantomData`, so it cannot
        // outlive them. The scheduler drives every task to completion (with
        // `Resume::Cancel` when abandoning a group) and hands it to `retire`
        // or drops it; it never leaks one with `mem::forget`.
        let co = unsafe { Coroutine::with_stack_unchecked(stack, body) };
        Ok(RustTask {
            co,
            _borrows: PhantomData,
        })
    }

    fn retire(&self, task: RustTask<'_>) {
        if task.co.done() {
            stack::give(task.co.into_stack());
        }
        // A task not driven to completion is dropped, which unwinds its
        // stack; its memory is then unmapped rather than reused.
    }
}
