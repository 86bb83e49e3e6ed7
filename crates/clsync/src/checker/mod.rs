//! The checker: turns what the OpenCL C specification leaves undefined into
//! [`Report`]s.
//!
//! Turn it on for one launch with [`Launch::checked`](crate::Launch::checked),
//! for every launch of a runtime with
//! [`Runtime::with_checking`](crate::Runtime::with_checking), or for a whole
//! process (a test suite) with the environment variable `CLSYNC_CHECK=1`. A
//! checked launch that finds anything returns
//! [`LaunchError::Reported`](crate::LaunchError::Reported) with every report;
//! [`Runtime::check`](crate::Runtime::check) returns the reports as a value.
//!
//! ```
//! use clsync::{Buffer, Launch, NdRange, Runtime};
//! use clsync::checker::ReportKind;
//!
//! // Every work-item writes out[0]: a data race between work-items.
//! let out = Buffer::<u32>::new(1).named("out");
//! let launch = Launch::new("racy", NdRange::new([8]).local([4]));
//! let reports = Runtime::with_threads(2)
//!     .check(&launch, |wi| out.set(0, wi.get_global_id(0) as u32))
//!     .unwrap();
//! assert_eq!(reports.len(), 1);
//! assert_eq!(reports[0].kind, ReportKind::DataRace);
//! assert_eq!(reports[0].memory.as_ref().unwrap().name, "out");
//! ```
//!
//! # What it finds
//!
//! | kind | what |
//! | --- | --- |
//! | [`BarrierDivergence`](ReportKind::BarrierDivergence) | not every work-item of a group (sub-group) reached the same barrier |
//! | [`DataRace`](ReportKind::DataRace) | conflicting plain accesses not ordered by happens-before |
//! | [`MixedAccess`](ReportKind::MixedAccess) | an atomic and a plain access conflicting, not ordered |
//! | [`ScopeTooNarrow`](ReportKind::ScopeTooNarrow) | conflicting atomics whose scopes do not include each other |
//! | [`ImageFence`](ReportKind::ImageFence) | a work-item reads a pixel it wrote with no image fence between |
//! | [`OutOfBounds`](ReportKind::OutOfBounds) | an index outside a buffer, local array or image |
//! | [`UninitializedLocal`](ReportKind::UninitializedLocal) | local memory read before any work-item of the group wrote it |
//! | [`InvalidArgument`](ReportKind::InvalidArgument) | fence flags, orders or scopes the operation does not allow (run-time forms) |
//!
//! Happens-before is computed per address space, honouring barrier flags,
//! sub-groups, scopes and fences; see the `state` module's notes. An
//! out-of-bounds access is redirected to a scratch element so the kernel
//! runs on and later findings are still made.
//!
//! # Limits
//!
//! Accesses by host threads are not checked. Reports are deterministic
//! for a kernel whose groups do not race with each other; for races between
//! groups, which pair is shown is fixed (lowest ids) but the count can
//! depend on how groups interleave.

mod barrier;
mod clock;
mod context;
pub mod engine;
mod intern;
mod item;
mod objects;
mod pool;
mod race_free;
mod reads;
mod report;
mod shadow;
mod state;
mod storage;

pub use context::{at_site, SiteScope};
pub use report::{to_json, Access, AccessOp, MemoryRef, Report, ReportKind, Space};

pub(crate) use context::{
    argument, atomic, checking_here, fence, interpreted_site, out_of_bounds, plain,
    unfenced_image_read, ActiveLaunch, Running,
};
pub(crate) use item::{AtomicAccess, OpKind};
pub(crate) use objects::{register, unregister};
pub(crate) use shadow::Shadow;
pub(crate) use state::{GroupCheck, LaunchCheck};

/// Whether the environment turns checking on for every launch:
/// `CLSYNC_CHECK` set to anything but empty or `0`. Read once.
pub fn enabled_by_env() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("CLSYNC_CHECK").is_ok_and(|v| !v.is_empty() && v != "0"))
}
