//! Correctly rounded conversions to the 16-bit float types `f16` (IEEE binary16) and
//! `bf16` (bfloat16: `f32`'s exponent, 8 significant bits).
//!
//! Every conversion rounds once, to nearest with ties to even. A value wider than `f32`
//! (an `f64`, a 64-bit integer) is first rounded to `f32` *to odd* (truncated, with the
//! lowest bit set when anything was cut off), which keeps the one bit below the 16-bit
//! type's last bit and whether anything lies below it; rounding that `f32` to nearest
//! even then gives the correctly rounded result (`f32` has more than 2 bits beyond
//! either 16-bit type). The generated code does the same steps (see `codegen`'s half
//! helpers), so the interpreter and compiled code agree bit for bit.
//!
//! The `half` crate's own `from_f64` is not used: it drops the lowest 32 bits of the
//! `f64` before rounding (or, on x86 with F16C, rounds to `f32` first), so a value just
//! above a tie can round down.

use half::{bf16, f16};

/// `x` rounded to `f32` towards the neighbour whose last bit is odd, when `x` is not an
/// `f32` (NaN stays NaN, infinities stay infinite, beyond `f32::MAX` gives `f32::MAX`).
pub fn f32_round_to_odd(x: f64) -> f32 {
    let f = x as f32;
    let bits = f.to_bits();
    if f.is_nan() || f64::from(f) == x || bits & 1 == 1 {
        return f;
    }
    // `f` is the even neighbour of `x`; the odd one lies on the other side of `x`.
    if f64::from(f).abs() > x.abs() {
        f32::from_bits(bits - 1)
    } else {
        f32::from_bits(bits + 1)
    }
}

/// An integer rounded to `f32` to odd (exact below 2^24): the magnitude is shifted right
/// until it fits 24 bits, each bit shifted out or-ed into the lowest.
pub fn f32_round_to_odd_int(v: i128) -> f32 {
    let mut m = v.unsigned_abs();
    let mut scale = 1.0f64;
    while m >> 24 != 0 {
        m = (m >> 1) | (m & 1);
        scale *= 2.0;
    }
    // `m < 2^24` and `scale` a power of two: both products are exact.
    let magnitude = (m as f64 * scale) as f32;
    if v < 0 {
        -magnitude
    } else {
        magnitude
    }
}

/// `x` as the nearest `f16` (ties to even).
pub fn f16_from_f64(x: f64) -> f16 {
    f16::from_f32(f32_round_to_odd(x))
}

/// `x` as the nearest `bf16` (ties to even).
pub fn bf16_from_f64(x: f64) -> bf16 {
    bf16::from_f32(f32_round_to_odd(x))
}

/// The integer `v` as the nearest `f16` (ties to even; beyond 65519 it is infinite).
pub fn f16_from_int(v: i128) -> f16 {
    f16::from_f32(f32_round_to_odd_int(v))
}

/// The integer `v` as the nearest `bf16` (ties to even).
pub fn bf16_from_int(v: i128) -> bf16 {
    bf16::from_f32(f32_round_to_odd_int(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounds_ties_to_even() {
        // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: the even one is 1.
        assert_eq!(bf16_from_f64(1.0 + 1.0 / 256.0).to_bits(), 0x3f80);
        // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
        assert_eq!(bf16_from_f64(1.0 + 3.0 / 256.0).to_bits(), 0x3f82);
        // just above the tie rounds up, even when the excess is below f32's precision
        let above = 1.0 + 1.0 / 256.0 + 2f64.powi(-40);
        assert_eq!(bf16_from_f64(above).to_bits(), 0x3f81);
        assert_eq!(bf16::from_f32(above as f32).to_bits(), 0x3f80);
    }

    #[test]
    fn f16_rounds_once_from_f64() {
        // 1 + 2^-11 is the tie between 1 and 1 + 2^-10; a hair above it rounds up.
        assert_eq!(f16_from_f64(1.0 + 2f64.powi(-11)).to_bits(), 0x3c00);
        assert_eq!(
            f16_from_f64(1.0 + 2f64.powi(-11) + 2f64.powi(-45)).to_bits(),
            0x3c01
        );
        assert_eq!(f16_from_f64(65504.0).to_f64(), 65504.0);
        assert_eq!(f16_from_f64(65519.99).to_f64(), 65504.0);
        assert!(f16_from_f64(65520.0).is_infinite());
        assert!(f16_from_int(65520).is_infinite());
        assert_eq!(f16_from_int(-2049).to_f64(), -2048.0);
        assert_eq!(f16_from_int(2051).to_f64(), 2052.0);
    }

    #[test]
    fn bf16_overflows_to_infinity_and_keeps_nan() {
        assert_eq!(bf16_from_f64(3.3895313892515355e38).to_bits(), 0x7f7f);
        assert!(bf16_from_f64(3.4e38).is_infinite());
        assert!(bf16_from_f64(1e300).is_infinite());
        assert!(bf16_from_f64(-1e300).is_infinite());
        assert!(bf16_from_f64(f64::NAN).is_nan());
        assert!(bf16::from_f32(f32::NAN).is_nan());
        assert_eq!(bf16_from_f64(f64::INFINITY), bf16::INFINITY);
    }

    #[test]
    fn bf16_denormals() {
        // the smallest bf16 denormal is 2^-133; half of it ties to even (zero)
        let tiny = 2f64.powi(-133);
        assert_eq!(bf16_from_f64(tiny).to_bits(), 0x0001);
        assert_eq!(bf16_from_f64(tiny / 2.0).to_bits(), 0x0000);
        assert_eq!(bf16_from_f64(tiny * 1.5).to_bits(), 0x0002);
        assert_eq!(bf16_from_f64(-tiny / 2.0 * 1.01).to_bits(), 0x8001);
        assert_eq!(bf16_from_f64(1e-300).to_bits(), 0x0000);
    }

    #[test]
    fn bf16_from_large_integers_rounds_once() {
        // 2^60 + 2^52 + 1: just above the tie between 2^60 and 2^60 + 2^53; through f64
        // (which drops the 1) it would round down to the even 2^60.
        let v = (1i128 << 60) + (1 << 52) + 1;
        assert_eq!(bf16_from_int(v).to_f64(), ((1u64 << 60) + (1 << 53)) as f64);
        assert_eq!(
            bf16_from_int(-v).to_f64(),
            -(((1u64 << 60) + (1 << 53)) as f64)
        );
        assert_eq!(
            bf16_from_int((1 << 60) + (1 << 52)).to_f64(),
            (1u64 << 60) as f64
        );
        assert_eq!(bf16_from_int(257).to_f64(), 256.0);
        assert_eq!(bf16_from_int(259).to_f64(), 260.0);
        assert_eq!(bf16_from_int(u64::MAX.into()).to_f64(), 2f64.powi(64));
    }
}
