//! Buffers whose accesses the compiler proves stay in each group's slice
//! and race with nothing (`translate::slices`), which a checked launch of
//! one dimension leaves out of the race checker's records: what it still
//! finds, against the same launch on coroutines run on from divergent
//! barriers, which takes no proof (`common::same_problems_in_each`), in
//! the optimized and the unoptimized build.

mod common;

use std::collections::BTreeSet;

use clsync::checker::ReportKind;
use clsync::{Buffer, NdRange};
use clsync_opencl::{Arg, MemObject};
use common::same_problems_in_each as found;

/// A leaked buffer, so that the arguments outlive the closures that make
/// them.
fn buffer(v: Vec<i32>) -> &'static Buffer<i32> {
    Box::leak(Box::new(Buffer::from_slice(&v)))
}

fn race(a: u32, b: u32) -> (String, u32, u32) {
    (format!("{:?}", ReportKind::DataRace), a, b)
}

#[test]
fn an_element_wise_write_races_between_the_rows_of_a_range_of_two_dimensions() {
    // Each work-item writes the element of its global id in dimension 0:
    // in one dimension, its own; in two, the rows' work-items of one id
    // write the same element, which the proof, one-dimensional, must not
    // hide.
    let src = "kernel void k(global int *a) {
        a[get_global_id(0)] = (int)get_global_id(1);
    }";
    let a = buffer(vec![-1; 8]);
    for found in found(src, NdRange::new([8]).local([4]), || vec![Arg::Buffer(a)]) {
        assert!(found.is_empty(), "{found:?}");
    }
    assert_eq!(a.to_vec(), vec![0; 8]);
    for found in found(src, NdRange::new([8, 2]).local([4, 1]), || {
        vec![Arg::Buffer(a)]
    }) {
        assert!(found.contains(&race(2, 2)), "{found:?}");
    }
}

/// A buffer's bytes from its `by`th on, as a second argument (a
/// sub-buffer of it).
struct Shifted(&'static Buffer<i32>, usize);

impl MemObject for Shifted {
    fn bytes(&self) -> (*mut u8, usize) {
        let (p, len) = self.0.raw_bytes();
        // SAFETY: `by` is below the buffer's length (the test's own).
        (unsafe { p.add(self.1) }, len - self.1)
    }
    fn name(&self) -> &str {
        "b"
    }
}

#[test]
fn two_arguments_that_share_a_buffers_bytes_race_as_they_do() {
    // Each work-item writes its own element of `a` and of `b`; where `b`
    // is `a` from its second element on, work-item g's write of `b[g]` is
    // work-item g + 1's of `a[g + 1]`.
    let src = "kernel void k(global int *a, global int *b) {
        size_t g = get_global_id(0);
        a[g] = 1;
        b[g] = 2;
    }";
    let (a, b) = (buffer(vec![0; 9]), buffer(vec![0; 8]));
    for found in found(src, NdRange::new([8]).local([4]), || {
        vec![Arg::Buffer(a), Arg::Buffer(b)]
    }) {
        assert!(found.is_empty(), "{found:?}");
    }
    let shared: &'static Shifted = Box::leak(Box::new(Shifted(a, 4)));
    for found in found(src, NdRange::new([8]).local([4]), || {
        vec![Arg::Buffer(a), Arg::Buffer(shared)]
    }) {
        assert!(found.contains(&race(3, 4)), "{found:?}");
    }
}

/// A scan's first step: each work-item adds to its element the two before
/// it that are in its group (`guard` for the first), then, after a
/// barrier of `flags`, writes the sum to its own.
fn first_step(flags: &str, guard: &str) -> String {
    format!(
        "kernel void k(global int *d) {{
            size_t l = get_local_id(0), g = get_global_id(0);
            int v = d[g];
            if ({guard}) v += d[g - 1];
            if (l >= 2) v += d[g - 2];
            barrier({flags});
            d[g] = v;
        }}"
    )
}

#[test]
fn a_scans_reads_of_its_groups_slice_before_a_global_barrier_race_with_nothing() {
    let input: Vec<i32> = (0..32).map(|i| i * 5 - 40).collect();
    let want: Vec<i32> = (0..32)
        .map(|g| (g - g % 8..=g).rev().take(3).map(|j| input[j]).sum())
        .collect();
    // Each run from the input, on a buffer of its own.
    let d = || vec![Arg::Buffer(buffer(input.clone()))];
    let src = first_step("CLK_GLOBAL_MEM_FENCE", "l >= 1");
    let [o2, o0] = found(&src, NdRange::new([32]).local([8]), d);
    assert!(o2.is_empty() && o0.is_empty(), "{o2:?} {o0:?}");
    let p = common::build(&src, "k.cl", "");
    let one = buffer(input.clone());
    let f = common::run(
        &p,
        "k",
        NdRange::new([32]).local([8]),
        &[Arg::Buffer(one)],
        true,
    );
    assert!(f.is_empty(), "{f:?}");
    assert_eq!(one.to_vec(), want);
    // A barrier that fences local memory only orders nothing of `d`: the
    // read of line 4 races with the write of line 7.
    let src = first_step("CLK_LOCAL_MEM_FENCE", "l >= 1");
    for found in found(&src, NdRange::new([32]).local([8]), d) {
        assert!(found.contains(&race(4, 7)), "{found:?}");
    }
    // A read below the group's first element (`g >= 1` lets a group's
    // first work-item read the last of the group before, which it writes
    // unordered): that race too.
    let src = first_step("CLK_GLOBAL_MEM_FENCE", "g >= 1");
    for found in found(&src, NdRange::new([32]).local([8]), d) {
        assert!(found.contains(&race(4, 7)), "{found:?}");
    }
}

/// A buffer whose contents the host never wrote (Oclgrind's `noinit`).
struct Unwritten(&'static Buffer<i32>);

impl MemObject for Unwritten {
    fn bytes(&self) -> (*mut u8, usize) {
        self.0.raw_bytes()
    }
    fn name(&self) -> &str {
        "tmp"
    }
    fn initialized(&self) -> bool {
        false
    }
}

#[test]
fn a_proven_buffers_shadow_is_kept_what_it_wrote_is_initialized_and_nothing_else() {
    // `tmp`, which the host did not write, is written before it is read
    // (nothing to report) by the work-items that `written` lets; the
    // others' read of it is an uninitialized value stored to `out` (line
    // 5). (The barrier keeps the build from forwarding the stored value.)
    let src = |written: &str| {
        format!(
            "kernel void k(global int *tmp, global int *out) {{
                size_t g = get_global_id(0);
                if ({written}) tmp[g] = (int)g;
                barrier(CLK_GLOBAL_MEM_FENCE);
                out[g] = tmp[g];
            }}"
        )
    };
    let run = |written: &str| {
        let tmp: &'static Unwritten = Box::leak(Box::new(Unwritten(buffer(vec![0; 8]))));
        let out = buffer(vec![0; 8]);
        found(&src(written), NdRange::new([8]).local([4]), || {
            vec![Arg::Buffer(tmp), Arg::Buffer(out)]
        })
    };
    for found in run("g < 8") {
        assert!(found.is_empty(), "{found:?}");
    }
    for found in run("g % 2 == 0") {
        let want = (String::from("Uninitialized value"), 5, 0);
        assert_eq!(found, BTreeSet::from([want]));
    }
}
