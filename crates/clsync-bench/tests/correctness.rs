//! Every benchmark kernel, at small sizes, gives the sequential reference's
//! result in every engine: clsync's group-level kernels (unchecked and
//! checked, which must report nothing), the kernels written per work-item
//! and lifted by `#[kernel]` and the same source on the general engine,
//! plain Rust, and — with the `pocl` feature and a device — PoCL.
//! No test here measures a time.

use clsync::Runtime;
use clsync_bench::{kernels, limit, reference, Sizes};

const S: Sizes = Sizes::SMALL;

fn runtimes() -> [Runtime; 2] {
    [
        Runtime::with_threads(2),
        Runtime::with_threads(2).with_checking(true),
    ]
}

#[test]
fn clsync_kernels_match_the_references_checked_and_unchecked() {
    let reduce = reference::reduce_input(S.reduce);
    let scan = reference::scan_input(S.scan);
    let (a, b) = (reference::matrix(S.sgemm, 4), reference::matrix(S.sgemm, 5));
    let bytes = reference::histogram_input(S.histogram);
    for rt in runtimes() {
        // A checked launch with findings would fail, and the kernels panic
        // on a failed launch, so passing here also means zero reports.
        for run in [
            kernels::barrier_loop(&rt, &S),
            kernels::barrier_loop_general(&rt, &S),
            kernels::barrier_loop_async(&rt, &S),
            kernels::barrier_loop_lifted(&rt, &S),
            kernels::reduce(&rt, &reduce),
            kernels::reduce_lifted(&rt, &reduce),
            kernels::reduce_general(&rt, &reduce),
            kernels::sgemm_lifted(&rt, &a, &b, S.sgemm),
            kernels::sgemm_general(&rt, &a, &b, S.sgemm),
            kernels::scan(&rt, &scan),
            kernels::sgemm(&rt, &a, &b, S.sgemm),
            kernels::histogram(&rt, &bytes),
            kernels::message_passing(&rt, S.rounds),
        ] {
            assert_eq!(run.verified, Ok(()), "checked: {}", rt.checking());
        }
    }
}

/// The barrier loop at each of the suite's local sizes, in every form (on
/// PoCL in `pocl_kernels_match_the_references`).
#[test]
fn barrier_loops_match_at_every_local_size() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    for local in S.barrier_locals {
        let s = S.with_barrier_local(local);
        for rt in runtimes() {
            for run in [
                kernels::barrier_loop(&rt, &s),
                kernels::barrier_loop_lifted(&rt, &s),
                kernels::barrier_loop_general(&rt, &s),
            ] {
                assert_eq!(
                    run.verified,
                    Ok(()),
                    "local {local}, checked: {}",
                    rt.checking()
                );
            }
        }
        assert_eq!(
            limit::barrier_loop(&pool, &s).verified,
            Ok(()),
            "local {local}"
        );
    }
}

#[test]
fn plain_rust_limits_match_the_references() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    for run in [
        limit::barrier_loop(&pool, &S),
        limit::reduce(&pool, &reference::reduce_input(S.reduce)),
        limit::scan(&pool, &reference::scan_input(S.scan)),
        limit::sgemm(
            &pool,
            &reference::matrix(S.sgemm, 4),
            &reference::matrix(S.sgemm, 5),
            S.sgemm,
        ),
        limit::histogram(&pool, &reference::histogram_input(S.histogram)),
        limit::message_passing(&pool, S.rounds),
    ] {
        assert_eq!(run.verified, Ok(()));
    }
}

#[test]
fn references_agree_with_brute_force() {
    // The scan reference is the running sum; the histogram counts every byte.
    let x = [3, -1, 4, 1, -5];
    assert_eq!(reference::scan(&x), vec![3, 2, 6, 7, 2]);
    let h = reference::histogram(&[0, 255, 255, 7]);
    assert_eq!((h[0], h[7], h[255], h.iter().sum::<u32>()), (1, 1, 2, 4));
    let m = reference::sgemm(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0], 2);
    assert_eq!(m, vec![19.0, 22.0, 43.0, 50.0]);
}

/// PoCL, where the feature is on and a device exists; otherwise the test
/// says so and checks nothing else.
#[cfg(feature = "pocl")]
#[test]
fn pocl_kernels_match_the_references() {
    let cl = match clsync_bench::pocl::Pocl::new() {
        Ok(cl) => cl,
        Err(why) => {
            eprintln!("no OpenCL device, PoCL side not tested: {why}");
            return;
        }
    };
    if cl.compute_units >= 2 {
        assert_eq!(cl.message_passing(S.rounds).verified, Ok(()));
    } else {
        eprintln!("one compute unit: the PoCL ping-pong is not run (it would never end)");
    }
    // Every other workload, the barrier loop at each of the suite's local
    // sizes. (PoCL is used from this test only: one context, no two tests
    // compiling on it at once.)
    assert_eq!(cl.check_workloads(&S), Ok(()));
}

/// `kernels.cl`, the source PoCL runs, compiled by clsync: every workload
/// gives the reference's result, unchecked and checked (with nothing
/// found), at each of the barrier loop's local sizes.
#[test]
fn opencl_c_kernels_match_the_references_checked_and_unchecked() {
    use clsync_bench::opencl_c::OpenClC;
    let reduce = reference::reduce_input(S.reduce);
    let scan = reference::scan_input(S.scan);
    let (a, b) = (reference::matrix(S.sgemm, 4), reference::matrix(S.sgemm, 5));
    let bytes = reference::histogram_input(S.histogram);
    let rt = Runtime::with_threads(2);
    for checked in [false, true] {
        let cl = OpenClC::new(checked).unwrap();
        let mut runs = vec![
            ("reduce", cl.reduce(&rt, &reduce)),
            ("scan", cl.scan(&rt, &scan)),
            ("sgemm", cl.sgemm(&rt, &a, &b, S.sgemm)),
            ("histogram", cl.histogram(&rt, &bytes)),
            ("message passing", cl.message_passing(&rt, S.rounds)),
        ];
        for local in S.barrier_locals {
            runs.push((
                "barrier loop",
                cl.barrier_loop(&rt, &S.with_barrier_local(local)),
            ));
        }
        for (name, run) in runs {
            assert_eq!(run.verified, Ok(()), "{name}, checked: {checked}");
        }
    }
}

/// Every kernel of `kernels.cl` compiles to work-item loops (a
/// continuation function per kernel) for unchecked launches: the fast
/// path the OpenCL C rows measure.
#[test]
fn every_opencl_c_kernel_runs_as_work_item_loops() {
    let src = include_str!("../src/kernels.cl");
    let p = clsync_opencl::Program::build(src, "kernels.cl", "-cl-std=CL3.0").unwrap();
    assert!(p.kernels().len() >= 6);
    for k in p.kernels() {
        assert_eq!(p.kernel(&k.name).unwrap().engine(), Ok(()), "{}", k.name);
    }
}
