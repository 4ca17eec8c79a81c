//! shine's own single-precision math kernels for C and OpenMP: `exp`, `log`, `tanh`, `erf`,
//! `max` and `min` of `float` as branch-free `static inline` C functions (`shine_expf`, ...)
//! that gcc inlines into the loops calling them and vectorizes, without `-ffast-math` (glibc's
//! scalar `expf` keeps a loop scalar, its vector variants need `-fno-math-errno`, and its
//! `fmaxf` is a call). `max` and `min` of whole GCC vectors are macros of vector operations
//! ([`vector_name`]): a comparison mask and a select, where C would call `fmaxf` per lane.
//!
//! Each kernel is a range reduction, a polynomial fitted for the reduced range (near-minimax,
//! coefficients rounded to `float` one at a time and the rest refitted) and fix-ups by selects
//! for NaN, infinities, overflow, underflow and subnormal inputs and results. Measured against
//! the correctly rounded value on every 7th `float` and at the edge values, each is within
//! [`ULP_BOUND`] (`docs/semantics.md`; tested by `tests/vecmath.rs` and the CLI's
//! `vecmath_cli.rs`). With `-ffast-math` (`__FAST_MATH__`) the names stand for libm's
//! functions, which gcc then vectorizes through libmvec, as before.
//!
//! `max` and `min` are exact, C's `fmax` and `fmin`: the other operand where one is NaN; the
//! sign of a zero result is either operand's, as C leaves it.
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

/// One kernel: the math function (and another name of it: `fmax` is `max` of floats), its
/// C name, libm's name, its text and the kernels it calls.
struct Kernel {
    f: MathFn,
    alias: Option<MathFn>,
    name: &'static str,
    libm: &'static str,
    text: &'static str,
    calls: &'static [MathFn],
}

const KERNELS: &[Kernel] = &[
    Kernel {
        f: MathFn::ExpE,
        alias: None,
        name: "shine_expf",
        libm: "expf",
        text: include_str!("vecmath/exp.c"),
        calls: &[],
    },
    Kernel {
        f: MathFn::Log,
        alias: None,
        name: "shine_logf",
        libm: "logf",
        text: include_str!("vecmath/log.c"),
        calls: &[],
    },
    Kernel {
        f: MathFn::Tanh,
        alias: None,
        name: "shine_tanhf",
        libm: "tanhf",
        text: include_str!("vecmath/tanh.c"),
        calls: &[MathFn::ExpE],
    },
    Kernel {
        f: MathFn::Erf,
        alias: None,
        name: "shine_erff",
        libm: "erff",
        text: include_str!("vecmath/erf.c"),
        calls: &[MathFn::ExpE],
    },
    Kernel {
        f: MathFn::Max,
        alias: Some(MathFn::Fmax),
        name: "shine_fmaxf",
        libm: "fmaxf",
        text: include_str!("vecmath/fmax.c"),
        calls: &[],
    },
    Kernel {
        f: MathFn::Min,
        alias: Some(MathFn::Fmin),
        name: "shine_fminf",
        libm: "fminf",
        text: include_str!("vecmath/fmin.c"),
        calls: &[],
    },
];

/// The macros of `max` and `min` on whole vectors (any GCC vector type of `float` or `double`
/// lanes), the same with and without `-ffast-math`.
const VECTOR_MIN_MAX: &str = include_str!("vecmath/vminmax.c");

/// The C name of `f` on two whole vectors of floating-point lanes (`shine_vfmax`), for the
/// functions that have one (`max`, `fmax`, `min`, `fmin`); the others are computed lane by
/// lane.
pub fn vector_name(f: MathFn) -> Option<&'static str> {
    match f {
        MathFn::Max | MathFn::Fmax => Some("shine_vfmax"),
        MathFn::Min | MathFn::Fmin => Some("shine_vfmin"),
        _ => None,
    }
}

fn kernel(f: MathFn) -> Option<&'static Kernel> {
    KERNELS.iter().find(|k| k.f == f || k.alias == Some(f))
}

/// The math functions of `float` that have a kernel here, in the order [`prelude`] emits them.
pub fn functions() -> impl Iterator<Item = MathFn> {
    KERNELS.iter().map(|k| k.f)
}

/// The C name of `f`'s `float` kernel (`shine_expf`), if it has one.
pub fn c_name(f: MathFn) -> Option<&'static str> {
    kernel(f).map(|k| k.name)
}

/// The math functions of `float` a module calls (those with a kernel here), and whether it
/// calls a [`vector_name`] macro.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Used {
    scalar: std::collections::BTreeSet<MathFn>,
    vector: bool,
}

impl Used {
    /// Notes a call of `f` on `float`s.
    pub fn note(&mut self, f: MathFn) {
        if let Some(k) = kernel(f) {
            self.scalar.insert(k.f);
        }
    }

    /// Notes a call of `f` on whole vectors; its C name (the [`vector_name`] macro), if it
    /// has one.
    pub fn note_vector(&mut self, f: MathFn) -> Option<&'static str> {
        let name = vector_name(f)?;
        self.vector = true;
        Some(name)
    }

    /// Whether `f`'s kernel is needed, directly or by another kernel used.
    fn needs(&self, f: MathFn) -> bool {
        self.scalar
            .iter()
            .any(|&g| g == f || kernel(g).is_some_and(|k| k.calls.contains(&f)))
    }
}

/// The C lines that define the kernels `used` needs (empty when none): the kernels without
/// `-ffast-math`, macros naming libm's functions with it; then the vector macros, if used.
pub fn prelude(used: &Used) -> Vec<String> {
    let mut out = scalar_prelude(used);
    if used.vector {
        out.push(VECTOR_MIN_MAX.trim_end().to_string());
    }
    out
}

fn scalar_prelude(used: &Used) -> Vec<String> {
    let needed: Vec<&Kernel> = KERNELS.iter().filter(|k| used.needs(k.f)).collect();
    if needed.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        "// float math: shine's branch-free kernels (IEEE, within 2 ulp), libm's with fast math"
            .to_string(),
        "#ifndef __FAST_MATH__".to_string(),
    ];
    if needed.iter().any(|k| k.text.contains("shine_vm_")) {
        out.push(BITS.trim_end().to_string());
    }
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
        assert!(!text.contains("shine_vfmax"));
    }

    #[test]
    fn max_and_min_need_no_bit_casts_and_vectors_their_macros() {
        let mut used = Used::default();
        used.note(MathFn::Max);
        let text = prelude(&used).join("\n");
        assert!(text.contains("static inline float shine_fmaxf(float x, float y)"));
        assert!(text.contains("#define shine_fmaxf fmaxf"));
        assert!(!text.contains("shine_vm_float") && !text.contains("shine_vfmax"));
        used.note(MathFn::Fmax);
        assert_eq!(prelude(&used).join("\n"), text, "fmax is max");
        assert_eq!(used.note_vector(MathFn::Min), Some("shine_vfmin"));
        assert_eq!(used.note_vector(MathFn::ExpE), None);
        let text = prelude(&used).join("\n");
        assert!(text.contains("#define shine_vfmax(x, y)"));
        assert!(text.contains("#define shine_vfmin(x, y)"));
    }

    #[test]
    fn names_are_reserved_for_shine() {
        for f in functions() {
            assert!(c_name(f).is_some_and(|n| n.starts_with("shine_")));
        }
        assert_eq!(c_name(MathFn::Sqrt), None);
    }
}
