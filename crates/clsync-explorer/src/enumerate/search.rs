//! The search: one trace per thread, then every `co` and `rf` for each
//! combination, each candidate checked against the model.

use std::collections::{BTreeMap, BTreeSet};

use super::program::{Program, Trace};
use super::prune::Prune;
use super::{describe, ExploreError, Race};
use crate::model::event::{Event, Kind, Static};
use crate::model::opencl;
use crate::model::relation::{Rel, MAX_EVENTS};
use crate::syntax::{Span, Test, Var};

/// The search's state: what it has found so far, and its budget.
pub(super) struct Search<'a> {
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
    /// A search over `program` (lowered from `test`) that reports outcomes
    /// over `observed` and checks at most `budget` candidates.
    pub(super) fn new(
        program: &'a Program,
        test: &'a Test,
        observed: &'a [Var],
        budget: u64,
    ) -> Self {
        Search {
            program,
            test,
            observed,
            outcomes: BTreeMap::new(),
            executions: 0,
            race: None,
            candidates: 0,
            budget,
        }
    }

    /// What it found: each outcome with the number of executions that give
    /// it, the number of allowed executions, and the first race seen.
    pub(super) fn found(self) -> (BTreeMap<Vec<i64>, u64>, u64, Option<Race>) {
        (self.outcomes, self.executions, self.race)
    }

    /// Chooses a trace for each thread in turn.
    pub(super) fn combine(
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
