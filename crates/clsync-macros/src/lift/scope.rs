//! The names in scope in the lifted code: which are kept per work-item in
//! slots, which are local ids taken from the work-item again, which the
//! group holds, and the innermost binding of a name.

use std::collections::HashSet;

use super::{Binding, Id, Lifter};

impl Lifter {
    /// The binding each name refers to here (its innermost, latest one),
    /// once per name.
    fn innermost(&self) -> impl Iterator<Item = &Binding> {
        let mut seen = HashSet::new();
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .filter(move |b| seen.insert(b.name.clone()))
    }

    /// The per-work-item variables visible here that `used` names, with
    /// their slots.
    pub(super) fn visible(&self, used: &HashSet<String>) -> Vec<(String, usize)> {
        self.innermost()
            .filter(|b| used.contains(&b.name))
            .filter_map(|b| Some((b.name.clone(), b.slot?)))
            .collect()
    }

    /// The id variables visible here that `used` names (`let l =
    /// wi.get_local_id(0)` and the like), with the id each holds: they
    /// have no slot, as each loop takes them from its work-item
    /// again, which costs nothing where a slot costs a store per work-item
    /// and a load in every later loop.
    pub(super) fn visible_ids(&self, used: &HashSet<String>) -> Vec<(String, Id)> {
        self.innermost()
            .filter(|b| used.contains(&b.name) && b.slot.is_none())
            .filter_map(|b| Some((b.name.clone(), b.id?)))
            .collect()
    }

    /// Adds a binding to the innermost block.
    pub(super) fn bind(&mut self, name: String, slot: Option<usize>, uniform: bool, mutable: bool) {
        self.scopes
            .last_mut()
            .expect("inside a block")
            .push(Binding {
                name,
                slot,
                uniform,
                mutable,
                id: None,
                view: false,
            });
    }

    /// The binding `name` refers to here: the innermost, latest one.
    pub(super) fn binding(&self, name: &str) -> Option<&Binding> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|b| b.name == name)
    }

    /// Whether the variable `name` refers to here is `mut`.
    pub(super) fn is_mut(&self, name: &str) -> bool {
        self.binding(name).is_some_and(|b| b.mutable)
    }

    /// Whether the binding `name` refers to here is uniform (`None`: not a
    /// variable of the kernel body).
    pub(super) fn lookup_uniform(&self, name: &str) -> Option<bool> {
        self.binding(name).map(|b| b.uniform)
    }

    /// Whether a new `name` here would hide a per-work-item variable of an
    /// enclosing block (one the lifting is inside, not this one).
    pub(super) fn shadows_outer(&self, name: &str) -> bool {
        let n = self.scopes.len();
        self.scopes[..n - 1]
            .iter()
            .flat_map(|s| s.iter())
            .any(|b| b.name == name && (b.slot.is_some() || b.id.is_some()))
    }
}
