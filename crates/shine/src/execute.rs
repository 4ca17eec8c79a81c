//! Running an [`Artifact`]: its code built and loaded for its target, its inputs bound, run and
//! timed the same way on every target, and its result compared with the interpreter.
//!
//! C and OpenMP code is built with the system C compiler into a module that runs as a child
//! process ([`runtime::Module`]); OpenCL and CUDA code is built by the GPU runtime and run as
//! the module's launches ([`crate::gpu`]). Both sit behind one [`Runner`], so that
//! [`Executable::run`], [`Executable::bench`] and [`Executable::verify`] are written once.

use crate::boundary::{self, Array, BufferLayout, Output};
use crate::inputs::{bind, bind_instance, Inputs};
use crate::{
    limits, sum_bound, verify, Artifact, Code, Error, FloatCheck, Phrase, Reference, Setting,
    SharedInputs, SourceFile, Stage, Target,
};
use codegen::gpu::IndexWidth;
use rise::infer::Instance;
use rise::DataType;
use runtime::{Buffer, RuntimeError, Timing};
use std::sync::Arc;

/// The C compiler flag of fast math (`RunOptions::fast_math`).
pub const FAST_MATH_CFLAG: &str = "-ffast-math";

/// How the code of an artifact is built and run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The C compiler (C and OpenMP targets).
    pub cc: String,
    /// Flags for the C compiler, split into words as a POSIX shell would (`-DX='a b'` is one
    /// word); `None`: the runtime's default (`-O3 -march=native -fopenmp`: IEEE floats).
    pub cflags: Option<String>,
    /// Trade IEEE floating point for speed: C `-ffast-math`, OpenCL
    /// `-cl-fast-relaxed-math`, CUDA `--use_fast_math`.
    pub fast_math: bool,
    /// Build C code with AddressSanitizer and UndefinedBehaviorSanitizer.
    pub sanitize: bool,
    /// The result will be compared with the interpreter: the memory check makes room for the
    /// interpreter's reference.
    pub verify: bool,
    /// The CUDA device the kernels are built and run on (its ordinal, 0 the first GPU);
    /// the other targets ignore it.
    pub cuda_device: usize,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            cc: "gcc".into(),
            cflags: None,
            fast_math: false,
            sanitize: false,
            verify: false,
            cuda_device: 0,
        }
    }
}

impl RunOptions {
    /// How C and OpenMP code is compiled with these options: the compiler, its flags (the
    /// runtime's default, or `cflags`; `-ffast-math` added with fast math) and sanitizers.
    pub fn compiler_config(&self) -> Result<runtime::CompilerConfig, Error> {
        let mut config = runtime::CompilerConfig::default().with_compiler(self.cc.clone());
        if let Some(flags) = &self.cflags {
            config = config.with_flags(split_flags(flags)?);
        }
        if self.fast_math {
            config = config.with_flag(FAST_MATH_CFLAG);
        }
        if self.sanitize {
            config = config
                .with_sanitizer(runtime::Sanitizer::Address)
                .with_sanitizer(runtime::Sanitizer::UndefinedBehavior);
        }
        Ok(config)
    }

    /// Refuses options that do not apply to `target`: sanitizers are for C code.
    pub fn check(&self, target: Target) -> Result<(), Error> {
        if self.sanitize && target.is_gpu() {
            return Err(Error::from(Phrase::from(Setting::Sanitize).then(
                " builds C code with ASan/UBSan; for GPU code run shine under \
                 compute-sanitizer (CUDA) instead",
            )));
        }
        Ok(())
    }
}

/// The times of repeated runs.
#[derive(Clone, Debug)]
pub struct Timings {
    /// The time of the generated code: the C entry point, or the GPU kernels by the
    /// runtime's own clock.
    pub code: Timing,
    /// GPU code only: the host's wall-clock time of a run (launch overhead included).
    pub wall: Option<Timing>,
}

/// Compiled code on its device, given the sizes of one run: runs the definition on bound
/// buffers (the output's buffers: one, or one per array of a result that is a tuple of
/// arrays).
pub(crate) trait Runner {
    /// Runs the code once (a program that stops on an error is
    /// [`RuntimeError::ProgramStatus`]).
    fn run(&mut self, outputs: &mut [Buffer], inputs: &[&Buffer]) -> Result<(), RuntimeError>;

    /// Runs the code `warmup` times untimed, then `runs` times timed.
    fn bench(
        &mut self,
        outputs: &mut [Buffer],
        inputs: &[&Buffer],
        runs: usize,
        warmup: usize,
    ) -> Result<Timings, RuntimeError>;
}

/// A C module and the values of its sizes, in the order its entry point takes them.
struct NativeRun {
    module: Arc<runtime::Module>,
    sizes: Vec<i64>,
}

/// Code built once, to run on many inputs ([`Executable::with_built`]).
#[derive(Clone)]
pub enum Built {
    /// C or OpenMP code as an executable, run as a child process for every run
    /// ([`runtime::Module`]).
    Module(Arc<runtime::Module>),
    /// C or OpenMP code as a shared library loaded into this process, its entry point called
    /// directly ([`runtime::SharedLibrary`]): microseconds a run, but a crash of the code ends
    /// this process, and code built with fast math sets this process's floating-point state.
    Library(Arc<runtime::SharedLibrary>),
    /// OpenCL or CUDA kernels, built by the device's compiler on the first run that needs
    /// each index width and kept for the next ([`crate::gpu::GpuBuilds`]).
    Gpu(Arc<crate::gpu::GpuBuilds>),
}

impl Built {
    /// The C code of `artifact` built as a [`runtime::Module`] with the compiler and flags of
    /// `options`.
    pub fn module(artifact: &Artifact, options: &RunOptions) -> Result<Built, Error> {
        match &artifact.code {
            Code::C(module) => Ok(Built::Module(Arc::new(build_c(module, options)?))),
            Code::Gpu(_) => Err(Error::from(format!(
                "`{}` is compiled for {}, not C",
                artifact.def(),
                artifact.target.name()
            ))),
        }
    }
}

/// A shared library and the values of its sizes, in the order its entry point takes them.
struct InProcessRun {
    library: Arc<runtime::SharedLibrary>,
    sizes: Vec<i64>,
}

impl InProcessRun {
    #[allow(unsafe_code)]
    fn call(&self, outputs: &mut [Buffer], inputs: &[&Buffer]) -> Result<(), RuntimeError> {
        // SAFETY: `Executable::with_built` allocates the buffers from the layouts of the
        // bound inputs and result at exactly these sizes (`Array::to_bytes`,
        // `boundary::buffers_of`, `boundary::element_bytes`), the layouts the generated code reads and writes.
        unsafe { self.library.run_outputs(outputs, inputs, &self.sizes) }
    }
}

impl Runner for InProcessRun {
    fn run(&mut self, outputs: &mut [Buffer], inputs: &[&Buffer]) -> Result<(), RuntimeError> {
        self.call(outputs, inputs)
    }

    fn bench(
        &mut self,
        outputs: &mut [Buffer],
        inputs: &[&Buffer],
        runs: usize,
        warmup: usize,
    ) -> Result<Timings, RuntimeError> {
        for _ in 0..warmup {
            self.call(outputs, inputs)?;
        }
        let mut samples = Vec::with_capacity(runs);
        for _ in 0..runs {
            let start = std::time::Instant::now();
            self.call(outputs, inputs)?;
            samples.push(start.elapsed().as_secs_f64() * 1e3);
        }
        let code = Timing::from_samples(samples)
            .ok_or_else(|| RuntimeError::InvalidArgument("bench needs at least one run".into()))?;
        Ok(Timings { code, wall: None })
    }
}

impl Runner for NativeRun {
    fn run(&mut self, outputs: &mut [Buffer], inputs: &[&Buffer]) -> Result<(), RuntimeError> {
        self.module.run_outputs(outputs, inputs, &self.sizes)
    }

    fn bench(
        &mut self,
        outputs: &mut [Buffer],
        inputs: &[&Buffer],
        runs: usize,
        warmup: usize,
    ) -> Result<Timings, RuntimeError> {
        let code = self
            .module
            .bench_outputs(outputs, inputs, &self.sizes, runs, warmup)?;
        Ok(Timings { code, wall: None })
    }
}

/// An artifact's code, loaded and given its inputs: what a run executes.
pub struct Executable {
    def: String,
    /// The program's source, for the interpreter's errors.
    program: SourceFile,
    instance: Instance,
    inputs: Arc<SharedInputs>,
    /// The inputs as the code's buffers.
    buffers: Arc<Vec<Buffer>>,
    /// The reference the inputs came from, whose result verification compares with
    /// ([`Executable::with_reference`]); `None`: the interpreter runs on every verification.
    reference: Option<Arc<Reference>>,
    /// The type of the result.
    result: DataType,
    runner: Box<dyn Runner>,
    /// The result's buffers ([`boundary::buffers_of`]).
    outputs: Vec<Buffer>,
    /// The width of the code's indices ([`Executable::index_bits`]).
    index_width: IndexWidth,
    /// The C compiler of the run (the interpreter compiles foreign functions with it).
    cc: String,
}

impl Executable {
    /// Checks the options for the target, binds the inputs to the artifact's definition
    /// ([`bind`](crate::inputs::bind)), checks that the run fits in memory, builds the code
    /// for its target and loads it. Errors of the build are [`Stage::Build`], the others
    /// [`Stage::Input`].
    pub fn new(
        artifact: &Artifact,
        inputs: Inputs,
        nats: &[(String, i64)],
        options: &RunOptions,
    ) -> Result<Executable, Error> {
        Executable::with_built(artifact, inputs, nats, options, None)
    }

    /// [`Executable::new`], the C code of `artifact` already built as `built` (with the
    /// options of `options`), so that runs on many inputs build it once; `None`: built here.
    pub fn with_built(
        artifact: &Artifact,
        inputs: Inputs,
        nats: &[(String, i64)],
        options: &RunOptions,
        built: Option<Built>,
    ) -> Result<Executable, Error> {
        Executable::bind_and_build(artifact, inputs, nats, options, built)
            .map_err(|e| e.at(Stage::Input))
    }

    /// [`Executable::with_built`] on the inputs of `reference` (made once, shared by every
    /// run made from it), whose result [`Executable::verify`] compares with instead of
    /// running the interpreter: the runs of many artifacts of one definition at one size set
    /// (explore's candidates) share the inputs and the program's meaning. An error if the
    /// reference is of another program, definition or sizes.
    pub fn with_reference(
        artifact: &Artifact,
        reference: &Arc<Reference>,
        options: &RunOptions,
        built: Option<Built>,
    ) -> Result<Executable, Error> {
        let (program, def, nats) = reference.of();
        if program.text != artifact.lowered.program.text || def != artifact.def() {
            return Err(Error::from(format!(
                "the reference of `{def}` is not of the program `{}` compiles (internal error)",
                artifact.def()
            ))
            .at(Stage::Input));
        }
        let instance = reference.instance().clone();
        let inputs = reference.inputs().clone();
        let bound = options.check(artifact.target).and_then(|()| {
            let (result, sizes) = bind_instance(artifact, &instance, inputs.arrays().len(), nats)?;
            Ok(Bound {
                instance,
                inputs,
                result,
                sizes,
            })
        });
        bound
            .and_then(|bound| Executable::build(artifact, bound, options, built, Some(reference)))
            .map_err(|e| e.at(Stage::Input))
    }

    /// [`Executable::with_built`], its errors not yet given a stage (except the build's).
    fn bind_and_build(
        artifact: &Artifact,
        inputs: Inputs,
        nats: &[(String, i64)],
        options: &RunOptions,
        built: Option<Built>,
    ) -> Result<Executable, Error> {
        options.check(artifact.target)?;
        let bound = bind(artifact, inputs, nats)?;
        let bound = Bound {
            inputs: Arc::new(SharedInputs::new(bound.inputs)),
            instance: bound.instance,
            result: bound.result,
            sizes: bound.sizes,
        };
        Executable::build(artifact, bound, options, built, None)
    }

    /// Builds (or takes `built`) and loads the code of `artifact` for the inputs `bound`.
    fn build(
        artifact: &Artifact,
        bound: Bound,
        options: &RunOptions,
        built: Option<Built>,
        reference: Option<&Arc<Reference>>,
    ) -> Result<Executable, Error> {
        let layouts = boundary::buffers_of(&bound.result)
            .map_err(|e| Error::from(format!("the result of `{}`: {e}", artifact.def())))?;
        check_memory(options.verify, bound.inputs.arrays(), &layouts)?;
        // the width of the code's indices, which `idx[n]` data is stored in: 64 bits in C;
        // on GPUs, 64 only where these sizes need them (`natType` data is 64-bit everywhere)
        let gpu_width = match &artifact.code {
            Code::C(_) => None,
            Code::Gpu(module) => Some(module.index_width(&bound.sizes)),
        };
        let index_width = gpu_width.unwrap_or(IndexWidth::Bits64);
        let def = artifact.def();
        let buffers = bound.inputs.buffers(index_width, def)?;
        let outputs = layouts
            .iter()
            .map(|l| {
                let size = boundary::element_bytes(&l.elem, index_width)
                    .map_err(|e| format!("the result of `{def}`: {e}"))?;
                Ok(Buffer::zeroed(l.shape.iter().product::<usize>() * size))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let runner: Box<dyn Runner> = match (&artifact.code, built) {
            (Code::C(_), Some(Built::Library(library))) => Box::new(InProcessRun {
                library,
                sizes: bound.sizes,
            }),
            (Code::C(_), Some(Built::Module(module))) => Box::new(NativeRun {
                module,
                sizes: bound.sizes,
            }),
            (Code::C(module), None) => Box::new(NativeRun {
                module: Arc::new(build_c(module, options).map_err(|e| e.at(Stage::Build))?),
                sizes: bound.sizes,
            }),
            (Code::C(_), Some(Built::Gpu(_))) => {
                return Err(Error::from(format!(
                    "`{}` is C code, but GPU kernels were given to run it (internal error)",
                    artifact.def()
                )))
            }
            (Code::Gpu(module), built) => {
                let width = module.index_width(&bound.sizes);
                let sizes = (bound.sizes.as_slice(), width);
                let builds = match built {
                    Some(Built::Gpu(builds)) => builds,
                    _ => Arc::new(crate::gpu::GpuBuilds::default()),
                };
                crate::gpu::load(
                    module,
                    sizes,
                    (outputs.len(), buffers.len()),
                    (options.fast_math, options.cuda_device),
                    &builds,
                )
                .map_err(|e| {
                    foreign_note(e, &bound.instance.expr, module.target).at(Stage::Build)
                })?
            }
        };
        Ok(Executable {
            def: artifact.def().to_string(),
            program: artifact.lowered.program.clone(),
            instance: bound.instance,
            inputs: bound.inputs,
            buffers,
            reference: reference.cloned(),
            result: bound.result,
            runner,
            outputs,
            index_width,
            cc: options.cc.clone(),
        })
    }

    /// The width of the index arithmetic of the run's code: 64 bits in C; on GPUs, 64
    /// only where the sizes of the run need it (`GpuModule::index_width`).
    pub fn index_bits(&self) -> u32 {
        8 * self.index_width.bytes() as u32
    }

    /// The inputs, in the order of the definition's value parameters.
    pub fn inputs(&self) -> &[Array] {
        self.inputs.arrays()
    }

    /// The type of the result.
    pub fn result_type(&self) -> &DataType {
        &self.result
    }

    /// The number of elements of the result (of all its parts).
    pub fn result_len(&self) -> usize {
        boundary::parts_of(&self.result)
            .iter()
            .map(|p| boundary::dims_of(&p.ty).map_or(1, |(d, _)| d.iter().product()))
            .sum()
    }

    /// Runs the code once; its result.
    pub fn run(&mut self) -> Result<Output, Error> {
        let inputs: Vec<&Buffer> = self.buffers.iter().collect();
        self.runner
            .run(&mut self.outputs, &inputs)
            .map_err(|e| self.run_error(e))?;
        self.result()
    }

    /// Runs the code `warmup` times untimed, then `runs` times timed.
    pub fn bench(&mut self, runs: usize, warmup: usize) -> Result<Timings, Error> {
        let inputs: Vec<&Buffer> = self.buffers.iter().collect();
        self.runner
            .bench(&mut self.outputs, &inputs, runs, warmup)
            .map_err(|e| self.run_error(e))
    }

    /// The result of the last run.
    pub fn result(&self) -> Result<Output, Error> {
        let bytes: Vec<&[u8]> = self.outputs.iter().map(Buffer::as_bytes).collect();
        Output::from_buffers(&self.result, &bytes, self.index_width)
            .map_err(|e| Error::from(format!("the result of `{}`: {e}", self.def)).at(Stage::Run))
    }

    /// Compares `result` with the reference interpreter on the same inputs, part by part;
    /// how its floats were compared: within the tolerance, or, where that refuses some and
    /// the program computes floats only by `+ - *`, each within the tolerance or the bound
    /// for reassociated sums.
    pub fn verify(&self, result: &Output) -> Result<FloatCheck, Error> {
        let expected = match &self.reference {
            Some(reference) => reference.expected()?,
            None => Arc::new(
                verify::interpret(&self.program, &self.instance, self.inputs(), &self.cc)
                    .map_err(|e| e.at(Stage::Verify))?,
            ),
        };
        let Err(within_tolerance) = verify::compare(&expected, result, None) else {
            return Ok(FloatCheck::Tolerance);
        };
        // Only where the tolerance refuses: the bound costs two more interpreter runs.
        let bounds = match &self.reference {
            Some(reference) => reference.bounds()?,
            None => sum_bound::sum_bounds(&self.program, &self.instance, self.inputs(), &self.cc)
                .map_err(|e| e.at(Stage::Verify))?
                .map(Arc::new),
        };
        let Some(bounds) = bounds else {
            return Err(within_tolerance.at(Stage::Verify));
        };
        verify::compare(&expected, result, Some(&bounds)).map_err(|e| e.at(Stage::Verify))?;
        Ok(FloatCheck::SumBound)
    }
}

/// The inputs of a run bound to an artifact's definition ([`crate::inputs::Bound`], its
/// inputs shared).
struct Bound {
    inputs: Arc<SharedInputs>,
    instance: Instance,
    result: DataType,
    sizes: Vec<i64>,
}

/// Builds a C module with the compiler and flags of `options`.
fn build_c(module: &codegen::CModule, options: &RunOptions) -> Result<runtime::Module, Error> {
    let config = options.compiler_config()?;
    runtime::Module::compile(&module.source, &module.entry, &config).map_err(|e| {
        let removed = matches!(
            e,
            RuntimeError::CompilationFailed {
                source_path: None,
                ..
            }
        );
        let error = Error::from(e.to_string());
        if removed {
            error.with_note(
                Phrase::from("nothing is left in the temporary directory; ")
                    .then(Setting::GeneratedSource),
            )
        } else {
            error
        }
    })
}

/// C compiler flags, split into words as a POSIX shell would (`-DX='a b'` is one word).
fn split_flags(flags: &str) -> Result<Vec<String>, Error> {
    shlex::split(flags).ok_or_else(|| {
        Error::from(Phrase::from(Setting::CFlags).then(format!(
            " `{flags}`: unbalanced quotes (flags are split as a shell would)"
        )))
    })
}

/// Checks that the inputs and the result's buffers `layouts` (and with `verify` the
/// interpreter's reference) fit in memory, counting each scalar of an element.
fn check_memory(verify: bool, inputs: &[Array], layouts: &[BufferLayout]) -> Result<(), Error> {
    let per_element = if verify {
        limits::VERIFY_BYTES_PER_ELEMENT
    } else {
        limits::RUN_BYTES_PER_ELEMENT
    };
    let mut total = inputs
        .iter()
        .fold(0u64, |acc, a| acc.saturating_add(a.data.len() as u64));
    for l in layouts {
        let leaves = boundary::leaves(&l.elem).map_or(1, |l| l.len());
        let mut shape = l.shape.clone();
        shape.push(leaves);
        let count = limits::elements("the result", &shape, per_element)?;
        total = total.saturating_add(count as u64);
    }
    limits::fits_in_memory("the run (inputs and result)", total, per_element)
}

/// The error of a generated program that stopped with a non-zero status (a C entry point's
/// return value, a GPU program's status flag): the definition and what the status means
/// ([`codegen::EntryStatus`]).
pub fn program_status(def: &str, status: i32) -> Error {
    match codegen::EntryStatus::from_code(status) {
        Some(s) => Error::from(format!("`{def}`: {}", s.message())),
        None => Error::from(format!(
            "`{def}`: the generated code stopped with the unknown status {status}"
        )),
    }
}

/// `e`, an error of building or loading a GPU module, with a note naming the foreign
/// functions the module holds (their bodies are compiled with it), if any.
fn foreign_note(e: Error, expr: &rise::Expr, target: Target) -> Error {
    let names: Vec<String> = crate::foreign::called(expr)
        .iter()
        .map(|f| format!("`{}` (as `shine_foreign_{}`)", f.name, f.name))
        .collect();
    if names.is_empty() {
        return e;
    }
    e.with_note(format!(
        "the module holds the foreign functions {}: their bodies must compile as {}",
        names.join(", "),
        target.language()
    ))
}

impl Executable {
    /// A runtime error of running the definition, in the user's terms ([`Stage::Run`]): a
    /// program status explained, an early exit or a crash of a C module or of OpenCL kernels
    /// with the foreign functions the code calls (their C code runs inside it).
    fn run_error(&self, e: RuntimeError) -> Error {
        let def = &self.def;
        let foreign: Vec<String> = crate::foreign::called(&self.instance.expr)
            .iter()
            .map(|f| format!("`{}`", f.name))
            .collect();
        match e {
            RuntimeError::ProgramStatus { status, .. } => program_status(def, status),
            RuntimeError::ExitedEarly { status, .. } => {
                let culprit = if foreign.is_empty() {
                    "code it runs ended the process".to_string()
                } else {
                    format!(
                        "a foreign function it calls ({}) ended the process (`exit` and the \
                         like are not allowed in a foreign function)",
                        foreign.join(", ")
                    )
                };
                Error::from(format!(
                    "`{def}`: the compiled module exited ({status}) before finishing: {culprit}"
                ))
            }
            e @ (RuntimeError::OpenClProcessEnded { .. } | RuntimeError::ProgramKilled { .. }) => {
                if foreign.is_empty() {
                    return Error::from(format!("`{def}`: {e}")).at(Stage::Run);
                }
                let plural = if foreign.len() == 1 { "" } else { "s" };
                let (code, inside) = match e {
                    RuntimeError::ProgramKilled { .. } => ("the module calls", "it"),
                    _ => ("the kernels call", "them"),
                };
                Error::from(format!(
                    "`{def}`: {e}\n{code} the foreign function{plural} {}, whose C code runs \
                     inside {inside}",
                    foreign.join(", ")
                ))
            }
            e => Error::from(e.to_string()),
        }
        .at(Stage::Run)
    }
}
