//! The lifting itself: a kernel body in, the body of its group-level form
//! out, or the reason it cannot be lifted.

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Block, Expr, Ident, Stmt};

use crate::pattern::{immutable_names, pat_bindings};
use crate::scan::{
    first_barrier, first_sub_group_barrier, is_barrier, is_wi, loop_body_problem, mentions,
};
use crate::uniform;

mod first_items;
mod held;
mod scope;

use first_items::Id;

/// Why a kernel stays on the general engine, and where.
pub(crate) struct Fail {
    pub(crate) span: Span,
    pub(crate) reason: String,
}

impl Fail {
    pub(crate) fn new(span: Span, reason: &str) -> Self {
        Fail {
            span,
            reason: reason.to_string(),
        }
    }
}

type Lifted = Result<TokenStream, Fail>;

/// The group-level body of a kernel whose work-item parameter is `wi`.
pub(crate) fn lift(wi: &Ident, body: &Block) -> Lifted {
    let mut l = Lifter {
        wi: wi.clone(),
        g: Ident::new("__clsync_g", Span::mixed_site()),
        it: Ident::new("__clsync_it", Span::mixed_site()),
        l: Ident::new("__clsync_l", Span::mixed_site()),
        slots: 0,
        scopes: Vec::new(),
        locals: uniform::locals(body).into_iter().collect(),
    };
    let items: Vec<&Stmt> = body
        .stmts
        .iter()
        .filter(|s| matches!(s, Stmt::Item(_)))
        .collect();
    let stmts: Vec<Stmt> = body
        .stmts
        .iter()
        .filter(|s| !matches!(s, Stmt::Item(_)))
        .cloned()
        .collect();
    let code = l.block(&stmts, &HashSet::new())?;
    let decls = (0..l.slots).map(|n| {
        let (owner, ptr) = (l.slot_owner(n), l.slot(n));
        let g = &l.g;
        quote! {
            let mut #owner = #g.slots();
            let #ptr = #owner.ptr();
        }
    });
    // At the group's level `wi` is the group, whose functions of the same
    // name give what every work-item would (the uniform `let`s use them).
    let (wi, g) = (&l.wi, &l.g);
    Ok(quote! {
        #(#items)*
        let #wi = #g;
        #(#decls)*
        #code
    })
}

/// A name in scope in the lifted code.
struct Binding {
    name: String,
    /// The slot vector of a per-work-item variable used after a barrier.
    slot: Option<usize>,
    /// Whether the group holds it, one value for all work-items (a `for`
    /// pattern, or a `let` of a uniform value); it hides outer
    /// per-work-item variables of the same name.
    uniform: bool,
    /// Whether it is `mut` (else it never needs writing back).
    mutable: bool,
    /// The work-item id it holds, if it is an immutable `let` of one.
    id: Option<Id>,
}

struct Lifter {
    wi: Ident,
    g: Ident,
    it: Ident,
    l: Ident,
    /// Slot vectors made so far.
    slots: usize,
    /// Blocks the lifting is inside, innermost last.
    scopes: Vec<Vec<Binding>>,
    /// Every name the kernel body binds.
    locals: HashSet<String>,
}

impl Lifter {
    fn slot(&self, n: usize) -> Ident {
        Ident::new(&format!("__clsync_slot_{n}"), Span::mixed_site())
    }
    fn slot_owner(&self, n: usize) -> Ident {
        Ident::new(&format!("__clsync_slots_{n}"), Span::mixed_site())
    }

    /// A block's statements: runs of barrier-free statements become loops
    /// over the work-items; the others are run by the group. `later` holds
    /// the names used after the block (and, in a loop, anywhere in it).
    fn block(&mut self, stmts: &[Stmt], later: &HashSet<String>) -> Lifted {
        self.scopes.push(Vec::new());
        let mut out = TokenStream::new();
        let mut i = 0;
        while i < stmts.len() {
            let start = i;
            while i < stmts.len() && !self.has_barrier(&stmts[i]) {
                i += 1;
            }
            if start < i {
                out.extend(self.segment(&stmts[start..i], &stmts[i..], later)?);
            }
            if i < stmts.len() {
                let live = union(later, &mentions(tokens(&stmts[i + 1..])));
                out.extend(self.group_stmt(&stmts[i], &live)?);
                i += 1;
            }
        }
        self.scopes.pop();
        Ok(out)
    }

    fn has_barrier(&self, s: &Stmt) -> bool {
        first_barrier(&self.wi, s).is_some()
    }

    /// Whether `s` leaves the same way for every work-item: `break;`,
    /// `continue;` or `return;` (no label, no value), alone or as the whole
    /// body of an `if` with no `else` whose condition is uniform (see
    /// `uniform::expr`; a variable of the kernel that is not bound yet, one
    /// of the work-items' statements gathered but not yet made into a loop,
    /// counts as per work-item). The group runs it, so that a loop that
    /// holds a barrier may be left by it (`if half == 0 { break; }`) and a
    /// group may end early (`if wi.get_group_id(0) >= n { return; }`). An
    /// exit whose condition is per work-item stays in the work-items' code,
    /// which keeps the kernel on a general engine: the work-items that stay
    /// wait at a barrier the others never reach unless they too leave
    /// before one, which only a run can tell.
    fn is_uniform_exit(&self, s: &Stmt) -> bool {
        match s {
            Stmt::Expr(Expr::If(i), _) => {
                i.else_branch.is_none()
                    && matches!(i.then_branch.stmts.as_slice(), [only] if is_exit(only))
                    && uniform::expr(&i.cond, &self.wi, &|n| match self.lookup_uniform(n) {
                        Some(u) => !u,
                        None => self.locals.contains(n),
                    })
            }
            s => is_exit(s),
        }
    }

    /// Statements with no barrier, as one loop over the work-items.
    ///
    /// A `let mut` of a uniform value that only the group's own statements
    /// change (`let mut half = 128; … half /= 2;`) is held by the group, and
    /// its assignments are run by the group between two loops (splitting
    /// the statements there is allowed: without a barrier, the work-items'
    /// statements may run in any interleaving). `after` are the block's
    /// statements after these; `later` the names used after the block.
    fn segment(&mut self, stmts: &[Stmt], after: &[Stmt], later: &HashSet<String>) -> Lifted {
        let mut out = TokenStream::new();
        // The group's statements before the loop being gathered, and its
        // work-items' statements.
        let mut pre = TokenStream::new();
        let mut body: Vec<Stmt> = Vec::new();
        for k in 0..stmts.len() {
            if self.is_uniform_exit(&stmts[k]) {
                // The group leaves here, after the loop gathered so far has
                // written back every variable used later.
                let live = union(later, &mentions(quote!(#(#stmts[k..])* #(#after)*)));
                self.flush(&mut out, &mut pre, &mut body, &live)?;
                out.extend(tokens(&stmts[k..=k]));
                continue;
            }
            let held = self.group_held(&stmts[k], &stmts[k + 1..], after)?;
            let (group, names, ordered) = match held {
                None => match self.first_items(&stmts[k], &body) {
                    None => {
                        body.push(stmts[k].clone());
                        continue;
                    }
                    // `if l < n { … }` as a loop over the first n work-items,
                    // `if l == c { … }` over work-item c alone (a range of
                    // its own: splitting is allowed, as above).
                    Some((range, always, block)) => {
                        let live = union(later, &mentions(quote!(#(#stmts[k..])* #(#after)*)));
                        self.flush(&mut out, &mut pre, &mut body, &live)?;
                        let live = union(later, &mentions(quote!(#(#stmts[k + 1..])* #(#after)*)));
                        let ranged = self.chunk(&[block], &live, Some(range))?;
                        if always {
                            out.extend(ranged);
                        } else {
                            let tested = self.chunk(&stmts[k..=k], &live, None)?;
                            let g = &self.g;
                            out.extend(quote! {
                                if #g.get_work_dim() == 1 { #ranged } else { #tested }
                            });
                        }
                        continue;
                    }
                },
                Some(h) => h,
            };
            // A `let` the group makes can go before the loop, unless the
            // statements gathered so far name what it binds; an assignment
            // must come between the statements before and after it.
            let named = mentions(tokens(&body));
            if ordered || names.iter().any(|n| named.contains(n)) {
                let live = union(later, &mentions(quote!(#(#stmts[k..])* #(#after)*)));
                self.flush(&mut out, &mut pre, &mut body, &live)?;
            }
            pre.extend(group);
        }
        let live = union(later, &mentions(tokens(after)));
        self.flush(&mut out, &mut pre, &mut body, &live)?;
        Ok(out)
    }

    /// Ends the loop being gathered in `segment`: the group's statements
    /// before it, then the loop over the work-items (`live`: the names used
    /// after it).
    fn flush(
        &mut self,
        out: &mut TokenStream,
        pre: &mut TokenStream,
        body: &mut Vec<Stmt>,
        live: &HashSet<String>,
    ) -> Result<(), Fail> {
        out.extend(std::mem::take(pre));
        if !body.is_empty() {
            out.extend(self.chunk(&std::mem::take(body), live, None)?);
        }
        Ok(())
    }

    /// Barrier-free statements with no group-held assignment, as one loop
    /// over the work-items.
    fn chunk(
        &mut self,
        stmts: &[Stmt],
        live: &HashSet<String>,
        range: Option<TokenStream>,
    ) -> Lifted {
        let code = tokens(stmts);
        if let Some((span, why)) = loop_body_problem(&self.wi, &code) {
            return Err(Fail::new(span, &why));
        }
        let used = mentions(&code);
        let ins = self.visible(&used);
        let ids = self.visible_ids(&used);
        // The names its top-level `let`s declare, in order.
        let mut fresh = HashSet::new();
        for s in stmts {
            let Stmt::Local(local) = s else { continue };
            if local.init.is_none() {
                return Err(Fail::new(
                    local.span(),
                    "a `let` without a value between barriers (give it one)",
                ));
            }
            let ids = self.id_calls(local);
            for (name, mutable) in pat_bindings(&local.pat) {
                let id = ids.iter().find(|(n, _)| *n == name).map(|(_, id)| *id);
                if self.shadows_outer(&name) && live.contains(&name) {
                    return Err(Fail::new(
                        local.pat.span(),
                        "a `let` that hides a variable of an enclosing block that holds a barrier",
                    ));
                }
                // An id needs no slot (see `visible_ids`).
                let slot = (id.is_none() && live.contains(&name)).then(|| {
                    self.slots += 1;
                    self.slots - 1
                });
                if slot.is_some() {
                    fresh.insert(name.clone());
                }
                self.bind(name, slot, false, mutable);
                if let Some(b) = self.scopes.last_mut().and_then(|s| s.last_mut()) {
                    b.id = id;
                }
            }
        }
        // Written back: what this loop declared, and the `mut` variables it
        // names, if used later.
        let outs: Vec<(String, usize)> = self
            .visible(&used)
            .into_iter()
            .filter(|(n, _)| live.contains(n) && (fresh.contains(n) || self.is_mut(n)))
            .collect();
        let body = self.item_code(&ids, &ins, &outs, &code, quote!());
        let (g, it) = (&self.g, &self.it);
        Ok(match range {
            None => quote! { #g.for_each(move |#it| { #body }); },
            Some(r) => quote! { #g.for_each_in(#r, move |#it| { #body }); },
        })
    }

    /// Whether `e` is the same for every work-item, with no side effect
    /// (see `uniform::expr`), given the bindings in scope here.
    fn uniform_expr(&self, e: &Expr) -> bool {
        uniform::expr(e, &self.wi, &|name| {
            self.lookup_uniform(name) == Some(false)
        })
    }

    /// A work-item's code in a loop over the group: its local-id variables
    /// `ids` taken from the work-item, its other variables read from their
    /// slots, `code`, the variables written back, then `tail` (the value of
    /// a condition).
    fn item_code(
        &self,
        ids: &[(String, Id)],
        ins: &[(String, usize)],
        outs: &[(String, usize)],
        code: &TokenStream,
        tail: TokenStream,
    ) -> TokenStream {
        let (it, l, wi) = (&self.it, &self.l, &self.wi);
        let lane = if mentions(code).contains(&wi.to_string()) {
            let g = &self.g;
            quote! { let #wi = #g.lane(#it); }
        } else {
            quote!()
        };
        let ids = ids.iter().map(|(name, id)| {
            let name = Ident::new(name, Span::call_site());
            let id = id.of(it);
            quote! {
                #[allow(unused_variables)]
                let #name = #id;
            }
        });
        let reads = ins.iter().map(|(name, slot)| {
            let (name, ptr) = (Ident::new(name, Span::call_site()), self.slot(*slot));
            // SAFETY (of the generated `read`): `l` is a local linear id of
            // this group, and the variable was written by every work-item
            // when its `let` ran, in an earlier loop.
            quote! {
                #[allow(unused_mut, unused_variables)]
                let mut #name = unsafe { #ptr.read(#l) };
            }
        });
        let writes = outs.iter().map(|(name, slot)| {
            let (name, ptr) = (Ident::new(name, Span::call_site()), self.slot(*slot));
            // SAFETY (of the generated `write`): `l` is a local linear id of
            // this group; the loops only copy values in and out of slots.
            quote! { unsafe { #ptr.write(#l, #name) }; }
        });
        quote! {
            let #l = #it.local_linear_id;
            #lane
            #(#ids)*
            #(#reads)*
            #code
            #(#writes)*
            #tail
        }
    }

    /// A statement that holds a barrier, run by the group.
    fn group_stmt(&mut self, s: &Stmt, live: &HashSet<String>) -> Lifted {
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
                let bound = pat_bindings(pat)
                    .into_iter()
                    .map(|(name, mutable)| Binding {
                        name,
                        slot: None,
                        uniform: true,
                        mutable,
                        id: None,
                    })
                    .collect();
                self.scopes.push(bound);
                let body = self.block(&f.body.stmts, &live);
                self.scopes.pop();
                let body = body?;
                Ok(quote_spanned! {f.expr.span()=>
                    for #pat in #iter { #body }
                })
            }
            Expr::Loop(l) => {
                no_label(l.label.as_ref())?;
                let live = union(live, &mentions(&l.body));
                let body = self.block(&l.body.stmts, &live)?;
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
                let body = self.block(&w.body.stmts, &live)?;
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
            other => {
                let span = first_barrier(&self.wi, other).unwrap_or_else(|| other.span());
                Err(Fail::new(
                    span,
                    "a barrier inside an expression other than a statement, `for`, `while`, \
                     `if` or a block (a `match`, `loop`, closure, or an argument)",
                ))
            }
        }
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

/// Whether `s` is `break;`, `continue;` or `return;`: no label, no value.
fn is_exit(s: &Stmt) -> bool {
    match s {
        Stmt::Expr(Expr::Break(b), _) => b.label.is_none() && b.expr.is_none(),
        Stmt::Expr(Expr::Continue(c), _) => c.label.is_none(),
        Stmt::Expr(Expr::Return(r), _) => r.expr.is_none(),
        _ => false,
    }
}

fn no_label(label: Option<&syn::Label>) -> Result<(), Fail> {
    match label {
        Some(l) => Err(Fail::new(l.span(), "a labelled loop that holds a barrier")),
        None => Ok(()),
    }
}

/// Statements as tokens, a tail expression closed with `;` (a segment's
/// statements are followed by the write-backs).
fn tokens(stmts: &[Stmt]) -> TokenStream {
    let mut out = TokenStream::new();
    for s in stmts {
        match s {
            Stmt::Expr(e, None) => out.extend(quote!(#e;)),
            s => out.extend(quote!(#s)),
        }
    }
    out
}

fn union(a: &HashSet<String>, b: &HashSet<String>) -> HashSet<String> {
    a.union(b).cloned().collect()
}
