//! The lifting itself: a kernel body in, the body of its group-level form
//! out, or the reason it cannot be lifted.

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Block, Expr, Ident, Pat, Stmt};

use crate::scan::{first_barrier, is_wi, loop_body_problem, mentions, BARRIERS};

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
    Ok(quote! {
        #(#items)*
        #(#decls)*
        #code
    })
}

/// A name in scope in the lifted code: a per-work-item variable kept in a
/// slot vector, or a binding the group makes (a `for` pattern), which hides
/// outer per-work-item variables of the same name.
struct Binding {
    name: String,
    slot: Option<usize>,
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
}

impl Lifter {
    fn slot(&self, n: usize) -> Ident {
        Ident::new(&format!("__clsync_slot_{n}"), Span::mixed_site())
    }
    fn slot_owner(&self, n: usize) -> Ident {
        Ident::new(&format!("__clsync_slots_{n}"), Span::mixed_site())
    }

    /// The per-work-item variables visible here that `used` names, with
    /// their slots.
    fn visible(&self, used: &HashSet<String>) -> Vec<(String, usize)> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for b in self.scopes.iter().rev().flat_map(|s| s.iter().rev()) {
            if !seen.insert(b.name.clone()) {
                continue;
            }
            if let (Some(slot), true) = (b.slot, used.contains(&b.name)) {
                out.push((b.name.clone(), slot));
            }
        }
        out
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
                let live = union(later, &mentions(tokens(&stmts[i..])));
                out.extend(self.segment(&stmts[start..i], &live)?);
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

    /// Statements with no barrier, as one loop over the work-items.
    fn segment(&mut self, stmts: &[Stmt], live: &HashSet<String>) -> Lifted {
        let code = tokens(stmts);
        if let Some((span, why)) = loop_body_problem(&self.wi, &code) {
            return Err(Fail::new(span, &why));
        }
        let used = mentions(&code);
        let ins = self.visible(&used);
        // The names its top-level `let`s declare, in order.
        for s in stmts {
            let Stmt::Local(local) = s else { continue };
            if local.init.is_none() {
                return Err(Fail::new(
                    local.span(),
                    "a `let` without a value between barriers (give it one)",
                ));
            }
            for name in pat_names(&local.pat) {
                if self.shadows_outer(&name) && live.contains(&name) {
                    return Err(Fail::new(
                        local.pat.span(),
                        "a `let` that hides a variable of an enclosing block that holds a barrier",
                    ));
                }
                let slot = live.contains(&name).then(|| {
                    self.slots += 1;
                    self.slots - 1
                });
                self.scopes
                    .last_mut()
                    .expect("inside a block")
                    .push(Binding { name, slot });
            }
        }
        let outs: Vec<(String, usize)> = self
            .visible(&used)
            .into_iter()
            .filter(|(n, _)| live.contains(n))
            .collect();
        let body = self.item_code(&ins, &outs, &code, quote!());
        let (g, it) = (&self.g, &self.it);
        Ok(quote! { #g.for_each(move |#it| { #body }); })
    }

    /// Whether a new `name` here would hide a per-work-item variable of an
    /// enclosing block (one the lifting is inside, not this one).
    fn shadows_outer(&self, name: &str) -> bool {
        let n = self.scopes.len();
        self.scopes[..n - 1]
            .iter()
            .flat_map(|s| s.iter())
            .any(|b| b.name == name && b.slot.is_some())
    }

    /// A work-item's code in a loop over the group: its variables read from
    /// their slots, `code`, the variables written back, then `tail` (the
    /// value of a condition).
    fn item_code(
        &self,
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
                if is_wi(&m.receiver, &self.wi)
                    && BARRIERS.contains(&m.method.to_string().as_str()) =>
            {
                let args = &m.args;
                if !self.visible(&mentions(args)).is_empty() {
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
                let iter = self.condition(&f.expr, &live)?;
                let pat = &f.pat;
                // The pattern's names are the group's: they hide outer
                // per-work-item variables inside the loop.
                let bound = pat_names(pat)
                    .into_iter()
                    .map(|name| Binding { name, slot: None })
                    .collect();
                self.scopes.push(bound);
                let body = self.block(&f.body.stmts, &live);
                self.scopes.pop();
                let body = body?;
                let it = &self.it;
                Ok(quote_spanned! {f.expr.span()=>
                    for #pat in #g.uniform(#at, move |#it| { #iter }) { #body }
                })
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
                let cond = self.condition(&w.cond, &live)?;
                let body = self.block(&w.body.stmts, &live)?;
                let it = &self.it;
                Ok(quote_spanned! {w.cond.span()=>
                    while #g.uniform(#at, move |#it| -> bool { #cond }) { #body }
                })
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
                let cond = self.condition(&i.cond, &union(live, &after))?;
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
                let it = &self.it;
                Ok(quote_spanned! {i.cond.span()=>
                    if #g.uniform(#at, move |#it| -> bool { #cond }) { #then } #els
                })
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

    /// A condition (or a `for` loop's iterator), evaluated per work-item:
    /// the body of the closure given to `Group::uniform`.
    fn condition(&mut self, e: &Expr, live: &HashSet<String>) -> Lifted {
        let code = quote!(#e);
        if let Some((span, why)) = loop_body_problem(&self.wi, &code) {
            return Err(Fail::new(span, &why));
        }
        let used = mentions(&code);
        let ins = self.visible(&used);
        let outs: Vec<_> = ins
            .iter()
            .filter(|(n, _)| live.contains(n))
            .cloned()
            .collect();
        let v = Ident::new("__clsync_v", Span::mixed_site());
        let code = quote! { let #v = #code; };
        Ok(self.item_code(&ins, &outs, &code, quote!(#v)))
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

/// The names a pattern binds.
fn pat_names(p: &Pat) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(p: &Pat, out: &mut Vec<String>) {
        match p {
            Pat::Ident(i) => {
                out.push(i.ident.to_string());
                if let Some((_, sub)) = &i.subpat {
                    walk(sub, out);
                }
            }
            Pat::Tuple(t) => t.elems.iter().for_each(|e| walk(e, out)),
            Pat::TupleStruct(t) => t.elems.iter().for_each(|e| walk(e, out)),
            Pat::Struct(s) => s.fields.iter().for_each(|f| walk(&f.pat, out)),
            Pat::Slice(s) => s.elems.iter().for_each(|e| walk(e, out)),
            Pat::Reference(r) => walk(&r.pat, out),
            Pat::Type(t) => walk(&t.pat, out),
            Pat::Paren(p) => walk(&p.pat, out),
            Pat::Or(o) => o.cases.iter().take(1).for_each(|c| walk(c, out)),
            _ => {}
        }
    }
    walk(p, &mut out);
    out
}
