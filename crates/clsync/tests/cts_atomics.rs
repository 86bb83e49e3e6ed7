//! Ports of the Khronos OpenCL-CTS atomics tests (`test_atomics`, the C11
//! `test_c11_atomics` sweeps, `atomic_flag`, and the inclusive-scopes
//! pattern), written for clsync.
//!
//! The sweep runs every atomic function on every atomic type, in global and
//! in local memory, with every order (and order pair, for compare-exchange)
//! and every scope the function allows (`001_b96d5603ef61627c.txt`). As in
//! the CTS, the work-items of one *scope instance* (a sub-group, a
//! work-group, or the whole range) share the atomic objects, so every scope
//! is wide enough for the work-items that use it, and the result is checked
//! per instance: the final values against a sequential computation, and for
//! exchange, that every old value appears exactly once.

mod common;

use std::fmt::Debug;

use clsync::atomics::{Global, Local, Space};
use clsync::memory::{Element, Scalar};
use clsync::sync::validate;
use clsync::sync::*;
use clsync::*;
use common::{rt, within};

const ORDERS: [MemOrder; 5] = [
    MemOrder::Relaxed,
    MemOrder::Acquire,
    MemOrder::Release,
    MemOrder::AcqRel,
    MemOrder::SeqCst,
];
const SCOPES: [MemScope; 4] = [
    MemScope::SubGroup,
    MemScope::WorkGroup,
    MemScope::Device,
    MemScope::AllSvmDevices,
];

/// The sweep's range: a non-uniform last group (44 items) with a partial
/// last sub-group, so scope instances have different sizes.
fn range() -> NdRange {
    NdRange::new([300]).local([64]).sub_group_size(24)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Or,
    Xor,
    And,
    Min,
    Max,
    Exchange,
    CasStrong,
    CasWeak,
    Store,
    Load,
    Init,
}

const INT_OPS: [Op; 13] = [
    Op::Add,
    Op::Sub,
    Op::Or,
    Op::Xor,
    Op::And,
    Op::Min,
    Op::Max,
    Op::Exchange,
    Op::CasStrong,
    Op::CasWeak,
    Op::Store,
    Op::Load,
    Op::Init,
];
const FLOAT_OPS: [Op; 6] = [
    Op::Exchange,
    Op::CasStrong,
    Op::CasWeak,
    Op::Store,
    Op::Load,
    Op::Init,
];

impl Op {
    /// The (order, failure order) combinations the function allows.
    fn orders(self) -> Vec<(MemOrder, MemOrder)> {
        let rel = MemOrder::Relaxed;
        match self {
            Op::Load => [MemOrder::Relaxed, MemOrder::Acquire, MemOrder::SeqCst]
                .map(|o| (o, rel))
                .to_vec(),
            Op::Store => [MemOrder::Relaxed, MemOrder::Release, MemOrder::SeqCst]
                .map(|o| (o, rel))
                .to_vec(),
            Op::Init => vec![(rel, rel)],
            Op::CasStrong | Op::CasWeak => {
                let mut v = Vec::new();
                for s in ORDERS {
                    for f in [MemOrder::Relaxed, MemOrder::Acquire, MemOrder::SeqCst] {
                        if validate::failure_order(s, f).is_ok() {
                            v.push((s, f));
                        }
                    }
                }
                v
            }
            _ => ORDERS.map(|o| (o, rel)).to_vec(),
        }
    }

    /// Atomic objects per scope instance of `m` work-items.
    fn words(self, m: usize, bits: u32) -> usize {
        match self {
            Op::Or | Op::Xor | Op::And => m.div_ceil(bits as usize),
            Op::Store | Op::Load | Op::Init => m,
            _ => 1,
        }
    }
}

/// A value type of the sweep, seen through `i64` / raw bits.
trait Val: AtomicValue + Element<Slot = <Self as Scalar>::Raw> + Debug {
    const BITS: u32;
    fn from_i64(v: i64) -> Self;
    fn to_i64(self) -> i64;
    fn from_bits(b: u64) -> Self;
    fn to_bits(self) -> u64;
    fn min_value() -> Self;
    fn max_value() -> Self;
    /// The `atomic_fetch_*` functions (integers only).
    fn rmw<S: Space>(
        a: &Atomic<Self, S>,
        op: Op,
        v: Self,
        order: MemOrder,
        scope: MemScope,
    ) -> Self;
}

macro_rules! int_val {
    ($($t:ty, $u:ty;)*) => {$(
        impl Val for $t {
            const BITS: u32 = <$t>::BITS;
            fn from_i64(v: i64) -> Self { v as $t }
            fn to_i64(self) -> i64 { self as i64 }
            fn from_bits(b: u64) -> Self { b as $u as $t }
            fn to_bits(self) -> u64 { self as $u as u64 }
            fn min_value() -> Self { <$t>::MIN }
            fn max_value() -> Self { <$t>::MAX }
            fn rmw<S: Space>(a: &Atomic<Self, S>, op: Op, v: Self, o: MemOrder, s: MemScope) -> Self {
                match op {
                    Op::Add => a.fetch_add_dyn(v, o, s),
                    Op::Sub => a.fetch_sub_dyn(v, o, s),
                    Op::Or => a.fetch_or_dyn(v, o, s),
                    Op::Xor => a.fetch_xor_dyn(v, o, s),
                    Op::And => a.fetch_and_dyn(v, o, s),
                    Op::Min => a.fetch_min_dyn(v, o, s),
                    Op::Max => a.fetch_max_dyn(v, o, s),
                    _ => unreachable!(),
                }
                .expect("legal order and scope")
            }
        }
    )*};
}
int_val! { i32, u32; u32, u32; i64, u64; u64, u64; isize, usize; usize, usize; }

macro_rules! float_val {
    ($($t:ty;)*) => {$(
        impl Val for $t {
            const BITS: u32 = 8 * std::mem::size_of::<$t>() as u32;
            fn from_i64(v: i64) -> Self { v as $t }
            fn to_i64(self) -> i64 { self as i64 }
            fn from_bits(b: u64) -> Self { b as $t }
            fn to_bits(self) -> u64 { self as u64 }
            fn min_value() -> Self { <$t>::MIN }
            fn max_value() -> Self { <$t>::MAX }
            fn rmw<S: Space>(_: &Atomic<Self, S>, op: Op, _: Self, _: MemOrder, _: MemScope) -> Self {
                unreachable!("no atomic_fetch_* on floating-point atomics: {op:?}")
            }
        }
    )*};
}
float_val! { f32; f64; }

/// The value member `k` of an instance of `m` contributes to `min`/`max`: a
/// permutation of `0..m`, shifted negative for signed types.
fn minmax_value<T: Val>(k: usize, m: usize) -> T {
    let p = (k * 7919 + 13) % m;
    let signed = T::min_value().to_i64() < 0;
    T::from_i64(p as i64 - if signed { (m / 2) as i64 } else { 0 })
}

/// The initial value of word `w` of an instance of `m`.
fn initial<T: Val>(op: Op, w: usize, m: usize) -> T {
    match op {
        Op::Sub => T::from_i64((m * (m + 1) / 2) as i64),
        Op::And => T::from_bits(u64::MAX),
        Op::Min => T::max_value(),
        Op::Max => T::min_value(),
        Op::Load => T::from_i64((w * 3 + 1) as i64),
        _ => T::from_i64(0),
    }
}

/// What member `k` (of `m`) does; returns the old value an exchange saw.
fn apply<'a, T: Val, S: Space>(
    a: &dyn Fn(usize) -> &'a Atomic<T, S>,
    op: Op,
    k: usize,
    m: usize,
    o: (MemOrder, MemOrder),
    s: MemScope,
) -> T {
    let bits = T::BITS as usize;
    let (order, failure) = o;
    match op {
        Op::Add | Op::Sub => T::rmw(a(0), op, T::from_i64(k as i64 + 1), order, s),
        Op::Or | Op::Xor => T::rmw(a(k / bits), op, T::from_bits(1 << (k % bits)), order, s),
        Op::And => T::rmw(
            a(k / bits),
            op,
            T::from_bits(!(1u64 << (k % bits))),
            order,
            s,
        ),
        Op::Min | Op::Max => T::rmw(a(0), op, minmax_value(k, m), order, s),
        Op::Exchange => a(0)
            .exchange_dyn(T::from_i64(k as i64 + 1), order, s)
            .unwrap(),
        Op::CasStrong | Op::CasWeak => {
            let obj = a(0);
            let mut cur = obj.load_dyn(MemOrder::Relaxed, s).unwrap();
            loop {
                let next = T::from_i64(cur.to_i64() + 1);
                let done = if op == Op::CasStrong {
                    obj.compare_exchange_strong_dyn(&mut cur, next, order, failure, s)
                } else {
                    obj.compare_exchange_weak_dyn(&mut cur, next, order, failure, s)
                };
                if done.unwrap() {
                    break cur;
                }
            }
        }
        Op::Store => {
            a(k).store_dyn(T::from_i64(k as i64 + 1), order, s).unwrap();
            T::from_i64(0)
        }
        Op::Init => {
            a(k).init(T::from_i64(k as i64 + 5));
            T::from_i64(0)
        }
        Op::Load => a(k).load_dyn(order, s).unwrap(),
    }
}

/// Checks one scope instance: its final words and the per-member results.
fn check<T: Val>(op: Op, m: usize, words: &[T], results: &[T]) -> Result<(), String> {
    let bits = T::BITS as usize;
    let want_words: Vec<T> = match op {
        Op::Add => vec![T::from_i64((m * (m + 1) / 2) as i64)],
        Op::Sub => vec![T::from_i64(0)],
        Op::CasStrong | Op::CasWeak => vec![T::from_i64(m as i64)],
        Op::Or | Op::Xor | Op::And => (0..words.len())
            .map(|w| {
                let present = (m - w * bits).min(bits);
                let mask = if present == 64 {
                    u64::MAX
                } else {
                    (1u64 << present) - 1
                };
                T::from_bits(if op == Op::And { !mask } else { mask })
            })
            .collect(),
        Op::Min => vec![(0..m)
            .map(|k| minmax_value::<T>(k, m))
            .min_by_key(|v| v.to_i64())
            .unwrap()],
        Op::Max => vec![(0..m)
            .map(|k| minmax_value::<T>(k, m))
            .max_by_key(|v| v.to_i64())
            .unwrap()],
        Op::Store => (0..m).map(|k| T::from_i64(k as i64 + 1)).collect(),
        Op::Init => (0..m).map(|k| T::from_i64(k as i64 + 5)).collect(),
        Op::Load => (0..m).map(|w| initial::<T>(op, w, m)).collect(),
        Op::Exchange => {
            // Every old value, and the final value, appear exactly once:
            // together they are 0 (the initial value) and 1..=m.
            let mut seen: Vec<i64> = results.iter().map(|v| v.to_i64()).collect();
            seen.push(words[0].to_i64());
            seen.sort_unstable();
            let want: Vec<i64> = (0..=m as i64).collect();
            return if seen == want {
                Ok(())
            } else {
                Err(format!(
                    "exchange old values {seen:?}, expected each of 0..={m} once"
                ))
            };
        }
    };
    let same = words.len() == want_words.len()
        && words
            .iter()
            .zip(&want_words)
            .all(|(a, b)| a.to_bits() == b.to_bits());
    if !same {
        return Err(format!("final values {words:?}, expected {want_words:?}"));
    }
    if op == Op::Load {
        let want: Vec<T> = (0..m).map(|k| initial::<T>(op, k, m)).collect();
        if results
            .iter()
            .zip(&want)
            .any(|(a, b)| a.to_bits() != b.to_bits())
        {
            return Err(format!("loaded {results:?}, expected {want:?}"));
        }
    }
    if matches!(op, Op::CasStrong | Op::CasWeak) {
        // Each successful compare-exchange saw a different old value.
        let mut olds: Vec<i64> = results.iter().map(|v| v.to_i64()).collect();
        olds.sort_unstable();
        if olds != (0..m as i64).collect::<Vec<_>>() {
            return Err(format!("compare-exchange successes saw {olds:?}"));
        }
    }
    Ok(())
}

/// Which scope instance a work-item belongs to: (instance id, member index,
/// instance size).
fn instance(wi: &WorkItem, scope: MemScope, local: bool) -> (usize, usize, usize) {
    let group = wi.get_group_id(0);
    let per_group_sgs = wi.get_enqueued_num_sub_groups() as usize;
    match scope {
        MemScope::SubGroup => (
            group * per_group_sgs + wi.get_sub_group_id() as usize,
            wi.get_sub_group_local_id() as usize,
            wi.get_sub_group_size() as usize,
        ),
        // Local memory is one group's, so wider scopes meet only their group.
        MemScope::WorkGroup => (group, wi.get_local_linear_id(), wi.get_local_size(0)),
        _ if local => (group, wi.get_local_linear_id(), wi.get_local_size(0)),
        _ => (0, wi.get_global_linear_id(), wi.get_global_size(0)),
    }
}

/// Runs one (type, op, orders, scope, space) case and checks every instance.
fn run_case<T: Val>(
    op: Op,
    orders: (MemOrder, MemOrder),
    scope: MemScope,
    local: bool,
) -> Result<(), String> {
    let rt = rt();
    let range = range();
    let geo = range.resolve().unwrap();
    let n = geo.item_count();
    let max_m = n;
    let w = op.words(max_m, T::BITS);
    let instances = geo.group_count() * geo.enqueued_num_sub_groups();
    // Global objects: instance-major, `w` words each. Local: per group.
    let global: Buffer<Atomic<T>> = Buffer::new(instances * w);
    let copied = Buffer::<T>::new(instances * w);
    let results = Buffer::<T>::new(n);
    let who = Buffer::<usize>::new(3 * n);
    if !local {
        for inst in 0..instances {
            if let Some(m) = instance_size(&geo, scope, inst) {
                for iw in 0..w {
                    global.at(inst * w + iw).init(initial::<T>(op, iw, m));
                }
            }
        }
    }
    let launch = Launch::new(format!("{op:?}"), range);
    rt.launch(&launch, |wi| {
        let (inst, k, m) = instance(wi, scope, local);
        let g = wi.get_global_linear_id();
        who.set(3 * g, inst);
        who.set(3 * g + 1, k);
        who.set(3 * g + 2, m);
        if local {
            let sgs = wi.get_enqueued_num_sub_groups() as usize;
            let arr = wi.local_array::<Atomic<T>>(sgs * w);
            let base = if scope == MemScope::SubGroup {
                wi.get_sub_group_id() as usize * w
            } else {
                0
            };
            let l = wi.get_local_linear_id();
            let lsize = wi.get_local_size(0);
            // Initialize every instance of the group (strided over the group).
            let mut i = l;
            while i < sgs * w {
                let (im, iw) = if scope == MemScope::SubGroup {
                    let sg = i / w;
                    let members = (lsize.saturating_sub(sg * geo_sg(wi))).min(geo_sg(wi));
                    (members.max(1), i % w)
                } else {
                    (lsize, i)
                };
                arr.at(i).init(initial::<T>(op, iw, im));
                i += lsize;
            }
            wi.barrier(LOCAL);
            let get = |j: usize| -> &Atomic<T, Local> { arr.at(base + j) };
            results.set(g, apply(&get, op, k, m, orders, scope));
            wi.barrier(LOCAL);
            let group_base = wi.get_group_id(0) * sgs * w;
            let mut i = l;
            while i < sgs * w {
                copied.set(group_base + i, arr.at(i).load_explicit(Relaxed));
                i += lsize;
            }
        } else {
            // The host initialized the objects before the launch.
            let base = inst * w;
            let get = |j: usize| -> &Atomic<T, Global> { global.at(base + j) };
            results.set(g, apply(&get, op, k, m, orders, scope));
        }
    })
    .map_err(|e| e.to_string())?;
    // Host: group the work-items by instance and check each.
    let who = who.to_vec();
    let results = results.to_vec();
    let mut members: std::collections::BTreeMap<usize, Vec<(usize, usize, usize)>> =
        Default::default();
    for g in 0..n {
        members
            .entry(who[3 * g])
            .or_default()
            .push((who[3 * g + 1], who[3 * g + 2], g));
    }
    let finals: Vec<T> = if local {
        copied.to_vec()
    } else {
        (0..instances * w)
            .map(|i| global.at(i).load_explicit(Relaxed))
            .collect()
    };
    for (inst, mut ms) in members {
        ms.sort_unstable();
        let m = ms[0].1;
        if ms.len() != m
            || ms
                .iter()
                .enumerate()
                .any(|(i, (k, mm, _))| *k != i || *mm != m)
        {
            return Err(format!("instance {inst}: members {ms:?} are not 0..{m}"));
        }
        // Local memory is laid out group by group, room for every sub-group.
        let base = if local && scope != MemScope::SubGroup {
            inst * geo.enqueued_num_sub_groups() * w
        } else {
            inst * w
        };
        let words = &finals[base..base + op.words(m, T::BITS)];
        let res: Vec<T> = ms.iter().map(|(_, _, g)| results[*g]).collect();
        check(op, m, words, &res).map_err(|e| format!("instance {inst} ({m} work-items): {e}"))?;
    }
    Ok(())
}

fn geo_sg(wi: &WorkItem) -> usize {
    wi.get_max_sub_group_size() as usize
}

/// The size of global scope instance `inst`, or `None` if it has no
/// work-items (a sub-group slot beyond a small last group).
fn instance_size(geo: &Geometry, scope: MemScope, inst: usize) -> Option<usize> {
    let group_len = |g: usize| geo.local_size_of(geo.group_id(g)).iter().product::<usize>();
    match scope {
        MemScope::SubGroup => {
            let per = geo.enqueued_num_sub_groups();
            let (g, s) = (inst / per, inst % per);
            let sg = geo.sub_group_size();
            let len = group_len(g);
            (s * sg < len).then(|| (len - s * sg).min(sg))
        }
        MemScope::WorkGroup => (inst < geo.group_count()).then(|| group_len(inst)),
        _ => (inst == 0).then_some(geo.item_count()),
    }
}

/// Runs every case of `ops` for `T`; fails with the list of failing cases.
fn sweep<T: Val>(ops: &[Op]) {
    let mut failures = Vec::new();
    let mut cases = 0;
    for &op in ops {
        for orders in op.orders() {
            for scope in SCOPES {
                for local in [false, true] {
                    cases += 1;
                    if let Err(e) = run_case::<T>(op, orders, scope, local) {
                        failures.push(format!(
                            "{} {op:?} order {:?}/{:?} {} {}: {e}",
                            T::ATOMIC_NAME,
                            orders.0,
                            orders.1,
                            scope,
                            if local { "local" } else { "global" }
                        ));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

macro_rules! sweeps {
    ($($name:ident: $t:ty, $ops:expr;)*) => {$(
        #[test]
        fn $name() {
            within(300, || sweep::<$t>(&$ops));
        }
    )*};
}
sweeps! {
    sweep_atomic_int: i32, INT_OPS;
    sweep_atomic_uint: u32, INT_OPS;
    sweep_atomic_long: i64, INT_OPS;
    sweep_atomic_ulong: u64, INT_OPS;
    sweep_atomic_intptr_ptrdiff: isize, INT_OPS;
    sweep_atomic_uintptr_size: usize, INT_OPS;
    sweep_atomic_float: f32, FLOAT_OPS;
    sweep_atomic_double: f64, FLOAT_OPS;
}
