//! An interchanged loop (see `interchange`) run in register blocks: the
//! group's work-items taken [`BLOCK`] at a time along a row, or
//! [`NARROW_BLOCK`] where rows are shorter (`Group::for_each_block`), and
//! for each block the whole loop, each iteration one pass over the block's
//! work-items, with the values the loop carries kept in an array of the
//! block's size for the whole loop instead of in their slots.
//!
//! The interchanged loop reads and writes each work-item's carried value
//! once per [`JAM`](super::interchange) iterations, and runs a loop over a
//! row of work-items, with its set-up and its run-time overlap tests (the
//! slots might alias the views, for all the compiler knows), as often. In
//! a block, the array is the block function's own, so the compiler keeps
//! it in vector registers, unrolls the pass over the block and vectorizes
//! it: `#[kernel]` SGEMM went from 15–18 to 40–47 GFLOP/s with it (2-core
//! VM, two threads, against 50–52 for the plain-Rust limit), and with 8 × 8
//! tiles, in blocks of eight, from 6.7–7.4 to 15.0–15.5.
//!
//! Unlike the jam, which copies the body once per iteration it runs
//! together and so takes only a few plain statements, a block runs the
//! body as written, once per work-item and iteration: a body with `let`s,
//! branches, inner loops, closures or macros runs in blocks too, if the
//! loop is over a range and assigns no variable the group holds.
//!
//! It keeps each work-item's statements in their order, as the interchange
//! does; only the interleaving across work-items changes, which between two
//! barriers is the group's to choose. Blocks are for unchecked launches
//! whose rows hold a narrow block, and whose accesses are in bounds at every
//! iteration (the test of `bounds`, made once per iteration before the
//! blocks run); else the interchanged loop runs as before. The work-items
//! past a row's last whole block each run the whole loop on their own.

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{Expr, ExprForLoop, Ident};

use super::group::group_bindings;
use super::interchange::{assigned, token_count};
use super::Lifter;
use crate::scan::mentions;

/// Work-items in a block: sixteen lanes of `f32` are one 512-bit vector or
/// two 256-bit ones. One block's loop is a chain per lane (each iteration
/// waits for the last one's value); the next block's, independent, overlaps
/// it out of order. Blocks of two rows' segments, more chains at once, were
/// slower: the compiler no longer unrolled the pass over them.
const BLOCK: usize = 16;

/// Work-items in a block where a row holds fewer than [`BLOCK`] (an 8 × 8
/// tile): eight lanes of `f32`, one 256-bit vector.
const NARROW_BLOCK: usize = 8;

/// A body larger than this (in tokens, the loop's own included) does not
/// run in blocks: the pass over a block and the work-items left over, for
/// each of the two widths, are four more copies of it.
const MAX_BLOCKED_TOKENS: usize = 1200;

impl Lifter {
    /// The register-blocked form of the interchangeable loop `f`, whose
    /// range is bound to `range`: a `bool` condition under which it may
    /// run, and its code. `live` holds the names used after the loop and
    /// those the loop carries. `None` where the loop may not run so: its
    /// iterator is not a range (`a..b`, `a..=b`: `Clone`, so that each
    /// block runs it again), its body assigns a variable the group holds
    /// (which the group, not each work-item, must assign), is longer than
    /// [`MAX_BLOCKED_TOKENS`], or names a per-work-item variable with no
    /// slot and no id.
    pub(super) fn blocked(
        &mut self,
        f: &ExprForLoop,
        range: &Ident,
        live: &HashSet<String>,
    ) -> Option<(TokenStream, TokenStream)> {
        let Expr::Range(r) = &*f.expr else {
            return None;
        };
        let assigns_group = assigned(&f.body).iter().any(|n| !self.per_item(n));
        if r.start.is_none()
            || r.end.is_none()
            || assigns_group
            || token_count(quote!(#f)) > MAX_BLOCKED_TOKENS
        {
            return None;
        }
        let body = &f.body.stmts;
        let code = quote!(#(#body)*);
        // The loop's variable is the group's, and hides any per-item
        // variable of its name.
        self.scopes.push(group_bindings(&f.pat));
        let made = self.blocked_in_scope(f, range, live, &code);
        self.scopes.pop();
        made
    }

    /// `blocked`, with the loop's variable in scope.
    fn blocked_in_scope(
        &self,
        f: &ExprForLoop,
        range: &Ident,
        live: &HashSet<String>,
        code: &TokenStream,
    ) -> Option<(TokenStream, TokenStream)> {
        let used = mentions(code);
        let ins = self.visible(&used);
        let ids = self.visible_ids(&used);
        let unknown = used.iter().any(|n| {
            self.per_item(n) && !ins.iter().any(|(i, _)| i == n) && !ids.iter().any(|(i, _)| i == n)
        });
        if unknown {
            return None;
        }
        let outs: Vec<&(String, usize)> = ins
            .iter()
            .filter(|(n, _)| live.contains(n) && self.is_mut(n))
            .collect();
        let (test, code, views) = match self.hoist_bounds(code, None) {
            Some(h) => (h.test, h.code, h.views),
            None => (quote!(true), code.clone(), Vec::new()),
        };
        let (g, it, l) = (&self.g, &self.it, &self.l);
        let pat = &f.pat;
        let b = Ident::new("__clsync_b", Span::mixed_site());
        let x = Ident::new("__clsync_x", Span::mixed_site());
        let lane = self.lane_let(&code);
        let id_lets = self.id_lets(&ids);
        let array = |n: &str| format_ident!("__clsync_block_{}", n, span = Span::mixed_site());
        let name = |n: &str| Ident::new(n, Span::call_site());
        // SAFETY (of the generated reads and writes): an item of the block
        // is a work-item of this group, whose value every work-item wrote
        // when its `let` ran, in an earlier loop; the loops only copy values
        // in and out of slots.
        let loads = |width: usize| {
            ins.iter()
                .map(|(n, slot)| {
                    let (a, ptr) = (array(n), self.slot(*slot));
                    quote! {
                        #[allow(unused_mut)]
                        let mut #a: [_; #width] = ::core::array::from_fn(|#x| unsafe {
                            #ptr.read(#b.item(#x).local_linear_id)
                        });
                    }
                })
                .collect::<TokenStream>()
        };
        let reads = ins.iter().map(|(n, _)| {
            let (a, n) = (array(n), name(n));
            quote! {
                #[allow(unused_mut, unused_variables)]
                let mut #n = #a[#x];
            }
        });
        let reads = quote!(#(#reads)*);
        let writes = outs.iter().map(|(n, _)| {
            let (a, n) = (array(n), name(n));
            quote! { #a[#x] = #n; }
        });
        let writes = quote!(#(#writes)*);
        let stores = outs.iter().map(|(n, slot)| {
            let (a, ptr) = (array(n), self.slot(*slot));
            quote! {
                #b.each(|#x, #it| unsafe { #ptr.write(#it.local_linear_id, #a[#x]) });
            }
        });
        let stores = quote!(#(#stores)*);
        // The work-items in no block: the whole loop each, their values in
        // their slots.
        let one = self.item_code(
            &ids,
            &ins,
            &outs.iter().map(|o| (*o).clone()).collect::<Vec<_>>(),
            &quote! {
                for #pat in ::core::clone::Clone::clone(#range) { #code }
            },
            quote!(),
        );
        let blocks_of = |width: usize| {
            let loads = loads(width);
            quote! {
                #g.for_each_block::<#width>(
                    move |#b| {
                        #loads
                        for #pat in ::core::clone::Clone::clone(#range) {
                            #b.each(|#x, #it| {
                                #[allow(unused_variables)]
                                let #l = #it.local_linear_id;
                                #lane
                                #id_lets
                                #reads
                                #code
                                #writes
                            });
                        }
                        #stores
                    },
                    move |#it| { #one },
                );
            }
        };
        let (wide, narrow) = (blocks_of(BLOCK), blocks_of(NARROW_BLOCK));
        let blocks = quote! {
            #(let #views = #g.in_mode(#views);)*
            if #g.get_local_size(0) >= #BLOCK { #wide } else { #narrow }
        };
        // Every iteration's accesses in bounds, tested as the interchanged
        // loop tests each iteration's, before any runs.
        let condition = quote! {
            !#g.is_checked()
                && #g.get_local_size(0) >= #NARROW_BLOCK
                && ::core::iter::Iterator::all(
                    &mut ::core::clone::Clone::clone(#range),
                    |#[allow(unused_variables)] #pat| (|| -> ::core::option::Option<bool> {
                        ::core::option::Option::Some(#test)
                    })()
                    .unwrap_or(false),
                )
        };
        Some((condition, blocks))
    }
}
