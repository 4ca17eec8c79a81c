//! Solving linear equations for one variable.

use crate::nat::{Atom, Term};
use crate::rat::Rat;
use crate::{Nat, Var};

fn atom_mentions(a: &Atom, v: &Var) -> bool {
    match a {
        Atom::Var(w) => w == v,
        Atom::Div(x, y)
        | Atom::Mod(x, y)
        | Atom::Min(x, y)
        | Atom::Max(x, y)
        | Atom::Pow(x, y)
        | Atom::Xor(x, y) => x.contains_var(v) || y.contains_var(v),
        Atom::Poly(p) => p.contains_var(v),
        Atom::Cst(_) => false,
    }
}

/// Solves `lhs == rhs` for `v` occurring linearly: `a*v + rest == 0` gives
/// `v = -rest /^ a`.
pub(crate) fn solve_for(lhs: &Nat, rhs: &Nat, v: &Var) -> Option<Nat> {
    let diff = lhs.sub_nat(rhs);
    let var = Atom::Var(v.clone());
    let (mut a, mut rest): (Vec<Term>, Vec<Term>) = (Vec::new(), Vec::new());
    for t in diff.terms() {
        if t.factors
            .iter()
            .any(|(x, _)| x != &var && atom_mentions(x, v))
        {
            return None;
        }
        match t.exp_of(&var) {
            0 => rest.push(t.clone()),
            1 => a.push(t.without(&var)),
            _ => return None,
        }
    }
    if a.is_empty() {
        return None;
    }
    let rest = Nat::from_terms(rest).scale(Rat::int(-1));
    Some(rest.div_exact_nat(&Nat::from_terms(a)))
}

#[cfg(test)]
mod tests {
    use crate::{Nat, Var};

    #[test]
    fn linear_equations() {
        let (x, n, m) = (Var::new("x"), Var::new("n"), Var::new("m"));
        let (xv, nv, mv) = (Nat::var(&x), Nat::var(&n), Nat::var(&m));
        // 2x + n = m  =>  x = (m - n) /^ 2
        let sol = Nat::solve_for(&(&xv * 2 + &nv), &mv, &x).unwrap();
        assert_eq!(sol, (&mv - &nv).div_exact(&Nat::cst(2)));
        // x*n + 1 = m  =>  x = (m - 1) /^ n
        let sol = Nat::solve_for(&(&xv * &nv + 1), &mv, &x).unwrap();
        assert_eq!(&sol * &nv + 1, mv);
        // x on both sides: 3x = x + 4  =>  x = 2
        assert_eq!(
            Nat::solve_for(&(&xv * 3), &(&xv + 4), &x),
            Some(Nat::cst(2))
        );
        // i*k + j = idx solved for j
        let (i, j, k) = (Var::new("i"), Var::new("j"), Var::new("k"));
        let lhs = Nat::var(&i) * Nat::var(&k) + Nat::var(&j);
        let sol = Nat::solve_for(&lhs, &mv, &j).unwrap();
        assert_eq!(sol, &mv - Nat::var(&i) * Nat::var(&k));
    }

    #[test]
    fn unsolvable_equations() {
        let (x, n) = (Var::new("x"), Var::new("n"));
        let (xv, nv) = (Nat::var(&x), Nat::var(&n));
        assert_eq!(Nat::solve_for(&nv, &Nat::cst(3), &x), None);
        assert_eq!(Nat::solve_for(&(&xv * &xv), &nv, &x), None);
        assert_eq!(
            Nat::solve_for(&(xv.floor_div(&Nat::cst(2)) + &xv), &nv, &x),
            None
        );
        assert_eq!(Nat::solve_for(&Nat::min(&xv, &nv), &nv, &x), None);
        assert_eq!(Nat::solve_for(&(&xv + 1), &(&xv + 2), &x), None);
    }
}
