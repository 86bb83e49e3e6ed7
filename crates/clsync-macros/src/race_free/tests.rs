//! The proofs on small kernels: which accesses are renamed.

use super::*;
use proc_macro2::Span;

fn proofs(src: &str) -> (String, bool, Vec<String>) {
    let f: syn::ItemFn = syn::parse_str(src).unwrap();
    let wi = Ident::new("wi", Span::call_site());
    let tile = Ident::new("tile", Span::call_site());
    let data = Ident::new("data", Span::call_site());
    let g = Ident::new("__clsync_g", Span::mixed_site());
    let p = prove(&wi, &g, &f.block, &[&tile], &[&data]);
    let owned = p.owned.iter().map(|(b, _)| b.to_string()).collect();
    (
        p.body.to_token_stream().to_string(),
        p.trust.is_some(),
        owned,
    )
}

#[test]
fn a_scan_proves_its_own_elements_and_its_intervals_of_reads() {
    let (body, trust, owned) = proofs(
        "fn k(wi: &WorkItem, data: &Buffer<i32>, tile: LocalArg<i32>) {
            let l = wi.get_local_id(0);
            let g = wi.get_global_id(0);
            let t = wi.local(tile);
            t.set(l, data.get(g));
            let mut offset = 1;
            while offset < 256 {
                wi.barrier(LOCAL);
                let add = if l >= offset { t.get(l - offset) } else { 0 };
                wi.barrier(LOCAL);
                t.set(l, t.get(l) + add);
                offset *= 2;
            }
            data.set(g, t.get(l));
        }",
    );
    assert!(trust);
    assert_eq!(owned, ["data"]);
    assert_eq!(body.matches("get_race_free").count(), 3, "{body}");
    assert_eq!(body.matches("set_race_free").count(), 2, "{body}");
}

#[test]
fn a_tree_reduction_writes_below_half_and_reads_above_it() {
    let (body, trust, _) = proofs(
        "fn k(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>) {
            let l = wi.get_local_id(0);
            let s = wi.local(tile);
            s.set(l, 1);
            let mut half = 128;
            while half > 0 {
                wi.barrier(LOCAL);
                if l < half && l + half < wi.get_local_size(0) {
                    s.set(l, s.get(l) + s.get(l + half));
                }
                half /= 2;
            }
            if l == 0 {
                out.set(wi.get_group_id(0), s.get(0));
            }
        }",
    );
    assert!(trust);
    // Every access: the last interval's `s.get(0)` is work-item 0's own.
    assert_eq!(body.matches("get_race_free").count(), 3, "{body}");
    assert_eq!(body.matches("set_race_free").count(), 2, "{body}");
}

#[test]
fn a_split_that_changes_within_its_interval_or_per_work_item_proves_nothing() {
    for (split, change) in [
        // Halved between the write below it and the read above it.
        ("let mut half = 128;", "half /= 2;"),
        // Each work-item's own.
        ("let half = l / 2 + 1;", ""),
        // Changed under a work-item's own condition.
        ("let mut half = 128;", "if l == 3 { half = 2; }"),
    ] {
        let (body, _, _) = proofs(&format!(
            "fn k(wi: &WorkItem, tile: LocalArg<u32>) {{
                let l = wi.get_local_id(0);
                let s = wi.local(tile);
                s.set(l, 1);
                {split}
                wi.barrier(LOCAL);
                if l < half {{
                    s.set(l, 2);
                }}
                {change}
                let v = s.get(l + half);
            }}"
        ));
        assert_eq!(
            body.matches("race_free").count(),
            1,
            "{split} {change}: {body}"
        );
    }
}

#[test]
fn a_loop_carries_its_last_interval_into_its_first() {
    // The write at the bottom of the loop and the read of a neighbour
    // at its top share an interval across the back edge: no barrier
    // between them on that path.
    let (body, _, _) = proofs(
        "fn k(wi: &WorkItem, tile: LocalArg<u32>) {
            let l = wi.get_local_id(0);
            let t = wi.local(tile);
            t.set(l, 0);
            for _ in 0..4 {
                let v = t.get(l + 1);
                wi.barrier(LOCAL);
                t.set(l, v);
            }
        }",
    );
    assert_eq!(body.matches("race_free").count(), 0, "{body}");
}

#[test]
fn a_barrier_of_global_memory_is_no_boundary() {
    let (body, _, _) = proofs(
        "fn k(wi: &WorkItem, tile: LocalArg<u32>) {
            let l = wi.get_local_id(0);
            let t = wi.local(tile);
            t.set(l, 0);
            wi.barrier(GLOBAL);
            let v = t.get(l + 1);
        }",
    );
    assert_eq!(body.matches("race_free").count(), 0, "{body}");
}

#[test]
fn a_branch_that_skips_the_barrier_joins_the_interval_after_it() {
    let (body, _, _) = proofs(
        "fn k(wi: &WorkItem, tile: LocalArg<u32>, n: usize) {
            let l = wi.get_local_id(0);
            let t = wi.local(tile);
            t.set(l, 0);
            if n > 2 {
                wi.barrier(LOCAL);
            }
            let v = t.get(l + 1);
        }",
    );
    assert_eq!(body.matches("race_free").count(), 0, "{body}");
}

#[test]
fn a_view_named_in_a_closure_or_a_macro_has_nothing_proven() {
    for use_ in ["let f = || t.get(l + 1);", "println!(\"{}\", t.get(l));"] {
        let (body, trust, _) = proofs(&format!(
            "fn k(wi: &WorkItem, tile: LocalArg<u32>) {{
                let l = wi.get_local_id(0);
                let t = wi.local(tile);
                t.set(l, 0);
                wi.barrier(LOCAL);
                {use_}
            }}"
        ));
        assert_eq!(body.matches("race_free").count(), 0, "{body}");
        assert!(!trust);
    }
}

#[test]
fn an_index_rebound_or_a_buffer_at_another_index_proves_nothing() {
    let (body, _, owned) = proofs(
        "fn k(wi: &WorkItem, data: &Buffer<u32>, tile: LocalArg<u32>) {
            let l = wi.get_local_id(0);
            let g = wi.get_global_id(0);
            let t = wi.local(tile);
            t.set(l, data.get(g));
            data.set(g + 1, 0);
            { let l = 3; t.set(l, 1); }
        }",
    );
    assert!(owned.is_empty());
    assert_eq!(body.matches("race_free").count(), 0, "{body}");
}

#[test]
fn a_break_out_of_the_loop_reaches_the_code_after_it() {
    let (body, _, _) = proofs(
        "fn k(wi: &WorkItem, tile: LocalArg<u32>) {
            let l = wi.get_local_id(0);
            let t = wi.local(tile);
            loop {
                t.set(l, 1);
                if l > 3 { break; }
                wi.barrier(LOCAL);
            }
            let v = t.get(l + 1);
        }",
    );
    assert_eq!(body.matches("race_free").count(), 0, "{body}");
}

#[test]
fn a_histograms_bins_are_quiet_unless_an_order_a_scope_or_a_fence_says_otherwise() {
    let kernel = |count: &str, extra: &str| {
        format!(
            "fn k(wi: &WorkItem, bytes: &Buffer<u8>, tile: LocalArg<AtomicUint>) {{
                let l = wi.get_local_id(0);
                let bins = wi.local(tile);
                bins.at(l).store_explicit_scope(0, Relaxed, WorkGroupScope);
                wi.barrier(LOCAL);
                {count};
                {extra}
                wi.barrier(LOCAL);
                let c = bins.at(l).load_explicit(Relaxed);
            }}"
        )
    };
    let add = "bins.at(bytes.get(l) as usize).fetch_add_explicit_scope(1, Relaxed, WorkGroupScope)";
    let (body, trust, _) = proofs(&kernel(add, ""));
    assert!(trust);
    assert_eq!(body.matches("at_quiet").count(), 3, "{body}");
    for (count, extra) in [
        (add, "wi.mem_fence(LOCAL);"),
        (
            "bins.at(3).fetch_add_explicit_scope(1, Acquire, WorkGroupScope)",
            "",
        ),
        (
            "bins.at(3).fetch_add_explicit_scope(1, Relaxed, SubGroupScope)",
            "",
        ),
        ("bins.at(3).fetch_add(1)", ""),
        (add, "let all = bins.as_slice();"),
    ] {
        let (body, _, _) = proofs(&kernel(count, extra));
        assert_eq!(
            body.matches("at_quiet").count(),
            0,
            "{count} {extra}: {body}"
        );
    }
}

#[test]
fn a_global_id_bound_in_a_block_still_owns_its_element() {
    let (_, _, owned) = proofs(
        "fn k(wi: &WorkItem, data: &Buffer<i32>, totals: &Buffer<i32>) {
            let group = wi.get_group_id(0);
            if group > 0 {
                let g = wi.get_global_id(0);
                data.set(g, data.get(g).wrapping_add(totals.get(group - 1)));
            }
        }",
    );
    assert_eq!(owned, ["data"]);
}

#[test]
fn accesses_in_two_branches_after_one_barrier_share_its_interval() {
    // Work-item 0 reads element 5 while the others write it: one branch
    // each, in the same interval.
    let (body, _, _) = proofs(
        "fn k(wi: &WorkItem, tile: LocalArg<u32>) {
            let l = wi.get_local_id(0);
            let t = wi.local(tile);
            t.set(l, 0);
            wi.barrier(LOCAL);
            if l == 0 {
                let v = t.get(5);
            } else {
                t.set(5, 1);
            }
        }",
    );
    // The first write alone, before the barrier; the read and the writes
    // of element 5 meet after it.
    assert_eq!(body.matches("race_free").count(), 1, "{body}");
    assert!(body.contains("t . set_race_free (l , 0)"), "{body}");
}
