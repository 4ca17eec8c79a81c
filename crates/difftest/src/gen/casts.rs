//! Casts, including those without a value: floats to every integer type and to `natType`
//! with values in and out of range, NaN and infinities (computed from the inputs, so that
//! some elements fail and others do not), `natType` values to scalars, and `natType` values
//! above 2^32 (large literals, products, casts of wide integers).

use super::{Entry, Gen};
use crate::ast::Node;
use crate::ty::{Scalar, Ty};

/// Factors that carry float inputs (mostly within ±1, now and then ±100, NaN, infinite or
/// huge) across the ranges of the integer types: the products of these literals.
const SCALES: &[&[&str]] = &[
    &["100.0"],
    &["40000.0"],
    &["3000000000.0"],
    &["4294967296.0"],
    &["4294967296.0", "4294967296.0"],
    &["4294967296.0", "4294967296.0", "-1.0"],
];

/// `natType` literals above 2^32 (the lexer's integer literals go to 2^63 - 1).
pub const BIG_NATS: &[&str] = &[
    "4294967296",
    "4294967301",
    "8589934592",
    "1099511627776",
    "9223372036854775807",
];

impl Gen<'_> {
    /// `cast x : s` for a numeric `s`: of a scalar of another type (floats included, whose
    /// values may leave the range of `s`), of a float scaled, divided by zero or made NaN
    /// so that some values have no integer, or of a `natType` value.
    pub(super) fn cast_to(&mut self, s: Scalar, env: &[Entry], d: u32) -> Node {
        let t = Ty::S(s);
        let text = format!("(cast $0 : {})", s.name());
        match self.rng.range(0, 9) {
            0..=4 => {
                let a = Ty::S(self.scalar());
                let x = self.gen(&a, env, d);
                Node::op(t, text, vec![x])
            }
            5..=7 if s.is_int() => {
                let x = self.failing_float(env, d);
                Node::op(t, text, vec![x])
            }
            _ => {
                let x = self.gen(&Ty::Nat, env, d);
                Node::op(t, text, vec![x])
            }
        }
    }

    /// A float whose values leave the integer ranges now and then: a scaled one, one
    /// divided by zero where a condition on it holds (infinite, or NaN for a zero), or the
    /// difference of two infinities (NaN).
    pub(super) fn failing_float(&mut self, env: &[Entry], d: u32) -> Node {
        let f = *self.rng.pick(&[Scalar::F32, Scalar::F64]);
        let t = Ty::S(f);
        let suffix = if f == Scalar::F32 { "f" } else { "" };
        let x = self.gen(&t, env, d);
        match self.rng.range(0, 5) {
            0..=2 => {
                let scale = *self.rng.pick(SCALES);
                let text = scale
                    .iter()
                    .fold("$0".to_string(), |e, k| format!("({e} * {k}{suffix})"));
                Node::op(t, text, vec![x])
            }
            3 => Node::op(
                t,
                format!("(select ($0 > 0.5{suffix}) ($0 / 0.0{suffix}) $0)"),
                vec![x],
            ),
            _ => Node::op(
                t,
                format!("(($0 / 0.0{suffix}) - ($0 / 0.0{suffix}))"),
                vec![x],
            ),
        }
    }

    /// `cast x : natType` of data: unsigned values (natural numbers), or now and then a
    /// signed one (negative values have no `natType`) or a float (which never has one).
    pub(super) fn nat_of_data(&mut self, env: &[Entry], d: u32) -> Node {
        let s = self.rng.weighted(&[
            (Scalar::U8, 3),
            (Scalar::U16, 3),
            (Scalar::U32, 2),
            (Scalar::U64, 3),
            (Scalar::I64, 2),
            (Scalar::Int, 1),
            (Scalar::F32, 1),
        ]);
        let x = self.gen(&Ty::S(s), env, d);
        Node::op(Ty::Nat, "(cast $0 : natType)", vec![x])
    }

    /// A `natType` literal above 2^32.
    pub(super) fn big_nat(&mut self) -> Node {
        let v = *self.rng.pick(BIG_NATS);
        Node::leaf(Ty::Nat, format!("({v} : natType)"), vec![])
    }
}
