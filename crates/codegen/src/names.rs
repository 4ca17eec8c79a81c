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

/// The macros of the headers a C or OpenMP module includes (`stdbool.h stdint.h stdlib.h
/// math.h`, and `stdio.h` with foreign functions; as glibc and gcc define them, `gnu17`): a foreign function's parameter
/// keeps its name in the body, so one named like a macro is renamed (`Foreign::collect`).
const C_MACROS: &str = "
    BIG_ENDIAN BYTE_ORDER LITTLE_ENDIAN PDP_ENDIAN EXIT_FAILURE EXIT_SUCCESS
    FD_CLR FD_ISSET FD_SET FD_SETSIZE FD_ZERO NFDBITS FP_ILOGB0 FP_ILOGBNAN FP_INFINITE
    FP_NAN FP_NORMAL FP_SUBNORMAL FP_ZERO FP_FAST_FMA FP_FAST_FMAF HUGE_VAL HUGE_VALF HUGE_VALL
    INFINITY NAN MATH_ERREXCEPT MATH_ERRNO math_errhandling MB_CUR_MAX RAND_MAX NULL
    M_1_PI M_2_PI M_2_SQRTPI M_E M_LN10 M_LN2 M_LOG10E M_LOG2E M_PI M_PI_2 M_PI_4
    M_SQRT1_2 M_SQRT2 INT8_C INT16_C INT32_C INT64_C INTMAX_C UINT8_C UINT16_C UINT32_C
    UINT64_C UINTMAX_C INT8_MAX INT8_MIN INT16_MAX INT16_MIN INT32_MAX INT32_MIN
    INT64_MAX INT64_MIN UINT8_MAX UINT16_MAX UINT32_MAX UINT64_MAX INTMAX_MAX INTMAX_MIN
    UINTMAX_MAX INTPTR_MAX INTPTR_MIN UINTPTR_MAX PTRDIFF_MAX PTRDIFF_MIN SIZE_MAX
    SIG_ATOMIC_MAX SIG_ATOMIC_MIN WCHAR_MAX WCHAR_MIN WINT_MAX WINT_MIN
    INT_FAST8_MAX INT_FAST8_MIN INT_FAST16_MAX INT_FAST16_MIN INT_FAST32_MAX INT_FAST32_MIN
    INT_FAST64_MAX INT_FAST64_MIN INT_LEAST8_MAX INT_LEAST8_MIN INT_LEAST16_MAX
    INT_LEAST16_MIN INT_LEAST32_MAX INT_LEAST32_MIN INT_LEAST64_MAX INT_LEAST64_MIN
    UINT_FAST8_MAX UINT_FAST16_MAX UINT_FAST32_MAX UINT_FAST64_MAX UINT_LEAST8_MAX
    UINT_LEAST16_MAX UINT_LEAST32_MAX UINT_LEAST64_MAX
    WCONTINUED WEXITED WEXITSTATUS WIFCONTINUED WIFEXITED WIFSIGNALED WIFSTOPPED WNOHANG
    WNOWAIT WSTOPPED WSTOPSIG WTERMSIG WUNTRACED alloca offsetof errno stdin stdout stderr
    EOF BUFSIZ FILENAME_MAX FOPEN_MAX L_tmpnam TMP_MAX SEEK_SET SEEK_CUR SEEK_END
    be16toh be32toh be64toh htobe16 htobe32 htobe64 htole16 htole32 htole64 le16toh
    le32toh le64toh fpclassify isfinite isgreater isgreaterequal isinf isless islessequal
    islessgreater isnan isnormal isunordered signbit linux unix i386
";

/// The macros of OpenCL C (OpenCL 1.2, 6.12.2.1 and 6.12.3; PoCL and NVIDIA define them in
/// every program), beside [`C_MACROS`] of the same name.
const OPENCL_MACROS: &str = "
    MAXFLOAT CHAR_BIT CHAR_MAX CHAR_MIN INT_MAX INT_MIN LONG_MAX LONG_MIN SCHAR_MAX
    SCHAR_MIN SHRT_MAX SHRT_MIN UCHAR_MAX UINT_MAX ULONG_MAX USHRT_MAX
    FLT_DIG FLT_MANT_DIG FLT_MAX_10_EXP FLT_MAX_EXP FLT_MIN_10_EXP FLT_MIN_EXP FLT_RADIX
    FLT_MAX FLT_MIN FLT_EPSILON DBL_DIG DBL_MANT_DIG DBL_MAX_10_EXP DBL_MAX_EXP
    DBL_MIN_10_EXP DBL_MIN_EXP DBL_MAX DBL_MIN DBL_EPSILON
    M_E_F M_LOG2E_F M_LOG10E_F M_LN2_F M_LN10_F M_PI_F M_PI_2_F M_PI_4_F M_1_PI_F
    M_2_PI_F M_2_SQRTPI_F M_SQRT2_F M_SQRT1_2_F
    CLK_LOCAL_MEM_FENCE CLK_GLOBAL_MEM_FENCE CLK_IMAGE_MEM_FENCE CL_VERSION_1_0
    CL_VERSION_1_1 CL_VERSION_1_2 CL_VERSION_2_0 FP_FAST_FMA_HALF
";

/// The macros CUDA's headers define in every `.cu` file (`cuda_runtime.h` and the C and
/// C++ headers it includes), beside [`C_MACROS`] and [`OPENCL_MACROS`] of the same name.
const CUDA_MACROS: &str = "
    CUDART_VERSION CUDA_VERSION FLT_EVAL_METHOD DECIMAL_DIG LLONG_MAX LLONG_MIN ULLONG_MAX
    MB_LEN_MAX assert
";

/// Whether `name` is a macro of a header or language of some target ([`C_MACROS`],
/// [`OPENCL_MACROS`], [`CUDA_MACROS`]).
pub(crate) fn is_macro_of_some_target(name: &str) -> bool {
    [C_MACROS, OPENCL_MACROS, CUDA_MACROS]
        .iter()
        .any(|list| list.split_whitespace().any(|w| w == name))
}

/// Whether a parameter of a foreign function, printed with the body that uses it, must be
/// renamed: a name the generated code may not take ([`NameSet::fresh`] avoids it), or a
/// macro of some target.
pub(crate) fn is_reserved_parameter(name: &str) -> bool {
    is_reserved(name) || is_macro_of_some_target(name)
}

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
fn is_vector_type_name(name: &str) -> bool {
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
