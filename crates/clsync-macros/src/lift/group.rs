//! The statements the group runs itself rather than each work-item in a
//! loop: barriers, the `for`, `while`, `loop`, `if`, `match` and blocks
//! that hold them, and the exits every work-item takes together.

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, Ident, Stmt};

use super::{union, Binding, Fail, Lifted, Lifter, LoopExit};
use crate::pattern::{immutable_names, pat_bindings};
use crate::scan::{
    exits, first_barrier, first_sub_group_barrier, is_barrier, is_wi, loop_body_problem, mentions,
};

impl Lifter {
    /// Whether `s` leaves the same way for every work-item: `break;`,
    /// `continue;` or `return;` (no label, no value), alone or as the whole
    /// body of an `if` with no `else` whose condition is uniform (see
    /// `Lifter::uniform_expr`). The group runs it, so that a loop that
    /// holds a barrier may be left by it (`if half == 0 { break; }`) and a
    /// group may end early (`if wi.get_group_id(0) >= n { return; }`). An
    /// exit whose condition is per work-item stays in the work-items' code,
    /// which keeps the kernel on a general engine: the work-items that stay
    /// wait at a barrier the others never reach unless they too leave
    /// before one, which only a run can tell.
    pub(super) fn is_uniform_exit(&self, s: &Stmt) -> bool {
        match exit_if(s) {
            Some((cond, _)) => self.uniform_expr(cond),
            None => exit(s).is_some(),
        }
    }

    /// The condition of `if cond { break; }` (no `else`) when `cond` is not
    /// uniform by its syntax but the innermost group loop lets the group
    /// check it at run time: that `break` is the loop's only exit (no other
    /// `break`, `continue` or `return` in it), and a work-group barrier
    /// stands at the top of its body. Then work-items that disagree are a
    /// divergence: those that stay reach that barrier, in this iteration or
    /// the next, and those that leave never reach it again
    /// (`003_2caebc1f01141481.txt`). A loop that decides through local
    /// memory (`if done.get(0) != 0 { break; }`) lifts so.
    pub(super) fn checked_break<'s>(&self, s: &'s Stmt) -> Option<&'s Expr> {
        let allowed = self.loops.last().is_some_and(|l| l.checked_at.is_some());
        exit_if(s)
            .filter(|&(_, e)| allowed && e == Exit::Break)
            .map(|(cond, _)| cond)
    }

    /// `if g.uniform(at, |it| cond) { break; }`: see `checked_break`.
    pub(super) fn checked_break_code(&mut self, cond: &Expr, live: &HashSet<String>) -> Lifted {
        let at = self
            .loops
            .last()
            .and_then(|l| l.checked_at.clone())
            .expect("checked_break found the loop's barrier");
        let cond = self.condition(cond, &quote!(), live)?;
        let (g, it) = (&self.g, &self.it);
        Ok(quote! {
            if #g.uniform(#at, move |#it| -> bool { #cond }) { break; }
        })
    }

    /// The body of a group loop, lifted with what it allows of a checked
    /// `break` (see `checked_break`) in scope.
    fn loop_body(&mut self, body: &syn::Block, live: &HashSet<String>) -> Lifted {
        let checked_at = (exits(&self.wi, body) == 1)
            .then(|| {
                body.stmts.iter().find_map(|s| match s {
                    Stmt::Expr(Expr::MethodCall(m), _)
                        if is_wi(&m.receiver, &self.wi)
                            && is_barrier(&m.method.to_string())
                            && !m.method.to_string().starts_with("sub_group") =>
                    {
                        let span = m.span();
                        Some(quote_spanned! {span=> ::clsync::engine::lifted::here() })
                    }
                    _ => None,
                })
            })
            .flatten();
        self.loops.push(LoopExit { checked_at });
        let lifted = self.block(&body.stmts, live);
        self.loops.pop();
        lifted
    }

    /// A statement that holds a barrier, run by the group.
    pub(super) fn group_stmt(&mut self, s: &Stmt, live: &HashSet<String>) -> Lifted {
        match s {
            Stmt::Expr(e, _) => self.group_expr(e, live),
            _ => Err(Fail::new(
                s.span(),
                "a barrier inside a `let` or a macro statement",
            )),
        }
    }

    fn group_expr(&mut self, e: &Expr, live: &HashSet<String>) -> Lifted {
        let g = self.g.clone();
        match e {
            Expr::MethodCall(m)
                if is_wi(&m.receiver, &self.wi) && is_barrier(&m.method.to_string()) =>
            {
                let args = &m.args;
                let used = mentions(args);
                if !self.visible(&used).is_empty() || !self.visible_ids(&used).is_empty() {
                    return Err(Fail::new(
                        args.span(),
                        "a barrier's arguments use a per-work-item variable",
                    ));
                }
                if let Some(span) = first_barrier(&self.wi, args) {
                    return Err(Fail::new(span, "a barrier inside a barrier's arguments"));
                }
                let method = &m.method;
                Ok(quote_spanned! {m.span()=> #g.#method(#args); })
            }
            Expr::ForLoop(f) => {
                no_label(f.label.as_ref())?;
                let live = union(live, &mentions(&f.body));
                let at = self.barrier_site(&f.body);
                let pat = &f.pat;
                if !immutable_names(pat) {
                    return Err(Fail::new(
                        pat.span(),
                        "a loop that holds a barrier binds `mut` names",
                    ));
                }
                let iter = if self.uniform_expr(&f.expr) {
                    let e = &f.expr;
                    quote!(#e)
                } else {
                    let iter = self.condition(&f.expr, &f.body, &live)?;
                    let it = &self.it;
                    quote!(#g.uniform(#at, move |#it| { #iter }))
                };
                // The pattern's names are the group's: they hide outer
                // per-work-item variables inside the loop.
                self.scopes.push(group_bindings(pat));
                let body = self.loop_body(&f.body, &live);
                self.scopes.pop();
                let body = body?;
                Ok(quote_spanned! {f.expr.span()=>
                    for #pat in #iter { #body }
                })
            }
            Expr::Loop(l) => {
                no_label(l.label.as_ref())?;
                let live = union(live, &mentions(&l.body));
                let body = self.loop_body(&l.body, &live)?;
                Ok(quote_spanned! {l.loop_token.span=> loop { #body } })
            }
            Expr::While(w) => {
                no_label(w.label.as_ref())?;
                if matches!(&*w.cond, Expr::Let(_)) {
                    return Err(Fail::new(
                        w.cond.span(),
                        "a `while let` that holds a barrier",
                    ));
                }
                let live = union(&union(live, &mentions(&w.body)), &mentions(&w.cond));
                let at = self.barrier_site(&w.body);
                let cond = self.group_condition(&w.cond, &w.body, at, &live)?;
                let body = self.loop_body(&w.body, &live)?;
                Ok(quote_spanned! {w.cond.span()=> while #cond { #body } })
            }
            Expr::If(i) => {
                if matches!(&*i.cond, Expr::Let(_)) {
                    return Err(Fail::new(i.cond.span(), "an `if let` that holds a barrier"));
                }
                let mut after = mentions(&i.then_branch);
                if let Some((_, els)) = &i.else_branch {
                    after.extend(mentions(els));
                }
                let at = match first_barrier(&self.wi, &i.then_branch) {
                    Some(_) => self.barrier_site(&i.then_branch),
                    None => self.barrier_site(&i.else_branch.as_ref().map(|e| &e.1)),
                };
                let (then, els) = (&i.then_branch, i.else_branch.as_ref().map(|e| &e.1));
                let guarded = quote!(#then #els);
                let cond = self.group_condition(&i.cond, &guarded, at, &union(live, &after))?;
                let then = self.block(&i.then_branch.stmts, live)?;
                let els = match &i.else_branch {
                    None => quote!(),
                    Some((_, e)) => match &**e {
                        Expr::Block(b) if b.label.is_none() => {
                            let b = self.block(&b.block.stmts, live)?;
                            quote!(else { #b })
                        }
                        Expr::If(_) => {
                            let nested = self.group_expr(e, live)?;
                            quote!(else { #nested })
                        }
                        other => return Err(Fail::new(other.span(), "an unusual `else`")),
                    },
                };
                Ok(quote_spanned! {i.cond.span()=> if #cond { #then } #els })
            }
            Expr::Block(b) if b.label.is_none() => {
                let inner = self.block(&b.block.stmts, live)?;
                Ok(quote!({ #inner }))
            }
            Expr::Match(m) => self.group_match(m, live),
            other => {
                let span = first_barrier(&self.wi, other).unwrap_or_else(|| other.span());
                Err(Fail::new(
                    span,
                    "a barrier inside an expression other than a statement, `for`, `while`, \
                     `loop`, `if`, `match` or a block (a closure, an argument, a labelled block)",
                ))
            }
        }
    }

    /// A `match` that holds a barrier, run by the group: on a value uniform
    /// by its syntax only, so that every work-item takes the same arm
    /// without a test (a per-work-item value would need every arm to hold a
    /// barrier for a disagreement to be a divergence, which the general
    /// engine tells exactly). Each arm's pattern binds the group's names, as
    /// a `for`'s does, and its guard must be uniform too.
    fn group_match(&mut self, m: &syn::ExprMatch, live: &HashSet<String>) -> Lifted {
        if !self.uniform_expr(&m.expr) {
            return Err(Fail::new(
                m.expr.span(),
                "a `match` that holds a barrier, on a value that is not uniform by its syntax",
            ));
        }
        let mut arms = TokenStream::new();
        for arm in &m.arms {
            let pat = &arm.pat;
            if pat_bindings(pat).iter().any(|(_, mutable)| *mutable) {
                return Err(Fail::new(
                    pat.span(),
                    "a `match` arm that holds a barrier binds `mut` names",
                ));
            }
            self.scopes.push(group_bindings(pat));
            let arm_code = self.group_arm(arm, live);
            self.scopes.pop();
            let (guard, body) = arm_code?;
            arms.extend(quote!(#pat #guard => { #body }));
        }
        let scrutinee = &m.expr;
        Ok(quote_spanned! {m.match_token.span=> match #scrutinee { #arms } })
    }

    /// One arm of a group-level `match`, its pattern's names in scope: its
    /// guard and its body as a block of the group.
    fn group_arm(
        &mut self,
        arm: &syn::Arm,
        live: &HashSet<String>,
    ) -> Result<(TokenStream, TokenStream), Fail> {
        let guard = match &arm.guard {
            None => quote!(),
            Some((_, g)) if self.uniform_expr(g) => quote!(if #g),
            Some((_, g)) => {
                return Err(Fail::new(
                    g.span(),
                    "a guard of a `match` arm that holds a barrier, not uniform by its syntax",
                ))
            }
        };
        let stmts = arm_statements(&arm.body);
        Ok((guard, self.block(&stmts, live)?))
    }

    /// Where the first barrier of `code` is, as a `&'static Location`.
    fn barrier_site<T: quote::ToTokens>(&self, code: &T) -> TokenStream {
        let span = first_barrier(&self.wi, code).unwrap_or_else(Span::call_site);
        quote_spanned! {span=> ::clsync::engine::lifted::here() }
    }

    /// A `bool` condition of the group around `guarded`: itself if
    /// uniform, else evaluated by every work-item through `Group::uniform`.
    fn group_condition<T: quote::ToTokens>(
        &mut self,
        e: &Expr,
        guarded: &T,
        at: TokenStream,
        live: &HashSet<String>,
    ) -> Lifted {
        if self.uniform_expr(e) {
            return Ok(quote!(#e));
        }
        let cond = self.condition(e, guarded, live)?;
        let (g, it) = (&self.g, &self.it);
        Ok(quote!(#g.uniform(#at, move |#it| -> bool { #cond })))
    }

    /// A condition (or a `for` loop's iterator) around `guarded`, evaluated
    /// per work-item: the body of the closure given to `Group::uniform`.
    ///
    /// Not around a sub-group barrier: `Group::uniform` holds the whole
    /// group to one value, where a sub-group barrier asks only that its
    /// sub-group agree (`002_6c32435e912a3710.txt`), so `if
    /// wi.get_sub_group_id() == 0 { wi.sub_group_barrier(LOCAL); }` is a
    /// correct kernel the group-level form would call divergent. Such a
    /// kernel stays on a general engine, which holds each sub-group to its
    /// own barrier; a condition uniform by its syntax needs no such care.
    fn condition<T: quote::ToTokens>(
        &mut self,
        e: &Expr,
        guarded: &T,
        live: &HashSet<String>,
    ) -> Lifted {
        if let Some(span) = first_sub_group_barrier(&self.wi, guarded) {
            return Err(Fail::new(
                span,
                "a sub-group barrier under a condition that is not uniform by its syntax \
                 (sub-groups may take it apart)",
            ));
        }
        let code = quote!(#e);
        if let Some((span, why)) = loop_body_problem(&self.wi, &code) {
            return Err(Fail::new(span, &why));
        }
        let used = mentions(&code);
        let ins = self.visible(&used);
        let ids = self.visible_ids(&used);
        let outs: Vec<_> = ins
            .iter()
            .filter(|(n, _)| live.contains(n))
            .cloned()
            .collect();
        let v = Ident::new("__clsync_v", Span::mixed_site());
        let code = quote! { let #v = #code; };
        Ok(self.item_code(&ids, &ins, &outs, &code, quote!(#v)))
    }
}

/// The names `pat` binds, as the group's: one value for all work-items,
/// hiding outer per-work-item variables of the same names.
pub(super) fn group_bindings(pat: &syn::Pat) -> Vec<Binding> {
    pat_bindings(pat)
        .into_iter()
        .map(|(name, mutable)| Binding {
            name,
            slot: None,
            uniform: true,
            mutable,
            id: None,
            view: false,
        })
        .collect()
}

/// A `match` arm's body as statements: a block's own, or the expression
/// as one statement.
pub(crate) fn arm_statements(body: &Expr) -> Vec<Stmt> {
    match body {
        Expr::Block(b) if b.label.is_none() && b.attrs.is_empty() => b.block.stmts.clone(),
        e => vec![Stmt::Expr(e.clone(), Some(Default::default()))],
    }
}

/// A plain exit statement: no label, no value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Exit {
    Break,
    Continue,
    Return,
}

/// Which plain exit `s` is, if it is `break;`, `continue;` or `return;`.
fn exit(s: &Stmt) -> Option<Exit> {
    match s {
        Stmt::Expr(Expr::Break(b), _) if b.label.is_none() && b.expr.is_none() => Some(Exit::Break),
        Stmt::Expr(Expr::Continue(c), _) if c.label.is_none() => Some(Exit::Continue),
        Stmt::Expr(Expr::Return(r), _) if r.expr.is_none() => Some(Exit::Return),
        _ => None,
    }
}

/// The condition and the exit of `if cond { exit }`: no `else`, not an
/// `if let`, and the exit alone in its body.
fn exit_if(s: &Stmt) -> Option<(&Expr, Exit)> {
    let Stmt::Expr(Expr::If(i), _) = s else {
        return None;
    };
    if i.else_branch.is_some() || matches!(&*i.cond, Expr::Let(_)) {
        return None;
    }
    match i.then_branch.stmts.as_slice() {
        [only] => exit(only).map(|e| (&*i.cond, e)),
        _ => None,
    }
}

fn no_label(label: Option<&syn::Label>) -> Result<(), Fail> {
    match label {
        Some(l) => Err(Fail::new(l.span(), "a labelled loop that holds a barrier")),
        None => Ok(()),
    }
}
