//! The PoCL side's host code (the opencl3 crate over the system's ICD
//! loader) on clsync's own OpenCL platform: every benchmark workload of
//! `kernels.cl`, at small sizes, gives the sequential reference's result.
//! A test binary of its own: the loader reads `OCL_ICD_VENDORS` once per
//! process, and this one names clsync's driver alone.

#[cfg(feature = "pocl")]
#[test]
fn the_benchmark_host_code_runs_on_clsyncs_platform() {
    use clsync_bench::pocl::{Pocl, CLSYNC};
    use clsync_bench::Sizes;
    const S: Sizes = Sizes::SMALL;

    // The driver cargo built for these tests, in their own folder.
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let lib = deps.join("libclsync_icd.so");
    assert!(lib.exists(), "{} was not built", lib.display());
    let vendors = std::env::temp_dir().join(format!("clsync-bench-icd-{}", std::process::id()));
    std::fs::create_dir_all(&vendors).unwrap();
    std::fs::write(vendors.join("clsync.icd"), format!("{}\n", lib.display())).unwrap();
    // Set before this process makes any OpenCL call or starts a thread
    // that reads the environment (this test is the binary's only one).
    std::env::set_var("OCL_ICD_VENDORS", &vendors);
    std::env::set_var("CLSYNC_THREADS", "2");

    let cl = Pocl::on(CLSYNC).expect("clsync's platform is found through the ICD loader");
    assert!(cl.description.contains("clsync"), "{}", cl.description);
    assert_eq!(cl.message_passing(S.rounds).verified, Ok(()));
    assert_eq!(cl.check_workloads(&S), Ok(()));
    let _ = std::fs::remove_dir_all(&vendors);
}
