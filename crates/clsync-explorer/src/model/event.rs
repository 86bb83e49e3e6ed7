//! The events of a candidate execution and the facts about them that do not
//! depend on the choice of `rf` and `co`: the tags and static relations of
//! `opencl.cat` (`sb`, `int`, `swg`, `sdv`, `loc`, `syncbar`, `incl`, …).

use crate::syntax::{FenceFlags, Order, Scope, Space, Span, FLAG_GLOBAL, FLAG_LOCAL};

use super::relation::{Rel, Set};

/// What an event does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The initial write of a location (`IW`).
    Init,
    /// A read (`R`).
    Read,
    /// A write (`W`).
    Write,
    /// `atomic_work_item_fence` (`F`).
    Fence,
    /// A barrier (`F`, in one event: `opencl.cat` drops the entry and exit
    /// fences).
    Barrier,
}

/// One event.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// The thread (index into the test's threads), `None` for init.
    pub thread: Option<usize>,
    /// What it does.
    pub kind: Kind,
    /// The location it accesses.
    pub loc: Option<usize>,
    /// The value read or written.
    pub value: i64,
    /// Its order; `None` for plain accesses and barriers.
    pub order: Option<Order>,
    /// Its scope tag, if it has one. Plain writes carry `WorkItem`, as in
    /// the model's reference front end; plain reads carry none.
    pub scope: Option<Scope>,
    /// Fence flags of fences and barriers.
    pub flags: FenceFlags,
    /// The barrier's name, for barriers.
    pub barrier: Option<u32>,
    /// Whether it is the read or the write of a read-modify-write.
    pub rmw: bool,
    /// Where it comes from in the test.
    pub span: Span,
}

/// A location of the test.
#[derive(Clone, Debug, PartialEq)]
pub struct Location {
    /// Its name.
    pub name: String,
    /// Its initial value.
    pub init: i64,
    /// Its address space; `None` if no thread declares it.
    pub space: Option<Space>,
    /// Whether it is an atomic location (else `NAL`, a non-atomic location).
    pub atomic: bool,
}

/// Where a thread runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Work-group (globally unique).
    pub work_group: usize,
    /// Device.
    pub device: usize,
}

/// The events of an execution, with every tag and static relation the
/// model uses. Events `0..locations` are the init writes.
#[derive(Clone, Debug)]
pub struct Static {
    /// The events.
    pub events: Vec<Event>,
    /// `R`.
    pub reads: Set,
    /// `W` (init writes included).
    pub writes: Set,
    /// `F` (fences and barriers).
    pub fences: Set,
    /// `IW`.
    pub init: Set,
    /// Writes that are the write of a read-modify-write (`RMW & W`).
    pub rmw_writes: Set,
    /// `Acq = (ACQ | SC | ACQ_REL) & (R | F)`.
    pub acq: Set,
    /// `Rel = (REL | SC | ACQ_REL) & (W | F)`.
    pub rel: Set,
    /// `SC`.
    pub sc: Set,
    /// Events with the `WI` scope tag.
    pub wi_scoped: Set,
    /// `dynamic_tag(GLOBAL)`.
    pub global: Set,
    /// `dynamic_tag(LOCAL)`.
    pub local: Set,
    /// `dynamic_tag(NAL)`.
    pub nal: Set,
    /// `dynamic_tag(~NAL)`.
    pub not_nal: Set,
    /// `sb` (= `po`).
    pub sb: Rel,
    /// `Fsb?` = `([F]; sb)?`.
    pub fsb_opt: Rel,
    /// `sbF?` = `(sb; [F])?`.
    pub sbf_opt: Rel,
    /// `int` (`wi`): same thread (each init write alone).
    pub wi: Rel,
    /// `swg`: same work-group.
    pub swg: Rel,
    /// `loc`: same location.
    pub loc: Rel,
    /// `incl`: inclusive scopes.
    pub incl: Rel,
    /// `rmw`: each read-modify-write's read to its write.
    pub rmw: Rel,
    /// `bar_sw(dynamic_tag(GLOBAL))`.
    pub bar_sw_global: Rel,
    /// `bar_sw(dynamic_tag(LOCAL))`.
    pub bar_sw_local: Rel,
    /// `scf`.
    pub scf: Rel,
    /// `(G; sb; G) | (G; IW * ~IW; G)`, the base of `ghb`.
    pub ghb_base: Rel,
    /// The same for `lhb`.
    pub lhb_base: Rel,
    /// `cnf` = `((W*W) | (W*R) | (R*W)) & loc`.
    pub cnf: Rel,
}

impl Static {
    /// Computes the tags and static relations of `events`, the first
    /// `locations.len()` of which are the init writes.
    pub fn new(events: Vec<Event>, locations: &[Location], placement: &[Placement]) -> Static {
        let n = events.len();
        let mut s = Static {
            reads: Set::EMPTY,
            writes: Set::EMPTY,
            fences: Set::EMPTY,
            init: Set::EMPTY,
            rmw_writes: Set::EMPTY,
            acq: Set::EMPTY,
            rel: Set::EMPTY,
            sc: Set::EMPTY,
            wi_scoped: Set::EMPTY,
            global: Set::EMPTY,
            local: Set::EMPTY,
            nal: Set::EMPTY,
            not_nal: Set::EMPTY,
            sb: Rel::new(n),
            fsb_opt: Rel::new(n),
            sbf_opt: Rel::new(n),
            wi: Rel::new(n),
            swg: Rel::new(n),
            loc: Rel::new(n),
            incl: Rel::new(n),
            rmw: Rel::new(n),
            bar_sw_global: Rel::new(n),
            bar_sw_local: Rel::new(n),
            scf: Rel::new(n),
            ghb_base: Rel::new(n),
            lhb_base: Rel::new(n),
            cnf: Rel::new(n),
            events,
        };
        let ev = &s.events;
        for (i, e) in ev.iter().enumerate() {
            match e.kind {
                Kind::Init => {
                    s.init.insert(i);
                    s.writes.insert(i);
                }
                Kind::Read => s.reads.insert(i),
                Kind::Write => s.writes.insert(i),
                Kind::Fence | Kind::Barrier => s.fences.insert(i),
            }
            if e.rmw && e.kind == Kind::Write {
                s.rmw_writes.insert(i);
            }
            let is_rw_f = |k: Kind, a: Kind| k == a || matches!(k, Kind::Fence | Kind::Barrier);
            match e.order {
                Some(Order::SeqCst) => {
                    s.sc.insert(i);
                    if is_rw_f(e.kind, Kind::Read) {
                        s.acq.insert(i);
                    }
                    if is_rw_f(e.kind, Kind::Write) {
                        s.rel.insert(i);
                    }
                }
                Some(Order::AcqRel) => {
                    if is_rw_f(e.kind, Kind::Read) {
                        s.acq.insert(i);
                    }
                    if is_rw_f(e.kind, Kind::Write) {
                        s.rel.insert(i);
                    }
                }
                Some(Order::Acquire) if is_rw_f(e.kind, Kind::Read) => s.acq.insert(i),
                Some(Order::Release) if is_rw_f(e.kind, Kind::Write) => s.rel.insert(i),
                _ => {}
            }
            if e.scope == Some(Scope::WorkItem) {
                s.wi_scoped.insert(i);
            }
            // dynamic_tag(X): a memory event takes X from its location's
            // init write; a fence or barrier from its own flags.
            match e.loc {
                Some(l) => {
                    let loc = &locations[l];
                    if loc.space == Some(Space::Global) {
                        s.global.insert(i);
                    }
                    if loc.space == Some(Space::Local) {
                        s.local.insert(i);
                    }
                    if loc.atomic {
                        s.not_nal.insert(i);
                    } else {
                        s.nal.insert(i);
                    }
                }
                None => {
                    if e.flags & FLAG_GLOBAL != 0 {
                        s.global.insert(i);
                    }
                    if e.flags & FLAG_LOCAL != 0 {
                        s.local.insert(i);
                    }
                    s.not_nal.insert(i);
                }
            }
        }
        let place = |e: &Event| e.thread.map(|t| placement[t]);
        for (a, ea) in ev.iter().enumerate() {
            for (b, eb) in ev.iter().enumerate() {
                let same_thread = match (ea.thread, eb.thread) {
                    (Some(x), Some(y)) => x == y,
                    _ => a == b,
                };
                if same_thread {
                    s.wi.add(a, b);
                    if a < b && ea.thread.is_some() {
                        s.sb.add(a, b);
                    }
                }
                let (pa, pb) = (place(ea), place(eb));
                let same_dev = matches!((pa, pb), (Some(x), Some(y)) if x.device == y.device);
                let same_wg = same_dev
                    && matches!((pa, pb), (Some(x), Some(y)) if x.work_group == y.work_group);
                if same_wg {
                    s.swg.add(a, b);
                }
                if ea.loc.is_some() && ea.loc == eb.loc {
                    s.loc.add(a, b);
                }
                // incl = (swg & (WG*WG)) | (sdv & (DV*DV)) | (ALL*ALL)
                let incl = match (ea.scope, eb.scope) {
                    (Some(Scope::WorkGroup), Some(Scope::WorkGroup)) => same_wg,
                    (Some(Scope::Device), Some(Scope::Device)) => same_dev,
                    (Some(Scope::AllSvmDevices), Some(Scope::AllSvmDevices)) => true,
                    _ => false,
                };
                if incl {
                    s.incl.add(a, b);
                }
                // syncbar: the same barrier; bar_sw(r) = r; syncbar & ~wi & swg; r
                if ea.kind == Kind::Barrier
                    && eb.kind == Kind::Barrier
                    && ea.barrier == eb.barrier
                    && !same_thread
                    && same_wg
                {
                    if s.global.has(a) && s.global.has(b) {
                        s.bar_sw_global.add(a, b);
                    }
                    if s.local.has(a) && s.local.has(b) {
                        s.bar_sw_local.add(a, b);
                    }
                }
                // scf = (SC * SC) | ((G & L); unv; (G & L))
                let gl = |x: usize| s.global.has(x) && s.local.has(x);
                if (s.sc.has(a) && s.sc.has(b)) || (gl(a) && gl(b)) {
                    s.scf.add(a, b);
                }
                let conflict = (s.writes.has(a) && (s.writes.has(b) || s.reads.has(b)))
                    || (s.reads.has(a) && s.writes.has(b));
                if conflict && s.loc.has(a, b) {
                    s.cnf.add(a, b);
                }
            }
        }
        for (i, e) in ev.iter().enumerate() {
            // The write of a read-modify-write follows its read directly.
            if e.rmw
                && e.kind == Kind::Write
                && i > 0
                && ev[i - 1].rmw
                && ev[i - 1].kind == Kind::Read
            {
                s.rmw.add(i - 1, i);
            }
        }
        let all = Set::all(n);
        s.fsb_opt = s.sb.restrict(s.fences, all).opt();
        s.sbf_opt = s.sb.restrict(all, s.fences).opt();
        let not_init = all.minus(s.init);
        s.ghb_base = s.sb.restrict(s.global, s.global).or(&Rel::product(
            n,
            s.init.and(s.global),
            not_init.and(s.global),
        ));
        s.lhb_base = s.sb.restrict(s.local, s.local).or(&Rel::product(
            n,
            s.init.and(s.local),
            not_init.and(s.local),
        ));
        s
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether there are no events.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// `ur`: two conflicting accesses of one work-item that `sb` does not
    /// order (an unsequenced race). Statically known.
    pub fn unsequenced_race(&self) -> Option<(usize, usize)> {
        let sym = self.sb.or(&self.sb.inverse());
        self.wi.and(&self.cnf).minus(&sym).minus_id().pairs().next()
    }
}
