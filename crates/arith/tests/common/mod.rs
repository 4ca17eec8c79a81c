//! Shared test support: a reference expression tree evaluated with C
//! semantics, random generators, and a pool of (ranged) variables.
#![allow(dead_code)]

use arith::{Nat, Var};
use proptest::prelude::*;

/// A reference expression tree, evaluated directly with C semantics.
#[derive(Clone, Debug)]
pub enum E {
    Cst(i64),
    Var(usize),
    Add(Box<E>, Box<E>),
    Sub(Box<E>, Box<E>),
    Mul(Box<E>, Box<E>),
    Div(Box<E>, Box<E>),
    Mod(Box<E>, Box<E>),
    Min(Box<E>, Box<E>),
    Max(Box<E>, Box<E>),
    Xor(Box<E>, Box<E>),
    Pow(Box<E>, u32),
    PowVar(i64, usize),
    ExactDiv(Box<E>, Box<E>),
}

pub const NVARS: usize = 10;

/// Variables: n, m unbounded; k in [1, 9); i in [0, n); j in [0, k);
/// c in [2, 6); q in [0, i); r in [k, k + 4); w unbounded (but assigned
/// multiples of 4, as `t`'s range requires); t in [0, w /^ 4).
pub fn vars() -> Vec<Var> {
    let n = Var::new("n");
    let m = Var::new("m");
    let k = Var::with_range("k", Nat::cst(1), Nat::cst(9));
    let i = Var::with_range("i", Nat::cst(0), Nat::var(&n));
    let j = Var::with_range("j", Nat::cst(0), Nat::var(&k));
    let c = Var::with_range("c", Nat::cst(2), Nat::cst(6));
    let q = Var::with_range("q", Nat::cst(0), Nat::var(&i));
    let r = Var::with_range("r", Nat::var(&k), Nat::var(&k) + 4);
    let w = Var::new("w");
    let t = Var::with_range("t", Nat::cst(0), Nat::var(&w).div_exact(&Nat::cst(4)));
    vec![n, m, k, i, j, c, q, r, w, t]
}

/// An assignment within the ranges, from random seeds (None: empty range).
pub fn assign(s: &[u32; NVARS]) -> Option<[i64; NVARS]> {
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
    let w = 4 * (1 + i64::from(s[8] % 6));
    let t = i64::from(s[9]) % (w / 4);
    Some([n, m, k, i, j, c, q, r, w, t])
}

pub fn leaf() -> impl Strategy<Value = E> {
    prop_oneof![(-3i64..9).prop_map(E::Cst), (0..NVARS).prop_map(E::Var),]
}

pub fn expr(exact: bool) -> impl Strategy<Value = E> {
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
            (inner.clone(), inner.clone())
                .prop_map(move |(x, y)| E::Xor(b(x), b(y)))
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
pub fn index_expr() -> impl Strategy<Value = E> {
    let b = |x: E| Box::new(x);
    let atom = prop_oneof![(0i64..5).prop_map(E::Cst), (0..NVARS).prop_map(E::Var)];
    let prod = prop_oneof![
        (atom.clone(), atom.clone()).prop_map(move |(x, y)| E::Mul(b(x), b(y))),
        atom.clone()
            .prop_map(move |x| E::Mul(b(x), b(E::Add(b(E::Var(2)), b(E::Cst(2)))))),
        atom.clone()
            .prop_map(move |x| E::Mul(b(x), b(E::ExactDiv(b(E::Var(8)), b(E::Cst(4)))))),
    ];
    let sum = proptest::collection::vec(prop_oneof![atom.clone(), prod], 1..4).prop_map(move |v| {
        v.into_iter()
            .reduce(|x, y| E::Add(b(x), b(y)))
            .unwrap_or(E::Cst(0))
    });
    let divisor = prop_oneof![
        (1i64..9).prop_map(E::Cst),
        Just(E::Var(2)),
        Just(E::Var(5)),
        Just(E::Var(0)),
        Just(E::ExactDiv(Box::new(E::Var(8)), Box::new(E::Cst(4)))),
        Just(E::Add(Box::new(E::Var(2)), Box::new(E::Cst(2)))),
    ];
    (sum, divisor, 0..4u8).prop_map(move |(s, d, op)| match op {
        0 => E::Div(b(s), b(d)),
        1 => E::Mod(b(s), b(d)),
        2 => E::Div(b(E::Mod(b(s), b(E::Mul(b(d.clone()), b(E::Var(5)))))), b(d)),
        _ => E::Mod(b(E::Mod(b(s), b(E::Mul(b(d.clone()), b(E::Var(2)))))), b(d)),
    })
}

pub fn reference(e: &E, env: &[i64; NVARS]) -> Option<i128> {
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
        E::Xor(x, y) => {
            let (x, y) = (r(x)?, r(y)?);
            if x < 0 || y < 0 {
                return None;
            }
            x ^ y
        }
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

pub fn build(e: &E, vs: &[Var]) -> Nat {
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
        E::Xor(x, y) => r(x).xor(&r(y)),
        E::Pow(x, k) => r(x).pow(&Nat::cst(i64::from(*k))),
        E::PowVar(c, i) => Nat::cst(*c).pow(&Nat::var(&vs[*i])),
        E::ExactDiv(x, y) => r(x).div_exact(&r(y)),
    }
}

pub fn env_fn<'a>(vs: &'a [Var], vals: &'a [i64; NVARS]) -> impl Fn(&Var) -> Option<i64> + 'a {
    move |v: &Var| vs.iter().position(|w| w == v).map(|i| vals[i])
}

pub fn poly() -> impl Strategy<Value = E> {
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

/// Number of cases: `PROPTEST_CASES` if set, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Symbolic sizes to compare indices against.
pub fn size_expr() -> impl Strategy<Value = E> {
    let b = |x: E| Box::new(x);
    let v = |i: usize| E::Var(i);
    prop_oneof![
        Just(v(0)),
        Just(v(2)),
        Just(v(8)),
        Just(E::Mul(b(v(0)), b(v(2)))),
        Just(E::Mul(b(v(5)), b(v(2)))),
        Just(E::Add(b(v(2)), b(E::Cst(4)))),
        Just(E::Mul(b(v(0)), b(v(8)))),
        (1i64..40).prop_map(E::Cst),
    ]
}
