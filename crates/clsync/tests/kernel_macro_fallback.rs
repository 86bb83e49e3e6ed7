//! `#[kernel]` kernels the lifting cannot follow: the macro awaits their
//! barriers and runs them on the async engine when every barrier is the
//! kernel's own (in its body, not in a closure or a function the work-item
//! is handed to), and on the coroutine engine otherwise. Either way they
//! give what a sequential computation gives and what the same kernel gives
//! on the coroutine engine, and a barrier that not every work-item reaches
//! is a divergence at the barrier's line (`003_2caebc1f01141481.txt`).

mod common;

use clsync::engine::KernelForm;
use clsync::sync::{BarrierKind, MemScope, SubGroupScope, WorkGroupScope, LOCAL};
use clsync::{
    kernel, Buffer, Launch, LaunchError, LaunchSummary, LocalArg, NdRange, Place, WorkItem,
};

const SOURCE: &str = include_str!("kernel_macro_fallback.rs");

// ---- kernels ---------------------------------------------------------------

/// A tree reduction whose loop is left by a `break` in a `match` after its
/// last barrier: the group-level form cannot follow a `match` (a `break` in
/// an `if` of a uniform condition it can; `kernel_macro.rs`).
#[kernel]
fn reduce_loop(wi: &WorkItem, input: &Buffer<u32>, sums: &Buffer<u32>, scratch: LocalArg<u32>) {
    let l = wi.get_local_id(0);
    let s = wi.local(scratch);
    s.set(l, input.get(wi.get_global_id(0)));
    let mut half = wi.get_local_size(0) / 2;
    loop {
        wi.barrier(LOCAL);
        // A `match` on purpose: the form the lifting does not follow.
        #[allow(clippy::single_match)]
        match half {
            0 => break,
            _ => {}
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

/// Each barrier form in a `match`, reached by the first sub-group only: a
/// divergence for a work-group barrier, not for a sub-group one (the
/// sub-group barrier waits for its own sub-group alone).
#[kernel]
fn first_sub_group_waits(wi: &WorkItem, out: &Buffer<u32>, which: u32) {
    if wi.get_sub_group_id() == 0 {
        match which {
            0 => wi.barrier(LOCAL),                                  //~ barrier
            1 => wi.work_group_barrier(LOCAL),                       //~ work_group_barrier
            2 => wi.work_group_barrier_scope(LOCAL, WorkGroupScope), //~ work_group_barrier_scope
            3 => wi.sub_group_barrier(LOCAL),                        //~ sub_group_barrier
            _ => wi.sub_group_barrier_scope(LOCAL, SubGroupScope),   //~ sub_group_barrier_scope
        }
    }
    out.set(wi.get_global_id(0), which + 1);
}

/// Work-item 0 returns before the barrier the others wait at.
#[kernel]
fn one_returns(wi: &WorkItem, out: &Buffer<u32>) {
    if wi.get_local_id(0) == 0 {
        return;
    }
    wi.barrier(LOCAL); //~ after return
    out.set(wi.get_global_id(0), 1);
}

/// Work-item 0 returns before the barrier through a variable of its own:
/// per work-item, though its name is not bound yet where the lifting meets
/// the `return`, so the kernel is not lifted (a lifted group would return
/// as a whole).
#[kernel]
fn first_returns(wi: &WorkItem, out: &Buffer<u32>) {
    let first = wi.get_local_id(0) == 0;
    if first {
        return;
    }
    wi.barrier(LOCAL); //~ after a per-item return
    out.set(wi.get_global_id(0), 1);
}

/// Work-item 0 leaves the loop before the others: a per-work-item `break`
/// keeps the loop on a general engine, where the others' next barrier is a
/// divergence.
#[kernel]
fn first_breaks(wi: &WorkItem, out: &Buffer<u32>) {
    let l = wi.get_local_id(0);
    let mut rounds = 0u32;
    loop {
        wi.barrier(LOCAL); //~ loop left by one
        rounds += 1;
        if l == 0 {
            break;
        }
        if rounds == 3 {
            break;
        }
    }
    out.set(wi.get_global_id(0), rounds);
}

/// A neighbour exchange through a sub-group barrier that only the first
/// sub-group of each group takes: a correct kernel, as only its sub-group
/// must reach it (`002_6c32435e912a3710.txt`). The group-level form would
/// hold the whole group to the condition, so the kernel runs on the async
/// engine.
#[kernel]
fn first_sub_group_exchange(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let l = wi.get_local_id(0);
    let t = wi.local(tile);
    t.set(l, l as u32);
    if wi.get_sub_group_id() == 0 {
        wi.sub_group_barrier(LOCAL);
        out.set(wi.get_global_id(0), t.get(l ^ 1));
    } else {
        out.set(wi.get_global_id(0), 100);
    }
}

/// The same barrier under a condition uniform by its syntax: lifted.
#[kernel(groups)]
fn first_group_sub_group_barrier(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let l = wi.get_local_id(0);
    let t = wi.local(tile);
    t.set(l, l as u32);
    if wi.get_group_id(0) == 0 {
        wi.sub_group_barrier(LOCAL);
    }
    out.set(wi.get_global_id(0), 1);
}

/// A neighbour exchange whose barrier sits in a closure: not the kernel's
/// own future's to await, so the coroutine engine runs it.
#[kernel]
fn barrier_in_closure(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let l = wi.get_local_id(0);
    let t = wi.local(tile);
    t.set(l, l as u32);
    let wait = || wi.barrier(LOCAL);
    wait();
    out.set(wi.get_global_id(0), t.get(l ^ 1));
}

/// The same exchange with its barrier in a helper the work-item is handed to.
#[kernel]
fn barrier_in_helper(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let l = wi.get_local_id(0);
    let t = wi.local(tile);
    t.set(l, l as u32);
    wait_here(wi);
    out.set(wi.get_global_id(0), t.get(l ^ 1));
}

fn wait_here(wi: &WorkItem) {
    wi.barrier(LOCAL);
}

/// The same exchange with a barrier of run-time flags (`CLK_LOCAL_MEM_FENCE`
/// is 1).
#[kernel]
fn barrier_with_runtime_flags(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let l = wi.get_local_id(0);
    let t = wi.local(tile);
    t.set(l, l as u32);
    wi.barrier_dyn(BarrierKind::WorkGroup, 1, MemScope::WorkGroup)
        .unwrap();
    out.set(wi.get_global_id(0), t.get(l ^ 1));
}

/// The same exchange with its barrier in a macro's arguments, which the
/// macro cannot rewrite.
#[kernel]
fn barrier_in_macro(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let l = wi.get_local_id(0);
    let t = wi.local(tile);
    t.set(l, l as u32);
    assert!({
        wi.barrier(LOCAL);
        true
    });
    out.set(wi.get_global_id(0), t.get(l ^ 1));
}

/// The same exchange with its barrier in a `match` on the work-item's own
/// id (every work-item takes the barrier's arm), and the work-item's ids
/// read inside a macro: every barrier is the kernel's own, so it is awaited.
#[kernel]
fn ids_in_macro(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let l = wi.get_local_id(0);
    let t = wi.local(tile);
    t.set(l, l as u32);
    assert!(wi.get_local_id(0) < wi.get_local_size(0));
    match l {
        usize::MAX => {}
        _ => wi.barrier(LOCAL),
    }
    out.set(wi.get_global_id(0), t.get(l ^ 1));
}

/// The exchange with a closure over the work-item's ids held across the
/// barrier and the barrier in a labelled loop left by `break`: the closure
/// calls no barrier, so the kernel is still awaited.
#[kernel]
fn closure_and_label(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let me = || wi.get_local_id(0);
    let t = wi.local(tile);
    t.set(me(), me() as u32);
    let mut rounds = 0;
    'wait: loop {
        wi.barrier(LOCAL);
        rounds += 1;
        if rounds == 2 {
            break 'wait;
        }
    }
    out.set(wi.get_global_id(0), t.get(me() ^ 1));
}

// ---- tests -----------------------------------------------------------------

#[test]
fn kernels_the_lifting_cannot_follow_take_the_fastest_engine_that_can() {
    assert_eq!(reduce_loop_form(), KernelForm::Async);
    assert_eq!(first_sub_group_waits_form(), KernelForm::Async);
    assert_eq!(one_returns_form(), KernelForm::Async);
    assert_eq!(first_returns_form(), KernelForm::Async);
    assert_eq!(first_breaks_form(), KernelForm::Async);
    assert_eq!(first_sub_group_exchange_form(), KernelForm::Async);
    assert_eq!(first_group_sub_group_barrier_form(), KernelForm::Groups);
    assert_eq!(barrier_in_closure_form(), KernelForm::Coroutines);
    assert_eq!(barrier_in_helper_form(), KernelForm::Coroutines);
    assert_eq!(barrier_with_runtime_flags_form(), KernelForm::Coroutines);
    assert_eq!(barrier_in_macro_form(), KernelForm::Coroutines);
    assert_eq!(ids_in_macro_form(), KernelForm::Async);
    assert_eq!(closure_and_label_form(), KernelForm::Async);
}

#[test]
fn an_awaited_reduction_equals_the_sequential_sum_and_the_coroutine_engine() {
    common::within(60, || {
        let (n, local) = (4096, 256);
        let (input, want) = common::group_sums_case(n, local);
        let input = Buffer::from_slice(&input);
        let mut launch = Launch::new("reduce_loop", NdRange::new([n]).local([local]));
        let scratch = launch.local::<u32>(local);
        let rt = common::rt();
        let sums = Buffer::<u32>::new(n / local);
        reduce_loop_launch(&rt, &launch, &input, &sums, scratch).unwrap();
        assert_eq!(sums.to_vec(), want, "async engine");
        let sums = Buffer::<u32>::new(n / local);
        rt.launch(&launch, |wi| reduce_loop(wi, &input, &sums, scratch))
            .unwrap();
        assert_eq!(sums.to_vec(), want, "coroutine engine");
        // Checked on the async engine: no report.
        let mut checked =
            Launch::new("reduce_loop", NdRange::new([n]).local([local])).checked(true);
        let scratch = checked.local::<u32>(local);
        let sums = Buffer::<u32>::new(n / local);
        reduce_loop_launch(&rt, &checked, &input, &sums, scratch).unwrap();
        assert_eq!(sums.to_vec(), want, "checked");
    });
}

/// Each of the five barrier forms is awaited as the barrier it is: its kind
/// (a work-group barrier the second sub-group skips is a divergence, a
/// sub-group barrier is not) and its line.
#[test]
fn each_awaited_barrier_form_keeps_its_kind_and_its_line() {
    let names = [
        "barrier",
        "work_group_barrier",
        "work_group_barrier_scope",
        "sub_group_barrier",
        "sub_group_barrier_scope",
    ];
    for (which, name) in names.iter().enumerate() {
        let line = common::check::line_of(SOURCE, name);
        let r = common::within(60, move || {
            let out = Buffer::<u32>::new(16);
            let launch = Launch::new(
                "first_sub_group_waits",
                NdRange::new([16]).local([8]).sub_group_size(4),
            );
            first_sub_group_waits_launch(&common::rt(), &launch, &out, which as u32)
                .map(|_| out.to_vec())
        });
        match (which, r) {
            (0..=2, Err(LaunchError::Divergence(d))) => {
                assert_eq!(d.kind, BarrierKind::WorkGroup, "{name}");
                assert_eq!(Some(d.barrier.line), line, "{name}");
            }
            (3.., Ok(out)) => assert_eq!(out, vec![which as u32 + 1; 16], "{name}"),
            (_, other) => panic!("{name}: {other:?}"),
        }
    }
}

/// A `return` or a `break` that only some work-items take, behind a
/// per-work-item condition, is a divergence at the barrier the others wait
/// at (work-item 0 exited, the rest waiting there), not a group that leaves
/// as a whole.
#[test]
fn a_per_item_exit_is_a_divergence_at_the_barrier_the_others_wait_at() {
    type Exit = fn(&clsync::Runtime, &Launch, &Buffer<u32>) -> Result<LaunchSummary, LaunchError>;
    let kernels: [(&str, Exit); 3] = [
        ("after return", one_returns_launch),
        ("after a per-item return", first_returns_launch),
        ("loop left by one", first_breaks_launch),
    ];
    for (marker, run) in kernels {
        let line = common::check::line_of(SOURCE, marker);
        let e = common::within(60, move || {
            let out = Buffer::<u32>::new(8);
            let launch = Launch::new("exit", NdRange::new([8]).local([8]));
            run(&common::rt(), &launch, &out).unwrap_err()
        });
        let LaunchError::Divergence(d) = &e else {
            panic!("{marker}: expected a divergence, got {e}")
        };
        assert_eq!(Some(d.barrier.line), line, "{marker}: {e}");
        let places: Vec<(Vec<usize>, bool)> = d
            .places
            .iter()
            .map(|p| (p.items.clone(), matches!(p.place, Place::Exited)))
            .collect();
        assert_eq!(
            places,
            vec![(vec![0], true), (vec![1, 2, 3, 4, 5, 6, 7], false)],
            "{marker}: {e}"
        );
    }
}

/// A sub-group barrier taken by one sub-group only completes, checked and
/// unchecked, with the exchange's values in that sub-group: not the
/// work-group divergence a group-level form would report.
#[test]
fn a_sub_group_barrier_one_sub_group_takes_is_no_divergence() {
    common::within(60, || {
        let (n, local, sg) = (32, 8, 4);
        let want: Vec<u32> = (0..n)
            .map(|g| {
                let l = g % local;
                if l < sg {
                    (l ^ 1) as u32
                } else {
                    100
                }
            })
            .collect();
        let rt = common::rt();
        for checked in [false, true] {
            let mut launch = Launch::new("sg", NdRange::new([n]).local([local]).sub_group_size(sg))
                .checked(checked);
            let tile = launch.local::<u32>(local);
            let out = Buffer::<u32>::new(n);
            first_sub_group_exchange_launch(&rt, &launch, &out, tile).unwrap();
            assert_eq!(out.to_vec(), want, "checked: {checked}");
            let out = Buffer::<u32>::new(n);
            first_group_sub_group_barrier_launch(&rt, &launch, &out, tile).unwrap();
            assert_eq!(out.to_vec(), vec![1; n], "checked: {checked}");
        }
    });
}

#[test]
fn every_form_of_the_exchange_gives_each_work_item_its_neighbours_value() {
    common::within(60, || {
        let (n, local) = (64, 16);
        let want: Vec<u32> = (0..n).map(|g| ((g % local) ^ 1) as u32).collect();
        let mut launch = Launch::new("exchange", NdRange::new([n]).local([local]));
        let tile = launch.local::<u32>(local);
        let rt = common::rt();
        for run in [
            barrier_in_closure_launch,
            barrier_in_helper_launch,
            barrier_with_runtime_flags_launch,
            barrier_in_macro_launch,
            ids_in_macro_launch,
            closure_and_label_launch,
        ] {
            let out = Buffer::<u32>::new(n);
            run(&rt, &launch, &out, tile).unwrap();
            assert_eq!(out.to_vec(), want);
        }
    });
}
