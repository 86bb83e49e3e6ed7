//! How every side's run is timed: [`timed`], after the caches are emptied
//! of the inputs when the suite asks for cold caches ([`cold_caches`]).
//!
//! Each side makes its own copy of its input just before its run (clsync's
//! `Buffer::from_slice`, PoCL's buffer, the limit's `Vec`).
//! On a machine whose last-level cache holds the input — the 256 MB of
//! reduce fit in a 300 MiB L3 — a run with one thread then reads it from
//! the cache while a run with sixteen, of the same bytes, is paced by
//! memory, and the scaling of a memory-bound kernel reads as a loss. With
//! cold caches every run, of every side and at every thread count, starts
//! with its input in memory: the suite reads a scratch buffer twice the size
//! of the last-level cache first.
//!
//! The size is CPU 0's largest cache, and the reading thread is the one that
//! made the input's copy, so the copy is evicted from the cache it went to.
//! On a machine of several last-level caches (one per chiplet) the others
//! keep what the previous run's workers left in them, which is not the next
//! run's input.

use std::hint::black_box;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The scratch buffer read before each timed run, once cold caches were
/// asked for (unset: warm caches, the default, which is what the tests use).
static SCRATCH: OnceLock<Box<[u64]>> = OnceLock::new();

/// The size assumed when the machine does not say (sysfs absent).
const DEFAULT_LLC: usize = 32 << 20;
/// At most this much scratch, whatever the machine says.
const MAX_SCRATCH: usize = 2 << 30;

/// From now on, each timed run starts with cold caches: [`timed`] first
/// reads a scratch buffer of twice the last-level cache's size. Returns
/// the bytes it reads.
pub fn cold_caches() -> usize {
    let scratch = SCRATCH.get_or_init(|| {
        let bytes = (2 * last_level_cache().unwrap_or(DEFAULT_LLC)).min(MAX_SCRATCH);
        (0..bytes as u64 / 8).collect()
    });
    scratch.len() * 8
}

/// The largest cache of CPU 0, from sysfs (`…/cpu0/cache/index*/size`).
fn last_level_cache() -> Option<usize> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("size")).ok())
        .filter_map(|s| parse_size(s.trim()))
        .max()
}

/// `"32768K"`, `"300M"`, `"1G"` or plain bytes.
fn parse_size(s: &str) -> Option<usize> {
    let (digits, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => s.split_at(i),
        None => (s, ""),
    };
    let shift = match unit {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return None,
    };
    digits.parse::<usize>().ok()?.checked_mul(1 << shift)
}

/// Reads the scratch buffer, one word per cache line, if cold caches were
/// asked for: what the caches held is then evicted.
fn evict() {
    if let Some(scratch) = SCRATCH.get() {
        let sum = scratch
            .iter()
            .step_by(8)
            .fold(0u64, |a, &v| a.wrapping_add(v));
        black_box(sum);
    }
}

/// The wall time of `f`, after the caches are emptied if [`cold_caches`]
/// was called.
pub fn timed(f: impl FnOnce()) -> Duration {
    evict();
    let start = Instant::now();
    f();
    start.elapsed()
}

/// What a side's runs of one workload took: the fastest, the three
/// quartiles and the slowest. The tables print the median; `--spread` prints
/// the rest, to show how far a figure can be trusted on a noisy machine.
///
/// Each quartile is a run's own time (the `len * k / 4`th of the sorted
/// times, nearest rank), not an interpolation between two runs; the median
/// is the `len / 2`th, the upper one of an even count.
///
/// ```
/// use std::time::Duration;
/// use clsync_bench::timing::Spread;
///
/// let ms = |v: u64| Duration::from_millis(v);
/// let s = Spread::of(&[ms(9), ms(1), ms(5), ms(3), ms(7)]).unwrap();
/// assert_eq!((s.fastest, s.median, s.slowest), (ms(1), ms(5), ms(9)));
/// assert_eq!((s.lower_quartile, s.upper_quartile), (ms(3), ms(7)));
/// assert!(Spread::of(&[]).is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spread {
    /// The shortest run.
    pub fastest: Duration,
    /// The run a quarter of the way from the shortest.
    pub lower_quartile: Duration,
    /// The run halfway (the table's figure).
    pub median: Duration,
    /// The run three quarters of the way from the shortest.
    pub upper_quartile: Duration,
    /// The longest run.
    pub slowest: Duration,
}

impl Spread {
    /// The spread of `runs`, or `None` if there are none.
    pub fn of(runs: &[Duration]) -> Option<Spread> {
        let mut v = runs.to_vec();
        v.sort_unstable();
        let at = |k: usize| v[v.len() * k / 4];
        Some(Spread {
            fastest: *v.first()?,
            lower_quartile: at(1),
            median: at(2),
            upper_quartile: at(3),
            slowest: *v.last()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_size, Duration, Spread};

    #[test]
    fn a_spread_is_the_sorted_runs_at_their_ranks() {
        let d = |v: &[u64]| {
            v.iter()
                .map(|&n| Duration::from_nanos(n))
                .collect::<Vec<_>>()
        };
        // One run: every figure is that run.
        let one = Spread::of(&d(&[4])).unwrap();
        assert_eq!(
            [one.fastest, one.median, one.slowest],
            [Duration::from_nanos(4); 3]
        );
        // Eight runs, shuffled: ranks 0, 2, 4, 6 and 7 of the sorted times,
        // as a sort of the same times says.
        let runs = d(&[80, 10, 70, 20, 60, 30, 50, 40]);
        let mut sorted = runs.clone();
        sorted.sort();
        let s = Spread::of(&runs).unwrap();
        assert_eq!(
            [
                s.fastest,
                s.lower_quartile,
                s.median,
                s.upper_quartile,
                s.slowest
            ],
            [sorted[0], sorted[2], sorted[4], sorted[6], sorted[7]]
        );
    }

    #[test]
    fn cache_sizes_parse_as_sysfs_writes_them() {
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("300M"), Some(300 << 20));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("12X"), None);
        assert_eq!(parse_size(""), None);
    }
}
