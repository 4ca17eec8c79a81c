//! The tensor-core multiply-accumulate `mmaSync` in CUDA: one helper per operand type,
//! `shine_mma_m16n8k16_f16` and `shine_mma_m16n8k16_bf16`, taking a lane's registers of
//! `A` (4) and `B` (2), each two 16-bit elements in `rise::fragments`' order (the lower
//! half first, as the PTX ISA lays out `.f16x2`/`.bf16x2`; `shine_pack_f16` makes one of
//! two values), and 4 elements of `C`, and returning its 4 elements of `D` as a `float4`.
//! It issues `mma.sync.aligned.m16n8k16.row.col.f32.<t>.<t>.f32`. It exists from compute
//! capability 8.0 on; an older device fails to compile the module with a message saying so.

use crate::ast::Scalar;

/// The tensor-core helpers a module calls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TensorUse {
    /// Warp-group multiplies (`wgmma`): the operand type (`f16`/`bf16`), `N`, and whether
    /// `B` is MN-major, per helper.
    pub wgmma: std::collections::BTreeSet<(&'static str, u32, bool)>,
    /// The descriptor helper of `wgmma` operands.
    pub wgmma_descriptor: bool,
    /// `fence.proxy.async.shared::cta` before barriers of kernels with `wgmma`.
    pub proxy_fence: bool,
    /// `mmaSync` on `f16` tiles.
    pub f16: bool,
    /// `mmaSync` on `bf16` tiles.
    pub bf16: bool,
    /// `B` fragments loaded by `ldmatrix ... .trans` (`shine_ldsm_x2_trans`).
    pub ldsm_trans: bool,
    /// `A` fragments loaded by `ldmatrix ... .x4` (`shine_ldsm_x4`).
    pub ldsm_x4: bool,
    /// Asynchronous copies of these sizes in bytes (bit 2, 3, 4: 4, 8, 16 bytes).
    pub cp_async_sizes: u8,
    /// `cp.async.commit_group`.
    pub cp_async_commit: bool,
    /// `cp.async.wait_group n` for these `n` (bit `n`).
    pub cp_async_waits: u8,
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

    /// The helper packing two values of `s` (`f16` or `bf16`) into one 32-bit register,
    /// the first in the lower half (as `.f16x2`/`.bf16x2` registers hold them).
    pub fn pack(&mut self, s: Scalar) -> String {
        self.helper(s);
        format!("shine_pack_{}", operand(s).0)
    }

    /// The helper loading a `B` fragment's two registers from local memory with one
    /// `ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16`, marked as used: its argument is
    /// the element lane `l` gives the address of (row `l % 8` of matrix `l / 8`, lanes
    /// 16 to 31 repeating 0 to 15), its result a `uint2` that the `mmaSync` helpers take
    /// in place of `b0, b1`.
    pub fn ldsm_trans(&mut self) -> &'static str {
        self.ldsm_trans = true;
        "shine_ldsm_x2_trans"
    }

    /// The helper loading an `A` fragment's four registers from local memory with one
    /// `ldmatrix.sync.aligned.m8n8.x4.shared.b16`, marked as used: its argument is the
    /// element lane `l` gives the address of (row `l % 8` of matrix `l / 8`), its result a
    /// `uint4` that the `mmaSync` helpers take in place of `a0, ..., a3`.
    pub fn ldsm_x4(&mut self) -> &'static str {
        self.ldsm_x4 = true;
        "shine_ldsm_x4"
    }

    /// The helper copying `bytes` (4, 8 or 16) from global to local memory asynchronously,
    /// `shine_cp_async_<bytes>(dst, src)`, marked as used.
    pub fn cp_async(&mut self, bytes: u64) -> &'static str {
        match bytes {
            4 => {
                self.cp_async_sizes |= 1 << 2;
                "shine_cp_async_4"
            }
            8 => {
                self.cp_async_sizes |= 1 << 3;
                "shine_cp_async_8"
            }
            _ => {
                self.cp_async_sizes |= 1 << 4;
                "shine_cp_async_16"
            }
        }
    }

    /// The helper closing a group of asynchronous copies, marked as used.
    pub fn cp_async_commit(&mut self) -> &'static str {
        self.cp_async_commit = true;
        "shine_cp_async_commit"
    }

    /// The helper waiting until at most `pending` (below 8) groups are in flight, marked as
    /// used.
    pub fn cp_async_wait(&mut self, pending: u32) -> String {
        let pending = pending.min(7);
        self.cp_async_waits |= 1 << pending;
        format!("shine_cp_async_wait_{pending}")
    }

    /// The helper of a warp group's multiply on tiles of `s` (`f16` or `bf16`) with a `B`
    /// of `n` columns (MN-major where `mn_major`), marked as used: it takes the thread's
    /// `n / 2` accumulators (an array it updates) and the two descriptors.
    pub fn wgmma(&mut self, s: Scalar, n: u32, mn_major: bool) -> String {
        let t = operand(s).0;
        self.wgmma.insert((t, n, mn_major));
        wgmma_name(t, n, mn_major)
    }

    /// The helper making a `wgmma` operand's descriptor (address, LBO, SBO, 128-byte
    /// swizzle), marked as used.
    pub fn wgmma_descriptor(&mut self) -> &'static str {
        self.wgmma_descriptor = true;
        "shine_wgmma_desc"
    }

    /// The fence before a run of warp-group multiplies into `registers` accumulators
    /// (`wgmma.fence`), marked as used.
    pub fn wgmma_fence(&mut self, registers: u32) -> String {
        self.wgmma_descriptor = true;
        format!("shine_wgmma_fence_{registers}")
    }

    /// The commit and wait after a run of warp-group multiplies into `registers`
    /// accumulators, marked as used.
    pub fn wgmma_wait(&mut self, registers: u32) -> String {
        self.wgmma_descriptor = true;
        format!("shine_wgmma_commit_wait_{registers}")
    }

    /// The proxy fence that makes local-memory writes visible to `wgmma`, marked as used.
    pub fn proxy_fence(&mut self) -> &'static str {
        self.proxy_fence = true;
        "shine_fence_proxy_async"
    }

    /// Whether the module needs Hopper's architecture-specific features (`sm_90a`).
    pub fn needs_sm90a(&self) -> bool {
        !self.wgmma.is_empty()
    }

    /// The source lines defining the helpers used (after the 16-bit types' includes).
    pub fn prelude(&self) -> Vec<String> {
        let mut out = self.mma_prelude();
        out.extend(self.cp_async_prelude());
        out.extend(self.wgmma_prelude());
        out
    }

    /// The warp-group multiply helpers used.
    fn wgmma_prelude(&self) -> Vec<String> {
        if self.wgmma.is_empty() && !self.wgmma_descriptor && !self.proxy_fence {
            return Vec::new();
        }
        let mut out = vec![
            "// warp-group multiplies: wgmma.mma_async (Hopper, sm_90a)".to_string(),
            "#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)".to_string(),
            "#error \"wgmma needs an NVIDIA Hopper GPU (compute capability 9.0), compiled for sm_90a\""
                .to_string(),
            "#endif".to_string(),
        ];
        if self.proxy_fence {
            out.push(
                "__device__ __forceinline__ void shine_fence_proxy_async() {\n  \
                 asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n}"
                    .to_string(),
            );
        }
        if self.wgmma_descriptor {
            out.push(WGMMA_DESCRIPTOR.to_string());
        }
        let sizes: std::collections::BTreeSet<u32> = self.wgmma.iter().map(|w| w.1).collect();
        for n in sizes {
            out.push(wgmma_fences(n / 2));
        }
        for &(t, n, mn_major) in &self.wgmma {
            out.push(wgmma_source(t, n, mn_major));
        }
        out
    }

    /// The asynchronous copy helpers used.
    fn cp_async_prelude(&self) -> Vec<String> {
        if self.cp_async_sizes == 0 && !self.cp_async_commit && self.cp_async_waits == 0 {
            return Vec::new();
        }
        let mut out = vec![
            "// asynchronous copies from global to local (shared) memory: cp.async".to_string(),
            "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800".to_string(),
            "#error \"reduceSeqPipelined needs cp.async: compute capability 8.0 (sm_80) or newer\""
                .to_string(),
            "#endif".to_string(),
        ];
        for bytes in [4u32, 8, 16] {
            if self.cp_async_sizes & (1 << bytes.trailing_zeros()) != 0 {
                // only 16-byte copies may bypass L1 (.cg)
                let cache = if bytes == 16 { "cg" } else { "ca" };
                out.push(format!(
                    "__device__ __forceinline__ void shine_cp_async_{bytes}(void *dst, const void *src) {{\n  \
                     asm volatile(\"cp.async.{cache}.shared.global [%0], [%1], {bytes};\" \
                     :: \"r\"((unsigned)__cvta_generic_to_shared(dst)), \"l\"(src) : \"memory\");\n}}"
                ));
            }
        }
        if self.cp_async_commit {
            out.push(
                "__device__ __forceinline__ void shine_cp_async_commit() {\n  \
                 asm volatile(\"cp.async.commit_group;\" ::: \"memory\");\n}"
                    .to_string(),
            );
        }
        for n in 0..8 {
            if self.cp_async_waits & (1 << n) != 0 {
                out.push(format!(
                    "__device__ __forceinline__ void shine_cp_async_wait_{n}() {{\n  \
                     asm volatile(\"cp.async.wait_group {n};\" ::: \"memory\");\n}}"
                ));
            }
        }
        out
    }

    /// The tensor-core helpers used.
    fn mma_prelude(&self) -> Vec<String> {
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
        for &s in &used {
            out.push(helper_source(s));
        }
        if self.ldsm_trans {
            out.push(LDSM_TRANS.to_string());
        }
        if self.ldsm_x4 {
            out.push(LDSM_X4.to_string());
        }
        for s in used {
            out.extend(register_overloads(s, self.ldsm_x4, self.ldsm_trans));
        }
        out
    }
}

fn helper_source(s: Scalar) -> String {
    let (ptx, ty, bits) = operand(s);
    format!(
        "__device__ __forceinline__ unsigned shine_pack_{ptx}({ty} lo, {ty} hi) {{\n  \
         return (unsigned)({bits}(lo)) | ((unsigned)({bits}(hi)) << 16);\n}}\n\
         __device__ __forceinline__ float4 shine_mma_m16n8k16_{ptx}(unsigned a0, unsigned a1, \
         unsigned a2, unsigned a3, unsigned b0, unsigned b1, float c0, float c1, float c2, \
         float c3) {{\n  \
         float4 d;\n  \
         asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.{ptx}.{ptx}.f32 \
         {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, {{%10, %11, %12, %13}};\"\n    \
         : \"=f\"(d.x), \"=f\"(d.y), \"=f\"(d.z), \"=f\"(d.w)\n    \
         : \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"r\"(b0), \"r\"(b1),\n      \
         \"f\"(c0), \"f\"(c1), \"f\"(c2), \"f\"(c3));\n  \
         return d;\n}}"
    )
}

/// `ldmatrix ... .x2.trans` from a generic pointer into local (shared) memory.
const LDSM_TRANS: &str =
    "__device__ __forceinline__ uint2 shine_ldsm_x2_trans(const void *p) {\n  \
     unsigned a = (unsigned)__cvta_generic_to_shared(p);\n  \
     uint2 r;\n  \
     asm volatile(\"ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\" \
     : \"=r\"(r.x), \"=r\"(r.y) : \"r\"(a));\n  \
     return r;\n}";

/// `ldmatrix ... .x4` (not transposed) from a generic pointer into local (shared) memory.
const LDSM_X4: &str = "__device__ __forceinline__ uint4 shine_ldsm_x4(const void *p) {\n  \
     unsigned a = (unsigned)__cvta_generic_to_shared(p);\n  \
     uint4 r;\n  \
     asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\" \
     : \"=r\"(r.x), \"=r\"(r.y), \"=r\"(r.z), \"=r\"(r.w) : \"r\"(a));\n  \
     return r;\n}";

/// The `mmaSync` helpers of `s` taking `A`'s four registers as one `uint4` (`x4`) and/or
/// `B`'s two as one `uint2` (`trans`), as the `ldmatrix` helpers give them.
fn register_overloads(s: Scalar, x4: bool, trans: bool) -> Vec<String> {
    let ptx = operand(s).0;
    let c = "float c0, float c1, float c2, float c3";
    let a4 = "unsigned a0, unsigned a1, unsigned a2, unsigned a3";
    let b2 = "unsigned b0, unsigned b1";
    let mut forms = Vec::new();
    if trans {
        forms.push((format!("{a4}, uint2 b"), "a0, a1, a2, a3, b.x, b.y"));
    }
    if x4 {
        forms.push((format!("uint4 a, {b2}"), "a.x, a.y, a.z, a.w, b0, b1"));
    }
    if x4 && trans {
        forms.push((
            "uint4 a, uint2 b".to_string(),
            "a.x, a.y, a.z, a.w, b.x, b.y",
        ));
    }
    forms
        .into_iter()
        .map(|(params, args)| {
            format!(
                "__device__ __forceinline__ float4 shine_mma_m16n8k16_{ptx}({params}, {c}) {{\n  \
                 return shine_mma_m16n8k16_{ptx}({args}, c0, c1, c2, c3);\n}}"
            )
        })
        .collect()
}

/// A shared-memory operand's descriptor: the start address, LBO and SBO (each in units of
/// 16 bytes, 14 bits) and the 128-byte swizzle mode (1 in bits 62–63). The array the operand
/// lies in must start at a 1024-byte boundary (the layout was proven relative to it): a
/// kernel where it does not stops (`__trap`).
const WGMMA_DESCRIPTOR: &str = "__device__ __forceinline__ unsigned long long shine_wgmma_desc(const void *p, unsigned lbo, unsigned sbo, const void *array) {
  if (((unsigned)__cvta_generic_to_shared(array) & 1023u) != 0u) __trap();
  unsigned a = (unsigned)__cvta_generic_to_shared(p);
  return (unsigned long long)((a & 0x3FFFF) >> 4)
       | ((unsigned long long)((lbo & 0x3FFFF) >> 4) << 16)
       | ((unsigned long long)((sbo & 0x3FFFF) >> 4) << 32)
       | (1ull << 62);
}";

/// The fence before and the commit and wait after a run of multiplies into `registers`
/// accumulators `d`: each also ties the registers to its place (an empty `asm` reading and
/// writing them), so that the compiler moves no read or write of an accumulator across it
/// (the instructions in between write them asynchronously).
fn wgmma_fences(registers: u32) -> String {
    let ties: Vec<String> = (0..registers).map(|i| format!("\"+f\"(d[{i}])")).collect();
    let tie = format!("asm volatile(\"\" : {} :: \"memory\");", ties.join(", "));
    format!(
        "__device__ __forceinline__ void shine_wgmma_fence_{registers}(float *d) {{\n  \
         {tie}\n  \
         asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");\n}}\n\
         __device__ __forceinline__ void shine_wgmma_commit_wait_{registers}(float *d) {{\n  \
         asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");\n  \
         asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");\n  \
         {tie}\n}}"
    )
}

fn wgmma_name(t: &str, n: u32, mn_major: bool) -> String {
    let b = if mn_major { "mn" } else { "k" };
    format!("shine_wgmma_m64n{n}k16_{t}_b{b}")
}

/// The helper issuing one `wgmma.mma_async.m64n<n>k16` on the thread's `n / 2` accumulators
/// `d` (updated: `d = A·B + d`), asynchronously: `shine_wgmma_fence_<n/2>` comes before a run of
/// them, `shine_wgmma_commit_wait_<n/2>` after (the accumulators are ordinary registers again).
/// The multiplies of a run are in flight together: they chain on the same accumulators,
/// which the instruction allows without a wait between them.
fn wgmma_source(t: &str, n: u32, mn_major: bool) -> String {
    let regs = n / 2;
    let list: Vec<String> = (0..regs).map(|i| format!("%{i}")).collect();
    let outs: Vec<String> = (0..regs).map(|i| format!("\"+f\"(d[{i}])")).collect();
    format!(
        "__device__ __forceinline__ void {name}(float *d, unsigned long long da, unsigned long long db) {{\n  \
         asm volatile(\"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{scale}, 0;\\n\"\n    \
         \"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{t}.{t} {{{list}}}, %{da}, %{db}, p, 1, 1, 0, {tnsp};\\n}}\\n\"\n    \
         : {outs}\n    : \"l\"(da), \"l\"(db), \"r\"(1));\n}}",
        name = wgmma_name(t, n, mn_major),
        list = list.join(", "),
        outs = outs.join(", "),
        da = regs,
        db = regs + 1,
        scale = regs + 2,
        tnsp = u8::from(mn_major),
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
        assert!(text.contains(
            "(unsigned)(__bfloat16_as_ushort(lo)) | ((unsigned)(__bfloat16_as_ushort(hi)) << 16)"
        ));
        assert!(!text.contains("shine_mma_m16n8k16_f16("));
    }
}
