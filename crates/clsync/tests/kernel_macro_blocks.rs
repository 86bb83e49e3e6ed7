//! `#[kernel]` runs a loop that carries a value per work-item (`for k in
//! 0..w { acc = … }`) in register blocks where it may: in an unchecked
//! launch whose rows hold eight work-items, and whose accesses are in
//! bounds at every iteration, the whole loop runs for sixteen work-items of
//! a row at a time (eight where rows are shorter than sixteen), iteration
//! `k` of the block's work-items before `k + 1`, with their values in
//! registers (`lift/blocked.rs`, `Group::for_each_block`); the
//! work-items past a row's last block each run the whole loop alone. Between
//! two barriers OpenCL orders no work-item's statements before another's
//! (`004_bfca21a36d7bd2da.txt`), so this is one interleaving the kernel
//! allows. Every kernel here gives what a sequential computation gives, in
//! blocks, in the other forms, and on the coroutine engine; the tickets
//! kernel shows which interleaving ran.

mod common;

use clsync::engine::KernelForm;
use clsync::sync::LOCAL;
use clsync::{kernel, AtomicUint, Buffer, Launch, LocalArg, NdRange, WorkItem};

// ---- kernels ---------------------------------------------------------------

/// A tiled product of `n`×`n` matrices in square tiles of the group's
/// width, folded in an order-sensitive way (`acc * 3 + (a ^ b)`): the
/// tiled SGEMM's loops, with every step's order visible in the result.
#[kernel(groups)]
fn tiled_fold(
    wi: &WorkItem,
    a: &Buffer<u32>,
    b: &Buffer<u32>,
    c: &Buffer<u32>,
    n: usize,
    ta: LocalArg<u32>,
    tb: LocalArg<u32>,
) {
    let (ta, tb) = (wi.local(ta), wi.local(tb));
    let (tx, ty) = (wi.get_local_id(0), wi.get_local_id(1));
    let (col, row) = (wi.get_global_id(0), wi.get_global_id(1));
    let w = wi.get_local_size(0);
    let mut acc = 0u32;
    for t in 0..n / w {
        ta.set(ty * w + tx, a.get(row * n + t * w + tx));
        tb.set(ty * w + tx, b.get((t * w + ty) * n + col));
        wi.barrier(LOCAL);
        for k in 0..w {
            acc = acc
                .wrapping_mul(3)
                .wrapping_add(ta.get(ty * w + k) ^ tb.get(k * w + tx));
        }
        wi.barrier(LOCAL);
    }
    c.set(row * n + col, acc);
}

/// Two carried values through a loop over the whole group's tile, in
/// groups of any shape: rows with and without a block, and a remainder.
#[kernel(groups)]
fn weave(wi: &WorkItem, input: &Buffer<u32>, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let (t, l) = (wi.local(tile), wi.get_local_linear_id());
    let n = wi.get_local_size(0) * wi.get_local_size(1) * wi.get_local_size(2);
    t.set(l, input.get(wi.get_global_linear_id()));
    wi.barrier(LOCAL);
    let mut acc = l as u32;
    let mut odd = 0u32;
    for k in 0..n {
        acc = acc.wrapping_mul(3).wrapping_add(t.get(k) ^ l as u32);
        odd += acc & 1;
    }
    out.set(wi.get_global_linear_id(), acc ^ odd.wrapping_mul(0x9e37));
}

/// Three tickets per work-item from one counter, each kept, and how many
/// it took.
#[kernel(groups)]
fn block_tickets(wi: &WorkItem, counter: &Buffer<AtomicUint>, out: &Buffer<u32>) {
    let l = wi.get_local_linear_id();
    let mut taken = 0u32;
    for k in 0..3 {
        out.set(3 * l + k, counter.at(0).fetch_add(1));
        taken += 1;
    }
    out.set(3 * wi.get_local_size(0) * wi.get_local_size(1) + l, taken);
}

/// `block_tickets` with a `let` in its loop, which the lifting does not
/// jam but does run in blocks.
#[kernel(groups)]
fn block_tickets_let(wi: &WorkItem, counter: &Buffer<AtomicUint>, out: &Buffer<u32>) {
    let l = wi.get_local_linear_id();
    let mut taken = 0u32;
    for k in 0..3 {
        let ticket = counter.at(0).fetch_add(1);
        out.set(3 * l + k, ticket);
        taken += 1;
    }
    out.set(3 * wi.get_local_size(0) * wi.get_local_size(1) + l, taken);
}

/// A loop with a `let` and an `if` in its body, and two carried values.
#[kernel(groups)]
fn branchy(wi: &WorkItem, input: &Buffer<u32>, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let (t, l, n) = (wi.local(tile), wi.get_local_id(0), wi.get_local_size(0));
    t.set(l, input.get(wi.get_global_id(0)));
    wi.barrier(LOCAL);
    let mut acc = 0u32;
    let mut hits = 0u32;
    for k in 0..n {
        let v = t.get(k);
        if v % 3 == l as u32 % 3 {
            acc = acc.wrapping_mul(5).wrapping_add(v);
            hits += 1;
        } else {
            acc ^= v;
        }
    }
    out.set(wi.get_global_id(0), acc ^ (hits << 20));
}

/// A loop whose last iteration reads one past the tile.
#[kernel(groups)]
fn one_past(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let (t, l, n) = (wi.local(tile), wi.get_local_id(0), wi.get_local_size(0));
    t.set(l, l as u32);
    wi.barrier(LOCAL);
    let mut acc = 0u32;
    for k in 0..n + 1 {
        acc += t.get(k);
    }
    out.set(wi.get_global_id(0), acc);
}

/// Work-item 21's third step panics.
fn step(l: usize, k: usize) -> u32 {
    assert!(!(l == 21 && k == 2), "work-item 21 stops at step 2");
    (l * k) as u32
}

/// A loop whose body calls `step`.
#[kernel(groups)]
fn stops(wi: &WorkItem, out: &Buffer<u32>) {
    let l = wi.get_local_id(0);
    let mut acc = 0u32;
    for k in 0..4 {
        acc += step(l, k);
    }
    out.set(wi.get_global_id(0), acc);
}

// ---- references ------------------------------------------------------------

fn values(n: usize, salt: u32) -> Vec<u32> {
    (0..n as u32)
        .map(|i| i.wrapping_mul(2654435761).wrapping_add(salt) >> 7)
        .collect()
}

/// `tiled_fold`, sequentially.
/// The tiles visit `k` in order, a tile's width at a time: one fold over
/// the row of `a` and the column of `b`.
fn tiled_fold_reference(a: &[u32], b: &[u32], n: usize) -> Vec<u32> {
    let mut c = vec![0u32; n * n];
    for row in 0..n {
        for col in 0..n {
            let mut acc = 0u32;
            for k in 0..n {
                acc = acc
                    .wrapping_mul(3)
                    .wrapping_add(a[row * n + k] ^ b[k * n + col]);
            }
            c[row * n + col] = acc;
        }
    }
    c
}

/// `weave`, sequentially, for groups of `len` work-items, given the input
/// one group after another, each in local linear order.
fn weave_reference(input: &[u32], len: usize) -> Vec<u32> {
    input
        .chunks(len)
        .flat_map(|group| {
            (0..len).map(move |l| {
                let (mut acc, mut odd) = (l as u32, 0u32);
                for &v in group {
                    acc = acc.wrapping_mul(3).wrapping_add(v ^ l as u32);
                    odd += acc & 1;
                }
                acc ^ odd.wrapping_mul(0x9e37)
            })
        })
        .collect()
}

// ---- tests -----------------------------------------------------------------

/// `branchy`, sequentially.
fn branchy_reference(input: &[u32], len: usize) -> Vec<u32> {
    input
        .chunks(len)
        .flat_map(|group| {
            (0..len).map(move |l| {
                let (mut acc, mut hits) = (0u32, 0u32);
                for &v in group {
                    if v % 3 == l as u32 % 3 {
                        acc = acc.wrapping_mul(5).wrapping_add(v);
                        hits += 1;
                    } else {
                        acc ^= v;
                    }
                }
                acc ^ (hits << 20)
            })
        })
        .collect()
}

#[test]
fn the_kernels_are_lifted() {
    assert_eq!(tiled_fold_form(), KernelForm::Groups);
    assert_eq!(weave_form(), KernelForm::Groups);
    assert_eq!(block_tickets_form(), KernelForm::Groups);
    assert_eq!(block_tickets_let_form(), KernelForm::Groups);
    assert_eq!(branchy_form(), KernelForm::Groups);
    assert_eq!(one_past_form(), KernelForm::Groups);
    assert_eq!(stops_form(), KernelForm::Groups);
}

/// Tiles of 16 (a block per row), 32 (two) and 8 (a block of eight),
/// lifted checked and unchecked and on the coroutine engine, against the
/// sequential fold.
#[test]
fn a_tiled_fold_in_blocks_gives_the_sequential_result() {
    common::within(120, || {
        let rt = common::rt();
        for (n, w) in [(32, 16), (64, 32), (16, 8)] {
            let (a, b) = (values(n * n, 1), values(n * n, 2));
            let want = tiled_fold_reference(&a, &b, n);
            let (ab, bb) = (Buffer::from_slice(&a), Buffer::from_slice(&b));
            for checked in [false, true] {
                let mut launch =
                    Launch::new("tiled_fold", NdRange::new([n, n]).local([w, w])).checked(checked);
                let ta = launch.local::<u32>(w * w);
                let tb = launch.local::<u32>(w * w);
                let lifted = Buffer::<u32>::new(n * n);
                tiled_fold_launch(&rt, &launch, &ab, &bb, &lifted, n, ta, tb).unwrap();
                assert_eq!(lifted.to_vec(), want, "lifted, {n}/{w}, checked: {checked}");
                let general = Buffer::<u32>::new(n * n);
                rt.launch(&launch, |wi| tiled_fold(wi, &ab, &bb, &general, n, ta, tb))
                    .unwrap();
                assert_eq!(general.to_vec(), want, "coroutines, {n}/{w}");
            }
        }
    });
}

/// Groups of 40 (two blocks and eight left over), 20 × 3 (a block and four
/// left over per row), 16 × 2 × 2 (a block per row, in three dimensions),
/// 8 × 4 (a block of eight per row) and 4 × 4 (none), two values carried.
#[test]
fn carried_values_in_blocks_and_left_over_work_items_give_the_sequential_result() {
    common::within(120, || {
        let rt = common::rt();
        let shapes: [(&[usize], &[usize]); 5] = [
            (&[80], &[40]),
            (&[40, 3], &[20, 3]),
            (&[16, 4, 2], &[16, 2, 2]),
            (&[8, 8], &[8, 4]),
            (&[8, 8], &[4, 4]),
        ];
        for (global, local) in shapes {
            let (total, len) = (global.iter().product(), local.iter().product::<usize>());
            let input = values(total, 3);
            // A group's tile holds its work-items' inputs, in local order.
            let want = weave_reference(&regroup(&input, global, local), len);
            let data = Buffer::from_slice(&input);
            for checked in [false, true] {
                let range = match global.len() {
                    1 => NdRange::new([global[0]]).local([local[0]]),
                    2 => NdRange::new([global[0], global[1]]).local([local[0], local[1]]),
                    _ => NdRange::new([global[0], global[1], global[2]])
                        .local([local[0], local[1], local[2]]),
                };
                let mut launch = Launch::new("weave", range).checked(checked);
                let tile = launch.local::<u32>(len);
                let (lifted, general) = (Buffer::<u32>::new(total), Buffer::<u32>::new(total));
                weave_launch(&rt, &launch, &data, &lifted, tile).unwrap();
                rt.launch(&launch, |wi| weave(wi, &data, &general, tile))
                    .unwrap();
                let shape = format!("{local:?}, checked: {checked}");
                // Groups are in order along dimension 0 first; each group's
                // work-items in local linear order, as the reference.
                let by_group = |out: Vec<u32>| regroup(&out, global, local);
                assert_eq!(by_group(lifted.to_vec()), want, "lifted, {shape}");
                assert_eq!(by_group(general.to_vec()), want, "coroutines, {shape}");
            }
        }
    });
}

/// A body with a `let` and an `if` in blocks (48: three; 40: two and eight
/// left over; 8: one of eight) and not (4).
#[test]
fn a_body_with_a_let_and_a_branch_in_blocks_gives_the_sequential_result() {
    common::within(60, || {
        for (groups, local) in [(2, 48), (2, 40), (3, 8), (3, 4)] {
            let input = values(groups * local, 4);
            let want = branchy_reference(&input, local);
            let data = Buffer::from_slice(&input);
            common::both_forms_give(
                "branchy",
                (groups, local),
                &want,
                |rt, launch, out, tile, form| {
                    match form {
                        common::Form::Lifted => branchy_launch(rt, launch, &data, out, tile),
                        common::Form::Coroutines => {
                            rt.launch(launch, |wi| branchy(wi, &data, out, tile))
                        }
                    }
                    .unwrap();
                },
            );
        }
    });
}

/// `out`, indexed by global linear id, as its groups' values one group
/// after another, each in local linear order.
fn regroup(out: &[u32], global: &[usize], local: &[usize]) -> Vec<u32> {
    let dim = |v: &[usize], d: usize| v.get(d).copied().unwrap_or(1);
    let (g, l) = (
        [dim(global, 0), dim(global, 1), dim(global, 2)],
        [dim(local, 0), dim(local, 1), dim(local, 2)],
    );
    let mut res = Vec::new();
    for gz in 0..g[2] / l[2] {
        for gy in 0..g[1] / l[1] {
            for gx in 0..g[0] / l[0] {
                for z in 0..l[2] {
                    for y in 0..l[1] {
                        for x in 0..l[0] {
                            let (px, py, pz) = (gx * l[0] + x, gy * l[1] + y, gz * l[2] + z);
                            res.push(out[(pz * g[1] + py) * g[0] + px]);
                        }
                    }
                }
            }
        }
    }
    res
}

/// Which interleaving ran, from the tickets each work-item drew: in blocks
/// (unchecked), a row's blocks of sixteen (of eight where a row holds fewer
/// than sixteen) in order, each drawing iteration `k` for all its
/// work-items before `k + 1`, then the row's work-items past its last
/// block, each all three at once; with rows of fewer than eight, or
/// checked, the interchanged loop, one iteration of every work-item at a
/// time (three iterations, fewer than the four it jams). Each work-item
/// took three either way. The same with a `let` in the loop, which is not
/// jammed.
#[test]
fn blocks_run_a_rows_work_items_an_iteration_at_a_time() {
    common::within(60, || {
        let rt = common::rt();
        let cases = [
            ([40, 1], false),
            ([20, 2], false),
            ([12, 2], false),
            ([6, 2], false),
            ([40, 1], true),
        ];
        for ((local, checked), with_let) in cases.into_iter().flat_map(|c| [(c, false), (c, true)])
        {
            let len = local[0] * local[1];
            let launch =
                Launch::new("block_tickets", NdRange::new(local).local(local)).checked(checked);
            let counter = Buffer::<AtomicUint>::new(1);
            let out = Buffer::<u32>::new(4 * len);
            if with_let {
                block_tickets_let_launch(&rt, &launch, &counter, &out).unwrap();
            } else {
                block_tickets_launch(&rt, &launch, &counter, &out).unwrap();
            }
            let mut want = vec![0u32; 3 * len];
            let mut next = 0;
            let width = match local[0] {
                16.. => 16,
                8.. => 8,
                _ => 0,
            };
            if checked || width == 0 {
                for k in 0..3 {
                    for l in 0..len {
                        want[3 * l + k] = next;
                        next += 1;
                    }
                }
            } else {
                for row in 0..local[1] {
                    let first = row * local[0];
                    let whole = local[0] / width * width;
                    for block in (0..whole).step_by(width) {
                        for k in 0..3 {
                            for x in 0..width {
                                want[3 * (first + block + x) + k] = next;
                                next += 1;
                            }
                        }
                    }
                    for l in first + whole..first + local[0] {
                        for k in 0..3 {
                            want[3 * l + k] = next;
                            next += 1;
                        }
                    }
                }
            }
            want.extend(std::iter::repeat_n(3, len));
            assert_eq!(
                out.to_vec(),
                want,
                "{local:?}, checked: {checked}, a `let`: {with_let}"
            );
        }
    });
}

/// A loop whose last iteration is out of bounds does not run in blocks,
/// whose accesses go unchecked: the iteration-at-a-time loop runs, and the
/// access past the tile fails the unchecked launch with a panic that names
/// the index, as it would without the lifting.
#[test]
fn a_loop_out_of_bounds_in_its_last_iteration_is_not_blocked() {
    let e = common::within(60, || {
        let rt = common::rt();
        let mut launch = Launch::new("one_past", NdRange::new([32]).local([32]));
        let tile = launch.local::<u32>(32);
        let out = Buffer::<u32>::new(32);
        one_past_launch(&rt, &launch, &out, tile).unwrap_err()
    });
    let p = common::kernel_panic(e);
    assert!(
        p.message.contains("32"),
        "the message names the index: {}",
        p.message
    );
    assert_eq!(p.ids.local_id[0], 0, "{p}");
}

/// A panic in a block names the work-item that panicked, not its block's
/// first.
#[test]
fn a_panic_in_a_block_names_its_work_item() {
    let e = common::within(60, || {
        let rt = common::rt();
        let launch = Launch::new("stops", NdRange::new([32]).local([32]));
        let out = Buffer::<u32>::new(32);
        stops_launch(&rt, &launch, &out).unwrap_err()
    });
    let p = common::kernel_panic(e);
    assert_eq!(p.ids.local_id[0], 21, "{p}");
    assert!(p.message.contains("stops at step 2"), "{}", p.message);
}
