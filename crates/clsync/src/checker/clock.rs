//! Vector clocks over work-items and work-groups: what a work-item knows to
//! have happened before its next access.
//!
//! A full vector clock per work-item would have an entry per work-item of the
//! launch. Most knowledge in a kernel comes from work-group barriers, which
//! order *every* access of a group before the barrier, so a [`Clock`] has two
//! kinds of entry:
//!
//! * `group g ↦ k`: every access of work-group `g` made before its `k`-th
//!   work-group barrier (for the clock's address space) is known;
//! * `item x ↦ s`: every access of work-item `x` made at step `s` or earlier
//!   is known. A work-item's step advances at each release it performs and
//!   at each barrier.
//!
//! Entries are kept sorted, so a join is a merge and a lookup a binary
//! search.

/// A vector clock. The empty clock knows nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Clock {
    groups: Vec<(u32, u32)>,
    items: Vec<(u32, u32)>,
}

/// One access's place in its work-item's and work-group's history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Epoch {
    /// Global linear id of the work-item.
    pub(crate) item: u32,
    /// Linear id of its work-group.
    pub(crate) group: u32,
    /// The work-item's step when it made the access.
    pub(crate) step: u32,
    /// Work-group barriers (covering the access's space) the group had
    /// passed.
    pub(crate) barriers: u32,
}

impl Clock {
    /// Whether an access at `e` is known to this clock.
    pub(crate) fn knows(&self, e: &Epoch) -> bool {
        lookup(&self.groups, e.group).is_some_and(|k| k > e.barriers)
            || lookup(&self.items, e.item).is_some_and(|s| s >= e.step)
    }

    /// Whether it knows nothing.
    pub(crate) fn is_empty(&self) -> bool {
        self.groups.is_empty() && self.items.is_empty()
    }

    /// Adds every access of `group` before its `barriers`-th barrier.
    pub(crate) fn set_group(&mut self, group: u32, barriers: u32) {
        raise(&mut self.groups, group, barriers);
    }

    /// Adds every access of `item` up to `step`.
    pub(crate) fn set_item(&mut self, item: u32, step: u32) {
        raise(&mut self.items, item, step);
    }

    /// Learns everything `other` knows.
    pub(crate) fn join(&mut self, other: &Clock) {
        merge(&mut self.groups, &other.groups);
        merge(&mut self.items, &other.items);
    }

    /// Whether every entry of `other` is already known here.
    pub(crate) fn covers(&self, other: &Clock) -> bool {
        let all = |mine: &[(u32, u32)], theirs: &[(u32, u32)]| {
            theirs
                .iter()
                .all(|&(k, v)| lookup(mine, k).is_some_and(|m| m >= v))
        };
        all(&self.groups, &other.groups) && all(&self.items, &other.items)
    }
}

fn lookup(entries: &[(u32, u32)], key: u32) -> Option<u32> {
    entries
        .binary_search_by_key(&key, |&(k, _)| k)
        .ok()
        .map(|i| entries[i].1)
}

fn raise(entries: &mut Vec<(u32, u32)>, key: u32, value: u32) {
    match entries.binary_search_by_key(&key, |&(k, _)| k) {
        Ok(i) => entries[i].1 = entries[i].1.max(value),
        Err(i) => entries.insert(i, (key, value)),
    }
}

fn merge(mine: &mut Vec<(u32, u32)>, theirs: &[(u32, u32)]) {
    if theirs.is_empty() {
        return;
    }
    if mine.is_empty() {
        mine.extend_from_slice(theirs);
        return;
    }
    let mut out = Vec::with_capacity(mine.len() + theirs.len());
    let (mut i, mut j) = (0, 0);
    while i < mine.len() && j < theirs.len() {
        let (a, b) = (mine[i], theirs[j]);
        match a.0.cmp(&b.0) {
            std::cmp::Ordering::Less => {
                out.push(a);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push((a.0, a.1.max(b.1)));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&mine[i..]);
    out.extend_from_slice(&theirs[j..]);
    *mine = out;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn epoch(item: u32, group: u32, step: u32, barriers: u32) -> Epoch {
        Epoch {
            item,
            group,
            step,
            barriers,
        }
    }

    #[test]
    fn group_entries_cover_accesses_before_the_barrier() {
        let mut c = Clock::default();
        c.set_group(3, 2);
        assert!(c.knows(&epoch(70, 3, 9, 1)));
        assert!(!c.knows(&epoch(70, 3, 9, 2)));
        assert!(!c.knows(&epoch(70, 4, 0, 0)));
    }

    #[test]
    fn item_entries_cover_steps_up_to_theirs() {
        let mut c = Clock::default();
        c.set_item(5, 4);
        assert!(c.knows(&epoch(5, 0, 4, 7)));
        assert!(!c.knows(&epoch(5, 0, 5, 0)));
    }

    proptest! {
        /// Join against a map-based model: the join's entry for each key is
        /// the maximum of the two.
        #[test]
        fn join_is_pointwise_max(
            a in proptest::collection::vec((0u32..20, 0u32..9), 0..12),
            b in proptest::collection::vec((0u32..20, 0u32..9), 0..12),
        ) {
            let (mut ca, mut cb) = (Clock::default(), Clock::default());
            let mut model: BTreeMap<u32, u32> = BTreeMap::new();
            for &(k, v) in &a { ca.set_item(k, v); let e = model.entry(k).or_insert(v); *e = (*e).max(v); }
            for &(k, v) in &b { cb.set_item(k, v); let e = model.entry(k).or_insert(v); *e = (*e).max(v); }
            let mut joined = ca.clone();
            joined.join(&cb);
            prop_assert!(joined.covers(&ca) && joined.covers(&cb));
            prop_assert_eq!(joined.items, model.into_iter().collect::<Vec<_>>());
        }
    }
}
