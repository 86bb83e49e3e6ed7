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
//!    value cannot be written by any chosen or remaining thread.
//! 4. **Witnesses.** For each combination, every `co` (a total order of each
//!    location's writes, init first) and every `rf` (each read from a write
//!    of the same location and value). Each candidate is checked against
//!    the axioms of [`crate::model::opencl`].

pub mod program;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::model::event::{Event, Kind, Static};
use crate::model::opencl;
use crate::model::relation::{Rel, MAX_EVENTS};
use crate::syntax::{Quantifier, Span, Test, Var};
use program::{Limits, Program, Trace};

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
    let mut search = Search {
        program: &program,
        test,
        observed: &observed,
        outcomes: BTreeMap::new(),
        executions: 0,
        race: None,
        candidates: 0,
        budget: options.limits.max_candidates,
    };
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
    let (found, executions, found_race) = (search.outcomes, search.executions, search.race);
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

struct Search<'a> {
    program: &'a Program,
    test: &'a Test,
    observed: &'a [Var],
    outcomes: BTreeMap<Vec<i64>, u64>,
    executions: u64,
    race: Option<Race>,
    /// Candidates checked so far, and the most allowed.
    candidates: u64,
    budget: u64,
}

impl<'a> Search<'a> {
    /// Chooses a trace for each thread in turn.
    fn combine(
        &mut self,
        per_thread: &'a [Vec<Trace>],
        later: &[BTreeSet<(usize, i64)>],
        chosen: &mut Vec<&'a Trace>,
    ) -> Result<(), ExploreError> {
        let k = chosen.len();
        if k == per_thread.len() {
            return self.witnesses(chosen);
        }
        'traces: for t in &per_thread[k] {
            // Every read so far must read a value some write can give.
            for e in chosen
                .iter()
                .copied()
                .chain(std::iter::once(t))
                .flat_map(|t| t.events.iter())
            {
                if e.kind != Kind::Read {
                    continue;
                }
                let loc = e.loc.expect("reads have a location");
                let ok = self.program.locations[loc].init == e.value
                    || later[k + 1].contains(&(loc, e.value))
                    || chosen
                        .iter()
                        .copied()
                        .chain(std::iter::once(t))
                        .flat_map(|t| t.events.iter())
                        .any(|w| w.kind == Kind::Write && w.loc == Some(loc) && w.value == e.value);
                if !ok {
                    continue 'traces;
                }
            }
            chosen.push(t);
            self.combine(per_thread, later, chosen)?;
            chosen.pop();
        }
        Ok(())
    }

    /// Every `co` and `rf` of one combination of traces.
    fn witnesses(&mut self, chosen: &[&Trace]) -> Result<(), ExploreError> {
        let locs = &self.program.locations;
        let mut events: Vec<Event> = locs
            .iter()
            .enumerate()
            .map(|(l, loc)| Event {
                thread: None,
                kind: Kind::Init,
                loc: Some(l),
                value: loc.init,
                order: None,
                scope: None,
                flags: 0,
                barrier: None,
                rmw: false,
                span: Span::default(),
            })
            .collect();
        for t in chosen {
            events.extend(t.events.iter().cloned());
        }
        if events.len() > MAX_EVENTS {
            return Err(ExploreError::TooLarge(format!(
                "an execution has {} events; at most {MAX_EVENTS} are supported",
                events.len()
            )));
        }
        let st = Static::new(events, locs, &self.program.placement);
        let n = st.len();
        // Writes of each location (init first), and each read's sources.
        let mut writes: Vec<Vec<usize>> = vec![Vec::new(); locs.len()];
        for w in st.writes.iter() {
            writes[st.events[w].loc.expect("writes have a location")].push(w);
        }
        let reads: Vec<usize> = st.reads.iter().collect();
        let sources: Vec<Vec<usize>> = reads
            .iter()
            .map(|&r| {
                let e = &st.events[r];
                writes[e.loc.expect("reads have a location")]
                    .iter()
                    .copied()
                    .filter(|&w| st.events[w].value == e.value)
                    .collect()
            })
            .collect();
        if sources.iter().any(|s| s.is_empty()) {
            return Ok(());
        }
        let regs: Vec<&[i64]> = chosen.iter().map(|t| t.regs.as_slice()).collect();
        let prune = Prune::new(locs);
        // co: each location's non-init writes in every order that keeps
        // CoWW where it applies.
        let perms: Vec<Vec<Vec<usize>>> = writes
            .iter()
            .enumerate()
            .map(|(l, w)| {
                let mut rest = w[1..].to_vec();
                permutations(&mut rest)
                    .into_iter()
                    .filter(|p| !prune.coherent[l] || respects_sb(&st, p))
                    .collect()
            })
            .collect();
        let mut co_state: Vec<usize> = vec![0; locs.len()];
        loop {
            let mut co = Rel::new(n);
            let mut last = Vec::with_capacity(locs.len());
            for (l, p) in perms.iter().enumerate() {
                let order = &p[co_state[l]];
                let chain: Vec<usize> = std::iter::once(writes[l][0])
                    .chain(order.iter().copied())
                    .collect();
                for i in 0..chain.len() {
                    for j in i + 1..chain.len() {
                        co.add(chain[i], chain[j]);
                    }
                }
                last.push(st.events[*chain.last().expect("init is there")].value);
            }
            let mut pick = vec![usize::MAX; reads.len()];
            let ctx = Witness {
                st: &st,
                co: &co,
                reads: &reads,
                sources: &sources,
                regs: &regs,
                memory: &last,
                prune: &prune,
            };
            self.rf_dfs(&ctx, 0, &mut pick)?;
            // Next co.
            let mut l = 0;
            loop {
                if l == perms.len() {
                    return Ok(());
                }
                co_state[l] += 1;
                if co_state[l] < perms[l].len() {
                    break;
                }
                co_state[l] = 0;
                l += 1;
            }
        }
    }

    /// Chooses the write each read reads from, read by read, dropping
    /// choices the per-location axioms already rule out.
    fn rf_dfs(
        &mut self,
        w: &Witness<'_>,
        i: usize,
        pick: &mut Vec<usize>,
    ) -> Result<(), ExploreError> {
        if i == w.reads.len() {
            return self.check_one(w, pick);
        }
        for &src in &w.sources[i] {
            if w.prune.allows(w.st, w.co, w.reads, pick, i, src) {
                pick[i] = src;
                self.rf_dfs(w, i + 1, pick)?;
            }
        }
        pick[i] = usize::MAX;
        Ok(())
    }

    fn check_one(&mut self, w: &Witness<'_>, pick: &[usize]) -> Result<(), ExploreError> {
        let mut rf = Rel::new(w.st.len());
        for (i, &r) in w.reads.iter().enumerate() {
            rf.add(pick[i], r);
        }
        self.candidates += 1;
        if self.candidates > self.budget {
            return Err(ExploreError::TooLarge(format!(
                "more than {} candidate executions; the test is too large to enumerate (lower --unroll?)",
                self.budget
            )));
        }
        if let Ok((_, verdict)) = opencl::check(w.st, &rf, w.co) {
            self.executions += 1;
            let state: Vec<i64> = self
                .observed
                .iter()
                .map(|v| self.program.var_value(v, w.regs, w.memory))
                .collect();
            *self.outcomes.entry(state).or_insert(0) += 1;
            if self.race.is_none() {
                if let Some((a, b)) = verdict.data_race {
                    self.race = Some(Race {
                        kind: "data_race",
                        first: describe(self.test, self.program, &w.st.events[a]),
                        second: describe(self.test, self.program, &w.st.events[b]),
                    });
                }
            }
        }
        Ok(())
    }
}

/// One trace combination and `co`, while `rf` is being chosen.
struct Witness<'w> {
    st: &'w Static,
    co: &'w Rel,
    reads: &'w [usize],
    sources: &'w [Vec<usize>],
    regs: &'w [&'w [i64]],
    memory: &'w [i64],
    prune: &'w Prune,
}

/// Whether a non-init write order keeps each thread's program order.
fn respects_sb(st: &Static, order: &[usize]) -> bool {
    order
        .iter()
        .enumerate()
        .all(|(i, &a)| order[i + 1..].iter().all(|&b| !st.sb.has(b, a)))
}

/// Necessary conditions on `rf` and `co` that follow from single axioms,
/// used to skip candidates before the full check.
///
/// In global and local memory `sb` is part of `ghb`/`lhb`, so for a
/// location there:
/// * a read never reads a write `sb`-after it (`O-Rf`);
/// * at an atomic location, `coh(hb)` gives the four coherence shapes:
///   CoWW (`co` keeps `sb`), CoRW, CoWR and CoRR;
/// * at a non-atomic location, a read must read a visible write
///   (`O-NaRfG`/`O-NaRfL`), so nothing `sb`-before the thread's own last
///   write to it, and not the init write once the thread wrote it.
///
/// In every space, `atomic` forbids another thread's write between a
/// read-modify-write's source and its write.
struct Prune {
    /// Per location: in global or local memory, atomic.
    coherent: Vec<bool>,
    /// Per location: in global or local memory, non-atomic.
    visible: Vec<bool>,
}

impl Prune {
    fn new(locs: &[crate::model::event::Location]) -> Prune {
        use crate::syntax::Space;
        let hb_space = |l: &crate::model::event::Location| {
            matches!(l.space, Some(Space::Global) | Some(Space::Local))
        };
        Prune {
            coherent: locs.iter().map(|l| hb_space(l) && l.atomic).collect(),
            visible: locs.iter().map(|l| hb_space(l) && !l.atomic).collect(),
        }
    }

    fn allows(
        &self,
        st: &Static,
        co: &Rel,
        reads: &[usize],
        pick: &[usize],
        i: usize,
        src: usize,
    ) -> bool {
        let r = reads[i];
        let e = &st.events[r];
        let l = e.loc.expect("reads have a location");
        // atomic: no external write between an RMW's source and its write.
        if e.rmw && r + 1 < st.len() && st.rmw.has(r, r + 1) {
            let w = r + 1;
            let between = co
                .row(src)
                .and(st.writes)
                .iter()
                .any(|x| co.has(x, w) && !st.wi.has(x, r));
            if between {
                return false;
            }
        }
        if !(self.coherent[l] || self.visible[l]) {
            return true;
        }
        // O-Rf: not a write sb-after the read.
        if st.sb.has(r, src) {
            return false;
        }
        // The thread's last write to l before r.
        let last_own = st
            .writes
            .iter()
            .filter(|&w| st.sb.has(w, r) && st.events[w].loc == Some(l))
            .max();
        if self.coherent[l] {
            // CoWR: not co-before that write.
            if last_own.is_some_and(|w| co.has(src, w)) {
                return false;
            }
            // CoRW: not co-after a write sb-after the read.
            if st
                .writes
                .iter()
                .any(|w| st.sb.has(r, w) && st.events[w].loc == Some(l) && co.has(w, src))
            {
                return false;
            }
            // CoRR: not co-before what an earlier read of l in the thread read.
            for j in 0..i {
                let rj = reads[j];
                if st.sb.has(rj, r) && st.events[rj].loc == Some(l) && co.has(src, pick[j]) {
                    return false;
                }
            }
        } else if let Some(w) = last_own {
            // Visibility: the thread's own last write hides everything
            // hb-before it.
            if src != w && (st.init.has(src) || st.sb.has(src, w)) {
                return false;
            }
        }
        true
    }
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

/// Every order of `items` (Heap's algorithm; one empty order for none).
fn permutations(items: &mut [usize]) -> Vec<Vec<usize>> {
    fn heap(k: usize, a: &mut [usize], out: &mut Vec<Vec<usize>>) {
        if k <= 1 {
            out.push(a.to_vec());
            return;
        }
        for i in 0..k {
            heap(k - 1, a, out);
            if k % 2 == 0 {
                a.swap(i, k - 1);
            } else {
                a.swap(0, k - 1);
            }
        }
    }
    let mut out = Vec::new();
    heap(items.len(), items, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::permutations;

    #[test]
    fn permutations_are_all_distinct_orders() {
        let mut v = vec![1, 2, 3, 4];
        let mut p = permutations(&mut v);
        assert_eq!(p.len(), 24);
        p.sort();
        p.dedup();
        assert_eq!(p.len(), 24);
        assert_eq!(permutations(&mut []).len(), 1);
    }
}
