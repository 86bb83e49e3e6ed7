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

use clsync::checker::ReportKind;
use clsync::engine::KernelForm;
use clsync::sync::LOCAL;
use clsync::{kernel, Buffer, Launch, LaunchError, LocalArg, NdRange, WorkItem};
use common::{both_forms_give, Form};

const SOURCE: &str = include_str!("kernel_macro_control.rs");

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

/// Halves each work-item's value until the group decides, through local
/// memory, that it is done: work-item 0 writes the verdict on its own value,
/// a barrier publishes it, and every work-item reads it and leaves by the
/// loop's one `break`, checked at run time to be taken by all or none.
#[kernel(groups)]
fn halve_until(wi: &WorkItem, out: &Buffer<u32>, flag: LocalArg<u32>, limit: u32) {
    let l = wi.get_local_id(0);
    let f = wi.local(flag);
    let mut v = (l as u32 + 1) * 1000;
    let mut rounds = 0u32;
    loop {
        if l == 0 {
            f.set(0, u32::from(v <= limit));
        }
        wi.barrier(LOCAL); //~ the verdict's barrier
        if f.get(0) != 0 {
            break;
        }
        v /= 2;
        rounds += 1;
        wi.barrier(LOCAL);
    }
    out.set(wi.get_global_id(0), v * 100 + rounds);
}

/// The same loop left by work-item 0 alone: a divergence, reported at the
/// barrier the others go on to wait at.
#[kernel(groups)]
fn first_leaves(wi: &WorkItem, out: &Buffer<u32>) {
    let l = wi.get_local_id(0);
    loop {
        wi.barrier(LOCAL); //~ the others' barrier
        if l == 0 {
            break;
        }
    }
    out.set(wi.get_global_id(0), 1);
}

/// A per-work-item `let` hides a parameter of the same name and the next
/// `let`, in the same stretch between barriers, uses it: that value is per
/// work-item too, not one the group holds (from the parameter).
#[kernel(groups)]
fn shadowed(wi: &WorkItem, out: &Buffer<u32>, n: u32) {
    let n = wi.get_local_id(0) as u32 + n;
    let m = n * 2;
    wi.barrier(LOCAL);
    out.set(wi.get_global_id(0), m);
}

/// A `let mut` of a uniform value whose fields and elements each
/// work-item then changes: per work-item, not the group's.
#[kernel(groups)]
fn fields_changed(wi: &WorkItem, out: &Buffer<u32>) {
    let l = wi.get_local_id(0) as u32;
    let mut pair = (1u32, 2u32);
    let mut both = [3u32, 4u32];
    wi.barrier(LOCAL);
    pair.0 += l;
    both[1] *= l;
    wi.barrier(LOCAL);
    out.set(wi.get_global_id(0), pair.0 + pair.1 + both[0] + both[1]);
}

/// Tuple `let`s: the lifting makes `let (l, n) = (…, …);` two `let`s, so
/// that `n` is held by the group and `l` kept per work-item, but not `let
/// (x, y) = (l * 2, x);`, whose `x` on the right is the parameter.
#[kernel(groups)]
fn tuple_lets(wi: &WorkItem, out: &Buffer<u32>, x: u32) {
    let (l, n) = (wi.get_local_id(0) as u32, wi.get_local_size(0) as u32);
    let (x, y) = (l * 2, x);
    let (p, q) = (y + n, x + 1);
    wi.barrier(LOCAL);
    out.set(wi.get_global_id(0), p * 1000 + q * 10 + y);
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

#[test]
fn loops_with_group_level_exits_are_lifted() {
    assert_eq!(reduce_loop_form(), KernelForm::Groups);
    assert_eq!(odd_rounds_form(), KernelForm::Groups);
    assert_eq!(early_stop_form(), KernelForm::Groups);
    assert_eq!(by_mode_form(), KernelForm::Groups);
    assert_eq!(halve_until_form(), KernelForm::Groups);
    assert_eq!(first_leaves_form(), KernelForm::Groups);
}

/// A loop left by a `break` on a value read from local memory: every
/// work-item leaves in the round work-item 0's value first falls to the
/// limit, as a sequential run of the rounds gives, in both forms.
#[test]
fn a_break_on_a_value_the_group_shares_leaves_together() {
    common::within(60, || {
        let (groups, local) = (2, 16);
        for limit in [1000, 300, 7] {
            let rounds = (0..).find(|&r| 1000u32 >> r <= limit).unwrap();
            let want: Vec<u32> = (0..groups * local)
                .map(|g| ((((g % local) as u32 + 1) * 1000) >> rounds) * 100 + rounds)
                .collect();
            both_forms_give(
                "halve_until",
                (groups, local),
                &want,
                |rt, launch, out, flag, form| {
                    match form {
                        Form::Lifted => halve_until_launch(rt, launch, out, flag, limit),
                        Form::Coroutines => {
                            rt.launch(launch, |wi| halve_until(wi, out, flag, limit))
                        }
                    }
                    .unwrap();
                },
            );
        }
    });
}

/// A `break` only work-item 0 takes is a barrier divergence at the barrier
/// the others wait at next, naming the work-items by the condition's
/// value; checked, a barrier divergence report there.
#[test]
fn a_break_one_work_item_takes_is_a_divergence_at_the_loops_barrier() {
    let line = common::check::line_of(SOURCE, "the others' barrier");
    let e = common::within(60, || {
        let out = Buffer::<u32>::new(8);
        let launch = Launch::new("first_leaves", NdRange::new([8]).local([8]));
        first_leaves_launch(&common::rt(), &launch, &out).unwrap_err()
    });
    let LaunchError::Divergence(d) = &e else {
        panic!("expected a divergence, got {e}")
    };
    assert_eq!(Some(d.barrier.line), line, "{e}");
    assert_eq!(
        common::decided(d),
        vec![
            (vec![0], "true".to_string()),
            ((1..8).collect(), "false".to_string())
        ]
    );
    let e = common::within(60, || {
        let out = Buffer::<u32>::new(8);
        let launch = Launch::new("first_leaves", NdRange::new([8]).local([8])).checked(true);
        first_leaves_launch(&common::rt(), &launch, &out).unwrap_err()
    });
    let LaunchError::Reported(r) = &e else {
        panic!("expected reports, got {e}")
    };
    assert_eq!(r.reports.len(), 1, "{e}");
    assert_eq!(r.reports[0].kind, ReportKind::BarrierDivergence);
    assert_eq!(Some(r.reports[0].site.line), line);
}

#[test]
fn a_let_of_a_hidden_parameter_stays_per_work_item() {
    common::within(60, || {
        let out = Buffer::<u32>::new(32);
        let launch = Launch::new("shadowed", NdRange::new([32]).local([8]));
        shadowed_launch(&common::rt(), &launch, &out, 5).unwrap();
        let want: Vec<u32> = (0..32).map(|g| (g % 8 + 5) * 2).collect();
        assert_eq!(out.to_vec(), want);
    });
}

/// Before the fix `pair` was held by the group, as nothing assigned it by
/// name: each work-item's `pair.0 += l` went to a copy, and work-item `l`
/// gave `6 + 4l` for `6 + 5l`.
#[test]
fn a_uniform_let_whose_fields_work_items_change_stays_per_work_item() {
    common::within(60, || {
        let out = Buffer::<u32>::new(16);
        let launch = Launch::new("fields_changed", NdRange::new([16]).local([8]));
        fields_changed_launch(&common::rt(), &launch, &out).unwrap();
        let want: Vec<u32> = (0..16).map(|g| 1 + g % 8 + 2 + 3 + 4 * (g % 8)).collect();
        assert_eq!(out.to_vec(), want);
    });
}

#[test]
fn tuple_lets_bind_as_written() {
    common::within(60, || {
        let out = Buffer::<u32>::new(16);
        let launch = Launch::new("tuple_lets", NdRange::new([16]).local([8]));
        tuple_lets_launch(&common::rt(), &launch, &out, 3).unwrap();
        let want: Vec<u32> = (0..16)
            .map(|g| (3 + 8) * 1000 + (2 * (g % 8) + 1) * 10 + 3)
            .collect();
        assert_eq!(out.to_vec(), want);
        assert_eq!(tuple_lets_form(), KernelForm::Groups);
    });
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
