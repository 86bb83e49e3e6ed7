//! `#[kernel]` lifts the control flow the whole group takes together beyond
//! `for`, `while` and `if`: a `loop` that holds a barrier, the exits
//! `break;`, `continue;` and `return;` alone or as the body of an `if` whose
//! condition is the same for every work-item by its syntax (a variable the
//! group holds, a group id, a parameter), and a `match` on such a value. The
//! group runs them itself, so every work-item reaches the same barriers, as
//! `003_2caebc1f01141481.txt` asks. Each kernel here gives what a
//! sequential computation gives, and what the same kernel gives on the
//! coroutine engine; the same control flow on a per-work-item value keeps a
//! kernel on a general engine (`kernel_macro_fallback.rs`).

mod common;

use clsync::engine::KernelForm;
use clsync::sync::LOCAL;
use clsync::{kernel, Buffer, Launch, LocalArg, NdRange, WorkItem};

// ---- kernels ---------------------------------------------------------------

/// A tree reduction whose `loop` is left by `break` once the half the group
/// holds reaches 0, after the loop's barrier.
#[kernel(groups)]
fn reduce_loop(wi: &WorkItem, input: &Buffer<u32>, sums: &Buffer<u32>, scratch: LocalArg<u32>) {
    let l = wi.get_local_id(0);
    let s = wi.local(scratch);
    s.set(l, input.get(wi.get_global_id(0)));
    let mut half = wi.get_local_size(0) / 2;
    loop {
        wi.barrier(LOCAL);
        if half == 0 {
            break;
        }
        if l < half {
            s.set(l, s.get(l) + s.get(l + half));
        }
        half /= 2;
    }
    if l == 0 {
        sums.set(wi.get_group_id(0), s.get(0));
    }
}

/// Rounds of a neighbour sum through local memory: every even round is
/// skipped by `continue`, the loop ends by `break` after round `rounds`,
/// and the group `skip` returns before anything (its outputs stay 0).
#[kernel(groups)]
fn odd_rounds(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>, skip: usize, rounds: u32) {
    if wi.get_group_id(0) == skip {
        return;
    }
    let l = wi.get_local_id(0);
    let n = wi.get_local_size(0);
    let t = wi.local(tile);
    let mut acc = l as u32 + 1;
    let mut round = 0u32;
    loop {
        round += 1;
        if round % 2 == 0 {
            continue;
        }
        t.set(l, acc);
        wi.barrier(LOCAL);
        acc = acc.wrapping_add(t.get((l + 1) % n));
        wi.barrier(LOCAL);
        if round >= rounds {
            break;
        }
    }
    out.set(wi.get_global_id(0), acc);
}

/// A `for` over tiles left early by `break` when the tile index reaches
/// `stop`, and a `while` whose body ends with `continue`: group-level exits
/// in the loops that were already lifted.
#[kernel(groups)]
fn early_stop(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>, stop: usize) {
    let l = wi.get_local_id(0);
    let n = wi.get_local_size(0);
    let t = wi.local(tile);
    let mut acc = 0u32;
    for k in 0..8 {
        if k == stop {
            break;
        }
        t.set(l, (l * k) as u32);
        wi.barrier(LOCAL);
        acc = acc.wrapping_add(t.get(n - 1 - l));
        wi.barrier(LOCAL);
    }
    let mut more = 2;
    while more > 0 {
        more -= 1;
        wi.barrier(LOCAL);
        acc = acc.wrapping_mul(3);
        continue;
    }
    out.set(wi.get_global_id(0), acc);
}

/// Rounds whose kind a `match` on the group-held round and the `mode`
/// parameter picks: a rotation through local memory (two barriers), a
/// barrier alone, an arm with a guard, or-patterns, an arm that binds a
/// name, an arm that leaves the loop.
#[kernel(groups)]
fn by_mode(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>, mode: u32) {
    let l = wi.get_local_id(0);
    let n = wi.get_local_size(0);
    let t = wi.local(tile);
    let mut acc = l as u32;
    let mut round = 0u32;
    loop {
        match (round + mode) % 5 {
            0 | 1 => {
                t.set(l, acc);
                wi.barrier(LOCAL);
                acc = t.get((l + 1) % n);
                wi.barrier(LOCAL);
            }
            k if k == mode % 5 => wi.barrier(LOCAL),
            2 => acc = acc.wrapping_mul(3),
            k => {
                wi.barrier(LOCAL);
                acc = acc.wrapping_add(k);
            }
        }
        round += 1;
        match round {
            4 => break,
            _ => wi.barrier(LOCAL),
        }
    }
    out.set(wi.get_global_id(0), acc);
}

// ---- references ------------------------------------------------------------

/// `by_mode` for one group of `n`, sequentially.
fn by_mode_reference(n: usize, mode: u32) -> Vec<u32> {
    let mut acc: Vec<u32> = (0..n as u32).collect();
    for round in 0..4u32 {
        match (round + mode) % 5 {
            0 | 1 => acc = (0..n).map(|l| acc[(l + 1) % n]).collect(),
            k if k == mode % 5 => {}
            2 => acc.iter_mut().for_each(|a| *a = a.wrapping_mul(3)),
            k => acc.iter_mut().for_each(|a| *a = a.wrapping_add(k)),
        }
    }
    acc
}

/// `odd_rounds` for one group of `n`, sequentially.
fn odd_rounds_reference(n: usize, rounds: u32) -> Vec<u32> {
    let mut acc: Vec<u32> = (1..=n as u32).collect();
    let mut round = 0;
    loop {
        round += 1;
        if round % 2 == 0 {
            continue;
        }
        let before = acc.clone();
        for l in 0..n {
            acc[l] = before[l].wrapping_add(before[(l + 1) % n]);
        }
        if round >= rounds {
            return acc;
        }
    }
}

/// `early_stop` for one group of `n`, sequentially.
fn early_stop_reference(n: usize, stop: usize) -> Vec<u32> {
    (0..n)
        .map(|l| {
            let partial: u32 = (0..stop.min(8)).map(|k| ((n - 1 - l) * k) as u32).sum();
            partial.wrapping_mul(9)
        })
        .collect()
}

// ---- tests -----------------------------------------------------------------

/// Which form of a kernel a run takes.
#[derive(Clone, Copy, Debug)]
enum Form {
    /// `name_launch`: the group-level form.
    Lifted,
    /// `Runtime::launch`: the kernel as written, on the coroutine engine.
    Coroutines,
}

/// Runs a kernel over `groups` groups of `local` work-items with a local
/// array of `local` values, in both forms, checked and unchecked, and holds
/// each run's output (of `groups * local` values) to `want`. `run` makes one
/// run into the output it is given.
fn both_forms_give(
    name: &str,
    (groups, local): (usize, usize),
    want: &[u32],
    run: impl Fn(&clsync::Runtime, &Launch, &Buffer<u32>, LocalArg<u32>, Form),
) {
    let rt = common::rt();
    for checked in [false, true] {
        for form in [Form::Lifted, Form::Coroutines] {
            let mut launch =
                Launch::new(name, NdRange::new([groups * local]).local([local])).checked(checked);
            let tile = launch.local::<u32>(local);
            let out = Buffer::<u32>::new(groups * local);
            run(&rt, &launch, &out, tile, form);
            assert_eq!(out.to_vec(), want, "{name}: {form:?}, checked: {checked}");
        }
    }
}

#[test]
fn loops_with_group_level_exits_are_lifted() {
    assert_eq!(reduce_loop_form(), KernelForm::Groups);
    assert_eq!(odd_rounds_form(), KernelForm::Groups);
    assert_eq!(early_stop_form(), KernelForm::Groups);
    assert_eq!(by_mode_form(), KernelForm::Groups);
}

#[test]
fn a_match_on_uniform_values_takes_the_sequential_arms() {
    common::within(60, || {
        let (groups, local) = (3, 16);
        for mode in 0..5 {
            let want: Vec<u32> = (0..groups)
                .flat_map(|_| by_mode_reference(local, mode))
                .collect();
            both_forms_give(
                "by_mode",
                (groups, local),
                &want,
                |rt, launch, out, tile, form| {
                    match form {
                        Form::Lifted => by_mode_launch(rt, launch, out, tile, mode),
                        Form::Coroutines => rt.launch(launch, |wi| by_mode(wi, out, tile, mode)),
                    }
                    .unwrap();
                },
            );
        }
    });
}

#[test]
fn a_loop_left_by_a_uniform_break_reduces_as_the_sequential_sum() {
    common::within(60, || {
        let (n, local) = (4096, 256);
        let (input, want) = common::group_sums_case(n, local);
        let input = Buffer::from_slice(&input);
        let rt = common::rt();
        for checked in [false, true] {
            let mut launch =
                Launch::new("reduce_loop", NdRange::new([n]).local([local])).checked(checked);
            let scratch = launch.local::<u32>(local);
            let sums = Buffer::<u32>::new(n / local);
            reduce_loop_launch(&rt, &launch, &input, &sums, scratch).unwrap();
            assert_eq!(sums.to_vec(), want, "lifted, checked: {checked}");
            let sums = Buffer::<u32>::new(n / local);
            rt.launch(&launch, |wi| reduce_loop(wi, &input, &sums, scratch))
                .unwrap();
            assert_eq!(sums.to_vec(), want, "coroutines, checked: {checked}");
        }
    });
}

#[test]
fn continue_break_and_a_groups_return_give_the_sequential_rounds() {
    common::within(60, || {
        let (groups, local) = (4, 16);
        for (skip, rounds) in [(1, 1), (3, 5), (9, 6)] {
            let mut want = Vec::new();
            for g in 0..groups {
                if g == skip {
                    want.extend(vec![0; local]);
                } else {
                    want.extend(odd_rounds_reference(local, rounds));
                }
            }
            both_forms_give(
                "odd_rounds",
                (groups, local),
                &want,
                |rt, launch, out, tile, form| {
                    match form {
                        Form::Lifted => odd_rounds_launch(rt, launch, out, tile, skip, rounds),
                        Form::Coroutines => {
                            rt.launch(launch, |wi| odd_rounds(wi, out, tile, skip, rounds))
                        }
                    }
                    .unwrap();
                },
            );
        }
    });
}

#[test]
fn exits_in_for_and_while_loops_give_the_sequential_result() {
    common::within(60, || {
        let (groups, local) = (2, 32);
        for stop in [0, 3, 8] {
            let want: Vec<u32> = (0..groups)
                .flat_map(|_| early_stop_reference(local, stop))
                .collect();
            both_forms_give(
                "early_stop",
                (groups, local),
                &want,
                |rt, launch, out, tile, form| {
                    match form {
                        Form::Lifted => early_stop_launch(rt, launch, out, tile, stop),
                        Form::Coroutines => rt.launch(launch, |wi| early_stop(wi, out, tile, stop)),
                    }
                    .unwrap();
                },
            );
        }
    });
}
