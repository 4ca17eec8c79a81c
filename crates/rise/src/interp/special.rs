//! Math functions that Rust's standard library lacks (`erf`, `erfc`) or computes
//! by textbook formulas that lose accuracy (`asinh`, `acosh`, `atanh`: in single
//! precision, and in double precision near 1 and above `f64::MAX / 2`), written
//! here in double precision for the math rows of the primitive table
//! ([`crate::primitives::MathFn`]). Single-precision operands are computed through
//! them and rounded once ([`ViaF64`]), which makes those results correctly
//! rounded but for rare double roundings.
//!
//! Accuracy in double precision, the largest error measured against mpmath (50
//! digits) on 100 000 operands spread over each range, and checked by this
//! module's tests on known values: `erf` within 2 ulps, `erfc` within 4 (the
//! products that follow the continued fraction round several times), `acosh`
//! within 2, `asinh` and `atanh` within 1. (C's libraries promise as much: CUDA
//! erf 2, erfc 5; glibc a few.)
//!
//! `erf` and `erfc` (Abramowitz & Stegun 7.1.5 and 7.1.14):
//! * `|x| < 0.75`: the Maclaurin series
//!   `erf x = 2/√π · Σₙ (-1)ⁿ x²ⁿ⁺¹ / (n! (2n+1))`, 16 terms (the first neglected
//!   one is below 2⁻⁵⁶ of the sum), summed by Horner's rule from the smallest;
//!   `erfc x = 1 - erf x` (at least 0.28: no cancellation).
//! * `|x| ≥ 0.75`: the continued fraction of `erfc` in its even (Jacobi) form,
//!   `erfc x = 2x e^(-x²)/√π / (2x²+1 - 1·2/(2x²+5 - 3·4/(2x²+9 - ...)))`,
//!   evaluated from a depth that shrinks with `x²` (200 terms at 0.75, 35 at 2,
//!   10 at 10); `e^(-x²)` with `x²` split exactly in two (so that its error is not
//!   multiplied by `x²`); `erf x = 1 - erfc x` there (at least 0.71), and the odd
//!   and even symmetries `erf(-x) = -erf x`, `erfc(-x) = 2 - erfc x`.
//!
//! The inverse hyperbolic functions by the identities that avoid cancellation
//! and overflow (as 4.3 BSD and fdlibm compute them):
//! `asinh x = ln(x + √(x²+1))` as `log1p(x + x²/(1 + √(1+x²)))` up to 2,
//! `ln(2x + 1/(x + √(x²+1)))` up to 2²⁸ and `ln x + ln 2` beyond;
//! `acosh x = ln(x + √(x²-1))` as `log1p(t + √(2t + t²))` with `t = x - 1` up to 2,
//! `ln(2x - 1/(x + √(x²-1)))` up to 2²⁸ and `ln x + ln 2` beyond;
//! `atanh x = ½ log1p(2x / (1-x))`, written `½ log1p(2x + 2x²/(1-x))` below ½.

use std::f64::consts::{FRAC_2_SQRT_PI, LN_2};

/// A float type whose math functions may be computed in double precision and
/// rounded once to it.
pub trait ViaF64: Copy {
    /// `f` of `self`, computed in `f64` and rounded to `Self`.
    fn via_f64(self, f: fn(f64) -> f64) -> Self;
}

impl ViaF64 for f64 {
    fn via_f64(self, f: fn(f64) -> f64) -> f64 {
        f(self)
    }
}

impl ViaF64 for f32 {
    fn via_f64(self, f: fn(f64) -> f64) -> f32 {
        f(f64::from(self)) as f32
    }
}

/// Where the Maclaurin series of `erf` gives way to the continued fraction.
const SERIES_BELOW: f64 = 0.75;

/// The error function, `erf x = 2/√π ∫₀ˣ e^(-t²) dt` (see the module doc).
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    if a < SERIES_BELOW {
        return erf_series(x);
    }
    // erfc(6) < 2^-54: 1 - erfc rounds to 1 (and infinities are ±1)
    let r = if a >= 6.0 {
        1.0
    } else {
        1.0 - erfc_fraction(a)
    };
    r.copysign(x)
}

/// The complementary error function, `erfc x = 1 - erf x`, without the
/// cancellation of that difference (see the module doc).
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    if a < SERIES_BELOW {
        return 1.0 - erf_series(x);
    }
    // erfc(27.3) is below the smallest subnormal (and erfc(∞) is 0)
    let r = if a >= 27.3 { 0.0 } else { erfc_fraction(a) };
    if x < 0.0 {
        2.0 - r
    } else {
        r
    }
}

/// The coefficients of the Maclaurin series of `erf` divided by `2/√π`: that of
/// `x^(2n+1)` is `(-1)^n / (n! (2n+1))`, 16 of them (`n!` is exact up to `18!`).
const ERF_SERIES: [f64; 16] = {
    let mut c = [0.0; 16];
    let (mut n, mut factorial) = (0, 1.0);
    while n < c.len() {
        if n > 0 {
            factorial *= n as f64;
        }
        let v = 1.0 / (factorial * (2 * n + 1) as f64);
        c[n] = if n % 2 == 0 { v } else { -v };
        n += 1;
    }
    c
};

/// `erf x` for `|x| < 0.75` by its Maclaurin series (Horner's rule in `x²`).
fn erf_series(x: f64) -> f64 {
    let x2 = x * x;
    let sum = ERF_SERIES.iter().rev().fold(0.0, |sum, c| sum * x2 + c);
    FRAC_2_SQRT_PI * (x * sum)
}

/// `erfc a` for `0.75 <= a < 27.3` by the continued fraction (its even form).
fn erfc_fraction(a: f64) -> f64 {
    let z = 2.0 * a * a;
    // 0.75: 200 terms; 1: 116; 2: 35; 10: 10 (measured from 0.75 to 4.75: the
    // fraction is within 1.2 ulps, and off by 3 with 80 / a² in place of 108 / a²)
    let depth = (8.0 + 108.0 / (a * a)).ceil() as u32;
    let mut t = 0.0;
    for k in (1..=depth).rev() {
        let k = f64::from(k);
        t = (2.0 * k - 1.0) * (2.0 * k) / (z + 4.0 * k + 1.0 - t);
    }
    let ratio = 2.0 * a / (z + 1.0 - t);
    FRAC_2_SQRT_PI * 0.5 * ratio * exp_neg_square(a)
}

/// `e^(-a²)`, with `a²` split into `hi + lo` exactly (a fused multiply-add gives
/// the rounding error of the square), as `e^(-hi) · (1 - lo)`.
fn exp_neg_square(a: f64) -> f64 {
    let hi = a * a;
    let lo = a.mul_add(a, -hi);
    let e = (-hi).exp();
    e.mul_add(-lo, e)
}

/// The inverse hyperbolic sine (see the module doc).
pub fn asinh(x: f64) -> f64 {
    let a = x.abs();
    if !a.is_finite() || a < TWO_POW_M28 {
        return x; // NaN, ±∞, and x where x³/6 is below half an ulp of x
    }
    let r = if a > TWO_POW_28 {
        a.ln() + LN_2
    } else if a > 2.0 {
        (2.0 * a + 1.0 / ((a * a + 1.0).sqrt() + a)).ln()
    } else {
        let t = a * a;
        (a + t / (1.0 + (1.0 + t).sqrt())).ln_1p()
    };
    r.copysign(x)
}

/// The inverse hyperbolic cosine (NaN below 1; see the module doc).
pub fn acosh(x: f64) -> f64 {
    if x.is_nan() || x < 1.0 {
        return f64::NAN;
    }
    if x > TWO_POW_28 {
        x.ln() + LN_2
    } else if x > 2.0 {
        (2.0 * x - 1.0 / (x + (x * x - 1.0).sqrt())).ln()
    } else {
        let t = x - 1.0;
        (t + (2.0 * t + t * t).sqrt()).ln_1p()
    }
}

/// The inverse hyperbolic tangent (±∞ at ±1, NaN beyond; see the module doc).
pub fn atanh(x: f64) -> f64 {
    let a = x.abs();
    if a < TWO_POW_M28 {
        return x; // and x³/3 is below half an ulp of x
    }
    if a.is_nan() || a > 1.0 {
        return f64::NAN;
    }
    let r = if a < 0.5 {
        let t = a + a;
        0.5 * (t + t * a / (1.0 - a)).ln_1p()
    } else {
        0.5 * ((a + a) / (1.0 - a)).ln_1p()
    };
    r.copysign(x)
}

const TWO_POW_28: f64 = 268_435_456.0;
const TWO_POW_M28: f64 = 1.0 / TWO_POW_28;

#[cfg(test)]
mod tests {
    use super::*;

    /// Units in the last place between two doubles of the same sign.
    fn ulps(a: f64, b: f64) -> u64 {
        if a == b {
            return 0;
        }
        let key = |x: f64| {
            let i = x.to_bits() as i64;
            if i < 0 {
                i64::MIN - i
            } else {
                i
            }
        };
        key(a).abs_diff(key(b))
    }

    /// `(x, f(x))` with `f(x)` from mpmath at 50 digits, rounded to the nearest double.
    fn check(name: &str, f: fn(f64) -> f64, table: &[(f64, f64)], bound: u64) {
        for &(x, want) in table {
            let got = f(x);
            assert!(
                ulps(got, want) <= bound,
                "{name}({x:e}) = {got:e}, want {want:e} ({} ulps)",
                ulps(got, want)
            );
        }
    }

    #[test]
    fn special_values() {
        for f in [erf, erfc, asinh, acosh, atanh] {
            assert!(f(f64::NAN).is_nan());
        }
        assert_eq!(erf(f64::INFINITY), 1.0);
        assert_eq!(erf(f64::NEG_INFINITY), -1.0);
        assert_eq!(erf(0.0), 0.0);
        assert!(erf(-0.0).is_sign_negative());
        assert_eq!(erfc(f64::INFINITY), 0.0);
        assert_eq!(erfc(f64::NEG_INFINITY), 2.0);
        assert_eq!(erfc(0.0), 1.0);
        assert_eq!(erfc(30.0), 0.0);
        assert_eq!(erf(1e-300), 1e-300 * FRAC_2_SQRT_PI);
        assert_eq!(asinh(f64::NEG_INFINITY), f64::NEG_INFINITY);
        assert!(asinh(-0.0).is_sign_negative());
        assert_eq!(acosh(1.0), 0.0);
        assert_eq!(acosh(f64::INFINITY), f64::INFINITY);
        assert!(acosh(0.5).is_nan());
        assert_eq!(atanh(1.0), f64::INFINITY);
        assert_eq!(atanh(-1.0), f64::NEG_INFINITY);
        assert!(atanh(1.5).is_nan());
        assert!(atanh(-0.0).is_sign_negative());
    }

    // mpmath (50 digits) rounded to the nearest double; the operands include the
    // worst cases of the measurement the module doc reports, the ends of each
    // method's range and both signs.
    const ERF: &[(f64, f64)] = &[
        (1e-300, 1.1283791670955126e-300),
        (1e-10, 1.1283791670955126e-10),
        (0.1, 0.1124629160182849),
        (0.25, 0.27632639016823696),
        (0.41201242176639763, 0.4398869209723597),
        (0.5, 0.5204998778130465),
        (0.7, 0.6778011938374184),
        (0.7499999999999999, 0.7111556336535151),
        (0.75, 0.7111556336535151),
        (1.0, 0.8427007929497149),
        (1.5, 0.9661051464753108),
        (2.0, 0.9953222650189527),
        (2.5, 0.999593047982555),
        (3.0, 0.9999779095030014),
        (4.0, 0.9999999845827421),
        (5.0, 0.9999999999984626),
        (5.9, 0.9999999999999999),
        (-0.3, -0.3286267594591274),
        (-1.25, -0.9229001282564583),
        (-3.5, -0.9999992569016276),
    ];
    const ERFC: &[(f64, f64)] = &[
        (1e-20, 1.0),
        (0.1, 0.887537083981715),
        (0.5, 0.4795001221869535),
        (0.7499999999999999, 0.2888443663464849),
        (0.75, 0.28884436634648486),
        (0.8, 0.2578990352923395),
        (1.0, 0.15729920705028513),
        (1.5, 0.033894853524689274),
        (2.0, 0.004677734981047266),
        (2.8491270950659864, 5.5949332740734816e-05),
        (3.0, 2.209049699858544e-05),
        (4.5, 1.9661604415428876e-10),
        (6.0, 2.1519736712498913e-17),
        (10.0, 2.088487583762545e-45),
        (15.0, 7.212994172451207e-100),
        (20.0, 5.395865611607901e-176),
        (26.0, 5.663192408856143e-296),
        (-0.2, 1.2227025892104784),
        (-1.0, 1.8427007929497148),
        (-2.5, 1.999593047982555),
        (-6.0, 2.0),
    ];
    const ASINH: &[(f64, f64)] = &[
        (1e-300, 1e-300),
        (1e-09, 1e-09),
        (0.001, 0.0009999998333334083),
        (0.5, 0.48121182505960347),
        (1.0, 0.881373587019543),
        (1.9, 1.3979983651114343),
        (2.0, 1.4436354751788103),
        (2.5, 1.6472311463710958),
        (10.0, 2.99822295029797),
        (1000000.0, 14.50865773852447),
        (300000000.0, 20.21244021318042),
        (7.680201838817194e+223, 516.2082687461424),
        (1.7e+308, 710.4199840737882),
        (-0.75, -LN_2), // asinh(-3/4) = -ln 2
        (-40.0, -4.382182848065498),
    ];
    const ACOSH: &[(f64, f64)] = &[
        (1.0000000000000002, 2.1073424255447014e-08),
        (1.0000001, 0.0004472135919037347),
        (1.0019457934095544, 0.06237247338539873),
        (1.1, 0.4435682543851154),
        (1.5, 0.9624236501192069),
        (2.0, 1.3169578969248168),
        (2.5, 1.566799236972411),
        (10.0, 2.993222846126381),
        (1000000.0, 14.508657738523969),
        (300000000.0, 20.21244021318042),
        (1e+100, 230.95165647996453),
        (1.7e+308, 710.4199840737882),
    ];
    const ATANH: &[(f64, f64)] = &[
        (1e-300, 1e-300),
        (7.696656432331098e-09, 7.696656432331098e-09),
        (0.1, 0.10033534773107558),
        (0.3, 0.3095196042031117),
        (0.49999999999999994, 0.5493061443340548),
        (0.5, 0.5493061443340549),
        (0.75, 0.9729550745276566),
        (0.9, 1.4722194895832204),
        (0.999, 3.8002011672501994),
        (0.9999999999999999, 18.714973875118524),
        (-0.25, -0.25541281188299536),
        (-0.6, -LN_2), // atanh(-3/5) = -ln 2
    ];

    #[test]
    fn known_values_within_the_stated_ulps() {
        check("erf", erf, ERF, 2);
        check("erfc", erfc, ERFC, 4);
        check("asinh", asinh, ASINH, 1);
        check("acosh", acosh, ACOSH, 2);
        check("atanh", atanh, ATANH, 1);
    }

    #[test]
    fn single_precision_rounds_the_double_result_once() {
        // the nearest f32 to mpmath's value (std's f32 `acosh` overflows there: ∞)
        assert_eq!(0.5f32.via_f64(erf), 0.520_499_9_f32);
        assert_eq!(3.0e38f32.via_f64(acosh), 89.289_99_f32);
        assert_eq!((-0.5f32).via_f64(atanh), -0.549_306_15_f32);
    }
}
