//! Statements: blocks, declarations, assignments, `if` and `while`, barriers,
//! stores and fences, and the arguments of the atomic calls.

use clsync::sync::validate;

use super::super::ast::*;
use super::super::lexer::Tok;
use super::super::ParseError;
use super::{PResult, Parser, TYPE_WORDS};

impl Parser {
    pub(super) fn block(&mut self) -> PResult<Vec<Stmt>> {
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

    /// `( expr )`: the condition of an `if` or a `while`.
    fn parenthesized(&mut self) -> PResult<Expr> {
        self.expect("(")?;
        let cond = self.expr()?;
        self.expect(")")?;
        Ok(cond)
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
                let cond = self.parenthesized()?;
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
                let cond = self.parenthesized()?;
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
        let scope = self.trailing_scope()?;
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
                let scope = self.trailing_scope()?;
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
    pub(super) fn order_scope(
        &mut self,
        explicit: bool,
        f: &str,
        span: Span,
    ) -> PResult<(Order, Scope)> {
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
        let scope = self.trailing_scope()?.unwrap_or(Scope::Device);
        if scope == Scope::WorkItem {
            self.warn(
                span,
                format!("{f} cannot take memory_scope_work_item (it is for image fences only)"),
            );
        }
        Ok((order, scope))
    }

    /// `x`, `&x`, `x + e`, `x - e`, `&x[e]`.
    pub(super) fn ptr_arg(&mut self) -> PResult<Ptr> {
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
    pub(super) fn order_arg(&mut self) -> PResult<Order> {
        let (w, sp) = self.ident("a memory order")?;
        order_from_name(&w)
            .ok_or_else(|| ParseError::new(sp, format!("`{w}` is not a memory_order")))
    }
    /// A last `, scope` argument, if the call has one (the functions that
    /// take it make it optional; its default is each function's own).
    pub(super) fn trailing_scope(&mut self) -> PResult<Option<Scope>> {
        if self.eat(",") {
            self.scope_arg().map(Some)
        } else {
            Ok(None)
        }
    }
    pub(super) fn scope_arg(&mut self) -> PResult<Scope> {
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
}

fn is_barrier(f: &str) -> bool {
    matches!(f, "barrier" | "work_group_barrier" | "sub_group_barrier")
}

pub(super) fn is_statement_call(f: &str) -> bool {
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
