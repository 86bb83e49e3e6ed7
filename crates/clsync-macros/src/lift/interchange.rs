//! A work-item's `for` loop that carries a value from one iteration to the
//! next (`for k in 0..TILE { acc += a.get(…) * b.get(…); }`), interchanged
//! with the loop over the work-items: the group runs the `for`, and each
//! iteration is a loop over the work-items.
//!
//! Run as the work-items' code, such a loop is a chain: each iteration
//! waits for the last one's value (a floating-point add's latency, four
//! cycles or so, for every multiply-add of a tiled SGEMM). Interchanged,
//! consecutive work-items' iterations are independent, so they overlap, and
//! the loop over the work-items vectorizes once its local accesses are
//! checked once per loop (`bounds.rs`): `#[kernel]` SGEMM went from 5.3–5.6
//! to 11.5–14.1 GFLOP/s with the interchange (2-core VM, both with the
//! checks hoisted).
//!
//! Between two barriers the work-items' statements may run in any
//! interleaving: a barrier is what orders one work-item's statements before
//! another's (`004_bfca21a36d7bd2da.txt`), short of atomics and fences (the
//! memory model of the OpenCL C specification's section 3.3). Interchanging
//! keeps each work-item's own statements in their order, so it runs one of
//! those interleavings. The loop must not be left early (no `break`,
//! `continue`, `return` or `?` that leaves it), its iterator must be uniform
//! by its syntax (the group evaluates it once, and it has no side effect),
//! and its pattern binds no `mut` name.

use std::collections::HashSet;

use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::{Expr, ExprForLoop, Stmt};

use super::{group::group_bindings, union, Lifted, Lifter};
use crate::pattern::immutable_names;
use crate::scan::{first_barrier, loop_body_problem};
use crate::uniform::{is_assign, locals, root};

impl Lifter {
    /// The `for` loop `s` is, if the lifting interchanges it with the loop
    /// over the work-items: no barrier in it, no exit from it, an iterator
    /// uniform by its syntax, and a body that assigns a per-work-item
    /// variable declared outside it (the value it carries; without one the
    /// work-items' code runs the loop as fast).
    pub(super) fn interchangeable<'s>(&self, s: &'s Stmt) -> Option<&'s ExprForLoop> {
        let Stmt::Expr(Expr::ForLoop(f), _) = s else {
            return None;
        };
        let plain = f.label.is_none() && f.attrs.is_empty() && immutable_names(&f.pat);
        if !plain
            || !self.uniform_expr(&f.expr)
            || first_barrier(&self.wi, &f.body).is_some()
            || loop_body_problem(&self.wi, &f.body).is_some()
        {
            return None;
        }
        (!self.carried(f).is_empty()).then_some(f)
    }

    /// The per-work-item variables declared outside `f` that its body
    /// assigns (`x = …`, `x += …`, `x[i] += …`, `x.f = …`).
    fn carried(&self, f: &ExprForLoop) -> HashSet<String> {
        let inner: HashSet<String> = locals(&f.body).into_iter().collect();
        assigned(&f.body)
            .into_iter()
            .filter(|n| !inner.contains(n) && self.per_item(n))
            .collect()
    }

    /// `f` (see `interchangeable`) as a `for` the group runs, whose body is
    /// lifted as a block of the group: its statements become loops over the
    /// work-items. `live` holds the names used after it. Falls back to the
    /// loop as the work-items' code when a `let` in its body hides a
    /// variable used after it (the lifting keeps one slot per name).
    pub(super) fn interchange(&mut self, f: &ExprForLoop, live: &HashSet<String>) -> Lifted {
        let inner: HashSet<String> = locals(&f.body).into_iter().collect();
        if inner
            .iter()
            .any(|n| live.contains(n) || self.binding(n).is_some())
        {
            let whole = [Stmt::Expr(Expr::ForLoop(f.clone()), None)];
            return self.chunk(&whole, live, None);
        }
        // What the body assigns is read by the next iteration's loop.
        let live = union(live, &self.carried(f));
        self.scopes.push(group_bindings(&f.pat));
        let body = self.block(&f.body.stmts, &live);
        self.scopes.pop();
        let body = body?;
        let (pat, iter) = (&f.pat, &f.expr);
        Ok(quote_spanned! {f.expr.span()=>
            for #pat in #iter { #body }
        })
    }

    /// Whether the variable `name` refers to here is per work-item: bound
    /// so, or bound by an earlier `let` but not yet (see `uniform_expr`).
    fn per_item(&self, name: &str) -> bool {
        match self.lookup_uniform(name) {
            Some(uniform) => !uniform,
            None => self.pending.contains(name),
        }
    }
}

/// The variables `code` assigns: the roots of the places on the left of
/// `=` and `op=`.
fn assigned(code: &syn::Block) -> HashSet<String> {
    struct Assigned(HashSet<String>);
    impl<'ast> Visit<'ast> for Assigned {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let place = match e {
                Expr::Assign(a) => Some(&*a.left),
                Expr::Binary(b) if is_assign(&b.op) => Some(&*b.left),
                _ => None,
            };
            if let Some(name) = place.and_then(root) {
                self.0.insert(name.to_string());
            }
            visit::visit_expr(self, e);
        }
    }
    let mut a = Assigned(HashSet::new());
    a.visit_block(code);
    a.0
}
