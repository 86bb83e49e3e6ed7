//! What the lifting needs to know about a piece of kernel code: the names
//! it mentions, where its barriers are, and whether it does anything a loop
//! body over the work-items cannot (leave the kernel, break out of a loop
//! the group runs, hand the work-item to a function).

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::{Expr, ExprMethodCall, Ident, Macro};

/// The barrier functions of `WorkItem` that `Group` has under the same name,
/// each with its awaited form, the `WorkItem` function the async form of a
/// kernel calls instead (`awaited.rs`).
const BARRIERS: &[(&str, &str)] = &[
    ("barrier", "barrier_async"),
    ("work_group_barrier", "work_group_barrier_async"),
    ("work_group_barrier_scope", "work_group_barrier_scope_async"),
    ("sub_group_barrier", "sub_group_barrier_async"),
    ("sub_group_barrier_scope", "sub_group_barrier_scope_async"),
];

/// Barriers with run-time arguments: the coroutine engine's only.
const DYN_BARRIERS: &[&str] = &["barrier_dyn", "barrier_dyn_at"];

/// The awaited form of the barrier `name`; `None` if it is not one of
/// [`BARRIERS`].
pub(crate) fn awaited_form(name: &str) -> Option<&'static str> {
    BARRIERS
        .iter()
        .find(|(barrier, _)| *barrier == name)
        .map(|&(_, awaited)| awaited)
}

/// Whether `name` is one of [`BARRIERS`], the barriers with types for
/// arguments.
pub(crate) fn is_barrier(name: &str) -> bool {
    awaited_form(name).is_some()
}

/// Whether `name` is a barrier of either kind: typed, or with run-time
/// arguments.
pub(crate) fn is_any_barrier(name: &str) -> bool {
    is_barrier(name) || is_dyn_barrier(name)
}

/// Whether `name` is a barrier with run-time arguments.
pub(crate) fn is_dyn_barrier(name: &str) -> bool {
    DYN_BARRIERS.contains(&name)
}

/// The functions of `WorkItem` that `Lane` has too.
const LANE_METHODS: &[&str] = &[
    "ids",
    "get_work_dim",
    "get_global_size",
    "get_global_id",
    "get_global_offset",
    "get_local_size",
    "get_enqueued_local_size",
    "get_local_id",
    "get_num_groups",
    "get_group_id",
    "get_global_linear_id",
    "get_local_linear_id",
    "get_sub_group_size",
    "get_max_sub_group_size",
    "get_num_sub_groups",
    "get_enqueued_num_sub_groups",
    "get_sub_group_id",
    "get_sub_group_local_id",
    "atomic_work_item_fence",
    "mem_fence",
    "read_mem_fence",
    "write_mem_fence",
    "local",
    "local_array",
];

/// Every identifier in `code`, macro arguments included: the names it may
/// use. A superset (field and method names count too), which costs at most
/// a variable copied that did not need to be.
pub(crate) fn mentions(code: impl ToTokens) -> HashSet<String> {
    fn walk(tokens: TokenStream, out: &mut HashSet<String>) {
        for t in tokens {
            match t {
                TokenTree::Ident(i) => {
                    out.insert(i.to_string());
                }
                TokenTree::Group(g) => walk(g.stream(), out),
                _ => {}
            }
        }
    }
    let mut out = HashSet::new();
    walk(code.into_token_stream(), &mut out);
    out
}

/// The first barrier call on `wi` in `code`, anywhere (closures included).
pub(crate) fn first_barrier<T: ToTokens>(wi: &Ident, code: &T) -> Option<Span> {
    first_call(wi, code, is_any_barrier)
}

/// The first sub-group barrier call on `wi` in `code` (either typed form),
/// anywhere: a barrier that only its sub-group must reach together
/// (`002_6c32435e912a3710.txt`), so sub-groups may reach it apart.
pub(crate) fn first_sub_group_barrier<T: ToTokens>(wi: &Ident, code: &T) -> Option<Span> {
    first_call(wi, code, |name| {
        is_barrier(name) && name.starts_with("sub_group_barrier")
    })
}

/// The first call on `wi` of a function `wanted` accepts, in `code`
/// (closures and macro arguments included).
fn first_call<T: ToTokens>(wi: &Ident, code: &T, wanted: fn(&str) -> bool) -> Option<Span> {
    struct Find<'a> {
        wi: &'a Ident,
        wanted: fn(&str) -> bool,
        found: Option<Span>,
    }
    impl<'ast> Visit<'ast> for Find<'_> {
        fn visit_expr_method_call(&mut self, m: &'ast ExprMethodCall) {
            if self.found.is_none()
                && is_wi(&m.receiver, self.wi)
                && (self.wanted)(&m.method.to_string())
            {
                self.found = Some(m.span());
                return;
            }
            visit::visit_expr_method_call(self, m);
        }
        fn visit_macro(&mut self, m: &'ast Macro) {
            // A barrier in a macro's arguments (`assert!(…)`) is one too.
            if self.found.is_none() && tokens_call(m.tokens.clone(), self.wi, self.wanted) {
                self.found = Some(m.span());
            }
        }
    }
    let file: syn::File = syn::parse_quote!(fn __scan() { #code });
    let mut f = Find {
        wi,
        wanted,
        found: None,
    };
    f.visit_file(&file);
    f.found
}

/// Whether `tokens` contain `wi . <name>` with `wanted(name)`.
fn tokens_call(tokens: TokenStream, wi: &Ident, wanted: fn(&str) -> bool) -> bool {
    find_in_tokens(tokens, &mut |id, method| {
        (id == wi && wanted(&method?.to_string())).then_some(())
    })
    .is_some()
}

/// Walks the unparsed tokens of a macro's arguments, groups included, and
/// calls `f` with each identifier and, when `. name` follows it, that name
/// (the method or field it is the receiver of); stops at the first `Some`.
pub(crate) fn find_in_tokens<P>(
    tokens: TokenStream,
    f: &mut impl FnMut(&Ident, Option<&Ident>) -> Option<P>,
) -> Option<P> {
    let v: Vec<TokenTree> = tokens.into_iter().collect();
    v.iter().enumerate().find_map(|(i, t)| match t {
        TokenTree::Group(g) => find_in_tokens(g.stream(), f),
        TokenTree::Ident(id) => {
            let method = match (v.get(i + 1), v.get(i + 2)) {
                (Some(TokenTree::Punct(p)), Some(TokenTree::Ident(m))) if p.as_char() == '.' => {
                    Some(m)
                }
                _ => None,
            };
            f(id, method)
        }
        _ => None,
    })
}

/// Whether `e` is the path `wi`.
pub(crate) fn is_wi(e: &Expr, wi: &Ident) -> bool {
    matches!(e, Expr::Path(p) if p.qself.is_none() && p.path.is_ident(wi))
}

/// Why `code`, run as the body of a loop over the work-items, would not do
/// what it does in the work-item: the first `return`, `?`, `break` or
/// `continue` that leaves it, or a use of `wi` that a `Lane` cannot stand
/// in for.
pub(crate) fn loop_body_problem<T: ToTokens>(wi: &Ident, code: &T) -> Option<(Span, String)> {
    check(wi, code).problem
}

/// How many `return`s, `?`s, `break`s and `continue`s can leave `code` (a
/// loop's body: its iteration or the loop itself), those in a macro's
/// arguments included; the ones inside a loop or closure of `code`'s own
/// stay there and do not count.
pub(crate) fn exits<T: ToTokens>(wi: &Ident, code: &T) -> usize {
    check(wi, code).exits
}

/// What `loop_body_problem` and `exits` ask of a piece of code.
struct Check<'a> {
    wi: &'a Ident,
    /// Loops entered inside the code: a `break` there stays inside.
    loops: usize,
    /// Closures entered: `return` and `?` there leave the closure only.
    closures: usize,
    problem: Option<(Span, String)>,
    /// Exits from the code.
    exits: usize,
}

impl Check<'_> {
    fn flag(&mut self, span: Span, why: &str) {
        self.problem.get_or_insert((span, why.to_string()));
    }
    fn exit(&mut self, span: Span, why: &str) {
        self.exits += 1;
        self.flag(span, why);
    }
}

impl<'ast> Visit<'ast> for Check<'_> {
    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::Return(_) if self.closures == 0 => self.exit(
                e.span(),
                "a `return` that only some work-items may take ends their run early \
                 (one the whole group takes, alone or in an `if` of a uniform condition, is lifted)",
            ),
            Expr::Try(_) if self.closures == 0 => self.exit(
                e.span(),
                "a `?` between barriers may end one work-item early",
            ),
            Expr::Break(_) | Expr::Continue(_) if self.loops == 0 => self.exit(
                e.span(),
                "a `break` or `continue` out of a loop that holds a barrier, \
                 behind a condition that is not uniform",
            ),
            Expr::Path(_) if is_wi(e, self.wi) => self.flag(
                e.span(),
                "the work-item is used other than to call one of its functions",
            ),
            Expr::MethodCall(m) if is_wi(&m.receiver, self.wi) => {
                let name = m.method.to_string();
                if !LANE_METHODS.contains(&name.as_str()) {
                    self.flag(
                        m.method.span(),
                        "a work-item function the group-level form does not have",
                    );
                }
                for a in &m.args {
                    self.visit_expr(a);
                }
                return;
            }
            Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) => {
                self.loops += 1;
                visit::visit_expr(self, e);
                self.loops -= 1;
                return;
            }
            Expr::Closure(_) | Expr::Async(_) => {
                let loops = std::mem::replace(&mut self.loops, 0);
                self.closures += 1;
                visit::visit_expr(self, e);
                self.closures -= 1;
                self.loops = loops;
                return;
            }
            _ => {}
        }
        visit::visit_expr(self, e);
    }
    fn visit_macro(&mut self, m: &'ast Macro) {
        if let Some((span, why)) = macro_problem(m.tokens.clone(), self.wi) {
            self.flag(span, why);
        }
        self.exits += exit_words(m.tokens.clone());
    }
    fn visit_item(&mut self, _: &'ast syn::Item) {
        // Items inside the body are their own functions.
    }
}

fn check<'a, T: ToTokens>(wi: &'a Ident, code: &T) -> Check<'a> {
    // The code as a block: visited from the block, not from an enclosing
    // function item, which `visit_item` above skips.
    let block: syn::Block = syn::parse_quote!({ #code });
    let mut c = Check {
        wi,
        loops: 0,
        closures: 0,
        problem: None,
        exits: 0,
    };
    c.visit_block(&block);
    c
}

/// How many of `return`, `break` and `continue` a macro's unparsed
/// arguments hold (all of them: where they lead is not known).
fn exit_words(tokens: TokenStream) -> usize {
    tokens
        .into_iter()
        .map(|t| match t {
            TokenTree::Ident(i) => usize::from(i == "return" || i == "break" || i == "continue"),
            TokenTree::Group(g) => exit_words(g.stream()),
            _ => 0,
        })
        .sum()
}

/// `loop_body_problem` for the unparsed arguments of a macro.
fn macro_problem(tokens: TokenStream, wi: &Ident) -> Option<(Span, &'static str)> {
    find_in_tokens(tokens, &mut |id, method| {
        if id == "return" || id == "break" || id == "continue" {
            return Some((id.span(), "control flow that leaves the work-item's code"));
        }
        let lane_method = method.is_some_and(|m| LANE_METHODS.contains(&m.to_string().as_str()));
        (id == wi && !lane_method).then(|| {
            (
                id.span(),
                "the work-item is used other than to call one of its functions",
            )
        })
    })
}
