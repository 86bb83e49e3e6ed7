//! `if l < n { … }` and `if l == c { … }` on the local id, OpenCL C's ways
//! of running code on the first `n` work-items or on work-item `c` alone,
//! as a loop over `0..n` or `c..c + 1` with no test per work-item
//! (`Group::for_each_in`): the lifted counterpart of the hand-written group
//! kernels' ranges.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Expr, Pat, Stmt};

use super::Lifter;
use crate::scan::is_wi;

impl Lifter {
    /// Whether `let x = wi.get_local_linear_id()` (`Some(true)`) or
    /// `let x = wi.get_local_id(0)` (`Some(false)`), `x` immutable.
    pub(super) fn id_call(&self, local: &syn::Local) -> Option<bool> {
        let Pat::Ident(p) = &local.pat else {
            return None;
        };
        let Expr::MethodCall(m) = &*local.init.as_ref()?.expr else {
            return None;
        };
        if p.mutability.is_some() || p.subpat.is_some() || !is_wi(&m.receiver, &self.wi) {
            return None;
        }
        let zero = |e: &Expr| matches!(e, Expr::Lit(l) if quote!(#l).to_string() == "0");
        match (m.method.to_string().as_str(), m.args.len()) {
            ("get_local_linear_id", 0) => Some(true),
            ("get_local_id", 1) if zero(&m.args[0]) => Some(false),
            _ => None,
        }
    }

    /// `if l < n { … }` or `if l == c { … }`, `l` the local linear id and
    /// `n`, `c` uniform: OpenCL C's way of running code on the first `n`
    /// work-items, or on one. Returns the range of local ids that pass the
    /// test (`0..n`, `c..c + 1`), whether `l` is the linear id in every
    /// range (else in 1-D ones only), and the body as a block statement, so
    /// that it can run as a loop over that range alone, with no test per
    /// work-item. (A range past the group's end is cut there, so `c` at or
    /// beyond the group's size runs nothing, as the test would.)
    pub(super) fn first_items(&self, s: &Stmt) -> Option<(TokenStream, bool, Stmt)> {
        let Stmt::Expr(Expr::If(i), _) = s else {
            return None;
        };
        let Expr::Binary(b) = &*i.cond else {
            return None;
        };
        if i.else_branch.is_some() {
            return None;
        }
        let bound = &b.right;
        let range = match b.op {
            syn::BinOp::Lt(_) => quote!(0..(#bound)),
            syn::BinOp::Eq(_) => quote!({
                let c: usize = #bound;
                c..c.saturating_add(1)
            }),
            _ => return None,
        };
        let Expr::Path(p) = &*b.left else { return None };
        let name = p.path.get_ident()?.to_string();
        let always = self.binding(&name)?.id?;
        if !self.uniform_expr(bound) {
            return None;
        }
        let block = &i.then_branch;
        Some((range, always, syn::parse_quote!(#block)))
    }
}
