//! Checking results against a reference within a tolerance.

use std::fmt;

/// How far an actual value may be from the expected one: `|a - e| <= atol + rtol * |e|`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
}

impl Tolerance {
    /// For `f32` results: schedules reorder reductions (tree reductions on GPUs, split
    /// sums), compilers fuse `a * b + c`, and `--fast-math` reassociates.
    pub fn for_f32() -> Tolerance {
        Tolerance {
            rtol: 1e-3,
            atol: 1e-4,
        }
    }

    /// For `f64` results (see [`Tolerance::for_f32`]).
    pub fn for_f64() -> Tolerance {
        Tolerance {
            rtol: 1e-9,
            atol: 1e-12,
        }
    }

    /// Exact equality, for integers and booleans.
    pub fn exact() -> Tolerance {
        Tolerance {
            rtol: 0.0,
            atol: 0.0,
        }
    }

    /// Whether `actual` is close enough to `expected`; NaN equals NaN, and an infinity
    /// equals only itself.
    pub fn accepts(&self, expected: f64, actual: f64) -> bool {
        expected == actual
            || (expected.is_nan() && actual.is_nan())
            || (expected.is_finite()
                && actual.is_finite()
                && (actual - expected).abs() <= self.atol + self.rtol * expected.abs())
    }
}

/// Why [`compare`] rejected a result.
#[derive(Clone, Debug, PartialEq)]
pub enum Mismatch {
    /// The two sequences have different lengths.
    Length {
        /// Number of expected values.
        expected: usize,
        /// Number of actual values.
        actual: usize,
    },
    /// Some values are not within the tolerance.
    Values {
        /// Index of the first value out of tolerance.
        index: usize,
        /// The expected value there.
        expected: f64,
        /// The actual value there.
        actual: f64,
        /// How many values are out of tolerance.
        count: usize,
        /// How many values were compared.
        len: usize,
        /// The tolerance used.
        tolerance: Tolerance,
    },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::Length { expected, actual } => {
                write!(f, "expected {expected} values, got {actual}")
            }
            Mismatch::Values {
                index,
                expected,
                actual,
                count,
                len,
                tolerance,
            } => write!(
                f,
                "{count} of {len} values differ (rtol {}, atol {}); the first at index {index}: \
                 expected {expected}, got {actual}",
                tolerance.rtol, tolerance.atol
            ),
        }
    }
}

impl std::error::Error for Mismatch {}

/// Checks that `actual` matches `expected` element-wise within `tol`.
pub fn compare(expected: &[f64], actual: &[f64], tol: Tolerance) -> Result<(), Mismatch> {
    if expected.len() != actual.len() {
        return Err(Mismatch::Length {
            expected: expected.len(),
            actual: actual.len(),
        });
    }
    let mut bad = expected
        .iter()
        .zip(actual)
        .enumerate()
        .filter(|(_, (e, a))| !tol.accepts(**e, **a));
    let Some((index, (&e, &a))) = bad.next() else {
        return Ok(());
    };
    Err(Mismatch::Values {
        index,
        expected: e,
        actual: a,
        count: 1 + bad.count(),
        len: expected.len(),
        tolerance: tol,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_tolerance() {
        assert_eq!(
            compare(&[1.0, 100.0], &[1.00005, 100.09], Tolerance::for_f32()),
            Ok(())
        );
        assert_eq!(compare(&[], &[], Tolerance::exact()), Ok(()));
        let special = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0];
        assert_eq!(compare(&special, &special, Tolerance::exact()), Ok(()));
        assert_eq!(compare(&[0.0], &[-0.0], Tolerance::exact()), Ok(()));
    }

    #[test]
    fn reports_first_mismatch_and_count() {
        let e = [1.0, 2.0, 3.0, 4.0];
        let a = [1.0, 2.5, 3.0, 5.0];
        let m = compare(&e, &a, Tolerance::for_f32()).unwrap_err();
        let Mismatch::Values {
            index,
            expected,
            actual,
            count,
            len,
            ..
        } = m.clone()
        else {
            panic!("{m:?}")
        };
        assert_eq!((index, expected, actual, count, len), (1, 2.0, 2.5, 2, 4));
        assert!(m.to_string().contains("2 of 4 values differ"), "{m}");
        assert!(
            m.to_string().contains("index 1: expected 2, got 2.5"),
            "{m}"
        );
    }

    #[test]
    fn nan_and_infinity_are_not_numbers() {
        let tol = Tolerance::for_f64();
        assert!(compare(&[1.0], &[f64::NAN], tol).is_err());
        assert!(compare(&[f64::NAN], &[1.0], tol).is_err());
        assert!(compare(&[f64::INFINITY], &[f64::NEG_INFINITY], tol).is_err());
        assert!(compare(&[1e300], &[f64::INFINITY], tol).is_err());
    }

    #[test]
    fn tolerance_bounds() {
        let t = Tolerance {
            rtol: 0.1,
            atol: 1.0,
        };
        assert!(t.accepts(10.0, 12.0)); // 2 <= 1 + 1
        assert!(!t.accepts(10.0, 12.01));
        assert!(!Tolerance::exact().accepts(1.0, 1.0 + f64::EPSILON));
        assert_eq!(
            compare(&[1.0], &[1.0, 2.0], t),
            Err(Mismatch::Length {
                expected: 1,
                actual: 2
            })
        );
    }
}
