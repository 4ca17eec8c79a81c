//! Range reasoning: symbolic bounds by monotone elimination.
//!
//! `bound(x, Lo)` returns an expression `B` with `x >= B` for every
//! assignment of the variables within their ranges (`Hi`: `x <= B`). It
//! starts from `x` itself (always a valid bound) and repeatedly eliminates an
//! *item* (a variable or a non-polynomial atom) `X`: writing
//! `x = Σ c_e X^e` with the `c_e` free of `X`, if the sign of every `c_e` is
//! known then `x` is monotone in `X`, and `X` can be replaced by the end of
//! its own range that minimises (maximises) `x`. The replacement holds
//! pointwise for the actual values of all other items, so the result is a
//! valid bound even when items are correlated (e.g. `i` and `i % 4`).
//!
//! Items are eliminated *leaves first*: an item that occurs in no other
//! item's range (e.g. `i in [0, n)` before `n`), which makes symbolic bounds
//! cancel: the lower bound of `n*k - (i*k + j)` with `i < n`, `j < k` is
//! `n*k - (n-1)*k - (k-1) = 1`.
//!
//! Item ranges: a variable uses its range (`[0, ∞)` without one); `y / d`
//! lies in `[(y-d+1)/d, y/d]` (for `d >= 1`, `y >= 0`); `y % d` in
//! `[0, min(d-1, y)]` for `y >= 0`; `min`/`max` offer both arguments as
//! candidate bounds; `b^e` is at least 1 for `b >= 1`, `e >= 0`.
//! All the work is limited by a fuel counter, so reasoning always terminates.

use std::collections::{BTreeMap, BTreeSet};

use crate::nat::{Atom, Term};
use crate::rat::Rat;
use crate::Nat;

/// Which bound is sought.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Dir {
    Lo,
    Hi,
}

impl Dir {
    fn flip(self) -> Dir {
        match self {
            Dir::Lo => Dir::Hi,
            Dir::Hi => Dir::Lo,
        }
    }
}

/// The reasoning budget of one query.
pub(crate) struct Ctx {
    fuel: u32,
}

const FUEL: u32 = 400;

impl Ctx {
    pub(crate) fn new() -> Ctx {
        Ctx { fuel: FUEL }
    }

    fn spend(&mut self) -> bool {
        if self.fuel == 0 {
            return false;
        }
        self.fuel -= 1;
        true
    }
}

/// A symbolic bound of `x` (see the module documentation).
pub(crate) fn bound(x: &Nat, dir: Dir, cx: &mut Ctx) -> Nat {
    let mut cur = x.clone();
    while cur.as_rat().is_none() && cx.spend() {
        match eliminate_one(&cur, dir, cx) {
            Some(next) if next != cur => cur = next,
            _ => break,
        }
    }
    cur
}

/// A constant (real) bound, if elimination reaches a constant.
pub(crate) fn const_bound(x: &Nat, dir: Dir, cx: &mut Ctx) -> Option<Rat> {
    bound(x, dir, cx).as_rat()
}

/// `x >= 0` (`Lo`) or `x <= 0` (`Hi`) proven.
fn has_sign(x: &Nat, dir: Dir, cx: &mut Ctx) -> bool {
    match const_bound(x, dir, cx) {
        Some(r) => match dir {
            Dir::Lo => r.num >= 0,
            Dir::Hi => r.num <= 0,
        },
        None => false,
    }
}

/// `x >= k` proven (real-valued reasoning, no rounding).
fn at_least(x: &Nat, k: i128, cx: &mut Ctx) -> bool {
    const_bound(x, Dir::Lo, cx).is_some_and(|r| r.cmp_num(Rat::int(k)).is_ge())
}

fn items(x: &Nat) -> BTreeSet<Atom> {
    x.terms()
        .iter()
        .flat_map(|t| t.factors.iter().map(|(a, _)| a.clone()))
        .filter(|a| !matches!(a, Atom::Cst(_)))
        .collect()
}

/// All atoms (recursively) that the range of an item depends on.
fn deps(a: &Atom) -> BTreeSet<Atom> {
    let mut out = BTreeSet::new();
    let mut add = |n: &Nat| collect_atoms(n, &mut out);
    match a {
        Atom::Var(v) => {
            if let Some((l, h)) = v.range() {
                add(l);
                add(h);
            }
        }
        Atom::Div(x, y)
        | Atom::Mod(x, y)
        | Atom::Min(x, y)
        | Atom::Max(x, y)
        | Atom::Pow(x, y)
        | Atom::Xor(x, y) => {
            add(x);
            add(y);
        }
        Atom::Poly(p) => add(p),
        Atom::Cst(_) => {}
    }
    out
}

fn collect_atoms(n: &Nat, out: &mut BTreeSet<Atom>) {
    for t in n.terms() {
        for (a, _) in &t.factors {
            if out.insert(a.clone()) {
                out.extend(deps(a));
            }
        }
    }
}

fn eliminate_one(x: &Nat, dir: Dir, cx: &mut Ctx) -> Option<Nat> {
    let its = items(x);
    let all_deps: Vec<BTreeSet<Atom>> = its.iter().map(deps).collect();
    let (leaves, others): (Vec<&Atom>, Vec<&Atom>) = its
        .iter()
        .partition(|a| !all_deps.iter().any(|d| d.contains(*a)));
    for a in leaves.into_iter().chain(others) {
        if let Some(r) = eliminate(x, a, dir, cx) {
            if &r != x {
                return Some(r);
            }
        }
        if cx.fuel == 0 {
            return None;
        }
    }
    None
}

/// Is `x = Σ c_e a^e` monotone in `a`? `Some(true)`: increasing.
fn monotone(coeffs: &[(i64, Nat)], a: &Atom, cx: &mut Ctx) -> Option<bool> {
    let nonlinear = coeffs.iter().any(|(e, _)| *e != 0 && *e != 1);
    let negative = coeffs.iter().any(|(e, _)| *e < 0);
    let value = Nat::atom(a.clone());
    if nonlinear && !matches!(a, Atom::Var(_)) && !at_least(&value, 0, cx) {
        return None;
    }
    if negative && !at_least(&value, 1, cx) {
        return None;
    }
    let mut increasing: Option<bool> = None;
    for (e, c) in coeffs.iter().filter(|(e, _)| *e != 0) {
        let inc = if has_sign(c, Dir::Lo, cx) {
            *e > 0
        } else if has_sign(c, Dir::Hi, cx) {
            *e < 0
        } else {
            return None;
        };
        if increasing.is_some_and(|i| i != inc) {
            return None;
        }
        increasing = Some(inc);
    }
    increasing
}

/// Replaces item `a` in `x` by the end of its range that bounds `x` in `dir`.
fn eliminate(x: &Nat, a: &Atom, dir: Dir, cx: &mut Ctx) -> Option<Nat> {
    let mut groups: BTreeMap<i64, Vec<Term>> = BTreeMap::new();
    for t in x.terms() {
        let e = t.exp_of(a);
        groups
            .entry(e)
            .or_default()
            .push(if e == 0 { t.clone() } else { t.without(a) });
    }
    let coeffs: Vec<(i64, Nat)> = groups
        .into_iter()
        .map(|(e, ts)| (e, Nat::from_terms(ts)))
        .collect();
    if let Atom::Min(p, q) | Atom::Max(p, q) = a {
        return min_max_cases(&coeffs, a, p, q, dir, cx);
    }
    let nonlinear = coeffs.iter().any(|(e, _)| *e != 0 && *e != 1);
    let negative = coeffs.iter().any(|(e, _)| *e < 0);
    let end = if monotone(&coeffs, a, cx)? {
        dir
    } else {
        dir.flip()
    };
    let mut best: Option<Nat> = None;
    for b in item_bounds(a, end, cx) {
        // Check the end is usable for powers other than 1.
        if end == Dir::Lo && nonlinear && !at_least(&b, if negative { 1 } else { 0 }, cx) {
            if negative {
                continue;
            }
            // a >= 0 anyway: use 0 as the lower end.
            let r = substitute_item(&coeffs, &Nat::zero());
            best = pick(best, r, dir, cx);
            continue;
        }
        let r = substitute_item(&coeffs, &b);
        best = pick(best, r, dir, cx);
    }
    best
}

/// `min(p, q)` / `max(p, q)` equals `p` or `q` at every point, so `x` is
/// bounded by the worse of the two cases; when `x` is monotone in the
/// direction where either argument is a valid bound, by the better one.
fn min_max_cases(
    coeffs: &[(i64, Nat)],
    a: &Atom,
    p: &Nat,
    q: &Nat,
    dir: Dir,
    cx: &mut Ctx,
) -> Option<Nat> {
    let rp = bound(&substitute_item(coeffs, p), dir, cx);
    let rq = bound(&substitute_item(coeffs, q), dir, cx);
    if rp == rq {
        return Some(rp);
    }
    let is_min = matches!(a, Atom::Min(..));
    let favourable = monotone(coeffs, a, cx).is_some_and(|inc| (inc == (dir == Dir::Hi)) == is_min);
    if favourable {
        // `x` is monotone only where the item is (`>= 1` under a negative
        // power, `>= 0` under another power), so an argument outside that
        // domain is no bound: `y / max(1, q)` with `q <= 0` is not `<= y / q`.
        let usable = |arg: &Nat, cx: &mut Ctx| in_monotone_domain(coeffs, arg, cx);
        match (usable(p, cx), usable(q, cx)) {
            (true, true) => return pick(Some(rp), rq, dir, cx),
            (true, false) => return Some(rp),
            (false, true) => return Some(rq),
            (false, false) => {}
        }
    }
    let (x, y) = (rp.as_rat()?, rq.as_rat()?);
    let x_first = match dir {
        Dir::Lo => x.cmp_num(y).is_le(),
        Dir::Hi => x.cmp_num(y).is_ge(),
    };
    Some(if x_first { rp } else { rq })
}

/// Does `arg` lie where `x = Σ c_e a^e` is monotone in `a` (see `monotone`)?
fn in_monotone_domain(coeffs: &[(i64, Nat)], arg: &Nat, cx: &mut Ctx) -> bool {
    let nonlinear = coeffs.iter().any(|(e, _)| *e != 0 && *e != 1);
    let negative = coeffs.iter().any(|(e, _)| *e < 0);
    (!negative || at_least(arg, 1, cx)) && (!nonlinear || at_least(arg, 0, cx))
}

fn substitute_item(coeffs: &[(i64, Nat)], b: &Nat) -> Nat {
    coeffs.iter().fold(Nat::zero(), |acc, (e, c)| {
        acc.add_nat(&c.mul_nat(&b.pow_int(*e)))
    })
}

/// Keeps the better of two candidate bounds; with several candidates each is
/// bounded fully so that constants can be compared.
fn pick(best: Option<Nat>, r: Nat, dir: Dir, cx: &mut Ctx) -> Option<Nat> {
    let Some(b) = best else { return Some(r) };
    let rb = bound(&r, dir, cx);
    let bb = bound(&b, dir, cx);
    match (bb.as_rat(), rb.as_rat()) {
        (Some(x), Some(y)) => {
            let r_better = match dir {
                Dir::Lo => y.cmp_num(x).is_gt(),
                Dir::Hi => y.cmp_num(x).is_lt(),
            };
            Some(if r_better { rb } else { bb })
        }
        (None, Some(_)) => Some(rb),
        _ => Some(bb),
    }
}

/// Candidate bounds (in direction `end`) for the value of an item.
fn item_bounds(a: &Atom, end: Dir, cx: &mut Ctx) -> Vec<Nat> {
    let one = Nat::one();
    match a {
        Atom::Var(v) => match (end, v.range()) {
            (Dir::Lo, Some((l, _))) => vec![l.clone()],
            (Dir::Lo, None) => vec![Nat::zero()],
            (Dir::Hi, Some((_, h))) => vec![h.sub_nat(&one)],
            (Dir::Hi, None) => vec![],
        },
        Atom::Div(y, d) => {
            if !at_least(d, 1, cx) {
                return vec![];
            }
            let b = match end {
                Dir::Lo => y.sub_nat(d).add_nat(&one).div_exact_nat(d),
                Dir::Hi if has_sign(y, Dir::Lo, cx) => y.div_exact_nat(d),
                Dir::Hi => y.add_nat(d).sub_nat(&one).div_exact_nat(d),
            };
            // The quotient is an integer: round a constant bound inwards.
            let b = bound(&b, end, cx);
            match b.as_rat() {
                Some(r) if end == Dir::Lo => vec![Nat::from_rat(Rat::int(r.ceil()))],
                Some(r) => vec![Nat::from_rat(Rat::int(r.floor()))],
                None => vec![b],
            }
        }
        Atom::Mod(y, d) => {
            if !at_least(d, 1, cx) {
                return vec![];
            }
            let dm1 = d.sub_nat(&one);
            let neg_dm1 = one.sub_nat(d);
            match (end, has_sign(y, Dir::Lo, cx), has_sign(y, Dir::Hi, cx)) {
                (Dir::Lo, true, _) => vec![Nat::zero()],
                (Dir::Hi, true, _) => vec![dm1, y.clone()],
                (Dir::Lo, false, true) => vec![neg_dm1, y.clone()],
                (Dir::Hi, false, true) => vec![Nat::zero()],
                (Dir::Lo, false, false) => vec![neg_dm1],
                (Dir::Hi, false, false) => vec![dm1],
            }
        }
        Atom::Min(..) | Atom::Max(..) => vec![],
        // of non-negative arguments: at least 0, and below the power of two above both
        Atom::Xor(x, y) => {
            if !has_sign(x, Dir::Lo, cx) || !has_sign(y, Dir::Lo, cx) {
                return vec![];
            }
            match end {
                Dir::Lo => vec![Nat::zero()],
                Dir::Hi => {
                    let hi = |n: &Nat, cx: &mut Ctx| {
                        const_bound(n, Dir::Hi, cx)
                            .filter(|r| r.is_int())
                            .map(|r| r.floor())
                    };
                    match (hi(x, cx), hi(y, cx)) {
                        (Some(a), Some(b)) => {
                            let top = a.max(b).max(0) as u128;
                            let bits = 128 - top.leading_zeros();
                            match i64::try_from((1u128 << bits) - 1) {
                                Ok(m) => vec![Nat::cst(m)],
                                Err(_) => vec![],
                            }
                        }
                        _ => vec![],
                    }
                }
            }
        }
        Atom::Pow(b, e) => {
            if !has_sign(e, Dir::Lo, cx) {
                return vec![];
            }
            match end {
                Dir::Lo if at_least(b, 1, cx) => vec![one],
                Dir::Lo if has_sign(b, Dir::Lo, cx) => vec![Nat::zero()],
                Dir::Lo => vec![],
                Dir::Hi => {
                    let ub = const_bound(b, Dir::Hi, cx).filter(|r| r.is_int());
                    let ue = const_bound(e, Dir::Hi, cx).filter(|r| r.is_int());
                    match (ub, ue, at_least(b, 1, cx)) {
                        (Some(ub), Some(ue), true) => i64::try_from(ue.num)
                            .ok()
                            .and_then(|k| ub.powi(k))
                            .map(|r| vec![Nat::from_rat(r)])
                            .unwrap_or_default(),
                        _ => vec![],
                    }
                }
            }
        }
        Atom::Poly(p) => {
            let b = bound(p, end, cx);
            if b.as_rat().is_some() {
                vec![b]
            } else {
                vec![]
            }
        }
        Atom::Cst(_) => vec![],
    }
}

/// A proven integer lower (`Lo`) or upper (`Hi`) bound of an integer-valued
/// expression.
pub(crate) fn int_bound(x: &Nat, dir: Dir) -> Option<i64> {
    let r = const_bound(x, dir, &mut Ctx::new())?;
    let v = match dir {
        Dir::Lo => r.ceil(),
        Dir::Hi => r.floor(),
    };
    i64::try_from(v).ok()
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use crate::Nat;

    #[test]
    fn constant_ranges() {
        let x = ranged("x", Nat::cst(2), Nat::cst(10));
        assert_eq!(x.lower_bound(), Some(2));
        assert_eq!(x.upper_bound(), Some(9));
        assert_eq!((&x * 3 - 1).upper_bound(), Some(26));
        assert_eq!((Nat::cst(5) - &x).lower_bound(), Some(-4));
        assert_eq!((&x * &x).upper_bound(), Some(81));
        assert_eq!(v("n").lower_bound(), Some(0));
        assert_eq!(v("n").upper_bound(), None);
    }

    #[test]
    fn flattened_index_is_in_bounds() {
        let (n, k) = (v("n"), v("k"));
        let i = ranged("i", Nat::cst(0), n.clone());
        let j = ranged("j", Nat::cst(0), k.clone());
        let idx = &i * &k + &j;
        assert!(idx.prove_nonneg());
        assert!(idx.prove_lt(&(&n * &k)));
        assert!(!idx.prove_lt(&(&n * &k - 1)));
        assert!(idx.prove_le(&(&n * &k - 1)));
        assert!(j.prove_lt(&k));
        assert!(!k.prove_lt(&j));
    }

    #[test]
    fn nested_ranges() {
        let n = v("n");
        let i = ranged("i", Nat::cst(0), n.clone());
        let j = ranged("j", Nat::cst(0), i.clone());
        assert!(j.prove_lt(&n));
        assert!((&j + 1).prove_lt(&n));
        assert!(!(&j + 2).prove_lt(&n));
    }

    #[test]
    fn div_mod_bounds() {
        let x = ranged("x", Nat::cst(0), Nat::cst(100));
        let d = ranged("d", Nat::cst(1), Nat::cst(9));
        assert_eq!(x.floor_div(&Nat::cst(8)).upper_bound(), Some(12));
        assert_eq!(x.floor_div(&Nat::cst(8)).lower_bound(), Some(0));
        let y = v("y");
        assert!(y.modulo(&d).prove_lt(&d));
        assert_eq!(y.modulo(&d).upper_bound(), Some(7));
        assert_eq!(y.modulo(&d).lower_bound(), Some(0));
        // Remainders of possibly negative values.
        assert_eq!(
            (Nat::cst(0) - &y).modulo(&Nat::cst(8)).lower_bound(),
            Some(-7)
        );
    }

    #[test]
    fn min_max_bounds() {
        let x = ranged("x", Nat::cst(0), Nat::cst(10));
        let n = v("n");
        assert_eq!(Nat::min(&n, &x).upper_bound(), Some(9));
        assert_eq!(Nat::max(&(&x - 5), &Nat::cst(-2)).lower_bound(), Some(-2));
        assert_eq!(Nat::max(&n, &x).lower_bound(), Some(0));
    }

    #[test]
    fn min_max_under_a_negative_power_uses_only_arguments_in_its_domain() {
        // 2^k / max(1, (-1) /^ n) with k in [1, 9): the second argument is
        // never >= 1, so it bounds nothing (found by the property test).
        let k = ranged("k", Nat::cst(1), Nat::cst(9));
        let n = v("n");
        let d = Nat::max(&Nat::cst(1), &Nat::cst(-1).div_exact(&n));
        let x = Nat::cst(2).pow(&k).floor_div(&d);
        assert!(
            x.upper_bound().is_none_or(|u| u >= 256),
            "{:?}",
            x.upper_bound()
        );
        let y = ranged("y", Nat::cst(0), Nat::cst(10));
        assert_eq!(
            y.floor_div(&Nat::max(&Nat::cst(1), &Nat::cst(-3)))
                .upper_bound(),
            Some(9)
        );
    }

    #[test]
    fn symbolic_tile_bounds() {
        // i in [0, n /^ 32), ii in [0, 32): i*32 + ii < n.
        let n = v("n");
        let i = ranged("i", Nat::cst(0), n.div_exact(&Nat::cst(32)));
        let ii = ranged("ii", Nat::cst(0), Nat::cst(32));
        assert!((&i * 32 + &ii).prove_lt(&n));
    }

    #[test]
    fn unprovable_claims_are_refused() {
        let (n, m) = (v("n"), v("m"));
        assert!(!n.prove_lt(&m));
        assert!(!(&n - &m).prove_nonneg());
        assert!(!(&n * &m - 1).prove_nonneg());
        assert!((&n * &m).prove_nonneg());
    }
}
