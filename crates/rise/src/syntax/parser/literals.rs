//! Numeric literals: `123`, `123u16`, `1.5`, `1.5f`, `2e3f16`, checked against the range of
//! their type.

use crate::expr::Literal;
use crate::types::ScalarType;

/// An integer literal `123` or `123u16` (the lexer guarantees digits and a known suffix).
pub(super) fn int_literal(text: &str, negative: bool) -> Result<Literal, String> {
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, suffix) = text.split_at(digits_end);
    let ty = if suffix.is_empty() {
        ScalarType::Int
    } else {
        ScalarType::from_name(suffix).ok_or_else(|| format!("unknown literal suffix `{suffix}`"))?
    };
    let shown = if negative {
        format!("-{text}")
    } else {
        text.to_string()
    };
    let magnitude: i128 = digits.parse().map_err(|_| {
        format!(
            "integer literal `{shown}` is out of the range of `{}`",
            ty.name()
        )
    })?;
    let value = if negative { -magnitude } else { magnitude };
    let (lo, hi) = match ty {
        // Unsuffixed literals also stand for natural numbers (`split 32`): the full
        // 64-bit range is accepted here and the type checker narrows it.
        ScalarType::Int => (i64::MIN.into(), i64::MAX.into()),
        // Literals are stored as `i64`.
        ScalarType::U64 => (0, i64::MAX.into()),
        _ => ty
            .int_range()
            .ok_or_else(|| format!("`{suffix}` is not an integer type"))?,
    };
    match i64::try_from(value) {
        Ok(v) if (lo..=hi).contains(&value) => Ok(Literal::Int(v, ty)),
        _ => Err(format!(
            "integer literal `{shown}` is out of the range of `{}` ({lo} to {hi})",
            ty.name()
        )),
    }
}

/// A float literal `1.5` (f64), `1.5f` (f32), `1.5f16`, `1.5bf16`, `2e3f32`; a 16-bit one
/// is read as an `f64` and rounded once.
pub(super) fn float_literal(text: &str, negative: bool) -> Result<Literal, String> {
    let (num, ty) = [
        ("bf16", ScalarType::Bf16),
        ("f16", ScalarType::F16),
        ("f32", ScalarType::F32),
        ("f64", ScalarType::F64),
        ("f", ScalarType::F32),
    ]
    .into_iter()
    .find_map(|(s, t)| text.strip_suffix(s).map(|n| (n, t)))
    .unwrap_or((text, ScalarType::F64));
    let shown = if negative {
        format!("-{text}")
    } else {
        text.to_string()
    };
    let bad = || format!("float literal `{shown}` is not a valid `{}`", ty.name());
    let value: f64 = match ty {
        ScalarType::F16 => {
            crate::interp::halfs::f16_from_f64(num.parse().map_err(|_| bad())?).to_f64()
        }
        ScalarType::Bf16 => {
            crate::interp::halfs::bf16_from_f64(num.parse().map_err(|_| bad())?).to_f64()
        }
        ScalarType::F32 => f64::from(num.parse::<f32>().map_err(|_| bad())?),
        _ => num.parse::<f64>().map_err(|_| bad())?,
    };
    if !value.is_finite() {
        return Err(format!(
            "float literal `{shown}` is out of the range of `{}`",
            ty.name()
        ));
    }
    Ok(Literal::Float(if negative { -value } else { value }, ty))
}
