//! The final condition: `exists`, `~exists` or `forall` over a proposition.

use super::super::ast::*;
use super::super::lexer::Tok;
use super::{PResult, Parser};

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
        let prop = self.prop_or()?;
        Ok(Some(Condition { quantifier, prop }))
    }

    fn prop_or(&mut self) -> PResult<Prop> {
        let mut p = self.prop_and()?;
        while self.eat("\\/") {
            p = Prop::Or(Box::new(p), Box::new(self.prop_and()?));
        }
        Ok(p)
    }
    fn prop_and(&mut self) -> PResult<Prop> {
        let mut p = self.prop_unary()?;
        while self.eat("/\\") {
            p = Prop::And(Box::new(p), Box::new(self.prop_unary()?));
        }
        Ok(p)
    }
    fn prop_unary(&mut self) -> PResult<Prop> {
        if self.eat("~") {
            return Ok(Prop::Not(Box::new(self.prop_unary()?)));
        }
        if self.eat("(") {
            let p = self.prop_or()?;
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
