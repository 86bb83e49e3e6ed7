//! Kernels built without optimization (`-cl-opt-disable`), as `clsync run
//! --check` builds them: clang's unoptimized code reaches the engine with
//! what the optimizer otherwise removes (by-value arguments in memory,
//! loads nobody uses, constant address arithmetic in program-scope
//! initializers, functions marked not to be optimized), and undefined
//! behaviour the optimizer would fold away stays there to be reported.
//! Each kernel runs optimized and not, unchecked and checked, against a
//! sequential computation.

mod common;

use clsync::{Buffer, NdRange};
use clsync_opencl::{Access, Arg, MemObject};

const OPTIONS: [&str; 2] = ["", "-cl-opt-disable"];

const BYVAL: &str = r#"
typedef union { uint a; uint b; } U;
typedef struct { int a; float f; int pad[3]; } P;

void bump(U u) { u.b = 777; }
uint passed(U u) { u.a += 1; return u.a; }

kernel void by_value(global uint *out) {
    U u = {42};
    bump(u);
    out[0] = u.b;           // 42: the callee changed its own copy
    out[1] = passed(u);     // 43
    out[2] = u.a;           // 42
}

kernel void struct_argument(P p, global int *out) {
    int i = get_global_id(0);
    p.a += i;               // each work-item's own copy
    barrier(CLK_GLOBAL_MEM_FENCE);
    out[i] = p.a;
}
"#;

#[test]
fn a_by_value_argument_is_the_callees_own_copy() {
    for options in OPTIONS {
        let p = common::build(BYVAL, "byval.cl", options);
        for checked in [false, true] {
            let out = Buffer::<u32>::new(3);
            let found = common::run(
                &p,
                "by_value",
                NdRange::new([1]),
                &[Arg::Buffer(&out)],
                checked,
            );
            assert!(found.is_empty(), "{options:?}: {found:?}");
            assert_eq!(out.to_vec(), [42, 43, 42], "{options:?} checked {checked}");

            let mut bytes = 10i32.to_le_bytes().to_vec();
            bytes.resize(20, 0);
            let out = Buffer::<i32>::new(64);
            let found = common::run(
                &p,
                "struct_argument",
                NdRange::new([64]).local([16]),
                &[Arg::Value(bytes), Arg::Buffer(&out)],
                checked,
            );
            assert!(found.is_empty(), "{options:?}: {found:?}");
            let want: Vec<i32> = (0..64).map(|i| 10 + i).collect();
            assert_eq!(out.to_vec(), want, "{options:?} checked {checked}");
        }
    }
}

#[test]
fn program_scope_pointers_into_arrays() {
    let src = r#"
global int g_arr[] = {7, 42};
constant int c_arr[] = {-3, 56};
global int *p_g = &g_arr[1];
constant int *p_c = &c_arr[1];
kernel void read_them(global int *out) {
    out[0] = g_arr[0] + *p_g;
    out[1] = c_arr[0] + *p_c;
}
"#;
    for options in OPTIONS {
        let p = common::build(src, "globals.cl", &format!("-cl-std=CL2.0 {options}"));
        for checked in [false, true] {
            let out = Buffer::<i32>::new(2);
            let found = common::run(
                &p,
                "read_them",
                NdRange::new([1]),
                &[Arg::Buffer(&out)],
                checked,
            );
            assert!(found.is_empty(), "{options:?}: {found:?}");
            assert_eq!(out.to_vec(), [49, 53], "{options:?}");
        }
    }
}

#[test]
fn an_index_past_a_static_array_is_reported_where_the_optimizer_folds_it() {
    // The loop reads `s.a[4]` and `s.a[5]`: `s.b[0]` and `s.b[1]` in
    // memory. clang -O2 folds the whole loop to a constant; unoptimized,
    // each index is checked.
    let src = "struct S { int a[4]; int b[4]; };\nkernel void over(global int *out) {\n  struct S s = {{1, 2, 3, 4}, {5, 6, 7, 8}};\n  int x = 0;\n  for (int i = 0; i < 6; i++) x += s.a[i];\n  out[0] = x;\n}\n";
    let p = common::build(src, "over.cl", "-cl-opt-disable");
    let out = Buffer::<i32>::new(1);
    let found = common::run(&p, "over", NdRange::new([1]), &[Arg::Buffer(&out)], true);
    assert_eq!(
        common::headlines_at(&found),
        [("Index exceeds static array size (4 elements)", 5)],
        "{found:?}"
    );
    assert_eq!(found.diagnostics[0].count, 2);
    // The access itself is made, within the struct.
    assert_eq!(out.to_vec(), [21]);
    let found = common::run(&p, "over", NdRange::new([1]), &[Arg::Buffer(&out)], false);
    assert!(found.is_empty());
    assert_eq!(out.to_vec(), [21]);
}

#[test]
fn a_load_nobody_uses_is_no_read_of_a_write_only_buffer() {
    struct Wo<'a>(&'a Buffer<f32>);
    impl MemObject for Wo<'_> {
        fn bytes(&self) -> (*mut u8, usize) {
            self.0.raw_bytes()
        }
        fn name(&self) -> &str {
            self.0.name()
        }
        fn access(&self) -> Access {
            Access::WriteOnly
        }
    }
    // Unoptimized, `out[i].wzyx = in[i]` loads `out[i]` and drops it.
    let src = "kernel void swz(global float4 *in, global float4 *out, global float4 *both) {\n  int i = get_global_id(0);\n  out[i].wzyx = in[i];\n  both[i] = both[i] + 1.0f;\n}\n";
    for options in OPTIONS {
        let p = common::build(src, "swz.cl", options);
        let input = Buffer::from_slice(&(0..16).map(|x| x as f32).collect::<Vec<_>>());
        let (out, both) = (Buffer::<f32>::new(16), Buffer::<f32>::new(16).named("both"));
        let (wo_out, wo_both) = (Wo(&out), Wo(&both));
        let found = common::run(
            &p,
            "swz",
            NdRange::new([4]),
            &[
                Arg::Buffer(&input),
                Arg::Buffer(&wo_out),
                Arg::Buffer(&wo_both),
            ],
            true,
        );
        // The read of `both` is a read whose value is used.
        assert_eq!(
            common::headlines_at(&found),
            [("Invalid read from write-only buffer", 4)],
            "{options:?}: {found:?}"
        );
        let want: Vec<f32> = (0..4)
            .flat_map(|v| (0..4).rev().map(move |k| (4 * v + k) as f32))
            .collect();
        assert_eq!(out.to_vec(), want, "{options:?}");
    }
}

/// A function that returns more values than the machine has return
/// registers (a struct of four counters, as pyopencl's random generators
/// return; a struct of two vectors; a `long8`) is called and returns
/// right, inlined or not, unchecked and checked.
#[test]
fn results_of_many_values_come_back_from_calls() {
    let src = r#"
typedef struct { uint v[4]; } ctr;
typedef struct { float4 lo; float4 hi; } pair;

__attribute__((noinline)) ctr bump(ctr c, uint k) {
    for (int i = 0; i < 4; i++) c.v[i] = c.v[i] * 3u + k + (uint)i;
    return c;
}
__attribute__((noinline)) pair spread(float x) {
    pair p = { (float4)(x, x + 1, x + 2, x + 3), (float4)(-x, -x - 1, -x - 2, -x - 3) };
    return p;
}
__attribute__((noinline)) long8 wide(long x) { return (long8)(x) * (long8)(1, 2, 3, 4, 5, 6, 7, 8); }

kernel void many(global uint *u, global float *f, global long *l) {
    uint i = get_global_id(0);
    ctr c = {{i, i + 1, i + 2, i + 3}};
    c = bump(bump(c, 1u), 2u);
    for (int j = 0; j < 4; j++) u[4 * i + j] = c.v[j];
    pair p = spread((float)i);
    vstore4(p.lo, 2 * i, f);
    vstore4(p.hi, 2 * i + 1, f);
    vstore8(wide((long)i), i, l);
}
"#;
    let bump = |c: [u32; 4], k: u32| -> [u32; 4] {
        let mut o = c;
        for (i, x) in o.iter_mut().enumerate() {
            *x = x.wrapping_mul(3).wrapping_add(k + i as u32);
        }
        o
    };
    let n = 16usize;
    let (mut wu, mut wf, mut wl) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n as u32 {
        wu.extend(bump(bump([i, i + 1, i + 2, i + 3], 1), 2));
        let x = i as f32;
        wf.extend([
            x,
            x + 1.0,
            x + 2.0,
            x + 3.0,
            -x,
            -x - 1.0,
            -x - 2.0,
            -x - 3.0,
        ]);
        wl.extend((1..=8).map(|k| i as i64 * k));
    }
    for options in OPTIONS {
        let p = common::build(src, "many.cl", options);
        for checked in [false, true] {
            let (u, f, l) = (
                Buffer::<u32>::new(4 * n),
                Buffer::<f32>::new(8 * n),
                Buffer::<i64>::new(8 * n),
            );
            let found = common::run(
                &p,
                "many",
                NdRange::new([n]).local([4]),
                &[Arg::Buffer(&u), Arg::Buffer(&f), Arg::Buffer(&l)],
                checked,
            );
            assert!(found.is_empty(), "{options:?}: {found:?}");
            assert_eq!(u.to_vec(), wu, "{options:?} checked {checked}");
            assert_eq!(f.to_vec(), wf, "{options:?} checked {checked}");
            assert_eq!(l.to_vec(), wl, "{options:?} checked {checked}");
        }
    }
}
