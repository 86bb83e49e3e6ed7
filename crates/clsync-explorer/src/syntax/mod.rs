//! Reading litmus tests: Dat3M's OpenCL syntax (the tests in `shared/litmus/`)
//! and herd's (the tests in `shared/reference/herd-opencl/`), both its
//! C-like form with a trailing `scopeTree` and its older column form.
//!
//! ```
//! let test = clsync_explorer::syntax::parse(
//!     "OPENCL MP\n{ [x]=0; [y]=0; }\n\
//!      P0@wg 0, dev 0 (global int* x, global atomic_int* y) {\n\
//!        *x = 1; atomic_store_explicit(y, 1, memory_order_release);\n}\n\
//!      P1@wg 1, dev 0 (global int* x, global atomic_int* y) {\n\
//!        int r0 = atomic_load_explicit(y, memory_order_acquire); int r1 = *x;\n}\n\
//!      exists (1:r0=1 /\\ 1:r1=0)",
//! ).unwrap();
//! assert_eq!(test.threads.len(), 2);
//! assert_eq!(test.threads[1].work_group, 1);
//! ```
//!
//! A malformed file gets a [`ParseError`] with the line and column:
//!
//! ```
//! let e = clsync_explorer::syntax::parse("OPENCL T\n{}\nP0@wg 0, dev 0 () { *x = ; }").unwrap_err();
//! assert_eq!((e.span.line, e.span.column), (3, 26));
//! ```

pub mod ast;
mod columns;
mod lexer;
mod parser;

use std::fmt;

pub use ast::*;

/// A malformed litmus file: what is wrong, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{span}: {message}")]
pub struct ParseError {
    /// Where.
    pub span: Span,
    /// What.
    pub message: String,
}

impl ParseError {
    pub(crate) fn new(span: Span, message: impl Into<String>) -> Self {
        ParseError {
            span,
            message: message.into(),
        }
    }
}

/// Something legal to parse but outside the specification's rules, such as
/// a compare-exchange whose failure order is `memory_order_release`. The
/// test is still explored, with the meaning the model gives it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Warning {
    /// Where.
    pub span: Span,
    /// What.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: warning: {}", self.span, self.message)
    }
}

/// Parses a litmus test in any of the supported syntaxes.
pub fn parse(src: &str) -> Result<Test, ParseError> {
    parse_with_warnings(src).map(|(t, _)| t)
}

/// Parses a litmus test and also returns the warnings about rules it breaks.
pub fn parse_with_warnings(src: &str) -> Result<(Test, Vec<Warning>), ParseError> {
    let (header_line, header) = src
        .lines()
        .enumerate()
        .find(|(_, l)| !l.trim().is_empty())
        .ok_or_else(|| ParseError::new(Span { line: 1, column: 1 }, "the file is empty"))?;
    let mut words = header.split_whitespace();
    let arch = words.next().unwrap_or_default();
    let span = Span {
        line: header_line as u32 + 1,
        column: 1,
    };
    let dialect = match arch {
        "OPENCL" => Dialect::Dat3m,
        "OpenCL" => Dialect::Herd,
        other => {
            return Err(ParseError::new(
                span,
                format!(
                    "not an OpenCL litmus test: the header names `{other}`, not OPENCL or OpenCL"
                ),
            ))
        }
    };
    let name = header
        .trim()
        .strip_prefix(arch)
        .unwrap_or_default()
        .trim()
        .to_string();
    let rest_start = src
        .match_indices('\n')
        .nth(header_line)
        .map_or(src.len(), |(i, _)| i + 1);
    let body = &src[rest_start..];
    let first_line = header_line as u32 + 2;
    if dialect == Dialect::Herd && columns::looks_like_columns(body) {
        return columns::parse(name, body, first_line);
    }
    let tokens = lexer::lex(body, first_line)?;
    parser::Parser::new(tokens, dialect).test(name)
}
