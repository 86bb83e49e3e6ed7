//! Running a lowered thread: once per choice of the values its reads
//! return, drawn from each location's value domain, a replayed choice prefix
//! walking every combination depth-first; each run is one [`Trace`].

use crate::model::event::{Event, Kind};
use crate::syntax::*;

use super::{stmts_touch, LExpr, LPtr, LStmt, Program};

/// One way a thread can run.
#[derive(Clone, Debug)]
pub struct Trace {
    /// Its events, in program order (thread field set).
    pub events: Vec<Event>,
    /// Its final registers.
    pub regs: Vec<i64>,
}

/// Limits on running a thread.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// How often a loop body may run; paths that need more are cut (and
    /// the report says so).
    pub unroll: usize,
    /// The most traces one thread may have.
    pub max_traces: usize,
    /// The most candidate executions (`rf` and `co` choices) a test may
    /// have; past it the exploration stops with an error instead of
    /// running for hours.
    pub max_candidates: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            // Dat3M's default bound: a loop body runs at most once more than
            // the test's straight-line code needs.
            unroll: 1,
            max_traces: 200_000,
            max_candidates: 20_000_000,
        }
    }
}

/// The traces of a thread, and whether a loop bound cut some path.
pub struct Traces {
    /// Every trace.
    pub traces: Vec<Trace>,
    /// Whether some path needed more loop iterations than allowed.
    pub cut: bool,
}

struct Run<'a> {
    domain: &'a [Vec<i64>],
    /// Per location: its current value if only this thread touches it and
    /// it is global or local, else `None` (see [`private_locations`]).
    private: Vec<Option<i64>>,
    prefix: &'a [u32],
    taken: Vec<(u32, u32)>,
    events: Vec<Event>,
    regs: Vec<i64>,
    thread: usize,
    unroll: usize,
}

/// Why a run stopped early.
enum Stop {
    /// A loop ran past its bound.
    Cut,
    /// An access left its location (an array index out of range).
    OutOfBounds,
}

impl Run<'_> {
    fn choose(&mut self, n: u32) -> u32 {
        let i = self.taken.len();
        let c = if i < self.prefix.len() {
            self.prefix[i]
        } else {
            0
        };
        self.taken.push((c, n));
        c
    }

    fn push(
        &mut self,
        kind: Kind,
        loc: Option<usize>,
        value: i64,
        order: Option<Order>,
        scope: Option<Scope>,
        span: Span,
    ) {
        if let (Kind::Write, Some(l)) = (kind, loc) {
            if let Some(v) = &mut self.private[l] {
                *v = value;
            }
        }
        self.events.push(Event {
            thread: Some(self.thread),
            kind,
            loc,
            value,
            order,
            scope,
            flags: 0,
            barrier: None,
            rmw: false,
            span,
        });
    }

    /// The cell a pointer points to; `None` (the path is dropped) when the
    /// offset leaves the location.
    fn cell(&mut self, p: &LPtr) -> Result<usize, Stop> {
        let off = match &p.offset {
            Some(e) => self.expr(e)?,
            None => 0,
        };
        if off < 0 || off as usize >= p.len {
            return Err(Stop::OutOfBounds);
        }
        Ok(p.base + off as usize)
    }

    fn read(&mut self, loc: usize) -> i64 {
        if let Some(v) = self.private[loc] {
            return v;
        }
        let d = &self.domain[loc];
        let c = self.choose(d.len() as u32);
        d[c as usize]
    }

    fn stmts(&mut self, body: &[LStmt]) -> Result<(), Stop> {
        for s in body {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &LStmt) -> Result<(), Stop> {
        match s {
            LStmt::Set(r, e) => {
                let v = self.expr(e)?;
                self.regs[*r] = v;
            }
            LStmt::Store(ptr, e, access, span) => {
                let v = self.expr(e)?;
                let loc = self.cell(ptr)?;
                let (order, scope) = match access {
                    // Plain writes carry the work-item scope tag.
                    Access::Plain => (None, Some(Scope::WorkItem)),
                    Access::Atomic(o, s) => (Some(*o), Some(*s)),
                };
                self.push(Kind::Write, Some(loc), v, order, scope, *span);
            }
            LStmt::Fence(flags, order, scope, span) => {
                self.push(Kind::Fence, None, 0, Some(*order), *scope, *span);
                self.events.last_mut().expect("pushed").flags = *flags;
            }
            LStmt::Barrier(id, flags, scope, span) => {
                self.push(Kind::Barrier, None, 0, None, *scope, *span);
                let e = self.events.last_mut().expect("pushed");
                e.flags = *flags;
                e.barrier = Some(*id);
            }
            LStmt::If(c, then, els) => {
                if self.expr(c)? != 0 {
                    self.stmts(then)?
                } else {
                    self.stmts(els)?
                }
            }
            LStmt::While(c, body, _) => {
                let mut n = 0;
                while self.expr(c)? != 0 {
                    if n == self.unroll {
                        return Err(Stop::Cut);
                    }
                    n += 1;
                    self.stmts(body)?;
                }
            }
            LStmt::Eval(e) => {
                self.expr(e)?;
            }
        }
        Ok(())
    }

    /// One half of a read-modify-write (or of a compare-exchange's atomic
    /// part): an event at `loc` with the operation's order and scope,
    /// marked as part of an RMW.
    fn rmw_event(
        &mut self,
        kind: Kind,
        loc: usize,
        value: i64,
        order: Order,
        scope: Scope,
        span: Span,
    ) {
        self.push(kind, Some(loc), value, Some(order), Some(scope), span);
        self.events.last_mut().expect("pushed").rmw = true;
    }

    fn expr(&mut self, e: &LExpr) -> Result<i64, Stop> {
        Ok(match e {
            LExpr::Const(v) => *v,
            LExpr::Reg(r) => self.regs[*r],
            LExpr::Load(ptr, access, span) => {
                let loc = self.cell(ptr)?;
                let v = self.read(loc);
                let (order, scope) = match access {
                    // Plain reads carry no scope tag.
                    Access::Plain => (None, None),
                    Access::Atomic(o, s) => (Some(*o), Some(*s)),
                };
                self.push(Kind::Read, Some(loc), v, order, scope, *span);
                v
            }
            LExpr::Rmw {
                op,
                loc,
                operand,
                order,
                scope,
                span,
            } => {
                let operand = self.expr(operand)?;
                let loc = self.cell(loc)?;
                let old = self.read(loc);
                self.rmw_event(Kind::Read, loc, old, *order, *scope, *span);
                let new = op.apply(old, operand);
                self.rmw_event(Kind::Write, loc, new, *order, *scope, *span);
                old
            }
            LExpr::Cas {
                loc,
                expected,
                desired,
                order,
                scope,
                span,
            } => {
                // As the model's reference front end compiles it: a plain
                // load of the expected value, the atomic load, and either the
                // atomic store (success) or a plain store of the value seen
                // to the expected location (failure). The plain accesses
                // carry the operation's scope tag.
                let desired = self.expr(desired)?;
                let loc = self.cell(loc)?;
                let expected = self.cell(expected)?;
                let want = self.read(expected);
                self.push(Kind::Read, Some(expected), want, None, Some(*scope), *span);
                let seen = self.read(loc);
                self.rmw_event(Kind::Read, loc, seen, *order, *scope, *span);
                if seen == want {
                    self.rmw_event(Kind::Write, loc, desired, *order, *scope, *span);
                    1
                } else {
                    self.push(Kind::Write, Some(expected), seen, None, Some(*scope), *span);
                    0
                }
            }
            LExpr::Un(op, a) => op.apply(self.expr(a)?),
            // `&&` and `||` short-circuit, as in C: the right side's reads
            // happen only when they must.
            LExpr::Bin(BinOp::And, a, b) => {
                if self.expr(a)? == 0 {
                    0
                } else {
                    (self.expr(b)? != 0) as i64
                }
            }
            LExpr::Bin(BinOp::Or, a, b) => {
                if self.expr(a)? != 0 {
                    1
                } else {
                    (self.expr(b)? != 0) as i64
                }
            }
            LExpr::Bin(op, a, b) => {
                let x = self.expr(a)?;
                let y = self.expr(b)?;
                op.apply(x, y)
            }
        })
    }
}

/// The locations only thread `index` touches, in global or local memory.
///
/// A read of such a location returns the value of the thread's last write
/// to it before the read (or the initial value), in every consistent
/// execution: `sb` is in `ghb`/`lhb` there, so reading a later write breaks
/// `O-Rf`, and reading an earlier one breaks `O-CohG`/`O-CohL` (atomic
/// location) or `O-NaRfG`/`O-NaRfL` (non-atomic location). So those reads
/// need no choice. Generic memory has no `sb` in happens-before and is not
/// treated so.
pub fn private_locations(program: &Program, index: usize) -> Vec<Option<i64>> {
    program
        .locations
        .iter()
        .enumerate()
        .map(|(l, loc)| {
            let in_hb_space = matches!(loc.space, Some(Space::Global) | Some(Space::Local));
            let others = program
                .threads
                .iter()
                .enumerate()
                .any(|(t, th)| t != index && stmts_touch(&th.body, l));
            (in_hb_space && !others).then_some(loc.init)
        })
        .collect()
}

/// Every trace of thread `index` of `program`, with reads drawing values
/// from `domain` (one sorted list per location).
pub fn traces(
    program: &Program,
    index: usize,
    domain: &[Vec<i64>],
    limits: Limits,
) -> Result<Traces, String> {
    let thread = &program.threads[index];
    let mut out = Vec::new();
    let mut cut = false;
    let mut prefix: Vec<u32> = Vec::new();
    let private = private_locations(program, index);
    loop {
        let mut run = Run {
            domain,
            private: private.clone(),
            prefix: &prefix,
            taken: Vec::new(),
            events: Vec::new(),
            regs: thread.reg_init.clone(),
            thread: index,
            unroll: limits.unroll,
        };
        match run.stmts(&thread.body) {
            Ok(()) => out.push(Trace {
                events: run.events,
                regs: run.regs,
            }),
            Err(Stop::Cut) => cut = true,
            // Reads whose values send an index out of range: such a path
            // needs values that no write gives, or the test has undefined
            // behaviour there; either way no execution follows it.
            Err(Stop::OutOfBounds) => {}
        }
        if out.len() > limits.max_traces {
            return Err(format!(
                "thread P{} has more than {} ways to run; the test is too large to enumerate",
                thread.id, limits.max_traces
            ));
        }
        // Next choice sequence: bump the last choice that has another
        // option, drop the ones after it.
        let taken = run.taken;
        let Some(i) = taken.iter().rposition(|(c, n)| c + 1 < *n) else {
            break;
        };
        prefix = taken[..i].iter().map(|(c, _)| *c).collect();
        prefix.push(taken[i].0 + 1);
    }
    Ok(Traces { traces: out, cut })
}
