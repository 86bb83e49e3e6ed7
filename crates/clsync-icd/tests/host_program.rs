//! An unmodified OpenCL host program on clsync's platform.
//!
//! `tests/host/host.c` is a plain C program against the Khronos headers,
//! linked with `-lOpenCL` (the system's ICD loader) and nothing of
//! clsync's. Built here with the system's C compiler, it finds clsync's
//! driver through a vendors folder naming only it (`OCL_ICD_VENDORS`, as a
//! per-user install does) and checks each workload against a sequential
//! computation of its own: a reduction, a scan, a tiled SGEMM, 1.x and C11
//! histograms, C11 and 1.x message passing, a sub-group kernel, events and
//! profiling, images and samplers, shared virtual memory (linked lists the
//! host builds, a message between the host and a running kernel through
//! C11 atomics on both sides). The same binary on PoCL is the differential run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// `target/<profile>/deps`: where cargo put this test and the driver.
fn deps_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().to_path_buf()
}

/// A folder of this test process's own.
fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("clsync-icd-test-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}

/// The host program, compiled once.
fn host() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/host/host.c");
        let exe = scratch().join("host");
        let out = Command::new("cc")
            .args(["-O1", "-Wall", "-Werror", "-o"])
            .arg(&exe)
            .arg(&src)
            .arg("-lOpenCL")
            .output()
            .expect("cc (build-essential) is needed: scripts/setup-debian.sh installs it");
        assert!(
            out.status.success(),
            "the host program does not build (ocl-icd-opencl-dev installed?):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        exe
    })
}

/// A vendors folder that names clsync's driver only.
fn vendors() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let lib = deps_dir().join("libclsync_icd.so");
        assert!(lib.exists(), "{} was not built", lib.display());
        let d = scratch().join("vendors");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("clsync.icd"), format!("{}\n", lib.display())).unwrap();
        d
    })
}

fn run(vendors: &Path, platform: &str, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(host());
    cmd.arg(platform)
        .args(extra)
        .env("OCL_ICD_VENDORS", vendors)
        // Two work-groups of the message-passing kernels wait for each
        // other: at least two workers, whatever the machine has.
        .env("CLSYNC_THREADS", "2")
        .env_remove("CLSYNC_CHECK");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

const WORKLOADS: &[&str] = &[
    "reduction",
    "scan",
    "sgemm",
    "histogram-1.x",
    "histogram-c11",
    "message-passing-c11",
    "message-passing-1.x",
    "sub-groups",
    "events",
    "images",
    "image1d-buffer",
    "svm",
];

fn lines(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn every_workload_passes_on_clsync() {
    let o = run(vendors(), "clsync", &[], &[]);
    let (out, err) = lines(&o);
    for w in WORKLOADS {
        assert!(out.contains(&format!("PASS {w}\n")), "{w}:\n{out}\n{err}");
    }
    assert!(o.status.success(), "{out}\n{err}");
    // An unchecked run reports nothing.
    assert!(!err.contains("error"), "{err}");
}

#[test]
fn the_same_program_passes_on_pocl_but_for_sub_groups() {
    if !Path::new("/etc/OpenCL/vendors/pocl.icd").exists() {
        eprintln!(
            "PoCL is not installed (scripts/setup-debian.sh installs it): no differential run"
        );
        return;
    }
    let o = run(Path::new("/etc/OpenCL/vendors"), "Portable", &[], &[]);
    let (out, err) = lines(&o);
    for w in WORKLOADS
        .iter()
        .filter(|w| !["sub-groups", "svm"].contains(w))
    {
        assert!(
            out.contains(&format!("PASS {w}\n")),
            "{w} on PoCL:\n{out}\n{err}"
        );
    }
    // PoCL 3.1's atomics have no memory_scope_all_svm_devices overloads:
    // the kernel that passes the host a message does not build there.
    assert!(
        out.contains("PASS svm\n") || out.contains("FAIL svm: build failed\n"),
        "{out}\n{err}"
    );
    assert!(out.contains("SKIP sub-groups"), "{out}");
}

#[test]
fn checked_every_launch_reports_only_the_racy_1x_message_passing() {
    let o = run(vendors(), "clsync", &[], &[("CLSYNC_CHECK", "1")]);
    let (out, err) = lines(&o);
    for w in WORKLOADS {
        assert!(out.contains(&format!("PASS {w}\n")), "{w}:\n{out}\n{err}");
    }
    // The 1.x fences have work-group scope (spec 000: mem_fence is
    // atomic_work_item_fence at memory_scope_work_group), so the message
    // between two work-groups is a race: reported, with both lines.
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(
        errors,
        ["error: Read-write data race at global memory address `msg`[0]"],
        "{err}"
    );
    assert!(err.contains("in kernel `mp_1x` at input.cl:"), "{err}");
    assert!(err.contains("write at input.cl:3:"), "{err}");
}

#[test]
fn a_racy_kernel_is_reported_with_both_work_items_and_its_line() {
    let o = run(vendors(), "clsync", &["--racy"], &[("CLSYNC_CHECK", "1")]);
    let (out, err) = lines(&o);
    assert!(out.contains("PASS racy"), "{out}\n{err}");
    assert!(
        err.starts_with("error: Read-write data race at global memory address `counter`[0]\n"),
        "{err}"
    );
    assert!(err.contains("in kernel `racy` at input.cl:2:"), "{err}");
    assert!(err.contains("first : write at input.cl:2:"), "{err}");
    assert!(err.contains("second: read at input.cl:2:"), "{err}");
}
