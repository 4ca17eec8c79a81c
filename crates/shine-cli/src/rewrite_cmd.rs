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
    /// them (`"blocking ; lowerToC"`). Optional with --select.
    #[arg(long = "apply", value_name = "SNAME")]
    pub apply: Option<String>,
    /// Instead of the rewritten program, print the sub-terms a location picks in it
    /// (`outermost(mapNest(2))`, `argument @ body`), each with its path: where
    /// `s @ LOC` would apply `s`.
    #[arg(long = "select", value_name = "LOC")]
    pub select: Option<String>,
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

/// `shine rewrite PROG.rise --def NAME [--strategy S.elv] --apply SNAME [--select LOC]`
pub fn rewrite(args: &RewriteArgs) -> Result<(), CliError> {
    let program = crate::cli::read_program(&args.program)?;
    let file = match &args.strategy {
        Some(path) => SourceFile::read(path)?,
        None => shine::schedules::file(),
    };
    let (apply, select) = match (&args.apply, &args.select) {
        (Some(apply), _) => (apply.clone(), args.select.as_deref()),
        (None, Some(location)) => ("id".to_string(), Some(location.as_str())),
        (None, None) => {
            return Err(CliError::from(
                "give --apply STRATEGY (what to apply), --select LOC (where a location acts), \
                 or both"
                    .to_string(),
            ))
        }
    };
    let source = StrategySource { file, apply };
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
    if let Some(location) = select {
        return print_selection(&source.file, location, &rewritten.body, args);
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
            "strategy": source.apply,
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

/// `--select LOC`: the sub-terms `LOC` picks in `term`, each with its path, or a line saying
/// it picks none.
fn print_selection(
    file: &SourceFile,
    location: &str,
    term: &rise::Expr,
    args: &RewriteArgs,
) -> Result<(), CliError> {
    let picked = shine::select::select(file, location, term, args.budget)?;
    if args.json {
        let list: Vec<serde_json::Value> = picked
            .iter()
            .map(|s| serde_json::json!({"path": s.path, "term": s.term.to_string()}))
            .collect();
        emit(&serde_json::json!({"def": args.def, "select": location, "picked": list}).to_string());
        return Ok(());
    }
    if picked.is_empty() {
        return Err(CliError::from(format!(
            "`{location}` picks no sub-term of `{}`: `s @ {location}` fails for every `s`",
            args.def
        )));
    }
    let count = picked.len();
    let mut out = vec![format!(
        "`{location}` picks {count} sub-term{} of `{}`:",
        if count == 1 { "" } else { "s" },
        args.def
    )];
    for (i, s) in picked.iter().enumerate() {
        out.push(format!("{}. at {}:", i + 1, s.path));
        out.push(format!("   {}", s.term.to_string().replace('\n', "\n   ")));
    }
    emit(&out.join("\n"));
    Ok(())
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn eprint_text(s: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(s.as_bytes());
}
