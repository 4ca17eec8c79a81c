//! The helpers of `scanLookback`'s decoupled look-back (`dpia::LookBack` gives the
//! protocol), in OpenCL and CUDA. A tile's descriptor is one 64-bit word of global memory:
//! its status in the high 32 bits (0: nothing yet, 1: the tile's aggregate, 2: its
//! inclusive prefix), the bits of its 32-bit value in the low ones. It is only ever written
//! whole by one atomic exchange and read whole by one atomic (OpenCL) or volatile 64-bit
//! (CUDA: one `ld.volatile`, which an aligned 8-byte access makes single-copy atomic)
//! load, so a reader sees a status together with the value written with it, and no fence
//! has to order a value's write before its flag's.
//!
//! * `shine_ticket(counter)`: the counter's value, incremented atomically (the tiles'
//!   numbers, in the order the work-groups take them);
//! * `shine_await(slot)`: the descriptor once its status is not 0 (spinning);
//! * `shine_is_prefix(word)`: whether a descriptor holds an inclusive prefix;
//! * `shine_publish_<t>(slot, status, value)`, `shine_value_<t>(word)`: a value of `t`
//!   (`f32`, `i32`, `u32`, `int`) into and out of a descriptor's low 32 bits;
//! * CUDA only, called by every lane of a warp together (full masks): `shine_await_window(
//!   descriptors, k)`, lane's descriptor `k` (a tile before tile 0, `k < 0`, reads as an
//!   aggregate, which is never folded: tile 0 holds a prefix) once no lane of the warp sees
//!   status 0 (`__any_sync` in the loop's condition, so the lanes leave it together), and
//!   `shine_nearest_prefix(word)`, the highest lane whose descriptor holds an inclusive
//!   prefix, or -1 (`__ballot_sync`).
//!
//! OpenCL needs 64-bit atomics (`cl_khr_int64_base_atomics`, an extension of OpenCL 1.2):
//! on a device without them the module fails to build with an error saying so.

use crate::ast::Scalar;
use crate::Target;

/// The look-back helpers a module calls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LookbackUse {
    /// `shine_ticket`.
    pub ticket: bool,
    /// The value types of the descriptors read and written (`shine_await` with them).
    pub values: std::collections::BTreeSet<&'static str>,
    /// `shine_await` and `shine_is_prefix` (one work-item's look-back).
    pub walk: bool,
    /// `shine_await_window` and `shine_nearest_prefix` (a warp's look-back, CUDA).
    pub window: bool,
}

/// The name of a descriptor value's type in helper names, its C type in each dialect, and
/// how its bits are made and read back (`v` the value, `w` the descriptor).
struct ValueType {
    name: &'static str,
    cuda: (&'static str, &'static str, &'static str),
    opencl: (&'static str, &'static str, &'static str),
}

const VALUE_TYPES: &[ValueType] = &[
    ValueType {
        name: "f32",
        cuda: (
            "float",
            "__float_as_uint(v)",
            "__uint_as_float((unsigned int)w)",
        ),
        opencl: ("float", "as_uint(v)", "as_float((uint)w)"),
    },
    ValueType {
        name: "i32",
        cuda: ("int", "(unsigned int)v", "(int)(unsigned int)w"),
        opencl: ("int", "as_uint(v)", "as_int((uint)w)"),
    },
    ValueType {
        name: "u32",
        cuda: ("unsigned int", "v", "(unsigned int)w"),
        opencl: ("uint", "v", "(uint)w"),
    },
];

impl LookbackUse {
    /// The helper taking a ticket, marked as used.
    pub fn ticket(&mut self) -> &'static str {
        self.ticket = true;
        "shine_ticket"
    }

    /// The helpers for descriptors holding values of `s` (a 32-bit scalar), marked as
    /// used: publishing, reading the value back; `None` for another type.
    pub fn value_helpers(&mut self, s: Scalar) -> Option<(String, String)> {
        let name = match s {
            Scalar::Float => "f32",
            Scalar::I32 | Scalar::Int => "i32",
            Scalar::U32 => "u32",
            _ => return None,
        };
        self.values.insert(name);
        Some((
            format!("shine_publish_{name}"),
            format!("shine_value_{name}"),
        ))
    }

    /// The helper waiting for a descriptor's status, marked as used.
    pub fn await_helper(&mut self) -> &'static str {
        self.walk = true;
        "shine_await"
    }

    /// The helper a warp's lanes wait for their window's descriptors with, marked as used.
    pub fn await_window_helper(&mut self) -> &'static str {
        self.window = true;
        "shine_await_window"
    }

    /// The helper finding a window's nearest inclusive prefix by a vote, marked as used.
    pub fn nearest_prefix_helper(&mut self) -> &'static str {
        self.window = true;
        "shine_nearest_prefix"
    }

    /// The helper testing a descriptor for an inclusive prefix, marked as used.
    pub fn is_prefix_helper(&mut self) -> &'static str {
        self.walk = true;
        "shine_is_prefix"
    }

    /// The source lines defining the helpers used, in `target`'s dialect (nothing for C).
    pub fn prelude(&self, target: Target) -> Vec<String> {
        if !self.ticket && self.values.is_empty() && !self.walk && !self.window {
            return Vec::new();
        }
        let mut out = vec![
            "// scanLookback's decoupled look-back: a tile's descriptor is one 64-bit word, status \
             (1: aggregate, 2: inclusive prefix) in the high 32 bits, the value's bits in the low \
             32, written by one atomic exchange and read by one 64-bit load"
                .to_string(),
        ];
        match target {
            Target::Cuda => out.extend(self.cuda()),
            Target::OpenCl => out.extend(self.opencl()),
            Target::C | Target::OpenMp => return Vec::new(),
        }
        out
    }

    fn cuda(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.ticket {
            out.push(
                "__device__ __forceinline__ unsigned long long shine_ticket(unsigned long long *counter) {\n  \
                 return atomicAdd(counter, 1ull);\n}"
                    .to_string(),
            );
        }
        if self.walk {
            out.push(
                "__device__ __forceinline__ unsigned long long shine_await(const unsigned long long *slot) {\n  \
                 unsigned long long w;\n  \
                 do {\n    w = *(const volatile unsigned long long *)slot;\n  } while ((w >> 32) == 0ull);\n  \
                 return w;\n}\n\
                 __device__ __forceinline__ bool shine_is_prefix(unsigned long long w) {\n  \
                 return (w >> 32) == 2ull;\n}"
                    .to_string(),
            );
        }
        if self.window {
            out.push(
                "__device__ __forceinline__ unsigned long long shine_await_window(const unsigned long long *descriptors, long long k) {\n  \
                 unsigned long long w;\n  \
                 do {\n    w = k >= 0 ? *(const volatile unsigned long long *)&descriptors[k] : (1ull << 32);\n  \
                 } while (__any_sync(0xffffffffu, (w >> 32) == 0ull));\n  \
                 return w;\n}\n\
                 __device__ __forceinline__ int shine_nearest_prefix(unsigned long long w) {\n  \
                 unsigned int prefixes = __ballot_sync(0xffffffffu, (w >> 32) == 2ull);\n  \
                 return prefixes == 0u ? -1 : 31 - __clz(prefixes);\n}"
                    .to_string(),
            );
        }
        for v in VALUE_TYPES.iter().filter(|v| self.values.contains(v.name)) {
            let (ty, bits, value) = v.cuda;
            out.push(format!(
                "__device__ __forceinline__ void shine_publish_{n}(unsigned long long *slot, unsigned int status, {ty} v) {{\n  \
                 atomicExch(slot, ((unsigned long long)status << 32) | (unsigned long long)({bits}));\n}}\n\
                 __device__ __forceinline__ {ty} shine_value_{n}(unsigned long long w) {{\n  \
                 return {value};\n}}",
                n = v.name
            ));
        }
        out
    }

    fn opencl(&self) -> Vec<String> {
        let mut out = vec![
            "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable".to_string(),
            "#ifndef cl_khr_int64_base_atomics".to_string(),
            "#error \"scanLookback needs 64-bit atomics (cl_khr_int64_base_atomics), which this \
             OpenCL device lacks: scan with scanTiles (examples/gpu.elv) instead\""
                .to_string(),
            "#endif".to_string(),
        ];
        if self.ticket {
            out.push(
                "ulong shine_ticket(volatile __global ulong *counter) {\n  \
                 return atom_inc(counter);\n}"
                    .to_string(),
            );
        }
        if self.walk {
            out.push(
                "ulong shine_await(volatile __global ulong *slot) {\n  \
                 ulong w;\n  \
                 do {\n    w = atom_add(slot, 0UL);\n  } while ((w >> 32) == 0UL);\n  \
                 return w;\n}\n\
                 bool shine_is_prefix(ulong w) {\n  \
                 return (w >> 32) == 2UL;\n}"
                    .to_string(),
            );
        }
        for v in VALUE_TYPES.iter().filter(|v| self.values.contains(v.name)) {
            let (ty, bits, value) = v.opencl;
            out.push(format!(
                "void shine_publish_{n}(volatile __global ulong *slot, uint status, {ty} v) {{\n  \
                 atom_xchg(slot, ((ulong)status << 32) | (ulong)({bits}));\n}}\n\
                 {ty} shine_value_{n}(ulong w) {{\n  \
                 return {value};\n}}",
                n = v.name
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prelude_defines_what_is_used_in_each_dialect() {
        assert!(LookbackUse::default().prelude(Target::Cuda).is_empty());
        let mut used = LookbackUse::default();
        used.ticket();
        used.await_helper();
        assert_eq!(
            used.value_helpers(Scalar::Float),
            Some(("shine_publish_f32".into(), "shine_value_f32".into()))
        );
        assert_eq!(used.value_helpers(Scalar::Double), None);
        let cuda = used.prelude(Target::Cuda).join("\n");
        assert!(cuda.contains("atomicAdd(counter, 1ull)"));
        assert!(cuda.contains("atomicExch(slot"));
        assert!(cuda.contains("const volatile unsigned long long *"));
        assert!(cuda.contains("__float_as_uint(v)"));
        assert!(!cuda.contains("shine_publish_i32"));
        let cl = used.prelude(Target::OpenCl).join("\n");
        assert!(cl.contains("#ifndef cl_khr_int64_base_atomics"));
        assert!(cl.contains("atom_inc(counter)"));
        assert!(cl.contains("atom_xchg(slot"));
        assert!(cl.contains("as_float((uint)w)"));
        assert!(used.prelude(Target::C).is_empty());
        assert!(!cuda.contains("shine_await_window"));
        used.await_window_helper();
        let cuda = used.prelude(Target::Cuda).join("\n");
        assert!(cuda.contains("while (__any_sync(0xffffffffu, (w >> 32) == 0ull));"));
        assert!(cuda.contains("__ballot_sync(0xffffffffu, (w >> 32) == 2ull)"));
    }
}
