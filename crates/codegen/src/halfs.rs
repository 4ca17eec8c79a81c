//! The 16-bit float types `f16` and `bf16` in generated code, with the interpreter's
//! semantics (the rise crate's `interp::halfs`): values are stored in 16 bits and every
//! operation is computed in `float` and rounded back to nearest even, so each `+ - * /`,
//! math function and conversion rounds exactly once, as the interpreter's does.
//!
//! Storage: `f16` is `_Float16` in C (GCC computes it through `float`; the explicit
//! conversions below make every rounding visible, whatever `-fexcess-precision` says),
//! `half` in OpenCL C (`cl_khr_fp16`) and `__half` in CUDA (`cuda_fp16.h`); `bf16` is the
//! typedef `shine_bf16`, a `uint16_t` (`ushort` in OpenCL) holding the bit pattern, and
//! `__nv_bfloat16` in CUDA (`cuda_bf16.h`). The code only ever moves these values or passes
//! them to the helpers [`prelude`] defines: `shine_f16_to_f32`, `shine_f32_to_f16` (and the
//! `bf16` pair), and for wider sources a rounding to `float` *to odd*
//! (`shine_f64_to_f32_odd`, `shine_i64_to_f32_odd`, `shine_u64_to_f32_odd`), after which
//! the rounding to 16 bits is the correctly rounded one. Vectors of them are refused,
//! except that CUDA moves vectors of 2, 4 or 8 whole without computing with them
//! (`ctypes::moved_half_vector`).

use crate::ast::{Expr, Scalar, Type};
use crate::Target;

/// The helpers a module's code calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HalfUse {
    /// `f16` values.
    pub f16: bool,
    /// `bf16` values.
    pub bf16: bool,
    /// Conversions from `double`.
    pub from_f64: bool,
    /// Conversions from integers wider than 16 bits.
    pub from_wide_int: bool,
}

impl HalfUse {
    /// Whether the code uses a 16-bit float at all.
    pub fn any(&self) -> bool {
        self.f16 || self.bf16
    }

    /// Records that the code uses values of `s` (a 16-bit type: its header is included).
    pub(crate) fn mark(&mut self, s: Scalar) {
        match s {
            Scalar::F16 => self.f16 = true,
            Scalar::Bf16 => self.bf16 = true,
            _ => {}
        }
    }
}

/// The name of the typedef of `bf16` values.
pub const BF16_TYPE: &str = "shine_bf16";

fn suffix(s: Scalar) -> &'static str {
    if s == Scalar::Bf16 {
        "bf16"
    } else {
        "f16"
    }
}

/// The `float` value of `e`, a value of the 16-bit type `s` (exact).
pub fn widen(s: Scalar, e: Expr, used: &mut HalfUse) -> Expr {
    used.mark(s);
    Expr::call(&format!("shine_{}_to_f32", suffix(s)), vec![e])
}

/// The `float` `e` rounded to the 16-bit type `s`.
pub fn narrow(s: Scalar, e: Expr, used: &mut HalfUse) -> Expr {
    used.mark(s);
    Expr::call(&format!("shine_f32_to_{}", suffix(s)), vec![e])
}

/// `e` of type `from` (not a 16-bit type) as a value of the 16-bit type `to`, rounded once.
pub fn from_other(from: Scalar, to: Scalar, e: Expr, used: &mut HalfUse) -> Expr {
    let single = match from {
        Scalar::Float => e,
        Scalar::Double => {
            used.from_f64 = true;
            Expr::call("shine_f64_to_f32_odd", vec![e])
        }
        // every value of these is a float
        Scalar::Bool | Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16 => {
            e.cast(Type::Scalar(Scalar::Float))
        }
        Scalar::U32 | Scalar::U64 => {
            used.from_wide_int = true;
            Expr::call(
                "shine_u64_to_f32_odd",
                vec![e.cast(Type::Scalar(Scalar::U64))],
            )
        }
        _ => {
            used.from_wide_int = true;
            Expr::call(
                "shine_i64_to_f32_odd",
                vec![e.cast(Type::Scalar(Scalar::I64))],
            )
        }
    };
    narrow(to, single, used)
}

/// A constant of the 16-bit type `s` (a value of that type, so exact as a `float`).
pub fn constant(s: Scalar, value: f64, used: &mut HalfUse) -> Expr {
    narrow(
        s,
        Expr::Float {
            value,
            single: true,
        },
        used,
    )
}

/// The source lines that define the helpers `used` needs in `target` (includes, pragmas,
/// typedefs and functions), before the code that calls them.
pub fn prelude(target: Target, used: HalfUse) -> Vec<String> {
    if !used.any() {
        return Vec::new();
    }
    let d = Dialect::of(target);
    let mut out = vec!["// 16-bit floats: computed in float, rounded to nearest even".to_string()];
    out.extend(d.setup(used).into_iter().map(str::to_string));
    out.push(format!(
        "{q} {u32} shine_f32_bits(float x) {{ {} }}",
        d.bits_of_float,
        q = d.qualifier,
        u32 = d.u32
    ));
    out.push(format!(
        "{q} float shine_bits_f32({u32} b) {{ {} }}",
        d.float_of_bits,
        q = d.qualifier,
        u32 = d.u32
    ));
    if used.f16 {
        out.extend(d.f16_pair());
    }
    if used.bf16 {
        out.extend(d.bf16_pair());
    }
    if used.from_f64 {
        out.push(format!(
            "{} float shine_f64_to_f32_odd(double x) {{\n  float f = (float)x;\n  {u32} b = \
             shine_f32_bits(f);\n  if (f != f || (double)f == x || (b & 1u)) return f;\n  \
             /* f is the even neighbour of x: the odd one is on the other side of x */\n  \
             int above = x > 0 ? (double)f > x : (double)f < x;\n  return shine_bits_f32(above \
             ? b - 1u : b + 1u);\n}}",
            d.qualifier,
            u32 = d.u32
        ));
    }
    if used.from_wide_int {
        out.push(format!(
            "{q} float shine_u64_to_f32_odd({u64} m) {{\n  float scale = 1.0f;\n  while (m >> \
             24) {{\n    m = (m >> 1) | (m & 1u);\n    scale *= 2.0f;\n  }}\n  return (float)m * \
             scale;\n}}",
            q = d.qualifier,
            u64 = d.u64
        ));
        out.push(format!(
            "{q} float shine_i64_to_f32_odd({i64} x) {{\n  return x < 0 ? \
             -shine_u64_to_f32_odd(({u64})0 - ({u64})x) : shine_u64_to_f32_odd(({u64})x);\n}}",
            q = d.qualifier,
            i64 = d.i64,
            u64 = d.u64
        ));
    }
    out
}

/// How a dialect spells what the helpers need.
struct Dialect {
    target: Target,
    qualifier: &'static str,
    u32: &'static str,
    u64: &'static str,
    i64: &'static str,
    bits_of_float: &'static str,
    float_of_bits: &'static str,
}

impl Dialect {
    fn of(target: Target) -> Dialect {
        match target {
            Target::C | Target::OpenMp => Dialect {
                target,
                qualifier: "static inline",
                u32: "uint32_t",
                u64: "uint64_t",
                i64: "int64_t",
                bits_of_float: "union { float f; uint32_t b; } v; v.f = x; return v.b;",
                float_of_bits: "union { float f; uint32_t b; } v; v.b = b; return v.f;",
            },
            Target::OpenCl => Dialect {
                target,
                qualifier: "static inline",
                u32: "uint",
                u64: "ulong",
                i64: "long",
                bits_of_float: "return as_uint(x);",
                float_of_bits: "return as_float(b);",
            },
            Target::Cuda => Dialect {
                target,
                qualifier: "static __device__ inline",
                u32: "unsigned int",
                u64: "unsigned long long",
                i64: "long long",
                bits_of_float: "return __float_as_uint(x);",
                float_of_bits: "return __uint_as_float(b);",
            },
        }
    }

    /// Includes, pragmas and the `bf16` typedef.
    fn setup(&self, used: HalfUse) -> Vec<&'static str> {
        let mut out = Vec::new();
        match self.target {
            Target::C | Target::OpenMp => {
                if used.bf16 {
                    out.push("typedef uint16_t shine_bf16;");
                }
            }
            Target::OpenCl => {
                if used.f16 {
                    out.push("#pragma OPENCL EXTENSION cl_khr_fp16 : enable");
                }
                if used.bf16 {
                    out.push("typedef ushort shine_bf16;");
                }
            }
            Target::Cuda => {
                if used.f16 {
                    out.push("#include <cuda_fp16.h>");
                }
                if used.bf16 {
                    out.push("#include <cuda_bf16.h>");
                    out.push("typedef __nv_bfloat16 shine_bf16;");
                }
            }
        }
        out
    }

    /// `shine_f16_to_f32` and `shine_f32_to_f16`.
    fn f16_pair(&self) -> Vec<String> {
        let q = self.qualifier;
        let (t, to_f32, from_f32) = match self.target {
            Target::C | Target::OpenMp => ("_Float16", "(float)x", "(_Float16)x"),
            Target::OpenCl => ("half", "(float)x", "(half)x"),
            Target::Cuda => ("__half", "__half2float(x)", "__float2half_rn(x)"),
        };
        vec![
            format!("{q} float shine_f16_to_f32({t} x) {{ return {to_f32}; }}"),
            format!("{q} {t} shine_f32_to_f16(float x) {{ return {from_f32}; }}"),
        ]
    }

    /// `shine_bf16_to_f32` and `shine_f32_to_bf16`: on bit patterns (NaN stays NaN, made
    /// quiet, as the `half` crate does), except in CUDA, whose conversions round alike.
    fn bf16_pair(&self) -> Vec<String> {
        let q = self.qualifier;
        if self.target == Target::Cuda {
            return vec![
                format!(
                    "{q} float shine_bf16_to_f32(shine_bf16 x) {{ return __bfloat162float(x); }}"
                ),
                format!(
                    "{q} shine_bf16 shine_f32_to_bf16(float x) {{ return __float2bfloat16_rn(x); }}"
                ),
            ];
        }
        let u32 = self.u32;
        vec![
            format!(
                "{q} float shine_bf16_to_f32(shine_bf16 x) {{\n  {u32} b = ({u32})x << 16;\n  \
                 if ((x & 0x7fffu) > 0x7f80u) b |= 0x400000u;\n  return shine_bits_f32(b);\n}}"
            ),
            format!(
                "{q} shine_bf16 shine_f32_to_bf16(float x) {{\n  {u32} b = shine_f32_bits(x);\n  \
                 if ((b & 0x7fffffffu) > 0x7f800000u) return (shine_bf16)((b >> 16) | 0x40u);\n  \
                 return (shine_bf16)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);\n}}"
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::print::expr_in;

    #[test]
    fn operations_widen_and_narrow() {
        let mut used = HalfUse::default();
        let e = narrow(
            Scalar::Bf16,
            widen(Scalar::Bf16, Expr::ident("x"), &mut used),
            &mut used,
        );
        assert_eq!(
            expr_in(&e, Target::C),
            "shine_f32_to_bf16(shine_bf16_to_f32(x))"
        );
        assert!(used.bf16 && !used.f16);
        let e = from_other(Scalar::Double, Scalar::F16, Expr::ident("d"), &mut used);
        assert_eq!(
            expr_in(&e, Target::Cuda),
            "shine_f32_to_f16(shine_f64_to_f32_odd(d))"
        );
        let e = from_other(Scalar::I32, Scalar::Bf16, Expr::ident("i"), &mut used);
        assert_eq!(
            expr_in(&e, Target::C),
            "shine_f32_to_bf16(shine_i64_to_f32_odd((int64_t)i))"
        );
    }

    #[test]
    fn each_dialect_defines_what_is_used() {
        let used = HalfUse {
            f16: true,
            bf16: true,
            from_f64: true,
            from_wide_int: true,
        };
        let c = prelude(Target::C, used).join("\n");
        assert!(c.contains("typedef uint16_t shine_bf16;"));
        assert!(c.contains("(_Float16)x"));
        let cl = prelude(Target::OpenCl, used).join("\n");
        assert!(cl.contains("#pragma OPENCL EXTENSION cl_khr_fp16 : enable"));
        assert!(cl.contains("as_uint(x)"));
        let cuda = prelude(Target::Cuda, used).join("\n");
        assert!(cuda.contains("#include <cuda_fp16.h>") && cuda.contains("__nv_bfloat16"));
        assert!(prelude(Target::C, HalfUse::default()).is_empty());
    }
}
