//! Clustered sub-group reductions (`cl_khr_subgroup_clustered_reduce`):
//! each lane gets the reduction over its cluster, the aligned run of
//! `clustersize` lanes it belongs to, against a sequential computation;
//! with a short last sub-group, unchecked and checked.

mod common;

use clsync::{Buffer, NdRange};
use clsync_opencl::Arg;

#[test]
fn clustered_reductions_combine_each_lanes_cluster() {
    let p = common::build(
        r#"
        #pragma OPENCL EXTENSION cl_khr_subgroup_clustered_reduce : enable
        kernel void cl(global int *o, global float *f) {
            int g = get_global_id(0);
            int v = g * 7 % 11 - 3;
            o[g * 6 + 0] = get_sub_group_size();
            o[g * 6 + 1] = get_sub_group_local_id();
            o[g * 6 + 2] = sub_group_clustered_reduce_add(v, 4);
            o[g * 6 + 3] = sub_group_clustered_reduce_max(v, 2);
            o[g * 6 + 4] = sub_group_clustered_reduce_xor(v, 8);
            o[g * 6 + 5] = sub_group_clustered_reduce_min(v, 1);
            f[g] = sub_group_clustered_reduce_mul((float)(v % 3 + 2), 4);
        }"#,
        "clustered.cl",
        "-cl-std=CL3.0",
    );
    let n = 44;
    for checked in [false, true] {
        let o = Buffer::<i32>::new(n * 6);
        let f = Buffer::<f32>::new(n);
        let found = common::run(
            &p,
            "cl",
            NdRange::new([n]).local([22]),
            &[Arg::Buffer(&o), Arg::Buffer(&f)],
            checked,
        );
        assert!(found.is_empty(), "{found:?}");
        let (o, f) = (o.to_vec(), f.to_vec());
        let v = |g: usize| (g * 7 % 11) as i32 - 3;
        for g in 0..n {
            let (size, l) = (o[g * 6] as usize, o[g * 6 + 1] as usize);
            let first = g - l;
            // The lanes of `g`'s cluster of `c`, within its sub-group.
            let cluster = |c: usize| {
                let start = first + l / c * c;
                start..(start + c).min(first + size)
            };
            assert_eq!(o[g * 6 + 2], cluster(4).map(v).sum::<i32>(), "add at {g}");
            assert_eq!(o[g * 6 + 3], cluster(2).map(v).max().unwrap(), "max at {g}");
            assert_eq!(
                o[g * 6 + 4],
                cluster(8).map(v).fold(0, |a, x| a ^ x),
                "xor at {g}"
            );
            assert_eq!(o[g * 6 + 5], v(g), "min over one lane at {g}");
            let prod: f32 = cluster(4).map(|k| (v(k) % 3 + 2) as f32).product();
            assert_eq!(f[g], prod, "mul at {g}");
        }
    }
}

/// The non-uniform operations (`cl_khr_subgroup_non_uniform_arithmetic`,
/// `_ballot`, `_non_uniform_vote`) in divergent code: each is computed over
/// the lanes that reach it together, its active set. Both sides of a
/// branch, a loop whose trip count differs by lane, and the whole
/// sub-group again after them, against a sequential computation of each
/// active set; unchecked and checked.
#[test]
fn non_uniform_operations_combine_only_the_active_lanes() {
    let p = common::build(
        r#"
        #pragma OPENCL EXTENSION cl_khr_subgroup_non_uniform_arithmetic : enable
        #pragma OPENCL EXTENSION cl_khr_subgroup_ballot : enable
        #pragma OPENCL EXTENSION cl_khr_subgroup_non_uniform_vote : enable
        kernel void nu(global int *o) {
            int g = get_global_id(0);
            int l = get_sub_group_local_id();
            int v = g * 5 % 13;
            global int *r = o + g * 9;
            r[8] = get_sub_group_size();
            if (v % 3 != 0) {
                r[0] = sub_group_non_uniform_reduce_add(v);
                r[1] = sub_group_non_uniform_scan_exclusive_add(v);
                r[2] = sub_group_elect();
                r[3] = sub_group_ballot_bit_count(sub_group_ballot(v > 6));
                r[4] = sub_group_broadcast_first(v);
            } else {
                r[0] = sub_group_non_uniform_reduce_max(v);
                r[1] = sub_group_non_uniform_scan_inclusive_add(v);
                r[2] = sub_group_elect();
                r[3] = sub_group_non_uniform_all_equal(v);
                r[4] = sub_group_non_uniform_any(v > 6);
            }
            int acc = 0;
            for (int i = 0; i < l % 4; i++)
                acc += sub_group_non_uniform_reduce_add(1);
            r[5] = acc;
            r[6] = sub_group_non_uniform_reduce_add(1);
            r[7] = sub_group_elect();
        }"#,
        "non_uniform.cl",
        "-cl-std=CL3.0",
    );
    let n = 44;
    for checked in [false, true] {
        let o = Buffer::<i32>::new(n * 9);
        let found = common::run(
            &p,
            "nu",
            NdRange::new([n]).local([22]),
            &[Arg::Buffer(&o)],
            checked,
        );
        assert!(found.is_empty(), "{found:?}");
        let o = o.to_vec();
        let v = |g: usize| (g * 5 % 13) as i32;
        for g in 0..n {
            let r = &o[g * 9..g * 9 + 9];
            let size = r[8] as usize;
            // Sub-groups start at multiples of the size within a group.
            let base = g - g % 22;
            let l = (g - base) % size;
            let first = g - l;
            let lanes = first..(first + size).min(base + 22);
            let then = |k: &usize| v(*k) % 3 != 0;
            let mine = then(&g);
            let set: Vec<usize> = lanes.clone().filter(|k| then(k) == mine).collect();
            let before: Vec<usize> = set.iter().copied().filter(|k| *k < g).collect();
            let sum = |ks: &[usize]| ks.iter().map(|k| v(*k)).sum::<i32>();
            let at = |what: &str| format!("{what} at {g} (lanes {set:?})");
            if mine {
                assert_eq!(r[0], sum(&set), "{}", at("reduce_add"));
                assert_eq!(r[1], sum(&before), "{}", at("scan_exclusive_add"));
                let over = set.iter().filter(|k| v(**k) > 6).count();
                assert_eq!(r[3], over as i32, "{}", at("ballot"));
            } else {
                let max = set.iter().map(|k| v(*k)).max().unwrap();
                assert_eq!(r[0], max, "{}", at("reduce_max"));
                assert_eq!(r[1], sum(&before) + v(g), "{}", at("scan_inclusive_add"));
                let equal = set.iter().all(|k| v(*k) == v(set[0]));
                assert_eq!(r[3], i32::from(equal), "{}", at("all_equal"));
                let any = set.iter().any(|k| v(*k) > 6);
                assert_eq!(r[4] != 0, any, "{}", at("any"));
            }
            assert_eq!(r[2] != 0, set[0] == g, "{}", at("elect"));
            if mine {
                assert_eq!(r[4], v(set[0]), "{}", at("broadcast_first"));
            }
            // Iteration i of the loop: the lanes whose l % 4 exceeds i.
            let in_loop = |i: usize| lanes.clone().filter(|k| (k - first) % 4 > i).count();
            let acc: usize = (0..l % 4).map(in_loop).sum();
            assert_eq!(r[5], acc as i32, "loop at {g}");
            assert_eq!(r[6], lanes.len() as i32, "whole sub-group at {g}");
            assert_eq!(r[7] != 0, g == first, "elect at {g}");
        }
    }
}

/// Broadcasts of vectors (`cl_khr_subgroup_extended_types` for
/// `sub_group_broadcast`, `cl_khr_subgroup_ballot` for the non-uniform
/// one, here in divergent code): every component is the named lane's.
#[test]
fn vector_broadcasts_carry_every_component() {
    let p = common::build(
        r#"
        #pragma OPENCL EXTENSION cl_khr_subgroup_ballot : enable
        kernel void vb(global float4 *o, global int2 *q) {
            int g = get_global_id(0);
            int l = get_sub_group_local_id();
            o[g] = sub_group_broadcast((float4)(g, g + 0.5f, -g, 7), 1);
            q[g] = (int2)(-1);
            if (l % 2 == 1)
                q[g] = sub_group_non_uniform_broadcast((int2)(g * 10, g * 100), 3);
        }"#,
        "vb.cl",
        "-cl-std=CL3.0",
    );
    let n = 16;
    for checked in [false, true] {
        let o = Buffer::<f32>::new(n * 4);
        let q = Buffer::<i32>::new(n * 2);
        let found = common::run(
            &p,
            "vb",
            NdRange::new([n]).local([n]),
            &[Arg::Buffer(&o), Arg::Buffer(&q)],
            checked,
        );
        assert!(found.is_empty(), "{found:?}");
        let (o, q) = (o.to_vec(), q.to_vec());
        // Sub-groups of the default size (at least 4 lanes here).
        let size = (0..n).find(|&g| g > 0 && o[g * 4] != o[0]).unwrap_or(n);
        assert!(size >= 4, "{o:?}");
        for g in 0..n {
            let first = g / size * size;
            let src = (first + 1) as f32;
            assert_eq!(&o[g * 4..g * 4 + 4], &[src, src + 0.5, -src, 7.0], "at {g}");
            let want = if (g - first) % 2 == 1 {
                let s = (first + 3) as i32;
                [s * 10, s * 100]
            } else {
                [-1, -1]
            };
            assert_eq!(&q[g * 2..g * 2 + 2], &want, "at {g}");
        }
    }
}
