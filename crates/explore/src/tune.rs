//! Tuning the numeric parameters of a strategy template (`shine explore --param`).
//!
//! The template names parameters (`mmSplitK(tm, tn, rm, rn, kb, wm, wn)`); a [`Tuning`]
//! gives their values or derives them and restricts them ([`crate::params`]). Parameters
//! the template does not name are sizes of the program (the number of chunks a reduction
//! is split into, say). Every candidate is compiled once, verified against the
//! interpreter at the first verification size set its size constraints admit (give the
//! cheapest first; a candidate no set admits is a failure), then timed at every time set
//! it admits ([`Tuner::evaluate_candidate`]): the best candidate is kept per set (a layer
//! of a network gets its own tiles), and the sum of the per-set bests is the figure of
//! the search. Several methods run one after the other with the same budget ([`run`]).

use crate::engine::{
    count_cause, listed, not_applicable, show, Error, Failure, MethodSummary, Phase, Progress, Run,
    Standing,
};
use crate::log::{self, Log};
use crate::params::{
    names, substitute, Assignment, ParamSearch, ParamSpace, Stop, ENUMERATION_LIMIT, RAW_LIMIT,
};
use crate::pool::{self, Candidates, Counts, Evaluator, Outcome, Staged};
use crate::remote::{Remote, Request};
use crate::search::Method;
use crate::shared::References;
use crate::tunedb::Timed;
use crate::tuning::Bindings;
use serde_json::{json, Value};
use shine::gpu::GpuBuilds;
use shine::{Artifact, Built, Phrase, RunOptions, Setting, SourceFile, Target};
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A tuning: the run, the template and its parameter space, and the size sets.
#[derive(Clone, Debug)]
pub struct Tuning {
    /// The program, target, methods, budget and log.
    pub run: Run,
    /// The strategy template, an expression over the user's strategy file that names
    /// the parameters (`mmSplitK(tm, tn, rm, rn, kb, wm, wn)`).
    pub template: String,
    /// The parameters: `NAME=V1,V2,...` or `NAME=EXPR` (derived from those before it).
    pub params: Vec<String>,
    /// Requirements on the parameters, `wm*wn<=1024`.
    pub requires: Vec<String>,
    /// The first size set to verify at (may be empty: then `verify_nats` only).
    pub nats: Bindings,
    /// Further size sets to verify at, in order (give the cheapest first).
    pub verify_nats: Vec<Bindings>,
    /// The size sets to time at (empty: `nats`).
    pub time_nats: Vec<Bindings>,
}

impl Tuning {
    /// The size sets candidates are timed at.
    pub fn time_sets(&self) -> Vec<Bindings> {
        if self.time_nats.is_empty() {
            vec![self.nats.clone()]
        } else {
            self.time_nats.clone()
        }
    }
}

/// What happened to a candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// Why it failed as a whole (not compiled, not verified, no set timed), if it did.
    pub failure: Option<Failure>,
    /// Its time (ms) per time set: `None` where it does not apply or failed there.
    pub ms: Vec<Option<f64>>,
    /// Why it failed at a set it applies to.
    pub set_failures: Vec<Option<Failure>>,
}

impl Evaluation {
    /// A candidate that failed as a whole, at `sets` time sets.
    pub(crate) fn failed(failure: Failure, sets: usize) -> Evaluation {
        Evaluation {
            failure: Some(failure),
            ms: vec![None; sets],
            set_failures: vec![None; sets],
        }
    }
}

/// One candidate, evaluated in this run or read from the log: a line of the log.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The method that proposed it.
    pub method: Method,
    /// The values of the parameters.
    pub assignment: Assignment,
    /// What happened to it.
    pub evaluation: Evaluation,
    /// Seconds into its method's search (the log's included).
    pub elapsed_s: f64,
    /// The candidate as a strategy definition, `def candidate = ...`.
    pub strategy: String,
    /// Whether it was read from the log.
    pub resumed: bool,
}

impl Record {
    /// The record as a line of the log.
    pub fn to_json(&self) -> Value {
        let texts = |fs: &[Option<Failure>]| -> Vec<Option<String>> {
            fs.iter()
                .map(|f| f.as_ref().map(ToString::to_string))
                .collect()
        };
        json!({
            "method": self.method.name(),
            "params": self.assignment.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "ms_per_set": self.evaluation.ms,
            "failure": self.evaluation.failure.as_ref().map(ToString::to_string),
            "set_failures": texts(&self.evaluation.set_failures),
            "elapsed_s": self.elapsed_s,
            "strategy": self.strategy,
        })
    }

    /// A line of the log as a candidate of `space` timed at `sets` size sets.
    pub fn from_json(v: &Value, space: &ParamSpace, sets: usize) -> Result<Record, Error> {
        let bad = |what: &str| Error::from(format!("a record of the log has {what}: {v}"));
        let assignment: Assignment = space
            .params
            .iter()
            .map(|p| {
                v["params"][p.name()]
                    .as_i64()
                    .map(|x| (p.name().to_string(), x))
                    .ok_or_else(|| bad(&format!("no value of `{}`", p.name())))
            })
            .collect::<Result<_, _>>()?;
        let ms: Vec<Option<f64>> = v["ms_per_set"]
            .as_array()
            .map(|a| a.iter().map(Value::as_f64).collect())
            .unwrap_or_default();
        let set_failures: Vec<Option<Failure>> = v["set_failures"]
            .as_array()
            .map(|a| a.iter().map(|x| x.as_str().map(Failure::parse)).collect())
            .unwrap_or_default();
        if ms.len() != sets || set_failures.len() != sets {
            return Err(bad(&format!("not one time per size set ({sets})")));
        }
        Ok(Record {
            method: method_of_log(v)?,
            assignment,
            strategy: v["strategy"].as_str().unwrap_or("").to_string(),
            evaluation: Evaluation {
                failure: v["failure"].as_str().map(Failure::parse),
                ms,
                set_failures,
            },
            elapsed_s: v["elapsed_s"].as_f64().unwrap_or(0.0),
            resumed: true,
        })
    }

    /// Whether it was compiled, verified and timed at some set.
    pub fn is_valid(&self) -> bool {
        self.evaluation.failure.is_none()
    }
}

/// The method a record of a log names.
pub(crate) fn method_of_log(v: &Value) -> Result<Method, Error> {
    let name = v["method"].as_str().unwrap_or("");
    Method::named(name)
        .map_err(|_| Error::from(format!("the log names no search method: `{name}`")))
}

/// The best candidate found for one time set (or, as `best_on_every_set`, the best
/// that ran at every set: `ms` is then its total).
#[derive(Clone, Debug, PartialEq)]
pub struct Best {
    /// Its time (ms).
    pub ms: f64,
    /// The values of the parameters.
    pub assignment: Assignment,
    /// The method that found it.
    pub method: Method,
    /// The candidate as a strategy definition, `def candidate = ...`.
    pub strategy: String,
}

impl Best {
    /// Its strategy as the definition `name` (`best_1`) instead of `candidate`.
    pub fn definition(&self, name: &str) -> String {
        self.strategy
            .replacen("def candidate", &format!("def {name}"), 1)
    }
}

/// A point of the plot: a method, seconds into its search, and the sum of its per-set
/// bests then.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// The method.
    pub method: Method,
    /// Seconds into its search.
    pub elapsed_s: f64,
    /// The sum of its per-set bests (`None`: some set has none yet).
    pub best_ms: Option<f64>,
}

/// What a tuning found.
#[derive(Clone, Debug)]
pub struct TuningResult {
    /// The size sets timed at.
    pub time_sets: Vec<Bindings>,
    /// The parameters that are sizes of the program (a candidate runs with its values).
    pub size_params: Vec<String>,
    /// The raw assignments of the space (the product of the value lists).
    pub raw_assignments: u128,
    /// The valid assignments enumerated.
    pub valid_assignments: usize,
    /// The best candidate per time set, over every method and the log.
    pub bests: Vec<Option<Best>>,
    /// The best candidate that ran at every set (its `ms`: the total).
    pub best_on_every_set: Option<Best>,
    /// The summary of each method run.
    pub methods: Vec<MethodSummary>,
    /// Failures by cause, of candidates and of candidates at a set.
    pub failures_by_cause: BTreeMap<String, usize>,
    /// The points of the plot, in order.
    pub points: Vec<Point>,
    /// Every candidate, the log's first.
    pub records: Vec<Record>,
    /// Whether the progress stopped the run early.
    pub interrupted: bool,
    /// Candidates of this run whose every outcome came from the tuning database (nothing
    /// compiled, verified or timed).
    pub from_database: usize,
    /// Candidates of this run timed now (at one size set or more).
    pub timed: usize,
    /// How many times the interpreter computed a reference in this run: once per size set
    /// candidates were verified at (and twice more where the bound for reassociated sums
    /// was needed), whatever the number of candidates, which are each compared with it.
    pub reference_evaluations: usize,
}

impl TuningResult {
    /// The sum of the per-set bests (`None` if some set has none).
    pub fn sum_of_set_bests(&self) -> Option<f64> {
        sum_of(&self.bests)
    }

    /// The sizes the best of set `k` runs at: the set and its size parameters.
    pub fn sizes_of(&self, k: usize) -> Option<Bindings> {
        let best = self.bests.get(k)?.as_ref()?;
        Some(with_sizes(
            &self.time_sets[k],
            &self.size_params,
            &best.assignment,
        ))
    }

    /// The values of the size parameters in `a` (`--nat` bindings of the candidate).
    pub fn size_values(&self, a: &Assignment) -> Bindings {
        with_sizes(&Vec::new(), &self.size_params, a)
    }
}

/// `set` with the values of `a` of the parameters that are sizes.
fn with_sizes(set: &Bindings, sizes: &[String], a: &Assignment) -> Bindings {
    let mut out = set.clone();
    out.extend(a.iter().filter(|(k, _)| sizes.contains(k)).cloned());
    out
}

fn sum_of(bests: &[Option<Best>]) -> Option<f64> {
    bests.iter().map(|b| b.as_ref().map(|b| b.ms)).sum()
}

/// A tuning prepared: its space checked, its size sets known. Evaluates candidates.
pub struct Tuner {
    run: Run,
    template: String,
    space: ParamSpace,
    /// Parameters that are sizes of the program.
    sizes: Vec<String>,
    verify_sets: Vec<Bindings>,
    time_sets: Vec<Bindings>,
    counter: AtomicUsize,
    /// Turns on the CUDA devices: a verification's run waits for a timing to end.
    turns: Turns,
    /// The inputs and the interpreter's references at each size set, shared by every
    /// candidate.
    references: References,
    /// Verifications started on CUDA: the next runs on the device after the last's.
    verifications: AtomicUsize,
}

/// Turns on the CUDA devices, taken in the order they were asked for (a ticket lock per
/// device): a timing at one size set and a verification's run each take one, so that
/// nothing of the workers runs on a device while it times (a run on the device's stream
/// would fall between the timing's events), and a verification waits at most for the set
/// being timed.
#[derive(Default)]
struct Turns {
    /// Per device: the next ticket, and the ticket whose turn it is.
    tickets: Mutex<BTreeMap<usize, (u64, u64)>>,
    turned: Condvar,
}

/// A turn on a device, given back when dropped.
struct Turn<'t> {
    turns: &'t Turns,
    device: usize,
}

impl Turns {
    /// Waits for a turn on `device`.
    fn take(&self, device: usize) -> Turn<'_> {
        let mut tickets = self.tickets.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = tickets.entry(device).or_default();
        let mine = entry.0;
        entry.0 += 1;
        while tickets.get(&device).is_some_and(|t| t.1 != mine) {
            tickets = self
                .turned
                .wait(tickets)
                .unwrap_or_else(PoisonError::into_inner);
        }
        Turn {
            turns: self,
            device,
        }
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut tickets = self
            .turns
            .tickets
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(t) = tickets.get_mut(&self.device) {
            t.1 += 1;
        }
        self.turns.turned.notify_all();
    }
}

/// A candidate built by a worker: its artifact and, on a GPU, its kernels: on CUDA compiled
/// by NVRTC for the time sets in the build (the image is kept in this process) and loaded on
/// a device the first time they run there, on OpenCL built by the first timing; then reused
/// at every set.
pub(crate) struct Prepared {
    artifact: Artifact,
    kernels: Option<Arc<GpuBuilds>>,
}

impl Tuner {
    /// Checks a tuning: the program, the size sets' names, the parameter space, the
    /// limits; nothing is compiled.
    pub fn new(t: &Tuning) -> Result<Tuner, Error> {
        let (_, program_sizes) = t.run.prepare()?;
        t.run
            .check_set_names(Setting::SearchSizes, &t.nats, &program_sizes)?;
        let time_sets = t.time_sets();
        for set in &t.time_nats {
            t.run
                .check_set_names(Setting::TimeSizes, set, &program_sizes)?;
        }
        let space = ParamSpace::parse(&t.params, &t.requires)?;
        t.run.limits.require()?;
        t.run.check_workers()?;
        let sizes = size_parameters(t, &space, &program_sizes)?;
        let verify_sets = verification_sets(t, &program_sizes)?;
        for set in verify_sets.iter().chain(&time_sets) {
            if let Some((k, _)) = set.iter().find(|(k, _)| sizes.contains(k)) {
                return Err(
                    format!("`{k}` is both a tuned parameter and a size given in a set").into(),
                );
            }
        }
        Ok(Tuner {
            run: t.run.clone(),
            template: t.template.clone(),
            space,
            sizes,
            verify_sets,
            time_sets,
            counter: AtomicUsize::new(0),
            turns: Turns::default(),
            references: References::new(&t.run.program, &t.run.def, t.run.seed),
            verifications: AtomicUsize::new(0),
        })
    }

    /// The run: program, target, limits, database and workers.
    pub fn run(&self) -> &Run {
        &self.run
    }

    /// A tuner that measures the candidates of a cluster's requests ([`crate::remote`]):
    /// nothing is checked and no space is searched (the driver did both).
    pub(crate) fn measuring(
        run: Run,
        template: &str,
        sizes: Vec<String>,
        verify_sets: Vec<Bindings>,
        time_sets: Vec<Bindings>,
    ) -> Tuner {
        Tuner {
            references: References::new(&run.program, &run.def, run.seed),
            verifications: AtomicUsize::new(0),
            run,
            template: template.to_string(),
            space: ParamSpace {
                params: Vec::new(),
                requires: Vec::new(),
            },
            sizes,
            verify_sets,
            time_sets,
            counter: AtomicUsize::new(0),
            turns: Turns::default(),
        }
    }

    /// The strategy template.
    pub fn template(&self) -> &str {
        &self.template
    }

    /// The parameters that are sizes of the program.
    pub fn size_params(&self) -> &[String] {
        &self.sizes
    }

    /// The size sets a candidate is verified at, in order.
    pub fn verify_sets(&self) -> &[Bindings] {
        &self.verify_sets
    }

    /// The size sets a candidate is timed at.
    pub fn time_sets(&self) -> &[Bindings] {
        &self.time_sets
    }

    /// The parameter space.
    pub fn space(&self) -> &ParamSpace {
        &self.space
    }

    /// The candidate of `a` as a strategy definition, `def candidate = ...`.
    pub fn strategy(&self, a: &Assignment) -> String {
        format!("def candidate = {}", substitute(&self.template, a))
    }

    /// `set` with the size parameters of `a`.
    pub fn sizes(&self, set: &Bindings, a: &Assignment) -> Bindings {
        with_sizes(set, &self.sizes, a)
    }

    fn compile(&self, defs: &str) -> Result<Artifact, shine::Error> {
        let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        let file = SourceFile::new(
            format!("candidate{n}.elv"),
            format!("{}\n{defs}\n", self.run.user_strategy()),
        );
        self.run.compile_candidate(file)
    }

    /// Evaluates one candidate: compiles it once, verifies it at the first verification
    /// set its size constraints admit, times it at each time set it admits (on the first
    /// of the run's devices).
    pub fn evaluate_candidate(&self, a: &Assignment) -> Evaluation {
        let device = self.run.devices.first().copied().unwrap_or(0);
        match self.prepare(a, true) {
            Err(failure) => Evaluation::failed(failure, self.time_sets.len()),
            Ok(built) => pool::time_alone(self, a, &built, device),
        }
    }

    /// Compiles the CUDA kernels of a built candidate with NVRTC as its timing at each time
    /// set will build them, for the architecture of each of the run's devices, so that the
    /// timing loads them without compiling. An error is not kept here: the timing meets it
    /// again and records it at its set.
    fn compile_kernels(&self, artifact: &Artifact, a: &Assignment) {
        let devices = match self.run.devices.as_slice() {
            [] => &[0][..],
            some => some,
        };
        for set in &self.time_sets {
            let sizes = self.sizes(set, a);
            for &cuda_device in devices {
                let options = RunOptions {
                    cuda_device,
                    ..RunOptions::default()
                };
                let _ = shine::gpu::compile_cuda_kernels(artifact, &sizes, &options);
            }
        }
    }

    /// Verifies the artifact at `nats` against the reference there (its inputs and the
    /// interpreter's result, made once per size set and shared by every candidate). On CUDA
    /// the verifications take the run's devices in turn, and a run on a device takes its
    /// turn there ([`Turns`]), so that it never runs while a candidate is timed on that
    /// device: the kernels are compiled before, the reference computed after.
    fn verify_at(&self, artifact: &Artifact, nats: &Bindings) -> Result<(), shine::Error> {
        let reference = self.references.at(nats)?;
        let cuda = self.run.target == Target::Cuda;
        let options = RunOptions {
            verify: true,
            cuda_device: if cuda { self.verification_device() } else { 0 },
            ..RunOptions::default()
        };
        if cuda {
            let _ = shine::gpu::compile_cuda_kernels(artifact, nats, &options);
        }
        let (exe, result) = {
            let _turn = cuda.then(|| self.turns.take(options.cuda_device));
            let mut exe = shine::Executable::with_reference(artifact, &reference, &options, None)?;
            let result = exe.run()?;
            (exe, result)
        };
        exe.verify(&result).map(drop)
    }

    /// The CUDA device the next verification runs on: the run's devices in turn.
    fn verification_device(&self) -> usize {
        let n = self.verifications.fetch_add(1, Ordering::Relaxed);
        match self.run.devices.as_slice() {
            [] => 0,
            devices => devices[n % devices.len()],
        }
    }

    /// How many times the interpreter computed a reference so far (once per size set a
    /// candidate was verified at, whatever the number of candidates; twice more where the
    /// bound for reassociated sums was needed).
    pub fn reference_evaluations(&self) -> usize {
        self.references.evaluations()
    }

    /// Verifies at the first verification set the artifact's size constraints admit.
    fn verify(&self, artifact: &Artifact, a: &Assignment) -> Result<(), Failure> {
        for set in &self.verify_sets {
            match self.verify_at(artifact, &self.sizes(set, a)) {
                Ok(()) => return Ok(()),
                Err(e) if not_applicable(&e) => {}
                Err(e) => return Err(Failure::of(&e)),
            }
        }
        Err(Failure::new(
            "not verified",
            "no verification size set satisfies its size constraints (add a size set it admits)",
        ))
    }
}

/// The pool evaluates a tuning's assignments: each compiled once, verified at the first
/// verification set it admits, timed at every time set it admits.
impl Candidates for Tuner {
    type Candidate = Assignment;
    type Built = Prepared;
    type Evaluation = Evaluation;

    fn run(&self) -> &Run {
        &self.run
    }

    fn key(&self, a: &Assignment) -> String {
        show(a)
    }

    fn verify_sets(&self) -> &[Bindings] {
        &self.verify_sets
    }

    fn time_sets(&self) -> &[Bindings] {
        &self.time_sets
    }

    /// CUDA kernels are timed on the GPU while the CPU builds; C and OpenMP code (and
    /// OpenCL, which may run on the CPU) is timed with nothing else running.
    fn overlaps_timing(&self) -> bool {
        self.run.target == Target::Cuda
    }

    /// Compiles a candidate and, if `verify`, verifies it (the work of a CPU worker); on
    /// CUDA compiles its kernels for the time sets too ([`Tuner::compile_kernels`]), on a
    /// GPU keeps their builds for the timings at every set.
    fn prepare(&self, a: &Assignment, verify: bool) -> Result<Prepared, Failure> {
        let artifact = self
            .compile(&self.strategy(a))
            .map_err(|e| Failure::of(&e))?;
        if verify {
            self.verify(&artifact, a)?;
        }
        // kernels built once per candidate (and device) for every time set: on CUDA compiled
        // by NVRTC here, on OpenCL by the first timing
        let kernels = self.run.target.is_gpu().then(|| {
            if self.run.target == Target::Cuda {
                self.compile_kernels(&artifact, a);
            }
            Arc::new(GpuBuilds::default())
        });
        Ok(Prepared { artifact, kernels })
    }

    /// Times a verified candidate at the time set `k` on the CUDA device `device`, in its
    /// turn there ([`Turns`]), its kernels loaded once per device and reused, on the inputs
    /// of the set (made once, shared by every candidate).
    fn time_at(&self, built: &Prepared, a: &Assignment, k: usize, device: usize) -> Timed {
        let sizes = self.sizes(&self.time_sets[k], a);
        let reference = self.references.at(&sizes);
        let _turn = self.turns.take(device);
        let kernels = built.kernels.clone().map(Built::Gpu);
        self.run
            .timing_on(&built.artifact, kernels, reference, device)
    }

    /// The evaluation of a verified candidate of its outcome per time set (`None`: not
    /// timed there, a failure).
    fn assemble(&self, times: Vec<Option<Timed>>) -> Evaluation {
        let n = times.len();
        let mut ev = Evaluation {
            failure: None,
            ms: vec![None; n],
            set_failures: vec![None; n],
        };
        for (k, timed) in times.into_iter().enumerate() {
            match timed {
                Some(Timed::Ms { ms, .. }) => ev.ms[k] = Some(ms),
                Some(Timed::NotApplicable) => {}
                Some(Timed::Failed(f)) => ev.set_failures[k] = Some(f),
                None => ev.set_failures[k] = Some(Failure::new("internal error", "not timed")),
            }
        }
        if ev.ms.iter().all(Option::is_none) {
            ev.failure = Some(
                ev.set_failures
                    .iter()
                    .flatten()
                    .next()
                    .cloned()
                    .unwrap_or_else(|| {
                        Failure::new(
                            "not applicable",
                            "no time set satisfies its size constraints",
                        )
                    }),
            );
        }
        ev
    }

    fn failed(&self, failure: Failure) -> Evaluation {
        Evaluation::failed(failure, self.time_sets.len())
    }

    fn request(&self, a: &Assignment, verify: bool, sets: &[usize]) -> Result<Request, Error> {
        Ok(Request::of(self, a, verify, sets))
    }
}

/// The parameters of `space` that are sizes of the program (not named by the template);
/// an error if one is no size of the definition either.
fn size_parameters(
    t: &Tuning,
    space: &ParamSpace,
    program_sizes: &[String],
) -> Result<Vec<String>, Error> {
    let sizes: Vec<String> = space
        .params
        .iter()
        .map(|p| p.name().to_string())
        .filter(|n| !names(&t.template, n))
        .collect();
    match sizes.iter().find(|n| !program_sizes.contains(n)) {
        None => Ok(sizes),
        Some(n) => Err(Phrase::from(Setting::Parameter(n.clone()))
            .then(" names neither a parameter of ")
            .then(Setting::Template)
            .then(format!(
                " `{}` nor a size of `{}` (its sizes: {})",
                t.template,
                t.run.def,
                listed(program_sizes)
            ))
            .into()),
    }
}

/// The size sets candidates are verified at: `nats`, then every `verify_nats` set.
fn verification_sets(t: &Tuning, program_sizes: &[String]) -> Result<Vec<Bindings>, Error> {
    let mut sets: Vec<Bindings> = Vec::new();
    if !t.nats.is_empty() {
        sets.push(t.nats.clone());
    }
    for set in &t.verify_nats {
        t.run
            .check_set_names(Setting::VerifySizes, set, program_sizes)?;
        sets.push(set.clone());
    }
    if sets.is_empty() {
        return Err(Phrase::from("give sizes to verify candidates at (")
            .then(Setting::SearchSizes)
            .then(" or ")
            .then(Setting::VerifySizes)
            .then(")")
            .into());
    }
    Ok(sets)
}

/// The valid assignments of the space, enumerated within [`RAW_LIMIT`] raw ones and the
/// run's time; notes how far the enumeration went.
fn valid_assignments(
    tuner: &Tuner,
    progress: &mut dyn Progress<Record>,
) -> Result<Vec<Assignment>, Error> {
    let space = &tuner.space;
    let deadline = tuner
        .run
        .limits
        .time
        .and_then(|t| Duration::try_from_secs_f64(t).ok())
        .and_then(|t| Instant::now().checked_add(t));
    let e = space.enumerate(RAW_LIMIT, deadline);
    let raw = space.raw_count();
    progress.on_phase(Phase::Note(&format!(
        "{} parameters ({} of them sizes of the program: {}), {raw} raw assignments, {} valid{}",
        space.params.len(),
        tuner.sizes.len(),
        listed(&tuner.sizes),
        e.valid.len(),
        if e.stop.is_some() { " found" } else { "" }
    )));
    let why = match e.stop {
        None => None,
        Some(Stop::ValidLimit) => Some(format!("the first {ENUMERATION_LIMIT} valid ones")),
        Some(Stop::RawLimit) => Some(format!("the limit of {RAW_LIMIT} raw assignments")),
        Some(Stop::Deadline) => Some("the time limit".to_string()),
    };
    if let (Some(why), false) = (&why, e.valid.is_empty()) {
        progress.on_phase(Phase::Note(&format!(
            "the enumeration stopped after {} of {raw} raw assignments ({why}): the search \
             proposes from the valid ones found",
            e.examined
        )));
    }
    if e.valid.is_empty() {
        return Err(match why {
            None => "no assignment of the parameters meets the requirements".to_string(),
            Some(why) => format!(
                "none of the {} raw assignments examined ({why}) meets the requirements",
                e.examined
            ),
        }
        .into());
    }
    Ok(e.valid)
}

/// The header of a tuning's log: what identifies it.
fn header(t: &Tuning, tuner: &Tuner) -> Value {
    log::header(
        &t.run,
        Some(&t.template),
        json!({
            "search": "parameters",
            "params": t.params,
            "requires": t.requires,
            "nats": t.nats,
            "verify_nats": tuner.verify_sets,
            "time_nats": tuner.time_sets,
        }),
    )
}

/// What the search found so far, over every method: the best candidate per time set,
/// the best on every set, the failures by cause and the points of the plot.
struct Tally {
    bests: Vec<Option<Best>>,
    best_all: Option<Best>,
    /// The first time found per set: the scores of the evolutionary search are relative
    /// to them.
    norms: Vec<Option<f64>>,
    causes: BTreeMap<String, usize>,
    points: Vec<Point>,
}

impl Tally {
    fn new(sets: usize) -> Tally {
        Tally {
            bests: vec![None; sets],
            best_all: None,
            norms: vec![None; sets],
            causes: BTreeMap::new(),
            points: Vec::new(),
        }
    }

    /// Counts a candidate, in the tally and in `mine` (its method's best per set);
    /// returns its score for the search (`None`: it failed).
    fn record(&mut self, mine: &mut [Option<Best>], c: &Record) -> Option<f64> {
        let best = |ms: f64| Best {
            ms,
            assignment: c.assignment.clone(),
            method: c.method,
            strategy: c.strategy.clone(),
        };
        let mut score = 0.0;
        for (k, ms) in c.evaluation.ms.iter().enumerate() {
            let Some(ms) = *ms else { continue };
            let norm = *self.norms[k].get_or_insert(ms);
            score += norm / ms;
            for b in [&mut mine[k], &mut self.bests[k]] {
                if b.as_ref().is_none_or(|b| ms < b.ms) {
                    *b = Some(best(ms));
                }
            }
        }
        if let Some(total) = c.evaluation.ms.iter().copied().sum::<Option<f64>>() {
            if self.best_all.as_ref().is_none_or(|b| total < b.ms) {
                self.best_all = Some(best(total));
            }
        }
        let failures = c.evaluation.failure.iter();
        for f in failures.chain(c.evaluation.set_failures.iter().flatten()) {
            count_cause(&mut self.causes, &f.to_string());
        }
        self.points.push(Point {
            method: c.method,
            elapsed_s: c.elapsed_s,
            best_ms: sum_of(mine),
        });
        c.is_valid().then_some(score)
    }
}

/// A tuning in progress: the tuner, its candidates as the pool evaluates them (the tuner's;
/// a test's built and timed with a fake clock) and its evaluator, the space's valid
/// assignments, the tally and the log.
struct Session<'a, S: Candidates<Candidate = Assignment, Evaluation = Evaluation>> {
    tuner: &'a Tuner,
    candidates: &'a S,
    evaluator: Evaluator<'a>,
    counts: Counts,
    valid: Vec<Assignment>,
    tally: Tally,
    log: Option<Log>,
    records: Vec<Record>,
    progress: &'a mut dyn Progress<Record>,
    interrupted: bool,
}

/// Runs a tuning: every method in turn, within the limits; candidates of the log
/// (`resume`) count towards the budget, are not re-run and are ranked with the new ones.
pub fn run(t: &Tuning, progress: &mut dyn Progress<Record>) -> Result<TuningResult, Error> {
    run_with(t, None, progress)
}

/// Runs a tuning as [`run`] does, its candidates measured by the workers of `remote` (a
/// cluster) instead of this host's (`jobs` and `devices` are not used): the database, the
/// methods, the log and the progress stay here.
pub fn run_remote(
    t: &Tuning,
    remote: &dyn Remote,
    progress: &mut dyn Progress<Record>,
) -> Result<TuningResult, Error> {
    run_with(t, Some(remote), progress)
}

fn run_with(
    t: &Tuning,
    remote: Option<&dyn Remote>,
    progress: &mut dyn Progress<Record>,
) -> Result<TuningResult, Error> {
    let tuner = Tuner::new(t)?;
    run_measured(t, &tuner, &tuner, remote, progress)
}

/// Runs the tuning `t` checked as `tuner`, its candidates evaluated as `candidates` say
/// (built and timed on this host) or measured by `remote`.
fn run_measured<S: Candidates<Candidate = Assignment, Evaluation = Evaluation>>(
    t: &Tuning,
    tuner: &Tuner,
    candidates: &S,
    remote: Option<&dyn Remote>,
    progress: &mut dyn Progress<Record>,
) -> Result<TuningResult, Error> {
    let header = header(t, tuner);
    let sets = tuner.time_sets.len();
    let previous: Vec<Record> = match &t.run.resume {
        Some(p) => log::read(p, &header, &mut |m| progress.on_phase(Phase::Note(m)))?
            .iter()
            .map(|v| Record::from_json(v, &tuner.space, sets))
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    let log = match &t.run.log {
        Some(p) => Some(Log::open(p, &header, &mut |m| {
            progress.on_phase(Phase::Note(m))
        })?),
        None => None,
    };
    let valid = valid_assignments(tuner, progress)?;
    let context = match t.run.db {
        Some(_) => Some(pool::context(&t.run, &t.template, remote)?),
        None => None,
    };
    let evaluator = Evaluator::new(candidates, context, remote)?;
    let mut s = Session {
        tuner,
        candidates,
        evaluator,
        counts: Counts::default(),
        valid,
        tally: Tally::new(sets),
        log,
        records: previous.clone(),
        progress,
        interrupted: false,
    };
    let mut summaries = Vec::new();
    for &method in &t.run.methods {
        if s.interrupted {
            break;
        }
        summaries.push(s.method(method, &previous)?);
    }
    // the log's candidates of methods not run now are ranked too
    let mut others: Vec<Option<Best>> = vec![None; sets];
    for r in previous
        .iter()
        .filter(|r| !t.run.methods.contains(&r.method))
    {
        s.tally.record(&mut others, r);
    }
    s.note_database();
    Ok(TuningResult {
        raw_assignments: s.tuner.space.raw_count(),
        valid_assignments: s.valid.len(),
        time_sets: s.tuner.time_sets.clone(),
        size_params: s.tuner.sizes.clone(),
        bests: s.tally.bests,
        best_on_every_set: s.tally.best_all,
        methods: summaries,
        failures_by_cause: s.tally.causes,
        points: s.tally.points,
        records: s.records,
        interrupted: s.interrupted,
        from_database: s.counts.from_database,
        timed: s.counts.timed,
        reference_evaluations: s.tuner.reference_evaluations(),
    })
}

impl<S: Candidates<Candidate = Assignment, Evaluation = Evaluation>> Session<'_, S> {
    /// Runs one method (after its candidates of the log) and summarizes it.
    fn method(&mut self, method: Method, previous: &[Record]) -> Result<MethodSummary, Error> {
        let run = self.tuner.run.clone();
        let sets = self.tuner.time_sets.len();
        let mut search = ParamSearch::new(&self.tuner.space, &self.valid, method, run.seed);
        let mut mine: Vec<Option<Best>> = vec![None; sets];
        let (mut done, mut valid, mut offset) = (0usize, 0usize, 0.0f64);
        for r in previous.iter().filter(|r| r.method == method) {
            let score = self.tally.record(&mut mine, r);
            search.report(&r.assignment, score);
            done += 1;
            valid += score.is_some() as usize;
            offset = offset.max(r.elapsed_s);
        }
        let resumed = done;
        self.progress
            .on_phase(Phase::MethodStarted { method, resumed });
        let start = Instant::now();
        let pipelined = self.evaluator.pipelines(self.candidates);
        let mut staged: Option<Staged<S>> = None;
        'batches: loop {
            // the candidates proposed before and not yet timed count towards the budget
            let in_flight = staged.as_ref().map_or(0, |s| s.batch.len());
            let mut next: Vec<Assignment> = Vec::new();
            if !run.limits.reached(done + in_flight, start) {
                let room = run
                    .limits
                    .budget
                    .map_or(usize::MAX, |b| b.saturating_sub(done + in_flight));
                next = (0..self.evaluator.batch_size().min(room))
                    .map_while(|_| search.propose())
                    .collect();
            }
            let evaluated: Vec<(Assignment, Outcome<Evaluation>)> = if pipelined {
                if next.is_empty() && staged.is_none() {
                    break;
                }
                let (outcomes, now_staged) = self.evaluator.step(
                    self.candidates,
                    staged.take(),
                    next,
                    &mut *self.progress,
                )?;
                staged = now_staged;
                outcomes
            } else {
                if next.is_empty() {
                    break;
                }
                let outcomes =
                    self.evaluator
                        .evaluate(self.candidates, &next, &mut *self.progress)?;
                next.into_iter().zip(outcomes).collect()
            };
            for (a, outcome) in evaluated {
                done += 1;
                self.counts.count(&outcome);
                let record = Record {
                    method,
                    strategy: self.tuner.strategy(&a),
                    assignment: a,
                    evaluation: outcome.evaluation,
                    elapsed_s: offset + start.elapsed().as_secs_f64(),
                    resumed: false,
                };
                let score = self.tally.record(&mut mine, &record);
                search.report(&record.assignment, score);
                valid += score.is_some() as usize;
                log::record(&mut self.log, &record.to_json())?;
                let standing = Standing {
                    done,
                    valid,
                    best_ms: sum_of(&mine),
                };
                let flow = self.progress.on_candidate(&record, &standing);
                self.records.push(record);
                if flow == ControlFlow::Break(()) {
                    self.interrupted = true;
                    break 'batches;
                }
            }
        }
        let summary = self.summary(
            method,
            &search,
            &mine,
            (done - resumed, resumed, valid),
            start,
        );
        self.progress.on_phase(Phase::MethodDone(&summary));
        Ok(summary)
    }

    /// Tells how many candidates came from the tuning database (with one).
    fn note_database(&mut self) {
        let n = self.records.iter().filter(|r| !r.resumed).count();
        if let Some(note) = self.evaluator.database_note(n, self.counts) {
            self.progress.on_phase(Phase::Note(&note));
        }
    }

    /// The summary of a method: `counts` are its new, resumed and valid candidates.
    fn summary(
        &self,
        method: Method,
        search: &ParamSearch,
        mine: &[Option<Best>],
        (candidates, resumed, valid): (usize, usize, usize),
        start: Instant,
    ) -> MethodSummary {
        let final_sum = sum_of(mine);
        let t90 = final_sum.and_then(|f| {
            self.tally
                .points
                .iter()
                .filter(|p| p.method == method)
                .find(|p| p.best_ms.is_some_and(|s| s <= f / 0.9))
                .map(|p| p.elapsed_s)
        });
        MethodSummary {
            method,
            candidates,
            resumed,
            valid,
            best_ms: final_sum,
            seconds: start.elapsed().as_secs_f64(),
            time_to_90pct_best_s: t90,
            random_draws: (method == Method::Random && search.draws > 0)
                .then_some((search.draws, search.valid_draws)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Limits;

    const PROGRAM: &str = "def scale2d = fun (a: f32) m => \
                           m |> map (fun row => row |> map (fun x => x * a))";
    const STRATEGY: &str = "def splitOuter(s) = DFNF ; splitJoinMap(s) @ outermost(appliedMap) \
                            ;; DFNF ; lowerToC";

    /// What ran: `(building?, device, s, start, end)`.
    type Span = (bool, usize, i64, Instant, Instant);

    /// Builds and times with a clock of its own: a build takes 4 ms and fails for `s`
    /// divisible by 5, a timing takes 3 ms and gives `s` ms at set 0, `20 - s` at set 1.
    struct FakeClock {
        overlaps: bool,
        spans: Mutex<Vec<Span>>,
    }

    impl FakeClock {
        fn new(overlaps: bool) -> FakeClock {
            FakeClock {
                overlaps,
                spans: Mutex::new(Vec::new()),
            }
        }

        fn span(&self, building: bool, device: usize, a: &Assignment, ms: u64) -> i64 {
            let start = Instant::now();
            std::thread::sleep(Duration::from_millis(ms));
            let s = a[0].1;
            let end = Instant::now();
            self.spans
                .lock()
                .unwrap()
                .push((building, device, s, start, end));
            s
        }

        fn build(&self, a: &Assignment) -> Result<i64, Failure> {
            match self.span(true, usize::MAX, a, 4) {
                s if s % 5 == 0 => Err(Failure::new("compile error", "a fake failure")),
                s => Ok(s),
            }
        }

        fn time(&self, built: &i64, a: &Assignment, k: usize, device: usize) -> Timed {
            assert_eq!(self.span(false, device, a, 3), *built);
            Timed::Ms {
                ms: if k == 0 {
                    *built as f64
                } else {
                    20.0 - *built as f64
                },
                runs: 1,
            }
        }
    }

    /// A tuner's candidates, built and timed by a fake clock.
    struct Clocked<'a> {
        tuner: &'a Tuner,
        clock: &'a FakeClock,
    }

    impl Candidates for Clocked<'_> {
        type Candidate = Assignment;
        type Built = i64;
        type Evaluation = Evaluation;

        fn run(&self) -> &Run {
            &self.tuner.run
        }

        fn key(&self, a: &Assignment) -> String {
            self.tuner.key(a)
        }

        fn verify_sets(&self) -> &[Bindings] {
            &self.tuner.verify_sets
        }

        fn time_sets(&self) -> &[Bindings] {
            &self.tuner.time_sets
        }

        fn overlaps_timing(&self) -> bool {
            self.clock.overlaps
        }

        fn prepare(&self, a: &Assignment, _verify: bool) -> Result<i64, Failure> {
            self.clock.build(a)
        }

        fn time_at(&self, built: &i64, a: &Assignment, k: usize, device: usize) -> Timed {
            self.clock.time(built, a, k, device)
        }

        fn assemble(&self, times: Vec<Option<Timed>>) -> Evaluation {
            self.tuner.assemble(times)
        }

        fn failed(&self, failure: Failure) -> Evaluation {
            self.tuner.failed(failure)
        }

        fn request(&self, a: &Assignment, verify: bool, sets: &[usize]) -> Result<Request, Error> {
            self.tuner.request(a, verify, sets)
        }
    }

    fn tuning(method: Method, budget: usize) -> Tuning {
        let set = |n: i64| vec![("n".to_string(), n), ("m".to_string(), 4)];
        let mut run = Run::new(
            SourceFile::new("scale.rise", PROGRAM),
            "scale2d",
            Target::Cuda,
        );
        run.strategy = Some(SourceFile::new("split.elv", STRATEGY));
        run.methods = vec![method];
        run.limits = Limits {
            budget: Some(budget),
            time: None,
        };
        run.jobs = 3;
        run.devices = vec![0, 1];
        run.seed = 7;
        Tuning {
            run,
            template: "splitOuter(s)".into(),
            params: vec![format!(
                "s={}",
                (1..=19)
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            )],
            requires: vec![],
            nats: set(8),
            verify_nats: vec![],
            time_nats: vec![set(8), set(12)],
        }
    }

    /// Counts candidates and stops after `stop_after` of them, if given.
    struct Quiet {
        seen: usize,
        stop_after: Option<usize>,
    }

    impl Progress<Record> for Quiet {
        fn on_phase(&mut self, _: Phase<'_>) {}
        fn on_candidate(&mut self, _: &Record, _: &Standing) -> ControlFlow<()> {
            self.seen += 1;
            match self.stop_after {
                Some(n) if self.seen >= n => ControlFlow::Break(()),
                _ => ControlFlow::Continue(()),
            }
        }
    }

    fn run_with_clock(t: &Tuning, clock: &FakeClock, stop_after: Option<usize>) -> TuningResult {
        let tuner = Tuner::new(t).expect("a valid tuning");
        let mut quiet = Quiet {
            seen: 0,
            stop_after,
        };
        let clocked = Clocked {
            tuner: &tuner,
            clock,
        };
        run_measured(t, &tuner, &clocked, None, &mut quiet).expect("the tuning runs")
    }

    /// The records as the log writes them, without the seconds.
    fn logged(result: &TuningResult) -> Vec<Value> {
        result
            .records
            .iter()
            .map(|r| {
                let mut v = r.to_json();
                v["elapsed_s"] = json!(null);
                v
            })
            .collect()
    }

    #[test]
    fn pipelined_batches_give_the_records_of_batches_one_after_the_other() {
        for method in [Method::Solver, Method::Random] {
            let t = tuning(method, 11);
            let one_after = run_with_clock(&t, &FakeClock::new(false), None);
            let pipelined = run_with_clock(&t, &FakeClock::new(true), None);
            assert_eq!(logged(&pipelined).len(), 11, "{method}: the budget");
            assert_eq!(logged(&pipelined), logged(&one_after), "{method}");
            assert_eq!(pipelined.bests, one_after.bests, "{method}");
            assert_eq!(pipelined.failures_by_cause, one_after.failures_by_cause);
            assert_eq!(
                (pipelined.timed, pipelined.interrupted),
                (one_after.timed, false)
            );
        }
    }

    #[test]
    fn the_pipelined_evolutionary_search_is_deterministic_for_a_seed() {
        let t = tuning(Method::Evolutionary, 13);
        let first = run_with_clock(&t, &FakeClock::new(true), None);
        let second = run_with_clock(&t, &FakeClock::new(true), None);
        assert_eq!(logged(&first).len(), 13);
        assert_eq!(logged(&first), logged(&second));
    }

    #[test]
    fn builds_overlap_timing_and_a_device_times_one_candidate_at_a_time() {
        let t = tuning(Method::Solver, 12);
        let clock = FakeClock::new(true);
        let result = run_with_clock(&t, &clock, None);
        assert_eq!(result.records.len(), 12);
        let spans = clock.spans.into_inner().unwrap();
        let overlap = |a: &Span, b: &Span| a.3 < b.4 && b.3 < a.4;
        let (builds, timings): (Vec<&Span>, Vec<&Span>) = spans.iter().partition(|s| s.0);
        assert_eq!(builds.len(), 12, "each candidate built once");
        // two time sets per candidate that built (s = 5 and 10 and 15 fail)
        let built_ok = builds.iter().filter(|b| b.2 % 5 != 0).count();
        assert_eq!(timings.len(), 2 * built_ok);
        assert!(
            builds.iter().any(|b| timings.iter().any(|x| overlap(b, x))),
            "no build ran while a candidate was timed"
        );
        for x in &timings {
            let build = builds.iter().find(|b| b.2 == x.2).expect("built");
            assert!(build.4 <= x.3, "s={} timed before it was built", x.2);
            for y in &timings {
                if x.2 != y.2 && x.1 == y.1 {
                    assert!(
                        !overlap(x, y),
                        "device {} timed two candidates at once",
                        x.1
                    );
                }
            }
        }
    }

    #[test]
    fn a_pipelined_run_stops_when_its_progress_says_so() {
        let t = tuning(Method::Solver, 12);
        let result = run_with_clock(&t, &FakeClock::new(true), Some(4));
        assert!(result.interrupted);
        assert_eq!(result.records.len(), 4);
    }

    #[test]
    fn a_pipelined_run_resumes_from_its_log() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let log = dir.path().join("run.jsonl");
        let mut t = tuning(Method::Solver, 5);
        t.run.log = Some(log.clone());
        let first = run_with_clock(&t, &FakeClock::new(true), None);
        t.run.resume = Some(log.clone());
        t.run.log = Some(dir.path().join("more.jsonl"));
        t.run.limits.budget = Some(9);
        let clock = FakeClock::new(true);
        let resumed = run_with_clock(&t, &clock, None);
        assert_eq!(resumed.records.len(), 9);
        assert!(resumed.records[..5].iter().all(|r| r.resumed));
        assert_eq!(logged(&resumed)[..5], logged(&first)[..]);
        let built = clock
            .spans
            .into_inner()
            .unwrap()
            .iter()
            .filter(|s| s.0)
            .count();
        assert_eq!(built, 4, "only the new candidates are built");
        let whole = run_with_clock(&tuning(Method::Solver, 9), &FakeClock::new(true), None);
        assert_eq!(logged(&resumed), logged(&whole));
    }

    #[test]
    fn turns_on_a_device_are_taken_one_at_a_time_in_order() {
        let turns = Turns::default();
        let order = Mutex::new(Vec::new());
        let first = turns.take(0);
        let other_device = turns.take(1); // another device's turn does not wait
        std::thread::scope(|scope| {
            for n in 1..=3 {
                let (turns, order) = (&turns, &order);
                scope.spawn(move || {
                    let _turn = turns.take(0);
                    order.lock().unwrap().push(n);
                    std::thread::sleep(Duration::from_millis(2));
                    order.lock().unwrap().push(n);
                });
                // each asks after the one before it
                while turns.tickets.lock().unwrap()[&0].0 <= n as u64 {
                    std::thread::yield_now();
                }
            }
            std::thread::sleep(Duration::from_millis(5));
            assert!(
                order.lock().unwrap().is_empty(),
                "a turn was taken while held"
            );
            drop(first);
        });
        drop(other_device);
        assert_eq!(order.into_inner().unwrap(), vec![1, 1, 2, 2, 3, 3]);
    }
}
