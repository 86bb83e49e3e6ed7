//! `if l < n { … }` and `if l == c { … }` on the local id, OpenCL C's ways
//! of running code on the first `n` work-items or on work-item `c` alone,
//! as a loop over `0..n` or `c..c + 1` with no test per work-item
//! (`Group::for_each_in`): the lifted counterpart of the hand-written group
//! kernels' ranges.

use std::collections::HashSet;

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Expr, Pat, Stmt};

use super::Lifter;
use crate::pattern::pat_bindings;
use crate::scan::{is_wi, mentions};

/// A work-item id a variable holds, taken from the work-item in each loop
/// instead of kept in a slot.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Id {
    /// `get_local_linear_id()`.
    Linear,
    /// `get_local_id(d)`.
    Local(usize),
    /// `get_global_id(d)`.
    Global(usize),
}

impl Id {
    /// The id of the work-item `it` of a loop over the group.
    pub(super) fn of(self, it: &syn::Ident) -> TokenStream {
        match self {
            Id::Linear => quote!(#it.local_linear_id),
            Id::Local(d) => quote!(#it.local_id[#d]),
            Id::Global(d) => quote!(#it.global_id[#d]),
        }
    }

    /// The id a call on the work-item gives, if it is one of these with a
    /// literal dimension below 3.
    pub(super) fn call(m: &syn::ExprMethodCall) -> Option<Id> {
        let dim = || match m.args.first() {
            Some(Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            })) if m.args.len() == 1 => i.base10_parse::<usize>().ok().filter(|d| *d < 3),
            _ => None,
        };
        match m.method.to_string().as_str() {
            "get_local_linear_id" if m.args.is_empty() => Some(Id::Linear),
            "get_local_id" => dim().map(Id::Local),
            "get_global_id" => dim().map(Id::Global),
            _ => None,
        }
    }
}

impl Lifter {
    /// The immutable names a `let` binds to work-item ids: `let x =
    /// wi.get_local_id(0)`, or a tuple of such names and calls (`let (tx,
    /// ty) = (wi.get_local_id(0), wi.get_local_id(1))`).
    pub(super) fn id_calls(&self, local: &syn::Local) -> Vec<(String, Id)> {
        let Some(init) = &local.init else {
            return Vec::new();
        };
        let one = |p: &Pat, e: &Expr| -> Option<(String, Id)> {
            let (Pat::Ident(p), Expr::MethodCall(m)) = (p, e) else {
                return None;
            };
            if p.mutability.is_some() || p.by_ref.is_some() || p.subpat.is_some() {
                return None;
            }
            if !is_wi(&m.receiver, &self.wi) {
                return None;
            }
            Some((p.ident.to_string(), Id::call(m)?))
        };
        match (&local.pat, &*init.expr) {
            (Pat::Tuple(p), Expr::Tuple(e)) if p.elems.len() == e.elems.len() => p
                .elems
                .iter()
                .zip(&e.elems)
                .filter_map(|(p, e)| one(p, e))
                .collect(),
            (p, e) => one(p, e).into_iter().collect(),
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
    ///
    /// `pending` are the statements of the work-items' loop being gathered
    /// before `s`, whose `let`s are not bound yet: `l` may be one of them
    /// (`let l = wi.get_local_id(0); if l == 0 { … }`), and `n` or `c` may
    /// name none of them.
    pub(super) fn first_items(
        &self,
        s: &Stmt,
        pending: &[Stmt],
    ) -> Option<(TokenStream, bool, Stmt)> {
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
        // The latest `let` of `l` among the pending statements, else the
        // binding in scope.
        let pending_lets = pending.iter().rev().filter_map(|s| match s {
            Stmt::Local(local) => Some(local),
            _ => None,
        });
        let mut pending_names = HashSet::new();
        let mut id = None;
        for local in pending_lets {
            let names = pat_bindings(&local.pat);
            if id.is_none() && names.iter().any(|(n, _)| *n == name) {
                id = Some(self.id_calls(local).into_iter().find(|(n, _)| *n == name));
            }
            pending_names.extend(names.into_iter().map(|(n, _)| n));
        }
        let id = match id {
            Some(id) => id?.1,
            None => self.binding(&name)?.id?,
        };
        if mentions(bound).iter().any(|n| pending_names.contains(n)) {
            return None;
        }
        let always = match id {
            Id::Linear => true,
            Id::Local(0) => false,
            _ => return None,
        };
        if !self.uniform_expr(bound) {
            return None;
        }
        let block = &i.then_branch;
        Some((range, always, syn::parse_quote!(#block)))
    }
}
