//! Variables the group holds once instead of once per work-item: `let`s
//! of uniform values, and `let mut`s that only the group's own statements
//! change (see `uniform`).

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::{Expr, Pat, Stmt};

use super::{tokens, Fail, Lifter};
use crate::pattern::{immutable_names, pat_bindings, strip_type};
use crate::scan::is_wi;
use crate::uniform;

impl Lifter {
    /// `s` as a statement of the group, with the names it binds and whether
    /// it must keep its place among the work-items' statements, if it is:
    ///
    /// * a `let` of a value the same for every work-item
    ///   (`let n = wi.get_local_size(0)`, `let t = wi.local(tile)`), made once
    ///   by the group instead of kept per work-item (PoCL leaves uniform
    ///   values out of its context arrays the same way);
    /// * a `let mut` of such a value that only the group's own statements
    ///   change (`let mut half = 128; … half /= 2;`), or one of those
    ///   changes.
    pub(super) fn group_held(
        &mut self,
        s: &Stmt,
        rest: &[Stmt],
        after: &[Stmt],
    ) -> Result<Option<(TokenStream, Vec<String>, bool)>, Fail> {
        if let Stmt::Local(local) = s {
            let Some(init) = &local.init else {
                return Ok(None);
            };
            if init.diverge.is_some() || !self.uniform_expr(&init.expr) {
                return Ok(None);
            }
            let (pat, e) = (&local.pat, &init.expr);
            let held = quote! { let #pat = #e; };
            if immutable_names(pat) {
                let names: Vec<String> = pat_bindings(pat).into_iter().map(|b| b.0).collect();
                for name in &names {
                    self.bind(name.clone(), None, true, false);
                }
                if let (Pat::Ident(_), Expr::MethodCall(m)) = (strip_type(pat), &**e) {
                    let method = m.method.to_string();
                    if is_wi(&m.receiver, &self.wi)
                        && (method == "local" || method == "local_array")
                    {
                        if let Some(b) = self.scopes.last_mut().and_then(|s| s.last_mut()) {
                            b.view = true;
                        }
                    }
                }
                return Ok(Some((held, names, false)));
            }
            let Pat::Ident(p) = strip_type(pat) else {
                return Ok(None);
            };
            if p.by_ref.is_some() || p.subpat.is_some() {
                return Ok(None);
            }
            // Later values may use the variable itself, the group's
            // variables in scope now, parameters and constants; not a local
            // of the kernel that is not in scope yet.
            let name = p.ident.to_string();
            let uniform = |e: &Expr| {
                uniform::expr(e, &self.wi, &|n| {
                    n != name
                        && match self.lookup_uniform(n) {
                            Some(u) => !u,
                            None => self.locals.contains(n),
                        }
                })
            };
            if !(uniform::group_mutable(&p.ident, &self.wi, rest, &uniform)
                && uniform::group_mutable(&p.ident, &self.wi, after, &uniform))
            {
                return Ok(None);
            }
            self.bind(name.clone(), None, true, true);
            return Ok(Some((held, vec![name], false)));
        }
        let Some((target, value)) = uniform::assignment(s) else {
            return Ok(None);
        };
        if self.lookup_uniform(&target.to_string()) != Some(true) {
            return Ok(None);
        }
        if !self.uniform_expr(value) {
            return Err(Fail::new(
                value.span(),
                "a per-work-item value assigned to a variable the group holds",
            ));
        }
        Ok(Some((tokens(std::slice::from_ref(s)), Vec::new(), true)))
    }
}
