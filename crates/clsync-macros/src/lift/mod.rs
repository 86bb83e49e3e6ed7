//! The lifting itself: a kernel body in, the body of its group-level form
//! out, or the reason it cannot be lifted.

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;
use syn::{Block, Expr, Ident, Stmt};

use crate::pattern::{pat_bindings, split_tuple_lets};
use crate::scan::{first_barrier, loop_body_problem, mentions};
use crate::uniform;

mod blocked;
mod bounds;
mod first_items;
mod group;
mod held;
mod interchange;
mod scope;

use first_items::Id;
pub(crate) use group::arm_statements;

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

/// What the lifting knows of a kernel's parameters.
#[derive(Default)]
pub(crate) struct Params {
    /// Those the kernel reaches through the group's views of their
    /// buffers (`Group::global`).
    pub(crate) buffers: HashSet<String>,
    /// The `&[T]` ones: constant global memory (`__global const T*`), which
    /// no one writes while the kernel borrows it, and whose `a[i]` `bounds`
    /// may check once per loop.
    pub(crate) slices: HashSet<String>,
}

/// The group-level body of a kernel whose work-item parameter is `wi`.
pub(crate) fn lift(wi: &Ident, body: &Block, params: Params) -> Lifted {
    let mut l = Lifter {
        wi: wi.clone(),
        g: Ident::new("__clsync_g", Span::mixed_site()),
        it: Ident::new("__clsync_it", Span::mixed_site()),
        l: Ident::new("__clsync_l", Span::mixed_site()),
        slots: 0,
        scopes: Vec::new(),
        locals: uniform::locals(body).into_iter().collect(),
        pending: HashSet::new(),
        loops: Vec::new(),
        buffers: params.buffers,
        slices: params.slices,
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
    /// Whether it is the group's view of a local array (`let t =
    /// wi.local(tile)`), whose accesses `bounds` may check once per loop.
    view: bool,
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
    /// The names bound by the `let`s before the statement being lifted in
    /// the blocks it is inside: those not bound yet are per work-item (see
    /// `uniform_expr`).
    pending: HashSet<String>,
    /// The parameters the lifted body reaches as views of their buffers
    /// (`Group::global`), whose accesses `bounds` may check once per loop
    /// where no `let` hides them.
    buffers: HashSet<String>,
    /// The `&[T]` parameters, whose `a[i]` `bounds` may check once per
    /// loop where no `let` hides them.
    slices: HashSet<String>,
    /// The group loops the lifting is inside, innermost last: where a
    /// `break` behind a per-work-item condition may be checked at run time
    /// (see `group::checked_break`).
    loops: Vec<LoopExit>,
}

/// What a group loop allows of a `break` behind a condition that is not
/// uniform by its syntax.
struct LoopExit {
    /// The work-group barrier at the top of the loop's body that every
    /// work-item that stays reaches before it could leave, as a
    /// `&'static Location`, if the loop has one and that `break` is its
    /// only exit.
    checked_at: Option<TokenStream>,
}

impl Lifter {
    fn slot(&self, n: usize) -> Ident {
        Ident::new(&format!("__clsync_slot_{n}"), Span::mixed_site())
    }
    fn slot_owner(&self, n: usize) -> Ident {
        Ident::new(&format!("__clsync_slots_{n}"), Span::mixed_site())
    }

    /// A block's statements: runs of barrier-free statements become loops
    /// over the work-items; the others, and the `for` loops interchanged
    /// with the loop over the work-items (see `interchange`), are run by
    /// the group. `later` holds the names used after the block (and, in a
    /// loop, anywhere in it).
    fn block(&mut self, stmts: &[Stmt], later: &HashSet<String>) -> Lifted {
        let stmts = &split_tuple_lets(stmts)[..];
        self.scopes.push(Vec::new());
        let outer = self.pending.clone();
        let mut out = TokenStream::new();
        let mut i = 0;
        while i < stmts.len() {
            let start = i;
            let mut swap = None;
            while i < stmts.len() && !self.has_barrier(&stmts[i]) {
                self.pending = union(&outer, &let_names(&stmts[..i]));
                swap = self.interchangeable(&stmts[i]);
                if swap.is_some() {
                    break;
                }
                i += 1;
            }
            if start < i {
                self.pending = union(&outer, &let_names(&stmts[..start]));
                out.extend(self.segment(&stmts[start..i], &stmts[i..], later)?);
            }
            if i < stmts.len() {
                self.pending = union(&outer, &let_names(&stmts[..i]));
                let live = union(later, &mentions(tokens(&stmts[i + 1..])));
                out.extend(match swap {
                    Some(f) => self.interchange(f, &live)?,
                    None => self.group_stmt(&stmts[i], &live)?,
                });
                i += 1;
            }
        }
        self.pending = outer;
        self.scopes.pop();
        Ok(out)
    }

    fn has_barrier(&self, s: &Stmt) -> bool {
        first_barrier(&self.wi, s).is_some()
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
        let before = self.pending.clone();
        for k in 0..stmts.len() {
            self.pending = union(&before, &let_names(&stmts[..k]));
            // Bound first: `quote!` repeats a variable, not an indexing.
            let (rest, next) = (&stmts[k..], &stmts[k + 1..]);
            if self.is_uniform_exit(&stmts[k]) {
                // The group leaves here, after the loop gathered so far has
                // written back every variable used later.
                let live = union(later, &mentions(quote!(#(#rest)* #(#after)*)));
                self.flush(&mut out, &mut pre, &mut body, &live)?;
                out.extend(tokens(&stmts[k..=k]));
                continue;
            }
            if let Some(cond) = self.checked_break(&stmts[k]) {
                // The same, its condition evaluated by every work-item.
                let live = union(later, &mentions(quote!(#(#rest)* #(#after)*)));
                self.flush(&mut out, &mut pre, &mut body, &live)?;
                out.extend(self.checked_break_code(cond, &live)?);
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
                        let live = union(later, &mentions(quote!(#(#rest)* #(#after)*)));
                        self.flush(&mut out, &mut pre, &mut body, &live)?;
                        let live = union(later, &mentions(quote!(#(#next)* #(#after)*)));
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
                let live = union(later, &mentions(quote!(#(#rest)* #(#after)*)));
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
        let r = bounds::range_name();
        // A loop that needs no id but the local linear one runs over that
        // alone (`Group::for_each_linear`).
        let linear = ids.is_empty() && !self.uses_lane(&code);
        let run = |body: &TokenStream, range: Option<&TokenStream>| match range {
            None if linear => quote! { #g.for_each_linear(move |#it| { #body }); },
            None => quote! { #g.for_each(move |#it| { #body }); },
            Some(range) => quote! { #g.for_each_in(#range, move |#it| { #body }); },
        };
        let Some(hoisted) = self.hoist_bounds(&code, range.as_ref().map(|_| &r)) else {
            return Ok(run(&body, range.as_ref()));
        };
        // The loop with its local accesses unchecked where the largest
        // work-item's indices are in bounds (see `bounds`), else as written;
        // a range is bound once, for the test and both loops.
        let fast = self.item_code(&ids, &ins, &outs, &hoisted.code, quote!());
        let (test, views) = (hoisted.test, hoisted.views);
        let (bind, range) = match range {
            None => (quote!(), None),
            Some(given) => (
                quote! { let #r: ::core::ops::Range<usize> = #given; },
                Some(quote!(#r.clone())),
            ),
        };
        let (fast, slow) = (run(&fast, range.as_ref()), run(&body, range.as_ref()));
        // Under `!is_checked()`, the views made again by `in_mode` are
        // known unchecked: their accesses' tests of the mode fold away,
        // which a loop of more than a few accesses needs to vectorize.
        let fast = quote! {
            #(let #views = #g.in_mode(#views);)*
            #fast
        };
        let in_bounds = Ident::new("__clsync_in_bounds", Span::mixed_site());
        Ok(quote! {{
            #bind
            let #in_bounds = || -> ::core::option::Option<bool> {
                ::core::option::Option::Some(#test)
            };
            if !#g.is_checked() && #in_bounds().unwrap_or(false) { #fast } else { #slow }
        }})
    }

    /// Whether `e` is the same for every work-item, with no side effect
    /// (see `uniform::expr`), given the bindings in scope here. A name an
    /// earlier `let` binds that is not bound here counts as per work-item:
    /// it may be one of the work-items' statements gathered but not yet
    /// made into a loop (`let l = wi.get_local_id(0); let v = l * 2;`),
    /// which binds its names only when the loop is made; taken for a
    /// parameter or a constant, `v` would have been held by the group,
    /// computed from a name the group does not have (or, were there a
    /// parameter `l`, from that). A name no earlier `let` binds is a
    /// parameter or a constant, even where a later `let` binds it too
    /// (`let (ta, tb) = (wi.local(ta), wi.local(tb));`).
    fn uniform_expr(&self, e: &Expr) -> bool {
        uniform::expr(e, &self.wi, &|name| self.per_item(name))
    }

    /// Whether the variable `name` refers to here is per work-item: bound
    /// so, or bound by an earlier `let` but not yet (see `uniform_expr`).
    fn per_item(&self, name: &str) -> bool {
        match self.lookup_uniform(name) {
            Some(uniform) => !uniform,
            None => self.pending.contains(name),
        }
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
        let (it, l) = (&self.it, &self.l);
        let lane = self.lane_let(code);
        let ids = self.id_lets(ids);
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
            #ids
            #(#reads)*
            #code
            #(#writes)*
            #tail
        }
    }

    /// Whether `code` names the work-item (`wi`) itself: in a loop over the
    /// work-items it is then a `Lane`.
    fn uses_lane(&self, code: &TokenStream) -> bool {
        mentions(code).contains(&self.wi.to_string())
    }

    /// `let wi = g.lane(it);` where `code` names `wi`, else nothing.
    fn lane_let(&self, code: &TokenStream) -> TokenStream {
        let (g, it, wi) = (&self.g, &self.it, &self.wi);
        if self.uses_lane(code) {
            quote! { let #wi = #g.lane(#it); }
        } else {
            quote!()
        }
    }

    /// The `let`s of a work-item's id variables `ids`, taken from the
    /// work-item in the loop.
    fn id_lets(&self, ids: &[(String, Id)]) -> TokenStream {
        let it = &self.it;
        ids.iter()
            .map(|(name, id)| {
                let name = Ident::new(name, Span::call_site());
                let id = id.of(it);
                quote! {
                    #[allow(unused_variables)]
                    let #name = #id;
                }
            })
            .collect()
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

/// The names the `let`s among `stmts` bind.
fn let_names(stmts: &[Stmt]) -> HashSet<String> {
    stmts
        .iter()
        .filter_map(|s| match s {
            Stmt::Local(l) => Some(pat_bindings(&l.pat).into_iter().map(|b| b.0)),
            _ => None,
        })
        .flatten()
        .collect()
}

fn union(a: &HashSet<String>, b: &HashSet<String>) -> HashSet<String> {
    a.union(b).cloned().collect()
}

/// The lifted form of a kernel body over `wi`, as text, for the tests;
/// a body the lifting refuses fails the test.
#[cfg(test)]
fn lifted_text(wi: &Ident, body: &Block, params: Params) -> String {
    match lift(wi, body, params) {
        Ok(t) => t.to_string(),
        Err(f) => panic!("not lifted: {}", f.reason),
    }
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    /// A stretch between barriers that names no id but the local linear one
    /// (its slots are read and written at it) loops over that id alone;
    /// one that names another id loops over the work-items.
    #[test]
    fn a_loop_that_needs_only_the_linear_id_loops_over_it() {
        let wi: syn::Ident = parse_quote!(wi);
        let body: syn::Block = parse_quote!({
            let mut acc = wi.get_local_id(0) as u32;
            for _ in 0..barriers {
                wi.barrier(LOCAL);
                acc = acc.wrapping_mul(3).wrapping_add(1);
            }
            out.set(wi.get_global_id(0), acc);
        });
        let out = super::lifted_text(&wi, &body, Default::default());
        // The first stretch and the last name ids; the loop's does not.
        assert_eq!(out.matches(". for_each_linear (").count(), 1, "{out}");
        assert_eq!(out.matches(". for_each (").count(), 2, "{out}");
    }
}
