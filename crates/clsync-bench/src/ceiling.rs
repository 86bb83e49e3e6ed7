//! The machine's own ceiling at a thread count, with no kernel in the way:
//! how fast every thread at once multiplies and adds from registers.
//!
//! Parallel efficiency (the 85 % at 16 threads) compares a
//! workload's rate at `t` threads with `t` times its rate at one. Part of
//! what it loses there is the machine's, not the code's: a core runs slower
//! while its neighbours are busy (its turbo frequency falls with the number
//! of active cores), and two threads on one core's hyperthreads share its
//! units. [`fma`] measures that part alone: every thread of the pool runs
//! the same fixed loop of independent multiply-adds, in registers, with no
//! memory traffic and nothing shared but the start and the end. Its
//! efficiency at `t` threads is about the best a compute-bound workload can
//! show there. (A memory-bound one has the limit's reduce for its ceiling:
//! a plain parallel sum.)

use std::hint::black_box;

// One step of a chain, `v * m + c`: fused where the target has FMA, as
// the SGEMM kernels' multiply-add is.
use crate::kernels::fma as step;
use crate::timing::timed;
use crate::Run;

/// Independent multiply-add chains per thread: eight vectors of eight
/// lanes, enough to cover a multiply-add's latency on two units, and few
/// enough to stay in registers (sixteen of them without AVX).
pub const LANES: usize = 64;

/// Steps per thread at the full sizes: about a GFLOP per thread.
pub const STEPS: usize = 1 << 23;
/// Steps per thread at the tests' small sizes.
pub const SMALL_STEPS: usize = 1 << 10;

/// The multiplier and addend of each step, `v = v * M + C`, whose fixed
/// point is 2: the values stay normal, whatever the number of steps.
const M: f32 = 0.5;
const C: f32 = 1.0;

/// Every thread of `pool` runs `steps` steps of [`LANES`] chains; the run
/// is verified against the chains computed one at a time. Its rate is
/// [`flops`]`(pool's threads, steps)` over its time.
pub fn fma(pool: &rayon::ThreadPool, steps: usize) -> Run {
    let mut lanes = Vec::new();
    let time = timed(|| {
        lanes = pool.broadcast(|_| {
            // Through `black_box`, so that the compiler neither folds the
            // chains nor knows their fixed point.
            let (m, c) = (black_box(M), black_box(C));
            let mut v: [f32; LANES] = black_box(std::array::from_fn(|j| j as f32));
            for _ in 0..steps {
                for x in &mut v {
                    *x = step(*x, m, c);
                }
            }
            black_box(v)
        });
    });
    let want: Vec<f32> = (0..LANES).map(|j| chain(j as f32, steps)).collect();
    let verified = lanes
        .iter()
        .enumerate()
        .find(|(_, got)| got.as_slice() != want.as_slice())
        .map_or(Ok(()), |(t, got)| {
            Err(format!(
                "fma ceiling: thread {t}'s chains ended at {got:?}, not {want:?}"
            ))
        });
    Run { time, verified }
}

/// One chain from `v`, step by step, stopping early at a fixed point
/// (after which no step changes it): the sequential reference.
fn chain(mut v: f32, steps: usize) -> f32 {
    for _ in 0..steps {
        let next = step(v, M, C);
        if next == v {
            break;
        }
        v = next;
    }
    v
}

/// Floating-point operations of [`fma`] on `threads` threads: two per step
/// of each chain.
pub fn flops(threads: usize, steps: usize) -> f64 {
    2.0 * (threads * steps * LANES) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_thread_reaches_the_chains_fixed_point() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let r = fma(&pool, 1000);
        assert_eq!(r.verified, Ok(()));
        // Lane 0 starts at 0: 1, 1.5, 1.75, … reaches 2 in 25 steps.
        assert_eq!(chain(0.0, 1000), 2.0);
        assert_eq!(chain(0.0, 2), 1.5);
        assert_eq!(flops(3, 1000), 2.0 * 3.0 * 1000.0 * 64.0);
    }
}
