//! Orders, scopes and fence flags known only at run time. OpenCL C makes
//! them arguments of their types (`000_96da91f170ff246f.txt`,
//! `001_b96d5603ef61627c.txt`), which a kernel may compute; llvm-spirv-15
//! passes an atomic's through helper functions it writes (whose linkage
//! the reader drops) and aborts on a barrier's or fence's, which the front
//! end turns into calls of dispatch functions over constants
//! (`frontend::run_time_sync_args`). Each run must do what the values
//! name: the checker reports what the narrower ones leave unordered and
//! nothing for the wider, on every engine.

mod common;

use clsync::checker::ReportKind;
use clsync::{Buffer, NdRange};
use clsync_opencl::{Arg, Findings};

const ATOMICS: &str = r#"
// Every work-item adds one to `c[0]`, with the order and scope `wide`
// picks, keeps what it read, and exchanges `c[1]` with a failure order
// computed too.
kernel void count(global int *old, global atomic_int *c, int wide) {
    memory_order o = wide ? memory_order_seq_cst : memory_order_relaxed;
    memory_scope s = wide ? memory_scope_device : memory_scope_work_group;
    size_t g = get_global_id(0);
    old[g] = atomic_fetch_add_explicit(&c[0], 1, o, s);
    int e = atomic_load_explicit(&c[1], wide ? memory_order_acquire : memory_order_relaxed, s);
    while (!atomic_compare_exchange_strong_explicit(&c[1], &e, e + 2, o,
            wide ? memory_order_acquire : memory_order_relaxed, s))
        ;
}
"#;

const FENCES: &str = "\
kernel void mirror(global int *out, global int *g, int flags) {
    size_t l = get_local_id(0), n = get_local_size(0);
    size_t base = get_group_id(0) * n;
    g[base + l] = (int)l;
    work_group_barrier(flags);
    out[base + l] = g[base + n - 1 - l];
}
kernel void fenced(global int *out, global int *g, global atomic_int *ready,
                   int flags, int order, int scope) {
    size_t l = get_local_id(0), n = get_local_size(0);
    g[l] = (int)l;
    atomic_work_item_fence(flags, (memory_order)order, (memory_scope)scope);
    atomic_store_explicit(&ready[l], 1, memory_order_relaxed, memory_scope_work_group);
    barrier(CLK_LOCAL_MEM_FENCE);
    int r = atomic_load_explicit(&ready[n - 1 - l], memory_order_relaxed, memory_scope_work_group);
    atomic_work_item_fence(flags, (memory_order)order, (memory_scope)scope);
    out[l] = r ? g[n - 1 - l] : -1;
}
kernel void split(global int *out, int flags) {
    size_t l = get_local_id(0);
    if (l < 2)
        barrier(flags);
    out[get_global_id(0)] = (int)l;
}
";

fn int(v: i32) -> Arg<'static> {
    Arg::Value(v.to_le_bytes().to_vec())
}

fn kinds(found: &Findings) -> Vec<ReportKind> {
    found.checker.iter().map(|r| r.kind).collect()
}

#[test]
fn an_atomics_order_and_scope_given_at_run_time_are_the_ones_it_has() {
    let p = common::build(ATOMICS, "atomics.cl", "-cl-std=CL2.0");
    let n = 96;
    for (name, engine) in common::engines() {
        for wide in [0, 1] {
            let c = Buffer::<i32>::new(2);
            let old = common::output_of(
                &p,
                "count",
                engine,
                NdRange::new([n]).local([32]),
                n,
                vec![Arg::Buffer(&c), int(wide)],
            );
            // Each work-item read a different count: 0 to n - 1.
            let mut seen = old.clone();
            seen.sort_unstable();
            assert_eq!(
                seen,
                (0..n as i32).collect::<Vec<_>>(),
                "{name} wide={wide}"
            );
            assert_eq!(
                c.to_vec(),
                vec![n as i32, 2 * n as i32],
                "{name} wide={wide}"
            );
        }
    }
    // Checked: work-group scope across three groups is too narrow; device
    // scope is not.
    for (wide, narrow) in [(0, true), (1, false)] {
        let c = Buffer::<i32>::new(2);
        let old = Buffer::<i32>::new(n);
        let found = common::run(
            &p,
            "count",
            NdRange::new([n]).local([32]),
            &[Arg::Buffer(&old), Arg::Buffer(&c), int(wide)],
            true,
        );
        assert_eq!(
            kinds(&found).contains(&ReportKind::ScopeTooNarrow),
            narrow,
            "wide={wide}: {:?}",
            found.checker
        );
        assert!(
            !kinds(&found).contains(&ReportKind::DataRace),
            "{:?}",
            found.checker
        );
        assert_eq!(c.to_vec(), vec![n as i32, 2 * n as i32]);
    }
}

#[test]
fn a_barriers_flags_given_at_run_time_fence_what_they_name() {
    let p = common::build(FENCES, "fences.cl", "-cl-std=CL2.0");
    let (n, local) = (48, 16);
    let expect: Vec<i32> = (0..n).map(|i| (local - 1 - i % local) as i32).collect();
    // CLK_LOCAL_MEM_FENCE leaves the global exchange unordered, a race;
    // CLK_GLOBAL_MEM_FENCE, alone or with the others, orders it.
    for (flags, race) in [(1, true), (2, false), (3, false), (7, false)] {
        let out = Buffer::<i32>::new(n);
        let g = Buffer::<i32>::new(n);
        let found = common::run(
            &p,
            "mirror",
            NdRange::new([n]).local([local]),
            &[Arg::Buffer(&out), Arg::Buffer(&g), int(flags)],
            true,
        );
        assert_eq!(
            kinds(&found).contains(&ReportKind::DataRace),
            race,
            "flags={flags}: {:?}",
            found.checker
        );
        assert_eq!(out.to_vec(), expect, "flags={flags}");
        for (name, engine) in common::engines() {
            let g = Buffer::<i32>::new(n);
            let out = common::output_of(
                &p,
                "mirror",
                engine,
                NdRange::new([n]).local([local]),
                n,
                vec![Arg::Buffer(&g), int(flags)],
            );
            assert_eq!(out, expect, "{name} flags={flags}");
        }
    }
}

#[test]
fn a_fence_of_run_time_flags_order_and_scope_is_the_fence_they_name() {
    let p = common::build(FENCES, "fences.cl", "-cl-std=CL2.0");
    let n = 16;
    let expect: Vec<i32> = (0..n).map(|i| (n - 1 - i) as i32).collect();
    // Each work-item publishes `g[l]` with a release fence and a relaxed
    // store of `ready[l]`; its mirror reads the flag (set: the barrier
    // ran every store before), an acquire fence, and `g`. Fences of
    // global flags, acquire-release or sequentially consistent, of
    // work-group scope or wider synchronize and order the data; local
    // flags, a relaxed order, or an acquire or release alone do not, a
    // race. Work-item scope with global
    // flags is an invalid argument (`000_96da91f170ff246f.txt`: only with
    // CLK_IMAGE_MEM_FENCE alone).
    use ReportKind::{DataRace, InvalidArgument};
    let cases = [
        ((2, 4, 1), None),
        ((3, 5, 2), None),
        ((6, 4, 3), None),
        ((1, 4, 1), Some(DataRace)),
        ((2, 0, 1), Some(DataRace)),
        // Both fences take the one order: acquire alone or release alone
        // leaves one side without its half (a release before the flag's
        // store, an acquire after its load).
        ((2, 2, 1), Some(DataRace)),
        ((2, 3, 1), Some(DataRace)),
        ((2, 4, 0), Some(InvalidArgument)),
    ];
    for ((flags, order, scope), report) in cases {
        let out = Buffer::<i32>::new(n);
        let g = Buffer::<i32>::new(n);
        let ready = Buffer::<i32>::new(n);
        let found = common::run(
            &p,
            "fenced",
            NdRange::new([n]).local([n]),
            &[
                Arg::Buffer(&out),
                Arg::Buffer(&g),
                Arg::Buffer(&ready),
                int(flags),
                int(order),
                int(scope),
            ],
            true,
        );
        let mut found = kinds(&found);
        found.dedup();
        assert_eq!(
            found,
            Vec::from_iter(report),
            "flags={flags} order={order} scope={scope}"
        );
        if report != Some(InvalidArgument) {
            assert_eq!(out.to_vec(), expect);
        }
    }
}

#[test]
fn a_divergent_barrier_of_run_time_flags_is_reported_at_its_line() {
    for (options, checked) in [
        ("-cl-std=CL2.0", false),
        ("-cl-std=CL2.0", true),
        ("-cl-std=CL2.0 -cl-opt-disable", true),
    ] {
        let p = common::build(FENCES, "fences.cl", options);
        let out = Buffer::<i32>::new(8);
        let e = p.kernel("split").unwrap().run_with(
            &clsync::Runtime::new(),
            NdRange::new([8]).local([4]),
            &[Arg::Buffer(&out), int(2)],
            |l| l,
            checked,
        );
        let text = match e {
            Err(e) => e.to_string(),
            Ok(found) => format!("{:?}", found.checker).to_lowercase(),
        };
        assert!(text.contains("divergence"), "{text}");
        assert!(text.contains("fences.cl:22"), "{text}");
    }
}
