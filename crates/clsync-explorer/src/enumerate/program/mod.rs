//! Lowering a parsed test to resolved locations and registers (here), and
//! running a thread to get its possible event traces ([`traces`]).
//!
//! A thread runs once per choice of the values its reads return, drawn from
//! each location's value domain; a replayed choice prefix walks every
//! combination depth-first. Each run is one *trace*: the thread's events in
//! program order with concrete values, and its final registers. Which write
//! each read takes its value from is decided later, by `rf`.

use std::collections::HashMap;

use crate::model::event::{Location, Placement};
use crate::syntax::*;

mod run;

pub use run::{private_locations, traces, Limits, Trace, Traces};

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
    /// The condition, the body, and where the loop is (a back-edge's site).
    While(LExpr, Vec<LStmt>, Span),
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
            collect_prop_constants(&c.prop, &mut constants);
            for (v, span) in &c.mentions {
                match v {
                    Var::Reg(t, _) if !test.threads.iter().any(|x| x.id == *t) => {
                        return err(
                            *span,
                            format!("the condition names `{v}`, but there is no thread P{t}"),
                        )
                    }
                    Var::Loc(l) if !locations.iter().any(|x| x.name == *l) => {
                        return err(
                            *span,
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
        // One id per work-group of a device, numbered as first met: any
        // numbers the file gives (`wg 1000000, dev 0` is not `wg 0, dev
        // 1`), and threads of unknown placement in one group.
        let mut groups: Vec<(usize, usize)> = Vec::new();
        let placement = test
            .threads
            .iter()
            .map(|t| {
                let key = (t.device, t.work_group);
                let id = groups.iter().position(|g| *g == key).unwrap_or_else(|| {
                    groups.push(key);
                    groups.len() - 1
                });
                Placement {
                    work_group: id,
                    device: t.device,
                }
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
            Stmt::While { cond, body, span } => {
                LStmt::While(self.expr(cond)?, self.stmts(body)?, *span)
            }
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

pub(crate) fn stmts_touch(body: &[LStmt], loc: usize) -> bool {
    body.iter().any(|s| match s {
        LStmt::Store(p, e, _, _) => p.may_touch(loc) || e.touches(loc),
        LStmt::Set(_, e) | LStmt::Eval(e) => e.touches(loc),
        LStmt::If(c, a, b) => c.touches(loc) || stmts_touch(a, loc) || stmts_touch(b, loc),
        LStmt::While(c, b, _) => c.touches(loc) || stmts_touch(b, loc),
        LStmt::Fence(..) | LStmt::Barrier(..) => false,
    })
}
