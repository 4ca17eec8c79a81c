//! Parallel scans (issue 27): a `scanSeq` over `n` elements split into `p` chunks of
//! consecutive elements that are scanned in parallel, the reduce-then-scan form of a
//! GPU prefix sum (Merrill and Garland, "Single-pass parallel prefix scan with
//! decoupled look-back", §3: *reduce-then-scan*). Its equation is its row in
//! [`super::RULES`]:
//!
//! 1. every chunk is reduced (in parallel: the chunks' sums),
//! 2. the `p` sums are scanned from the initial value, one behind (the exclusive
//!    scan: chunk `j`'s offset is the fold of the initial value and the sums of the
//!    chunks before it),
//! 3. every chunk is scanned from its offset (in parallel).
//!
//! `scanSeq f init xs` folds `acc_i = f x_i acc_(i-1)` from the left; the rule
//! regroups that fold at the chunk boundaries, so it holds only for an operator known
//! to be associative and commutative (the reductions' operators: `add`, `mul`, `min`,
//! `max`, `fmin`, `fmax`, or a lambda that is exactly one of them) whose neutral element
//! the rule knows for the element type (it pads the last chunk and starts every
//! chunk's sum). The initial value may be any value: it only starts the sums' scan.
//! Integers are exact (wrapping addition and multiplication are associative); a float
//! sum or product is regrouped, so it agrees with the interpreter within the
//! verification tolerance, as every parallel reduction does; a minimum or maximum is
//! exact. Any other operator is refused with the reason.

use super::reduction::associative_commutative;
use crate::term::{applied, array, finish};
use crate::S;
use arith::Nat;
use elevate::{rule, Failure};
use rise::builder::*;
use rise::{DataType, Expr, Literal, Prim};

/// `partialScan(p)`: the scan of `p` chunks of consecutive elements, each reduced, the
/// sums scanned, and each chunk scanned from its offset (module docs).
pub(super) fn partial_scan(name: String, p: i64) -> S {
    rule(name.clone(), move |e: &Expr, ctx| {
        let Some((_, args)) = applied(e, |q| q == Prim::ScanSeq, 3) else {
            return Err(Failure::not_applicable());
        };
        let (f, init, xs) = (args[0], args[1], args[2]);
        let (n, elem) = xs
            .ty()
            .and_then(array)
            .ok_or_else(Failure::not_applicable)?;
        let op = associative_commutative(f).ok_or_else(|| {
            refusal(
                &name,
                format!(
                    "the operator `{f}` is not known to be associative and commutative (add, mul, \
                 min, max, fmin, fmax, or a lambda that is exactly one of them), so its scan \
                 cannot be regrouped in chunks"
                ),
            )
        })?;
        let neutral = neutral_element(op, elem).ok_or_else(|| {
            refusal(
                &name,
                format!(
                    "no neutral element of `{}` on `{elem}` is known (the last chunk is padded \
                 with it and every chunk's sum starts from it)",
                    op.name()
                ),
            )
        })?;
        let chunk_len = (n.clone() + Nat::cst(p - 1))
            .floor_div(&Nat::cst(p))
            .simplify();
        let pad = (chunk_len.clone() * Nat::cst(p) - n.clone()).simplify();
        let padded = if pad.as_cst() == Some(0) {
            xs.clone()
        } else {
            app(pad_cst(0, pad.clone(), neutral.clone()), xs.clone())
        };
        let chunks = app(split(chunk_len), padded);
        let (c, q) = (ctx.env.fresh("chunk"), ctx.env.fresh("q"));
        let sums = app2(
            prim(Prim::Map),
            lambda(
                &c,
                apps(prim(Prim::Reduce), [prim(op), neutral.clone(), var(&c)]),
            ),
            chunks.clone(),
        );
        let offsets = app(
            take(p),
            apps(
                prim(Prim::ScanSeq),
                [f.clone(), init.clone(), app(pad_cst(1, 0, neutral), sums)],
            ),
        );
        let scanned = app2(
            prim(Prim::Map),
            lambda(
                &q,
                apps(prim(Prim::ScanSeq), [f.clone(), fst(var(&q)), snd(var(&q))]),
            ),
            zip(offsets, chunks),
        );
        let joined = app(join(), scanned);
        let rhs = if pad.as_cst() == Some(0) {
            joined
        } else {
            app(take(n.clone()), joined)
        };
        finish(rhs, e)
    })
}

fn refusal(rule: &str, why: String) -> Failure<Expr> {
    Failure::not_applicable_because(format!("{rule}: {why}"))
}

/// The neutral element of the operator `op` on scalars of type `t`: `0` for `add`, `1`
/// for `mul`, `+inf`/`-inf` or the type's largest/smallest value for `min`/`max`, and
/// `+inf`/`-inf` for `fmin`/`fmax` (`None` for other types, or a bound `i64` cannot hold).
fn neutral_element(op: Prim, t: &DataType) -> Option<Expr> {
    let DataType::Scalar(s) = t else {
        return None;
    };
    let s = *s;
    if s.is_float() {
        let v = match op {
            Prim::Add => 0.0,
            Prim::Mul => 1.0,
            Prim::Min | Prim::Fmin => f64::INFINITY,
            Prim::Max | Prim::Fmax => f64::NEG_INFINITY,
            _ => return None,
        };
        return Some(lit(Literal::Float(v, s)));
    }
    let (lo, hi) = s.int_range()?;
    let v: i128 = match op {
        Prim::Add => 0,
        Prim::Mul => 1,
        Prim::Min => hi,
        Prim::Max => lo,
        _ => return None,
    };
    Some(lit(Literal::Int(i64::try_from(v).ok()?, s)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rise::ScalarType;

    #[test]
    fn neutral_elements_are_the_identities_of_their_operators() {
        let f32 = DataType::Scalar(ScalarType::F32);
        let i32 = DataType::Scalar(ScalarType::I32);
        let u64 = DataType::Scalar(ScalarType::U64);
        let shown = |op, t| neutral_element(op, t).map(|e| e.to_string());
        assert_eq!(shown(Prim::Add, &f32).as_deref(), Some("0.0f"));
        assert_eq!(shown(Prim::Max, &i32).as_deref(), Some("-2147483648i32"));
        assert_eq!(shown(Prim::Min, &i32).as_deref(), Some("2147483647i32"));
        assert_eq!(shown(Prim::Max, &u64).as_deref(), Some("0u64"));
        assert_eq!(
            shown(Prim::Min, &u64),
            None,
            "u64's largest value is no i64"
        );
        assert_eq!(shown(Prim::Fmax, &i32), None);
    }
}
