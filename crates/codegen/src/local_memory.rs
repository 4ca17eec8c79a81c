//! Where the local (CUDA shared) arrays of a GPU kernel live.
//!
//! OpenCL declares each local array in the kernel (`local T x[n]`, 16-byte aligned). CUDA
//! declares them `__shared__` as long as the kernel's local memory totals at most
//! [`STATIC_SHARED_LIMIT`] (48 KiB), the most static shared memory a block may have; arrays
//! of [`TILE_ALIGN`] bytes or more are then declared `__align__(1024)`. A kernel that needs
//! more (an H100 block may have 227 KiB) keeps its arrays in one buffer of dynamic shared
//! memory, [`SHARED_BUFFER`], declared once for the module:
//!
//! ```c
//! extern __shared__ __align__(1024) unsigned char shine_smem[];
//! ...
//!   uint4 *__restrict__ stage18 = (uint4 *)shine_smem;
//!   uint4 *__restrict__ stage19 = (uint4 *)(shine_smem + 16384);
//! ```
//!
//! Each array is a pointer into it at an offset computed here, under its own name, so the
//! code that indexes it is the same either way. The host passes the buffer's size at every
//! launch and raises the kernel's limit first (`cuFuncSetAttribute`, see
//! `runtime::CudaLaunch`). The static layout stays for the kernels that fit in 48 KiB: their
//! code is unchanged, and their launches need no attribute.
//!
//! Every array starts at a multiple of 16 bytes (so that 16-byte vectors are read and
//! written whole), and on CUDA an array of 1024 bytes or more at a multiple of 1024 (the
//! operand tiles of Hopper's tensor-core instructions need that). The arrays of a kernel do
//! not share memory, even those of disjoint scopes, as with static declarations.

use std::collections::HashMap;

use crate::ast::{AddrSpace, BinOp, Decl, Expr, Stmt, Type};
use crate::error::{unsupported, CodegenError};
use crate::Target;

/// The most static shared memory a CUDA block may have, in bytes (48 KiB); more is dynamic.
pub const STATIC_SHARED_LIMIT: u64 = 48 * 1024;

/// The alignment in bytes of a CUDA local array of at least this many bytes (Hopper's
/// `wgmma` operand tiles start at 1024-byte aligned shared addresses).
pub const TILE_ALIGN: u64 = 1024;

/// The alignment in bytes of every other local array.
pub const MIN_ALIGN: u64 = 16;

/// The name of the CUDA dynamic shared memory buffer.
pub const SHARED_BUFFER: &str = "shine_smem";

/// The most local memory a kernel may ask for, in bytes: a CUDA launch passes its dynamic
/// shared memory as a 32-bit count (and no device has as much).
const MAX_LOCAL_BYTES: u64 = u32::MAX as u64;

/// The local memory of one work-group (CUDA block) of a kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LocalMemory {
    /// Its size in bytes, the padding that aligns its arrays included.
    pub bytes: u64,
    /// Whether it is CUDA dynamic shared memory, whose size every launch passes.
    pub dynamic: bool,
}

impl LocalMemory {
    /// The bytes of dynamic shared memory a launch of the kernel passes (0 for static).
    pub fn dynamic_bytes(&self) -> u64 {
        if self.dynamic {
            self.bytes
        } else {
            0
        }
    }
}

/// One array of a layout: its name, its size and where it starts, in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The array's name in the generated code.
    pub name: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its offset from the start of the kernel's local memory.
    pub offset: u64,
}

/// The local arrays of a kernel, one after the other.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// The arrays, in the order given, each at an offset aligned as [`alignment`] says.
    pub arrays: Vec<Placed>,
    /// The bytes from the start to the end of the last array.
    pub bytes: u64,
}

/// The alignment in bytes of a local array of `bytes` bytes on `target`: [`TILE_ALIGN`] for
/// a CUDA array of at least that many bytes, else [`MIN_ALIGN`].
pub fn alignment(bytes: u64, target: Target) -> u64 {
    if target == Target::Cuda && bytes >= TILE_ALIGN {
        TILE_ALIGN
    } else {
        MIN_ALIGN
    }
}

/// Places `arrays` (names and sizes in bytes) one after the other, each at the next offset
/// aligned for `target`. Errors: more than [`MAX_LOCAL_BYTES`] in all.
pub fn layout(
    arrays: impl IntoIterator<Item = (String, u64)>,
    target: Target,
) -> Result<Layout, CodegenError> {
    let mut placed = Layout::default();
    for (name, bytes) in arrays {
        let offset = placed.bytes.next_multiple_of(alignment(bytes, target));
        let end = offset.saturating_add(bytes);
        if end > MAX_LOCAL_BYTES {
            return unsupported(format!(
                "the local memory of a work-group reaches {end} bytes with `{name}`, more than \
                 the {MAX_LOCAL_BYTES} a kernel may ask for"
            ));
        }
        placed.arrays.push(Placed {
            name,
            bytes,
            offset,
        });
        placed.bytes = end;
    }
    Ok(placed)
}

/// Lays out the local arrays declared in the kernel body `body` (`sizes`: their bytes by
/// name, [`crate::lower::Lowerer::local_arrays`]) and declares them for `target`: on CUDA
/// as `__shared__` arrays (aligned as [`alignment`] says) while they total at most
/// [`STATIC_SHARED_LIMIT`], else as pointers into [`SHARED_BUFFER`].
pub(crate) fn place_local_arrays(
    body: &mut [Stmt],
    sizes: &HashMap<String, u64>,
    target: Target,
) -> Result<LocalMemory, CodegenError> {
    let mut names = Vec::new();
    for_each_local_array(body, &mut |d| names.push(d.name.clone()));
    let arrays = names
        .into_iter()
        .map(|name| match sizes.get(&name) {
            Some(&bytes) => Ok((name, bytes)),
            None => unsupported(format!(
                "the size of the local array `{name}` is not known (internal error)"
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let placed = layout(arrays, target)?;
    let dynamic = target == Target::Cuda && placed.bytes > STATIC_SHARED_LIMIT;
    let offsets: HashMap<&str, &Placed> =
        placed.arrays.iter().map(|p| (p.name.as_str(), p)).collect();
    if target == Target::Cuda {
        for_each_local_array(body, &mut |d| {
            if let Some(p) = offsets.get(d.name.as_str()) {
                if dynamic {
                    *d = pointer_into_buffer(d, p.offset);
                } else if alignment(p.bytes, target) != MIN_ALIGN {
                    d.align = Some(alignment(p.bytes, target));
                }
            }
        });
    }
    Ok(LocalMemory {
        bytes: placed.bytes,
        dynamic,
    })
}

/// The file-scope declaration of [`SHARED_BUFFER`].
pub(crate) fn shared_buffer_declaration() -> String {
    format!("extern __shared__ __align__({TILE_ALIGN}) unsigned char {SHARED_BUFFER}[];")
}

/// `T *__restrict__ name = (T *)(shine_smem + offset);` in place of `__shared__ T name[n];`.
fn pointer_into_buffer(array: &Decl, offset: u64) -> Decl {
    let start = match offset {
        0 => Expr::ident(SHARED_BUFFER),
        _ => Expr::binary(
            BinOp::Add,
            Expr::ident(SHARED_BUFFER),
            Expr::Int(offset as i64),
        ),
    };
    let ty = Type::Pointer {
        to: Box::new(array.ty.clone()),
        is_const: false,
        restrict: true,
        addr: AddrSpace::Default,
    };
    Decl {
        ty,
        name: array.name.clone(),
        array_len: None,
        init: Some(start.cast(Type::ptr(array.ty.clone()))),
        addr: AddrSpace::Default,
        align: None,
    }
}

/// Calls `f` on every local array declared in `stmts`, in order, nested scopes included.
fn for_each_local_array(stmts: &mut [Stmt], f: &mut dyn FnMut(&mut Decl)) {
    for s in stmts {
        match s {
            Stmt::Decl(d) if d.addr == AddrSpace::Local && d.array_len.is_some() => f(d),
            Stmt::If(_, then, els) => {
                for_each_local_array(then, f);
                for_each_local_array(els, f);
            }
            Stmt::For(l) => for_each_local_array(&mut l.body, f),
            Stmt::Block(b) => for_each_local_array(b, f),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::Scalar;
    use crate::print::print_in;

    fn byte() -> Type {
        Type::Scalar(Scalar::U8)
    }

    fn arrays(sizes: &[u64]) -> Vec<(String, u64)> {
        sizes
            .iter()
            .enumerate()
            .map(|(k, &b)| (format!("a{k}"), b))
            .collect()
    }

    fn offsets(sizes: &[u64], target: Target) -> Vec<u64> {
        let l = layout(arrays(sizes), target).expect("a layout");
        l.arrays.iter().map(|p| p.offset).collect()
    }

    #[test]
    fn cuda_aligns_arrays_of_a_kilobyte_or_more_to_1024_and_others_to_16() {
        assert_eq!(
            offsets(&[4, 1024, 20, 3000, 1023, 8], Target::Cuda),
            vec![0, 1024, 2048, 3072, 6080, 7104]
        );
        let l = layout(arrays(&[4, 1024]), Target::Cuda).expect("a layout");
        assert_eq!(l.bytes, 2048);
    }

    #[test]
    fn opencl_aligns_every_array_to_16() {
        assert_eq!(
            offsets(&[4, 1024, 20, 3000], Target::OpenCl),
            vec![0, 16, 1040, 1072]
        );
    }

    #[test]
    fn four_stages_of_mm_wide_tiles_take_96_kib() {
        // 128x32 and 32x256 f16 tiles, four of each
        let l = layout(arrays(&[4 * 8192, 4 * 16384]), Target::Cuda).expect("a layout");
        assert_eq!(l.bytes, 96 * 1024);
        assert_eq!(l.arrays[1].offset, 32768);
    }

    #[test]
    fn more_than_four_gigabytes_is_refused() {
        let e = layout(arrays(&[u32::MAX as u64, 16]), Target::Cuda).expect_err("too big");
        assert!(e.to_string().contains("`a1`"), "{e}");
    }

    fn local(name: &str, ty: Type, len: u64) -> Stmt {
        Stmt::Decl(Decl {
            ty,
            name: name.into(),
            array_len: Some(len),
            init: None,
            addr: AddrSpace::Local,
            align: None,
        })
    }

    /// A kernel body with a 16-byte array, then in a loop a `big`-byte array of floats.
    fn body(big: u64) -> (Vec<Stmt>, HashMap<String, u64>) {
        let body = vec![
            local("small", byte(), 16),
            Stmt::For(crate::ast::For {
                var: "i".into(),
                start: Expr::Int(0),
                end: Expr::Int(2),
                step: Expr::Int(1),
                body: vec![local("tile", Type::Scalar(Scalar::Float), big / 4)],
                pragma: None,
            }),
        ];
        let sizes = HashMap::from([("small".to_string(), 16), ("tile".to_string(), big)]);
        (body, sizes)
    }

    fn printed(body: Vec<Stmt>, target: Target) -> String {
        let unit = crate::ast::Unit {
            header: String::new(),
            includes: Vec::new(),
            preamble: Vec::new(),
            typedefs: Vec::new(),
            functions: vec![crate::ast::Function {
                kind: crate::ast::FnKind::Kernel,
                name: "k".into(),
                ret: Type::Void,
                params: Vec::new(),
                body,
            }],
        };
        print_in(&unit, target)
    }

    #[test]
    fn cuda_keeps_48_kib_static_and_aligns_its_tiles() {
        let (mut b, sizes) = body(STATIC_SHARED_LIMIT - 1024);
        let mem = place_local_arrays(&mut b, &sizes, Target::Cuda).expect("placed");
        assert_eq!(
            mem,
            LocalMemory {
                bytes: STATIC_SHARED_LIMIT,
                dynamic: false
            }
        );
        let text = printed(b, Target::Cuda);
        assert!(
            text.contains("__shared__ __align__(16) unsigned char small[16];"),
            "{text}"
        );
        assert!(
            text.contains("__shared__ __align__(1024) float tile[12032];"),
            "{text}"
        );
    }

    #[test]
    fn cuda_moves_more_than_48_kib_into_the_dynamic_buffer() {
        let (mut b, sizes) = body(STATIC_SHARED_LIMIT);
        let mem = place_local_arrays(&mut b, &sizes, Target::Cuda).expect("placed");
        assert_eq!(
            mem,
            LocalMemory {
                bytes: 1024 + STATIC_SHARED_LIMIT,
                dynamic: true
            }
        );
        assert_eq!(mem.dynamic_bytes(), 50176);
        let text = printed(b, Target::Cuda);
        assert!(!text.contains("__shared__"), "{text}");
        assert!(
            text.contains("unsigned char *__restrict__ small = (unsigned char *)shine_smem;"),
            "{text}"
        );
        assert!(
            text.contains("float *__restrict__ tile = (float *)(shine_smem + 1024);"),
            "{text}"
        );
    }

    #[test]
    fn opencl_keeps_every_array_static() {
        let (mut b, sizes) = body(4 * STATIC_SHARED_LIMIT);
        let mem = place_local_arrays(&mut b, &sizes, Target::OpenCl).expect("placed");
        assert_eq!(mem.bytes, 16 + 4 * STATIC_SHARED_LIMIT);
        assert_eq!(mem.dynamic_bytes(), 0);
        let text = printed(b, Target::OpenCl);
        assert!(
            text.contains("local float tile[49152] __attribute__((aligned(16)));"),
            "{text}"
        );
    }
}
