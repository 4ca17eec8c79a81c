//! Solving linear equations for one variable.

use crate::nat::{Atom, Term};
use crate::rat::Rat;
use crate::{Nat, Var};

fn atom_mentions(a: &Atom, v: &Var) -> bool {
    match a {
        Atom::Var(w) => w == v,
        Atom::Div(x, y) | Atom::Mod(x, y) | Atom::Min(x, y) | Atom::Max(x, y) | Atom::Pow(x, y) => {
            x.contains_var(v) || y.contains_var(v)
        }
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
