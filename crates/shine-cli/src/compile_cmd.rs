//! `shine compile` and `shine run`: the command line of the library facade. The files are
//! read here; [`shine::compile`] generates the code (C, OpenMP, OpenCL or CUDA), which
//! `compile` prints and `run` executes ([`shine::Executable`]) on `.npy` or random inputs,
//! verifies against the interpreter and times.

use crate::cli::{emit, parse_nat_binding, read_inputs, write_or_print, CliError};
use clap::Args;
use serde::Serialize;
use shine::{
    schedules, Artifact, Code, Executable, Inputs, Lowered, Options, Output, RunOptions,
    SourceFile, StrategySource, Target, Timings,
};
use std::path::PathBuf;

/// What `compile` and `run` share: the program, the definition and the strategy.
#[derive(Args, Debug)]
pub struct ProgramArgs {
    /// The RISE program (.rise).
    pub program: PathBuf,
    /// The definition to compile.
    #[arg(long = "def", value_name = "NAME")]
    pub def: String,
    /// The strategy file (.elv) that lowers the definition. Without it, --apply names a
    /// built-in schedule (`shine strategies`), and without both the target's default
    /// schedule is applied (c: storeEveryStage, openmp: storeEveryStagePar, opencl:
    /// rowReductionsByWorkGroups where it compiles the definition, cuda:
    /// rowReductionsByWarps where it does, else storeEveryStageGpu).
    #[arg(long = "strategy", value_name = "S.elv", requires = "apply")]
    pub strategy: Option<PathBuf>,
    /// The strategy to apply: a definition of the file or an expression over them
    /// (`"blocking ; lowerToC"`).
    #[arg(long = "apply", value_name = "SNAME")]
    pub apply: Option<String>,
    /// The code to generate.
    #[arg(long = "target", value_parser = crate::cli::target_parser(), default_value = "c")]
    pub target: Target,
    /// Stop rewriting after this many strategy applications.
    #[arg(long, value_name = "N", default_value_t = elevate::DEFAULT_BUDGET)]
    pub budget: u64,
    /// Use indices read from data (`gather`, `scatter`, `idx` and `natAsIndex` of values
    /// computed at run time) without checking them: faster, but an index out of range
    /// reads or writes outside an array, and `scatter`'s positions are not checked to be
    /// distinct. By default each is checked and a failed check is an error.
    #[arg(long)]
    pub unchecked_indices: bool,
    /// Say on stderr which strategy lowers the definition and where it comes from (the
    /// default schedule of the target when no --strategy is given), and what it made of the
    /// definition: values computed once, arrays stored, loops left sequential and why,
    /// transcendental functions computed per element.
    #[arg(long)]
    pub explain: bool,
}

/// Where the strategy of `compile` and `run` comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// `--strategy S.elv --apply NAME`.
    File,
    /// `--apply NAME` alone: the built-in schedules.
    BuiltIn,
    /// Neither: the target's default schedule.
    Default,
}

impl ProgramArgs {
    /// The definition compiled for the target ([`shine::compile`]).
    pub fn compile(&self) -> Result<Artifact, CliError> {
        let (program, chosen) = self.read()?;
        let artifact = self.first_that_applies(chosen, |strategy| {
            shine::compile(
                &program,
                &self.def,
                Some(strategy),
                self.target,
                &self.options(),
            )
        })?;
        self.explain_lowered(&artifact.lowered);
        Ok(artifact)
    }

    /// The definition through the front end only ([`shine::lower`]).
    pub fn lower(&self) -> Result<Lowered, CliError> {
        let (program, chosen) = self.read()?;
        let lowered = self.first_that_applies(chosen, |strategy| {
            shine::lower(&program, &self.def, Some(strategy), &self.options())
        })?;
        self.explain_lowered(&lowered);
        Ok(lowered)
    }

    /// What `step` makes with the strategy given, or with the first of the target's
    /// default schedules it succeeds with (`--explain` names it, and why those before it
    /// were passed over); the error, noted, when none does.
    fn first_that_applies<T>(
        &self,
        chosen: Option<(StrategySource, Origin)>,
        step: impl Fn(&StrategySource) -> Result<T, shine::Error>,
    ) -> Result<T, CliError> {
        let (strategy, origin, passed_over, result) = match chosen {
            Some((strategy, origin)) => {
                let result = step(&strategy);
                (strategy, origin, Vec::new(), result)
            }
            None => {
                let tried = schedules::try_defaults(self.target, step);
                let passed_over = tried
                    .passed_over
                    .iter()
                    .map(|(s, e)| {
                        format!(
                            "`{}` does not compile it: {}",
                            s.apply,
                            e.to_string().lines().next().unwrap_or_default()
                        )
                    })
                    .collect();
                (tried.chosen, Origin::Default, passed_over, tried.result)
            }
        };
        self.explain(&strategy, origin, &passed_over);
        result.map_err(|e| self.noted(e, &strategy, origin))
    }

    /// `--explain`: what the schedule made of the definition, on stderr.
    fn explain_lowered(&self, lowered: &Lowered) {
        if self.explain {
            for line in shine::explain::lowered_program(&lowered.rise) {
                eprintln_text(&format!("  {line}"));
            }
        }
    }

    /// The program, and the strategy given with where it comes from (`None`: the target's
    /// default schedules are tried).
    fn read(&self) -> Result<(SourceFile, Option<(StrategySource, Origin)>), CliError> {
        let program = crate::cli::read_program(&self.program)?;
        let chosen = match (&self.strategy, &self.apply) {
            (Some(path), Some(apply)) => Some((
                StrategySource {
                    file: SourceFile::read(path)?,
                    apply: apply.clone(),
                },
                Origin::File,
            )),
            (None, Some(apply)) => Some((schedules::strategy(apply), Origin::BuiltIn)),
            _ => None,
        };
        Ok((program, chosen))
    }

    /// `--explain`: the strategy, where it comes from and the defaults passed over before
    /// it, on stderr.
    fn explain(&self, strategy: &StrategySource, origin: Origin, passed_over: &[String]) {
        if !self.explain {
            return;
        }
        let from = match origin {
            Origin::File => format!("from `{}`", strategy.file.name),
            Origin::BuiltIn => "built in".to_string(),
            Origin::Default => format!(
                "the default schedule for --target {} (no --strategy given)",
                self.target.name()
            ),
        };
        let show = match origin {
            Origin::File => String::new(),
            _ => "; `shine strategies --show` prints its definition, to read or copy".into(),
        };
        eprintln_text(&format!("strategy: `{}`, {from}{show}", strategy.apply));
        for why in passed_over {
            eprintln_text(&format!("  passed over: {why}"));
        }
    }

    /// An error of the pipeline, with a note on the schedule when the user did not choose it.
    fn noted(&self, e: shine::Error, strategy: &StrategySource, origin: Origin) -> CliError {
        let e = match origin {
            Origin::File => e,
            Origin::BuiltIn => e.with_note(format!(
                "`{}` is a built-in schedule (`shine strategies --show` prints them)",
                strategy.apply
            )),
            Origin::Default => e.with_note(format!(
                "no --strategy was given: `{}` is the default schedule for --target {} \
                 (`shine strategies --show` prints it); give a strategy of your own with \
                 --strategy S.elv --apply NAME",
                strategy.apply,
                self.target.name()
            )),
        };
        CliError::from(e)
    }

    fn options(&self) -> Options {
        Options {
            budget: self.budget,
            unchecked_indices: self.unchecked_indices,
        }
    }
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
    /// An input array (.npy), in the order of the definition's parameters (repeatable). An
    /// array of tuples is a structured array or has one more axis for the components.
    #[arg(long = "input", value_name = "X.npy", conflicts_with = "random")]
    pub inputs: Vec<PathBuf>,
    /// Random inputs from this seed (floats in [-1, 1), small integers, indices in range).
    #[arg(long, value_name = "SEED")]
    pub random: Option<u64>,
    /// Where to write the result (.npy); a result that is a tuple of N parts takes N files
    /// (repeat --output) or one .npz.
    #[arg(long = "output", value_name = "Y.npy")]
    pub outputs: Vec<PathBuf>,
    /// Compare the result with the reference interpreter on the same inputs.
    #[arg(long)]
    pub verify: bool,
    /// Time this many runs (after a warm-up run) and print median, min and max. The result
    /// is then summarized on one line (type, size, sum, first values) unless --print.
    #[arg(long, value_name = "RUNS")]
    pub bench: Option<usize>,
    /// With --bench, print the whole result too.
    #[arg(long)]
    pub print: bool,
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

impl RunArgs {
    /// The inputs: the `.npy` files, or random ones from the seed.
    fn inputs(&self) -> Result<Inputs, CliError> {
        Ok(match self.random {
            Some(seed) => Inputs::Random { seed },
            None => Inputs::Arrays(read_inputs(&self.inputs)?),
        })
    }

    fn run_options(&self) -> RunOptions {
        RunOptions {
            cc: self.cc.clone(),
            cflags: self.cflags.clone(),
            fast_math: self.fast_math,
            sanitize: self.sanitize,
            verify: self.verify,
            ..RunOptions::default()
        }
    }
}

/// `shine compile PROG.rise --def NAME [[--strategy S.elv] --apply SNAME] --target T [-o OUT]`
pub fn compile(args: &CompileArgs) -> Result<(), CliError> {
    let program = &args.program;
    let text = match (args.emit_dpia, program.target.is_gpu()) {
        (false, _) => program.compile()?.code.source().to_string(),
        (true, false) => program.compile()?.lowered.dpia.body.to_string(),
        (true, true) => gpu_kernels_dpia(&program.lower()?)?,
    };
    match &args.output {
        Some(path) => shine::files::write_whole(path, text.as_bytes()).map_err(CliError::from)?,
        None => emit(text.trim_end()),
    }
    Ok(())
}

/// The imperative DPIA of each kernel of a GPU program, after hoisting and barrier insertion.
fn gpu_kernels_dpia(lowered: &Lowered) -> Result<String, CliError> {
    let gpu = dpia::gpu::prepare(&lowered.dpia)
        .map_err(|e| CliError::from(format!("code generation failed: {e}")))?;
    let mut text = String::new();
    for t in &gpu.temporaries {
        text.push_str(&format!("temporary {}: {}\n", t.name, t.ty));
    }
    for k in &gpu.kernels {
        text.push_str(&format!("kernel {} ({:?}):\n{}", k.name, k.launch, k.body));
    }
    Ok(text)
}

/// The JSON report of `shine run --json` (its keys come out sorted).
#[derive(Serialize)]
struct RunReport<'a> {
    def: &'a str,
    target: Target,
    /// GPU code: the number of kernels.
    #[serde(skip_serializing_if = "Option::is_none")]
    kernels: Option<usize>,
    fast_math: bool,
    /// GPU code: the width of its indices in this run (64 only where the sizes need it).
    #[serde(skip_serializing_if = "Option::is_none")]
    index_bits: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    verified: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    median_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    runs: Option<usize>,
    /// GPU code: the median of the host's wall-clock time of a run.
    #[serde(skip_serializing_if = "Option::is_none")]
    wall_median_ms: Option<f64>,
}

/// `shine run PROG.rise --def NAME ... --target T (--input X.npy... | --random SEED)`:
/// compiles, runs (and with `--verify` verifies, with `--bench` times) the definition.
pub fn run(args: &RunArgs) -> Result<(), CliError> {
    if let Some(runs) = args.bench.filter(|&r| r > runtime::MAX_RUNS) {
        return Err(format!(
            "--bench {runs}: at most {} runs are timed",
            runtime::MAX_RUNS
        )
        .into());
    }
    let options = args.run_options();
    options.check(args.program.target)?;
    let artifact = args.program.compile()?;
    let mut exe = Executable::new(&artifact, args.inputs()?, &args.nats, &options)?;
    shine::npy::check_outputs(&args.outputs, exe.result_type())?;
    let result = exe.run()?;
    let mut report = RunReport {
        def: &args.program.def,
        target: args.program.target,
        kernels: match &artifact.code {
            Code::Gpu(module) => Some(module.kernels.len()),
            Code::C(_) => None,
        },
        fast_math: args.fast_math,
        index_bits: match &artifact.code {
            Code::Gpu(_) => Some(exe.index_bits()),
            Code::C(_) => None,
        },
        verified: None,
        median_ms: None,
        min_ms: None,
        max_ms: None,
        runs: None,
        wall_median_ms: None,
    };
    if args.verify {
        let floats = exe.verify(&result)?;
        report.verified = Some(true);
        if !args.json {
            let how = match floats {
                shine::FloatCheck::SumBound => "; floats within the bound for reassociated sums",
                shine::FloatCheck::Tolerance => "",
            };
            eprintln_text(&format!(
                "verified against the interpreter ({} elements{how})",
                exe.result_len()
            ));
        }
    }
    if let Some(runs) = args.bench {
        let t = exe.bench(runs, 1)?;
        report.median_ms = Some(t.code.median_ms);
        report.min_ms = Some(t.code.min_ms);
        report.max_ms = Some(t.code.max_ms);
        report.runs = Some(t.code.runs);
        report.wall_median_ms = t.wall.as_ref().map(|w| w.median_ms);
        if !args.json {
            eprintln_text(&timing_line(&t));
        }
    }
    print_result(args, &report, &result)
}

/// The timing of `--bench` for people.
fn timing_line(t: &Timings) -> String {
    let c = &t.code;
    match &t.wall {
        None => format!(
            "{} runs: median {:.3} ms, min {:.3} ms, max {:.3} ms",
            c.runs, c.median_ms, c.min_ms, c.max_ms
        ),
        Some(wall) => format!(
            "{} runs: kernel time median {:.3} ms, min {:.3} ms, max {:.3} ms (wall median {:.3} ms)",
            c.runs, c.median_ms, c.min_ms, c.max_ms, wall.median_ms
        ),
    }
}

/// Writes or prints the result of `shine run` (with `--bench` and neither `--output` nor
/// `--print`, its summary) and its JSON report.
fn print_result(args: &RunArgs, report: &RunReport, result: &Output) -> Result<(), CliError> {
    let summarized = args.bench.is_some() && !args.print && args.outputs.is_empty();
    if summarized && !args.json {
        emit(&summary(result));
    } else if !args.outputs.is_empty() || !args.json {
        write_or_print(&args.outputs, result)?;
    }
    if args.json {
        let json = serde_json::to_value(report)
            .map_err(|e| CliError::from(format!("cannot write the report: {e}")))?;
        emit(&json.to_string());
    }
    Ok(())
}

/// How many values a summary shows.
const SUMMARY_VALUES: usize = 4;

/// One line about a result: its type, its number of elements, the sum of its values (a
/// checksum) and its first values.
fn summary(result: &Output) -> String {
    let values = result.parts.iter().flat_map(|p| p.data.iter());
    let sum: f64 = values.clone().map(|v| v.as_f64()).sum();
    let first: Vec<String> = values.take(SUMMARY_VALUES).map(|v| v.to_string()).collect();
    let more = if result.parts.iter().map(|p| p.data.len()).sum::<usize>() > SUMMARY_VALUES {
        ", ..."
    } else {
        ""
    };
    format!(
        "result: {} ({} elements), sum {sum}, first values [{}{more}] (--print prints it, \
         --output Y.npy saves it)",
        result.ty,
        result.len(),
        first.join(", ")
    )
}

fn eprintln_text(s: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{s}");
}
