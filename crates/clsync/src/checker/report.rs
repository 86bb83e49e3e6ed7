//! What the checker finds: [`Report`]s, their kinds, and how they print.

use std::collections::HashMap;
use std::fmt;

use serde_json::{json, Value};

use crate::geometry::ItemIds;
use crate::sync::{MemOrder, MemScope, Site};

/// The kind of a finding. Every kind is behaviour the specification leaves
/// undefined (or, for [`ReportKind::UninitializedLocal`], unspecified).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReportKind {
    /// Not every work-item of a group or sub-group reached the same barrier
    /// (`003_2caebc1f01141481.txt`, `004_bfca21a36d7bd2da.txt`,
    /// `002_6c32435e912a3710.txt`).
    BarrierDivergence,
    /// Two non-atomic accesses, at least one a write, by different
    /// work-items, not ordered by happens-before.
    DataRace,
    /// An atomic and a non-atomic access conflicting, not ordered.
    MixedAccess,
    /// Two atomic accesses, at least one a write, whose scopes do not both
    /// include the other work-item, not ordered.
    ScopeTooNarrow,
    /// A `read_write` image read after the same work-item wrote the pixel,
    /// with no image fence between (`000_96da91f170ff246f.txt`).
    ImageFence,
    /// An index outside a buffer, local array or image.
    OutOfBounds,
    /// A read of local memory that no work-item of the group has written.
    UninitializedLocal,
    /// A run-time argument the operation does not allow: zero or unknown
    /// fence flags, an order or scope the operation cannot take
    /// (`000_96da91f170ff246f.txt`).
    InvalidArgument,
}

impl ReportKind {
    /// A short name, as in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            ReportKind::BarrierDivergence => "barrier-divergence",
            ReportKind::DataRace => "data-race",
            ReportKind::MixedAccess => "mixed-access",
            ReportKind::ScopeTooNarrow => "scope-too-narrow",
            ReportKind::ImageFence => "image-fence",
            ReportKind::OutOfBounds => "out-of-bounds",
            ReportKind::UninitializedLocal => "uninitialized-local",
            ReportKind::InvalidArgument => "invalid-argument",
        }
    }
}

impl fmt::Display for ReportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReportKind::BarrierDivergence => "barrier divergence",
            ReportKind::DataRace => "data race",
            ReportKind::MixedAccess => "atomic and non-atomic access race",
            ReportKind::ScopeTooNarrow => "atomic scope too narrow",
            ReportKind::ImageFence => "image read without image fence",
            ReportKind::OutOfBounds => "out-of-bounds access",
            ReportKind::UninitializedLocal => "read of uninitialized local memory",
            ReportKind::InvalidArgument => "invalid argument",
        })
    }
}

/// An address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    /// `__global`.
    Global,
    /// `__local`.
    Local,
    /// Image memory.
    Image,
}

impl Space {
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// The OpenCL name.
    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Local => "local",
            Space::Image => "image",
        }
    }
}

/// The memory object and element a report is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryRef {
    /// Its address space.
    pub space: Space,
    /// The buffer's, local array's or image's name.
    pub name: String,
    /// The element (or pixel, as `y * width + x`).
    pub index: usize,
}

impl fmt::Display for MemoryRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} memory `{}`[{}]",
            self.space.name(),
            self.name,
            self.index
        )
    }
}

/// What an access did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessOp {
    /// A plain read.
    Read,
    /// A plain write.
    Write,
    /// An atomic operation.
    Atomic {
        /// The OpenCL C function.
        op: &'static str,
        /// Its memory order.
        order: MemOrder,
        /// Its memory scope.
        scope: MemScope,
        /// Whether it wrote (a store, or a read-modify-write that did).
        writes: bool,
    },
    /// A call to a synchronization function (a fence or barrier).
    Call(&'static str),
}

impl AccessOp {
    pub(crate) fn writes(self) -> bool {
        match self {
            AccessOp::Read | AccessOp::Call(_) => false,
            AccessOp::Write => true,
            AccessOp::Atomic { writes, .. } => writes,
        }
    }

    pub(crate) fn is_atomic(self) -> bool {
        matches!(self, AccessOp::Atomic { .. })
    }
}

impl fmt::Display for AccessOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AccessOp::Read => f.write_str("read"),
            AccessOp::Write => f.write_str("write"),
            AccessOp::Atomic {
                op, order, scope, ..
            } => write!(f, "{op}({}, {})", order.name(), scope.name()),
            AccessOp::Call(op) => f.write_str(op),
        }
    }
}

/// One party of a report: who did what, where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    /// The work-item.
    pub item: ItemIds,
    /// What it did.
    pub op: AccessOp,
    /// Where in the kernel.
    pub site: Site,
}

/// One finding, deduplicated: `count` occurrences with the same kind and
/// pair of source locations (in either order); the parties shown are the
/// occurrence with the lowest work-item ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// What was found.
    pub kind: ReportKind,
    /// The kernel.
    pub kernel: String,
    /// Dimensions of the range (for printing ids).
    pub dims: usize,
    /// The memory involved, if any.
    pub memory: Option<MemoryRef>,
    /// The earlier access of a conflicting pair.
    pub first: Option<Access>,
    /// The access that found the problem (for divergence: absent).
    pub second: Option<Access>,
    /// The main source location: the second access's, or the barrier's.
    pub site: Site,
    /// More about it, such as where every work-item was for a divergence,
    /// or the rule an argument broke.
    pub detail: String,
    /// How many times it happened.
    pub count: u64,
    /// For a barrier divergence, the work-group it happened in (of a
    /// deduplicated report, the lowest: which one is shown does not depend
    /// on the order the groups ran in); absent otherwise.
    pub group: Option<[usize; 3]>,
}

impl Report {
    /// The key reports are deduplicated by: kind and the pair of source
    /// locations, unordered (a race found from either side is one race).
    fn key(&self) -> (ReportKind, Site, Option<Site>) {
        match self.first.as_ref().map(|a| a.site) {
            Some(f) if f < self.site => (self.kind, f, Some(self.site)),
            other => (self.kind, self.site, other),
        }
    }

    /// Which occurrence represents a deduplicated report: the lowest ids
    /// (a divergence's: its group's, z first).
    fn rank(&self) -> (usize, usize, usize, [usize; 3]) {
        let id = |a: &Option<Access>| a.as_ref().map_or(0, |a| a.item.global_linear_id);
        let [x, y, z] = self.group.unwrap_or_default();
        (
            id(&self.second),
            id(&self.first),
            self.memory.as_ref().map_or(0, |m| m.index),
            [z, y, x],
        )
    }

    /// A barrier divergence as a report.
    pub(crate) fn from_divergence(d: &crate::Divergence) -> Report {
        let text = d.to_string();
        Report {
            kind: ReportKind::BarrierDivergence,
            kernel: d.kernel.clone(),
            dims: d.dims,
            memory: None,
            first: None,
            second: None,
            site: d.barrier,
            detail: text
                .split_once(": ")
                .map_or(text.clone(), |(_, rest)| rest.to_string()),
            count: 1,
            group: Some(d.group_id),
        }
    }

    /// The report as JSON.
    pub fn to_json(&self) -> Value {
        let access = |a: &Access| {
            let d = self.dims;
            let mut v = json!({
                "global_id": &a.item.global_id[..d],
                "local_id": &a.item.local_id[..d],
                "group_id": &a.item.group_id[..d],
                "sub_group_id": a.item.sub_group_id,
                "site": a.site.to_string(),
            });
            match a.op {
                AccessOp::Read => v["access"] = json!("read"),
                AccessOp::Write => v["access"] = json!("write"),
                AccessOp::Call(op) => {
                    v["access"] = json!("call");
                    v["op"] = json!(op);
                }
                AccessOp::Atomic {
                    op,
                    order,
                    scope,
                    writes,
                } => {
                    v["access"] = json!("atomic");
                    v["op"] = json!(op);
                    v["order"] = json!(order.name());
                    v["scope"] = json!(scope.name());
                    v["writes"] = json!(writes);
                }
            }
            v
        };
        json!({
            "kind": self.kind.name(),
            "kernel": self.kernel,
            "site": self.site.to_string(),
            "memory": self.memory.as_ref().map(|m| json!({
                "space": m.space.name(), "name": m.name, "index": m.index,
            })),
            "first": self.first.as_ref().map(access),
            "second": self.second.as_ref().map(access),
            "detail": self.detail,
            "count": self.count,
        })
    }
}

/// Reports as a JSON array.
pub fn to_json(reports: &[Report]) -> String {
    let v: Vec<Value> = reports.iter().map(Report::to_json).collect();
    serde_json::to_string_pretty(&v).expect("JSON values always serialize")
}

fn fmt_ids(f: &mut fmt::Formatter<'_>, a: &Access, dims: usize) -> fmt::Result {
    let id = |v: [usize; 3]| {
        v[..dims]
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    write!(
        f,
        "work-item global ({}) local ({}) group ({}) sub-group {}",
        id(a.item.global_id),
        id(a.item.local_id),
        id(a.item.group_id),
        a.item.sub_group_id
    )
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        if let Some(m) = &self.memory {
            write!(f, " on {m}")?;
        }
        write!(f, " in kernel `{}` at {}", self.kernel, self.site)?;
        if self.count > 1 {
            write!(f, " ({} times)", self.count)?;
        }
        for (label, a) in [("first ", &self.first), ("second", &self.second)] {
            if let Some(a) = a {
                let label = if self.first.is_none() { "by" } else { label };
                write!(f, "\n  {label}: {} at {} by ", a.op, a.site)?;
                fmt_ids(f, a, self.dims)?;
            }
        }
        if !self.detail.is_empty() {
            for line in self.detail.lines() {
                write!(f, "\n  {line}")?;
            }
        }
        Ok(())
    }
}

/// Collects reports, one per kind and pair of source locations.
#[derive(Default)]
pub(crate) struct ReportSet {
    by_key: HashMap<(ReportKind, Site, Option<Site>), Report>,
}

impl ReportSet {
    pub(crate) fn add(&mut self, report: Report) {
        match self.by_key.entry(report.key()) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(report);
            }
            std::collections::hash_map::Entry::Occupied(mut o) => {
                let count = o.get().count + report.count;
                if report.rank() < o.get().rank() {
                    o.insert(report);
                }
                o.get_mut().count = count;
            }
        }
    }

    /// The reports in a fixed order: by kind, then source locations.
    pub(crate) fn into_sorted(self) -> Vec<Report> {
        let mut v: Vec<Report> = self.by_key.into_values().collect();
        v.sort_by(|a, b| a.key().cmp(&b.key()).then(a.rank().cmp(&b.rank())));
        v
    }
}
