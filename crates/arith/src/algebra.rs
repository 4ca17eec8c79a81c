//! Polynomial algebra on normal forms: products (distributing over sums),
//! exact division (coefficient and GCD cancellation, polynomial division) and
//! powers.

use std::cmp::Ordering;

use crate::nat::{merge_factors, Atom, Term};
use crate::rat::{gcd, Rat};
use crate::Nat;

/// Powers of sums whose expansion could exceed this many terms stay symbolic.
const MAX_EXPANDED_TERMS: u128 = 4096;

/// `C(n + k - 1, k)`, the number of monomials of degree `k` in `n` unknowns.
fn expansion_size(n: u128, k: u128) -> Option<u128> {
    let mut c: u128 = 1;
    for i in 1..=k {
        c = c.checked_mul(n + i - 1)? / i;
        if c > MAX_EXPANDED_TERMS {
            return None;
        }
    }
    Some(c)
}

impl Nat {
    /// Product, distributing over sums. A factor `S^-k` (exact division by a
    /// sum `S`) cancels against a multiplication by a multiple of `S`.
    pub(crate) fn mul_nat(&self, o: &Nat) -> Nat {
        if let Some(r) = cancel_poly(self, o).or_else(|| cancel_poly(o, self)) {
            return r;
        }
        let mut ts = Vec::with_capacity(self.terms().len() * o.terms().len());
        for a in self.terms() {
            for b in o.terms() {
                ts.push(a.mul(b));
            }
        }
        Nat::from_terms(ts)
    }

    pub(crate) fn mul_term(&self, t: &Term) -> Nat {
        Nat::from_terms(self.terms().iter().map(|a| a.mul(t)).collect())
    }

    /// Exact division `self /^ d`.
    pub(crate) fn div_exact_nat(&self, d: &Nat) -> Nat {
        if self.is_undefined() || d.is_undefined() {
            return Nat::undefined();
        }
        match d.terms() {
            [] => Nat::undefined(),
            [t] => self.mul_nat(&inverse_term(t)),
            _ => {
                // d = content * p with p a primitive polynomial (denominators
                // of d cleared into the content).
                let (content, p) = primitive(d);
                let a = self.mul_nat(&inverse_term(&content));
                // Clear the denominators of the dividend the same way.
                let (ca, pa) = match a.terms().len() {
                    0 | 1 => (Term::cst(Rat::ONE), a.clone()),
                    _ => primitive(&a),
                };
                if let Some(q) = poly_div(&pa, &p) {
                    return q.mul_term(&ca);
                }
                a.mul_term(&Term {
                    factors: vec![(Atom::Poly(p), -1)],
                    coeff: Rat::ONE,
                })
            }
        }
    }

    /// `self ^ k` for an integer `k` (negative: exact division of 1).
    pub(crate) fn pow_int(&self, k: i64) -> Nat {
        if k < 0 {
            return match k.checked_neg() {
                Some(p) => Nat::one().div_exact_nat(&self.pow_int(p)),
                None => Nat::atom(Atom::Pow(self.clone(), Nat::cst(k))),
            };
        }
        if k == 0 {
            return Nat::one();
        }
        if let [t] = self.terms() {
            let mut factors = Vec::with_capacity(t.factors.len());
            for (a, e) in &t.factors {
                match e.checked_mul(k) {
                    Some(e) => factors.push((a.clone(), e)),
                    None => return Nat::atom(Atom::Pow(self.clone(), Nat::cst(k))),
                }
            }
            let t2 = match t.coeff.powi(k) {
                Some(c) => Term { factors, coeff: c },
                None => Term {
                    factors: merge_factors(&factors, &[(Atom::Cst(t.coeff), k)]),
                    coeff: Rat::ONE,
                },
            };
            return Nat::from_term(t2);
        }
        let n = self.terms().len();
        // At most C(n + k - 1, k) monomials: expand unless that is huge.
        let too_big = expansion_size(n as u128, k as u128).is_none_or(|c| c > MAX_EXPANDED_TERMS);
        if too_big {
            return Nat::atom(Atom::Pow(self.clone(), Nat::cst(k)));
        }
        let mut acc = Nat::one();
        for _ in 0..k {
            acc = acc.mul_nat(self);
        }
        acc
    }

    /// General power with normalisation of constant exponents.
    pub(crate) fn pow_nat(&self, e: &Nat) -> Nat {
        if self.is_undefined() || e.is_undefined() {
            return Nat::undefined();
        }
        if let Some(k) = e.as_cst() {
            return self.pow_int(k);
        }
        if self.as_cst() == Some(1) {
            return Nat::one();
        }
        // b^(c + Σ (p_i/q_i)*M_i) = b^c * Π (b^(M_i/q_i))^p_i, so that
        // 2^m * 2^n and 2^(m+n) share one normal form.
        let mut acc = Nat::one();
        for t in e.terms() {
            if t.is_const() && t.coeff.is_int() {
                if let Ok(k) = i64::try_from(t.coeff.num) {
                    acc = acc.mul_nat(&self.pow_int(k));
                    continue;
                }
            }
            let unit = Term {
                factors: t.factors.clone(),
                coeff: Rat::new(1, t.coeff.den).unwrap_or(Rat::ONE),
            };
            let (exp, k) = match i64::try_from(t.coeff.num) {
                Ok(k) if !t.is_const() => (Nat::from_term(unit), k),
                _ => (Nat::from_term(t.clone()), 1),
            };
            let factor = Term {
                factors: vec![(Atom::Pow(self.clone(), exp), k)],
                coeff: Rat::ONE,
            };
            acc = acc.mul_term(&factor);
        }
        acc
    }
}

/// `1 / t` as a normal form.
fn inverse_term(t: &Term) -> Nat {
    let mut out = Nat::one();
    let mut factors = Vec::new();
    for (a, e) in &t.factors {
        match (a, e.checked_neg()) {
            (Atom::Poly(p), Some(k)) if k > 0 => out = out.mul_nat(&p.pow_int(k)),
            (_, Some(k)) => factors.push((a.clone(), k)),
            (_, None) => factors.push((Atom::Pow(Nat::atom(a.clone()), Nat::cst(*e)), -1)),
        }
    }
    factors.sort();
    let coeff = t.coeff.recip();
    let term = match coeff {
        Some(c) => Term { factors, coeff: c },
        None => Term {
            factors: merge_factors(&factors, &[(Atom::Cst(t.coeff), -1)]),
            coeff: Rat::ONE,
        },
    };
    out.mul_term(&term)
}

/// If `b` is a sum `content * p` and terms of `a` contain `Poly(p)^-k`, multiply
/// those terms by cancelling the power instead of distributing.
fn cancel_poly(a: &Nat, b: &Nat) -> Option<Nat> {
    if b.terms().len() < 2 {
        return None;
    }
    if !a.terms().iter().any(|t| {
        t.factors
            .iter()
            .any(|(x, e)| *e < 0 && matches!(x, Atom::Poly(_)))
    }) {
        return None;
    }
    let (content, p) = primitive(b);
    let atom = Atom::Poly(p);
    if !a.terms().iter().any(|t| t.exp_of(&atom) < 0) {
        return None;
    }
    let unit = Term {
        factors: vec![(atom.clone(), 1)],
        coeff: Rat::ONE,
    };
    let (mut hit, mut rest) = (Vec::new(), Vec::new());
    for t in a.terms() {
        if t.exp_of(&atom) < 0 {
            hit.push(t.mul(&unit).mul(&content));
        } else {
            rest.push(t.clone());
        }
    }
    Some(Nat::from_terms(hit).add_nat(&Nat::from_terms(rest).mul_nat(b)))
}

/// Splits a sum into `content * primitive`: the content collects the
/// coefficient GCD (with the sign of the first term) and the factors common to
/// all terms; the primitive part is what remains.
pub(crate) fn primitive(b: &Nat) -> (Term, Nat) {
    let ts = b.terms();
    let mut g: i128 = 0;
    let mut l: i128 = 1;
    let mut ok = true;
    for t in ts {
        g = gcd(g, t.coeff.num);
        match (l / gcd(l, t.coeff.den)).checked_mul(t.coeff.den) {
            Some(v) => l = v,
            None => ok = false,
        }
    }
    let c = if ok && g != 0 {
        Rat::new(g, l).unwrap_or(Rat::ONE)
    } else {
        Rat::ONE
    };
    // Common factors: the minimal exponent of each atom over all terms
    // (absent = 0), so common factors and all denominators move into the
    // content and the primitive part has non-negative exponents.
    let mut common: Vec<(Atom, i64)> = Vec::new();
    let atoms: std::collections::BTreeSet<&Atom> = ts
        .iter()
        .flat_map(|t| t.factors.iter().map(|(a, _)| a))
        .collect();
    for a in atoms {
        if matches!(a, Atom::Poly(_)) {
            continue;
        }
        let m = ts.iter().map(|t| t.exp_of(a)).min().unwrap_or(0);
        if m != 0 {
            common.push((a.clone(), m));
        }
    }
    let (c, cinv) = match c.recip() {
        Some(r) => (c, r),
        None => (Rat::ONE, Rat::ONE),
    };
    let inv = Term {
        factors: common.iter().map(|(a, e)| (a.clone(), -e)).collect(),
        coeff: cinv,
    };
    let mut content = Term {
        factors: common,
        coeff: c,
    };
    let mut p = Nat::from_terms(ts.iter().map(|t| t.mul(&inv)).collect());
    // Sign: the first term of the primitive part is positive.
    if p.terms().first().is_some_and(|t| t.coeff.num < 0) {
        if let Some(nc) = c.neg() {
            p = p.scale(Rat::int(-1));
            content.coeff = nc;
        }
    }
    (content, p)
}

/// Graded lexicographic monomial order.
pub(crate) fn mono_cmp(a: &[(Atom, i64)], b: &[(Atom, i64)]) -> Ordering {
    let da: i128 = a.iter().map(|(_, e)| i128::from(*e)).sum();
    let db: i128 = b.iter().map(|(_, e)| i128::from(*e)).sum();
    da.cmp(&db).then_with(|| {
        let (mut i, mut j) = (0, 0);
        loop {
            match (a.get(i), b.get(j)) {
                (None, None) => return Ordering::Equal,
                (Some(_), None) => return Ordering::Greater,
                (None, Some(_)) => return Ordering::Less,
                (Some((x, ex)), Some((y, ey))) => match x.cmp(y) {
                    Ordering::Less => return Ordering::Greater,
                    Ordering::Greater => return Ordering::Less,
                    Ordering::Equal if ex != ey => return ex.cmp(ey),
                    Ordering::Equal => {
                        i += 1;
                        j += 1;
                    }
                },
            }
        }
    })
}

fn leading(n: &Nat) -> Option<&Term> {
    n.terms()
        .iter()
        .max_by(|a, b| mono_cmp(&a.factors, &b.factors))
}

/// Exact multivariate polynomial division `a / d`; `None` if `d` does not
/// divide `a` (or either has negative powers).
fn poly_div(a: &Nat, d: &Nat) -> Option<Nat> {
    let (q, r) = poly_div_rem(a, d)?;
    r.is_zero().then_some(q)
}

/// Multivariate division with remainder: `a = q*d + r` where no term of `r`
/// is divisible by the leading term of `d`. `None` if either has negative
/// powers (or the division does not finish within its budget).
pub(crate) fn poly_div_rem(a: &Nat, d: &Nat) -> Option<(Nat, Nat)> {
    let nonneg = |n: &Nat| {
        n.terms()
            .iter()
            .all(|t| t.factors.iter().all(|(_, e)| *e > 0))
    };
    if !nonneg(a) || !nonneg(d) {
        return None;
    }
    let ld = leading(d)?.clone();
    let inv_lc = ld.coeff.recip()?;
    let (mut p, mut q, mut rem) = (a.clone(), Vec::new(), Vec::new());
    for _ in 0..(4 * a.terms().len() + 16) {
        let Some(lp) = leading(&p).cloned() else {
            return Some((Nat::from_terms(q), Nat::from_terms(rem)));
        };
        if ld.factors.iter().any(|(x, e)| lp.exp_of(x) < *e) {
            // Not divisible: the leading term goes to the remainder.
            p = p.sub_nat(&Nat::from_term(lp.clone()));
            rem.push(lp);
            continue;
        }
        let factors = lp
            .factors
            .iter()
            .filter_map(|(x, e)| {
                let k = e - ld.exp_of(x);
                (k > 0).then(|| (x.clone(), k))
            })
            .collect();
        let qt = Term {
            factors,
            coeff: lp.coeff.mul(inv_lc)?,
        };
        p = p.sub_nat(&d.mul_term(&qt));
        q.push(qt);
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use crate::Nat;

    #[test]
    fn exact_division_by_constants() {
        let n = v("n");
        let c = Nat::cst(32);
        assert_eq!(n.div_exact(&c) * 32, n);
        assert_eq!((&n * 32).div_exact(&c), n);
        assert_eq!(Nat::cst(1024).div_exact(&c), Nat::cst(32));
        assert_eq!((&n * 4 + 8).div_exact(&Nat::cst(4)), &n + 2);
        assert_eq!(n.div_exact(&c).to_string(), "n /^ 32");
        assert_eq!(
            n.div_exact(&c).div_exact(&Nat::cst(2)),
            n.div_exact(&Nat::cst(64))
        );
    }

    #[test]
    fn exact_division_by_symbols() {
        let (n, m) = (v("n"), v("m"));
        assert_eq!((&n * &m).div_exact(&m), n);
        assert_eq!(n.div_exact(&m) * &m, n);
        assert_eq!((&n * &m * 6).div_exact(&(&m * 3)), &n * 2);
        assert_eq!(n.div_exact(&n), Nat::cst(1));
    }

    #[test]
    fn exact_division_by_sums() {
        let (n, m, k) = (v("n"), v("m"), v("k"));
        // Polynomial division.
        assert_eq!((&n * &n - 1).div_exact(&(&n + 1)), &n - 1);
        assert_eq!((&n * &m + &m).div_exact(&(&n + 1)), m);
        // Content: (2n + 2) = 2(n + 1).
        assert_eq!((&k * 2 + 2).div_exact(&(&k * 2 + 2)), Nat::cst(1));
        // Non-cancellable: kept as a negative power that cancels back.
        let q = (&n + 1).div_exact(&(&k + 2));
        assert_eq!(q.to_string(), "(n+1) /^ (k+2)");
        assert_eq!(&q * (&k + 2), &n + 1);
        assert_eq!(&q * (&k * 3 + 6), (&n + 1) * 3);
    }

    #[test]
    fn powers() {
        let (n, m) = (v("n"), v("m"));
        assert_eq!(n.pow(&Nat::cst(0)), Nat::cst(1));
        assert_eq!(n.pow(&Nat::cst(3)), &n * &n * &n);
        assert_eq!((&n + 1).pow(&Nat::cst(2)), &n * &n + &n * 2 + 1);
        assert_eq!(Nat::cst(2).pow(&Nat::cst(10)), Nat::cst(1024));
        assert_eq!((&n * &m).pow(&Nat::cst(2)), &n * &n * &m * &m);
        // Symbolic exponents: constant parts are split off.
        assert_eq!(Nat::cst(2).pow(&(&n + 1)), Nat::cst(2).pow(&n) * 2);
        assert_eq!(Nat::cst(1).pow(&n), Nat::cst(1));
        assert_eq!(n.pow(&Nat::cst(-1)), Nat::cst(1).div_exact(&n));
        // Symbolic exponents split over their terms.
        let two = Nat::cst(2);
        assert_eq!(two.pow(&(&n + &m)), two.pow(&n) * two.pow(&m));
        assert_eq!(two.pow(&(&n * 2)), two.pow(&n) * two.pow(&n));
        assert_eq!(two.pow(&(&n - &m)) * two.pow(&m), two.pow(&n));
    }
}
