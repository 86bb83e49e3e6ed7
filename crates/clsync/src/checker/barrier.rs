//! What a barrier does to the checker's state of the work-items it
//! releases: a work-group barrier, or a sub-group's (`002_6c32435e912a3710.txt`,
//! `003_2caebc1f01141481.txt`).

use std::cell::RefCell;
use std::sync::Arc;

use super::clock::Clock;
use super::item::{spaces_of, ItemState};
use super::shadow::join_opt;
use super::state::GroupCheck;
use crate::sync::{BarrierKind, BarrierWait, MemScope};

impl GroupCheck {
    /// The scheduler released `wait`, a work-group barrier every work-item
    /// of the group waited at.
    pub(crate) fn release_group(&self, wait: BarrierWait) {
        if wait.scope < MemScope::WorkGroup {
            let n = self.items.len();
            for first in (0..n).step_by(self.sub_group_size) {
                self.release_sub_group(first, (first + self.sub_group_size).min(n), wait);
            }
            return;
        }
        // The group's own accesses before the barrier need no clock entry:
        // `wg` orders them (rule 2), and a snapshot adds the entry for
        // other groups. So the clocks change only where a work-item learned
        // something since the last barrier (`learned`); until then they
        // are all one clock, and a barrier joins none.
        let mut learned = self.learned.get();
        let mut joined: [Option<Arc<Clock>>; 3] = Default::default();
        let mut counted = [0u32; 3];
        for s in spaces_of(wait.flags) {
            counted[s] = 1;
            if learned & 1 << s != 0 {
                joined[s] = join_all(&self.items, s);
                learned &= !(1 << s);
            }
        }
        self.learned.set(learned);
        // One pass over the work-items: the counts of the spaces the
        // barrier fences (added without a test per space), the clocks
        // joined, and the step.
        let joins = joined.iter().any(Option::is_some);
        for it in self.items.iter() {
            let mut it = it.borrow_mut();
            let it = &mut *it;
            for ((wg, sg), n) in it.wg.iter_mut().zip(&mut it.sg).zip(counted) {
                *wg += n;
                *sg += n;
            }
            if joins {
                for (vc, joined) in it.vc.iter_mut().zip(&joined) {
                    if let Some(joined) = joined {
                        *vc = Some(joined.clone());
                    }
                }
            }
            it.step += 1;
        }
    }

    /// The scheduler released the work-items `first..end` (one sub-group)
    /// from `wait`.
    pub(crate) fn release_sub_group(&self, first: usize, end: usize, wait: BarrierWait) {
        debug_assert!(wait.kind == BarrierKind::SubGroup || wait.scope < MemScope::WorkGroup);
        let items = &self.items[first..end];
        // The sub-group's clocks part from the group's.
        spaces_of(wait.flags).for_each(|s| self.learn(s));
        if wait.scope >= MemScope::SubGroup {
            for s in spaces_of(wait.flags) {
                let known = join_all(items, s).or_else(|| items[0].borrow().vc[s].clone());
                let mut joined = known.as_deref().cloned().unwrap_or_default();
                for it in items {
                    let it = it.borrow();
                    joined.set_item(it.who.item, it.step);
                }
                let joined = Arc::new(joined);
                for it in items {
                    let mut it = it.borrow_mut();
                    it.sg[s] += 1;
                    it.vc[s] = Some(joined.clone());
                }
            }
        }
        for it in items {
            it.borrow_mut().step += 1;
        }
    }
}

/// What the work-items `items` know together in space `s`, if that is
/// more than each one knows (`None`: they all hold one clock already, or
/// none, as they do from one barrier until one of them acquires
/// something).
fn join_all(items: &[RefCell<ItemState>], s: usize) -> Option<Arc<Clock>> {
    let first = items.first()?.borrow().vc[s].clone();
    let same = |vc: &Option<Arc<Clock>>| match (vc, &first) {
        (None, None) => true,
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        _ => false,
    };
    if items[1..].iter().all(|it| same(&it.borrow().vc[s])) {
        return None;
    }
    let mut joined = first;
    for it in &items[1..] {
        join_opt(&mut joined, &it.borrow().vc[s]);
    }
    // Some differ, so some hold a clock: the join is one.
    joined
}
