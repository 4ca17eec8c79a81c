//! The subcommands of the `shine` tool. Every failure is a [`CliError`] with a
//! rendered message; nothing here panics on user input.

use clap::Args;
use rise::infer::instantiate_def;
use rise::interp::{self, Value};
use shine::inputs::data_type_of;
use shine::{npy, SourceFile};
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
        CliError(e.to_string())
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

/// `shine check PROG.rise`: one line per definition, `name : type`, then one
/// `  where CONSTRAINT` line for each size constraint it has.
pub fn check(args: &CheckArgs) -> Result<(), CliError> {
    let source = SourceFile::read(&args.program)?;
    let checked = source.check()?;
    let lines: Vec<String> = checked
        .user_defs()
        .map(|def| {
            let wheres = def.constraints.iter().map(|c| format!("\n  where {c}"));
            format!("{} : {}{}", def.name, def.ty, wheres.collect::<String>())
        })
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
    /// An input array (.npy), in the order of the definition's parameters (repeatable).
    #[arg(long = "input", value_name = "X.npy")]
    pub inputs: Vec<PathBuf>,
    /// Where to write the result (.npy); without it the result is printed.
    #[arg(long = "output", value_name = "Y.npy")]
    pub output: Option<PathBuf>,
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

/// `shine eval PROG.rise --def NAME ...`
pub fn eval(args: &EvalArgs) -> Result<(), CliError> {
    let source = SourceFile::read(&args.program)?;
    let checked = source.check()?;
    let mut types = Vec::new();
    let mut values = Vec::new();
    for path in &args.inputs {
        let array = npy::read(path)?;
        types.push(data_type_of(&array));
        let value = Value::from_flat(array.elem, &array.shape, array.data)
            .map_err(|e| format!("`{}`: {}", path.display(), e.message))?;
        values.push(value);
    }
    let instance =
        instantiate_def(&checked, &args.def, &types, &args.nats).map_err(|d| source.error(d))?;
    let function = interp::eval(&instance.expr).map_err(|e| source.error(e.into()))?;
    let result = if values.is_empty() {
        function
    } else {
        interp::apply(&function, values).map_err(|e| source.error(e.into()))?
    };
    let rise::Type::Data(result_type) = &instance.result else {
        return Err(format!(
            "the result of `{}` is a function (`{}`), which cannot be printed or saved; give all its inputs",
            args.def, instance.result
        )
        .into());
    };
    match &args.output {
        Some(path) => {
            let flat = result
                .to_flat(result_type)
                .map_err(|e| format!("cannot save the result: {}", e.message))?;
            npy::write(path, &flat)?;
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "wrote {} ({result_type})",
                path.display()
            );
        }
        None => emit(&result.to_string()),
    }
    Ok(())
}
