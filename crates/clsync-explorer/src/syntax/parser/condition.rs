//! The final condition: `exists`, `~exists` or `forall` over a proposition.

use super::super::ast::*;
use super::super::lexer::Tok;
use super::{PResult, Parser};

/// Each variable of a condition and where it is first named.
type Mentions = Vec<(Var, Span)>;

impl Parser {
    pub(crate) fn condition(&mut self) -> PResult<Option<Condition>> {
        if self.at_word("locations") {
            while !self.eat(";") {
                if *self.peek() == Tok::Eof {
                    return Err(self.unexpected("`;` ending `locations`"));
                }
                self.bump();
            }
        }
        let quantifier = if self.at_word("exists") {
            self.bump();
            Quantifier::Exists
        } else if self.at_word("forall") {
            self.bump();
            Quantifier::Forall
        } else if self.at("~") && matches!(self.peek_at(1), Tok::Ident(s) if s == "exists") {
            self.bump();
            self.bump();
            Quantifier::NotExists
        } else if *self.peek() == Tok::Eof {
            return Ok(None);
        } else {
            return Err(self.unexpected("`exists`, `~exists` or `forall`"));
        };
        let mut mentions = Vec::new();
        let prop = self.prop_or(&mut mentions)?;
        Ok(Some(Condition {
            quantifier,
            prop,
            mentions,
        }))
    }

    fn prop_or(&mut self, m: &mut Mentions) -> PResult<Prop> {
        let mut p = self.prop_and(m)?;
        while self.eat("\\/") {
            p = Prop::Or(Box::new(p), Box::new(self.prop_and(m)?));
        }
        Ok(p)
    }
    fn prop_and(&mut self, m: &mut Mentions) -> PResult<Prop> {
        let mut p = self.prop_unary(m)?;
        while self.eat("/\\") {
            p = Prop::And(Box::new(p), Box::new(self.prop_unary(m)?));
        }
        Ok(p)
    }
    fn prop_unary(&mut self, m: &mut Mentions) -> PResult<Prop> {
        if self.eat("~") {
            return Ok(Prop::Not(Box::new(self.prop_unary(m)?)));
        }
        if self.eat("(") {
            let p = self.prop_or(m)?;
            self.expect(")")?;
            return Ok(p);
        }
        if self.at_word("true") {
            self.bump();
            return Ok(Prop::True);
        }
        if self.at_word("false") {
            self.bump();
            return Ok(Prop::False);
        }
        let at = self.span();
        let var = match self.peek().clone() {
            Tok::Int(t) => {
                self.bump();
                self.expect(":")?;
                let (r, _) = self.ident("a register name")?;
                Var::Reg(t as usize, r)
            }
            Tok::Punct("[") => {
                self.bump();
                let (l, _) = self.ident("a location name")?;
                self.expect("]")?;
                Var::Loc(l)
            }
            Tok::Ident(l) => {
                self.bump();
                Var::Loc(l)
            }
            _ => return Err(self.unexpected("`T:reg`, a location, `(` or `~`")),
        };
        if !m.iter().any(|(v, _)| *v == var) {
            m.push((var.clone(), at));
        }
        let eq = if self.eat("=") || self.eat("==") {
            true
        } else if self.eat("!=") {
            false
        } else {
            return Err(self.unexpected("`=` or `!=`"));
        };
        let v = self.int("an integer")?;
        Ok(if eq {
            Prop::Eq(var, v)
        } else {
            Prop::Ne(var, v)
        })
    }
}
