//! A sound bound for float results that are sums of products (docs/semantics.md, `--verify`).
//!
//! Where a program computes its floats only by `+`, `-`, `*` and negation, every float result
//! `y_j` is a sum of products of inputs and constants, however a schedule regroups it. Any
//! evaluation order rounds each term at most `m_j − 1` times (`m_j`: the leaves of `y_j`'s
//! expression, inputs and constants as often as they occur), so both the interpreter's value
//! and the generated code's differ from the exact one by at most `γ_m·M_j` (Higham, *Accuracy
//! and Stability of Numerical Algorithms*, §3.1 and §4.2), with `γ_m = m·u/(1 − m·u)`, `u` the
//! unit roundoff of the result's type and `M_j = Σ |terms|`; they differ from each other by at
//! most `2·γ_m·M_j`. Two more interpreter runs give the bound's parts:
//!
//! - `M_j`: the program on `|x|`, subtraction as addition, negation as the identity and every
//!   float constant as its magnitude (rounded too: divided by `1 − γ_m`);
//! - `m_j`: the program on ones, every `+ - *` as addition, every float constant as one.
//!
//! Underflow adds at most the smallest normal number per operation (`2·m_j` of them), even
//! flushed to zero. Where `m_j·u` reaches 1/2 or `M_j` is not finite, the element is compared
//! with the default tolerance, and so is every element of a program with any other float
//! operation (a division, a comparison, a conversion, a math or foreign function).

use crate::boundary::{Array, Output};
use crate::verify::interpret;
use crate::{Error, SourceFile};
use rise::expr::{Expr, ExprKind, Literal};
use rise::infer::Instance;
use rise::interp::Scalar;
use rise::types::{DataType, Type};
use rise::{Prim, ScalarType};

/// The parts of the bound of every float result of a program of sums of products: `M_j`
/// and `m_j`, each as the interpreter's result on the abstracted program.
pub(crate) struct SumBounds {
    magnitudes: Output,
    terms: Output,
}

/// The two abstractions of a program of sums of products.
#[derive(Clone, Copy, PartialEq)]
enum Abstraction {
    /// `|x|`: subtraction as addition, negation as the identity, constants' magnitudes.
    Magnitude,
    /// The leaves: every `+ - *` as addition, inputs and constants as one.
    Terms,
}

/// The bounds of `instance` on `inputs`, or `None` where its result has no float or it
/// computes a float by anything but `+`, `-`, `*` and negation.
pub(crate) fn sum_bounds(
    program: &SourceFile,
    instance: &Instance,
    inputs: &[Array],
    cc: &str,
) -> Result<Option<SumBounds>, Error> {
    if !mentions_float(&instance.result) || !sums_of_products(&instance.expr) {
        return Ok(None);
    }
    let run = |a: Abstraction| {
        let abstracted = Instance {
            expr: abstracted(&instance.expr, a),
            ..instance.clone()
        };
        let inputs: Vec<Array> = inputs.iter().map(|x| abstracted_input(x, a)).collect();
        interpret(program, &abstracted, &inputs, cc)
    };
    Ok(Some(SumBounds {
        magnitudes: run(Abstraction::Magnitude)?,
        terms: run(Abstraction::Terms)?,
    }))
}

impl SumBounds {
    /// The bound of every element of component `j` (of `n`) of part `k`, in order.
    pub(crate) fn column(&self, k: usize, j: usize, n: usize) -> Vec<Option<f64>> {
        let (Some(m), Some(t)) = (self.magnitudes.parts.get(k), self.terms.parts.get(k)) else {
            return Vec::new();
        };
        let leaves = |a: &Array| {
            a.data
                .iter()
                .skip(j)
                .step_by(n)
                .copied()
                .collect::<Vec<_>>()
        };
        leaves(m)
            .into_iter()
            .zip(leaves(t))
            .map(|(m, t)| bound(m.ty(), m.as_f64(), t.as_f64()))
            .collect()
    }
}

/// `2·γ_m·M/(1 − γ_m) + 2·m·η` (η the smallest normal number of `ty`), a little more for the
/// rounding of this formula itself; `None` where `ty` is no float, `m·u ≥ 1/2` or `M` is not
/// finite.
fn bound(ty: ScalarType, magnitude: f64, terms: f64) -> Option<f64> {
    let (u, eta) = precision(ty)?;
    let mu = terms * u;
    if !(magnitude.is_finite() && terms.is_finite()) || mu >= 0.5 {
        return None;
    }
    let gamma = mu / (1.0 - mu);
    let b = 2.0 * gamma * magnitude / (1.0 - gamma) + 2.0 * terms * eta;
    Some(b * (1.0 + 8.0 * f64::EPSILON))
}

/// The unit roundoff and the smallest normal number of a float type.
fn precision(ty: ScalarType) -> Option<(f64, f64)> {
    let (digits, min_exp) = match ty {
        ScalarType::F64 => (53, -1022),
        ScalarType::F32 => (24, -126),
        ScalarType::F16 => (11, -14),
        ScalarType::Bf16 => (8, -126),
        _ => return None,
    };
    Some((2f64.powi(-digits), 2f64.powi(min_exp)))
}

/// Whether `e` computes floats only by `+`, `-`, `*` and negation: no other scalar operation
/// (a primitive on scalars and vectors: division, comparison, selection, conversion, math
/// function) and no foreign function mentions a float type; a node without a type counts
/// as one that does.
fn sums_of_products(e: &Expr) -> bool {
    let allowed = |p: Prim| matches!(p, Prim::Add | Prim::Sub | Prim::Mul | Prim::Neg | Prim::Id);
    let this = match e.kind() {
        ExprKind::Prim(p) => allowed(*p) || !e.ty().is_none_or(float_scalar_op),
        ExprKind::Foreign(_) => !e.ty().is_none_or(mentions_float),
        _ => true,
    };
    this && e.children().into_iter().all(sums_of_products)
}

/// Whether `t` is the type of an operation on scalars (and vectors) that mentions a float:
/// `a -> ... -> r` with every operand and the result a scalar, a vector or a function of
/// those, after any dependent binders.
fn float_scalar_op(t: &Type) -> bool {
    fn scalar(t: &Type) -> bool {
        matches!(t, Type::Data(DataType::Scalar(_) | DataType::Vector(..)))
    }
    fn operation(t: &Type) -> bool {
        match t {
            Type::Fun(a, r) => scalar(a) && (scalar(r) || operation(r)),
            Type::DepFun { body, .. } => operation(body),
            _ => false,
        }
    }
    operation(t) && mentions_float(t)
}

/// Whether a float scalar type occurs in `t`.
fn mentions_float(t: &Type) -> bool {
    fn data(d: &DataType) -> bool {
        match d {
            DataType::Scalar(s) => s.is_float(),
            DataType::Array(_, e) | DataType::Vector(_, e) => data(e),
            DataType::Pair(a, b) => data(a) || data(b),
            _ => false,
        }
    }
    match t {
        Type::Data(d) => data(d),
        Type::Fun(a, r) => mentions_float(a) || mentions_float(r),
        Type::DepFun { body, .. } => mentions_float(body),
        Type::Var(_) => true,
    }
}

/// `e` under the abstraction `a` (module docs): float `-` (and, for the terms, `*`) as `+`,
/// float negation as the identity, float constants as their magnitudes (or one).
fn abstracted(e: &Expr, a: Abstraction) -> Expr {
    let float = || e.ty().is_some_and(mentions_float);
    let kind = match e.kind() {
        ExprKind::Prim(Prim::Sub) if float() => ExprKind::Prim(Prim::Add),
        ExprKind::Prim(Prim::Mul) if float() && a == Abstraction::Terms => {
            ExprKind::Prim(Prim::Add)
        }
        ExprKind::Prim(Prim::Neg) if float() => ExprKind::Prim(Prim::Id),
        ExprKind::Lit(Literal::Float(v, s)) => ExprKind::Lit(Literal::Float(
            match a {
                Abstraction::Magnitude => v.abs(),
                Abstraction::Terms => 1.0,
            },
            *s,
        )),
        ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Prim(_) | ExprKind::Foreign(_) => {
            return e.clone()
        }
        ExprKind::Lambda(x, t, b) => ExprKind::Lambda(x.clone(), t.clone(), abstracted(b, a)),
        ExprKind::DepLambda(x, b) => ExprKind::DepLambda(x.clone(), abstracted(b, a)),
        ExprKind::DepApp(b, t) => ExprKind::DepApp(abstracted(b, a), t.clone()),
        ExprKind::Annot(b, t) => ExprKind::Annot(abstracted(b, a), t.clone()),
        ExprKind::App(f, x) => ExprKind::App(abstracted(f, a), abstracted(x, a)),
    };
    e.rebuild(kind)
}

/// An input under the abstraction `a`: its floats' magnitudes (or ones).
fn abstracted_input(x: &Array, a: Abstraction) -> Array {
    let leaf = |s: Scalar| {
        let v = match a {
            Abstraction::Magnitude => s.as_f64().abs(),
            Abstraction::Terms => 1.0,
        };
        match s.ty() {
            t if t.is_float() => Scalar::from_float(t, v).unwrap_or(s),
            _ => s,
        }
    };
    Array {
        data: x.data.iter().map(|&s| leaf(s)).collect(),
        ..x.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_grows_with_the_terms_and_stops_where_gamma_does() {
        let b = bound(ScalarType::F32, 100.0, 1000.0).expect("a bound");
        let gamma = 1000.0 * 2f64.powi(-24);
        assert!(b > 2.0 * gamma * 100.0 && b < 2.1 * gamma * 100.0, "{b}");
        assert_eq!(bound(ScalarType::F32, 1.0, 1e7), None, "m·u ≥ 1/2");
        assert_eq!(bound(ScalarType::F32, f64::INFINITY, 3.0), None);
        assert_eq!(bound(ScalarType::I32, 1.0, 3.0), None);
    }

    #[test]
    fn only_add_sub_mul_and_neg_on_floats_make_sums_of_products() {
        let check = |src: &str| {
            let checked = rise::infer::check_source(src).expect("the program checks");
            let instance = rise::infer::instantiate_def(
                &checked,
                "f",
                &[DataType::array(8, DataType::Scalar(ScalarType::F32))],
                &[],
            )
            .expect("f instantiates");
            sums_of_products(&instance.expr)
        };
        let def = |body: &str| format!("def f : 8.f32 -> 8.f32 = fun xs => {body}");
        assert!(check(&def("scanSeq (fun x a => a - x * 2.0f) 0.0f xs")));
        assert!(check(&def("map (fun x => -x) xs")));
        assert!(!check(&def("map (fun x => x / 2.0f) xs")));
        assert!(!check(&def("map (fun x => max x 0.0f) xs")));
        assert!(!check(&def("map (fun x => exp x) xs")));
        assert!(!check(&def(
            "map (fun x => (cast (cast x : i32) : f32)) xs"
        )));
    }
}
