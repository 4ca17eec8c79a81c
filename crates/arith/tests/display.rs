//! `Display` output re-parses (with standard precedence) to the same
//! normal form, and `to_c` output is well-formed.

mod common;

use arith::{Nat, Var};
use common::*;
use proptest::prelude::*;

/// A small recursive-descent parser for the RISE surface syntax:
/// `+ -` < `* / % /^` < unary `-` < `^` (right-associative).
struct Parser<'a> {
    toks: Vec<String>,
    pos: usize,
    vars: &'a [Var],
}

fn tokenize(s: &str) -> Vec<String> {
    let cs: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < cs.len() && (cs[i].is_alphanumeric() || cs[i] == '_') {
                i += 1;
            }
            out.push(cs[start..i].iter().collect());
        } else if c == '/' && cs.get(i + 1) == Some(&'^') {
            out.push("/^".into());
            i += 2;
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.pos).map(String::as_str)
    }

    fn next(&mut self) -> String {
        self.pos += 1;
        self.toks[self.pos - 1].clone()
    }

    fn expect(&mut self, t: &str) {
        assert_eq!(self.next(), t, "in {:?}", self.toks);
    }

    fn sum(&mut self) -> Nat {
        let mut acc = self.product();
        while let Some(op @ ("+" | "-")) = self.peek() {
            let plus = op == "+";
            self.pos += 1;
            let rhs = self.product();
            acc = if plus { acc + rhs } else { acc - rhs };
        }
        acc
    }

    fn product(&mut self) -> Nat {
        let mut acc = self.unary();
        while let Some(op @ ("*" | "/" | "%" | "/^")) = self.peek() {
            let op = op.to_string();
            self.pos += 1;
            let rhs = self.unary();
            acc = match op.as_str() {
                "*" => acc * rhs,
                "/" => acc.floor_div(&rhs),
                "%" => acc.modulo(&rhs),
                _ => acc.div_exact(&rhs),
            };
        }
        acc
    }

    fn unary(&mut self) -> Nat {
        if self.peek() == Some("-") {
            self.pos += 1;
            return Nat::cst(0) - self.unary();
        }
        self.power()
    }

    fn power(&mut self) -> Nat {
        let base = self.primary();
        if self.peek() == Some("^") {
            self.pos += 1;
            let e = self.unary();
            return base.pow(&e);
        }
        base
    }

    fn primary(&mut self) -> Nat {
        let t = self.next();
        if t == "(" {
            let e = self.sum();
            self.expect(")");
            return e;
        }
        if t == "min" || t == "max" || t == "xor" {
            self.expect("(");
            let a = self.sum();
            self.expect(",");
            let b = self.sum();
            self.expect(")");
            return match t.as_str() {
                "min" => Nat::min(&a, &b),
                "max" => Nat::max(&a, &b),
                _ => a.xor(&b),
            };
        }
        if let Ok(c) = t.parse::<i64>() {
            return Nat::cst(c);
        }
        let v = self
            .vars
            .iter()
            .find(|v| v.name() == t)
            .unwrap_or_else(|| panic!("unknown {t}"));
        Nat::var(v)
    }
}

fn parse(s: &str, vars: &[Var]) -> Nat {
    let mut p = Parser {
        toks: tokenize(s),
        pos: 0,
        vars,
    };
    let e = p.sum();
    assert_eq!(p.pos, p.toks.len(), "trailing input in {s}");
    e
}

#[test]
fn examples_reparse() {
    let vs = vars();
    let n = Nat::var(&vs[0]);
    let m = Nat::var(&vs[1]);
    for e in [
        &n * 32,
        (&n + 2) * &m,
        n.floor_div(&Nat::cst(4)) * 3,
        n.modulo(&(&m + 1)),
        n.div_exact(&Nat::cst(32)) + &m,
        Nat::cst(0) - &n * &n,
        Nat::cst(2).pow(&(&n * 2)),
    ] {
        assert_eq!(parse(&e.to_string(), &vs), e, "{e}");
    }
}

/// Does the expression contain an exact division that is not divisible by
/// construction? Normal forms rely on exact divisions being valid (e.g. that
/// a value is an integer), so invalid ones need not print canonically.
fn arbitrary_exact_div(e: &E) -> bool {
    match e {
        E::Cst(_) | E::Var(_) | E::PowVar(..) => false,
        E::Pow(x, _) => arbitrary_exact_div(x),
        E::ExactDiv(x, d) => {
            let by_construction =
                matches!(&**x, E::Mul(_, d2) if format!("{d2:?}") == format!("{d:?}"));
            !by_construction || arbitrary_exact_div(x) || arbitrary_exact_div(d)
        }
        E::Add(x, y)
        | E::Sub(x, y)
        | E::Mul(x, y)
        | E::Div(x, y)
        | E::Mod(x, y)
        | E::Min(x, y)
        | E::Max(x, y)
        | E::Xor(x, y) => arbitrary_exact_div(x) || arbitrary_exact_div(y),
    }
}

/// Does the expression divide exactly by something containing a sum?
fn divides_by_sum(e: &E) -> bool {
    fn has_sum(e: &E) -> bool {
        match e {
            E::Add(..) | E::Sub(..) => true,
            E::Cst(_) | E::Var(_) | E::PowVar(..) => false,
            E::Pow(x, _) => has_sum(x),
            E::Mul(x, y) | E::ExactDiv(x, y) => has_sum(x) || has_sum(y),
            // Atoms: their insides are separate normal forms.
            E::Div(..) | E::Mod(..) | E::Min(..) | E::Max(..) | E::Xor(..) => false,
        }
    }
    match e {
        E::Cst(_) | E::Var(_) | E::PowVar(..) => false,
        E::Pow(x, _) => divides_by_sum(x),
        E::ExactDiv(x, y) => has_sum(y) || divides_by_sum(x) || divides_by_sum(y),
        E::Add(x, y)
        | E::Sub(x, y)
        | E::Mul(x, y)
        | E::Div(x, y)
        | E::Mod(x, y)
        | E::Min(x, y)
        | E::Max(x, y)
        | E::Xor(x, y) => divides_by_sum(x) || divides_by_sum(y),
    }
}

/// Balanced parentheses in C output.
fn balanced(s: &str) -> bool {
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(1500)))]

    /// Exact divisions by sums (rational functions) have no canonical form
    /// without polynomial factorisation, and invalid exact divisions need
    /// not normalise consistently: for those only the value must agree.
    #[test]
    fn display_reparses_to_the_same_normal_form(e in expr(true), seeds in any::<[u32; NVARS]>()) {
        let vs = vars();
        let n = build(&e, &vs);
        let text = n.to_string();
        let back = parse(&text, &vs);
        if !divides_by_sum(&e) && !arbitrary_exact_div(&e) {
            prop_assert_eq!(&back, &n, "{}", text);
        }
        if let Some(vals) = assign(&seeds) {
            let env = env_fn(&vs, &vals);
            if let (Ok(x), Ok(y)) = (n.eval(&env), back.eval(&env)) {
                prop_assert_eq!(x, y, "{}", text);
            }
        }
    }

    #[test]
    fn c_output_is_balanced(e in expr(true)) {
        let vs = vars();
        let c = build(&e, &vs).to_c();
        prop_assert!(balanced(&c), "{}", c);
        prop_assert!(!c.contains("/^"), "{}", c);
    }
}
