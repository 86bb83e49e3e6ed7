//! Local arrays of atomics that race with nothing and synchronize nothing:
//! every use is `a.at(i)` followed by a relaxed operation of group-wide
//! scope, in a kernel that names no fence. Their `at` becomes `at_quiet`
//! (`LocalView::at_quiet` in `clsync`), whose operations a checked launch
//! performs without the checker once the element holds a write. A
//! histogram's bins, counted with `fetch_add_explicit_scope(1, Relaxed,
//! WorkGroupScope)`, are such an array.
//!
//! The types make sure of the orders and scopes (`QuietAtomic` takes
//! `Relaxed` and a `GroupScope`); the syntax here only picks the uses that
//! will compile, and the kernels with no fence, which could give relaxed
//! atomics an order.

use proc_macro2::{Ident, TokenStream, TokenTree};
use syn::visit::{self, Visit};
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, ExprMethodCall};

/// The operations `QuietAtomic` has, each with the position of its order
/// argument and, for the `_scope` forms, of its scope.
const OPERATIONS: &[(&str, usize, Option<usize>)] = &[
    ("load_explicit", 0, None),
    ("load_explicit_scope", 0, Some(1)),
    ("store_explicit", 1, None),
    ("store_explicit_scope", 1, Some(2)),
    ("exchange_explicit", 1, None),
    ("exchange_explicit_scope", 1, Some(2)),
    ("fetch_add_explicit", 1, None),
    ("fetch_add_explicit_scope", 1, Some(2)),
    ("fetch_sub_explicit", 1, None),
    ("fetch_sub_explicit_scope", 1, Some(2)),
    ("fetch_or_explicit", 1, None),
    ("fetch_or_explicit_scope", 1, Some(2)),
    ("fetch_xor_explicit", 1, None),
    ("fetch_xor_explicit_scope", 1, Some(2)),
    ("fetch_and_explicit", 1, None),
    ("fetch_and_explicit_scope", 1, Some(2)),
    ("fetch_min_explicit", 1, None),
    ("fetch_min_explicit_scope", 1, Some(2)),
    ("fetch_max_explicit", 1, None),
    ("fetch_max_explicit_scope", 1, Some(2)),
];

/// The scopes that include the work-group (`GroupScope`).
const GROUP_SCOPES: &[&str] = &["WorkGroupScope", "DeviceScope", "AllSvmDevicesScope"];

/// Whether the kernel's code names a fence (`mem_fence`,
/// `atomic_work_item_fence`, …) anywhere, macros included.
pub(super) fn names_a_fence(tokens: &TokenStream) -> bool {
    tokens.clone().into_iter().any(|t| match t {
        TokenTree::Ident(i) => i.to_string().contains("fence"),
        TokenTree::Group(g) => names_a_fence(&g.stream()),
        _ => false,
    })
}

/// Whether every `v.at(i)` in `after` (the code after `v`'s `let`, which
/// `plain_uses` found to use `v` only by `at`) is followed by one of the
/// operations, with `Relaxed` and a group-wide scope; and there is one.
pub(super) fn quiet_uses(v: &Ident, after: &Block) -> bool {
    struct Uses<'a> {
        v: &'a Ident,
        all: usize,
        quiet: usize,
    }
    impl<'ast> Visit<'ast> for Uses<'_> {
        fn visit_expr_method_call(&mut self, m: &'ast ExprMethodCall) {
            if at_of(m, self.v) {
                self.all += 1;
            }
            if at_of_receiver(m, self.v) && quiet_operation(m) {
                self.quiet += 1;
            }
            visit::visit_expr_method_call(self, m);
        }
    }
    let mut u = Uses {
        v,
        all: 0,
        quiet: 0,
    };
    u.visit_block(after);
    u.all > 0 && u.all == u.quiet
}

/// Whether `m` is `v.at(i)`.
fn at_of(m: &ExprMethodCall, v: &Ident) -> bool {
    m.method == "at"
        && m.args.len() == 1
        && matches!(&*m.receiver, Expr::Path(p) if p.qself.is_none() && p.path.is_ident(v))
}

/// Whether `m`'s receiver is `v.at(i)`.
fn at_of_receiver(m: &ExprMethodCall, v: &Ident) -> bool {
    matches!(&*m.receiver, Expr::MethodCall(r) if at_of(r, v))
}

/// Whether `m` is one of the operations with a relaxed order and a
/// group-wide scope, by their spelling.
fn quiet_operation(m: &ExprMethodCall) -> bool {
    let name = m.method.to_string();
    let Some(&(_, order, scope)) = OPERATIONS.iter().find(|(n, _, _)| *n == name) else {
        return false;
    };
    let last = |i: usize| match m.args.iter().nth(i) {
        Some(Expr::Path(p)) if p.qself.is_none() => {
            p.path.segments.last().map(|s| s.ident.to_string())
        }
        _ => None,
    };
    m.args.len() == order + 1 + usize::from(scope.is_some())
        && last(order).as_deref() == Some("Relaxed")
        && scope.is_none_or(|s| last(s).is_some_and(|s| GROUP_SCOPES.contains(&s.as_str())))
}

/// Renames `v.at(i)` to `v.at_quiet(i)` for each quiet view `v`.
pub(super) struct Rename<'a>(pub(super) &'a [Ident]);

impl VisitMut for Rename<'_> {
    fn visit_expr_method_call_mut(&mut self, m: &mut ExprMethodCall) {
        if self.0.iter().any(|v| at_of(m, v)) {
            m.method = Ident::new("at_quiet", m.method.span());
        }
        visit_mut::visit_expr_method_call_mut(self, m);
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}
