//! Atomics of local memory in work-item loops (`translate::group_atomics`):
//! where only the group's thread reaches the object, a read-modify-write
//! is plain code. Every operation of OpenCL C 2.0 and 1.x on local memory
//! (through generic pointers, as the 2.0 built-ins take them, and local
//! ones), at work-group scope and at device scope with sequential
//! consistency (which keeps the locked instruction), with lane batches,
//! without, and on coroutines, in groups that fill batches and groups that
//! fit none. Several work-items hit each cell, so a lost update shows: the
//! final cells against a sequential reference, and the old values each
//! operation returned as a linearizable history (each old value is the
//! cell's value just before that operation in some order of them all),
//! whatever order the engine ran the work-items in.

mod common;

use std::collections::HashMap;

use clsync::{Buffer, NdRange};
use clsync_opencl::{Arg, Program};

const SRC: &str = r#"
// Work-item `l` applies each operation to cell `k = l % 3` of its kind;
// `old` gets what each returned, `cells` the group's cells at the end.
// Once relaxed at work-group scope, once sequentially consistent at device
// scope (constants here; `run_time_sync.rs` passes them at run time).
#define OPS(NAME, o, s) \
kernel void NAME(global int *old, global int *cells) { \
    local atomic_int c[3 * 8]; \
    local int d[3 * 2]; \
    size_t l = get_local_id(0), n = get_local_size(0); \
    for (size_t i = l; i < 3 * 8; i += n) atomic_init(&c[i], (int)i * 100); \
    for (size_t i = l; i < 3 * 2; i += n) d[i] = 1000; \
    barrier(CLK_LOCAL_MEM_FENCE); \
    int k = (int)(l % 3); \
    int v = (int)l + 1; \
    global int *mine = old + l * 10; \
    mine[0] = atomic_fetch_add_explicit(&c[k], v, o, s); \
    mine[1] = atomic_fetch_sub_explicit(&c[3 + k], v, o, s); \
    mine[2] = atomic_fetch_and_explicit(&c[6 + k], ~(1 << (l % 7)), o, s); \
    mine[3] = atomic_fetch_or_explicit(&c[9 + k], 1 << (l % 9), o, s); \
    mine[4] = atomic_fetch_xor_explicit(&c[12 + k], v * 3, o, s); \
    mine[5] = atomic_fetch_min_explicit(&c[15 + k], 50 - v, o, s); \
    mine[6] = atomic_fetch_max_explicit(&c[18 + k], v * 7 % 31, o, s); \
    mine[7] = atomic_exchange_explicit(&c[21 + k], v, o, s); \
    /* An addition by compare-exchange: the value it replaced. */ \
    local atomic_int *a = (local atomic_int *)&d[k]; \
    int e = atomic_load_explicit(a, memory_order_relaxed, memory_scope_work_group); \
    while (!atomic_compare_exchange_strong_explicit(a, &e, e + v, o, o, s)) {} \
    mine[8] = e; \
    /* OpenCL 1.x, on a local int pointer. */ \
    mine[9] = atomic_inc(&d[3 + k]); \
    barrier(CLK_LOCAL_MEM_FENCE); \
    for (size_t i = l; i < 3 * 8; i += n) \
        cells[get_group_id(0) * 30 + i] = atomic_load_explicit(&c[i], memory_order_relaxed, memory_scope_work_group); \
    for (size_t i = l; i < 3 * 2; i += n) cells[get_group_id(0) * 30 + 24 + i] = d[i]; \
}
OPS(ops_group, memory_order_relaxed, memory_scope_work_group)
OPS(ops_device, memory_order_seq_cst, memory_scope_device)

// Every work-item of every group adds to one global counter, reached
// through a local access chain's generic cast as the local cells are: it
// stays a locked instruction, as other groups add to it at once.
kernel void global_count(global atomic_int *count, int rounds) {
    for (int r = 0; r < rounds; r++)
        atomic_fetch_add_explicit(&count[0], 1, memory_order_relaxed, memory_scope_device);
}
"#;

/// What operation `op` (0 to 9, as `ops` numbers them) of work-item `l`
/// makes of value `x`.
fn apply(op: usize, l: usize, x: i32) -> i32 {
    let v = l as i32 + 1;
    match op {
        0 | 8 => x.wrapping_add(v),
        1 => x.wrapping_sub(v),
        2 => x & !(1 << (l % 7)),
        3 => x | (1 << (l % 9)),
        4 => x ^ (v * 3),
        5 => x.min(50 - v),
        6 => x.max(v * 7 % 31),
        7 => v,
        9 => x + 1,
        _ => unreachable!("ten operations"),
    }
}

/// The cell operation `op` of a work-item of cell `k` reaches, in `cells`'
/// group layout, and its initial value.
fn cell(op: usize, k: usize) -> (usize, i32) {
    match op {
        0..=7 => (3 * op + k, (3 * op + k) as i32 * 100),
        8 => (24 + k, 1000),
        _ => (27 + k, 1000),
    }
}

/// One operation on a cell: the old value it returned, and what it makes
/// of a value.
type Done = (i32, Box<dyn Fn(i32) -> i32>);

/// Whether the operations `ops` on one cell from `init`, ending at
/// `last`, are a linearizable history: some order of them in which each
/// returned the value the one before left. The order is searched
/// greedily (of the operations that saw the current value, one whose
/// result another saw, else the first); the order found is the proof, so a
/// history this accepts is one.
fn linearizable(init: i32, last: i32, ops: &[Done]) -> bool {
    let mut left: Vec<usize> = (0..ops.len()).collect();
    let mut x = init;
    while !left.is_empty() {
        let seen: Vec<usize> = left.iter().copied().filter(|&i| ops[i].0 == x).collect();
        let Some(&pick) = seen
            .iter()
            .find(|&&i| left.iter().any(|&j| j != i && ops[j].0 == (ops[i].1)(x)))
            .or(seen.first())
        else {
            return false;
        };
        x = (ops[pick].1)(x);
        left.retain(|&i| i != pick);
    }
    x == last
}

#[test]
fn every_operation_is_linearizable_and_ends_as_a_sequential_reference() {
    let p: Program = common::build(SRC, "group_atomics.cl", "-cl-std=CL2.0");
    for n in [64usize, 12, 5] {
        let groups = 3;
        for kernel in ["ops_group", "ops_device"] {
            for (engine, how) in common::engines() {
                let cells = Buffer::<i32>::new(30 * groups);
                let old = common::output_of(
                    &p,
                    kernel,
                    how,
                    NdRange::new([n * groups]).local([n]),
                    10 * n,
                    vec![Arg::Buffer(&cells)],
                );
                let cells = cells.to_vec();
                let what = format!("{kernel} on {engine}, local {n}");
                for g in 0..groups {
                    let got = &cells[30 * g..30 * (g + 1)];
                    for op in 0..10 {
                        for k in 0..3 {
                            let (at, init) = cell(op, k);
                            let items: Vec<usize> = (0..n).filter(|l| l % 3 == k).collect();
                            // The sequential result, in local order.
                            let want = items.iter().fold(init, |x, &l| apply(op, l, x));
                            assert_eq!(got[at], want, "op {op}, cell {k}, group {g}: {what}");
                        }
                    }
                }
                // Every group writes the same `old` (10 per work-item): the
                // last one's, whichever that was; its history is checked.
                let last = &cells[30 * (groups - 1)..];
                let mut by_cell: HashMap<(usize, usize), Vec<Done>> = HashMap::new();
                for l in 0..n {
                    for op in 0..10 {
                        let f: Box<dyn Fn(i32) -> i32> = Box::new(move |x| apply(op, l, x));
                        by_cell
                            .entry((op, l % 3))
                            .or_default()
                            .push((old[10 * l + op], f));
                    }
                }
                for ((op, k), ops) in &by_cell {
                    let (at, init) = cell(*op, *k);
                    assert!(
                        linearizable(init, last[at], ops),
                        "op {op}, cell {k}: old values {:?}: {what}",
                        ops.iter().map(|o| o.0).collect::<Vec<_>>()
                    );
                }
            }
        }
    }
}

#[test]
fn a_global_counter_that_other_groups_share_loses_no_update() {
    let p: Program = common::build(SRC, "group_atomics.cl", "-cl-std=CL2.0");
    // Four threads and 256 groups adding 64 * 2000 each: a plain
    // read-modify-write here loses updates (the other threads' additions
    // land between its load and its store); made so on purpose, it failed
    // each of eight runs on a two-core machine.
    let count = Buffer::<i32>::new(1);
    p.kernel("global_count")
        .unwrap()
        .run(
            &clsync::Runtime::with_threads(4),
            NdRange::new([256 * 64]).local([64]),
            &[Arg::Buffer(&count), Arg::of(&[2000i32])],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(count.to_vec(), [256 * 64 * 2000]);
}
