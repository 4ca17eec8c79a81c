//! Variables of an expression, substitution and re-normalisation.

use std::collections::BTreeSet;

use crate::nat::Atom;
use crate::simplify::{floor_div, min_max, modulo, xor};
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
        Atom::Xor(x, y) => xor(&r(x), &r(y)),
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
                | Atom::Pow(x, y)
                | Atom::Xor(x, y) => {
                    collect_vars(x, out);
                    collect_vars(y, out);
                }
                Atom::Poly(p) => collect_vars(p, out),
                Atom::Cst(_) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use crate::{Nat, Var};

    #[test]
    fn substitution_renormalises() {
        let (n, m) = (Var::new("n"), Var::new("m"));
        let (nv, mv) = (Nat::var(&n), Nat::var(&m));
        let e = (&nv + 1) * &mv;
        assert_eq!(e.substitute(&n, &Nat::cst(3)), &mv * 4);
        assert_eq!(e.substitute(&m, &(&nv - 1)), &nv * &nv - 1);
        let d = nv.floor_div(&mv);
        assert_eq!(
            d.substitute(&n, &(&mv * 5 + 2))
                .substitute(&m, &Nat::cst(4)),
            Nat::cst(5)
        );
        let map: HashMap<Var, Nat> = [(n.clone(), mv.clone()), (m.clone(), nv.clone())].into();
        assert_eq!((&nv - &mv * 2).substitute_all(&map), &mv - &nv * 2);
    }

    #[test]
    fn free_variables() {
        let (n, m, k) = (Var::new("n"), Var::new("m"), Var::new("k"));
        let e = Nat::var(&n).floor_div(&Nat::var(&m)) + Nat::min(&Nat::var(&k), &Nat::cst(3));
        let fv: Vec<String> = e.free_vars().iter().map(|v| v.name().to_string()).collect();
        assert_eq!(fv, ["k", "m", "n"]);
        assert!(e.contains_var(&m));
        assert!(!e.contains_var(&Var::new("z")));
        // A variable's range does not count.
        let i = Var::with_range("i", Nat::cst(0), Nat::var(&n));
        assert!(!Nat::var(&i).contains_var(&n));
    }
}
