//! The normal-form representation of [`Nat`] and its basic constructors.
//!
//! A `Nat` is a *sum of terms*; a term is a rational coefficient times a
//! product of *atoms* raised to non-zero integer exponents. Atoms are
//! variables and the operations that are not polynomial (`/`, `%`, `min`,
//! `max`, symbolic powers), plus two technical atoms: `Poly` (a sum used as
//! the base of a negative power, i.e. an exact division by a sum that does
//! not cancel) and `Cst` (a constant frozen because folding it overflowed,
//! or the `0` of an exact division by zero).
//!
//! Invariants, established by [`Nat::from_terms`] and [`Term::mul`]:
//! * factors of a term are sorted by atom and have non-zero exponents, each
//!   atom appearing once (unless an exponent overflowed);
//! * terms are sorted (by monomial, then coefficient), like terms are
//!   collected and zero terms dropped (the empty sum is `0`);
//! * the arguments of every atom are themselves in normal form.
//!
//! Because products are distributed over sums, two polynomials that are equal
//! as polynomials have the same representation, hence compare equal.

use std::sync::Arc;

use crate::rat::Rat;
use crate::Var;

/// A symbolic natural-number expression, always kept in canonical normal form.
///
/// Cheap to clone (an `Arc` inside). Equality is structural on the normal
/// form, so polynomial expressions that are equal as polynomials compare
/// equal; the derived ordering is a total, deterministic (but otherwise
/// arbitrary) order used to sort normal forms.
///
/// `Debug` prints the RISE syntax (`Nat(i*k+j)`); the alternate form
/// `{:#?}` shows the internal structure.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Nat(pub(crate) Arc<Node>);

impl std::fmt::Debug for Nat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if f.alternate() {
            f.debug_tuple("Nat").field(&self.0).finish()
        } else {
            write!(f, "Nat({self})")
        }
    }
}

/// A sum of terms.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub(crate) struct Node {
    pub(crate) terms: Vec<Term>,
}

/// `coeff * Π atom^exp`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub(crate) struct Term {
    pub(crate) factors: Vec<(Atom, i64)>,
    pub(crate) coeff: Rat,
}

/// The non-polynomial building blocks of a term.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub(crate) enum Atom {
    /// A variable.
    Var(Var),
    /// C-like division `a / b` (truncating).
    Div(Nat, Nat),
    /// C-like remainder `a % b`.
    Mod(Nat, Nat),
    /// `min(a, b)`.
    Min(Nat, Nat),
    /// `max(a, b)`.
    Max(Nat, Nat),
    /// `base ^ exponent` where the exponent is not a (small) constant.
    Pow(Nat, Nat),
    /// Bitwise exclusive or `xor(a, b)` of two naturals (swizzled layouts), kept
    /// where an argument is not a constant.
    Xor(Nat, Nat),
    /// A primitive sum (at least two terms) used as the base of a negative
    /// power: exact division by a sum that does not cancel.
    Poly(Nat),
    /// A constant kept out of the coefficient (folding overflowed, or the
    /// zero divisor of an exact division by zero).
    Cst(Rat),
}

impl Term {
    pub(crate) fn cst(c: Rat) -> Term {
        Term {
            factors: Vec::new(),
            coeff: c,
        }
    }

    /// True for a term without factors.
    pub(crate) fn is_const(&self) -> bool {
        self.factors.is_empty()
    }

    /// True if the term denotes an integer whenever its atoms do: an integer
    /// coefficient and no negative exponent.
    pub(crate) fn is_integral(&self) -> bool {
        self.coeff.is_int() && self.factors.iter().all(|(_, e)| *e > 0)
    }

    /// Contains a division by zero.
    pub(crate) fn is_undefined(&self) -> bool {
        self.factors
            .iter()
            .any(|(a, e)| *e < 0 && *a == Atom::Cst(Rat::ZERO))
    }

    /// The exponent of `a` in this term (0 if absent).
    pub(crate) fn exp_of(&self, a: &Atom) -> i64 {
        self.factors
            .iter()
            .find(|(b, _)| b == a)
            .map_or(0, |(_, e)| *e)
    }

    /// This term with the factor `a` removed.
    pub(crate) fn without(&self, a: &Atom) -> Term {
        Term {
            factors: self
                .factors
                .iter()
                .filter(|(b, _)| b != a)
                .cloned()
                .collect(),
            coeff: self.coeff,
        }
    }

    /// Product of two terms (never overflows: an overflowing coefficient is
    /// kept as a frozen constant factor).
    pub(crate) fn mul(&self, o: &Term) -> Term {
        let mut factors = merge_factors(&self.factors, &o.factors);
        let coeff = match self.coeff.mul(o.coeff) {
            Some(c) => c,
            None => {
                factors = merge_factors(&factors, &[(Atom::Cst(o.coeff), 1)]);
                self.coeff
            }
        };
        if coeff.is_zero() {
            return Term::cst(Rat::ZERO);
        }
        Term { factors, coeff }
    }

    /// The term scaled by a rational.
    pub(crate) fn scale(&self, c: Rat) -> Term {
        self.mul(&Term::cst(c))
    }
}

/// Merges two sorted factor lists, adding exponents of equal atoms.
pub(crate) fn merge_factors(a: &[(Atom, i64)], b: &[(Atom, i64)]) -> Vec<(Atom, i64)> {
    let mut out: Vec<(Atom, i64)> = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let take_a = j >= b.len() || (i < a.len() && a[i].0 <= b[j].0);
        let next = if take_a {
            i += 1;
            a[i - 1].clone()
        } else {
            j += 1;
            b[j - 1].clone()
        };
        match out.last_mut() {
            Some(last) if last.0 == next.0 => match last.1.checked_add(next.1) {
                Some(0) => {
                    out.pop();
                }
                Some(e) => last.1 = e,
                None => out.push(next),
            },
            _ => out.push(next),
        }
    }
    out
}

impl Nat {
    /// Builds a normal form from arbitrary terms whose factor lists are
    /// already normalised: sorts, collects like terms, drops zeros.
    pub(crate) fn from_terms(mut terms: Vec<Term>) -> Nat {
        if terms.iter().any(Term::is_undefined) {
            return Nat::undefined();
        }
        terms.retain(|t| !t.coeff.is_zero());
        terms.sort();
        let mut out: Vec<Term> = Vec::with_capacity(terms.len());
        for t in terms {
            match out.last_mut() {
                Some(last) if last.factors == t.factors => match last.coeff.add(t.coeff) {
                    Some(c) => last.coeff = c,
                    None => out.push(t),
                },
                _ => out.push(t),
            }
            if out.last().is_some_and(|l| l.coeff.is_zero()) {
                out.pop();
            }
        }
        let n = Nat(Arc::new(Node { terms: out }));
        crate::simplify::recombine_div_mod(&n).unwrap_or(n)
    }

    /// The canonical undefined value `1 /^ 0`: any expression containing a
    /// division by zero collapses to it (evaluation fails with
    /// `DivisionByZero`).
    pub(crate) fn undefined() -> Nat {
        let t = Term {
            factors: vec![(Atom::Cst(Rat::ZERO), -1)],
            coeff: Rat::ONE,
        };
        Nat(Arc::new(Node { terms: vec![t] }))
    }

    pub(crate) fn is_undefined(&self) -> bool {
        self.terms().iter().any(Term::is_undefined)
    }

    /// The terms of the normal form (empty for zero).
    pub(crate) fn terms(&self) -> &[Term] {
        &self.0.terms
    }

    pub(crate) fn from_rat(r: Rat) -> Nat {
        Nat::from_terms(vec![Term::cst(r)])
    }

    pub(crate) fn zero() -> Nat {
        Nat::from_terms(Vec::new())
    }

    pub(crate) fn one() -> Nat {
        Nat::cst(1)
    }

    /// The single-factor expression `a`.
    pub(crate) fn atom(a: Atom) -> Nat {
        let undefined = match &a {
            Atom::Div(x, y)
            | Atom::Mod(x, y)
            | Atom::Min(x, y)
            | Atom::Max(x, y)
            | Atom::Pow(x, y)
            | Atom::Xor(x, y) => x.is_undefined() || y.is_undefined(),
            Atom::Poly(p) => p.is_undefined(),
            Atom::Var(_) | Atom::Cst(_) => false,
        };
        if undefined {
            return Nat::undefined();
        }
        Nat::from_terms(vec![Term {
            factors: vec![(a, 1)],
            coeff: Rat::ONE,
        }])
    }

    pub(crate) fn from_term(t: Term) -> Nat {
        Nat::from_terms(vec![t])
    }

    /// The value if this is a (possibly non-integer) constant.
    pub(crate) fn as_rat(&self) -> Option<Rat> {
        match self.terms() {
            [] => Some(Rat::ZERO),
            [t] if t.is_const() => Some(t.coeff),
            _ => None,
        }
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.terms().is_empty()
    }

    /// True if every term is integral (no rational coefficient, no negative power).
    pub(crate) fn is_integral(&self) -> bool {
        self.terms().iter().all(Term::is_integral)
    }

    /// The single atom if this is exactly `atom^1`.
    pub(crate) fn as_atom(&self) -> Option<&Atom> {
        match self.terms() {
            [t] if t.coeff == Rat::ONE && t.factors.len() == 1 && t.factors[0].1 == 1 => {
                Some(&t.factors[0].0)
            }
            _ => None,
        }
    }

    /// An integer constant.
    pub fn cst(c: i64) -> Nat {
        Nat::from_rat(Rat::int(c.into()))
    }

    /// The variable `v`.
    pub fn var(v: &Var) -> Nat {
        Nat::atom(Atom::Var(v.clone()))
    }

    /// The value if this is an integer constant fitting `i64`.
    pub fn as_cst(&self) -> Option<i64> {
        let r = self.as_rat()?;
        if r.is_int() {
            i64::try_from(r.num).ok()
        } else {
            None
        }
    }

    /// The variable if this is exactly a variable.
    pub fn as_var(&self) -> Option<&Var> {
        match self.as_atom()? {
            Atom::Var(v) => Some(v),
            _ => None,
        }
    }

    /// Sum.
    pub(crate) fn add_nat(&self, o: &Nat) -> Nat {
        let mut ts = self.terms().to_vec();
        ts.extend_from_slice(o.terms());
        Nat::from_terms(ts)
    }

    /// Multiplication by a rational constant.
    pub(crate) fn scale(&self, c: Rat) -> Nat {
        Nat::from_terms(self.terms().iter().map(|t| t.scale(c)).collect())
    }

    /// Difference.
    pub(crate) fn sub_nat(&self, o: &Nat) -> Nat {
        self.add_nat(&o.scale(Rat::int(-1)))
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use crate::{Nat, Var};

    #[test]
    fn constants_fold() {
        assert_eq!(Nat::cst(2) + Nat::cst(3), Nat::cst(5));
        assert_eq!(Nat::cst(6) * 7, Nat::cst(42));
        assert_eq!((Nat::cst(2) - 5).as_cst(), Some(-3));
        assert_eq!(Nat::cst(0).as_cst(), Some(0));
    }

    #[test]
    fn like_terms_are_collected() {
        let (n, m) = (v("n"), v("m"));
        assert_eq!(&n + &n, &n * 2);
        assert_eq!(&n * &m * 2 - &n * &m, &n * &m);
        assert_eq!(&n - &n, Nat::cst(0));
        assert_eq!(&n * &n, n.pow(&Nat::cst(2)));
    }

    #[test]
    fn products_distribute_over_sums() {
        let (n, m) = (v("n"), v("m"));
        assert_eq!((&n + 1) * 2, &n * 2 + 2);
        assert_eq!((&n + 1) * (&m + 1), &n * &m + &n + &m + 1);
        assert_eq!((&n + 2) * &m, &m * (Nat::cst(2) + &n));
    }

    #[test]
    fn sums_are_order_independent() {
        let (a, b, c) = (v("a"), v("b"), v("c"));
        assert_eq!(&a + &b + &c, &c + (&b + &a));
        assert_eq!(&a * &b * &c, &c * &b * &a);
    }

    #[test]
    fn zero_and_one() {
        let n = v("n");
        assert_eq!(&n * Nat::cst(0), Nat::cst(0));
        assert_eq!(&n * 1, n);
        assert_eq!(&n + 0, n);
    }

    #[test]
    fn as_var_and_as_cst() {
        let x = Var::new("x");
        assert_eq!(Nat::var(&x).as_var(), Some(&x));
        assert_eq!((Nat::var(&x) * 2).as_var(), None);
        assert_eq!(Nat::var(&x).as_cst(), None);
        assert_eq!(Nat::from(7).as_cst(), Some(7));
    }

    #[test]
    fn overflow_does_not_panic() {
        let big = Nat::cst(i64::MAX);
        let n = v("n");
        let s = &big + &big + &big;
        assert!(s.as_cst().is_none());
        let p = (&big * &big * &big * &big * &n) * &big;
        assert_eq!(p.eval(&|_| Some(1)), Err(crate::EvalError::Overflow));
        let q = Nat::cst(i64::MIN) * -1;
        assert!(q.as_cst().is_none());
        let _ = big.pow(&Nat::cst(1000)).to_string();
    }
}
