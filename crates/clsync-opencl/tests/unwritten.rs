//! Parameters a kernel never writes through (`Param::written`), and the
//! checked launches that leave the reads of such buffers out of the race
//! checker: what it proves on the shapes kernels take, optimized and as
//! `-cl-opt-disable` leaves them, and the races it must not hide.

mod common;

use clsync::checker::ReportKind;
use clsync::{Buffer, NdRange};
use clsync_opencl::{Arg, Program};

/// Each parameter of kernel `k` in `src` (built with `options`), with
/// whether the compiler found it may be written through.
fn written(src: &str, options: &str) -> Vec<(String, bool)> {
    let p = common::build(src, "w.cl", options);
    let k = p.kernel("k").unwrap();
    k.info()
        .params
        .iter()
        .map(|p| (p.name.clone(), p.written))
        .collect()
}

/// `written` for both builds a kernel has: they must agree.
fn both(src: &str) -> Vec<(String, bool)> {
    let o2 = written(src, "");
    let o0 = written(src, "-cl-opt-disable");
    assert_eq!(o2, o0, "the optimized and unoptimized builds differ");
    o2
}

fn named(v: &[(&str, bool)]) -> Vec<(String, bool)> {
    v.iter().map(|(n, w)| (n.to_string(), *w)).collect()
}

#[test]
fn an_input_only_loaded_is_unwritten_and_the_output_written() {
    let src = "kernel void k(global const int *in, global int *out, int n) {\n  int i = get_global_id(0);\n  out[i] = in[i] + in[(i + 1) % n];\n}\n";
    assert_eq!(
        both(src),
        named(&[("in", false), ("out", true), ("n", false)])
    );
}

#[test]
fn calls_carry_pointers_both_ways() {
    // `get` only reads its pointer, `put` writes its own, `pick` returns
    // its argument moved: what is written through the result is the
    // argument's.
    let src = "int get(global const int *p, int i) { return p[i]; }\nvoid put(global int *p, int i, int v) { p[i] = v; }\nglobal int *pick(global int *p, int k) { return p + k; }\nkernel void k(global int *a, global int *b, global int *c) {\n  int i = get_global_id(0);\n  put(b, i, get(a, i));\n  *pick(c, i) = 1;\n}\n";
    assert_eq!(
        written(src, "-cl-opt-disable"),
        named(&[("a", false), ("b", true), ("c", true)])
    );
}

#[test]
fn a_pointer_kept_in_a_variable_is_followed() {
    // Either parameter may be the one written.
    let src = "kernel void k(global int *a, global int *b, global const int *c, int s) {\n  global int *p = s ? a : b;\n  global const int *q = c;\n  p[get_global_id(0)] = q[0];\n}\n";
    assert_eq!(
        both(src),
        named(&[("a", true), ("b", true), ("c", false), ("s", false)])
    );
}

#[test]
fn atomics_stores_of_vectors_and_out_parameters_write() {
    let src = "kernel void k(global int *a, global float *b, global float *c, global const float *d) {\n  atomic_inc(a);\n  vstore4(vload4(0, d), 0, b);\n  float whole;\n  c[1] = modf(c[0], &whole);\n  c[2] = modf(d[0], (global float *)c);\n}\n";
    assert_eq!(
        both(src),
        named(&[("a", true), ("b", true), ("c", true), ("d", false)])
    );
}

#[test]
fn a_pointer_that_escapes_or_is_made_from_an_integer_may_be_written() {
    // Stored to memory (an array of pointers, indexed): written wherever
    // it is loaded from, unseen.
    let escape = "kernel void k(global const int *a, global int *out) {\n  global const int *keep[2];\n  keep[get_global_id(0) & 1] = a;\n  out[0] = *keep[0];\n}\n";
    assert_eq!(
        written(escape, "-cl-opt-disable"),
        named(&[("a", true), ("out", true)])
    );
    // Through an integer: any pointer.
    let forged = "kernel void k(global const int *a, global int *out, ulong x) {\n  out[0] = a[0] + *(global int *)x;\n}\n";
    assert_eq!(
        both(forged),
        named(&[("a", true), ("out", true), ("x", false)])
    );
}

#[test]
fn a_pointer_written_through_a_variable_whose_address_escapes_is_written() {
    // `p` holds `a`; `set` is given `p`'s address and writes through what
    // it holds: `a` is written though no store in `k` names it.
    let src = "void set(global int *private *pp) { (*pp)[0] = 1; }\nkernel void k(global const int *b, global int *a) {\n  global int *p = a;\n  set(&p);\n}\n";
    assert_eq!(
        written(src, "-cl-opt-disable"),
        named(&[("b", false), ("a", true)])
    );
}

/// `k` reads `in` ahead and writes `out`: a race when they are one buffer.
const AHEAD: &str = "kernel void k(global const int *in, global int *out) {\n  int i = get_global_id(0);\n  out[i] = in[(i + 1) % get_global_size(0)] + 1;\n}\n";

#[test]
fn the_same_buffer_as_input_and_output_still_races() {
    let p = common::build(AHEAD, "ahead.cl", "-cl-opt-disable");
    assert!(!p.kernel("k").unwrap().info().params[0].written);
    let both = Buffer::<i32>::from_slice(&[0; 8]);
    let found = common::run(
        &p,
        "k",
        NdRange::new([8]).local([8]),
        &[Arg::Buffer(&both), Arg::Buffer(&both)],
        true,
    );
    let race = found
        .checker
        .iter()
        .find(|r| r.kind == ReportKind::DataRace)
        .unwrap_or_else(|| panic!("no race: {found:?}"));
    let lines: Vec<u32> = [&race.first, &race.second]
        .iter()
        .filter_map(|a| a.as_ref())
        .map(|a| a.site.line)
        .collect();
    assert_eq!(lines, vec![3, 3], "{race}");
}

#[test]
fn an_unwritten_input_is_clean_and_still_bounds_checked() {
    let p = common::build(AHEAD, "ahead.cl", "-cl-opt-disable");
    let input: Vec<i32> = (0..8).map(|i| i * 10).collect();
    let a = Buffer::<i32>::from_slice(&input);
    let out = Buffer::<i32>::new(8);
    let found = common::run(
        &p,
        "k",
        NdRange::new([8]).local([4]),
        &[Arg::Buffer(&a), Arg::Buffer(&out)],
        true,
    );
    assert!(found.is_empty(), "{found:?}");
    let expect: Vec<i32> = (0..8).map(|i| input[(i + 1) % 8] + 1).collect();
    assert_eq!(out.to_vec(), expect);
    // A shorter input: the last work-item reads past it, reported.
    let short = Buffer::<i32>::from_slice(&input[..4]);
    let out = Buffer::<i32>::new(4);
    let found = common::run(
        &p,
        "k",
        NdRange::new([4]),
        &[Arg::Buffer(&short), Arg::Buffer(&out)],
        true,
    );
    assert!(found.is_empty(), "{found:?}");
    let found = common::run(
        &p,
        "k",
        NdRange::new([8]).local([4]),
        &[Arg::Buffer(&short), Arg::Buffer(&Buffer::<i32>::new(8))],
        true,
    );
    // One report per site (as Oclgrind), and the value it read, which
    // nothing wrote, stored to global memory.
    let heads = common::headlines_at(&found);
    assert_eq!(heads.len(), 2, "{heads:?}");
    assert!(
        heads[0]
            .0
            .starts_with("Invalid read of size 4 at global memory")
            && heads[0].1 == 3,
        "{heads:?}"
    );
    assert_eq!(heads[1], ("Uninitialized value", 3));
}

#[test]
fn programs_from_spirv_know_their_unwritten_parameters_too() {
    let p = common::build(AHEAD, "ahead.cl", "");
    let again = Program::from_spirv(p.spirv()).unwrap();
    let w: Vec<bool> = again.kernels()[0]
        .params
        .iter()
        .map(|p| p.written)
        .collect();
    assert_eq!(w, vec![false, true]);
}
