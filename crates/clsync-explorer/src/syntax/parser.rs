//! The recursive-descent parser of the C-like syntaxes (Dat3M's and herd's).

use std::collections::HashMap;

use clsync::sync::validate;

use super::ast::*;
use super::lexer::{Tok, Token};
use super::{ParseError, Warning};

type PResult<T> = Result<T, ParseError>;

/// Type words that may start a declaration or qualify a parameter.
const TYPE_WORDS: &[&str] = &[
    "int",
    "long",
    "unsigned",
    "uint",
    "bool",
    "char",
    "short",
    "atomic_int",
    "atomic_uint",
    "atomic_long",
    "atomic_ulong",
    "intptr_t",
];

pub(crate) struct Parser {
    toks: Vec<Token>,
    pos: usize,
    dialect: Dialect,
    warnings: Vec<Warning>,
    /// Unlabelled barriers seen so far in the current thread.
    unlabelled: usize,
}

impl Parser {
    pub(crate) fn new(toks: Vec<Token>, dialect: Dialect) -> Self {
        Parser {
            toks,
            pos: 0,
            dialect,
            warnings: Vec::new(),
            unlabelled: 0,
        }
    }

    // ---- token helpers -------------------------------------------------

    pub(crate) fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }
    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)].tok
    }
    pub(crate) fn span(&self) -> Span {
        self.toks[self.pos].span
    }
    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    pub(crate) fn at(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }
    fn at_word(&self, w: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == w)
    }
    pub(crate) fn eat(&mut self, p: &str) -> bool {
        if self.at(p) {
            self.bump();
            true
        } else {
            false
        }
    }
    pub(crate) fn expect(&mut self, p: &str) -> PResult<Span> {
        if self.at(p) {
            Ok(self.bump().span)
        } else {
            Err(self.unexpected(&format!("`{p}`")))
        }
    }
    fn ident(&mut self, what: &str) -> PResult<(String, Span)> {
        match self.peek().clone() {
            Tok::Ident(s) => {
                let sp = self.bump().span;
                Ok((s, sp))
            }
            _ => Err(self.unexpected(what)),
        }
    }
    fn int(&mut self, what: &str) -> PResult<i64> {
        let neg = self.eat("-");
        match *self.peek() {
            Tok::Int(v) => {
                self.bump();
                Ok(if neg { -v } else { v })
            }
            _ => Err(self.unexpected(what)),
        }
    }
    pub(crate) fn unexpected(&self, wanted: &str) -> ParseError {
        let found = match self.peek() {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Int(v) => format!("`{v}`"),
            Tok::Str => "a string".to_string(),
            Tok::Punct(p) => format!("`{p}`"),
            Tok::Eof => "the end of the file".to_string(),
        };
        ParseError::new(self.span(), format!("expected {wanted}, found {found}"))
    }
    pub(crate) fn bump_pub(&mut self) {
        self.bump();
    }
    pub(crate) fn scope_tree_pub(&mut self, threads: &mut [Thread]) -> PResult<()> {
        let mut place: HashMap<usize, (usize, usize)> = HashMap::new();
        let (mut dev, mut wg) = (0usize, 0usize);
        // One or more top-level nodes: `(device …) (device …)`.
        self.tree_node(&mut place, &mut dev, &mut wg, 0, None)?;
        while self.at("(") {
            self.tree_node(&mut place, &mut dev, &mut wg, 0, None)?;
        }
        Self::apply_places(&place, threads)
    }
    fn apply_places(place: &HashMap<usize, (usize, usize)>, threads: &mut [Thread]) -> PResult<()> {
        for t in threads.iter_mut() {
            match place.get(&t.id) {
                Some(&(d, g)) => {
                    t.device = d;
                    t.work_group = g;
                }
                None => {
                    return Err(ParseError::new(
                        t.span,
                        format!("thread P{} is not placed in the scopeTree", t.id),
                    ))
                }
            }
        }
        Ok(())
    }
    fn warn(&mut self, span: Span, message: String) {
        self.warnings.push(Warning { span, message });
    }

    // ---- the test --------------------------------------------------------

    pub(crate) fn test(mut self, name: String) -> PResult<(Test, Vec<Warning>)> {
        // herd headers carry strings and `Key=Value` lines before the init
        // block; skip to it.
        while !self.at("{") {
            if *self.peek() == Tok::Eof {
                return Err(self.unexpected("the initial-state block `{ … }`"));
            }
            self.bump();
        }
        let (init, reg_init) = self.init_block()?;
        let mut threads = Vec::new();
        while self.at_thread_header() {
            threads.push(self.thread()?);
        }
        if self.dialect == Dialect::Herd {
            self.scope_tree(&mut threads)?;
        }
        if threads.is_empty() {
            return Err(self.unexpected("a thread `P0 …`"));
        }
        let condition = self.condition()?;
        if *self.peek() != Tok::Eof {
            return Err(self.unexpected("the end of the test"));
        }
        threads.sort_by_key(|t| t.id);
        for w in threads.windows(2) {
            if w[0].id == w[1].id {
                return Err(ParseError::new(
                    w[1].span,
                    format!("thread P{} is defined twice", w[1].id),
                ));
            }
        }
        let test = Test {
            name,
            dialect: self.dialect,
            init,
            reg_init,
            threads,
            condition,
        };
        Ok((test, self.warnings))
    }

    #[allow(clippy::type_complexity)]
    pub(crate) fn init_block(
        &mut self,
    ) -> PResult<(Vec<(String, Vec<i64>)>, Vec<(usize, String, i64)>)> {
        self.expect("{")?;
        let (mut init, mut regs) = (Vec::new(), Vec::new());
        while !self.eat("}") {
            if self.eat(";") {
                continue;
            }
            while matches!(self.peek(), Tok::Ident(s) if TYPE_WORDS.contains(&s.as_str()) || s == "global" || s == "local" || s == "volatile")
            {
                self.bump();
            }
            if let Tok::Int(t) = *self.peek() {
                self.bump();
                self.expect(":")?;
                let (reg, _) = self.ident("a register name")?;
                self.expect("=")?;
                let v = self.int("an integer")?;
                regs.push((t as usize, reg, v));
            } else {
                let bracket = self.eat("[");
                let (loc, sp) = self.ident("a location name")?;
                if bracket {
                    self.expect("]")?;
                }
                // An array: `y[2] = {0, 0}` or `y[2]`.
                let len = if !bracket && self.eat("[") {
                    let n = self.int("an array length")?;
                    self.expect("]")?;
                    if !(1..=64).contains(&n) {
                        return Err(ParseError::new(
                            sp,
                            format!("array `{loc}` has length {n}; it must be 1 to 64"),
                        ));
                    }
                    Some(n as usize)
                } else {
                    None
                };
                let v = if self.eat("=") {
                    if len.is_some() && self.eat("{") {
                        let mut vs = Vec::new();
                        while !self.eat("}") {
                            vs.push(self.int("an integer")?);
                            if !self.at("}") {
                                self.expect(",")?;
                            }
                        }
                        if vs.len() != len.unwrap_or(0) {
                            return Err(ParseError::new(
                                sp,
                                format!(
                                    "array `{loc}` has length {} but {} initial values",
                                    len.unwrap_or(0),
                                    vs.len()
                                ),
                            ));
                        }
                        vs
                    } else {
                        vec![self.int("an integer initial value")?; len.unwrap_or(1)]
                    }
                } else {
                    vec![0; len.unwrap_or(1)]
                };
                if init.iter().any(|(l, _)| *l == loc) {
                    return Err(ParseError::new(
                        sp,
                        format!("location `{loc}` is initialized twice"),
                    ));
                }
                init.push((loc, v));
            }
            if !self.at("}") {
                self.expect(";")?;
            }
        }
        Ok((init, regs))
    }

    fn at_thread_header(&self) -> bool {
        matches!(self.peek(), Tok::Ident(s) if thread_number(s).is_some())
    }

    fn thread(&mut self) -> PResult<Thread> {
        let span = self.span();
        let (name, _) = self.ident("a thread")?;
        let id = thread_number(&name).expect("checked by at_thread_header");
        let (mut work_group, mut device) = (0, 0);
        if self.dialect == Dialect::Dat3m {
            self.expect("@")?;
            loop {
                let (what, sp) = self.ident("`wg` or `dev`")?;
                let n = self.int("a number")? as usize;
                match what.as_str() {
                    "wg" => work_group = n,
                    "dev" => device = n,
                    "sg" => {
                        return Err(ParseError::new(
                            sp,
                            "sub-group placement is not supported: the model of opencl.cat has no sub-group relation",
                        ))
                    }
                    _ => {
                        return Err(ParseError::new(
                            sp,
                            format!("expected `wg` or `dev`, found `{what}`"),
                        ))
                    }
                }
                if !self.eat(",") {
                    break;
                }
            }
        } else {
            // herd: placement comes from the scopeTree; mark it unknown.
            work_group = usize::MAX;
        }
        self.expect("(")?;
        let mut params = Vec::new();
        while !self.eat(")") {
            params.push(self.param()?);
            if !self.at(")") {
                self.expect(",")?;
            }
        }
        self.unlabelled = 0;
        let body = self.block()?;
        Ok(Thread {
            id,
            work_group,
            device,
            params,
            body,
            span,
        })
    }

    fn param(&mut self) -> PResult<Param> {
        let span = self.span();
        let (mut space, mut atomic, mut typed) = (Space::Generic, false, false);
        loop {
            match self.peek().clone() {
                Tok::Ident(w) if w == "volatile" || w == "const" => {
                    self.bump();
                }
                Tok::Ident(w) if w == "global" || w == "__global" => {
                    self.bump();
                    space = Space::Global;
                }
                Tok::Ident(w) if w == "local" || w == "__local" => {
                    self.bump();
                    space = Space::Local;
                }
                Tok::Ident(w) if TYPE_WORDS.contains(&w.as_str()) => {
                    self.bump();
                    atomic |= w.starts_with("atomic_");
                    typed = true;
                }
                _ => break,
            }
        }
        if !typed {
            return Err(self.unexpected("a parameter type such as `global atomic_int*`"));
        }
        self.expect("*")?;
        let (name, _) = self.ident("a parameter name")?;
        Ok(Param {
            name,
            space,
            atomic,
            span,
        })
    }

    fn scope_tree(&mut self, threads: &mut [Thread]) -> PResult<()> {
        if !self.at_word("scopeTree") {
            return Err(self.unexpected("`scopeTree` (herd tests place their threads there)"));
        }
        self.bump();
        self.scope_tree_pub(threads)
    }

    /// One `(level child…)` node; `level` 0 is outside any device.
    fn tree_node(
        &mut self,
        place: &mut HashMap<usize, (usize, usize)>,
        dev: &mut usize,
        wg: &mut usize,
        _depth: usize,
        current: Option<(usize, usize)>,
    ) -> PResult<()> {
        self.expect("(")?;
        // A bare list of nodes: `((device …) (device …))`.
        if self.at("(") {
            while self.at("(") {
                self.tree_node(place, dev, wg, _depth + 1, current)?;
            }
            self.expect(")")?;
            return Ok(());
        }
        let (kind, sp) = self.ident("`device`, `work_group` or `sub_group`")?;
        let here = match kind.as_str() {
            "device" => {
                let d = *dev;
                *dev += 1;
                Some((d, usize::MAX))
            }
            "work_group" => {
                let (d, _) = current
                    .ok_or_else(|| ParseError::new(sp, "a work_group must be inside a device"))?;
                let g = *wg;
                *wg += 1;
                Some((d, g))
            }
            "sub_group" => current,
            other => {
                return Err(ParseError::new(
                    sp,
                    format!(
                        "`{other}` is not an OpenCL scope level (device, work_group, sub_group)"
                    ),
                ))
            }
        };
        loop {
            if self.eat(")") {
                return Ok(());
            }
            if self.at("(") {
                self.tree_node(place, dev, wg, _depth + 1, here)?;
                continue;
            }
            let (t, tsp) = self.ident("a thread name or `(`")?;
            let id = thread_number(&t)
                .ok_or_else(|| ParseError::new(tsp, format!("`{t}` is not a thread name")))?;
            let (d, g) = here.expect("a level was matched");
            if g == usize::MAX {
                return Err(ParseError::new(
                    tsp,
                    format!("thread {t} must be inside a work_group"),
                ));
            }
            if place.insert(id, (d, g)).is_some() {
                return Err(ParseError::new(tsp, format!("thread {t} is placed twice")));
            }
        }
    }

    pub(crate) fn condition(&mut self) -> PResult<Option<Condition>> {
        if self.at_word("locations") {
            while !self.eat(";") {
                if *self.peek() == Tok::Eof {
                    return Err(self.unexpected("`;` ending `locations`"));
                }
                self.bump();
            }
        }
        let quantifier = if self.at_word("exists") {
            self.bump();
            Quantifier::Exists
        } else if self.at_word("forall") {
            self.bump();
            Quantifier::Forall
        } else if self.at("~") && matches!(self.peek_at(1), Tok::Ident(s) if s == "exists") {
            self.bump();
            self.bump();
            Quantifier::NotExists
        } else if *self.peek() == Tok::Eof {
            return Ok(None);
        } else {
            return Err(self.unexpected("`exists`, `~exists` or `forall`"));
        };
        let prop = self.prop_or()?;
        Ok(Some(Condition { quantifier, prop }))
    }

    fn prop_or(&mut self) -> PResult<Prop> {
        let mut p = self.prop_and()?;
        while self.eat("\\/") {
            p = Prop::Or(Box::new(p), Box::new(self.prop_and()?));
        }
        Ok(p)
    }
    fn prop_and(&mut self) -> PResult<Prop> {
        let mut p = self.prop_unary()?;
        while self.eat("/\\") {
            p = Prop::And(Box::new(p), Box::new(self.prop_unary()?));
        }
        Ok(p)
    }
    fn prop_unary(&mut self) -> PResult<Prop> {
        if self.eat("~") {
            return Ok(Prop::Not(Box::new(self.prop_unary()?)));
        }
        if self.eat("(") {
            let p = self.prop_or()?;
            self.expect(")")?;
            return Ok(p);
        }
        if self.at_word("true") {
            self.bump();
            return Ok(Prop::True);
        }
        if self.at_word("false") {
            self.bump();
            return Ok(Prop::False);
        }
        let var = match self.peek().clone() {
            Tok::Int(t) => {
                self.bump();
                self.expect(":")?;
                let (r, _) = self.ident("a register name")?;
                Var::Reg(t as usize, r)
            }
            Tok::Punct("[") => {
                self.bump();
                let (l, _) = self.ident("a location name")?;
                self.expect("]")?;
                Var::Loc(l)
            }
            Tok::Ident(l) => {
                self.bump();
                Var::Loc(l)
            }
            _ => return Err(self.unexpected("`T:reg`, a location, `(` or `~`")),
        };
        let eq = if self.eat("=") || self.eat("==") {
            true
        } else if self.eat("!=") {
            false
        } else {
            return Err(self.unexpected("`=` or `!=`"));
        };
        let v = self.int("an integer")?;
        Ok(if eq {
            Prop::Eq(var, v)
        } else {
            Prop::Ne(var, v)
        })
    }

    // ---- statements ------------------------------------------------------

    fn block(&mut self) -> PResult<Vec<Stmt>> {
        self.expect("{")?;
        let mut out = Vec::new();
        while !self.eat("}") {
            if *self.peek() == Tok::Eof {
                return Err(self.unexpected("`}`"));
            }
            self.stmt(&mut out)?;
        }
        Ok(out)
    }

    /// A braced block or a single statement.
    fn body(&mut self) -> PResult<Vec<Stmt>> {
        if self.at("{") {
            self.block()
        } else {
            let mut out = Vec::new();
            self.stmt(&mut out)?;
            Ok(out)
        }
    }

    pub(crate) fn stmt(&mut self, out: &mut Vec<Stmt>) -> PResult<()> {
        let span = self.span();
        match self.peek().clone() {
            Tok::Punct(";") => {
                self.bump();
            }
            Tok::Punct("{") => out.extend(self.block()?),
            Tok::Punct("*") => {
                self.bump();
                let (ptr, _) = self.ident("a location after `*`")?;
                self.expect("=")?;
                let value = self.expr()?;
                self.expect(";")?;
                out.push(Stmt::Store {
                    ptr: Ptr::to(ptr),
                    value,
                    access: Access::Plain,
                    span,
                });
            }
            Tok::Ident(w) if w == "if" => {
                self.bump();
                self.expect("(")?;
                let cond = self.expr()?;
                self.expect(")")?;
                let then = self.body()?;
                let els = if self.at_word("else") {
                    self.bump();
                    self.body()?
                } else {
                    Vec::new()
                };
                out.push(Stmt::If { cond, then, els });
            }
            Tok::Ident(w) if w == "while" => {
                self.bump();
                self.expect("(")?;
                let cond = self.expr()?;
                self.expect(")")?;
                let body = self.body()?;
                out.push(Stmt::While { cond, body, span });
            }
            Tok::Ident(w) if TYPE_WORDS.contains(&w.as_str()) => {
                self.bump();
                let (reg, _) = self.ident("a register name")?;
                let init = if self.eat("=") {
                    Some(self.expr()?)
                } else {
                    None
                };
                self.expect(";")?;
                out.push(Stmt::Decl { reg, init, span });
            }
            Tok::Ident(label) if *self.peek_at(1) == Tok::Punct(":") => {
                self.bump();
                self.bump();
                let (f, fsp) = self.ident("a barrier after the label")?;
                if !is_barrier(&f) {
                    return Err(ParseError::new(
                        fsp,
                        format!("only barriers carry labels, not `{f}`"),
                    ));
                }
                let s = self.barrier_call(&f, Some(label), fsp)?;
                self.expect(";")?;
                out.push(s);
            }
            Tok::Ident(name) if *self.peek_at(1) == Tok::Punct("=") => {
                self.bump();
                self.bump();
                let value = self.expr()?;
                self.expect(";")?;
                out.push(Stmt::Assign {
                    reg: name,
                    value,
                    span,
                });
            }
            Tok::Ident(f) if *self.peek_at(1) == Tok::Punct("(") && is_statement_call(&f) => {
                self.bump();
                let s = if is_barrier(&f) {
                    self.barrier_call(&f, None, span)?
                } else {
                    self.statement_call(&f, span)?
                };
                self.expect(";")?;
                out.push(s);
            }
            _ => {
                let e = self.expr()?;
                self.expect(";")?;
                out.push(Stmt::Expr(e));
            }
        }
        Ok(())
    }

    fn barrier_call(&mut self, f: &str, label: Option<String>, span: Span) -> PResult<Stmt> {
        if f == "sub_group_barrier" {
            return Err(ParseError::new(
                span,
                "sub_group_barrier is not supported: litmus tests place threads in work-groups, not sub-groups",
            ));
        }
        self.expect("(")?;
        let flags = self.flags_arg()?;
        let scope = if self.eat(",") {
            Some(self.scope_arg()?)
        } else {
            None
        };
        self.expect(")")?;
        let label = label.unwrap_or_else(|| {
            self.unlabelled += 1;
            format!("#{}", self.unlabelled)
        });
        Ok(Stmt::Barrier {
            label,
            flags,
            scope,
            span,
        })
    }

    /// Stores and fences: calls that are statements, not expressions.
    fn statement_call(&mut self, f: &str, span: Span) -> PResult<Stmt> {
        self.expect("(")?;
        let s = match f {
            "atomic_store" | "atomic_store_explicit" => {
                let ptr = self.ptr_arg()?;
                self.expect(",")?;
                let value = self.expr()?;
                let (order, scope) = self.order_scope(f.ends_with("_explicit"), f, span)?;
                if let Err(e) = validate::store_order(order) {
                    self.warn(
                        span,
                        format!("{e} (OpenCL C 2.0 §6.13.11); its acquire half has no effect in the model"),
                    );
                }
                Stmt::Store {
                    ptr,
                    value,
                    access: Access::Atomic(order, scope),
                    span,
                }
            }
            "atomic_work_item_fence" | "fence" => {
                let flags = self.flags_arg()?;
                self.expect(",")?;
                let order = self.order_arg()?;
                let scope = if self.eat(",") {
                    Some(self.scope_arg()?)
                } else {
                    None
                };
                if scope == Some(Scope::WorkItem) && flags != FLAG_IMAGE {
                    self.warn(
                        span,
                        "memory_scope_work_item is only allowed with CLK_IMAGE_MEM_FENCE alone (000_96da91f170ff246f.txt)".into(),
                    );
                }
                Stmt::Fence {
                    flags,
                    order,
                    scope,
                    span,
                }
            }
            // 000_96da91f170ff246f.txt: the older fences are
            // atomic_work_item_fence at work-group scope with acq_rel,
            // acquire and release.
            "mem_fence" | "read_mem_fence" | "write_mem_fence" => {
                let flags = self.flags_arg()?;
                let order = match f {
                    "mem_fence" => Order::AcqRel,
                    "read_mem_fence" => Order::Acquire,
                    _ => Order::Release,
                };
                Stmt::Fence {
                    flags,
                    order,
                    scope: Some(Scope::WorkGroup),
                    span,
                }
            }
            _ => unreachable!("is_statement_call lists these"),
        };
        self.expect(")")?;
        Ok(s)
    }

    /// `, order[, scope]` of an `_explicit` call (or the defaults).
    fn order_scope(&mut self, explicit: bool, f: &str, span: Span) -> PResult<(Order, Scope)> {
        if !explicit {
            return Ok((Order::SeqCst, Scope::Device));
        }
        if !self.eat(",") {
            return Err(ParseError::new(
                span,
                format!("{f} needs a memory order argument"),
            ));
        }
        let order = self.order_arg()?;
        let scope = if self.eat(",") {
            self.scope_arg()?
        } else {
            Scope::Device
        };
        if scope == Scope::WorkItem {
            self.warn(
                span,
                format!("{f} cannot take memory_scope_work_item (it is for image fences only)"),
            );
        }
        Ok((order, scope))
    }

    /// `x`, `&x`, `x + e`, `x - e`, `&x[e]`.
    fn ptr_arg(&mut self) -> PResult<Ptr> {
        let amp = self.eat("&");
        let name = self.ident("a location")?.0;
        let offset = if amp && self.eat("[") {
            let e = self.expr()?;
            self.expect("]")?;
            Some(Box::new(e))
        } else if self.eat("+") {
            Some(Box::new(self.binary(9)?))
        } else if self.eat("-") {
            Some(Box::new(Expr::Unary(UnOp::Neg, Box::new(self.binary(9)?))))
        } else {
            None
        };
        Ok(Ptr { name, offset })
    }
    fn order_arg(&mut self) -> PResult<Order> {
        let (w, sp) = self.ident("a memory order")?;
        order_from_name(&w)
            .ok_or_else(|| ParseError::new(sp, format!("`{w}` is not a memory_order")))
    }
    fn scope_arg(&mut self) -> PResult<Scope> {
        let (w, sp) = self.ident("a memory scope")?;
        scope_from_name(&w)
            .ok_or_else(|| ParseError::new(sp, format!("`{w}` is not a memory_scope")))
    }
    fn flags_arg(&mut self) -> PResult<FenceFlags> {
        let mut flags = 0;
        loop {
            let (w, sp) = self.ident("fence flags")?;
            flags |= match w.as_str() {
                "CLK_LOCAL_MEM_FENCE" => FLAG_LOCAL,
                "CLK_GLOBAL_MEM_FENCE" => FLAG_GLOBAL,
                "CLK_IMAGE_MEM_FENCE" => FLAG_IMAGE,
                _ => {
                    return Err(ParseError::new(
                        sp,
                        format!("`{w}` is not a fence flag (CLK_LOCAL_MEM_FENCE, CLK_GLOBAL_MEM_FENCE, CLK_IMAGE_MEM_FENCE)"),
                    ))
                }
            };
            if !self.eat("|") {
                return Ok(flags);
            }
        }
    }

    // ---- expressions -----------------------------------------------------

    pub(crate) fn expr(&mut self) -> PResult<Expr> {
        self.binary(0)
    }

    fn binary(&mut self, min_prec: u8) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        loop {
            let Some((op, prec)) = self.binop() else {
                return Ok(lhs);
            };
            if prec < min_prec {
                return Ok(lhs);
            }
            self.bump();
            let rhs = self.binary(prec + 1)?;
            lhs = Expr::Binary(op, Box::new(lhs), Box::new(rhs));
        }
    }

    fn binop(&self) -> Option<(BinOp, u8)> {
        let Tok::Punct(p) = self.peek() else {
            return None;
        };
        Some(match *p {
            "||" => (BinOp::Or, 1),
            "&&" => (BinOp::And, 2),
            "|" => (BinOp::BitOr, 3),
            "^" => (BinOp::BitXor, 4),
            "&" => (BinOp::BitAnd, 5),
            "==" => (BinOp::Eq, 6),
            "!=" => (BinOp::Ne, 6),
            "<" => (BinOp::Lt, 7),
            "<=" => (BinOp::Le, 7),
            ">" => (BinOp::Gt, 7),
            ">=" => (BinOp::Ge, 7),
            "+" => (BinOp::Add, 8),
            "-" => (BinOp::Sub, 8),
            "*" => (BinOp::Mul, 9),
            "/" => (BinOp::Div, 9),
            "%" => (BinOp::Rem, 9),
            _ => return None,
        })
    }

    fn unary(&mut self) -> PResult<Expr> {
        let span = self.span();
        if self.eat("-") {
            return Ok(Expr::Unary(UnOp::Neg, Box::new(self.unary()?)));
        }
        if self.eat("!") {
            return Ok(Expr::Unary(UnOp::Not, Box::new(self.unary()?)));
        }
        if self.eat("~") {
            return Ok(Expr::Unary(UnOp::BitNot, Box::new(self.unary()?)));
        }
        if self.eat("*") {
            let (ptr, _) = self.ident("a location after `*`")?;
            return Ok(Expr::Load {
                ptr: Ptr::to(ptr),
                access: Access::Plain,
                span,
            });
        }
        if self.eat("&") {
            let (name, sp) = self.ident("a location after `&`")?;
            return Ok(Expr::Name(name, sp));
        }
        self.primary()
    }

    fn primary(&mut self) -> PResult<Expr> {
        let span = self.span();
        match self.peek().clone() {
            Tok::Int(v) => {
                self.bump();
                Ok(Expr::Int(v))
            }
            Tok::Punct("(") => {
                self.bump();
                // A cast such as `(int)` is skipped.
                if matches!(self.peek(), Tok::Ident(w) if TYPE_WORDS.contains(&w.as_str()))
                    && *self.peek_at(1) == Tok::Punct(")")
                {
                    self.bump();
                    self.bump();
                    return self.unary();
                }
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Ident(w) if w == "true" => {
                self.bump();
                Ok(Expr::Int(1))
            }
            Tok::Ident(w) if w == "false" => {
                self.bump();
                Ok(Expr::Int(0))
            }
            Tok::Ident(name) => {
                self.bump();
                if self.at("(") {
                    self.call(&name, span)
                } else {
                    Ok(Expr::Name(name, span))
                }
            }
            _ => Err(self.unexpected("an expression")),
        }
    }

    /// A call used as an expression: loads and read-modify-writes.
    fn call(&mut self, f: &str, span: Span) -> PResult<Expr> {
        if f.ends_with("_remote") {
            return Err(ParseError::new(
                span,
                format!("`{f}`: remote-scope promotion is an extension proposal, not OpenCL C, and is not supported"),
            ));
        }
        if is_statement_call(f) {
            return Err(ParseError::new(
                span,
                format!("`{f}` returns nothing and cannot be used as a value"),
            ));
        }
        self.expect("(")?;
        let explicit = f.ends_with("_explicit");
        let base = f.strip_suffix("_explicit").unwrap_or(f);
        let e = if base == "atomic_load" {
            let ptr = self.ptr_arg()?;
            let (order, scope) = self.order_scope(explicit, f, span)?;
            if let Err(e) = validate::load_order(order) {
                self.warn(
                    span,
                    format!(
                        "{e} (OpenCL C 2.0 §6.13.11); its release half has no effect in the model"
                    ),
                );
            }
            Expr::Load {
                ptr,
                access: Access::Atomic(order, scope),
                span,
            }
        } else if let Some(op) = rmw_op(base) {
            let ptr = self.ptr_arg()?;
            self.expect(",")?;
            let operand = Box::new(self.expr()?);
            let (order, scope) = self.order_scope(explicit, f, span)?;
            Expr::Rmw {
                op,
                ptr,
                operand,
                order,
                scope,
                span,
            }
        } else if base == "atomic_compare_exchange_strong" || base == "atomic_compare_exchange_weak"
        {
            let ptr = self.ptr_arg()?;
            self.expect(",")?;
            let expected = self.ptr_arg()?;
            self.expect(",")?;
            let desired = Box::new(self.expr()?);
            let (order, scope) = if explicit {
                self.expect(",")?;
                let success = self.order_arg()?;
                self.expect(",")?;
                let failure = self.order_arg()?;
                let scope = if self.eat(",") {
                    self.scope_arg()?
                } else {
                    Scope::Device
                };
                if let Err(e) = validate::failure_order(success, failure) {
                    self.warn(
                        span,
                        format!("{f}: {e} (OpenCL C 2.0 §6.13.11); the model uses the success order for both events"),
                    );
                }
                (success, scope)
            } else {
                (Order::SeqCst, Scope::Device)
            };
            Expr::Cas {
                ptr,
                expected,
                desired,
                order,
                scope,
                span,
            }
        } else {
            return Err(ParseError::new(span, format!("unknown function `{f}`")));
        };
        self.expect(")")?;
        Ok(e)
    }
}

fn rmw_op(base: &str) -> Option<RmwOp> {
    Some(match base {
        "atomic_fetch_add" => RmwOp::Add,
        "atomic_fetch_sub" => RmwOp::Sub,
        "atomic_fetch_or" => RmwOp::Or,
        "atomic_fetch_xor" => RmwOp::Xor,
        "atomic_fetch_and" => RmwOp::And,
        "atomic_fetch_min" => RmwOp::Min,
        "atomic_fetch_max" => RmwOp::Max,
        "atomic_exchange" => RmwOp::Exchange,
        _ => return None,
    })
}

fn is_barrier(f: &str) -> bool {
    matches!(f, "barrier" | "work_group_barrier" | "sub_group_barrier")
}

fn is_statement_call(f: &str) -> bool {
    is_barrier(f)
        || matches!(
            f,
            "atomic_store"
                | "atomic_store_explicit"
                | "atomic_work_item_fence"
                | "fence"
                | "mem_fence"
                | "read_mem_fence"
                | "write_mem_fence"
        )
}

/// `P12` → 12.
pub(crate) fn thread_number(s: &str) -> Option<usize> {
    s.strip_prefix('P')?.parse().ok()
}
