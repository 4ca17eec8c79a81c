//! `shine explore`: automatic parallel mapping and tuning (CC'22), the command line of
//! the `explore` crate's engines ([`explore::mapping`], [`explore::tune`]).
//!
//! The arguments become a request; the engine reports its progress here (progress
//! bars and notes on stderr), and its result is printed: the table of the best
//! candidates on stderr, a JSON summary on stdout, `-o` and `--plot` written.

use crate::cli::{emit, parse_nat_binding, CliError};
use clap::{Args, ValueEnum};
use explore::engine::{Limits, MethodSummary, Phase, Progress, Run, Standing};
use explore::mapping::{CheckReport, Search, SearchResult};
use explore::search::Method;
use explore::strategy::StrategyFile;
use explore::tuning::Bindings;
use serde_json::json;
use shine::{SourceFile, Target};
use std::io::Write;
use std::ops::ControlFlow;
use std::path::PathBuf;

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
    /// A tuning database kept across runs (SQLite; created if missing): candidates it has
    /// outcomes for are not compiled, verified or timed again (mapping searches and tunings
    /// alike).
    #[arg(long = "db", value_name = "tune.db")]
    pub db: Option<PathBuf>,
    /// CPU workers that compile and verify candidates at once; candidates are timed one at
    /// a time per device, on the CPU with nothing else running (in a tuning on CUDA the
    /// workers build the next batch meanwhile).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = parse_count)]
    pub jobs: usize,
    /// CUDA devices to time candidates on, one candidate per device at a time: `0,1`
    /// (with --target cuda; default: device 0).
    #[arg(long, value_name = "D,...", value_parser = parse_devices)]
    pub devices: Option<DeviceList>,
}

/// CUDA device ordinals (`--devices 0,1`).
#[derive(Clone, Debug)]
pub struct DeviceList(pub Vec<usize>);

/// CUDA device ordinals, `0,1` (each a number, at least one).
pub(crate) fn parse_devices(s: &str) -> Result<DeviceList, String> {
    let devices: Vec<usize> = s
        .split(',')
        .map(|d| {
            d.trim()
                .parse::<usize>()
                .map_err(|_| format!("`{d}` is no device number (give ordinals: `0,1`)"))
        })
        .collect::<Result<_, _>>()?;
    let mut distinct = devices.clone();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() != devices.len() {
        return Err(format!("`{s}` names a device twice"));
    }
    Ok(DeviceList(devices))
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

impl From<explore::engine::Error> for CliError {
    fn from(e: explore::engine::Error) -> CliError {
        match e {
            explore::engine::Error::Shine(e) => CliError::from(e),
            explore::engine::Error::Message(m) => CliError::from(m.render(&crate::cli::flag_of)),
        }
    }
}

/// A size set, `h=4,w=28`.
pub(crate) fn parse_set(s: &str) -> Result<Bindings, CliError> {
    s.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| parse_nat_binding(p).map_err(CliError::from))
        .collect()
}

/// The search methods of the run (default: the solver).
fn methods_of(args: &ExploreArgs) -> Vec<Method> {
    if args.search.is_empty() {
        vec![Method::Solver]
    } else {
        args.search.iter().map(|m| m.method()).collect()
    }
}

/// What both engines are given, from the arguments.
fn run_of(args: &ExploreArgs) -> Result<Run, CliError> {
    let program = crate::cli::read_program(&args.program)?;
    let strategy = match &args.strategy {
        Some(p) => Some(SourceFile::read(p)?),
        None => None,
    };
    let mut run = Run::new(program, &args.def, args.target);
    run.strategy = strategy;
    run.methods = methods_of(args);
    run.limits = Limits {
        budget: args.budget,
        time: args.time,
    };
    run.seed = args.seed;
    run.runs = args.runs;
    run.rewrite_budget = args.rewrite_budget;
    run.log = args.log.clone();
    run.resume = args.resume.clone();
    run.db = args.db.clone();
    run.jobs = args.jobs;
    run.devices = args.devices.clone().map(|d| d.0).unwrap_or_default();
    Ok(run)
}

/// `shine explore PROG.rise --def D ...`
pub fn explore(args: &ExploreArgs) -> Result<(), CliError> {
    let run = run_of(args)?;
    let time_nats: Vec<Bindings> = args
        .time_nats
        .iter()
        .map(|s| parse_set(s))
        .collect::<Result<_, _>>()?;
    for path in args.output.iter().chain(&args.plot) {
        shine::files::check_writable(path)?;
    }
    if !args.params.is_empty() {
        return crate::explore_tune::tune(args, run, time_nats);
    }
    let search = Search {
        run,
        apply: args.apply.clone(),
        nats: args.nats.clone(),
        time_nats,
        dims: args.dims,
        paper_constraints: args.paper_constraints,
        fusion_heuristic: args.fusion_heuristic,
        cutoff: args.cutoff,
    };
    if args.check_constraints {
        let mut bars = Bars::new(args.budget);
        let report = explore::mapping::check_constraints(&search, &mut bars)?;
        emit(&check_json(&report).to_string());
        return Ok(());
    }
    let mut bars = Bars::new(args.budget);
    let result = explore::mapping::run(&search, &mut bars)?;
    drop(bars);
    report(args, &search, &result)
}

/// The JSON of `--check-constraints`.
fn check_json(r: &CheckReport) -> serde_json::Value {
    json!({
        "maps": r.maps,
        "raw": r.raw,
        "checked": r.checked,
        "complete": r.complete(),
        "solver_valid": r.solver_valid,
        "compiled_and_verified": r.compiled_and_verified,
        "valid_but_failed": r.valid_but_failed.iter()
            .map(|(a, f)| json!({"mapping": a, "cause": f.to_string()}))
            .collect::<Vec<_>>(),
        "works_but_excluded": r.works_but_excluded.iter()
            .map(|a| json!({"mapping": a}))
            .collect::<Vec<_>>(),
        "failures_by_cause": r.failures_by_cause,
        "constraints": r.constraints,
    })
}

/// The progress of a run on stderr: a bar per search method, notes and summaries as
/// lines.
pub(crate) struct Bars {
    budget: Option<usize>,
    bar: Option<indicatif::ProgressBar>,
}

impl Bars {
    pub(crate) fn new(budget: Option<usize>) -> Bars {
        Bars { budget, bar: None }
    }

    fn clear(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    /// The progress bar of one search method.
    fn start(&mut self, method: Method, resumed: usize) {
        let bar = indicatif::ProgressBar::new(self.budget.unwrap_or(0) as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{prefix} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar.set_prefix(method.name());
        bar.set_position(resumed as u64);
        self.bar = Some(bar);
    }
}

impl Drop for Bars {
    fn drop(&mut self) {
        self.clear();
    }
}

/// The summary of a method as JSON; `best_key` names its best time.
pub(crate) fn summary_json(s: &MethodSummary, best_key: &str) -> serde_json::Value {
    let mut v = json!({
        "method": s.method.name(),
        "candidates": s.candidates,
        "resumed": s.resumed,
        "valid": s.valid,
        best_key: s.best_ms,
        "seconds": s.seconds,
        "candidates_per_s": s.candidates_per_s(),
        "time_to_90pct_best_s": s.time_to_90pct_best_s,
    });
    if let Some((draws, valid)) = s.random_draws {
        v["raw_draws"] = draws.into();
        v["valid_fraction"] = (valid as f64 / draws as f64).into();
    }
    v
}

impl Bars {
    fn phase(&mut self, phase: Phase<'_>, best_key: &str) {
        match phase {
            Phase::Note(text) => self.line(text),
            Phase::Running(text) => self.line(&format!("running: {text}")),
            Phase::MethodStarted { method, resumed } => self.start(method, resumed),
            Phase::MethodDone(summary) => {
                self.clear();
                emit_err(&summary_json(summary, best_key).to_string());
            }
        }
    }

    /// A line above the progress bar.
    fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| emit_err(text)),
            None => emit_err(text),
        }
    }

    fn candidate(&mut self, standing: &Standing, message: String) -> ControlFlow<()> {
        if let Some(bar) = &self.bar {
            bar.set_position(standing.done as u64);
            bar.set_message(message);
        }
        ControlFlow::Continue(())
    }
}

impl Progress<explore::mapping::Record> for Bars {
    fn on_phase(&mut self, phase: Phase<'_>) {
        self.phase(phase, "best_ms");
    }

    fn on_candidate(
        &mut self,
        _: &explore::mapping::Record,
        standing: &Standing,
    ) -> ControlFlow<()> {
        let best = standing.best_ms.unwrap_or(f64::INFINITY);
        self.candidate(
            standing,
            format!("valid {}, best {best:.4} ms", standing.valid),
        )
    }
}

impl Progress<explore::tune::Record> for Bars {
    fn on_phase(&mut self, phase: Phase<'_>) {
        self.phase(phase, "sum_of_set_bests_ms");
    }

    fn on_candidate(&mut self, _: &explore::tune::Record, standing: &Standing) -> ControlFlow<()> {
        let best = standing
            .best_ms
            .map_or("-".into(), |t| format!("{t:.4} ms"));
        self.candidate(
            standing,
            format!("valid {}, sum of per-set bests {best}", standing.valid),
        )
    }
}

/// The table of the best candidates (resumed and new alike), the best strategy (`-o`),
/// the plot (`--plot`) and the JSON summary.
fn report(args: &ExploreArgs, search: &Search, result: &SearchResult) -> Result<(), CliError> {
    let ok = result.ranked();
    let mut table =
        String::from("rank  method        ms         GFLOP/s  loops (splits / choices)\n");
    for (i, r) in ok.iter().take(10).enumerate() {
        let ms = r.ms.unwrap_or(0.0);
        let gf = args
            .flops
            .map(|f| format!("{:8.1}", f / ms / 1e6))
            .unwrap_or_else(|| "       -".into());
        table.push_str(&format!(
            "{:<5} {:<13} {:<10.4} {gf}  {} ({:?} / {:?})\n",
            i + 1,
            r.method.name(),
            ms,
            r.in_words,
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
        let file = StrategyFile {
            user: search.run.user_strategy().to_string(),
        };
        let text = file.with(&format!(
            "// shine explore: {} on {} ({:.4} ms, {})\n{defs}",
            args.def,
            args.target,
            best.ms.unwrap_or(0.0),
            best.method.name()
        ));
        shine::files::write_whole(path, text.as_bytes())?;
    }
    if let Some(path) = &args.plot {
        let points: Vec<PlotPoint> = result
            .records
            .iter()
            .map(|r| (r.method.name(), r.elapsed_s, r.ms))
            .collect();
        shine::files::write_whole(path, plot(&points).as_bytes())?;
    }
    let summaries: Vec<serde_json::Value> = result
        .methods
        .iter()
        .map(|s| summary_json(s, "best_ms"))
        .collect();
    emit(
        &json!({
            "maps": result.stats.maps,
            "constraints": result.stats.constraints,
            "split_choices": result.stats.split_domains.iter().map(Vec::len).collect::<Vec<_>>(),
            "methods": summaries,
            "failures_by_cause": result.failures_by_cause,
            "timed": result.timed,
            "from_database": result.from_database,
        })
        .to_string(),
    );
    Ok(())
}

pub(crate) fn emit_err(s: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{s}");
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
