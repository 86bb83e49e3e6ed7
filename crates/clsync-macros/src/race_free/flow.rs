//! The walk as control flows: which accesses may share a barrier
//! interval (see `race_free`'s notes).

use std::collections::{BTreeSet, HashMap, HashSet};

use proc_macro2::Ident;
use syn::visit::Visit;
use syn::{BinOp, Block, Expr, ExprMethodCall};

use super::place::{Guard, Names, Place};
use crate::scan::is_wi;
use crate::uniform::is_assign;

/// A loop or labelled block the walk is in: the accesses open where its
/// `break`s and `continue`s leave.
struct Exit {
    label: Option<String>,
    is_loop: bool,
    breaks: BTreeSet<usize>,
    continues: BTreeSet<usize>,
}

/// The events the walk's state holds: below [`ASSIGNED`], a boundary (by
/// its number, [`START`] for the kernel's start) that may be the last one
/// passed on some path here; from it up, an assignment to a stable
/// variable (`assigns`) since that boundary.
const ASSIGNED: usize = 1 << 30;

/// The kernel's start, as a boundary.
const START: usize = 0;

/// The walk as control flows (see the module's notes).
///
/// Two work-items' accesses share an interval when both come after the
/// same passing of one barrier and before the next: where the barriers are
/// in control flow the group takes together (the group-level form checks
/// that it does, and stops at a divergence), after the same barrier, by
/// its place in the code. So each access is given the boundaries that may
/// be the last one passed before it (`reach`), on any path: accesses in
/// two branches of one `if` after one barrier share its interval, since
/// two work-items may take one branch each.
pub(super) struct Flow<'a> {
    wi: &'a Ident,
    at: &'a HashMap<*const ExprMethodCall, usize>,
    names: &'a Names,
    /// The events that may hold here, on some path (see [`ASSIGNED`]).
    open: BTreeSet<usize>,
    /// The number of each boundary, by its call.
    sites: HashMap<*const ExprMethodCall, usize>,
    /// The event of an assignment to each stable variable.
    assigns: HashMap<String, usize>,
    /// Per access, the boundaries that may be the last one passed before
    /// it: two accesses whose sets meet may share an interval.
    pub(super) reach: Vec<BTreeSet<usize>>,
    /// Per access, what its index says of its element where it is.
    pub(super) places: Vec<Place>,
    /// The stable variables some access relies on in an interval where
    /// they may have been assigned before it: their value may differ
    /// between two accesses of the interval.
    pub(super) unstable: HashSet<String>,
    /// The conditions that hold here.
    guards: Vec<Guard>,
    loops: Vec<Exit>,
    /// The flags of the barriers taken as boundaries, each barrier once.
    pub(super) boundaries: Vec<Expr>,
}

impl<'a> Flow<'a> {
    /// A walk for `n` accesses, found at `at`, of a kernel whose work-item
    /// is `wi`.
    pub(super) fn new(
        wi: &'a Ident,
        at: &'a HashMap<*const ExprMethodCall, usize>,
        names: &'a Names,
        n: usize,
    ) -> Self {
        let mut stable: Vec<&String> = names.stable.iter().collect();
        stable.sort();
        Flow {
            wi,
            at,
            names,
            open: BTreeSet::from([START]),
            sites: HashMap::new(),
            assigns: stable
                .into_iter()
                .enumerate()
                .map(|(i, s)| (s.clone(), ASSIGNED + i))
                .collect(),
            reach: vec![BTreeSet::new(); n],
            places: vec![Place::default(); n],
            unstable: HashSet::new(),
            guards: Vec::new(),
            loops: Vec::new(),
            boundaries: Vec::new(),
        }
    }

    /// Walks `body` where `cond` holds.
    fn guarded(&mut self, cond: &Expr, body: &Block) {
        let guards = self.names.guards(cond);
        let depth = self.guards.len();
        self.guards.extend(guards);
        self.visit_block(body);
        self.guards.truncate(depth);
    }

    /// An assignment to `target`: if it is a stable variable, its value
    /// may differ for the accesses after it in this interval.
    fn assigned(&mut self, target: &Expr) {
        if let Expr::Path(p) = target {
            if let Some(&e) = p
                .path
                .get_ident()
                .and_then(|i| self.assigns.get(&i.to_string()))
            {
                self.open.insert(e);
            }
        }
    }

    /// Whether `m` is a work-group barrier whose flags are spelled with
    /// `LOCAL`: `wi.barrier(LOCAL)`, `wi.work_group_barrier(LOCAL |
    /// GLOBAL)`.
    fn boundary(&self, m: &ExprMethodCall) -> bool {
        fn spelled_local(e: &Expr) -> bool {
            match e {
                Expr::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "LOCAL"),
                Expr::Binary(b) if matches!(b.op, BinOp::BitOr(_)) => {
                    only_paths(&b.left)
                        && only_paths(&b.right)
                        && (spelled_local(&b.left) || spelled_local(&b.right))
                }
                Expr::Paren(p) => spelled_local(&p.expr),
                _ => false,
            }
        }
        fn only_paths(e: &Expr) -> bool {
            match e {
                Expr::Path(p) => p.qself.is_none(),
                Expr::Binary(b) if matches!(b.op, BinOp::BitOr(_)) => {
                    only_paths(&b.left) && only_paths(&b.right)
                }
                Expr::Paren(p) => only_paths(&p.expr),
                _ => false,
            }
        }
        is_wi(&m.receiver, self.wi)
            && matches!(
                m.method.to_string().as_str(),
                "barrier" | "work_group_barrier"
            )
            && m.args.len() == 1
            && only_paths(&m.args[0])
            && spelled_local(&m.args[0])
    }

    /// The loop or labelled block a `break` or `continue` with `label`
    /// leaves.
    fn exit(&mut self, label: Option<&syn::Lifetime>) -> Option<&mut Exit> {
        let label = label.map(|l| l.ident.to_string());
        self.loops.iter_mut().rev().find(|e| match &label {
            Some(l) => e.label.as_ref() == Some(l),
            None => e.is_loop,
        })
    }

    /// Runs a loop's body until the accesses open at its top stop growing;
    /// `cond` is its condition, evaluated at the top. The accesses open
    /// after it: at the top once the condition is evaluated, where
    /// `exits_at_top`, and where its `break`s leave.
    fn run_loop(
        &mut self,
        label: Option<&syn::Label>,
        cond: Option<&Expr>,
        body: &Block,
        exits_at_top: bool,
    ) {
        self.loops.push(Exit {
            label: label.map(|l| l.name.ident.to_string()),
            is_loop: true,
            breaks: BTreeSet::new(),
            continues: BTreeSet::new(),
        });
        let mut head = self.open.clone();
        let top = loop {
            self.open = head.clone();
            if let Some(c) = cond {
                self.visit_expr(c);
            }
            let top = self.open.clone();
            match cond {
                Some(c) => self.guarded(c, body),
                None => self.visit_block(body),
            }
            let exit = self.loops.last().expect("pushed above");
            let mut next = head.clone();
            next.extend(self.open.iter().copied());
            next.extend(exit.continues.iter().copied());
            if next == head {
                break top;
            }
            head = next;
        };
        let exit = self.loops.pop().expect("pushed above");
        self.open = if exits_at_top { top } else { BTreeSet::new() };
        self.open.extend(exit.breaks);
    }
}

impl<'ast> Visit<'ast> for Flow<'_> {
    fn visit_expr_method_call(&mut self, m: &'ast ExprMethodCall) {
        self.visit_expr(&m.receiver);
        for a in &m.args {
            self.visit_expr(a);
        }
        if self.boundary(m) {
            let next = self.sites.len() + 1;
            let site = *self.sites.entry(m as *const _).or_insert_with(|| {
                // A loop's walk meets its barriers again: each once here.
                self.boundaries.push(m.args[0].clone());
                next
            });
            self.open.clear();
            self.open.insert(site);
        } else if let Some(&x) = self.at.get(&(m as *const _)) {
            let place = self.names.place(&m.args[0], &self.guards);
            for u in &place.uses {
                if self.assigns.get(u).is_some_and(|e| self.open.contains(e)) {
                    self.unstable.insert(u.clone());
                }
            }
            self.places[x] = place;
            let last = self.open.range(..ASSIGNED).copied();
            self.reach[x].extend(last);
        }
    }

    fn visit_expr_if(&mut self, e: &'ast syn::ExprIf) {
        self.visit_expr(&e.cond);
        let entry = self.open.clone();
        self.guarded(&e.cond, &e.then_branch);
        let then = std::mem::replace(&mut self.open, entry);
        if let Some((_, other)) = &e.else_branch {
            self.visit_expr(other);
        }
        self.open.extend(then);
    }

    fn visit_expr_match(&mut self, e: &'ast syn::ExprMatch) {
        self.visit_expr(&e.expr);
        let entry = std::mem::take(&mut self.open);
        let mut out = BTreeSet::new();
        for arm in &e.arms {
            self.open = entry.clone();
            if let Some((_, guard)) = &arm.guard {
                self.visit_expr(guard);
            }
            self.visit_expr(&arm.body);
            out.extend(std::mem::take(&mut self.open));
        }
        self.open = out;
    }

    fn visit_expr_assign(&mut self, e: &'ast syn::ExprAssign) {
        self.visit_expr(&e.right);
        self.visit_expr(&e.left);
        self.assigned(&e.left);
    }

    fn visit_expr_binary(&mut self, e: &'ast syn::ExprBinary) {
        if is_assign(&e.op) {
            self.visit_expr(&e.right);
            self.visit_expr(&e.left);
            return self.assigned(&e.left);
        }
        self.visit_expr(&e.left);
        if matches!(e.op, BinOp::And(_) | BinOp::Or(_)) {
            // The right side may not run.
            let entry = self.open.clone();
            self.visit_expr(&e.right);
            self.open.extend(entry);
        } else {
            self.visit_expr(&e.right);
        }
    }

    fn visit_expr_while(&mut self, e: &'ast syn::ExprWhile) {
        self.run_loop(e.label.as_ref(), Some(&e.cond), &e.body, true);
    }

    fn visit_expr_for_loop(&mut self, e: &'ast syn::ExprForLoop) {
        self.visit_expr(&e.expr);
        self.run_loop(e.label.as_ref(), None, &e.body, true);
    }

    fn visit_expr_loop(&mut self, e: &'ast syn::ExprLoop) {
        self.run_loop(e.label.as_ref(), None, &e.body, false);
    }

    fn visit_expr_block(&mut self, e: &'ast syn::ExprBlock) {
        let Some(label) = &e.label else {
            return self.visit_block(&e.block);
        };
        self.loops.push(Exit {
            label: Some(label.name.ident.to_string()),
            is_loop: false,
            breaks: BTreeSet::new(),
            continues: BTreeSet::new(),
        });
        self.visit_block(&e.block);
        let exit = self.loops.pop().expect("pushed above");
        self.open.extend(exit.breaks);
    }

    fn visit_expr_break(&mut self, e: &'ast syn::ExprBreak) {
        if let Some(v) = &e.expr {
            self.visit_expr(v);
        }
        let open = std::mem::take(&mut self.open);
        if let Some(exit) = self.exit(e.label.as_ref()) {
            exit.breaks.extend(open);
        }
    }

    fn visit_expr_continue(&mut self, e: &'ast syn::ExprContinue) {
        let open = std::mem::take(&mut self.open);
        if let Some(exit) = self.exit(e.label.as_ref()) {
            exit.continues.extend(open);
        }
    }

    fn visit_expr_return(&mut self, e: &'ast syn::ExprReturn) {
        if let Some(v) = &e.expr {
            self.visit_expr(v);
        }
        // Nothing of this work-item follows.
        self.open.clear();
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        let Some(init) = &l.init else { return };
        self.visit_expr(&init.expr);
        if let Some((_, other)) = &init.diverge {
            // It leaves (through a `break`, `continue` or `return` the
            // walk follows); the `let` goes on from before it.
            let entry = self.open.clone();
            self.visit_expr(other);
            self.open = entry;
        }
    }

    // Code that runs elsewhere or is not parsed: no tracked view is named
    // there (`plain_uses`), and a barrier there is no boundary.
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {}
    fn visit_macro(&mut self, _: &'ast syn::Macro) {}
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}
