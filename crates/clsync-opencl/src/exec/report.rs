//! The reports of a checked launch of compiled code: what went wrong,
//! where, and for which work-item, as Oclgrind words it.

use std::collections::HashMap;
use std::fmt;

use clsync::sync::Site;

use super::ctx::{builtin, HostSide, ItemCtx};

/// One report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Oclgrind's headline (`Invalid read of size 4 at global memory
    /// address 0x...`), for the first work-item that hit it.
    pub headline: String,
    /// The kernel.
    pub kernel: String,
    /// The first work-item: global, local and group ids.
    pub global: [usize; 3],
    /// Its local id.
    pub local: [usize; 3],
    /// Its group.
    pub group: [usize; 3],
    /// The object and offset.
    pub details: String,
    /// Where in the source.
    pub site: Option<Site>,
    /// How many times it happened (the same kind at the same place).
    pub count: usize,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids = |v: [usize; 3]| format!("({},{},{})", v[0], v[1], v[2]);
        writeln!(f, "error: {}", self.headline)?;
        writeln!(f, "\tKernel: {}", self.kernel)?;
        writeln!(
            f,
            "\tEntity: Global{} Local{} Group{}",
            ids(self.global),
            ids(self.local),
            ids(self.group)
        )?;
        writeln!(f, "\t{}", self.details)?;
        match self.site {
            Some(s) => write!(f, "\tAt {s}")?,
            None => write!(f, "\tAt an unknown line")?,
        }
        if self.count > 1 {
            write!(f, "\n\t({} times at this place)", self.count)?;
        }
        Ok(())
    }
}

impl Diagnostic {
    /// The report as JSON: each field by name, the site as
    /// `file:line:column`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "headline": self.headline,
            "kernel": self.kernel,
            "global_id": self.global,
            "local_id": self.local,
            "group_id": self.group,
            "details": self.details,
            "site": self.site.map(|s| s.to_string()),
            "count": self.count,
        })
    }
}

/// A launch's reports, one per kind and place, in the order first seen.
#[derive(Debug, Default)]
pub struct Reports {
    list: Vec<Diagnostic>,
    index: HashMap<(String, Option<Site>), usize>,
}

impl Reports {
    /// The reports.
    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.list
    }
}

/// Adds a report for the work-item of `ctx`.
pub(crate) fn add(ctx: &ItemCtx, headline: String, details: String, site: Option<Site>) {
    // SAFETY: the context's host side lives for the work-item's run (see
    // `exec::run`).
    let host: &HostSide<'_> = unsafe { &*ctx.host };
    let kind = headline
        .split(" address ")
        .next()
        .unwrap_or(&headline)
        .to_string();
    let mut r = host.reports.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = r.index.get(&(kind.clone(), site)).copied() {
        r.list[i].count += 1;
        return;
    }
    let ids = |first: usize| std::array::from_fn(|d| ctx.builtins[first + d] as usize);
    let d = Diagnostic {
        headline,
        kernel: host.kernel.to_string(),
        global: ids(builtin::GLOBAL_ID),
        local: ids(builtin::LOCAL_ID),
        group: ids(builtin::GROUP_ID),
        details,
        site,
        count: 1,
    };
    let i = r.list.len();
    r.list.push(d);
    r.index.insert((kind, site), i);
}

/// Oclgrind's headline for a report of the runtime's checker: what its
/// users search their logs for.
pub fn headline(r: &clsync::checker::Report) -> String {
    use clsync::checker::{AccessOp, ReportKind};
    let writes = |a: &Option<clsync::checker::Access>| {
        a.as_ref().is_some_and(|a| match a.op {
            AccessOp::Write => true,
            AccessOp::Atomic { writes, .. } => writes,
            _ => false,
        })
    };
    let space = r
        .memory
        .as_ref()
        .map(|m| m.space.name())
        .unwrap_or("global");
    let at = r
        .memory
        .as_ref()
        .map(|m| format!(" address `{}`[{}]", m.name, m.index))
        .unwrap_or_default();
    match r.kind {
        ReportKind::DataRace | ReportKind::MixedAccess => {
            let both = writes(&r.first) && writes(&r.second);
            format!(
                "{} data race at {space} memory{at}",
                if both { "Write-write" } else { "Read-write" }
            )
        }
        ReportKind::BarrierDivergence => "Work-group divergence detected (barrier)".into(),
        ReportKind::UninitializedLocal => {
            format!("Uninitialized value: a read of local memory that no work-item wrote{at}")
        }
        ReportKind::ScopeTooNarrow => format!("Atomic scope too narrow at {space} memory{at}"),
        ReportKind::OutOfBounds => format!("Invalid access at {space} memory{at}"),
        ReportKind::ImageFence => format!("Image read without an image fence{at}"),
        ReportKind::InvalidArgument => "Invalid argument to a synchronization function".into(),
    }
}

/// Whether a race is a plain write against an atomic that read and wrote
/// (a read-modify-write): its read and its write each race with the plain
/// write, and Oclgrind reports both.
fn write_against_rmw(r: &clsync::checker::Report) -> bool {
    use clsync::checker::AccessOp;
    let ops = [&r.first, &r.second].map(|a| a.as_ref().map(|a| a.op));
    let plain_write = ops.iter().any(|o| matches!(o, Some(AccessOp::Write)));
    let rmw = ops.iter().any(|o| {
        matches!(o, Some(AccessOp::Atomic { op, writes: true, .. })
            if !matches!(*op, "atomic_store" | "atomic_flag_clear" | "async_work_group_copy"))
    });
    plain_write && rmw
}

/// A report of the runtime's checker as `clsync run` prints it: `error:`
/// and the headline, then the runtime's account, indented. A plain write
/// against a read-modify-write is one race of both kinds: the headline is
/// the read's, and the first detail line names the write-write race too
/// (Oclgrind prints both headlines for it).
pub fn render(r: &clsync::checker::Report) -> String {
    let body = r.to_string().replace('\n', "\n\t");
    let head = headline(r);
    if write_against_rmw(r) {
        let read = head.replacen("Write-write", "Read-write", 1);
        let write = head.replacen("Read-write", "Write-write", 1);
        return format!(
            "error: {read}\n\t{write} as well: the atomic both read and wrote\n\t{body}"
        );
    }
    format!("error: {head}\n\t{body}")
}

/// A failed launch as `clsync run` prints it: `error:` and Oclgrind's
/// headline first (`Work-group divergence detected (barrier)`, `Invalid
/// read of size 4 ...`), the details on the lines after.
pub fn launch_error(e: &clsync::LaunchError) -> String {
    use clsync::LaunchError;
    match e {
        LaunchError::Divergence(d) => {
            format!("error: Work-group divergence detected (barrier)\n\t{d}")
        }
        LaunchError::Reported(r) => r.reports.iter().map(render).collect::<Vec<_>>().join("\n"),
        LaunchError::Panic(p) => {
            let text = p.to_string();
            match text.find("Invalid ").or_else(|| text.find("Unreachable")) {
                Some(i) => format!(
                    "error: {}\n\t{}",
                    &text[i..],
                    &text[..i].trim_end_matches([':', ' '])
                ),
                None => format!("error: {text}"),
            }
        }
        other => format!("error: {other}"),
    }
}
