//! Necessary conditions on a candidate that single axioms give, tested
//! before the full check.

use crate::model::event::Static;
use crate::model::relation::Rel;

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
pub(super) struct Prune {
    /// Per location: in global or local memory, atomic.
    pub(super) coherent: Vec<bool>,
    /// Per location: in global or local memory, non-atomic.
    pub(super) visible: Vec<bool>,
}

impl Prune {
    pub(super) fn new(locs: &[crate::model::event::Location]) -> Prune {
        use crate::syntax::Space;
        let hb_space = |l: &crate::model::event::Location| {
            matches!(l.space, Some(Space::Global) | Some(Space::Local))
        };
        Prune {
            coherent: locs.iter().map(|l| hb_space(l) && l.atomic).collect(),
            visible: locs.iter().map(|l| hb_space(l) && !l.atomic).collect(),
        }
    }

    pub(super) fn allows(
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
