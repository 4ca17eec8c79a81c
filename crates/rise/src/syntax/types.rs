//! Parsing types, kinds and natural numbers (the notation of the papers: `n.t`,
//! `(s, t)`, `idx[n]`, `vec[t, n]`, `{n: nat} -> t`, `(n: nat) -> t`).

use super::cursor::{PResult, Parser};
use super::lexer::Token;
use crate::span::Diagnostic;
use crate::types::{Binder, DataType, Kind, NatToData, ScalarType, Type};
use arith::{Nat, Var};

/// The most dimensions an array type may have (deeper types are surely a mistake,
/// and would make every pass over types recurse that deep).
pub const MAX_DIMENSIONS: usize = 64;

impl Parser {
    /// `type := binders -> type | atom (-> type)?`
    pub fn parse_type(&mut self) -> PResult<Type> {
        if let Some(binders) = self.try_binders()? {
            let (binders, implicit) = binders;
            self.expect(&Token::Arrow, "`->` after the binders")?;
            let body = self.parse_type()?;
            return Ok(binders
                .into_iter()
                .rev()
                .fold(body, |t, b| Type::dep_fun(b, implicit, t)));
        }
        let lhs = self.parse_type_atom()?;
        if self.eat(&Token::Arrow) {
            let rhs = self.parse_type()?;
            Ok(Type::fun(lhs, rhs))
        } else {
            Ok(lhs)
        }
    }

    /// `{a b: kind}` or `(a b: kind)`; `None` (and nothing consumed) otherwise.
    fn try_binders(&mut self) -> PResult<Option<(Vec<Binder>, bool)>> {
        let (close, implicit) = match self.peek() {
            Some(Token::LBrace) => (Token::RBrace, true),
            Some(Token::LParen) => (Token::RParen, false),
            _ => return Ok(None),
        };
        let mut k = 1;
        while let Some(Token::Ident(_)) = self.peek_at(k) {
            k += 1;
        }
        if k == 1 || self.peek_at(k) != Some(&Token::Colon) {
            if implicit {
                self.bump();
                return Err(self.error_expected("binder names, as in `{n: nat}`"));
            }
            return Ok(None);
        }
        self.bump();
        let mut names = Vec::new();
        while let Some(Token::Ident(_)) = self.peek() {
            names.push(self.ident("a name")?.0);
        }
        self.expect(&Token::Colon, "`:`")?;
        let kind = self.parse_kind()?;
        self.expect(&close, "the end of the binder")?;
        Ok(Some((
            names.into_iter().map(|n| Binder::new(n, kind)).collect(),
            implicit,
        )))
    }

    /// `nat | data | addrSpace | nat -> nat | nat -> data`
    pub fn parse_kind(&mut self) -> PResult<Kind> {
        let (name, span) = self.ident("a kind (`nat`, `data`, `addrSpace`)")?;
        match name.as_str() {
            "data" => Ok(Kind::Data),
            "addrSpace" => Ok(Kind::AddrSpace),
            "nat" => {
                if self.eat(&Token::Arrow) {
                    let (to, span) = self.ident("`nat` or `data`")?;
                    match to.as_str() {
                        "nat" => Ok(Kind::NatToNat),
                        "data" => Ok(Kind::NatToData),
                        _ => Err(Diagnostic::new(span, format!("unknown kind `nat -> {to}`"))
                            .with_note("kinds are nat, data, addrSpace, nat -> nat, nat -> data")),
                    }
                } else {
                    Ok(Kind::Nat)
                }
            }
            _ => Err(Diagnostic::new(span, format!("unknown kind `{name}`"))
                .with_note("kinds are nat, data, addrSpace, nat -> nat, nat -> data")),
        }
    }

    /// A type that is not a function type at the top (parenthesised types allowed).
    fn parse_type_atom(&mut self) -> PResult<Type> {
        if self.peek() == Some(&Token::LParen) {
            let mark = self.mark();
            // `(nat).t`: an array whose size is a parenthesised expression.
            if let Ok(d) = self.parse_data_type() {
                return Ok(Type::Data(d));
            }
            self.reset(mark);
            self.bump();
            let t = self.parse_type()?;
            if self.eat(&Token::Comma) {
                let rhs = self.parse_type()?;
                self.expect(&Token::RParen, "`)`")?;
                let span = self.prev_span();
                return match (t, rhs) {
                    (Type::Data(a), Type::Data(b)) => Ok(Type::Data(DataType::pair(a, b))),
                    _ => Err(Diagnostic::new(span, "pair components must be data types")),
                };
            }
            self.expect(&Token::RParen, "`)`")?;
            return Ok(t);
        }
        Ok(Type::Data(self.parse_data_type()?))
    }

    /// A data type.
    pub fn parse_data_type(&mut self) -> PResult<DataType> {
        let start = self.span();
        // Array: size `.` element.
        let mark = self.mark();
        if let Some(sizes) = self.try_array_sizes()? {
            let elem = self.parse_data_type()?;
            return Ok(sizes
                .into_iter()
                .rev()
                .fold(elem, |t, n| DataType::array(n, t)));
        }
        self.reset(mark);
        match self.bump() {
            Some(Token::LParen) => {
                let a = self.parse_data_type()?;
                if self.eat(&Token::Comma) {
                    let b = self.parse_data_type()?;
                    self.expect(&Token::RParen, "`)`")?;
                    Ok(DataType::pair(a, b))
                } else {
                    self.expect(&Token::RParen, "`)`")?;
                    Ok(a)
                }
            }
            Some(Token::Ident(name)) => match name.as_str() {
                "idx" => {
                    self.expect(&Token::LBracket, "`[`")?;
                    let n = self.parse_nat()?;
                    self.expect(&Token::RBracket, "`]`")?;
                    Ok(DataType::Index(n))
                }
                "vec" => {
                    self.expect(&Token::LBracket, "`[`")?;
                    let t = self.parse_data_type()?;
                    self.expect(&Token::Comma, "`,`")?;
                    let n = self.parse_nat()?;
                    self.expect(&Token::RBracket, "`]`")?;
                    Ok(DataType::vector(t, n))
                }
                "natType" => Ok(DataType::NatType),
                _ => {
                    if let Some(s) = ScalarType::from_name(&name) {
                        return Ok(DataType::Scalar(s));
                    }
                    if self.peek() == Some(&Token::LParen) {
                        self.bump();
                        let n = self.parse_nat()?;
                        self.expect(&Token::RParen, "`)`")?;
                        return Ok(DataType::NatToDataApp(NatToData::Var(name.into()), n));
                    }
                    Ok(DataType::Var(name.into()))
                }
            },
            _ => {
                self.reset(mark);
                Err(self.error_expected("a data type").with_label(format!(
                    "a data type starts here{}",
                    if start == self.span() { "" } else { "?" }
                )))
            }
        }
    }

    /// Sizes of an array prefix `n.m.` (consumes them), or `None` (nothing consumed).
    fn try_array_sizes(&mut self) -> PResult<Option<Vec<Nat>>> {
        let mut sizes = Vec::new();
        loop {
            if sizes.len() > MAX_DIMENSIONS {
                return Err(Diagnostic::new(
                    self.span(),
                    format!("array type with more than {MAX_DIMENSIONS} dimensions"),
                ));
            }
            let mark = self.mark();
            match self.peek().cloned() {
                // `1024.1024` lexes as a float: two sizes.
                Some(Token::Float(text)) => {
                    let Some((a, b)) = text.split_once('.') else {
                        break;
                    };
                    let (Ok(a), Ok(b)) = (a.parse::<i64>(), b.parse::<i64>()) else {
                        break;
                    };
                    if self.peek_at(1) != Some(&Token::Dot) {
                        break;
                    }
                    self.bump();
                    self.bump();
                    sizes.push(Nat::cst(a));
                    sizes.push(Nat::cst(b));
                    continue;
                }
                Some(Token::Int(_)) | Some(Token::Ident(_)) | Some(Token::LParen) => {}
                _ => break,
            }
            match self.parse_nat_atom() {
                Ok(n) if self.peek() == Some(&Token::Dot) => {
                    self.bump();
                    sizes.push(n);
                }
                _ => {
                    self.reset(mark);
                    break;
                }
            }
        }
        Ok((!sizes.is_empty()).then_some(sizes))
    }

    /// A natural-number expression: `+ -` < `* / % /^` < `^` < atoms.
    pub fn parse_nat(&mut self) -> PResult<Nat> {
        let mut lhs = self.parse_nat_term()?;
        loop {
            if self.eat(&Token::Plus) {
                let rhs = self.parse_nat_term()?;
                lhs = std::ops::Add::add(lhs, rhs);
            } else if self.eat(&Token::Minus) {
                let rhs = self.parse_nat_term()?;
                lhs = std::ops::Sub::sub(lhs, rhs);
            } else {
                return Ok(lhs);
            }
        }
    }

    fn parse_nat_term(&mut self) -> PResult<Nat> {
        let mut lhs = self.parse_nat_power()?;
        loop {
            if self.eat(&Token::Star) {
                let rhs = self.parse_nat_power()?;
                lhs = std::ops::Mul::mul(lhs, rhs);
            } else if self.eat(&Token::Slash) {
                lhs = lhs.floor_div(&self.parse_nat_power()?);
            } else if self.eat(&Token::SlashHat) {
                lhs = lhs.div_exact(&self.parse_nat_power()?);
            } else if self.eat(&Token::Percent) {
                lhs = lhs.modulo(&self.parse_nat_power()?);
            } else {
                return Ok(lhs);
            }
        }
    }

    fn parse_nat_power(&mut self) -> PResult<Nat> {
        let base = self.parse_nat_atom()?;
        if self.eat(&Token::Caret) {
            let exp = self.parse_nat_power()?;
            Ok(base.pow(&exp))
        } else {
            Ok(base)
        }
    }

    /// `123 | name | (nat) | min(a, b) | max(a, b) | xor(a, b)`
    pub fn parse_nat_atom(&mut self) -> PResult<Nat> {
        match self.peek().cloned() {
            Some(Token::Int(text)) => {
                self.bump();
                text.parse::<i64>().map(Nat::cst).map_err(|_| {
                    Diagnostic::new(
                        self.prev_span(),
                        format!("`{text}` is not a natural number"),
                    )
                })
            }
            Some(Token::Ident(name))
                if matches!(name.as_str(), "min" | "max" | "xor")
                    && self.peek_at(1) == Some(&Token::LParen) =>
            {
                self.bump();
                self.bump();
                let a = self.parse_nat()?;
                self.expect(&Token::Comma, "`,`")?;
                let b = self.parse_nat()?;
                self.expect(&Token::RParen, "`)`")?;
                Ok(match name.as_str() {
                    "min" => Nat::min(&a, &b),
                    "max" => Nat::max(&a, &b),
                    _ => a.xor(&b),
                })
            }
            Some(Token::Ident(name)) => {
                self.bump();
                Ok(Nat::var(&Var::new(name)))
            }
            Some(Token::LParen) => {
                self.bump();
                let n = self.parse_nat()?;
                self.expect(&Token::RParen, "`)`")?;
                Ok(n)
            }
            _ => Err(self.error_expected("a natural number")),
        }
    }
}
