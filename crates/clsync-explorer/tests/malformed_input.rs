//! Bad litmus files get errors, never panics: the shipped tests
//! (`shared/litmus`, `shared/reference/herd-opencl`), cut, spliced and
//! scribbled on at random, are parsed and, where they still parse,
//! explored. Every outcome must be a value: a test, an exploration, or an
//! error that names a line and column (or a limit reached). A panic fails
//! the property, and proptest shrinks it to the smallest edit that causes
//! it.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use clsync_explorer::enumerate::program::Program;
use clsync_explorer::enumerate::Limits;
use clsync_explorer::expect::collect;
use clsync_explorer::{explore, syntax, ExploreError, Options};
use proptest::prelude::*;

/// Every shipped litmus source, read once.
fn sources() -> &'static [(PathBuf, String)] {
    static SOURCES: OnceLock<Vec<(PathBuf, String)>> = OnceLock::new();
    SOURCES.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
        let files = collect(&[root.join("litmus"), root.join("reference/herd-opencl")])
            .expect("the shared litmus folders");
        files
            .into_iter()
            .map(|f| {
                let text = std::fs::read_to_string(&f).expect("a readable litmus file");
                (f, text)
            })
            .collect()
    })
}

/// Pieces of litmus syntax, so that edits make near-misses of the grammar
/// rather than only noise.
const TOKENS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    ";",
    ",",
    "=",
    "==",
    "!=",
    "/\\",
    "\\/",
    "~",
    "exists",
    "forall",
    "P0",
    "P1@wg 0, dev 0",
    "@",
    "global",
    "local",
    "atomic_int*",
    "int*",
    "*x",
    "[x]",
    "0:r0",
    "atomic_store_explicit(",
    "atomic_load_explicit(",
    "atomic_fetch_add_explicit(",
    "atomic_compare_exchange_strong_explicit(",
    "memory_order_acquire",
    "memory_order_seq_cst",
    "memory_scope_work_group",
    "memory_scope_device",
    "barrier(",
    "CLK_LOCAL_MEM_FENCE",
    "atomic_work_item_fence(",
    "if",
    "else",
    "while",
    "-1",
    "99999999999999999999",
    "\n",
    "scopeTree",
    "(device (work_group P0) (work_group P1))",
    "|",
    "OPENCL",
    "C",
    "\"",
];

/// One edit of a source.
#[derive(Clone, Debug)]
enum Edit {
    /// Keep the first `at` (a fraction of the length).
    Cut(f64),
    /// Remove `len` bytes from `at`.
    Delete(f64, usize),
    /// Put a token at `at`.
    Insert(f64, usize),
    /// Replace a byte at `at` with a printable character.
    Scribble(f64, char),
    /// Repeat the line at `at`.
    DoubleLine(f64),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (0.0..1.0f64).prop_map(Edit::Cut),
        (0.0..1.0f64, 1..40usize).prop_map(|(a, n)| Edit::Delete(a, n)),
        (0.0..1.0f64, 0..TOKENS.len()).prop_map(|(a, t)| Edit::Insert(a, t)),
        (0.0..1.0f64, proptest::char::range(' ', '~')).prop_map(|(a, c)| Edit::Scribble(a, c)),
        (0.0..1.0f64).prop_map(Edit::DoubleLine),
    ]
}

/// The byte offset nearest `frac` of `s` that is a character boundary.
fn at(s: &str, frac: f64) -> usize {
    let mut i = ((s.len() as f64) * frac) as usize;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(mut s: String, e: &Edit) -> String {
    match *e {
        Edit::Cut(f) => s.truncate(at(&s, f)),
        Edit::Delete(f, n) => {
            let a = at(&s, f);
            let mut b = (a + n).min(s.len());
            while !s.is_char_boundary(b) {
                b += 1;
            }
            s.replace_range(a..b, "");
        }
        Edit::Insert(f, t) => s.insert_str(at(&s, f), TOKENS[t]),
        Edit::Scribble(f, c) => {
            let a = at(&s, f);
            if let Some(old) = s[a..].chars().next() {
                s.replace_range(a..a + old.len_utf8(), c.encode_utf8(&mut [0; 4]));
            }
        }
        Edit::DoubleLine(f) => {
            let a = at(&s, f);
            let start = s[..a].rfind('\n').map_or(0, |i| i + 1);
            let end = s[a..].find('\n').map_or(s.len(), |i| a + i + 1);
            let line = s[start..end].to_string();
            s.insert_str(start, &line);
        }
    }
    s
}

/// Checks that an error starts with `line:column:`, both from 1 (a line
/// 0 is a place that was never filled in); returns it.
fn located(shown: String) -> String {
    let mut parts = shown.splitn(3, ':');
    let mut number = || parts.next().and_then(|n| n.trim().parse::<u32>().ok());
    let (line, column) = (number(), number());
    assert!(
        line.is_some_and(|l| l >= 1) && column.is_some_and(|c| c >= 1),
        "an error without its line:column: {shown:?}"
    );
    shown
}

/// Small limits: an edit can make a test much larger (a doubled thread, a
/// huge constant), and this property is about errors, not verdicts.
fn options() -> Options {
    let mut o = Options::default();
    o.limits = Limits {
        max_candidates: 20_000,
        ..o.limits
    };
    o
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn edited_litmus_files_give_errors_not_panics(
        file in any::<prop::sample::Index>(),
        edits in prop::collection::vec(edit(), 1..4),
    ) {
        let (path, text) = &sources()[file.index(sources().len())];
        let edited = edits.iter().fold(text.clone(), apply);
        let outcome = catch_unwind(AssertUnwindSafe(|| match syntax::parse(&edited) {
            Ok(test) => match explore(&test, &options()) {
                Ok(_) => Ok(()),
                // Too large: a limit, named as such, with no place to name.
                Err(e @ ExploreError::TooLarge(_)) => Err(e.to_string()),
                Err(e) => Err(located(e.to_string())),
            },
            Err(e) => Err(located(e.to_string())),
        }));
        prop_assert!(
            outcome.is_ok(),
            "{} with edits {:?} panicked; the edited text:\n{}",
            path.display(),
            edits,
            edited
        );
    }
}

/// The sources are there, in both syntaxes: the property above would pass
/// on an empty list.
#[test]
fn the_shipped_litmus_sources_are_found() {
    let s = sources();
    assert!(s.len() >= 150, "{} files", s.len());
    assert!(s
        .iter()
        .any(|(p, _)| p.to_string_lossy().contains("herd-opencl")));
}

/// A condition that names a thread or a location the test does not have
/// gets an error at that name (it was reported at 0:0, a place never filled
/// in, until the fuzzing above found it).
#[test]
fn a_condition_naming_what_is_not_there_points_at_the_name() {
    let program = "OPENCL MP\n{ [x]=0; }\n\
                   P0@wg 0, dev 0 (global atomic_int* x) {\n\
                   int r0 = atomic_load(x);\n}\n";
    for (condition, want) in [
        (
            "exists (0:r0=0 /\\ 2:r1=1)",
            "6:19: the condition names `2:r1`, but there is no thread P2",
        ),
        (
            "exists (0:r0=0 \\/\n   [zz]=1)",
            "7:4: the condition names location `zz`, which the test does not have",
        ),
    ] {
        let test = syntax::parse(&format!("{program}{condition}")).expect("it parses");
        let e = explore(&test, &Options::default()).expect_err("it names nothing");
        assert_eq!(e.to_string(), want);
    }
}

/// A negative work-group or device number is an error at the number (it
/// became a huge one, and an overflow while placing the threads, until
/// the fuzzing above found it).
#[test]
fn a_negative_placement_is_an_error_at_the_number() {
    for (header, want) in [
        (
            "P0@wg 0, dev -10",
            "3:14: `dev -10`: a placement is not negative",
        ),
        (
            "P0@wg -1, dev 0",
            "3:7: `wg -1`: a placement is not negative",
        ),
    ] {
        let src = format!(
            "OPENCL neg\n{{ [x]=0; }}\n{header} (global atomic_int* x) {{\n\
             int r0 = atomic_load(x);\n}}\nexists (0:r0=0)"
        );
        let e = syntax::parse(&src).expect_err("a negative placement");
        assert_eq!(e.to_string(), want);
    }
}

/// Work-groups are told apart by device and number, whatever the numbers:
/// `wg 1000000, dev 0` and `wg 0, dev 1` are two groups. The placement was
/// once `device * 1000000 + work_group`, one id for both: the model still
/// told them apart by device, but a run on the runtime (`clsync litmus
/// --run`, which makes a work-group of each id) put them in one. Message
/// passing with work-group scope shows the model's verdicts: the stale
/// read is forbidden within one work-group and allowed across two (the
/// scopes are not inclusive).
#[test]
fn work_groups_are_told_apart_whatever_their_numbers() {
    let mp = |a: &str, b: &str| {
        format!(
            "OPENCL MPwg\n{{ [x]=0; [y]=0; }}\n\
             P0@{a} (global atomic_int* x, global atomic_int* y) {{\n\
             atomic_store_explicit(x, 1, memory_order_relaxed);\n\
             atomic_store_explicit(y, 1, memory_order_release, memory_scope_work_group);\n}}\n\
             P1@{b} (global atomic_int* x, global atomic_int* y) {{\n\
             int r0 = atomic_load_explicit(y, memory_order_acquire, memory_scope_work_group);\n\
             int r1 = atomic_load_explicit(x, memory_order_relaxed);\n}}\n\
             exists (1:r0=1 /\\ 1:r1=0)"
        )
    };
    for (a, b, allowed) in [
        ("wg 0, dev 0", "wg 0, dev 0", false),
        ("wg 0, dev 0", "wg 1, dev 0", true),
        ("wg 1000000, dev 0", "wg 0, dev 1", true),
        ("wg 7, dev 3", "dev 3, wg 7", false),
    ] {
        let test = syntax::parse(&mp(a, b)).expect("it parses");
        let e = explore(&test, &Options::default()).expect("it explores");
        assert_eq!(e.reachable, allowed, "{a} and {b}");
        let placement = Program::lower(&test).expect("it lowers").placement;
        let one_group = placement[0].work_group == placement[1].work_group;
        assert_eq!(one_group, !allowed, "{a} and {b}: {placement:?}");
    }
}
