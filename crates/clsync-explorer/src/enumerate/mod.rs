//! Enumerating every candidate execution of a test and keeping the ones the
//! model allows.
//!
//! 1. **Values.** Each location gets a finite domain of values its reads may
//!    return: its initial value, the constants of the program and of the
//!    final condition, and whatever the threads can write given the current
//!    domains, iterated until it stops changing. Seeding with the
//!    condition's constants is what lets self-justifying (out-of-thin-air)
//!    cycles that the model does not forbid, such as `thinair.litmus`, be
//!    found; a value reachable only through such a cycle *and* absent from
//!    the test's constants is not explored.
//! 2. **Traces.** Each thread is run once per choice of read values
//!    ([`program::traces`]).
//! 3. **Combinations.** One trace per thread, pruned as soon as a read's
//!    value cannot be written by any chosen or remaining thread
//!    (`search.rs`).
//! 4. **Witnesses.** For each combination, every `co` (a total order of each
//!    location's writes, init first) and every `rf` (each read from a write
//!    of the same location and value). Each candidate is checked against
//!    the axioms of [`crate::model::opencl`], after the necessary
//!    conditions single axioms give have skipped what they can (`prune.rs`).

pub mod program;
mod prune;
mod search;

use std::collections::BTreeSet;

use serde::Serialize;

use crate::model::event::{Event, Kind, Static};
use crate::syntax::{Quantifier, Span, Test, Var};
pub use program::Limits;
use program::{Program, Trace};
use search::Search;

/// Options of an exploration.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Limits on running threads.
    pub limits: Limits,
}

/// One side of a race, described for a report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Access {
    /// The thread, `P<n>`.
    pub thread: usize,
    /// `read`, `write`, `atomic read`, …
    pub kind: String,
    /// The location.
    pub location: String,
    /// Its order and scope, if atomic.
    pub order: Option<String>,
    /// Where in the test.
    pub span: Span,
}

/// A data race the model finds in some consistent execution.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Race {
    /// `data_race` or `unsequenced_race`, as `opencl.cat` flags them.
    pub kind: &'static str,
    /// The first access.
    pub first: Access,
    /// The second access.
    pub second: Access,
}

/// What the model allows for a test.
#[derive(Clone, Debug, Serialize)]
pub struct Exploration {
    /// The test's name.
    pub name: String,
    /// The condition's quantifier, if it has one.
    pub quantifier: Option<Quantifier>,
    /// The variables each outcome gives a value to.
    pub observed: Vec<Var>,
    /// The consistent executions.
    pub executions: u64,
    /// Each final state the model allows, with how many consistent
    /// executions end in it and whether it satisfies the condition.
    pub outcomes: Vec<Outcome>,
    /// Whether some consistent execution satisfies the condition's
    /// proposition (for `exists`: the outcome is allowed).
    pub reachable: bool,
    /// Whether the condition holds: `exists` reachable, `~exists`
    /// unreachable, `forall` true of every execution.
    pub holds: bool,
    /// A data race in some consistent execution, if any: the program then
    /// has undefined behaviour.
    pub race: Option<Race>,
    /// Whether a loop bound cut some path (the results cover the paths
    /// within the bound).
    pub bounded: bool,
}

/// One allowed final state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The value of each observed variable, in [`Exploration::observed`]
    /// order.
    pub values: Vec<i64>,
    /// Consistent executions ending here.
    pub count: u64,
    /// Whether it satisfies the condition's proposition.
    pub satisfies: bool,
}

/// Why a test could not be explored.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExploreError {
    /// A name that resolves to nothing, or the like.
    #[error(transparent)]
    Lower(#[from] program::LowerError),
    /// Too large to enumerate.
    #[error("{0}")]
    TooLarge(String),
}

/// Enumerates every consistent execution of `test`.
pub fn explore(test: &Test, options: &Options) -> Result<Exploration, ExploreError> {
    let program = Program::lower(test)?;
    let (domain, mut bounded) = domains(&program, options.limits)?;
    let mut per_thread = Vec::with_capacity(program.threads.len());
    for i in 0..program.threads.len() {
        let t = program::traces(&program, i, &domain, options.limits)
            .map_err(ExploreError::TooLarge)?;
        bounded |= t.cut;
        per_thread.push(t.traces);
    }
    let observed = observed_vars(test, &program);
    let mut search = Search::new(&program, test, &observed, options.limits.max_candidates);
    // What each thread could still write, for pruning.
    let writable: Vec<BTreeSet<(usize, i64)>> = per_thread
        .iter()
        .map(|ts| {
            ts.iter()
                .flat_map(|t| t.events.iter())
                .filter(|e| e.kind == Kind::Write)
                .map(|e| (e.loc.expect("writes have a location"), e.value))
                .collect()
        })
        .collect();
    let mut later: Vec<BTreeSet<(usize, i64)>> = vec![BTreeSet::new(); per_thread.len() + 1];
    for i in (0..per_thread.len()).rev() {
        later[i] = later[i + 1].union(&writable[i]).copied().collect();
    }
    let mut chosen: Vec<&Trace> = Vec::new();
    search.combine(&per_thread, &later, &mut chosen)?;
    let (found, executions, found_race) = search.found();
    let prop = test.condition.as_ref().map(|c| &c.prop);
    let outcomes: Vec<Outcome> = found
        .into_iter()
        .map(|(values, count)| {
            let satisfies = prop.is_none_or(|p| {
                p.eval(&|v: &Var| {
                    let i = observed
                        .iter()
                        .position(|o| o == v)
                        .expect("observed covers the condition");
                    values[i]
                })
            });
            Outcome {
                values,
                count,
                satisfies,
            }
        })
        .collect();
    let reachable = outcomes.iter().any(|o| o.satisfies);
    let quantifier = test.condition.as_ref().map(|c| c.quantifier);
    let holds = match quantifier {
        Some(Quantifier::Exists) | None => reachable,
        Some(Quantifier::NotExists) => !reachable,
        Some(Quantifier::Forall) => outcomes.iter().all(|o| o.satisfies),
    };
    let race = found_race.or_else(|| unsequenced(&program, &per_thread, test));
    Ok(Exploration {
        name: test.name.clone(),
        quantifier,
        observed,
        executions,
        outcomes,
        reachable,
        holds,
        race,
        bounded,
    })
}

/// The variables outcomes are given over: the condition's, or else every
/// location and every register.
fn observed_vars(test: &Test, program: &Program) -> Vec<Var> {
    let mut vars = Vec::new();
    match &test.condition {
        Some(c) => c.prop.vars(&mut vars),
        None => {
            for t in &program.threads {
                for r in &t.regs {
                    vars.push(Var::Reg(t.id, r.clone()));
                }
            }
            for l in &program.locations {
                vars.push(Var::Loc(l.name.clone()));
            }
        }
    }
    vars
}

/// The value domains of the locations (see the module docs).
fn domains(program: &Program, limits: Limits) -> Result<(Vec<Vec<i64>>, bool), ExploreError> {
    let seed: Vec<Vec<i64>> = program
        .locations
        .iter()
        .map(|l| {
            let mut d = program.constants.clone();
            d.push(l.init);
            d.sort_unstable();
            d.dedup();
            d
        })
        .collect();
    let mut domain = seed;
    let mut cut = false;
    for _ in 0..8 {
        let mut next: Vec<BTreeSet<i64>> = program
            .locations
            .iter()
            .map(|l| BTreeSet::from([l.init]))
            .collect();
        for i in 0..program.threads.len() {
            let t = program::traces(program, i, &domain, limits).map_err(ExploreError::TooLarge)?;
            cut |= t.cut;
            for e in t.traces.iter().flat_map(|t| t.events.iter()) {
                if e.kind == Kind::Write {
                    next[e.loc.expect("writes have a location")].insert(e.value);
                }
            }
        }
        let next: Vec<Vec<i64>> = next.into_iter().map(|s| s.into_iter().collect()).collect();
        if next == domain {
            return Ok((domain, cut));
        }
        if next.iter().any(|d| d.len() > 64) {
            return Err(ExploreError::TooLarge(
                "a location can hold more than 64 different values; the test is too large to enumerate".into(),
            ));
        }
        domain = next;
    }
    Ok((domain, cut))
}

/// `ur`, which needs no `rf`: checked on the first trace combination.
fn unsequenced(program: &Program, per_thread: &[Vec<Trace>], test: &Test) -> Option<Race> {
    for traces in per_thread {
        for t in traces {
            let st = Static::new(t.events.clone(), &program.locations, &program.placement);
            if let Some((a, b)) = st.unsequenced_race() {
                return Some(Race {
                    kind: "unsequenced_race",
                    first: describe(test, program, &st.events[a]),
                    second: describe(test, program, &st.events[b]),
                });
            }
        }
    }
    None
}

fn describe(test: &Test, program: &Program, e: &Event) -> Access {
    let atomic = e.order.is_some();
    let kind = match (e.kind, atomic) {
        (Kind::Read, false) => "read",
        (Kind::Read, true) => "atomic read",
        (Kind::Write, false) => "write",
        (Kind::Write, true) => "atomic write",
        _ => "access",
    };
    Access {
        thread: e.thread.map_or(0, |t| test.threads[t].id),
        kind: kind.to_string(),
        location: e
            .loc
            .map_or_else(String::new, |l| program.locations[l].name.clone()),
        order: e
            .order
            .map(|o| format!("{}, {}", o.name(), e.scope.map_or("no scope", |s| s.name()))),
        span: e.span,
    }
}
