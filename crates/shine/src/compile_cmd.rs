//! `shine compile` and `shine run`: low-level RISE to C or OpenMP through DPIA,
//! then (for `run`) compiled with the system C compiler, executed on `.npy` or
//! random inputs, verified against the interpreter and timed.

use crate::cli::{data_type_of, emit, parse_nat_binding, CliError, Source};
use crate::rewrite_cmd::{apply_strategy, load_strategy};
use clap::{Args, ValueEnum};
use rise::infer::{instantiate_def, prepare_def};
use rise::interp::{self, Flat, Scalar, Value};
use rise::{DataType, ScalarType, SizeConstraint, Type};
use std::path::PathBuf;

/// The code a program is compiled to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Target {
    /// Sequential C (`mapPar` loops run sequentially).
    C,
    /// C with OpenMP (`mapPar` loops run on all cores).
    Openmp,
    /// OpenCL kernels, run through the OpenCL runtime (`SHINE_OPENCL_DEVICE` picks the device).
    Opencl,
    /// CUDA kernels, compiled at run time with NVRTC.
    Cuda,
}

/// What `compile` and `run` share: the program, the definition and the strategy.
#[derive(Args, Debug)]
pub struct ProgramArgs {
    /// The RISE program (.rise).
    pub program: PathBuf,
    /// The definition to compile.
    #[arg(long = "def", value_name = "NAME")]
    pub def: String,
    /// The strategy file (.elv) that lowers the definition.
    #[arg(long = "strategy", value_name = "S.elv", requires = "apply")]
    pub strategy: Option<PathBuf>,
    /// The strategy to apply: a definition of the file or an expression over them
    /// (`"blocking ; lowerToC"`).
    #[arg(long = "apply", value_name = "SNAME", requires = "strategy")]
    pub apply: Option<String>,
    /// The code to generate.
    #[arg(long = "target", value_enum, default_value = "c")]
    pub target: Target,
    /// Stop rewriting after this many strategy applications.
    #[arg(long, value_name = "N", default_value_t = elevate::DEFAULT_BUDGET)]
    pub budget: u64,
}

/// Arguments of `shine compile`.
#[derive(Args, Debug)]
pub struct CompileArgs {
    #[command(flatten)]
    pub program: ProgramArgs,
    /// Where to write the generated code (default: standard output).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Print the imperative DPIA program instead of C (for debugging strategies).
    #[arg(long)]
    pub emit_dpia: bool,
}

/// Arguments of `shine run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub program: ProgramArgs,
    /// A size, e.g. `--nat n=1024` (repeatable); needed with `--random`.
    #[arg(long = "nat", value_name = "NAME=VALUE", value_parser = parse_nat_binding)]
    pub nats: Vec<(String, i64)>,
    /// An input array (.npy), in the order of the definition's parameters (repeatable).
    #[arg(long = "input", value_name = "X.npy", conflicts_with = "random")]
    pub inputs: Vec<PathBuf>,
    /// Random inputs from this seed (floats in [-1, 1), small integers).
    #[arg(long, value_name = "SEED")]
    pub random: Option<u64>,
    /// Where to write the result (.npy).
    #[arg(long = "output", value_name = "Y.npy")]
    pub output: Option<PathBuf>,
    /// Compare the result with the reference interpreter on the same inputs.
    #[arg(long)]
    pub verify: bool,
    /// Time this many runs (after a warm-up run) and print median, min and max.
    #[arg(long, value_name = "RUNS")]
    pub bench: Option<usize>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// The C compiler (default gcc).
    #[arg(long, value_name = "CC", default_value = "gcc")]
    pub cc: String,
    /// Flags for the C compiler (default `-O3 -march=native -fopenmp`: IEEE floats).
    #[arg(long = "cflags", value_name = "FLAGS", allow_hyphen_values = true)]
    pub cflags: Option<String>,
    /// Trade IEEE floating point for speed: C `-ffast-math`, OpenCL
    /// `-cl-fast-relaxed-math`, CUDA `--use_fast_math`. Results may then differ from
    /// the interpreter's (NaN, infinities, denormals, reassociated sums).
    #[arg(long)]
    pub fast_math: bool,
    /// Build the generated code with AddressSanitizer and UndefinedBehaviorSanitizer.
    #[arg(long)]
    pub sanitize: bool,
}

/// The C compiler flag of `--fast-math`.
pub const FAST_MATH_CFLAG: &str = "-ffast-math";

/// A compiled program and what it was compiled from.
struct Compiled {
    source: Source,
    checked: rise::infer::CheckedProgram,
    /// The definition's type scheme (its sizes and parameter types).
    scheme: Type,
    /// The size constraints of the definition as lowered ([`Front::constraints`]).
    constraints: Vec<SizeConstraint>,
    dpia: dpia::Program,
    module: codegen::CModule,
}

fn compile_program(args: &ProgramArgs) -> Result<Compiled, CliError> {
    let target = match args.target {
        Target::C => codegen::Target::C,
        Target::Openmp => codegen::Target::OpenMP,
        Target::Opencl | Target::Cuda => {
            return Err(format!(
                "the {:?} target is not available yet: only `c` and `openmp` are implemented",
                args.target
            )
            .to_lowercase()
            .into())
        }
    };
    let Front {
        source,
        checked,
        scheme,
        constraints,
        dpia,
    } = front(args)?;
    let module = codegen::generate(&dpia, target)
        .map_err(|e| CliError::from(format!("code generation failed: {e}")))?;
    Ok(Compiled {
        source,
        checked,
        scheme,
        constraints,
        dpia,
        module,
    })
}

/// A program through the front end, the same for every target: parsed, checked, the
/// definition lowered by the strategy and translated to imperative DPIA.
pub(crate) struct Front {
    /// The program's source, for rendering errors.
    pub source: Source,
    /// The checked program.
    pub checked: rise::infer::CheckedProgram,
    /// The definition's type scheme (its sizes and parameter types).
    pub scheme: Type,
    /// What the definition as lowered needs of its sizes: the checked
    /// definition's constraints and those the strategy added (`32 divides m`
    /// after a `split 32`), over the sizes of `scheme`. The code is only run on
    /// sizes that satisfy them.
    pub constraints: Vec<SizeConstraint>,
    /// The lowered definition in imperative DPIA.
    pub dpia: dpia::Program,
}

/// Parses and checks the program, applies the strategy to the definition and translates it.
pub(crate) fn front(args: &ProgramArgs) -> Result<Front, CliError> {
    let source = Source::read(&args.program)?;
    let checked = source.check()?;
    let prepared = prepare_def(&checked, &args.def).map_err(|d| source.error(d))?;
    let lowered = match (&args.strategy, &args.apply) {
        (Some(path), Some(apply)) => {
            let strategy = load_strategy(path, apply)?;
            apply_strategy(strategy, &prepared.body, args.budget)?.map_err(|f| {
                CliError::from(format!(
                    "the strategy `{apply}` failed on `{}`: {f}",
                    args.def
                ))
            })?
        }
        _ => prepared.body.clone(),
    };
    let mut dpia = dpia::translate(&args.def, &lowered, &prepared.scheme).map_err(|e| {
        let mut err = source.error(e.to_diagnostic());
        if args.strategy.is_none() {
            err.0.push_str(
                "\nnote: no strategy was given (--strategy S.elv --apply NAME); the definition is compiled as written",
            );
        }
        err
    })?;
    // the constraints of the type, and those of the program's views after translation
    // (inside `iterate` steps, say); the generated C entry point checks them too
    let mut constraints =
        rise::constraints::of_lowered(&checked, &args.def, &lowered, &prepared.scheme);
    constraints.extend(std::mem::take(&mut dpia.constraints));
    let constraints = rise::constraints::simplify_all(constraints);
    dpia.constraints = constraints.clone();
    Ok(Front {
        source,
        checked,
        scheme: prepared.scheme,
        constraints,
        dpia,
    })
}

/// Tests the constraints of the lowered definition on the sizes of `instance`
/// and the explicit sizes given with `--nat`, before anything runs.
fn check_lowered_sizes(
    def: &str,
    constraints: &[SizeConstraint],
    instance: &rise::infer::Instance,
    nats: &[(String, i64)],
) -> Result<(), CliError> {
    let sizes: Vec<(rise::types::Name, i64)> = instance
        .nats
        .iter()
        .cloned()
        .chain(nats.iter().map(|(n, v)| (n.as_str().into(), *v)))
        .collect();
    rise::constraints::check_all(constraints, &sizes).map_err(|v| {
        CliError::from(format!(
            "size constraint of `{def}` as lowered by the strategy does not hold: {v}\n\
             note: the code computes only on sizes that satisfy `{}`",
            v.constraint
        ))
    })
}

/// `shine compile PROG.rise --def NAME [--strategy S.elv --apply SNAME] --target T [-o OUT]`
pub fn compile(args: &CompileArgs) -> Result<(), CliError> {
    if matches!(args.program.target, Target::Opencl | Target::Cuda) {
        return crate::gpu_cmd::compile(args);
    }
    let compiled = compile_program(&args.program)?;
    let text = if args.emit_dpia {
        compiled.dpia.body.to_string()
    } else {
        compiled.module.source.clone()
    };
    match &args.output {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| CliError::from(format!("cannot write `{}`: {e}", path.display())))?,
        None => emit(text.trim_end()),
    }
    Ok(())
}

/// A definition compiled, loaded and given its inputs: what `shine run` and `shine bench`
/// execute.
pub struct Executable {
    compiled: Compiled,
    instance: rise::infer::Instance,
    /// The inputs, in the order of the definition's value parameters.
    pub inputs: Vec<Flat>,
    buffers: Vec<runtime::Buffer>,
    /// The values of the definition's sizes, in the order the entry point takes them.
    pub sizes: Vec<i64>,
    shape: Vec<usize>,
    elem: ScalarType,
    module: runtime::Module,
    output: runtime::Buffer,
    /// The definition's name (for error messages).
    def: String,
}

impl Executable {
    /// Compiles the definition of `args` with the C compiler, loads it and makes its inputs
    /// (from `.npy` files or random).
    pub fn new(args: &RunArgs) -> Result<Executable, CliError> {
        let compiled = compile_program(&args.program)?;
        let RunInputs {
            inputs,
            instance,
            shape,
            elem,
            sizes,
        } = run_inputs(
            args,
            &compiled.source,
            &compiled.checked,
            &compiled.scheme,
            &compiled.constraints,
            &compiled.dpia.sizes,
        )?;

        let mut config = runtime::CompilerConfig::default().with_compiler(args.cc.clone());
        if let Some(flags) = &args.cflags {
            config = config.with_flags(split_flags(flags)?);
        }
        if args.fast_math {
            let mut flags = config.flags.clone();
            flags.push(FAST_MATH_CFLAG.to_string());
            config = config.with_flags(flags);
        }
        if args.sanitize {
            config = config
                .with_sanitizer(runtime::Sanitizer::Address)
                .with_sanitizer(runtime::Sanitizer::UndefinedBehavior);
        }
        let module =
            runtime::Module::compile(&compiled.module.source, &compiled.module.entry, &config)
                .map_err(|e| CliError::from(e.to_string()))?;
        let count = run_elements(args, &inputs, &shape)?;
        let buffers: Vec<runtime::Buffer> =
            inputs.iter().map(to_buffer).collect::<Result<_, _>>()?;
        let output = runtime::Buffer::zeroed(count * byte_size(elem)?);
        Ok(Executable {
            compiled,
            instance,
            inputs,
            buffers,
            sizes,
            shape,
            elem,
            module,
            output,
            def: args.program.def.clone(),
        })
    }

    /// The number of elements of the result.
    pub fn result_len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Runs the code once.
    pub fn run(&mut self) -> Result<(), CliError> {
        let refs: Vec<&runtime::Buffer> = self.buffers.iter().collect();
        self.module
            .run(&mut self.output, &refs, &self.sizes)
            .map_err(|e| crate::cli::run_error(&self.def, e))
    }

    /// Runs the code `warmup` times untimed, then `runs` times timed.
    pub fn bench(&mut self, runs: usize, warmup: usize) -> Result<runtime::Timing, CliError> {
        let refs: Vec<&runtime::Buffer> = self.buffers.iter().collect();
        self.module
            .bench(&mut self.output, &refs, &self.sizes, runs, warmup)
            .map_err(|e| crate::cli::run_error(&self.def, e))
    }

    /// The result of the last run.
    pub fn result(&self) -> Result<Flat, CliError> {
        from_buffer(&self.output, self.elem, &self.shape)
    }

    /// Compares `result` with the reference interpreter on the same inputs.
    pub fn verify(&self, result: &Flat) -> Result<(), CliError> {
        let expected = interpret(&self.compiled, &self.instance, &self.inputs)?;
        let tol = if self.elem.is_float() {
            if self.elem == ScalarType::F64 {
                runtime::Tolerance::for_f64()
            } else {
                runtime::Tolerance::for_f32()
            }
        } else {
            runtime::Tolerance::exact()
        };
        let want: Vec<f64> = expected.data.iter().map(|s| s.as_f64()).collect();
        let got: Vec<f64> = result.data.iter().map(|s| s.as_f64()).collect();
        runtime::compare(&want, &got, tol).map_err(|m| {
            CliError::from(format!(
                "verification failed: the generated code and the interpreter differ: {m}"
            ))
        })
    }
}

/// The number of elements of the result of shape `shape`, after checking that the inputs and
/// the result (and the interpreter's reference with `--verify`) fit in memory.
pub(crate) fn run_elements(
    args: &RunArgs,
    inputs: &[Flat],
    shape: &[usize],
) -> Result<usize, CliError> {
    let per_element = if args.verify {
        crate::limits::VERIFY_BYTES_PER_ELEMENT
    } else {
        crate::limits::RUN_BYTES_PER_ELEMENT
    };
    let count = crate::limits::elements("the result", shape, per_element)?;
    let total = inputs.iter().fold(count as u64, |acc, f| {
        acc.saturating_add(f.data.len() as u64)
    });
    crate::limits::fits_in_memory("the run (inputs and result)", total, per_element)?;
    Ok(count)
}

/// `shine run PROG.rise --def NAME ... --target T (--input X.npy... | --random SEED)`
pub fn run(args: &RunArgs) -> Result<(), CliError> {
    if let Some(runs) = args.bench.filter(|&r| r > runtime::MAX_RUNS) {
        return Err(format!(
            "--bench {runs}: at most {} runs are timed",
            runtime::MAX_RUNS
        )
        .into());
    }
    if matches!(args.program.target, Target::Opencl | Target::Cuda) {
        return crate::gpu_cmd::run(args);
    }
    let (report, result) = execute(args)?;
    print_result(args, report, &result)
}

/// Compiles and runs (and with `--verify` verifies, with `--bench` times) the
/// definition with the C compiler: the JSON report and the result.
pub(crate) fn execute(
    args: &RunArgs,
) -> Result<(serde_json::Map<String, serde_json::Value>, Flat), CliError> {
    let mut exe = Executable::new(args)?;
    let def = &args.program.def;
    exe.run()?;
    let result = exe.result()?;

    let mut report = serde_json::Map::new();
    report.insert("def".into(), def.clone().into());
    report.insert(
        "target".into(),
        format!("{:?}", args.program.target).to_lowercase().into(),
    );
    report.insert("fast_math".into(), args.fast_math.into());
    if args.verify {
        exe.verify(&result)?;
        report.insert("verified".into(), true.into());
        if !args.json {
            eprintln_text(&format!(
                "verified against the interpreter ({} elements)",
                exe.result_len()
            ));
        }
    }
    if let Some(runs) = args.bench {
        let t = exe.bench(runs, 1)?;
        report.insert("median_ms".into(), t.median_ms.into());
        report.insert("min_ms".into(), t.min_ms.into());
        report.insert("max_ms".into(), t.max_ms.into());
        report.insert("runs".into(), t.runs.into());
        if !args.json {
            eprintln_text(&format!(
                "{} runs: median {:.3} ms, min {:.3} ms, max {:.3} ms",
                t.runs, t.median_ms, t.min_ms, t.max_ms
            ));
        }
    }
    Ok((report, result))
}

/// Writes or prints the result of `shine run` and its JSON report.
pub(crate) fn print_result(
    args: &RunArgs,
    report: serde_json::Map<String, serde_json::Value>,
    result: &Flat,
) -> Result<(), CliError> {
    match &args.output {
        Some(path) => shine::npy::write(path, result)?,
        None if !args.json => {
            let value = Value::from_flat(result.elem, &result.shape, result.data.clone())
                .map_err(|e| CliError::from(e.message))?;
            emit(&value.to_string());
        }
        None => {}
    }
    if args.json {
        emit(&serde_json::Value::Object(report).to_string());
    }
    Ok(())
}

/// What a run of a compiled definition needs besides the code, the same on every target.
pub(crate) struct RunInputs {
    /// The inputs, from `.npy` files or random (`--random SEED`).
    pub inputs: Vec<Flat>,
    /// The definition instantiated at the inputs' types.
    pub instance: rise::infer::Instance,
    /// The shape of the result.
    pub shape: Vec<usize>,
    /// The element type of the result.
    pub elem: ScalarType,
    /// The values of the program's sizes, in the order of `sizes`.
    pub sizes: Vec<i64>,
}

/// The inputs of `args` (from `.npy` files or random), the definition instantiated at their
/// types, its result's layout and the values of `sizes` (the program's size variables).
pub(crate) fn run_inputs(
    args: &RunArgs,
    source: &Source,
    checked: &rise::infer::CheckedProgram,
    scheme: &Type,
    constraints: &[SizeConstraint],
    sizes: &[arith::Var],
) -> Result<RunInputs, CliError> {
    let def = &args.program.def;
    let inputs: Vec<Flat> = match args.random {
        Some(seed) => {
            let params = random_param_types(scheme, &args.nats)?;
            let mut rng = Lcg::new(seed);
            params
                .iter()
                .map(|t| random_flat(t, &mut rng))
                .collect::<Result<_, _>>()?
        }
        None => args
            .inputs
            .iter()
            .map(|p| shine::npy::read(p).map_err(CliError::from))
            .collect::<Result<_, _>>()?,
    };
    let types: Vec<DataType> = inputs.iter().map(data_type_of).collect();
    let instance =
        instantiate_def(checked, def, &types, &args.nats).map_err(|d| source.error(d))?;
    if instance.params.len() != inputs.len() {
        return Err(format!(
            "`{def}` takes {} inputs, {} given (use --input for each, or --random SEED)",
            instance.params.len(),
            inputs.len()
        )
        .into());
    }
    check_lowered_sizes(def, constraints, &instance, &args.nats)?;
    let rise::Type::Data(result_type) = &instance.result else {
        return Err(format!("the result of `{def}` is not data").into());
    };
    let (shape, elem) = interp::flat_layout(result_type)
        .map_err(|e| format!("cannot lay out the result: {}", e.message))?;
    let sizes = sizes
        .iter()
        .map(|v| {
            instance
                .nats
                .iter()
                .find(|(n, _)| **n == *v.name())
                .map(|(_, x)| *x)
                .ok_or_else(|| {
                    CliError::from(format!(
                        "no value for the size `{v}`; give it with --nat {v}=V"
                    ))
                })
        })
        .collect::<Result<Vec<i64>, _>>()?;
    Ok(RunInputs {
        inputs,
        instance,
        shape,
        elem,
        sizes,
    })
}

/// The parameter types of the scheme with every size given by `--nat`.
pub(crate) fn random_param_types(
    scheme: &Type,
    nats: &[(String, i64)],
) -> Result<Vec<DataType>, CliError> {
    let mut t = scheme.clone();
    while let Type::DepFun { binder, body, .. } = &t {
        let v = nats
            .iter()
            .find(|(n, _)| *n == *binder.name)
            .map(|(_, v)| *v)
            .ok_or_else(|| {
                CliError::from(format!(
                    "--random needs every size: give `--nat {}=V`",
                    binder.name
                ))
            })?;
        if binder.kind != rise::Kind::Nat {
            return Err(format!(
                "cannot choose a value for `{}: {}`",
                binder.name, binder.kind
            )
            .into());
        }
        t = body.instantiate(binder, &rise::TypeArg::Nat(arith::Nat::cst(v)));
    }
    let mut params = Vec::new();
    while let Type::Fun(p, r) = &t {
        let d = p.as_data().ok_or_else(|| {
            CliError::from("a parameter is a function; it cannot be given as data".to_string())
        })?;
        params.push(d.clone());
        t = (**r).clone();
    }
    Ok(params)
}

/// A small deterministic generator (PCG-style LCG), so `--random SEED` is reproducible.
pub(crate) struct Lcg(u64);

impl Lcg {
    /// The generator one step after `seed`.
    pub(crate) fn new(seed: u64) -> Lcg {
        let mut rng = Lcg(seed);
        rng.next();
        rng
    }

    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn unit(&mut self) -> f64 {
        (self.next() as f64) / ((1u64 << 31) as f64) * 2.0 - 1.0
    }
}

pub(crate) fn random_flat(t: &DataType, rng: &mut Lcg) -> Result<Flat, CliError> {
    let (shape, elem) = interp::flat_layout(t).map_err(|e| CliError::from(e.message))?;
    let count = crate::limits::elements(
        &format!("a random input ({t})"),
        &shape,
        crate::limits::RUN_BYTES_PER_ELEMENT,
    )?;
    let data = (0..count)
        .map(|_| {
            let small = (rng.next() % 9) as i64 - 4;
            if elem == ScalarType::F16 {
                return Err(CliError::from(
                    "f16 inputs are not supported by compiled code".to_string(),
                ));
            }
            let value = match elem {
                t if t.is_float() => Scalar::from_float(t, rng.unit()),
                ScalarType::Bool => Scalar::from_int(elem, (small > 0) as i64),
                t if t.is_unsigned_int() => Scalar::from_int(t, small.abs()),
                t => Scalar::from_int(t, small),
            };
            value.map_err(CliError::from)
        })
        .collect::<Result<Vec<_>, CliError>>()?;
    Ok(Flat { elem, shape, data })
}

pub(crate) fn byte_size(t: ScalarType) -> Result<usize, CliError> {
    match t {
        ScalarType::F16 => Err("f16 data is not supported by compiled code"
            .to_string()
            .into()),
        ScalarType::Bool => Ok(1),
        t => Ok((t.bits() / 8) as usize),
    }
}

/// The bytes of a flat array, as the generated C code lays it out.
pub(crate) fn to_buffer(flat: &Flat) -> Result<runtime::Buffer, CliError> {
    byte_size(flat.elem)?; // refuses f16
    Ok(runtime::Buffer::from_bytes(&flat.to_ne_bytes()))
}

/// A flat array from the bytes the generated code wrote.
pub(crate) fn from_buffer(
    buf: &runtime::Buffer,
    elem: ScalarType,
    shape: &[usize],
) -> Result<Flat, CliError> {
    let size = byte_size(elem)?;
    let data = buf
        .as_bytes()
        .chunks_exact(size)
        .map(|c| {
            let a = |n: usize| -> [u8; 8] {
                let mut b = [0u8; 8];
                b[..n].copy_from_slice(&c[..n]);
                b
            };
            match elem {
                ScalarType::Bool => Scalar::Bool(c[0] != 0),
                ScalarType::Int => Scalar::Int(i32::from_ne_bytes([c[0], c[1], c[2], c[3]])),
                ScalarType::I32 => Scalar::I32(i32::from_ne_bytes([c[0], c[1], c[2], c[3]])),
                ScalarType::I8 => Scalar::I8(c[0] as i8),
                ScalarType::I16 => Scalar::I16(i16::from_ne_bytes([c[0], c[1]])),
                ScalarType::I64 => Scalar::I64(i64::from_ne_bytes(a(8))),
                ScalarType::U8 => Scalar::U8(c[0]),
                ScalarType::U16 => Scalar::U16(u16::from_ne_bytes([c[0], c[1]])),
                ScalarType::U32 => Scalar::U32(u32::from_ne_bytes([c[0], c[1], c[2], c[3]])),
                ScalarType::U64 => Scalar::U64(u64::from_ne_bytes(a(8))),
                ScalarType::F32 => Scalar::F32(f32::from_ne_bytes([c[0], c[1], c[2], c[3]])),
                _ => Scalar::F64(f64::from_ne_bytes(a(8))),
            }
        })
        .collect();
    Ok(Flat {
        elem,
        shape: shape.to_vec(),
        data,
    })
}

/// The reference result: the interpreter on the original definition.
fn interpret(
    compiled: &Compiled,
    instance: &rise::infer::Instance,
    inputs: &[Flat],
) -> Result<Flat, CliError> {
    let values = inputs
        .iter()
        .map(|f| {
            Value::from_flat(f.elem, &f.shape, f.data.clone())
                .map_err(|e| CliError::from(e.message))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let function = interp::eval(&instance.expr).map_err(|e| compiled.source.error(e.into()))?;
    let result = if values.is_empty() {
        function
    } else {
        interp::apply(&function, values).map_err(|e| compiled.source.error(e.into()))?
    };
    let rise::Type::Data(t) = &instance.result else {
        return Err("the result is not data".to_string().into());
    };
    result
        .to_flat(t)
        .map_err(|e| CliError::from(format!("interpreter result: {}", e.message)))
}

/// `--cflags`, split into words as a POSIX shell would (`-DX='a b'` is one word).
pub(crate) fn split_flags(flags: &str) -> Result<Vec<String>, CliError> {
    shlex::split(flags).ok_or_else(|| {
        CliError::from(format!(
            "--cflags `{flags}`: unbalanced quotes (flags are split as a shell would)"
        ))
    })
}

fn eprintln_text(s: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{s}");
}
