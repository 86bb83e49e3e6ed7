//! Which values are the same for every work-item of a group: those the
//! lifted kernel can keep once, in the group, instead of once per
//! work-item. Conservative, by syntax: anything this cannot show uniform is
//! treated as per work-item, which is always correct, only slower.

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::visit::{self, Visit};
use syn::{Expr, Ident, Macro, Pat, Stmt};

use crate::lift::arm_statements;
use crate::scan::{first_barrier, is_wi};

/// Work-item functions whose value is the group's.
const GROUP_FUNCTIONS: &[&str] = &[
    "get_work_dim",
    "get_global_size",
    "get_global_offset",
    "get_local_size",
    "get_enqueued_local_size",
    "get_num_groups",
    "get_group_id",
    "get_max_sub_group_size",
    "get_num_sub_groups",
    "get_enqueued_num_sub_groups",
    "local",
    "local_array",
];

/// Methods of numbers (and `len`) with no side effect.
const PURE_METHODS: &[&str] = &[
    "min",
    "max",
    "len",
    "pow",
    "abs",
    "wrapping_add",
    "wrapping_sub",
    "wrapping_mul",
    "saturating_add",
    "saturating_sub",
    "saturating_mul",
    "div_ceil",
    "trailing_zeros",
    "leading_zeros",
    "count_ones",
    "is_power_of_two",
];

/// Whether `e` has the same value for every work-item of a group and no
/// side effect: literals, constants, parameters and uniform variables
/// (`per_item(name)` says which names are not), combined by operators,
/// ranges, casts and pure methods, and the work-item functions that are the
/// group's (sizes, group ids, local memory).
pub(crate) fn expr(e: &Expr, wi: &Ident, per_item: &dyn Fn(&str) -> bool) -> bool {
    let all = |es: &mut dyn Iterator<Item = &Expr>| {
        for e in es {
            if !expr(e, wi, per_item) {
                return false;
            }
        }
        true
    };
    match e {
        Expr::Lit(_) => true,
        Expr::Path(p) => match p.path.get_ident() {
            // `wi` itself is not a value here.
            Some(id) => id != wi && !per_item(&id.to_string()),
            None => p.qself.is_none(),
        },
        Expr::Binary(b) => {
            !is_assign(&b.op) && expr(&b.left, wi, per_item) && expr(&b.right, wi, per_item)
        }
        Expr::Unary(u) => !matches!(u.op, syn::UnOp::Deref(_)) && expr(&u.expr, wi, per_item),
        Expr::Cast(c) => expr(&c.expr, wi, per_item),
        Expr::Paren(p) => expr(&p.expr, wi, per_item),
        Expr::Group(g) => expr(&g.expr, wi, per_item),
        Expr::Field(f) => expr(&f.base, wi, per_item),
        Expr::Tuple(t) => all(&mut t.elems.iter()),
        Expr::Range(r) => all(&mut r.start.iter().chain(r.end.iter()).map(|e| &**e)),
        Expr::MethodCall(m) if is_wi(&m.receiver, wi) => {
            GROUP_FUNCTIONS.contains(&m.method.to_string().as_str()) && all(&mut m.args.iter())
        }
        Expr::MethodCall(m) => {
            PURE_METHODS.contains(&m.method.to_string().as_str())
                && expr(&m.receiver, wi, per_item)
                && all(&mut m.args.iter())
        }
        _ => false,
    }
}

/// Whether `op` assigns (`+=` and the like).
pub(crate) fn is_assign(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_)
            | SubAssign(_)
            | MulAssign(_)
            | DivAssign(_)
            | RemAssign(_)
            | BitXorAssign(_)
            | BitAndAssign(_)
            | BitOrAssign(_)
            | ShlAssign(_)
            | ShrAssign(_)
    )
}

/// The variable a statement assigns, with the value, if it is `x = e;` or
/// `x op= e;`.
pub(crate) fn assignment(s: &Stmt) -> Option<(&Ident, &Expr)> {
    let Stmt::Expr(e, _) = s else { return None };
    let (left, right) = match e {
        Expr::Assign(a) => (&*a.left, &*a.right),
        Expr::Binary(b) if is_assign(&b.op) => (&*b.left, &*b.right),
        _ => return None,
    };
    match left {
        Expr::Path(p) if p.qself.is_none() => p.path.get_ident().map(|id| (id, right)),
        _ => None,
    }
}

/// Every name a pattern binds anywhere in `code` (`let`s, `for`s, closure
/// parameters, `match` arms).
pub(crate) fn locals<T: ToTokens>(code: &T) -> Vec<String> {
    struct Names(Vec<String>);
    impl<'ast> Visit<'ast> for Names {
        fn visit_pat(&mut self, p: &'ast Pat) {
            if let Pat::Ident(i) = p {
                self.0.push(i.ident.to_string());
            }
            visit::visit_pat(self, p);
        }
    }
    let file: syn::File = syn::parse_quote!(fn __scan() { #code });
    let mut n = Names(Vec::new());
    n.visit_file(&file);
    n.0
}

/// Whether `let mut name = …` (uniform) at the top of a lifted block can be
/// held by the group: every later assignment to a variable of that name is
/// itself a statement the group runs (the top of this block or of a
/// statement holding a barrier inside it) with a value `uniform` accepts,
/// and nothing else can change it (no `&mut name`, no method call on it but
/// a pure one, no macro naming it). `rest` are the statements after the
/// `let`.
pub(crate) fn group_mutable(
    name: &Ident,
    wi: &Ident,
    rest: &[Stmt],
    uniform: &dyn Fn(&Expr) -> bool,
) -> bool {
    rest.iter().all(|s| {
        if let Some((target, value)) = assignment(s) {
            if target == name {
                return uniform(value) && !changes(name, value);
            }
        }
        if first_barrier(wi, s).is_some() {
            if let Stmt::Expr(e, _) = s {
                return match e {
                    Expr::ForLoop(f) => {
                        !changes(name, &f.expr) && group_mutable(name, wi, &f.body.stmts, uniform)
                    }
                    Expr::While(w) => {
                        !changes(name, &w.cond) && group_mutable(name, wi, &w.body.stmts, uniform)
                    }
                    Expr::Loop(l) => group_mutable(name, wi, &l.body.stmts, uniform),
                    Expr::Match(m) => {
                        !changes(name, &m.expr)
                            && m.arms.iter().all(|a| {
                                a.guard.as_ref().is_none_or(|(_, g)| !changes(name, &**g))
                                    && group_mutable(name, wi, &arm_statements(&a.body), uniform)
                            })
                    }
                    Expr::If(i) => {
                        !changes(name, &i.cond)
                            && group_mutable(name, wi, &i.then_branch.stmts, uniform)
                            && i.else_branch.as_ref().is_none_or(|(_, e)| match &**e {
                                Expr::Block(b) => group_mutable(name, wi, &b.block.stmts, uniform),
                                other => !changes(name, other),
                            })
                    }
                    Expr::Block(b) => group_mutable(name, wi, &b.block.stmts, uniform),
                    other => !changes(name, other),
                };
            }
        }
        !changes(name, s)
    })
}

/// Whether `code` may change the variable `name`: assigns it, borrows it
/// mutably, calls a method on it that is not pure, or names it in a macro.
fn changes<T: ToTokens>(name: &Ident, code: &T) -> bool {
    struct Find<'a> {
        name: &'a Ident,
        found: bool,
    }
    impl Find<'_> {
        /// Whether `e` is a place of the variable: itself, or a field or
        /// element of it (`pair.0 = …` changes `pair`).
        fn is_name(&self, e: &Expr) -> bool {
            root(e).is_some_and(|r| r == self.name)
        }
    }
    impl<'ast> Visit<'ast> for Find<'_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            match e {
                Expr::Assign(a) if self.is_name(&a.left) => self.found = true,
                Expr::Binary(b) if is_assign(&b.op) && self.is_name(&b.left) => self.found = true,
                Expr::Reference(r) if r.mutability.is_some() && self.is_name(&r.expr) => {
                    self.found = true
                }
                Expr::MethodCall(m)
                    if self.is_name(&m.receiver)
                        && !PURE_METHODS.contains(&m.method.to_string().as_str()) =>
                {
                    self.found = true
                }
                _ => {}
            }
            visit::visit_expr(self, e);
        }
        fn visit_macro(&mut self, m: &'ast Macro) {
            if names(m.tokens.clone(), self.name) {
                self.found = true;
            }
        }
    }
    let file: syn::File = syn::parse_quote!(fn __scan() { #code });
    let mut f = Find { name, found: false };
    f.visit_file(&file);
    f.found
}

/// The variable a place expression starts from: `x` of `x`, `x[i]`,
/// `x.f`, `(x)`.
pub(crate) fn root(place: &Expr) -> Option<&Ident> {
    match place {
        Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
        Expr::Index(i) => root(&i.expr),
        Expr::Field(f) => root(&f.base),
        Expr::Paren(p) => root(&p.expr),
        _ => None,
    }
}

fn names(tokens: TokenStream, name: &Ident) -> bool {
    tokens.into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == *name,
        TokenTree::Group(g) => names(g.stream(), name),
        _ => false,
    })
}
