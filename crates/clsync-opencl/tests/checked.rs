//! What the specification leaves undefined, in compiled OpenCL C: an
//! error in the fast mode, a report in the checked mode, with the source
//! line and the work-item; never memory corruption or a hang.

use clsync::checker::ReportKind;
use clsync::{Buffer, LaunchError, NdRange, Runtime};
use clsync_opencl::{Arg, Program, RunError};

const OOB: &str =
    "kernel void k(global int *out) {\n  int i = get_global_id(0);\n  out[i + 1] = i;\n}\n";

#[test]
fn an_out_of_bounds_write_stops_the_fast_mode_naming_it() {
    let p = Program::build(OOB, "oob.cl", "").unwrap();
    let out = Buffer::<i32>::new(4);
    let e = p
        .kernel("k")
        .unwrap()
        .run(&Runtime::new(), NdRange::new([4]), &[Arg::Buffer(&out)])
        .unwrap_err();
    let RunError::Launch {
        error: LaunchError::Panic(panic),
        ..
    } = &e
    else {
        panic!("{e:?}")
    };
    let text = panic.to_string();
    assert!(
        text.contains("Invalid write of size 4 at global memory"),
        "{text}"
    );
    assert!(text.contains("oob.cl:3"), "{text}");
    assert!(
        text.contains("`out` is 16 bytes; the access is at byte 16"),
        "{text}"
    );
}

#[test]
fn an_out_of_bounds_write_is_reported_and_skipped_when_checked() {
    let p = Program::build(OOB, "oob.cl", "").unwrap();
    let out = Buffer::<i32>::new(4);
    let found = p
        .kernel("k")
        .unwrap()
        .run_with(
            &Runtime::new(),
            NdRange::new([4]),
            &[Arg::Buffer(&out)],
            |l| l,
            true,
        )
        .unwrap();
    assert_eq!(found.diagnostics.len(), 1, "{found:?}");
    let d = &found.diagnostics[0];
    assert!(
        d.headline
            .starts_with("Invalid write of size 4 at global memory"),
        "{d}"
    );
    assert_eq!(d.global, [3, 0, 0]);
    assert_eq!(d.site.map(|s| (s.file, s.line)), Some(("oob.cl", 3)));
    // The other work-items ran: out[1..4] = 0, 1, 2.
    assert_eq!(out.to_vec(), vec![0, 0, 1, 2]);
}

#[test]
fn a_null_pointer_is_an_invalid_access() {
    let p = Program::build(
        "kernel void k(global int *p) { p[get_global_id(0)] = 1; }",
        "null.cl",
        "",
    )
    .unwrap();
    let e = p
        .kernel("k")
        .unwrap()
        .run(&Runtime::new(), NdRange::new([2]), &[Arg::Null])
        .unwrap_err();
    assert!(
        e.to_string().contains("Invalid memory store of size 4"),
        "{e}"
    );
}

#[test]
fn a_divergent_barrier_is_an_error_not_a_hang() {
    let p = Program::build(
        "kernel void k(global int *p) {\n  int i = get_local_id(0);\n  if (i != 0) barrier(CLK_GLOBAL_MEM_FENCE);\n  p[i] = i;\n}\n",
        "div.cl",
        "",
    )
    .unwrap();
    let out = Buffer::<i32>::new(4);
    let e = p
        .kernel("k")
        .unwrap()
        .run(
            &Runtime::new(),
            NdRange::new([4]).local([4]),
            &[Arg::Buffer(&out)],
        )
        .unwrap_err();
    let text = e.to_string();
    assert!(text.contains("divergence"), "{text}");
    assert!(text.contains("div.cl:3"), "{text}");
}

#[test]
fn a_data_race_in_local_memory_is_reported_with_both_lines() {
    let p = Program::build(
        "kernel void k(local int *s, global int *out) {\n  int i = get_local_id(0);\n  s[i] = i;\n  out[i] = s[(i + 1) % get_local_size(0)];\n}\n",
        "race.cl",
        "",
    )
    .unwrap();
    let out = Buffer::<i32>::new(8);
    let found = p
        .kernel("k")
        .unwrap()
        .run_with(
            &Runtime::new(),
            NdRange::new([8]).local([8]),
            &[Arg::Local(32), Arg::Buffer(&out)],
            |l| l,
            true,
        )
        .unwrap();
    let race = found
        .checker
        .iter()
        .find(|r| r.kind == ReportKind::DataRace)
        .expect("a race");
    let lines: Vec<u32> = [&race.first, &race.second]
        .iter()
        .filter_map(|a| a.as_ref())
        .map(|a| a.site.line)
        .collect();
    assert!(lines.contains(&3) && lines.contains(&4), "{race}");
    assert_eq!(race.memory.as_ref().map(|m| m.name.as_str()), Some("s"));
    assert!(clsync_opencl::exec::report::headline(race)
        .starts_with("Read-write data race at local memory"));
}

#[test]
fn the_same_kernel_with_a_barrier_is_clean() {
    let p = Program::build(
        "kernel void k(local int *s, global int *out) {\n  int i = get_local_id(0);\n  s[i] = i;\n  barrier(CLK_LOCAL_MEM_FENCE);\n  out[i] = s[(i + 1) % get_local_size(0)];\n}\n",
        "ok.cl",
        "",
    )
    .unwrap();
    let out = Buffer::<i32>::new(8);
    let found = p
        .kernel("k")
        .unwrap()
        .run_with(
            &Runtime::new(),
            NdRange::new([8]).local([8]),
            &[Arg::Local(32), Arg::Buffer(&out)],
            |l| l,
            true,
        )
        .unwrap();
    assert!(found.is_empty(), "{found:?}");
    assert_eq!(out.to_vec(), vec![1, 2, 3, 4, 5, 6, 7, 0]);
}

#[test]
fn relaxed_c11_atomics_of_work_group_scope_across_groups_are_too_narrow() {
    // Every group increments the same counter with work-group scope: the
    // scopes do not include each other (001_b96d5603ef61627c.txt).
    let src = "kernel void k(global atomic_int *c) {\n  atomic_fetch_add_explicit(c, 1, memory_order_relaxed, memory_scope_work_group);\n}\n";
    let p = Program::build(src, "scope.cl", "-cl-std=CL2.0").unwrap();
    let c = Buffer::<i32>::new(1);
    let found = p
        .kernel("k")
        .unwrap()
        .run_with(
            &Runtime::new(),
            NdRange::new([8]).local([4]),
            &[Arg::Buffer(&c)],
            |l| l,
            true,
        )
        .unwrap();
    assert!(
        found
            .checker
            .iter()
            .any(|r| r.kind == ReportKind::ScopeTooNarrow),
        "{found:?}"
    );
    assert_eq!(c.to_vec(), vec![8]);
    // Device scope: clean.
    let p = Program::build(
        &src.replace("memory_scope_work_group", "memory_scope_device"),
        "scope.cl",
        "-cl-std=CL2.0",
    )
    .unwrap();
    let c = Buffer::<i32>::new(1);
    let found = p
        .kernel("k")
        .unwrap()
        .run_with(
            &Runtime::new(),
            NdRange::new([8]).local([4]),
            &[Arg::Buffer(&c)],
            |l| l,
            true,
        )
        .unwrap();
    assert!(found.is_empty(), "{found:?}");
}
