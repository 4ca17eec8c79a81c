//! The semantics of the scalar operations: arithmetic, comparisons, casts, indices.

use super::{PrimCall, R};
use crate::interp::machine::Machine;
use crate::interp::scalar::{BinOp, BitOp, Scalar};
use crate::interp::value::Value;
use crate::primitives::MathFn;
use crate::types::{DataType, ScalarType};
use std::cmp::Ordering;

/// `id x = x`.
pub fn id(_: &mut Machine, c: &PrimCall) -> R<Value> {
    c.arg(0).cloned()
}

/// `neg x`, lane-wise on vectors.
pub fn neg(_: &mut Machine, c: &PrimCall) -> R<Value> {
    fn go(c: &PrimCall, v: &Value) -> R<Value> {
        match v {
            Value::Scalar(s) => s.negate().map(Value::Scalar).map_err(|m| c.error(m)),
            Value::Failed(_) => Ok(v.clone()),
            Value::Vector(xs) => Ok(Value::Vector(
                xs.iter().map(|x| go(c, x)).collect::<R<Vec<_>>>()?.into(),
            )),
            other => Err(c.error(format!("not defined on {}", other.describe()))),
        }
    }
    go(c, c.arg(0)?)
}

/// `a op b`: a failed operand fails the result; dividing an integer by zero and natural
/// numbers leaving their range are data-dependent errors (failed values).
fn arith(c: &PrimCall, op: BinOp, a: &Value, b: &Value) -> R<Value> {
    match (a, b) {
        (Value::Failed(_), _) => Ok(a.clone()),
        (_, Value::Failed(_)) => Ok(b.clone()),
        (Value::Scalar(x), Value::Scalar(y)) => match x.binary(op, *y) {
            Ok(r) => Ok(Value::Scalar(r)),
            // operands of one numeric type: only a division by zero fails
            Err(m) if x.ty() == y.ty() && x.ty() != ScalarType::Bool => c.fail(m),
            Err(m) => Err(c.error(m)),
        },
        (Value::Vector(xs), Value::Vector(ys)) if xs.len() == ys.len() => Ok(Value::Vector(
            xs.iter()
                .zip(ys.iter())
                .map(|(x, y)| arith(c, op, x, y))
                .collect::<R<Vec<_>>>()?
                .into(),
        )),
        (Value::Nat(x), Value::Nat(y)) => {
            let r = match op {
                BinOp::Add => x.checked_add(*y),
                BinOp::Sub => x.checked_sub(*y).filter(|r| *r >= 0),
                BinOp::Mul => x.checked_mul(*y),
                BinOp::Div => x.checked_div(*y),
                BinOp::Mod => x.checked_rem(*y),
            };
            match r {
                Some(r) => Ok(Value::Nat(r)),
                None => c.fail(format!("{x} {} {y} is not a natural number", op.name())),
            }
        }
        (a, b) => Err(c.error(format!(
            "not defined on {} and {}",
            a.describe(),
            b.describe()
        ))),
    }
}

fn binary(c: &PrimCall, op: BinOp) -> R<Value> {
    arith(c, op, c.arg(0)?, c.arg(1)?)
}

/// `add x y` (`+`), lane-wise on vectors.
pub fn add(_: &mut Machine, c: &PrimCall) -> R<Value> {
    binary(c, BinOp::Add)
}
/// `sub x y` (`-`), lane-wise on vectors.
pub fn sub(_: &mut Machine, c: &PrimCall) -> R<Value> {
    binary(c, BinOp::Sub)
}
/// `mul x y` (`*`), lane-wise on vectors.
pub fn mul(_: &mut Machine, c: &PrimCall) -> R<Value> {
    binary(c, BinOp::Mul)
}
/// `div x y` (`/`), lane-wise on vectors; integer division truncates; dividing an
/// integer by zero is an error.
pub fn div(_: &mut Machine, c: &PrimCall) -> R<Value> {
    binary(c, BinOp::Div)
}
/// `mod x y` (`%`): C's `%` on integers, `fmod` on floats.
pub fn modulo(_: &mut Machine, c: &PrimCall) -> R<Value> {
    binary(c, BinOp::Mod)
}

/// A math function (`sqrt`, `pow`, `min`, ...; see [`crate::primitives::MathFn`]):
/// on scalars of one type ([`Scalar::math`]), lane-wise on vectors.
pub fn math(_: &mut Machine, c: &PrimCall) -> R<Value> {
    fn go(c: &PrimCall, f: MathFn, args: &[&Value]) -> R<Value> {
        if let Some(failed) = args.iter().find(|a| matches!(a, Value::Failed(_))) {
            return Ok((*failed).clone());
        }
        if let Some(xs) = args
            .iter()
            .map(|a| match a {
                Value::Scalar(s) => Some(*s),
                _ => None,
            })
            .collect::<Option<Vec<Scalar>>>()
        {
            return Scalar::math(f, &xs)
                .map(Value::Scalar)
                .map_err(|m| c.error(m));
        }
        let lanes: Option<Vec<&[Value]>> = args
            .iter()
            .map(|a| match a {
                Value::Vector(xs) => Some(&xs[..]),
                _ => None,
            })
            .collect();
        match lanes {
            Some(vs) if vs.iter().all(|v| v.len() == vs[0].len()) => Ok(Value::Vector(
                (0..vs[0].len())
                    .map(|k| go(c, f, &vs.iter().map(|v| &v[k]).collect::<Vec<_>>()))
                    .collect::<R<Vec<_>>>()?
                    .into(),
            )),
            _ => Err(c.error(format!(
                "not defined on {}",
                args.iter()
                    .map(|a| a.describe())
                    .collect::<Vec<_>>()
                    .join(" and ")
            ))),
        }
    }
    let f = c
        .prim
        .math()
        .ok_or_else(|| c.error("is not a math function (internal error)"))?;
    let args: Vec<&Value> = (0..f.arity()).map(|i| c.arg(i)).collect::<R<_>>()?;
    go(c, f, &args)
}

/// `select cond a b`; a failed condition fails every leaf of the result.
pub fn select(_: &mut Machine, c: &PrimCall) -> R<Value> {
    if let Value::Failed(e) = c.arg(0)? {
        return Ok(Value::failed_like(c.arg(1)?, e));
    }
    Ok(if c.bool(0)? {
        c.arg(1)?.clone()
    } else {
        c.arg(2)?.clone()
    })
}

/// `not b`.
pub fn not(_: &mut Machine, c: &PrimCall) -> R<Value> {
    Ok(Value::bool(!c.bool(0)?))
}

fn compare(c: &PrimCall) -> R<Option<Ordering>> {
    match (c.arg(0)?, c.arg(1)?) {
        (Value::Scalar(x), Value::Scalar(y)) => x.compare(*y).map_err(|m| c.error(m)),
        (Value::Nat(x), Value::Nat(y)) => Ok(Some(x.cmp(y))),
        (Value::Index { index: x, .. }, Value::Index { index: y, .. }) => Ok(Some(x.cmp(y))),
        (a, b) => Err(c.error(format!(
            "cannot compare {} and {}",
            a.describe(),
            b.describe()
        ))),
    }
}

/// `gt x y` (`>`); false when a NaN is involved.
pub fn gt(_: &mut Machine, c: &PrimCall) -> R<Value> {
    Ok(Value::bool(compare(c)? == Some(Ordering::Greater)))
}

/// `lt x y` (`<`); false when a NaN is involved.
pub fn lt(_: &mut Machine, c: &PrimCall) -> R<Value> {
    Ok(Value::bool(compare(c)? == Some(Ordering::Less)))
}

/// `le x y` (`<=`); false when a NaN is involved.
pub fn le(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let o = compare(c)?;
    Ok(Value::bool(matches!(
        o,
        Some(Ordering::Less | Ordering::Equal)
    )))
}

/// `ge x y` (`>=`); false when a NaN is involved.
pub fn ge(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let o = compare(c)?;
    Ok(Value::bool(matches!(
        o,
        Some(Ordering::Greater | Ordering::Equal)
    )))
}

/// `notEqual x y` (`!=`): the negation of [`equal`] (true when a NaN is involved).
pub fn not_equal(m: &mut Machine, c: &PrimCall) -> R<Value> {
    match equal(m, c)? {
        Value::Scalar(Scalar::Bool(b)) => Ok(Value::bool(!b)),
        other => Ok(other),
    }
}

/// `a && b` and `a || b`: `b` is the result where `a` does not decide it (`short` is
/// the value of `a` that decides); a failed `a` fails the result, a failed `b` only
/// where it is the result.
fn logical(c: &PrimCall, short: bool) -> R<Value> {
    match c.arg(0)? {
        Value::Failed(_) => c.arg(0).cloned(),
        Value::Scalar(Scalar::Bool(a)) if *a == short => Ok(Value::bool(short)),
        Value::Scalar(Scalar::Bool(_)) => match c.arg(1)? {
            b @ (Value::Failed(_) | Value::Scalar(Scalar::Bool(_))) => Ok(b.clone()),
            b => Err(c.error(format!("expected a bool, got {}", b.describe()))),
        },
        a => Err(c.error(format!("expected a bool, got {}", a.describe()))),
    }
}

/// `and a b` (`&&`), short-circuit: `false` when `a` is, whatever `b` is.
pub fn and(_: &mut Machine, c: &PrimCall) -> R<Value> {
    logical(c, false)
}

/// `or a b` (`||`), short-circuit: `true` when `a` is, whatever `b` is.
pub fn or(_: &mut Machine, c: &PrimCall) -> R<Value> {
    logical(c, true)
}

/// A bitwise operation or shift on integers of one type; a shift amount outside
/// `0..width` is a data-dependent error (a failed value), as a division by zero.
fn bitwise(c: &PrimCall, op: BitOp) -> R<Value> {
    match (c.arg(0)?, c.arg(1)?) {
        (Value::Scalar(x), Value::Scalar(y)) => match x.bitwise(op, *y) {
            Ok(r) => Ok(Value::Scalar(r)),
            // operands of one integer type: only a shift amount out of range fails
            Err(m) if x.ty() == y.ty() && is_integer(x.ty()) => c.fail(m),
            Err(m) => Err(c.error(m)),
        },
        (a, b) => Err(c.error(format!(
            "not defined on {} and {}",
            a.describe(),
            b.describe()
        ))),
    }
}

/// `bitAnd x y` (`&`) on integers.
pub fn bit_and(_: &mut Machine, c: &PrimCall) -> R<Value> {
    bitwise(c, BitOp::And)
}
/// `bitOr x y` (`|`) on integers.
pub fn bit_or(_: &mut Machine, c: &PrimCall) -> R<Value> {
    bitwise(c, BitOp::Or)
}
/// `bitXor x y` (`^`) on integers.
pub fn bit_xor(_: &mut Machine, c: &PrimCall) -> R<Value> {
    bitwise(c, BitOp::Xor)
}
/// `shl x k` (`<<`): wraps; `k` outside `0..width` is an error.
pub fn shl(_: &mut Machine, c: &PrimCall) -> R<Value> {
    bitwise(c, BitOp::Shl)
}
/// `shr x k` (`>>`): arithmetic on signed types; `k` outside `0..width` is an error.
pub fn shr(_: &mut Machine, c: &PrimCall) -> R<Value> {
    bitwise(c, BitOp::Shr)
}

/// `bitNot x` (`~`) on integers.
pub fn bit_not(_: &mut Machine, c: &PrimCall) -> R<Value> {
    match c.arg(0)? {
        Value::Scalar(x) => x.bit_not().map(Value::Scalar).map_err(|m| c.error(m)),
        v => Err(c.error(format!("not defined on {}", v.describe()))),
    }
}

/// `equal x y` (`==`): IEEE equality on floats, structural on arrays, pairs, vectors;
/// failed when an operand contains a failed value.
pub fn equal(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let (a, b) = (c.arg(0)?, c.arg(1)?);
    if let Some(e) = a.failure().or_else(|| b.failure()) {
        return Ok(Value::Failed(e.clone()));
    }
    a.data_eq(b)
        .map(Value::bool)
        .ok_or_else(|| c.error("functions cannot be compared"))
}

/// `cast x`: C conversion to the scalar type of the result (lane-wise on vectors;
/// `natType` and indices convert like 64-bit integers; integers convert to `natType`
/// when non-negative). A conversion C leaves undefined (a float out of the range of an
/// integer type, a negative number to `natType`) is a data-dependent error.
pub fn cast(_: &mut Machine, c: &PrimCall) -> R<Value> {
    fn go(c: &PrimCall, v: &Value, to: &DataType) -> R<Value> {
        let as_scalar = |v: &Value| match v {
            Value::Scalar(s) => Some(*s),
            Value::Nat(n) | Value::Index { index: n, .. } => Some(Scalar::I64(*n)),
            _ => None,
        };
        match (v, to) {
            (Value::Failed(_), _) => Ok(v.clone()),
            (Value::Vector(xs), DataType::Vector(_, t)) => Ok(Value::Vector(
                xs.iter()
                    .map(|x| go(c, x, t))
                    .collect::<R<Vec<_>>>()?
                    .into(),
            )),
            (v, DataType::Scalar(t)) => match as_scalar(v) {
                Some(s) => match s.cast(*t) {
                    Ok(r) => Ok(Value::Scalar(r)),
                    Err(m) => c.fail(m),
                },
                None => Err(c.error(format!("cannot cast {} to {}", v.describe(), t.name()))),
            },
            (v, DataType::NatType) => match as_scalar(v).and_then(|s| s.as_i128()) {
                Some(n) if (0..=i64::MAX as i128).contains(&n) => Ok(Value::Nat(n as i64)),
                _ => c.fail(format!("cannot cast {v} to natType")),
            },
            (v, t) => Err(c.error(format!("cannot cast {} to {t}", v.describe()))),
        }
    }
    let to = c.result_type()?;
    go(c, c.arg(0)?, &to)
}

/// `indexAsNat i`.
pub fn index_as_nat(_: &mut Machine, c: &PrimCall) -> R<Value> {
    match c.arg(0)? {
        Value::Index { index, .. } => Ok(Value::Nat(*index)),
        v => Err(c.error(format!("expected an index, got {}", v.describe()))),
    }
}

/// `natAsIndex n x`: the index `x` into `n` elements; a data-dependent error (a failed
/// index) unless `x < n`.
pub fn nat_as_index(_: &mut Machine, c: &PrimCall) -> R<Value> {
    let n = c.nat(0)?;
    match c.arg(0)? {
        Value::Nat(x) if (0..n).contains(x) => Ok(Value::Index {
            index: *x,
            bound: n,
        }),
        Value::Nat(x) => c.fail(format!("{x} is not an index into {n} elements")),
        v => Err(c.error(format!("expected a natType value, got {}", v.describe()))),
    }
}

/// An integer type (not `bool`, not a float).
fn is_integer(t: ScalarType) -> bool {
    !t.is_float() && t != ScalarType::Bool
}
