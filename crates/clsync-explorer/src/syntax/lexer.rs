//! Tokens of litmus files, with their positions.
//!
//! Comments are `// …`, `/* … */` and OCaml-style `(* … *)`. `(*` opens a
//! comment only when a space, a line break or another `*` follows it, so a
//! dereference in parentheses, `(*x)`, stays code.

use super::ast::Span;
use super::ParseError;

/// A token.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// A name (letters, digits, `_`; may start with `_`).
    Ident(String),
    /// An integer literal.
    Int(i64),
    /// A quoted string (herd's header comments).
    Str,
    /// Punctuation, as written: `{`, `==`, `/\`, …
    Punct(&'static str),
    /// End of input.
    Eof,
}

/// A token and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// The token.
    pub tok: Tok,
    /// Its position.
    pub span: Span,
}

const PUNCTS: &[&str] = &[
    "/\\", "\\/", "==", "!=", "<=", ">=", "&&", "||", "->", "{", "}", "(", ")", "[", "]", ";", ",",
    ":", "*", "=", "<", ">", "+", "-", "/", "%", "&", "|", "^", "!", "~", "@", ".",
];

/// Splits `src` into tokens. `first_line` is the line number of `src`'s
/// first line in the file.
pub fn lex(src: &str, first_line: u32) -> Result<Vec<Token>, ParseError> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line, mut col) = (0usize, first_line, 1u32);
    let advance = |i: &mut usize, line: &mut u32, col: &mut u32, n: usize| {
        for _ in 0..n {
            if bytes[*i] == b'\n' {
                *line += 1;
                *col = 1;
            } else {
                *col += 1;
            }
            *i += 1;
        }
    };
    while i < bytes.len() {
        let c = bytes[i];
        let span = Span { line, column: col };
        if c.is_ascii_whitespace() {
            advance(&mut i, &mut line, &mut col, 1);
        } else if src[i..].starts_with("//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                advance(&mut i, &mut line, &mut col, 1);
            }
        } else if src[i..].starts_with("/*") || is_ocaml_comment(&bytes[i..]) {
            let close = if c == b'/' { "*/" } else { "*)" };
            advance(&mut i, &mut line, &mut col, 2);
            loop {
                if i >= bytes.len() {
                    return Err(ParseError::new(span, "comment is never closed"));
                }
                if src[i..].starts_with(close) {
                    advance(&mut i, &mut line, &mut col, 2);
                    break;
                }
                advance(&mut i, &mut line, &mut col, 1);
            }
        } else if c == b'"' {
            advance(&mut i, &mut line, &mut col, 1);
            while i < bytes.len() && bytes[i] != b'"' {
                advance(&mut i, &mut line, &mut col, 1);
            }
            if i >= bytes.len() {
                return Err(ParseError::new(span, "string is never closed"));
            }
            advance(&mut i, &mut line, &mut col, 1);
            out.push(Token {
                tok: Tok::Str,
                span,
            });
        } else if c.is_ascii_digit() {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                advance(&mut i, &mut line, &mut col, 1);
            }
            let text = &src[start..i];
            let value = if let Some(hex) = text.strip_prefix("0x") {
                i64::from_str_radix(hex, 16)
            } else {
                text.parse::<i64>()
            }
            .map_err(|_| ParseError::new(span, format!("`{text}` is not an integer")))?;
            out.push(Token {
                tok: Tok::Int(value),
                span,
            });
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                advance(&mut i, &mut line, &mut col, 1);
            }
            out.push(Token {
                tok: Tok::Ident(src[start..i].to_string()),
                span,
            });
        } else if let Some(p) = PUNCTS.iter().find(|p| src[i..].starts_with(**p)) {
            advance(&mut i, &mut line, &mut col, p.len());
            out.push(Token {
                tok: Tok::Punct(p),
                span,
            });
        } else {
            let ch = src[i..].chars().next().unwrap_or('?');
            return Err(ParseError::new(
                span,
                format!("unexpected character `{ch}`"),
            ));
        }
    }
    out.push(Token {
        tok: Tok::Eof,
        span: Span { line, column: col },
    });
    Ok(out)
}

fn is_ocaml_comment(rest: &[u8]) -> bool {
    rest.len() >= 3
        && rest[0] == b'('
        && rest[1] == b'*'
        && (rest[2].is_ascii_whitespace() || rest[2] == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_dereference() {
        let toks = lex("(* c *) if (*x) // d\n/* e */ y", 1).unwrap();
        let kinds: Vec<_> = toks.into_iter().map(|t| t.tok).collect();
        assert_eq!(
            kinds,
            vec![
                Tok::Ident("if".into()),
                Tok::Punct("("),
                Tok::Punct("*"),
                Tok::Ident("x".into()),
                Tok::Punct(")"),
                Tok::Ident("y".into()),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn positions_count_lines_and_columns() {
        let toks = lex("a\n  b", 5).unwrap();
        assert_eq!(toks[1].span, Span { line: 6, column: 3 });
    }

    #[test]
    fn unclosed_comment_is_an_error_with_its_start() {
        let e = lex("x (* never", 1).unwrap_err();
        assert_eq!(e.span, Span { line: 1, column: 3 });
    }
}
