//! Scalar values and their operations, with the semantics of C.
//!
//! Every [`ScalarType`] is held exactly: `int` is C's 32-bit `int`, `f16` is IEEE
//! binary16 and `bf16` bfloat16 (the `half` crate; each operation is computed in `f32`
//! and rounded to nearest even, see [`super::halfs`]), `f32` is computed in IEEE single precision and `f64`
//! in double precision. Integer arithmetic wraps (two's complement for signed types,
//! as C does with `-fwrapv`; modulo 2^n for unsigned types, as C always does);
//! integer division and remainder truncate towards zero, like C; dividing by zero is
//! an error. Float arithmetic is IEEE (round to nearest even) and `%` on floats is
//! C's `fmod`.

use super::halfs;
use crate::primitives::MathFn;
use crate::types::ScalarType;
use half::{bf16, f16};
use std::cmp::Ordering;
use std::fmt;

/// A scalar value of one of the [`ScalarType`]s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// `bool`
    Bool(bool),
    /// `int` (C `int`, 32 bits)
    Int(i32),
    /// `i8`
    I8(i8),
    /// `i16`
    I16(i16),
    /// `i32`
    I32(i32),
    /// `i64`
    I64(i64),
    /// `u8`
    U8(u8),
    /// `u16`
    U16(u16),
    /// `u32`
    U32(u32),
    /// `u64`
    U64(u64),
    /// `f16`
    F16(f16),
    /// `bf16`
    Bf16(bf16),
    /// `f32`
    F32(f32),
    /// `f64`
    F64(f64),
}

/// The binary arithmetic operations on scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
}

impl BinOp {
    /// The primitive's name.
    pub fn name(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::Div => "div",
            BinOp::Mod => "mod",
        }
    }
}

/// Applies an integer operation with C wrapping semantics.
macro_rules! int_op {
    ($op:expr, $x:expr, $y:expr) => {{
        let (x, y) = ($x, $y);
        match $op {
            BinOp::Add => Ok(x.wrapping_add(y)),
            BinOp::Sub => Ok(x.wrapping_sub(y)),
            BinOp::Mul => Ok(x.wrapping_mul(y)),
            BinOp::Div if y == 0 => Err("integer division by zero".to_string()),
            BinOp::Mod if y == 0 => Err("integer remainder by zero".to_string()),
            BinOp::Div => Ok(x.wrapping_div(y)),
            BinOp::Mod => Ok(x.wrapping_rem(y)),
        }
    }};
}

/// The bitwise operations and shifts on integer scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitOp {
    /// `&`
    And,
    /// `|`
    Or,
    /// `^`
    Xor,
    /// `<<` (wraps: the bits shifted out of the type are lost)
    Shl,
    /// `>>` (arithmetic on signed types)
    Shr,
}

impl BitOp {
    /// The primitive's name.
    pub fn name(self) -> &'static str {
        match self {
            BitOp::And => "bitAnd",
            BitOp::Or => "bitOr",
            BitOp::Xor => "bitXor",
            BitOp::Shl => "shl",
            BitOp::Shr => "shr",
        }
    }
}

/// Applies a bitwise operation or shift to integers of one type; a shift amount outside
/// `0..width` is an error (C leaves it undefined).
macro_rules! bit_op {
    ($op:expr, $x:expr, $y:expr, $ty:expr) => {{
        let (x, y) = ($x, $y);
        let bits = (std::mem::size_of_val(&x) * 8) as i128;
        let amount = y as i128;
        match $op {
            BitOp::And => Ok(x & y),
            BitOp::Or => Ok(x | y),
            BitOp::Xor => Ok(x ^ y),
            BitOp::Shl | BitOp::Shr if !(0..bits).contains(&amount) => Err(format!(
                "integer shift amount out of range: {amount} is not in 0..{} for {}",
                bits - 1,
                $ty.name()
            )),
            BitOp::Shl => Ok(x.wrapping_shl(amount as u32)),
            BitOp::Shr => Ok(x.wrapping_shr(amount as u32)),
        }
    }};
}

/// Applies a float operation in the precision of the operands.
macro_rules! float_op {
    ($op:expr, $x:expr, $y:expr) => {{
        let (x, y) = ($x, $y);
        match $op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
            BinOp::Mod => x % y,
        }
    }};
}

/// Dispatches on the integer variants of a scalar, binding the payload.
macro_rules! each_int {
    ($s:expr, $x:ident => $body:expr, else $other:expr) => {
        match $s {
            Scalar::Int($x) => $body,
            Scalar::I8($x) => $body,
            Scalar::I16($x) => $body,
            Scalar::I32($x) => $body,
            Scalar::I64($x) => $body,
            Scalar::U8($x) => $body,
            Scalar::U16($x) => $body,
            Scalar::U32($x) => $body,
            Scalar::U64($x) => $body,
            _ => $other,
        }
    };
}

impl Scalar {
    /// The scalar's type.
    pub fn ty(self) -> ScalarType {
        match self {
            Scalar::Bool(_) => ScalarType::Bool,
            Scalar::Int(_) => ScalarType::Int,
            Scalar::I8(_) => ScalarType::I8,
            Scalar::I16(_) => ScalarType::I16,
            Scalar::I32(_) => ScalarType::I32,
            Scalar::I64(_) => ScalarType::I64,
            Scalar::U8(_) => ScalarType::U8,
            Scalar::U16(_) => ScalarType::U16,
            Scalar::U32(_) => ScalarType::U32,
            Scalar::U64(_) => ScalarType::U64,
            Scalar::F16(_) => ScalarType::F16,
            Scalar::Bf16(_) => ScalarType::Bf16,
            Scalar::F32(_) => ScalarType::F32,
            Scalar::F64(_) => ScalarType::F64,
        }
    }

    /// The zero of a scalar type (`false` for `bool`).
    pub fn zero(ty: ScalarType) -> Scalar {
        match Scalar::from_int(ty, 0) {
            Ok(s) => s,
            Err(_) => Scalar::Bool(false),
        }
    }

    /// A float literal of a float type, rounded once from the `f64` value.
    /// Integer types truncate towards zero like a C cast (an error when out of range).
    pub fn from_float(ty: ScalarType, x: f64) -> Result<Scalar, String> {
        Scalar::F64(x).cast(ty)
    }

    /// An integer literal of any scalar type; an error when the value does not fit
    /// an integer type (floats round to nearest).
    pub fn from_int(ty: ScalarType, x: i64) -> Result<Scalar, String> {
        let v = x as i128;
        let fits = match ty {
            ScalarType::Bool => return Ok(Scalar::Bool(x != 0)),
            t if t.is_float() => true,
            t => t.int_range().is_some_and(|(lo, hi)| lo <= v && v <= hi),
        };
        if !fits {
            return Err(format!("the literal {x} does not fit in {}", ty.name()));
        }
        Scalar::I64(x).cast(ty)
    }

    /// The value as an `i128`, for integer and boolean scalars.
    pub fn as_i128(self) -> Option<i128> {
        if let Scalar::Bool(b) = self {
            return Some(b as i128);
        }
        each_int!(self, x => Some(x as i128), else None)
    }

    /// The value as an `f64` (exact for every type except large 64-bit integers).
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::F16(x) => x.to_f64(),
            Scalar::Bf16(x) => x.to_f64(),
            Scalar::F32(x) => x as f64,
            Scalar::F64(x) => x,
            Scalar::Bool(b) => b as i32 as f64,
            other => each_int!(other, x => x as f64, else 0.0),
        }
    }

    /// Whether this is a float NaN.
    pub fn is_nan(self) -> bool {
        match self {
            Scalar::F16(x) => x.is_nan(),
            Scalar::Bf16(x) => x.is_nan(),
            Scalar::F32(x) => x.is_nan(),
            Scalar::F64(x) => x.is_nan(),
            _ => false,
        }
    }

    /// `self op other`; both operands must have the same type.
    pub fn binary(self, op: BinOp, other: Scalar) -> Result<Scalar, String> {
        use Scalar::*;
        Ok(match (self, other) {
            (Int(x), Int(y)) => Int(int_op!(op, x, y)?),
            (I8(x), I8(y)) => I8(int_op!(op, x, y)?),
            (I16(x), I16(y)) => I16(int_op!(op, x, y)?),
            (I32(x), I32(y)) => I32(int_op!(op, x, y)?),
            (I64(x), I64(y)) => I64(int_op!(op, x, y)?),
            (U8(x), U8(y)) => U8(int_op!(op, x, y)?),
            (U16(x), U16(y)) => U16(int_op!(op, x, y)?),
            (U32(x), U32(y)) => U32(int_op!(op, x, y)?),
            (U64(x), U64(y)) => U64(int_op!(op, x, y)?),
            // the `half` crate computes in `f32` and rounds to nearest even, which is
            // the correctly rounded result (f32 has more than twice their precision)
            (F16(x), F16(y)) => F16(float_op!(op, x, y)),
            (Bf16(x), Bf16(y)) => Bf16(float_op!(op, x, y)),
            (F32(x), F32(y)) => F32(float_op!(op, x, y)),
            (F64(x), F64(y)) => F64(float_op!(op, x, y)),
            (Bool(_), Bool(_)) => return Err(format!("`{}` is not defined on bool", op.name())),
            (a, b) => return Err(mixed_types(op.name(), a.ty(), b.ty())),
        })
    }

    /// `self op other` for a bitwise operation or shift: both operands of one integer
    /// type; a shift amount outside `0..width` of the type is an error.
    pub fn bitwise(self, op: BitOp, other: Scalar) -> Result<Scalar, String> {
        use Scalar::*;
        let ty = self.ty();
        Ok(match (self, other) {
            (Int(x), Int(y)) => Int(bit_op!(op, x, y, ty)?),
            (I8(x), I8(y)) => I8(bit_op!(op, x, y, ty)?),
            (I16(x), I16(y)) => I16(bit_op!(op, x, y, ty)?),
            (I32(x), I32(y)) => I32(bit_op!(op, x, y, ty)?),
            (I64(x), I64(y)) => I64(bit_op!(op, x, y, ty)?),
            (U8(x), U8(y)) => U8(bit_op!(op, x, y, ty)?),
            (U16(x), U16(y)) => U16(bit_op!(op, x, y, ty)?),
            (U32(x), U32(y)) => U32(bit_op!(op, x, y, ty)?),
            (U64(x), U64(y)) => U64(bit_op!(op, x, y, ty)?),
            (a, b) if a.ty() == b.ty() => {
                return Err(format!(
                    "`{}` takes an integer value, found {}",
                    op.name(),
                    a.ty().name()
                ))
            }
            (a, b) => return Err(mixed_types(op.name(), a.ty(), b.ty())),
        })
    }

    /// `~self` on integers.
    pub fn bit_not(self) -> Result<Scalar, String> {
        use Scalar::*;
        Ok(match self {
            Int(x) => Int(!x),
            I8(x) => I8(!x),
            I16(x) => I16(!x),
            I32(x) => I32(!x),
            I64(x) => I64(!x),
            U8(x) => U8(!x),
            U16(x) => U16(!x),
            U32(x) => U32(!x),
            U64(x) => U64(!x),
            other => {
                return Err(format!(
                    "`bitNot` takes an integer value, found {}",
                    other.ty().name()
                ))
            }
        })
    }

    /// `-self` (wrapping for integers, like C's unary minus with `-fwrapv`).
    pub fn negate(self) -> Result<Scalar, String> {
        use Scalar::*;
        Ok(match self {
            Int(x) => Int(x.wrapping_neg()),
            I8(x) => I8(x.wrapping_neg()),
            I16(x) => I16(x.wrapping_neg()),
            I32(x) => I32(x.wrapping_neg()),
            I64(x) => I64(x.wrapping_neg()),
            U8(x) => U8(x.wrapping_neg()),
            U16(x) => U16(x.wrapping_neg()),
            U32(x) => U32(x.wrapping_neg()),
            U64(x) => U64(x.wrapping_neg()),
            F16(x) => F16(-x),
            Bf16(x) => Bf16(-x),
            F32(x) => F32(-x),
            F64(x) => F64(-x),
            Bool(_) => return Err("`neg` is not defined on bool".into()),
        })
    }

    /// The math function `f` of scalars of one type in its domain: floats in their
    /// own precision (`f16` and `bf16` computed in `f32` and rounded), integers (`min`, `max`,
    /// `abs`) exactly and then wrapped to their type, so that `abs` of the most
    /// negative value is itself.
    pub fn math(f: MathFn, args: &[Scalar]) -> Result<Scalar, String> {
        let Some(first) = args.first() else {
            return Err(format!("`{}` without operands", f.name()));
        };
        let ty = first.ty();
        if args.len() != f.arity() {
            return Err(format!(
                "`{}` takes {} operands, got {}",
                f.name(),
                f.arity(),
                args.len()
            ));
        }
        if let Some(other) = args.iter().find(|a| a.ty() != ty) {
            return Err(mixed_types(f.name(), ty, other.ty()));
        }
        if !f.domain().admits(ty) {
            return Err(format!(
                "`{}` takes {}, found {}",
                f.name(),
                f.domain().describe(),
                ty.name()
            ));
        }
        // exact: every f16, bf16 and f32 is an f64
        let single = || -> Vec<f32> { args.iter().map(|a| a.as_f64() as f32).collect() };
        Ok(match ty {
            ScalarType::F64 => {
                let xs: Vec<f64> = args.iter().map(|a| a.as_f64()).collect();
                Scalar::F64(f.eval_f64(&xs))
            }
            ScalarType::F32 => Scalar::F32(f.eval_f32(&single())),
            ScalarType::F16 => Scalar::F16(f16::from_f32(f.eval_f32(&single()))),
            ScalarType::Bf16 => Scalar::Bf16(bf16::from_f32(f.eval_f32(&single()))),
            _ => {
                let xs: Vec<i128> = args.iter().filter_map(|a| a.as_i128()).collect();
                let v = match (f, xs.as_slice()) {
                    (MathFn::Abs, [x]) => x.abs(),
                    (MathFn::Min, [x, y]) => *x.min(y),
                    (MathFn::Max, [x, y]) => *x.max(y),
                    _ => return Err(format!("`{}` is not defined on {}", f.name(), ty.name())),
                };
                from_i128(ty, v)
            }
        })
    }

    /// Compares two scalars of the same type (`None` for NaN operands).
    pub fn compare(self, other: Scalar) -> Result<Option<Ordering>, String> {
        use Scalar::*;
        Ok(match (self, other) {
            (Bool(x), Bool(y)) => x.partial_cmp(&y),
            (F16(x), F16(y)) => x.partial_cmp(&y),
            (Bf16(x), Bf16(y)) => x.partial_cmp(&y),
            (F32(x), F32(y)) => x.partial_cmp(&y),
            (F64(x), F64(y)) => x.partial_cmp(&y),
            (a, b) if a.ty() == b.ty() => match (a.as_i128(), b.as_i128()) {
                (Some(x), Some(y)) => Some(x.cmp(&y)),
                _ => None,
            },
            (a, b) => {
                return Err(format!(
                    "comparison of scalars of different types ({} and {})",
                    a.ty().name(),
                    b.ty().name()
                ))
            }
        })
    }

    /// Conversion to another scalar type with C semantics: integers are truncated
    /// or sign/zero-extended (modulo 2^n), integers and floats convert to floats by
    /// rounding to nearest, floats convert to integers by truncation towards zero,
    /// anything converts to `bool` as `!= 0`. A float whose truncation does not fit
    /// the target integer type (or a NaN) is an error, because C leaves it undefined.
    pub fn cast(self, to: ScalarType) -> Result<Scalar, String> {
        use Scalar::*;
        if to == ScalarType::Bool {
            return Ok(Bool(match self {
                Bool(b) => b,
                F16(x) => x.to_f32() != 0.0,
                Bf16(x) => x.to_f32() != 0.0,
                F32(x) => x != 0.0,
                F64(x) => x != 0.0,
                other => other.as_i128().is_some_and(|v| v != 0),
            }));
        }
        if let Some(v) = self.as_i128() {
            return Ok(from_i128(to, v));
        }
        // A float source: every float is exactly an f64, and the conversions from f64
        // round once.
        if to.is_float() {
            let x = self.as_f64();
            return Ok(match to {
                ScalarType::F16 => F16(halfs::f16_from_f64(x)),
                ScalarType::Bf16 => Bf16(halfs::bf16_from_f64(x)),
                ScalarType::F32 => F32(x as f32),
                _ => F64(x),
            });
        }
        let x = self.as_f64();
        let t = x.trunc();
        let in_range = to.int_range().is_some_and(|(lo, hi)| {
            !x.is_nan() && t >= lo as f64 && t <= hi as f64 && (t as i128) <= hi
        });
        if !in_range {
            return Err(format!(
                "casting {} to {} is undefined in C (out of range)",
                self,
                to.name()
            ));
        }
        Ok(from_i128(to, t as i128))
    }
}

/// An integer converted to a scalar type: modulo 2^n for integer types, rounded to
/// nearest for float types.
fn from_i128(to: ScalarType, v: i128) -> Scalar {
    use Scalar::*;
    match to {
        ScalarType::Bool => Bool(v != 0),
        ScalarType::Int => Int(v as i32),
        ScalarType::I8 => I8(v as i8),
        ScalarType::I16 => I16(v as i16),
        ScalarType::I32 => I32(v as i32),
        ScalarType::I64 => I64(v as i64),
        ScalarType::U8 => U8(v as u8),
        ScalarType::U16 => U16(v as u16),
        ScalarType::U32 => U32(v as u32),
        ScalarType::U64 => U64(v as u64),
        ScalarType::F16 => F16(halfs::f16_from_int(v)),
        ScalarType::Bf16 => Bf16(halfs::bf16_from_int(v)),
        ScalarType::F32 => F32(v as f32),
        ScalarType::F64 => F64(v as f64),
    }
}

impl fmt::Display for Scalar {
    /// Integers and booleans as in C; floats with a decimal point or exponent (`1.0`, `1e20`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Bool(b) => write!(f, "{b}"),
            Scalar::F16(x) => write!(f, "{:?}", x.to_f32()),
            Scalar::Bf16(x) => write!(f, "{:?}", x.to_f32()),
            Scalar::F32(x) => write!(f, "{x:?}"),
            Scalar::F64(x) => write!(f, "{x:?}"),
            other => each_int!(*other, x => write!(f, "{x}"), else Ok(())),
        }
    }
}

/// The error of an operation `name` on operands of the types `a` and `b`, which differ.
fn mixed_types(name: &str, a: ScalarType, b: ScalarType) -> String {
    format!(
        "`{name}` applied to operands of different types ({} and {})",
        a.name(),
        b.name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_arithmetic_wraps_and_truncates_like_c() {
        assert_eq!(
            Scalar::Int(i32::MAX).binary(BinOp::Add, Scalar::Int(1)),
            Ok(Scalar::Int(i32::MIN))
        );
        assert_eq!(
            Scalar::U8(3).binary(BinOp::Sub, Scalar::U8(5)),
            Ok(Scalar::U8(254))
        );
        assert_eq!(
            Scalar::Int(-7).binary(BinOp::Div, Scalar::Int(2)),
            Ok(Scalar::Int(-3))
        );
        assert_eq!(
            Scalar::Int(-7).binary(BinOp::Mod, Scalar::Int(2)),
            Ok(Scalar::Int(-1))
        );
        assert_eq!(
            Scalar::Int(i32::MIN).binary(BinOp::Div, Scalar::Int(-1)),
            Ok(Scalar::Int(i32::MIN))
        );
        assert!(Scalar::I64(1).binary(BinOp::Div, Scalar::I64(0)).is_err());
        assert!(Scalar::U16(1).binary(BinOp::Mod, Scalar::U16(0)).is_err());
        assert!(Scalar::Int(1).binary(BinOp::Add, Scalar::I32(1)).is_err());
        assert_eq!(Scalar::U32(1).negate(), Ok(Scalar::U32(u32::MAX)));
    }

    #[test]
    fn f32_is_computed_in_single_precision() {
        // 16777216 + 1 is not representable in f32: the sum rounds back.
        assert_eq!(
            Scalar::F32(16777216.0).binary(BinOp::Add, Scalar::F32(1.0)),
            Ok(Scalar::F32(16777216.0))
        );
        let third = Scalar::F32(1.0)
            .binary(BinOp::Div, Scalar::F32(3.0))
            .unwrap();
        assert_eq!(third, Scalar::F32(1.0f32 / 3.0f32));
        assert_eq!(
            Scalar::F32(7.5).binary(BinOp::Mod, Scalar::F32(2.0)),
            Ok(Scalar::F32(1.5))
        );
        let h = Scalar::F16(f16::from_f32(1.0))
            .binary(BinOp::Add, Scalar::F16(f16::from_f32(0.0001)))
            .unwrap();
        assert_eq!(h, Scalar::F16(f16::from_f32(1.0)));
    }

    #[test]
    fn casts_follow_c() {
        assert_eq!(Scalar::Int(300).cast(ScalarType::U8), Ok(Scalar::U8(44)));
        assert_eq!(
            Scalar::I8(-1).cast(ScalarType::U32),
            Ok(Scalar::U32(u32::MAX))
        );
        assert_eq!(Scalar::F32(-2.7).cast(ScalarType::Int), Ok(Scalar::Int(-2)));
        assert_eq!(
            Scalar::F64(0.1).cast(ScalarType::F32),
            Ok(Scalar::F32(0.1f32))
        );
        assert_eq!(
            Scalar::Int(2).cast(ScalarType::Bool),
            Ok(Scalar::Bool(true))
        );
        assert_eq!(
            Scalar::Bool(true).cast(ScalarType::F32),
            Ok(Scalar::F32(1.0))
        );
        assert_eq!(
            Scalar::I64(i64::MAX).cast(ScalarType::F32),
            Ok(Scalar::F32(i64::MAX as f32))
        );
        assert!(Scalar::F32(f32::NAN).cast(ScalarType::Int).is_err());
        assert!(Scalar::F64(1e10).cast(ScalarType::Int).is_err());
        assert!(Scalar::F64(-1.0).cast(ScalarType::U8).is_err());
        assert_eq!(Scalar::F64(-0.5).cast(ScalarType::U8), Ok(Scalar::U8(0)));
        assert_eq!(
            Scalar::F64(18446744073709549568.0).cast(ScalarType::U64),
            Ok(Scalar::U64(18446744073709549568))
        );
        assert!(Scalar::F64(18446744073709551616.0)
            .cast(ScalarType::U64)
            .is_err());
        assert_eq!(Scalar::from_int(ScalarType::U8, 255), Ok(Scalar::U8(255)));
        assert!(Scalar::from_int(ScalarType::U8, 256).is_err());
        assert_eq!(
            Scalar::from_float(ScalarType::F16, 0.5),
            Ok(Scalar::F16(f16::from_f32(0.5)))
        );
    }

    #[test]
    fn bf16_computes_in_f32_and_rounds_each_operation() {
        let b = |x: f32| Scalar::Bf16(bf16::from_f32(x));
        // 1 + 2^-8 ties between 1 and 1 + 2^-7: the even one, 1
        assert_eq!(b(1.0).binary(BinOp::Add, b(1.0 / 256.0)), Ok(b(1.0)));
        // 1 + 3 * 2^-8 ties between 1 + 2^-7 and 1 + 2^-6: the even one
        assert_eq!(
            b(1.0 + 1.0 / 128.0).binary(BinOp::Add, b(1.0 / 256.0)),
            Ok(b(1.0 + 1.0 / 64.0))
        );
        let big = b(3.0e38);
        assert_eq!(
            big.binary(BinOp::Mul, b(2.0)),
            Ok(Scalar::Bf16(bf16::INFINITY))
        );
        assert!(b(0.0).binary(BinOp::Div, b(0.0)).unwrap().is_nan());
        assert_eq!(b(1.0).negate(), Ok(b(-1.0)));
        assert_eq!(
            Scalar::math(MathFn::Sqrt, &[b(2.0)]),
            Ok(Scalar::Bf16(bf16::from_f32(2f32.sqrt())))
        );
        assert_eq!(b(1.5).compare(b(2.0)), Ok(Some(Ordering::Less)));
    }

    #[test]
    fn bf16_and_f16_casts() {
        let b = |x: f32| Scalar::Bf16(bf16::from_f32(x));
        assert_eq!(Scalar::Int(257).cast(ScalarType::Bf16), Ok(b(256.0)));
        assert_eq!(b(-2.5).cast(ScalarType::Int), Ok(Scalar::Int(-2)));
        assert!(b(1e10).cast(ScalarType::Int).is_err());
        assert!(b(f32::NAN).cast(ScalarType::U8).is_err());
        assert!(b(-1.0).cast(ScalarType::U8).is_err());
        assert_eq!(
            Scalar::F16(f16::from_f32(65504.0)).cast(ScalarType::Bf16),
            Ok(b(65536.0))
        );
        assert_eq!(
            b(65536.0).cast(ScalarType::F16),
            Ok(Scalar::F16(f16::INFINITY))
        );
        assert_eq!(b(1.5).cast(ScalarType::F64), Ok(Scalar::F64(1.5)));
        assert_eq!(Scalar::F64(0.1).cast(ScalarType::Bf16), Ok(b(0.1)));
        assert_eq!(b(0.0).cast(ScalarType::Bool), Ok(Scalar::Bool(false)));
        assert_eq!(Scalar::from_int(ScalarType::Bf16, 3), Ok(b(3.0)));
    }

    #[test]
    fn comparisons() {
        assert_eq!(
            Scalar::U8(200).compare(Scalar::U8(3)),
            Ok(Some(Ordering::Greater))
        );
        assert_eq!(Scalar::F32(f32::NAN).compare(Scalar::F32(1.0)), Ok(None));
        assert!(Scalar::F32(1.0).compare(Scalar::F64(1.0)).is_err());
    }
}
