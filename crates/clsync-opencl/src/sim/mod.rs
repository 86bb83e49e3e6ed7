//! Oclgrind's `.sim` files: a kernel, its ND-range and its arguments, run
//! and the marked buffers dumped in `oclgrind-kernel`'s format, so that its
//! users keep their files.
//!
//! ```text
//! # comment
//! reduce.cl                       the kernel's file, beside the .sim
//! reduce                          the kernel
//! 64 1 1                          global size
//! 4 1 1                           local size
//! <size=4>                        an argument: options in <...>,
//! 256                             then values where no fill, range or file
//! <size=1024 range=0:1:255>       a buffer of uint (the kernel's type)
//! <size=64 fill=0 dump>           dumped after the run
//! <size=16>                       local memory, for a local pointer
//! ```
//!
//! Options: `size=N` (bytes), a type (`char` `uchar` `short` `ushort`
//! `int` `uint` `long` `ulong` `float` `double`; the default is the
//! kernel's), `fill=V`, `range=START:STEP:END`, `file=PATH` (raw bytes),
//! `noinit`, `dump`, `hex` (values in hexadecimal), `ro` and `wo` (a
//! checked run reports the other use), `null` (a null pointer).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

mod values;

pub use values::Elem;

use crate::exec::{Arg, MemObject};
use crate::program::{ArgKind, KernelInfo};

/// A `.sim` file that does not parse, with the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct SimError {
    /// The `.sim` file.
    pub file: String,
    /// The line, from 1.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// A token of the argument section: `<...>` or a value, with its line.
#[derive(Clone, Debug)]
struct Token {
    text: String,
    line: usize,
}

/// A parsed `.sim` file.
#[derive(Clone, Debug)]
pub struct Sim {
    /// The `.sim` file's path, for messages.
    pub path: PathBuf,
    /// The kernel's source file.
    pub kernel_file: PathBuf,
    /// The kernel's name.
    pub kernel: String,
    /// Global size.
    pub global: [usize; 3],
    /// Local size; `None` when all zero (the runtime chooses).
    pub local: Option<[usize; 3]>,
    tokens: Vec<Token>,
    last_line: usize,
}

/// A buffer a `.sim` file makes: a clsync buffer of bytes (the checker's
/// shadow is then per byte), the kernel's memory starting aligned in it.
pub struct SimBuffer {
    bytes: clsync::Buffer<u8>,
    offset: usize,
    size: usize,
    name: String,
    access: crate::exec::Access,
    /// Whether its contents are unspecified (`noinit`).
    noinit: bool,
}

impl SimBuffer {
    /// The buffer, marked as holding no data the host wrote (`noinit`):
    /// a checked launch reports a value read from it and stored to global
    /// memory.
    fn uninitialized(self, noinit: bool) -> SimBuffer {
        SimBuffer { noinit, ..self }
    }

    fn new(data: &[u8], name: &str, access: crate::exec::Access) -> SimBuffer {
        let bytes = clsync::Buffer::<u8>::new(data.len() + crate::exec::ALIGN).named(name);
        let base = bytes.raw_bytes().0;
        let offset = crate::exec::aligned(base) as usize - base as usize;
        let mut init = bytes.to_vec();
        init[offset..offset + data.len()].copy_from_slice(data);
        bytes.copy_from_slice(&init);
        SimBuffer {
            bytes,
            offset,
            size: data.len(),
            name: name.to_string(),
            access,
            noinit: false,
        }
    }

    /// Its bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.bytes.to_vec()[self.offset..self.offset + self.size].to_vec()
    }
}

impl MemObject for SimBuffer {
    fn bytes(&self) -> (*mut u8, usize) {
        (
            self.bytes.raw_bytes().0.wrapping_add(self.offset),
            self.size,
        )
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn access(&self) -> crate::exec::Access {
        self.access
    }
    fn initialized(&self) -> bool {
        !self.noinit
    }
}

/// One argument as the `.sim` file gives it.
pub enum SimArg {
    /// A buffer, with how to dump it.
    Buffer {
        /// Its memory.
        buffer: SimBuffer,
        /// Whether to dump it, and as what.
        dump: Option<(Elem, bool)>,
    },
    /// A null pointer.
    Null,
    /// Local memory of this many bytes.
    Local(usize),
    /// A value's bytes.
    Value(Vec<u8>),
}

impl SimArg {
    /// The kernel argument it is.
    pub fn arg(&self) -> Arg<'_> {
        match self {
            SimArg::Buffer { buffer, .. } => Arg::Buffer(buffer),
            SimArg::Null => Arg::Null,
            SimArg::Local(n) => Arg::Local(*n),
            SimArg::Value(v) => Arg::Value(v.clone()),
        }
    }
}

impl Sim {
    /// Reads a `.sim` file.
    pub fn load(path: &Path) -> Result<Sim, SimError> {
        let text = std::fs::read_to_string(path).map_err(|e| SimError {
            file: path.display().to_string(),
            line: 0,
            message: format!("cannot read it: {e}"),
        })?;
        Sim::parse(&text, path)
    }

    /// Parses `.sim` text; `path` names it in errors and locates the
    /// kernel's file.
    pub fn parse(text: &str, path: &Path) -> Result<Sim, SimError> {
        let err = |line: usize, message: String| SimError {
            file: path.display().to_string(),
            line,
            message,
        };
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.split('#').next().unwrap_or("").trim()))
            .filter(|(_, l)| !l.is_empty());
        let mut next = |what: &str| {
            lines.next().ok_or_else(|| {
                err(
                    text.lines().count(),
                    format!("the file ends before the {what}"),
                )
            })
        };
        let (_, file) = next("kernel file")?;
        let (_, kernel) = next("kernel name")?;
        let sizes = |(line, l): (usize, &str), what: &str| -> Result<[usize; 3], SimError> {
            let v = l
                .split_whitespace()
                .map(|w| {
                    w.parse::<usize>()
                        .map_err(|_| err(line, format!("{what}: `{w}` is not a size")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if v.is_empty() || v.len() > 3 {
                return Err(err(
                    line,
                    format!("{what}: {} numbers, not 1 to 3", v.len()),
                ));
            }
            Ok([v[0], *v.get(1).unwrap_or(&1), *v.get(2).unwrap_or(&1)])
        };
        let global = sizes(next("global size")?, "global size")?;
        let local = sizes(next("local size")?, "local size")?;
        let mut tokens = Vec::new();
        let mut last_line = 0;
        let mut open: Option<(usize, String)> = None;
        for (line, l) in lines {
            last_line = line;
            for w in l.split_whitespace() {
                if let Some((start, acc)) = open.as_mut() {
                    acc.push(' ');
                    acc.push_str(w);
                    if w.ends_with('>') {
                        tokens.push(Token {
                            text: std::mem::take(acc),
                            line: *start,
                        });
                        open = None;
                    }
                } else if w.starts_with('<') && !w.ends_with('>') {
                    open = Some((line, w.to_string()));
                } else {
                    tokens.push(Token {
                        text: w.to_string(),
                        line,
                    });
                }
            }
        }
        if let Some((line, _)) = open {
            return Err(err(line, "an argument's `<` has no `>`".into()));
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        Ok(Sim {
            path: path.to_path_buf(),
            kernel_file: dir.join(file),
            kernel: kernel.to_string(),
            global,
            local: if local == [0, 0, 0] {
                None
            } else {
                Some(local)
            },
            tokens,
            last_line,
        })
    }

    /// The arguments for kernel `k`, read from the file's argument section.
    pub fn arguments(&self, k: &KernelInfo) -> Result<Vec<SimArg>, SimError> {
        let mut pos = 0usize;
        let mut out = Vec::new();
        let dir = self.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        for (i, p) in k.params.iter().enumerate() {
            let err = |line: usize, message: String| SimError {
                file: self.path.display().to_string(),
                line,
                message: format!("argument {i} (`{}`): {message}", p.name),
            };
            let Some(first) = self.tokens.get(pos) else {
                return Err(err(
                    self.last_line,
                    format!("missing; the kernel takes {} arguments", k.params.len()),
                ));
            };
            let line = first.line;
            let mut opts = Options::default();
            if first.text.starts_with('<') {
                opts = Options::parse(&first.text).map_err(|m| err(line, m))?;
                pos += 1;
            }
            let elem = opts
                .elem
                .or_else(|| Elem::from_name(&p.type_name))
                .unwrap_or(Elem::U8);
            let arg = match &p.kind {
                ArgKind::Local => SimArg::Local(
                    opts.size
                        .ok_or_else(|| err(line, "local memory needs <size=N>".into()))?,
                ),
                ArgKind::Unsupported(what) => {
                    return Err(err(
                        line,
                        format!("{what} cannot be given in a .sim file yet"),
                    ))
                }
                ArgKind::Image { .. } | ArgKind::Sampler => {
                    return Err(err(
                        line,
                        format!(
                            "{}, which Oclgrind's .sim format cannot give; pass it through the Rust API (`Arg::Image`, `Arg::Sampler`)",
                            p.kind.describe()
                        ),
                    ))
                }
                ArgKind::Global | ArgKind::Constant if opts.null => SimArg::Null,
                kind => {
                    let size = match kind {
                        ArgKind::Value { size, .. } | ArgKind::ByVal { size } => {
                            opts.size.unwrap_or(*size)
                        }
                        _ => opts
                            .size
                            .ok_or_else(|| err(line, "a buffer needs <size=N>".into()))?,
                    };
                    if (size == 0 || opts.null)
                        && matches!(kind, ArgKind::Global | ArgKind::Constant)
                    {
                        SimArg::Null
                    } else {
                        let bytes = self
                            .data(&opts, elem, size, &mut pos, &dir)
                            .map_err(|(l, m)| err(l.unwrap_or(line), m))?;
                        match kind {
                            ArgKind::Global | ArgKind::Constant => SimArg::Buffer {
                                buffer: SimBuffer::new(&bytes, &p.name, opts.access)
                                    .uninitialized(opts.noinit),
                                dump: opts.dump.then_some((elem, opts.hex)),
                            },
                            _ => SimArg::Value(bytes),
                        }
                    }
                }
            };
            out.push(arg);
        }
        if let Some(t) = self.tokens.get(pos) {
            return Err(SimError {
                file: self.path.display().to_string(),
                line: t.line,
                message: format!(
                    "`{}` after the kernel's {} arguments",
                    t.text,
                    k.params.len()
                ),
            });
        }
        Ok(out)
    }

    /// An argument's initial bytes.
    fn data(
        &self,
        o: &Options,
        elem: Elem,
        size: usize,
        pos: &mut usize,
        dir: &Path,
    ) -> Result<Vec<u8>, (Option<usize>, String)> {
        let es = elem.size();
        let mut bytes = vec![0u8; size];
        if let Some(f) = &o.file {
            let d = std::fs::read(dir.join(f)).map_err(|e| (None, format!("file={f}: {e}")))?;
            if d.len() < size {
                return Err((
                    None,
                    format!("file={f} has {} bytes, {size} needed", d.len()),
                ));
            }
            bytes.copy_from_slice(&d[..size]);
        } else if let Some(v) = &o.fill {
            let b = elem.parse(v, o.hex).ok_or_else(|| {
                (
                    None,
                    format!("fill={v} is not a value of type {}", elem.name()),
                )
            })?;
            // The first element, then the bytes made so far, doubling.
            let first = es.min(size);
            bytes[..first].copy_from_slice(&b[..first]);
            let mut done = first;
            while done > 0 && done < size {
                let n = done.min(size - done);
                bytes.copy_within(..n, done);
                done += n;
            }
        } else if let Some((a, s, e)) = &o.range {
            let parse = |t: &str| {
                t.parse::<f64>()
                    .map_err(|_| (None, format!("range: `{t}` is not a number")))
            };
            let (a, s, e) = (parse(a)?, parse(s)?, parse(e)?);
            if s == 0.0 {
                return Err((None, "range: the step is zero".into()));
            }
            // As Oclgrind: the range must give exactly the buffer's
            // elements, neither fewer nor more.
            let count = ((e - a) / s).floor() + 1.0;
            let want = (size / es) as f64;
            if count != want {
                return Err((
                    None,
                    format!(
                        "range={}:{}:{} gives {} values; the buffer holds {want}",
                        a,
                        s,
                        e,
                        count.max(0.0)
                    ),
                ));
            }
            let mut v = a;
            for c in bytes.chunks_mut(es) {
                if (s > 0.0 && v > e) || (s < 0.0 && v < e) {
                    break;
                }
                let b = elem.number_bytes(v).ok_or_else(|| {
                    let t = match elem {
                        Elem::F32 | Elem::F64 => v.to_string(),
                        _ => (v as i64).to_string(),
                    };
                    (
                        None,
                        format!("range value {t} is not a value of type {}", elem.name()),
                    )
                })?;
                let n = c.len();
                c.copy_from_slice(&b[..n]);
                v += s;
            }
        } else if !o.noinit {
            let n = size / es;
            for k in 0..n {
                let t = self.tokens.get(*pos).ok_or_else(|| {
                    (
                        Some(self.last_line),
                        format!("{n} values needed, {k} given"),
                    )
                })?;
                if t.text.starts_with('<') {
                    return Err((
                        Some(t.line),
                        format!("{n} values needed, {k} given before `{}`", t.text),
                    ));
                }
                let b = elem.parse(&t.text, o.hex).ok_or_else(|| {
                    (
                        Some(t.line),
                        format!("`{}` is not a value of type {}", t.text, elem.name()),
                    )
                })?;
                bytes[k * es..(k + 1) * es].copy_from_slice(&b);
                *pos += 1;
            }
        }
        Ok(bytes)
    }
}

/// The options of one `<...>`.
#[derive(Default)]
struct Options {
    size: Option<usize>,
    elem: Option<Elem>,
    fill: Option<String>,
    range: Option<(String, String, String)>,
    file: Option<String>,
    dump: bool,
    hex: bool,
    noinit: bool,
    null: bool,
    access: crate::exec::Access,
}

impl Options {
    fn parse(t: &str) -> Result<Options, String> {
        let mut o = Options::default();
        for w in t
            .trim_start_matches('<')
            .trim_end_matches('>')
            .split_whitespace()
        {
            let (k, v) = w
                .split_once('=')
                .map(|(k, v)| (k, Some(v)))
                .unwrap_or((w, None));
            match (k, v) {
                ("size", Some(v)) => {
                    o.size = Some(v.parse().map_err(|_| format!("size={v} is not a size"))?)
                }
                ("fill", Some(v)) => o.fill = Some(v.to_string()),
                ("file", Some(v)) => o.file = Some(v.to_string()),
                ("range", Some(v)) => {
                    let p: Vec<&str> = v.split(':').collect();
                    if p.len() != 3 {
                        return Err(format!("range={v}: START:STEP:END"));
                    }
                    o.range = Some((p[0].into(), p[1].into(), p[2].into()));
                }
                ("dump", None) => o.dump = true,
                ("hex", None) => o.hex = true,
                ("noinit", None) => o.noinit = true,
                ("null", None) => o.null = true,
                ("ro", None) => o.access = crate::exec::Access::ReadOnly,
                ("wo", None) => o.access = crate::exec::Access::WriteOnly,
                (name, None) if Elem::from_name(name).is_some() && !name.contains('*') => {
                    o.elem = Elem::from_name(name)
                }
                _ => return Err(format!("unknown option `{w}`")),
            }
        }
        Ok(o)
    }
}

/// One dumped buffer: its argument's name, its bytes, and each element as
/// `oclgrind-kernel` prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dump {
    /// The argument's name.
    pub name: String,
    /// Its size in bytes.
    pub bytes: usize,
    /// Its elements, formatted.
    pub values: Vec<String>,
}

/// The marked buffers' contents, in argument order.
pub fn dump_values(k: &KernelInfo, args: &[SimArg]) -> Vec<Dump> {
    dumped(k, args)
        .map(|(name, elem, hex, bytes)| Dump {
            name: name.to_string(),
            bytes: bytes.len(),
            values: bytes
                .chunks(elem.size())
                .filter(|c| c.len() == elem.size())
                .map(|c| elem.format(c, hex))
                .collect(),
        })
        .collect()
}

/// Each marked buffer: its argument's name, its element, whether in hex,
/// and its bytes.
fn dumped<'a>(
    k: &'a KernelInfo,
    args: &'a [SimArg],
) -> impl Iterator<Item = (&'a str, Elem, bool, Vec<u8>)> + 'a {
    k.params.iter().zip(args).filter_map(|(p, a)| match a {
        SimArg::Buffer {
            buffer,
            dump: Some((elem, hex)),
        } => Some((p.name.as_str(), *elem, *hex, buffer.to_bytes())),
        _ => None,
    })
}

/// The dumps of the marked buffers, in `oclgrind-kernel`'s format.
pub fn dumps(k: &KernelInfo, args: &[SimArg]) -> String {
    let mut out = String::new();
    for (name, elem, hex, bytes) in dumped(k, args) {
        let _ = writeln!(out, "\nArgument '{name}': {} bytes", bytes.len());
        let whole = bytes.chunks(elem.size()).filter(|c| c.len() == elem.size());
        for (i, c) in whole.enumerate() {
            out.push_str("  ");
            out.push_str(name);
            out.push('[');
            values::push_decimal(&mut out, i as u64);
            out.push_str("] = ");
            elem.format_into(c, hex, &mut out);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_line() {
        let e = Sim::parse("k.cl\nk\n4 x 1\n1 1 1\n", Path::new("t.sim")).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("`x`"), "{e}");
        let e = Sim::parse(
            "k.cl\nk\n4 1 1\n1 1 1\n<size=4 fill=0\n",
            Path::new("t.sim"),
        )
        .unwrap_err();
        assert_eq!(e.line, 5);
        let e = Sim::parse("k.cl\nk\n", Path::new("t.sim")).unwrap_err();
        assert!(e.message.contains("global size"), "{e}");
    }

    /// A fill repeats its element over the whole buffer, the last one cut
    /// short where the size is not a multiple of it.
    #[test]
    fn a_fill_repeats_its_element_to_the_last_byte() {
        for size in [0usize, 1, 2, 3, 4, 5, 7, 8, 9, 1000, 1023] {
            let text = format!("k.cl\nk\n1 1 1\n1 1 1\n<size={size} int fill=0x01020304 hex>\n");
            let sim = Sim::parse(&text, Path::new("t.sim")).unwrap();
            let mut pos = 0;
            let o = Options::parse(&format!("<size={size} int fill=0x01020304 hex>")).unwrap();
            let bytes = sim
                .data(&o, Elem::I32, size, &mut pos, Path::new("."))
                .unwrap();
            let want: Vec<u8> = (0..size).map(|i| [4u8, 3, 2, 1][i % 4]).collect();
            assert_eq!(bytes, want, "{size}");
        }
    }

    /// A value that is not one of its type is named with the type's
    /// OpenCL C name.
    #[test]
    fn a_bad_value_names_its_type_as_opencl_c_does() {
        let sim = Sim::parse("k.cl\nk\n1 1 1\n1 1 1\n", Path::new("t.sim")).unwrap();
        for (text, elem, name) in [("int 1", Elem::I32, "int"), ("1.5", Elem::U8, "uchar")] {
            let sim = Sim {
                tokens: text
                    .split(' ')
                    .map(|t| Token {
                        text: t.into(),
                        line: 7,
                    })
                    .collect(),
                ..sim.clone()
            };
            let o = Options::parse("<size=4>").unwrap();
            let e = sim
                .data(&o, elem, elem.size(), &mut 0, Path::new("."))
                .unwrap_err();
            assert_eq!(e.0, Some(7));
            assert!(
                e.1.ends_with(&format!("is not a value of type {name}")),
                "{}",
                e.1
            );
        }
    }
}
