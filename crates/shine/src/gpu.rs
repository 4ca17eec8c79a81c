//! Running generated GPU code (RISE & Shine §V; the GPU half of the pipeline in ARCHITECTURE.md).
//!
//! [`codegen::generate_gpu`] prepares the program for a GPU (kernel/host split, hoisting,
//! barriers) and lists the launches the host makes. Here the kernels are built with the
//! runtime (OpenCL: the device `SHINE_OPENCL_DEVICE` names, or any; CUDA: NVRTC and the
//! device `RunOptions::cuda_device` names, 0 by default), the launches planned for the sizes
//! of one run (grids, arguments, temporaries and the status flag) and run in order by
//! [`runtime::GpuProgram`], the same for both runtimes.
//! The kernels are built with the options in `SHINE_OPENCL_OPTIONS` (default
//! `-cl-mad-enable`) or `SHINE_NVRTC_OPTIONS` (default none; the architecture of the device is
//! added unless named), plus `-cl-fast-relaxed-math` / `--use_fast_math` with fast math.
//!
//! The host's plan of a run ([`plan`]) and the build options ([`build_options`]) are public,
//! so that a driver that builds and runs kernels itself (`shine-difftest`, which builds many
//! modules as one program) plans them as a run does.

use crate::execute::{Runner, Timings};
use crate::Error;
use codegen::gpu::IndexWidth;
use codegen::{GpuKernel, GpuModule, KernelParam, LaunchDims, Target};
use runtime::{Buffer, CudaLaunch, GpuProgram, KernelArg, OpenClLaunch, RuntimeError};
use std::sync::Arc;

/// The OpenCL build options used unless `SHINE_OPENCL_OPTIONS` gives others: let the
/// compiler contract `a * b + c` into one fused multiply-add, as NVRTC does by default.
const DEFAULT_OPENCL_OPTIONS: &str = "-cl-mad-enable";

/// The most threads of a CUDA block.
pub const CUDA_MAX_THREADS: usize = 1024;

/// Builds the kernels of `module` with indices of `width` (`GpuModule::index_width` of these
/// sizes) on the device of its runtime and plans its launches for the size values `sizes`,
/// `outputs` output buffers (one per array of a result that is a tuple of arrays) and
/// `inputs` input buffers, with fast math or not, on a CUDA device (its ordinal).
pub(crate) fn load(
    module: &GpuModule,
    (sizes, width): (&[i64], IndexWidth),
    (outputs, inputs): (usize, usize),
    (fast_math, cuda_device): (bool, usize),
    builds: &GpuBuilds,
) -> Result<Box<dyn Runner>, Error> {
    let buffers = (outputs, inputs);
    let build = builds.get_or_build(module, width, fast_math, cuda_device)?;
    Ok(match build {
        GpuBuild::OpenCl(program, max_threads) => Box::new(GpuRun::plan(
            program,
            module,
            (sizes, width),
            buffers,
            max_threads,
        )?),
        GpuBuild::Cuda(program) => Box::new(GpuRun::plan(
            program,
            module,
            (sizes, width),
            buffers,
            CUDA_MAX_THREADS,
        )?),
    })
}

/// The kernels of one GPU module built by the device's compiler, once per index width (and
/// CUDA device): runs at many sizes (a Python kernel called again and again) build them once
/// or twice, not every time. The builds are for one module and one choice of fast math.
#[derive(Default)]
pub struct GpuBuilds {
    built: std::sync::Mutex<Vec<((IndexWidth, usize), GpuBuild)>>,
}

/// Kernels built for one index width.
#[derive(Clone)]
enum GpuBuild {
    /// An OpenCL program and the most work-items a work-group of its device may have.
    OpenCl(Arc<runtime::OpenClProgram>, usize),
    /// A CUDA module.
    Cuda(Arc<runtime::CudaProgram>),
}

impl GpuBuilds {
    /// How many builds were made: one per index width runs have needed so far.
    pub fn count(&self) -> usize {
        self.built.lock().map_or(0, |b| b.len())
    }

    /// The CUDA kernels of `module` (CUDA code) built with indices of `width` on CUDA device
    /// 0: those built before, or built now. A driver that runs them on memory already on the
    /// device ([`runtime::CudaProgram::run_on_device`]) plans the launches with [`plan`].
    pub fn cuda(
        &self,
        module: &GpuModule,
        width: IndexWidth,
        fast_math: bool,
    ) -> Result<Arc<runtime::CudaProgram>, Error> {
        match self.get_or_build(module, width, fast_math, 0)? {
            GpuBuild::Cuda(program) => Ok(program),
            GpuBuild::OpenCl(..) => Err(Error::from(format!(
                "the kernels are {} code, not CUDA",
                module.target.name()
            ))),
        }
    }

    /// The kernels of `module` built with indices of `width`: those built before, or built
    /// now (on the device `SHINE_OPENCL_DEVICE` names, or CUDA device `cuda_device`).
    fn get_or_build(
        &self,
        module: &GpuModule,
        width: IndexWidth,
        fast_math: bool,
        cuda_device: usize,
    ) -> Result<GpuBuild, Error> {
        let mut built = self
            .built
            .lock()
            .map_err(|_| Error::from("an earlier build of these kernels panicked".to_string()))?;
        let key = (width, cuda_device);
        if let Some((_, b)) = built.iter().find(|(k, _)| *k == key) {
            return Ok(b.clone());
        }
        let options = build_options(module.target, fast_math, width);
        let build = match module.target {
            Target::C | Target::OpenMp => {
                return Err(Error::from(format!(
                    "`{}` is not a GPU target (internal error)",
                    module.target
                )))
            }
            Target::OpenCl => {
                let device = runtime::OpenClDevice::from_env().map_err(runtime_error)?;
                for k in &module.kernels {
                    device
                        .check_local_memory(&k.name, k.local_memory.bytes)
                        .map_err(runtime_error)?;
                }
                let program = runtime::OpenClProgram::build(&device, &module.source, &options)
                    .map_err(runtime_error)?;
                GpuBuild::OpenCl(Arc::new(program), device.max_work_group_size())
            }
            Target::Cuda => {
                let device = runtime::CudaDevice::open(cuda_device).map_err(runtime_error)?;
                let options = with_arch(module, &device, options)?;
                let program = runtime::CudaProgram::build(&device, &module.source, &options)
                    .map_err(runtime_error)?;
                GpuBuild::Cuda(Arc::new(program))
            }
        };
        built.push((key, build.clone()));
        Ok(build)
    }
}

/// Compiles the CUDA kernels of `artifact` as a run at the sizes `nats` on CUDA device
/// `options.cuda_device` builds them (the index width of those sizes, fast math or not, the
/// device's architecture), without loading them on the device: NVRTC's image is kept in this
/// process, so that the run loads it without compiling (a tuning compiles on its CPU workers
/// while the GPUs time). Whether NVRTC compiled them now (`false`: compiled before, or a size
/// of the kernels is missing from `nats`, and the run compiles them). Errors of the build are
/// [`Stage::Build`](crate::Stage::Build); an artifact of another target is refused.
pub fn compile_cuda_kernels(
    artifact: &crate::Artifact,
    nats: &[(String, i64)],
    options: &crate::RunOptions,
) -> Result<bool, Error> {
    let crate::Code::Gpu(module) = &artifact.code else {
        return Err(Error::from(format!(
            "`{}` is compiled for {}, not CUDA",
            artifact.def(),
            artifact.target.name()
        )));
    };
    if module.target != Target::Cuda {
        return Err(Error::from(format!(
            "`{}` is compiled for {}, not CUDA",
            artifact.def(),
            module.target.name()
        )));
    }
    let values: Option<Vec<i64>> = module
        .sizes
        .iter()
        .map(|v| nats.iter().find(|(n, _)| **n == *v.name()).map(|(_, x)| *x))
        .collect();
    let Some(values) = values else {
        return Ok(false);
    };
    let width = module.index_width(&values);
    let compiled = || -> Result<bool, Error> {
        let device = runtime::CudaDevice::open(options.cuda_device).map_err(runtime_error)?;
        let build = build_options(Target::Cuda, options.fast_math, width);
        let build = with_arch(module, &device, build)?;
        runtime::CudaProgram::compile_only(&device, &module.source, &build).map_err(runtime_error)
    };
    compiled().map_err(|e| e.at(crate::Stage::Build))
}

/// The build options of the kernels of a GPU `target` with indices of `width`: the
/// environment variable of the target's compiler (`SHINE_OPENCL_OPTIONS`,
/// `SHINE_NVRTC_OPTIONS`) when it is set (the empty string included), else its default; then
/// fast math's option and the index width's. Neither default relaxes IEEE semantics (NaN,
/// infinities, denormals); both let the compiler fuse `a * b + c`, as gcc's default
/// `-ffp-contract=fast` does for C. C and OpenMP have none.
pub fn build_options(target: Target, fast_math: bool, width: IndexWidth) -> String {
    let (var, default, fast) = match target {
        Target::OpenCl => (
            "SHINE_OPENCL_OPTIONS",
            DEFAULT_OPENCL_OPTIONS,
            "-cl-fast-relaxed-math",
        ),
        Target::Cuda => ("SHINE_NVRTC_OPTIONS", "", "--use_fast_math"),
        Target::C | Target::OpenMp => return String::new(),
    };
    let mut options = std::env::var(var).unwrap_or_else(|_| default.to_string());
    for o in [fast_math.then(|| fast.to_string()), width.build_option()]
        .into_iter()
        .flatten()
    {
        options.push(' ');
        options.push_str(&o);
    }
    options
}

/// `options` with the architecture `module` must be compiled for, where it needs one
/// (`sm_90a` for Hopper's warp-group multiplies): refused on a device of another.
fn with_arch(
    module: &GpuModule,
    device: &runtime::CudaDevice,
    options: String,
) -> Result<String, Error> {
    let Some(arch) = module.arch else {
        return Ok(options);
    };
    let family = arch.trim_end_matches('a');
    if device.arch() != family {
        return Err(Error::from(format!(
            "the kernels use instructions of {arch} (Hopper's warp-group multiplies, `wgmma`), \
             which this device ({}, {}) does not have: run them on a GPU of compute capability \
             9.0, or use `mmaSync` instead of `wgmma`",
            device.name(),
            device.arch()
        )));
    }
    Ok(format!("{options} --gpu-architecture={arch}"))
}

fn runtime_error(e: RuntimeError) -> Error {
    Error::from(e.to_string())
}

/// A launch of a runtime, made from the grid the code generator computed.
pub trait FromLaunchDims {
    /// The launch of `kernel` on `dims` with `args`.
    fn from_dims(kernel: &GpuKernel, dims: &LaunchDims, args: Vec<KernelArg>) -> Self;
}

impl FromLaunchDims for OpenClLaunch {
    fn from_dims(kernel: &GpuKernel, dims: &LaunchDims, args: Vec<KernelArg>) -> OpenClLaunch {
        let n = dims.dims();
        OpenClLaunch::new(&kernel.name, &dims.global()[..n])
            .local(&dims.threads.map(|t| t as usize)[..n])
            .args(args)
    }
}

impl FromLaunchDims for CudaLaunch {
    /// With the kernel's dynamic shared memory, if any (the code generator keeps it below
    /// 4 GiB; the runtime checks it against the device's before the launch).
    fn from_dims(kernel: &GpuKernel, dims: &LaunchDims, args: Vec<KernelArg>) -> CudaLaunch {
        let shared = kernel.local_memory.dynamic_bytes();
        CudaLaunch::new(&kernel.name, dims.groups, dims.threads)
            .shared_mem(u32::try_from(shared).unwrap_or(u32::MAX))
            .args(args)
    }
}

/// The host's plan of one run of a GPU module: each kernel's launch (grid and arguments) in
/// order, and the byte sizes of the temporaries the launches share, the status flag last.
#[derive(Clone, Debug)]
pub struct HostPlan<L> {
    /// The launches, one per kernel, in order.
    pub launches: Vec<L>,
    /// The byte sizes of the temporaries: the program's own, then the status flag (one
    /// `int`, zeroed before the run; non-zero after it where the code stopped on an error).
    pub temporaries: Vec<usize>,
    /// The index of the status flag among the temporaries.
    pub status: usize,
}

impl<L> HostPlan<L> {
    /// Runs `program` by this plan on `outputs` and `inputs`: a status flag the code set is
    /// [`RuntimeError::ProgramStatus`] of `entry` (how messages name the program).
    pub fn run<P: GpuProgram<Launch = L>>(
        &self,
        program: &P,
        outputs: &mut [Buffer],
        inputs: &[&Buffer],
        entry: &str,
    ) -> Result<(), RuntimeError> {
        let status = program.run_with_status(
            &self.launches,
            outputs,
            inputs,
            &self.temporaries,
            self.status,
        )?;
        if status == 0 {
            Ok(())
        } else {
            Err(RuntimeError::ProgramStatus {
                entry: entry.to_string(),
                status,
            })
        }
    }
}

/// Plans the launches of `module` for the size values `sizes` (in the order of
/// `module.sizes`), passed to the kernels as integers of `width` (the module's
/// `index_width` for these sizes, or a wider one), with `outputs` output buffers (one per
/// array of a result that is a tuple of arrays) and `inputs` input buffers: the
/// temporaries' sizes, each kernel's grid (at most `max_threads` threads per work-group or
/// block) and its arguments.
pub fn plan<L: FromLaunchDims>(
    module: &GpuModule,
    (sizes, width): (&[i64], IndexWidth),
    (outputs, inputs): (usize, usize),
    max_threads: usize,
) -> Result<HostPlan<L>, Error> {
    let eval = |n: &arith::Nat| -> Result<i64, Error> {
        n.eval(&|v: &arith::Var| module.sizes.iter().position(|s| s == v).map(|i| sizes[i]))
            .map_err(|e| Error::from(format!("cannot evaluate `{n}`: {e:?}")))
    };
    let mut temporaries = module
        .temporaries
        .iter()
        .map(|t| Ok(eval(&t.elements)?.max(1) as usize * t.elem_bytes as usize))
        .collect::<Result<Vec<usize>, Error>>()?;
    // the status flag: one `int`, zeroed
    let status = temporaries.len();
    temporaries.push(4);
    let buffers = Buffers {
        outputs,
        inputs,
        status,
        sizes,
        width,
    };
    let launches = module
        .kernels
        .iter()
        .map(|k| {
            let dims = k
                .dims(&module.sizes, sizes, max_threads)
                .map_err(|e| Error::from(e.to_string()))?;
            Ok(L::from_dims(k, &dims, buffers.args(k)?))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(HostPlan {
        launches,
        temporaries,
        status,
    })
}

/// A GPU program on its device with its launches planned for one set of sizes.
struct GpuRun<P: GpuProgram> {
    program: Arc<P>,
    plan: HostPlan<P::Launch>,
}

impl<P: GpuProgram> GpuRun<P>
where
    P::Launch: FromLaunchDims,
{
    /// The program with its launches planned ([`plan`]).
    fn plan(
        program: Arc<P>,
        module: &GpuModule,
        sizes: (&[i64], IndexWidth),
        buffers: (usize, usize),
        max_threads: usize,
    ) -> Result<GpuRun<P>, Error> {
        Ok(GpuRun {
            program,
            plan: plan(module, sizes, buffers, max_threads)?,
        })
    }
}

/// Where a kernel's parameters are: the buffers by index (the outputs, the inputs, the
/// temporaries, the status flag) and the values of the sizes.
struct Buffers<'a> {
    outputs: usize,
    inputs: usize,
    /// The index of the status flag among the temporaries (after the program's own).
    status: usize,
    sizes: &'a [i64],
    /// The width of the kernels' index type, and so of their size arguments.
    width: IndexWidth,
}

impl Buffers<'_> {
    /// The arguments of kernel `k`.
    fn args(&self, k: &GpuKernel) -> Result<Vec<KernelArg>, Error> {
        k.params
            .iter()
            .map(|&p| {
                if let Some(index) = p.buffer(self.outputs, self.inputs, self.status) {
                    return Ok(KernelArg::Buffer(index));
                }
                let KernelParam::Size(s) = p else {
                    unreachable!("every parameter but a size is a buffer")
                };
                let v = self.sizes[s];
                Ok(match self.width {
                    IndexWidth::Bits64 => KernelArg::I64(v),
                    IndexWidth::Bits32 => KernelArg::I32(i32::try_from(v).map_err(|_| {
                        Error::from(format!("the size {v} does not fit a 32-bit int"))
                    })?),
                })
            })
            .collect()
    }
}

impl<P: GpuProgram> Runner for GpuRun<P> {
    fn run(&mut self, outputs: &mut [Buffer], inputs: &[&Buffer]) -> Result<(), RuntimeError> {
        self.plan
            .run(&*self.program, outputs, inputs, "the GPU program")
    }

    fn bench(
        &mut self,
        outputs: &mut [Buffer],
        inputs: &[&Buffer],
        runs: usize,
        warmup: usize,
    ) -> Result<Timings, RuntimeError> {
        let t = self.program.bench(
            &self.plan.launches,
            outputs,
            inputs,
            &self.plan.temporaries,
            runs,
            warmup,
        )?;
        Ok(Timings {
            code: t.kernel,
            wall: Some(t.wall),
        })
    }
}
