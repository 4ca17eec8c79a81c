//! `shine explore`: automatic parallel mapping and tuning (CC'22; the `explore` crate).
//!
//! Every candidate the search proposes is an ELEVATE strategy; it is written to a
//! strategy file, compiled and run like `shine run --strategy F --apply candidate`:
//! first verified against the interpreter at the `--nat` sizes, then timed at every
//! `--time-nat` size set (the layers of a network, say; the time of a candidate is
//! the sum of their medians). Failures are counted by cause. Several methods
//! (`--search solver --search random --search evolutionary`) run one after the
//! other in the same call, each with the same budget, and are compared at the end.

use crate::cli::{emit, parse_nat_binding, CliError};
use clap::{Args, ValueEnum};
use explore::constraints::{count_by_family, Options};
use explore::search::{Method, Searcher};
use explore::strategy::{Flavor, StrategyFile};
use explore::tuning::Bindings;
use explore::{Candidate, Problem};
use rise::infer::prepare_def;
use serde_json::json;
use shine::{Artifact, Executable, Inputs, RunOptions, SourceFile, Stage, StrategySource, Target};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// A search method on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SearchArg {
    /// Constraint solver, randomized enumeration (the paper's).
    Solver,
    /// Random assignments filtered by the constraints (the paper's baseline).
    Random,
    /// Evolutionary search over solver solutions (guided).
    Evolutionary,
}

impl SearchArg {
    pub(crate) fn method(self) -> Method {
        match self {
            SearchArg::Solver => Method::Solver,
            SearchArg::Random => Method::Random,
            SearchArg::Evolutionary => Method::Evolutionary,
        }
    }
}

/// Arguments of `shine explore`.
#[derive(Args, Debug)]
pub struct ExploreArgs {
    /// The RISE program (.rise).
    pub program: PathBuf,
    /// The definition to map.
    #[arg(long = "def", value_name = "NAME")]
    pub def: String,
    /// A strategy file whose definitions `--apply` may use.
    #[arg(long = "strategy", value_name = "S.elv", requires = "apply")]
    pub strategy: Option<PathBuf>,
    /// The middle strategy applied before mapping (default `DFNF`).
    #[arg(long = "apply", value_name = "MID")]
    pub apply: Option<String>,
    /// The target: opencl, cuda or openmp.
    #[arg(long = "target", value_parser = crate::cli::target_parser())]
    pub target: Target,
    /// Sizes for verification against the interpreter, e.g. `--nat n=64` (repeatable).
    #[arg(long = "nat", value_name = "NAME=VALUE", value_parser = parse_nat_binding)]
    pub nats: Vec<(String, i64)>,
    /// A size set to time, `h=226,w=226,c=3,o=64` (repeatable; default: the `--nat` sizes).
    #[arg(long = "time-nat", value_name = "N=V,...")]
    pub time_nats: Vec<String>,
    /// Candidates per search method (with --check-constraints: raw assignments checked).
    #[arg(long, value_name = "N", conflicts_with = "time", value_parser = parse_count)]
    pub budget: Option<usize>,
    /// Seconds per search method (with --param, the enumeration of the space too).
    #[arg(long, value_name = "SECONDS", value_parser = parse_positive)]
    pub time: Option<f64>,
    /// The search methods, run one after the other (repeatable; default solver).
    #[arg(long = "search", value_enum)]
    pub search: Vec<SearchArg>,
    /// The seed of the searches.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Timed runs per size set.
    #[arg(long, default_value_t = 5, value_parser = parse_count)]
    pub runs: usize,
    /// Parallel dimensions offered (1 to 3).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(i32).range(1..=3))]
    pub dims: i32,
    /// Generate the paper's families 1-7 only (not shine's own 9 and without dropping 4 and 5).
    #[arg(long)]
    pub paper_constraints: bool,
    /// Add the sequential-fusion heuristic (rule 8).
    #[arg(long)]
    pub fusion_heuristic: bool,
    /// Write every candidate as a JSON line here.
    #[arg(long, value_name = "run.jsonl")]
    pub log: Option<PathBuf>,
    /// Continue from a log of the same run (program, definition, target, strategy and
    /// space): its candidates count towards the budget, are not re-run, and are ranked.
    #[arg(long, value_name = "run.jsonl")]
    pub resume: Option<PathBuf>,
    /// Write the best candidate as a strategy file defining `best`.
    #[arg(short = 'o', long = "output", value_name = "best.elv")]
    pub output: Option<PathBuf>,
    /// Write an SVG plot of the best time found against the search time.
    #[arg(long, value_name = "plot.svg")]
    pub plot: Option<PathBuf>,
    /// Stop timing a candidate once its time so far exceeds this (ms): a failure
    /// "too slow", so that a bad mapping of a large program costs little.
    #[arg(long, value_name = "MS", value_parser = parse_positive)]
    pub cutoff: Option<f64>,
    /// Floating-point operations of all timed size sets together (for GFLOP/s).
    #[arg(long, value_name = "FLOPS", value_parser = parse_positive)]
    pub flops: Option<f64>,
    /// Check the constraints instead of searching: compile and verify every raw
    /// assignment of the unsplit program and compare with the solver's set (JSON; at most
    /// 4096 raw assignments; --budget or --time stop it early, `complete` says so).
    #[arg(long)]
    pub check_constraints: bool,
    /// Rewriting budget of one strategy application.
    #[arg(long = "rewrite-budget", value_name = "N", default_value_t = elevate::DEFAULT_BUDGET)]
    pub rewrite_budget: u64,
    /// Tune the parameters of the `--apply` strategy instead of searching mappings:
    /// `NAME=V1,V2,...` (the values it takes) or `NAME=EXPR` (derived from those
    /// before it, `wm=tm/rm`; a division must be exact). A parameter the `--apply`
    /// expression does not name is a size of the program (`--nat`) (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUES|EXPR")]
    pub params: Vec<String>,
    /// A requirement on the parameters, `wm*wn<=1024` or `(tm*kb)%(wm*wn)==0`
    /// (repeatable; with --param).
    #[arg(long = "require", value_name = "COND", requires = "params")]
    pub requires: Vec<String>,
    /// A further size set to verify at, `h=16,w=28,c=16,o=128` (repeatable; with
    /// --param): a candidate is verified at the first of the `--nat` set and these
    /// whose size constraints it satisfies (give the cheapest first); none: a failure.
    #[arg(long = "verify-nat", value_name = "N=V,...", requires = "params")]
    pub verify_nats: Vec<String>,
}

/// A positive, finite number (`--time`, `--cutoff`, `--flops`).
fn parse_positive(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        Ok(_) => Err(format!("`{s}` is not a positive, finite number")),
        Err(e) => Err(format!("`{s}`: {e}")),
    }
}

/// A count of 1 or more (`--budget`, `--runs`).
fn parse_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("give 1 or more".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("`{s}`: {e}")),
    }
}

/// What happened to one candidate.
#[derive(Clone, Debug)]
struct Outcome {
    ms: Option<f64>,
    cause: Option<String>,
}

/// The cause of a failed candidate (the paper's §5.3 breakdown): the pipeline stage that
/// failed, refined by what the message says where a stage has several causes.
pub(crate) fn cause_of(error: &shine::Error) -> &'static str {
    let m = error.to_string().to_lowercase();
    let refined = || {
        if m.contains("while launching") {
            Some("launch configuration")
        } else if m.contains("barrier") {
            Some("synchronizability")
        } else if m.contains("threads") && m.contains("work-group") {
            Some("work-group size")
        } else if m.contains("memory") {
            Some("memory")
        } else {
            None
        }
    };
    match error.stage() {
        Stage::Verify => "wrong result",
        Stage::Internal => "internal error",
        Stage::Check | Stage::Rewrite => "rewrite",
        Stage::Codegen => refined().unwrap_or("code generation"),
        Stage::Build => refined().unwrap_or("compile error"),
        Stage::Input | Stage::Run | Stage::Output | Stage::Other => {
            refined().unwrap_or("run error")
        }
        _ => "run error",
    }
}

pub(crate) fn parse_set(s: &str) -> Result<Bindings, CliError> {
    s.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| parse_nat_binding(p).map_err(CliError::from))
        .collect()
}

/// The program, its strategy file and the evaluation settings.
struct Session<'a> {
    args: &'a ExploreArgs,
    program: SourceFile,
    problem: Problem,
    verify_set: Bindings,
    time_sets: Vec<Bindings>,
    counter: usize,
}

/// A candidate compiled: `candidate` of the strategy file, applied to the definition.
pub(crate) fn compile_candidate(
    args: &ExploreArgs,
    program: &SourceFile,
    strategy: SourceFile,
) -> Result<Artifact, shine::Error> {
    let strategy = StrategySource {
        file: strategy,
        apply: "candidate".into(),
    };
    let options = shine::Options {
        budget: args.rewrite_budget,
        ..shine::Options::default()
    };
    shine::compile(program, &args.def, Some(&strategy), args.target, &options)
}

/// The median time of the artifact on random inputs of the sizes `nats`.
pub(crate) fn time_candidate(
    args: &ExploreArgs,
    artifact: &Artifact,
    nats: &Bindings,
) -> Result<f64, shine::Error> {
    let inputs = Inputs::Random { seed: args.seed };
    let mut exe = Executable::new(artifact, inputs, nats, &RunOptions::default())?;
    exe.run()?;
    Ok(exe.bench(args.runs, 1)?.code.median_ms)
}

/// Whether a method has used its budget (`--budget` candidates or `--time` seconds).
pub(crate) fn out_of_budget(args: &ExploreArgs, done: usize, start: Instant) -> bool {
    args.budget.is_some_and(|b| done >= b)
        || args
            .time
            .is_some_and(|t| start.elapsed().as_secs_f64() >= t)
}

/// The progress bar of one search method.
pub(crate) fn progress_bar(args: &ExploreArgs, method: Method) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(args.budget.unwrap_or(0) as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_prefix(method.name());
    bar
}

impl Session<'_> {
    /// The candidate's strategy file and the definitions it adds to the user's.
    fn strategy_file(&mut self, c: &Candidate) -> Result<(SourceFile, String), String> {
        let space = self.problem.space(&c.splits)?;
        let defs = self.problem.strategy(&space, &c.mapping, "candidate")?;
        let text = self.problem.file.with(&defs);
        self.counter += 1;
        Ok((
            SourceFile::new(format!("c{}.elv", self.counter), text),
            defs,
        ))
    }

    /// Verifies (and unless `verify_only`, times) a candidate.
    fn evaluate(&mut self, c: &Candidate, verify_only: bool) -> (Outcome, String) {
        let (strategy, defs) = match self.strategy_file(c) {
            Ok(x) => x,
            Err(e) => {
                return (
                    Outcome {
                        ms: None,
                        cause: Some(format!("rewrite: {e}")),
                    },
                    String::new(),
                )
            }
        };
        let fail = |e: shine::Error| Outcome {
            ms: None,
            cause: Some(format!("{}: {}", cause_of(&e), first_line(&e.to_string()))),
        };
        let verify_inputs = Inputs::Random {
            seed: self.args.seed,
        };
        let verified = compile_candidate(self.args, &self.program, strategy).and_then(|artifact| {
            let options = RunOptions::default();
            shine::verify(&artifact, verify_inputs, &self.verify_set, &options)?;
            Ok(artifact)
        });
        let artifact = match verified {
            Ok(artifact) => artifact,
            Err(e) => return (fail(e), defs),
        };
        if verify_only {
            return (
                Outcome {
                    ms: None,
                    cause: None,
                },
                defs,
            );
        }
        let mut total = 0.0;
        for set in &self.time_sets {
            match time_candidate(self.args, &artifact, set) {
                Ok(ms) => total += ms,
                Err(e) => return (fail(e), defs),
            }
            if self.args.cutoff.is_some_and(|c| total > c) {
                return (
                    Outcome {
                        ms: None,
                        cause: Some(format!("too slow: over {total:.3} ms after some size sets")),
                    },
                    defs,
                );
            }
        }
        (
            Outcome {
                ms: Some(total),
                cause: None,
            },
            defs,
        )
    }
}

pub(crate) fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| l.contains("error"))
        .or_else(|| s.lines().next())
        .unwrap_or("")
        .trim()
        .to_string()
}

/// One evaluated candidate of a method.
#[derive(Clone, Debug)]
struct Row {
    method: &'static str,
    candidate: Candidate,
    ms: Option<f64>,
    failure: Option<String>,
    elapsed: f64,
    strategy: String,
}

fn options_for(args: &ExploreArgs) -> (Options, Flavor) {
    let (target, fusion) = (args.target, args.fusion_heuristic);
    let mut o = if args.paper_constraints {
        Options::paper()
    } else {
        Options::shine()
    };
    o.dims = args.dims.clamp(1, 3);
    if fusion {
        o.families
            .push(explore::constraints::Family::SequentialFusion);
    }
    match target {
        Target::OpenMp | Target::C => {
            o.work_groups = false;
            o.dims = 1;
            (o, Flavor::OpenMp)
        }
        Target::Cuda => (o, Flavor::Cuda),
        Target::OpenCl => (o, Flavor::OpenCl),
    }
}

/// `shine explore PROG.rise --def D ...`
pub fn explore(args: &ExploreArgs) -> Result<(), CliError> {
    let source = SourceFile::read(&args.program)?;
    let checked = source.check()?;
    let prepared = prepare_def(&checked, &args.def).map_err(|d| source.error(d))?;
    let user = match &args.strategy {
        Some(p) => SourceFile::read(p)?.text,
        None => String::new(),
    };
    let sizes: Vec<String> = rise::infer::size_params(&prepared.scheme)
        .iter()
        .map(|n| n.to_string())
        .collect();
    let verify_set: Bindings = args.nats.clone();
    check_set_names(args, "--nat", &verify_set, &sizes)?;
    let time_sets: Vec<Bindings> = if args.time_nats.is_empty() {
        vec![verify_set.clone()]
    } else {
        let sets: Vec<Bindings> = args
            .time_nats
            .iter()
            .map(|s| parse_set(s))
            .collect::<Result<_, _>>()?;
        for set in &sets {
            check_set_names(args, "--time-nat", set, &sizes)?;
        }
        sets
    };
    for path in args.output.iter().chain(&args.plot) {
        shine::files::check_writable(path)?;
    }
    if !args.params.is_empty() {
        return crate::explore_tune::tune(args, source, user, &sizes, verify_set, time_sets);
    }
    if args.budget.is_none() && args.time.is_none() && !args.check_constraints {
        return Err(
            "give a budget (--budget N candidates) or a time (--time SECONDS)"
                .to_string()
                .into(),
        );
    }
    let mut all_sets = time_sets.clone();
    all_sets.push(verify_set.clone());
    let (options, flavor) = options_for(args);
    let space = json!({
        "search": "mappings",
        "nats": verify_set,
        "time_nats": time_sets,
        "dims": args.dims,
        "paper_constraints": args.paper_constraints,
        "fusion_heuristic": args.fusion_heuristic,
    });
    let header = crate::explore_log::header(args, &source.text, &user, space);
    let problem = Problem::new(
        StrategyFile { user },
        args.apply.as_deref().unwrap_or("DFNF"),
        prepared.body.clone(),
        flavor,
        options,
        all_sets,
        dpia::gpu::MAX_WORK_GROUP_SIZE,
        args.rewrite_budget,
    )
    .map_err(|e| CliError::from(format!("cannot prepare the search: {e}")))?;
    let mut session = Session {
        args,
        program: source,
        problem,
        verify_set,
        time_sets,
        counter: 0,
    };
    if args.check_constraints {
        return check_constraints(&mut session);
    }
    search(&mut session, &header)
}

/// Checks that every size a set names (`--nat`, `--time-nat`, `--verify-nat`) is a size
/// of the definition, before anything is compiled.
pub(crate) fn check_set_names(
    args: &ExploreArgs,
    option: &str,
    set: &Bindings,
    sizes: &[String],
) -> Result<(), CliError> {
    match set.iter().find(|(k, _)| !sizes.contains(k)) {
        None => Ok(()),
        Some((k, _)) => Err(format!(
            "{option} names `{k}`, which is no size of `{}` (its sizes: {})",
            args.def,
            if sizes.is_empty() {
                "none".to_string()
            } else {
                sizes.join(", ")
            }
        )
        .into()),
    }
}

/// The most raw assignments `--check-constraints` compiles and verifies.
const CHECK_LIMIT: usize = 4096;

/// Compiles and verifies every raw assignment of the unsplit program (at most
/// [`CHECK_LIMIT`], and within `--budget` or `--time`); compares the set that works
/// with the solver's.
fn check_constraints(s: &mut Session) -> Result<(), CliError> {
    let splits = vec![1; s.problem.base_tree().maps.len()];
    let space = s.problem.space(&splits).map_err(CliError::from)?;
    let n = space.tree.maps.len();
    let raw_count = u32::try_from(n)
        .ok()
        .and_then(|n| space.domain.len().checked_pow(n))
        .filter(|&r| r <= CHECK_LIMIT)
        .ok_or_else(|| {
            CliError::from(format!(
                "--check-constraints compiles every raw assignment: {n} maps of {} choices \
                 each are more than {CHECK_LIMIT}; check a smaller program (or --dims 1)",
                space.domain.len()
            ))
        })?;
    let raw = explore::solve::all_assignments(n, &space.domain);
    let mut rng = explore::solve::seeded_rng(s.args.seed);
    let mut solver =
        explore::solve::enumerate(n, &space.domain, &space.constraints, usize::MAX, &mut rng);
    solver.sort();
    let (mut lost, mut wrong, mut works) = (Vec::new(), Vec::new(), 0usize);
    let mut causes: BTreeMap<String, usize> = BTreeMap::new();
    let start = Instant::now();
    let mut checked = 0usize;
    for a in &raw {
        if out_of_budget(s.args, checked, start) {
            break;
        }
        let c = Candidate {
            splits: splits.clone(),
            mapping: a.clone(),
        };
        let (outcome, _) = s.evaluate(&c, true);
        checked += 1;
        let ok = outcome.cause.is_none();
        let valid = solver.binary_search(a).is_ok();
        if let Some(cause) = &outcome.cause {
            *causes
                .entry(cause.split(':').next().unwrap_or("").to_string())
                .or_default() += 1;
        }
        works += ok as usize;
        if ok && !valid {
            lost.push(json!({"mapping": a}));
        }
        if !ok && valid {
            wrong.push(json!({"mapping": a, "cause": outcome.cause}));
        }
    }
    if checked < raw_count {
        emit_err(&format!(
            "stopped after {checked} of {raw_count} raw assignments (--budget or --time)"
        ));
    }
    let families: BTreeMap<String, usize> = count_by_family(&space.constraints)
        .into_iter()
        .map(|(f, n)| (format!("{} {}", f.number(), f.name()), n))
        .collect();
    emit(
        &json!({
            "maps": n,
            "raw": raw_count,
            "checked": checked,
            "complete": checked == raw_count,
            "solver_valid": solver.len(),
            "compiled_and_verified": works,
            "valid_but_failed": wrong,
            "works_but_excluded": lost,
            "failures_by_cause": causes,
            "constraints": families,
        })
        .to_string(),
    );
    Ok(())
}

/// The search methods of the run (default: the solver).
pub(crate) fn methods_of(args: &ExploreArgs) -> Vec<Method> {
    if args.search.is_empty() {
        vec![Method::Solver]
    } else {
        args.search.iter().map(|m| m.method()).collect()
    }
}

/// The search method a log names.
pub(crate) fn method_named(name: &str) -> Result<Method, CliError> {
    [Method::Solver, Method::Random, Method::Evolutionary]
        .into_iter()
        .find(|m| m.name() == name)
        .ok_or_else(|| CliError::from(format!("the log names no search method: `{name}`")))
}

/// Prints the statistics of the unsplit space (the paper's figures) and returns them.
fn space_statistics(
    s: &mut Session,
) -> Result<serde_json::Map<String, serde_json::Value>, CliError> {
    let splits = vec![1; s.problem.base_tree().maps.len()];
    let base = s.problem.space(&splits).map_err(CliError::from)?;
    let mut stats = serde_json::Map::new();
    let families: BTreeMap<String, usize> = count_by_family(&base.constraints)
        .into_iter()
        .map(|(f, n)| (format!("{} {}", f.number(), f.name()), n))
        .collect();
    stats.insert("maps".into(), base.tree.maps.len().into());
    stats.insert("constraints".into(), json!(families));
    stats.insert(
        "split_choices".into(),
        json!(s
            .problem
            .split_domains()
            .iter()
            .map(|d| d.len())
            .collect::<Vec<_>>()),
    );
    emit_err(&format!(
        "{} maps, {} constraints ({}), split sizes per map: {:?}",
        base.tree.maps.len(),
        base.constraints.len(),
        families
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect::<Vec<_>>()
            .join(", "),
        s.problem.split_domains()
    ));
    Ok(stats)
}

/// Counts a failure by its cause (the text before the first `:`).
pub(crate) fn count_cause(causes: &mut BTreeMap<String, usize>, failure: &str) {
    *causes
        .entry(failure.split(':').next().unwrap_or("").to_string())
        .or_default() += 1;
}

fn search(s: &mut Session, header: &serde_json::Value) -> Result<(), CliError> {
    let args = s.args;
    let mut stats = space_statistics(s)?;
    let previous = match &args.resume {
        Some(p) => resumed_rows(&crate::explore_log::read(p, header)?)?,
        None => Vec::new(),
    };
    let mut log = crate::explore_log::Log::open(args, header)?;
    let mut causes: BTreeMap<String, usize> = BTreeMap::new();
    for r in &previous {
        if let Some(f) = &r.failure {
            count_cause(&mut causes, f);
        }
    }
    let mut rows: Vec<Row> = previous.clone();
    let mut summaries = Vec::new();
    for method in methods_of(args) {
        let resumed: Vec<&Row> = previous
            .iter()
            .filter(|r| r.method == method.name())
            .collect();
        let mut searcher = Searcher::new(method, args.seed);
        for r in &resumed {
            searcher.report(&r.candidate, r.ms.map(|t| 1.0 / t));
        }
        let mut done = resumed.len();
        // the search time goes on from where the log's left off
        let offset = resumed.iter().map(|r| r.elapsed).fold(0.0, f64::max);
        let bar = progress_bar(args, method);
        bar.set_position(done as u64);
        let start = Instant::now();
        let mut mine: Vec<Row> = resumed.into_iter().cloned().collect();
        let mut evaluated = 0usize;
        let stopped = loop {
            if out_of_budget(args, done, start) {
                break None;
            }
            let Some(prop) = searcher.next(&s.problem) else {
                break None;
            };
            let (outcome, defs) = s.evaluate(&prop.candidate, false);
            searcher.report(&prop.candidate, outcome.ms.map(|t| 1.0 / t));
            done += 1;
            evaluated += 1;
            let elapsed = offset + start.elapsed().as_secs_f64();
            if let Some(c) = &outcome.cause {
                count_cause(&mut causes, c);
            }
            let line = json!({
                "method": method.name(),
                "splits": prop.candidate.splits,
                "mapping": prop.candidate.mapping,
                "ms": outcome.ms,
                "failure": outcome.cause,
                "draws": prop.draws,
                "elapsed_s": elapsed,
                "strategy": defs,
            });
            mine.push(Row {
                method: method.name(),
                candidate: prop.candidate.clone(),
                ms: outcome.ms,
                failure: outcome.cause,
                elapsed,
                strategy: defs,
            });
            if let Err(e) = crate::explore_log::record(&mut log, &line) {
                break Some(e);
            }
            bar.set_position(done as u64);
            bar.set_message(progress_message(&mine));
        };
        bar.finish_and_clear();
        if let Some(e) = stopped {
            return Err(e);
        }
        let summary = method_summary(method, &searcher, &mine, evaluated, start);
        emit_err(&format!("{summary}"));
        summaries.push(summary);
        rows.extend(mine.into_iter().skip(done - evaluated));
    }
    report(s, &rows)?;
    stats.insert("methods".into(), json!(summaries));
    stats.insert("failures_by_cause".into(), json!(causes));
    emit(&serde_json::Value::Object(stats).to_string());
    Ok(())
}

/// The progress bar's message: valid candidates and the best time so far.
fn progress_message(rows: &[Row]) -> String {
    let valid = rows.iter().filter(|r| r.ms.is_some()).count();
    let best = rows
        .iter()
        .filter_map(|r| r.ms)
        .fold(f64::INFINITY, f64::min);
    format!("valid {valid}, best {best:.4} ms")
}

/// The summary of one method: `rows` are its candidates, resumed and new (`evaluated`
/// of them new, evaluated since `start`).
fn method_summary(
    method: Method,
    searcher: &Searcher,
    rows: &[Row],
    evaluated: usize,
    start: Instant,
) -> serde_json::Value {
    let secs = start.elapsed().as_secs_f64();
    let best = rows
        .iter()
        .filter_map(|r| r.ms)
        .fold(f64::INFINITY, f64::min);
    let t90 = rows
        .iter()
        .find(|r| r.ms.is_some_and(|m| m <= best / 0.9))
        .map(|r| r.elapsed);
    let mut summary = json!({
        "method": method.name(),
        "candidates": evaluated,
        "resumed": rows.len() - evaluated,
        "valid": rows.iter().filter(|r| r.ms.is_some()).count(),
        "best_ms": best.is_finite().then_some(best),
        "seconds": secs,
        "candidates_per_s": evaluated as f64 / secs.max(1e-9),
        "time_to_90pct_best_s": t90,
    });
    if method == Method::Random && searcher.draws > 0 {
        summary["raw_draws"] = searcher.draws.into();
        summary["valid_fraction"] = (searcher.valid_draws as f64 / searcher.draws as f64).into();
    }
    summary
}

/// The table of the best candidates (resumed and new alike), the best strategy
/// (`-o`) and the plot (`--plot`).
fn report(s: &Session, rows: &[Row]) -> Result<(), CliError> {
    let args = s.args;
    let mut ok: Vec<&Row> = rows.iter().filter(|r| r.ms.is_some()).collect();
    ok.sort_by(|a, b| {
        a.ms.unwrap_or(f64::MAX)
            .total_cmp(&b.ms.unwrap_or(f64::MAX))
    });
    let mut table = String::from("rank  method        ms         GFLOP/s  splits / mapping\n");
    for (i, r) in ok.iter().take(10).enumerate() {
        let ms = r.ms.unwrap_or(0.0);
        let gf = args
            .flops
            .map(|f| format!("{:8.1}", f / ms / 1e6))
            .unwrap_or_else(|| "       -".into());
        table.push_str(&format!(
            "{:<5} {:<13} {:<10.4} {gf}  {:?} / {:?}\n",
            i + 1,
            r.method,
            ms,
            r.candidate.splits,
            r.candidate.mapping
        ));
    }
    emit_err(&table);
    if let Some(path) = &args.output {
        let Some(best) = ok.first() else {
            return Err(format!(
                "no candidate compiled, verified and ran: `{}` is not written",
                path.display()
            )
            .into());
        };
        let defs = best.strategy.replacen("def candidate", "def best", 1);
        let text = s.problem.file.with(&format!(
            "// shine explore: {} on {} ({:.4} ms, {})\n{defs}",
            args.def,
            args.target,
            best.ms.unwrap_or(0.0),
            best.method
        ));
        shine::files::write_whole(path, text.as_bytes())?;
    }
    if let Some(path) = &args.plot {
        let points: Vec<PlotPoint> = rows.iter().map(|r| (r.method, r.elapsed, r.ms)).collect();
        shine::files::write_whole(path, plot(&points).as_bytes())?;
    }
    Ok(())
}

pub(crate) fn emit_err(s: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{s}");
}

/// The candidates of a log's records (`--resume`).
fn resumed_rows(records: &[serde_json::Value]) -> Result<Vec<Row>, CliError> {
    records.iter().map(resumed_row).collect()
}

/// One candidate of a log.
fn resumed_row(v: &serde_json::Value) -> Result<Row, CliError> {
    let ints = |k: &str| -> Result<Vec<i64>, CliError> {
        v[k].as_array()
            .and_then(|a| a.iter().map(|x| x.as_i64()).collect::<Option<Vec<_>>>())
            .ok_or_else(|| CliError::from(format!("a record of the log has no `{k}`: {v}")))
    };
    let mapping = ints("mapping")?
        .into_iter()
        .map(|x| i32::try_from(x).map_err(|_| CliError::from(format!("a bad mapping: {v}"))))
        .collect::<Result<_, _>>()?;
    Ok(Row {
        method: method_named(v["method"].as_str().unwrap_or(""))?.name(),
        candidate: Candidate {
            splits: ints("splits")?,
            mapping,
        },
        ms: v["ms"].as_f64(),
        failure: v["failure"].as_str().map(String::from),
        elapsed: v["elapsed_s"].as_f64().unwrap_or(0.0),
        strategy: v["strategy"].as_str().unwrap_or("").to_string(),
    })
}

/// A point of the plot: method, seconds into its search, the time of what was found then.
pub(crate) type PlotPoint = (&'static str, f64, Option<f64>);

/// An SVG plot of the best speed (1/ms) found against search time, one line per method.
pub(crate) fn plot(rows: &[PlotPoint]) -> String {
    let (w, h, pad) = (640.0, 400.0, 50.0);
    let tmax = rows.iter().map(|r| r.1).fold(1e-9, f64::max);
    let smax = rows
        .iter()
        .filter_map(|r| r.2.map(|m| 1.0 / m))
        .fold(1e-12, f64::max);
    let colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <line x1=\"{pad}\" y1=\"{y0}\" x2=\"{x1}\" y2=\"{y0}\" stroke=\"black\"/>\n\
         <line x1=\"{pad}\" y1=\"{pad}\" x2=\"{pad}\" y2=\"{y0}\" stroke=\"black\"/>\n\
         <text x=\"{cx}\" y=\"{ty}\" text-anchor=\"middle\">search time (s), 0 to {tmax:.1}</text>\n\
         <text x=\"12\" y=\"{pad}\">best speed (1/ms), max {smax:.3}</text>\n",
        y0 = h - pad,
        x1 = w - pad,
        cx = w / 2.0,
        ty = h - 12.0,
    );
    let mut methods: Vec<&str> = rows.iter().map(|r| r.0).collect();
    methods.dedup();
    for (i, m) in methods.iter().enumerate() {
        let mut best = 0.0f64;
        let mut pts = Vec::new();
        for r in rows.iter().filter(|r| r.0 == *m) {
            if let Some(ms) = r.2 {
                best = best.max(1.0 / ms);
            }
            let x = pad + (w - 2.0 * pad) * r.1 / tmax;
            let y = (h - pad) - (h - 2.0 * pad) * best / smax;
            pts.push(format!("{x:.1},{y:.1}"));
        }
        let color = colors[i % colors.len()];
        svg.push_str(&format!(
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>\n\
             <text x=\"{}\" y=\"{}\" fill=\"{color}\">{m}</text>\n",
            pts.join(" "),
            w - pad - 100.0,
            pad + 18.0 * i as f64
        ));
    }
    svg.push_str("</svg>\n");
    svg
}
