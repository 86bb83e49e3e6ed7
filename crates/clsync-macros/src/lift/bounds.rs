//! Bounds checks made once per loop instead of once per access: in a loop
//! over the work-items, `t.get(i)` and `t.set(i, v)` on the group's view of
//! a local array (`let t = wi.local(tile)`) or of a buffer parameter (`buf`,
//! which the group-level form reaches through `Group::global`), at an index
//! that only grows with the work-item's ids (`ty * TILE + k`, `l + half`,
//! `row * n + col`), become `get_unchecked` and `set_unchecked` (for a
//! buffer `get_relaxed_unchecked` and `set_relaxed_unchecked`: still relaxed
//! atomics, as nothing here rules out a race), and the loop runs so only
//! when the index of the work-item with the largest ids is in bounds; else
//! the loop as written runs, with its checks. A check per access is a
//! branch out of the loop, which no compiler vectorizes across; the
//! unchecked loop over a group's row of work-items does. The unchecked loop
//! makes its views again with `Group::in_mode`, so that the compiler knows
//! them unchecked and drops their accesses' tests of the launch's mode (a
//! loop of more than a few accesses keeps them otherwise, and stays
//! scalar).
//!
//! The index may use `+`, `*` and `/` by a uniform value, of ids
//! (`wi.get_local_id(d)`, `wi.get_local_linear_id()`, `wi.get_global_id(d)`,
//! variables that hold them) and of values uniform by their syntax that
//! cannot panic (names, literals, casts, fields, `len()`, the group's sizes
//! and ids: the test evaluates them before the loop); nothing that can
//! shrink as an id grows (no `-`, `%` or per-work-item variable), so no
//! smaller id gives a larger index. A global id's largest value is the
//! group's first work-item's plus the largest local id. The largest index
//! is computed with checked arithmetic: an overflow, like a division by
//! zero, keeps the loop as written. Checked launches always run the loop as
//! written, every access reported as its work-item's.

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::visit_mut::{self, VisitMut};
use syn::{BinOp, Expr, Ident};

use super::first_items::Id;
use super::Lifter;
use crate::scan::{is_wi, mentions};
use crate::uniform::locals;

/// A loop's accesses made unchecked, and the test that lets them be.
pub(super) struct Hoisted {
    /// A `bool` expression: every rewritten access is in bounds for every
    /// work-item of the loop (it may use `?` on `Option`s).
    pub(super) test: TokenStream,
    /// The loop's code with those accesses unchecked.
    pub(super) code: TokenStream,
    /// The views those accesses are on (of local arrays and buffers), each
    /// once: the loop makes each again with `Group::in_mode`, so that their
    /// unchecked accesses lose their test of the launch's mode.
    pub(super) views: Vec<Ident>,
}

impl Lifter {
    /// `code` (a loop's body over the work-items, or over the range bound
    /// to `range` when given) with its hoistable accesses unchecked, if it
    /// has any.
    pub(super) fn hoist_bounds(
        &self,
        code: &TokenStream,
        range: Option<&Ident>,
    ) -> Option<Hoisted> {
        let mut block: syn::Block = syn::parse2(quote!({ #code })).ok()?;
        let mut rewrite = Rewrite {
            lifter: self,
            inner: self.inner_names(&block.stmts),
            range,
            tests: Vec::new(),
            views: Vec::new(),
        };
        rewrite.visit_block_mut(&mut block);
        if rewrite.tests.is_empty() {
            return None;
        }
        let (tests, views) = (rewrite.tests, rewrite.views);
        let stmts = &block.stmts;
        Some(Hoisted {
            test: quote!(#(#tests)&&*),
            code: quote!(#(#stmts)*),
            views,
        })
    }
}

impl Lifter {
    /// The names a loop's statements bind that an index may not use as the
    /// group's: all of them, except an id the loop's own top-level `let`
    /// binds (`let l = wi.get_local_id(0);`), when that is the name's only
    /// binding in the loop and nothing before it names it.
    fn inner_names(&self, stmts: &[syn::Stmt]) -> HashSet<String> {
        let all = locals(&quote!(#(#stmts)*));
        let mut inner = HashSet::new();
        for name in &all {
            let once = all.iter().filter(|n| *n == name).count() == 1;
            let own_id = once
                && self
                    .binding(name)
                    .is_some_and(|b| b.id.is_some() && b.slot.is_none())
                && stmts.iter().enumerate().any(|(i, s)| match s {
                    syn::Stmt::Local(l) => {
                        let before = &stmts[..i];
                        crate::pattern::pat_bindings(&l.pat)
                            .iter()
                            .any(|(n, _)| n == name)
                            && !mentions(quote!(#(#before)*)).contains(name)
                    }
                    _ => false,
                });
            if !own_id {
                inner.insert(name.clone());
            }
        }
        inner
    }
}

struct Rewrite<'a> {
    lifter: &'a Lifter,
    /// The names the loop's code binds anywhere: per work-item, whatever
    /// the group has of the same name.
    inner: HashSet<String>,
    range: Option<&'a Ident>,
    tests: Vec<TokenStream>,
    views: Vec<Ident>,
}

impl VisitMut for Rewrite<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        visit_mut::visit_expr_mut(self, e);
        let unchecked = match e {
            Expr::MethodCall(m) => self.unchecked(m),
            Expr::Index(i) => self.unchecked_index(i),
            _ => None,
        };
        if let Some(unchecked) = unchecked {
            *e = unchecked;
        }
    }
    // A closure's accesses stay checked: its parameters and where it runs
    // are its own.
    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

impl Rewrite<'_> {
    /// `m` as an unchecked access, with its test recorded, if it is a
    /// view's `get` or `set` at an index that grows with the ids.
    fn unchecked(&mut self, m: &syn::ExprMethodCall) -> Option<Expr> {
        let method = m.method.to_string();
        let setter = match (method.as_str(), m.args.len()) {
            ("get" | "get_race_free", 1) => false,
            ("set" | "set_race_free", 2) => true,
            _ => return None,
        };
        let Expr::Path(p) = &*m.receiver else {
            return None;
        };
        let view = p.path.get_ident()?;
        let name = view.to_string();
        if p.qself.is_some() || self.inner.contains(&name) {
            return None;
        }
        // A local array's view, or a buffer parameter no `let` hides (whose
        // name is the group's view of the buffer).
        let (get, set) = match self.lifter.binding(&name) {
            Some(b) if b.view && b.uniform => (quote!(get_unchecked), quote!(set_unchecked)),
            None if self.lifter.buffers.contains(&name) => {
                // Still relaxed atomics: nothing here rules out a race with
                // another work-item or a host thread.
                (quote!(get_relaxed_unchecked), quote!(set_relaxed_unchecked))
            }
            _ => return None,
        };
        let index = &m.args[0];
        let largest = self.largest(index)?;
        self.tests.push(quote!((#largest) < #view.len()));
        if !self.views.contains(view) {
            self.views.push(view.clone());
        }
        // SAFETY (of the generated block): the loop runs this only when the
        // test above holds, so the index, at most the largest work-item's,
        // is below the view's length.
        Some(if setter {
            let value = &m.args[1];
            syn::parse_quote!(unsafe { #view.#set(#index, #value) })
        } else {
            syn::parse_quote!(unsafe { #view.#get(#index) })
        })
    }

    /// `i` (`a[index]`) as an unchecked read, with its test recorded, if
    /// `a` is a `&[T]` parameter no `let` hides and the index grows with
    /// the ids. A shared slice cannot be written while the kernel borrows
    /// it, so `a[index]` is only ever a read.
    fn unchecked_index(&mut self, i: &syn::ExprIndex) -> Option<Expr> {
        let Expr::Path(p) = &*i.expr else {
            return None;
        };
        let slice = p.path.get_ident()?;
        let name = slice.to_string();
        if p.qself.is_some()
            || self.inner.contains(&name)
            || self.lifter.binding(&name).is_some()
            || !self.lifter.slices.contains(&name)
        {
            return None;
        }
        let index = &i.index;
        let largest = self.largest(index)?;
        self.tests.push(quote!((#largest) < #slice.len()));
        // SAFETY (of the generated block): as for a view's access above.
        Some(syn::parse_quote!((*unsafe { #slice.get_unchecked(#index) })))
    }

    /// The largest value `e` takes in the loop, as a `usize` expression
    /// (using `?`), if it only grows with the ids.
    fn largest(&self, e: &Expr) -> Option<TokenStream> {
        match e {
            Expr::Paren(p) => self.largest(&p.expr),
            Expr::Group(g) => self.largest(&g.expr),
            Expr::Binary(b) => {
                let op = match b.op {
                    BinOp::Add(_) => quote!(checked_add),
                    BinOp::Mul(_) => quote!(checked_mul),
                    // Dividing by a value that grows would shrink.
                    BinOp::Div(_) if self.uniform(&b.right) => quote!(checked_div),
                    _ => return self.leaf(e),
                };
                let (l, r) = (self.largest(&b.left)?, self.largest(&b.right)?);
                Some(quote!((#l).#op(#r)?))
            }
            _ => match self.id(e) {
                Some(id) => self.largest_id(id),
                None => self.leaf(e),
            },
        }
    }

    /// A value uniform by its syntax that cannot panic, as itself: the test
    /// evaluates it before the loop, where a panic (a remainder by zero, an
    /// overflow in a debug build) would not be any work-item's.
    fn leaf(&self, e: &Expr) -> Option<TokenStream> {
        (cannot_panic(e, &self.lifter.wi) && self.uniform(e)).then(|| quote!(((#e) as usize)))
    }

    /// Whether `e` is uniform by its syntax and names nothing the loop's
    /// code binds.
    fn uniform(&self, e: &Expr) -> bool {
        mentions(e).is_disjoint(&self.inner) && self.lifter.uniform_expr(e)
    }

    /// The id `e` is: a call on the work-item, or a variable that holds
    /// one.
    fn id(&self, e: &Expr) -> Option<Id> {
        let id = match e {
            Expr::MethodCall(m) if is_wi(&m.receiver, &self.lifter.wi) => Id::call(m)?,
            Expr::Path(p) if p.qself.is_none() => {
                let name = p.path.get_ident()?.to_string();
                if self.inner.contains(&name) {
                    return None;
                }
                let b = self.lifter.binding(&name)?;
                if b.slot.is_some() {
                    return None;
                }
                b.id?
            }
            _ => return None,
        };
        Some(id)
    }

    /// The largest value of an id in the loop. A local id's: the group's
    /// size less one, or in a range over the first work-items of a 1-D
    /// group, the range's end (clamped to the group) less one. A global
    /// id's: the group's first work-item's, plus the largest local id's.
    fn largest_id(&self, id: Id) -> Option<TokenStream> {
        let g = &self.lifter.g;
        let size = |d: usize| {
            let d = d as u32;
            quote!(#g.get_local_size(#d))
        };
        let (s0, s1, s2) = (size(0), size(1), size(2));
        let (group, dim) = match id {
            Id::Linear => (quote!(#s0 * #s1 * #s2), None),
            Id::Local(d) | Id::Global(d) => (size(d), Some(d)),
        };
        let count = match (self.range, dim) {
            (Some(r), None) => quote!(#r.end.min(#group)),
            (Some(r), Some(0)) => {
                quote!(if #g.get_work_dim() == 1 { #r.end.min(#group) } else { #group })
            }
            _ => group,
        };
        let local = quote!((#count).checked_sub(1)?);
        Some(match id {
            Id::Global(d) => quote!(#g.ids(0).global_id[#d].checked_add(#local)?),
            _ => local,
        })
    }
}

/// Whether evaluating `e` cannot panic: literals, names, casts, fields,
/// `len()`, and the work-item's functions (at the group's level, the
/// group's: its sizes and ids), of such values.
fn cannot_panic(e: &Expr, wi: &Ident) -> bool {
    match e {
        Expr::Lit(_) | Expr::Path(_) => true,
        Expr::Paren(p) => cannot_panic(&p.expr, wi),
        Expr::Group(g) => cannot_panic(&g.expr, wi),
        Expr::Cast(c) => cannot_panic(&c.expr, wi),
        Expr::Field(f) => cannot_panic(&f.base, wi),
        Expr::MethodCall(m) if is_wi(&m.receiver, wi) => m.args.iter().all(|a| cannot_panic(a, wi)),
        Expr::MethodCall(m) => {
            m.method == "len" && m.args.is_empty() && cannot_panic(&m.receiver, wi)
        }
        _ => false,
    }
}

/// The name a ranged loop's range is bound to before its two forms.
pub(super) fn range_name() -> Ident {
    Ident::new("__clsync_range", Span::mixed_site())
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    /// The lifted form of a kernel body over `wi` with a buffer parameter
    /// `buf` and a slice parameter `src`, as text, and how many of its
    /// accesses were made unchecked.
    fn unchecked(body: syn::Block) -> (usize, String) {
        let params = crate::lift::Params {
            buffers: ["buf".to_string()].into(),
            slices: ["src".to_string()].into(),
        };
        let out = crate::lift::lifted_text(&parse_quote!(wi), &body, params);
        (out.matches("_unchecked").count(), out)
    }

    #[test]
    fn indices_that_grow_with_the_ids_are_checked_once() {
        let (n, out) = unchecked(parse_quote!({
            let t = wi.local(tile);
            let (l, tx) = (wi.get_local_linear_id(), wi.get_local_id(0));
            t.set(l, 1);
            wi.barrier(LOCAL);
            out.set(l, t.get(l / 2 + tx * 16 + n) + t.get(0));
        }));
        assert_eq!(n, 3, "{out}");
        // The loop as written stays, for when the test fails.
        assert_eq!(
            out.matches("t . get (l / 2 + tx * 16 + n)").count(),
            1,
            "{out}"
        );
    }

    #[test]
    fn indices_that_may_shrink_or_are_per_work_item_stay_checked() {
        let (n, out) = unchecked(parse_quote!({
            let t = wi.local(tile);
            let l = wi.get_local_id(0);
            let q = l * 3;
            t.set(l, 1);
            wi.barrier(LOCAL);
            // A difference, a remainder, a per-work-item variable, a global
            // id less one, a divisor that grows, a remainder or a
            // difference of uniform values (which could panic in the test,
            // before the loop), a name the loop binds (hiding the parameter
            // `p`), and an access in a closure.
            let a = t.get(l - 1) + t.get((l + 1) % 8) + t.get(q) + t.get(wi.get_global_id(0) - 1);
            let b = t.get(n / (l + 1)) + t.get(l + n % m) + t.get(l + (n - m));
            let c = {
                let p = l * 7;
                t.get(p)
            };
            let f = |i: usize| t.get(i + p);
            out.set(l, a + b + c + f(l));
        }));
        // Only the first loop's `t.set(l, 1)`.
        assert_eq!(n, 1, "{out}");
        assert_eq!(out.matches("get_unchecked").count(), 0, "{out}");
    }

    /// A buffer parameter's view (`buf`, the one the test lifts with) is
    /// rewritten too, to its relaxed access without a bounds check; a global
    /// id's largest value is the group's first work-item's plus the largest
    /// local id.
    #[test]
    fn buffer_views_and_global_ids_are_checked_once() {
        let (n, out) = unchecked(parse_quote!({
            let t = wi.local(tile);
            let (g, tx) = (wi.get_global_id(1), wi.get_local_id(0));
            t.set(tx, buf.get(g * 16 + tx));
            wi.barrier(LOCAL);
            buf.set(wi.get_global_id(0), t.get(tx));
        }));
        assert_eq!(n, 4, "{out}");
        assert_eq!(out.matches("get_relaxed_unchecked").count(), 1, "{out}");
        assert_eq!(out.matches("set_relaxed_unchecked").count(), 1, "{out}");
        assert!(out.contains("ids (0) . global_id [1usize]"), "{out}");
        // The views are made again in the unchecked loops, which then know
        // their mode.
        assert_eq!(out.matches(". in_mode (buf)").count(), 2, "{out}");
        assert_eq!(out.matches(". in_mode (t)").count(), 2, "{out}");
    }

    /// A slice parameter's `src[i]` (`src`, the one the test lifts with) is
    /// read unchecked where the largest index is in bounds; an index that
    /// may shrink, a slice a `let` hides and a range stay as written.
    #[test]
    fn slice_parameters_are_checked_once() {
        let (n, out) = unchecked(parse_quote!({
            let t = wi.local(tile);
            let (g, tx) = (wi.get_global_id(0), wi.get_local_id(0));
            t.set(tx, src[g * 2 + 1] + src[g - 1]);
            wi.barrier(LOCAL);
            let other = {
                let src = t;
                src.get(0)
            };
            out.set(g, t.get(tx) + src[1..3][0] + other);
        }));
        assert_eq!(
            out.matches("src . get_unchecked (g * 2 + 1)").count(),
            1,
            "{out}"
        );
        assert!(out.contains("< src . len ()"), "{out}");
        // `src[g - 1]`, the hidden `src` and the range stay.
        assert!(out.contains("src [g - 1]"), "{out}");
        assert!(out.contains("src [1 .. 3]"), "{out}");
        // `t.set`, `t.get` and `src[g * 2 + 1]`.
        assert_eq!(n, 3, "{out}");
    }

    #[test]
    fn a_buffer_a_let_hides_stays_checked() {
        let (n, out) = unchecked(parse_quote!({
            let l = wi.get_local_id(0);
            let buf = other.view();
            wi.barrier(LOCAL);
            out.set(l, buf.get(l));
        }));
        assert_eq!(n, 0, "{out}");
    }

    #[test]
    fn only_views_of_local_arrays_are_rewritten() {
        let (n, out) = unchecked(parse_quote!({
            let l = wi.get_local_id(0);
            let v = other.view();
            wi.barrier(LOCAL);
            out.set(l, v.get(l) + data.get(l));
        }));
        assert_eq!(n, 0, "{out}");
    }
}
