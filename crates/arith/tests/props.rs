//! Property tests: normalisation and simplification preserve C semantics,
//! range reasoning is sound, `solve_for` solutions satisfy their equations,
//! and equal polynomials are structurally equal.

use std::collections::HashMap;

use arith::{Nat, Var};
use proptest::prelude::*;

/// A reference expression tree, evaluated directly with C semantics.
#[derive(Clone, Debug)]
enum E {
    Cst(i64),
    Var(usize),
    Add(Box<E>, Box<E>),
    Sub(Box<E>, Box<E>),
    Mul(Box<E>, Box<E>),
    Div(Box<E>, Box<E>),
    Mod(Box<E>, Box<E>),
    Min(Box<E>, Box<E>),
    Max(Box<E>, Box<E>),
    Pow(Box<E>, u32),
    PowVar(i64, usize),
    ExactDiv(Box<E>, Box<E>),
}

const NVARS: usize = 8;

/// Variables: n, m unbounded; k in [1, 9); i in [0, n); j in [0, k);
/// c in [2, 6); q in [0, i); r in [k, k + 4).
fn vars() -> Vec<Var> {
    let n = Var::new("n");
    let m = Var::new("m");
    let k = Var::with_range("k", Nat::cst(1), Nat::cst(9));
    let i = Var::with_range("i", Nat::cst(0), Nat::var(&n));
    let j = Var::with_range("j", Nat::cst(0), Nat::var(&k));
    let c = Var::with_range("c", Nat::cst(2), Nat::cst(6));
    let q = Var::with_range("q", Nat::cst(0), Nat::var(&i));
    let r = Var::with_range("r", Nat::var(&k), Nat::var(&k) + 4);
    vec![n, m, k, i, j, c, q, r]
}

/// An assignment within the ranges, from random seeds (None: empty range).
fn assign(s: &[u32; NVARS]) -> Option<[i64; NVARS]> {
    let n = 1 + i64::from(s[0] % 12);
    let m = i64::from(s[1] % 12);
    let k = 1 + i64::from(s[2] % 8);
    let i = i64::from(s[3]) % n;
    let j = i64::from(s[4]) % k;
    let c = 2 + i64::from(s[5] % 4);
    if i == 0 {
        return None;
    }
    let q = i64::from(s[6]) % i;
    let r = k + i64::from(s[7] % 4);
    Some([n, m, k, i, j, c, q, r])
}

fn leaf() -> impl Strategy<Value = E> {
    prop_oneof![(-3i64..9).prop_map(E::Cst), (0..NVARS).prop_map(E::Var),]
}

fn expr(exact: bool) -> impl Strategy<Value = E> {
    leaf().prop_recursive(4, 24, 2, move |inner| {
        let b = |x: E| Box::new(x);
        let mut choices = vec![
            (inner.clone(), inner.clone())
                .prop_map(move |(x, y)| E::Add(b(x), b(y)))
                .boxed(),
            (inner.clone(), inner.clone())
                .prop_map(move |(x, y)| E::Sub(b(x), b(y)))
                .boxed(),
            (inner.clone(), inner.clone())
                .prop_map(move |(x, y)| E::Mul(b(x), b(y)))
                .boxed(),
            (inner.clone(), inner.clone())
                .prop_map(move |(x, y)| E::Div(b(x), b(y)))
                .boxed(),
            (inner.clone(), inner.clone())
                .prop_map(move |(x, y)| E::Mod(b(x), b(y)))
                .boxed(),
            (inner.clone(), inner.clone())
                .prop_map(move |(x, y)| E::Min(b(x), b(y)))
                .boxed(),
            (inner.clone(), inner.clone())
                .prop_map(move |(x, y)| E::Max(b(x), b(y)))
                .boxed(),
            (inner.clone(), 0u32..4)
                .prop_map(move |(x, e)| E::Pow(b(x), e))
                .boxed(),
            (2i64..4, prop_oneof![Just(2usize), Just(4), Just(5)])
                .prop_map(|(c, v)| E::PowVar(c, v))
                .boxed(),
        ];
        if exact {
            // Divisible by construction, and occasionally arbitrary.
            choices.push(
                (inner.clone(), inner.clone())
                    .prop_map(move |(x, d)| E::ExactDiv(b(E::Mul(b(x), b(d.clone()))), b(d)))
                    .boxed(),
            );
            choices.push(
                (inner.clone(), inner)
                    .prop_map(move |(x, d)| E::ExactDiv(b(x), b(d)))
                    .boxed(),
            );
        }
        proptest::strategy::Union::new(choices)
    })
}

/// Sub-expressions of the index shapes: sums of products of ranged
/// variables and constants, then divided / reduced (non-negative operands).
fn index_expr() -> impl Strategy<Value = E> {
    let b = |x: E| Box::new(x);
    let atom = prop_oneof![(0i64..5).prop_map(E::Cst), (0..NVARS).prop_map(E::Var)];
    let prod = (atom.clone(), atom.clone()).prop_map(move |(x, y)| E::Mul(b(x), b(y)));
    let sum = proptest::collection::vec(prop_oneof![atom.clone(), prod], 1..4).prop_map(move |v| {
        v.into_iter()
            .reduce(|x, y| E::Add(b(x), b(y)))
            .unwrap_or(E::Cst(0))
    });
    let divisor = prop_oneof![
        (1i64..9).prop_map(E::Cst),
        Just(E::Var(2)),
        Just(E::Var(5)),
        Just(E::Var(0))
    ];
    (sum, divisor, 0..4u8).prop_map(move |(s, d, op)| match op {
        0 => E::Div(b(s), b(d)),
        1 => E::Mod(b(s), b(d)),
        2 => E::Div(b(E::Mod(b(s), b(E::Mul(b(d.clone()), b(E::Var(5)))))), b(d)),
        _ => E::Mod(b(E::Mod(b(s), b(E::Mul(b(d.clone()), b(E::Var(2)))))), b(d)),
    })
}

fn reference(e: &E, env: &[i64; NVARS]) -> Option<i128> {
    let r = |x: &E| reference(x, env);
    let v = match e {
        E::Cst(c) => i128::from(*c),
        E::Var(i) => i128::from(env[*i]),
        E::Add(x, y) => r(x)?.checked_add(r(y)?)?,
        E::Sub(x, y) => r(x)?.checked_sub(r(y)?)?,
        E::Mul(x, y) => r(x)?.checked_mul(r(y)?)?,
        E::Div(x, y) => r(x)?.checked_div(r(y)?)?,
        E::Mod(x, y) => r(x)?.checked_rem(r(y)?)?,
        E::Min(x, y) => r(x)?.min(r(y)?),
        E::Max(x, y) => r(x)?.max(r(y)?),
        E::Pow(x, k) => r(x)?.checked_pow(*k)?,
        E::PowVar(c, i) => i128::from(*c).checked_pow(u32::try_from(env[*i]).ok()?)?,
        E::ExactDiv(x, y) => {
            let (x, y) = (r(x)?, r(y)?);
            if y == 0 || x % y != 0 {
                return None;
            }
            x / y
        }
    };
    (v.abs() < (1i128 << 60)).then_some(v)
}

fn build(e: &E, vs: &[Var]) -> Nat {
    let r = |x: &E| build(x, vs);
    match e {
        E::Cst(c) => Nat::cst(*c),
        E::Var(i) => Nat::var(&vs[*i]),
        E::Add(x, y) => r(x) + r(y),
        E::Sub(x, y) => r(x) - r(y),
        E::Mul(x, y) => r(x) * r(y),
        E::Div(x, y) => r(x).floor_div(&r(y)),
        E::Mod(x, y) => r(x).modulo(&r(y)),
        E::Min(x, y) => Nat::min(&r(x), &r(y)),
        E::Max(x, y) => Nat::max(&r(x), &r(y)),
        E::Pow(x, k) => r(x).pow(&Nat::cst(i64::from(*k))),
        E::PowVar(c, i) => Nat::cst(*c).pow(&Nat::var(&vs[*i])),
        E::ExactDiv(x, y) => r(x).div_exact(&r(y)),
    }
}

fn env_fn<'a>(vs: &'a [Var], vals: &'a [i64; NVARS]) -> impl Fn(&Var) -> Option<i64> + 'a {
    move |v: &Var| vs.iter().position(|w| w == v).map(|i| vals[i])
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 2000,
        ..ProptestConfig::default()
    }
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
    fn bounds_are_sound(a in expr(false), b in expr(false), seeds in any::<[u32; NVARS]>()) {
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
    fn index_bounds_are_sound(a in index_expr(), b in index_expr(), seeds in any::<[u32; NVARS]>()) {
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

fn poly() -> impl Strategy<Value = E> {
    let leaf = prop_oneof![(-3i64..5).prop_map(E::Cst), (0..NVARS).prop_map(E::Var)];
    leaf.prop_recursive(3, 12, 2, |inner| {
        let b = |x: E| Box::new(x);
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(move |(x, y)| E::Add(b(x), b(y))),
            (inner.clone(), inner.clone()).prop_map(move |(x, y)| E::Sub(b(x), b(y))),
            (inner.clone(), inner).prop_map(move |(x, y)| E::Mul(b(x), b(y))),
        ]
    })
}

trait IsZero {
    fn is_zero_for_tests(&self) -> bool;
}

impl IsZero for Nat {
    fn is_zero_for_tests(&self) -> bool {
        self.as_cst() == Some(0)
    }
}
