//! Running a litmus test on the clsync runtime, and checking what it shows
//! against the model.
//!
//! Each litmus thread becomes one work-item: the threads of one litmus
//! work-group are the work-items of one runtime work-group, so barriers,
//! local memory and scopes mean what the test says. Global (and generic)
//! locations live in a global buffer of `atomic_long`, local ones in local
//! memory; a plain access is a relaxed access, which is exactly how the
//! runtime implements plain accesses. Every outcome the runtime shows must
//! be one the model allows: a forbidden one means the runtime is unsound,
//! unless the test has a data race (then its behaviour is undefined and any
//! outcome is allowed).
//!
//! An interpreted work-item reaches the runtime only through the public
//! `_dyn` functions (run-time orders, scopes and flags) and
//! [`WorkItem::barrier_dyn_at`], the same surface a SPIR-V interpreter uses.

use std::collections::BTreeMap;
use std::time::Duration;

use clsync::atomics::Local;
use clsync::sync::{BarrierKind, MemOrder, MemScope, Site};
use clsync::{Atomic, AtomicLong, Buffer, Launch, NdRange, Runtime, Schedule, WorkItem};

use crate::enumerate::program::{stmts_touch, LExpr, LPtr, LStmt, Program};
use crate::enumerate::Exploration;
use crate::syntax::{Access, BinOp, Order, Scope, Space, Test, Var};

/// What running a test on the runtime showed.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RunReport {
    /// Launches made.
    pub runs: usize,
    /// Launches not made: the runs stop at the first stall, as a spin that
    /// nothing ends costs two watchdog timeouts each time.
    pub skipped: usize,
    /// Each outcome seen (over the exploration's observed variables), with
    /// how often.
    pub observed: Vec<(Vec<i64>, u64)>,
    /// Outcomes seen that the model forbids.
    pub forbidden: Vec<Vec<i64>>,
    /// Whether the test has a data race (forbidden outcomes are then not an
    /// error).
    pub racy: bool,
    /// Launches that failed (divergence, a stall the watchdog ended), with
    /// the runtime's error.
    pub failures: Vec<String>,
    /// On a checking runtime: what the checker reported over all runs, each
    /// distinct report once.
    pub checker_reports: Vec<String>,
}

impl RunReport {
    /// Whether the runtime showed an outcome the model forbids in a
    /// race-free test: the runtime would be unsound.
    pub fn unsound(&self) -> bool {
        !self.racy && !self.forbidden.is_empty()
    }
}

/// Why a test cannot run on the runtime.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The test's shape has no runtime equivalent.
    #[error("cannot run on the runtime: {0}")]
    Unsupported(String),
}

/// The litmus placement as a launch: groups and which thread each
/// work-item plays.
struct Shape {
    /// Per group, the thread index of each local id.
    groups: Vec<Vec<usize>>,
    local_size: usize,
    /// Per location: global cell or local cell index.
    cells: Vec<(Space, usize)>,
    globals: usize,
    locals: usize,
}

fn shape(program: &Program) -> Result<Shape, RunError> {
    let mut group_of: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (t, p) in program.placement.iter().enumerate() {
        group_of.entry(p.work_group).or_default().push(t);
    }
    let groups: Vec<Vec<usize>> = group_of.into_values().collect();
    let local_size = groups.iter().map(Vec::len).max().unwrap_or(1);
    let has_barrier = program.threads.iter().any(|t| has_barrier(&t.body));
    if has_barrier && groups.iter().any(|g| g.len() != local_size) {
        return Err(RunError::Unsupported(
            "work-groups of different sizes with barriers: the runtime's work-groups are all one size".into(),
        ));
    }
    let (mut globals, mut locals) = (0, 0);
    let mut cells = Vec::new();
    for (l, loc) in program.locations.iter().enumerate() {
        if loc.space == Some(Space::Local) {
            // A local location is one per work-group: the test must use it
            // from one group only for the runtime to agree.
            let users: Vec<usize> = groups
                .iter()
                .enumerate()
                .filter(|(_, g)| g.iter().any(|&t| stmts_touch(&program.threads[t].body, l)))
                .map(|(i, _)| i)
                .collect();
            if users.len() > 1 {
                return Err(RunError::Unsupported(format!(
                    "local location `{}` is used by threads of different work-groups; each work-group has its own local memory",
                    loc.name
                )));
            }
            cells.push((Space::Local, locals));
            locals += 1;
        } else {
            cells.push((Space::Global, globals));
            globals += 1;
        }
    }
    Ok(Shape {
        groups,
        local_size,
        cells,
        globals,
        locals,
    })
}

fn has_barrier(body: &[LStmt]) -> bool {
    body.iter().any(|s| match s {
        LStmt::Barrier(..) => true,
        LStmt::If(_, a, b) => has_barrier(a) || has_barrier(b),
        LStmt::While(_, b, _) => has_barrier(b),
        _ => false,
    })
}

/// Runs `test` `runs` times on `runtime` and compares every outcome with
/// `model`, the test's exploration.
pub fn run(
    test: &Test,
    model: &Exploration,
    runtime: &Runtime,
    runs: usize,
) -> Result<RunReport, RunError> {
    run_scheduled(test, model, runtime, &vec![Schedule::InOrder; runs])
}

/// [`run`], once per schedule: shuffled schedules on a one-worker runtime
/// run the test's work-groups one after the other in each order, and its
/// work-items in each order between barriers.
pub fn run_scheduled(
    test: &Test,
    model: &Exploration,
    runtime: &Runtime,
    schedules: &[Schedule],
) -> Result<RunReport, RunError> {
    let mut runs = 0;
    let program = Program::lower(test).map_err(|e| RunError::Unsupported(e.to_string()))?;
    let shape = shape(&program)?;
    // Barrier sites: the litmus file's line and column, under the test's
    // name (leaked once per call: a few bytes per test).
    let file: &'static str = Box::leak(test.name.clone().into_boxed_str());
    let allowed: Vec<&Vec<i64>> = model.outcomes.iter().map(|o| &o.values).collect();
    let max_regs = program
        .threads
        .iter()
        .map(|t| t.regs.len())
        .max()
        .unwrap_or(0)
        .max(1);
    let mut seen: BTreeMap<Vec<i64>, u64> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut checker_reports = Vec::new();
    for &schedule in schedules {
        runs += 1;
        let memory: Buffer<AtomicLong> = Buffer::new(shape.globals.max(1)).named("litmus memory");
        for (l, loc) in program.locations.iter().enumerate() {
            if let (Space::Global, i) = shape.cells[l] {
                memory.at(i).init(loc.init);
            }
        }
        let regs: Buffer<i64> = Buffer::new(program.threads.len() * max_regs).named("registers");
        let local_out: Buffer<i64> = Buffer::new((shape.groups.len() * shape.locals).max(1))
            .named("local memory at the end");
        let range = NdRange::new([shape.groups.len() * shape.local_size]).local([shape.local_size]);
        let mut launch = Launch::new(test.name.clone(), range)
            .watchdog(Some(Duration::from_secs(2)))
            .schedule(schedule);
        let local_arg = launch.local::<AtomicLong>(shape.locals.max(1));
        let result = runtime.launch(&launch, |wi| {
            let group = wi.get_group_id(0);
            let lid = wi.get_local_id(0);
            let local = wi.local(local_arg);
            if lid == 0 {
                for (l, loc) in program.locations.iter().enumerate() {
                    if let (Space::Local, i) = shape.cells[l] {
                        local.at(i).init(loc.init);
                    }
                }
            }
            if shape.locals > 0 {
                // Local memory is initialized before any thread starts.
                wi.barrier(clsync::sync::LOCAL);
            }
            if let Some(&t) = shape.groups[group].get(lid) {
                let th = &program.threads[t];
                let cells: Vec<Cell<'_>> = shape
                    .cells
                    .iter()
                    .map(|&(space, i)| match space {
                        Space::Local => Cell::Local(local.at(i)),
                        _ => Cell::Global(memory.at(i)),
                    })
                    .collect();
                let mut exec = Exec {
                    wi,
                    cells,
                    regs: th.reg_init_values(),
                    file,
                };
                exec.stmts(&th.body);
                for (i, v) in exec.regs.iter().enumerate() {
                    regs.set(t * max_regs + i, *v);
                }
            }
            if shape.locals > 0 {
                // Every thread is done with local memory; copy it out.
                wi.barrier(clsync::sync::LOCAL);
                if lid == 0 {
                    for i in 0..shape.locals {
                        local_out.set(
                            group * shape.locals + i,
                            local.at(i).load_explicit(clsync::sync::Relaxed),
                        );
                    }
                }
            }
        });
        match result {
            Ok(_) => {}
            // A checked launch that ran to the end: its findings are the
            // checker's race verdict, and its outcome still counts.
            Err(clsync::LaunchError::Reported(r)) if r.error.is_none() => {
                for report in r.reports {
                    let text = report.to_string();
                    if !checker_reports.contains(&text) {
                        checker_reports.push(text);
                    }
                }
            }
            Err(e @ clsync::LaunchError::Stalled(_)) => {
                failures.push(e.to_string());
                break;
            }
            Err(e) => {
                failures.push(e.to_string());
                continue;
            }
        }
        let thread_regs: Vec<Vec<i64>> = (0..program.threads.len())
            .map(|t| {
                (0..program.threads[t].regs.len())
                    .map(|i| regs.get(t * max_regs + i))
                    .collect()
            })
            .collect();
        let reg_slices: Vec<&[i64]> = thread_regs.iter().map(Vec::as_slice).collect();
        let final_memory: Vec<i64> = (0..program.locations.len())
            .map(|l| match shape.cells[l] {
                (Space::Local, i) => {
                    let g = local_group(&program, &shape, l).unwrap_or(0);
                    local_out.get(g * shape.locals + i)
                }
                (_, i) => memory.at(i).load_explicit(clsync::sync::Relaxed),
            })
            .collect();
        let state: Vec<i64> = model
            .observed
            .iter()
            .map(|v: &Var| program.var_value(v, &reg_slices, &final_memory))
            .collect();
        *seen.entry(state).or_insert(0) += 1;
    }
    let forbidden: Vec<Vec<i64>> = seen
        .keys()
        .filter(|s| !allowed.contains(s))
        .cloned()
        .collect();
    Ok(RunReport {
        runs,
        skipped: schedules.len() - runs,
        observed: seen.into_iter().collect(),
        forbidden,
        racy: model.race.is_some(),
        failures,
        checker_reports,
    })
}

/// The work-group whose local memory holds location `l` (the one group
/// using it), if any uses it.
fn local_group(program: &Program, shape: &Shape, l: usize) -> Option<usize> {
    shape
        .groups
        .iter()
        .position(|g| g.iter().any(|&t| stmts_touch(&program.threads[t].body, l)))
}

/// A location's storage in the runtime.
enum Cell<'a> {
    Global(&'a AtomicLong),
    Local(&'a Atomic<i64, Local>),
}

/// Calls the same `_dyn` method on either kind of cell.
macro_rules! on_cell {
    ($cell:expr, $a:ident => $body:expr) => {
        match $cell {
            Cell::Global($a) => $body,
            Cell::Local($a) => $body,
        }
    };
}

fn mem_scope(s: Scope) -> MemScope {
    match s {
        // Atomics and barriers cannot take work_item scope; the narrowest
        // they can take stands in (the model gives a work-item-scoped
        // atomic no synchronization at all, so this only adds order).
        Scope::WorkItem | Scope::SubGroup => MemScope::SubGroup,
        Scope::WorkGroup => MemScope::WorkGroup,
        Scope::Device => MemScope::Device,
        Scope::AllSvmDevices => MemScope::AllSvmDevices,
    }
}

/// The order a load runs with: the model gives a load's release half no
/// meaning, so it is dropped (the runtime refuses it).
fn load_order(o: Order) -> MemOrder {
    match o {
        Order::Release => MemOrder::Relaxed,
        Order::AcqRel => MemOrder::Acquire,
        o => o,
    }
}

/// The order a store runs with (its acquire half dropped).
fn store_order(o: Order) -> MemOrder {
    match o {
        Order::Acquire => MemOrder::Relaxed,
        Order::AcqRel => MemOrder::Release,
        o => o,
    }
}

/// One interpreted work-item.
struct Exec<'w, 'a> {
    wi: &'w WorkItem<'w>,
    cells: Vec<Cell<'a>>,
    regs: Vec<i64>,
    file: &'static str,
}

impl Exec<'_, '_> {
    /// Makes the litmus file's `span` the source location the checker
    /// reports for what follows, until the guard drops.
    fn at(&self, span: crate::syntax::Span) -> clsync::checker::SiteScope {
        clsync::checker::SiteScope::enter(Site {
            file: self.file,
            line: span.line,
            column: span.column,
        })
    }

    fn cell(&mut self, p: &LPtr) -> usize {
        let off = p.offset().map_or(0, |e| self.expr(e));
        let (base, len) = p.extent();
        assert!(
            off >= 0 && (off as usize) < len,
            "pointer offset {off} is outside a location of {len} element(s)"
        );
        base + off as usize
    }

    fn stmts(&mut self, body: &[LStmt]) {
        for s in body {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &LStmt) {
        match s {
            LStmt::Set(r, e) => {
                let v = self.expr(e);
                self.regs[*r] = v;
            }
            LStmt::Store(p, e, access, span) => {
                let v = self.expr(e);
                let c = self.cell(p);
                let _site = self.at(*span);
                match access {
                    Access::Plain => on_cell!(&self.cells[c], a => a.plain_store(v)),
                    Access::Atomic(o, s) => {
                        let (o, sc) = (store_order(*o), mem_scope(*s));
                        on_cell!(&self.cells[c], a => a.store_dyn(v, o, sc))
                            .expect("legal order and scope")
                    }
                }
            }
            LStmt::Fence(flags, order, scope, span) => {
                let _site = self.at(*span);
                let scope = scope.map_or(MemScope::Device, |s| {
                    if s == Scope::WorkItem && *flags != crate::syntax::FLAG_IMAGE {
                        MemScope::SubGroup
                    } else if s == Scope::WorkItem {
                        MemScope::WorkItem
                    } else {
                        mem_scope(s)
                    }
                });
                self.wi
                    .atomic_work_item_fence_dyn(u32::from(*flags), *order, scope)
                    .expect("legal flags and scope");
            }
            LStmt::Barrier(id, flags, scope, _) => {
                // A litmus barrier is its label: equal labels in different
                // threads are one barrier, so the label names the site.
                let site = Site {
                    file: self.file,
                    line: id + 1,
                    column: 0,
                };
                let scope = scope.map_or(MemScope::WorkGroup, mem_scope);
                self.wi
                    .barrier_dyn_at(BarrierKind::WorkGroup, u32::from(*flags), scope, site)
                    .expect("legal flags and scope");
            }
            LStmt::If(c, a, b) => {
                if self.expr(c) != 0 {
                    self.stmts(a)
                } else {
                    self.stmts(b)
                }
            }
            LStmt::While(c, b, span) => {
                while self.expr(c) != 0 {
                    self.stmts(b);
                    // The back-edge: a loop of plain code alone can still be
                    // ended by the watchdog, which then names the loop.
                    let _site = self.at(*span);
                    self.wi.cancellation_point();
                }
            }
            LStmt::Eval(e) => {
                self.expr(e);
            }
        }
    }

    fn expr(&mut self, e: &LExpr) -> i64 {
        match e {
            LExpr::Const(v) => *v,
            LExpr::Reg(r) => self.regs[*r],
            LExpr::Load(p, access, span) => {
                let _site = self.at(*span);
                let c = self.cell(p);
                match access {
                    Access::Plain => on_cell!(&self.cells[c], a => a.plain_load()),
                    Access::Atomic(o, s) => {
                        let (o, sc) = (load_order(*o), mem_scope(*s));
                        on_cell!(&self.cells[c], a => a.load_dyn(o, sc))
                            .expect("legal order and scope")
                    }
                }
            }
            LExpr::Rmw {
                op,
                loc,
                operand,
                order,
                scope,
                span,
            } => {
                let v = self.expr(operand);
                let _site = self.at(*span);
                let c = self.cell(loc);
                let (o, sc) = (*order, mem_scope(*scope));
                use crate::syntax::RmwOp as R;
                let r = on_cell!(&self.cells[c], a => match op {
                    R::Add => a.fetch_add_dyn(v, o, sc),
                    R::Sub => a.fetch_sub_dyn(v, o, sc),
                    R::Or => a.fetch_or_dyn(v, o, sc),
                    R::Xor => a.fetch_xor_dyn(v, o, sc),
                    R::And => a.fetch_and_dyn(v, o, sc),
                    R::Min => a.fetch_min_dyn(v, o, sc),
                    R::Max => a.fetch_max_dyn(v, o, sc),
                    R::Exchange => a.exchange_dyn(v, o, sc),
                });
                r.expect("legal order and scope")
            }
            LExpr::Cas {
                loc,
                expected,
                desired,
                order,
                scope,
                span,
            } => {
                let d = self.expr(desired);
                let _site = self.at(*span);
                let c = self.cell(loc);
                let x = self.cell(expected);
                let (o, sc) = (*order, mem_scope(*scope));
                // The strongest failure order the success order allows:
                // the model tags the failing load with the success order.
                let fail = match o {
                    MemOrder::SeqCst => MemOrder::SeqCst,
                    MemOrder::AcqRel | MemOrder::Acquire => MemOrder::Acquire,
                    _ => MemOrder::Relaxed,
                };
                let mut want = on_cell!(&self.cells[x], a => a.plain_load());
                let ok = on_cell!(&self.cells[c], a => a.compare_exchange_strong_dyn(&mut want, d, o, fail, sc))
                    .expect("legal orders and scope");
                if !ok {
                    on_cell!(&self.cells[x], a => a.plain_store(want));
                }
                ok as i64
            }
            LExpr::Un(op, a) => op.apply(self.expr(a)),
            LExpr::Bin(BinOp::And, a, b) => {
                if self.expr(a) == 0 {
                    0
                } else {
                    (self.expr(b) != 0) as i64
                }
            }
            LExpr::Bin(BinOp::Or, a, b) => {
                if self.expr(a) != 0 {
                    1
                } else {
                    (self.expr(b) != 0) as i64
                }
            }
            LExpr::Bin(op, a, b) => {
                let x = self.expr(a);
                let y = self.expr(b);
                op.apply(x, y)
            }
        }
    }
}
