//! Property tests: normalisation and simplification preserve C semantics,
//! range reasoning is sound, `solve_for` solutions satisfy their equations,
//! and equal polynomials are structurally equal.

use std::collections::HashMap;

mod common;

use arith::{Nat, Var};
use common::*;
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig::with_cases(cases(2000))
}

proptest! {
    #![proptest_config(config())]

    /// Normal form and `simplify()` evaluate like the original expression.
    #[test]
    fn normalisation_preserves_value(e in expr(true), seeds in any::<[u32; NVARS]>()) {
        let vs = vars();
        let Some(vals) = assign(&seeds) else { return Ok(()) };
        let Some(expected) = reference(&e, &vals) else { return Ok(()) };
        let n = build(&e, &vs);
        let env = env_fn(&vs, &vals);
        prop_assert_eq!(n.eval(&env).map(i128::from), Ok(expected), "normal form {}", n);
        let s = n.simplify();
        prop_assert_eq!(s.eval(&env).map(i128::from), Ok(expected), "simplified {}", s);
    }

    /// Index shapes with non-negative operands are evaluated correctly.
    #[test]
    fn index_shapes_preserve_value(e in index_expr(), seeds in any::<[u32; NVARS]>()) {
        let vs = vars();
        let Some(vals) = assign(&seeds) else { return Ok(()) };
        let Some(expected) = reference(&e, &vals) else { return Ok(()) };
        let n = build(&e, &vs);
        prop_assert_eq!(n.eval(&env_fn(&vs, &vals)).map(i128::from), Ok(expected), "normal form {}", n);
    }

    /// Claimed bounds and proofs hold on assignments within the ranges.
    #[test]
    fn bounds_are_sound(a in expr(true), b in expr(true), seeds in any::<[u32; NVARS]>()) {
        let vs = vars();
        let Some(vals) = assign(&seeds) else { return Ok(()) };
        let (na, nb) = (build(&a, &vs), build(&b, &vs));
        let env = env_fn(&vs, &vals);
        let (Ok(va), Ok(vb)) = (na.eval(&env), nb.eval(&env)) else { return Ok(()) };
        if let Some(l) = na.lower_bound() {
            prop_assert!(va >= l, "{} = {} < claimed lower bound {}", na, va, l);
        }
        if let Some(u) = na.upper_bound() {
            prop_assert!(va <= u, "{} = {} > claimed upper bound {}", na, va, u);
        }
        if na.prove_lt(&nb) {
            prop_assert!(va < vb, "claimed {} < {} but {} >= {}", na, nb, va, vb);
        }
        if na.prove_le(&nb) {
            prop_assert!(va <= vb, "claimed {} <= {} but {} > {}", na, nb, va, vb);
        }
        if na.prove_nonneg() {
            prop_assert!(va >= 0, "claimed {} >= 0 but = {}", na, va);
        }
    }

    /// Bounds on the index shapes (where the reasoning does real work).
    #[test]
    fn index_bounds_are_sound(a in index_expr(), b in size_expr(), seeds in any::<[u32; NVARS]>()) {
        let vs = vars();
        let Some(vals) = assign(&seeds) else { return Ok(()) };
        let (na, nb) = (build(&a, &vs), build(&b, &vs));
        let env = env_fn(&vs, &vals);
        let (Ok(va), Ok(vb)) = (na.eval(&env), nb.eval(&env)) else { return Ok(()) };
        if let Some(l) = na.lower_bound() {
            prop_assert!(va >= l, "{} = {} < claimed lower bound {}", na, va, l);
        }
        if let Some(u) = na.upper_bound() {
            prop_assert!(va <= u, "{} = {} > claimed upper bound {}", na, va, u);
        }
        if na.prove_lt(&nb) {
            prop_assert!(va < vb, "claimed {} < {} but {} >= {}", na, nb, va, vb);
        }
        if nb.prove_le(&na) {
            prop_assert!(vb <= va, "claimed {} <= {} but {} > {}", nb, na, vb, va);
        }
    }

    /// `solve_for` solutions satisfy the equation (m is the unknown).
    #[test]
    fn solve_for_solutions_satisfy(a in expr(false), rest in expr(false), rhs in expr(false),
                                   seeds in any::<[u32; NVARS]>()) {
        let vs = vars();
        let m = vs[1].clone();
        let (na, nrest, nrhs) = (build(&a, &vs), build(&rest, &vs), build(&rhs, &vs));
        let lhs = &na * Nat::var(&m) + &nrest;
        let Some(sol) = Nat::solve_for(&lhs, &nrhs, &m) else { return Ok(()) };
        prop_assert!(!sol.contains_var(&m) || lhs.contains_var(&m));
        // Symbolically: substituting the solution makes both sides equal.
        let (l2, r2) = (lhs.substitute(&m, &sol), nrhs.substitute(&m, &sol));
        let Some(vals) = assign(&seeds) else { return Ok(()) };
        let env = env_fn(&vs, &vals);
        if let (Ok(x), Ok(y), Ok(_)) = (l2.eval(&env), r2.eval(&env), sol.eval(&env)) {
            prop_assert_eq!(x, y, "lhs {} rhs {} sol {}", lhs, nrhs, sol);
        }
    }

    /// Equal polynomials are structurally equal.
    #[test]
    fn polynomial_identities(a in poly(), b in poly(), c in poly()) {
        let vs = vars();
        let (a, b, c) = (build(&a, &vs), build(&b, &vs), build(&c, &vs));
        prop_assert_eq!(&a * &b, &b * &a);
        prop_assert_eq!((&a + &b) + &c, &a + (&b + &c));
        prop_assert_eq!(&a * (&b + &c), &a * &b + &a * &c);
        prop_assert_eq!((&a - &b) + &b, a.clone());
        prop_assert_eq!((&a * &b) * &c, &a * (&b * &c));
        let sq = (&a + &b).pow(&Nat::cst(2));
        prop_assert_eq!(sq, &a * &a + Nat::cst(2) * &a * &b + &b * &b);
        if !b.is_zero_for_tests() {
            prop_assert_eq!((&a * &b).div_exact(&b), a.clone());
        }
    }

    /// Printing is deterministic and `substitute_all` with the identity is a no-op.
    #[test]
    fn substitution_identity(e in expr(true)) {
        let vs = vars();
        let n = build(&e, &vs);
        let map: HashMap<Var, Nat> = vs.iter().map(|v| (v.clone(), Nat::var(v))).collect();
        prop_assert_eq!(n.substitute_all(&map), n.simplify());
        prop_assert_eq!(n.to_string(), n.clone().to_string());
    }
}

trait IsZero {
    fn is_zero_for_tests(&self) -> bool;
}

impl IsZero for Nat {
    fn is_zero_for_tests(&self) -> bool {
        self.as_cst() == Some(0)
    }
}
