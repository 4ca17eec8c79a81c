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

/// `n` as [`nat_to_expr`] prints it, with the terms of sums and the factors
/// of products in the order a person writes an index: outer loop variables
/// first (`rank` gives a loop variable's depth, `None` for other names), then
/// sizes, then constants (`i7 * n * 32 + i9 * 32 + i27 * n + i28`). Only the
/// order of integer terms and factors changes, not the value.
pub fn nat_to_index(n: &Nat, rank: &dyn Fn(&str) -> Option<usize>) -> Expr {
    reorder(nat_to_expr(n), rank)
}

fn reorder(e: Expr, rank: &dyn Fn(&str) -> Option<usize>) -> Expr {
    match e {
        Expr::Binary(BinOp::Add | BinOp::Sub, ..) => {
            let mut terms = Vec::new();
            flatten_sum(e, false, &mut terms);
            let mut terms: Vec<(bool, Expr)> = terms
                .into_iter()
                .map(|(neg, t)| (neg, reorder(t, rank)))
                .collect();
            terms.sort_by_key(|(_, t)| key(t, rank));
            // a sum starts with a positive term where it has one: `n - i - 1`, not `-i + n - 1`
            if let Some(p) = terms.iter().position(|(neg, _)| !neg) {
                let first = terms.remove(p);
                terms.insert(0, first);
            }
            let mut it = terms.into_iter();
            let Some((neg, first)) = it.next() else {
                return Expr::Int(0);
            };
            let start = if neg {
                Expr::unary(UnOp::Neg, first)
            } else {
                first
            };
            it.fold(start, |acc, (neg, t)| {
                Expr::binary(if neg { BinOp::Sub } else { BinOp::Add }, acc, t)
            })
        }
        Expr::Binary(BinOp::Mul, ..) => {
            let mut factors = Vec::new();
            flatten_product(e, &mut factors);
            let mut factors: Vec<Expr> = factors.into_iter().map(|f| reorder(f, rank)).collect();
            factors.sort_by_key(|f| key(f, rank));
            let mut it = factors.into_iter();
            let first = it.next().unwrap_or(Expr::Int(1));
            it.fold(first, |acc, f| Expr::binary(BinOp::Mul, acc, f))
        }
        Expr::Binary(op, a, b) => Expr::binary(op, reorder(*a, rank), reorder(*b, rank)),
        Expr::Ternary(c, a, b) => {
            Expr::ternary(reorder(*c, rank), reorder(*a, rank), reorder(*b, rank))
        }
        Expr::Unary(op, a) => Expr::unary(op, reorder(*a, rank)),
        e => e,
    }
}

fn flatten_sum(e: Expr, neg: bool, out: &mut Vec<(bool, Expr)>) {
    match e {
        Expr::Binary(BinOp::Add, a, b) => {
            flatten_sum(*a, neg, out);
            flatten_sum(*b, neg, out);
        }
        Expr::Binary(BinOp::Sub, a, b) => {
            flatten_sum(*a, neg, out);
            flatten_sum(*b, !neg, out);
        }
        Expr::Unary(UnOp::Neg, a) => flatten_sum(*a, !neg, out),
        e => out.push((neg, e)),
    }
}

fn flatten_product(e: Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Binary(BinOp::Mul, a, b) => {
            flatten_product(*a, out);
            flatten_product(*b, out);
        }
        e => out.push(e),
    }
}

/// Sort key of a term or factor: the depth of the outermost loop variable it
/// mentions; then terms of sizes only; then constants.
fn key(e: &Expr, rank: &dyn Fn(&str) -> Option<usize>) -> usize {
    let mut names = Vec::new();
    collect_names(e, &mut names);
    if names.is_empty() {
        return usize::MAX;
    }
    names
        .iter()
        .filter_map(|n| rank(n))
        .min()
        .unwrap_or(usize::MAX - 1)
}

fn collect_names<'e>(e: &'e Expr, out: &mut Vec<&'e str>) {
    match e {
        Expr::Ident(n) => out.push(n),
        Expr::Binary(_, a, b) => {
            collect_names(a, out);
            collect_names(b, out);
        }
        Expr::Ternary(c, a, b) => [c, a, b].into_iter().for_each(|x| collect_names(x, out)),
        Expr::Unary(_, a) => collect_names(a, out),
        _ => {}
    }
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
    fn index_terms_are_ordered_outer_loops_first() {
        let (n, k) = (Nat::var(&Var::new("n")), Nat::var(&Var::new("k")));
        let i7 = ranged("i7", n.clone());
        let i17 = ranged("i17", Nat::cst(32));
        let i16 = ranged("i16", k.clone());
        let rank = |name: &str| ["i7", "i16", "i17"].iter().position(|v| *v == name);
        let idx = (&i7 * 32 + &i17) * &k + &i16 * 4;
        assert_eq!(expr(&nat_to_expr(&idx)), "i17 * k + i7 * k * 32 + i16 * 4");
        assert_eq!(
            expr(&nat_to_index(&idx, &rank)),
            "i7 * k * 32 + i16 * 4 + i17 * k"
        );
        let back = &n - &i7 - 1;
        assert_eq!(expr(&nat_to_index(&back, &rank)), "n - i7 - 1");
        let neg = Nat::cst(0) - &i7 - &i17;
        assert_eq!(expr(&nat_to_index(&neg, &rank)), "-i7 - i17");
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
