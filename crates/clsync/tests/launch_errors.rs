//! Bad input and failing kernels end in clear errors that name what and
//! where — never a hang, a process abort, or a silently wrong result — and
//! the runtime stays usable afterwards.

mod common;

use clsync::sync::*;
use clsync::*;
use common::rt;

fn range_error(range: NdRange) -> RangeError {
    match rt().launch(&Launch::new("k", range), |_| {}) {
        Err(LaunchError::Range { kernel, source }) => {
            assert_eq!(kernel, "k");
            source
        }
        other => panic!("expected a range error, got {other:?}"),
    }
}

#[test]
fn bad_ranges_are_rejected_before_anything_runs() {
    // 2^20 × 2^20 groups of one: more than the scheduler numbers.
    let err = range_error(NdRange::new([1 << 20, 1 << 20]).local([1, 1]));
    assert_eq!(
        err,
        RangeError::TooManyGroups {
            groups: vec![1 << 20, 1 << 20]
        }
    );
    assert!(err.to_string().contains("[1048576, 1048576] work-groups"));
    assert_eq!(
        range_error(NdRange::new([4, 0])),
        RangeError::ZeroGlobal { dim: 1 }
    );
    assert_eq!(
        range_error(NdRange::new([4]).local([0])),
        RangeError::ZeroLocal { dim: 0 }
    );
    assert!(matches!(
        range_error(NdRange::new([8192]).local([8192])),
        RangeError::LocalTooLarge { total: 8192, .. }
    ));
    assert!(matches!(
        range_error(NdRange::new([64, 64]).local([64, 65])),
        RangeError::LocalTooLarge { total: 4160, .. }
    ));
    assert_eq!(
        range_error(
            NdRange::new([10, 10])
                .local([4, 5])
                .uniform_work_groups(true)
        ),
        RangeError::NonUniform {
            dim: 0,
            global: 10,
            local: 4
        }
    );
    assert_eq!(
        range_error(NdRange::new([64]).sub_group_size(0)),
        RangeError::SubGroupSize { size: 0 }
    );
    assert_eq!(
        range_error(NdRange::new([64]).sub_group_size(65)),
        RangeError::SubGroupSize { size: 65 }
    );
    assert_eq!(
        range_error(NdRange::new([8, 8]).local([4])),
        RangeError::DimensionMismatch {
            what: "local size",
            given: 1,
            dims: 2
        }
    );
    assert_eq!(
        range_error(NdRange::new([8]).offset([1, 1])),
        RangeError::DimensionMismatch {
            what: "global offset",
            given: 2,
            dims: 1
        }
    );
    assert_eq!(
        range_error(NdRange::new([8]).offset([usize::MAX])),
        RangeError::Overflow { dim: 0 }
    );
    assert_eq!(
        range_error(NdRange::new([1usize; 0])),
        RangeError::Dimensions { dims: 0 }
    );
    // The message names the dimension and values.
    let msg = range_error(NdRange::new([10]).local([4]).uniform_work_groups(true)).to_string();
    assert!(
        msg.contains("local size 4")
            && msg.contains("global size 10")
            && msg.contains("dimension 0"),
        "{msg}"
    );
}

#[test]
fn the_largest_group_runs_without_a_thread_per_work_item() {
    let n = MAX_WORK_GROUP_SIZE;
    let out = Buffer::<u32>::new(n);
    rt().launch(
        &Launch::new("big_group", NdRange::new([n]).local([n])),
        |wi| {
            let l = wi.get_local_id(0);
            let s = wi.local_array::<u32>(n);
            s.set(l, l as u32);
            wi.barrier(LOCAL);
            out.set(l, s.get(n - 1 - l));
        },
    )
    .unwrap();
    assert_eq!(out.to_vec(), (0..n as u32).rev().collect::<Vec<_>>());
}

#[test]
fn a_panic_names_the_work_item_and_the_runtime_stays_usable() {
    let rt = rt();
    let e = rt
        .launch(
            &Launch::new("panicky", NdRange::new([16, 16]).local([4, 4])),
            |wi| {
                if wi.get_global_id(0) == 9 && wi.get_global_id(1) == 5 {
                    panic!("bad pixel");
                }
            },
        )
        .unwrap_err();
    let LaunchError::Panic(p) = &e else {
        panic!("expected a panic error, got {e}")
    };
    assert_eq!(p.kernel, "panicky");
    assert_eq!(&p.ids.global_id[..2], &[9, 5]);
    assert_eq!(&p.ids.local_id[..2], &[1, 1]);
    assert_eq!(&p.ids.group_id[..2], &[2, 1]);
    assert_eq!(p.message, "bad pixel");
    assert!(
        p.site.is_some_and(|s| s.file.ends_with("launch_errors.rs")),
        "{e}"
    );
    let text = e.to_string();
    assert!(
        text.contains("global id (9, 5)") && text.contains("bad pixel"),
        "{text}"
    );
    // A panic while others wait at a barrier also unwinds them cleanly.
    let e = rt
        .launch(
            &Launch::new("panic_at_barrier", NdRange::new([64]).local([64])),
            |wi| {
                wi.barrier(LOCAL);
                if wi.get_local_id(0) == 40 {
                    panic!("after the barrier");
                }
                wi.barrier(LOCAL);
            },
        )
        .unwrap_err();
    assert!(
        matches!(e, LaunchError::Panic(ref p) if p.ids.local_id[0] == 40),
        "{e}"
    );
    // Still usable.
    let out = Buffer::<u32>::new(100);
    rt.launch(&Launch::new("after", NdRange::new([100])), |wi| {
        out.set(wi.get_global_id(0), 1)
    })
    .unwrap();
    assert_eq!(out.to_vec(), vec![1; 100]);
}

/// The line of the access in an out-of-bounds panic's site, not a line of
/// clsync's own.
fn site_line(e: &LaunchError) -> Option<u32> {
    match e {
        LaunchError::Panic(p) => p.site.map(|s| s.line),
        other => panic!("{other}"),
    }
}

#[test]
fn out_of_bounds_accesses_fail_naming_the_object() {
    let b = Buffer::<u32>::new(10).named("small");
    let line = line!() + 3;
    let e = rt()
        .launch(&Launch::new("oob", NdRange::new([16])), |wi| {
            b.set(wi.get_global_id(0), 1)
        })
        .unwrap_err();
    assert_eq!(site_line(&e), Some(line), "{e}");
    let LaunchError::Panic(p) = &e else {
        panic!("{e}")
    };
    assert_eq!(
        p.ids.global_id[0], 10,
        "the first failing work-item by group order"
    );
    assert!(
        p.message.contains("`small`")
            && p.message.contains("index 10")
            && p.message.contains("length 10"),
        "{e}"
    );
    let mut launch = Launch::new("oob_local", NdRange::new([8]).local([8]));
    let tile = launch.local_named::<f32>("tile", 4);
    let line = line!() + 2;
    let e = rt()
        .launch(&launch, |wi| wi.local(tile).set(wi.get_local_id(0), 0.0))
        .unwrap_err();
    assert_eq!(site_line(&e), Some(line), "{e}");
    assert!(
        matches!(&e, LaunchError::Panic(p) if p.message.contains("local memory `tile`") && p.message.contains("index 4")),
        "{e}"
    );
    // A legacy atomic finds its element a few calls deeper: the site is
    // still the kernel's.
    let counts = Buffer::<u32>::new(4).named("counts");
    let line = line!() + 3;
    let e = rt()
        .launch(&Launch::new("oob_legacy", NdRange::new([8])), |wi| {
            counts.atomic_inc(wi.get_global_id(0));
        })
        .unwrap_err();
    assert_eq!(site_line(&e), Some(line), "{e}");
    let img = Image2d::<[u32; 4]>::new(4, 4).named("img");
    let line = line!() + 3;
    let e = rt()
        .launch(&Launch::new("oob_image", NdRange::new([5])), |wi| {
            img.write(wi, [wi.get_global_id(0) as i32, 0], [0; 4])
        })
        .unwrap_err();
    assert_eq!(site_line(&e), Some(line), "{e}");
    assert!(
        matches!(&e, LaunchError::Panic(p) if p.message.contains("image `img`") && p.message.contains("(4, 0)")),
        "{e}"
    );
}

#[test]
fn launches_cannot_nest() {
    let rt = rt();
    let inner = std::sync::Mutex::new(None);
    rt.launch(&Launch::new("outer", NdRange::new([1])), |_| {
        *inner.lock().unwrap() = Some(
            rt.launch(&Launch::new("inner", NdRange::new([1])), |_| {})
                .map(|_| ()),
        );
    })
    .unwrap();
    let got = inner.into_inner().unwrap().expect("the outer kernel ran");
    assert!(
        matches!(got, Err(LaunchError::Nested { ref kernel }) if kernel == "inner"),
        "{got:?}"
    );
}

#[test]
fn a_local_argument_belongs_to_its_launch() {
    let mut a = Launch::new("a", NdRange::new([4]));
    let arg = a.local::<u32>(4);
    let b = Launch::new("b", NdRange::new([4]));
    let e = rt().launch(&b, |wi| wi.local(arg).set(0, 1)).unwrap_err();
    assert!(
        matches!(&e, LaunchError::Panic(p) if p.message.contains("other than the one that made it")),
        "{e}"
    );
}

#[test]
fn declared_local_arrays_must_agree_in_length() {
    let e = rt()
        .launch(&Launch::new("decl", NdRange::new([8]).local([8])), |wi| {
            let _ = wi.local_array::<u32>(4 + wi.get_local_id(0) / 4);
        })
        .unwrap_err();
    assert!(
        matches!(&e, LaunchError::Panic(p) if p.message.contains("length 5") && p.message.contains("4 by an earlier")),
        "{e}"
    );
}

/// Local memory past `MAX_LOCAL_MEM_SIZE` is an error that names the
/// argument, or a kernel panic at the declaration, never an allocation
/// that aborts the process (2^40 elements did before).
#[test]
fn local_memory_past_the_limit_is_an_error_not_an_abort() {
    for len in [1usize << 40, usize::MAX, MAX_LOCAL_MEM_SIZE / 4] {
        let mut launch = Launch::new("big_local", NdRange::new([4]).local([2]));
        let small = launch.local::<u32>(16);
        let big = launch.local_named::<u32>("tile", len);
        let e = rt()
            .launch(&launch, |wi| {
                wi.local(small).set(0, 1);
                wi.local(big).set(0, 1);
            })
            .unwrap_err();
        let LaunchError::Resource { kernel, message } = &e else {
            panic!("expected a resource error, got {e}")
        };
        assert_eq!(kernel, "big_local");
        assert!(message.contains("`tile`"), "{message}");
        assert!(
            message.contains(&MAX_LOCAL_MEM_SIZE.to_string()),
            "{message}"
        );
    }
    // At the limit, with the scratch element counted, it runs.
    let mut launch = Launch::new("at_limit", NdRange::new([2]).local([2]));
    let tile = launch.local::<u32>(MAX_LOCAL_MEM_SIZE / 4 - 1);
    rt().launch(&launch, |wi| wi.local(tile).set(wi.get_local_id(0), 7))
        .unwrap();

    // A declared array that would pass the limit.
    let e = rt()
        .launch(
            &Launch::new("big_declared", NdRange::new([2]).local([2])),
            |wi| {
                wi.local_array::<u32>(1 << 40).set(0, 1);
            },
        )
        .unwrap_err();
    let LaunchError::Panic(p) = &e else {
        panic!("expected a kernel panic, got {e}")
    };
    assert!(p.message.contains("does not fit"), "{e}");
    // The kernel's line, not the runtime's.
    let site = p.site.expect("a site");
    assert!(site.file.ends_with("launch_errors.rs"), "{e}");
}

/// A work-item stack too large for the address space is a resource error
/// (it overflowed an addition in the runtime before, a panic with no
/// message).
#[test]
fn an_impossible_stack_size_is_a_resource_error() {
    for size in [usize::MAX, 1 << 62] {
        let launch = Launch::new("huge_stack", NdRange::new([2]).local([2])).stack_size(size);
        let e = rt().launch(&launch, |_wi| {}).unwrap_err();
        let LaunchError::Resource { message, .. } = &e else {
            panic!("expected a resource error, got {e}")
        };
        assert!(message.contains(&size.to_string()), "{message}");
    }
}

/// Image sizes OpenCL refuses (`CL_INVALID_IMAGE_SIZE`) are refused here,
/// before a pixel is made: a side of zero, past `MAX_IMAGE2D_SIZE`, or so
/// long that width × height would overflow (which wrapped silently in a
/// release build before).
#[test]
fn invalid_image_sizes_are_refused() {
    for (w, h) in [
        (0, 4),
        (4, 0),
        (MAX_IMAGE2D_SIZE + 1, 1),
        (1, MAX_IMAGE2D_SIZE + 1),
        (1 << 33, 1 << 33),
    ] {
        let e = Image2d::<[u32; 4]>::try_new(w, h).unwrap_err();
        assert_eq!(
            e,
            ImageSizeError {
                width: w,
                height: h
            }
        );
        assert!(e.to_string().contains("CL_INVALID_IMAGE_SIZE"), "{e}");
        let panic =
            std::panic::catch_unwind(|| Image2d::<[u32; 4]>::new(w, h)).expect_err("new panics");
        let message = panic.downcast_ref::<String>().expect("a message");
        assert_eq!(*message, e.to_string());
    }
    let img = Image2d::<[u32; 4]>::try_new(MAX_IMAGE2D_SIZE, 1).expect("the largest side");
    assert_eq!((img.width(), img.height()), (MAX_IMAGE2D_SIZE, 1));
}
