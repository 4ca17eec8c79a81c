//! shine's own single-precision math kernels for C and OpenMP: `exp`, `log`, `tanh` and `erf`
//! of `float` as branch-free `static inline` C functions (`shine_expf`, ...) that gcc inlines
//! into the loops calling them and vectorizes, without `-ffast-math` (glibc's scalar `expf`
//! keeps a loop scalar, and its vector variants need `-fno-math-errno`).
//!
//! Each kernel is a range reduction, a polynomial fitted for the reduced range (near-minimax,
//! coefficients rounded to `float` one at a time and the rest refitted) and fix-ups by selects
//! for NaN, infinities, overflow, underflow and subnormal inputs and results. Measured against
//! the correctly rounded value on every 7th `float` and at the edge values, each is within
//! [`ULP_BOUND`] (`docs/semantics.md`; tested by `tests/vecmath.rs` and the CLI's
//! `vecmath_cli.rs`). With `-ffast-math` (`__FAST_MATH__`) the names stand for libm's
//! functions, which gcc then vectorizes through libmvec, as before.
//!
//! The C text lives in `vecmath/*.c`; [`prelude`] emits only what the module calls.

use rise::primitives::MathFn;

/// The largest distance, in units in the last place, of a kernel's result from the
/// correctly rounded value (the interpreter's, which is correctly or nearly correctly rounded).
pub const ULP_BOUND: u32 = 2;

/// The distance of two floats in units in the last place, the measure of [`ULP_BOUND`]: the
/// number of floats between them (0 for two NaNs, `u32::MAX` for a NaN against a number).
pub fn ulp_distance(a: f32, b: f32) -> u32 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u32::MAX
        };
    }
    // the floats in order as integers: negative ones mirrored below zero
    let key = |x: f32| {
        let u = x.to_bits();
        if u >> 31 == 1 {
            -i64::from(u & 0x7fff_ffff)
        } else {
            i64::from(u)
        }
    };
    u32::try_from((key(a) - key(b)).unsigned_abs()).unwrap_or(u32::MAX)
}

/// The bit-cast helpers the kernels share.
const BITS: &str = include_str!("vecmath/bits.c");

/// One kernel: the math function, its C name, its text and the kernels it calls.
struct Kernel {
    f: MathFn,
    name: &'static str,
    libm: &'static str,
    text: &'static str,
    calls: &'static [MathFn],
}

const KERNELS: &[Kernel] = &[
    Kernel {
        f: MathFn::ExpE,
        name: "shine_expf",
        libm: "expf",
        text: include_str!("vecmath/exp.c"),
        calls: &[],
    },
    Kernel {
        f: MathFn::Log,
        name: "shine_logf",
        libm: "logf",
        text: include_str!("vecmath/log.c"),
        calls: &[],
    },
    Kernel {
        f: MathFn::Tanh,
        name: "shine_tanhf",
        libm: "tanhf",
        text: include_str!("vecmath/tanh.c"),
        calls: &[MathFn::ExpE],
    },
    Kernel {
        f: MathFn::Erf,
        name: "shine_erff",
        libm: "erff",
        text: include_str!("vecmath/erf.c"),
        calls: &[MathFn::ExpE],
    },
];

fn kernel(f: MathFn) -> Option<&'static Kernel> {
    KERNELS.iter().find(|k| k.f == f)
}

/// The math functions of `float` that have a kernel here, in the order [`prelude`] emits them.
pub fn functions() -> impl Iterator<Item = MathFn> {
    KERNELS.iter().map(|k| k.f)
}

/// The C name of `f`'s `float` kernel (`shine_expf`), if it has one.
pub fn c_name(f: MathFn) -> Option<&'static str> {
    kernel(f).map(|k| k.name)
}

/// The math functions of `float` a module calls (those with a kernel here).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Used(std::collections::BTreeSet<MathFn>);

impl Used {
    /// Notes a call of `f` on `float`s.
    pub fn note(&mut self, f: MathFn) {
        if kernel(f).is_some() {
            self.0.insert(f);
        }
    }

    /// Whether `f`'s kernel is needed, directly or by another kernel used.
    fn needs(&self, f: MathFn) -> bool {
        self.0
            .iter()
            .any(|&g| g == f || kernel(g).is_some_and(|k| k.calls.contains(&f)))
    }
}

/// The C lines that define the kernels `used` needs (empty when none): the kernels without
/// `-ffast-math`, macros naming libm's functions with it.
pub fn prelude(used: &Used) -> Vec<String> {
    let needed: Vec<&Kernel> = KERNELS.iter().filter(|k| used.needs(k.f)).collect();
    if needed.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        "// float math: shine's branch-free kernels (IEEE, within 2 ulp), libm's with fast math"
            .to_string(),
        "#ifndef __FAST_MATH__".to_string(),
        BITS.trim_end().to_string(),
    ];
    out.extend(needed.iter().map(|k| k.text.trim_end().to_string()));
    out.push("#else".to_string());
    out.extend(
        needed
            .iter()
            .map(|k| format!("#define {} {}", k.name, k.libm)),
    );
    out.push("#endif".to_string());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prelude_holds_what_is_used_and_what_that_calls() {
        assert!(prelude(&Used::default()).is_empty());
        let mut used = Used::default();
        used.note(MathFn::Sqrt);
        assert!(prelude(&used).is_empty());
        used.note(MathFn::Tanh);
        let text = prelude(&used).join("\n");
        assert!(text.contains("static inline float shine_tanhf(float x)"));
        assert!(text.contains("static inline float shine_expf(float x)"));
        assert!(!text.contains("shine_logf"));
        assert!(text.contains("#define shine_tanhf tanhf"));
    }

    #[test]
    fn names_are_reserved_for_shine() {
        for f in functions() {
            assert!(c_name(f).is_some_and(|n| n.starts_with("shine_")));
        }
        assert_eq!(c_name(MathFn::Sqrt), None);
    }
}
