//! Natural-number expressions as C expressions.
//!
//! Index expressions are built as [`Nat`]s, simplified by `arith` (canonical
//! forms and range reasoning), and printed with [`Nat::to_c`], which
//! parenthesises every compound sub-expression. To print them with the
//! parentheses a person would write (`x[i * 4 + j]`, not `x[((i * 4) + j)]`),
//! that text is read back into an [`Expr`]; what the small reader does not
//! know (symbolic powers) stays [`Expr::Raw`] text, which is valid C as is.

use arith::Nat;

use crate::ast::{BinOp, Expr, UnOp};

/// `n`, simplified, as a C expression over `int` variables.
pub fn nat_to_expr(n: &Nat) -> Expr {
    let text = n.simplify().to_c();
    parse(&text).unwrap_or(Expr::Raw(text))
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(i64),
    Ident(String),
    Sym(char),
}

fn tokens(s: &str) -> Option<Vec<Tok>> {
    let cs: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < cs.len() && cs[i].is_ascii_digit() {
                i += 1;
            }
            let text: String = cs[start..i].iter().collect();
            out.push(Tok::Int(text.parse().ok()?));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < cs.len() && (cs[i].is_ascii_alphanumeric() || cs[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(cs[start..i].iter().collect()));
        } else if "+-*/%()?:<>".contains(c) {
            // `<<` (powers of two) is left to the raw text
            if (c == '<' || c == '>') && cs.get(i + 1) == Some(&c) {
                return None;
            }
            out.push(Tok::Sym(c));
            i += 1;
        } else {
            return None;
        }
    }
    Some(out)
}

fn parse(s: &str) -> Option<Expr> {
    let toks = tokens(s)?;
    let mut p = Parser { toks, pos: 0 };
    let e = p.ternary()?;
    (p.pos == p.toks.len()).then_some(e)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek_sym(&self) -> Option<char> {
        match self.toks.get(self.pos) {
            Some(Tok::Sym(c)) => Some(*c),
            _ => None,
        }
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek_sym() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn ternary(&mut self) -> Option<Expr> {
        let c = self.comparison()?;
        if !self.eat('?') {
            return Some(c);
        }
        let a = self.ternary()?;
        if !self.eat(':') {
            return None;
        }
        let b = self.ternary()?;
        Some(min_max_constant_last(c, a, b))
    }

    fn comparison(&mut self) -> Option<Expr> {
        let a = self.sum()?;
        let op = match self.peek_sym() {
            Some('<') => BinOp::Lt,
            Some('>') => BinOp::Gt,
            _ => return Some(a),
        };
        self.pos += 1;
        let b = self.sum()?;
        Some(Expr::binary(op, a, b))
    }

    fn sum(&mut self) -> Option<Expr> {
        let mut a = self.product()?;
        loop {
            let op = match self.peek_sym() {
                Some('+') => BinOp::Add,
                Some('-') => BinOp::Sub,
                _ => return Some(a),
            };
            self.pos += 1;
            let b = self.product()?;
            a = Expr::binary(op, a, b);
        }
    }

    fn product(&mut self) -> Option<Expr> {
        let mut a = self.unary()?;
        loop {
            let op = match self.peek_sym() {
                Some('*') => BinOp::Mul,
                Some('/') => BinOp::Div,
                Some('%') => BinOp::Mod,
                _ => return Some(a),
            };
            self.pos += 1;
            let b = self.unary()?;
            a = Expr::binary(op, a, b);
        }
    }

    fn unary(&mut self) -> Option<Expr> {
        if self.eat('-') {
            return Some(match self.unary()? {
                Expr::Int(v) => Expr::Int(v.checked_neg()?),
                e => Expr::unary(UnOp::Neg, e),
            });
        }
        match self.toks.get(self.pos).cloned()? {
            Tok::Int(v) => {
                self.pos += 1;
                Some(Expr::Int(v))
            }
            Tok::Ident(name) => {
                self.pos += 1;
                // a call (`pow`) or a cast (`(long)`) is left to the raw text
                (self.peek_sym() != Some('(')).then_some(Expr::Ident(name))
            }
            Tok::Sym('(') => {
                self.pos += 1;
                let e = self.ternary()?;
                self.eat(')').then_some(e)
            }
            Tok::Sym(_) => None,
        }
    }
}

/// `0 > e ? 0 : e` (how `max(0, e)` prints) as a person writes it: `e > 0 ? e : 0`.
fn min_max_constant_last(c: Expr, a: Expr, b: Expr) -> Expr {
    if let Expr::Binary(op @ (BinOp::Lt | BinOp::Gt), x, y) = &c {
        if **x == a && **y == b && matches!(a, Expr::Int(_)) && !matches!(b, Expr::Int(_)) {
            // `x > y ? x : y` and `y > x ? y : x` are both max(x, y)
            return Expr::ternary(Expr::binary(*op, b.clone(), a.clone()), b, a);
        }
    }
    Expr::ternary(c, a, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::print::expr;
    use arith::Var;

    fn ranged(name: &str, hi: Nat) -> Nat {
        Nat::var(&Var::with_range(name, Nat::cst(0), hi))
    }

    #[test]
    fn indices_print_like_hand_written_ones() {
        let n = Nat::var(&Var::new("n"));
        let i = ranged("i", n.clone());
        let j = ranged("j", Nat::cst(4));
        assert_eq!(expr(&nat_to_expr(&(&i * 4 + &j))), "i * 4 + j");
        assert_eq!(
            expr(&nat_to_expr(&(&i * 4 + &j).floor_div(&Nat::cst(4)))),
            "i"
        );
        assert_eq!(expr(&nat_to_expr(&(&i * 4 + &j).modulo(&Nat::cst(4)))), "j");
        assert_eq!(expr(&nat_to_expr(&(&i - 1))), "i - 1");
        assert_eq!(expr(&nat_to_expr(&(Nat::cst(0) - &i))), "-i");
        assert_eq!(expr(&nat_to_expr(&Nat::cst(-3))), "-3");
        assert_eq!(expr(&nat_to_expr(&n.floor_div(&Nat::cst(4)))), "n / 4");
        let clamp = Nat::max(&(&i - 1), &Nat::cst(0));
        assert_eq!(expr(&nat_to_expr(&clamp)), "i - 1 > 0 ? i - 1 : 0");
        let lo = Nat::min(&(&i - 1), &Nat::cst(0));
        assert_eq!(expr(&nat_to_expr(&lo)), "i - 1 < 0 ? i - 1 : 0");
        let clamp = Nat::min(&(&i + 1), &(&n - 1));
        assert_eq!(expr(&nat_to_expr(&clamp)), "n - 1 < i + 1 ? n - 1 : i + 1");
    }

    #[test]
    fn unknown_shapes_stay_raw_but_valid() {
        let n = Nat::var(&Var::new("n"));
        let p = Nat::cst(2).pow(&n);
        assert_eq!(nat_to_expr(&p), Expr::Raw("(1L << n)".into()));
        assert_eq!(parse("(a) b"), None);
        assert_eq!(
            parse("(-9223372036854775807 - 1)"),
            Some(Expr::binary(
                BinOp::Sub,
                Expr::Int(-9223372036854775807),
                Expr::Int(1)
            ))
        );
    }
}
