//! What the checker costs: each sample kernel at full size, unchecked and
//! checked, on the same runtime size, runs interleaved; the table gives the
//! median time of each and their ratio.
//!
//! ```text
//! cargo bench -p clsync-samples --bench checker_overhead [-- --reps N --size small|full --threads N --only NAME]
//! ```
//!
//! Times are the samples' own (time spent in launches; for host message
//! passing, the host's exchange). Nothing here asserts a time.

use std::time::Duration;

use clsync::Runtime;
use clsync_samples::{all, Size};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let reps: usize = value("--reps").map_or(3, |v| v.parse().expect("--reps N"));
    let size = match value("--size").as_deref() {
        Some("small") => Size::Small,
        None | Some("full") => Size::Full,
        Some(other) => panic!("--size small|full, not {other}"),
    };
    let threads = value("--threads").map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |v| v.parse().expect("--threads N"),
    );
    let plain = Runtime::with_threads(threads);
    let checked = Runtime::with_threads(threads).with_checking(true);
    println!(
        "checker overhead, {threads} worker thread(s), {reps} interleaved run(s) each, medians"
    );
    println!(
        "{:<22} {:>14} {:>14} {:>9}",
        "sample", "unchecked", "checked", "ratio"
    );
    let only = value("--only");
    for sample in all() {
        if only.as_deref().is_some_and(|o| o != sample.name()) {
            continue;
        }
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            for (rt, times) in [(&plain, &mut a), (&checked, &mut b)] {
                let r = sample
                    .run(rt, size)
                    .unwrap_or_else(|e| panic!("{}: {e}", sample.name()));
                assert_eq!(r.verified, Ok(()), "{}", sample.name());
                times.push(r.elapsed);
            }
        }
        let (a, b) = (median(a), median(b));
        println!(
            "{:<22} {:>12.1}ms {:>12.1}ms {:>8.1}x",
            sample.name(),
            a.as_secs_f64() * 1e3,
            b.as_secs_f64() * 1e3,
            b.as_secs_f64() / a.as_secs_f64()
        );
    }
}
