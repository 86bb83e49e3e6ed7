//! The Rust engine: a kernel is a Rust closure, each work-item a stackful
//! coroutine on its group's worker thread.
//!
//! A barrier suspends the coroutine (a register save and a stack switch, a
//! few nanoseconds) and hands the scheduler a [`Suspend::Barrier`]; the
//! scheduler resumes it once the barrier is released. Any control flow
//! around barriers works, because each work-item has its own stack.

mod item;
mod stack;

pub use item::WorkItem;
pub use stack::DEFAULT_STACK_SIZE;

use std::cell::RefCell;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};

use corosensei::{Coroutine, CoroutineResult, Yielder};

use super::{Engine, GroupEnv, ItemFailure, ItemTask, Resume, Suspend};
use crate::geometry::ItemIds;
use crate::scheduler::hooks;
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

/// One work-item of a Rust kernel.
pub struct RustTask<'g> {
    co: Coroutine<Resume, Suspend, Suspend, ItemStack>,
    _borrows: PhantomData<&'g ()>,
}

impl ItemTask for RustTask<'_> {
    #[inline]
    fn resume(&mut self, signal: Resume) -> Suspend {
        match self.co.resume(signal) {
            CoroutineResult::Yield(s) | CoroutineResult::Return(s) => s,
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
        let body = move |yielder: &Yielder<Resume, Suspend>, first: Resume| -> Suspend {
            if first == Resume::Cancel {
                return Suspend::Failed(ItemFailure::Cancelled { site: None });
            }
            let wi = WorkItem {
                ids,
                env,
                yielder: Some(yielder),
                image_pending: RefCell::new(Vec::new()),
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
