//! What a `let` or `for` pattern binds, as the lifting needs it.

use std::collections::HashSet;

use syn::{Expr, Pat, Stmt};

use crate::scan::mentions;

/// A pattern without its type ascription.
pub(crate) fn strip_type(p: &Pat) -> &Pat {
    match p {
        Pat::Type(t) => &t.pat,
        p => p,
    }
}

/// Whether a pattern is plain immutable names (`n`, `(a, b)`, `x: usize`).
pub(crate) fn immutable_names(p: &Pat) -> bool {
    match p {
        Pat::Ident(i) => i.mutability.is_none() && i.by_ref.is_none() && i.subpat.is_none(),
        Pat::Wild(_) => true,
        Pat::Tuple(t) => t.elems.iter().all(immutable_names),
        Pat::Type(t) => immutable_names(&t.pat),
        Pat::Paren(p) => immutable_names(&p.pat),
        _ => false,
    }
}

/// The names a pattern binds, each with whether it is `mut`.
pub(crate) fn pat_bindings(p: &Pat) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    fn walk(p: &Pat, out: &mut Vec<(String, bool)>) {
        match p {
            Pat::Ident(i) => {
                out.push((i.ident.to_string(), i.mutability.is_some()));
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

/// `stmts` with each `let (a, b) = (x, y);` made into `let a = x; let b =
/// y;`, so that each name is judged uniform or per work-item on its own
/// (`let (t, l) = (wi.local(tile), wi.get_local_id(0));` holds `t` in the
/// group and `l` per work-item). Only where that means the same: a tuple
/// pattern (no type, no `..`) and a tuple of as many values, none of which
/// names what an earlier element of the pattern binds (in `let (a, b) =
/// (x, a);` the second `a` is the outer one).
pub(crate) fn split_tuple_lets(stmts: &[Stmt]) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(stmts.len());
    for s in stmts {
        match split(s) {
            Some(parts) => out.extend(parts),
            None => out.push(s.clone()),
        }
    }
    out
}

fn split(s: &Stmt) -> Option<Vec<Stmt>> {
    let Stmt::Local(local) = s else { return None };
    let init = local.init.as_ref()?;
    let (Pat::Tuple(pats), Expr::Tuple(values)) = (&local.pat, &*init.expr) else {
        return None;
    };
    let plain = local.attrs.is_empty()
        && init.diverge.is_none()
        && values.attrs.is_empty()
        && pats.elems.len() == values.elems.len()
        && !pats.elems.iter().any(|p| matches!(p, Pat::Rest(_)));
    if !plain {
        return None;
    }
    let mut bound = HashSet::new();
    let mut parts = Vec::new();
    for (pat, value) in pats.elems.iter().zip(&values.elems) {
        if mentions(value).iter().any(|n| bound.contains(n)) {
            return None;
        }
        bound.extend(pat_bindings(pat).into_iter().map(|b| b.0));
        parts.push(syn::parse_quote_spanned! {local.let_token.span=> let #pat = #value; });
    }
    Some(parts)
}
