//! What the specification leaves undefined, in compiled OpenCL C: an
//! error in the fast mode, a report in the checked mode, with the source
//! line and the work-item; never memory corruption or a hang.

mod common;

use clsync::checker::ReportKind;
use clsync::{Buffer, LaunchError, NdRange, Runtime};
use clsync_opencl::{Arg, Findings, Program, RunError};

/// Runs `name` of `p` checked and returns what was found.
fn checked(p: &Program, name: &str, range: NdRange, args: &[Arg<'_>]) -> Findings {
    common::run(p, name, range, args, true)
}

const OOB: &str =
    "kernel void k(global int *out) {\n  int i = get_global_id(0);\n  out[i + 1] = i;\n}\n";

#[test]
fn an_out_of_bounds_write_stops_the_fast_mode_naming_it() {
    let p = common::build(OOB, "oob.cl", "");
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
    // The launch error's site is the kernel's line, not the runtime's.
    assert_eq!(
        panic.site.map(|s| (s.file, s.line)),
        Some(("oob.cl", 3)),
        "{text}"
    );
    assert!(
        text.contains("`out` is 16 bytes; the access is at byte 16"),
        "{text}"
    );
}

#[test]
fn an_out_of_bounds_write_is_reported_and_skipped_when_checked() {
    let p = common::build(OOB, "oob.cl", "");
    let out = Buffer::<i32>::new(4);
    let found = common::run(&p, "k", NdRange::new([4]), &[Arg::Buffer(&out)], true);
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
    let p = common::build(
        "kernel void k(global int *p) { p[get_global_id(0)] = 1; }",
        "null.cl",
        "",
    );
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
    let p = common::build("kernel void k(global int *p) {\n  int i = get_local_id(0);\n  if (i != 0) barrier(CLK_GLOBAL_MEM_FENCE);\n  p[i] = i;\n}\n", "div.cl", "");
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
    let p = common::build("kernel void k(local int *s, global int *out) {\n  int i = get_local_id(0);\n  s[i] = i;\n  out[i] = s[(i + 1) % get_local_size(0)];\n}\n", "race.cl", "");
    let out = Buffer::<i32>::new(8);
    let found = common::run(
        &p,
        "k",
        NdRange::new([8]).local([8]),
        &[Arg::Local(32), Arg::Buffer(&out)],
        true,
    );
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
    let p = common::build("kernel void k(local int *s, global int *out) {\n  int i = get_local_id(0);\n  s[i] = i;\n  barrier(CLK_LOCAL_MEM_FENCE);\n  out[i] = s[(i + 1) % get_local_size(0)];\n}\n", "ok.cl", "");
    let out = Buffer::<i32>::new(8);
    let found = common::run(
        &p,
        "k",
        NdRange::new([8]).local([8]),
        &[Arg::Local(32), Arg::Buffer(&out)],
        true,
    );
    assert!(found.is_empty(), "{found:?}");
    assert_eq!(out.to_vec(), vec![1, 2, 3, 4, 5, 6, 7, 0]);
}

#[test]
fn relaxed_c11_atomics_of_work_group_scope_across_groups_are_too_narrow() {
    // Every group increments the same counter with work-group scope: the
    // scopes do not include each other (001_b96d5603ef61627c.txt).
    let src = "kernel void k(global atomic_int *c) {\n  atomic_fetch_add_explicit(c, 1, memory_order_relaxed, memory_scope_work_group);\n}\n";
    let p = common::build(src, "scope.cl", "-cl-std=CL2.0");
    let c = Buffer::<i32>::new(1);
    let found = common::run(
        &p,
        "k",
        NdRange::new([8]).local([4]),
        &[Arg::Buffer(&c)],
        true,
    );
    assert!(
        found
            .checker
            .iter()
            .any(|r| r.kind == ReportKind::ScopeTooNarrow),
        "{found:?}"
    );
    assert_eq!(c.to_vec(), vec![8]);
    // Device scope: clean.
    let p = common::build(
        &src.replace("memory_scope_work_group", "memory_scope_device"),
        "scope.cl",
        "-cl-std=CL2.0",
    );
    let c = Buffer::<i32>::new(1);
    let found = common::run(
        &p,
        "k",
        NdRange::new([8]).local([4]),
        &[Arg::Buffer(&c)],
        true,
    );
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn read_only_and_write_only_buffers_are_enforced_when_checked() {
    struct Ro<'a>(&'a Buffer<i32>, clsync_opencl::Access);
    impl clsync_opencl::MemObject for Ro<'_> {
        fn bytes(&self) -> (*mut u8, usize) {
            self.0.raw_bytes()
        }
        fn name(&self) -> &str {
            self.0.name()
        }
        fn access(&self) -> clsync_opencl::Access {
            self.1
        }
    }
    let p = common::build("kernel void k(global int *a, global int *b) {\n  int i = get_global_id(0);\n  b[i] = a[i]++;\n}\n", "ro.cl", "");
    let (a, b) = (
        Buffer::<i32>::new(4).named("a"),
        Buffer::<i32>::new(4).named("b"),
    );
    let ro = Ro(&a, clsync_opencl::Access::ReadOnly);
    let found = checked(
        &p,
        "k",
        NdRange::new([4]),
        &[Arg::Buffer(&ro), Arg::Buffer(&b)],
    );
    let heads: Vec<&str> = found
        .diagnostics
        .iter()
        .map(|d| d.headline.as_str())
        .collect();
    assert_eq!(
        heads,
        vec!["Invalid write to read-only buffer"],
        "{found:?}"
    );
    assert_eq!(found.diagnostics[0].count, 4);
    // Writes to a write-only buffer are allowed.
    let wo = Ro(&b, clsync_opencl::Access::WriteOnly);
    let found = checked(
        &p,
        "k",
        NdRange::new([4]),
        &[Arg::Buffer(&a), Arg::Buffer(&wo)],
    );
    assert!(found.is_empty(), "{found:?}");
    // A read of one is reported when its value is used, not when the
    // compiler loads a vector only to store it back with a component
    // replaced.
    let p = common::build(
        "kernel void k(global int4 *a, global int4 *b) {\n  int i = get_global_id(0);\n  a[i].z = 7;\n  a[i].y = 42;\n  b[i] += 1;\n}\n",
        "wo.cl",
        "",
    );
    let (a, b) = (Buffer::<i32>::new(16), Buffer::<i32>::new(16));
    let (wa, wb) = (
        Ro(&a, clsync_opencl::Access::WriteOnly),
        Ro(&b, clsync_opencl::Access::WriteOnly),
    );
    let found = checked(
        &p,
        "k",
        NdRange::new([4]),
        &[Arg::Buffer(&wa), Arg::Buffer(&wb)],
    );
    let at = common::headlines_at(&found);
    assert_eq!(
        at,
        [("Invalid read from write-only buffer", 5)],
        "{found:?}"
    );
    assert_eq!(a.to_vec()[1..3], [42, 7]);
}

#[test]
fn an_index_past_a_static_array_is_reported_when_checked() {
    let src = "typedef struct { int a; char b[2]; } S;\nkernel void k(global char *out) {\n  volatile S s = {-1, {42, 7}};\n  int i = get_global_id(0);\n  s.b[i] = i;\n  out[i] = s.b[i];\n}\n";
    let p = common::build(src, "static.cl", "");
    let out = Buffer::<i8>::new(4);
    let found = checked(&p, "k", NdRange::new([4]), &[Arg::Buffer(&out)]);
    let d = found
        .diagnostics
        .iter()
        .find(|d| d.headline.contains("exceeds static array size"))
        .expect("a report");
    assert_eq!(d.headline, "Index exceeds static array size (2 elements)");
    // Work-items 2 and 3, at the address both accesses use (line 5).
    assert_eq!(
        (d.count, d.global[0], d.site.map(|s| s.line)),
        (2, 2, Some(5)),
        "{found:?}"
    );
    assert_eq!(&out.to_vec()[..2], &[0, 1]);
}

/// Runs kernel `name` of `src` on one work-item with a watchdog of 100 ms
/// and expects the watchdog to stop it.
fn stopped_by_the_watchdog(src: &str, name: &str, args: &[Arg<'_>]) {
    let p = common::build(src, &format!("{name}.cl"), "");
    let e = p
        .kernel(name)
        .unwrap()
        .run_with(
            &Runtime::with_threads(1),
            NdRange::new([1]),
            args,
            |l| l.watchdog(Some(std::time::Duration::from_millis(100))),
            false,
        )
        .unwrap_err();
    assert!(
        matches!(
            e,
            RunError::Launch {
                error: LaunchError::Stalled(_),
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn a_spin_loop_whose_partner_never_comes_is_stopped_by_the_watchdog() {
    // One work-item waits for a flag no one sets: the compiled loop makes
    // no runtime call but its back-edge's cancellation point.
    let flag = Buffer::<i32>::new(1);
    stopped_by_the_watchdog(
        "kernel void spin(global volatile int *flag) {\n  while (flag[0] == 0) {}\n}\n",
        "spin",
        &[Arg::Buffer(&flag)],
    );
}

#[test]
fn a_loop_bounded_only_by_a_64_bit_argument_keeps_its_cancellation_point() {
    // Counted loops (a 32-bit induction variable, or a constant bound) end
    // by themselves and take no cancellation point; this one, 2^62
    // iterations long, is stopped by the watchdog all the same.
    let out = Buffer::<i32>::new(4);
    stopped_by_the_watchdog(
        "kernel void long_loop(global volatile int *out, ulong n) {\n  for (ulong k = 0; k < n; k++) out[k % 4] += (int)k;\n}\n",
        "long_loop",
        &[Arg::Buffer(&out), Arg::of(&[1u64 << 62])],
    );
}

#[test]
fn a_barrier_orders_only_the_memory_its_flags_name() {
    // 003_2caebc1f01141481.txt: barrier(CLK_GLOBAL_MEM_FENCE) orders global
    // memory; the neighbour's local element read after it is a race.
    let src = |flags: &str| {
        format!(
            "kernel void k(local int *s, global int *out) {{\n  int i = get_local_id(0);\n  s[i] = i;\n  barrier({flags});\n  out[i] = s[(i + 1) % get_local_size(0)];\n}}\n"
        )
    };
    let out = Buffer::<i32>::new(8);
    let args = [Arg::Local(32), Arg::Buffer(&out)];
    let p = common::build(&src("CLK_GLOBAL_MEM_FENCE"), "flags.cl", "");
    let found = checked(&p, "k", NdRange::new([8]).local([8]), &args);
    assert!(
        found.checker.iter().any(|r| r.kind == ReportKind::DataRace),
        "{found:?}"
    );
    let p = common::build(
        &src("CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE"),
        "flags.cl",
        "",
    );
    let found = checked(&p, "k", NdRange::new([8]).local([8]), &args);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn release_and_acquire_fences_around_relaxed_atomics_order_the_data() {
    // 004_bfca21a36d7bd2da.txt: a release fence before a relaxed store
    // synchronizes with an acquire fence after the relaxed load that reads
    // it, across work-groups at device scope: the data is not raced on.
    // Without the fences it is.
    let src = |release: &str, acquire: &str| {
        format!(
            "kernel void k(global int *data, global atomic_int *flag, global int *seen) {{\n  if (get_group_id(0) == 0) {{\n    data[0] = 42;\n    {release}\n    atomic_store_explicit(flag, 1, memory_order_relaxed, memory_scope_device);\n  }} else {{\n    while (atomic_load_explicit(flag, memory_order_relaxed, memory_scope_device) == 0) {{}}\n    {acquire}\n    seen[0] = data[0];\n  }}\n}}\n"
        )
    };
    let fenced = src(
        "atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_release, memory_scope_device);",
        "atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_acquire, memory_scope_device);",
    );
    for (source, racy) in [(fenced, false), (src("", ""), true)] {
        let p = common::build(&source, "fence.cl", "-cl-std=CL2.0");
        let (data, flag, seen) = (
            Buffer::<i32>::new(1),
            Buffer::<i32>::new(1),
            Buffer::<i32>::new(1),
        );
        // Two workers: the groups wait for each other.
        let found = p
            .kernel("k")
            .unwrap()
            .run_with(
                &Runtime::with_threads(2),
                NdRange::new([2]).local([1]),
                &[Arg::Buffer(&data), Arg::Buffer(&flag), Arg::Buffer(&seen)],
                |l| l,
                true,
            )
            .unwrap();
        let raced = found.checker.iter().any(|r| r.kind == ReportKind::DataRace);
        assert_eq!(raced, racy, "{found:?}");
        assert_eq!(seen.to_vec(), vec![42]);
    }
}

#[test]
fn a_checking_runtime_checks_compiled_kernels_and_run_reports_what_it_found() {
    // Runtime::with_checking (or CLSYNC_CHECK) checks every launch: the
    // compiled kernel's accesses are seen, and Kernel::run fails with the
    // findings instead of dropping them.
    let p = common::build(
        "kernel void k(global int *out) {\n  out[0] = get_global_id(0);\n}\n",
        "racy.cl",
        "",
    );
    let out = Buffer::<i32>::new(1);
    let e = p
        .kernel("k")
        .unwrap()
        .run(
            &Runtime::new().with_checking(true),
            NdRange::new([4]).local([4]),
            &[Arg::Buffer(&out)],
        )
        .unwrap_err();
    let RunError::Found(found) = &e else {
        panic!("{e:?}")
    };
    assert!(
        found.checker.iter().any(|r| r.kind == ReportKind::DataRace),
        "{found:?}"
    );
    assert!(e.to_string().contains("Write-write data race"), "{e}");
    // A launch configured as checked is checked too.
    let found = p
        .kernel("k")
        .unwrap()
        .run_with(
            &Runtime::new(),
            NdRange::new([4]).local([4]),
            &[Arg::Buffer(&out)],
            |l| l.checked(true),
            false,
        )
        .unwrap();
    assert!(
        found.checker.iter().any(|r| r.kind == ReportKind::DataRace),
        "{found:?}"
    );
}

/// Run on after a divergent barrier, as `clsync run --check` does: the
/// divergence is reported once, every work-item finishes, and the group
/// counts as having met at a barrier, so the reads after it do not race
/// with the write before it (Oclgrind's view of the same run).
#[test]
fn a_checked_launch_can_run_on_after_a_divergent_barrier() {
    let p = common::build(
        "kernel void k(global int *d) {\n  int i = get_global_id(0);\n  if (i == 0) { d[0] = 42; barrier(CLK_GLOBAL_MEM_FENCE); }\n  else { barrier(CLK_GLOBAL_MEM_FENCE); d[i] = i + d[0]; }\n}\n",
        "runon.cl",
        "",
    );
    let d = Buffer::<i32>::new(4);
    let found = p
        .kernel("k")
        .unwrap()
        .run_with(
            &Runtime::new(),
            NdRange::new([4]).local([4]),
            &[Arg::Buffer(&d)],
            |l| l.run_on_divergence(true),
            true,
        )
        .unwrap();
    let kinds: Vec<ReportKind> = found.checker.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [ReportKind::BarrierDivergence], "{found:?}");
    assert_eq!(d.to_vec(), [42, 43, 44, 45]);
}

/// Unordered writes of the same value are a uniform write, which Oclgrind
/// does not report and neither does a checked compiled kernel (unless
/// `CLSYNC_UNIFORM_WRITES=1`); writes of different values are a race.
#[test]
fn uniform_writes_are_not_races_different_values_are() {
    let p = common::build(
        "kernel void same(global int *d) { *d = 7; }\nkernel void differ(global int *d) { *d = get_global_id(0) * 3; }\n",
        "uniform.cl",
        "",
    );
    let d = Buffer::<i32>::new(1);
    let found = checked(&p, "same", NdRange::new([8]).local([4]), &[Arg::Buffer(&d)]);
    assert!(found.is_empty(), "{found:?}");
    assert_eq!(d.to_vec(), [7]);
    let found = checked(
        &p,
        "differ",
        NdRange::new([8]).local([4]),
        &[Arg::Buffer(&d)],
    );
    let kinds: Vec<ReportKind> = found.checker.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [ReportKind::DataRace], "{found:?}");
}

/// An async copy that only some work-items of the group make is a
/// divergence of the group's copies, reported at the wait; the copies all
/// made are still performed.
#[test]
fn an_async_copy_made_by_one_work_item_is_a_divergence() {
    let p = common::build(
        "kernel void k(global int *d, local int *s) {\n  int i = get_local_id(0);\n  event_t e = async_work_group_copy(s, d, 4, 0);\n  if (i == 0) e = async_work_group_copy(s, d, 1, e);\n  wait_group_events(1, &e);\n  d[3 - i] = s[i];\n}\n",
        "copies.cl",
        "",
    );
    let d = Buffer::from_slice(&[0, 1, 2, 3]);
    let found = checked(
        &p,
        "k",
        NdRange::new([4]).local([4]),
        &[Arg::Buffer(&d), Arg::Local(16)],
    );
    let at = common::headlines_at(&found);
    assert_eq!(
        at,
        [("Work-group divergence detected (async copy)", 5)],
        "{found:?}"
    );
    assert_eq!(d.to_vec(), [3, 2, 1, 0]);
}

/// A copy whose event no work-item waits for is reported at that copy's
/// line when the work-items finish; the copy that was waited for is made,
/// the other not.
#[test]
fn an_async_copy_never_waited_for_is_reported_at_its_line() {
    let p = common::build(
        "kernel void k(global int *d, local int *s) {\n  int i = get_local_id(0);\n  event_t e = async_work_group_copy(s, d, 4, 0);\n  wait_group_events(1, &e);\n  d[3 - i] = s[i];\n  barrier(CLK_LOCAL_MEM_FENCE);\n  async_work_group_copy(d + 4, s, 4, 0);\n}\n",
        "unwaited.cl",
        "",
    );
    let d = Buffer::from_slice(&[0, 1, 2, 3, 0, 0, 0, 0]);
    let found = checked(
        &p,
        "k",
        NdRange::new([4]).local([4]),
        &[Arg::Buffer(&d), Arg::Local(16)],
    );
    assert_eq!(
        common::headlines_at(&found),
        [("Work-item finished without waiting for events", 7)],
        "{found:?}"
    );
    assert_eq!(d.to_vec()[..4], [3, 2, 1, 0]);
    // A copy nobody waits for is never made, as in Oclgrind: the
    // work-items' writes to what it would read race with nothing.
    let p = common::build(
        "kernel void k(global int *d, local int *s) {\n  async_work_group_copy(s, d, 4, 0);\n  int i = get_local_id(0);\n  d[3 - i] = i;\n}\n",
        "unwaited.cl",
        "",
    );
    let d = Buffer::<i32>::new(4);
    let found = checked(
        &p,
        "k",
        NdRange::new([4]).local([4]),
        &[Arg::Buffer(&d), Arg::Local(16)],
    );
    assert_eq!(
        common::headlines_at(&found),
        [("Work-item finished without waiting for events", 2)],
        "{found:?}"
    );
    assert_eq!(d.to_vec(), [3, 2, 1, 0]);
}

/// A load or store through a pointer that is not aligned to its type is
/// reported with Oclgrind's headline and made all the same; aligned
/// accesses of every width, vectors included, are not.
#[test]
fn a_misaligned_load_or_store_is_reported_and_made() {
    let p = common::build(
        "kernel void k(global int *in, global int *out, global float4 *v) {\n  global int *a = (global int *)((global char *)in + 2);\n  out[0] = *a;\n  *(global int *)((global char *)out + 6) = 7;\n  v[1] = v[0] + (float4)(1.0f);\n}\n",
        "unaligned.cl",
        "",
    );
    let input = Buffer::<i32>::from_slice(&[0x2a2a_2a2a, 0x2a2a_2a2a]);
    let out = Buffer::<i32>::new(3);
    let v = Buffer::<f32>::new(8);
    let found = checked(
        &p,
        "k",
        NdRange::new([1]),
        &[Arg::Buffer(&input), Arg::Buffer(&out), Arg::Buffer(&v)],
    );
    assert_eq!(
        common::headlines_at(&found),
        [
            (
                "Invalid memory load - source pointer is not aligned to the pointed type",
                3
            ),
            (
                "Invalid memory store - source pointer is not aligned to the pointed type",
                4
            ),
        ],
        "{found:?}"
    );
    let bytes: Vec<u8> = out.to_vec().iter().flat_map(|w| w.to_le_bytes()).collect();
    assert_eq!(bytes[..4], [0x2a; 4]);
    assert_eq!(bytes[6..10], 7i32.to_le_bytes());
    assert_eq!(v.to_vec()[4..], [1.0; 4]);
}

/// The elements of a kernel's `local` array are aligned whatever their
/// index (the build makes no test for them), and a pointer into one cast
/// to a wider type at an odd byte is still tested and reported, in both
/// builds.
#[test]
fn a_misaligned_access_into_a_local_array_is_reported_and_its_elements_are_not() {
    let src = "kernel void k(global int *out) {\n  local int t[8];\n  size_t l = get_local_id(0);\n  t[l] = (int)l;\n  barrier(CLK_LOCAL_MEM_FENCE);\n  out[l] = t[7 - l];\n  if (l == 0) out[8] = *(local int *)((local char *)t + 3);\n}\n";
    for options in ["", "-cl-opt-disable"] {
        let p = common::build(src, "local_unaligned.cl", options);
        let out = Buffer::<i32>::new(9);
        let found = checked(&p, "k", NdRange::new([8]).local([8]), &[Arg::Buffer(&out)]);
        assert_eq!(
            common::headlines_at(&found),
            [(
                "Invalid memory load - source pointer is not aligned to the pointed type",
                7
            )],
            "options {options:?}: {found:?}"
        );
        assert_eq!(out.to_vec()[..8], [7, 6, 5, 4, 3, 2, 1, 0]);
    }
}

/// A program built for checking makes its checked code at the build and
/// its unchecked code at the first unchecked launch: both run the kernel
/// (the checked launch reporting the out-of-bounds write, the unchecked
/// one stopping at it), and a kernel the engine cannot run fails the
/// build, not a later launch.
#[test]
fn a_program_built_for_checking_runs_both_ways_and_fails_at_the_build() {
    let p = Program::build_checked(OOB, "oob.cl", "-cl-opt-disable").unwrap();
    let out = Buffer::<i32>::new(4);
    let found = checked(&p, "k", NdRange::new([4]), &[Arg::Buffer(&out)]);
    assert_eq!(found.diagnostics.len(), 1, "{found:?}");
    assert!(found.diagnostics[0].headline.starts_with("Invalid write"));
    assert_eq!(out.to_vec(), vec![0, 0, 1, 2]);
    let e = p
        .kernel("k")
        .unwrap()
        .run(&Runtime::new(), NdRange::new([4]), &[Arg::Buffer(&out)])
        .unwrap_err();
    assert!(e.to_string().contains("Invalid write"), "{e}");
    // Pipes are refused by name when the module is read.
    let bad = "kernel void k(read_only pipe int p, global int *o) {\n  int v;\n  o[0] = read_pipe(p, &v);\n}\n";
    let e = Program::build_checked(bad, "bad.cl", "-cl-std=CL2.0").unwrap_err();
    assert!(e.to_string().contains("capability Pipes"), "{e}");
}

#[test]
fn an_index_below_the_pointer_it_started_from_is_checked_too() {
    // `q` starts two elements in: q[-1] is p[1], q[-3] is before `p`, and
    // q[d] with a huge d is far past it; each index reaches the access
    // through the same root.
    let p = common::build(
        "kernel void k(global int *p, long d) {\n  global int *q = p + 2;\n  q[d] = 7;\n}\n",
        "below.cl",
        "",
    );
    let run = |d: i64| {
        let buf = Buffer::<i32>::new(4);
        let r = p.kernel("k").unwrap().run(
            &Runtime::new(),
            NdRange::new([1]),
            &[Arg::Buffer(&buf), Arg::of(&[d])],
        );
        (r, buf.to_vec())
    };
    let (r, v) = run(-1);
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(v, vec![0, 7, 0, 0]);
    for d in [-3, -2 - (1 << 40), 2, 1 << 45] {
        let (r, v) = run(d);
        let text = r.expect_err("out of bounds").to_string();
        // Before `p` the pointer's tag borrows: no object, an invalid
        // pointer; past it, an access outside `p`.
        let named = text.contains("Invalid write of size 4")
            || text.contains("Invalid memory store of size 4");
        assert!(named, "{d}: {text}");
        assert!(text.contains("below.cl:3"), "{d}: {text}");
        assert_eq!(v, vec![0; 4], "{d}");
    }
}
