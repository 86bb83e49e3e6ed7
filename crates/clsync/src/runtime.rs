//! [`Runtime`] and [`Launch`]: the user's entry points.

use std::fmt;
use std::time::Duration;

use crate::checker::{self, LaunchCheck, Report};
use crate::engine::loops::Loops;
use crate::engine::Group;
use crate::engine::{Engine, RustEngine, WorkItem};
use crate::error::LaunchError;
use crate::error::Reported;
use crate::geometry::{Geometry, NdRange};
use crate::memory::{Element, LocalArg, LocalDecl};
use crate::scheduler::{self, GroupRunner, Plan, Schedule, Tasks};
use std::sync::Arc;

/// The shortest watchdog timeout a launch may set: under it, the time a
/// worker waits for the operating system to run it passes for a stall, and
/// a zero timeout would report every kernel stuck.
pub const MIN_WATCHDOG: Duration = Duration::from_millis(1);

/// The watchdog timeout a launch gets unless it sets one (see
/// [`Launch::watchdog`]).
pub const DEFAULT_WATCHDOG: Duration = Duration::from_secs(10);

/// A pool of worker threads that work-groups are spread over.
///
/// Create one and reuse it; launches on it run one at a time per calling
/// thread, and a failed launch leaves it as usable as before.
///
/// ```
/// use clsync::{Buffer, Launch, NdRange, Runtime};
/// let rt = Runtime::new();
/// let out = Buffer::<u32>::new(1000);
/// rt.launch(&Launch::new("iota", NdRange::new([1000])), |wi| {
///     out.set(wi.get_global_id(0), wi.get_global_id(0) as u32);
/// }).unwrap();
/// assert_eq!(out.get(999), 999);
/// ```
pub struct Runtime {
    pool: rayon::ThreadPool,
    checking: bool,
}

impl Runtime {
    /// A runtime with one worker per available core.
    pub fn new() -> Self {
        Self::with_threads(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    /// A runtime with `threads` workers (at least one).
    pub fn with_threads(threads: usize) -> Self {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .thread_name(|i| format!("clsync-worker-{i}"))
            .build()
            .expect("cannot start the worker threads");
        Runtime {
            pool,
            checking: false,
        }
    }

    /// Checks every launch on this runtime (see [`checker`](crate::checker)).
    pub fn with_checking(mut self, on: bool) -> Self {
        self.checking = on;
        self
    }

    /// Whether launches on this runtime are checked (by this setting or by
    /// `CLSYNC_CHECK`).
    pub fn checking(&self) -> bool {
        self.checking || checker::enabled_by_env()
    }

    /// Runs `kernel` as a checked launch and returns what the checker found:
    /// empty for a kernel with no undefined behaviour on this run. Errors
    /// that are not findings (an invalid range, a panic, a stall) stay
    /// errors.
    ///
    /// ```
    /// use clsync::{Buffer, Launch, NdRange, Runtime};
    /// use clsync::sync::GLOBAL;
    /// let data = Buffer::<u32>::new(64);
    /// let launch = Launch::new("shift", NdRange::new([64]).local([64]));
    /// let reports = Runtime::with_threads(1).check(&launch, |wi| {
    ///     let i = wi.get_global_id(0);
    ///     data.set(i, i as u32);
    ///     wi.barrier(GLOBAL);
    ///     let _ = data.get((i + 1) % 64);
    /// }).unwrap();
    /// assert!(reports.is_empty());
    /// ```
    pub fn check<F>(&self, launch: &Launch, kernel: F) -> Result<Vec<Report>, LaunchError>
    where
        F: Fn(&WorkItem<'_>) + Sync,
    {
        let engine = RustEngine::new(&kernel, launch.stack_size);
        reports_of(self.run(launch, &engine, true))
    }

    /// Number of worker threads.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Runs `kernel` once per work-item of `launch`'s ND-range and waits for
    /// all of them.
    ///
    /// Fails, naming what and where, on an invalid range, barrier divergence,
    /// a panic in a work-item, or a stall seen by the watchdog.
    pub fn launch<F>(&self, launch: &Launch, kernel: F) -> Result<LaunchSummary, LaunchError>
    where
        F: Fn(&WorkItem<'_>) + Sync,
    {
        let engine = RustEngine::new(&kernel, launch.stack_size);
        self.launch_engine(launch, &engine)
    }

    /// The reports of a checked launch, or its error; see
    /// [`Runtime::check`].
    pub fn check_engine<E: Engine>(
        &self,
        launch: &Launch,
        engine: &E,
    ) -> Result<Vec<Report>, LaunchError> {
        reports_of(self.run(launch, engine, true))
    }

    /// Runs a launch with any [`Engine`], such as an interpreter of another
    /// kernel language.
    pub fn launch_engine<E: Engine>(
        &self,
        launch: &Launch,
        engine: &E,
    ) -> Result<LaunchSummary, LaunchError> {
        self.run(launch, engine, false)
    }

    /// Runs an async kernel on the async engine
    /// ([`engine::asynchronous`](crate::engine::asynchronous)): barriers are
    /// awaited (`wi.barrier_async(flags).await`).
    pub fn launch_async<F>(&self, launch: &Launch, kernel: F) -> Result<LaunchSummary, LaunchError>
    where
        F: AsyncFn(&WorkItem<'_>) + Sync,
    {
        let engine = crate::engine::asynchronous::AsyncEngine::new(&kernel);
        self.run_with(launch, &engine, false)
    }

    /// Runs a group-level kernel: `kernel` is called once per work-group,
    /// and runs its work-items' code between barriers as loops (see
    /// [`engine::loops`](crate::engine::loops)).
    pub fn launch_groups<F>(&self, launch: &Launch, kernel: F) -> Result<LaunchSummary, LaunchError>
    where
        F: Fn(&Group<'_>) + Sync,
    {
        self.run_with(launch, &Loops(&kernel), false)
    }

    /// [`Runtime::check`] for a group-level kernel.
    pub fn check_groups<F>(&self, launch: &Launch, kernel: F) -> Result<Vec<Report>, LaunchError>
    where
        F: Fn(&Group<'_>) + Sync,
    {
        reports_of(self.run_with(launch, &Loops(&kernel), true))
    }

    fn run<E: Engine>(
        &self,
        launch: &Launch,
        engine: &E,
        force_check: bool,
    ) -> Result<LaunchSummary, LaunchError> {
        self.run_with(launch, &Tasks(engine), force_check)
    }

    fn run_with<R: GroupRunner>(
        &self,
        launch: &Launch,
        runner: &R,
        force_check: bool,
    ) -> Result<LaunchSummary, LaunchError> {
        let geometry = launch
            .range
            .resolve()
            .map_err(|source| LaunchError::Range {
                kernel: launch.name.clone(),
                source,
            })?;
        if let Some(t) = launch.watchdog.filter(|t| *t < MIN_WATCHDOG) {
            return Err(LaunchError::Setting {
                kernel: launch.name.clone(),
                message: format!(
                    "a watchdog timeout of {t:?} is under the shortest, {MIN_WATCHDOG:?} \
                     (MIN_WATCHDOG); `None` turns the watchdog off"
                ),
            });
        }
        crate::memory::check_local_args(&launch.locals).map_err(|message| {
            LaunchError::Resource {
                kernel: launch.name.clone(),
                message,
            }
        })?;
        let plan = Plan {
            kernel: launch.name.clone(),
            id: launch.id,
            geometry: geometry.clone(),
            locals: &launch.locals,
            strict_images: launch.strict_images,
            run_on_divergence: launch.run_on_divergence,
            watchdog: launch.watchdog,
            schedule: launch.schedule,
            check: (force_check || launch.checked || self.checking())
                .then(|| Arc::new(LaunchCheck::new(&launch.name, geometry.clone()))),
            exchanges: Default::default(),
        };
        let check = plan.check.clone();
        let active = check.as_ref().map(|_| checker::ActiveLaunch::start());
        let result = scheduler::run(&self.pool, runner, plan);
        drop(active);
        let elapsed = match check {
            Some(check) => findings(&check, result)?,
            None => result?,
        };
        Ok(LaunchSummary {
            kernel: launch.name.clone(),
            geometry,
            elapsed,
        })
    }
}

impl Default for Runtime {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("threads", &self.threads())
            .finish()
    }
}

/// One kernel launch: a name, an ND-range, local-memory arguments, and
/// options.
///
/// ```
/// use std::time::Duration;
/// use clsync::{Launch, NdRange};
/// let mut launch = Launch::new("scan", NdRange::new([1 << 20]).local([256]))
///     .watchdog(Some(Duration::from_secs(2)))
///     .stack_size(32 * 1024);
/// let scratch = launch.local::<i32>(256);
/// ```
pub struct Launch {
    name: String,
    range: NdRange,
    locals: Vec<LocalDecl>,
    id: u64,
    stack_size: usize,
    watchdog: Option<Duration>,
    strict_images: bool,
    run_on_divergence: bool,
    checked: bool,
    schedule: Schedule,
}

impl Launch {
    /// A launch of the kernel called `name` over `range`.
    pub fn new(name: impl Into<String>, range: NdRange) -> Self {
        Launch {
            name: name.into(),
            range,
            locals: Vec::new(),
            id: crate::memory::next_object_id(),
            stack_size: crate::engine::rust::DEFAULT_STACK_SIZE,
            watchdog: Some(DEFAULT_WATCHDOG),
            strict_images: false,
            run_on_divergence: false,
            checked: false,
            schedule: Schedule::InOrder,
        }
    }

    /// Sets the order groups and work-items run in (default: in order).
    /// Checked runs under several [`Schedule::Shuffled`] seeds see more
    /// interleavings.
    pub fn schedule(mut self, schedule: Schedule) -> Self {
        self.schedule = schedule;
        self
    }

    /// Checks this launch (see [`checker`](crate::checker)): a launch with
    /// findings fails with [`LaunchError::Reported`].
    pub fn checked(mut self, on: bool) -> Self {
        self.checked = on;
        self
    }

    /// Whether [`checked`](Launch::checked) asked for this launch to be
    /// checked (a runtime [with checking](Runtime::with_checking), or
    /// `CLSYNC_CHECK`, checks it too: [`Runtime::checking`]). An engine
    /// that compiles kernels chooses its checked build by both.
    pub fn is_checked(&self) -> bool {
        self.checked
    }

    /// Adds a local-memory argument of `len` elements of `T`; every
    /// work-group gets its own.
    pub fn local<T: Element>(&mut self, len: usize) -> LocalArg<T> {
        let name = format!("local argument {}", self.locals.len());
        self.local_named(name, len)
    }

    /// [`local`](Launch::local), with a name for reports.
    pub fn local_named<T: Element>(&mut self, name: impl Into<String>, len: usize) -> LocalArg<T> {
        let index = self.locals.len();
        self.locals
            .push(LocalDecl::new::<T>(len, name.into().into()));
        LocalArg::new(index, self.id)
    }

    /// Sets the stack size of each work-item (default 64 KiB). Raise it for
    /// kernels with deep recursion or large private arrays.
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = bytes;
        self
    }

    /// Sets the watchdog timeout, or turns the watchdog off with `None`.
    ///
    /// The watchdog reports a launch as stalled
    /// ([`LaunchError::Stalled`](crate::LaunchError::Stalled)) when, for
    /// one timeout, no work-item reached a barrier and no work-group
    /// finished, and then, for one more, neither happened and no atomic
    /// operation of any thread changed memory, while the work-items ran
    /// atomics, fences or barriers: they spin on memory that nothing
    /// changes. Work-items that touch none of these (a long computation)
    /// are left to finish, as nothing says they are stuck (an interpreter
    /// makes its loops stoppable with
    /// [`WorkItem::cancellation_point`](crate::WorkItem::cancellation_point)).
    /// A kernel that
    /// waits longer than a timeout on a host thread, or only reads atomics
    /// for that long, needs a longer timeout. The default is
    /// [`DEFAULT_WATCHDOG`]; a timeout under [`MIN_WATCHDOG`] is refused
    /// at launch ([`LaunchError::Setting`](crate::LaunchError::Setting)).
    pub fn watchdog(mut self, timeout: Option<Duration>) -> Self {
        self.watchdog = timeout;
        self
    }

    /// In strict image mode, a work-item does not see its own image writes
    /// until an image fence (see [`Image2d`](crate::Image2d)).
    pub fn strict_images(mut self, strict: bool) -> Self {
        self.strict_images = strict;
        self
    }

    /// In a checked launch, a divergent barrier becomes a report (as
    /// always) after which the group's work-items run on, each released
    /// from the barrier it waits at, as Oclgrind lets them: what the kernel
    /// writes afterwards is then Oclgrind's, for tools that compare
    /// buffers with it. Without it (the default) the divergent group stops
    /// there. An unchecked launch's divergence is an error either way.
    ///
    /// ```
    /// use clsync::{Buffer, Launch, NdRange, Runtime, LaunchError};
    /// use clsync::sync::GLOBAL;
    ///
    /// let out = Buffer::<u32>::new(4);
    /// let launch = Launch::new("div", NdRange::new([4]).local([4])).run_on_divergence(true);
    /// let e = Runtime::new().check(&launch, |wi| {
    ///     let i = wi.get_local_id(0);
    ///     if i != 0 {
    ///         wi.barrier(GLOBAL);
    ///     }
    ///     out.set(i, i as u32 + 1);
    /// }).unwrap();
    /// assert_eq!(e.len(), 1); // the divergence, reported
    /// assert_eq!(out.to_vec(), [1, 2, 3, 4]); // and every work-item ran on
    /// ```
    pub fn run_on_divergence(mut self, on: bool) -> Self {
        self.run_on_divergence = on;
        self
    }

    /// Whether a checked launch runs on from a divergent barrier
    /// ([`run_on_divergence`](Launch::run_on_divergence)): an engine that
    /// proves accesses race-free by the kernel's barrier intervals takes no
    /// proof at its word then, or none once a group has diverged (the
    /// OpenCL C engine's work-item loops).
    pub fn runs_on_divergence(&self) -> bool {
        self.run_on_divergence
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The ND-range.
    pub fn range(&self) -> &NdRange {
        &self.range
    }
}

/// What a completed launch reports.
#[derive(Clone, Debug)]
pub struct LaunchSummary {
    /// The kernel.
    pub kernel: String,
    /// The resolved geometry.
    pub geometry: Geometry,
    /// Wall time from the first group's start to the last group's end.
    pub elapsed: Duration,
}

/// Turns a checked launch's result and reports into its outcome: a
/// divergence becomes a report, and any report fails the launch.
fn findings(
    check: &LaunchCheck,
    result: Result<Duration, LaunchError>,
) -> Result<Duration, LaunchError> {
    let (elapsed, error) = match result {
        Ok(t) => (Some(t), None),
        Err(LaunchError::Divergence(d)) => {
            check.add(Report::from_divergence(&d));
            (None, None)
        }
        Err(e) => (None, Some(e)),
    };
    let reports = check.take_reports();
    match (elapsed, error) {
        (Some(t), None) if reports.is_empty() => Ok(t),
        (_, Some(e)) if reports.is_empty() => Err(e),
        (_, error) => Err(LaunchError::Reported(Box::new(Reported {
            kernel: check.kernel.clone(),
            reports,
            error: error.map(Box::new),
        }))),
    }
}

/// A checked launch's outcome as its reports: none when it completed, the
/// reports when findings ended it, the error when something else did.
fn reports_of(result: Result<LaunchSummary, LaunchError>) -> Result<Vec<Report>, LaunchError> {
    match result {
        Ok(_) => Ok(Vec::new()),
        Err(LaunchError::Reported(r)) if r.error.is_none() => Ok(r.reports),
        Err(e) => Err(e),
    }
}
