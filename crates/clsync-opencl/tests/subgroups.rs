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
