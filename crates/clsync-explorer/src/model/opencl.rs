//! The OpenCL memory model of `shared/litmus/opencl.cat` (Wickerson et al.'s
//! model with scoped SC, as Dat3M states it), one function per relation.
//!
//! | `opencl.cat` | here |
//! | --- | --- |
//! | `mo = dynamic_tag(~NAL); co; dynamic_tag(~NAL)` | [`Derived::mo`] |
//! | `rb = rf^-1; mo` (every read reads from a write here) | [`Derived::rb`] |
//! | `rs_prime`, `rs` | [`release_sequence`] |
//! | `ra_sw(r)` | [`ra_sw`] |
//! | `bar_sw(r)`, `scf` | [`Static::bar_sw_global`], [`Static::scf`] |
//! | `gsw`, `lsw`, `ghb`, `lhb` | [`Derived::ghb`], [`Derived::lhb`] |
//! | `O-HbG`, `O-HbL`, `O-CohG`, `O-CohL`, `O-Rf`, `O-NaRfG`, `O-NaRfL`, `atomic`, `O-Sscoped` | [`check`] |
//! | `dr` (`data_race`), `ur` (`unsequenced_race`) | [`Verdict::data_race`], [`Static::unsequenced_race`] |

use super::event::Static;
use super::relation::{Rel, Set};

/// The relations derived from one choice of `rf` and `co`.
#[derive(Clone, Debug)]
pub struct Derived {
    /// `mo`.
    pub mo: Rel,
    /// `rb`.
    pub rb: Rel,
    /// `ghb`.
    pub ghb: Rel,
    /// `lhb`.
    pub lhb: Rel,
}

/// Which axiom an execution breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axiom {
    /// `empty rmw & (fre; coe) as atomic`.
    Atomic,
    /// `irreflexive ghb as O-HbG` / `lhb as O-HbL`.
    Hb,
    /// `irreflexive coh(ghb)` / `coh(lhb)`.
    Coherence,
    /// `irreflexive rf; (ghb | lhb) as O-Rf`.
    ReadFromFuture,
    /// `O-NaRfG` / `O-NaRfL`: a non-atomic read of a write that is not
    /// visible to it.
    NonAtomicVisibility,
    /// `acyclic (SC * SC) & scp & incl as O-Sscoped`.
    ScopedSc,
}

/// A consistent execution's race verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// A pair in `dr`, if any.
    pub data_race: Option<(usize, usize)>,
}

/// `rs = mo & rs_prime & ~((mo & ~rs_prime); mo)`, with
/// `rs_prime = (_ * RMW) | wi`.
pub fn release_sequence(s: &Static, mo: &Rel) -> Rel {
    let n = s.len();
    let mut prime = Rel::product(n, Set::all(n), s.rmw_writes);
    prime = prime.or(&s.wi);
    let broken = mo.minus(&prime).seq(mo);
    mo.and(&prime).minus(&broken)
}

/// `ra_sw(r) = ((r & [Rel]); Fsb?; [W \ WI]; rs?; r; rf; [R \ WI]; sbF?;
/// ([Acq] & r)) & incl & ~wi`.
pub fn ra_sw(s: &Static, r: Set, rs_opt: &Rel, rf: &Rel) -> Rel {
    let all = Set::all(s.len());
    s.fsb_opt
        .restrict(r.and(s.rel), s.writes.minus(s.wi_scoped))
        .seq(rs_opt)
        .restrict(all, r)
        .seq(rf)
        .restrict(all, s.reads.minus(s.wi_scoped))
        .seq(&s.sbf_opt)
        .restrict(all, s.acq.and(r))
        .and(&s.incl)
        .minus(&s.wi)
}

/// Checks every axiom of the model for `rf` (write → read) and `co` (a
/// strict total order of each location's writes, init first). Returns the
/// derived relations and the race verdict if the execution is consistent,
/// or the first axiom it breaks.
pub fn check(s: &Static, rf: &Rel, co: &Rel) -> Result<(Derived, Verdict), Axiom> {
    let ext = |r: &Rel| r.minus(&s.wi);
    // atomic: empty rmw & (fre; coe)
    let rf_inv = rf.inverse();
    let fr = rf_inv.seq(co);
    if !s.rmw.and(&ext(&fr).seq(&ext(co))).is_none() {
        return Err(Axiom::Atomic);
    }
    let mo = co.restrict(s.not_nal, s.not_nal);
    let rs_opt = release_sequence(s, &mo).opt();
    let sw_g = ra_sw(s, s.global, &rs_opt, rf);
    let sw_l = ra_sw(s, s.local, &rs_opt, rf);
    // gsw = ra_sw(G) | bar_sw(G) | (scf & ra_sw(L)); lsw symmetrically.
    let gsw = sw_g.or(&s.bar_sw_global).or(&s.scf.and(&sw_l));
    let lsw = sw_l.or(&s.bar_sw_local).or(&s.scf.and(&sw_g));
    // ghb = ((G; sb; G) | (G; IW * ~IW; G) | gsw)+ \ id
    let ghb = s.ghb_base.or(&gsw).plus().minus_id();
    let lhb = s.lhb_base.or(&lsw).plus().minus_id();
    if !ghb.is_irreflexive() || !lhb.is_irreflexive() {
        return Err(Axiom::Hb);
    }
    // coh(hb) = (rf^-1)?; mo; rf?; hb
    let mo_rf = rf_inv.opt().seq(&mo).seq(&rf.opt());
    if !mo_rf.seq(&ghb).is_irreflexive() || !mo_rf.seq(&lhb).is_irreflexive() {
        return Err(Axiom::Coherence);
    }
    let hb = ghb.or(&lhb);
    if !rf.seq(&hb).is_irreflexive() {
        return Err(Axiom::ReadFromFuture);
    }
    if !non_atomic_reads_see_visible(s, rf, &ghb, s.global)
        || !non_atomic_reads_see_visible(s, rf, &lhb, s.local)
    {
        return Err(Axiom::NonAtomicVisibility);
    }
    // rb = rf^-1; mo (every read has a write it reads from)
    let rb = rf_inv.seq(&mo);
    // scp = Fsb?; (rb | mo | ghb | lhb); sbF?
    let scp = s.fsb_opt.seq(&rb.or(&mo).or(&hb)).seq(&s.sbf_opt);
    if !scp.restrict(s.sc, s.sc).and(&s.incl).is_acyclic() {
        return Err(Axiom::ScopedSc);
    }
    // dr = cnf & ~hb & ~hb^-1 & ~wi & ~incl \ ((_ * IW) | (IW * _))
    let dr = s
        .cnf
        .minus(&hb)
        .minus(&hb.inverse())
        .minus(&s.wi)
        .minus(&s.incl)
        .restrict(
            Set::all(s.len()).minus(s.init),
            Set::all(s.len()).minus(s.init),
        );
    let verdict = Verdict {
        data_race: dr.pairs().next(),
    };
    Ok((Derived { mo, rb, ghb, lhb }, verdict))
}

/// `empty (rf; (dynamic_tag(NAL) & dynamic_tag(X))) \ vis(hb)`, with
/// `vis(hb) = (W * R) & hb & loc & ~((hb & loc); [W]; hb)`.
fn non_atomic_reads_see_visible(s: &Static, rf: &Rel, hb: &Rel, space: Set) -> bool {
    let targets = s.nal.and(space).and(s.reads);
    let hb_loc = hb.and(&s.loc);
    rf.pairs().filter(|&(_, r)| targets.has(r)).all(|(w, r)| {
        if !hb_loc.has(w, r) || !s.writes.has(w) {
            return false;
        }
        // No write between them in hb at the same location.
        let later = hb_loc.row(w).and(s.writes);
        later.iter().all(|w2| !hb.has(w2, r))
    })
}
