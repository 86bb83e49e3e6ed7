//! The Khronos OpenCL-CTS synchronization tests that `crates/clsync/tests/
//! cts_sync.rs` ports as Rust kernels, as OpenCL C: `test_barrier`,
//! `test_local`, `atomic_flag` mutual exclusion (global and local), the
//! sub-group barrier reversal, non-uniform work-groups, and the
//! inclusive-scopes pattern. Each is checked the CTS's way, against a
//! sequential computation on the host; each runs unchecked (work-item loops
//! where the kernel allows) and checked, where it must find nothing.

mod common;

use clsync::{Buffer, NdRange};
use clsync_opencl::{Arg, Program};

const SRC: &str = r#"
kernel void compute_sum(global const int *src, global int *dst, local int *t) {
    int l = get_local_id(0);
    t[l] = src[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        int s = 0;
        for (int i = 0; i < get_local_size(0); i++) s += t[i];
        t[0] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    dst[get_global_id(0)] = t[0];
}

kernel void local_reduce(global const uint *in, global uint *partial, local uint *s, uint n) {
    uint l = get_local_id(0), g = get_global_id(0);
    s[l] = g < n ? in[g] : 0;
    for (uint h = get_local_size(0) / 2; h > 0; h /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < h) s[l] += s[l + h];
    }
    if (l == 0) partial[get_group_id(0)] = s[0];
}

kernel void flag_lock(global atomic_flag *lock, global uint *counter, global uint *tickets,
                      global atomic_uint *order) {
    while (atomic_flag_test_and_set_explicit(lock, memory_order_relaxed, memory_scope_device)) {}
    atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_acquire, memory_scope_device);
    uint c = *counter;
    *counter = c + 1;
    tickets[get_global_id(0)] = c;
    atomic_fetch_add_explicit(order, 1u, memory_order_relaxed, memory_scope_device);
    atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_release, memory_scope_device);
    atomic_flag_clear_explicit(lock, memory_order_relaxed, memory_scope_device);
}

kernel void local_flag_lock(global uint *counts) {
    local atomic_flag lock;
    local uint count;
    if (get_local_id(0) == 0) {
        atomic_flag_clear_explicit(&lock, memory_order_relaxed, memory_scope_work_group);
        count = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire, memory_scope_work_group)) {}
    count += 1;
    atomic_flag_clear_explicit(&lock, memory_order_release, memory_scope_work_group);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) counts[get_group_id(0)] = count;
}

kernel void sub_group_reverse(global const uint *in, global uint *out, local uint *t) {
    uint l = get_local_id(0), s = get_sub_group_local_id();
    uint size = get_sub_group_size(), first = l - s;
    t[l] = in[get_global_id(0)];
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = t[first + size - 1 - s];
}

kernel void non_uniform(global atomic_uint *hits, global atomic_uint *bad, global uint *sums,
                        local uint *s, uint dims) {
    size_t lin = get_global_linear_id();
    atomic_fetch_add(&hits[lin], 1u);
    for (uint d = 0; d < dims; d++) {
        size_t g = get_global_size(d), e = get_enqueued_local_size(d), groups = get_num_groups(d);
        size_t want = (get_group_id(d) == groups - 1 && g % e != 0) ? g % e : e;
        if (get_local_size(d) != want || groups != (g + e - 1) / e) atomic_fetch_add(bad, 1u);
    }
    size_t size = get_local_size(0) * get_local_size(1) * get_local_size(2);
    s[get_local_linear_id()] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint total = 0;
    for (size_t i = 0; i < size; i++) total += s[i];
    sums[lin] = total;
}

// The inclusive-scopes pattern, the producer's and consumer's scopes
// compiled in (PRODUCER, CONSUMER; INNER is the narrower).
#ifndef PRODUCER
#define PRODUCER memory_scope_device
#define CONSUMER memory_scope_device
#define INNER 2
#endif
kernel void inclusive(global uint *data, global atomic_uint *counters, global atomic_uint *checked,
                      global atomic_uint *bad) {
    size_t g = get_global_id(0);
    size_t inst, members, first;
#if INNER == 0
    inst = get_group_id(0) * get_enqueued_num_sub_groups() + get_sub_group_id();
    members = get_sub_group_size();
    first = get_group_id(0) * get_local_size(0) + get_sub_group_id() * get_max_sub_group_size();
#elif INNER == 1
    inst = get_group_id(0); members = get_local_size(0); first = get_group_id(0) * get_local_size(0);
#else
    inst = 0; members = get_global_size(0); first = 0;
#endif
    data[g] = g + 1;
    uint old = atomic_fetch_add_explicit(&counters[inst], 1u, memory_order_release, PRODUCER);
    if (old == members - 1) {
        uint seen = atomic_load_explicit(&counters[inst], memory_order_acquire, CONSUMER);
        int wrong = seen != members;
        for (size_t i = first; i < first + members; i++) wrong |= data[i] != i + 1;
        if (wrong) atomic_fetch_add(bad, 1u);
        atomic_fetch_add(checked, 1u);
    }
}
"#;

fn program(options: &str) -> Program {
    common::build(SRC, "cts.cl", &format!("-cl-std=CL2.0 {options}"))
}

/// Runs `name` unchecked and then checked on fresh buffers from `setup`,
/// and hands each run's buffers to `verify`; the checked run must find
/// nothing.
fn both_modes<B>(
    p: &Program,
    name: &str,
    range: NdRange,
    setup: impl Fn() -> B,
    args: impl Fn(&B) -> Vec<Arg<'_>>,
    verify: impl Fn(&B, &str),
) {
    for checked in [false, true] {
        let bufs = setup();
        let found = common::run(p, name, range.clone(), &args(&bufs), checked);
        assert!(found.is_empty(), "{name}, checked: {found:?}");
        verify(&bufs, if checked { "checked" } else { "unchecked" });
    }
}

#[test]
fn cts_test_barrier() {
    let p = program("");
    assert_eq!(p.kernel("compute_sum").unwrap().engine(), Ok(()));
    for (n, local) in [(4096usize, 256usize), (1000, 100), (777, 37)] {
        let input: Vec<i32> = (0..n as i32).map(|i| (i * 31) % 97 - 40).collect();
        both_modes(
            &p,
            "compute_sum",
            NdRange::new([n]).local([local]),
            || (Buffer::from_slice(&input), Buffer::<i32>::new(n)),
            |(src, dst)| vec![Arg::Buffer(src), Arg::Buffer(dst), Arg::Local(local * 4)],
            |(_, dst), mode| {
                let got = dst.to_vec();
                for (g, chunk) in input.chunks(local).enumerate() {
                    let want: i32 = chunk.iter().sum();
                    let mine = &got[g * local..g * local + chunk.len()];
                    assert!(mine.iter().all(|&v| v == want), "{mode}: group {g}");
                }
            },
        );
    }
}

#[test]
fn cts_test_local() {
    let p = program("");
    for n in [1usize, 255, 256, 257, 10_000] {
        let data: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
        let groups = n.div_ceil(256);
        both_modes(
            &p,
            "local_reduce",
            NdRange::new([groups * 256]).local([256]),
            || (Buffer::from_slice(&data), Buffer::<u32>::new(groups)),
            |(input, partial)| {
                vec![
                    Arg::Buffer(input),
                    Arg::Buffer(partial),
                    Arg::Local(1024),
                    Arg::of(&[n as u32]),
                ]
            },
            |(_, partial), mode| {
                let want: Vec<u32> = data
                    .chunks(256)
                    .map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b)))
                    .collect();
                assert_eq!(partial.to_vec(), want, "{mode}: n = {n}");
            },
        );
    }
}

#[test]
fn cts_atomic_flag_mutual_exclusion() {
    let p = program("");
    let n = 1024;
    both_modes(
        &p,
        "flag_lock",
        NdRange::new([n]).local([32]),
        || {
            (
                Buffer::<u32>::new(1),
                Buffer::<u32>::new(1),
                Buffer::<u32>::new(n),
                Buffer::<u32>::new(1),
            )
        },
        |(lock, counter, tickets, order)| {
            vec![
                Arg::Buffer(lock),
                Arg::Buffer(counter),
                Arg::Buffer(tickets),
                Arg::Buffer(order),
            ]
        },
        |(_, counter, tickets, order), mode| {
            assert_eq!(counter.to_vec(), [n as u32], "{mode}");
            assert_eq!(order.to_vec(), [n as u32], "{mode}");
            let mut t = tickets.to_vec();
            t.sort_unstable();
            assert_eq!(
                t,
                (0..n as u32).collect::<Vec<_>>(),
                "{mode}: distinct counts"
            );
        },
    );
    let groups = 8;
    both_modes(
        &p,
        "local_flag_lock",
        NdRange::new([64 * groups]).local([64]),
        || Buffer::<u32>::new(groups),
        |counts| vec![Arg::Buffer(counts)],
        |counts, mode| assert_eq!(counts.to_vec(), vec![64; groups], "{mode}"),
    );
}

#[test]
fn cts_sub_group_barrier_reversal() {
    let p = program("");
    let data: Vec<u32> = (0..2000u32).map(|i| i * 7 + 3).collect();
    let local = 200;
    both_modes(
        &p,
        "sub_group_reverse",
        NdRange::new([2000]).local([local]),
        || (Buffer::from_slice(&data), Buffer::<u32>::new(2000)),
        |(input, out)| vec![Arg::Buffer(input), Arg::Buffer(out), Arg::Local(local * 4)],
        |(_, out), mode| {
            let got = out.to_vec();
            // Each sub-group's slice reversed: read the sub-group size the
            // kernel saw from where its first slice starts over again.
            let sg = (0..local)
                .find(|&k| got[k] == data[0])
                .map(|k| k + 1)
                .expect("the first sub-group's last item holds item 0");
            for (g, chunk) in data.chunks(local).enumerate() {
                for (s, part) in chunk.chunks(sg).enumerate() {
                    let at = g * local + s * sg;
                    let want: Vec<u32> = part.iter().rev().copied().collect();
                    assert_eq!(&got[at..at + part.len()], &want[..], "{mode}: {g}/{s}");
                }
            }
        },
    );
}

#[test]
fn cts_non_uniform_work_groups() {
    let p = program("");
    for (global, local) in [
        (vec![17usize], vec![4usize]),
        (vec![1000], vec![128]),
        (vec![13, 7], vec![4, 3]),
        (vec![9, 5, 6], vec![4, 2, 4]),
    ] {
        let dims = global.len();
        let range = match dims {
            1 => NdRange::new([global[0]]).local([local[0]]),
            2 => NdRange::new([global[0], global[1]]).local([local[0], local[1]]),
            _ => NdRange::new([global[0], global[1], global[2]])
                .local([local[0], local[1], local[2]]),
        };
        let n: usize = global.iter().product();
        let max_local: usize = local.iter().product();
        both_modes(
            &p,
            "non_uniform",
            range,
            || {
                (
                    Buffer::<u32>::new(n),
                    Buffer::<u32>::new(1),
                    Buffer::<u32>::new(n),
                )
            },
            |(hits, bad, sums)| {
                vec![
                    Arg::Buffer(hits),
                    Arg::Buffer(bad),
                    Arg::Buffer(sums),
                    Arg::Local(max_local * 4),
                    Arg::of(&[dims as u32]),
                ]
            },
            |(hits, bad, sums), mode| {
                assert!(hits.to_vec().iter().all(|&h| h == 1), "{mode}: {global:?}");
                assert_eq!(bad.to_vec(), [0], "{mode}: {global:?}");
                // Each work-item's group sum is its group's actual size.
                let mut want = vec![0u32; n];
                let mut g3 = global.clone();
                let mut l3 = local.clone();
                g3.resize(3, 1);
                l3.resize(3, 1);
                for (lin, w) in want.iter_mut().enumerate() {
                    let id = [lin % g3[0], lin / g3[0] % g3[1], lin / (g3[0] * g3[1])];
                    let size: usize = (0..3)
                        .map(|d| {
                            let last = id[d] / l3[d] == g3[d].div_ceil(l3[d]) - 1;
                            if last && g3[d] % l3[d] != 0 {
                                g3[d] % l3[d]
                            } else {
                                l3[d]
                            }
                        })
                        .product();
                    *w = size as u32;
                }
                assert_eq!(sums.to_vec(), want, "{mode}: {global:?}/{local:?}");
            },
        );
    }
}

#[test]
fn cts_inclusive_scopes_release_add_acquire_last() {
    let scopes = [
        "memory_scope_sub_group",
        "memory_scope_work_group",
        "memory_scope_device",
        "memory_scope_all_svm_devices",
    ];
    for (pi, producer) in scopes.iter().enumerate() {
        for (ci, consumer) in scopes.iter().enumerate() {
            let inner = pi.min(ci).min(2);
            let p = program(&format!(
                "-D PRODUCER={producer} -D CONSUMER={consumer} -D INNER={inner}"
            ));
            let (n, local) = (1500usize, 100usize);
            both_modes(
                &p,
                "inclusive",
                NdRange::new([n]).local([local]),
                || {
                    (
                        Buffer::<u32>::new(n),
                        Buffer::<u32>::new(n),
                        Buffer::<u32>::new(1),
                        Buffer::<u32>::new(1),
                    )
                },
                |(data, counters, checked, bad)| {
                    vec![
                        Arg::Buffer(data),
                        Arg::Buffer(counters),
                        Arg::Buffer(checked),
                        Arg::Buffer(bad),
                    ]
                },
                |(_, _, checked, bad), mode| {
                    // One last work-item per scope instance: per group, per
                    // device; per sub-group, at least one per group.
                    let c = checked.to_vec()[0] as usize;
                    let groups = n / local;
                    let ok = match inner {
                        0 => c >= groups && c <= n,
                        1 => c == groups,
                        _ => c == 1,
                    };
                    assert!(ok, "{mode} {producer}/{consumer}: {c} last work-items");
                    assert_eq!(bad.to_vec(), [0], "{mode} {producer}/{consumer}");
                },
            );
        }
    }
}
