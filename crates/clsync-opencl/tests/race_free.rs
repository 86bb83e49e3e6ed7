//! Loads of local memory the compiler proves race with nothing, by the
//! kernel's barrier intervals (`translate::intervals`), which a checked
//! launch does not check access by access where the bytes hold a write.
//!
//! The reference is the same launch on coroutines run on from divergent
//! barriers, which takes no proof at its word (`Launch::runs_on_divergence`);
//! the work-item loops take them, whether they stop at a divergence or run
//! on (a group then stops taking them once it diverged). All three find
//! the same problems, optimized and unoptimized.

mod common;

use std::collections::BTreeSet;

use clsync::checker::ReportKind;
use clsync::{Buffer, NdRange};
use clsync_opencl::Arg;
use common::{same_problems_in_each, same_problems_in_each_with};

/// Runs kernel `k` of `src`, checked, with proofs taken (work-item loops,
/// stopping at a divergence or running on) and without (coroutines,
/// running on), in both builds; asserts they find the same problems and
/// returns them (optimized, running on). The launch that stops at a
/// divergence finds what precedes it, which the others find too; where
/// the kernel does not diverge, all of it.
fn same_problems(
    src: &str,
    range: NdRange,
    args: impl Fn() -> Vec<Arg<'static>>,
) -> BTreeSet<(String, u32, u32)> {
    let [optimized, _] = same_problems_in_each(src, range, args);
    optimized
}

/// Leaked buffers, so that the arguments outlive the closures that make
/// them (a test's few bytes).
fn buffer(v: Vec<i32>) -> &'static Buffer<i32> {
    Box::leak(Box::new(Buffer::from_slice(&v)))
}

#[test]
fn a_tiles_reads_are_right_and_report_nothing() {
    // Floats, so that the compiler keeps the sum's order (whole numbers,
    // so that it is exact).
    let src = "kernel void k(global const float *a, global float *c) {
        local float t[16];
        size_t l = get_local_id(0);
        float acc = 0.0f;
        for (int i = 0; i < 4; i++) {
            t[l] = a[i * 16 + l];
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int j = 0; j < 16; j++) acc += t[j] * (float)(j + 1);
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        c[get_global_id(0)] = acc;
    }";
    let input: Vec<f32> = (0..64).map(|i| (i * 3 - 20) as f32).collect();
    let a: &'static Buffer<f32> = Box::leak(Box::new(Buffer::from_slice(&input)));
    let c: &'static Buffer<f32> = Box::leak(Box::new(Buffer::from_slice(&[0f32; 32])));
    let found = same_problems(src, NdRange::new([32]).local([16]), || {
        vec![Arg::Buffer(a), Arg::Buffer(c)]
    });
    assert!(found.is_empty(), "{found:?}");
    let want: f32 = (0..64).map(|i| input[i] * (i % 16 + 1) as f32).sum();
    assert_eq!(c.to_vec(), vec![want; 32]);
}

#[test]
fn a_read_and_a_write_in_two_branches_after_a_barrier_still_race() {
    // Work-item 0 reads t[5] while work-item 1 writes it: one branch each,
    // after the same barrier.
    let src = "kernel void k(global int *out) {
        local int t[16];
        size_t l = get_local_id(0);
        t[l] = 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l == 0) {
            out[get_group_id(0)] = t[5];
        } else if (l == 1) {
            t[5] = 2;
        }
    }";
    let out = buffer(vec![0; 4]);
    let found = same_problems(src, NdRange::new([64]).local([16]), || {
        vec![Arg::Buffer(out)]
    });
    assert!(
        found
            .iter()
            .any(|p| p.0 == format!("{:?}", ReportKind::DataRace)),
        "{found:?}"
    );
}

#[test]
fn a_read_of_local_memory_nothing_wrote_is_still_reported() {
    // Only the even work-items write; after the barrier, an interval of
    // reads, every work-item reads its neighbour's element.
    let src = "kernel void k(global int *out) {
        local int t[16];
        size_t l = get_local_id(0);
        if (l % 2 == 0) t[l] = 7;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = t[(l + 1) % 16];
    }";
    let out = buffer(vec![0; 32]);
    let found = same_problems(src, NdRange::new([32]).local([16]), || {
        vec![Arg::Buffer(out)]
    });
    assert!(!found.is_empty(), "an uninitialized read: {found:?}");
}

#[test]
fn after_a_divergent_barrier_a_group_checks_the_loads_it_proved() {
    // Half the group waits at one barrier, half at another: running on,
    // the first half's reads of its neighbours (which the build proves
    // race with nothing, no local write following the first barrier) meet
    // the second half's writes, which follow the second.
    let src = "kernel void k(global int *out) {
        local int t[16];
        size_t l = get_local_id(0);
        t[l] = (int)l;
        barrier(CLK_LOCAL_MEM_FENCE);
        int v = 0;
        if (l < 8) {
            barrier(CLK_LOCAL_MEM_FENCE);
            v = t[l + 1];
        } else {
            barrier(CLK_LOCAL_MEM_FENCE);
            t[l] = 7;
        }
        out[get_global_id(0)] = v;
    }";
    let out = buffer(vec![0; 32]);
    let each = same_problems_in_each(src, NdRange::new([32]).local([16]), || {
        vec![Arg::Buffer(out)]
    });
    // The read (line 9) and the write (line 12), in both builds: the
    // optimized one merges the two barriers into one before the branch
    // (no divergence, and a read the build does not prove); the
    // unoptimized one diverges, and its read is proven. (The reference, on
    // coroutines, runs the same code: it takes no proof, neither in the
    // runtime nor in the compiled code's test of the read, as the context
    // tells both.)
    let race = (format!("{:?}", ReportKind::DataRace), 9, 12);
    for found in each {
        assert!(found.contains(&race), "{found:?}");
    }
}

#[test]
fn reads_of_one_local_array_while_another_is_written_report_what_the_reference_does() {
    // A ping-pong between two local arguments: each step reads one and
    // writes the other (nothing to report); then the same step writing
    // the array it reads (a race with the neighbour's read).
    let src = "kernel void k(global int *out, local int *a, local int *b, int same) {
        size_t l = get_local_id(0);
        a[l] = (int)l;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (same) {
            a[l] = a[(l + 1) % 16] + 1;
        } else {
            b[l] = a[(l + 1) % 16] + 1;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = same ? a[l] : b[l];
    }";
    for same in [0i32, 1] {
        let out = buffer(vec![0; 32]);
        let found = same_problems(src, NdRange::new([32]).local([16]), move || {
            vec![
                Arg::Buffer(out),
                Arg::Local(64),
                Arg::Local(64),
                Arg::of(&[same]),
            ]
        });
        let race = found
            .iter()
            .any(|p| p.0 == format!("{:?}", ReportKind::DataRace));
        assert_eq!(race, same == 1, "same {same}: {found:?}");
        if same == 0 {
            let want: Vec<i32> = (0..32).map(|g| (g % 16 + 1) % 16 + 1).collect();
            assert_eq!(out.to_vec(), want);
        }
    }
}

#[test]
fn a_proven_read_of_a_value_that_depends_on_nothing_written_is_still_reported() {
    // The odd work-items store a variable they never set: their elements
    // are written, with a value nothing wrote. After the barrier the even
    // work-items read them (a proven read: no local write follows the
    // barrier) and store them to global memory: Oclgrind's
    // `Uninitialized value`. The optimized build may fold the variable to
    // the one value it is given; the unoptimized build keeps it.
    let src = "kernel void k(global int *out) {
        local int t[16];
        size_t l = get_local_id(0);
        int x;
        if (l % 2 == 0) x = 5;
        t[l] = x;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = t[(l + 1) % 16];
    }";
    let out = buffer(vec![0; 32]);
    let [_, unoptimized] = same_problems_in_each(src, NdRange::new([32]).local([16]), || {
        vec![Arg::Buffer(out)]
    });
    assert!(
        unoptimized
            .iter()
            .any(|p| p.0 == "Uninitialized value" && p.1 == 8),
        "{unoptimized:?}"
    );
}

#[test]
fn a_histograms_quiet_atomics_count_right_and_report_what_the_reference_does() {
    // Relaxed, group-wide atomics on the group's own bins: performed
    // without the checker once an operation wrote the bin (nothing to
    // report). With a plain write of a bin among them (`poke`), none is
    // (the analysis leaves the array to the checker) and the mix of plain
    // and atomic accesses is reported.
    let src = "kernel void k(global const int *in, global int *out, int poke) {
        local atomic_int bins[8];
        size_t l = get_local_id(0);
        if (l < 8) atomic_store_explicit(&bins[l], 0, memory_order_relaxed, memory_scope_work_group);
        barrier(CLK_LOCAL_MEM_FENCE);
        atomic_fetch_add_explicit(&bins[in[get_global_id(0)]], 1, memory_order_relaxed, memory_scope_work_group);
        if (poke && l == 3) ((local int *)bins)[5] = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = atomic_load_explicit(&bins[l % 8], memory_order_relaxed, memory_scope_work_group);
    }";
    let input: Vec<i32> = (0..32).map(|i| (i * 5 + i / 7) % 8).collect();
    for poke in [0i32, 1] {
        let a = buffer(input.clone());
        let out = buffer(vec![0; 32]);
        let each = same_problems_in_each_with(
            src,
            "-cl-std=CL2.0",
            NdRange::new([32]).local([16]),
            move || vec![Arg::Buffer(a), Arg::Buffer(out), Arg::of(&[poke])],
        );
        for found in each {
            // The plain write (line 7) meets the atomics (line 6): the
            // checker's `MixedAccess`.
            let mixed = (format!("{:?}", ReportKind::MixedAccess), 6, 7);
            assert_eq!(found.contains(&mixed), poke == 1, "poke {poke}: {found:?}");
            if poke == 0 {
                assert!(found.is_empty(), "{found:?}");
            }
        }
        if poke == 0 {
            for (g, got) in out.to_vec().into_iter().enumerate() {
                let (group, l) = (g / 16, g % 16);
                let want = (group * 16..group * 16 + 16)
                    .filter(|&i| input[i] == (l % 8) as i32)
                    .count() as i32;
                assert_eq!(got, want, "work-item {g}");
            }
        }
    }
}

#[test]
fn a_tree_reductions_reads_race_with_nothing_in_one_dimension_and_do_in_two() {
    // Each step reads the element `h` above its own and its own, and
    // writes its own, under `l < h`: in a group of one dimension the reads
    // race with nothing (the build unrolls the loop, a constant `h` per
    // step). In a group of two rows, the rows' work-items of one `l` read
    // and write the same element: the reads of line 8 race with the writes
    // of line 9, and the launch takes no proof of one dimension.
    let src = "kernel void k(global const int *in, global int *out) {
        local int s[16];
        size_t l = get_local_id(0);
        s[l] = in[get_global_id(0) % 32];
        for (size_t h = 8; h > 0; h /= 2) {
            barrier(CLK_LOCAL_MEM_FENCE);
            if (l < h) {
                int a = s[l + h];
                int b = s[l];
                s[l] = a + b;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l == 0) out[get_group_id(0) + 4 * get_group_id(1)] = s[0];
    }";
    let input: Vec<i32> = (0..32).map(|i| i * 3 - 7).collect();
    let a = buffer(input.clone());
    let out = buffer(vec![0; 8]);
    let found = same_problems(src, NdRange::new([32]).local([16]), || {
        vec![Arg::Buffer(a), Arg::Buffer(out)]
    });
    assert!(found.is_empty(), "{found:?}");
    let want: Vec<i32> = (0..2)
        .map(|g| input[g * 16..g * 16 + 16].iter().sum())
        .chain([0; 6])
        .collect();
    assert_eq!(out.to_vec(), want);
    let out = buffer(vec![0; 8]);
    let each = same_problems_in_each(src, NdRange::new([16, 2]).local([16, 2]), || {
        vec![Arg::Buffer(a), Arg::Buffer(out)]
    });
    let race = (format!("{:?}", ReportKind::DataRace), 9, 10);
    for found in each {
        assert!(found.contains(&race), "{found:?}");
    }
}

#[test]
fn an_opencl_1x_histogram_counts_right_and_reports_what_the_reference_does() {
    // Bins cleared plainly, counted with `atomic_inc` (quiet in their
    // interval), read plainly; the reads of the bins no work-item cleared
    // (8 to 15) are `Uninitialized value`s, as on the reference.
    let src = "kernel void k(global const int *in, global int *out) {
        local int bins[16];
        size_t l = get_local_id(0);
        if (l < 8) bins[l] = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        atomic_inc(&bins[in[get_global_id(0)]]);
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = bins[l];
    }";
    let input: Vec<i32> = (0..32).map(|i| (i * 5 + i / 7) % 8).collect();
    let a = buffer(input.clone());
    let out = buffer(vec![0; 32]);
    let found = same_problems(src, NdRange::new([32]).local([16]), || {
        vec![Arg::Buffer(a), Arg::Buffer(out)]
    });
    let uninit = ("Uninitialized value".to_string(), 8, 0);
    assert_eq!(found, BTreeSet::from([uninit]), "{found:?}");
    for (g, got) in out
        .to_vec()
        .into_iter()
        .enumerate()
        .filter(|(g, _)| g % 16 < 8)
    {
        let group = g / 16;
        let want = (group * 16..group * 16 + 16)
            .filter(|&i| input[i] == (g % 16) as i32)
            .count() as i32;
        assert_eq!(got, want, "work-item {g}");
    }
}

#[test]
fn a_store_at_its_own_element_races_with_nothing_in_one_dimension_and_does_in_two() {
    // Each work-item stores to its own element of `s` (line 4): in a group
    // of two rows, the rows' work-items of one local id store to the same
    // one, a race the launch takes no proof of one dimension for.
    let src = "kernel void k(global int *out) {
        local int s[8];
        size_t l = get_local_id(0);
        s[l] = (int)get_local_id(1);
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0) + 8 * get_global_id(1)] = s[7 - l];
    }";
    let out = buffer(vec![-1; 16]);
    let found = same_problems(src, NdRange::new([8]).local([8]), || vec![Arg::Buffer(out)]);
    assert!(found.is_empty(), "{found:?}");
    assert_eq!(out.to_vec()[..8], [0; 8]);
    let each = same_problems_in_each(src, NdRange::new([8, 2]).local([8, 2]), || {
        vec![Arg::Buffer(out)]
    });
    let race = (format!("{:?}", ReportKind::DataRace), 4, 4);
    for found in each {
        assert!(found.contains(&race), "{found:?}");
    }
}

#[test]
fn a_store_that_a_read_of_its_interval_meets_is_still_checked() {
    // After the barrier, work-item l stores to its own element (line 7)
    // and reads the one above, which work-item l + 1 stores to (line 8):
    // a race, found whichever comes first.
    let src = "kernel void k(global int *out) {
        local int s[9];
        size_t l = get_local_id(0);
        s[8 - l] = 1;
        if (l == 0) s[0] = 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        s[l] = 2;
        out[l] = s[l + 1];
    }";
    let out = buffer(vec![0; 8]);
    let race = (format!("{:?}", ReportKind::DataRace), 7, 8);
    for found in same_problems_in_each(src, NdRange::new([8]).local([8]), || vec![Arg::Buffer(out)])
    {
        assert!(found.contains(&race), "{found:?}");
    }
}

#[test]
fn a_tiles_store_by_rows_races_with_nothing_where_its_rows_are_as_wide_as_the_group() {
    // Each work-item stores to element `ly * 4 + lx` of the tile (line
    // 5): its own where the group is at most 4 wide; in a group 8 wide,
    // work-items (4, 0) and (0, 1) store to element 4, a race the launch
    // takes no proof by rows for.
    let src = "kernel void k(global int *out) {
        local int t[16];
        size_t lx = get_local_id(0), ly = get_local_id(1);
        size_t g = get_global_id(0) + get_global_size(0) * get_global_id(1);
        t[ly * 4 + lx] = (int)g;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[g] = t[(ly * 4 + lx) % 16];
    }";
    let out = buffer(vec![-1; 16]);
    let found = same_problems(src, NdRange::new([4, 4]).local([4, 4]), || {
        vec![Arg::Buffer(out)]
    });
    assert!(found.is_empty(), "{found:?}");
    assert_eq!(out.to_vec(), (0..16).collect::<Vec<i32>>());
    let out = buffer(vec![-1; 16]);
    let each = same_problems_in_each(src, NdRange::new([8, 2]).local([8, 2]), || {
        vec![Arg::Buffer(out)]
    });
    let race = (format!("{:?}", ReportKind::DataRace), 5, 5);
    for found in each {
        assert!(found.contains(&race), "{found:?}");
    }
}

#[test]
fn two_stores_by_rows_a_column_apart_still_race() {
    // Work-item (lx, ly) stores to elements `ly * 5 + lx` (line 4) and
    // the one after it (line 5), which work-item (lx + 1, ly) stores to
    // first.
    let src = "kernel void k(global int *out) {
        local int t[16];
        size_t lx = get_local_id(0), ly = get_local_id(1);
        t[ly * 5 + lx] = 1;
        t[ly * 5 + lx + 1] = 2;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0) + 4 * get_global_id(1)] = t[ly * 5 + lx];
    }";
    let out = buffer(vec![-1; 8]);
    let race = (format!("{:?}", ReportKind::DataRace), 4, 5);
    for found in same_problems_in_each(src, NdRange::new([4, 2]).local([4, 2]), || {
        vec![Arg::Buffer(out)]
    }) {
        assert!(found.contains(&race), "{found:?}");
    }
}

#[test]
fn accesses_of_one_work_item_by_its_id_race_with_nothing_and_of_two_still_race() {
    // Work-item 0 stores to `s[0]` while work-item 1 reads it: a race
    // (lines 4 and 5). After the barrier, work-item 0 alone stores to and
    // reads `s[1]` (line 7): its own accesses, as a reduction's last step.
    let src = "kernel void k(global int *out) {
        local int s[2];
        size_t l = get_local_id(0);
        if (l == 0) s[0] = 1;
        if (l == 1) out[0] = s[0];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l == 0) { s[1] = 2; out[1] = s[1] + s[0]; }
    }";
    let out = buffer(vec![0; 2]);
    let race = (format!("{:?}", ReportKind::DataRace), 4, 5);
    for found in same_problems_in_each(src, NdRange::new([4]).local([4]), || vec![Arg::Buffer(out)])
    {
        assert_eq!(found, BTreeSet::from([race.clone()]));
    }
    assert_eq!(out.to_vec()[1], 3);
}

#[test]
fn a_local_id_narrowed_to_a_byte_is_no_local_id() {
    // `l8 < 1` holds for work-items 0 and 256: both store to `s[0]`
    // (line 4), a race, which a test of the byte taken for one of the
    // local id would hide.
    let src = "kernel void k(global int *out) {
        local int s[1];
        uchar l8 = (uchar)get_local_id(0);
        if (l8 < 1) s[0] = (int)get_local_id(0);
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = s[0];
    }";
    let out = buffer(vec![0; 512]);
    let race = (format!("{:?}", ReportKind::DataRace), 4, 4);
    for found in same_problems_in_each(src, NdRange::new([512]).local([512]), || {
        vec![Arg::Buffer(out)]
    }) {
        assert!(found.contains(&race), "{found:?}");
    }
}
