//! `shine fsmooth ...`: F-smooth rewritten by ELEVATE (thesis §5.7) from the
//! command line.
//!
//! ```text
//! shine fsmooth simplify FILE.fsmooth [--strategy S] [--trace] [--stats] [--verify N] [--budget N]
//! shine fsmooth diff     FILE.fsmooth [--simplify [S]] [--trace] [--stats] [--verify N] [--budget N]
//! shine fsmooth eval     FILE.fsmooth [--seed N]
//! shine fsmooth rules
//! ```
//!
//! The output of `simplify` and `diff` is an F-smooth program (`input` lines,
//! then the body); the trace, the statistics and the verification summary are
//! printed before it as `//` comments, so the output reads back as a program.
//! A strategy `S` is an expression over the F-smooth rules, the named
//! strategies (`simplify`, `fig5_13`, `fusion`, ...) and the generic
//! combinators: `--strategy "normalize(buildGet <+ lenBuild <+ letPartialEval
//! <+ letApp <+ funToLet)"`.

use clap::Subcommand;
use elevate::Ctx;
use fsmooth::strategies::{parse_strategy, NAMED};
use fsmooth::verify::{check_derivative, check_equivalent, random_inputs, trial_shape};
use fsmooth::{check_program, diff_program, parse_program, Diagnostic, Expr, Program, Span};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The `shine fsmooth` subcommands.
#[derive(Subcommand, Debug)]
pub enum FsmoothCommand {
    /// Simplify an F-smooth program with an ELEVATE strategy and print the result.
    Simplify {
        /// The F-smooth program (.fsmooth).
        file: PathBuf,
        /// The strategy: an expression over the F-smooth rules, the named
        /// strategies (`shine fsmooth rules` lists them) and the combinators.
        #[arg(long, value_name = "S", default_value = "simplify")]
        strategy: String,
        /// Print every rule application (rule, location, before ~> after).
        #[arg(long)]
        trace: bool,
        /// Print the number of rule applications, ELEVATE steps and the time.
        #[arg(long)]
        stats: bool,
        /// Check the result against the original on N random inputs.
        #[arg(long, value_name = "N")]
        verify: Option<usize>,
        /// Stop after this many strategy applications.
        #[arg(long, value_name = "N", default_value_t = elevate::DEFAULT_BUDGET)]
        budget: u64,
    },
    /// Differentiate an F-smooth program (forward mode, dual numbers as pairs)
    /// and print the derivative: its inputs pair values with tangents, its
    /// result pairs the value with the directional derivative.
    Diff {
        /// The F-smooth program (.fsmooth).
        file: PathBuf,
        /// Simplify the derivative with a strategy (`simplify` if none is given).
        #[arg(long, value_name = "S", num_args = 0..=1, default_missing_value = "simplify")]
        simplify: Option<String>,
        /// Print every rule application of the simplification.
        #[arg(long)]
        trace: bool,
        /// Print the number of rule applications, ELEVATE steps and the time.
        #[arg(long)]
        stats: bool,
        /// Check the derivative against finite differences on N random inputs.
        #[arg(long, value_name = "N")]
        verify: Option<usize>,
        /// Stop after this many strategy applications.
        #[arg(long, value_name = "N", default_value_t = elevate::DEFAULT_BUDGET)]
        budget: u64,
    },
    /// Evaluate an F-smooth program on random inputs; print them and the result.
    Eval {
        /// The F-smooth program (.fsmooth).
        file: PathBuf,
        /// The seed of the random inputs.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// List the F-smooth rewrite rules and named strategies.
    Rules,
}

/// Runs a `shine fsmooth` subcommand: the result goes to stdout; an error is
/// returned as a message ready to print (with source context where it has one).
pub fn run(cmd: &FsmoothCommand) -> Result<(), String> {
    let text = match cmd {
        FsmoothCommand::Simplify {
            file,
            strategy,
            trace,
            stats,
            verify,
            budget,
        } => {
            let (_, p) = load(file)?;
            let mut out = String::new();
            let s = simplify(&p, strategy, *trace, *stats, *budget, &mut out)?;
            if let Some(n) = verify {
                let c = check_equivalent(&p, &s, *n, 0, Some(1e-9))
                    .map_err(|e| format!("error: verification failed: {e}"))?;
                let _ = writeln!(
                    out,
                    "// verified: equal results on {} random inputs ({} where the original fails skipped)",
                    c.compared, c.skipped
                );
            }
            let _ = write!(out, "{s}");
            out
        }
        FsmoothCommand::Diff {
            file,
            simplify: strategy,
            trace,
            stats,
            verify,
            budget,
        } => {
            let (src, p) = load(file)?;
            let d = diff_program(&p).map_err(|e| render(&src, file, &e))?;
            let mut out = String::new();
            let d = match strategy {
                Some(s) => simplify(&d, s, *trace, *stats, *budget, &mut out)?,
                None => d,
            };
            if let Some(n) = verify {
                let c = check_derivative(&p, &d, *n, 0, 1e-5)
                    .map_err(|e| format!("error: verification failed: {e}"))?;
                let _ = writeln!(
                    out,
                    "// verified: value and tangent match finite differences on {} random inputs ({} skipped)",
                    c.compared, c.skipped
                );
            }
            let _ = write!(out, "{d}");
            out
        }
        FsmoothCommand::Eval { file, seed } => {
            let (_, p) = load(file)?;
            eval(&p, *seed)?
        }
        FsmoothCommand::Rules => rules(),
    };
    emit(&text)
}

/// Reads, parses and type-checks a program.
fn load(file: &Path) -> Result<(String, Program), String> {
    let src = std::fs::read_to_string(file)
        .map_err(|e| format!("error: cannot read `{}`: {e}", file.display()))?;
    let p = parse_program(&src).map_err(|d| render(&src, file, &d))?;
    check_program(&p).map_err(|d| render(&src, file, &d))?;
    Ok((src, p))
}

fn render(src: &str, file: &Path, d: &Diagnostic) -> String {
    if d.span == Span::default() {
        format!("error: {d}")
    } else {
        d.render(&file.display().to_string(), src)
    }
}

/// Rewrites `p` with the strategy written `strategy`, writing the trace and
/// statistics (as comments) to `out`.
fn simplify(
    p: &Program,
    strategy: &str,
    trace: bool,
    stats: bool,
    budget: u64,
    out: &mut String,
) -> Result<Program, String> {
    let s = parse_strategy(strategy).map_err(|d| d.render("--strategy", strategy))?;
    let mut ctx: Ctx<Expr> = Ctx::default().with_budget(budget);
    if trace || stats {
        ctx = ctx.with_trace();
    }
    let start = Instant::now();
    let body = ctx
        .run(&s, &p.body)
        .map_err(|f| format!("error: the strategy `{}` failed: {f}", s.short()))?;
    let time = start.elapsed();
    if trace {
        let _ = writeln!(out, "// trace of {s}:");
        for (k, t) in ctx.trace().unwrap_or_default().iter().enumerate() {
            let _ = writeln!(out, "// {:3}. {} at {}", k + 1, t.rule, t.location);
            let _ = writeln!(out, "//        {}", t.before);
            let _ = writeln!(out, "//     ~> {}", t.after);
        }
    }
    if stats {
        let _ = writeln!(
            out,
            "// {} rule applications, {} ELEVATE steps, {:.3} ms",
            ctx.trace().map_or(0, <[_]>::len),
            ctx.steps(),
            time.as_secs_f64() * 1e3
        );
    }
    // A rewrite never changes the type; check it anyway (a failed check is a
    // bug in a rule, reported rather than printed as a wrong program).
    let after = p.with_body(body);
    match (check_program(p), check_program(&after)) {
        (Ok(a), Ok(b)) if a == b => Ok(after),
        (_, Err(d)) => Err(format!(
            "error: internal error: the rewritten program does not type-check: {d}"
        )),
        (Ok(a), Ok(b)) => Err(format!(
            "error: internal error: the rewrite changed the type from `{a}` to `{b}`"
        )),
        (Err(d), _) => Err(format!("error: {d}")),
    }
}

fn eval(p: &Program, seed: u64) -> Result<String, String> {
    let mut rng = fsmooth::random::Rng::new(seed);
    let shape = trial_shape(1, &mut rng);
    let inputs = random_inputs(p, &mut rng, &shape)
        .ok_or("error: cannot make random values for function-typed inputs")?;
    let mut out = String::new();
    for (i, v) in p.inputs.iter().zip(&inputs) {
        let _ = writeln!(out, "// {} = {v}", i.name);
    }
    let v = fsmooth::interp::eval_program(p, &inputs)
        .map_err(|e| format!("error: evaluation failed: {e}"))?;
    let _ = write!(out, "{v}");
    Ok(out)
}

fn rules() -> String {
    let mut out = String::from("Rules:\n");
    let mut group = "";
    for r in fsmooth::rules::RULES {
        if r.group != group {
            group = r.group;
            let _ = writeln!(out, "  {group}:");
        }
        let _ = writeln!(out, "    {:<16} {}", r.name, r.equation);
    }
    out.push_str("Named strategies:\n");
    for n in NAMED {
        let _ = writeln!(out, "    {:<16} {}", n.name, n.description);
    }
    out.push_str(
        "Combinators: id, fail, s ; t, s <+ t, try, repeat, repeatN(n, s), not, all, one, some,\n  \
         topDown, bottomUp, allTopDown, allBottomUp, tryAll, normalize",
    );
    out
}

/// Writes the result to stdout; a closed pipe (`| head`) is not an error.
fn emit(text: &str) -> Result<(), String> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
    Ok(())
}
