//! `#[kernel]` parameters of type `&[T]`: OpenCL C's `global const T*`,
//! memory no one writes while the kernel borrows it, so that a read is a
//! plain load where a buffer's is a relaxed atomic. `src[i]` at an index
//! that only grows with the ids is bounds-checked once per loop, as a
//! view's `get` is (`lift/bounds.rs`), and read unchecked where the
//! largest work-item's index is in bounds; otherwise the loop runs as
//! written, and an index out of bounds is Rust's own panic, for the same
//! work-item, lifted or not, checked or not (the checker has nothing to
//! report of memory no one can write).

mod common;

use clsync::engine::KernelForm;
use clsync::sync::LOCAL;
use clsync::{kernel, Buffer, Launch, LocalArg, NdRange, WorkItem};

/// Each work-item loads an odd element of `src` into the tile, then folds
/// the tile with `src` again through a carried loop (blocks, in an
/// unchecked launch of 16).
#[kernel(groups)]
fn gather(wi: &WorkItem, src: &[u32], out: &Buffer<u32>, tile: LocalArg<u32>) {
    let (t, l, n) = (wi.local(tile), wi.get_local_id(0), wi.get_local_size(0));
    let g = wi.get_global_id(0);
    t.set(l, src[g * 2 + 1]);
    wi.barrier(LOCAL);
    let mut acc = 0u32;
    for k in 0..n {
        acc = acc.wrapping_mul(3).wrapping_add(t.get(k) ^ src[k + g]);
    }
    out.set(g, acc);
}

/// The last work-item reads one past the end of `src`.
#[kernel(groups)]
fn slice_past_the_end(wi: &WorkItem, src: &[u32], out: &Buffer<u32>) {
    let g = wi.get_global_id(0);
    out.set(g, src[g + 1]); //~ slice past the end
}

/// `gather`, sequentially, for groups of `local`.
fn gather_reference(src: &[u32], total: usize, local: usize) -> Vec<u32> {
    (0..total)
        .map(|g| {
            let first = g - g % local;
            (0..local).fold(0u32, |acc, k| {
                acc.wrapping_mul(3)
                    .wrapping_add(src[(first + k) * 2 + 1] ^ src[k + g])
            })
        })
        .collect()
}

#[test]
fn the_kernels_are_lifted() {
    assert_eq!(gather_form(), KernelForm::Groups);
    assert_eq!(slice_past_the_end_form(), KernelForm::Groups);
}

/// Groups of 16 (blocks) and 5 (none), lifted checked and unchecked and on
/// the coroutine engine, against the sequential fold.
#[test]
fn reads_of_a_shared_slice_give_the_sequential_result() {
    common::within(60, || {
        for (groups, local) in [(3, 16), (2, 5)] {
            let total = groups * local;
            let src: Vec<u32> = (0..3 * total as u32)
                .map(|i| i.wrapping_mul(2654435761) >> 9)
                .collect();
            let want = gather_reference(&src, total, local);
            common::both_forms_give(
                "gather",
                (groups, local),
                &want,
                |rt, launch, out, tile, form| {
                    match form {
                        common::Form::Lifted => gather_launch(rt, launch, &src, out, tile),
                        common::Form::Coroutines => {
                            rt.launch(launch, |wi| gather(wi, &src, out, tile))
                        }
                    }
                    .unwrap();
                },
            );
        }
    });
}

/// The last work-item's read past the end is Rust's index panic, at the
/// marked line, for global id 15 (group 1, local 7), in every form: the
/// unchecked lifted loop is not taken for that group, whose largest index
/// fails the test.
#[test]
fn a_read_past_the_end_is_the_same_panic_in_every_form() {
    let line = common::check::line_of(include_str!("kernel_macro_slices.rs"), "slice past the end");
    for checked in [false, true] {
        for lifted in [true, false] {
            let p = common::within(60, move || {
                let src: Vec<u32> = (0..16).collect();
                let launch = Launch::new("slice_past_the_end", NdRange::new([16]).local([8]))
                    .checked(checked);
                let out = Buffer::<u32>::new(16);
                let rt = common::rt();
                let e = match lifted {
                    true => slice_past_the_end_launch(&rt, &launch, &src, &out).unwrap_err(),
                    false => rt
                        .launch(&launch, |wi| slice_past_the_end(wi, &src, &out))
                        .unwrap_err(),
                };
                common::kernel_panic(e)
            });
            let case = format!("checked: {checked}, lifted: {lifted}");
            assert!(
                p.message.contains("the len is 16 but the index is 16"),
                "{case}: {}",
                p.message
            );
            assert_eq!((p.ids.group_id[0], p.ids.local_id[0]), (1, 7), "{case}");
            assert_eq!(p.site.map(|s| s.line), line, "{case}: {p:?}");
        }
    }
}
