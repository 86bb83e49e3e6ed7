//! The scaling table: workloads at several thread counts in one process,
//! with each one's parallel efficiency, and that efficiency beside the
//! machine's own ([`ceiling`]).
//!
//! A workload's efficiency at `t` threads is its rate per thread there
//! over its rate per thread at the table's first count (one thread, as a
//! rule): `rate(t) / (t × rate(1))`. For a figure that is a time per
//! thread (the general engine's nanoseconds per work-item per barrier per
//! thread), it is `time(1) / time(t)`. The ceiling's efficiency is what the
//! cores themselves lose when all of them work; a workload's efficiency
//! over the ceiling's says how much of the rest is the workload's own.
//! A column with a limit (plain Rust's form of the same work) also gets its
//! ratio of times to it at each count, as the side-by-side table gives.
//!
//! Runs are interleaved: each repetition runs every column at every
//! count, so that the machine's drift touches them all alike; figures are
//! medians.

use std::time::Duration;

use clsync::Runtime;

use crate::timing::Spread;
use crate::{ceiling, figure, kernels, limit, Inputs, Run, Sizes, Workload};

/// One column of the table.
pub struct Column<'a> {
    /// Its heading.
    pub name: String,
    /// The unit of its figures.
    pub unit: &'static str,
    /// One run at the thread count of the given index in the table's
    /// counts.
    pub run: Box<dyn Fn(usize) -> Run + 'a>,
    /// Its figure for a run's time at a thread count.
    pub figure: Box<dyn Fn(Duration, usize) -> f64 + 'a>,
    /// Whether its figure is a rate (larger is better), else a time per
    /// thread (smaller is better).
    pub rate: bool,
    /// The index of the column that is its practical limit (a rate, as it
    /// is), if any: the table then gives their ratio of times at each
    /// count.
    pub limit: Option<usize>,
}

/// The medians of a table: `figures[i][c]` is column `c` at count `i`.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// The thread counts, as asked for.
    pub counts: Vec<usize>,
    /// Each count's row of figures, one per column.
    pub figures: Vec<Vec<f64>>,
}

/// Runs every column at every count `reps` times, interleaved, and takes
/// the medians. A wrong result is an error naming its column and count.
pub fn measure(counts: &[usize], reps: usize, columns: &[Column<'_>]) -> Result<Table, String> {
    let mut times = vec![vec![Vec::with_capacity(reps); columns.len()]; counts.len()];
    for _ in 0..reps {
        for (i, &threads) in counts.iter().enumerate() {
            for (c, col) in columns.iter().enumerate() {
                let r = (col.run)(i);
                r.verified
                    .map_err(|e| format!("{} at {threads} thread(s): {e}", col.name))?;
                times[i][c].push(r.time);
            }
        }
    }
    let figures = counts
        .iter()
        .zip(&times)
        .map(|(&threads, row)| {
            row.iter()
                .zip(columns)
                .map(|(runs, col)| {
                    let median = Spread::of(runs).map_or(Duration::ZERO, |s| s.median);
                    (col.figure)(median, threads)
                })
                .collect()
        })
        .collect();
    Ok(Table {
        counts: counts.to_vec(),
        figures,
    })
}

/// The efficiency of a column's `figure` at `threads`, given its figure
/// `base` at `base_threads` (see the module's doc).
///
/// ```
/// use clsync_bench::scaling::efficiency;
/// // A rate: 10 on one thread, 144 on sixteen is 90 %.
/// assert_eq!(efficiency(true, 10.0, 1, 144.0, 16), 0.9);
/// // A time per thread: 2 ns on one thread, 2.5 on sixteen is 80 %.
/// assert_eq!(efficiency(false, 2.0, 1, 2.5, 16), 0.8);
/// ```
pub fn efficiency(rate: bool, base: f64, base_threads: usize, figure: f64, threads: usize) -> f64 {
    if rate {
        (figure / threads as f64) / (base / base_threads as f64)
    } else {
        base / figure
    }
}

/// The table as text, one line per column: its name and unit, then its
/// figure and efficiency at each count, then, if `ceiling` names a column,
/// its efficiency over the ceiling's at the last count.
pub fn render(table: &Table, columns: &[Column<'_>], ceiling: Option<usize>) -> String {
    let (Some(base), Some(&base_threads), Some(&last_threads)) = (
        table.figures.first(),
        table.counts.first(),
        table.counts.last(),
    ) else {
        return String::new();
    };
    let eff = |i: usize, c: usize| {
        efficiency(
            columns[c].rate,
            base[c],
            base_threads,
            table.figures[i][c],
            table.counts[i],
        )
    };
    let last = table.counts.len() - 1;
    let labels: Vec<String> = columns
        .iter()
        .map(|c| format!("{} {}", c.name, c.unit))
        .collect();
    // Each column with a limit: its label, its index and the limit's.
    let ratios: Vec<(String, usize, usize)> = columns
        .iter()
        .enumerate()
        .filter_map(|(c, col)| {
            col.limit
                .map(|l| (format!("{} / {} (times)", col.name, columns[l].name), c, l))
        })
        .collect();
    let w = labels
        .iter()
        .chain(ratios.iter().map(|r| &r.0))
        .map(String::len)
        .max()
        .unwrap_or(0)
        .max(8);
    let mut out = format!("{:<w$}", "threads:");
    for t in &table.counts {
        out.push_str(&format!(" {t:>16}"));
    }
    if ceiling.is_some() {
        out.push_str(&format!(" {:>14}", format!("/ceiling at {last_threads}")));
    }
    out.push('\n');
    for (c, label) in labels.iter().enumerate() {
        out.push_str(&format!("{label:<w$}"));
        for (i, row) in table.figures.iter().enumerate() {
            let cell = format!("{:.3} ({:.0} %)", row[c], 100.0 * eff(i, c));
            out.push_str(&format!(" {cell:>16}"));
        }
        match ceiling {
            Some(k) if k != c => {
                out.push_str(&format!(" {:>14.2}", eff(last, c) / eff(last, k)));
            }
            _ => {}
        }
        out.push('\n');
    }
    for (label, c, l) in &ratios {
        out.push_str(&format!("{label:<w$}"));
        for row in &table.figures {
            // Rates: the ratio of times is the limit's rate over this one's.
            out.push_str(&format!(" {:>16.2}", row[*l] / row[*c]));
        }
        out.push('\n');
    }
    out
}

/// A workload's run at one thread count's runtime and pool.
type Runner = fn(&Runtime, &rayon::ThreadPool, &Sizes, &Inputs) -> Run;

/// The suite's table (`clsync-bench --scaling`): the ceiling; reduce and
/// SGEMM, each with its limit and its `#[kernel]` form; scan; histogram;
/// and the async engine's barrier loop. `rts` and `pools` are a runtime and
/// a rayon pool per thread count, in the table's order.
pub fn suite<'a>(
    s: &'a Sizes,
    inputs: &'a Inputs,
    rts: &'a [Runtime],
    pools: &'a [rayon::ThreadPool],
) -> Vec<Column<'a>> {
    let steps = if *s == Sizes::SMALL {
        ceiling::SMALL_STEPS
    } else {
        ceiling::STEPS
    };
    // Each with the name of its limit's column, if it has one.
    let workloads: [(&str, Workload, Runner, Option<&str>); 8] = [
        (
            "reduce",
            Workload::Reduce,
            |rt, _, _, i| kernels::reduce(rt, &i.reduce),
            Some("reduce limit"),
        ),
        (
            "reduce limit",
            Workload::Reduce,
            |_, p, _, i| limit::reduce(p, &i.reduce),
            None,
        ),
        (
            "reduce #[kernel]",
            Workload::Reduce,
            |rt, _, _, i| kernels::reduce_lifted(rt, &i.reduce),
            Some("reduce limit"),
        ),
        (
            "sgemm",
            Workload::Sgemm,
            |rt, _, s, i| kernels::sgemm(rt, &i.a, &i.b, s.sgemm),
            Some("sgemm limit"),
        ),
        (
            "sgemm limit",
            Workload::Sgemm,
            |_, p, s, i| limit::sgemm(p, &i.a, &i.b, s.sgemm),
            None,
        ),
        (
            "sgemm #[kernel]",
            Workload::Sgemm,
            |rt, _, s, i| kernels::sgemm_lifted(rt, &i.a, &i.b, s.sgemm),
            Some("sgemm limit"),
        ),
        (
            "scan",
            Workload::Scan,
            |rt, _, _, i| kernels::scan(rt, &i.scan),
            None,
        ),
        (
            "histogram",
            Workload::Histogram,
            |rt, _, _, i| kernels::histogram(rt, &i.bytes),
            None,
        ),
    ];
    let mut columns = vec![Column {
        name: "ceiling".to_string(),
        unit: "GFLOP/s",
        run: Box::new(move |k| ceiling::fma(&pools[k], steps)),
        figure: Box::new(move |t, threads| ceiling::flops(threads, steps) / t.as_secs_f64() / 1e9),
        rate: true,
        limit: None,
    }];
    // The ceiling first: a workload's column is its index in `workloads`
    // plus one.
    let index = |name: &str| workloads.iter().position(|w| w.0 == name).map(|i| i + 1);
    columns.extend(workloads.into_iter().map(|(name, w, run, lim)| Column {
        name: name.to_string(),
        unit: figure(w, s, Duration::from_secs(1)).1,
        run: Box::new(move |k| run(&rts[k], &pools[k], s, inputs)),
        figure: Box::new(move |t, _| figure(w, s, t).0),
        rate: true,
        limit: lim.and_then(index),
    }));
    let (n, local, barriers) = s.barrier;
    columns.push(Column {
        name: format!("async engine (local {local})"),
        unit: "ns/item/barrier/thread",
        run: Box::new(move |k| kernels::barrier_loop_async(&rts[k], s)),
        // Per thread, as the general engine's goal is read.
        figure: Box::new(move |t, threads| {
            t.as_secs_f64() * 1e9 / (n * barriers) as f64 * threads as f64
        }),
        rate: false,
        limit: None,
    });
    columns
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A column whose run at count index `i` takes `times[i]` (its figure
    /// is work 1 over the time: a rate).
    fn column<'a>(name: &str, times: &'a [u64], calls: &'a Cell<usize>) -> Column<'a> {
        Column {
            name: name.to_string(),
            unit: "op/s",
            run: Box::new(move |i| {
                calls.set(calls.get() + 1);
                Run {
                    time: Duration::from_millis(times[i]),
                    verified: Ok(()),
                }
            }),
            figure: Box::new(|t, _| 1.0 / t.as_secs_f64()),
            rate: true,
            limit: None,
        }
    }

    #[test]
    fn every_column_runs_at_every_count_each_rep_and_efficiency_is_per_thread() {
        let calls = Cell::new(0);
        // 1 thread: 100 ms; 2: 50 ms (100 %); 4: 40 ms (62.5 %).
        let work = column("work", &[100, 50, 40], &calls);
        // The ceiling: 100, 50, 32 ms (4 threads: 78.125 %).
        let ceil = column("ceiling", &[100, 50, 32], &calls);
        let columns = [ceil, work];
        let t = measure(&[1, 2, 4], 3, &columns).unwrap();
        assert_eq!(calls.get(), 3 * 3 * 2);
        assert_eq!(t.figures[2], vec![1.0 / 0.032, 1.0 / 0.04]);
        let text = render(&t, &columns, Some(0));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        let cells = |l: &str| -> Vec<String> { l.split_whitespace().map(str::to_string).collect() };
        assert_eq!(
            cells(lines[0]),
            ["threads:", "1", "2", "4", "/ceiling", "at", "4"]
        );
        // The ceiling has no ratio to itself.
        assert_eq!(
            cells(lines[1]),
            [
                "ceiling", "op/s", "10.000", "(100", "%)", "20.000", "(100", "%)", "31.250", "(78",
                "%)"
            ]
        );
        // 62.5 % over 78.125 % is 0.80.
        assert_eq!(
            cells(lines[2]),
            [
                "work", "op/s", "10.000", "(100", "%)", "20.000", "(100", "%)", "25.000", "(62",
                "%)", "0.80"
            ]
        );
        // A time per thread: efficiency is the first count's over this one's.
        let per_thread = Column {
            rate: false,
            figure: Box::new(|t, _| t.as_secs_f64() * 1e3),
            ..column("ns", &[2, 2, 4], &calls)
        };
        let t = measure(&[1, 2, 4], 1, std::slice::from_ref(&per_thread)).unwrap();
        let text = render(&t, std::slice::from_ref(&per_thread), None);
        assert!(
            text.lines().nth(1).unwrap().ends_with("4.000 (50 %)"),
            "{text}"
        );
    }

    /// A column with a limit gets a line of their ratio of times at each
    /// count: the limit's rate over its own.
    #[test]
    fn a_column_with_a_limit_has_its_ratio_of_times_at_each_count() {
        let calls = Cell::new(0);
        // Rates 10, 20, 25 against the limit's 20, 25, 50.
        let work = Column {
            limit: Some(1),
            ..column("work", &[100, 50, 40], &calls)
        };
        let columns = [work, column("plain", &[50, 40, 20], &calls)];
        let t = measure(&[1, 2, 4], 1, &columns).unwrap();
        let text = render(&t, &columns, None);
        let last = text.lines().last().unwrap();
        assert_eq!(
            last.split_whitespace().collect::<Vec<_>>(),
            ["work", "/", "plain", "(times)", "2.00", "1.25", "2.00"],
            "{text}"
        );
        assert_eq!(text.lines().count(), 4, "{text}");
    }

    #[test]
    fn a_wrong_result_names_its_column_and_count() {
        let bad = Column {
            name: "sgemm".to_string(),
            unit: "GFLOP/s",
            run: Box::new(|i| Run {
                time: Duration::from_millis(1),
                verified: if i == 1 {
                    Err("c[3] is 2, not 1".to_string())
                } else {
                    Ok(())
                },
            }),
            figure: Box::new(|t, _| t.as_secs_f64()),
            rate: true,
            limit: None,
        };
        assert_eq!(
            measure(&[1, 8], 2, &[bad]),
            Err("sgemm at 8 thread(s): c[3] is 2, not 1".to_string())
        );
    }
}
