//! A dot product padded with zeros (issue 28): `padDotZeros(n)` pads both operands of a
//! reduction over a zip to a multiple of `n` with zeros, so that `blockReduceZip(n)` (the
//! steps of a tiled matrix product) applies at any length. Its equation is its row in
//! [`super::RULES`].
//!
//! Padding the operands of a reduction by repeating an element (as `padMap` pads a map)
//! would add products that are not there; padding them with zeros adds the products
//! `0 * 0`, which leave a sum unchanged only where the reduction is a sum of products:
//! the operator `add` (or `fun acc y => acc + P`), every step adding a product `X * Y` of
//! the pair's two elements (`fst y`, `snd y`, or a `cast` of one: `0` casts to `0`), and
//! the initial value the literal `+0` (or the integer `0`). Then every padding step adds
//! `+0` to an accumulator that is never `-0` (a sum that starts at `+0` stays off `-0` in
//! round-to-nearest), which is exactly the identity, also for infinities and NaN: the
//! padded reduction is bitwise the left fold over the original elements. Any other
//! reduction (a `max`-plus product, a dot with an `exp` inside, a sum from `1.0f`) is
//! refused with the reason, unless the length is already a known multiple of `n` (then
//! nothing is padded and the rule leaves the reduction as it is).

use crate::term::{
    accumulated_term, any_reduce, applied, array, as_lambda, finish, is_var, occurs,
};
use crate::S;
use elevate::{rule, Failure};
use rise::builder::*;
use rise::{DataType, Expr, ExprKind, Literal, Prim, ScalarType};

/// `padDotZeros(n)`: the operands of the dot product `e` padded with zeros to a multiple
/// of `n` (see the module docs for which reductions it accepts).
pub(super) fn pad_dot_zeros(name: String, n: i64) -> S {
    rule(name.clone(), move |e: &Expr, _| {
        let dot = Dot::of(e).ok_or_else(Failure::not_applicable)?;
        let (k, _) = dot
            .a
            .ty()
            .and_then(array)
            .ok_or_else(Failure::not_applicable)?;
        let pad = super::algorithmic::padding_to_multiple(k, n);
        if pad.as_cst() == Some(0) {
            return Ok(e.clone());
        }
        dot.zeros_are_neutral()
            .map_err(|why| Failure::not_applicable_because(format!("{name}: {why}")))?;
        let padded = |xs: &Expr| -> Option<Expr> {
            let zero = zero_of(xs)?;
            Some(app(pad_cst(0, pad.clone(), zero), xs.clone()))
        };
        let (a, b) = match (padded(dot.a), padded(dot.b)) {
            (Some(a), Some(b)) => (a, b),
            _ => {
                return Err(Failure::not_applicable_because(format!(
                    "{name}: the zipped arrays' elements are not numbers (no zero to pad with)"
                )))
            }
        };
        finish(dot.rebuild(zip(a, b)), e)
    })
}

/// A reduction over the pairs of two arrays: `reduceX op init (map f (zip a b))` or
/// `reduceX op init (zip a b)`.
struct Dot<'a> {
    reduce: Prim,
    op: &'a Expr,
    init: &'a Expr,
    /// The function mapped over the pairs, if any.
    f: Option<&'a Expr>,
    a: &'a Expr,
    b: &'a Expr,
}

impl<'a> Dot<'a> {
    fn of(e: &'a Expr) -> Option<Dot<'a>> {
        let (reduce, args) = applied(e, any_reduce, 3)?;
        let (f, pairs) = match applied(args[2], |p| p == Prim::Map, 2) {
            Some((_, m)) => (Some(m[0]), m[1]),
            None => (None, args[2]),
        };
        let (_, ab) = applied(pairs, |p| p == Prim::Zip, 2)?;
        Some(Dot {
            reduce,
            op: args[0],
            init: args[1],
            f,
            a: ab[0],
            b: ab[1],
        })
    }

    /// The same reduction over `pairs` instead of `zip a b`.
    fn rebuild(&self, pairs: Expr) -> Expr {
        let xs = match self.f {
            Some(f) => app(map(f.clone()), pairs),
            None => pairs,
        };
        apps(prim(self.reduce), [self.op.clone(), self.init.clone(), xs])
    }

    /// Whether a step over the pair `(0, 0)` leaves every accumulator the sum can hold as it
    /// is; the reason when it is not known to.
    fn zeros_are_neutral(&self) -> Result<(), String> {
        let product = match self.f {
            Some(f) => mapped_product(self.op, f),
            None => fused_product(self.op),
        };
        if product.is_none() {
            return Err(format!(
                "the reduction is not a sum of products of the pair's elements (operator \
                 `{}`{}): the products of zero padding are not known to leave it unchanged",
                self.op,
                self.f.map(|f| format!(", over `{f}`")).unwrap_or_default()
            ));
        }
        if !is_positive_zero(self.init) {
            return Err(format!(
                "the initial value `{}` is not the literal zero `+0` (a sum that starts \
                 elsewhere may reach `-0`, which adding `0 * 0` turns into `+0`), so padding \
                 the operands with zeros could change the result",
                self.init
            ));
        }
        Ok(())
    }
}

/// `reduce add z (map (fun p => X * Y) pairs)`: the product, when `op` is `add`.
fn mapped_product<'a>(op: &Expr, f: &'a Expr) -> Option<&'a Expr> {
    if super::reduction::associative_commutative(op) != Some(Prim::Add) {
        return None;
    }
    let (p, body) = as_lambda(f)?;
    is_product_of(body, p).then_some(body)
}

/// `reduceX (fun acc y => acc + X * Y) z pairs` (or `X * Y + acc`): the product.
fn fused_product(op: &Expr) -> Option<&Expr> {
    let (acc, y, product) = accumulated_term(op)?;
    (!occurs(acc, product) && is_product_of(product, y)).then_some(product)
}

/// `X * Y` with each factor an element of the pair `p` (`fst p`, `snd p`) or a `cast` of
/// one: zero when both elements are.
fn is_product_of(e: &Expr, p: &str) -> bool {
    applied(unannotated(e), |q| q == Prim::Mul, 2)
        .is_some_and(|(_, xy)| xy.iter().all(|x| is_element_of(x, p)))
}

fn is_element_of(e: &Expr, p: &str) -> bool {
    let e = unannotated(e);
    if let Some((_, x)) = applied(e, |q| q == Prim::Cast, 1) {
        return is_element_of(x[0], p);
    }
    applied(e, |q| matches!(q, Prim::Fst | Prim::Snd), 1).is_some_and(|(_, x)| is_var(x[0], p))
}

/// `e` without the type annotations around it (`(cast x : f32)`).
fn unannotated(e: &Expr) -> &Expr {
    match e.kind() {
        ExprKind::Annot(inner, _) => unannotated(inner),
        _ => e,
    }
}

/// The literal `+0.0` of a float type, or `0` of an integer type.
fn is_positive_zero(e: &Expr) -> bool {
    match unannotated(e).kind() {
        ExprKind::Lit(Literal::Float(v, _)) => *v == 0.0 && v.is_sign_positive(),
        ExprKind::Lit(Literal::Int(v, _)) => *v == 0,
        _ => false,
    }
}

/// The zero of the elements of the array `xs`, if they are numbers.
fn zero_of(xs: &Expr) -> Option<Expr> {
    let (_, elem) = array(xs.ty()?)?;
    let DataType::Scalar(s) = elem else {
        return None;
    };
    match *s {
        ScalarType::Bool => None,
        s if s.is_float() => Some(lit(Literal::Float(0.0, s))),
        s => Some(lit(Literal::Int(0, s))),
    }
}
