//! OpenCL and CUDA code generation: kernels plus a host plan (RISE & Shine §V-D,
//! Listing 11).
//!
//! [`generate_gpu`] prepares the DPIA program for a GPU ([`dpia::gpu::prepare`]:
//! kernel/host split, launch configurations, hoisting, barriers), lowers every
//! kernel with the same views-to-indices machinery as the C back end, and prints
//! them as OpenCL C or CUDA C++ (for NVRTC) in one source. The host side is data,
//! not code: a [`GpuModule`] lists the temporary buffers to allocate and, for each
//! kernel, the buffers and sizes it takes and how it is launched; the runtime
//! (`runtime::OpenClProgram`, `runtime::CudaProgram`) allocates, transfers,
//! launches and reads back. [`GpuModule::host_plan`] describes it in words, and the
//! source starts with that description as a comment.
//!
//! The same program compiles to both targets: `mapWorkGroup(d)` and `mapBlock(d)`
//! are the loop over work-groups (blocks), `mapLocal(d)` and `mapThread(d)` the
//! loop over the threads of one. A parallel loop is printed as a loop over the
//! threads of its level, as in Listing 11:
//!
//! ```c
//! // mapWorkGroup(0)
//! for (int wg0 = get_group_id(0); wg0 < n / 32; wg0 += get_num_groups(0)) {
//!   // mapLocal(0)
//!   for (int lid0 = get_local_id(0); lid0 < 24; lid0 += get_local_size(0)) {
//! ```
//!
//! except where it needs no loop: a `mapLocal(d)` loop with as many iterations as
//! the work-group has work-items in dimension `d` is one iteration per work-item
//! (`{ int lid0 = get_local_id(0); ... }`), and a `mapGlobal(d)` loop is at most one
//! (`if (gid0 < n)`), since the host launches enough work-items for the largest
//! ([`GpuKernel::dims`] refuses a grid that would not be). Fewer registers stay live
//! across the body (the tiled matmul of `mmTiled` needs 107 instead of 157).
//!
//! Private memory a work-group allocates outside its `mapLocal` loops (the
//! accumulators of a register-blocked reduction) is given to each thread only in
//! the part it indexes with its local ids, when every access does so (see
//! `Lowerer::distributable`); examples/gpu_mm.rise's 16x16x4x4 accumulator becomes
//! 4x4 registers per work-item.
//!
//! # Vectors
//! `vec[t, n]` (from `asVector`, `mapVec`, `vectorize`) is the dialect's builtin
//! vector type: `float`, `double`, `int` and `uint` vectors of 2, 4, 8 or 16 lanes
//! in OpenCL, of 2 or 4 lanes and at most 16 bytes in CUDA (`float4`, `double2`;
//! CUDA has no `float8`). Consecutive elements are loaded and stored as one
//! vector: OpenCL `vload4(k, x)` / `vstore4(v, k, x)`; CUDA `*(const float4 *)&x[i]`
//! where the address is provably aligned (a buffer or a local array, `i` a multiple
//! of 4), else `make_float4(x[i], x[i + 1], ...)` and lane by lane stores. OpenCL
//! has vector arithmetic; for CUDA the source defines the operators it needs
//! (`operator+(float4, float4)`, with a scalar on either side, ...). Lanes are
//! `.s0` .. `.sf` (OpenCL) and `.x` .. `.w` (CUDA), and must be constants.
//!
//! # Warps (CUDA)
//! `mapWarp` is a loop over the warps of a block (`threadIdx.x / 32`, striding by
//! `blockDim.x / 32`, or one iteration per warp where it has as many), `mapLane` a loop
//! over the 32 lanes of a warp (`threadIdx.x % 32`, striding by 32, or one iteration per
//! lane where it has 32); `reduceWarp` prints the shuffles
//! `v = f(v, __shfl_xor_sync(0xffffffffu, v, o))` for `o` = 16 .. 1, then
//! `__shfl_sync(0xffffffffu, v, 0)` (see `dpia::gpu` for where they may sit), `scanWarp`
//! the steps `o = __shfl_up_sync(0xffffffffu, v, d); if (lane >= d) v = f(v, o)` for `d` =
//! 1 .. 16. OpenCL refuses them (it would need sub-groups).
//!
//! # Not supported yet (each an error naming it)
//! Vectors of other element types or lane counts, a vector lane chosen at run
//! time, `bool` buffers, `mapWarp` and `mapLane` on OpenCL, local memory of a size that is
//! not a constant, pairs holding arrays as input or temporary buffers (a result
//! that is a tuple of arrays is one output buffer per array, as on C and OpenMP).

use arith::{Nat, Var};
use dpia::{Comm, GpuProgram, Launch};
use rise::DataType;

use crate::abi;
use crate::ast::{FnKind, Function, Type, Unit};
use crate::ctypes::{moved_half_vector, vector_elem_lanes, Types};
use crate::error::{unsupported, CodegenError};
use crate::layout::{self, show_type};
use crate::local_memory::{self, LocalMemory};
use crate::lower::Lowerer;
use crate::print::dialect::Dialect;
use crate::print::print_in;
use crate::Target;

/// What a kernel parameter is bound to at a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelParam {
    /// The output buffer of this index: `0`, or for a result that is a tuple of arrays
    /// one per array, in the order of `layout::leaves` (as on C and OpenMP).
    Output(usize),
    /// The input buffer of this index (in the order of the definition's parameters).
    Input(usize),
    /// The temporary buffer of this index ([`GpuModule::temporaries`]).
    Temporary(usize),
    /// The value of the size of this index (in the order of [`GpuModule::sizes`]), as `int`.
    Size(usize),
    /// The status flag: one zero-initialised `int` of global memory that a kernel sets to
    /// an [`crate::EntryStatus`] when the program stops on an error (an integer division
    /// by zero); the host reads it back after the launches and reports a non-zero value.
    Status,
}

impl KernelParam {
    /// The index of the runtime buffer this parameter is bound to, where the buffers of a
    /// run are numbered as `runtime::GpuProgram` numbers them: the `outputs` output buffers,
    /// then the `inputs` input buffers, then the temporaries, the status flag after them
    /// (`temporaries` is how many the module has). `None` for a size.
    pub fn buffer(self, outputs: usize, inputs: usize, temporaries: usize) -> Option<usize> {
        match self {
            KernelParam::Output(k) => Some(k),
            KernelParam::Input(i) => Some(outputs + i),
            KernelParam::Temporary(t) => Some(outputs + inputs + t),
            KernelParam::Status => Some(outputs + inputs + temporaries),
            KernelParam::Size(_) => None,
        }
    }
}

/// One kernel of a module.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuKernel {
    /// Its name in the source.
    pub name: String,
    /// Its parameters, in order.
    pub params: Vec<KernelParam>,
    /// How it is launched, in terms of [`GpuModule::sizes`].
    pub launch: Launch,
    /// Whether the kernel must get exactly the work-items per work-group its launch
    /// names: some `mapLocal` loop runs one iteration per work-item, or private memory
    /// is divided among the work-items. [`GpuKernel::dims`] then refuses a device that
    /// allows fewer, rather than letting the loops stride.
    pub exact_threads: bool,
    /// The local (CUDA shared) memory of one of its work-groups: its size, and whether it is
    /// dynamic shared memory, whose size a CUDA launch passes ([`crate::local_memory`]).
    pub local_memory: LocalMemory,
}

/// Global memory the host allocates for intermediate results (zero-initialised,
/// device only).
#[derive(Clone, Debug, PartialEq)]
pub struct Temporary {
    /// The memory's name in the program.
    pub name: String,
    /// The number of elements, in terms of [`GpuModule::sizes`].
    pub elements: Nat,
    /// The size of one element in bytes ([`crate::abi::gpu_layout`]) where the index type is
    /// 64-bit, which is enough for either width ([`IndexWidth`]: an element holding an
    /// `idx[n]` takes less room in a run with 32-bit indices, and is given as much).
    pub elem_bytes: u64,
}

/// Generated GPU code and the plan of the host side.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuModule {
    /// The language of [`GpuModule::source`].
    pub target: Target,
    /// The kernels' source (OpenCL C, or CUDA C++ for NVRTC), starting with the host plan as a comment.
    pub source: String,
    /// The kernels, in the order the host launches them.
    pub kernels: Vec<GpuKernel>,
    /// The temporary buffers, in index order.
    pub temporaries: Vec<Temporary>,
    /// The program's sizes, in order (the variables launch sizes and temporaries mention).
    pub sizes: Vec<Var>,
    /// The element counts of every array the kernels read or write, in memory or as a
    /// view, the counts of their loops and the bounds of their index values (see
    /// [`GpuModule::index_width`]).
    pub index_extents: Vec<Nat>,
    /// The architecture the kernels must be compiled for, where they use features of one
    /// (`sm_90a`: Hopper's warp-group multiplies, `wgmma`); `None`: the device's own.
    pub arch: Option<&'static str>,
}

/// The width of the index type ([`crate::ast::INDEX_TYPE`]) a run of a GPU module is
/// built with.
pub use crate::abi::IndexWidth;

/// The largest extent for which 32-bit indices are used: 2^30, half of `int`'s range,
/// so that the offsets of pads and windows around an index stay representable too.
const MAX_32_BIT_EXTENT: i64 = 1 << 30;

/// The grid of one launch: work-groups (blocks) and threads per work-group, per dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchDims {
    /// The number of work-groups (CUDA: the grid, in blocks).
    pub groups: [u32; 3],
    /// The number of threads of a work-group (CUDA: the block).
    pub threads: [u32; 3],
}

impl LaunchDims {
    /// The OpenCL global size: groups times threads, per dimension.
    pub fn global(&self) -> [usize; 3] {
        [0, 1, 2].map(|d| self.groups[d] as usize * self.threads[d] as usize)
    }

    /// The number of dimensions used (1 to 3).
    pub fn dims(&self) -> usize {
        (0..3)
            .rev()
            .find(|&d| self.groups[d] > 1 || self.threads[d] > 1)
            .map_or(1, |d| d + 1)
    }
}

impl GpuKernel {
    /// The launch grid for the given values of the module's sizes: as the program
    /// encodes it for `mapWorkGroup`/`mapLocal` kernels (work-groups beyond the
    /// device's limits, and threads beyond `max_threads`, are left to the kernel's
    /// loops, which stride over the iterations), and the host's choice for
    /// `mapGlobal` kernels (up to 256 threads per work-group, enough work-groups to
    /// give every iteration a thread).
    pub fn dims(
        &self,
        sizes: &[Var],
        values: &[i64],
        max_threads: usize,
    ) -> Result<LaunchDims, CodegenError> {
        let eval = |n: &Nat| -> Result<i64, CodegenError> {
            n.eval(&|v: &Var| {
                sizes
                    .iter()
                    .position(|s| s == v)
                    .and_then(|i| values.get(i).copied())
            })
            .map_err(|e| {
                CodegenError::Unsupported(format!(
                    "the launch of kernel `{}` needs `{n}`, which cannot be evaluated: {e:?}",
                    self.name
                ))
            })
        };
        let max_groups = [i64::from(i32::MAX), 65535, 65535];
        let max_threads = max_threads.clamp(1, 1024) as i64;
        Ok(match &self.launch {
            Launch::Single => LaunchDims {
                groups: [1; 3],
                threads: [1; 3],
            },
            Launch::Groups { groups, threads } => {
                let mut t = [1i64; 3];
                for d in 0..3 {
                    t[d] = eval(&threads[d])?.max(1);
                }
                if self.exact_threads && t.iter().product::<i64>() > max_threads {
                    return Err(CodegenError::Unsupported(format!(
                        "kernel `{}` needs work-groups of {} work-items, more than the {max_threads} \
                         the device allows",
                        self.name,
                        t.iter().product::<i64>()
                    )));
                }
                while t.iter().product::<i64>() > max_threads {
                    let d = (0..3).max_by_key(|&d| t[d]).unwrap_or(0);
                    t[d] = (t[d] / 2).max(1);
                }
                let mut g = [1u32; 3];
                for d in 0..3 {
                    g[d] = eval(&groups[d])?.clamp(1, max_groups[d]) as u32;
                }
                LaunchDims {
                    groups: g,
                    threads: t.map(|t| t as u32),
                }
            }
            Launch::Global(items) => {
                let counts = [0, 1, 2].map(|d| eval(&items[d]));
                let mut c = [1i64; 3];
                for d in 0..3 {
                    c[d] = counts[d].clone()?.max(1);
                }
                let t = global_threads(c, max_threads.min(256));
                let mut g = [1u32; 3];
                for d in 0..3 {
                    let groups = (c[d] + t[d] - 1) / t[d];
                    if groups > max_groups[d] {
                        // every work-item runs at most one iteration of its loops
                        return Err(CodegenError::Unsupported(format!(
                            "kernel `{}` needs {} work-items in dimension {d}, more than a grid \
                             of {} work-groups of {} holds",
                            self.name, c[d], max_groups[d], t[d]
                        )));
                    }
                    g[d] = groups.max(1) as u32;
                }
                LaunchDims {
                    groups: g,
                    threads: t.map(|t| t as u32),
                }
            }
        })
    }
}

/// The work-items per work-group of a `mapGlobal` kernel with `counts` iterations per
/// dimension, at most `budget` in all: 32 along dimension 0 (a warp reads consecutive
/// elements), or the next power of two of a shorter count, and what the budget leaves
/// along dimension 1 (one plane of a 3-D grid per work-group, whose rows its neighbours in
/// dimension 1 read again from cache), so that a narrow grid (4 columns) still fills
/// work-groups of `budget`; a 1-D grid takes the whole budget along dimension 0.
fn global_threads(counts: [i64; 3], budget: i64) -> [i64; 3] {
    let fit = |d: usize, most: i64| {
        most.min((counts[d] as u64).next_power_of_two() as i64)
            .max(1)
    };
    let used = (0..3).rev().find(|&d| counts[d] > 1).map_or(1, |d| d + 1);
    if used == 1 {
        return [fit(0, budget), 1, 1];
    }
    let across = fit(0, 32);
    [across, fit(1, budget / across), 1]
}

impl GpuModule {
    /// Whether some kernel takes the status flag ([`KernelParam::Status`]).
    pub fn uses_status(&self) -> bool {
        self.kernels
            .iter()
            .any(|k| k.params.contains(&KernelParam::Status))
    }

    /// The index width a run with these values of [`GpuModule::sizes`] needs: 32 bits
    /// where every index extent is at most 2^30, else 64.
    ///
    /// Why that suffices: an index the kernels compute is the flat position of an
    /// element in memory, a sum of non-negative terms each at most that position, or such
    /// a position less a pad's offset; an index into one dimension of a type (a view
    /// remaps indices dimension by dimension); a flat position in the outermost dimension
    /// a view forms (`i*n + j` of `split` and `slide` below its operand's length, `i / m`
    /// of `join` below its result's); a loop counts the elements of an array or runs a
    /// count that is itself an extent; a size computed as a value is one. So every value
    /// computed in the index type is bounded by twice the largest extent. An extent that
    /// cannot be evaluated (it mentions a variable that is not a size) asks for 64 bits.
    pub fn index_width(&self, values: &[i64]) -> IndexWidth {
        let fits = |n: &Nat| {
            n.eval(&|v: &Var| {
                self.sizes
                    .iter()
                    .position(|s| s == v)
                    .and_then(|i| values.get(i).copied())
            })
            .is_ok_and(|e| e <= MAX_32_BIT_EXTENT)
        };
        if self.index_extents.iter().all(fits) {
            IndexWidth::Bits32
        } else {
            IndexWidth::Bits64
        }
    }

    /// The host side in words: the buffers, then each launch. `outputs` is how many
    /// buffers the output `output` is (one per array of a tuple of arrays).
    pub fn host_plan(&self, inputs: &[String], (output, outputs): (&str, usize)) -> String {
        let mut lines = Vec::new();
        let sizes: Vec<&str> = self.sizes.iter().map(Var::name).collect();
        let output = match outputs {
            1 => format!("the output `{output}`"),
            k => format!("the output `{output}` ({k} buffers, one per array)"),
        };
        lines.push(format!(
            "Host: copy the inputs ({}) to the device, allocate {output}{}; \
             sizes: {}.",
            inputs.join(", "),
            if self.temporaries.is_empty() {
                String::new()
            } else {
                let t: Vec<String> = self
                    .temporaries
                    .iter()
                    .map(|t| {
                        let n = crate::print::expr(&crate::nat_expr::nat_to_expr(&t.elements));
                        format!("`{}` ({n} x {} bytes)", t.name, t.elem_bytes)
                    })
                    .collect();
                format!(" and the temporaries {}", t.join(", "))
            },
            if sizes.is_empty() {
                "none".to_string()
            } else {
                sizes.join(", ")
            }
        ));
        for (k, kernel) in self.kernels.iter().enumerate() {
            let shared = match kernel.local_memory.dynamic_bytes() {
                0 => String::new(),
                bytes => format!(", {bytes} bytes of dynamic shared memory"),
            };
            lines.push(format!(
                "Launch {}: {} with {}{shared}.",
                k + 1,
                kernel.name,
                describe_launch(&kernel.launch)
            ));
        }
        if self.uses_status() {
            lines.push(
                "The kernels taking `status` (one int, zeroed) set it when the program stops on \
                 an error; the host reads it back and reports it."
                    .into(),
            );
        }
        lines.push("Then copy the output back to the host.".into());
        lines.join("\n")
    }
}

fn describe_launch(l: &Launch) -> String {
    let dims = |v: &[Nat; 3]| -> String {
        let used = (0..3)
            .rev()
            .find(|&d| v[d] != Nat::cst(1))
            .map_or(1, |d| d + 1);
        v[..used]
            .iter()
            .map(|n| crate::print::expr(&crate::nat_expr::nat_to_expr(n)))
            .collect::<Vec<_>>()
            .join(" x ")
    };
    match l {
        Launch::Single => "one work-item".into(),
        Launch::Global(items) => format!("at least {} work-items", dims(items)),
        Launch::Groups { groups, threads } => format!(
            "{} work-groups (blocks) of {} work-items (threads)",
            dims(groups),
            dims(threads)
        ),
    }
}

/// Generates the kernels of `program` for `target`, with the host plan.
pub fn generate_gpu(program: &dpia::Program, target: Target) -> Result<GpuModule, CodegenError> {
    generate_gpu_with(program, target, crate::Options::default())
}

/// [`generate_gpu`] with options.
pub fn generate_gpu_with(
    program: &dpia::Program,
    target: Target,
    options: crate::Options,
) -> Result<GpuModule, CodegenError> {
    let gp = dpia::gpu::prepare(program).map_err(CodegenError::Gpu)?;
    check_types(&gp, target)?;
    if !target.is_gpu() {
        return unsupported(format!("`{target}` is not a GPU target"));
    }
    let dialect = target;
    let mut l = Lowerer::default();
    l.types = Types::for_gpu(target);
    l.target = target;
    l.unchecked_indices = options.unchecked_indices;
    // the host checks the sizes before it launches anything: the code may assume them
    l.size_multiples = crate::lower::SizeMultiples::of(&program.constraints);
    // Typedefs first, so that they get their canonical names.
    let all = dpia::Program {
        name: gp.name.clone(),
        sizes: gp.sizes.clone(),
        output: gp.output.clone(),
        inputs: gp.inputs.iter().chain(&gp.temporaries).cloned().collect(),
        body: Comm::Seq(gp.kernels.iter().map(|k| k.body.clone()).collect()),
        // the host checks the sizes before it launches anything
        constraints: Vec::new(),
    };
    l.foreign = crate::foreign::Foreign::collect(&all.body, &mut l.names)?;
    l.register_types(&all)?;
    if target == Target::Cuda {
        l.names.reserve(local_memory::SHARED_BUFFER);
    }
    let kernel_names: Vec<String> = gp.kernels.iter().map(|k| l.names.fresh(&k.name)).collect();
    let names = l.names.clone();
    let mut functions = Vec::new();
    let mut kernels = Vec::new();
    for (k, name) in gp.kernels.iter().zip(kernel_names) {
        // every kernel names its variables afresh (`output` in each)
        l.names = names.clone();
        for td in l.types.defs() {
            l.names.reserve(td.name());
        }
        l.threads = match &k.launch {
            Launch::Groups { threads, .. } => threads.clone().map(|t| t.as_cst()),
            _ => [None; 3],
        };
        let (mut params, mut refs, body) = l.gpu_kernel(&gp, &k.body)?;
        let mut body = if target == Target::Cuda {
            crate::lower::reuse_operands(body, &mut l.names)
        } else {
            body
        };
        let local_memory = local_memory::place_local_arrays(&mut body, &l.local_arrays, target)?;
        if crate::ast::idents(&body).contains(crate::intops::STATUS) {
            params.push(crate::ast::Param {
                ty: crate::intops::status_type(),
                name: crate::intops::STATUS.into(),
            });
            refs.push(KernelParam::Status);
        }
        let exact_threads = l.exact_threads();
        let mut stmts = vec![crate::ast::Stmt::Comment(format!(
            "launch: {}",
            describe_launch(&k.launch)
        ))];
        stmts.extend(body);
        functions.push(Function {
            kind: FnKind::Kernel,
            name: name.clone(),
            ret: Type::Void,
            params,
            body: stmts,
        });
        kernels.push(GpuKernel {
            name,
            params: refs,
            launch: k.launch.clone(),
            exact_threads,
            local_memory,
        });
    }
    let temporaries = gp
        .temporaries
        .iter()
        .map(|t| {
            let leaves = layout::leaves(&t.ty)?;
            let [leaf] = leaves.as_slice() else {
                return unsupported(format!(
                    "the temporary `{}` of type {}: a pair holding arrays is not one buffer",
                    t.name,
                    show_type(&t.ty)
                ));
            };
            Ok(Temporary {
                name: t.name.clone(),
                elements: leaf.count.clone().unwrap_or_else(|| Nat::cst(1)),
                elem_bytes: abi::gpu_layout(&leaf.elem, IndexWidth::Bits64)?.size,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let uses_double = all_types(&gp)
        .iter()
        .any(|t| mentions(t, &|s| s == rise::ScalarType::F64));
    let mut preamble = Vec::new();
    if kernels.iter().any(|k| k.local_memory.dynamic) {
        preamble.push(local_memory::shared_buffer_declaration());
    }
    if (uses_double || l.foreign.uses_f64()) && target == Target::OpenCl {
        preamble.push("#pragma OPENCL EXTENSION cl_khr_fp64 : enable".to_string());
    }
    preamble.extend(crate::halfs::prelude(target, l.halfs));
    preamble.extend(l.tensor.prelude());
    preamble.extend(l.lookback.prelude(target));
    preamble.extend(l.foreign.prelude(target).1);
    for (elem, lanes) in l.types.builtin_vectors() {
        preamble.extend(Dialect::of(target).vector_operators(elem, lanes)?);
    }
    let mut module = GpuModule {
        target,
        source: String::new(),
        kernels,
        temporaries,
        sizes: gp.sizes.clone(),
        index_extents: index_extents(&gp),
        arch: l.tensor.needs_sm90a().then_some("sm_90a"),
    };
    let inputs: Vec<String> = gp.inputs.iter().map(|i| format!("`{}`", i.name)).collect();
    let header = format!(
        "Generated by shine from the DPIA program `{}` ({}).\n{}",
        gp.name,
        target.language(),
        module.host_plan(
            &inputs,
            (&gp.output.name, layout::leaves(&gp.output.ty)?.len())
        )
    );
    let unit = Unit {
        header,
        includes: Vec::new(),
        preamble,
        typedefs: std::mem::take(&mut l.types).into_defs(),
        functions: l
            .foreign
            .functions()?
            .into_iter()
            .chain(l.helpers())
            .chain(functions)
            .collect(),
    };
    crate::check_code_size(&unit.functions)?;
    module.source = print_in(&unit, dialect);
    Ok(module)
}

/// The extents [`GpuModule::index_width`] bounds, distinct, in the order found: the element
/// counts of every memory (inputs, output, temporaries, `new`), the counts of the loops, every
/// array dimension of every type the kernels read or write, the bounds `n` of `idx[n]`
/// values, the values computed from sizes (`n * m` as data), and for every view the outermost dimensions of its
/// operand and its result (the only flat positions a view computes: `i*n + j` of `split`
/// and `slide`, `i / m` of `join`, `i*n` of `asVector`). A view's whole element count is not
/// an extent: the 3x3x3 windows of `slide3` over 512^3 points are 27 * 2^27 elements, but no
/// index reaches that; only a `reorder`, whose function may compute anything below its
/// operand's count times its own, adds whole counts.
fn index_extents(gp: &GpuProgram) -> Vec<Nat> {
    use dpia::walk::Node;
    use dpia::{AccKind, ExpKind};
    let mut out: Vec<Nat> = Vec::new();
    let mut add = |n: Nat| {
        let n = n.simplify();
        if !out.contains(&n) {
            out.push(n);
        }
    };
    let idents = gp.inputs.iter().chain(&gp.temporaries).chain([&gp.output]);
    for id in idents {
        add_count(&id.ty, &mut add);
    }
    for k in &gp.kernels {
        Node::Comm(&k.body).visit(&mut |node| match node {
            Node::Exp(e) => {
                dimensions(&e.ty, &mut add);
                match &*e.kind {
                    // a constant is printed as a literal; one of sizes and loop variables
                    // is computed, at most its bound in the sizes
                    ExpKind::Nat(n) if !n.free_vars().is_empty() => add(n.upper_bound_expr()),
                    ExpKind::View(v, a) => view_extents(v, &a.ty, &e.ty, &mut add),
                    ExpKind::AsVector(_, a) => view_extents_outer(&a.ty, &e.ty, &mut add),
                    _ => {}
                }
            }
            Node::Acc(a) => {
                dimensions(&a.ty, &mut add);
                match &*a.kind {
                    AccKind::View(v, b) => view_extents(v, &b.ty, &a.ty, &mut add),
                    AccKind::AsVector(_, b) => view_extents_outer(&b.ty, &a.ty, &mut add),
                    _ => {}
                }
            }
            Node::Comm(Comm::For { count, .. }) => add(count.clone()),
            Node::Comm(Comm::New { ident, .. }) => add_count(&ident.ty, &mut add),
            Node::Comm(_) => {}
        });
    }
    out
}

/// The index extents of view `v` from `operand` to `result` (see [`index_extents`]).
fn view_extents(v: &dpia::View, operand: &DataType, result: &DataType, add: &mut dyn FnMut(Nat)) {
    view_extents_outer(operand, result, add);
    if let dpia::View::Reorder(..) = v {
        add_count(operand, add);
        add_count(result, add);
    }
}

/// The outermost dimensions of `operand` and `result`.
fn view_extents_outer(operand: &DataType, result: &DataType, add: &mut dyn FnMut(Nat)) {
    for t in [operand, result] {
        if let DataType::Array(n, _) | DataType::Vector(n, _) = t {
            add(n.clone());
        }
    }
}

/// Calls `add` with every array and vector dimension of `ty` and the bound of every index
/// type in it.
fn dimensions(ty: &DataType, add: &mut dyn FnMut(Nat)) {
    match ty {
        DataType::Array(n, t) | DataType::Vector(n, t) => {
            add(n.clone());
            dimensions(t, add);
        }
        DataType::Pair(a, b) => {
            dimensions(a, add);
            dimensions(b, add);
        }
        DataType::Index(n) => add(n.clone()),
        _ => {}
    }
}

/// Calls `add` with the element count of `ty` and the bound of every index type in it.
fn add_count(ty: &DataType, add: &mut dyn FnMut(Nat)) {
    let count = element_count(ty, add);
    add(count);
}

/// The element count of `ty` (arrays, vectors and pairs flattened); `add` gets the bound of
/// every index type in it.
fn element_count(ty: &DataType, add: &mut dyn FnMut(Nat)) -> Nat {
    match ty {
        DataType::Array(n, t) | DataType::Vector(n, t) => n.clone() * element_count(t, add),
        DataType::Pair(a, b) => element_count(a, add) + element_count(b, add),
        DataType::Index(n) => {
            add(n.clone());
            Nat::cst(1)
        }
        _ => Nat::cst(1),
    }
}

/// Rejects the data types the GPU back ends do not handle yet.
fn check_types(gp: &GpuProgram, target: Target) -> Result<(), CodegenError> {
    for t in all_types(gp) {
        check_vectors(&t, target)?;
    }
    for b in std::iter::once(&gp.output)
        .chain(&gp.inputs)
        .chain(&gp.temporaries)
    {
        // arrays of `bool` are passed as `uchar` (see `Lowerer::param`); `bool` inside a
        // pair or vector of a buffer is not
        let leaves = layout::leaves(&b.ty)?;
        let plain_bool = |t: &DataType| *t == DataType::Scalar(rise::ScalarType::Bool);
        if leaves
            .iter()
            .any(|l| !plain_bool(&l.elem) && mentions(&l.elem, &|s| s == rise::ScalarType::Bool))
        {
            return unsupported(format!(
                "the buffer `{}` of type {}: `bool` inside a pair or vector cannot be passed to \
                 or from a GPU kernel",
                b.name,
                show_type(&b.ty)
            ));
        }
    }
    Ok(())
}

fn all_types(gp: &GpuProgram) -> Vec<DataType> {
    let mut tys: Vec<DataType> = std::iter::once(&gp.output)
        .chain(&gp.inputs)
        .chain(&gp.temporaries)
        .map(|i| i.ty.clone())
        .collect();
    fn go(c: &Comm, out: &mut Vec<DataType>) {
        match c {
            Comm::Seq(cs) => cs.iter().for_each(|c| go(c, out)),
            Comm::New { ident, body, .. } => {
                out.push(ident.ty.clone());
                go(body, out);
            }
            Comm::For { body, .. }
            | Comm::IfLess { body, .. }
            | Comm::AsyncCopy(body)
            | Comm::NatLet { body, .. } => go(body, out),
            Comm::Assign(a, e) => {
                out.push(a.ty.clone());
                out.push(e.ty.clone());
            }
            Comm::Skip | Comm::Barrier { .. } | Comm::AsyncCommit | Comm::AsyncWait(_) => {}
        }
    }
    for k in &gp.kernels {
        go(&k.body, &mut tys);
    }
    tys
}

/// Every vector type in `t` must be one of the target's builtin vector types.
fn check_vectors(t: &DataType, target: Target) -> Result<(), CodegenError> {
    match t {
        DataType::Vector(..) if target == Target::Cuda && moved_half_vector(t).is_some() => Ok(()),
        DataType::Vector(..) => {
            let (elem, lanes) = vector_elem_lanes(t)?;
            Dialect::of(target)
                .builtin_vector(elem, lanes, t)
                .map(|_| ())
        }
        DataType::Array(_, e) => check_vectors(e, target),
        DataType::Pair(a, b) => {
            check_vectors(a, target)?;
            check_vectors(b, target)
        }
        _ => Ok(()),
    }
}

fn mentions(t: &DataType, p: &dyn Fn(rise::ScalarType) -> bool) -> bool {
    match t {
        DataType::Scalar(s) => p(*s),
        DataType::Array(_, e) | DataType::Vector(_, e) => mentions(e, p),
        DataType::Pair(a, b) => mentions(a, p) || mentions(b, p),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::global_threads;

    #[test]
    fn a_one_dimensional_grid_takes_the_whole_budget_along_dimension_0() {
        assert_eq!(global_threads([1000, 1, 1], 256), [256, 1, 1]);
        assert_eq!(global_threads([7, 1, 1], 256), [8, 1, 1]);
        assert_eq!(global_threads([1, 1, 1], 256), [1, 1, 1]);
    }

    #[test]
    fn a_two_dimensional_grid_has_32_columns_and_what_the_budget_leaves_in_rows() {
        assert_eq!(global_threads([1031, 1031, 1], 256), [32, 8, 1]);
        // a narrow grid still fills its work-groups
        assert_eq!(global_threads([4, 100_000, 1], 256), [4, 64, 1]);
        assert_eq!(global_threads([1, 13, 1], 256), [1, 16, 1]);
        assert_eq!(global_threads([13, 7, 1], 256), [16, 8, 1]);
        assert_eq!(global_threads([64, 64, 64], 256), [32, 8, 1]);
    }
}
