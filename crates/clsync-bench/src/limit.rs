//! The practical limit: the same computations in plain Rust with rayon, on
//! a pool of the same size, with no work-groups and no barriers beyond what
//! the algorithm needs.

use std::hint::spin_loop;
use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use crate::reference::{self, compare};
use crate::timing::timed;
use crate::{block_offsets, Run, Sizes, GROUP, TILE};

/// A copy of `input` made just before a run, as every side reads one (clsync
/// and PoCL copy it into a buffer of their own). Reading the suite's
/// long-lived input instead gave the limit memory the others did not have:
/// at 16 threads on one of the Xeon machines, a reduction over a fresh
/// 256 MB copy ran at 47 GB/s and over a long-lived one at 58 (cold caches
/// both; 60 and 62 on another).
fn fresh<T: Copy>(input: &[T]) -> Vec<T> {
    input.to_vec()
}

/// Sixteen `u32`s on a cache line: the limit's private values start on
/// one, as clsync's `Private` arrays do (a vector across two lines would
/// make its loads wait for the previous step's stores).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u32; 16]);

/// The barrier loop's arithmetic with no barriers: what the work itself
/// costs.
pub fn barrier_loop(pool: &rayon::ThreadPool, s: &Sizes) -> Run {
    let (n, local, barriers) = s.barrier;
    let mut out = vec![0u32; n];
    let time = timed(|| {
        pool.install(|| {
            out.par_chunks_mut(local).for_each(|chunk| {
                let mut lines = vec![Line([0; 16]); chunk.len().div_ceil(16)];
                // SAFETY: a `Line` is sixteen `u32`s and nothing else
                // (`repr(C)`, size 64 = 16 * 4, so no padding), so the lines
                // hold `16 * lines.len() >= chunk.len()` initialized `u32`s,
                // borrowed mutably for as long as `acc` lives. One flat
                // slice, not a loop of lines: over lines, the compiler
                // vectorized across them, with gathers and scatters (20
                // times slower at 256 work-items).
                let acc: &mut [u32] = unsafe {
                    std::slice::from_raw_parts_mut(lines.as_mut_ptr().cast(), chunk.len())
                };
                for (l, a) in acc.iter_mut().enumerate() {
                    *a = l as u32;
                }
                for _ in 0..barriers {
                    for a in acc.iter_mut() {
                        *a = a.wrapping_mul(3).wrapping_add(1);
                    }
                }
                chunk.copy_from_slice(acc);
            })
        });
    });
    let want: Vec<u32> = (0..n)
        .map(|g| reference::barrier_loop(g % local, barriers))
        .collect();
    Run {
        time,
        verified: compare("barrier loop", &out, &want),
    }
}

/// A parallel sum, of a fresh copy of the input as clsync's and PoCL's
/// kernels read their fresh buffers (see `fresh`).
pub fn reduce(pool: &rayon::ThreadPool, input: &[f32]) -> Run {
    let data = fresh(input);
    let mut total = 0.0;
    let time = timed(|| {
        total = pool.install(|| {
            data.par_chunks(GROUP)
                .map(|c| f64::from(c.iter().sum::<f32>()))
                .sum()
        })
    });
    Run {
        time,
        verified: reference::check_sum(total, input),
    }
}

/// Blocks scanned in parallel, block totals scanned, offsets added.
pub fn scan(pool: &rayon::ThreadPool, input: &[i32]) -> Run {
    let mut data = fresh(input);
    let block = 1 << 16;
    let time = timed(|| {
        pool.install(|| {
            let sums: Vec<i32> = data
                .par_chunks_mut(block)
                .map(|c| {
                    let mut acc = 0i32;
                    for v in c.iter_mut() {
                        acc = acc.wrapping_add(*v);
                        *v = acc;
                    }
                    acc
                })
                .collect();
            data.par_chunks_mut(block)
                .zip(block_offsets(&sums))
                .for_each(|(c, o)| c.iter_mut().for_each(|v| *v = v.wrapping_add(o)));
        });
    });
    Run {
        time,
        verified: compare("scan", &data, &reference::scan(input)),
    }
}

/// Blocks of 16 rows of C in parallel, an i-k-j loop over k blocks of 16:
/// the kernels' blocking, with no local memory and vectorizable rows.
pub fn sgemm(pool: &rayon::ThreadPool, a: &[f32], b: &[f32], n: usize) -> Run {
    let mut c = vec![0f32; n * n];
    let time = timed(|| {
        pool.install(|| {
            c.par_chunks_mut(n * TILE)
                .enumerate()
                .for_each(|(bi, rows)| {
                    for kb in (0..n).step_by(TILE) {
                        for (r, row) in rows.chunks_mut(n).enumerate() {
                            let i = bi * TILE + r;
                            for k in kb..kb + TILE {
                                let x = a[i * n + k];
                                let brow = &b[k * n..k * n + n];
                                for (cv, bv) in row.iter_mut().zip(brow) {
                                    *cv += x * bv;
                                }
                            }
                        }
                    }
                })
        });
    });
    Run {
        time,
        verified: compare("sgemm", &c, &reference::sgemm(a, b, n)),
    }
}

/// Private histograms per 256 KB chunk, merged.
pub fn histogram(pool: &rayon::ThreadPool, input: &[u8]) -> Run {
    let data = fresh(input);
    let mut bins = Vec::new();
    let time = timed(|| {
        bins = pool.install(|| {
            data.par_chunks(1 << 18)
                .map(|c| {
                    let mut h = vec![0u32; 256];
                    for &b in c {
                        h[b as usize] += 1;
                    }
                    h
                })
                .reduce(
                    || vec![0u32; 256],
                    |mut x, y| {
                        x.iter_mut().zip(y).for_each(|(a, b)| *a += b);
                        x
                    },
                )
        })
    });
    Run {
        time,
        verified: compare("histogram", &bins, &reference::histogram(input)),
    }
}

/// Two threads ping-ponging with release/acquire atomics. (Two scoped
/// threads rather than the pool: `rayon::join` may run both sides on one
/// thread, and these two must run at once.)
pub fn message_passing(_pool: &rayon::ThreadPool, rounds: usize) -> Run {
    let turn = AtomicU32::new(0);
    let msg = [AtomicU32::new(0), AtomicU32::new(0)];
    let time = timed(|| {
        std::thread::scope(|sc| {
            sc.spawn(|| side(0, &turn, &msg, rounds));
            sc.spawn(|| side(1, &turn, &msg, rounds));
        });
    });
    // Relaxed: read after the join, which orders both sides' writes.
    let got: Vec<u32> = msg.iter().map(|m| m.load(Ordering::Relaxed)).collect();
    Run {
        time,
        verified: compare(
            "messages",
            &got,
            &[2 * rounds as u32 - 1, 2 * rounds as u32],
        ),
    }
}

fn side(me: u32, turn: &AtomicU32, msg: &[AtomicU32; 2], rounds: usize) {
    for r in 0..rounds as u32 {
        let mine = 2 * r + me;
        // Acquire: pairs with the other side's release store of `turn`.
        while turn.load(Ordering::Acquire) != mine {
            spin_loop();
        }
        // Relaxed: ordered by the acquire above.
        let got = if r == 0 && me == 0 {
            0
        } else {
            msg[1 - me as usize].load(Ordering::Relaxed)
        };
        // Relaxed: published by the release store below.
        msg[me as usize].store(got + 1, Ordering::Relaxed);
        // Release: pairs with the other side's acquire load.
        turn.store(mine + 1, Ordering::Release);
    }
}
