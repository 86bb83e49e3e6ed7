//! The async form of a kernel the lifting cannot follow: the same body with
//! each barrier awaited (`wi.barrier(f)` becomes `wi.barrier_async(f).await`),
//! for the async engine, whose work-items are futures. It takes any control
//! flow around barriers, as the coroutine engine does, at a fraction of the
//! cost per barrier (a poll, not two stack switches).
//!
//! A barrier can be awaited only where the kernel's own future reaches it:
//! in the body, not in a closure, an `async` block, a nested function or a
//! macro's arguments, and not inside a function the work-item is handed to.
//! A kernel with a barrier anywhere else, or that uses `wi` other than to
//! call one of its functions, keeps the coroutine engine.

use proc_macro2::{Span, TokenStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, FnArg, Ident, Macro, Token};

use crate::scan::{
    awaited_form, find_in_tokens, is_any_barrier, is_barrier, is_dyn_barrier, is_wi,
};

/// `body` with its barriers awaited, or why it cannot run as a future.
pub(crate) fn awaited(wi: &Ident, body: &Block) -> Result<Block, (Span, &'static str)> {
    if let Some(problem) = problem(wi, body) {
        return Err(problem);
    }
    let mut body = body.clone();
    Await { wi }.visit_block_mut(&mut body);
    Ok(body)
}

/// The first thing in `body` that its async form could not do.
fn problem(wi: &Ident, body: &Block) -> Option<(Span, &'static str)> {
    struct Check<'a> {
        wi: &'a Ident,
        /// Closures and `async` blocks entered: a barrier there is not the
        /// kernel's future's to await.
        nested: usize,
        problem: Option<(Span, &'static str)>,
    }
    impl<'ast> Visit<'ast> for Check<'_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            if self.problem.is_some() {
                return;
            }
            match e {
                Expr::Path(_) if is_wi(e, self.wi) => {
                    self.problem = Some((
                        e.span(),
                        "the work-item is used other than to call one of its functions \
                         (a function it is handed to could wait at a barrier)",
                    ));
                    return;
                }
                Expr::MethodCall(m) if is_wi(&m.receiver, self.wi) => {
                    let name = m.method.to_string();
                    if is_dyn_barrier(&name) {
                        self.problem = Some((m.method.span(), "a barrier with run-time arguments"));
                        return;
                    }
                    if self.nested > 0 && is_barrier(&name) {
                        self.problem = Some((
                            m.method.span(),
                            "a barrier inside a closure or an `async` block",
                        ));
                        return;
                    }
                    for a in &m.args {
                        self.visit_expr(a);
                    }
                    return;
                }
                Expr::Closure(_) | Expr::Async(_) => {
                    self.nested += 1;
                    visit::visit_expr(self, e);
                    self.nested -= 1;
                    return;
                }
                _ => {}
            }
            visit::visit_expr(self, e);
        }
        fn visit_macro(&mut self, m: &'ast Macro) {
            if self.problem.is_none() {
                self.problem = macro_problem(m.tokens.clone(), self.wi);
            }
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {
            // A nested function is its own: its `wi`, if any, is another
            // binding, and the body can hand it ours only by naming `wi`.
        }
    }
    let mut c = Check {
        wi,
        nested: 0,
        problem: None,
    };
    c.visit_block(body);
    c.problem
}

/// What a macro's unparsed arguments do with `wi` that the async form
/// cannot follow: a barrier (it cannot be rewritten there), or `wi`
/// handed on.
fn macro_problem(tokens: TokenStream, wi: &Ident) -> Option<(Span, &'static str)> {
    find_in_tokens(tokens, &mut |id, method| {
        if id != wi {
            return None;
        }
        match method.map(|m| m.to_string()) {
            Some(m) if is_any_barrier(&m) => {
                Some((id.span(), "a barrier inside a macro's arguments"))
            }
            Some(_) => None,
            None => Some((
                id.span(),
                "the work-item is used other than to call one of its functions",
            )),
        }
    })
}

/// Rewrites each barrier call on `wi` as its awaited form, keeping the
/// call's spans, so that the barrier's `#[track_caller]` site is the line
/// the kernel wrote.
struct Await<'a> {
    wi: &'a Ident,
}

impl VisitMut for Await<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        visit_mut::visit_expr_mut(self, e);
        let Expr::MethodCall(m) = e else {
            return;
        };
        if !is_wi(&m.receiver, self.wi) {
            return;
        }
        let Some(name) = awaited_form(&m.method.to_string()) else {
            return;
        };
        let span = m.method.span();
        let mut call = m.clone();
        call.method = Ident::new(name, span);
        *e = Expr::Await(syn::ExprAwait {
            attrs: Vec::new(),
            base: Box::new(Expr::MethodCall(call)),
            dot_token: syn::token::Dot(span),
            await_token: syn::token::Await(span),
        });
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {
        // Nested functions are left as they are (see `problem`).
    }
}

/// The kernel's parameters for its async form: the same, with the work-item
/// type's lifetime written out (`&WorkItem` becomes `&WorkItem<'_>`), which
/// an `async fn` cannot leave implicit.
pub(crate) fn async_inputs(inputs: &Punctuated<FnArg, Token![,]>) -> Punctuated<FnArg, Token![,]> {
    struct Elided;
    impl VisitMut for Elided {
        fn visit_path_segment_mut(&mut self, seg: &mut syn::PathSegment) {
            visit_mut::visit_path_segment_mut(self, seg);
            if seg.ident == "WorkItem" && seg.arguments.is_none() {
                seg.arguments = syn::PathArguments::AngleBracketed(syn::parse_quote!(<'_>));
            }
        }
    }
    let mut inputs = inputs.clone();
    for arg in &mut inputs {
        Elided.visit_fn_arg_mut(arg);
    }
    inputs
}
