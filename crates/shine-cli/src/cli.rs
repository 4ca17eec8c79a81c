//! The subcommands of the `shine` tool. Every failure is a [`CliError`] with a
//! rendered message; nothing here panics on user input.

use clap::Args;
use shine::inputs::Given;
use shine::{npy, Inputs, Output, SourceFile};
use std::fmt;
use std::path::PathBuf;

/// A user-facing error, already rendered (with source context where it has one).
#[derive(Debug)]
pub struct CliError(pub String);

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for CliError {
    fn from(s: String) -> CliError {
        CliError(format!("error: {s}"))
    }
}

impl From<shine::Error> for CliError {
    fn from(e: shine::Error) -> CliError {
        CliError(e.render(&flag_of))
    }
}

/// A setting the library names, as the command line's flags give it.
pub fn flag_of(setting: &shine::Setting) -> String {
    use shine::Setting;
    match setting {
        Setting::Size(n) => format!("`--nat {n}=V`"),
        Setting::InputArrays => "--input".into(),
        Setting::RandomInputs => "--random".into(),
        Setting::CFlags => "--cflags".into(),
        Setting::Sanitize => "--sanitize".into(),
        Setting::Compiler => "--cc".into(),
        Setting::Strategy => "--strategy S.elv --apply NAME".into(),
        Setting::OutputFiles => "--output".into(),
        Setting::Selection => "--select".into(),
        Setting::SearchBudget => "--budget N".into(),
        Setting::SearchTime => "--time SECONDS".into(),
        Setting::SearchSizes => "--nat".into(),
        Setting::VerifySizes => "--verify-nat".into(),
        Setting::TimeSizes => "--time-nat".into(),
        Setting::Parameter(n) => format!("--param `{n}`"),
        Setting::Template => "the --apply strategy".into(),
        Setting::CheckConstraints => "--check-constraints".into(),
        Setting::TuningDatabase => "--db".into(),
        Setting::Jobs => "--jobs".into(),
        Setting::Devices => "--devices".into(),
        Setting::GeneratedSource => "`shine compile` with the same program, --def, strategy and \
                                     --target writes the generated C source (`-o FILE.c`)"
            .into(),
        other => other.library_name(),
    }
}

/// Prints a result on stdout. A closed pipe (`shine ... | head`) is not an error.
pub fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
}

/// Arguments of `shine check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The RISE program (.rise).
    pub program: PathBuf,
}

/// Reads a RISE program and prints the parser's warnings about it on stderr.
pub fn read_program(path: &std::path::Path) -> Result<SourceFile, CliError> {
    let source = SourceFile::read(path)?;
    for warning in source.warnings() {
        eprint!("{warning}");
    }
    Ok(source)
}

/// `shine check PROG.rise`: one line per definition, `name : type`, then one
/// `  where CONSTRAINT` line for each size constraint it has.
pub fn check(args: &CheckArgs) -> Result<(), CliError> {
    let source = read_program(&args.program)?;
    let checked = source.check()?;
    let foreign = checked
        .foreign
        .iter()
        .map(|f| format!("{} : {}", f.name, f.ty()));
    let lines: Vec<String> = foreign
        .chain(checked.user_defs().map(|def| {
            let wheres = def.constraints.iter().map(|c| format!("\n  where {c}"));
            format!("{} : {}{}", def.name, def.ty, wheres.collect::<String>())
        }))
        .collect();
    if !lines.is_empty() {
        emit(&lines.join("\n"));
    }
    Ok(())
}

/// Arguments of `shine eval`.
#[derive(Args, Debug)]
pub struct EvalArgs {
    /// The RISE program (.rise).
    pub program: PathBuf,
    /// The definition to evaluate.
    #[arg(long = "def", value_name = "NAME")]
    pub def: String,
    /// A size the inputs do not determine, e.g. `--nat n=1024` (repeatable).
    #[arg(long = "nat", value_name = "NAME=VALUE", value_parser = parse_nat_binding)]
    pub nats: Vec<(String, i64)>,
    /// An input array (.npy), in the order of the definition's parameters (repeatable). An
    /// array of tuples is a structured array or has one more axis for the components.
    #[arg(long = "input", value_name = "X.npy", conflicts_with = "random")]
    pub inputs: Vec<PathBuf>,
    /// Random inputs from this seed, the same as `shine run --random SEED` makes for the
    /// same sizes (every size given with --nat).
    #[arg(long, value_name = "SEED")]
    pub random: Option<u64>,
    /// Where to write the result (.npy); a result that is a tuple of N parts takes N files
    /// (repeat --output) or one .npz. Without it the result is printed.
    #[arg(long = "output", value_name = "Y.npy")]
    pub outputs: Vec<PathBuf>,
    /// The C compiler that compiles the program's foreign functions, which the interpreter
    /// runs in a child process.
    #[arg(long = "cc", value_name = "CC", default_value = "gcc")]
    pub cc: String,
}

/// The `--input` files, read.
pub fn read_inputs(paths: &[PathBuf]) -> Result<Vec<Given>, CliError> {
    paths
        .iter()
        .map(|p| Ok(Given::new(p.display().to_string(), npy::read_contents(p)?)))
        .collect()
}

/// Writes `output` to the `--output` files (see [`npy::write_output`]) and says so on stderr,
/// or prints it when there are none.
pub fn write_or_print(paths: &[PathBuf], output: &Output) -> Result<(), CliError> {
    if paths.is_empty() {
        let value = output.to_value()?;
        emit(&value.to_string());
        return Ok(());
    }
    let written = npy::write_output(paths, output)?;
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{written}");
    Ok(())
}

pub fn parse_nat_binding(s: &str) -> Result<(String, i64), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=VALUE, found `{s}`"))?;
    let value: i64 = value
        .trim()
        .parse()
        .map_err(|_| format!("`{value}` is not a natural number"))?;
    if value < 0 {
        return Err(format!("`{value}` is negative; sizes are natural numbers"));
    }
    Ok((name.trim().to_string(), value))
}

/// `shine eval PROG.rise --def NAME ...`: the reference interpreter through the library
/// ([`shine::evaluate`]), on the `--input` files or random inputs from the `--random` seed.
pub fn eval(args: &EvalArgs) -> Result<(), CliError> {
    let source = read_program(&args.program)?;
    let inputs = match args.random {
        Some(seed) => Inputs::Random { seed },
        None => Inputs::Arrays(read_inputs(&args.inputs)?),
    };
    let output = shine::evaluate(&source, &args.def, inputs, &args.nats, &args.cc)?;
    write_or_print(&args.outputs, &output)
}

/// Arguments of `shine strategies`.
#[derive(Args, Debug)]
pub struct StrategiesArgs {
    /// Print the built-in schedules' file (.elv) itself, to read or copy.
    #[arg(long)]
    pub show: bool,
}

/// `shine strategies [--show]`: the built-in schedules, each with what it is for, and the
/// default schedule of each target; with `--show`, their file.
pub fn strategies(args: &StrategiesArgs) -> Result<(), CliError> {
    use shine::schedules;
    if args.show {
        emit(schedules::SOURCE.trim_end());
        return Ok(());
    }
    let width = schedules::SCHEDULES
        .iter()
        .map(|(n, _)| n.len())
        .max()
        .unwrap_or(0);
    let mut lines: Vec<String> = schedules::SCHEDULES
        .iter()
        .map(|(name, what)| format!("{name:width$}  {what}"))
        .collect();
    lines.push(String::new());
    lines.push(
        "Without --strategy, `shine compile` and `shine run` apply the default of the target:"
            .into(),
    );
    for t in shine::Target::ALL {
        lines.push(format!(
            "  --target {:7} {}",
            t.name(),
            schedules::defaults_for(t).join(" where it compiles the definition, else ")
        ));
    }
    lines.push(
        "`--apply NAME` without --strategy applies one of these; `shine strategies --show` \
         prints their definitions."
            .into(),
    );
    emit(&lines.join("\n"));
    Ok(())
}

/// The command-line parser of `--target`: the names of [`shine::Target::ALL`], listed in the
/// help.
pub fn target_parser() -> impl clap::builder::TypedValueParser<Value = shine::Target> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(shine::Target::ALL.map(|t| t.name()))
        .try_map(|name| name.parse::<shine::Target>())
}
