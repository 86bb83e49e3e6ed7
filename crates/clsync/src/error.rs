//! Why a launch failed: bad ranges, barrier divergence, kernel panics,
//! stalls found by the watchdog.

use std::fmt;
use std::time::Duration;

use crate::checker::Report;
use crate::geometry::{ItemIds, RangeError};
use crate::sync::{BarrierKind, BarrierWait, Site};

/// A launch that did not complete.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The ND-range was rejected before anything ran.
    #[error("kernel `{kernel}`: invalid ND-range: {source}")]
    Range {
        /// The kernel.
        kernel: String,
        /// What is wrong with the range.
        #[source]
        source: RangeError,
    },
    /// Work-items of a group or sub-group did not all reach the same
    /// barrier.
    #[error(transparent)]
    Divergence(Box<Divergence>),
    /// A work-item panicked.
    #[error(transparent)]
    Panic(Box<KernelPanic>),
    /// The watchdog saw no progress for its timeout.
    #[error(transparent)]
    Stalled(Box<Stall>),
    /// The runtime could not get what the launch needs (work-item stacks,
    /// local memory past [`MAX_LOCAL_MEM_SIZE`](crate::MAX_LOCAL_MEM_SIZE)).
    #[error("kernel `{kernel}`: {message}")]
    Resource {
        /// The kernel.
        kernel: String,
        /// What failed.
        message: String,
    },
    /// A setting of the [`Launch`](crate::Launch) is out of range (a
    /// watchdog timeout under [`MIN_WATCHDOG`](crate::MIN_WATCHDOG)).
    #[error("kernel `{kernel}`: {message}")]
    Setting {
        /// The kernel.
        kernel: String,
        /// What is wrong.
        message: String,
    },
    /// A checked launch found undefined behaviour.
    #[error(transparent)]
    Reported(Box<Reported>),
    /// A kernel launched another kernel on the runtime it runs on.
    #[error("kernel `{kernel}` was launched from a worker thread of the runtime it would run on; launches cannot nest")]
    Nested {
        /// The kernel.
        kernel: String,
    },
}

/// Where a work-item was when a group stopped.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// Waiting at a barrier.
    AtBarrier(BarrierWait),
    /// Returned from the kernel.
    Exited,
    /// Running (not at a barrier); the site is its last synchronization call
    /// (atomic, fence or barrier), where known.
    Running(Option<Site>),
    /// Released from a barrier or not yet started, waiting for its turn.
    Runnable,
    /// In a kernel lifted by [`#[kernel]`](crate::kernel): evaluated the
    /// condition of a loop or `if` that contains a barrier, at `site`, to
    /// `value` (other work-items of the group got another value).
    Decided {
        /// The condition.
        site: Site,
        /// Its value, as `Debug` writes it.
        value: String,
    },
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::AtBarrier(w) => write!(f, "wait at {w}"),
            Place::Exited => f.write_str("returned from the kernel"),
            Place::Running(Some(s)) => write!(f, "were running, last at {s}"),
            Place::Running(None) => f.write_str("were running"),
            Place::Runnable => f.write_str("were ready to run"),
            Place::Decided { site, value } => {
                write!(f, "evaluated the condition at {site} to {value}")
            }
        }
    }
}

/// The work-items (by local linear id) that share a [`Place`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlaceRun {
    /// Where they were.
    pub place: Place,
    /// Their local linear ids, ascending.
    pub items: Vec<usize>,
}

/// Groups `places` (indexed by local linear id) by place, in order of first
/// appearance.
pub(crate) fn runs_of(places: impl IntoIterator<Item = (usize, Place)>) -> Vec<PlaceRun> {
    let mut runs: Vec<PlaceRun> = Vec::new();
    for (i, p) in places {
        match runs.iter_mut().find(|r| r.place == p) {
            Some(r) => r.items.push(i),
            None => runs.push(PlaceRun {
                place: p,
                items: vec![i],
            }),
        }
    }
    runs
}

/// Writes ascending ids as ranges: `0-31, 40, 42-50`.
pub(crate) struct IdRanges<'a>(pub &'a [usize]);

impl fmt::Display for IdRanges<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids = self.0;
        let mut i = 0;
        let mut first = true;
        while i < ids.len() {
            let mut j = i;
            while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
                j += 1;
            }
            if !first {
                f.write_str(", ")?;
            }
            first = false;
            if i == j {
                write!(f, "{}", ids[i])?;
            } else {
                write!(f, "{}-{}", ids[i], ids[j])?;
            }
            i = j + 1;
        }
        Ok(())
    }
}

fn fmt_id(f: &mut fmt::Formatter<'_>, id: [usize; 3], dims: usize) -> fmt::Result {
    f.write_str("(")?;
    for (d, v) in id[..dims].iter().enumerate() {
        if d > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{v}")?;
    }
    f.write_str(")")
}

/// Writes one line per run of work-items.
fn fmt_runs(f: &mut fmt::Formatter<'_>, runs: &[PlaceRun], indent: &str) -> fmt::Result {
    for run in runs {
        write!(
            f,
            "\n{indent}work-items (local linear id) {} {}",
            IdRanges(&run.items),
            run.place
        )?;
    }
    Ok(())
}

/// Barrier divergence: `003_2caebc1f01141481.txt`, `004_bfca21a36d7bd2da.txt`
/// and `002_6c32435e912a3710.txt` require every work-item of the group
/// (sub-group) to reach each barrier, in every loop iteration; these did not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// The kernel.
    pub kernel: String,
    /// The work-group.
    pub group_id: [usize; 3],
    /// Dimensions of the range.
    pub dims: usize,
    /// Work-group or sub-group barrier.
    pub kind: BarrierKind,
    /// The sub-group, for a sub-group barrier.
    pub sub_group: Option<usize>,
    /// The barrier that could not be released (the first one waited at).
    pub barrier: Site,
    /// Where each work-item of the group (sub-group) was.
    pub places: Vec<PlaceRun>,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "barrier divergence in kernel `{}` at {}: work-group ",
            self.kernel, self.barrier
        )?;
        fmt_id(f, self.group_id, self.dims)?;
        if let Some(s) = self.sub_group {
            write!(f, ", sub-group {s}")?;
        }
        write!(f, ": not every work-item reached the same {}", self.kind)?;
        fmt_runs(f, &self.places, "  ")
    }
}

impl std::error::Error for Divergence {}

/// A panic in a work-item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelPanic {
    /// The kernel.
    pub kernel: String,
    /// Dimensions of the range.
    pub dims: usize,
    /// The work-item.
    pub ids: ItemIds,
    /// The panic message.
    pub message: String,
    /// Where it panicked.
    pub site: Option<Site>,
}

impl fmt::Display for KernelPanic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "kernel `{}` panicked in work-item global id ",
            self.kernel
        )?;
        fmt_id(f, self.ids.global_id, self.dims)?;
        f.write_str(", local id ")?;
        fmt_id(f, self.ids.local_id, self.dims)?;
        f.write_str(", group ")?;
        fmt_id(f, self.ids.group_id, self.dims)?;
        if let Some(s) = self.site {
            write!(f, " at {s}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for KernelPanic {}

/// One work-group in flight when the watchdog fired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupStall {
    /// The group.
    pub group_id: [usize; 3],
    /// Where its work-items were.
    pub places: Vec<PlaceRun>,
}

/// The watchdog saw no progress: for its timeout no work-item reached a
/// barrier or finished, and for one more timeout, in addition, no atomic
/// operation changed memory while the work-items ran atomics, fences or
/// barriers. OpenCL promises no forward progress between work-items of a
/// group, nor between groups, so a work-item spinning on a flag that another
/// must set can wait forever; this names who was stuck where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stall {
    /// The kernel.
    pub kernel: String,
    /// Dimensions of the range.
    pub dims: usize,
    /// The watchdog's timeout.
    pub timeout: Duration,
    /// Groups that had finished.
    pub finished_groups: usize,
    /// Groups in the launch.
    pub total_groups: usize,
    /// Groups in flight, with their work-items.
    pub groups: Vec<GroupStall>,
}

impl fmt::Display for Stall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "kernel `{}` made no progress for 2 × {:?} (watchdog); {} of {} work-groups had finished, {} were stuck",
            self.kernel,
            self.timeout,
            self.finished_groups,
            self.total_groups,
            self.groups.len()
        )?;
        for g in &self.groups {
            f.write_str("\n  work-group ")?;
            fmt_id(f, g.group_id, self.dims)?;
            f.write_str(":")?;
            fmt_runs(f, &g.places, "    ")?;
        }
        // What the watchdog counts, for a kernel that was not stuck but
        // slow: it cannot tell a wait on a host thread that will answer, or
        // a long stretch of atomic reads, from a spin that never ends.
        f.write_str(
            "\n  (progress is a barrier released or a work-group finished, and after a timeout \
             without either, an atomic operation that changes memory; a kernel that waits \
             longer on a host thread, or only reads atomics for that long, needs a longer \
             `Launch::watchdog`)",
        )
    }
}

impl std::error::Error for Stall {}

/// What a checked launch found (see [`checker`](crate::checker)).
#[derive(Debug)]
pub struct Reported {
    /// The kernel.
    pub kernel: String,
    /// The findings, deduplicated, in a fixed order.
    pub reports: Vec<Report>,
    /// The error that also ended the launch (a panic or a stall), if any.
    pub error: Option<Box<LaunchError>>,
}

impl fmt::Display for Reported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the checker found {} problem{} in kernel `{}`",
            self.reports.len(),
            if self.reports.len() == 1 { "" } else { "s" },
            self.kernel
        )?;
        for r in &self.reports {
            write!(f, "\n{r}")?;
        }
        if let Some(e) = &self.error {
            write!(f, "\nand the launch failed: {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Reported {}
