//! The tensor-core multiply-accumulate `mmaSync` in CUDA: one helper per operand type,
//! `shine_mma_m16n8k16_f16` and `shine_mma_m16n8k16_bf16`, taking a lane's 8 elements of
//! `A`, 4 of `B` and 4 of `C` (in the order of `rise::fragments`) and returning its 4
//! elements of `D` as a `float4`. The helper packs each pair of 16-bit values into one
//! 32-bit register (the lower half first, as the PTX ISA lays out `.f16x2`/`.bf16x2`) and
//! issues `mma.sync.aligned.m16n8k16.row.col.f32.<t>.<t>.f32`. It exists from compute
//! capability 8.0 on; an older device fails to compile the module with a message saying so.

use crate::ast::Scalar;

/// The tensor-core helpers a module calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TensorUse {
    /// `mmaSync` on `f16` tiles.
    pub f16: bool,
    /// `mmaSync` on `bf16` tiles.
    pub bf16: bool,
}

/// The PTX name of a 16-bit operand type, and how its bits are read in CUDA.
fn operand(s: Scalar) -> (&'static str, &'static str, &'static str) {
    match s {
        Scalar::Bf16 => ("bf16", "__nv_bfloat16", "__bfloat16_as_ushort"),
        _ => ("f16", "__half", "__half_as_ushort"),
    }
}

impl TensorUse {
    /// The helper computing `mmaSync` on tiles of `s` (`f16` or `bf16`), marked as used.
    pub fn helper(&mut self, s: Scalar) -> String {
        if s == Scalar::Bf16 {
            self.bf16 = true;
        } else {
            self.f16 = true;
        }
        format!("shine_mma_m16n8k16_{}", operand(s).0)
    }

    /// The source lines defining the helpers used (after the 16-bit types' includes).
    pub fn prelude(&self) -> Vec<String> {
        let used: Vec<Scalar> = [(self.f16, Scalar::F16), (self.bf16, Scalar::Bf16)]
            .into_iter()
            .filter_map(|(on, s)| on.then_some(s))
            .collect();
        if used.is_empty() {
            return Vec::new();
        }
        let mut out = vec![
            "// tensor cores: mma.sync m16n8k16 (a lane's registers, rise::fragments' order)"
                .to_string(),
            "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800".to_string(),
            "#error \"mmaSync needs tensor cores with mma.sync m16n8k16: compute capability 8.0 (sm_80) or newer\""
                .to_string(),
            "#endif".to_string(),
        ];
        for s in used {
            out.push(helper_source(s));
        }
        out
    }
}

fn helper_source(s: Scalar) -> String {
    let (ptx, ty, bits) = operand(s);
    let params = |name: &str, n: usize, t: &str| {
        (0..n)
            .map(|i| format!("{t} {name}{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let pack = |name: &str, i: usize| {
        format!(
            "(unsigned)({bits}({name}{i})) | ((unsigned)({bits}({name}{})) << 16)",
            i + 1
        )
    };
    format!(
        "__device__ __forceinline__ float4 shine_mma_m16n8k16_{ptx}({a}, {b}, {c}) {{\n  \
         unsigned ra0 = {a0}, ra1 = {a1}, ra2 = {a2}, ra3 = {a3};\n  \
         unsigned rb0 = {b0}, rb1 = {b1};\n  \
         float4 d;\n  \
         asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.{ptx}.{ptx}.f32 \
         {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, {{%10, %11, %12, %13}};\"\n    \
         : \"=f\"(d.x), \"=f\"(d.y), \"=f\"(d.z), \"=f\"(d.w)\n    \
         : \"r\"(ra0), \"r\"(ra1), \"r\"(ra2), \"r\"(ra3), \"r\"(rb0), \"r\"(rb1),\n      \
         \"f\"(c0), \"f\"(c1), \"f\"(c2), \"f\"(c3));\n  \
         return d;\n}}",
        a = params("a", 8, ty),
        b = params("b", 4, ty),
        c = params("c", 4, "float"),
        a0 = pack("a", 0),
        a1 = pack("a", 2),
        a2 = pack("a", 4),
        a3 = pack("a", 6),
        b0 = pack("b", 0),
        b1 = pack("b", 2),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_used_helpers_are_defined() {
        assert!(TensorUse::default().prelude().is_empty());
        let mut u = TensorUse::default();
        assert_eq!(u.helper(Scalar::Bf16), "shine_mma_m16n8k16_bf16");
        let text = u.prelude().join("\n");
        assert!(text.contains("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
        assert!(text
            .contains("__bfloat16_as_ushort(a0)) | ((unsigned)(__bfloat16_as_ushort(a1)) << 16)"));
        assert!(!text.contains("shine_mma_m16n8k16_f16("));
    }
}
