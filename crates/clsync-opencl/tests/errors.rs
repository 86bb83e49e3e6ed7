//! Bad input at every layer gets an error that names what is wrong and
//! where: the source, the build options, the SPIR-V, the kernel name, the
//! arguments, the range.

use clsync::{Buffer, NdRange, Runtime};
use clsync_opencl::{Arg, BuildError, Program, RunError};

#[test]
fn a_compile_error_is_clangs_message_with_the_line() {
    let e = Program::build(
        "kernel void k(global int *p) {\n  p[0] = undefined_name;\n}\n",
        "bad.cl",
        "",
    )
    .unwrap_err();
    let BuildError::Compile { log } = &e else {
        panic!("{e:?}")
    };
    assert!(log.contains("bad.cl:2:"), "{log}");
    assert!(log.contains("undefined_name"), "{log}");
    // The file as the user named it, not the scratch folder it was built in.
    assert!(log.lines().any(|l| l.starts_with("bad.cl:2:")), "{log}");
    assert!(!log.contains("clsync-build-"), "{log}");
}

#[test]
fn an_unknown_build_option_is_named() {
    let e = Program::build("kernel void k() {}", "k.cl", "-cl-no-such-option").unwrap_err();
    assert!(matches!(e, BuildError::Options(_)), "{e:?}");
    assert!(e.to_string().contains("-cl-no-such-option"), "{e}");
}

#[test]
fn build_options_reach_the_compiler() {
    let p = Program::build(
        "kernel void k(global int *p) { p[0] = VALUE; }",
        "k.cl",
        "-D VALUE=41 -cl-std=CL2.0",
    )
    .unwrap();
    let out = Buffer::<i32>::new(1);
    p.kernel("k")
        .unwrap()
        .run(&Runtime::new(), NdRange::new([1]), &[Arg::Buffer(&out)])
        .unwrap();
    assert_eq!(out.to_vec(), vec![41]);
}

#[test]
fn malformed_spirv_is_refused_with_the_reason() {
    let e = Program::from_spirv(&[0u8; 7]).unwrap_err();
    assert!(e.to_string().contains("not a SPIR-V module"), "{e}");
    let mut words = vec![0x0723_0203u32, 0x0001_0000, 0, 10, 0];
    // An instruction whose word count runs past the end.
    words.push((9 << 16) | 17);
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let e = Program::from_spirv(&bytes).unwrap_err();
    assert!(e.to_string().contains("word count 9"), "{e}");
    let e = Program::from_spirv(&[
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
    ])
    .unwrap_err();
    assert!(e.to_string().contains("magic number"), "{e}");
}

#[test]
fn an_unknown_kernel_lists_the_kernels() {
    let p = Program::build("kernel void one() {}\nkernel void two() {}", "k.cl", "").unwrap();
    let e = p.kernel("three").err().unwrap();
    let text = e.to_string();
    assert!(
        text.contains("`three`") && text.contains("one") && text.contains("two"),
        "{text}"
    );
}

#[test]
fn arguments_that_do_not_fit_are_named() {
    let p = Program::build(
        "kernel void k(global int *out, int n, local float *tmp) { out[0] = n; }",
        "k.cl",
        "",
    )
    .unwrap();
    let k = p.kernel("k").unwrap();
    let out = Buffer::<i32>::new(1);
    let rt = Runtime::new();
    let e = k
        .run(&rt, NdRange::new([1]), &[Arg::Buffer(&out)])
        .unwrap_err();
    assert!(e.to_string().contains("takes 3 arguments, 1 given"), "{e}");
    let e = k
        .run(
            &rt,
            NdRange::new([1]),
            &[Arg::Buffer(&out), Arg::Buffer(&out), Arg::Local(16)],
        )
        .unwrap_err();
    assert!(e.to_string().contains("argument 1 (`n`, int)"), "{e}");
    let e = k
        .run(
            &rt,
            NdRange::new([1]),
            &[Arg::Buffer(&out), Arg::of(&[1i64]), Arg::Local(16)],
        )
        .unwrap_err();
    assert!(
        e.to_string().contains("8 bytes given, the type has 4"),
        "{e}"
    );
    let e = k
        .run(
            &rt,
            NdRange::new([1]),
            &[Arg::Buffer(&out), Arg::of(&[1i32]), Arg::of(&[1i32])],
        )
        .unwrap_err();
    assert!(e.to_string().contains("argument 2 (`tmp`"), "{e}");
}

#[test]
fn an_invalid_range_is_the_runtimes_error() {
    let p = Program::build(
        "kernel void k(global int *out) { out[get_global_id(0)] = 1; }",
        "k.cl",
        "",
    )
    .unwrap();
    let out = Buffer::<i32>::new(8);
    let e = p
        .kernel("k")
        .unwrap()
        .run(
            &Runtime::new(),
            NdRange::new([1 << 20]).local([1 << 20]),
            &[Arg::Buffer(&out)],
        )
        .unwrap_err();
    assert!(matches!(e, RunError::Launch { .. }), "{e:?}");
    assert!(e.to_string().contains("work-group"), "{e}");
}
