//! `shine compile` and `shine run` for `--target opencl` and `--target cuda`
//! (RISE & Shine §V; the GPU half of DESIGN.md's pipeline).
//!
//! The front end is the CPU path's: parse, type-check, apply the strategy,
//! translate to imperative DPIA. Then `codegen::generate_gpu` prepares the
//! program for a GPU (kernel/host split, hoisting, barriers) and prints its
//! kernels; `shine compile` prints them (with the host plan as a comment), `shine
//! run` builds them with the runtime (OpenCL: the device `SHINE_OPENCL_DEVICE`
//! names, or any; CUDA: NVRTC and device 0), runs the launches the module lists,
//! reads the output back and, with `--verify`, compares it with the interpreter.
//! The kernels are built with the options in `SHINE_OPENCL_OPTIONS` (default
//! `-cl-mad-enable`) or `SHINE_NVRTC_OPTIONS` (default none; the architecture of the
//! device is added unless named), plus `-cl-fast-relaxed-math` / `--use_fast_math`
//! with `--fast-math`.

use crate::cli::{emit, CliError};
use crate::compile_cmd::{
    byte_size, from_buffer, front, run_inputs, to_buffer, CompileArgs, Front, RunArgs, RunInputs,
    Target,
};
use codegen::{GpuKernel, GpuModule, GpuTarget, KernelParam, LaunchDims};
use rise::infer::Instance;
use rise::interp::{self, Flat, Value};
use rise::ScalarType;
use runtime::{Buffer, GpuProgram, KernelArg};

fn gpu_target(t: Target) -> Result<GpuTarget, CliError> {
    match t {
        Target::Opencl => Ok(GpuTarget::OpenCl),
        Target::Cuda => Ok(GpuTarget::Cuda),
        other => Err(format!("internal error: {other:?} is not a GPU target").into()),
    }
}

fn generate(front: &Front, target: GpuTarget) -> Result<GpuModule, CliError> {
    codegen::generate_gpu(&front.dpia, target)
        .map_err(|e| CliError::from(format!("code generation failed: {e}")))
}

/// `shine compile ... --target opencl|cuda`: prints the kernels (the host plan is
/// their first comment); with `--emit-dpia`, the imperative DPIA of each kernel
/// after hoisting and barrier insertion.
pub fn compile(args: &CompileArgs) -> Result<(), CliError> {
    let target = gpu_target(args.program.target)?;
    let front = front(&args.program)?;
    let text = if args.emit_dpia {
        let gp = dpia::gpu::prepare(&front.dpia)
            .map_err(|e| CliError::from(format!("code generation failed: {e}")))?;
        let mut text = String::new();
        for t in &gp.temporaries {
            text.push_str(&format!("temporary {}: {}\n", t.name, t.ty));
        }
        for k in &gp.kernels {
            text.push_str(&format!("kernel {} ({:?}):\n{}", k.name, k.launch, k.body));
        }
        text
    } else {
        generate(&front, target)?.source
    };
    match &args.output {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| CliError::from(format!("cannot write `{}`: {e}", path.display())))?,
        None => emit(text.trim_end()),
    }
    Ok(())
}

/// A compiled GPU program on its device, ready to run the module's launches.
enum Device {
    OpenCl(runtime::OpenClProgram),
    Cuda(runtime::CudaProgram),
}

/// What one run needs besides the device: the launches with their grids, the
/// input buffers and the temporaries' sizes.
struct Plan {
    launches: Vec<(GpuKernel, LaunchDims)>,
    temporaries: Vec<usize>,
    inputs: usize,
    sizes: Vec<i64>,
    /// The index of the status flag among the temporaries (the last one).
    status: usize,
}

impl Plan {
    fn args(&self, k: &GpuKernel) -> Result<Vec<KernelArg>, CliError> {
        k.params
            .iter()
            .map(|p| {
                Ok(match p {
                    KernelParam::Output => KernelArg::Buffer(0),
                    KernelParam::Input(i) => KernelArg::Buffer(1 + i),
                    KernelParam::Temporary(t) => KernelArg::Buffer(1 + self.inputs + t),
                    // the status flag is the temporary after the program's own
                    KernelParam::Status => KernelArg::Buffer(1 + self.inputs + self.status),
                    KernelParam::Size(s) => {
                        let v = self.sizes[*s];
                        KernelArg::I32(i32::try_from(v).map_err(|_| {
                            CliError::from(format!("the size {v} does not fit a 32-bit int"))
                        })?)
                    }
                })
            })
            .collect()
    }

    fn opencl(&self) -> Result<Vec<runtime::OpenClLaunch>, CliError> {
        self.launches
            .iter()
            .map(|(k, dims)| {
                let n = dims.dims();
                Ok(
                    runtime::OpenClLaunch::new(k.name.clone(), &dims.global()[..n])
                        .local(&dims.threads.map(|t| t as usize)[..n])
                        .args(self.args(k)?),
                )
            })
            .collect()
    }

    fn cuda(&self) -> Result<Vec<runtime::CudaLaunch>, CliError> {
        self.launches
            .iter()
            .map(|(k, dims)| {
                Ok(
                    runtime::CudaLaunch::new(k.name.clone(), dims.groups, dims.threads)
                        .args(self.args(k)?),
                )
            })
            .collect()
    }
}

fn rt(e: runtime::RuntimeError) -> CliError {
    CliError::from(e.to_string())
}

/// `shine run ... --target opencl|cuda`.
pub fn run(args: &RunArgs) -> Result<(), CliError> {
    let (report, result) = execute(args)?;
    crate::compile_cmd::print_result(args, report, &result)
}

/// Compiles and runs (and with `--verify` verifies, with `--bench` times) the
/// definition on the GPU: the JSON report and the result.
pub(crate) fn execute(
    args: &RunArgs,
) -> Result<(serde_json::Map<String, serde_json::Value>, Flat), CliError> {
    let target = gpu_target(args.program.target)?;
    if args.sanitize {
        return Err(CliError::from(
            "--sanitize builds C code with ASan/UBSan; for GPU code run shine under \
             compute-sanitizer (CUDA) instead"
                .to_string(),
        ));
    }
    let front = front(&args.program)?;
    let module = generate(&front, target)?;
    let RunInputs {
        inputs,
        instance,
        shape,
        elem,
        sizes,
    } = run_inputs(
        args,
        &front.source,
        &front.checked,
        &front.scheme,
        &front.constraints,
        &module.sizes,
    )?;
    let count = crate::compile_cmd::run_elements(args, &inputs, &shape)?;
    let buffers: Vec<Buffer> = inputs.iter().map(to_buffer).collect::<Result<_, _>>()?;
    let refs: Vec<&Buffer> = buffers.iter().collect();
    let mut output = Buffer::zeroed(count * byte_size(elem)?);

    let (device, max_threads) = match target {
        GpuTarget::OpenCl => {
            let dev = runtime::OpenClDevice::from_env().map_err(rt)?;
            let options = build_options(
                "SHINE_OPENCL_OPTIONS",
                DEFAULT_OPENCL_OPTIONS,
                args.fast_math.then_some("-cl-fast-relaxed-math"),
            );
            let program =
                runtime::OpenClProgram::build(&dev, &module.source, &options).map_err(rt)?;
            (Device::OpenCl(program), dev.max_work_group_size())
        }
        GpuTarget::Cuda => {
            let dev = runtime::CudaDevice::open(0).map_err(rt)?;
            let options = build_options(
                "SHINE_NVRTC_OPTIONS",
                "",
                args.fast_math.then_some("--use_fast_math"),
            );
            let program =
                runtime::CudaProgram::build(&dev, &module.source, &options).map_err(rt)?;
            (Device::Cuda(program), 1024)
        }
    };
    let eval = |n: &arith::Nat| -> Result<i64, CliError> {
        n.eval(&|v: &arith::Var| module.sizes.iter().position(|s| s == v).map(|i| sizes[i]))
            .map_err(|e| CliError::from(format!("cannot evaluate `{n}`: {e:?}")))
    };
    let mut temporaries = module
        .temporaries
        .iter()
        .map(|t| Ok(eval(&t.elements)?.max(1) as usize * t.elem_bytes as usize))
        .collect::<Result<Vec<usize>, CliError>>()?;
    // the status flag: one `int`, zeroed
    let status = temporaries.len();
    temporaries.push(4);
    let launches = module
        .kernels
        .iter()
        .map(|k| {
            let dims = k
                .dims(&module.sizes, &sizes, max_threads)
                .map_err(|e| CliError::from(e.to_string()))?;
            Ok((k.clone(), dims))
        })
        .collect::<Result<Vec<_>, CliError>>()?;
    let plan = Plan {
        launches,
        temporaries,
        inputs: refs.len(),
        sizes,
        status,
    };
    let flag = match &device {
        Device::OpenCl(p) => p
            .run_with_status(
                &plan.opencl()?,
                &mut output,
                &refs,
                &plan.temporaries,
                status,
            )
            .map_err(rt)?,
        Device::Cuda(p) => p
            .run_with_status(&plan.cuda()?, &mut output, &refs, &plan.temporaries, status)
            .map_err(rt)?,
    };
    if flag != 0 {
        return Err(crate::cli::program_status(&args.program.def, flag));
    }
    let result = from_buffer(&output, elem, &shape)?;

    let mut report = serde_json::Map::new();
    report.insert("def".into(), args.program.def.clone().into());
    report.insert(
        "target".into(),
        format!("{:?}", args.program.target).to_lowercase().into(),
    );
    report.insert("kernels".into(), module.kernels.len().into());
    report.insert("fast_math".into(), args.fast_math.into());
    if args.verify {
        verify(&front, &instance, &inputs, &result, elem)?;
        report.insert("verified".into(), true.into());
        if !args.json {
            eprintln_text(&format!(
                "verified against the interpreter ({count} elements)"
            ));
        }
    }
    if let Some(runs) = args.bench {
        let t = match &device {
            Device::OpenCl(p) => p
                .bench(
                    &plan.opencl()?,
                    &mut output,
                    &refs,
                    &plan.temporaries,
                    runs,
                    1,
                )
                .map_err(rt)?,
            Device::Cuda(p) => p
                .bench(
                    &plan.cuda()?,
                    &mut output,
                    &refs,
                    &plan.temporaries,
                    runs,
                    1,
                )
                .map_err(rt)?,
        };
        report.insert("median_ms".into(), t.kernel.median_ms.into());
        report.insert("min_ms".into(), t.kernel.min_ms.into());
        report.insert("max_ms".into(), t.kernel.max_ms.into());
        report.insert("runs".into(), t.kernel.runs.into());
        report.insert("wall_median_ms".into(), t.wall.median_ms.into());
        if !args.json {
            eprintln_text(&format!(
                "{} runs: kernel time median {:.3} ms, min {:.3} ms, max {:.3} ms (wall median {:.3} ms)",
                t.kernel.runs, t.kernel.median_ms, t.kernel.min_ms, t.kernel.max_ms, t.wall.median_ms
            ));
        }
    }
    Ok((report, result))
}

/// The OpenCL build options used unless `SHINE_OPENCL_OPTIONS` gives others: let the
/// compiler contract `a * b + c` into one fused multiply-add, as NVRTC does by default.
const DEFAULT_OPENCL_OPTIONS: &str = "-cl-mad-enable";

/// The build options of a GPU compiler: the environment variable `var` when it is set
/// (the empty string included), else `default`; then `fast_math`'s option (`--fast-math`).
/// Neither default relaxes IEEE semantics (NaN, infinities, denormals); both let the
/// compiler fuse `a * b + c`, as gcc's default `-ffp-contract=fast` does for C.
fn build_options(var: &str, default: &str, fast_math: Option<&str>) -> String {
    let mut options = std::env::var(var).unwrap_or_else(|_| default.to_string());
    if let Some(o) = fast_math {
        options.push(' ');
        options.push_str(o);
    }
    options
}

/// Compares `result` with the interpreter on the same inputs.
fn verify(
    front: &Front,
    instance: &Instance,
    inputs: &[Flat],
    result: &Flat,
    elem: ScalarType,
) -> Result<(), CliError> {
    let values = inputs
        .iter()
        .map(|f| {
            Value::from_flat(f.elem, &f.shape, f.data.clone())
                .map_err(|e| CliError::from(e.message))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let function = interp::eval(&instance.expr).map_err(|e| front.source.error(e.into()))?;
    let value = if values.is_empty() {
        function
    } else {
        interp::apply(&function, values).map_err(|e| front.source.error(e.into()))?
    };
    let rise::Type::Data(t) = &instance.result else {
        return Err("the result is not data".to_string().into());
    };
    let expected = value
        .to_flat(t)
        .map_err(|e| CliError::from(format!("interpreter result: {}", e.message)))?;
    let tol = match elem {
        ScalarType::F64 => runtime::Tolerance::for_f64(),
        t if t.is_float() => runtime::Tolerance::for_f32(),
        _ => runtime::Tolerance::exact(),
    };
    let want: Vec<f64> = expected.data.iter().map(|s| s.as_f64()).collect();
    let got: Vec<f64> = result.data.iter().map(|s| s.as_f64()).collect();
    runtime::compare(&want, &got, tol).map_err(|m| {
        CliError::from(format!(
            "verification failed: the generated code and the interpreter differ: {m}"
        ))
    })
}

fn eprintln_text(s: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{s}");
}
