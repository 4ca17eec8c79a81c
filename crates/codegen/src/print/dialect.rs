//! The dialect table: what each target spells its own way and the rest of the code
//! generator asks for (vector type names and lanes, the operators CUDA's vector types
//! lack, the `float` math names, what foreign functions' bodies need before them). One
//! row per target ([`Dialect::of`]); the printer's own spellings are its `match` arms.

use rise::DataType;

use super::scalar_name;
use crate::ast::Scalar;
use crate::error::{malformed, unsupported, CodegenError};
use crate::layout::show_type;
use crate::Target;

/// The spellings of one target.
#[derive(Debug)]
pub(crate) struct Dialect {
    target: Target,
    /// How lane `k` of a vector is written after the vector.
    lanes: Lanes,
    /// The builtin vector types (OpenCL, CUDA); `None`: vectors are GCC typedefs.
    builtin_vectors: Option<BuiltinVectors>,
    /// Whether vector types have `+ - * / %` (otherwise the source defines them).
    vector_arithmetic: bool,
    /// The suffix of `<math.h>`'s `float` functions (`sqrtf`); empty where the
    /// `double` name is overloaded for `float` too (OpenCL's `sqrt`).
    float_math_suffix: &'static str,
    /// The headers a module with foreign functions includes.
    foreign_includes: &'static [&'static str],
    /// Whether C's fixed-width integer names (`int8_t`) need typedefs: the dialect has
    /// no `<stdint.h>`.
    fixed_width_typedefs: bool,
}

/// How a vector lane is written.
#[derive(Debug)]
enum Lanes {
    /// `v[k]` (GCC vector extensions).
    Subscript,
    /// `v.s0` .. `v.sf` (OpenCL).
    HexMember,
    /// `v.x` .. `v.w` (CUDA): the names of the lanes, the last one repeated beyond.
    Named(&'static [&'static str]),
}

/// Which builtin vector types a dialect has.
#[derive(Debug)]
struct BuiltinVectors {
    /// The lane counts it has.
    lanes: &'static [u32],
    /// The most bytes a vector type holds.
    max_bytes: u32,
    /// Why another lane count or size is not a type, for the error.
    rule: &'static str,
    /// Whether the error names the type that does not exist.
    names_missing: bool,
}

const C: Dialect = Dialect {
    target: Target::C,
    lanes: Lanes::Subscript,
    builtin_vectors: None,
    vector_arithmetic: true,
    float_math_suffix: "f",
    foreign_includes: &["math.h", "stdio.h"],
    fixed_width_typedefs: false,
};

const OPENMP: Dialect = Dialect {
    target: Target::OpenMp,
    ..C
};

const OPENCL: Dialect = Dialect {
    target: Target::OpenCl,
    lanes: Lanes::HexMember,
    builtin_vectors: Some(BuiltinVectors {
        lanes: &[2, 4, 8, 16],
        max_bytes: u32::MAX,
        rule: "OpenCL vectors have 2, 4, 8 or 16 lanes",
        names_missing: false,
    }),
    vector_arithmetic: true,
    float_math_suffix: "",
    foreign_includes: &[],
    fixed_width_typedefs: true,
};

const CUDA: Dialect = Dialect {
    target: Target::Cuda,
    lanes: Lanes::Named(&["x", "y", "z", "w"]),
    builtin_vectors: Some(BuiltinVectors {
        lanes: &[2, 4],
        max_bytes: 16,
        rule: "CUDA's vector types used here have 2 or 4 lanes of at most 16 bytes in all",
        names_missing: true,
    }),
    vector_arithmetic: false,
    float_math_suffix: "f",
    foreign_includes: &[],
    fixed_width_typedefs: true,
};

/// C99's `<math.h>` functions that OpenCL C has under the same name, overloaded for `float`
/// and `double` (OpenCL 1.2, 6.12.2), where C spells the `float` one `NAMEf`.
const FLOAT_MATH_FUNCTIONS: &[&str] = &[
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "cbrt",
    "ceil",
    "copysign",
    "cos",
    "cosh",
    "erf",
    "erfc",
    "exp",
    "exp2",
    "expm1",
    "fabs",
    "fdim",
    "floor",
    "fma",
    "fmax",
    "fmin",
    "fmod",
    "frexp",
    "hypot",
    "ilogb",
    "ldexp",
    "lgamma",
    "log",
    "log10",
    "log1p",
    "log2",
    "logb",
    "modf",
    "nan",
    "nextafter",
    "pow",
    "remainder",
    "remquo",
    "rint",
    "round",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "tgamma",
    "trunc",
];

/// The fixed-width integer types foreign functions' bodies may use.
const FIXED_WIDTH: [Scalar; 8] = [
    Scalar::I8,
    Scalar::I16,
    Scalar::I32,
    Scalar::I64,
    Scalar::U8,
    Scalar::U16,
    Scalar::U32,
    Scalar::U64,
];

impl Dialect {
    /// The row of `target`.
    pub(crate) fn of(target: Target) -> &'static Dialect {
        match target {
            Target::C => &C,
            Target::OpenMp => &OPENMP,
            Target::OpenCl => &OPENCL,
            Target::Cuda => &CUDA,
        }
    }

    /// What follows a vector to read or write its lane `k`: `[k]`, `.s{k:x}` or `.x`.
    pub(crate) fn lane(&self, k: u32) -> String {
        match self.lanes {
            Lanes::Subscript => format!("[{k}]"),
            Lanes::HexMember => format!(".s{k:x}"),
            Lanes::Named(names) => {
                let last = names.len().saturating_sub(1);
                format!(".{}", names[(k as usize).min(last)])
            }
        }
    }

    /// The builtin vector type with `lanes` lanes of `elem` (`dt`, for errors): `float`,
    /// `double`, `int` and `uint` vectors of 2, 4, 8 or 16 lanes in OpenCL (`float4`,
    /// `uint8`), of 2 or 4 lanes and at most 16 bytes in CUDA (`float4`, `double2`; CUDA
    /// has no `float8`). C and OpenMP have none.
    pub(crate) fn builtin_vector(
        &self,
        elem: Scalar,
        lanes: u32,
        dt: &DataType,
    ) -> Result<String, CodegenError> {
        let Some(base) = vector_base(elem) else {
            return unsupported(format!(
                "{} on a GPU (vectors of f32, f64, i32 and u32 are supported)",
                show_type(dt)
            ));
        };
        let Some(rules) = &self.builtin_vectors else {
            return unsupported(format!("{} as a GPU vector type in C", show_type(dt)));
        };
        if !rules.lanes.contains(&lanes) || elem.bytes() * lanes > rules.max_bytes {
            let missing = if rules.names_missing {
                format!(": there is no `{base}{lanes}`")
            } else {
                String::new()
            };
            return unsupported(format!(
                "{} in {} ({}{missing})",
                show_type(dt),
                self.target.title(),
                rules.rule
            ));
        }
        Ok(format!("{base}{lanes}"))
    }

    /// The name of the GCC vector typedef with `lanes` lanes of `elem` (C and OpenMP):
    /// the element's C name without `_t`, then the lanes (`float4`, `int8x16`).
    pub(crate) fn typedef_vector(elem: Scalar, lanes: u32) -> String {
        let base = elem.c_name().trim_end_matches("_t");
        if base.ends_with(|c: char| c.is_ascii_digit()) {
            format!("{base}x{lanes}")
        } else {
            format!("{base}{lanes}")
        }
    }

    /// The definitions of the operators the builtin vector type with `lanes` lanes of
    /// `elem` lacks: none where vectors have arithmetic; in CUDA `+ - * /` (and `%` for
    /// integers) of two vectors, of a vector and a scalar either side, and `-v`, lane by
    /// lane.
    pub(crate) fn vector_operators(
        &self,
        elem: Scalar,
        lanes: u32,
    ) -> Result<Vec<String>, CodegenError> {
        if self.vector_arithmetic {
            return Ok(Vec::new());
        }
        let Some(base) = vector_base(elem) else {
            return malformed(format!("a builtin vector of {}", elem.c_name()));
        };
        let v = format!("{base}{lanes}");
        let s = scalar_name(elem, self.target);
        let lane = |x: &str, k: u32, vector: bool| {
            if vector {
                format!("{x}{}", self.lane(k))
            } else {
                x.to_string()
            }
        };
        let mut ops = vec!["+", "-", "*", "/"];
        if !elem.is_float() {
            ops.push("%");
        }
        let mut out = vec![format!("// {v}: lane-by-lane arithmetic")];
        let head = "static __device__ __forceinline__";
        for op in ops {
            for (va, vb) in [(true, true), (true, false), (false, true)] {
                let (ta, tb) = (if va { &v } else { s }, if vb { &v } else { s });
                let lanes_text: Vec<String> = (0..lanes)
                    .map(|k| format!("{} {op} {}", lane("a", k, va), lane("b", k, vb)))
                    .collect();
                out.push(format!(
                    "{head} {v} operator{op}({ta} a, {tb} b) {{ return make_{v}({}); }}",
                    lanes_text.join(", ")
                ));
            }
        }
        let neg: Vec<String> = (0..lanes)
            .map(|k| format!("-{}", lane("a", k, true)))
            .collect();
        out.push(format!(
            "{head} {v} operator-({v} a) {{ return make_{v}({}); }}",
            neg.join(", ")
        ));
        Ok(out)
    }

    /// The name of `<math.h>`'s function `name` (`sqrt`, the `double` one) for `float`
    /// arguments: `sqrtf`, or `sqrt` where it is overloaded (OpenCL).
    pub(crate) fn float_math(&self, name: &str) -> String {
        format!("{name}{}", self.float_math_suffix)
    }

    /// What a module with foreign functions adds before them, so that one body compiles
    /// on every target: the includes (C's `<math.h>` and `<stdio.h>`, for a debugging
    /// `printf`; the interpreter's helper includes them too), and the lines: where the
    /// dialect has no `<stdint.h>` (OpenCL, CUDA) the fixed-width integer types C bodies
    /// use; where it spells `<math.h>`'s `float` functions without their `f` (OpenCL's
    /// `fmax` is overloaded), a macro for each such name `used` accepts (`#define fmaxf
    /// fmax`), in a fixed order.
    pub(crate) fn foreign_prelude(
        &self,
        used: &dyn Fn(&str) -> bool,
    ) -> (Vec<String>, Vec<String>) {
        let includes = self
            .foreign_includes
            .iter()
            .map(|h| h.to_string())
            .collect();
        let mut lines = Vec::new();
        if self.fixed_width_typedefs {
            lines.extend(
                FIXED_WIDTH
                    .iter()
                    .map(|&s| format!("typedef {} {};", scalar_name(s, self.target), s.c_name())),
            );
        }
        lines.extend(
            FLOAT_MATH_FUNCTIONS
                .iter()
                .map(|f| (format!("{f}f"), self.float_math(f)))
                .filter(|(c, own)| c != own && used(c))
                .map(|(c, own)| format!("#define {c} {own}")),
        );
        (includes, lines)
    }
}

/// The name of builtin vectors of `elem` before their lane count (`float` of `float4`).
fn vector_base(elem: Scalar) -> Option<&'static str> {
    match elem {
        Scalar::Float => Some("float"),
        Scalar::Double => Some("double"),
        Scalar::Int | Scalar::I32 => Some("int"),
        Scalar::U32 => Some("uint"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_in_every_dialect() {
        let lane = |t, k| Dialect::of(t).lane(k);
        assert_eq!(lane(Target::C, 10), "[10]");
        assert_eq!(lane(Target::OpenMp, 1), "[1]");
        assert_eq!(lane(Target::OpenCl, 10), ".sa");
        assert_eq!(lane(Target::OpenCl, 0), ".s0");
        assert_eq!(lane(Target::Cuda, 2), ".z");
        assert_eq!(lane(Target::Cuda, 3), ".w");
    }

    #[test]
    fn vector_names_follow_each_dialect() {
        let f8 = DataType::vector(DataType::f32(), 8);
        let cl = Dialect::of(Target::OpenCl);
        let cuda = Dialect::of(Target::Cuda);
        assert_eq!(cl.builtin_vector(Scalar::Float, 8, &f8).unwrap(), "float8");
        assert_eq!(cl.builtin_vector(Scalar::I32, 2, &f8).unwrap(), "int2");
        assert_eq!(cuda.builtin_vector(Scalar::U32, 4, &f8).unwrap(), "uint4");
        let err = cuda.builtin_vector(Scalar::Float, 8, &f8).unwrap_err();
        assert!(err.to_string().contains("no `float8`"), "{err}");
        let err = cuda.builtin_vector(Scalar::Double, 4, &f8).unwrap_err();
        assert!(err.to_string().contains("16 bytes"), "{err}");
        let err = cl.builtin_vector(Scalar::Float, 3, &f8).unwrap_err();
        assert!(err.to_string().contains("2, 4, 8 or 16 lanes"), "{err}");
        assert!(cl.builtin_vector(Scalar::U8, 4, &f8).is_err());
        assert!(Dialect::of(Target::C)
            .builtin_vector(Scalar::Float, 4, &f8)
            .is_err());
        assert_eq!(Dialect::typedef_vector(Scalar::Float, 4), "float4");
        assert_eq!(Dialect::typedef_vector(Scalar::I8, 16), "int8x16");
    }

    #[test]
    fn only_cuda_defines_vector_operators() {
        let ops = Dialect::of(Target::Cuda)
            .vector_operators(Scalar::Float, 2)
            .unwrap();
        assert_eq!(ops[0], "// float2: lane-by-lane arithmetic");
        assert!(ops.contains(
            &"static __device__ __forceinline__ float2 operator+(float2 a, float b) \
              { return make_float2(a.x + b, a.y + b); }"
                .to_string()
        ));
        assert_eq!(
            ops.last().map(String::as_str),
            Some(
                "static __device__ __forceinline__ float2 operator-(float2 a) \
                 { return make_float2(-a.x, -a.y); }"
            )
        );
        assert!(!ops.iter().any(|o| o.contains("operator%")));
        let uint_ops = Dialect::of(Target::Cuda)
            .vector_operators(Scalar::U32, 4)
            .unwrap();
        assert!(uint_ops.contains(
            &"static __device__ __forceinline__ uint4 operator%(unsigned int a, uint4 b) \
              { return make_uint4(a % b.x, a % b.y, a % b.z, a % b.w); }"
                .to_string()
        ));
        for t in [Target::C, Target::OpenMp, Target::OpenCl] {
            let ops = Dialect::of(t).vector_operators(Scalar::Float, 4).unwrap();
            assert!(ops.is_empty(), "{t}");
        }
    }

    #[test]
    fn foreign_preludes_in_every_dialect() {
        let uses_fmaxf = |w: &str| w == "fmaxf";
        let (includes, lines) = Dialect::of(Target::C).foreign_prelude(&uses_fmaxf);
        assert_eq!(includes, ["math.h", "stdio.h"]);
        assert!(lines.is_empty());
        let (includes, lines) = Dialect::of(Target::OpenCl).foreign_prelude(&uses_fmaxf);
        assert!(includes.is_empty());
        assert_eq!(lines[0], "typedef char int8_t;");
        assert_eq!(lines[3], "typedef long int64_t;");
        assert_eq!(lines[8..], ["#define fmaxf fmax"]);
        let (_, lines) = Dialect::of(Target::Cuda).foreign_prelude(&uses_fmaxf);
        assert_eq!(lines[3], "typedef long long int64_t;");
        assert_eq!(lines[7], "typedef unsigned long long uint64_t;");
        assert_eq!(lines.len(), 8);
    }
}
