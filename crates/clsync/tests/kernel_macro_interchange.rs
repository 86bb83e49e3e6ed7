//! `#[kernel]` interchanges a work-item's `for` loop that carries a value
//! from one iteration to the next (`for k in 0..n { acc += … }`) with the
//! loop over the work-items: the group runs the `for`, each iteration a loop
//! over the work-items, so that consecutive work-items' iterations overlap
//! instead of each waiting for the last. Between two barriers OpenCL orders
//! no work-item's statements before another's (`004_bfca21a36d7bd2da.txt`:
//! the barrier is what orders them), so any interleaving is a run the kernel
//! allows; the interchange keeps each work-item's own statements in order.
//! Each kernel here gives what a sequential computation gives, lifted and on
//! the coroutine engine, checked and unchecked.

mod common;

use clsync::checker::ReportKind;
use clsync::engine::KernelForm;
use clsync::sync::LOCAL;
use clsync::{kernel, AtomicUint, Buffer, Launch, LaunchError, LocalArg, NdRange, WorkItem};
use common::{both_forms_give, Form};

const SOURCE: &str = include_str!("kernel_macro_interchange.rs");

// ---- kernels ---------------------------------------------------------------

/// Each work-item folds the group's values, starting at its own, into an
/// order-sensitive hash (`acc * 3 + v`): a tiled SGEMM's k loop in small.
#[kernel(groups)]
fn fold_tile(wi: &WorkItem, input: &Buffer<u32>, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let (t, l, n) = (wi.local(tile), wi.get_local_id(0), wi.get_local_size(0));
    t.set(l, input.get(wi.get_global_id(0)));
    wi.barrier(LOCAL);
    let mut acc = 0u32;
    for k in 0..n {
        acc = acc.wrapping_mul(3).wrapping_add(t.get((l + k) % n));
    }
    out.set(wi.get_global_id(0), acc);
}

/// Carried values of other shapes: a private array indexed by a loaded
/// value, a tuple's field, nested loops (both interchanged), a loop whose
/// body declares a name used after it (`x`, so that loop stays whole), a
/// range per work-item and a `break` per work-item (those stay whole too).
#[kernel(groups)]
fn carried_shapes(wi: &WorkItem, input: &Buffer<u32>, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let (t, l, n) = (wi.local(tile), wi.get_local_id(0), wi.get_local_size(0));
    t.set(l, input.get(wi.get_global_id(0)));
    wi.barrier(LOCAL);
    let mut counts = [0u32; 4];
    for k in 0..n {
        counts[(t.get(k) as usize + l) % 4] += 1;
    }
    let mut pair = (0u32, 1u32);
    for round in 0..2u32 {
        for k in 0..n {
            pair.0 = pair.0.wrapping_add(t.get(k) * (round + 1));
        }
        pair.1 = pair.1.wrapping_mul(pair.0 | 1);
    }
    let x = l as u32;
    let mut hidden = 0u32;
    for k in 0..4u32 {
        let x = k * 2;
        hidden += x;
    }
    let mut below = 0u32;
    for k in 0..l {
        below += t.get(k);
    }
    let mut until = 0u32;
    for k in 0..n {
        if t.get(k) > x * 40 {
            break;
        }
        until += 1;
    }
    let g = wi.get_global_id(0);
    let mixed = counts[0] * 1000 + counts[3] * 100 + hidden + x;
    out.set(
        g,
        mixed ^ pair.1 ^ below.wrapping_mul(7) ^ until.wrapping_mul(131),
    );
}

/// Three tickets per work-item from one counter, the first and the last of
/// them kept.
#[kernel(groups)]
fn tickets(wi: &WorkItem, counter: &Buffer<AtomicUint>, out: &Buffer<u32>) {
    let l = wi.get_local_id(0);
    let mut first = u32::MAX;
    let mut last = 0;
    for _ in 0..3 {
        let t = counter.at(0).fetch_add(1);
        first = first.min(t);
        last = t;
    }
    out.set(2 * l, first);
    out.set(2 * l + 1, last);
}

/// Six tickets per work-item from one counter, each kept, and how many it
/// took: a loop of assignments and calls, which the lifting also jams
/// (four iterations of each work-item in one loop over the group).
#[kernel(groups)]
fn all_tickets(wi: &WorkItem, counter: &Buffer<AtomicUint>, out: &Buffer<u32>) {
    let l = wi.get_local_id(0);
    let mut taken = 0;
    for k in 0..6 {
        out.set(6 * l + k, counter.at(0).fetch_add(1));
        taken += 1;
    }
    out.set(6 * wi.get_local_size(0) + l, taken);
}

/// A step of a fold, built with field-init shorthand (`Step { k }`), which
/// names the loop's variable as a plain `k` does.
#[derive(Clone, Copy)]
struct Step {
    k: u32,
}

fn weight(s: Step) -> u32 {
    s.k * 2 + 1
}

/// A jammed loop whose body names its variable through a struct literal's
/// shorthand: each copy must name its own iteration's value.
#[kernel(groups)]
fn shorthand(wi: &WorkItem, out: &Buffer<u32>) {
    let mut acc = wi.get_local_id(0) as u32;
    for k in 0..6u32 {
        acc = acc.wrapping_mul(3).wrapping_add(weight(Step { k }));
    }
    out.set(wi.get_global_id(0), acc);
}

/// A running sum that each work-item publishes at every step, where its
/// neighbour reads it in the same stretch between barriers: a data race,
/// whichever order the steps run in.
#[kernel(groups)]
fn racy_running(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let (t, l, n) = (wi.local(tile), wi.get_local_id(0), wi.get_local_size(0));
    t.set(l, 0);
    wi.barrier(LOCAL);
    let mut acc = 0u32;
    for k in 0..4u32 {
        acc += t.get((l + 1) % n) + k; //~ running race
        t.set(l, acc); //~ running race.first
    }
    out.set(wi.get_global_id(0), acc);
}

// ---- references ------------------------------------------------------------

fn input(n: usize) -> Vec<u32> {
    (0..n as u32).map(|i| i * 37 % 101).collect()
}

/// `fold_tile`, sequentially.
fn fold_tile_reference(values: &[u32], local: usize) -> Vec<u32> {
    values
        .chunks(local)
        .flat_map(|group| {
            (0..local).map(move |l| {
                (0..local).fold(0u32, |acc, k| {
                    acc.wrapping_mul(3).wrapping_add(group[(l + k) % local])
                })
            })
        })
        .collect()
}

/// `carried_shapes`, sequentially.
fn carried_shapes_reference(values: &[u32], local: usize) -> Vec<u32> {
    let mut out = Vec::new();
    for group in values.chunks(local) {
        for l in 0..local {
            let mut counts = [0u32; 4];
            for &v in group {
                counts[(v as usize + l) % 4] += 1;
            }
            let mut pair = (0u32, 1u32);
            for round in 0..2u32 {
                for &v in group {
                    pair.0 = pair.0.wrapping_add(v * (round + 1));
                }
                pair.1 = pair.1.wrapping_mul(pair.0 | 1);
            }
            let x = l as u32;
            let hidden = 2 + 4 + 6;
            let below: u32 = group[..l].iter().sum();
            let until = group.iter().take_while(|&&v| v <= x * 40).count() as u32;
            let mixed = counts[0] * 1000 + counts[3] * 100 + hidden + x;
            out.push(mixed ^ pair.1 ^ below.wrapping_mul(7) ^ until.wrapping_mul(131));
        }
    }
    out
}

// ---- tests -----------------------------------------------------------------

#[test]
fn kernels_with_carried_loops_are_lifted() {
    assert_eq!(fold_tile_form(), KernelForm::Groups);
    assert_eq!(carried_shapes_form(), KernelForm::Groups);
    assert_eq!(tickets_form(), KernelForm::Groups);
    assert_eq!(racy_running_form(), KernelForm::Groups);
}

#[test]
fn an_interchanged_accumulation_gives_each_work_items_sequential_fold() {
    common::within(60, || {
        for (groups, local) in [(3, 16), (2, 64), (1, 5)] {
            let values = input(groups * local);
            let want = fold_tile_reference(&values, local);
            let data = Buffer::from_slice(&values);
            both_forms_give(
                "fold_tile",
                (groups, local),
                &want,
                |rt, launch, out, tile, form| {
                    match form {
                        Form::Lifted => fold_tile_launch(rt, launch, &data, out, tile),
                        Form::Coroutines => rt.launch(launch, |wi| fold_tile(wi, &data, out, tile)),
                    }
                    .unwrap();
                },
            );
        }
    });
}

#[test]
fn carried_arrays_fields_nested_loops_and_loops_left_whole_give_the_sequential_result() {
    common::within(60, || {
        for (groups, local) in [(2, 16), (1, 7)] {
            let values = input(groups * local);
            let want = carried_shapes_reference(&values, local);
            let data = Buffer::from_slice(&values);
            both_forms_give(
                "carried_shapes",
                (groups, local),
                &want,
                |rt, launch, out, tile, form| {
                    match form {
                        Form::Lifted => carried_shapes_launch(rt, launch, &data, out, tile),
                        Form::Coroutines => {
                            rt.launch(launch, |wi| carried_shapes(wi, &data, out, tile))
                        }
                    }
                    .unwrap();
                },
            );
        }
    });
}

/// Every interleaving of the work-items' tickets is one OpenCL allows; what
/// each must keep is its own order (first below last, each ticket once).
/// The lifted form takes the interchanged one, an iteration of every
/// work-item before the next iteration of any (work-item `l` holds `l`,
/// `n + l`, `2n + l`): this is what makes the interchange observable, and a
/// lifting that lost it fails here rather than only in the benchmark.
#[test]
fn the_lifted_form_runs_one_iteration_of_every_work_item_at_a_time() {
    common::within(60, || {
        let n = 8;
        let rt = common::rt();
        for checked in [false, true] {
            let launch = Launch::new("tickets", NdRange::new([n]).local([n])).checked(checked);
            let counter = Buffer::<AtomicUint>::new(1);
            let out = Buffer::<u32>::new(2 * n);
            tickets_launch(&rt, &launch, &counter, &out).unwrap();
            let want: Vec<u32> = (0..n as u32).flat_map(|l| [l, 2 * n as u32 + l]).collect();
            assert_eq!(out.to_vec(), want, "lifted, checked: {checked}");

            let counter = Buffer::<AtomicUint>::new(1);
            let out = Buffer::<u32>::new(2 * n);
            rt.launch(&launch, |wi| tickets(wi, &counter, &out))
                .unwrap();
            let got = out.to_vec();
            for pair in got.chunks(2) {
                assert_eq!(pair[1], pair[0] + 2, "coroutines: {got:?}");
            }
            let mut firsts: Vec<u32> = got.chunks(2).map(|p| p[0]).collect();
            firsts.sort();
            assert_eq!(firsts, (0..n as u32).map(|l| 3 * l).collect::<Vec<_>>());
        }
    });
}

/// Jammed, the lifted loop runs four iterations of a work-item before the
/// next work-item's four (`lift/interchange.rs`, `JAM`), while four are
/// left, then the rest one iteration of every work-item at a time: with 6
/// iterations and n work-items, work-item `l` holds `4l` to `4l + 3`, then
/// `4n + l` and `5n + l`, checked or not. Each work-item's own tickets
/// still rise, as on the coroutine engine, and every work-item took six.
/// Unchecked, the groups have rows of fewer than eight work-items: rows of
/// eight run the loop in register blocks (`kernel_macro_blocks.rs`).
#[test]
fn a_jammed_loop_runs_four_iterations_of_each_work_item_at_a_time() {
    common::within(60, || {
        let rt = common::rt();
        for (n, checked) in [(7, false), (8, true), (3, false)] {
            let launch = Launch::new("all_tickets", NdRange::new([n]).local([n])).checked(checked);
            let counter = Buffer::<AtomicUint>::new(1);
            let out = Buffer::<u32>::new(7 * n);
            all_tickets_launch(&rt, &launch, &counter, &out).unwrap();
            let n32 = n as u32;
            let mut want: Vec<u32> = (0..n32)
                .flat_map(|l| {
                    [
                        4 * l,
                        4 * l + 1,
                        4 * l + 2,
                        4 * l + 3,
                        4 * n32 + l,
                        5 * n32 + l,
                    ]
                })
                .collect();
            want.extend(std::iter::repeat_n(6, n));
            assert_eq!(
                out.to_vec(),
                want,
                "lifted, {n} work-items, checked: {checked}"
            );

            let counter = Buffer::<AtomicUint>::new(1);
            let out = Buffer::<u32>::new(7 * n);
            rt.launch(&launch, |wi| all_tickets(wi, &counter, &out))
                .unwrap();
            let got = out.to_vec();
            let mut all: Vec<u32> = got[..6 * n].to_vec();
            for own in all.chunks(6) {
                assert!(own.windows(2).all(|w| w[0] < w[1]), "coroutines: {got:?}");
            }
            all.sort();
            assert_eq!(all, (0..6 * n32).collect::<Vec<_>>(), "coroutines");
            assert!(got[6 * n..].iter().all(|&t| t == 6), "coroutines: {got:?}");
        }
    });
}

/// The checker sees an interchanged loop's accesses as its work-items':
/// the race between a work-item's write and its neighbour's read is
/// reported with the two marked lines and neighbouring parties, lifted as
/// on the coroutine engine.
#[test]
fn a_race_in_an_interchanged_loop_is_reported_between_neighbours() {
    for form in [Form::Lifted, Form::Coroutines] {
        let reports = common::within(60, move || {
            let mut launch =
                Launch::new("racy_running", NdRange::new([16]).local([8])).checked(true);
            let tile = launch.local::<u32>(8);
            let out = Buffer::<u32>::new(16);
            let rt = common::rt();
            let e = match form {
                Form::Lifted => racy_running_launch(&rt, &launch, &out, tile),
                Form::Coroutines => rt.launch(&launch, |wi| racy_running(wi, &out, tile)),
            }
            .unwrap_err();
            match e {
                LaunchError::Reported(r) => r.reports,
                other => panic!("expected reports, got {other}"),
            }
        });
        common::check::expect(SOURCE, &reports, &[(ReportKind::DataRace, "running race")]);
        for r in &reports {
            let (a, b) = (
                r.first.as_ref().expect("the other access").item.local_id[0],
                r.second.as_ref().expect("this access").item.local_id[0],
            );
            assert!(
                (a + 1) % 8 == b || (b + 1) % 8 == a,
                "{form:?}: not neighbours: {r}"
            );
        }
    }
}

/// The shorthand kernel, jammed (four iterations, then two), gives each
/// work-item its sequential fold, lifted and on the coroutine engine.
#[test]
fn a_jammed_body_names_each_iteration_through_field_shorthand() {
    let want: Vec<u32> = (0..10u32)
        .map(|g| (0..6u32).fold(g % 5, |acc, k| acc.wrapping_mul(3).wrapping_add(k * 2 + 1)))
        .collect();
    let got = common::within(60, || {
        let launch = Launch::new("shorthand", NdRange::new([10]).local([5]));
        let rt = common::rt();
        let (lifted, general) = (Buffer::<u32>::new(10), Buffer::<u32>::new(10));
        shorthand_launch(&rt, &launch, &lifted).unwrap();
        rt.launch(&launch, |wi| shorthand(wi, &general)).unwrap();
        (lifted.to_vec(), general.to_vec())
    });
    assert_eq!(got.0, want, "lifted");
    assert_eq!(got.1, want, "coroutines");
    assert_eq!(shorthand_form(), KernelForm::Groups);
}
