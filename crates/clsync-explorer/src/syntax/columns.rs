//! herd's older column syntax for OpenCL tests:
//!
//! ```text
//! { x=0; y=0; }
//!  P0                                   | P1                                   ;
//!  x = 1                                | r1 = y.load(memory_order_acquire)    ;
//!  y.store(1,memory_order_release)      | r2 = x                               ;
//! scopeTree (device (work_group P0) (work_group P1))
//! x:local, y:global
//! exists (1:r1 = 1 /\ 1:r2 = 0)
//! ```
//!
//! Locations are named directly (no parameters); `x.load(…)`/`x.store(…)`
//! are atomic, `r = x` and `x = v` are plain. A location is atomic when some
//! access to it is; its space comes from the `x:local` list (global if not
//! listed).

use std::collections::{HashMap, HashSet};

use super::ast::*;
use super::lexer::{lex, Tok, Token};
use super::parser::{thread_number, Parser};
use super::{ParseError, Warning};

type PResult<T> = Result<T, ParseError>;

/// Whether the first line after the init block starts a column table.
pub(crate) fn looks_like_columns(body: &str) -> bool {
    let Some(close) = body.find('}') else {
        return false;
    };
    body[close + 1..]
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .is_some_and(|l| {
            let first = l.split(['|', ';']).next().unwrap_or("").trim();
            thread_number(first).is_some() && (l.contains('|') || l.ends_with(';'))
        })
}

pub(crate) fn parse(name: String, body: &str, first_line: u32) -> PResult<(Test, Vec<Warning>)> {
    let toks = lex(body, first_line)?;
    let mut p = Parser::new(toks, Dialect::HerdColumns);
    while !p.at("{") {
        if *p.peek() == Tok::Eof {
            return Err(p.unexpected("the initial-state block `{ … }`"));
        }
        p.bump_pub();
    }
    let (init, reg_init) = p.init_block()?;
    // The header row: thread names.
    let header = row(&mut p)?;
    let mut threads = Vec::new();
    for cell in &header {
        let (name, span) = match cell.as_slice() {
            [Token {
                tok: Tok::Ident(n),
                span,
            }] => (n.clone(), *span),
            _ => {
                let span = cell.first().map_or(p.span(), |t| t.span);
                return Err(ParseError::new(span, "expected a thread name such as `P0`"));
            }
        };
        let id = thread_number(&name)
            .ok_or_else(|| ParseError::new(span, format!("`{name}` is not a thread name")))?;
        threads.push(Thread {
            id,
            work_group: usize::MAX,
            device: 0,
            params: Vec::new(),
            body: Vec::new(),
            span,
        });
    }
    let locations: HashSet<String> = init.iter().map(|(l, _)| l.clone()).collect();
    let mut atomic: HashSet<String> = HashSet::new();
    while !matches!(p.peek(), Tok::Ident(w) if w == "scopeTree") {
        if *p.peek() == Tok::Eof {
            return Err(p.unexpected("`scopeTree`"));
        }
        let cells = row(&mut p)?;
        if cells.len() > threads.len() {
            let span = cells[threads.len()].first().map_or(p.span(), |t| t.span);
            return Err(ParseError::new(
                span,
                "this row has more cells than there are threads",
            ));
        }
        for (t, cell) in threads.iter_mut().zip(cells) {
            if !cell.is_empty() {
                t.body.push(instruction(cell, &locations, &mut atomic)?);
            }
        }
    }
    p.bump_pub();
    p.scope_tree_pub(&mut threads)?;
    // `x:local, y:global`
    let mut spaces: HashMap<String, Space> = HashMap::new();
    while let Tok::Ident(loc) = p.peek().clone() {
        if loc == "exists" || loc == "forall" || loc == "locations" {
            break;
        }
        let span = p.span();
        p.bump_pub();
        p.expect(":")?;
        let (space, ssp) = match p.peek().clone() {
            Tok::Ident(s) => (s, p.span()),
            _ => return Err(p.unexpected("`global` or `local`")),
        };
        p.bump_pub();
        let space = match space.as_str() {
            "global" => Space::Global,
            "local" => Space::Local,
            _ => {
                return Err(ParseError::new(
                    ssp,
                    format!("`{space}` is not an address space (global or local)"),
                ))
            }
        };
        if !locations.contains(&loc) {
            return Err(ParseError::new(
                span,
                format!("`{loc}` is not a location of the test"),
            ));
        }
        spaces.insert(loc, space);
        p.eat(",");
    }
    let condition = p.condition()?;
    if *p.peek() != Tok::Eof {
        return Err(p.unexpected("the end of the test"));
    }
    for t in &mut threads {
        t.params = init
            .iter()
            .map(|(l, _)| Param {
                name: l.clone(),
                space: spaces.get(l).copied().unwrap_or(Space::Global),
                atomic: atomic.contains(l),
                span: t.span,
            })
            .collect();
    }
    threads.sort_by_key(|t| t.id);
    Ok((
        Test {
            name,
            dialect: Dialect::HerdColumns,
            init,
            reg_init,
            threads,
            condition,
        },
        Vec::new(),
    ))
}

/// One row: cells split at `|`, ended by `;`.
fn row(p: &mut Parser) -> PResult<Vec<Vec<Token>>> {
    let mut cells = vec![Vec::new()];
    let mut depth = 0usize;
    loop {
        let span = p.span();
        let tok = p.peek().clone();
        match tok {
            Tok::Eof => return Err(p.unexpected("`;` ending the row")),
            Tok::Punct(";") if depth == 0 => {
                p.bump_pub();
                return Ok(cells);
            }
            Tok::Punct("|") if depth == 0 => cells.push(Vec::new()),
            _ => {
                if tok == Tok::Punct("(") {
                    depth += 1;
                } else if tok == Tok::Punct(")") {
                    depth = depth.saturating_sub(1);
                }
                cells
                    .last_mut()
                    .expect("one cell at least")
                    .push(Token { tok, span });
            }
        }
        p.bump_pub();
    }
}

/// One cell's instruction.
fn instruction(
    cell: Vec<Token>,
    locations: &HashSet<String>,
    atomic: &mut HashSet<String>,
) -> PResult<Stmt> {
    let span = cell[0].span;
    let end = cell.last().map_or(span, |t| t.span);
    let mut toks = cell;
    toks.push(Token {
        tok: Tok::Eof,
        span: end,
    });
    let ident = |i: usize| match toks.get(i).map(|t| &t.tok) {
        Some(Tok::Ident(s)) => Some(s.clone()),
        _ => None,
    };
    let punct =
        |i: usize, p: &str| matches!(toks.get(i).map(|t| &t.tok), Some(Tok::Punct(q)) if *q == p);
    // `x.store(v, order[, scope])`
    if let (Some(loc), true) = (ident(0), punct(1, ".")) {
        if ident(2).as_deref() == Some("store") {
            atomic.insert(loc.clone());
            let mut p = Parser::new(toks[3..].to_vec(), Dialect::HerdColumns);
            p.expect("(")?;
            let value = p.expr()?;
            let (order, scope) = order_scope(&mut p)?;
            p.expect(")")?;
            end_of_cell(&p)?;
            return Ok(Stmt::Store {
                ptr: Ptr::to(loc),
                value,
                access: Access::Atomic(order, scope),
                span,
            });
        }
    }
    // `lhs = rhs`
    let Some(lhs) = ident(0) else {
        return Err(ParseError::new(
            span,
            "expected an instruction such as `r1 = x` or `x.store(…)`",
        ));
    };
    if !punct(1, "=") {
        return Err(ParseError::new(toks[1].span, "expected `=`"));
    }
    let rhs = &toks[2..];
    let value = match (rhs.first().map(|t| &t.tok), rhs.get(1).map(|t| &t.tok)) {
        (Some(Tok::Ident(loc)), Some(Tok::Punct("."))) if locations.contains(loc) => {
            let loc = loc.clone();
            if !matches!(rhs.get(2).map(|t| &t.tok), Some(Tok::Ident(w)) if w == "load") {
                return Err(ParseError::new(rhs[2].span, "expected `load`"));
            }
            atomic.insert(loc.clone());
            let mut p = Parser::new(rhs[3..].to_vec(), Dialect::HerdColumns);
            p.expect("(")?;
            let (order, scope) = order_scope_first(&mut p)?;
            p.expect(")")?;
            end_of_cell(&p)?;
            Expr::Load {
                ptr: Ptr::to(loc),
                access: Access::Atomic(order, scope),
                span: rhs[0].span,
            }
        }
        (Some(Tok::Ident(loc)), Some(Tok::Eof)) if locations.contains(loc) => Expr::Load {
            ptr: Ptr::to(loc.clone()),
            access: Access::Plain,
            span: rhs[0].span,
        },
        _ => {
            let mut p = Parser::new(rhs.to_vec(), Dialect::HerdColumns);
            let e = p.expr()?;
            end_of_cell(&p)?;
            e
        }
    };
    if locations.contains(&lhs) {
        Ok(Stmt::Store {
            ptr: Ptr::to(lhs),
            value,
            access: Access::Plain,
            span,
        })
    } else {
        Ok(Stmt::Assign {
            reg: lhs,
            value,
            span,
        })
    }
}

fn end_of_cell(p: &Parser) -> PResult<()> {
    if *p.peek() == Tok::Eof {
        Ok(())
    } else {
        Err(p.unexpected("the end of the cell"))
    }
}

fn order_scope(p: &mut Parser) -> PResult<(Order, Scope)> {
    if !p.eat(",") {
        return Ok((Order::SeqCst, Scope::Device));
    }
    order_scope_first(p)
}

fn order_scope_first(p: &mut Parser) -> PResult<(Order, Scope)> {
    if p.at(")") {
        return Ok((Order::SeqCst, Scope::Device));
    }
    let word = |p: &mut Parser, what: &str| match p.peek().clone() {
        Tok::Ident(w) => {
            let sp = p.span();
            p.bump_pub();
            Ok((w, sp))
        }
        _ => Err(p.unexpected(what)),
    };
    let (o, osp) = word(p, "a memory order")?;
    let order = order_from_name(&o)
        .ok_or_else(|| ParseError::new(osp, format!("`{o}` is not a memory_order")))?;
    let scope = if p.eat(",") {
        let (s, ssp) = word(p, "a memory scope")?;
        scope_from_name(&s)
            .ok_or_else(|| ParseError::new(ssp, format!("`{s}` is not a memory_scope")))?
    } else {
        Scope::Device
    };
    Ok((order, scope))
}
