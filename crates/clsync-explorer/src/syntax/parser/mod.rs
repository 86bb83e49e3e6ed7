//! The recursive-descent parser of the C-like syntaxes (Dat3M's and herd's):
//! the parser's state, its token helpers and a test's frame (the initial
//! state, the threads and their parameters) here; the placement of threads
//! (`scope`), the final condition (`condition`), statements (`stmt`) and
//! expressions (`expr`) in modules of their own, each adding to `Parser`.

mod condition;
mod expr;
mod scope;
mod stmt;

use super::ast::*;
use super::lexer::{Tok, Token};
use super::{ParseError, Warning};

type PResult<T> = Result<T, ParseError>;

/// Type words that may start a declaration or qualify a parameter.
pub(super) const TYPE_WORDS: &[&str] = &[
    "int",
    "long",
    "unsigned",
    "uint",
    "bool",
    "char",
    "short",
    "atomic_int",
    "atomic_uint",
    "atomic_long",
    "atomic_ulong",
    "intptr_t",
];

pub(crate) struct Parser {
    toks: Vec<Token>,
    pos: usize,
    dialect: Dialect,
    warnings: Vec<Warning>,
    /// Unlabelled barriers seen so far in the current thread.
    unlabelled: usize,
}

impl Parser {
    pub(crate) fn new(toks: Vec<Token>, dialect: Dialect) -> Self {
        Parser {
            toks,
            pos: 0,
            dialect,
            warnings: Vec::new(),
            unlabelled: 0,
        }
    }

    // ---- token helpers -------------------------------------------------

    pub(crate) fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }
    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)].tok
    }
    pub(crate) fn span(&self) -> Span {
        self.toks[self.pos].span
    }
    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    pub(crate) fn at(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }
    fn at_word(&self, w: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == w)
    }
    pub(crate) fn eat(&mut self, p: &str) -> bool {
        if self.at(p) {
            self.bump();
            true
        } else {
            false
        }
    }
    pub(crate) fn expect(&mut self, p: &str) -> PResult<Span> {
        if self.at(p) {
            Ok(self.bump().span)
        } else {
            Err(self.unexpected(&format!("`{p}`")))
        }
    }
    fn ident(&mut self, what: &str) -> PResult<(String, Span)> {
        match self.peek().clone() {
            Tok::Ident(s) => {
                let sp = self.bump().span;
                Ok((s, sp))
            }
            _ => Err(self.unexpected(what)),
        }
    }
    fn int(&mut self, what: &str) -> PResult<i64> {
        let neg = self.eat("-");
        match *self.peek() {
            Tok::Int(v) => {
                self.bump();
                Ok(if neg { -v } else { v })
            }
            _ => Err(self.unexpected(what)),
        }
    }
    pub(crate) fn unexpected(&self, wanted: &str) -> ParseError {
        let found = match self.peek() {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Int(v) => format!("`{v}`"),
            Tok::Str => "a string".to_string(),
            Tok::Punct(p) => format!("`{p}`"),
            Tok::Eof => "the end of the file".to_string(),
        };
        ParseError::new(self.span(), format!("expected {wanted}, found {found}"))
    }
    pub(crate) fn bump_pub(&mut self) {
        self.bump();
    }
    fn warn(&mut self, span: Span, message: String) {
        self.warnings.push(Warning { span, message });
    }

    // ---- the test --------------------------------------------------------

    pub(crate) fn test(mut self, name: String) -> PResult<(Test, Vec<Warning>)> {
        // herd headers carry strings and `Key=Value` lines before the init
        // block; skip to it.
        while !self.at("{") {
            if *self.peek() == Tok::Eof {
                return Err(self.unexpected("the initial-state block `{ … }`"));
            }
            self.bump();
        }
        let (init, reg_init) = self.init_block()?;
        let mut threads = Vec::new();
        while self.at_thread_header() {
            threads.push(self.thread()?);
        }
        if self.dialect == Dialect::Herd {
            self.scope_tree(&mut threads)?;
        }
        if threads.is_empty() {
            return Err(self.unexpected("a thread `P0 …`"));
        }
        let condition = self.condition()?;
        if *self.peek() != Tok::Eof {
            return Err(self.unexpected("the end of the test"));
        }
        threads.sort_by_key(|t| t.id);
        for w in threads.windows(2) {
            if w[0].id == w[1].id {
                return Err(ParseError::new(
                    w[1].span,
                    format!("thread P{} is defined twice", w[1].id),
                ));
            }
        }
        let test = Test {
            name,
            dialect: self.dialect,
            init,
            reg_init,
            threads,
            condition,
        };
        Ok((test, self.warnings))
    }

    #[allow(clippy::type_complexity)]
    pub(crate) fn init_block(
        &mut self,
    ) -> PResult<(Vec<(String, Vec<i64>)>, Vec<(usize, String, i64)>)> {
        self.expect("{")?;
        let (mut init, mut regs) = (Vec::new(), Vec::new());
        while !self.eat("}") {
            if self.eat(";") {
                continue;
            }
            while matches!(self.peek(), Tok::Ident(s) if TYPE_WORDS.contains(&s.as_str()) || s == "global" || s == "local" || s == "volatile")
            {
                self.bump();
            }
            if let Tok::Int(t) = *self.peek() {
                self.bump();
                self.expect(":")?;
                let (reg, _) = self.ident("a register name")?;
                self.expect("=")?;
                let v = self.int("an integer")?;
                regs.push((t as usize, reg, v));
            } else {
                let bracket = self.eat("[");
                let (loc, sp) = self.ident("a location name")?;
                if bracket {
                    self.expect("]")?;
                }
                // An array: `y[2] = {0, 0}` or `y[2]`.
                let len = if !bracket && self.eat("[") {
                    let n = self.int("an array length")?;
                    self.expect("]")?;
                    if !(1..=64).contains(&n) {
                        return Err(ParseError::new(
                            sp,
                            format!("array `{loc}` has length {n}; it must be 1 to 64"),
                        ));
                    }
                    Some(n as usize)
                } else {
                    None
                };
                let v = if self.eat("=") {
                    if len.is_some() && self.eat("{") {
                        let mut vs = Vec::new();
                        while !self.eat("}") {
                            vs.push(self.int("an integer")?);
                            if !self.at("}") {
                                self.expect(",")?;
                            }
                        }
                        if vs.len() != len.unwrap_or(0) {
                            return Err(ParseError::new(
                                sp,
                                format!(
                                    "array `{loc}` has length {} but {} initial values",
                                    len.unwrap_or(0),
                                    vs.len()
                                ),
                            ));
                        }
                        vs
                    } else {
                        vec![self.int("an integer initial value")?; len.unwrap_or(1)]
                    }
                } else {
                    vec![0; len.unwrap_or(1)]
                };
                if init.iter().any(|(l, _)| *l == loc) {
                    return Err(ParseError::new(
                        sp,
                        format!("location `{loc}` is initialized twice"),
                    ));
                }
                init.push((loc, v));
            }
            if !self.at("}") {
                self.expect(";")?;
            }
        }
        Ok((init, regs))
    }

    fn at_thread_header(&self) -> bool {
        matches!(self.peek(), Tok::Ident(s) if thread_number(s).is_some())
    }

    fn thread(&mut self) -> PResult<Thread> {
        let span = self.span();
        let (name, _) = self.ident("a thread")?;
        let id = thread_number(&name).expect("checked by at_thread_header");
        let (mut work_group, mut device) = (0, 0);
        if self.dialect == Dialect::Dat3m {
            self.expect("@")?;
            loop {
                let (what, sp) = self.ident("`wg` or `dev`")?;
                let at = self.span();
                let n = self.int("a number")?;
                let n = usize::try_from(n).map_err(|_| {
                    ParseError::new(at, format!("`{what} {n}`: a placement is not negative"))
                })?;
                match what.as_str() {
                    "wg" => work_group = n,
                    "dev" => device = n,
                    "sg" => {
                        return Err(ParseError::new(
                            sp,
                            "sub-group placement is not supported: the model of opencl.cat has no sub-group relation",
                        ))
                    }
                    _ => {
                        return Err(ParseError::new(
                            sp,
                            format!("expected `wg` or `dev`, found `{what}`"),
                        ))
                    }
                }
                if !self.eat(",") {
                    break;
                }
            }
        } else {
            // herd: placement comes from the scopeTree; mark it unknown.
            work_group = usize::MAX;
        }
        self.expect("(")?;
        let mut params = Vec::new();
        while !self.eat(")") {
            params.push(self.param()?);
            if !self.at(")") {
                self.expect(",")?;
            }
        }
        self.unlabelled = 0;
        let body = self.block()?;
        Ok(Thread {
            id,
            work_group,
            device,
            params,
            body,
            span,
        })
    }

    fn param(&mut self) -> PResult<Param> {
        let span = self.span();
        let (mut space, mut atomic, mut typed) = (Space::Generic, false, false);
        loop {
            match self.peek().clone() {
                Tok::Ident(w) if w == "volatile" || w == "const" => {
                    self.bump();
                }
                Tok::Ident(w) if w == "global" || w == "__global" => {
                    self.bump();
                    space = Space::Global;
                }
                Tok::Ident(w) if w == "local" || w == "__local" => {
                    self.bump();
                    space = Space::Local;
                }
                Tok::Ident(w) if TYPE_WORDS.contains(&w.as_str()) => {
                    self.bump();
                    atomic |= w.starts_with("atomic_");
                    typed = true;
                }
                _ => break,
            }
        }
        if !typed {
            return Err(self.unexpected("a parameter type such as `global atomic_int*`"));
        }
        self.expect("*")?;
        let (name, _) = self.ident("a parameter name")?;
        Ok(Param {
            name,
            space,
            atomic,
            span,
        })
    }
}

/// `P12` → 12.
pub(crate) fn thread_number(s: &str) -> Option<usize> {
    s.strip_prefix('P')?.parse().ok()
}
