//! Port of the Khronos OpenCL-CTS `test_atomics` (the OpenCL 1.x
//! `atomic_*` functions on plain `int`/`uint`, and `atom_*` on
//! `long`/`ulong`): every function on global memory (all work-items share the
//! objects) and on local memory (each group shares its own), checked as the
//! CTS checks them — final values against a sequential computation, and for
//! exchange, every old value exactly once.

mod common;

use std::fmt::Debug;

use clsync::memory::{AtomicInteger, Element, Scalar};
use clsync::sync::LOCAL;
use clsync::*;
use common::rt;

trait Int:
    AtomicInteger
    + Element<Slot = <Self as Scalar>::Raw, LocalSlot = <Self as Scalar>::Raw>
    + Ord
    + Debug
{
    fn of(v: i64) -> Self;
    fn int(self) -> i64;
}
macro_rules! int {
    ($($t:ty)*) => {$( impl Int for $t { fn of(v: i64) -> Self { v as $t } fn int(self) -> i64 { self as i64 } } )*};
}
int!(i32 u32 i64 u64);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Add,
    Sub,
    Inc,
    Dec,
    Min,
    Max,
    And,
    Or,
    Xor,
    Xchg,
    Cmpxchg,
}
const OPS: [Op; 11] = [
    Op::Add,
    Op::Sub,
    Op::Inc,
    Op::Dec,
    Op::Min,
    Op::Max,
    Op::And,
    Op::Or,
    Op::Xor,
    Op::Xchg,
    Op::Cmpxchg,
];

/// A few objects, so and/or/xor can give each member a bit.
const WORDS: usize = 8;

fn init<T: Int>(op: Op, m: usize) -> T {
    match op {
        Op::Sub => T::of((m * (m + 1) / 2) as i64),
        Op::Dec => T::of(m as i64),
        Op::Min => T::of(i64::from(u16::MAX)),
        Op::And => T::of(-1),
        _ => T::of(0),
    }
}

fn value(k: usize, m: usize) -> i64 {
    ((k * 7919 + 11) % m) as i64 + 3
}

/// Member `k` of `m` does its operation on the objects `obj(0..WORDS)`.
macro_rules! apply {
    ($mem:expr, $base:expr, $op:expr, $k:expr, $m:expr) => {{
        let (mem, base, k, m) = ($mem, $base, $k, $m);
        let bit = |k: usize| T::of(1i64 << (k % 16));
        match $op {
            Op::Add => mem.atomic_add(base, T::of(k as i64 + 1)),
            Op::Sub => mem.atomic_sub(base, T::of(k as i64 + 1)),
            Op::Inc => mem.atomic_inc(base),
            Op::Dec => mem.atomic_dec(base),
            Op::Min => mem.atomic_min(base, T::of(value(k, m))),
            Op::Max => mem.atomic_max(base, T::of(value(k, m))),
            Op::And => mem.atomic_and(base + (k / 16) % WORDS, T::of(!(1i64 << (k % 16)))),
            Op::Or => mem.atomic_or(base + (k / 16) % WORDS, bit(k)),
            Op::Xor => mem.atomic_xor(base + (k / 16) % WORDS, bit(k)),
            Op::Xchg => mem.atomic_xchg(base, T::of(k as i64 + 1)),
            Op::Cmpxchg => {
                let mut cur = mem.atomic_cmpxchg(base, T::of(0), T::of(0));
                loop {
                    let old = mem.atomic_cmpxchg(base, cur, T::of(cur.int() + 1));
                    if old == cur {
                        break old;
                    }
                    cur = old;
                }
            }
        }
    }};
}

fn check<T: Int>(op: Op, m: usize, words: &[T], olds: &[T]) -> Result<(), String> {
    // The members sharing word `w`, or-ed (and, or) or xor-ed together.
    let mine = |w: usize| {
        (0..m)
            .filter(move |k| (k / 16) % WORDS == w)
            .map(|k| 1i64 << (k % 16))
    };
    let bits = |w: usize| -> i64 { mine(w).fold(0, |a, b| a | b) };
    let toggled = |w: usize| -> i64 { mine(w).fold(0, |a, b| a ^ b) };
    let ok = match op {
        Op::Add => words[0].int() == (m * (m + 1) / 2) as i64,
        Op::Sub | Op::Dec => words[0].int() == 0,
        Op::Inc | Op::Cmpxchg => words[0].int() == m as i64,
        Op::Min => words[0].int() == (0..m).map(|k| value(k, m)).min().unwrap(),
        Op::Max => words[0].int() == (0..m).map(|k| value(k, m)).max().unwrap(),
        Op::And => (0..WORDS).all(|w| words[w] == T::of(!bits(w))),
        Op::Or => (0..WORDS).all(|w| words[w] == T::of(bits(w))),
        Op::Xor => (0..WORDS).all(|w| words[w] == T::of(toggled(w))),
        Op::Xchg => {
            let mut all: Vec<i64> = olds
                .iter()
                .map(|v| v.int())
                .chain([words[0].int()])
                .collect();
            all.sort_unstable();
            all == (0..=m as i64).collect::<Vec<_>>()
        }
    };
    // inc/dec/cmpxchg: every member saw a different old value.
    let distinct = match op {
        Op::Inc | Op::Dec | Op::Cmpxchg => {
            let mut o: Vec<i64> = olds.iter().map(|v| v.int()).collect();
            o.sort_unstable();
            o.dedup();
            o.len() == m
        }
        _ => true,
    };
    if ok && distinct {
        Ok(())
    } else {
        let shown = &olds[..olds.len().min(16)];
        Err(format!(
            "{op:?} over {m} work-items: final {words:?}, first old values {shown:?}"
        ))
    }
}

fn sweep<T: Int>() {
    let rt = rt();
    let (n, local) = (1000, 128); // non-uniform last group of 104
    for op in OPS {
        // Global: every work-item shares the objects.
        let g: Buffer<T> = Buffer::new(WORDS);
        for w in 0..WORDS {
            g.set(w, init::<T>(op, n));
        }
        let olds = Buffer::<T>::new(n);
        rt.launch(
            &Launch::new("legacy_global", NdRange::new([n]).local([local])),
            |wi| {
                let k = wi.get_global_id(0);
                olds.set(k, apply!(&g, 0, op, k, n));
            },
        )
        .unwrap();
        check(op, n, &g.to_vec(), &olds.to_vec())
            .unwrap_or_else(|e| panic!("global {}: {e}", T::NAME));

        // Local: each group shares its own.
        let groups = n.div_ceil(local);
        let finals = Buffer::<T>::new(groups * WORDS);
        let olds = Buffer::<T>::new(n);
        rt.launch(
            &Launch::new("legacy_local", NdRange::new([n]).local([local])),
            |wi| {
                let k = wi.get_local_id(0);
                let m = wi.get_local_size(0);
                let s = wi.local_array::<T>(WORDS);
                if k < WORDS {
                    s.set(k, init::<T>(op, m));
                }
                wi.barrier(LOCAL);
                olds.set(wi.get_global_id(0), apply!(s, 0, op, k, m));
                wi.barrier(LOCAL);
                if k < WORDS {
                    finals.set(wi.get_group_id(0) * WORDS + k, s.get(k));
                }
            },
        )
        .unwrap();
        let (finals, olds) = (finals.to_vec(), olds.to_vec());
        for grp in 0..groups {
            let m = (n - grp * local).min(local);
            let o = &olds[grp * local..grp * local + m];
            check(op, m, &finals[grp * WORDS..(grp + 1) * WORDS], o)
                .unwrap_or_else(|e| panic!("local {} group {grp}: {e}", T::NAME));
        }
    }
}

#[test]
fn legacy_atomics_int() {
    sweep::<i32>();
}

#[test]
fn legacy_atomics_uint() {
    sweep::<u32>();
}

#[test]
fn legacy_atom_long() {
    sweep::<i64>();
}

#[test]
fn legacy_atom_ulong() {
    sweep::<u64>();
}

#[test]
fn legacy_atomic_xchg_float() {
    let n = 500;
    let g = Buffer::<f32>::new(1);
    let olds = Buffer::<f32>::new(n);
    rt().launch(
        &Launch::new("xchg_float", NdRange::new([n]).local([50])),
        |wi| {
            let k = wi.get_global_id(0);
            olds.set(k, g.atomic_xchg(0, k as f32 + 1.0));
        },
    )
    .unwrap();
    let mut all: Vec<i64> = olds
        .to_vec()
        .into_iter()
        .chain([g.get(0)])
        .map(|v| v as i64)
        .collect();
    all.sort_unstable();
    assert_eq!(all, (0..=n as i64).collect::<Vec<_>>());
}
