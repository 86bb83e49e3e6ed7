//! Expressions: operators by precedence, literals, registers and locations,
//! and the calls that are values (loads and read-modify-writes).

use clsync::sync::validate;

use super::super::ast::*;
use super::super::lexer::Tok;
use super::super::ParseError;
use super::stmt::is_statement_call;
use super::{PResult, Parser, TYPE_WORDS};

impl Parser {
    pub(crate) fn expr(&mut self) -> PResult<Expr> {
        self.binary(0)
    }

    pub(super) fn binary(&mut self, min_prec: u8) -> PResult<Expr> {
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
                let scope = self.trailing_scope()?.unwrap_or(Scope::Device);
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
