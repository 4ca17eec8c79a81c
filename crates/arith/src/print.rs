//! Printing: RISE surface syntax (`Display`) and C expressions (`to_c`).
//!
//! Terms with rational coefficients or negative powers (exact divisions) are
//! gathered over a common denominator `L` and printed as one exact division
//! `P /^ L` (`(P / L)` in C), which is an integer whenever the expression is
//! valid. Negative coefficients print as subtraction.

use crate::algebra::mono_cmp;
use crate::nat::{Atom, Term};
use crate::rat::{gcd, Rat};
use crate::Nat;

/// Precedence of printed text: 1 sum, 2 product/division, 3 power, 4 atomic.
type Doc = (String, u8);

const SUM: u8 = 1;
const MUL: u8 = 2;
const POW: u8 = 3;
const ATOM: u8 = 4;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Rise,
    C,
}

fn wrap((s, p): Doc, min: u8) -> String {
    if p < min {
        format!("({s})")
    } else {
        s
    }
}

/// In C mode every compound expression is parenthesised, i.e. atomic.
fn compound(s: String, p: u8, mode: Mode) -> Doc {
    match mode {
        Mode::C if p < ATOM => (format!("({s})"), ATOM),
        _ => (s, p),
    }
}

pub(crate) fn print(n: &Nat, mode: Mode) -> String {
    if let (Mode::C, Some(c)) = (mode, n.as_cst()) {
        return wrap(int_text(c.into(), mode), ATOM);
    }
    doc_nat(n, mode, 0).0
}

fn int_text(v: i128, mode: Mode) -> Doc {
    if mode == Mode::C && v == i128::from(i64::MIN) {
        return ("(-9223372036854775807 - 1)".into(), ATOM);
    }
    (v.to_string(), if v < 0 { SUM } else { ATOM })
}

fn doc_nat(n: &Nat, mode: Mode, depth: u32) -> Doc {
    let (mut int, frac): (Vec<&Term>, Vec<&Term>) =
        n.terms().iter().partition(|t| t.is_integral() || depth > 4);
    // Highest degree first, as polynomials are usually written.
    int.sort_by(|a, b| mono_cmp(&b.factors, &a.factors));
    // (is_negative, text of the absolute value)
    // (is_negative, is_constant, text of the absolute value)
    let mut parts: Vec<(bool, bool, Doc)> = int
        .iter()
        .map(|t| (t.coeff.num < 0, t.is_const(), doc_term_abs(t, mode, depth)))
        .collect();
    if !frac.is_empty() {
        let (num, den) = common_denominator(&frac);
        let num_doc = doc_nat(&num, mode, depth + 1);
        let den_doc = doc_nat(&den, mode, depth + 1);
        let text = match mode {
            Mode::Rise => format!("{} /^ {}", wrap(num_doc, MUL), wrap(den_doc, POW)),
            Mode::C => format!("{} / {}", num_doc.0, den_doc.0),
        };
        parts.push((false, false, compound(text, MUL, mode)));
    }
    // Positive parts first (constants last within each sign), then negatives.
    parts.sort_by_key(|(neg, is_const, _)| (*neg, *is_const));
    match parts.len() {
        0 => ("0".into(), ATOM),
        1 if !parts[0].0 => parts.pop().map(|(_, _, d)| d).unwrap_or_default(),
        _ => {
            let (sep_plus, sep_minus) = match mode {
                Mode::Rise => ("+", "-"),
                Mode::C => (" + ", " - "),
            };
            let mut s = String::new();
            for (i, (neg, _, d)) in parts.into_iter().enumerate() {
                let body = wrap(d, MUL);
                match (i, neg) {
                    (0, false) => s.push_str(&body),
                    (0, true) => {
                        s.push('-');
                        s.push_str(&body);
                    }
                    (_, false) => {
                        s.push_str(sep_plus);
                        s.push_str(&body);
                    }
                    (_, true) => {
                        s.push_str(sep_minus);
                        s.push_str(&body);
                    }
                }
            }
            compound(s, SUM, mode)
        }
    }
}

/// Splits fractional terms into numerator and denominator polynomials.
fn common_denominator(frac: &[&Term]) -> (Nat, Nat) {
    let mut l: i128 = 1;
    let mut den_factors: Vec<(Atom, i64)> = Vec::new();
    for t in frac {
        if let Some(v) = (l / gcd(l, t.coeff.den)).checked_mul(t.coeff.den) {
            l = v;
        }
        for (a, e) in &t.factors {
            if *e < 0 {
                match den_factors.iter_mut().find(|(b, _)| b == a) {
                    Some(f) => f.1 = f.1.max(-e),
                    None => den_factors.push((a.clone(), -e)),
                }
            }
        }
    }
    den_factors.sort();
    let mut den = Nat::from_rat(Rat::int(l));
    for (a, e) in den_factors {
        let base = match a {
            Atom::Poly(p) => p,
            a => Nat::atom(a),
        };
        den = den.mul_nat(&base.pow_int(e));
    }
    let sum = Nat::from_terms(frac.iter().map(|t| (*t).clone()).collect());
    (sum.mul_nat(&den), den)
}

/// The absolute value of an integral term.
fn doc_term_abs(t: &Term, mode: Mode, depth: u32) -> Doc {
    let c = t.coeff.num.checked_abs().unwrap_or(i128::MAX);
    let mut docs: Vec<Doc> = Vec::new();
    for (a, e) in &t.factors {
        let d = doc_atom(a, mode, depth);
        if *e == 1 {
            docs.push(d);
        } else if mode == Mode::C && *e > 1 && *e <= 16 {
            let parts: Vec<String> = (0..*e).map(|_| d.0.clone()).collect();
            docs.push(compound(parts.join(" * "), MUL, mode));
        } else {
            let exp = if *e < 0 {
                format!("({e})")
            } else {
                e.to_string()
            };
            let text = match mode {
                Mode::Rise => format!("{}^{exp}", wrap(d, ATOM)),
                Mode::C => format!("(long)pow((double){}, {exp})", d.0),
            };
            docs.push(compound(text, POW, mode));
        }
    }
    if c != 1 || docs.is_empty() {
        docs.push(int_text(c, mode));
    }
    if docs.len() == 1 {
        return docs.pop().unwrap_or_default();
    }
    let sep = if mode == Mode::C { " * " } else { "*" };
    let text: Vec<String> = docs
        .into_iter()
        .enumerate()
        .map(|(i, d)| wrap(d, if i == 0 { MUL } else { POW }))
        .collect();
    compound(text.join(sep), MUL, mode)
}

fn doc_atom(a: &Atom, mode: Mode, depth: u32) -> Doc {
    let sub = |n: &Nat| doc_nat(n, mode, depth);
    match a {
        Atom::Var(v) => (v.name().to_string(), ATOM),
        Atom::Div(x, d) | Atom::Mod(x, d) => {
            let op = if matches!(a, Atom::Div(..)) { "/" } else { "%" };
            let text = match mode {
                Mode::Rise => format!("{}{op}{}", wrap(sub(x), MUL), wrap(sub(d), POW)),
                Mode::C => format!("{} {op} {}", sub(x).0, sub(d).0),
            };
            compound(text, MUL, mode)
        }
        Atom::Min(x, y) | Atom::Max(x, y) => {
            let is_min = matches!(a, Atom::Min(..));
            match mode {
                Mode::Rise => (
                    format!(
                        "{}({}, {})",
                        if is_min { "min" } else { "max" },
                        sub(x).0,
                        sub(y).0
                    ),
                    ATOM,
                ),
                Mode::C => {
                    let (x, y) = (sub(x).0, sub(y).0);
                    let op = if is_min { "<" } else { ">" };
                    (format!("({x} {op} {y} ? {x} : {y})"), ATOM)
                }
            }
        }
        Atom::Xor(x, y) => match mode {
            Mode::Rise => (format!("xor({}, {})", sub(x).0, sub(y).0), ATOM),
            Mode::C => (format!("({} ^ {})", sub(x).0, sub(y).0), ATOM),
        },
        Atom::Pow(b, e) => match mode {
            Mode::Rise => (
                format!("{}^{}", wrap(sub(b), ATOM), wrap(sub(e), ATOM)),
                POW,
            ),
            Mode::C if b.as_cst() == Some(2) => (format!("(1L << {})", sub(e).0), ATOM),
            Mode::C => (
                format!("((long)pow((double){}, (double){}))", sub(b).0, sub(e).0),
                ATOM,
            ),
        },
        Atom::Poly(p) => compound(wrap(sub(p), ATOM), ATOM, mode),
        Atom::Cst(c) if c.is_int() => compound(
            int_text(c.num, mode).0,
            if c.num < 0 { SUM } else { ATOM },
            mode,
        ),
        Atom::Cst(c) => {
            let text = match mode {
                Mode::Rise => format!("{} /^ {}", c.num, c.den),
                Mode::C => format!("{} / {}", c.num, c.den),
            };
            compound(text, MUL, mode)
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use crate::Nat;

    #[test]
    fn rise_syntax() {
        let (n, m) = (v("n"), v("m"));
        assert_eq!((&n * 32).to_string(), "n*32");
        assert_eq!((&n + 2).to_string(), "n+2");
        assert_eq!((&n - 1).to_string(), "n-1");
        assert_eq!((Nat::cst(1) - &n).to_string(), "1-n");
        assert_eq!((Nat::cst(0) - &n).to_string(), "-n");
        assert_eq!(Nat::cst(-5).to_string(), "-5");
        assert_eq!(n.floor_div(&Nat::cst(4)).to_string(), "n/4");
        assert_eq!(n.modulo(&Nat::cst(4)).to_string(), "n%4");
        assert_eq!((&n * &n).to_string(), "n^2");
        assert_eq!(Nat::min(&n, &m).to_string(), "min(m, n)");
        assert_eq!(Nat::max(&n, &m).to_string(), "max(m, n)");
        assert_eq!(n.div_exact(&Nat::cst(32)).to_string(), "n /^ 32");
        assert_eq!((&n + 1).div_exact(&Nat::cst(2)).to_string(), "(n+1) /^ 2");
        assert_eq!((&n + m.div_exact(&Nat::cst(2))).to_string(), "n+m /^ 2");
        assert_eq!(n.div_exact(&(&m * 2)).to_string(), "n /^ (m*2)");
        assert_eq!((&n + 2).floor_div(&m).to_string(), "(n+2)/m");
        assert_eq!(n.floor_div(&(&m * 2)).to_string(), "n/(m*2)");
        assert_eq!((n.floor_div(&m) * 3).to_string(), "n/m*3");
        assert_eq!((n.floor_div(&m) * &v("a")).to_string(), "a*(n/m)");
        assert_eq!(Nat::cst(2).pow(&n).to_string(), "2^n");
        assert_eq!(Nat::cst(2).pow(&(&n * &m)).to_string(), "2^(m*n)");
    }

    #[test]
    fn c_syntax() {
        let (n, m) = (v("n"), v("m"));
        assert_eq!((&n * 32 + 1).to_c(), "((n * 32) + 1)");
        assert_eq!((&n - 1).to_c(), "(n - 1)");
        assert_eq!(n.floor_div(&Nat::cst(4)).to_c(), "(n / 4)");
        assert_eq!(n.modulo(&(&m + 1)).to_c(), "(n % (m + 1))");
        assert_eq!(n.div_exact(&Nat::cst(32)).to_c(), "(n / 32)");
        assert_eq!((&n * &n).to_c(), "(n * n)");
        assert_eq!(Nat::min(&n, &m).to_c(), "(m < n ? m : n)");
        assert_eq!(Nat::max(&n, &m).to_c(), "(m > n ? m : n)");
        assert_eq!(Nat::cst(2).pow(&n).to_c(), "(1L << n)");
        assert_eq!(Nat::cst(-3).to_c(), "(-3)");
        assert_eq!(Nat::cst(i64::MIN).to_c(), "(-9223372036854775807 - 1)");
    }
}
