//! Local atomics in group-level kernels (`Runtime::launch_groups`): reached
//! through `LocalView::at_unchecked` or as a slice (`LocalView::as_slice`),
//! they count as `at`'s do, checked and unchecked, against a sequential
//! count; past the end is a report at its line in a checked launch
//! (`at_unchecked`) or Rust's own panic (the slice).

mod common;

use clsync::atomics::Local;
use clsync::sync::{DeviceScope, Relaxed, WorkGroupScope, LOCAL};
use clsync::{AtomicUint, Buffer, Launch, NdRange};

/// 64 bytes below 11, as a buffer, and their 16-bin histogram.
fn sixty_four_bytes() -> (Buffer<u8>, Vec<u32>) {
    let bytes: Vec<u8> = (0..64u32).map(|i| (i * 37 % 11) as u8).collect();
    let mut want = vec![0u32; 16];
    for &b in &bytes {
        want[b as usize] += 1;
    }
    (Buffer::from_slice(&bytes), want)
}

/// Two groups of 32 over the 64 bytes, with 16 local atomic bins.
fn bins_launch() -> (Launch, clsync::LocalArg<AtomicUint>) {
    let mut launch = Launch::new("bins", NdRange::new([64]).local([32]));
    let bins = launch.local::<AtomicUint>(16);
    (launch, bins)
}

/// `LocalView::at_unchecked` on local atomics: the same counts as `at` in
/// unchecked and checked launches (against a sequential count), and an
/// index past the end in a checked launch is an out-of-bounds report at its
/// line, naming the work-item.
#[test]
fn unchecked_local_atomics_count_as_checked_ones_and_past_the_end_is_a_report() {
    const SOURCE: &str = include_str!("group_local_atomics.rs");
    let (data, want) = sixty_four_bytes();
    let (launch, bins) = bins_launch();
    for checked in [false, true] {
        let out: Buffer<AtomicUint> = Buffer::new(16);
        common::rt()
            .with_checking(checked)
            .launch_groups(&launch, |g| {
                let (b, data, out) = (g.local(bins), g.global(&data), g.global(&out));
                g.for_each_in(0..16, move |it| {
                    b.at(it.local_linear_id)
                        .store_explicit_scope(0, Relaxed, WorkGroupScope)
                });
                g.barrier(LOCAL);
                g.for_each(move |it| {
                    let v = data.get(it.global_linear_id) as usize;
                    // SAFETY: every byte of the input is below 11 < 16.
                    unsafe { b.at_unchecked(v) }.fetch_add_explicit_scope(
                        1,
                        Relaxed,
                        WorkGroupScope,
                    );
                });
                g.barrier(LOCAL);
                g.for_each_in(0..16, move |it| {
                    let l = it.local_linear_id;
                    let v = b.at(l).load_explicit_scope(Relaxed, WorkGroupScope);
                    out.at(l).fetch_add_explicit_scope(v, Relaxed, DeviceScope);
                });
            })
            .unwrap();
        assert_eq!(out.to_vec(), want, "checked: {checked}");
    }
    let reports = common::within(60, move || {
        common::rt()
            .check_groups(&launch, |g| {
                let b = g.local(bins);
                g.for_each_in(3..4, move |_| {
                    // SAFETY: not met (16 is past the end); the launch is
                    // checked, so the access is a report.
                    let _ = unsafe { b.at_unchecked(16) }; //~ bin
                });
            })
            .unwrap()
    });
    common::check::out_of_bounds_at(&reports, SOURCE, "bin", 3);
}

/// `LocalView::as_slice` hands out the very objects `at` does (same
/// addresses, the array's length, no scratch element); a histogram counted
/// through it as an array is the sequential one, checked and unchecked; an
/// index past its end is Rust's own panic, naming the work-item, in both.
#[test]
fn local_atomics_as_a_slice_are_the_objects_at_gives() {
    let (data, want) = sixty_four_bytes();
    let (launch, bins) = bins_launch();
    for checked in [false, true] {
        let rt = common::rt().with_checking(checked);
        let out: Buffer<AtomicUint> = Buffer::new(16);
        rt.launch_groups(&launch, |g| {
            let view = g.local(bins);
            let slice = view.as_slice();
            assert_eq!(slice.len(), 16);
            for (i, object) in slice.iter().enumerate() {
                assert!(std::ptr::eq(object, view.at(i)), "bin {i}");
            }
            let b: &[AtomicUint<Local>; 16] = slice.try_into().unwrap();
            let (data, out) = (g.global(&data), g.global(&out));
            g.for_each_in(0..16, |it| {
                b[it.local_linear_id].store_explicit_scope(0, Relaxed, WorkGroupScope)
            });
            g.barrier(LOCAL);
            g.for_each(|it| {
                let v = usize::from(data.get(it.global_linear_id));
                b[v].fetch_add_explicit_scope(1, Relaxed, WorkGroupScope);
            });
            g.barrier(LOCAL);
            g.for_each_in(0..16, |it| {
                let l = it.local_linear_id;
                let v = b[l].load_explicit_scope(Relaxed, WorkGroupScope);
                out.at(l).fetch_add_explicit_scope(v, Relaxed, DeviceScope);
            });
        })
        .unwrap();
        assert_eq!(out.to_vec(), want, "checked: {checked}");
        let e = common::within(60, move || {
            let (launch, bins) = bins_launch();
            rt.launch_groups(&launch, |g| {
                let slice = g.local(bins).as_slice();
                g.for_each_in(5..6, |it| {
                    let _ =
                        slice[it.local_linear_id + 11].load_explicit_scope(Relaxed, WorkGroupScope);
                });
            })
        })
        .expect_err("past the end");
        let p = common::kernel_panic(e);
        assert_eq!(p.ids.local_id[0], 5, "checked: {checked}");
        assert!(
            p.message.contains("index out of bounds") && p.message.contains("16"),
            "checked: {checked}: {}",
            p.message
        );
    }
}
