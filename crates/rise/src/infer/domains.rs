//! The domains of the math functions ([`crate::primitives::MathFn`]): their schemes
//! say `{t: data} -> t -> t`, and which scalar types `t` may be (`sqrt` takes
//! floats, `min` integers too) is checked here, after inference, on every
//! application whose operand type is known. A definition that leaves it open
//! (`def f = fun x => sqrt x`) is checked where it is instantiated with concrete
//! types ([`super::instantiate_def`]), before anything is evaluated or compiled.
//!
//! `cast` (`{s t: data} -> s -> t`) is checked in the same pass: its result may not be an
//! index type `idx[n]` (`natAsIndex n x` makes an index of a `natType` value, checking it
//! is below `n`; a cast would not).

use crate::expr::{Expr, ExprKind};
use crate::primitives::{MathFn, Prim};
use crate::span::Diagnostic;
use crate::types::{DataType, ScalarType, Type};

/// Checks every math function in `e` whose operand type is known: a scalar of its
/// domain, or a vector of such scalars. Type variables pass. And every `cast` whose
/// result type is known: not an index.
pub(super) fn check_math_domains(e: &Expr) -> Result<(), Diagnostic> {
    if let (ExprKind::Prim(p), Some(Type::Fun(operand, result))) = (e.kind(), e.ty()) {
        if let Some(f) = p.math() {
            check_operand(f, e, operand)?;
        }
        if p.integer_only() {
            check_integer_operand(*p, e, operand)?;
        }
        if *p == Prim::Cast {
            check_cast_result(e, result)?;
        }
        if matches!(p, Prim::MmaSync | Prim::Wgmma) {
            check_tensor_operand(*p, e, operand)?;
        }
    }
    match e.kind() {
        ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Prim(_) | ExprKind::Foreign(_) => Ok(()),
        ExprKind::Lambda(_, _, b)
        | ExprKind::DepLambda(_, b)
        | ExprKind::DepApp(b, _)
        | ExprKind::Annot(b, _) => check_math_domains(b),
        ExprKind::App(f, a) => {
            check_math_domains(f)?;
            check_math_domains(a)
        }
    }
}

/// A cast to `idx[n]` (or to vectors of it) is refused.
fn check_cast_result(e: &Expr, result: &Type) -> Result<(), Diagnostic> {
    let elem = match result {
        Type::Data(DataType::Vector(_, t)) => &**t,
        Type::Data(t) => t,
        _ => return Ok(()),
    };
    if !matches!(elem, DataType::Index(_)) {
        return Ok(());
    }
    Err(Diagnostic::new(
        e.span(),
        format!("`cast` cannot make an index: the result type is {result}"),
    )
    .with_note(
        "`natAsIndex n x` makes the index `x` of type `idx[n]` from a natType value, and \
         checks that it is below `n` (`natAsIndex n (cast i)` for an integer `i`)",
    ))
}

fn check_operand(f: MathFn, e: &Expr, operand: &Type) -> Result<(), Diagnostic> {
    let Type::Data(d) = operand else {
        return Err(refused(f, e, &operand.to_string()));
    };
    let elem = match d {
        DataType::Vector(_, t) => &**t,
        t => t,
    };
    match elem {
        DataType::Var(_) => Ok(()),
        DataType::Scalar(s) if f.domain().admits(*s) => Ok(()),
        _ => Err(refused(f, e, &d.to_string())),
    }
}

fn refused(f: MathFn, e: &Expr, found: &str) -> Diagnostic {
    Diagnostic::new(
        e.span(),
        format!(
            "`{}` takes {}, found {found}",
            f.name(),
            f.domain().describe()
        ),
    )
    .with_note(
        "math functions apply to scalars of their domain and, elementwise, to vectors of them",
    )
}

/// The bitwise operations and shifts take integer scalars (`bool`, floats, vectors and
/// `natType` are refused).
/// `mmaSync`'s tiles are `f16` or `bf16` (`32.8.t` with `t` one of them).
fn check_tensor_operand(p: Prim, e: &Expr, operand: &Type) -> Result<(), Diagnostic> {
    let elem = match operand {
        Type::Data(DataType::Array(_, row)) => match &**row {
            DataType::Array(_, t) => &**t,
            t => t,
        },
        _ => return Ok(()),
    };
    match elem {
        DataType::Var(_) | DataType::Scalar(ScalarType::F16 | ScalarType::Bf16) => Ok(()),
        other => Err(Diagnostic::new(
            e.span(),
            format!("`{}` multiplies f16 or bf16 tiles, found elements of type {other}", p.name()),
        )
        .with_note(
            "the tensor cores' shapes (m16n8k16, m64nNk16) take 16-bit floats with an f32 accumulator: \
             `cast` the tiles to f16 or bf16 first",
        )),
    }
}

fn check_integer_operand(p: Prim, e: &Expr, operand: &Type) -> Result<(), Diagnostic> {
    match operand {
        Type::Data(DataType::Var(_)) => Ok(()),
        Type::Data(DataType::Scalar(s)) if !s.is_float() && *s != ScalarType::Bool => Ok(()),
        other => Err(Diagnostic::new(
            e.span(),
            format!("`{}` takes an integer value, found {other}", p.name()),
        )
        .with_note(
            "`& | ^ ~ << >>` apply to the integer types i8..i64, u8..u64 and int \
             (`cast` a value to one first)",
        )),
    }
}
