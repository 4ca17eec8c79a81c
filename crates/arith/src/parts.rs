//! Taking a normal form apart for messages and checks: the fraction
//! `num /^ den` it denotes and its positive and negative parts.
//!
//! A size that the solver computed (`n /^ 32`, `n - 10`) is a natural number only
//! under conditions: `32` divides `n`, `n >= 10`. [`Nat::as_fraction`] and
//! [`Nat::sign_parts`] expose those conditions in the words a user writes them.

use crate::nat::{Atom, Term};
use crate::rat::{gcd, Rat};
use crate::Nat;

impl Nat {
    /// `self` as `num /^ den` with an integral numerator (integer coefficients, no
    /// negative power) and the smallest such denominator built from the
    /// coefficients' denominators and the negative powers: `n /^ 32` is
    /// `(n, 32)`, `(n - 3) /^ 2` is `(n - 3, 2)`, `n /^ k` is `(n, k)`, and an
    /// integral `e` is `(e, 1)`. If the denominator overflows, `(self, 1)`.
    pub fn as_fraction(&self) -> (Nat, Nat) {
        let mut den_c: i128 = 1;
        let mut den_atoms: Vec<(Atom, i64)> = Vec::new();
        for t in self.terms() {
            let g = gcd(den_c, t.coeff.den).max(1);
            match (den_c / g).checked_mul(t.coeff.den) {
                Some(l) => den_c = l,
                None => return (self.clone(), Nat::one()),
            }
            for (a, e) in t.factors.iter().filter(|(_, e)| *e < 0) {
                match den_atoms.iter_mut().find(|(b, _)| b == a) {
                    Some((_, k)) => *k = (*k).max(-e),
                    None => den_atoms.push((a.clone(), -e)),
                }
            }
        }
        den_atoms.sort();
        let den = Nat::from_term(Term {
            factors: den_atoms,
            coeff: Rat::int(den_c),
        });
        (self.clone() * den.clone(), den)
    }

    /// `(pos, neg)` with `self = pos - neg`: the terms with a positive coefficient,
    /// and the others negated (`n - 10` gives `(n, 10)`).
    pub fn sign_parts(&self) -> (Nat, Nat) {
        let (pos, neg): (Vec<Term>, Vec<Term>) =
            self.terms().iter().cloned().partition(|t| t.coeff.num > 0);
        let neg = neg.iter().map(|t| t.scale(Rat::int(-1))).collect();
        (Nat::from_terms(pos), Nat::from_terms(neg))
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use crate::Nat;

    #[test]
    fn fractions_expose_the_divisor() {
        let n = v("n");
        let (num, den) = n.div_exact(&Nat::cst(32)).as_fraction();
        assert_eq!(
            (num.to_string(), den.to_string()),
            ("n".into(), "32".into())
        );
        let e = (n.clone() - Nat::cst(3)).div_exact(&Nat::cst(2));
        let (num, den) = e.as_fraction();
        assert_eq!(
            (num.to_string(), den.to_string()),
            ("n-3".into(), "2".into())
        );
        let (num, den) = n.div_exact(&v("k")).as_fraction();
        assert_eq!((num.to_string(), den.to_string()), ("n".into(), "k".into()));
        let (num, den) = (n.clone() * 4 + Nat::cst(1)).as_fraction();
        assert_eq!(num, n * 4 + Nat::cst(1));
        assert_eq!(den, Nat::cst(1));
    }

    #[test]
    fn sign_parts_split_a_difference() {
        let (p, q) = (v("n") + v("m") - v("k") - Nat::cst(10)).sign_parts();
        assert_eq!(p, v("n") + v("m"));
        assert_eq!(q, v("k") + Nat::cst(10));
        let (p, q) = v("n").sign_parts();
        assert_eq!((p, q), (v("n"), Nat::cst(0)));
    }
}
