//! What the mapping search ([`crate::mapping`]) and the tuning ([`crate::tune`]) share:
//! the settings of a run, how a candidate is compiled and timed through the `shine`
//! facade, why it failed, the budget of a method, and how a run reports its progress.

use crate::search::Method;
use crate::tunedb::Timed;
use crate::tuning::Bindings;
use shine::{
    Artifact, Built, Executable, Inputs, Phrase, Reference, RunOptions, Setting, SourceFile, Stage,
    StrategySource, Target,
};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// An error of a run: a pipeline error of the program or strategy, or a message.
#[derive(Debug)]
pub enum Error {
    /// The program or the strategy file is wrong (rendered with its source excerpt).
    Shine(shine::Error),
    /// The request is wrong, or a file cannot be read or written: a message that may name
    /// settings of the request, which each front end spells its own way
    /// ([`shine::Phrase::render`]).
    Message(Phrase),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Shine(e) => write!(f, "{e}"),
            Error::Message(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<shine::Error> for Error {
    fn from(e: shine::Error) -> Error {
        Error::Shine(e)
    }
}

impl From<String> for Error {
    fn from(m: String) -> Error {
        Error::Message(Phrase::from(m))
    }
}

impl From<&str> for Error {
    fn from(m: &str) -> Error {
        Error::Message(Phrase::from(m))
    }
}

impl From<Phrase> for Error {
    fn from(m: Phrase) -> Error {
        Error::Message(m)
    }
}

/// What every run is given: the program, where candidates are compiled and timed, the
/// search methods and their budget, and the log.
#[derive(Clone, Debug)]
pub struct Run {
    /// The RISE program (its name is the path the log records).
    pub program: SourceFile,
    /// The definition searched.
    pub def: String,
    /// The user's strategy file, if any (definitions the middle strategy or template uses).
    pub strategy: Option<SourceFile>,
    /// The target candidates are compiled for.
    pub target: Target,
    /// The search methods, run one after the other with the same budget.
    pub methods: Vec<Method>,
    /// Candidates and seconds per method.
    pub limits: Limits,
    /// The seed of the searches and of the random inputs.
    pub seed: u64,
    /// Timed runs per size set (the median is kept).
    pub runs: usize,
    /// The rewriting budget of one strategy application.
    pub rewrite_budget: u64,
    /// Write every candidate as a JSON line here.
    pub log: Option<PathBuf>,
    /// Continue from this log of the same run.
    pub resume: Option<PathBuf>,
    /// The tuning database: outcomes found by earlier runs are read from it instead of
    /// compiled, verified and timed again, and new ones added ([`crate::tunedb`]).
    pub db: Option<PathBuf>,
    /// CPU workers that compile and verify candidates at once (1 or more).
    pub jobs: usize,
    /// The CUDA devices (ordinals) candidates are timed on, one candidate per device at a
    /// time (CUDA only; empty: device 0).
    pub devices: Vec<usize>,
}

impl Run {
    /// A run of `def` of `program` on `target`: the solver, 5 timed runs, seed 1, no
    /// limits (give [`Run::limits`] a budget or a time), no log.
    pub fn new(program: SourceFile, def: &str, target: Target) -> Run {
        Run {
            program,
            def: def.to_string(),
            strategy: None,
            target,
            methods: vec![Method::Solver],
            limits: Limits::default(),
            seed: 1,
            runs: 5,
            rewrite_budget: elevate::DEFAULT_BUDGET,
            log: None,
            resume: None,
            db: None,
            jobs: 1,
            devices: Vec::new(),
        }
    }

    /// The user's strategy text ("" without a file).
    pub fn user_strategy(&self) -> &str {
        self.strategy.as_ref().map_or("", |s| s.text.as_str())
    }

    /// Compiles the definition with the definition `candidate` of `strategy`.
    pub fn compile_candidate(&self, strategy: SourceFile) -> Result<Artifact, shine::Error> {
        let strategy = StrategySource {
            file: strategy,
            apply: "candidate".into(),
        };
        let options = shine::Options {
            budget: self.rewrite_budget,
            ..shine::Options::default()
        };
        shine::compile(
            &self.program,
            &self.def,
            Some(&strategy),
            self.target,
            &options,
        )
    }

    /// Verifies the artifact against the interpreter on random inputs of the sizes `nats`.
    pub fn verify_at(&self, artifact: &Artifact, nats: &Bindings) -> Result<(), shine::Error> {
        let inputs = Inputs::Random { seed: self.seed };
        shine::verify(artifact, inputs, nats, &RunOptions::default()).map(drop)
    }

    /// Verifies the artifact against `reference` (its inputs and the interpreter's result at
    /// one size set, made once and shared by every candidate), or the error of making it.
    pub(crate) fn verify_on(
        &self,
        artifact: &Artifact,
        reference: Result<Arc<Reference>, shine::Error>,
    ) -> Result<(), shine::Error> {
        let options = RunOptions {
            verify: true,
            ..RunOptions::default()
        };
        let mut exe = Executable::with_reference(artifact, &reference?, &options, None)?;
        let result = exe.run()?;
        exe.verify(&result).map(drop)
    }

    /// The median time (ms) of the artifact on random inputs of the sizes `nats`, on the
    /// CUDA device `cuda_device` (other targets ignore it).
    pub fn time_at(
        &self,
        artifact: &Artifact,
        nats: &Bindings,
        cuda_device: usize,
    ) -> Result<f64, shine::Error> {
        self.time_built_at(artifact, None, nats, cuda_device)
    }

    /// [`Run::time_at`], the code of `artifact` already built as `built` (GPU kernels
    /// compiled and loaded by an earlier run, reused here); `None`: built now.
    pub fn time_built_at(
        &self,
        artifact: &Artifact,
        built: Option<Built>,
        nats: &Bindings,
        cuda_device: usize,
    ) -> Result<f64, shine::Error> {
        let inputs = Inputs::Random { seed: self.seed };
        let options = RunOptions {
            cuda_device,
            ..RunOptions::default()
        };
        let mut exe = Executable::with_built(artifact, inputs, nats, &options, built)?;
        exe.run()?;
        Ok(exe.bench(self.runs, 1)?.code.median_ms)
    }

    /// The outcome of timing the artifact at the sizes `nats` on the CUDA device
    /// `cuda_device` ([`Run::time_built_at`], its code already built as `built` or, with
    /// `None`, built now): its median over [`Run::runs`] runs, "not applicable" where the
    /// sizes break a size constraint of its code, or the failure.
    pub fn timing(
        &self,
        artifact: &Artifact,
        built: Option<Built>,
        nats: &Bindings,
        cuda_device: usize,
    ) -> Timed {
        self.timed(self.time_built_at(artifact, built, nats, cuda_device))
    }

    /// [`Run::timing`] on the inputs of `reference` (made once and shared by every candidate
    /// timed at its sizes), or the error of making them.
    pub(crate) fn timing_on(
        &self,
        artifact: &Artifact,
        built: Option<Built>,
        reference: Result<Arc<Reference>, shine::Error>,
        cuda_device: usize,
    ) -> Timed {
        let options = RunOptions {
            cuda_device,
            ..RunOptions::default()
        };
        let median = reference.and_then(|reference| {
            let mut exe = Executable::with_reference(artifact, &reference, &options, built)?;
            exe.run()?;
            Ok(exe.bench(self.runs, 1)?.code.median_ms)
        });
        self.timed(median)
    }

    /// The outcome of a timing: its median over [`Run::runs`] runs, "not applicable" where
    /// the sizes break a size constraint of the code, or the failure.
    fn timed(&self, median: Result<f64, shine::Error>) -> Timed {
        match median {
            Ok(ms) => Timed::Ms {
                ms,
                runs: self.runs,
            },
            Err(e) if not_applicable(&e) => Timed::NotApplicable,
            Err(e) => Timed::Failed(Failure::of(&e)),
        }
    }

    /// Checks the settings of parallel evaluation: 1 job or more, and `devices` only on
    /// CUDA, each named once.
    pub fn check_workers(&self) -> Result<(), Error> {
        if self.jobs == 0 {
            return Err(Phrase::from(Setting::Jobs)
                .then(" must be 1 or more")
                .into());
        }
        if self.devices.is_empty() {
            return Ok(());
        }
        if self.target != Target::Cuda {
            let chosen = match self.target {
                Target::OpenCl => "its device is the one SHINE_OPENCL_DEVICE names",
                _ => "its code runs on this machine's CPU",
            };
            return Err(Phrase::from(Setting::Devices)
                .then(format!(
                    " chooses CUDA devices, and the target `{}` has none ({chosen})",
                    self.target
                ))
                .into());
        }
        let mut seen = self.devices.clone();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() != self.devices.len() {
            return Err(Phrase::from(Setting::Devices)
                .then(" names a device twice")
                .into());
        }
        Ok(())
    }

    /// An error if the database, workers or devices are given to `what`, which evaluates
    /// candidates one at a time and keeps nothing (`--check-constraints`).
    pub fn refuse_database_and_workers(&self, what: Setting) -> Result<(), Error> {
        let given = [
            (self.db.is_some(), Setting::TuningDatabase),
            (self.jobs > 1, Setting::Jobs),
            (!self.devices.is_empty(), Setting::Devices),
        ];
        match given.into_iter().find(|(on, _)| *on) {
            None => Ok(()),
            Some((_, setting)) => Err(Phrase::from(setting)
                .then(" is not supported by ")
                .then(what)
                .then(" (it compiles and verifies one candidate at a time, and keeps nothing)")
                .into()),
        }
    }

    /// Checks that every size `set` names is a size of the definition (`sizes`); `option`
    /// names the set in the message (`--nat`, `--time-nat`, `--verify-nat`).
    pub fn check_set_names(
        &self,
        option: Setting,
        set: &Bindings,
        sizes: &[String],
    ) -> Result<(), Error> {
        match set.iter().find(|(k, _)| !sizes.contains(k)) {
            None => Ok(()),
            Some((k, _)) => Err(Phrase::from(option)
                .then(format!(
                    " names `{k}`, which is no size of `{}` (its sizes: {})",
                    self.def,
                    listed(sizes)
                ))
                .into()),
        }
    }

    /// The definition prepared for the search, and the names of its sizes.
    pub fn prepare(&self) -> Result<(rise::infer::Prepared, Vec<String>), Error> {
        let checked = self.program.check()?;
        let prepared = rise::infer::prepare_def(&checked, &self.def)
            .map_err(|d| Error::Shine(self.program.error(d)))?;
        let sizes = rise::infer::size_params(&prepared.scheme)
            .iter()
            .map(|n| n.to_string())
            .collect();
        Ok((prepared, sizes))
    }
}

/// Whether an error says that sizes do not satisfy the code's constraints.
pub(crate) fn not_applicable(e: &shine::Error) -> bool {
    e.to_string().contains("size constraint of")
}

/// Names, comma-separated, or "none".
pub(crate) fn listed(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// How long each search method runs: a number of candidates or of seconds (or both).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Limits {
    /// Candidates per method (resumed ones count).
    pub budget: Option<usize>,
    /// Seconds per method (and, when tuning, for the enumeration of the space).
    pub time: Option<f64>,
}

impl Limits {
    /// Whether a method that has `done` candidates since `start` is out of budget.
    pub fn reached(&self, done: usize, start: Instant) -> bool {
        self.budget.is_some_and(|b| done >= b)
            || self
                .time
                .is_some_and(|t| start.elapsed().as_secs_f64() >= t)
    }

    /// An error unless a budget or a time is given.
    pub fn require(&self) -> Result<(), Error> {
        if self.budget.is_none() && self.time.is_none() {
            return Err(Phrase::from("give a budget (")
                .then(Setting::SearchBudget)
                .then(" candidates) or a time (")
                .then(Setting::SearchTime)
                .then(")")
                .into());
        }
        Ok(())
    }
}

/// Why a candidate failed: a cause of the paper's §5.3 breakdown (`wrong result`,
/// `compile error`, `too slow`, ...) and the first line of the message.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Failure {
    /// The cause, the key failures are counted by.
    pub cause: String,
    /// What went wrong, in one line.
    pub detail: String,
}

impl Failure {
    /// A failure of a cause.
    pub fn new(cause: &str, detail: impl Into<String>) -> Failure {
        Failure {
            cause: cause.to_string(),
            detail: detail.into(),
        }
    }

    /// The failure of a pipeline error.
    pub fn of(error: &shine::Error) -> Failure {
        Failure::new(cause_of(error), first_line(&error.to_string()))
    }

    /// A failure as a log writes it (`cause: detail`).
    pub fn parse(text: &str) -> Failure {
        match text.split_once(':') {
            Some((cause, detail)) => Failure::new(cause, detail.trim_start()),
            None => Failure::new(text, ""),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.cause, self.detail)
    }
}

/// The cause of a failed candidate (the paper's §5.3 breakdown): the pipeline stage that
/// failed, refined by what the message says where a stage has several causes.
pub fn cause_of(error: &shine::Error) -> &'static str {
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

/// The line of a message that says `error`, or its first line.
pub fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| l.contains("error"))
        .or_else(|| s.lines().next())
        .unwrap_or("")
        .trim()
        .to_string()
}

/// Counts a failure by its cause (the text before the first `:`).
pub fn count_cause(causes: &mut BTreeMap<String, usize>, failure: &str) {
    *causes
        .entry(failure.split(':').next().unwrap_or("").to_string())
        .or_default() += 1;
}

/// A size set as `h=4,w=28`.
pub fn show(set: &Bindings) -> String {
    set.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// How a method stands after a candidate: what a progress bar shows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Standing {
    /// Its candidates so far, resumed ones included.
    pub done: usize,
    /// Of which compiled, verified and timed.
    pub valid: usize,
    /// The best time so far (the mapping search), or the sum of the best per size set
    /// (the tuning); `None` before a candidate is timed.
    pub best_ms: Option<f64>,
}

/// The summary of one search method.
#[derive(Clone, Debug, PartialEq)]
pub struct MethodSummary {
    /// The method.
    pub method: Method,
    /// The candidates it evaluated in this run.
    pub candidates: usize,
    /// Its candidates read from the log (`resume`).
    pub resumed: usize,
    /// Of all its candidates, those compiled, verified and timed.
    pub valid: usize,
    /// Its best time (the mapping search) or sum of per-set bests (the tuning).
    pub best_ms: Option<f64>,
    /// Seconds it ran in this run.
    pub seconds: f64,
    /// Seconds into its search (the log's included) when it first came within 90% of
    /// its best.
    pub time_to_90pct_best_s: Option<f64>,
    /// The random search's raw draws and of them valid, if it drew.
    pub random_draws: Option<(usize, usize)>,
}

impl MethodSummary {
    /// Candidates per second of this run.
    pub fn candidates_per_s(&self) -> f64 {
        self.candidates as f64 / self.seconds.max(1e-9)
    }
}

/// What a run tells while it goes.
#[derive(Clone, Copy, Debug)]
pub enum Phase<'a> {
    /// A remark for the user (the size of the space, a warning about the log).
    Note(&'a str),
    /// A method starts with these of its candidates from the log.
    MethodStarted {
        /// The method.
        method: Method,
        /// Its candidates from the log.
        resumed: usize,
    },
    /// A method is done.
    MethodDone(&'a MethodSummary),
    /// What runs now: candidates compiled and verified by the workers, or one timed (a
    /// tuning's evaluation of a batch).
    Running(&'a str),
}

/// Receives a run's progress: `R` is its record of a candidate. A `Break` from
/// [`Progress::on_candidate`] stops the run after that candidate (the log stays valid,
/// the result holds what was found and says it was interrupted).
pub trait Progress<R> {
    /// A phase of the run.
    fn on_phase(&mut self, _phase: Phase<'_>) {}
    /// A candidate was evaluated (and logged); `standing` is its method's so far.
    fn on_candidate(&mut self, _record: &R, _standing: &Standing) -> ControlFlow<()> {
        ControlFlow::Continue(())
    }
}

/// Progress that is not reported.
pub struct Quiet;

impl<R> Progress<R> for Quiet {}

/// The best time of a list of candidate times.
pub(crate) fn min_time(times: impl Iterator<Item = f64>) -> Option<f64> {
    let best = times.fold(f64::INFINITY, f64::min);
    best.is_finite().then_some(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_read_back_as_they_are_written() {
        let f = Failure::new("wrong result", "x differs: 1 vs 2");
        assert_eq!(Failure::parse(&f.to_string()), f);
        assert_eq!(Failure::parse("odd").cause, "odd");
    }

    #[test]
    fn limits_stop_at_the_budget() {
        let l = Limits {
            budget: Some(2),
            time: None,
        };
        assert!(!l.reached(1, Instant::now()));
        assert!(l.reached(2, Instant::now()));
        assert!(Limits::default().require().is_err());
    }
}
