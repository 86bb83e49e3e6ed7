//! What kernel code calls into the scheduler for, from wherever it is:
//! cancellation polls, cancellation unwinds, signs of life for the
//! watchdog's probation, and panic capture.
//!
//! A worker thread running groups of a launch publishes that launch's cancel
//! flag and probation in a thread-local; atomics, fences and barriers poll
//! them, so a work-item spinning on a flag that nobody will set unwinds when
//! the watchdog fires instead of hanging the launch, and a work-item that
//! polls during a probation tells the watchdog it runs such operations.
//! Host threads have nothing published and never poll.

use std::any::Any;
use std::cell::Cell;
use std::collections::HashSet;
use std::panic::{self, Location};
use std::ptr;
use std::sync::atomic::Ordering;
use std::sync::{Mutex, OnceLock};

use super::watchdog::Probation;
use crate::engine::ItemFailure;
use crate::primitive::AtomicBool;
use crate::sync::Site;

pub(crate) use super::watchdog::changed;

/// The launch a worker thread runs groups of: its cancel flag and its
/// probation, published together by one [`KernelThread`].
type Published = (*const AtomicBool, *const Probation);

thread_local! {
    /// The launch this worker thread is running a group of, or nulls.
    static LAUNCH: Cell<Published> = const { Cell::new((ptr::null(), ptr::null())) };
    /// Where the last kernel panic on this thread happened.
    static PANIC_SITE: Cell<Option<Site>> = const { Cell::new(None) };
    /// The site the next kernel panic on this thread names instead of the
    /// `panic!`'s own (see [`panic_at`]).
    static PANIC_AT: Cell<Option<Site>> = const { Cell::new(None) };
}

/// Publishes a launch's cancel flag and probation on this thread while it
/// lives.
pub(crate) struct KernelThread<'a> {
    _flag: &'a AtomicBool,
    _probation: &'a Probation,
}

impl<'a> KernelThread<'a> {
    pub(crate) fn enter(flag: &'a AtomicBool, probation: &'a Probation) -> Self {
        install_panic_hook();
        LAUNCH.with(|l| l.set((flag, probation)));
        KernelThread {
            _flag: flag,
            _probation: probation,
        }
    }
}

impl Drop for KernelThread<'_> {
    fn drop(&mut self) {
        LAUNCH.with(|l| l.set((ptr::null(), ptr::null())));
    }
}

/// The payload a cancelled work-item unwinds with.
pub(crate) struct Cancelled {
    pub(crate) site: Option<Site>,
}

/// Whether this thread runs a group of a launch (a `KernelThread` lives).
fn in_kernel() -> bool {
    !LAUNCH.with(Cell::get).0.is_null()
}

/// Unwinds the current work-item because its launch is cancelled. Uses
/// `resume_unwind`, so no panic message is printed.
#[cold]
#[inline(never)]
pub(crate) fn cancel_unwind(site: Option<Site>) -> ! {
    panic::resume_unwind(Box::new(Cancelled { site }))
}

/// Polls the current launch's cancel flag; unwinds the work-item if it is
/// set. During a probation, also tells the watchdog that the launch's
/// work-items poll. A no-op on host threads.
///
/// The [`gate`](crate::gate) first: a cancel raises it until its launch
/// ends (`Dispenser::cancel`), and a probation while it lasts, so while it
/// is quiet no flag is set and no probation runs, and the poll is one load
/// of a global instead of the thread-local's lookup and the flag's load (a
/// group-level barrier polls once per barrier).
#[inline]
pub(crate) fn poll(at: &'static Location<'static>) {
    if crate::gate::quiet() {
        return;
    }
    let (flag, probation) = LAUNCH.with(Cell::get);
    if flag.is_null() {
        return;
    }
    // SAFETY: non-null pointers were published, both at once, by a
    // `KernelThread` guard that borrows the flag and the probation and
    // clears both when dropped, so both are alive here.
    let (flag, probation) = unsafe { (&*flag, &*probation) };
    if super::watchdog::probing() {
        probation.note_poll();
    }
    // Relaxed: the flag carries no data; a late observation only delays the
    // unwind to the next poll. It pairs with the store in `Shared::cancel`.
    if flag.load(Ordering::Relaxed) {
        let site = crate::checker::interpreted_site().unwrap_or_else(|| Site::from_location(at));
        cancel_unwind(Some(site))
    }
}

/// Panics with `message`, the launch error naming `at` as where: the
/// kernel's line that made an access, not the line of clsync that found it
/// out of bounds, however deep that is. On a host thread it is a plain
/// panic.
#[cold]
#[inline(never)]
pub(crate) fn panic_at(at: &'static Location<'static>, message: String) -> ! {
    if in_kernel() {
        PANIC_AT.with(|p| p.set(Some(Site::from_location(at))));
    }
    panic!("{message}")
}

/// Turns a caught unwind payload into an [`ItemFailure`].
pub(crate) fn failure_from_panic(payload: Box<dyn Any + Send>) -> ItemFailure {
    if let Some(c) = payload.downcast_ref::<Cancelled>() {
        return ItemFailure::Cancelled { site: c.site };
    }
    ItemFailure::Panic {
        message: panic_message(&*payload),
        site: PANIC_SITE.with(|p| p.take()),
    }
}

/// The message of a panic's payload (a `panic!` with a format gives a
/// `String`, one with a literal a `&str`).
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_string()
    }
}

/// A `&'static str` for a file name seen in a panic (there are only as
/// many as the program has source files).
fn intern(file: &str) -> &'static str {
    static FILES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut files = FILES.lock().unwrap_or_else(|e| e.into_inner());
    let files = files.get_or_insert_with(HashSet::new);
    if let Some(f) = files.get(file) {
        return f;
    }
    let leaked: &'static str = Box::leak(file.to_string().into_boxed_str());
    files.insert(leaked);
    leaked
}

/// Chains a panic hook that, on a thread running a kernel, records where the
/// panic happened for the launch error instead of printing it; elsewhere it
/// defers to the hook that was there before.
fn install_panic_hook() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if in_kernel() {
                // An interpreter's program line first: the interpreter's own
                // lines say nothing about the program it runs.
                let at = PANIC_AT.with(Cell::take);
                let site = crate::checker::interpreted_site().or(at).or_else(|| {
                    info.location().map(|l| Site {
                        file: intern(l.file()),
                        line: l.line(),
                        column: l.column(),
                    })
                });
                PANIC_SITE.with(|p| p.set(site));
            } else {
                previous(info);
            }
        }));
    });
}
