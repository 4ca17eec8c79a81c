//! Evaluating a batch of a search's candidates (a tuning's assignments, a mapping search's
//! mappings): outcomes the tuning database knows are read from it; the others are compiled
//! and verified by a pool of CPU workers, then timed (or measured by a cluster's workers,
//! [`crate::remote`]), and added to the database. Both searches evaluate their candidates
//! here: what differs between them is the [`Candidates`] they implement.
//!
//! One candidate is timed at a time per device: on the CPU (C, OpenMP) and on one GPU, or
//! one candidate per CUDA device at once with several devices. Timing is isolated where the
//! candidates are timed on the cores that build them: it starts once every compile and
//! verification of the batch is done, and no worker runs while a candidate is timed. A
//! tuning on CUDA pipelines its batches instead ([`Evaluator::step`],
//! [`Candidates::overlaps_timing`]): while the GPUs time one batch, the workers build the
//! next. Both orders are [`crate::schedule`]'s.

use crate::engine::{show, Error, Failure, Phase, Progress, Run};
use crate::log::fingerprint;
use crate::remote::{Identity, Measurement, Remote, Request};
use crate::schedule::{at_once, one_after_the_other, Builds, Notes, Timings};
use crate::tunedb::{Context, Entry, Timed, TuneDb};
use crate::tuning::Bindings;
use shine::{Phrase, RunOptions, Setting, Target};

/// A search whose candidates the pool evaluates: how one is named, built (compiled and
/// verified), timed at a size set, and judged from its times.
pub(crate) trait Candidates: Sync {
    /// A candidate: a tuning's assignment, a mapping search's splits and mapping.
    type Candidate: Clone + Sync;
    /// A candidate built by a worker: compiled (and verified), ready to be timed.
    type Built: Send + Sync;
    /// What happened to a candidate, as the search ranks it.
    type Evaluation;

    /// The run: program, target, seed, runs, database and workers.
    fn run(&self) -> &Run;
    /// The candidate in words: its key in the database and its name in progress lines.
    fn key(&self, c: &Self::Candidate) -> String;
    /// The size sets a candidate is verified at (the database's key of a verification).
    fn verify_sets(&self) -> &[Bindings];
    /// The size sets a candidate is timed at.
    fn time_sets(&self) -> &[Bindings];
    /// Whether building may go on while candidates are timed (a GPU times; the CPU cores
    /// build): then a search that proposes its next batch before the current one is timed
    /// pipelines its batches ([`Evaluator::step`]). Not by default: the timings run alone.
    fn overlaps_timing(&self) -> bool {
        false
    }
    /// Compiles a candidate and, if `verify`, verifies it (the work of a CPU worker).
    fn prepare(&self, c: &Self::Candidate, verify: bool) -> Result<Self::Built, Failure>;
    /// Times a built candidate at the time set `k` on the CUDA device `device`.
    fn time_at(&self, built: &Self::Built, c: &Self::Candidate, k: usize, device: usize) -> Timed;
    /// Whether the outcomes at the time sets so far decide the candidate, so that the
    /// others are not timed (a mapping search's failure or cutoff); `times` has one entry
    /// per time set, `None` where it is not timed.
    fn settled(&self, _times: &[Option<Timed>]) -> bool {
        false
    }
    /// The evaluation of a built candidate of its outcome per time set.
    fn assemble(&self, times: Vec<Option<Timed>>) -> Self::Evaluation;
    /// The evaluation of a candidate that failed as a whole.
    fn failed(&self, failure: Failure) -> Self::Evaluation;
    /// The request that has a cluster's worker build a candidate (verified if `verify`) and
    /// time it at the time sets numbered `sets`.
    fn request(&self, c: &Self::Candidate, verify: bool, sets: &[usize]) -> Result<Request, Error>;
}

/// A batch looked up in the database and built ([`Evaluator::step`]): its candidates wait
/// to be timed.
pub(crate) struct Staged<S: Candidates> {
    /// The candidates.
    pub batch: Vec<S::Candidate>,
    known: Vec<Known>,
    /// Per candidate: what was built (`None`: nothing, the database knows all of it).
    built: Vec<Option<Result<S::Built, Failure>>>,
}

impl<S: Candidates> Staged<S> {
    /// The candidates built now (to time).
    fn built_ones(&self) -> Vec<usize> {
        (0..self.batch.len())
            .filter(|&i| self.ready(i).is_some())
            .collect()
    }

    /// Candidate `i` built, if it was and built without failure: ready to be timed.
    fn ready(&self, i: usize) -> Option<&S::Built> {
        self.built.get(i)?.as_ref()?.as_ref().ok()
    }

    /// Times candidate `i`, if it was built, at the sets the database has no outcome for
    /// on `device` (told to `notes` as it starts): its new outcome per time set.
    fn time(&self, search: &S, i: usize, device: usize, notes: &Notes) -> Vec<Option<Timed>> {
        let (c, known) = (&self.batch[i], &self.known[i]);
        let Some(built) = self.ready(i) else {
            return vec![None; known.times.len()];
        };
        let _ = notes.send(format!(
            "timing {} at {} ({})",
            search.key(c),
            plural(known.missing().len(), "size set"),
            device_name(search.run().target, device)
        ));
        time_candidate(search, c, built, known, device)
    }

    /// Each candidate, what the database knows of it and what was measured now, given its
    /// new times per time set (`times[i][k]`).
    fn finish(
        self,
        mut times: Vec<Vec<Option<Timed>>>,
    ) -> impl Iterator<Item = (S::Candidate, Known, Measured)> {
        self.batch
            .into_iter()
            .zip(self.known)
            .zip(self.built)
            .enumerate()
            .map(move |(i, ((c, known), built))| {
                let measured = match built {
                    None => Measured::Nothing,
                    Some(b) => Measured::Built {
                        built: b.map(drop),
                        times: std::mem::take(&mut times[i]),
                    },
                };
                (c, known, measured)
            })
    }
}

/// The candidates of a batch, in order, each with its outcome.
pub(crate) type Evaluated<S> = Vec<(
    <S as Candidates>::Candidate,
    Outcome<<S as Candidates>::Evaluation>,
)>;

/// A candidate evaluated in a batch, and where its outcome came from.
pub(crate) struct Outcome<E> {
    /// What happened to it.
    pub evaluation: E,
    /// Whether all of it came from the database (nothing compiled or timed now).
    pub from_db: bool,
    /// Whether it was timed now (at one set or more).
    pub timed: bool,
}

/// How many candidates of a run came from the database and how many were timed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Candidates whose every outcome came from the database.
    pub from_database: usize,
    /// Candidates timed now (at one size set or more).
    pub timed: usize,
}

impl Counts {
    /// Counts a candidate's outcome.
    pub fn count<E>(&mut self, outcome: &Outcome<E>) {
        self.from_database += outcome.from_db as usize;
        self.timed += outcome.timed as usize;
    }
}

/// What the database knows of a candidate.
#[derive(Default)]
struct Known {
    verified: Option<Result<(), Failure>>,
    times: Vec<Option<Timed>>,
}

impl Known {
    fn failed(&self) -> bool {
        matches!(self.verified, Some(Err(_)))
    }

    fn complete(&self) -> bool {
        self.verified.is_some() && self.times.iter().all(Option::is_some)
    }

    /// The time sets it has no outcome at.
    fn missing(&self) -> Vec<usize> {
        (0..self.times.len())
            .filter(|&k| self.times[k].is_none())
            .collect()
    }
}

/// The candidates of a batch that need work: neither known to fail, nor known at every set,
/// nor decided by what is known.
fn needing_work<S: Candidates>(search: &S, known: &[Known]) -> Vec<usize> {
    (0..known.len())
        .filter(|&i| {
            let k = &known[i];
            let decided = k.verified.is_some() && search.settled(&k.times);
            !k.failed() && !k.complete() && !decided
        })
        .collect()
}

/// What was measured now of a candidate of a batch.
enum Measured {
    /// Nothing: the database knows all of it (or that it failed).
    Nothing,
    /// Compiled (and verified, where the database does not say it was), or why not, and
    /// its new outcome per time set (`None`: known, or not timed).
    Built {
        built: Result<(), Failure>,
        times: Vec<Option<Timed>>,
    },
    /// Lost with the cluster's worker that measured it: nothing is known.
    Lost(Failure),
}

/// Evaluates a search's candidates: its database, and its workers and devices or the
/// cluster that measures its candidates.
pub(crate) struct Evaluator<'r> {
    db: Option<TuneDb>,
    jobs: usize,
    devices: Vec<usize>,
    remote: Option<&'r dyn Remote>,
    verification_key: String,
}

impl<'r> Evaluator<'r> {
    /// The evaluator of `search`'s run, measuring on this host's workers or on `remote`:
    /// opens its database (`context` says what its outcomes depend on).
    pub fn new<S: Candidates>(
        search: &S,
        context: Option<Context>,
        remote: Option<&'r dyn Remote>,
    ) -> Result<Evaluator<'r>, Error> {
        let run = search.run();
        let db = match (&run.db, context) {
            (Some(path), Some(c)) => Some(TuneDb::open(path, &c)?),
            _ => None,
        };
        let sets: Vec<String> = search.verify_sets().iter().map(show).collect();
        Ok(Evaluator {
            db,
            jobs: run.jobs.max(1),
            devices: if run.devices.is_empty() {
                vec![0]
            } else {
                run.devices.clone()
            },
            remote,
            verification_key: format!("{} (inputs of seed {})", sets.join("; "), run.seed),
        })
    }

    /// Whether `search` may pipeline its batches ([`Evaluator::step`]): on this host, where
    /// it builds while it times ([`Candidates::overlaps_timing`]).
    pub fn pipelines<S: Candidates>(&self, search: &S) -> bool {
        self.remote.is_none() && search.overlaps_timing()
    }

    /// How many candidates a batch holds: one per worker (or worker of the cluster), so that
    /// every worker builds, and a multiple of the devices, so that every device times as
    /// many ([`batch_size`]).
    pub fn batch_size(&self) -> usize {
        match self.remote {
            Some(remote) => remote.capacity().max(1),
            None => batch_size(self.jobs, self.devices.len()),
        }
    }

    /// Evaluates a batch, built and then timed; what runs is told to `progress` as
    /// [`Phase::Running`], an entry of the database that cannot be read as a
    /// [`Phase::Note`] (the candidate is measured again).
    pub fn evaluate<S: Candidates, R>(
        &self,
        search: &S,
        batch: &[S::Candidate],
        progress: &mut dyn Progress<R>,
    ) -> Result<Vec<Outcome<S::Evaluation>>, Error> {
        if let Some(remote) = self.remote {
            let known = self.lookup_all(search, batch, progress)?;
            let measured = self.measure_remotely(remote, search, batch, &known, progress)?;
            return batch
                .iter()
                .zip(known)
                .zip(measured)
                .map(|((c, k), m)| self.outcome(search, c, k, m))
                .collect();
        }
        let (_, staged) = self.step(search, None, batch.to_vec(), progress)?;
        let (outcomes, _) = self.step(search, staged, Vec::new(), progress)?;
        Ok(outcomes.into_iter().map(|(_, o)| o).collect())
    }

    /// A note of how many of a run's `candidates` came from the database and how many were
    /// timed now (`None` without a database).
    pub fn database_note(&self, candidates: usize, counts: Counts) -> Option<String> {
        self.db.as_ref().map(|_| {
            format!(
                "{} of {candidates} candidates from the database, {} timed now",
                counts.from_database, counts.timed
            )
        })
    }

    /// One step of the pipeline on this host: the candidates of `staged` (built in the step
    /// before) are timed on the devices while the pool of workers builds those of `next`
    /// the database does not know all of; at once where `search` allows it
    /// ([`Candidates::overlaps_timing`]), else the timings first. Returns the outcomes of
    /// `staged`'s candidates, in order, and `next` staged for the step after.
    pub fn step<S: Candidates, R>(
        &self,
        search: &S,
        staged: Option<Staged<S>>,
        next: Vec<S::Candidate>,
        progress: &mut dyn Progress<R>,
    ) -> Result<(Evaluated<S>, Option<Staged<S>>), Error> {
        let known_next = self.lookup_all(search, &next, progress)?;
        let to_build = needing_work(search, &known_next);
        let to_time = staged.as_ref().map_or(Vec::new(), Staged::built_ones);
        let overlapping = search.overlaps_timing() && !to_time.is_empty();
        if !to_build.is_empty() {
            let workers = self.jobs.min(to_build.len());
            let names: Vec<String> = to_build.iter().map(|&i| search.key(&next[i])).collect();
            progress.on_phase(Phase::Running(&format!(
                "compiling and verifying {} on {}{}: {}",
                plural(to_build.len(), "candidate"),
                plural(workers, "worker"),
                if overlapping {
                    " while the previous batch is timed"
                } else {
                    ""
                },
                names.join(" | ")
            )));
        }
        let builds = Builds {
            workers: self.jobs,
            items: &to_build,
            build: |i: usize, _: &Notes| search.prepare(&next[i], known_next[i].verified.is_none()),
        };
        let timings = Timings {
            devices: &self.devices,
            items: &to_time,
            time: |i: usize, device: usize, notes: &Notes| {
                staged
                    .as_ref()
                    .map_or_else(Vec::new, |s| s.time(search, i, device, notes))
            },
        };
        let mut say = |line: &str| progress.on_phase(Phase::Running(line));
        let (built, timed) = if search.overlaps_timing() {
            at_once(builds, timings, &mut say)
        } else {
            one_after_the_other(builds, timings, &mut say)
        };
        let outcomes = match staged {
            None => Vec::new(),
            Some(s) => {
                let mut times: Vec<Vec<Option<Timed>>> =
                    s.known.iter().map(|k| vec![None; k.times.len()]).collect();
                for (&i, t) in to_time.iter().zip(timed) {
                    times[i] = t;
                }
                s.finish(times)
                    .map(|(c, known, measured)| {
                        let outcome = self.outcome(search, &c, known, measured)?;
                        Ok((c, outcome))
                    })
                    .collect::<Result<_, Error>>()?
            }
        };
        if next.is_empty() {
            return Ok((outcomes, None));
        }
        let mut results: Vec<Option<Result<S::Built, Failure>>> =
            (0..next.len()).map(|_| None).collect();
        for (&i, b) in to_build.iter().zip(built) {
            results[i] = Some(b);
        }
        Ok((
            outcomes,
            Some(Staged {
                batch: next,
                known: known_next,
                built: results,
            }),
        ))
    }

    /// What the database knows of each candidate of `batch` ([`Evaluator::lookup`]).
    fn lookup_all<S: Candidates, R>(
        &self,
        search: &S,
        batch: &[S::Candidate],
        progress: &mut dyn Progress<R>,
    ) -> Result<Vec<Known>, Error> {
        batch
            .iter()
            .map(|c| self.lookup(search, c, progress))
            .collect()
    }

    /// Measures the batch's candidates the database does not know all of on `remote`'s
    /// workers: one request each.
    fn measure_remotely<S: Candidates, R>(
        &self,
        remote: &dyn Remote,
        search: &S,
        batch: &[S::Candidate],
        known: &[Known],
        progress: &mut dyn Progress<R>,
    ) -> Result<Vec<Measured>, Error> {
        let todo = needing_work(search, known);
        let mut measured: Vec<Measured> = batch.iter().map(|_| Measured::Nothing).collect();
        if todo.is_empty() {
            return Ok(measured);
        }
        let requests: Vec<Request> = todo
            .iter()
            .map(|&i| search.request(&batch[i], known[i].verified.is_none(), &known[i].missing()))
            .collect::<Result<_, _>>()?;
        progress.on_phase(Phase::Running(&format!(
            "measuring {} on the cluster: {}",
            plural(todo.len(), "candidate"),
            requests
                .iter()
                .map(Request::label)
                .collect::<Vec<_>>()
                .join(" | ")
        )));
        let answers = remote.measure(&requests)?;
        if answers.len() != requests.len() {
            return Err(format!(
                "the cluster answered {} of {} requests",
                answers.len(),
                requests.len()
            )
            .into());
        }
        for (&i, answer) in todo.iter().zip(answers) {
            measured[i] = placed(answer, &known[i])?;
        }
        Ok(measured)
    }

    /// What the database knows of `c` (nothing without a database); a time of fewer runs
    /// than the run's is not known, nor is an entry that cannot be read (noted).
    fn lookup<S: Candidates, R>(
        &self,
        search: &S,
        c: &S::Candidate,
        progress: &mut dyn Progress<R>,
    ) -> Result<Known, Error> {
        let sets = search.time_sets().len();
        let Some(db) = &self.db else {
            return Ok(Known {
                verified: None,
                times: vec![None; sets],
            });
        };
        let key = search.key(c);
        let verified = readable(
            db.verification(&key, &self.verification_key)?,
            &key,
            "its verification",
            progress,
        );
        let mut times = Vec::with_capacity(sets);
        for set in search.time_sets() {
            let set = show(set);
            let what = format!("its time at {set}");
            let t = readable(db.timing(&key, &set)?, &key, &what, progress);
            times.push(match t {
                Some(Timed::Ms { runs, .. }) if runs < search.run().runs => None,
                t => t,
            });
        }
        Ok(Known { verified, times })
    }

    /// The outcome of one candidate of the batch; what was measured now goes to the
    /// database (a candidate lost with its worker is not kept).
    fn outcome<S: Candidates>(
        &self,
        search: &S,
        c: &S::Candidate,
        known: Known,
        measured: Measured,
    ) -> Result<Outcome<S::Evaluation>, Error> {
        let sets = search.time_sets().len();
        let failed = |f, from_db| Outcome {
            evaluation: search.failed(f),
            from_db,
            timed: false,
        };
        let from_db = matches!(measured, Measured::Nothing);
        let key = search.key(c);
        let new_times = match measured {
            Measured::Lost(f) => return Ok(failed(f, false)),
            Measured::Nothing => match known.verified {
                Some(Err(f)) => return Ok(failed(f, true)),
                _ => vec![None; sets],
            },
            Measured::Built { built, times } => {
                if let (None, Some(db)) = (&known.verified, &self.db) {
                    db.record_verification(&key, &self.verification_key, &built)?;
                }
                if let Err(f) = built {
                    return Ok(failed(f, false));
                }
                times
            }
        };
        let timed = new_times.iter().any(Option::is_some);
        let mut times = known.times;
        for (k, new) in new_times.into_iter().enumerate() {
            if let Some(t) = new {
                if let Some(db) = &self.db {
                    db.record_timing(&key, &show(&search.time_sets()[k]), &t)?;
                }
                times[k] = Some(t);
            }
        }
        Ok(Outcome {
            evaluation: search.assemble(times),
            from_db,
            timed,
        })
    }
}

/// What an entry of the database says, `None` where there is none or it cannot be read
/// (noted: the candidate is measured again and the entry replaced).
fn readable<T, R>(
    entry: Entry<T>,
    key: &str,
    what: &str,
    progress: &mut dyn Progress<R>,
) -> Option<T> {
    match entry {
        Entry::Absent => None,
        Entry::Found(x) => Some(x),
        Entry::Unreadable(why) => {
            progress.on_phase(Phase::Note(&format!(
                "warning: the tuning database's entry of {key} ({what}) cannot be read \
                 ({why}); it is measured again"
            )));
            None
        }
    }
}

/// Times a built candidate at the sets `known` has no outcome for, in order, until its
/// outcomes decide it: its new outcome per time set.
fn time_candidate<S: Candidates>(
    search: &S,
    c: &S::Candidate,
    built: &S::Built,
    known: &Known,
    device: usize,
) -> Vec<Option<Timed>> {
    let mut all = known.times.clone();
    let mut new = vec![None; all.len()];
    for k in known.missing() {
        if search.settled(&all) {
            break;
        }
        let t = search.time_at(built, c, k, device);
        all[k] = Some(t.clone());
        new[k] = Some(t);
    }
    new
}

/// Times a built candidate at every time set, in order, until its outcomes decide it, on the
/// CUDA device `device`: its evaluation (one candidate evaluated alone, nothing kept).
pub(crate) fn time_alone<S: Candidates>(
    search: &S,
    c: &S::Candidate,
    built: &S::Built,
    device: usize,
) -> S::Evaluation {
    let nothing = Known {
        verified: Some(Ok(())),
        times: vec![None; search.time_sets().len()],
    };
    search.assemble(time_candidate(search, c, built, &nothing, device))
}

/// What a worker answered of a candidate, its times placed at the time sets the
/// candidate's request named (those `known` lacks).
fn placed(answer: Result<Measurement, Failure>, known: &Known) -> Result<Measured, Error> {
    let m = match answer {
        Err(f) => return Ok(Measured::Lost(f)),
        Ok(m) => m,
    };
    let missing = known.missing();
    let mut times = vec![None; known.times.len()];
    if m.built.is_ok() {
        if m.times.len() != missing.len() {
            return Err(format!(
                "a worker answered {} times for {} size sets",
                m.times.len(),
                missing.len()
            )
            .into());
        }
        for (k, t) in missing.into_iter().zip(m.times) {
            times[k] = Some(t);
        }
    }
    Ok(Measured::Built {
        built: m.built,
        times,
    })
}

/// The candidates of a batch built by `jobs` workers and timed on `devices` devices: the
/// least multiple of the devices that gives every worker one.
fn batch_size(jobs: usize, devices: usize) -> usize {
    let devices = devices.max(1);
    jobs.max(1).div_ceil(devices) * devices
}

/// `n thing` or `n things`.
fn plural(n: usize, thing: &str) -> String {
    format!("{n} {thing}{}", if n == 1 { "" } else { "s" })
}

/// Where a target's candidates are timed, in words.
fn device_name(target: Target, device: usize) -> String {
    match target {
        Target::Cuda => format!("CUDA device {device}"),
        Target::OpenCl => "the OpenCL device".to_string(),
        _ => "the CPU, nothing else running".to_string(),
    }
}

/// The context of a search's outcomes in the database: the program, definition, strategy
/// file, `template` (a tuning's template, or what a mapping search maps), target, and the
/// device and versions (of `remote`'s workers, with one).
pub(crate) fn context(
    run: &Run,
    template: &str,
    remote: Option<&dyn Remote>,
) -> Result<Context, Error> {
    let identity = match remote {
        Some(remote) => remote.identity(run.target)?,
        None => identity_here(run.target, &run.devices)?,
    };
    Ok(Context {
        program: fingerprint(&run.program.text),
        def: run.def.clone(),
        strategy: run
            .strategy
            .as_ref()
            .map(|s| fingerprint(&s.text))
            .unwrap_or_default(),
        template: template.to_string(),
        target: run.target.to_string(),
        device: identity.device,
        version: identity.version,
    })
}

/// The device and toolchain this host measures `target`'s candidates with, on the CUDA
/// devices `devices`.
pub(crate) fn identity_here(target: Target, devices: &[usize]) -> Result<Identity, Error> {
    Ok(Identity {
        device: device_identity(target, devices)?,
        version: format!(
            "shine {}, {}",
            env!("CARGO_PKG_VERSION"),
            toolchain(target, devices)
        ),
    })
}

/// What compiles and runs the candidates, as the database names it: the run's default C
/// compiler (C, OpenMP), the OpenCL device's version, or NVRTC's and the CUDA driver's.
fn toolchain(target: Target, devices: &[usize]) -> String {
    match target {
        Target::C | Target::OpenMp => compiler_version(&RunOptions::default().cc),
        Target::OpenCl => runtime::OpenClDevice::from_env().map_or_else(
            |e| format!("OpenCL unavailable: {e}"),
            |d| d.version().to_string(),
        ),
        Target::Cuda => {
            let nvrtc = runtime::CudaDevice::nvrtc_version()
                .map_or("NVRTC ?".to_string(), |(a, b)| format!("NVRTC {a}.{b}"));
            let driver = runtime::CudaDevice::open(devices.first().copied().unwrap_or(0)).map_or(
                "driver ?".to_string(),
                |d| {
                    let v = d.driver_version();
                    format!("driver CUDA {}.{}", v / 1000, v % 1000 / 10)
                },
            );
            format!("{nvrtc}, {driver}")
        }
    }
}

/// The device candidates are timed on, as the database names it: the CPU's model (and
/// OpenMP's threads), the OpenCL device, or the CUDA devices' name (they must be alike).
fn device_identity(target: Target, devices: &[usize]) -> Result<String, Error> {
    match target {
        Target::C => Ok(cpu_model()),
        Target::OpenMp => Ok(format!("{}, {} OpenMP threads", cpu_model(), omp_threads())),
        Target::OpenCl => runtime::OpenClDevice::from_env()
            .map(|d| format!("{} ({})", d.name(), d.platform_name()))
            .map_err(|e| Error::from(format!("the tuning database names the device: {e}"))),
        Target::Cuda => cuda_names(devices),
    }
}

/// The name of the CUDA devices `devices` (device 0 if empty); an error if they differ.
fn cuda_names(devices: &[usize]) -> Result<String, Error> {
    let mut names: Vec<String> = Vec::new();
    for &d in devices.iter().chain(devices.is_empty().then_some(&0)) {
        let device = runtime::CudaDevice::open(d)
            .map_err(|e| Error::from(format!("CUDA device {d}: {e}")))?;
        names.push(device.name().to_string());
    }
    names.dedup();
    match names.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(Phrase::from(Setting::Devices)
            .then(format!(
                " names devices of different kinds ({}): time on one kind at a time",
                names.join(", ")
            ))
            .into()),
    }
}

/// The CPU's model name (Linux's `/proc/cpuinfo`), or the architecture.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, name)| name.trim().to_string())
        })
        .unwrap_or_else(|| format!("a {} CPU", std::env::consts::ARCH))
}

/// The threads OpenMP runs (`OMP_NUM_THREADS`, or the CPUs this process may use).
fn omp_threads() -> String {
    std::env::var("OMP_NUM_THREADS").unwrap_or_else(|_| {
        std::thread::available_parallelism().map_or("?".to_string(), |n| n.to_string())
    })
}

/// The first line of `cc --version`.
fn compiler_version(cc: &str) -> String {
    match std::process::Command::new(cc).arg("--version").output() {
        Ok(out) => String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or(cc)
            .to_string(),
        Err(e) => format!("{cc} unavailable: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_gives_every_worker_one_and_every_device_as_many() {
        for (jobs, devices, batch) in [
            (1, 1, 1),
            (16, 1, 16),
            (16, 2, 16),
            (16, 4, 16),
            (16, 3, 18),
            (7, 2, 8),
            (2, 4, 4),
            (13, 5, 15),
            (0, 0, 1),
        ] {
            let n = batch_size(jobs, devices);
            assert_eq!(n, batch, "{jobs} jobs, {devices} devices");
            assert!(n >= jobs && n.is_multiple_of(devices.max(1)));
        }
    }
}
