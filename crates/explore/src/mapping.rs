//! The mapping search (CC'22; `shine explore` without `--param`).
//!
//! Every candidate the search proposes is an ELEVATE strategy; it is compiled like
//! `shine run --strategy F --apply candidate`, verified against the interpreter at the
//! `nats` sizes, then timed at every time size set (the layers of a network, say; the
//! time of a candidate is the sum of their medians). Failures are counted by cause.
//! Several methods run one after the other, each with the same budget ([`run`]); the
//! candidates of a method are evaluated in batches by the pool the tuning uses too (the
//! database, the workers, the devices: [`Run::db`], [`Run::jobs`], [`Run::devices`]), each
//! batch timed once it is built (not pipelined, as a tuning's batches are on CUDA).
//! [`check_constraints`] compares the solver's set with what compiles and verifies.

use crate::constraints::{count_by_family, Constraint, Family, Options};
use crate::engine::{
    count_cause, min_time, show, Error, Failure, MethodSummary, Phase, Progress, Run, Standing,
};
use crate::log::{self, Log};
use crate::pool::{self, Candidates, Counts, Evaluator};
use crate::remote::Request;
use crate::search::{Method, Proposal, Searcher};
use crate::shared::References;
use crate::strategy::{self, Flavor, StrategyFile};
use crate::tune::method_of_log;
use crate::tunedb::Timed;
use crate::tuning::Bindings;
use crate::{Candidate, Problem, Space};
use serde_json::{json, Value};
use shine::{Artifact, Phrase, Setting, SourceFile, Target};
use std::collections::{BTreeMap, HashMap};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// A mapping search: the run, the middle strategy, the size sets and the constraints.
#[derive(Clone, Debug)]
pub struct Search {
    /// The program, target, methods, budget and log.
    pub run: Run,
    /// The middle strategy applied before mapping (`None`: `DFNF`).
    pub apply: Option<String>,
    /// The sizes candidates are verified at.
    pub nats: Bindings,
    /// The size sets candidates are timed at (empty: `nats`).
    pub time_nats: Vec<Bindings>,
    /// Parallel dimensions offered (1 to 3).
    pub dims: i32,
    /// The paper's families 1-7 only.
    pub paper_constraints: bool,
    /// Add the sequential-fusion heuristic (rule 8).
    pub fusion_heuristic: bool,
    /// Stop timing a candidate once its time so far exceeds this (ms).
    pub cutoff: Option<f64>,
}

impl Search {
    /// A search of `run` verified at `nats`: three dimensions, shine's constraints.
    pub fn new(run: Run, nats: Bindings) -> Search {
        Search {
            run,
            apply: None,
            nats,
            time_nats: Vec::new(),
            dims: 3,
            paper_constraints: false,
            fusion_heuristic: false,
            cutoff: None,
        }
    }

    /// The size sets candidates are timed at.
    pub fn time_sets(&self) -> Vec<Bindings> {
        if self.time_nats.is_empty() {
            vec![self.nats.clone()]
        } else {
            self.time_nats.clone()
        }
    }

    /// The constraint families and the flavor of parallel maps for the target.
    fn options(&self) -> (Options, Flavor) {
        let mut o = if self.paper_constraints {
            Options::paper()
        } else {
            Options::shine()
        };
        o.dims = self.dims.clamp(1, 3);
        if self.fusion_heuristic {
            o.families.push(Family::SequentialFusion);
        }
        match self.run.target {
            Target::OpenMp | Target::C => {
                o.work_groups = false;
                o.dims = 1;
                (o, Flavor::OpenMp)
            }
            Target::Cuda => (o, Flavor::Cuda),
            Target::OpenCl => (o, Flavor::OpenCl),
        }
    }

    /// The header of the search's log: what identifies it.
    fn header(&self) -> Value {
        log::header(
            &self.run,
            self.apply.as_deref(),
            json!({
                "search": "mappings",
                "nats": self.nats,
                "time_nats": self.time_sets(),
                "dims": self.dims,
                "paper_constraints": self.paper_constraints,
                "fusion_heuristic": self.fusion_heuristic,
            }),
        )
    }
}

/// One candidate, evaluated in this run or read from the log: a line of the log.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The method that proposed it.
    pub method: Method,
    /// Its split sizes and mapping.
    pub candidate: Candidate,
    /// Its time (the sum over the time sets), if it compiled, verified and ran.
    pub ms: Option<f64>,
    /// Why it failed.
    pub failure: Option<Failure>,
    /// Raw assignments drawn to find it (the random search).
    pub draws: usize,
    /// Seconds into its method's search (the log's included).
    pub elapsed_s: f64,
    /// The definitions it adds to the user's strategy file (`def candidate = ...`).
    pub strategy: String,
    /// Whether it was read from the log.
    pub resumed: bool,
    /// Its maps in words, as [`crate::Problem::describe`] writes them (empty where the
    /// splits could not be applied).
    pub in_words: String,
}

impl Record {
    /// The record as a line of the log.
    pub fn to_json(&self) -> Value {
        json!({
            "method": self.method.name(),
            "splits": self.candidate.splits,
            "mapping": self.candidate.mapping,
            "ms": self.ms,
            "failure": self.failure.as_ref().map(ToString::to_string),
            "draws": self.draws,
            "elapsed_s": self.elapsed_s,
            "strategy": self.strategy,
            "in_words": self.in_words,
        })
    }

    /// A line of the log.
    pub fn from_json(v: &Value) -> Result<Record, Error> {
        let ints = |k: &str| -> Result<Vec<i64>, Error> {
            v[k].as_array()
                .and_then(|a| a.iter().map(|x| x.as_i64()).collect::<Option<Vec<_>>>())
                .ok_or_else(|| Error::from(format!("a record of the log has no `{k}`: {v}")))
        };
        let mapping = ints("mapping")?
            .into_iter()
            .map(|x| i32::try_from(x).map_err(|_| Error::from(format!("a bad mapping: {v}"))))
            .collect::<Result<_, _>>()?;
        Ok(Record {
            method: method_of_log(v)?,
            candidate: Candidate {
                splits: ints("splits")?,
                mapping,
            },
            ms: v["ms"].as_f64(),
            failure: v["failure"].as_str().map(Failure::parse),
            draws: 0,
            elapsed_s: v["elapsed_s"].as_f64().unwrap_or(0.0),
            strategy: v["strategy"].as_str().unwrap_or("").to_string(),
            resumed: true,
            in_words: v["in_words"].as_str().unwrap_or("").to_string(),
        })
    }
}

/// The statistics of the unsplit space (the paper's figures).
#[derive(Clone, Debug, PartialEq)]
pub struct SpaceStats {
    /// Maps of the middle program.
    pub maps: usize,
    /// Constraints by family (`"1 ..."`).
    pub constraints: BTreeMap<String, usize>,
    /// Split sizes allowed per map.
    pub split_domains: Vec<Vec<i64>>,
}

/// What a mapping search found.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// The statistics of the unsplit space.
    pub stats: SpaceStats,
    /// Every candidate: the log's first, then each method's new ones.
    pub records: Vec<Record>,
    /// The summary of each method run.
    pub methods: Vec<MethodSummary>,
    /// Failures by cause (the log's included).
    pub failures_by_cause: BTreeMap<String, usize>,
    /// Whether the progress stopped the run early.
    pub interrupted: bool,
    /// Candidates of this run whose every outcome came from the tuning database (nothing
    /// compiled, verified or timed).
    pub from_database: usize,
    /// Candidates of this run timed now (at one size set or more).
    pub timed: usize,
}

impl SearchResult {
    /// The candidates that ran, fastest first.
    pub fn ranked(&self) -> Vec<&Record> {
        let mut ok: Vec<&Record> = self.records.iter().filter(|r| r.ms.is_some()).collect();
        ok.sort_by(|a, b| {
            a.ms.unwrap_or(f64::MAX)
                .total_cmp(&b.ms.unwrap_or(f64::MAX))
        });
        ok
    }
}

/// A search prepared: the problem, the size sets and how candidates are evaluated.
pub struct Mapper {
    run: Run,
    problem: Problem,
    /// The one set candidates are verified at (`nats`).
    verify_sets: Vec<Bindings>,
    time_sets: Vec<Bindings>,
    cutoff: Option<f64>,
    counter: AtomicUsize,
    /// The mapping spaces of the split sizes seen (the splits applied once).
    spaces: Mutex<HashMap<Vec<i64>, Result<Space, String>>>,
    /// The inputs and the interpreter's references at each size set, shared by every
    /// candidate.
    references: References,
}

impl Mapper {
    /// Checks a search (the program, the size sets' names) and prepares its problem (the
    /// middle strategy applied).
    pub fn new(s: &Search) -> Result<Mapper, Error> {
        s.run.check_workers()?;
        let (prepared, sizes) = s.run.prepare()?;
        s.run
            .check_set_names(Setting::SearchSizes, &s.nats, &sizes)?;
        for set in &s.time_nats {
            s.run.check_set_names(Setting::TimeSizes, set, &sizes)?;
        }
        let time_sets = s.time_sets();
        let mut all_sets = time_sets.clone();
        all_sets.push(s.nats.clone());
        let (options, flavor) = s.options();
        let problem = Problem::new(
            StrategyFile {
                user: s.run.user_strategy().to_string(),
            },
            s.apply.as_deref().unwrap_or("DFNF"),
            prepared.body,
            flavor,
            options,
            all_sets,
            dpia::gpu::MAX_WORK_GROUP_SIZE,
            s.run.rewrite_budget,
        )
        .map_err(|e| Error::from(format!("cannot prepare the search: {e}")))?;
        Ok(Mapper {
            run: s.run.clone(),
            problem,
            verify_sets: vec![s.nats.clone()],
            time_sets,
            cutoff: s.cutoff,
            counter: AtomicUsize::new(0),
            spaces: Mutex::new(HashMap::new()),
            references: References::new(&s.run.program, &s.run.def, s.run.seed),
        })
    }

    /// A candidate's maps in words ([`Problem::describe`]); empty where its splits cannot be
    /// applied.
    pub fn describe(&self, c: &Candidate) -> String {
        self.space(&c.splits)
            .and_then(|space| strategy::in_words(&space.tree, &c.mapping, self.problem.flavor))
            .unwrap_or_default()
    }

    /// The problem searched.
    pub fn problem(&self) -> &Problem {
        &self.problem
    }

    /// The mapping space of split sizes (built once).
    fn space(&self, splits: &[i64]) -> Result<Space, String> {
        let known = self.spaces.lock().ok().and_then(|m| m.get(splits).cloned());
        if let Some(space) = known {
            return space;
        }
        let space = self.problem.space(splits);
        if let Ok(mut m) = self.spaces.lock() {
            m.insert(splits.to_vec(), space.clone());
        }
        space
    }

    /// The definitions a candidate adds to the user's strategy file (`def candidate = ...`).
    fn definitions(&self, c: &Candidate) -> Result<String, Failure> {
        self.space(&c.splits)
            .and_then(|space| self.problem.strategy(&space, &c.mapping, "candidate"))
            .map_err(|e| Failure::new("rewrite", e))
    }

    /// Compiles the candidate of the definitions `defs` and, if `verify`, verifies it at
    /// the `nats` sizes.
    fn build(&self, defs: &str, verify: bool) -> Result<Artifact, Failure> {
        let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        let file = SourceFile::new(format!("c{n}.elv"), self.problem.file.with(defs));
        let artifact = self
            .run
            .compile_candidate(file)
            .map_err(|e| Failure::of(&e))?;
        if verify {
            let reference = self.references.at(&self.verify_sets[0]);
            self.run
                .verify_on(&artifact, reference)
                .map_err(|e| Failure::of(&e))?;
        }
        Ok(artifact)
    }

    /// Evaluates one candidate: compiles and verifies it, and unless `verify_only`,
    /// times it at every time set (the sum of the medians, or "too slow" past the
    /// cutoff) on the first of the run's devices. Returns its time, or why it failed, and
    /// its definitions.
    pub fn evaluate_candidate(
        &self,
        c: &Candidate,
        verify_only: bool,
    ) -> (Result<Option<f64>, Failure>, String) {
        let defs = match self.definitions(c) {
            Ok(defs) => defs,
            Err(f) => return (Err(f), String::new()),
        };
        let artifact = match self.build(&defs, true) {
            Ok(artifact) => artifact,
            Err(f) => return (Err(f), defs),
        };
        if verify_only {
            return (Ok(None), defs);
        }
        let device = self.run.devices.first().copied().unwrap_or(0);
        let ms = pool::time_alone(self, c, &artifact, device);
        (ms.map(Some), defs)
    }

    /// What the tuning database keys this search's candidates under, besides the program,
    /// strategy file, target and device: the middle strategy the mappings follow.
    fn database_template(&self) -> String {
        format!("mappings after `{}`", self.problem.mid)
    }

    /// The statistics of the unsplit space; notes them.
    fn space_statistics(&self, progress: &mut dyn Progress<Record>) -> Result<SpaceStats, Error> {
        let splits = vec![1; self.problem.base_tree().maps.len()];
        let base = self.problem.space(&splits)?;
        let constraints = families(&base.constraints);
        progress.on_phase(Phase::Note(&format!(
            "{} maps, {} constraints ({}), split sizes per map: {:?}",
            base.tree.maps.len(),
            base.constraints.len(),
            constraints
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect::<Vec<_>>()
                .join(", "),
            self.problem.split_domains()
        )));
        Ok(SpaceStats {
            maps: base.tree.maps.len(),
            constraints,
            split_domains: self.problem.split_domains().to_vec(),
        })
    }
}

/// The pool evaluates a mapping search's candidates: each compiled once, verified at the
/// `nats` sizes, timed at every time set until one fails or the cutoff is passed; its time
/// is the sum over the sets. A batch is timed once it is built, on every target: the search
/// does not pipeline its batches as a tuning on CUDA does (it proposes each batch from the
/// scores of the batches before, and its verifications on a GPU take no turns).
impl Candidates for Mapper {
    type Candidate = Candidate;
    type Built = Artifact;
    type Evaluation = Result<f64, Failure>;

    fn run(&self) -> &Run {
        &self.run
    }

    /// `splits=1,4 mapping=30,0,21`.
    fn key(&self, c: &Candidate) -> String {
        let list = |xs: Vec<String>| xs.join(",");
        format!(
            "splits={} mapping={}",
            list(c.splits.iter().map(ToString::to_string).collect()),
            list(c.mapping.iter().map(ToString::to_string).collect())
        )
    }

    fn verify_sets(&self) -> &[Bindings] {
        &self.verify_sets
    }

    fn time_sets(&self) -> &[Bindings] {
        &self.time_sets
    }

    fn prepare(&self, c: &Candidate, verify: bool) -> Result<Artifact, Failure> {
        self.build(&self.definitions(c)?, verify)
    }

    fn time_at(&self, artifact: &Artifact, _: &Candidate, k: usize, device: usize) -> Timed {
        let reference = self.references.at(&self.time_sets[k]);
        self.run.timing_on(artifact, None, reference, device)
    }

    /// A failure at a set decides a mapping, and so does a time past the cutoff.
    fn settled(&self, times: &[Option<Timed>]) -> bool {
        let failed = times
            .iter()
            .flatten()
            .any(|t| !matches!(t, Timed::Ms { .. }));
        failed || self.cutoff.is_some_and(|c| total_ms(times) > c)
    }

    fn assemble(&self, times: Vec<Option<Timed>>) -> Result<f64, Failure> {
        for (set, t) in self.time_sets.iter().zip(&times) {
            match t {
                Some(Timed::Failed(f)) => return Err(f.clone()),
                Some(Timed::NotApplicable) => {
                    return Err(Failure::new(
                        "not applicable",
                        format!(
                            "the sizes {} break a size constraint of its code",
                            show(set)
                        ),
                    ))
                }
                _ => {}
            }
        }
        let total = total_ms(&times);
        if self.cutoff.is_some_and(|c| total > c) {
            let detail = format!("over {total:.3} ms after some size sets");
            return Err(Failure::new("too slow", detail));
        }
        match self.time_sets.iter().zip(&times).find(|(_, t)| t.is_none()) {
            Some((set, _)) => Err(Failure::new(
                "internal error",
                format!("not timed at {}", show(set)),
            )),
            None => Ok(total),
        }
    }

    fn failed(&self, failure: Failure) -> Result<f64, Failure> {
        Err(failure)
    }

    fn request(&self, _: &Candidate, _: bool, _: &[usize]) -> Result<Request, Error> {
        Err(
            "a mapping search measures its candidates on this host: a cluster measures a \
             tuning's only"
                .into(),
        )
    }
}

/// The sum of the times measured.
fn total_ms(times: &[Option<Timed>]) -> f64 {
    times
        .iter()
        .flatten()
        .map(|t| match t {
            Timed::Ms { ms, .. } => *ms,
            _ => 0.0,
        })
        .sum()
}

/// Constraints counted by family, named `"1 name"`.
fn families(constraints: &[Constraint]) -> BTreeMap<String, usize> {
    count_by_family(constraints)
        .into_iter()
        .map(|(f, n)| (format!("{} {}", f.number(), f.name()), n))
        .collect()
}

/// Runs a mapping search: every method in turn, within the limits; candidates of the
/// log (`resume`) count towards the budget, are not re-run and are ranked with the new.
/// With a database (`Run::db`), candidates it knows are not compiled, verified or timed
/// again; the run's workers (`Run::jobs`) compile and verify a batch at once, its CUDA
/// devices (`Run::devices`) time one candidate each.
pub fn run(s: &Search, progress: &mut dyn Progress<Record>) -> Result<SearchResult, Error> {
    s.run.limits.require()?;
    let mapper = Mapper::new(s)?;
    let stats = mapper.space_statistics(progress)?;
    let header = s.header();
    let mut previous: Vec<Record> = match &s.run.resume {
        Some(p) => log::read(p, &header, &mut |m| progress.on_phase(Phase::Note(m)))?
            .iter()
            .map(Record::from_json)
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    // logs written before records had their words
    for r in previous.iter_mut().filter(|r| r.in_words.is_empty()) {
        r.in_words = mapper.describe(&r.candidate);
    }
    let mut log = match &s.run.log {
        Some(p) => Some(Log::open(p, &header, &mut |m| {
            progress.on_phase(Phase::Note(m))
        })?),
        None => None,
    };
    let mut causes: BTreeMap<String, usize> = BTreeMap::new();
    for f in previous.iter().filter_map(|r| r.failure.as_ref()) {
        count_cause(&mut causes, &f.to_string());
    }
    let context = match s.run.db {
        Some(_) => Some(pool::context(&s.run, &mapper.database_template(), None)?),
        None => None,
    };
    let evaluator = Evaluator::new(&mapper, context, None)?;
    let mut session = Session {
        mapper: &mapper,
        evaluator,
        counts: Counts::default(),
        log: &mut log,
        progress,
        causes,
        interrupted: false,
    };
    let mut records = previous.clone();
    let mut summaries = Vec::new();
    for &method in &s.run.methods {
        if session.interrupted {
            break;
        }
        let (summary, new) = session.method(method, &previous)?;
        summaries.push(summary);
        records.extend(new);
    }
    let evaluated = records.len() - previous.len();
    if let Some(note) = session.evaluator.database_note(evaluated, session.counts) {
        session.progress.on_phase(Phase::Note(&note));
    }
    Ok(SearchResult {
        stats,
        records,
        methods: summaries,
        failures_by_cause: session.causes,
        interrupted: session.interrupted,
        from_database: session.counts.from_database,
        timed: session.counts.timed,
    })
}

/// A mapping search in progress.
struct Session<'a> {
    mapper: &'a Mapper,
    evaluator: Evaluator<'a>,
    counts: Counts,
    log: &'a mut Option<Log>,
    progress: &'a mut dyn Progress<Record>,
    causes: BTreeMap<String, usize>,
    interrupted: bool,
}

impl Session<'_> {
    /// Runs one method after its candidates of the log; its summary and new records.
    fn method(
        &mut self,
        method: Method,
        previous: &[Record],
    ) -> Result<(MethodSummary, Vec<Record>), Error> {
        let run = self.mapper.run.clone();
        let resumed: Vec<&Record> = previous.iter().filter(|r| r.method == method).collect();
        let mut searcher = Searcher::new(method, run.seed);
        for r in &resumed {
            searcher.report(&r.candidate, r.ms.map(|t| 1.0 / t));
        }
        // the search time goes on from where the log's left off
        let offset = resumed.iter().map(|r| r.elapsed_s).fold(0.0, f64::max);
        let resumed_count = resumed.len();
        let mut mine: Vec<Record> = resumed.into_iter().cloned().collect();
        self.progress.on_phase(Phase::MethodStarted {
            method,
            resumed: resumed_count,
        });
        let start = Instant::now();
        'batches: while !run.limits.reached(mine.len(), start) {
            let room = run
                .limits
                .budget
                .map_or(usize::MAX, |b| b.saturating_sub(mine.len()));
            let batch: Vec<Proposal> = (0..self.evaluator.batch_size().min(room))
                .map_while(|_| searcher.next(&self.mapper.problem))
                .collect();
            if batch.is_empty() {
                break;
            }
            let candidates: Vec<Candidate> = batch.iter().map(|p| p.candidate.clone()).collect();
            let outcomes =
                self.evaluator
                    .evaluate(self.mapper, &candidates, &mut *self.progress)?;
            for (prop, outcome) in batch.into_iter().zip(outcomes) {
                self.counts.count(&outcome);
                let ms = outcome.evaluation.as_ref().ok().copied();
                searcher.report(&prop.candidate, ms.map(|t| 1.0 / t));
                let failure = outcome.evaluation.err();
                if let Some(f) = &failure {
                    count_cause(&mut self.causes, &f.to_string());
                }
                let record = Record {
                    method,
                    strategy: self.mapper.definitions(&prop.candidate).unwrap_or_default(),
                    in_words: self.mapper.describe(&prop.candidate),
                    candidate: prop.candidate,
                    ms,
                    failure,
                    draws: prop.draws,
                    elapsed_s: offset + start.elapsed().as_secs_f64(),
                    resumed: false,
                };
                log::record(self.log, &record.to_json())?;
                mine.push(record);
                let flow = self
                    .progress
                    .on_candidate(&mine[mine.len() - 1], &standing(&mine));
                if flow == ControlFlow::Break(()) {
                    self.interrupted = true;
                    break 'batches;
                }
            }
        }
        let summary = summary(method, &searcher, &mine, resumed_count, start);
        self.progress.on_phase(Phase::MethodDone(&summary));
        let new = mine.split_off(resumed_count);
        Ok((summary, new))
    }
}

/// How a method stands: its candidates, the valid ones and the best time.
fn standing(rows: &[Record]) -> Standing {
    Standing {
        done: rows.len(),
        valid: rows.iter().filter(|r| r.ms.is_some()).count(),
        best_ms: min_time(rows.iter().filter_map(|r| r.ms)),
    }
}

/// The summary of one method: `rows` are its candidates, resumed and new (`resumed` of
/// them from the log), the new ones evaluated since `start`.
fn summary(
    method: Method,
    searcher: &Searcher,
    rows: &[Record],
    resumed: usize,
    start: Instant,
) -> MethodSummary {
    let best = min_time(rows.iter().filter_map(|r| r.ms));
    let t90 = best.and_then(|best| {
        rows.iter()
            .find(|r| r.ms.is_some_and(|m| m <= best / 0.9))
            .map(|r| r.elapsed_s)
    });
    MethodSummary {
        method,
        candidates: rows.len() - resumed,
        resumed,
        valid: rows.iter().filter(|r| r.ms.is_some()).count(),
        best_ms: best,
        seconds: start.elapsed().as_secs_f64(),
        time_to_90pct_best_s: t90,
        random_draws: (method == Method::Random && searcher.draws > 0)
            .then_some((searcher.draws, searcher.valid_draws)),
    }
}

/// The most raw assignments [`check_constraints`] compiles and verifies.
pub const CHECK_LIMIT: usize = 4096;

/// What [`check_constraints`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckReport {
    /// Maps of the unsplit program.
    pub maps: usize,
    /// Its raw assignments.
    pub raw: usize,
    /// Of which compiled and verified (within the limits).
    pub checked: usize,
    /// Mappings the solver admits.
    pub solver_valid: usize,
    /// Checked mappings that compiled and verified.
    pub compiled_and_verified: usize,
    /// Mappings the solver admits that failed, and why.
    pub valid_but_failed: Vec<(Vec<i32>, Failure)>,
    /// Mappings that work but the solver excludes.
    pub works_but_excluded: Vec<Vec<i32>>,
    /// Failures by cause.
    pub failures_by_cause: BTreeMap<String, usize>,
    /// Constraints by family.
    pub constraints: BTreeMap<String, usize>,
}

impl CheckReport {
    /// Whether every raw assignment was checked.
    pub fn complete(&self) -> bool {
        self.checked == self.raw
    }
}

/// Compiles and verifies every raw assignment of the unsplit program (at most
/// [`CHECK_LIMIT`], and within the limits); compares the set that works with the
/// solver's.
pub fn check_constraints(
    s: &Search,
    progress: &mut dyn Progress<Record>,
) -> Result<CheckReport, Error> {
    s.run
        .refuse_database_and_workers(Setting::CheckConstraints)?;
    let mapper = Mapper::new(s)?;
    let splits = vec![1; mapper.problem.base_tree().maps.len()];
    let space = mapper.problem.space(&splits)?;
    let n = space.tree.maps.len();
    let raw_count = u32::try_from(n)
        .ok()
        .and_then(|n| space.domain.len().checked_pow(n))
        .filter(|&r| r <= CHECK_LIMIT)
        .ok_or_else(|| {
            Error::from(Phrase::from(Setting::CheckConstraints).then(format!(
                " compiles every raw assignment: {n} maps of {} choices each are more than \
                 {CHECK_LIMIT}; check a smaller program (or search one dimension of \
                 parallelism)",
                space.domain.len()
            )))
        })?;
    let raw = crate::solve::all_assignments(n, &space.domain);
    let mut rng = crate::solve::seeded_rng(s.run.seed);
    let mut solver =
        crate::solve::enumerate(n, &space.domain, &space.constraints, usize::MAX, &mut rng);
    solver.sort();
    let mut report = CheckReport {
        maps: n,
        raw: raw_count,
        checked: 0,
        solver_valid: solver.len(),
        compiled_and_verified: 0,
        valid_but_failed: Vec::new(),
        works_but_excluded: Vec::new(),
        failures_by_cause: BTreeMap::new(),
        constraints: families(&space.constraints),
    };
    let start = Instant::now();
    for a in &raw {
        if s.run.limits.reached(report.checked, start) {
            break;
        }
        let c = Candidate {
            splits: splits.clone(),
            mapping: a.clone(),
        };
        let (outcome, _) = mapper.evaluate_candidate(&c, true);
        report.checked += 1;
        let valid = solver.binary_search(a).is_ok();
        match outcome {
            Ok(_) => {
                report.compiled_and_verified += 1;
                if !valid {
                    report.works_but_excluded.push(a.clone());
                }
            }
            Err(f) => {
                count_cause(&mut report.failures_by_cause, &f.to_string());
                if valid {
                    report.valid_but_failed.push((a.clone(), f));
                }
            }
        }
    }
    if report.checked < raw_count {
        progress.on_phase(Phase::Note(&format!(
            "stopped after {} of {raw_count} raw assignments (the budget or the time limit)",
            report.checked
        )));
    }
    Ok(report)
}
