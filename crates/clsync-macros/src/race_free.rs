//! Accesses that race with nothing, proved from the kernel's barrier
//! intervals, as GPU race verifiers prove them: what a checked launch of
//! the group-level form need not check access by access.
//!
//! * **Local arrays.** An interval is the code between two work-group
//!   barriers that fence local memory (`wi.barrier(LOCAL)`). Accesses in
//!   different intervals are ordered by a barrier; two accesses of the same
//!   interval by different work-items conflict unless both read, both are
//!   at the work-item's own element (its local id), or one is below a
//!   value the whole group shares and the other at or above it
//!   (`place.rs`). A `get` or `set` that conflicts with no access that may
//!   share its interval (itself included, by another work-item) becomes
//!   `get_race_free` or `set_race_free`, which a checked launch decides
//!   from the element's shadow cell alone (`checker::race_free` in
//!   `clsync` gives the argument). A scan's reads of its neighbours'
//!   elements, in an interval of reads, and its update of its own, in an
//!   interval of its own elements, are such accesses; so are a tree
//!   reduction's `if l < half { s.set(l, s.get(l) + s.get(l + half)) }`.
//! * **Local arrays of atomics** whose every use is a relaxed, group-wide
//!   operation, in a kernel that names no fence, go through `at_quiet`
//!   (`quiet.rs`).
//! * **Buffers.** A written buffer parameter whose every access is at the
//!   work-item's own global id is reached through `Group::global_owned`:
//!   no two work-items access one element, so no access races.
//!
//! Which intervals an access may share is found by walking the body as
//! control flows: a set of the accesses since the last barrier, which a
//! barrier empties, branches join, and loops carry around until it no
//! longer grows (`break` and `continue` included). The walk is
//! conservative: a barrier it does not recognize (one whose flags are not
//! spelled with `LOCAL`, one in a closure or a macro) is not a boundary,
//! and a view used any other way than by `get`, `set`, `len` and
//! `is_empty` (passed to a function, named in a closure or a macro) has no
//! access proved. What the walk cannot see is checked when the group
//! starts: that the boundary barriers' flags include local memory, and,
//! for `get_local_id(0)` and `get_global_id(0)`, that the other dimensions
//! have one work-item (`Group::trust_race_free`, the condition before
//! `Group::global_owned`).

use std::collections::{HashMap, HashSet};

use proc_macro2::{Ident, TokenStream};
use quote::{quote, ToTokens};
use syn::visit::{self, Visit};
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, ExprMethodCall, Pat, Stmt};

mod flow;
mod place;
mod quiet;

use flow::Flow;
use place::Names;

use crate::pattern::{split_tuple_lets, strip_type};
use crate::scan::{is_wi, mentions};
use crate::uniform::{self, locals};

/// What the proofs give the expansion.
pub(crate) struct Proofs {
    /// The body, its proven local accesses renamed.
    pub(crate) body: Block,
    /// The run-time side of the local proofs, for
    /// `Group::trust_race_free`, if any access was proven.
    pub(crate) trust: Option<TokenStream>,
    /// The buffer parameters each work-item accesses at its own element,
    /// each with the run-time side of its proof.
    pub(crate) owned: Vec<(Ident, TokenStream)>,
}

/// Which id a variable holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Id {
    /// `get_local_id(0)`: the group's own only where its other dimensions
    /// have one work-item.
    Local0,
    /// `get_local_linear_id()`.
    LocalLinear,
    /// `get_global_id(0)`.
    Global0,
    /// `get_global_linear_id()`.
    GlobalLinear,
}

impl Id {
    fn local(self) -> bool {
        matches!(self, Id::Local0 | Id::LocalLinear)
    }

    /// The run-time condition under which no two work-items have the same
    /// value of this id (of the group, or of the launch).
    fn unique(self, g: &Ident) -> TokenStream {
        match self {
            Id::Local0 => quote!(#g.get_local_size(1) == 1 && #g.get_local_size(2) == 1),
            Id::Global0 => quote!(#g.get_global_size(1) == 1 && #g.get_global_size(2) == 1),
            Id::LocalLinear | Id::GlobalLinear => quote!(true),
        }
    }
}

/// The proofs for a kernel whose work-item is `wi`: of its local arrays'
/// accesses (from `local_args`, its `LocalArg` parameters, and
/// `wi.local_array`), and of its `buffers` (the written buffer parameters
/// its group-level form reaches through views; empty where a parameter
/// might reach a buffer some other way). `g` is the group's name in the
/// generated code.
pub(crate) fn prove(
    wi: &Ident,
    g: &Ident,
    body: &Block,
    local_args: &[&Ident],
    buffers: &[&Ident],
) -> Proofs {
    let stmts = split_tuple_lets(&body.stmts);
    let bound = locals(body);
    let once = |name: &Ident| bound.iter().filter(|n| *name == n.as_str()).count() == 1;
    let tokens = body.to_token_stream();
    let ids = ids(wi, &stmts, &once);
    // The local arrays' views, by what their uses allow (the statements
    // after each one's `let`): `get` and `set`, whose accesses the walk
    // below looks at; or only quiet atomics (`quiet.rs`).
    let fenced = quiet::names_a_fence(&tokens);
    let (mut views, mut quiet): (Vec<Ident>, Vec<Ident>) = (Vec::new(), Vec::new());
    for i in 0..stmts.len() {
        let Some(v) = local_view(wi, &stmts[i], local_args, &tokens).filter(|v| once(v)) else {
            continue;
        };
        let after = Block {
            brace_token: body.brace_token,
            stmts: stmts[i + 1..].to_vec(),
        };
        if plain_uses(&v, &after, &["get", "set", "len", "is_empty"]) {
            views.push(v);
        } else if !fenced && plain_uses(&v, &after, &["at"]) && quiet::quiet_uses(&v, &after) {
            quiet.push(v);
        }
    }

    // Every tracked access, in the order of the syntax tree.
    let mut found = Found {
        views: &views,
        calls: Vec::new(),
    };
    for s in &stmts {
        found.visit_stmt(s);
    }
    let accesses: Vec<Access> = found
        .calls
        .iter()
        .map(|&(view, m)| Access {
            view,
            write: m.method == "set",
        })
        .collect();
    let at: HashMap<*const ExprMethodCall, usize> = found
        .calls
        .iter()
        .enumerate()
        .map(|(i, &(_, m))| (m as *const _, i))
        .collect();
    let names = Names {
        stable: stable(wi, &stmts, &once, &bound),
        locals: bound.iter().cloned().collect(),
        ids,
    };
    let mut flow = Flow::new(wi, &at, &names, accesses.len());
    for s in &stmts {
        flow.visit_stmt(s);
    }
    let unstable = &flow.unstable;
    let apart = |x: usize, y: usize| {
        let (a, b) = (&accesses[x], &accesses[y]);
        let (p, q) = (&flow.places[x], &flow.places[y]);
        a.view != b.view
            || !(a.write || b.write)
            || (p.owner(unstable).is_some() && q.owner(unstable).is_some())
            || p.apart(q, unstable)
    };
    // Two accesses may share an interval where the boundaries before them
    // meet (an access shares its own with itself, by another work-item).
    let meet = |x: usize, y: usize| !flow.reach[x].is_disjoint(&flow.reach[y]);
    let proven: Vec<bool> = (0..accesses.len())
        .map(|x| {
            !flow.reach[x].is_empty() && (0..accesses.len()).all(|y| !meet(x, y) || apart(x, y))
        })
        .collect();

    let mut body = Block {
        brace_token: body.brace_token,
        stmts,
    };
    let trust = (proven.iter().any(|p| *p) || !quiet.is_empty()).then(|| {
        let flags = flow
            .boundaries
            .iter()
            .map(|f| {
                quote!(::clsync::sync::FenceFlags::mem_flags(#f).contains(::clsync::sync::MemFlags::LOCAL))
            });
        // Every id a proof may have taken for an owner's: a proven
        // access's, and those of the accesses it was found apart from.
        let mut kinds: Vec<Id> = Vec::new();
        for place in &flow.places {
            if let Some(id) = place.owner(unstable).filter(|id| !kinds.contains(id)) {
                kinds.push(id);
            }
        }
        let unique = kinds.iter().map(|id| id.unique(g));
        quote!(true #(&& (#flags))* #(&& (#unique))*)
    });
    let mut rename = Rename {
        views: &views,
        proven: &proven,
        next: 0,
    };
    rename.visit_block_mut(&mut body);
    quiet::Rename(&quiet).visit_block_mut(&mut body);

    let owned = buffers
        .iter()
        .filter_map(|b| owned_buffer(b, &body, &names.ids).map(|id| ((*b).clone(), id.unique(g))))
        .collect();
    Proofs { body, trust, owned }
}

/// The variables bound once in the body (so that each use of the name is
/// that binding's), to an id a work-item owns (`let l =
/// wi.get_local_id(0);`, at the top or in a block).
fn ids(wi: &Ident, stmts: &[Stmt], once: &dyn Fn(&Ident) -> bool) -> HashMap<String, Id> {
    struct Lets<'ast>(Vec<&'ast syn::Local>);
    impl<'ast> Visit<'ast> for Lets<'ast> {
        fn visit_local(&mut self, l: &'ast syn::Local) {
            self.0.push(l);
            visit::visit_local(self, l);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut lets = Lets(Vec::new());
    stmts.iter().for_each(|s| lets.visit_stmt(s));
    let mut out = HashMap::new();
    for local in lets.0 {
        let (Pat::Ident(p), Some(init)) = (strip_type(&local.pat), &local.init) else {
            continue;
        };
        if p.mutability.is_some() || p.by_ref.is_some() || p.subpat.is_some() || !once(&p.ident) {
            continue;
        }
        let Expr::MethodCall(m) = &*init.expr else {
            continue;
        };
        if !is_wi(&m.receiver, wi) || init.diverge.is_some() {
            continue;
        }
        let zero = m.args.len() == 1
            && matches!(&m.args[0], Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. })
                if i.base10_digits() == "0");
        let id = match (m.method.to_string().as_str(), m.args.len()) {
            ("get_local_id", 1) if zero => Id::Local0,
            ("get_local_linear_id", 0) => Id::LocalLinear,
            ("get_global_id", 1) if zero => Id::Global0,
            ("get_global_linear_id", 0) => Id::GlobalLinear,
            _ => continue,
        };
        out.insert(p.ident.to_string(), id);
    }
    out
}

/// The variables, bound once by a statement at the top of the body, whose
/// value the whole group shares: a uniform value (`uniform::expr`), and,
/// for a `let mut`, changed only by statements the group runs, to uniform
/// values (`uniform::group_mutable`, as the lifting holds them).
fn stable(
    wi: &Ident,
    stmts: &[Stmt],
    once: &dyn Fn(&Ident) -> bool,
    bound: &[String],
) -> HashSet<String> {
    let mut out: HashSet<String> = HashSet::new();
    for (i, s) in stmts.iter().enumerate() {
        let Stmt::Local(local) = s else { continue };
        let (Pat::Ident(p), Some(init)) = (strip_type(&local.pat), &local.init) else {
            continue;
        };
        if p.by_ref.is_some() || p.subpat.is_some() || init.diverge.is_some() || !once(&p.ident) {
            continue;
        }
        let name = p.ident.to_string();
        let per_item = |n: &str| n != name && bound.iter().any(|b| b == n) && !out.contains(n);
        let uniform = |e: &Expr| uniform::expr(e, wi, &per_item);
        if uniform(&init.expr)
            && (p.mutability.is_none()
                || uniform::group_mutable(&p.ident, wi, &stmts[i + 1..], &uniform))
        {
            out.insert(name);
        }
    }
    out
}

/// The name `s` binds to a view of a local array, if it is `let t =
/// wi.local(arg)` with `arg` a `LocalArg` parameter named nowhere else, or
/// `let t = wi.local_array(…)`.
fn local_view(wi: &Ident, s: &Stmt, local_args: &[&Ident], tokens: &TokenStream) -> Option<Ident> {
    let Stmt::Local(local) = s else { return None };
    let (Pat::Ident(p), Some(init)) = (strip_type(&local.pat), &local.init) else {
        return None;
    };
    if p.mutability.is_some() || p.by_ref.is_some() || p.subpat.is_some() || init.diverge.is_some()
    {
        return None;
    }
    let Expr::MethodCall(m) = &*init.expr else {
        return None;
    };
    if !is_wi(&m.receiver, wi) {
        return None;
    }
    let fresh = match (m.method.to_string().as_str(), m.args.first()) {
        ("local_array", _) => true,
        ("local", Some(Expr::Path(a))) => a
            .path
            .get_ident()
            .is_some_and(|a| local_args.contains(&a) && count(tokens, a) == 1),
        _ => false,
    };
    fresh.then(|| p.ident.clone())
}

/// How many times the identifier `name` occurs in `tokens`.
fn count(tokens: &TokenStream, name: &Ident) -> usize {
    tokens
        .clone()
        .into_iter()
        .map(|t| match t {
            proc_macro2::TokenTree::Ident(i) if i == *name => 1,
            proc_macro2::TokenTree::Group(g) => count(&g.stream(), name),
            _ => 0,
        })
        .sum()
}

/// Whether every use of `name` in `body` is a call of one of `methods`
/// outside closures, `async` blocks, macros and nested items (whose code
/// runs elsewhere, or is not parsed).
fn plain_uses(name: &Ident, body: &Block, methods: &[&str]) -> bool {
    struct Hidden<'a> {
        name: &'a Ident,
        hidden: bool,
    }
    impl Hidden<'_> {
        fn check(&mut self, t: impl ToTokens) {
            self.hidden |= mentions(t).contains(&self.name.to_string());
        }
    }
    impl<'ast> Visit<'ast> for Hidden<'_> {
        fn visit_expr_closure(&mut self, c: &'ast syn::ExprClosure) {
            self.check(c);
        }
        fn visit_expr_async(&mut self, a: &'ast syn::ExprAsync) {
            self.check(a);
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            self.check(m);
        }
        fn visit_item(&mut self, i: &'ast syn::Item) {
            self.check(i);
        }
    }
    let mut h = Hidden {
        name,
        hidden: false,
    };
    h.visit_block(body);
    !h.hidden && crate::only_methods(name, body, methods)
}

/// The id an index is, if it is a variable holding one.
fn index_id(e: &Expr, ids: &HashMap<String, Id>) -> Option<Id> {
    match e {
        Expr::Path(p) if p.qself.is_none() => ids.get(&p.path.get_ident()?.to_string()).copied(),
        Expr::Paren(p) => index_id(&p.expr, ids),
        _ => None,
    }
}

/// A view's `get` or `set`, by the view's index in `views`.
fn tracked(m: &ExprMethodCall, views: &[Ident]) -> Option<usize> {
    let Expr::Path(p) = &*m.receiver else {
        return None;
    };
    let name = p.path.get_ident()?;
    let view = views.iter().position(|v| v == name)?;
    match (m.method.to_string().as_str(), m.args.len()) {
        ("get", 1) | ("set", 2) => Some(view),
        _ => None,
    }
}

/// One access to a local array.
struct Access {
    view: usize,
    write: bool,
}

/// The tracked accesses, in the order `syn` visits them (`Rename` counts
/// the same way).
struct Found<'a, 'ast> {
    views: &'a [Ident],
    calls: Vec<(usize, &'ast ExprMethodCall)>,
}

impl<'ast> Visit<'ast> for Found<'_, 'ast> {
    fn visit_expr_method_call(&mut self, m: &'ast ExprMethodCall) {
        if let Some(view) = tracked(m, self.views) {
            self.calls.push((view, m));
        }
        visit::visit_expr_method_call(self, m);
    }
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// Renames the proven accesses, counting as `Found` did.
struct Rename<'a> {
    views: &'a [Ident],
    proven: &'a [bool],
    next: usize,
}

impl VisitMut for Rename<'_> {
    fn visit_expr_method_call_mut(&mut self, m: &mut ExprMethodCall) {
        if tracked(m, self.views).is_some() {
            let i = self.next;
            self.next += 1;
            if self.proven.get(i) == Some(&true) {
                let name = format!("{}_race_free", m.method);
                m.method = Ident::new(&name, m.method.span());
            }
        }
        visit_mut::visit_expr_method_call_mut(self, m);
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// The id a written buffer parameter `b` is accessed at, if every use of
/// it is a `get` or `set` at one variable holding a global id (bound once),
/// or `len`, `is_empty` or `prefetch`, outside macros and nested items.
fn owned_buffer(b: &Ident, body: &Block, ids: &HashMap<String, Id>) -> Option<Id> {
    struct Uses<'a> {
        b: &'a Ident,
        ids: &'a HashMap<String, Id>,
        at: Vec<Option<Id>>,
        hidden: bool,
    }
    impl<'ast> Visit<'ast> for Uses<'_> {
        fn visit_expr_method_call(&mut self, m: &'ast ExprMethodCall) {
            if matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident(self.b))
                && matches!(m.method.to_string().as_str(), "get" | "set")
            {
                self.at
                    .push(m.args.first().and_then(|i| index_id(i, self.ids)));
            }
            visit::visit_expr_method_call(self, m);
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            self.hidden |= mentions(m).contains(&self.b.to_string());
        }
        fn visit_item(&mut self, i: &'ast syn::Item) {
            self.hidden |= mentions(i).contains(&self.b.to_string());
        }
    }
    if !crate::only_methods(b, body, &["get", "set", "len", "is_empty", "prefetch"]) {
        return None;
    }
    let mut u = Uses {
        b,
        ids,
        at: Vec::new(),
        hidden: false,
    };
    u.visit_block(body);
    let first = (*u.at.first()?)?;
    let same = u.at.iter().all(|id| *id == Some(first));
    let global = matches!(first, Id::Global0 | Id::GlobalLinear);
    (!u.hidden && same && global).then_some(first)
}

#[cfg(test)]
mod tests;
