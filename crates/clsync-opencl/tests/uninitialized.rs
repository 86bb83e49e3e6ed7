//! Uninitialized values in checked launches, as Oclgrind reports them: a
//! value that depends on memory nothing wrote, stored to global memory
//! (`Uninitialized value`), and an access through an address computed
//! from one (`Uninitialized address`); but not such a value copied around
//! private and local memory, and not a struct's padding.

mod common;

use clsync::{Buffer, NdRange};
use clsync_opencl::{Arg, MemObject, Program};

const SRC: &str = r#"
typedef struct { char a; int b; char c; } padded;
typedef struct __attribute__((packed)) { char a; int b; } packed;

kernel void field_from_local(local int *l, global padded *out) {
    padded p = {1, *l, 2};
    *out = p;
}
kernel void padding_only(local padded *scratch, global padded *out) {
    padded p;
    p.a = 1; p.b = 2; p.c = 3;
    if (get_local_id(0) == 0) *scratch = p;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 1) *out = *scratch;
}
kernel void packed_field(local int *l, global packed *out) {
    packed q;
    q.a = 1; q.b = *l;
    *out = q;
}
kernel void private_array(global const uint *idx, global float *out) {
    float t[4];
    for (int i = 0; i < 4; i++) t[idx[i]] = i;
    for (int i = 0; i < 4; i++) out[i] = t[i];
}
kernel void through_private(local int *l, global int *out) {
    int x = *l;           // read, kept privately: no report yet
    volatile int y = x;   // copied around private memory: none
    out[0] = 7;
}
kernel void address(global int *out) {
    int a[4] = {1, 2, 3, 4};
    volatile int i;
    out[0] = a[i & 3];
}
kernel void one_lane(global float *out) {
    float2 v;
    v.x = 1.5f;
    float2 whole;
    out[0] = fract(v, &whole).x + whole.x;
}
kernel void from_buffer(global const int *in, global int *out) {
    out[get_global_id(0)] = in[get_global_id(0)] + 1;
}
kernel void undefined_lane(global float4 *out) {
    float4 f;
    f.xzw = 4.5f;
    out[1] = fract(f, out);
}
kernel void atomics_wrote(global int *out, local int *c, global int *g) {
    size_t l = get_local_id(0);
    if (l < 4) atomic_xchg(&c[l], 0);
    if (l == 0) atomic_cmpxchg(&c[4], 1, 2);
    if (l == 0) atomic_xchg(g, 3);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    atomic_inc(&c[l % 4]);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    out[l] = c[l % 4] + *g;
    if (l == 1) out[8] = c[4];
}
kernel void atomics_read(global uint *out, local uint *c) {
    size_t l = get_local_id(0);
    uint old = atomic_inc(&c[0]);
    atomic_inc(&c[1]);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[l] = old;
    out[8 + l] = c[1];
}
"#;

fn program() -> Program {
    common::build(SRC, "uninit.cl", "")
}

/// The headlines a checked run of `name` found, with the line of each.
fn found(p: &Program, name: &str, local: usize, args: &[Arg<'_>]) -> Vec<String> {
    let f = common::run(p, name, NdRange::new([local]).local([local]), args, true);
    assert!(f.checker.is_empty(), "{name}: {:?}", f.checker);
    f.diagnostics
        .iter()
        .map(|d| format!("{} at {}", d.headline, d.site.map(|s| s.line).unwrap_or(0)))
        .collect()
}

#[test]
fn a_value_nothing_wrote_stored_to_global_memory_is_reported_with_its_line() {
    let p = program();
    let out = Buffer::<u8>::new(12);
    assert_eq!(
        found(
            &p,
            "field_from_local",
            1,
            &[Arg::Local(4), Arg::Buffer(&out)]
        ),
        ["Uninitialized value at 7"]
    );
    let out = Buffer::<u8>::new(5);
    assert_eq!(
        found(&p, "packed_field", 1, &[Arg::Local(4), Arg::Buffer(&out)]),
        ["Uninitialized value at 19"]
    );
    // Elements 0 and 2 of the private array are never written (indices
    // 1, 1, 3, 3); the compiler copies the array out whole.
    let idx = Buffer::from_slice(&[1u32, 1, 3, 3]);
    let out = Buffer::<f32>::new(4);
    let f = found(
        &p,
        "private_array",
        1,
        &[Arg::Buffer(&idx), Arg::Buffer(&out)],
    );
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(f[0].starts_with("Uninitialized value"), "{f:?}");
    assert_eq!(out.to_vec()[1], 1.0);
}

#[test]
fn padding_private_copies_and_written_lanes_are_not_reported() {
    let p = program();
    let out = Buffer::<u8>::new(12);
    assert_eq!(
        found(&p, "padding_only", 2, &[Arg::Local(12), Arg::Buffer(&out)]),
        Vec::<String>::new()
    );
    assert_eq!(out.to_vec()[0], 1);
    let out = Buffer::<i32>::new(1);
    assert_eq!(
        found(
            &p,
            "through_private",
            1,
            &[Arg::Local(4), Arg::Buffer(&out)]
        ),
        Vec::<String>::new()
    );
    let out = Buffer::<f32>::new(1);
    assert_eq!(
        found(&p, "one_lane", 1, &[Arg::Buffer(&out)]),
        Vec::<String>::new()
    );
    assert_eq!(out.to_vec(), [1.5]);
}

#[test]
fn what_atomics_wrote_is_initialized_and_a_failed_compare_exchange_writes_nothing() {
    // Local and global memory that only atomics wrote, read plainly after
    // a barrier: written values. The compare-and-exchange finds no 1 in
    // memory nothing wrote and writes nothing: the read of it is line 59's
    // report.
    let p = program();
    let out = Buffer::<i32>::new(9);
    let g = Buffer::<i32>::new(1);
    let f = common::run(
        &p,
        "atomics_wrote",
        NdRange::new([8]).local([8]),
        &[Arg::Buffer(&out), Arg::Local(20), Arg::Buffer(&g)],
        true,
    );
    let heads: Vec<String> = f
        .diagnostics
        .iter()
        .map(|d| format!("{} at {}", d.headline, d.site.map(|s| s.line).unwrap_or(0)))
        .collect();
    assert_eq!(heads, ["Uninitialized value at 59"], "{f:?}");
    assert_eq!(out.to_vec()[..8], [5; 8]);
}

/// A vector the compiler builds as a constant with an undefined lane: both
/// values stored from it (`fract`'s result and its whole part, through the
/// pointer) carry the lane.
#[test]
fn an_undefined_lane_of_a_constant_vector_is_uninitialized() {
    let p = program();
    let out = Buffer::<f32>::new(8);
    let mut f = found(&p, "undefined_lane", 1, &[Arg::Buffer(&out)]);
    f.sort();
    assert_eq!(
        f,
        ["Uninitialized value at 48", "Uninitialized value at 48"]
    );
    let v = out.to_vec();
    assert_eq!((v[0], v[2], v[4], v[6]), (4.0, 4.0, 0.5, 0.5));
}

#[test]
fn an_access_at_an_address_nothing_wrote_is_reported() {
    let p = program();
    let out = Buffer::<i32>::new(1);
    let f = found(&p, "address", 1, &[Arg::Buffer(&out)]);
    assert_eq!(f, ["Uninitialized address at 34"]);
}

/// A buffer whose contents the host never wrote (Oclgrind's `noinit`).
struct Unwritten(Buffer<i32>);

impl MemObject for Unwritten {
    fn bytes(&self) -> (*mut u8, usize) {
        self.0.raw_bytes()
    }
    fn name(&self) -> &str {
        "in"
    }
    fn initialized(&self) -> bool {
        false
    }
}

#[test]
fn a_buffer_the_host_did_not_write_is_uninitialized_until_a_kernel_writes_it() {
    let p = program();
    let (input, out) = (Unwritten(Buffer::new(4)), Buffer::<i32>::new(4));
    let f = found(
        &p,
        "from_buffer",
        4,
        &[Arg::Buffer(&input), Arg::Buffer(&out)],
    );
    assert_eq!(f, ["Uninitialized value at 43"]);
    // The same buffer, written by the host: nothing to report.
    let input = Buffer::from_slice(&[1, 2, 3, 4]);
    let f = found(
        &p,
        "from_buffer",
        4,
        &[Arg::Buffer(&input), Arg::Buffer(&out)],
    );
    assert!(f.is_empty(), "{f:?}");
    assert_eq!(out.to_vec(), [2, 3, 4, 5]);
}

/// Unoptimized, a kernel's scalar and pointer variables are private
/// variables that checked builds keep in registers with their shadows: one
/// that only some work-items assign is reported where the others store it,
/// after a loop and a barrier, and not at all when every work-item assigns
/// it; a pointer only some assign is an uninitialized address where the
/// others write through it; the values are the kernel's.
#[test]
fn private_scalars_in_registers_keep_what_was_written_and_what_was_not() {
    let p = common::build(
        r#"
        kernel void maybe(global int *out, int n) {
            int x;
            int l = get_local_id(0);
            if (l < n) x = l;
            int acc = 0;
            for (int i = 0; i < 3; i++) acc += i;
            barrier(CLK_LOCAL_MEM_FENCE);
            out[l] = x + acc;
        }
        kernel void pointer(global int *out, int n) {
            global int *p;
            int l = get_local_id(0);
            if (l < n) p = out + l;
            *p = 5;
        }"#,
        "maybe.cl",
        "-cl-opt-disable",
    );
    for n in [2i32, 4] {
        let out = Buffer::<i32>::new(4);
        let f = found(
            &p,
            "maybe",
            4,
            &[Arg::Buffer(&out), Arg::Value(n.to_le_bytes().to_vec())],
        );
        if n == 2 {
            assert!(!f.is_empty(), "work-items 2 and 3 store x unwritten");
            assert!(f.iter().all(|d| d == "Uninitialized value at 9"), "{f:?}");
        } else {
            assert!(f.is_empty(), "{f:?}");
        }
        assert_eq!(&out.to_vec()[..2], &[3, 4]);
    }
    // A pointer variable: the work-items that never set it write through
    // an unwritten address (null, as unwritten private memory holds).
    let out = Buffer::<i32>::new(4);
    let f = found(
        &p,
        "pointer",
        4,
        &[Arg::Buffer(&out), Arg::Value(2i32.to_le_bytes().to_vec())],
    );
    assert!(
        f.contains(&"Uninitialized address at 15".to_string()),
        "{f:?}"
    );
    assert_eq!(out.to_vec(), vec![5, 5, 0, 0]);
}

#[test]
fn an_atomic_reads_an_uninitialized_value_where_nothing_wrote_and_counts_on_from_it() {
    // Counters nobody cleared: the value an increment returns is
    // uninitialized (stored at line 66), and so is what increments of it
    // leave (read at line 67), as Oclgrind's shadow has them.
    let p = program();
    let out = Buffer::<u32>::new(16);
    let f = common::run(
        &p,
        "atomics_read",
        NdRange::new([8]).local([8]),
        &[Arg::Buffer(&out), Arg::Local(8)],
        true,
    );
    let mut heads: Vec<String> = f
        .diagnostics
        .iter()
        .map(|d| format!("{} at {}", d.headline, d.site.map(|s| s.line).unwrap_or(0)))
        .collect();
    heads.sort();
    assert_eq!(
        heads,
        ["Uninitialized value at 66", "Uninitialized value at 67"],
        "{f:?}"
    );
}
