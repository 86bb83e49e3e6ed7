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
fn a_reads_neighbour_in_the_interval_of_writes_is_not_proven() {
    let (body, _, _) = proofs(
        "fn k(wi: &WorkItem, tile: LocalArg<u32>) {
            let l = wi.get_local_id(0);
            let s = wi.local(tile);
            s.set(l, 1);
            let mut half = 128;
            while half > 0 {
                wi.barrier(LOCAL);
                if l < half {
                    s.set(l, s.get(l) + s.get(l + half));
                }
                half /= 2;
            }
        }",
    );
    // `s.get(l)` meets only reads and its own element, and the first
    // write only itself; the loop's write meets the read at `l + half`.
    assert_eq!(body.matches("get_race_free").count(), 1, "{body}");
    assert_eq!(body.matches("set_race_free").count(), 1, "{body}");
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
