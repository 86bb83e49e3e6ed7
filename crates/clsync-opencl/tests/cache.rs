//! The kernel cache (`clsync_opencl::cache`): a second build of the same
//! source and options comes from the cache and runs as the first did; a
//! change to the source, the options or a file it includes is a new build.
//! One test in its own process, as it points the cache at its own folder
//! through the environment.

mod common;

use clsync::{Buffer, NdRange};
use clsync_opencl::{Arg, Program};

const SRC: &str = r#"
#include "scale.h"
kernel void scale(global int *out) {
    size_t i = get_global_id(0);
    out[i] = (int)i * FACTOR + OFFSET;
}
"#;

fn run(p: &Program) -> Vec<i32> {
    let out = Buffer::<i32>::new(16);
    common::run(p, "scale", NdRange::new([16]), &[Arg::Buffer(&out)], false);
    out.to_vec()
}

fn expected(factor: i32, offset: i32) -> Vec<i32> {
    (0..16).map(|i| i * factor + offset).collect()
}

#[test]
fn a_second_build_comes_from_the_cache_and_a_changed_input_does_not() {
    let root = std::env::temp_dir().join(format!("clsync-cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let cache = root.join("cache");
    let src_dir = root.join("src");
    std::fs::create_dir_all(&src_dir).unwrap();
    std::env::set_var("CLSYNC_CACHE_DIR", &cache);
    std::fs::write(src_dir.join("scale.h"), "#define FACTOR 3\n").unwrap();
    let file = src_dir.join("scale.cl");
    std::fs::write(&file, SRC).unwrap();

    let first = Program::build_file(&file, "-D OFFSET=1").unwrap();
    assert!(!first.build_times().cached);
    assert_eq!(run(&first), expected(3, 1));
    let entries = std::fs::read_dir(&cache).unwrap().count();
    assert_eq!(entries, 1, "one entry kept");

    let second = Program::build_file(&file, "-D OFFSET=1").unwrap();
    assert!(second.build_times().cached, "the same build again is a hit");
    assert_eq!(run(&second), expected(3, 1));

    // Other options, another build.
    let other = Program::build_file(&file, "-D OFFSET=2").unwrap();
    assert!(!other.build_times().cached);
    assert_eq!(run(&other), expected(3, 2));

    // The included file changed: its source is the same, its build is not.
    std::fs::write(src_dir.join("scale.h"), "#define FACTOR 5\n").unwrap();
    let changed = Program::build_file(&file, "-D OFFSET=1").unwrap();
    assert!(!changed.build_times().cached, "a changed header is a miss");
    assert_eq!(run(&changed), expected(5, 1));

    // Source built from memory, the same way (its include found through
    // -I).
    let opts = format!("-I {} -D OFFSET=4", src_dir.display());
    let a = Program::build(SRC, "mem.cl", &opts).unwrap();
    let b = Program::build(SRC, "mem.cl", &opts).unwrap();
    assert!(!a.build_times().cached && b.build_times().cached);
    assert_eq!(run(&b), expected(5, 4));

    // A damaged entry is a miss, never an error: every entry cut short.
    for e in std::fs::read_dir(&cache).unwrap() {
        let p = e.unwrap().path();
        let bytes = std::fs::read(&p).unwrap();
        std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
    }
    let again = Program::build(SRC, "mem.cl", &opts).unwrap();
    assert!(!again.build_times().cached);
    assert_eq!(run(&again), expected(5, 4));

    // Off: no entry is read.
    std::env::set_var("CLSYNC_KERNEL_CACHE", "0");
    let off = Program::build(SRC, "mem.cl", &opts).unwrap();
    assert!(!off.build_times().cached);
    let _ = std::fs::remove_dir_all(&root);
}
