//! `#[kernel]` checks the bounds of a local array's `get` and `set` once per
//! loop over the work-items when the index only grows with the ids
//! (`ty * w + tx`, `l + half`): the loop then runs unchecked, so that it
//! vectorizes, if the largest work-item's index is in bounds, and as
//! written otherwise. Either way a kernel gives what it gives on the
//! coroutine engine: the sequential result, and an index out of bounds is
//! the same panic (unchecked) or report (checked), at the same line, for
//! the same work-item.

mod common;

use clsync::checker::ReportKind;
use clsync::engine::KernelForm;
use clsync::sync::LOCAL;
use clsync::{kernel, Buffer, Launch, LaunchError, LocalArg, NdRange, WorkItem};

const SOURCE: &str = include_str!("kernel_macro_bounds.rs");

// ---- kernels ---------------------------------------------------------------

/// Each group's tile transposed through local memory: both accesses'
/// indices grow with the ids, and the largest is the tile's last element.
#[kernel(groups)]
fn transpose(wi: &WorkItem, input: &Buffer<u32>, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let t = wi.local(tile);
    let (tx, ty) = (wi.get_local_id(0), wi.get_local_id(1));
    let (w, h) = (wi.get_local_size(0), wi.get_local_size(1));
    let row = wi.get_global_id(1) * wi.get_global_size(0);
    t.set(ty * w + tx, input.get(row + wi.get_global_id(0)));
    wi.barrier(LOCAL);
    // Work-item (tx, ty) takes element (tx * h + ty) of the tile, read as
    // a row-major h-wide one: the transpose of the w-wide one written.
    out.set(row + wi.get_global_id(0), t.get(tx * h + ty));
}

/// Each work-item adds its right neighbour's value, the last one none: the
/// neighbour's index is past the end for the last work-item, so its test
/// fails, and the loop runs as written (the `if` keeps it in bounds).
#[kernel(groups)]
fn with_right(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let t = wi.local(tile);
    let (l, n) = (wi.get_local_id(0), wi.get_local_size(0));
    t.set(l, (l * l) as u32);
    wi.barrier(LOCAL);
    let mut v = t.get(l);
    if l + 1 < n {
        v += t.get(l + 1);
    }
    out.set(wi.get_global_id(0), v);
}

/// The same without the `if`: the last work-item reads past the end.
#[kernel(groups)]
fn past_the_end(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let t = wi.local(tile);
    let l = wi.get_local_id(0);
    t.set(l, 1);
    wi.barrier(LOCAL);
    let v = t.get(l + 1); //~ past the end
    out.set(wi.get_global_id(0), v);
}

/// The same in a loop over the first four work-items (`if l < 4`): the
/// fourth reads past the end.
#[kernel(groups)]
fn ranged_past_the_end(wi: &WorkItem, out: &Buffer<u32>, tile: LocalArg<u32>) {
    let t = wi.local(tile);
    let l = wi.get_local_id(0);
    t.set(l, 1);
    wi.barrier(LOCAL);
    if l < 4 {
        out.set(l, t.get(l + 5)); //~ ranged past the end
    }
}

/// Each work-item writes the element of its global id, in a buffer one
/// element short: the first group's test (its largest global id, 7) passes,
/// the second's (15) fails, and its last work-item writes past the end.
#[kernel(groups)]
fn buffer_past_the_end(wi: &WorkItem, out: &Buffer<u32>) {
    out.set(wi.get_global_id(0), 1); //~ buffer past the end
}

// ---- tests -----------------------------------------------------------------

#[test]
fn the_kernels_are_lifted() {
    assert_eq!(transpose_form(), KernelForm::Groups);
    assert_eq!(with_right_form(), KernelForm::Groups);
    assert_eq!(past_the_end_form(), KernelForm::Groups);
    assert_eq!(ranged_past_the_end_form(), KernelForm::Groups);
}

#[test]
fn a_tile_transposed_through_local_memory_matches_the_sequential_transpose() {
    common::within(60, || {
        let rt = common::rt();
        for (w, h, groups) in [(16, 16, 2), (8, 4, 3), (1, 5, 2)] {
            let (width, height) = (w * groups, h * 2);
            let values: Vec<u32> = (0..(width * height) as u32).collect();
            // Within each tile, element (x, y) of the output is element
            // (x', y') of the input where x' + y' * w = x * h + y.
            let mut want = vec![0; width * height];
            for y in 0..height {
                for x in 0..width {
                    let (tx, ty) = (x % w, y % h);
                    let k = tx * h + ty;
                    let (sx, sy) = (x - tx + k % w, y - ty + k / w);
                    want[y * width + x] = values[sy * width + sx];
                }
            }
            let input = Buffer::from_slice(&values);
            for checked in [false, true] {
                let mut launch =
                    Launch::new("transpose", NdRange::new([width, height]).local([w, h]))
                        .checked(checked);
                let tile = launch.local::<u32>(w * h);
                let out = Buffer::<u32>::new(width * height);
                transpose_launch(&rt, &launch, &input, &out, tile).unwrap();
                assert_eq!(out.to_vec(), want, "lifted {w}x{h}, checked: {checked}");
                let out = Buffer::<u32>::new(width * height);
                rt.launch(&launch, |wi| transpose(wi, &input, &out, tile))
                    .unwrap();
                assert_eq!(out.to_vec(), want, "coroutines {w}x{h}, checked: {checked}");
            }
        }
    });
}

#[test]
fn an_index_past_the_end_for_the_last_work_item_runs_the_loop_as_written() {
    common::within(60, || {
        let (groups, local) = (3, 8);
        let want: Vec<u32> = (0..groups * local)
            .map(|g| {
                let l = (g % local) as u32;
                l * l
                    + if l + 1 < local as u32 {
                        (l + 1) * (l + 1)
                    } else {
                        0
                    }
            })
            .collect();
        common::both_forms_give(
            "with_right",
            (groups, local),
            &want,
            |rt, launch, out, tile, form| {
                match form {
                    common::Form::Lifted => with_right_launch(rt, launch, out, tile),
                    common::Form::Coroutines => rt.launch(launch, |wi| with_right(wi, out, tile)),
                }
                .unwrap();
            },
        );
    });
}

/// Runs a kernel over one group of 8 with a local array of 8, lifted or
/// on the coroutine engine, checked or not, into its error.
type Kernel = fn(&clsync::Runtime, &Launch, &Buffer<u32>, LocalArg<u32>, bool) -> LaunchError;

#[test]
fn an_access_past_the_end_is_the_same_panic_or_report_in_both_forms() {
    let past: Kernel = |rt, launch, out, tile, lifted| match lifted {
        true => past_the_end_launch(rt, launch, out, tile).unwrap_err(),
        false => rt
            .launch(launch, |wi| past_the_end(wi, out, tile))
            .unwrap_err(),
    };
    let ranged: Kernel = |rt, launch, out, tile, lifted| match lifted {
        true => ranged_past_the_end_launch(rt, launch, out, tile).unwrap_err(),
        false => rt
            .launch(launch, |wi| ranged_past_the_end(wi, out, tile))
            .unwrap_err(),
    };
    same_failure_in_both_forms(past, "past the end", 7);
    same_failure_in_both_forms(ranged, "ranged past the end", 3);
}

/// `kernel` reads index 8 of 8 at the line marked `marker`, in work-item
/// `item`: a panic unchecked, one report checked, lifted or not.
fn same_failure_in_both_forms(kernel: Kernel, marker: &str, item: usize) {
    let run = |checked: bool, lifted: bool| {
        common::within(60, move || {
            let mut launch =
                Launch::new("past_the_end", NdRange::new([8]).local([8])).checked(checked);
            let tile = launch.local::<u32>(8);
            let out = Buffer::<u32>::new(8);
            kernel(&common::rt(), &launch, &out, tile, lifted)
        })
    };
    same_failure(run, marker, 8, (0, item));
}

/// What `run(checked, lifted)` gives is, unchecked, the panic of an access
/// to element `len` of `len` at the line marked `marker`, in the work-item
/// of group and local id `item` (first dimension), and checked, one report
/// of that access, lifted or not.
fn same_failure(
    run: impl Fn(bool, bool) -> LaunchError,
    marker: &str,
    len: usize,
    item: (usize, usize),
) {
    let line = common::check::line_of(SOURCE, marker);
    for lifted in [true, false] {
        let p = common::kernel_panic(run(false, lifted));
        let at = format!(
            "index {len}, length {len}, at {}:{}:",
            file!(),
            line.unwrap()
        );
        assert!(p.message.contains(&at), "lifted: {lifted}: {}", p.message);
        assert_eq!(p.site.map(|s| s.line), line, "lifted: {lifted}: {p:?}");
        assert_eq!(
            (p.ids.group_id[0], p.ids.local_id[0]),
            item,
            "lifted: {lifted}"
        );

        let LaunchError::Reported(r) = run(true, lifted) else {
            panic!("lifted: {lifted}: expected reports")
        };
        assert_eq!(r.reports.len(), 1, "lifted: {lifted}: {r}");
        let report = &r.reports[0];
        assert_eq!(report.kind, ReportKind::OutOfBounds);
        assert_eq!(Some(report.site.line), line);
        let at = &report.second.as_ref().expect("the access").item;
        assert_eq!(
            (at.group_id[0], at.local_id[0]),
            item,
            "lifted: {lifted}: {report}"
        );
    }
}

/// A buffer's access is checked once per loop by the largest global id of
/// the group, not of the first group: the second group's last work-item
/// writing one past the end is the same panic (unchecked) or report
/// (checked) lifted as on the coroutine engine. (Unchecked, a write there
/// would go to the buffer's spare element, silently.)
#[test]
fn a_buffer_access_past_the_end_in_a_later_group_is_the_same_failure_in_both_forms() {
    let run = |checked: bool, lifted: bool| {
        common::within(60, move || {
            let launch =
                Launch::new("buffer_past_the_end", NdRange::new([16]).local([8])).checked(checked);
            let out = Buffer::<u32>::new(15);
            let rt = common::rt();
            match lifted {
                true => buffer_past_the_end_launch(&rt, &launch, &out).unwrap_err(),
                false => rt
                    .launch(&launch, |wi| buffer_past_the_end(wi, &out))
                    .unwrap_err(),
            }
        })
    };
    same_failure(run, "buffer past the end", 15, (1, 7));
}
