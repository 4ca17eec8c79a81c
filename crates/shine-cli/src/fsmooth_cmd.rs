//! `shine fsmooth ...`: F-smooth rewritten by ELEVATE (thesis §5.7) from the
//! command line.
//!
//! ```text
//! shine fsmooth simplify FILE.fsmooth [--strategy S | --strategy S.elv --apply NAME]
//!                        [--trace] [--stats] [--verify N] [--budget N]
//! shine fsmooth diff     FILE.fsmooth [--simplify[=S] | --simplify=S.elv --apply NAME] [...]
//! shine fsmooth grad     FILE.fsmooth --wrt X [--simplify[=S] | --simplify=S.elv --apply NAME] [...]
//! shine fsmooth eval     FILE.fsmooth [DATA.npy ...] [--seed N]
//! shine fsmooth rules
//! ```
//!
//! The output of `simplify` and `diff` is an F-smooth program (`input` lines,
//! then the body); the trace, the statistics and the verification summary are
//! printed before it as `//` comments, so the output reads back as a program.
//! A strategy is written in the `.elv` strategy language (the one of `shine
//! rewrite`, with the F-smooth registry [`fsmooth::library`]): inline, an
//! expression over the F-smooth rules, the named strategies (`simplify`,
//! `fig5_13`, `fusion`, ...), the traversals and the generic combinators
//! (`--strategy "normalize(buildGet <+ lenBuild <+ letPartialEval <+ letApp
//! <+ funToLet)"`); or as a file of definitions and what to apply, a
//! definition or an expression over them (`--strategy S.elv --apply NAME`,
//! as `shine rewrite` takes them). The default, `simplify`, is the
//! cost-guarded simplification of [`fsmooth::simplify_program`]: the result
//! never costs more than the input under the cost model ([`fsmooth::cost`]).
//!
//! `--verify N` takes at most [`MAX_TRIALS`] trials, and a check stops
//! starting new ones after [`fsmooth::verify::TIME_LIMIT`] (its summary says so).
//!
//! Programs may use the differentiation API (`deriv f x`, `grad f v`,
//! `jacob f v`); evaluation, differentiation and the default simplification
//! expand it by forward mode first ([`fsmooth::derivatives`]).

use clap::{Args, Subcommand};
use fsmooth::interp::Value;
use fsmooth::strategies::NAMED;
use fsmooth::verify::{
    check_derivative, check_equivalent, random_inputs, trial_shape, Checked, MAX_TRIALS,
};
use fsmooth::{
    check_program, diff_program, parse_program, rewrite_with, simplify_program, Diagnostic, Expr,
    Program, Span, Type,
};
use rise::interp::Scalar;
use shine::SourceFile;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The options of `diff` and `grad`: simplification and checks of the result.
#[derive(Args, Debug)]
pub struct DerivativeOptions {
    /// Simplify the result (`--simplify`, with the default `simplify`) or
    /// with a strategy (`--simplify=S`).
    #[arg(
        long,
        value_name = "S",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "simplify"
    )]
    simplify: Option<String>,
    #[command(flatten)]
    rewrite: RewriteOptions,
}

/// `--verify N`: a number of trials from 1 to [`MAX_TRIALS`].
fn trials(text: &str) -> Result<usize, String> {
    let n: u128 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of random trials"))?;
    if n == 0 {
        return Err("verifying on 0 random inputs checks nothing; ask for at least 1".into());
    }
    usize::try_from(n)
        .ok()
        .filter(|&n| n <= MAX_TRIALS)
        .ok_or_else(|| {
            format!(
                "at most {MAX_TRIALS} random trials (each one evaluates the program); \
                 {n} is too many"
            )
        })
}

/// The options of every rewriting subcommand.
#[derive(Args, Debug)]
pub struct RewriteOptions {
    /// Print every rule application (rule, location, before ~> after).
    #[arg(long)]
    trace: bool,
    /// Print the number of rule applications, ELEVATE steps and the time.
    #[arg(long)]
    stats: bool,
    /// Check the result on N random inputs (1 to 100,000): against the
    /// original (`simplify`) or against finite differences (`diff`, `grad`).
    /// No new trial starts after 60 s.
    #[arg(long, value_name = "N", value_parser = trials)]
    verify: Option<usize>,
    /// Stop after this many strategy applications (default: 50 million,
    /// more for large programs).
    #[arg(long, value_name = "N")]
    budget: Option<u64>,
    /// With a strategy file (`--strategy S.elv`, `--simplify=S.elv`): the
    /// strategy to apply, a definition of the file or an expression over them.
    #[arg(long = "apply", value_name = "NAME")]
    apply: Option<String>,
}

impl DerivativeOptions {
    /// Simplifies `p` if asked to, writing trace and statistics to `out`.
    fn simplified(&self, p: Program, out: &mut String) -> Result<Program, String> {
        let r = &self.rewrite;
        match Chosen::from_flags("--simplify", self.simplify.as_deref(), r.apply.as_deref())? {
            Some(s) => simplify(&p, &s, r.trace, r.stats, r.budget, out),
            None => Ok(p),
        }
    }
}

/// The strategy a command line asks for.
enum Chosen {
    /// `simplify`: the cost-guarded [`simplify_program`].
    Default,
    /// Any other strategy.
    Strategy(elevate::Strategy<Expr>),
}

impl Chosen {
    /// The strategy of `flag` (`--strategy`, `--simplify`) and `--apply`:
    /// without `--apply`, `given` is an inline expression; with it, `given`
    /// is a strategy file and `apply` a definition of it or an expression over
    /// them, as `shine rewrite --strategy S.elv --apply NAME` takes them.
    /// `None`: no strategy was asked for.
    fn from_flags(
        flag: &str,
        given: Option<&str>,
        apply: Option<&str>,
    ) -> Result<Option<Chosen>, String> {
        let Some(given) = given else {
            return match apply {
                Some(_) => Err(format!(
                    "error: `--apply NAME` applies a definition of a strategy file: give the file \
                     with `{flag}{}S.elv`",
                    if flag == "--simplify" { "=" } else { " " }
                )),
                None => Ok(None),
            };
        };
        let Some(apply) = apply else {
            if given.trim_end().ends_with(".elv") {
                return Err(format!(
                    "error: `{given}` is a strategy file: say which of its strategies to apply \
                     with `--apply NAME`"
                ));
            }
            if given.trim() == "simplify" {
                return Ok(Some(Chosen::Default));
            }
            let inline = SourceFile::new(flag, given);
            return fsmooth::library::parse_strategy(given)
                .map(|s| Some(Chosen::Strategy(s)))
                .map_err(|ds| inline.errors(ds).to_string());
        };
        let file = SourceFile::read(Path::new(given)).map_err(|e| e.to_string())?;
        let module =
            fsmooth::library::load(&file.text).map_err(|ds| file.errors(ds).to_string())?;
        // A definition may not take a builtin's name, so `simplify` is always the default.
        if apply.trim() == "simplify" {
            return Ok(Some(Chosen::Default));
        }
        let s = if module.definitions().any(|(n, _)| n == apply) {
            module
                .strategy(apply)
                .map_err(|d| file.error(d).to_string())?
        } else {
            let inline = SourceFile::new("<strategy>", apply);
            module
                .expression(apply)
                .map_err(|ds| inline.errors(ds).to_string())?
        };
        Ok(Some(Chosen::Strategy(s)))
    }
}

/// The summary's note on trials not run for lack of time.
fn stopped(c: &Checked, asked: usize) -> String {
    if c.timed_out {
        format!(
            "; stopped after {} s, {} of the {asked} trials asked run",
            fsmooth::verify::TIME_LIMIT.as_secs(),
            c.compared + c.skipped
        )
    } else {
        String::new()
    }
}

/// The `shine fsmooth` subcommands.
#[derive(Subcommand, Debug)]
pub enum FsmoothCommand {
    /// Simplify an F-smooth program with an ELEVATE strategy and print the result.
    Simplify {
        /// The F-smooth program (.fsmooth).
        file: PathBuf,
        /// The strategy: an expression over the F-smooth rules, the named
        /// strategies, the traversals (`shine fsmooth rules` lists them) and
        /// the combinators (default: `simplify`); or a strategy file (.elv),
        /// with `--apply NAME`.
        #[arg(long, value_name = "S")]
        strategy: Option<String>,
        #[command(flatten)]
        opts: RewriteOptions,
    },
    /// Differentiate an F-smooth program (forward mode, dual numbers as pairs)
    /// and print the derivative: its inputs pair values with tangents, its
    /// result pairs the value with the directional derivative.
    Diff {
        /// The F-smooth program (.fsmooth).
        file: PathBuf,
        #[command(flatten)]
        opts: DerivativeOptions,
    },
    /// The gradient of a program with a `Double` result with respect to one
    /// of its `Vector` inputs, as one program (forward mode, one directional
    /// derivative per component).
    Grad {
        /// The F-smooth program (.fsmooth).
        file: PathBuf,
        /// The `Vector` input to differentiate by.
        #[arg(long, value_name = "X")]
        wrt: String,
        #[command(flatten)]
        opts: DerivativeOptions,
    },
    /// Evaluate an F-smooth program on `.npy` inputs (one per `input`, in
    /// order) or, without them, on random inputs; print them and the result.
    Eval {
        /// The F-smooth program (.fsmooth).
        file: PathBuf,
        /// The inputs as `.npy` files, in the order of the `input` declarations.
        data: Vec<PathBuf>,
        /// The seed of the random inputs.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// List the F-smooth rewrite rules and named strategies.
    Rules,
}

/// Runs a `shine fsmooth` subcommand: the result goes to stdout; an error is
/// returned as a message ready to print (with source context where it has one).
///
/// The passes over terms are recursive, and programs may be as deep as the parser reads
/// ([`fsmooth::parser::MAX_DEPTH`]): the command runs with a deep stack (`deep`).
pub fn run(cmd: &FsmoothCommand) -> Result<(), String> {
    deep::run(|| run_here(cmd))
}

fn run_here(cmd: &FsmoothCommand) -> Result<(), String> {
    let text = match cmd {
        FsmoothCommand::Simplify {
            file,
            strategy,
            opts,
        } => {
            let (_, p) = load(file)?;
            let chosen =
                Chosen::from_flags("--strategy", strategy.as_deref(), opts.apply.as_deref())?
                    .unwrap_or(Chosen::Default);
            let mut out = String::new();
            let s = simplify(&p, &chosen, opts.trace, opts.stats, opts.budget, &mut out)?;
            if let Some(n) = opts.verify {
                let c = check_equivalent(&p, &s, n, 0, Some(1e-9))
                    .map_err(|e| format!("error: verification failed: {e}"))?;
                let _ = writeln!(
                    out,
                    "// verified: equal results on {} random inputs ({} where the original fails skipped){}",
                    c.compared, c.skipped, stopped(&c, n)
                );
            }
            let _ = write!(out, "{s}");
            out
        }
        FsmoothCommand::Diff { file, opts } => {
            let (src, p) = load(file)?;
            let d = diff_program(&p).map_err(|e| render(&src, file, &e))?;
            let mut out = String::new();
            let d = opts.simplified(d, &mut out)?;
            if let Some(n) = opts.rewrite.verify {
                let c = check_derivative(&p, &d, n, 0, 1e-5)
                    .map_err(|e| format!("error: verification failed: {e}"))?;
                let _ = writeln!(
                    out,
                    "// verified: value and tangent match finite differences on {} random inputs ({} skipped){}",
                    c.compared, c.skipped, stopped(&c, n)
                );
            }
            let _ = write!(out, "{d}");
            out
        }
        FsmoothCommand::Grad { file, wrt, opts } => {
            let (src, p) = load(file)?;
            let g = fsmooth::gradient_program(&p, wrt).map_err(|e| render(&src, file, &e))?;
            let mut out = String::new();
            let g = opts.simplified(g, &mut out)?;
            if let Some(n) = opts.rewrite.verify {
                let c = fsmooth::verify::check_gradient(&p, &g, wrt, n, 0, 1e-5)
                    .map_err(|e| format!("error: verification failed: {e}"))?;
                let _ = writeln!(
                    out,
                    "// verified: every component matches finite differences on {} random inputs ({} skipped){}",
                    c.compared, c.skipped, stopped(&c, n)
                );
            }
            let _ = write!(out, "{g}");
            out
        }
        FsmoothCommand::Eval { file, data, seed } => {
            let (_, p) = load(file)?;
            eval(&p, data, *seed)?
        }
        FsmoothCommand::Rules => rules(),
    };
    emit(&text)
}

/// Reads, parses and type-checks a program.
fn load(file: &Path) -> Result<(String, Program), String> {
    let src = shine::limits::read_source(file).map_err(|e| e.to_string())?;
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

/// Rewrites `p` with the strategy (the default `simplify` is the
/// cost-guarded [`simplify_program`]), writing the trace and statistics (as
/// comments) to `out`. A failing strategy's message carries the rule
/// applications before the failure when a trace was asked for.
fn simplify(
    p: &Program,
    strategy: &Chosen,
    trace: bool,
    stats: bool,
    budget: Option<u64>,
    out: &mut String,
) -> Result<Program, String> {
    let budget = budget.unwrap_or_else(|| fsmooth::default_budget(p));
    let start = Instant::now();
    let (done, name) = if let Chosen::Strategy(s) = strategy {
        let r = rewrite_with(p, s, trace, budget).map_err(|f| failed(&f, trace))?;
        (r, s.to_string())
    } else {
        let s = simplify_program(p, trace, budget).map_err(|f| failed(&f, trace))?;
        let note = match (&s.before, &s.after) {
            (Some(b), Some(a)) => format!("cost {b} -> {a}"),
            _ => "the cost cannot be measured (function inputs, or evaluation fails)".to_string(),
        };
        let _ = writeln!(
            out,
            "// simplify: the result of `{}` kept; {note}",
            s.strategy
        );
        (s.rewritten, "simplify".to_string())
    };
    let time = start.elapsed();
    let entries = done.trace.clone().unwrap_or_default();
    if trace {
        let _ = writeln!(out, "// trace of {name}:");
        write_trace(out, &entries);
        let left = done
            .rule_applications()
            .saturating_sub(entries.len() as u64);
        if left > 0 {
            let _ = writeln!(out, "// ... and {left} more rule applications (not kept)");
        }
    }
    if stats {
        let _ = writeln!(
            out,
            "// {} rule applications, {} ELEVATE steps, {:.3} ms",
            done.rule_applications(),
            done.steps,
            time.as_secs_f64() * 1e3
        );
    }
    // A rewrite never changes the type; check it anyway (a failed check is a
    // bug in a rule, reported rather than printed as a wrong program).
    let after = done.program;
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

fn write_trace(out: &mut String, entries: &[elevate::TraceEntry]) {
    for (k, t) in entries.iter().enumerate() {
        let _ = writeln!(out, "// {:3}. {} at {}", k + 1, t.rule, t.location);
        let _ = writeln!(out, "//        {}", t.before);
        let _ = writeln!(out, "//     ~> {}", t.after);
    }
}

/// The error of a failed rewrite, with the rule applications before it.
fn failed(f: &fsmooth::RewriteFailure, trace: bool) -> String {
    let mut out = format!("error: {}", f.message);
    if trace {
        let _ = writeln!(
            out,
            "\n// trace up to the failure ({} rule applications):",
            f.trace.len()
        );
        write_trace(&mut out, &f.trace);
    } else {
        out.push_str("\n(run with `--trace` to see the rule applications before it)");
    }
    out.trim_end().to_string()
}

fn eval(p: &Program, data: &[PathBuf], seed: u64) -> Result<String, String> {
    let inputs = if data.is_empty() {
        let mut rng = fsmooth::random::Rng::new(seed);
        let shape = trial_shape(1, &mut rng);
        random_inputs(p, &mut rng, &shape)
            .ok_or("error: cannot make random values for function-typed inputs")?
    } else {
        read_inputs(p, data)?
    };
    let mut out = String::new();
    for (i, v) in p.inputs.iter().zip(&inputs) {
        let _ = writeln!(out, "// {} = {v}", i.name);
    }
    let v = fsmooth::interp::eval_program(p, &inputs)
        .map_err(|e| format!("error: evaluation failed: {e}"))?;
    let _ = write!(out, "{v}");
    Ok(out)
}

/// The program's inputs read from `.npy` files, one per input, in order.
fn read_inputs(p: &Program, data: &[PathBuf]) -> Result<Vec<Value>, String> {
    if data.len() != p.inputs.len() {
        return Err(format!(
            "error: the program has {} inputs ({}), {} data files given",
            p.inputs.len(),
            p.inputs
                .iter()
                .map(|i| i.name.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            data.len()
        ));
    }
    p.inputs
        .iter()
        .zip(data)
        .map(|(i, path)| {
            let a = shine::npy::read(path)?;
            let ty = &i.ty;
            let wanted = dims(ty);
            if a.shape.len() != wanted && !matches!(ty, Type::Pair(..) | Type::Fun(..)) {
                return Err(format!(
                    "error: `{}` for input `{}`: the array has {} dimensions, the type `{ty}` needs {wanted}",
                    path.display(),
                    i.name,
                    a.shape.len()
                ));
            }
            value_of(ty, &a.shape, &a.data)
                .map_err(|e| format!("error: `{}` for input `{}`: {e}", path.display(), i.name))
        })
        .collect()
}

/// An F-smooth value of type `ty` from row-major `.npy` data of the given shape.
fn value_of(ty: &Type, shape: &[usize], data: &[Scalar]) -> Result<Value, String> {
    match (ty, shape) {
        (Type::Array(elem), [n, rest @ ..]) => {
            let step: usize = rest.iter().product();
            let items = (0..*n)
                .map(|k| value_of(elem, rest, &data[k * step..(k + 1) * step]))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Value::Array(items.into()))
        }
        (Type::Double | Type::Index | Type::Bool, []) => {
            let x = *data.first().ok_or("no element")?;
            match ty {
                Type::Double => Ok(Value::Double(x.as_f64())),
                Type::Index => x
                    .as_i128()
                    .and_then(|v| i64::try_from(v).ok())
                    .map(Value::Index)
                    .ok_or_else(|| format!("an `Index` needs an integer, not `{x}`")),
                _ => match x {
                    Scalar::Bool(b) => Ok(Value::Bool(b)),
                    _ => Err(format!("a `Bool` needs a boolean, not `{x}`")),
                },
            }
        }
        (Type::Pair(..) | Type::Fun(..), _) => Err(format!(
            "a value of type `{ty}` cannot come from an `.npy` file (arrays of numbers)"
        )),
        _ => Err(format!("the array does not have the shape of a `{ty}`")),
    }
}

fn dims(ty: &Type) -> usize {
    match ty {
        Type::Array(t) => 1 + dims(t),
        _ => 0,
    }
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
    // The registry's other entries: the generic combinators (listed on one
    // line) and the F-smooth traversals and locations.
    let generic: Vec<String> = elv::Registry::<Expr>::new()
        .names()
        .map(|(n, _, _)| n.to_string())
        .collect();
    out.push_str("Traversals and locations:\n");
    let registry = fsmooth::library::registry();
    for (name, _, doc) in registry.names() {
        let listed = fsmooth::rules::RULES.iter().any(|r| r.name == name)
            || NAMED.iter().any(|n| n.name == name)
            || generic.iter().any(|g| g == name);
        if !listed {
            let _ = writeln!(out, "    {name:<16} {doc}");
        }
    }
    let _ = write!(
        out,
        "Combinators: s ; t, s <+ t, s @ t, {}\n\
         Strategies are written in the .elv language: inline (--strategy S, --simplify=S) or in a\n\
         file of definitions (--strategy S.elv --apply NAME, --simplify=S.elv --apply NAME).",
        generic.join(", ")
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
