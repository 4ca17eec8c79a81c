//! The data types the generator builds programs of, printed in RISE's surface syntax.

use crate::size::Size;
use std::fmt;

/// A scalar type (RISE's names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    /// `bool`
    Bool,
    /// `int` (C `int`)
    Int,
    /// `i8`
    I8,
    /// `i16`
    I16,
    /// `i32`
    I32,
    /// `i64`
    I64,
    /// `u8`
    U8,
    /// `u16`
    U16,
    /// `u32`
    U32,
    /// `u64`
    U64,
    /// `f32`
    F32,
    /// `f64`
    F64,
}

impl Scalar {
    /// Every numeric type (not `bool`) with the weight the generator picks it with.
    pub const NUMERIC: [(Scalar, u32); 11] = [
        (Scalar::F32, 25),
        (Scalar::Int, 14),
        (Scalar::I32, 5),
        (Scalar::I8, 5),
        (Scalar::I16, 5),
        (Scalar::I64, 8),
        (Scalar::U8, 10),
        (Scalar::U16, 10),
        (Scalar::U32, 5),
        (Scalar::U64, 4),
        (Scalar::F64, 9),
    ];

    /// The RISE name.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::Int => "int",
            Scalar::I8 => "i8",
            Scalar::I16 => "i16",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::U8 => "u8",
            Scalar::U16 => "u16",
            Scalar::U32 => "u32",
            Scalar::U64 => "u64",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }

    /// Whether it is `f32` or `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }

    /// Whether it is an integer type.
    pub fn is_int(self) -> bool {
        !self.is_float() && self != Scalar::Bool
    }

    /// The width in bits of an integer type (0 for the others).
    pub fn bits(self) -> i64 {
        match self {
            Scalar::I8 | Scalar::U8 => 8,
            Scalar::I16 | Scalar::U16 => 16,
            Scalar::Int | Scalar::I32 | Scalar::U32 => 32,
            Scalar::I64 | Scalar::U64 => 64,
            Scalar::Bool | Scalar::F32 | Scalar::F64 => 0,
        }
    }

    /// The largest value a literal of this type may have.
    pub fn max_literal(self) -> u64 {
        match self {
            Scalar::I8 => i8::MAX as u64,
            Scalar::U8 => u8::MAX as u64,
            Scalar::I16 => i16::MAX as u64,
            Scalar::U16 => u16::MAX as u64,
            Scalar::Int | Scalar::I32 => i32::MAX as u64,
            Scalar::U32 => u32::MAX as u64,
            // larger literals are refused by the lexer (the inputs still reach the limits)
            Scalar::I64 => i32::MAX as u64,
            Scalar::U64 => u32::MAX as u64,
            Scalar::Bool => 1,
            Scalar::F32 | Scalar::F64 => 1000,
        }
    }

    /// A literal of this type with the magnitude `v` (floats: `v / 4`).
    pub fn literal(self, v: u64) -> String {
        match self {
            Scalar::Bool => (v % 2 == 1).to_string(),
            Scalar::Int => v.to_string(),
            Scalar::F32 => format!("{:?}f", v as f64 / 4.0),
            Scalar::F64 => format!("{:?}", v as f64 / 4.0),
            s => format!("{v}{}", s.name()),
        }
    }
}

/// A data type: a scalar, an index, a run-time natural number, a vector, an array or a
/// pair.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ty {
    /// A scalar.
    S(Scalar),
    /// `idx[n]`: an index below `n` (inputs of indices hold values in range).
    Idx(Size),
    /// `natType`: a natural number computed at run time.
    Nat,
    /// `vec[s, k]`: a vector of `k` lanes.
    Vec(Scalar, i64),
    /// `n.t`
    Arr(Size, Box<Ty>),
    /// `(s, t)`
    Pair(Box<Ty>, Box<Ty>),
}

impl Ty {
    /// `n.t`
    pub fn arr(n: Size, t: Ty) -> Ty {
        Ty::Arr(n, Box::new(t))
    }

    /// `(a, b)`
    pub fn pair(a: Ty, b: Ty) -> Ty {
        Ty::Pair(Box::new(a), Box::new(b))
    }

    /// Whether values of this type can be a buffer of scalars or of indices (an input; the
    /// generator's results are never indices).
    pub fn is_flat(&self) -> bool {
        match self {
            Ty::S(s) => *s != Scalar::Bool,
            Ty::Idx(_) => true,
            Ty::Arr(_, e) => e.is_flat(),
            Ty::Nat | Ty::Vec(..) | Ty::Pair(..) => false,
        }
    }

    /// The innermost scalar type, when there are no pairs (nor indices or vectors).
    pub fn scalar(&self) -> Option<Scalar> {
        match self {
            Ty::S(s) => Some(*s),
            Ty::Arr(_, e) => e.scalar(),
            Ty::Idx(_) | Ty::Nat | Ty::Vec(..) | Ty::Pair(..) => None,
        }
    }

    /// The number of scalars of a value at the given size values.
    pub fn count(&self, vals: &[i64]) -> i64 {
        match self {
            Ty::S(_) | Ty::Idx(_) | Ty::Nat => 1,
            Ty::Vec(_, k) => *k,
            Ty::Arr(n, e) => n.eval(vals).saturating_mul(e.count(vals)),
            Ty::Pair(a, b) => a.count(vals).saturating_add(b.count(vals)),
        }
    }

    /// Every size in the type.
    pub fn sizes(&self) -> Vec<&Size> {
        match self {
            Ty::S(_) | Ty::Nat | Ty::Vec(..) => vec![],
            Ty::Idx(n) => vec![n],
            Ty::Arr(n, e) => std::iter::once(n).chain(e.sizes()).collect(),
            Ty::Pair(a, b) => a.sizes().into_iter().chain(b.sizes()).collect(),
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::S(s) => write!(f, "{}", s.name()),
            Ty::Idx(n) => write!(f, "idx[{n}]"),
            Ty::Nat => write!(f, "natType"),
            Ty::Vec(s, k) => write!(f, "vec[{}, {k}]", s.name()),
            Ty::Arr(n, e) => write!(f, "{n}.{e}"),
            Ty::Pair(a, b) => write!(f, "({a}, {b})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printing() {
        let t = Ty::arr(
            Size::var(0).add(&Size::cst(2)),
            Ty::pair(Ty::S(Scalar::U8), Ty::arr(Size::cst(3), Ty::S(Scalar::F32))),
        );
        assert_eq!(t.to_string(), "(n+2).(u8, 3.f32)");
        assert!(!t.is_flat());
        assert_eq!(Scalar::F32.literal(3), "0.75f");
        assert_eq!(Scalar::U16.literal(7), "7u16");
        assert_eq!(Scalar::F64.literal(8), "2.0");
        let n = Size::var(0);
        let is = Ty::arr(n.clone(), Ty::Idx(n.add(&Size::cst(1))));
        assert_eq!(is.to_string(), "n.idx[(n+1)]");
        assert!(is.is_flat());
        assert_eq!(is.sizes().len(), 2);
        let v = Ty::arr(Size::cst(3), Ty::Vec(Scalar::F32, 4));
        assert_eq!(v.to_string(), "3.vec[f32, 4]");
        assert_eq!(v.count(&[1, 1]), 12);
        assert!(!v.is_flat() && !Ty::Nat.is_flat());
    }
}
