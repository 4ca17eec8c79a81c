//! `shine rewrite`: apply an ELEVATE strategy from a `.elv` file to a RISE
//! definition and print the rewritten program.

use crate::cli::{emit, CliError};
use clap::Args;
use shine::{RewriteOptions, SourceFile, StrategySource};
use std::path::PathBuf;

/// Arguments of `shine rewrite`.
#[derive(Args, Debug)]
pub struct RewriteArgs {
    /// The RISE program (.rise).
    pub program: PathBuf,
    /// The definition to rewrite.
    #[arg(long = "def", value_name = "NAME")]
    pub def: String,
    /// The strategy file (.elv); without it, --apply names a built-in schedule
    /// (`shine strategies`).
    #[arg(long = "strategy", value_name = "S.elv")]
    pub strategy: Option<PathBuf>,
    /// The strategy to apply: a definition of the file, or an expression over
    /// them (`"blocking ; lowerToC"`).
    #[arg(long = "apply", value_name = "SNAME")]
    pub apply: String,
    /// Print every rule application (rule, location, before, after) to stderr.
    #[arg(long)]
    pub trace: bool,
    /// Print the number of rewrite steps and the time taken to stderr.
    #[arg(long)]
    pub stats: bool,
    /// Print one JSON object on stdout: `program`, `steps`, `time_ms`, ...
    #[arg(long)]
    pub json: bool,
    /// Stop after this many strategy applications (a strategy that does not
    /// terminate is reported, not run forever).
    #[arg(long, value_name = "N", default_value_t = elevate::DEFAULT_BUDGET)]
    pub budget: u64,
}

/// `shine rewrite PROG.rise --def NAME --strategy S.elv --apply SNAME`
pub fn rewrite(args: &RewriteArgs) -> Result<(), CliError> {
    let program = SourceFile::read(&args.program)?;
    let source = match &args.strategy {
        Some(path) => StrategySource {
            file: SourceFile::read(path)?,
            apply: args.apply.clone(),
        },
        None => shine::schedules::strategy(&args.apply),
    };
    let options = RewriteOptions {
        budget: args.budget,
        trace: args.trace,
    };
    let (scheme, rewritten) = shine::rewrite(&program, &args.def, &source, &options)?;
    if args.trace {
        let mut out = String::new();
        for (i, step) in rewritten.trace.iter().enumerate() {
            let within = if step.within.is_empty() {
                String::new()
            } else {
                format!(" in {}", step.within.join(" > "))
            };
            out.push_str(&format!(
                "step {}: {} at {}{within}\n  before: {}\n  after:  {}\n",
                i + 1,
                step.rule,
                step.location,
                one_line(&step.before),
                one_line(&step.after)
            ));
        }
        eprint_text(&out);
    }
    let (steps, applications, time) = (rewritten.steps, rewritten.applications, rewritten.time);
    let program = format!(
        "def {} : {scheme} =\n  {}",
        args.def,
        rewritten.body.to_string().replace('\n', "\n  ")
    );
    let time_ms = time.as_secs_f64() * 1e3;
    if args.json {
        let json = serde_json::json!({
            "def": args.def,
            "strategy": args.apply,
            "program": program,
            "steps": steps,
            "applications": applications,
            "time_ms": time_ms,
            "trace_entries": rewritten.trace.len(),
        });
        emit(&json.to_string());
    } else {
        emit(&program);
    }
    if args.stats && !args.json {
        eprint_text(&format!(
            "{steps} rewrite steps ({applications} strategy applications) in {time_ms:.3} ms\n"
        ));
    }
    Ok(())
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn eprint_text(s: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(s.as_bytes());
}
