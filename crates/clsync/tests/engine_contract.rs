//! The engine contract (`clsync::engine`): what the scheduler does with the
//! [`Suspend`]s of an engine of one's own, as an interpreter of another
//! kernel language would plug in.
//!
//! A barrier reaches the scheduler either as a [`BarrierWait`]
//! (`Suspend::Barrier`, any engine) or as the two-word [`Arrival`]
//! (`Suspend::Arrived`, an engine whose barriers have static sites). The two
//! must be one barrier wherever they agree: a group whose work-items arrive
//! at one barrier, some in one form and some in the other, is released
//! together (`003_2caebc1f01141481.txt`: every work-item of the group must
//! reach the barrier, and then all continue), and two different barriers are
//! divergence whichever form each takes (`004_bfca21a36d7bd2da.txt`).
//! The Rust engine's own barriers for interpreters (`barrier_dyn_at`, with
//! the interpreted program's site) take the `BarrierWait` form.

use std::cell::Cell;
use std::panic::Location;
use std::sync::atomic::{AtomicUsize, Ordering};

use clsync::engine::{Engine, GroupEnv, ItemTask, Resume, Suspend};

use clsync::geometry::ItemIds;
use clsync::sync::{Arrival, BarrierKind, BarrierWait, MemFlags, MemScope};
use clsync::{Launch, LaunchError, NdRange, Place, Runtime};

/// One step of a scripted work-item: what it suspends with.
#[derive(Clone, Copy)]
enum Step {
    /// `Suspend::Arrived` at this arrival.
    Arrived(Arrival),
    /// `Suspend::Barrier` at this wait.
    Barrier(BarrierWait),
}

/// An engine whose work-items follow a script: work-item `l` of every group
/// takes `script(l)`'s steps in order, then returns.
struct Scripted<F> {
    script: F,
    /// Resumptions with `Resume::Continue`, over the whole launch.
    resumed: AtomicUsize,
}

struct Task<'e, F> {
    engine: &'e Scripted<F>,
    steps: Vec<Step>,
    next: Cell<usize>,
}

impl<F> ItemTask for Task<'_, F> {
    fn resume(&mut self, signal: Resume) -> Suspend {
        if signal == Resume::Cancel {
            return Suspend::Failed(clsync::engine::ItemFailure::Cancelled { site: None });
        }
        // Relaxed: a count read after the launch, which joins the workers.
        self.engine.resumed.fetch_add(1, Ordering::Relaxed);
        let k = self.next.get();
        self.next.set(k + 1);
        match self.steps.get(k) {
            Some(Step::Arrived(a)) => Suspend::Arrived(*a),
            Some(Step::Barrier(w)) => Suspend::Barrier(*w),
            None => Suspend::Done,
        }
    }
}

impl<F: Fn(usize) -> Vec<Step> + Sync> Engine for Scripted<F> {
    type Task<'g>
        = Task<'g, F>
    where
        Self: 'g;

    fn spawn<'g>(
        &'g self,
        _env: &'g GroupEnv<'g>,
        ids: &'g ItemIds,
    ) -> Result<Task<'g, F>, String> {
        Ok(Task {
            engine: self,
            steps: (self.script)(ids.local_linear_id),
            next: Cell::new(0),
        })
    }

    fn retire(&self, _task: Task<'_, F>) {}
}

fn scripted<F: Fn(usize) -> Vec<Step> + Sync>(script: F) -> Scripted<F> {
    Scripted {
        script,
        resumed: AtomicUsize::new(0),
    }
}

fn local_barrier(at: &'static Location<'static>) -> Arrival {
    Arrival::new(
        BarrierKind::WorkGroup,
        MemFlags::LOCAL,
        MemScope::WorkGroup,
        at,
    )
}

const GROUPS: usize = 3;
const LOCAL: usize = 8;

fn launch() -> Launch {
    Launch::new("scripted", NdRange::new([GROUPS * LOCAL]).local([LOCAL]))
}

/// Three barriers, each reached by every work-item: work-item `l` takes the
/// `l`th form of `forms` (cycled). Every form mix releases the group at each
/// barrier, so each work-item is resumed once per barrier and once more to
/// return: `barriers + 1` times, in every group, whichever work-item takes
/// which form (the first of a round included).
#[test]
fn a_barrier_is_one_barrier_whether_it_arrives_as_arrival_or_as_wait() {
    let sites = [Location::caller(), Location::caller(), Location::caller()];
    let forms: [&[bool]; 4] = [
        &[true],              // every work-item an Arrival
        &[false],             // every one a BarrierWait
        &[true, false],       // alternating, the first an Arrival
        &[false, true, true], // the first a BarrierWait
    ];
    for form in forms {
        let engine = scripted(|l| {
            sites
                .iter()
                .map(|&at| {
                    let a = local_barrier(at);
                    if form[l % form.len()] {
                        Step::Arrived(a)
                    } else {
                        Step::Barrier(a.wait())
                    }
                })
                .collect()
        });
        Runtime::with_threads(2)
            .launch_engine(&launch(), &engine)
            .unwrap_or_else(|e| panic!("form {form:?}: {e}"));
        // Relaxed: the launch has returned, its workers joined.
        assert_eq!(
            engine.resumed.load(Ordering::Relaxed),
            GROUPS * LOCAL * (sites.len() + 1),
            "form {form:?}"
        );
    }
}

/// Two different barriers, as arrivals or waits in any mix, are divergence:
/// the report names the first one waited at and places every work-item of
/// the group at its own barrier.
#[test]
fn two_barriers_diverge_whichever_form_each_takes() {
    let (first, other) = (Location::caller(), Location::caller());
    for (first_as_arrival, other_as_arrival) in
        [(true, true), (true, false), (false, true), (false, false)]
    {
        // Work-items 5 and 6 wait at `other`, the rest at `first`.
        let at = |l: usize| if l == 5 || l == 6 { other } else { first };
        let engine = scripted(|l| {
            let a = local_barrier(at(l));
            let as_arrival = if at(l) == first {
                first_as_arrival
            } else {
                other_as_arrival
            };
            vec![if as_arrival {
                Step::Arrived(a)
            } else {
                Step::Barrier(a.wait())
            }]
        });
        let err = Runtime::with_threads(1)
            .launch_engine(&launch(), &engine)
            .expect_err("two barriers in one group");
        let LaunchError::Divergence(d) = err else {
            panic!("expected a divergence, got {err}");
        };
        assert_eq!(d.kind, BarrierKind::WorkGroup);
        assert_eq!(d.barrier, local_barrier(first).site());
        for l in 0..LOCAL {
            let run = d
                .places
                .iter()
                .find(|r| r.items.contains(&l))
                .unwrap_or_else(|| panic!("work-item {l} is not placed"));
            assert_eq!(
                run.place,
                Place::AtBarrier(local_barrier(at(l)).wait()),
                "work-item {l} ({first_as_arrival}, {other_as_arrival})"
            );
        }
    }
}

/// The same site with other flags or another kind is another barrier, as
/// an arrival too (`000_96da91f170ff246f.txt`: the flags are part of the
/// barrier call).
#[test]
fn an_arrival_with_other_flags_is_another_barrier() {
    let at = Location::caller();
    let global = Arrival::new(
        BarrierKind::WorkGroup,
        MemFlags::GLOBAL,
        MemScope::WorkGroup,
        at,
    );
    let engine = scripted(|l| {
        vec![Step::Arrived(if l == 3 {
            global
        } else {
            local_barrier(at)
        })]
    });
    let err = Runtime::with_threads(1)
        .launch_engine(&launch(), &engine)
        .expect_err("flags differ");
    assert!(
        matches!(err, LaunchError::Divergence(_)),
        "expected a divergence, got {err}"
    );
}

/// An engine that panics outside any kernel (a bug in an interpreter's
/// `resume`) makes the launch panic with its message, on the launching
/// thread; it never leaves the launch waiting for a worker that is gone.
#[test]
fn an_engine_that_panics_fails_the_launch_instead_of_hanging() {
    struct Panicky;
    struct PanickyTask(usize);
    impl ItemTask for PanickyTask {
        fn resume(&mut self, _: Resume) -> Suspend {
            assert!(self.0 != 13, "the engine's own bug at work-item 13");
            Suspend::Done
        }
    }
    impl Engine for Panicky {
        type Task<'g> = PanickyTask;
        fn spawn<'g>(
            &'g self,
            _: &'g GroupEnv<'g>,
            ids: &'g ItemIds,
        ) -> Result<PanickyTask, String> {
            Ok(PanickyTask(ids.global_linear_id))
        }
        fn retire(&self, _: PanickyTask) {}
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let result = std::panic::catch_unwind(|| {
            Runtime::with_threads(2).launch_engine(&launch(), &Panicky)
        });
        let _ = tx.send(result.map_err(|payload| {
            payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        }));
    });
    let outcome = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the launch returned or panicked within a minute");
    let message = outcome.expect_err("the engine panicked");
    assert!(
        message.contains("the engine's own bug at work-item 13"),
        "{message}"
    );
}

/// The Rust engine's barriers for interpreters (`WorkItem::barrier_dyn_at`)
/// reach the scheduler as `Suspend::Barrier`, with the interpreted
/// program's site: a group at one such barrier is released together, and
/// its local memory is ordered across it (a reversal through local memory
/// is the sequential one); work-items at two sites of the interpreted
/// program are divergence, with both sites named, although the Rust call
/// is one line.
#[test]
fn interpreted_barriers_are_one_barrier_per_program_site() {
    use clsync::sync::Site;
    use clsync::Buffer;

    let site = |line| Site {
        file: "prog.cl",
        line,
        column: 5,
    };
    let rt = Runtime::with_threads(2);
    let out = Buffer::<u32>::new(2 * LOCAL);
    let mut reverse = Launch::new("reverse", NdRange::new([2 * LOCAL]).local([LOCAL]));
    let tile = reverse.local::<u32>(LOCAL);
    rt.launch(&reverse, |wi| {
        let (l, t) = (wi.get_local_id(0), wi.local(tile));
        t.set(l, wi.get_global_id(0) as u32);
        wi.barrier_dyn_at(BarrierKind::WorkGroup, 1, MemScope::WorkGroup, site(7))
            .unwrap();
        out.set(wi.get_global_id(0), t.get(LOCAL - 1 - l));
    })
    .unwrap();
    let want: Vec<u32> = (0..2 * LOCAL)
        .map(|g| ((g / LOCAL) * LOCAL + LOCAL - 1 - g % LOCAL) as u32)
        .collect();
    assert_eq!(out.to_vec(), want);

    let err = rt
        .launch(&launch(), |wi| {
            let line = if wi.get_local_id(0) % 2 == 0 { 7 } else { 9 };
            wi.barrier_dyn_at(BarrierKind::WorkGroup, 1, MemScope::WorkGroup, site(line))
                .unwrap();
        })
        .expect_err("two sites of the program");
    let LaunchError::Divergence(d) = err else {
        panic!("expected a divergence, got {err}");
    };
    assert_eq!(d.barrier, site(7));
    for l in 0..LOCAL {
        let run = d.places.iter().find(|r| r.items.contains(&l)).unwrap();
        let Place::AtBarrier(w) = run.place else {
            panic!("work-item {l}: {:?}", run.place)
        };
        assert_eq!(
            w.site,
            site(if l % 2 == 0 { 7 } else { 9 }),
            "work-item {l}"
        );
    }
}

/// An engine whose `spawn` fails for work-item 5 of every group, counting
/// what the scheduler does with the tasks it did make.
#[derive(Default)]
struct FailsAtFive {
    spawned: AtomicUsize,
    continued: AtomicUsize,
    cancelled: AtomicUsize,
    retired: AtomicUsize,
}

struct Counted<'e>(&'e FailsAtFive);

impl ItemTask for Counted<'_> {
    fn resume(&mut self, signal: Resume) -> Suspend {
        // Relaxed, in every count here: read after the launch, which joins
        // the workers.
        let count = match signal {
            Resume::Continue => &self.0.continued,
            Resume::Cancel => &self.0.cancelled,
        };
        count.fetch_add(1, Ordering::Relaxed);
        Suspend::Failed(clsync::engine::ItemFailure::Cancelled { site: None })
    }
}

impl Engine for FailsAtFive {
    type Task<'g>
        = Counted<'g>
    where
        Self: 'g;

    fn spawn<'g>(
        &'g self,
        _env: &'g GroupEnv<'g>,
        ids: &'g ItemIds,
    ) -> Result<Counted<'g>, String> {
        if ids.local_linear_id == 5 {
            return Err("no stack for work-item 5".to_string());
        }
        self.spawned.fetch_add(1, Ordering::Relaxed);
        Ok(Counted(self))
    }

    fn retire(&self, _task: Counted<'_>) {
        self.retired.fetch_add(1, Ordering::Relaxed);
    }
}

/// A group whose work-items cannot all be made fails the launch with a
/// resource error naming the kernel and the engine's message; no task of it
/// runs, and each one made is cancelled once and handed back to the engine.
#[test]
fn a_failed_spawn_cancels_and_retires_the_tasks_made() {
    let engine = FailsAtFive::default();
    let err = Runtime::with_threads(2)
        .launch_engine(&launch(), &engine)
        .expect_err("work-item 5 cannot be made");
    let LaunchError::Resource { kernel, message } = err else {
        panic!("expected a resource error, got {err}");
    };
    assert_eq!(
        (kernel.as_str(), message.as_str()),
        ("scripted", "no stack for work-item 5")
    );
    let count = |c: &AtomicUsize| c.load(Ordering::Relaxed);
    let spawned = count(&engine.spawned);
    assert!(spawned >= 5 && spawned % 5 == 0, "{spawned} tasks made");
    assert_eq!(count(&engine.continued), 0);
    assert_eq!(count(&engine.cancelled), spawned);
    assert_eq!(count(&engine.retired), spawned);
}
