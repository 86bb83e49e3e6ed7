//! What an access's index says about its element, for every work-item at
//! once: the work-item's own (its local id), or on one side of a value the
//! whole group shares for the interval. A tree reduction's `if l < half {
//! s.set(l, s.get(l) + s.get(l + half)) }` writes below `half` and reads at
//! or above it: the two never meet in one interval.

use std::collections::{HashMap, HashSet};

use syn::{BinOp, Expr};

use super::Id;

/// What holds where an access runs: a condition of an `if` or a `while`
/// around it, on a local id.
#[derive(Clone, PartialEq, Eq)]
pub(super) enum Guard {
    /// `l < h`: the id `l` is below the stable value `h`.
    Below(String, String),
    /// `l == e`: the id `l` is the stable value `e`.
    Is(String, String),
}

/// What an access's index says about its element.
#[derive(Clone, Default)]
pub(super) struct Place {
    /// The element is the work-item's own: its index is this local id (or
    /// a value the id equals there, `via`).
    owner: Option<Id>,
    /// The stable value a guard says the owner's id is, which the index
    /// is.
    via: Option<String>,
    /// The element is below this stable value.
    pub(super) below: Option<String>,
    /// The element is at least this stable value.
    pub(super) at_least: Option<String>,
    /// The stable variables the above relies on: each must keep its value
    /// through the interval.
    pub(super) uses: Vec<String>,
}

impl Place {
    /// The local id whose work-item owns the element, given that the
    /// variables in `unstable` may change within an interval.
    pub(super) fn owner(&self, unstable: &HashSet<String>) -> Option<Id> {
        match &self.via {
            Some(v) if unstable.contains(v) => None,
            _ => self.owner,
        }
    }

    /// Whether no element of `self` (by one work-item) is one of `other`
    /// (by another), by their bounds, given that the variables in
    /// `unstable` may change within an interval.
    pub(super) fn apart(&self, other: &Place, unstable: &HashSet<String>) -> bool {
        let split = |below: &Option<String>, at_least: &Option<String>| matches!((below, at_least), (Some(b), Some(a)) if a == b && !unstable.contains(a));
        split(&self.below, &other.at_least) || split(&other.below, &self.at_least)
    }
}

/// The kernel's names, as an index sees them.
pub(super) struct Names {
    /// The variables holding an id (`let l = wi.get_local_id(0);`).
    pub(super) ids: HashMap<String, Id>,
    /// Every name the body binds.
    pub(super) locals: HashSet<String>,
    /// Those of `locals` whose value the whole group shares (bound once to
    /// a uniform value, and changed, if at all, only by the group's own
    /// statements).
    pub(super) stable: HashSet<String>,
}

impl Names {
    /// The value `e` is, if the whole group shares it: a literal, a
    /// constant, a parameter or a stable variable (as its text).
    pub(super) fn key(&self, e: &Expr) -> Option<String> {
        match e {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => Some(format!("#{}", i.base10_digits())),
            Expr::Path(p) if p.qself.is_none() => match p.path.get_ident() {
                Some(id) => {
                    let name = id.to_string();
                    (!self.locals.contains(&name) || self.stable.contains(&name)).then_some(name)
                }
                None => Some(quote::ToTokens::to_token_stream(&p.path).to_string()),
            },
            Expr::Paren(p) => self.key(&p.expr),
            _ => None,
        }
    }

    /// The local id `e` is, if it is a variable holding one.
    fn local_id(&self, e: &Expr) -> Option<(String, Id)> {
        let Expr::Path(p) = strip(e) else { return None };
        let name = p.path.get_ident()?.to_string();
        let id = *self.ids.get(&name)?;
        id.local().then_some((name, id))
    }

    /// What a condition that holds says of the local ids: its conjuncts
    /// `l < h`, `h > l`, `l == e` and `e == l`.
    pub(super) fn guards(&self, cond: &Expr) -> Vec<Guard> {
        match strip(cond) {
            Expr::Binary(b) if matches!(b.op, BinOp::And(_)) => {
                let mut out = self.guards(&b.left);
                out.extend(self.guards(&b.right));
                out
            }
            Expr::Binary(b) => {
                let (l, r) = (&*b.left, &*b.right);
                let below = |id: &Expr, h: &Expr| {
                    let ((l, _), h) = (self.local_id(id)?, self.key(h)?);
                    Some(Guard::Below(l, h))
                };
                let is = |id: &Expr, e: &Expr| {
                    let ((l, _), e) = (self.local_id(id)?, self.key(e)?);
                    Some(Guard::Is(l, e))
                };
                let g = match b.op {
                    BinOp::Lt(_) => below(l, r),
                    BinOp::Gt(_) => below(r, l),
                    BinOp::Eq(_) => is(l, r).or_else(|| is(r, l)),
                    _ => None,
                };
                g.into_iter().collect()
            }
            _ => Vec::new(),
        }
    }

    /// What `index` says of the element where `guards` hold.
    pub(super) fn place(&self, index: &Expr, guards: &[Guard]) -> Place {
        let mut p = Place::default();
        if let Some((l, id)) = self.local_id(index) {
            p.owner = Some(id);
            for g in guards {
                if let Guard::Below(gl, h) = g {
                    if *gl == l && p.below.is_none() {
                        p.below = Some(h.clone());
                        p.uses.push(h.clone());
                    }
                }
            }
            return p;
        }
        if let Expr::Binary(b) = strip(index) {
            if matches!(b.op, BinOp::Add(_)) {
                let (l, r) = (&*b.left, &*b.right);
                let at_least = |id: &Expr, h: &Expr| {
                    self.local_id(id)?;
                    self.key(h)
                };
                if let Some(h) = at_least(l, r).or_else(|| at_least(r, l)) {
                    p.at_least = Some(h.clone());
                    p.uses.push(h);
                }
                return p;
            }
        }
        // A stable value a guard says the id is: the work-item's own.
        if let Some(e) = self.key(index) {
            for g in guards {
                if let Guard::Is(l, ge) = g {
                    if *ge == e {
                        p.owner = self.ids.get(l).copied();
                        p.via = Some(e.clone());
                        p.uses.push(e);
                        break;
                    }
                }
            }
        }
        p
    }
}

/// `e` without parentheses.
fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip(&p.expr),
        e => e,
    }
}
