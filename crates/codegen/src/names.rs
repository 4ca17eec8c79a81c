//! Deterministic, C-safe names.
//!
//! DPIA names are unique but not necessarily valid C: they may contain
//! characters C does not allow, or be C keywords or names this code generator
//! uses itself (`malloc`, `int8_t`, a typedef). [`NameSet`] turns each name
//! into a valid C identifier, unique within the module, the same way every
//! time (the first occurrence keeps the sanitized name, later ones get `_2`,
//! `_3`, ...).

use std::collections::BTreeSet;

/// Besides C's reserved words and header types (`rise::foreign::C_RESERVED`): the
/// identifiers of the headers the generated code includes, and its own parameters.
const RESERVED: &[&str] = &[
    // stdlib.h, string.h, stdio.h, assert.h, errno.h
    "NULL", "malloc", "calloc", "free", "abort", "exit", "memcpy", "memset", "printf", "main",
    "errno", "assert",
    // names of the entry point's parameters and of the status flag
    "buffers", "sizes", "status",
];

/// Whether C (or a header the generated code includes) reserves `name`.
fn is_c_reserved(name: &str) -> bool {
    rise::foreign::C_RESERVED.contains(&name) || RESERVED.contains(&name)
}

/// Names of the other targets' languages and libraries that a name derived
/// from the program (a definition, a parameter, a variable) must not take,
/// whatever the target, so that a program gets the same names everywhere:
/// C++ keywords (CUDA), OpenCL C keywords, qualifiers and builtin functions,
/// CUDA builtins, and the C math library (an external function named `sin`
/// would replace libm's).
const TARGET_RESERVED: &str = "
    and asm catch class compl constexpr const_cast decltype delete dynamic_cast explicit
    export friend mutable namespace new noexcept not nullptr operator or private protected
    public reinterpret_cast static_assert static_cast template this thread_local throw try
    typeid typename using virtual wchar_t xor
    kernel global local constant private read_only write_only read_write
    __kernel __global __local __constant __private
    half uchar ushort uint ulong quad complex imaginary image1d_t image2d_t image3d_t
    sampler_t event_t ptrdiff_t intptr_t uintptr_t
    dot cross length distance normalize fast_length fast_distance fast_normalize
    sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh sinpi cospi tanpi
    asinpi acospi atanpi atan2pi sincos exp exp2 exp10 expm1 log log2 log10 log1p logb
    pow pown powr rootn sqrt rsqrt cbrt hypot fabs fmod fma fmin fmax fdim floor ceil
    round rint trunc nearbyint remainder remquo modf frexp ldexp ilogb nextafter copysign
    nan erf erfc tgamma lgamma lgamma_r fract mad mad24 mul24 mad_hi mad_sat mul_hi
    abs abs_diff add_sat sub_sat hadd rhadd clamp clz ctz popcount rotate upsample
    min max mix step smoothstep sign degrees radians select bitselect any all isnan isinf
    isfinite isnormal signbit isequal isnotequal isgreater isgreaterequal isless
    islessequal islessgreater isordered isunordered shuffle shuffle2 vec_step
    barrier mem_fence read_mem_fence write_mem_fence work_group_barrier
    async_work_group_copy wait_group_events prefetch
    get_global_id get_global_size get_local_id get_local_size get_group_id get_num_groups
    get_work_dim get_global_offset printf
    threadIdx blockIdx blockDim gridDim warpSize __syncthreads __shfl_sync
    atomicAdd atomicSub atomicMin atomicMax atomicExch atomicCAS
    floorf ceilf sqrtf expf logf powf fabsf fminf fmaxf sinf cosf tanf
    rsqrtf exp2f log2f tanhf atan2f fmaf
    acosf acoshf asinf asinhf atanf atanhf cbrtf copysignf cospif coshf erff erfcf erfinv
    erfinvf erfcinv erfcinvf erfcx erfcxf exp10f expm1f fdimf fmodf frexpf hypotf ilogbf
    j0 j0f j1 j1f jn jnf ldexpf lgammaf llrint llrintf llround llroundf log10f log1pf logbf
    lrint lrintf lround lroundf modff nanf nearbyintf nextafterf norm normf norm3d norm3df
    norm4d norm4df normcdf normcdff normcdfinv normcdfinvf powi powif rcbrt rcbrtf remainderf
    remquof rhypot rhypotf rintf rnorm rnormf rnorm3d rnorm3df rnorm4d rnorm4df roundf
    scalbln scalblnf scalbn scalbnf sincosf sincospi sincospif sinhf sinpif tgammaf truncf
    y0 y0f y1 y1f yn ynf cyl_bessel_i0 cyl_bessel_i0f cyl_bessel_i1 cyl_bessel_i1f
    saturate umin umax llmin llmax ullmin ullmax brev clzll ffs ffsll popc popcll
    mul64hi umul64hi mulhi umulhi rhadd urhadd uhadd byte_perm funnelshift_l funnelshift_r
";

/// Prefixes of builtin families: OpenCL `convert_T`, `as_T`, `vloadN`,
/// `vstoreN`, `atomic_*`, `native_*`, `half_*`, CUDA `make_T`, `__*`
/// intrinsics, and this code generator's own helpers and macros (`shine_`, `SHINE_`).
const RESERVED_PREFIXES: &[&str] = &[
    "convert_",
    "as_",
    "vload",
    "vstore",
    "atomic_",
    "atom_",
    "native_",
    "half_",
    "make_",
    "shine_",
    "SHINE_",
    "read_image",
    "write_image",
];

fn has_reserved_prefix(name: &str) -> bool {
    RESERVED_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Whether a name derived from the program must not be used as it is.
fn is_reserved(name: &str) -> bool {
    is_c_reserved(name)
        || TARGET_RESERVED.split_whitespace().any(|w| w == name)
        || has_reserved_prefix(name)
        || is_vector_type_name(name)
}

/// OpenCL and CUDA vector types: `float4`, `uchar16`, `longlong2`, `double3`, ...
pub(crate) fn is_vector_type_name(name: &str) -> bool {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let lanes = &name[base.len()..];
    let scalars = [
        "char",
        "uchar",
        "short",
        "ushort",
        "int",
        "uint",
        "long",
        "ulong",
        "float",
        "double",
        "half",
        "bool",
        "longlong",
        "ulonglong",
    ];
    !lanes.is_empty() && scalars.contains(&base)
}

/// The names of one C module: each distinct request gets a distinct,
/// valid C identifier.
#[derive(Clone, Debug, Default)]
pub struct NameSet {
    used: BTreeSet<String>,
}

impl NameSet {
    /// Marks `name` as taken (a name defined elsewhere, such as a typedef).
    pub fn reserve(&mut self, name: &str) {
        self.used.insert(name.to_string());
    }

    /// A fresh valid C identifier derived from `wanted`, a name that comes
    /// from the program: it is never a keyword, builtin or library name of
    /// any target (C, OpenCL C, CUDA C++).
    pub fn fresh(&mut self, wanted: &str) -> String {
        self.unique(wanted, is_reserved)
    }

    /// A fresh identifier for a name of this code generator's own (a typedef
    /// such as the C vector type `float4`): only C's reserved names are avoided.
    pub fn own(&mut self, wanted: &str) -> String {
        self.unique(wanted, is_c_reserved)
    }

    fn unique(&mut self, wanted: &str, reserved: impl Fn(&str) -> bool) -> String {
        let mut base = sanitize(wanted);
        // a suffix cannot take a name out of a family of builtins (`convert_x_2`,
        // `half_2`): a `u` in front does
        if has_reserved_prefix(&base) {
            base.insert(0, 'u');
        }
        let stem = if has_reserved_prefix(&format!("{base}_")) {
            format!("u{base}")
        } else {
            base.clone()
        };
        let mut name = base;
        let mut k = 2;
        while self.used.contains(&name) || reserved(&name) {
            name = format!("{stem}_{k}");
            k += 1;
        }
        self.used.insert(name.clone());
        name
    }
}

/// `wanted` with every character C does not allow replaced by `_`, and a
/// prefix where it would otherwise start with a digit or a reserved `_X`/`__`.
pub fn sanitize(wanted: &str) -> String {
    let mut s: String = wanted
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let reserved_prefix = s.starts_with("__")
        || (s.starts_with('_') && s[1..].starts_with(|c: char| c.is_ascii_uppercase()));
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) || reserved_prefix {
        s.insert(0, 'v');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_valid_unique_and_deterministic() {
        let mut ns = NameSet::default();
        assert_eq!(ns.fresh("x"), "x");
        assert_eq!(ns.fresh("x"), "x_2");
        assert_eq!(ns.fresh("int"), "int_2");
        assert_eq!(ns.fresh("a'b"), "a_b");
        assert_eq!(ns.fresh("1st"), "v1st");
        assert_eq!(ns.fresh("__x"), "v__x");
        assert_eq!(ns.fresh(""), "v");
        assert_eq!(ns.own("float4"), "float4");
        assert_eq!(ns.own("float4"), "float4_2");
        assert_eq!(ns.fresh("float4"), "float4_3");
    }

    #[test]
    fn every_math_function_is_reserved_in_both_precisions() {
        use rise::primitives::{Domain, MathFn};
        // `min`, `max` and `abs` of floats print as `fmin`, `fmax`, `fabs`
        for f in MathFn::ALL.iter().filter(|f| f.domain() == Domain::Float) {
            for name in [f.name().to_string(), format!("{}f", f.name())] {
                assert!(is_reserved(&name), "`{name}` is not reserved");
            }
        }
    }

    #[test]
    fn builtins_of_every_target_are_avoided() {
        let mut ns = NameSet::default();
        for (wanted, got) in [
            ("dot", "dot_2"),
            ("cross", "cross_2"),
            ("length", "length_2"),
            ("sin", "sin_2"),
            ("main", "main_2"),
            ("printf", "printf_2"),
            // the CUDA math API: `norm` is overloaded there (examples/math.rise on an H100)
            ("norm", "norm_2"),
            ("rnorm3df", "rnorm3df_2"),
            ("uchar16", "uchar16_2"),
            ("convert_float4", "uconvert_float4"),
            ("get_global_id", "get_global_id_2"),
            ("threadIdx", "threadIdx_2"),
            ("class", "class_2"),
            ("kernel", "kernel_2"),
            ("shine_div", "ushine_div"),
            ("dots", "dots"),
            ("float", "float_2"),
            ("float5x", "float5x"),
            ("half", "uhalf_2"),
            ("as", "as"),
            ("as", "uas_2"),
        ] {
            assert_eq!(ns.fresh(wanted), got, "{wanted}");
        }
    }
}
