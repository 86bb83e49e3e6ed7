//! OpenCL C kernels compiled and run, against sequential references.

use clsync::{Buffer, NdRange, Runtime};
use clsync_opencl::{Arg, Program};

fn build(src: &str, options: &str) -> Program {
    Program::build(src, "test.cl", options).unwrap_or_else(|e| panic!("build failed:\n{e}"))
}

#[test]
fn tree_reduction_with_barriers() {
    let p = build(
        r#"
        kernel void reduce(uint n, global const uint *data, global uint *result, local uint *scratch) {
            uint lid = get_local_id(0);
            uint sum = 0;
            for (uint i = get_global_id(0); i < n; i += get_global_size(0)) sum += data[i];
            scratch[lid] = sum;
            for (uint off = get_local_size(0) / 2; off > 0; off /= 2) {
                barrier(CLK_LOCAL_MEM_FENCE);
                if (lid < off) scratch[lid] += scratch[lid + off];
            }
            if (lid == 0) result[get_group_id(0)] = scratch[0];
        }"#,
        "",
    );
    let n = 4096u32;
    let data: Vec<u32> = (0..n).map(|i| i * 7 % 1000).collect();
    let input = Buffer::from_slice(&data);
    let result = Buffer::<u32>::new(16);
    p.kernel("reduce")
        .unwrap()
        .run(
            &Runtime::new(),
            NdRange::new([1024]).local([64]),
            &[Arg::of(&[n]), Arg::Buffer(&input), Arg::Buffer(&result), Arg::Local(64 * 4)],
        )
        .unwrap();
    // Work-item g sums data[g], data[g + 1024], ...; group k holds
    // work-items 64k .. 64k + 63.
    let expect: Vec<u32> = (0..16)
        .map(|k| (0..n).filter(|i| (i % 1024) / 64 == k).map(|i| data[i as usize]).sum())
        .collect();
    assert_eq!(result.to_vec(), expect);
}

#[test]
fn float_vectors_and_math() {
    let p = build(
        r#"
        kernel void k(global const float4 *a, global float *out) {
            size_t i = get_global_id(0);
            float4 v = a[i];
            out[i] = dot(v, v) + sqrt(fabs(v.x)) + length(v.zw) + fmax(v.y, 2.0f);
        }"#,
        "",
    );
    let a: Vec<f32> = (0..64).map(|i| i as f32 * 0.5 - 8.0).collect();
    let ab = Buffer::from_slice(&a);
    let out = Buffer::<f32>::new(16);
    p.kernel("k").unwrap().run(&Runtime::new(), NdRange::new([16]), &[Arg::Buffer(&ab), Arg::Buffer(&out)]).unwrap();
    for (i, got) in out.to_vec().iter().enumerate() {
        let v = &a[4 * i..4 * i + 4];
        let want = v.iter().map(|x| x * x).sum::<f32>() + v[0].abs().sqrt() + (v[2] * v[2] + v[3] * v[3]).sqrt() + v[1].max(2.0);
        assert!((got - want).abs() <= 1e-4 * want.abs().max(1.0), "{i}: {got} vs {want}");
    }
}
