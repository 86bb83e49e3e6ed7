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
//!
//! A loop over a range whose body is a few assignments and calls is also
//! unrolled and jammed: [`JAM`] iterations of each work-item run in one
//! loop over the work-items, so that a work-item's carried value is read
//! from its slot and written back once per JAM iterations, and the loop
//! over a row of work-items (its set-up, its run-time overlap tests) runs
//! a quarter as often. That too keeps each work-item's statements in order.
//!
//! Such a loop runs faster still in register blocks (`blocked.rs`), in
//! unchecked launches whose rows hold one: the whole loop for sixteen (or
//! eight) work-items of a row at a time, their carried values in registers.

use std::collections::HashSet;

use proc_macro2::Span;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, ExprForLoop, Ident, Pat, Stmt};

use super::{group::group_bindings, union, Binding, Lifted, Lifter};
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
        // Where it may, JAM iterations at a time, while the iterator has
        // as many left, as one loop over the work-items; then the rest one
        // at a time.
        let ks: Vec<Ident> = (0..JAM)
            .map(|j| Ident::new(&format!("__clsync_k{j}"), Span::mixed_site()))
            .collect();
        let range = Ident::new("__clsync_range", Span::mixed_site());
        let fallback = match self.jammed(f, &ks) {
            None => quote! { for #pat in #range { #body } },
            Some(jammed) => {
                self.scopes.push(ks.iter().map(uniform_name).collect());
                let chunk = self.chunk(&jammed, &live, None);
                self.scopes.pop();
                let chunk = chunk?;
                let rest = Ident::new("__clsync_iter", Span::mixed_site());
                let ahead = Ident::new("__clsync_ahead", Span::mixed_site());
                let nexts = ks
                    .iter()
                    .map(|_| quote!(::core::iter::Iterator::next(&mut #ahead)));
                quote! {
                    let mut #rest = #range;
                    loop {
                        let mut #ahead = ::core::clone::Clone::clone(&#rest);
                        #[allow(unused_variables)]
                        let (#(::core::option::Option::Some(#ks)),*) = (#(#nexts),*) else {
                            break;
                        };
                        #rest = #ahead;
                        #chunk
                    }
                    for #pat in #rest { #body }
                }
            }
        };
        // In register blocks where it may (see `blocked.rs`); else JAM
        // iterations at a time where it may, else one. The range is made
        // once, for both.
        let range_ref = Ident::new("__clsync_range_ref", Span::mixed_site());
        Ok(match self.blocked(f, &range_ref, &live) {
            Some((when, blocks)) => quote_spanned! {f.expr.span()=> {
                let #range = #iter;
                let #range_ref = &#range;
                if #when { #blocks } else { #fallback }
            }},
            None => quote_spanned! {f.expr.span()=> {
                let #range = #iter;
                #fallback
            }},
        })
    }

    /// `f`'s body (`f` interchangeable) once per name of `ks`, each copy
    /// with the loop's variable renamed to that name, if its iterations may
    /// also run [`JAM`] at a time in one loop over the work-items (unroll
    /// and jam): its iterator a range (`a..b`, `a..=b`: `Clone`, so that
    /// the lifted loop can look ahead for JAM more), its pattern `_` or a
    /// plain name that nothing in the body binds again, and its body a few
    /// statements that are all work-items' code, so that the copies make
    /// one loop: assignments and calls, with no closure or macro (whose
    /// uses of the name the renaming could not see), assigning only
    /// per-work-item variables.
    fn jammed(&self, f: &ExprForLoop, ks: &[Ident]) -> Option<Vec<Stmt>> {
        let Expr::Range(r) = &*f.expr else {
            return None;
        };
        let var = match &*f.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.mutability.is_none() && p.subpat.is_none() => {
                Some(&p.ident)
            }
            Pat::Wild(_) => None,
            _ => return None,
        };
        let simple = f.body.stmts.iter().all(|s| {
            matches!(
                s,
                Stmt::Expr(
                    Expr::Assign(_) | Expr::Binary(_) | Expr::MethodCall(_) | Expr::Call(_),
                    _
                )
            )
        });
        let small = token_count(quote!(#f)) <= MAX_JAMMED_TOKENS;
        let rebound = var.is_some_and(|v| locals(&f.body).contains(&v.to_string()));
        let assigns_group = assigned(&f.body).iter().any(|n| !self.per_item(n));
        if r.start.is_none()
            || r.end.is_none()
            || !simple
            || !small
            || rebound
            || assigns_group
            || has_closure_or_macro(&f.body)
        {
            return None;
        }
        Some(
            ks.iter()
                .flat_map(|k| match var {
                    Some(v) => renamed(&f.body.stmts, v, k),
                    None => f.body.stmts.clone(),
                })
                .collect(),
        )
    }
}

/// Iterations of an interchanged loop run together, in one loop over the
/// work-items, where the loop allows it (see `Lifter::jammed`).
///
/// Each work-item's carried value is then read from its slot and written
/// back once per JAM iterations instead of once per iteration, and the
/// loop over a row of work-items, with its set-up and its run-time overlap
/// tests, runs a quarter as often. The iterations stay in order for each
/// work-item; only how the work-items' iterations interleave changes, which
/// between two barriers is theirs to choose (as for the interchange
/// itself). `#[kernel]` SGEMM, whose `k` loop this is, went from 8.0–8.5
/// to 10.4–11.6 GFLOP/s with it (2-core VM, one thread, three
/// alternations): the copies' unchecked accesses need `Group::in_mode` to
/// fold their mode tests away (`bounds.rs`), or the loop stays scalar.
const JAM: usize = 4;

/// A body larger than this (in tokens, the loop's own included) is not
/// jammed: JAM copies of it, each in a checked and an unchecked form, is
/// code enough.
const MAX_JAMMED_TOKENS: usize = 300;

/// How many tokens `code` has, those inside its groups (`{…}`, `(…)`,
/// `[…]`) included.
pub(super) fn token_count(code: proc_macro2::TokenStream) -> usize {
    code.into_iter()
        .map(|t| match t {
            proc_macro2::TokenTree::Group(g) => 1 + token_count(g.stream()),
            _ => 1,
        })
        .sum()
}

/// A group-held, uniform name (a jammed iteration's value).
fn uniform_name(k: &Ident) -> Binding {
    Binding {
        name: k.to_string(),
        slot: None,
        uniform: true,
        mutable: false,
        id: None,
        view: false,
    }
}

/// `stmts` with every use of the variable `var` (a path of that one name,
/// also in a struct literal's shorthand `S { var }`) replaced by `k`. The
/// caller has made sure nothing in them binds `var` again and no closure or
/// macro hides a use of it.
fn renamed(stmts: &[Stmt], var: &Ident, k: &Ident) -> Vec<Stmt> {
    struct Rename<'a>(&'a Ident, &'a Ident);
    impl VisitMut for Rename<'_> {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            if let Expr::Path(p) = e {
                if p.qself.is_none() && p.path.is_ident(self.0) {
                    let k = self.1;
                    *e = syn::parse_quote!(#k);
                    return;
                }
            }
            visit_mut::visit_expr_mut(self, e);
        }
        fn visit_field_value_mut(&mut self, f: &mut syn::FieldValue) {
            // `S { k }` names the variable too, but prints only its member:
            // written out, `S { k: __clsync_k0 }` prints the renamed value.
            if matches!(&f.member, syn::Member::Named(m) if m == self.0) {
                f.colon_token.get_or_insert_with(Default::default);
            }
            visit_mut::visit_field_value_mut(self, f);
        }
    }
    let mut out = stmts.to_vec();
    for s in &mut out {
        Rename(var, k).visit_stmt_mut(s);
    }
    out
}

/// Whether `body` holds a closure or a macro call anywhere.
fn has_closure_or_macro(body: &syn::Block) -> bool {
    struct Find(bool);
    impl<'ast> Visit<'ast> for Find {
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {
            self.0 = true;
        }
        fn visit_macro(&mut self, _: &'ast syn::Macro) {
            self.0 = true;
        }
    }
    let mut f = Find(false);
    f.visit_block(body);
    f.0
}

/// The variables `code` assigns: the roots of the places on the left of
/// `=` and `op=`.
pub(super) fn assigned(code: &syn::Block) -> HashSet<String> {
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

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    /// How many interchanged loops of the kernel body (over `wi`) are
    /// jammed, in its lifted form.
    fn jammed(body: syn::Block) -> usize {
        lifted(body)
            .matches("__clsync_ahead = :: core :: clone")
            .count()
    }

    /// The lifted form of the kernel body (over `wi`), as text.
    fn lifted(body: syn::Block) -> String {
        crate::lift::lifted_text(&parse_quote!(wi), &body, Default::default())
    }

    /// How many loops of the kernel body run in register blocks, in its
    /// lifted form.
    fn blocked(body: syn::Block) -> usize {
        lifted(body)
            .matches(". for_each_block :: < 16usize >")
            .count()
    }

    /// Interchanged loops over ranges run in blocks, jammed or not (a
    /// `let`, an `if`), and with more than one carried value (`h` is the
    /// work-items' own: a loop assigns it); one over another iterator
    /// does not.
    #[test]
    fn loops_over_ranges_run_in_blocks() {
        assert_eq!(
            blocked(parse_quote!({
                let (t, l) = (wi.local(tile), wi.get_local_id(0));
                let mut acc = 0u32;
                let mut h = 1u32;
                wi.barrier(LOCAL);
                for k in 0..n {
                    acc = acc.wrapping_mul(3).wrapping_add(t.get(k * 2 + l));
                }
                for k in 0..=n {
                    if l < 4 {
                        acc += k;
                    }
                }
                for k in 1..n {
                    let v = t.get(k);
                    acc ^= v;
                }
                for k in r {
                    acc += k;
                }
                for k in 0..n {
                    h += 1;
                    acc += k;
                }
                out.set(l, acc + h);
            })),
            4
        );
    }

    #[test]
    fn simple_carried_loops_over_ranges_are_jammed() {
        assert_eq!(
            jammed(parse_quote!({
                let (t, l) = (wi.local(tile), wi.get_local_id(0));
                let mut acc = 0u32;
                let mut count = 0u32;
                wi.barrier(LOCAL);
                for k in 0..n {
                    acc = acc.wrapping_mul(3).wrapping_add(t.get(k * 2 + l));
                    out.set(l, acc);
                }
                for _ in 1..=m {
                    count += 1;
                }
                out.set(l, acc + count);
            })),
            2
        );
    }

    #[test]
    fn loops_whose_copies_could_differ_or_split_are_not_jammed() {
        // In turn: a `let` in the body, a closure, a macro, a pattern that
        // binds more than a name, a name the body binds again, an iterator
        // that is not a range, and an `if` (its own loop over the first
        // work-items).
        assert_eq!(
            jammed(parse_quote!({
                let l = wi.get_local_id(0);
                let mut acc = 0u32;
                let mut h = 1u32;
                wi.barrier(LOCAL);
                for k in 0..n {
                    let v = k * 2;
                    acc += v;
                }
                for k in 0..n {
                    acc += (|x: u32| x + 1)(k);
                }
                for k in 0..n {
                    acc += m!(k);
                }
                for (k, j) in (0..n).zip(0..n) {
                    acc += k + j;
                }
                for k in 0..n {
                    acc += match l {
                        k => k,
                    };
                }
                for k in r {
                    acc += k;
                }
                for k in 0..n {
                    if l < 4 {
                        acc += k;
                    }
                }
                out.set(l, acc + h);
            })),
            0
        );
    }

    /// Nor is a body of more than MAX_JAMMED_TOKENS tokens, counted inside
    /// its groups: the same loop is jammed with a short body.
    #[test]
    fn a_long_body_is_not_jammed() {
        let body = |terms: usize| -> syn::Block {
            let sum = vec!["t.get(k)"; terms].join(" + ");
            syn::parse_str(&format!(
                "{{ let t = wi.local(tile); let l = wi.get_local_id(0); let mut acc = 0u32; \
                 wi.barrier(LOCAL); for k in 0..n {{ acc += {sum}; }} out.set(l, acc); }}"
            ))
            .unwrap()
        };
        assert_eq!(jammed(body(4)), 1);
        assert_eq!(jammed(body(60)), 0);
    }
}
