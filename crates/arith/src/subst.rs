//! Variables of an expression, substitution and re-normalisation.

use std::collections::BTreeSet;

use crate::nat::Atom;
use crate::simplify::{floor_div, min_max, modulo};
use crate::{Nat, Var};

/// Rebuilds `n` through the normalising constructors, replacing variables
/// for which `f` returns `Some`.
pub(crate) fn rebuild(n: &Nat, f: &dyn Fn(&Var) -> Option<Nat>) -> Nat {
    let mut acc = Nat::zero();
    for t in n.terms() {
        let mut p = Nat::from_rat(t.coeff);
        for (a, e) in &t.factors {
            p = p.mul_nat(&rebuild_atom(a, f).pow_int(*e));
        }
        acc = acc.add_nat(&p);
    }
    acc
}

fn rebuild_atom(a: &Atom, f: &dyn Fn(&Var) -> Option<Nat>) -> Nat {
    let r = |n: &Nat| rebuild(n, f);
    match a {
        Atom::Var(v) => f(v).unwrap_or_else(|| Nat::var(v)),
        Atom::Div(x, d) => floor_div(&r(x), &r(d)),
        Atom::Mod(x, d) => modulo(&r(x), &r(d)),
        Atom::Min(x, y) => min_max(&r(x), &r(y), true),
        Atom::Max(x, y) => min_max(&r(x), &r(y), false),
        Atom::Pow(b, e) => r(b).pow_nat(&r(e)),
        Atom::Poly(p) => r(p),
        Atom::Cst(c) => Nat::from_rat(*c),
    }
}

/// Adds the variables occurring in `n` (not those of their ranges) to `out`.
pub(crate) fn collect_vars(n: &Nat, out: &mut BTreeSet<Var>) {
    for t in n.terms() {
        for (a, _) in &t.factors {
            match a {
                Atom::Var(v) => {
                    out.insert(v.clone());
                }
                Atom::Div(x, y)
                | Atom::Mod(x, y)
                | Atom::Min(x, y)
                | Atom::Max(x, y)
                | Atom::Pow(x, y) => {
                    collect_vars(x, out);
                    collect_vars(y, out);
                }
                Atom::Poly(p) => collect_vars(p, out),
                Atom::Cst(_) => {}
            }
        }
    }
}
