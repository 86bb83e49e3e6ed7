//! What a `let` or `for` pattern binds, as the lifting needs it.

use syn::Pat;

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
