//! Constructors of the non-polynomial operations (`/`, `%`, `min`, `max`)
//! and the range-aware rules that remove them.
//!
//! Rules applied unconditionally (they hold for every assignment where the
//! original expression is defined, with C truncating semantics):
//! * constant folding; `x / 1 = x`, `x % 1 = 0`, `0 / x = 0`, `x / x = 1`;
//! * exact quotients: if `x /^ d` is a polynomial `q` (integer coefficients,
//!   no negative power) then `x / d = q` and `x % d = 0`;
//! * `(x / a) / b = x / (a*b)`; `(x % e) % d = x % d` when `d` divides `e`;
//! * `(x / d) * d + x % d = x` (recombination inside sums).
//!
//! Rules that need range facts (proved with [`crate::bounds`]):
//! * `x = q*d + r` (the terms of `x` divisible by `d`, and for a positive
//!   constant `d` the Euclidean split of the constant term): when `x >= 0`
//!   and `r >= 0`, `x / d = q + r / d` and `x % d = r % d`;
//! * `x / d = 0` and `x % d = x` when `0 <= x < d`;
//! * `(x % e) / d = (x / d) % (e /^ d)` when `d` divides `e`, `x >= 0`;
//! * `min(a, b) = a` when `a <= b`, `max(a, b) = b` when `a <= b`.

use std::collections::BTreeSet;

use crate::algebra::{mono_cmp, poly_div_rem};
use crate::nat::{Atom, Term};
use crate::rat::Rat;
use crate::subst::collect_vars;
use crate::{Nat, Var};

fn as_int(n: &Nat) -> Option<i128> {
    n.as_rat().filter(|r| r.is_int()).map(|r| r.num)
}

/// Terms known to denote integers although they are not integral
/// polynomials: a range bound `hi = n /^ 32` of a variable occurring in the
/// expressions asserts that `n /^ 32` is an integer (exact divisions are only
/// valid where they divide). Collected transitively through ranges.
fn integral_facts(ns: &[&Nat]) -> Vec<Term> {
    let mut vars = BTreeSet::new();
    for n in ns {
        collect_vars(n, &mut vars);
    }
    let mut seen: BTreeSet<Var> = BTreeSet::new();
    let mut facts = Vec::new();
    let mut work: Vec<Var> = vars.into_iter().collect();
    while let Some(v) = work.pop() {
        if !seen.insert(v.clone()) {
            continue;
        }
        let Some((lo, hi)) = v.range() else { continue };
        for b in [lo, hi] {
            let frac: Vec<&Term> = b.terms().iter().filter(|t| !t.is_integral()).collect();
            if let [t] = frac[..] {
                facts.push(t.clone());
            }
            let mut inner = BTreeSet::new();
            collect_vars(b, &mut inner);
            work.extend(inner);
        }
    }
    facts
}

/// Is the term an integer (given the facts)? Tries dividing out products of
/// up to three facts (e.g. `n^2 /^ 1024` with the fact `n /^ 32`).
fn known_integral(t: &Term, facts: &[Term]) -> bool {
    fn go(t: &Term, facts: &[Term], depth: u32) -> bool {
        t.is_integral()
            || (depth > 0
                && facts.iter().any(|k| {
                    let Some(c) = k.coeff.recip() else {
                        return false;
                    };
                    let inv = Term {
                        factors: k.factors.iter().map(|(a, e)| (a.clone(), -e)).collect(),
                        coeff: c,
                    };
                    go(&t.mul(&inv), facts, depth - 1)
                }))
    }
    go(t, facts, 3)
}

/// `x /^ d` if it is known to be an integer-valued polynomial.
fn exact_quotient(x: &Nat, d: &Nat, facts: &[Term]) -> Option<Nat> {
    let q = x.div_exact_nat(d);
    q.terms()
        .iter()
        .all(|t| known_integral(t, facts))
        .then_some(q)
}

/// Splits `x = q*d + r`, `q` collecting the terms that `d` divides (for a
/// sum `d`, the quotient of polynomial division, if integral).
fn split_divisible(x: &Nat, d: &Nat, facts: &[Term]) -> (Nat, Nat) {
    if d.terms().len() > 1 {
        return match poly_div_rem(x, d) {
            Some((q, r)) if q.terms().iter().all(|t| known_integral(t, facts)) => (q, r),
            _ => (Nat::zero(), x.clone()),
        };
    }
    let (mut q, mut r) = (Vec::new(), Vec::new());
    let monomial = d.terms().len() == 1 && d.is_integral();
    for t in x.terms() {
        let t_over_d = if monomial {
            exact_quotient(&Nat::from_term(t.clone()), d, facts)
        } else {
            None
        };
        match t_over_d {
            Some(qt) => q.extend_from_slice(qt.terms()),
            None => r.push(t.clone()),
        }
    }
    // Euclidean split of the constant term by a positive constant divisor.
    if let Some(c) = as_int(d).filter(|c| *c > 0) {
        if let Some(k) = r.iter().position(|t| t.is_const() && t.coeff.is_int()) {
            let v = r[k].coeff.num;
            q.push(Term::cst(Rat::int(v.div_euclid(c))));
            r[k] = Term::cst(Rat::int(v.rem_euclid(c)));
        }
    }
    (Nat::from_terms(q), Nat::from_terms(r))
}

fn neg(x: &Nat) -> Nat {
    x.scale(Rat::int(-1))
}

/// Is the coefficient of the highest monomial negative?
fn leading_negative(x: &Nat) -> bool {
    x.terms()
        .iter()
        .max_by(|a, b| mono_cmp(&a.factors, &b.factors))
        .is_some_and(|t| t.coeff.num < 0)
}

/// C-like division `x / d`.
pub(crate) fn floor_div(x: &Nat, d: &Nat) -> Nat {
    if d.is_zero() || x.is_undefined() || d.is_undefined() {
        return Nat::undefined();
    }
    if let (Some(a), Some(b)) = (as_int(x), as_int(d)) {
        if let Some(v) = a.checked_div(b) {
            return Nat::from_rat(Rat::int(v));
        }
    }
    if x.is_zero() || d.as_rat() == Some(Rat::ONE) {
        return x.clone();
    }
    if x == d {
        return Nat::one();
    }
    let facts = integral_facts(&[x, d]);
    if let Some(q) = exact_quotient(x, d, &facts) {
        return q;
    }
    match x.as_atom() {
        Some(Atom::Div(y, a)) => return floor_div(y, &a.mul_nat(d)),
        Some(Atom::Mod(y, e)) => {
            if let Some(t) = exact_quotient(e, d, &facts) {
                let one = Nat::one();
                if y.prove_nonneg() && one.prove_le(d) && one.prove_le(&t) {
                    return modulo(&floor_div(y, d), &t);
                }
            }
        }
        _ => {}
    }
    let (q, r) = split_divisible(x, d, &facts);
    if !q.is_zero() && r.prove_nonneg() && x.prove_nonneg() {
        return q.add_nat(&floor_div(&r, d));
    }
    if x.prove_nonneg() && x.prove_lt(d) {
        return Nat::zero();
    }
    // Canonical signs: x / -d = -(x / d), -x / d = -(x / d) (truncation).
    if leading_negative(d) {
        return floor_div(x, &neg(d)).scale(Rat::int(-1));
    }
    if leading_negative(x) {
        return floor_div(&neg(x), d).scale(Rat::int(-1));
    }
    Nat::atom(Atom::Div(x.clone(), d.clone()))
}

/// C-like remainder `x % d`.
pub(crate) fn modulo(x: &Nat, d: &Nat) -> Nat {
    if d.is_zero() || x.is_undefined() || d.is_undefined() {
        return Nat::undefined();
    }
    if let (Some(a), Some(b)) = (as_int(x), as_int(d)) {
        if let Some(v) = a.checked_rem(b) {
            return Nat::from_rat(Rat::int(v));
        }
    }
    if x.is_zero() || matches!(d.as_rat(), Some(r) if r == Rat::ONE || r == Rat::int(-1)) || x == d
    {
        return Nat::zero();
    }
    let facts = integral_facts(&[x, d]);
    if exact_quotient(x, d, &facts).is_some() {
        return Nat::zero();
    }
    if let Some(Atom::Mod(y, e)) = x.as_atom() {
        if exact_quotient(e, d, &facts).is_some() {
            return modulo(y, d);
        }
    }
    let (q, r) = split_divisible(x, d, &facts);
    if !q.is_zero() && r.prove_nonneg() && x.prove_nonneg() {
        return modulo(&r, d);
    }
    if x.prove_nonneg() && x.prove_lt(d) {
        return x.clone();
    }
    // Canonical signs: x % -d = x % d, -x % d = -(x % d) (truncation).
    if leading_negative(d) {
        return modulo(x, &neg(d));
    }
    if leading_negative(x) {
        return modulo(&neg(x), d).scale(Rat::int(-1));
    }
    Nat::atom(Atom::Mod(x.clone(), d.clone()))
}

/// `min(a, b)` (`is_min`) or `max(a, b)`.
pub(crate) fn min_max(a: &Nat, b: &Nat, is_min: bool) -> Nat {
    if a.is_undefined() || b.is_undefined() {
        return Nat::undefined();
    }
    if a == b {
        return a.clone();
    }
    // Flatten nested min (max) into one argument list.
    let mut args = Vec::new();
    flatten(a, is_min, &mut args);
    flatten(b, is_min, &mut args);
    args.sort();
    args.dedup();
    // Keep only arguments not dominated by another one (for min: `k <= x`
    // makes `x` redundant); constants compare numerically.
    let dominates = |k: &Nat, x: &Nat| -> bool {
        match (k.as_rat(), x.as_rat()) {
            (Some(p), Some(q)) => p.cmp_num(q).is_le() == is_min || p.cmp_num(q).is_eq(),
            _ if is_min => k.prove_le(x),
            _ => x.prove_le(k),
        }
    };
    let mut keep: Vec<Nat> = Vec::new();
    for x in args {
        if keep.iter().any(|k| dominates(k, &x)) {
            continue;
        }
        keep.retain(|k| !dominates(&x, k));
        keep.push(x);
    }
    keep.sort();
    // A canonical right-nested chain over the sorted arguments.
    let mut it = keep.into_iter().rev();
    let mut acc = it.next().unwrap_or_else(Nat::zero);
    for x in it {
        acc = Nat::atom(if is_min {
            Atom::Min(x, acc)
        } else {
            Atom::Max(x, acc)
        });
    }
    acc
}

fn flatten(x: &Nat, is_min: bool, out: &mut Vec<Nat>) {
    match x.as_atom() {
        Some(Atom::Min(p, q)) if is_min => {
            flatten(p, is_min, out);
            flatten(q, is_min, out);
        }
        Some(Atom::Max(p, q)) if !is_min => {
            flatten(p, is_min, out);
            flatten(q, is_min, out);
        }
        _ => out.push(x.clone()),
    }
}

/// Rewrites `c*M*(x % d) + c*M*d*(x / d)` to `c*M*x` inside a sum.
pub(crate) fn recombine_div_mod(n: &Nat) -> Option<Nat> {
    let has = |f: fn(&Atom) -> bool| {
        n.terms()
            .iter()
            .any(|t| t.factors.iter().any(|(a, _)| f(a)))
    };
    if !has(|a| matches!(a, Atom::Mod(..))) || !has(|a| matches!(a, Atom::Div(..))) {
        return None;
    }
    for t in n.terms() {
        for (a, e) in &t.factors {
            let (Atom::Mod(x, d), 1) = (a, *e) else {
                continue;
            };
            let m = Nat::from_term(t.without(a));
            let partner = m.mul_nat(d).mul_nat(&floor_div(x, d));
            if partner.terms().iter().all(|p| n.terms().contains(p)) {
                let rest: Vec<Term> = n
                    .terms()
                    .iter()
                    .filter(|u| *u != t && !partner.terms().contains(u))
                    .cloned()
                    .collect();
                return Some(Nat::from_terms(rest).add_nat(&m.mul_nat(x)));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use crate::Nat;

    #[test]
    fn constant_folding_uses_c_semantics() {
        assert_eq!(Nat::cst(7).floor_div(&Nat::cst(2)), Nat::cst(3));
        assert_eq!(Nat::cst(-7).floor_div(&Nat::cst(2)), Nat::cst(-3));
        assert_eq!(Nat::cst(-7).modulo(&Nat::cst(2)), Nat::cst(-1));
        assert_eq!(Nat::cst(7).modulo(&Nat::cst(-2)), Nat::cst(1));
        assert_eq!(Nat::min(&Nat::cst(3), &Nat::cst(-1)), Nat::cst(-1));
        assert_eq!(Nat::max(&Nat::cst(3), &Nat::cst(-1)), Nat::cst(3));
        // Division by a constant zero stays symbolic.
        let z = Nat::cst(1).floor_div(&Nat::cst(0));
        assert_eq!(z.eval(&|_| None), Err(crate::EvalError::DivisionByZero));
    }

    #[test]
    fn trivial_rules() {
        let (x, d) = (v("x"), v("d"));
        assert_eq!(x.floor_div(&Nat::cst(1)), x);
        assert_eq!(x.modulo(&Nat::cst(1)), Nat::cst(0));
        assert_eq!(Nat::cst(0).floor_div(&d), Nat::cst(0));
        assert_eq!(Nat::min(&x, &x), x);
        assert_eq!(Nat::max(&x, &x), x);
        assert_eq!(Nat::min(&x, &d), Nat::min(&d, &x));
    }

    #[test]
    fn exact_quotients() {
        let (n, m) = (v("n"), v("m"));
        assert_eq!((&n * 4 + 8).floor_div(&Nat::cst(4)), &n + 2);
        assert_eq!((&n * &m).floor_div(&m), n);
        assert_eq!((&n * &m).modulo(&m), Nat::cst(0));
        assert_eq!((&n * &n - 1).floor_div(&(&n + 1)), &n - 1);
    }

    #[test]
    fn split_and_join_indices() {
        let (n, k) = (v("n"), v("k"));
        let i = ranged("i", Nat::cst(0), n.clone());
        let j = ranged("j", Nat::cst(0), k.clone());
        let idx = &i * &k + &j;
        assert_eq!(idx.floor_div(&k), i);
        assert_eq!(idx.modulo(&k), j);
    }

    #[test]
    fn small_numerators() {
        let x = ranged("x", Nat::cst(0), Nat::cst(8));
        assert_eq!(x.floor_div(&Nat::cst(8)), Nat::cst(0));
        assert_eq!(x.modulo(&Nat::cst(8)), x);
        // Unknown sign or range: kept.
        let y = v("y");
        assert_eq!(y.modulo(&Nat::cst(8)).to_string(), "y%8");
        assert_eq!((&y - 1).floor_div(&Nat::cst(8)).to_string(), "(y-1)/8");
    }

    #[test]
    fn divisible_part_is_split_off() {
        let (a, d) = (v("a"), ranged("d", Nat::cst(1), Nat::cst(100)));
        let b = v("b");
        assert_eq!((&a * &d + &b).floor_div(&d), &a + b.floor_div(&d));
        assert_eq!((&a * &d + &b).modulo(&d), b.modulo(&d));
        // Constant terms: (4n + 9) / 4 = n + 2, (4n + 9) % 4 = 1.
        assert_eq!((&a * 4 + 9).floor_div(&Nat::cst(4)), &a + 2);
        assert_eq!((&a * 4 + 9).modulo(&Nat::cst(4)), Nat::cst(1));
        // Not when the remainder may be negative.
        assert_eq!(
            (&a * 4 - &b).floor_div(&Nat::cst(4)).to_string(),
            "(a*4-b)/4"
        );
    }

    #[test]
    fn nested_divisions_and_remainders() {
        let (x, a, b) = (v("x"), v("a"), v("b"));
        assert_eq!(x.floor_div(&a).floor_div(&b), x.floor_div(&(&a * &b)));
        assert_eq!(x.modulo(&a).modulo(&a), x.modulo(&a));
        assert_eq!(x.modulo(&(&a * &b)).modulo(&a), x.modulo(&a));
        let d = ranged("d", Nat::cst(1), Nat::cst(9));
        let t = ranged("t", Nat::cst(1), Nat::cst(9));
        assert_eq!(
            x.modulo(&(&d * &t)).floor_div(&d),
            x.floor_div(&d).modulo(&t)
        );
        assert_eq!(x.modulo(&d).floor_div(&d), Nat::cst(0));
    }

    #[test]
    fn div_mod_recombine() {
        let (x, d) = (v("x"), v("d"));
        assert_eq!(x.floor_div(&d) * &d + x.modulo(&d), x);
        assert_eq!((x.floor_div(&d) * &d + x.modulo(&d)) * 3 + 1, &x * 3 + 1);
    }

    #[test]
    fn min_max_are_flattened_and_sorted() {
        let (a, b, c) = (v("a"), v("b"), v("c"));
        let m1 = Nat::min(&Nat::min(&a, &b), &c);
        let m2 = Nat::min(&c, &Nat::min(&b, &a));
        assert_eq!(m1, m2);
        assert_eq!(m1.to_string(), "min(a, min(b, c))");
        assert_eq!(
            Nat::max(&Nat::max(&a, &Nat::cst(3)), &Nat::max(&b, &Nat::cst(5))),
            Nat::max(&Nat::max(&a, &b), &Nat::cst(5))
        );
        // a dominated argument disappears
        assert_eq!(Nat::min(&Nat::min(&a, &b), &(&a + 1)), Nat::min(&a, &b));
    }

    #[test]
    fn min_max_by_ranges() {
        let n = v("n");
        let l = v("l");
        let i = ranged("i", l.clone(), &n + &l);
        let clamped = Nat::min(&Nat::max(&(&i - &l), &Nat::cst(0)), &(&n - 1));
        assert_eq!(clamped, &i - &l);
        assert_eq!(Nat::max(&n, &Nat::cst(0)), n);
        assert_eq!(Nat::min(&n, &(&n + 1)), n);
    }
}

/// `xor(x, y)`: constants folded (both non-negative integers), `xor(x, 0) = x`,
/// `xor(x, x) = 0`; otherwise an atom with its arguments in canonical order.
pub(crate) fn xor(x: &Nat, y: &Nat) -> Nat {
    if x.is_undefined() || y.is_undefined() {
        return Nat::undefined();
    }
    match (x.as_cst(), y.as_cst()) {
        (Some(a), Some(b)) if a >= 0 && b >= 0 => return Nat::cst(a ^ b),
        (Some(0), _) => return y.clone(),
        (_, Some(0)) => return x.clone(),
        _ => {}
    }
    if x == y {
        return Nat::zero();
    }
    let (a, b) = if x <= y { (x, y) } else { (y, x) };
    Nat::atom(Atom::Xor(a.clone(), b.clone()))
}

#[cfg(test)]
mod xor_tests {
    use crate::test_support::{ranged, v};
    use crate::Nat;

    #[test]
    fn xor_folds_constants_and_neutral_operands() {
        assert_eq!(Nat::cst(5).xor(&Nat::cst(3)), Nat::cst(6));
        assert_eq!(v("x").xor(&Nat::cst(0)), v("x"));
        assert_eq!(Nat::cst(0).xor(&v("x")), v("x"));
        assert_eq!(v("x").xor(&v("x")), Nat::cst(0));
        assert_eq!(v("x").xor(&v("y")), v("y").xor(&v("x")));
    }

    #[test]
    fn xor_of_bounded_naturals_is_bounded_by_the_power_of_two_above() {
        let i = ranged("i", Nat::cst(0), Nat::cst(8));
        let j = ranged("j", Nat::cst(0), Nat::cst(5));
        let x = i.xor(&j);
        assert_eq!(x.lower_bound(), Some(0));
        assert_eq!(x.upper_bound(), Some(7));
        // (r % 8) xor c for a chunk c < 8: a chunk index again
        let r = ranged("r", Nat::cst(0), Nat::cst(64));
        let c = ranged("c", Nat::cst(0), Nat::cst(8));
        let sw = r.modulo(&Nat::cst(8)).xor(&c);
        assert!(sw.prove_lt(&Nat::cst(8)));
        // an unbounded argument leaves the upper end open
        assert_eq!(v("n").xor(&i).upper_bound(), None);
    }

    #[test]
    fn xor_evaluates_substitutes_and_prints() {
        let x = v("a").xor(&v("b"));
        let env = |w: &crate::Var| match w.name() {
            "a" => Some(12),
            "b" => Some(10),
            _ => None,
        };
        assert_eq!(x.eval(&env), Ok(6));
        let neg = |w: &crate::Var| match w.name() {
            "a" => Some(-1),
            _ => Some(1),
        };
        assert_eq!(x.eval(&neg), Err(crate::EvalError::NegativeXor));
        let s = x.substitute(&crate::Var::new("a"), &Nat::cst(3));
        assert_eq!(s.to_string(), "xor(3, b)");
        assert_eq!(x.to_c(), "(a ^ b)");
        assert_eq!(
            x.substitute(&crate::Var::new("a"), &Nat::cst(3))
                .substitute(&crate::Var::new("b"), &Nat::cst(5)),
            Nat::cst(6)
        );
    }
}
