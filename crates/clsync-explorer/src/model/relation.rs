//! Binary relations over the events of one execution, as bit matrices, and
//! sets of events as bit sets: the operators `.cat` models are written in.
//!
//! An execution has at most [`MAX_EVENTS`] events, so a set is one `u128`
//! and a relation is one `u128` per row. Composition, closure and the rest
//! are a few word operations per row.
//!
//! ```
//! use clsync_explorer::model::relation::{Rel, Set};
//! let mut r = Rel::new(3);
//! r.add(0, 1);
//! r.add(1, 2);
//! let hb = r.plus();
//! assert!(hb.has(0, 2));
//! assert!(hb.is_acyclic());
//! assert_eq!(hb.restrict(Set::single(0), Set::all(3)).count(), 2);
//! ```

/// The most events one execution may have.
pub const MAX_EVENTS: usize = 128;

/// A set of events.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Set(pub u128);

impl Set {
    /// The empty set.
    pub const EMPTY: Set = Set(0);
    /// The events `0..n`.
    pub fn all(n: usize) -> Set {
        if n >= 128 {
            Set(u128::MAX)
        } else {
            Set((1u128 << n) - 1)
        }
    }
    /// `{e}`.
    pub fn single(e: usize) -> Set {
        Set(1u128 << e)
    }
    /// Whether `e` is in the set.
    #[inline]
    pub fn has(self, e: usize) -> bool {
        self.0 >> e & 1 == 1
    }
    /// Adds `e`.
    #[inline]
    pub fn insert(&mut self, e: usize) {
        self.0 |= 1u128 << e
    }
    /// Union.
    #[inline]
    pub fn or(self, o: Set) -> Set {
        Set(self.0 | o.0)
    }
    /// Intersection.
    #[inline]
    pub fn and(self, o: Set) -> Set {
        Set(self.0 & o.0)
    }
    /// Difference.
    #[inline]
    pub fn minus(self, o: Set) -> Set {
        Set(self.0 & !o.0)
    }
    /// Whether it is empty.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The members, in increasing order.
    pub fn iter(self) -> impl Iterator<Item = usize> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            if bits == 0 {
                None
            } else {
                let e = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(e)
            }
        })
    }
}

/// A binary relation over `n` events: `rows[a]` holds every `b` with `a → b`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rel {
    rows: Vec<u128>,
}

impl Rel {
    /// The empty relation over `n` events.
    pub fn new(n: usize) -> Rel {
        assert!(n <= MAX_EVENTS, "at most {MAX_EVENTS} events");
        Rel { rows: vec![0; n] }
    }
    /// The identity on `s`: `[s]` in `.cat`.
    pub fn id_on(n: usize, s: Set) -> Rel {
        let mut r = Rel::new(n);
        for e in s.iter() {
            r.add(e, e);
        }
        r
    }
    /// `a * b`: every pair from `a` to `b`.
    pub fn product(n: usize, a: Set, b: Set) -> Rel {
        let mut r = Rel::new(n);
        for e in a.iter() {
            r.rows[e] = b.0;
        }
        r
    }
    /// Number of events.
    pub fn len(&self) -> usize {
        self.rows.len()
    }
    /// Whether it has no events at all.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
    /// Adds `a → b`.
    #[inline]
    pub fn add(&mut self, a: usize, b: usize) {
        self.rows[a] |= 1u128 << b
    }
    /// Whether `a → b`.
    #[inline]
    pub fn has(&self, a: usize, b: usize) -> bool {
        self.rows[a] >> b & 1 == 1
    }
    /// The successors of `a`.
    #[inline]
    pub fn row(&self, a: usize) -> Set {
        Set(self.rows[a])
    }
    /// Number of pairs.
    pub fn count(&self) -> usize {
        self.rows.iter().map(|r| r.count_ones() as usize).sum()
    }
    /// Whether it has no pairs.
    pub fn is_none(&self) -> bool {
        self.rows.iter().all(|r| *r == 0)
    }
    /// Every pair, by source then target.
    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.rows
            .iter()
            .enumerate()
            .flat_map(|(a, r)| Set(*r).iter().map(move |b| (a, b)))
    }
    /// `r | o`.
    pub fn or(&self, o: &Rel) -> Rel {
        Rel {
            rows: self.rows.iter().zip(&o.rows).map(|(a, b)| a | b).collect(),
        }
    }
    /// `r & o`.
    pub fn and(&self, o: &Rel) -> Rel {
        Rel {
            rows: self.rows.iter().zip(&o.rows).map(|(a, b)| a & b).collect(),
        }
    }
    /// `r \ o`.
    pub fn minus(&self, o: &Rel) -> Rel {
        Rel {
            rows: self.rows.iter().zip(&o.rows).map(|(a, b)| a & !b).collect(),
        }
    }
    /// `[a]; r; [b]`.
    pub fn restrict(&self, a: Set, b: Set) -> Rel {
        Rel {
            rows: self
                .rows
                .iter()
                .enumerate()
                .map(|(i, r)| if a.has(i) { r & b.0 } else { 0 })
                .collect(),
        }
    }
    /// `r \ id`.
    pub fn minus_id(&self) -> Rel {
        Rel {
            rows: self
                .rows
                .iter()
                .enumerate()
                .map(|(i, r)| r & !(1u128 << i))
                .collect(),
        }
    }
    /// `r?`: `r | id`.
    pub fn opt(&self) -> Rel {
        Rel {
            rows: self
                .rows
                .iter()
                .enumerate()
                .map(|(i, r)| r | (1u128 << i))
                .collect(),
        }
    }
    /// `r^-1`.
    pub fn inverse(&self) -> Rel {
        let mut t = Rel::new(self.len());
        for (a, b) in self.pairs() {
            t.add(b, a);
        }
        t
    }
    /// `r; o`.
    pub fn seq(&self, o: &Rel) -> Rel {
        Rel {
            rows: self
                .rows
                .iter()
                .map(|r| Set(*r).iter().fold(0u128, |acc, m| acc | o.rows[m]))
                .collect(),
        }
    }
    /// `r+`: the transitive closure (Warshall, a row at a time).
    pub fn plus(&self) -> Rel {
        let mut rows = self.rows.clone();
        for k in 0..rows.len() {
            let rk = rows[k];
            let bit = 1u128 << k;
            for r in rows.iter_mut() {
                if *r & bit != 0 {
                    *r |= rk;
                }
            }
        }
        Rel { rows }
    }
    /// Whether no `a → a`.
    pub fn is_irreflexive(&self) -> bool {
        self.rows.iter().enumerate().all(|(i, r)| r >> i & 1 == 0)
    }
    /// Whether it has no cycle.
    pub fn is_acyclic(&self) -> bool {
        self.plus().is_irreflexive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive_plus(pairs: &[(usize, usize)], n: usize) -> Vec<Vec<bool>> {
        let mut m = vec![vec![false; n]; n];
        for &(a, b) in pairs {
            m[a][b] = true;
        }
        for k in 0..n {
            for i in 0..n {
                for j in 0..n {
                    if m[i][k] && m[k][j] {
                        m[i][j] = true;
                    }
                }
            }
        }
        m
    }

    proptest! {
        /// The closure agrees with a plain triple loop over booleans.
        #[test]
        fn closure_matches_reference(n in 1usize..20, pairs in proptest::collection::vec((0usize..20, 0usize..20), 0..40)) {
            let pairs: Vec<_> = pairs.into_iter().filter(|(a, b)| *a < n && *b < n).collect();
            let mut r = Rel::new(n);
            for &(a, b) in &pairs { r.add(a, b); }
            let got = r.plus();
            let want = naive_plus(&pairs, n);
            for (i, row) in want.iter().enumerate() {
                for (j, &w) in row.iter().enumerate() {
                    prop_assert_eq!(got.has(i, j), w);
                }
            }
        }

        /// Composition agrees with its definition.
        #[test]
        fn seq_matches_definition(n in 1usize..16, a in proptest::collection::vec((0usize..16, 0usize..16), 0..30), b in proptest::collection::vec((0usize..16, 0usize..16), 0..30)) {
            let mut ra = Rel::new(n);
            let mut rb = Rel::new(n);
            for &(x, y) in a.iter().filter(|(x, y)| *x < n && *y < n) { ra.add(x, y); }
            for &(x, y) in b.iter().filter(|(x, y)| *x < n && *y < n) { rb.add(x, y); }
            let c = ra.seq(&rb);
            for i in 0..n {
                for j in 0..n {
                    let want = (0..n).any(|k| ra.has(i, k) && rb.has(k, j));
                    prop_assert_eq!(c.has(i, j), want);
                }
            }
        }
    }

    #[test]
    fn cycle_detection() {
        let mut r = Rel::new(3);
        r.add(0, 1);
        r.add(1, 2);
        assert!(r.is_acyclic());
        r.add(2, 0);
        assert!(!r.is_acyclic());
    }
}
