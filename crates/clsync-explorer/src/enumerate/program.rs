//! Lowering a parsed test to resolved locations and registers, and running a
//! thread to get its possible event traces.
//!
//! A thread runs once per choice of the values its reads return, drawn from
//! each location's value domain; a replayed choice prefix walks every
//! combination depth-first. Each run is one *trace*: the thread's events in
//! program order with concrete values, and its final registers. Which write
//! each read takes its value from is decided later, by `rf`.

use std::collections::HashMap;

use crate::model::event::{Event, Kind, Location, Placement};
use crate::syntax::*;

/// A test error found while resolving names.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{span}: {message}")]
pub struct LowerError {
    /// Where.
    pub span: Span,
    /// What.
    pub message: String,
}

fn err<T>(span: Span, message: impl Into<String>) -> Result<T, LowerError> {
    Err(LowerError {
        span,
        message: message.into(),
    })
}

/// The address a pointer parameter holds, as a value (nonzero, and far from
/// the small values litmus tests store).
pub fn address_of(loc: usize) -> i64 {
    0x1000 + 0x10 * loc as i64
}

/// A resolved pointer: the first cell of a location (an array has several)
/// and an offset computed when the access runs.
#[derive(Clone, Debug)]
pub(crate) struct LPtr {
    base: usize,
    len: usize,
    offset: Option<Box<LExpr>>,
}

impl LPtr {
    pub(crate) fn offset(&self) -> Option<&LExpr> {
        self.offset.as_deref()
    }
    /// First cell and number of cells.
    pub(crate) fn extent(&self) -> (usize, usize) {
        (self.base, self.len)
    }
    /// Whether an access through it may touch cell `loc`.
    pub(crate) fn may_touch(&self, loc: usize) -> bool {
        (self.base..self.base + self.len).contains(&loc)
            || self.offset.as_ref().is_some_and(|e| e.touches(loc))
    }
}

#[derive(Clone, Debug)]
pub(crate) enum LExpr {
    Const(i64),
    Reg(usize),
    Load(LPtr, Access, Span),
    Rmw {
        op: RmwOp,
        loc: LPtr,
        operand: Box<LExpr>,
        order: Order,
        scope: Scope,
        span: Span,
    },
    Cas {
        loc: LPtr,
        expected: LPtr,
        desired: Box<LExpr>,
        order: Order,
        scope: Scope,
        span: Span,
    },
    Un(UnOp, Box<LExpr>),
    Bin(BinOp, Box<LExpr>, Box<LExpr>),
}

impl LExpr {
    /// Whether evaluating it may access cell `loc`.
    pub(crate) fn touches(&self, loc: usize) -> bool {
        match self {
            LExpr::Const(_) | LExpr::Reg(_) => false,
            LExpr::Load(p, _, _) => p.may_touch(loc),
            LExpr::Rmw {
                loc: p, operand, ..
            } => p.may_touch(loc) || operand.touches(loc),
            LExpr::Cas {
                loc: p,
                expected,
                desired,
                ..
            } => p.may_touch(loc) || expected.may_touch(loc) || desired.touches(loc),
            LExpr::Un(_, a) => a.touches(loc),
            LExpr::Bin(_, a, b) => a.touches(loc) || b.touches(loc),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) enum LStmt {
    Set(usize, LExpr),
    Store(LPtr, LExpr, Access, Span),
    Fence(FenceFlags, Order, Option<Scope>, Span),
    Barrier(u32, FenceFlags, Option<Scope>, Span),
    If(LExpr, Vec<LStmt>, Vec<LStmt>),
    While(LExpr, Vec<LStmt>),
    Eval(LExpr),
}

/// A thread with names resolved.
#[derive(Clone, Debug)]
pub struct LThread {
    /// `P<id>`.
    pub id: usize,
    /// Register names, by index.
    pub regs: Vec<String>,
    /// Parameters: name and first cell.
    pub params: Vec<(String, usize)>,
    pub(crate) reg_init: Vec<i64>,
    pub(crate) body: Vec<LStmt>,
}

impl LThread {
    /// The registers' values before the thread runs.
    pub fn reg_init_values(&self) -> Vec<i64> {
        self.reg_init.clone()
    }
}

/// A test with every name resolved.
#[derive(Clone, Debug)]
pub struct Program {
    /// The locations.
    pub locations: Vec<Location>,
    /// The threads, in the test's order.
    pub threads: Vec<LThread>,
    /// Where each thread runs.
    pub placement: Vec<Placement>,
    /// Barrier names, by id.
    pub barriers: Vec<String>,
    /// Every integer literal of the program and its condition.
    pub constants: Vec<i64>,
}

impl Program {
    /// Resolves the names of `test`.
    pub fn lower(test: &Test) -> Result<Program, LowerError> {
        // Each location is one cell, an array one cell per element (named
        // `y`, `y[1]`, …); `extent` maps a name to its first cell and length.
        let mut locations: Vec<Location> = Vec::new();
        let mut extent: HashMap<String, (usize, usize)> = HashMap::new();
        for (name, values) in &test.init {
            extent.insert(name.clone(), (locations.len(), values.len()));
            for (i, v) in values.iter().enumerate() {
                locations.push(Location {
                    name: if i == 0 {
                        name.clone()
                    } else {
                        format!("{name}[{i}]")
                    },
                    init: *v,
                    space: None,
                    atomic: true,
                });
            }
        }
        // A location's space and atomicity come from the parameters that
        // declare it; where threads disagree, the last declaration (in file
        // order) counts, as in the front end the expectations come from.
        for t in &test.threads {
            for p in &t.params {
                let (base, len) = *extent.entry(p.name.clone()).or_insert_with(|| {
                    locations.push(Location {
                        name: p.name.clone(),
                        init: 0,
                        space: None,
                        atomic: true,
                    });
                    (locations.len() - 1, 1)
                });
                for cell in &mut locations[base..base + len] {
                    cell.space = Some(p.space);
                    cell.atomic = p.atomic;
                }
            }
        }
        let mut constants = vec![0];
        let mut barriers = Vec::new();
        let mut threads = Vec::new();
        for t in &test.threads {
            let mut lw = Lowering {
                params: t
                    .params
                    .iter()
                    .map(|p| (p.name.clone(), extent[&p.name]))
                    .collect(),
                regs: Vec::new(),
                constants: &mut constants,
                barriers: &mut barriers,
            };
            collect_regs(&t.body, &mut lw.regs);
            let body = lw.stmts(&t.body)?;
            let mut reg_init = vec![0; lw.regs.len()];
            for (tid, r, v) in &test.reg_init {
                if *tid == t.id {
                    match lw.regs.iter().position(|x| x == r) {
                        Some(i) => reg_init[i] = *v,
                        None => {
                            lw.regs.push(r.clone());
                            reg_init.push(*v);
                        }
                    }
                }
            }
            let params = lw
                .params
                .iter()
                .map(|(n, (base, _))| (n.clone(), *base))
                .collect();
            threads.push(LThread {
                id: t.id,
                params,
                regs: lw.regs,
                reg_init,
                body,
            });
        }
        if let Some(c) = &test.condition {
            let mut vars = Vec::new();
            c.prop.vars(&mut vars);
            collect_prop_constants(&c.prop, &mut constants);
            for v in vars {
                match &v {
                    Var::Reg(t, _) if !test.threads.iter().any(|x| x.id == *t) => {
                        return err(
                            Span::default(),
                            format!("the condition names `{v}`, but there is no thread P{t}"),
                        )
                    }
                    Var::Loc(l) if !locations.iter().any(|x| x.name == *l) => {
                        return err(
                            Span::default(),
                            format!(
                                "the condition names location `{l}`, which the test does not have"
                            ),
                        )
                    }
                    _ => {}
                }
            }
        }
        constants.sort_unstable();
        constants.dedup();
        let placement = test
            .threads
            .iter()
            .map(|t| Placement {
                work_group: t.device * 1_000_000 + t.work_group,
                device: t.device,
            })
            .collect();
        Ok(Program {
            locations,
            threads,
            placement,
            barriers,
            constants,
        })
    }

    /// The value of a condition variable at the end of an execution, given
    /// each thread's final registers and each location's final value.
    pub fn var_value(&self, var: &Var, regs: &[&[i64]], memory: &[i64]) -> i64 {
        match var {
            Var::Reg(t, name) => self
                .threads
                .iter()
                .position(|x| x.id == *t)
                .and_then(|ti| {
                    let th = &self.threads[ti];
                    th.regs
                        .iter()
                        .position(|r| r == name)
                        .map(|ri| regs[ti][ri])
                        // A parameter's register holds its address.
                        .or_else(|| {
                            th.params
                                .iter()
                                .find(|(p, _)| p == name)
                                .map(|(_, l)| address_of(*l))
                        })
                })
                // A register the thread never writes holds 0.
                .unwrap_or(0),
            Var::Loc(l) => self
                .locations
                .iter()
                .position(|x| x.name == *l)
                .map_or(0, |li| memory[li]),
        }
    }
}

fn collect_prop_constants(p: &Prop, out: &mut Vec<i64>) {
    match p {
        Prop::Eq(_, k) | Prop::Ne(_, k) => out.push(*k),
        Prop::And(a, b) | Prop::Or(a, b) => {
            collect_prop_constants(a, out);
            collect_prop_constants(b, out);
        }
        Prop::Not(a) => collect_prop_constants(a, out),
        Prop::True | Prop::False => {}
    }
}

/// Registers are the names a thread declares or assigns.
fn collect_regs(body: &[Stmt], regs: &mut Vec<String>) {
    for s in body {
        match s {
            Stmt::Decl { reg, .. } | Stmt::Assign { reg, .. } if !regs.contains(reg) => {
                regs.push(reg.clone());
            }
            Stmt::If { then, els, .. } => {
                collect_regs(then, regs);
                collect_regs(els, regs);
            }
            Stmt::While { body, .. } => collect_regs(body, regs),
            _ => {}
        }
    }
}

struct Lowering<'a> {
    params: HashMap<String, (usize, usize)>,
    regs: Vec<String>,
    constants: &'a mut Vec<i64>,
    barriers: &'a mut Vec<String>,
}

impl Lowering<'_> {
    fn stmts(&mut self, body: &[Stmt]) -> Result<Vec<LStmt>, LowerError> {
        body.iter().map(|s| self.stmt(s)).collect()
    }

    fn loc(&mut self, ptr: &Ptr, span: Span) -> Result<LPtr, LowerError> {
        let Some(&(base, len)) = self.params.get(&ptr.name) else {
            return err(
                span,
                format!(
                    "`{}` is not a parameter of this thread, so it names no location",
                    ptr.name
                ),
            );
        };
        let offset = match &ptr.offset {
            Some(e) => Some(Box::new(self.expr(e)?)),
            None => None,
        };
        Ok(LPtr { base, len, offset })
    }

    fn reg(&mut self, name: &str) -> usize {
        match self.regs.iter().position(|r| r == name) {
            Some(i) => i,
            None => {
                self.regs.push(name.to_string());
                self.regs.len() - 1
            }
        }
    }

    fn stmt(&mut self, s: &Stmt) -> Result<LStmt, LowerError> {
        Ok(match s {
            Stmt::Decl { reg, init, .. } => {
                let e = match init {
                    Some(e) => self.expr(e)?,
                    None => LExpr::Const(0),
                };
                LStmt::Set(self.reg(reg), e)
            }
            Stmt::Assign { reg, value, span } => {
                if self.params.contains_key(reg) && !self.regs.contains(reg) {
                    return err(
                        *span,
                        format!("`{reg}` is a location; store to it with `*{reg} = …`"),
                    );
                }
                let e = self.expr(value)?;
                LStmt::Set(self.reg(reg), e)
            }
            Stmt::Store {
                ptr,
                value,
                access,
                span,
            } => LStmt::Store(self.loc(ptr, *span)?, self.expr(value)?, *access, *span),
            Stmt::Fence {
                flags,
                order,
                scope,
                span,
            } => LStmt::Fence(*flags, *order, *scope, *span),
            Stmt::Barrier {
                label,
                flags,
                scope,
                span,
            } => {
                let id = match self.barriers.iter().position(|b| b == label) {
                    Some(i) => i,
                    None => {
                        self.barriers.push(label.clone());
                        self.barriers.len() - 1
                    }
                };
                LStmt::Barrier(id as u32, *flags, *scope, *span)
            }
            Stmt::If { cond, then, els } => {
                LStmt::If(self.expr(cond)?, self.stmts(then)?, self.stmts(els)?)
            }
            Stmt::While { cond, body, .. } => LStmt::While(self.expr(cond)?, self.stmts(body)?),
            Stmt::Expr(e) => LStmt::Eval(self.expr(e)?),
        })
    }

    fn expr(&mut self, e: &Expr) -> Result<LExpr, LowerError> {
        Ok(match e {
            Expr::Int(v) => {
                self.constants.push(*v);
                LExpr::Const(*v)
            }
            Expr::Name(n, _) => {
                if let Some(i) = self.regs.iter().position(|r| r == n) {
                    LExpr::Reg(i)
                } else if let Some(&(l, _)) = self.params.get(n) {
                    LExpr::Const(address_of(l))
                } else {
                    LExpr::Reg(self.reg(n))
                }
            }
            Expr::Load { ptr, access, span } => LExpr::Load(self.loc(ptr, *span)?, *access, *span),
            Expr::Rmw {
                op,
                ptr,
                operand,
                order,
                scope,
                span,
            } => LExpr::Rmw {
                op: *op,
                loc: self.loc(ptr, *span)?,
                operand: Box::new(self.expr(operand)?),
                order: *order,
                scope: *scope,
                span: *span,
            },
            Expr::Cas {
                ptr,
                expected,
                desired,
                order,
                scope,
                span,
            } => LExpr::Cas {
                loc: self.loc(ptr, *span)?,
                expected: self.loc(expected, *span)?,
                desired: Box::new(self.expr(desired)?),
                order: *order,
                scope: *scope,
                span: *span,
            },
            Expr::Unary(op, a) => LExpr::Un(*op, Box::new(self.expr(a)?)),
            Expr::Binary(op, a, b) => {
                LExpr::Bin(*op, Box::new(self.expr(a)?), Box::new(self.expr(b)?))
            }
        })
    }
}

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
            LStmt::While(c, body) => {
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

    fn rmw_flag(&mut self) {
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
                self.push(
                    Kind::Read,
                    Some(loc),
                    old,
                    Some(*order),
                    Some(*scope),
                    *span,
                );
                self.rmw_flag();
                let new = op.apply(old, operand);
                self.push(
                    Kind::Write,
                    Some(loc),
                    new,
                    Some(*order),
                    Some(*scope),
                    *span,
                );
                self.rmw_flag();
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
                self.push(
                    Kind::Read,
                    Some(loc),
                    seen,
                    Some(*order),
                    Some(*scope),
                    *span,
                );
                self.rmw_flag();
                if seen == want {
                    self.push(
                        Kind::Write,
                        Some(loc),
                        desired,
                        Some(*order),
                        Some(*scope),
                        *span,
                    );
                    self.rmw_flag();
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

pub(crate) fn stmts_touch(body: &[LStmt], loc: usize) -> bool {
    body.iter().any(|s| match s {
        LStmt::Store(p, e, _, _) => p.may_touch(loc) || e.touches(loc),
        LStmt::Set(_, e) | LStmt::Eval(e) => e.touches(loc),
        LStmt::If(c, a, b) => c.touches(loc) || stmts_touch(a, loc) || stmts_touch(b, loc),
        LStmt::While(c, b) => c.touches(loc) || stmts_touch(b, loc),
        LStmt::Fence(..) | LStmt::Barrier(..) => false,
    })
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
