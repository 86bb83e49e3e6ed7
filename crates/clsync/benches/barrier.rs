//! Barrier cost of the general engines (coroutines and async): nanoseconds
//! per work-item per barrier, at local sizes 64, 256 and 1024.
//!
//! `cargo bench -p clsync --bench barrier` prints, for each local size, the
//! median of 9 runs of a kernel whose work-items pass 200 barriers each,
//! divided by work-items × barriers. Set `CLSYNC_THREADS` to choose the
//! number of worker threads (default: one per core), and `CLSYNC_BARRIERS`
//! the barriers per work-item (default 200; comparing two counts separates
//! a group's fixed cost, its tasks made and dropped, from a barrier's).
//! `CLSYNC_LOCAL` runs one local size only, and `CLSYNC_ENGINE` one engine
//! only (`coroutines` or `async`), for counting instructions under
//! `valgrind --tool=callgrind` one configuration at a time.

use std::time::Instant;

use clsync::sync::LOCAL;
use clsync::{Buffer, Launch, NdRange, Runtime};

/// Barriers per work-item unless `CLSYNC_BARRIERS` says otherwise.
const BARRIERS: usize = 200;
const RUNS: usize = 9;

fn main() {
    let threads = env_count("CLSYNC_THREADS");
    let rt = threads.map_or_else(Runtime::new, Runtime::with_threads);
    let barriers = env_count("CLSYNC_BARRIERS").unwrap_or(BARRIERS);
    let locals = env_count("CLSYNC_LOCAL").map_or(vec![16, 64, 256, 1024], |l| vec![l]);
    let (coroutines_on, async_on) = match std::env::var("CLSYNC_ENGINE").as_deref() {
        Err(_) => (true, true),
        Ok("coroutines") => (true, false),
        Ok("async") => (false, true),
        Ok(other) => {
            eprintln!("CLSYNC_ENGINE={other:?}: expected `coroutines` or `async`");
            std::process::exit(2);
        }
    };
    println!(
        "barrier cost, {} worker thread(s), {barriers} barriers per work-item, median of {RUNS}",
        rt.threads()
    );
    println!(
        "{:>10} {:>12} {:>13} {:>13}",
        "local size", "work-items", "coroutines", "async"
    );
    println!("{:>10} {:>12} {:>27}", "", "", "ns/work-item/barrier");
    for local in locals {
        let groups = 16 * rt.threads();
        let n = local * groups;
        let sink = Buffer::<u32>::new(n);
        let launch = Launch::new("barrier_loop", NdRange::new([n]).local([local]));
        let coroutines = coroutines_on.then(|| {
            per_item(&rt, n * barriers, || {
                rt.launch(&launch, |wi| {
                    let mut acc = wi.get_local_id(0) as u32;
                    for _ in 0..barriers {
                        wi.barrier(LOCAL);
                        acc = acc.wrapping_mul(3).wrapping_add(1);
                    }
                    sink.set(wi.get_global_id(0), acc);
                })
                .expect("the barrier loop runs");
            })
        });
        let futures = async_on.then(|| {
            per_item(&rt, n * barriers, || {
                rt.launch_async(&launch, async |wi| {
                    let mut acc = wi.get_local_id(0) as u32;
                    for _ in 0..barriers {
                        wi.barrier_async(LOCAL).await;
                        acc = acc.wrapping_mul(3).wrapping_add(1);
                    }
                    sink.set(wi.get_global_id(0), acc);
                })
                .expect("the barrier loop runs");
            })
        });
        println!(
            "{local:>10} {n:>12} {:>13} {:>13}",
            shown(coroutines),
            shown(futures)
        );
    }
}

/// The median of `RUNS` runs of `launch`, per work-item per barrier (`n` of
/// them in all) and per worker thread (the groups are spread over all
/// workers).
fn per_item(rt: &Runtime, n: usize, launch: impl Fn()) -> f64 {
    let mut times: Vec<f64> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            launch();
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[RUNS / 2] * 1e9 * rt.threads() as f64 / n as f64
}

/// A figure to two places, or `-` for an engine not run.
fn shown(ns: Option<f64>) -> String {
    ns.map_or_else(|| "-".to_string(), |ns| format!("{ns:.2}"))
}

/// The positive whole number in the environment variable `name`, if set;
/// anything else there ends the run with a message naming it.
fn env_count(name: &str) -> Option<usize> {
    let s = std::env::var(name).ok()?;
    match s.parse::<usize>() {
        Ok(v) if v > 0 => Some(v),
        _ => {
            eprintln!("{name}={s:?}: expected a positive whole number");
            std::process::exit(2);
        }
    }
}
