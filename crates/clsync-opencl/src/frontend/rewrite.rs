//! Rewrites of clang's LLVM IR text before `llvm-spirv-15` translates it:
//! constructs of valid OpenCL C that llvm-spirv-15 cannot translate,
//! written as equivalent ones it can.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

/// LLVM IR text with each `%x = freeze T v` made `%x = bitcast T v to T`,
/// or `None` if it has no `freeze`. `freeze` turns a poison or undefined
/// value into some fixed value of its type; clsync's compiled code has no
/// poison (every value is some value of its type), so the identity is
/// exact for it, and llvm-spirv-15, which has no translation for
/// `freeze`, takes the cast.
pub fn freeze_as_bitcast(ir: &str) -> Option<String> {
    if !ir.contains(" = freeze ") {
        return None;
    }
    let mut out = String::with_capacity(ir.len());
    for line in ir.lines() {
        match line.split_once(" = freeze ") {
            Some((lhs, rest)) => {
                // `T v` then, maybe, `, !dbg !N`.
                let (operand, meta) = match rest.find(", !") {
                    Some(i) => rest.split_at(i),
                    None => (rest, ""),
                };
                let operand = operand.trim_end();
                match operand.rsplit_once(' ') {
                    Some((ty, _)) => {
                        out.push_str(&format!("{lhs} = bitcast {operand} to {ty}{meta}"))
                    }
                    None => out.push_str(line),
                }
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    Some(out)
}

/// What an argument of a synchronization built-in is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `cl_mem_fence_flags`: an or of `CLK_LOCAL_MEM_FENCE` (1),
    /// `CLK_GLOBAL_MEM_FENCE` (2) and `CLK_IMAGE_MEM_FENCE` (4).
    Flags,
    /// `memory_order`: relaxed 0, acquire 2, release 3, acq_rel 4,
    /// seq_cst 5.
    Order,
    /// `memory_scope`: work-item 0, work-group 1, device 2, all SVM
    /// devices 3, sub-group 4.
    Scope,
}

impl Kind {
    /// The values an argument of this kind may have, each with its own
    /// branch of the dispatch, and the one that every other value takes
    /// (a value outside the list is undefined behaviour; it is given the
    /// widest).
    fn values(self) -> (&'static [u32], u32) {
        match self {
            Kind::Flags => (&[0, 1, 2, 3, 4, 5, 6], 7),
            Kind::Order => (&[0, 2, 3, 4], 5),
            Kind::Scope => (&[0, 1, 2, 4], 3),
        }
    }
}

/// The synchronization built-ins (by clang's mangled names) whose
/// arguments llvm-spirv-15 takes only as constants, with their arguments'
/// kinds (`002_6c32435e912a3710.txt`, `003_2caebc1f01141481.txt`,
/// `000_96da91f170ff246f.txt`).
const SYNC: &[(&str, &[Kind])] = &[
    ("_Z7barrierj", &[Kind::Flags]),
    ("_Z18work_group_barrierj", &[Kind::Flags]),
    (
        "_Z18work_group_barrierj12memory_scope",
        &[Kind::Flags, Kind::Scope],
    ),
    ("_Z17sub_group_barrierj", &[Kind::Flags]),
    (
        "_Z17sub_group_barrierj12memory_scope",
        &[Kind::Flags, Kind::Scope],
    ),
    ("_Z9mem_fencej", &[Kind::Flags]),
    ("_Z14read_mem_fencej", &[Kind::Flags]),
    ("_Z15write_mem_fencej", &[Kind::Flags]),
    (
        "_Z22atomic_work_item_fencej12memory_order12memory_scope",
        &[Kind::Flags, Kind::Order, Kind::Scope],
    ),
];

/// LLVM IR text in which each call of a barrier or fence with an argument
/// known only at run time (`barrier(f)` with `f` a variable, an
/// `atomic_work_item_fence` whose order is computed) calls a dispatch
/// function instead, or `None` if there is no such call.
///
/// The specification makes these arguments values of their types, not
/// constants, but llvm-spirv-15 aborts on any that is not one (an
/// assertion in its casts). The dispatch function branches on each
/// run-time argument over the values its type has and calls the built-in
/// with constants in each branch, so each run performs the barrier or
/// fence the kernel asked for, which the checker then judges as it is. A
/// call keeps its constant arguments (they name the dispatch function) and
/// passes the others. A barrier so reached is a barrier in a called
/// function, as one a kernel writes itself; the dispatch has debug
/// information of its own whose calls have the line and column of the
/// kernel's call, which its reports give.
pub fn run_time_sync_args(ir: &str) -> Option<String> {
    let mut out = String::with_capacity(ir.len());
    // Dispatch functions by name: one per built-in, argument pattern and
    // source location.
    let mut made: BTreeMap<String, Dispatch> = BTreeMap::new();
    for line in ir.lines() {
        let Some((name, kinds, open, close)) = sync_call(line) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let values: Vec<&str> = line[open + 1..close]
            .split(", ")
            .map(|a| a.rsplit(' ').next().unwrap_or(a))
            .collect();
        let constant = |v: &str| v.parse::<u32>().is_ok();
        if values.len() != kinds.len() || values.iter().all(|v| constant(v)) {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let pattern: Vec<(Kind, Option<String>)> = kinds
            .iter()
            .zip(&values)
            .map(|(k, v)| (*k, constant(v).then(|| v.to_string())))
            .collect();
        let location = line
            .split_once("!dbg !")
            .and_then(|(_, n)| n.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse::<u32>().ok());
        let mut dispatch = format!("__clsync.sync.{name}");
        for (_, v) in &pattern {
            dispatch.push('.');
            dispatch.push_str(v.as_deref().unwrap_or("v"));
        }
        if let Some(n) = location {
            let _ = write!(dispatch, ".at{n}");
        }
        let passed: Vec<String> = values
            .iter()
            .filter(|v| !constant(v))
            .map(|v| format!("i32 {v}"))
            .collect();
        out.push_str(&line[..open - name.len()]);
        out.push_str(&dispatch);
        out.push('(');
        out.push_str(&passed.join(", "));
        out.push_str(&line[close..]);
        out.push('\n');
        made.entry(dispatch).or_insert(Dispatch {
            name,
            pattern,
            location,
        });
    }
    if made.is_empty() {
        return None;
    }
    let debug = DebugInfo::of(ir);
    let mut next = debug.next;
    let mut metadata = String::new();
    for (dispatch, d) in &made {
        let dbg = d
            .location
            .and_then(|n| debug.subprogram(n, &mut next, &mut metadata));
        define_dispatch(&mut out, dispatch, d, dbg);
    }
    out.push_str(&metadata);
    Some(out)
}

/// A dispatch function to write: the built-in it calls, its arguments
/// (constants, and `None` for those passed at run time), and the call's
/// source location (a `!DILocation`'s number).
struct Dispatch {
    name: &'static str,
    pattern: Vec<(Kind, Option<String>)>,
    location: Option<u32>,
}

/// What a dispatch function needs of the module's debug information so
/// that its barriers and fences report the line of the kernel's call.
struct DebugInfo<'a> {
    /// Metadata nodes by number: the text after `!N = `.
    nodes: HashMap<u32, &'a str>,
    /// The compile unit's number.
    unit: Option<u32>,
    /// The first unused metadata number.
    next: u32,
}

impl<'a> DebugInfo<'a> {
    fn of(ir: &'a str) -> DebugInfo<'a> {
        let mut nodes = HashMap::new();
        let mut unit = None;
        for line in ir.lines() {
            if let Some(rest) = line.strip_prefix("!llvm.dbg.cu = !{!") {
                unit = rest.trim_end_matches('}').parse().ok();
            }
            let Some((n, text)) = line.strip_prefix('!').and_then(|l| l.split_once(" = ")) else {
                continue;
            };
            if let Ok(n) = n.parse::<u32>() {
                nodes.insert(n, text);
            }
        }
        let next = nodes.keys().max().map_or(0, |m| m + 1);
        DebugInfo { nodes, unit, next }
    }

    /// The value of `field: ` in node text `text`, up to the next `,` or
    /// `)`.
    fn field<'t>(text: &'t str, field: &str) -> Option<&'t str> {
        let at = text.find(&format!("{field}: "))? + field.len() + 2;
        let rest = &text[at..];
        Some(&rest[..rest.find([',', ')']).unwrap_or(rest.len())])
    }

    /// Writes to `metadata` a subprogram for a dispatch called at location
    /// `n` (in the file of the location's scope) and a location of the
    /// same line and column in it; returns their numbers. None where the
    /// module has no such location or no compile unit.
    fn subprogram(&self, n: u32, next: &mut u32, metadata: &mut String) -> Option<(u32, u32)> {
        let unit = self.unit?;
        let loc = self.nodes.get(&n)?.strip_prefix("!DILocation(")?;
        let line = Self::field(loc, "line")?;
        let column = Self::field(loc, "column").unwrap_or("0");
        let scope = Self::field(loc, "scope")?
            .strip_prefix('!')?
            .parse::<u32>()
            .ok()?;
        let file = Self::field(self.nodes.get(&scope)?, "file")?;
        let (sp, ty, types, at) = (*next, *next + 1, *next + 2, *next + 3);
        *next += 4;
        let _ = writeln!(
            metadata,
            "!{sp} = distinct !DISubprogram(name: \"clsync.sync\", scope: {file}, file: {file}, \
             line: {line}, type: !{ty}, scopeLine: {line}, flags: DIFlagArtificial, \
             spFlags: DISPFlagLocalToUnit | DISPFlagDefinition | DISPFlagOptimized, unit: !{unit})"
        );
        let _ = writeln!(metadata, "!{ty} = !DISubroutineType(types: !{types})");
        let _ = writeln!(metadata, "!{types} = !{{}}");
        let _ = writeln!(
            metadata,
            "!{at} = !DILocation(line: {line}, column: {column}, scope: !{sp})"
        );
        Some((sp, at))
    }
}

/// The built-in `line` calls, if it is one of [`SYNC`]: its name, its
/// arguments' kinds, and the byte offsets of the argument list's
/// parentheses.
fn sync_call(line: &str) -> Option<(&'static str, &'static [Kind], usize, usize)> {
    if !line.contains("call ") {
        return None;
    }
    SYNC.iter().find_map(|(name, kinds)| {
        let at = line.find(&format!("@{name}("))?;
        let open = at + 1 + name.len();
        let close = open + line[open..].find(')')?;
        Some((*name, *kinds, open, close))
    })
}

/// Appends the definition of `dispatch`: a switch over each run-time
/// argument of its pattern in turn, and in each leaf a call of the
/// built-in with constants; `dbg`, its subprogram and its calls' location.
fn define_dispatch(out: &mut String, dispatch: &str, d: &Dispatch, dbg: Option<(u32, u32)>) {
    let (name, pattern) = (d.name, &d.pattern[..]);
    let (sp, at) = match dbg {
        Some((sp, at)) => (format!(" !dbg !{sp}"), format!(", !dbg !{at}")),
        None => (String::new(), String::new()),
    };
    let dynamic: Vec<usize> = (0..pattern.len())
        .filter(|i| pattern[*i].1.is_none())
        .collect();
    let params: Vec<String> = dynamic.iter().map(|i| format!("i32 %a{i}")).collect();
    let _ = writeln!(
        out,
        "\ndefine internal spir_func void @{dispatch}({}) convergent nounwind{sp} {{",
        params.join(", ")
    );
    // Blocks are named by the values chosen so far: `b` then `.v` each.
    let mut work = vec![(String::from("b"), Vec::<u32>::new())];
    while let Some((label, chosen)) = work.pop() {
        let _ = writeln!(out, "{label}:");
        if chosen.len() == dynamic.len() {
            let mut chosen = chosen.iter();
            let args: Vec<String> = pattern
                .iter()
                .map(|(_, v)| match v {
                    Some(c) => format!("i32 {c}"),
                    None => format!("i32 {}", chosen.next().copied().unwrap_or(0)),
                })
                .collect();
            let _ = writeln!(
                out,
                "  call spir_func void @{name}({}){at}",
                args.join(", ")
            );
            let _ = writeln!(out, "  ret void");
            continue;
        }
        let i = dynamic[chosen.len()];
        let (cases, other) = pattern[i].0.values();
        let mut selector = format!("%a{i}");
        if pattern[i].0 == Kind::Flags {
            // Only the three flags' bits count.
            let _ = writeln!(out, "  %{label}.m = and i32 %a{i}, 7");
            selector = format!("%{label}.m");
        }
        let _ = write!(out, "  switch i32 {selector}, label %{label}.{other} [");
        for c in cases {
            let _ = write!(out, " i32 {c}, label %{label}.{c}");
        }
        let _ = writeln!(out, " ]");
        for c in cases.iter().chain([&other]).rev() {
            let mut next = chosen.clone();
            next.push(*c);
            work.push((format!("{label}.{c}"), next));
        }
    }
    out.push_str("}\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freeze_becomes_a_no_op_cast() {
        let ir = "  %3 = freeze i32 %2, !dbg !12\n  %v = freeze <4 x float> %u\n  ret void\n";
        assert_eq!(
            freeze_as_bitcast(ir).unwrap(),
            "  %3 = bitcast i32 %2 to i32, !dbg !12\n  %v = bitcast <4 x float> %u to <4 x float>\n  ret void\n"
        );
        assert_eq!(freeze_as_bitcast("  ret void\n"), None);
    }

    #[test]
    fn run_time_sync_arguments_call_a_dispatch_with_constants_in_each_branch() {
        let ir = "  tail call spir_func void @_Z7barrierj(i32 noundef 1) #3, !dbg !17\n\
                  \x20 tail call spir_func void @_Z18work_group_barrierj12memory_scope(i32 noundef 2, i32 noundef %5) #3, !dbg !18\n\
                  \x20 call spir_func void @_Z18work_group_barrierj12memory_scope(i32 noundef 2, i32 %s) #3\n\
                  !llvm.dbg.cu = !{!0}\n\
                  !1 = !DIFile(filename: \"k.cl\", directory: \"/src\")\n\
                  !8 = distinct !DISubprogram(name: \"k\", scope: !1, file: !1, line: 1, type: !9, unit: !0)\n\
                  !18 = !DILocation(line: 5, column: 4, scope: !8)\n";
        let out = run_time_sync_args(ir).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        // The constant call stays; each run-time one calls a dispatch of
        // its location with its run-time argument.
        assert_eq!(
            lines[0],
            "  tail call spir_func void @_Z7barrierj(i32 noundef 1) #3, !dbg !17"
        );
        assert_eq!(
            lines[1],
            "  tail call spir_func void @__clsync.sync._Z18work_group_barrierj12memory_scope.2.v.at18(i32 %5) #3, !dbg !18"
        );
        assert_eq!(
            lines[2],
            "  call spir_func void @__clsync.sync._Z18work_group_barrierj12memory_scope.2.v(i32 %s) #3"
        );
        assert_eq!(out.matches("define internal").count(), 2);
        // Each scope value reaches its own call; another value the widest.
        for s in [0, 1, 2, 4] {
            assert!(out.contains(&format!("i32 {s}, label %b.{s}")), "{out}");
        }
        assert!(out.contains("switch i32 %a1, label %b.3 ["), "{out}");
        let calls: Vec<&str> = lines
            .iter()
            .filter(|l| l.starts_with("  call spir_func void @_Z18"))
            .copied()
            .collect();
        assert_eq!(calls.len(), 10);
        for s in 0..5 {
            let call = format!(
                "  call spir_func void @_Z18work_group_barrierj12memory_scope(i32 2, i32 {s})"
            );
            assert!(calls.contains(&call.as_str()), "{out}");
            assert!(
                calls.contains(&format!("{call}, !dbg !22").as_str()),
                "{out}"
            );
        }
        // The located dispatch's subprogram, in the call's file, and its
        // calls' location: the kernel's line and column.
        assert!(out.contains(
            "@__clsync.sync._Z18work_group_barrierj12memory_scope.2.v.at18(i32 %a1) convergent nounwind !dbg !19 {"
        ), "{out}");
        assert!(
            out.contains(
                "!19 = distinct !DISubprogram(name: \"clsync.sync\", scope: !1, file: !1, line: 5,"
            ),
            "{out}"
        );
        assert!(out.contains("unit: !0)\n"), "{out}");
        assert!(
            out.contains("!22 = !DILocation(line: 5, column: 4, scope: !19)"),
            "{out}"
        );
        assert_eq!(
            run_time_sync_args("  call spir_func void @_Z7barrierj(i32 2)\n"),
            None
        );
    }

    #[test]
    fn a_fence_of_three_run_time_arguments_branches_on_each() {
        let ir = "  call spir_func void @_Z22atomic_work_item_fencej12memory_order12memory_scope(i32 %f, i32 %o, i32 %s)\n";
        let out = run_time_sync_args(ir).unwrap();
        // Eight flag values, five orders, five scopes.
        let leaves = out.matches("call spir_func void @_Z22").count();
        assert_eq!(leaves, 8 * 5 * 5, "{out}");
        assert!(out.contains("%b.m = and i32 %a0, 7"));
        assert!(out.contains("(i32 7, i32 5, i32 3)"));
        assert!(out.contains("(i32 1, i32 0, i32 1)"));
    }
}
