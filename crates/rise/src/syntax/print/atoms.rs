//! The text of literals and type-level arguments, which read back as the same value.

use super::{ATOM, UNARY};
use crate::expr::Literal;
use crate::syntax::lexer::{lex, Token};
use crate::types::{AtomicNat, NatToData, NatToNat, ScalarType, TypeArg};

/// A type-level argument, as an application argument.
pub(super) fn type_arg(a: &TypeArg) -> String {
    match a {
        TypeArg::Nat(n) => AtomicNat(n).to_string(),
        TypeArg::AddrSpace(s) => s.to_string(),
        TypeArg::Data(d) => {
            let s = d.to_string();
            if matches!(lex(&s).as_deref(), Ok([(Token::Ident(_), _)])) {
                s
            } else {
                format!("({s})")
            }
        }
        TypeArg::NatToNat(NatToNat::Var(x)) | TypeArg::NatToData(NatToData::Var(x)) => {
            x.to_string()
        }
        TypeArg::NatToNat(NatToNat::Lambda(x, body)) => format!("(fun {} => {body})", x.name()),
        TypeArg::NatToData(NatToData::Lambda(x, body)) => format!("(fun {} => {body})", x.name()),
    }
}

/// A literal and its precedence (negative numbers are unary expressions).
pub(super) fn literal(l: &Literal) -> (String, u8) {
    match l {
        Literal::Bool(b) => (b.to_string(), ATOM),
        Literal::Int(v, t) if t.is_float() => float(*v as f64, *t),
        Literal::Int(v, t) => {
            let suffix = match t {
                ScalarType::Int | ScalarType::Bool => "",
                t => t.name(),
            };
            (format!("{v}{suffix}"), if *v < 0 { UNARY } else { ATOM })
        }
        Literal::Float(v, t) => float(*v, *t),
        Literal::Nat(n) => (format!("({n} : natType)"), ATOM),
    }
}

/// A float literal that reads back as the same value of type `t`: always with a
/// `.`, and the suffix `f` for `f32`, none for `f64`, `f16` for `f16`, `bf16` for `bf16`.
fn float(v: f64, t: ScalarType) -> (String, u8) {
    let suffix = match t {
        ScalarType::F32 => "f",
        ScalarType::F16 => "f16",
        ScalarType::Bf16 => "bf16",
        _ => "",
    };
    if !v.is_finite() {
        let name = if v.is_nan() { "nan" } else { "inf" };
        let sign = if v < 0.0 { "-" } else { "" };
        let prec = if sign.is_empty() { ATOM } else { UNARY };
        return (format!("{sign}{name}{suffix}"), prec);
    }
    // `Debug` prints the shortest text that reads back as the same value.
    let mut text = match t {
        ScalarType::F32 => format!("{:?}", v as f32),
        ScalarType::F16 => format!("{:?}", crate::interp::halfs::f16_from_f64(v).to_f32()),
        ScalarType::Bf16 => format!("{:?}", crate::interp::halfs::bf16_from_f64(v).to_f32()),
        _ => format!("{v:?}"),
    };
    if !text.contains('.') {
        match text.find(['e', 'E']) {
            Some(i) => text.insert_str(i, ".0"),
            None => text.push_str(".0"),
        }
    }
    let prec = if text.starts_with('-') { UNARY } else { ATOM };
    (format!("{text}{suffix}"), prec)
}
