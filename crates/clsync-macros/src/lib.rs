//! `#[kernel]`: a kernel written per work-item, as in OpenCL C, lifted into
//! group-level loops when its barriers sit in control flow the whole group
//! takes together. Use it through `clsync::kernel`; its documentation there
//! describes what it generates and the rules.
//!
//! The lifting, as PoCL's work-item loops do it in a compiler:
//!
//! * the statements between two barriers become one `Group::for_each` loop,
//!   with the work-item as a `Lane`;
//! * a variable declared before a barrier and named after it lives in a
//!   `Slots` vector, one value per work-item, read into the loop body and
//!   written back after it;
//! * a `for` with no barrier whose body assigns a per-work-item variable
//!   declared before it, over a uniform range, is run by the group, each
//!   iteration a loop over the work-items (`lift/interchange.rs`), or, over
//!   a range in an unchecked launch, in register blocks of a row's
//!   work-items (`lift/blocked.rs`); a tuple `let` is taken as one `let` per
//!   element (`pattern.rs`);
//! * a stretch that names no id but the local linear one loops over that
//!   id alone (`Group::for_each_linear`);
//! * a local array's or a buffer's `get` and `set`, and a `&[T]`
//!   parameter's `src[i]`, at an index that only grows with the ids is
//!   checked once per loop, by the largest work-item's index, and the loop
//!   then runs unchecked (`lift/bounds.rs`);
//! * a local array's `get` and `set` that no other work-item's access in
//!   the same barrier interval can conflict with become `get_race_free` and
//!   `set_race_free`, and a written buffer each work-item accesses only at
//!   its own global id is reached through `Group::global_owned`: a checked
//!   launch does not check them access by access (`race_free.rs`);
//! * `for`, `while`, `loop`, `if` and blocks that contain a barrier are run
//!   by the group; their condition is evaluated by every work-item through
//!   `Group::uniform`, which stops the group with a barrier divergence if
//!   the work-items disagree;
//! * a `match` that contains a barrier is run by the group when its value
//!   and guards are uniform by their syntax (`uniform.rs`);
//! * `break;`, `continue;` and `return;` are run by the group when they are
//!   taken by all work-items or none, by their syntax: alone, or as the
//!   body of an `if` whose condition is uniform (`lift/group.rs`,
//!   `is_uniform_exit`); a loop's only exit, `if cond { break; }` under a
//!   work-group barrier at the top of the loop, also with a condition every
//!   work-item evaluates and `Group::uniform` checks (`checked_break`);
//! * a sub-group barrier under a condition that is not uniform by its
//!   syntax is not lifted: only its sub-group must agree on it, and
//!   `Group::uniform` would hold the whole group to the condition;
//! * anything else around a barrier (a `match` on a per-work-item value, a
//!   `break` or `return` behind a per-work-item condition) keeps the kernel
//!   on a general engine, which takes any control flow: the async engine,
//!   with each barrier awaited (`awaited.rs`), where the barriers are the
//!   kernel's own to await, else the coroutine engine (a barrier in a
//!   closure, the work-item passed to a function).
//!
//! Where to start reading: `kernel` (the attribute's entry), then `lift`
//! (the group-level form).

mod awaited;
mod lift;
mod pattern;
mod race_free;
mod scan;
mod uniform;

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as Tokens};
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{parse_macro_input, FnArg, Ident, ItemFn, Pat, ReturnType};

/// See `clsync::kernel`.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let attr = Tokens::from(attr);
    let require = match attr.to_string().as_str() {
        "" => false,
        "groups" => true,
        _ => {
            return syn::Error::new(
                attr.span(),
                "#[kernel] takes nothing, or `groups` to require the group-level form",
            )
            .to_compile_error()
            .into()
        }
    };
    let f = parse_macro_input!(item as ItemFn);
    match expand(require, f) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// A kernel parameter after the work-item: its name and type.
struct Param {
    name: Ident,
    ty: syn::Type,
}

fn expand(require: bool, f: ItemFn) -> syn::Result<Tokens> {
    let sig = &f.sig;
    if let ReturnType::Type(_, ty) = &sig.output {
        return Err(syn::Error::new(ty.span(), "a #[kernel] returns nothing"));
    }
    if let Some(a) = &sig.asyncness {
        return Err(syn::Error::new(
            a.span(),
            "a #[kernel] is not async (the async engine takes `async` closures)",
        ));
    }
    let mut inputs = sig.inputs.iter();
    let wi = match inputs.next() {
        Some(FnArg::Typed(t)) => match &*t.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
            other => {
                return Err(syn::Error::new(
                    other.span(),
                    "the work-item parameter is a plain name: `wi: &WorkItem`",
                ))
            }
        },
        _ => {
            return Err(syn::Error::new(
                sig.inputs.span(),
                "a #[kernel]'s first parameter is the work-item: `wi: &WorkItem`",
            ))
        }
    };
    let mut params = Vec::new();
    let mut mutable = None;
    for arg in inputs {
        let FnArg::Typed(t) = arg else {
            return Err(syn::Error::new(
                arg.span(),
                "a #[kernel] is a free function",
            ));
        };
        let Pat::Ident(p) = &*t.pat else {
            return Err(syn::Error::new(
                t.pat.span(),
                "#[kernel] parameters are plain names",
            ));
        };
        if p.mutability.is_some() {
            mutable.get_or_insert(p.span());
        }
        params.push(Param {
            name: p.ident.clone(),
            ty: (*t.ty).clone(),
        });
    }

    let lifted = match mutable {
        Some(span) => Err(lift::Fail::new(
            span,
            "a `mut` parameter is per-work-item state; copy it into a `let`",
        )),
        None => {
            // Buffers the body only reads, writes and takes atomics of are
            // reached through views, which the loops keep in registers.
            let viewed: Vec<&Ident> = params
                .iter()
                .filter(|p| is_buffer_ref(&p.ty) && only_methods(&p.name, &f.block, VIEW_METHODS))
                .map(|p| &p.name)
                .collect();
            // Of those, the ones it only reads, which nothing else can
            // write where every parameter is of a kind whose memory the
            // launch can compare: the checker need not record their reads
            // (`Group::global_unwritten`), where no other buffer overlaps.
            let read: Vec<&Ident> = viewed
                .iter()
                .copied()
                .filter(|n| only_methods(n, &f.block, READ_METHODS))
                .filter(|_| params.iter().all(|p| is_comparable(&p.ty)))
                .collect();
            let written: Vec<&Ident> = params
                .iter()
                .filter(|p| is_buffer_ref(&p.ty) && !read.contains(&&p.name))
                .map(|p| &p.name)
                .collect();
            let g = Ident::new("__clsync_g", Span::mixed_site());
            // What the barrier intervals prove (`race_free.rs`): local
            // accesses, and written buffers each work-item accesses only
            // at its own element, where the parameters are comparable.
            let local_args: Vec<&Ident> = params
                .iter()
                .filter(|p| is_local_arg(&p.ty))
                .map(|p| &p.name)
                .collect();
            let comparable = params.iter().all(|p| is_comparable(&p.ty));
            let candidates: Vec<&Ident> = viewed
                .iter()
                .copied()
                .filter(|n| comparable && !read.contains(n))
                .collect();
            let proofs = race_free::prove(&wi, &g, &f.block, &local_args, &candidates);
            // The buffers' memory, taken before any name is rebound to a
            // view.
            let memory = Ident::new("__clsync_written", Span::mixed_site());
            let all = Ident::new("__clsync_buffers", Span::mixed_site());
            let buffers: Vec<&Ident> = params
                .iter()
                .filter(|p| is_buffer_ref(&p.ty))
                .map(|p| &p.name)
                .collect();
            let mut views: Vec<Tokens> = Vec::new();
            if let Some(trust) = &proofs.trust {
                views.push(quote! { #g.trust_race_free(#trust); });
            }
            if !read.is_empty() {
                views.push(quote! { let #memory = [#(#written.raw_bytes()),*]; });
            }
            if !proofs.owned.is_empty() {
                views.push(quote! { let #all = [#(#buffers.raw_bytes()),*]; });
            }
            views.extend(viewed.iter().map(|n| {
                if read.contains(n) {
                    return quote! { let #n = #g.global_unwritten(#n, &#memory); };
                }
                let Some((_, unique)) = proofs.owned.iter().find(|(b, _)| b == *n) else {
                    return quote! { let #n = #g.global(#n); };
                };
                // Every other buffer's memory.
                let others = (0..buffers.len()).filter(|i| buffers[*i] != *n);
                quote! {
                    let #n = if #unique {
                        #g.global_owned(#n, &[#(#all[#others]),*])
                    } else {
                        #g.global(#n)
                    };
                }
            }));
            let lift_params = lift::Params {
                buffers: viewed.iter().map(|n| n.to_string()).collect(),
                slices: params
                    .iter()
                    .filter(|p| is_slice_ref(&p.ty))
                    .map(|p| p.name.to_string())
                    .collect(),
            };
            lift::lift(&wi, &proofs.body, lift_params).map(|body| {
                quote! { #(#views)* #body }
            })
        }
    };
    if require {
        if let Err(fail) = &lifted {
            return Err(syn::Error::new(
                fail.span,
                format!(
                    "#[kernel(groups)]: this kernel cannot run as group-level loops: {}",
                    fail.reason
                ),
            ));
        }
    }

    let name = &sig.ident;
    let vis = &f.vis;
    let (generics, where_clause) = (&sig.generics, &sig.generics.where_clause);
    let groups_name = format_ident!("{}_groups", name);
    let launch_name = format_ident!("{}_launch", name);
    let names: Vec<&Ident> = params.iter().map(|p| &p.name).collect();
    let typed: Vec<Tokens> = params
        .iter()
        .map(|p| {
            let (n, t) = (&p.name, &p.ty);
            quote!(#n: #t)
        })
        .collect();
    let g = Ident::new("__clsync_g", Span::mixed_site());
    let rt = Ident::new("__clsync_rt", Span::mixed_site());
    let launch = Ident::new("__clsync_launch", Span::mixed_site());
    let original = quote! {
        #[allow(dead_code)]
        #f
    };
    let groups_doc = format!(
        "The group-level form of [`{name}`], lifted by `#[kernel]`: call it \
         from `Runtime::launch_groups`, or run it with [`{launch_name}`]."
    );
    let wi_c = Ident::new("__clsync_wi", Span::mixed_site());
    let (groups_fn, launch_body, engine, form) = match lifted {
        Ok(body) => (
            quote! {
                #[doc = #groups_doc]
                #[allow(dead_code, unused_variables, unused_mut, unused_braces, unused_unsafe, clippy::all)]
                #vis fn #groups_name #generics (#g: &::clsync::Group<'_>, #(#typed),*) #where_clause {
                    #body
                }
            },
            quote! { #rt.launch_groups(#launch, |#g| #groups_name(#g, #(#names),*)) },
            "as group-level loops (its barriers sit in uniform control flow)",
            quote!(Groups),
        ),
        Err(_) => match awaited::awaited(&wi, &f.block) {
            Ok(body) => {
                let async_name = format_ident!("__clsync_{}_async", name);
                let inputs = awaited::async_inputs(&sig.inputs);
                (
                    quote! {
                        #[allow(dead_code, unused_mut, unused_braces, clippy::all)]
                        async fn #async_name #generics (#inputs) #where_clause #body
                    },
                    quote! {
                        #rt.launch_async(#launch, async |#wi_c| #async_name(#wi_c, #(#names),*).await)
                    },
                    "on the async engine, each barrier awaited (its barriers sit where the \
                     group-level form cannot follow them)",
                    quote!(Async),
                )
            }
            Err(_) => (
                quote! {},
                quote! { #rt.launch(#launch, |#wi_c| #name(#wi_c, #(#names),*)) },
                "on the coroutine engine (a barrier sits where neither the group-level \
                 form nor an awaited one can follow it)",
                quote!(Coroutines),
            ),
        },
    };
    let form_name = format_ident!("{}_form", name);
    let form_doc = format!("Which engine [`{launch_name}`] runs [`{name}`] on.");
    let launch_doc = format!("Runs [`{name}`] over `launch`, {engine}.");
    Ok(quote! {
        #original
        #groups_fn
        #[doc = #form_doc]
        #[allow(dead_code)]
        #vis fn #form_name() -> ::clsync::engine::KernelForm {
            ::clsync::engine::KernelForm::#form
        }
        #[doc = #launch_doc]
        #[allow(dead_code, clippy::too_many_arguments)]
        #vis fn #launch_name #generics (
            #rt: &::clsync::Runtime,
            #launch: &::clsync::Launch,
            #(#typed),*
        ) -> ::core::result::Result<::clsync::LaunchSummary, ::clsync::LaunchError> #where_clause {
            #launch_body
        }
    })
}

/// Whether `ty` is `&Buffer<…>` (by its last path segment).
fn is_buffer_ref(ty: &syn::Type) -> bool {
    let syn::Type::Reference(r) = ty else {
        return false;
    };
    matches!(&*r.elem, syn::Type::Path(p)
        if p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "Buffer"))
}

/// Whether `ty` is `LocalArg<…>` (by its last path segment).
fn is_local_arg(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p)
        if p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "LocalArg"))
}

/// Whether `ty` is `&[…]`, a shared slice: constant global memory.
fn is_slice_ref(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Reference(r) if r.mutability.is_none() && matches!(&*r.elem, syn::Type::Slice(_)))
}

/// What a `BufferView` has: the methods a buffer's every use must be for
/// the lifted kernel to reach it through a view.
const VIEW_METHODS: &[&str] = &["get", "set", "at", "prefetch", "len", "is_empty"];

/// The methods that only read a buffer (`at` gives an atomic, which may
/// write).
const READ_METHODS: &[&str] = &["get", "prefetch", "len", "is_empty"];

/// Whether a parameter of type `ty` holds no memory the launch cannot
/// compare with a read-only buffer's: a buffer (compared by address), a
/// shared slice of numbers (constant), a local argument (local memory), or
/// a number. Anything else (a slice of buffers, a struct) might reach the
/// buffer and write it.
fn is_comparable(ty: &syn::Type) -> bool {
    const NUMBERS: &[&str] = &[
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
        "f32", "f64", "bool", "char",
    ];
    let path_is = |ty: &syn::Type, ok: &dyn Fn(&syn::TypePath) -> bool| matches!(ty, syn::Type::Path(p) if p.qself.is_none() && ok(p));
    let number = |p: &syn::TypePath| {
        p.path.segments.len() == 1
            && NUMBERS.contains(&p.path.segments[0].ident.to_string().as_str())
    };
    let local = |p: &syn::TypePath| {
        p.path
            .segments
            .last()
            .is_some_and(|s| s.ident == "LocalArg")
    };
    let numbers = matches!(ty, syn::Type::Reference(r) if r.mutability.is_none()
        && matches!(&*r.elem, syn::Type::Slice(s) if path_is(&s.elem, &number)));
    is_buffer_ref(ty) || numbers || path_is(ty, &number) || path_is(ty, &local)
}

/// Whether every use of `name` in `body` is a call of one of `methods`
/// (`name.get(…)`, `name.len()`, …).
fn only_methods(name: &Ident, body: &syn::Block, methods: &[&str]) -> bool {
    use proc_macro2::TokenTree;
    fn walk(tokens: Tokens, name: &Ident, methods: &[&str]) -> bool {
        let v: Vec<TokenTree> = tokens.into_iter().collect();
        v.iter().enumerate().all(|(i, t)| match t {
            TokenTree::Group(g) => walk(g.stream(), name, methods),
            TokenTree::Ident(id) if id == name => {
                let dot = matches!(v.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '.');
                let method = matches!(v.get(i + 2), Some(TokenTree::Ident(m))
                    if methods.contains(&m.to_string().as_str()));
                // `x.name` (a field of that name) is not a use.
                let field = i > 0 && matches!(&v[i - 1], TokenTree::Punct(p) if p.as_char() == '.');
                field || (dot && method)
            }
            _ => true,
        })
    }
    walk(quote::ToTokens::into_token_stream(body), name, methods)
}
