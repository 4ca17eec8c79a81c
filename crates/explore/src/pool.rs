//! Evaluating a batch of a tuning's candidates: outcomes the tuning database knows are read
//! from it; the others are compiled and verified by a pool of CPU workers, then timed (or
//! measured by a cluster's workers, [`crate::remote`]), and added to the database.
//!
//! One candidate is timed at a time per device: on the CPU (C, OpenMP) and on one GPU, or
//! one candidate per CUDA device at once with several devices. On the CPU timing is
//! isolated: it starts once every compile and verification of the batch is done, and no
//! worker runs while a candidate is timed. On CUDA the batches are pipelined
//! ([`Evaluator::step`]): while the GPUs time one batch, the workers build the next
//! ([`crate::schedule`]).

use crate::engine::{show, Error, Failure, Phase, Progress};
use crate::log::fingerprint;
use crate::params::Assignment;
use crate::remote::{Identity, Measurement, Remote, Request};
use crate::schedule::{at_once, one_after_the_other, Builds, Notes, Timings};
use crate::tune::{Evaluation, Record, Tuner};
use crate::tunedb::{Context, Timed, TuneDb};
use shine::{Phrase, RunOptions, Setting, Target};

/// How a candidate is built and timed on this host: the work of the pool's workers and of
/// its devices ([`Tuner`] does it; a test may time with a fake clock).
pub(crate) trait Measure: Sync {
    /// A candidate built: compiled (and verified), ready to be timed.
    type Built: Send + Sync;

    /// Whether building may go on while candidates are timed (a GPU times; the CPU cores
    /// build): then the batches are pipelined.
    fn overlaps_timing(&self) -> bool;

    /// Compiles a candidate and, if `verify`, verifies it (on a CPU worker).
    fn build(&self, a: &Assignment, verify: bool) -> Result<Self::Built, Failure>;

    /// Times a built candidate at the time set `k` on the device `device`.
    fn time(&self, built: &Self::Built, a: &Assignment, k: usize, device: usize) -> Timed;
}

/// A batch looked up in the database and built ([`Evaluator::step`]): its candidates wait
/// to be timed.
pub(crate) struct Staged<B> {
    /// The candidates.
    pub batch: Vec<Assignment>,
    known: Vec<Known>,
    /// Per candidate: what was built (`None`: nothing, the database knows all of it).
    built: Vec<Option<Result<B, Failure>>>,
}

impl<B> Staged<B> {
    /// The candidates built now (to time).
    fn built_ones(&self) -> Vec<usize> {
        (0..self.batch.len())
            .filter(|&i| self.artifact(i).is_some())
            .collect()
    }

    /// Candidate `i` built, if it was and built without failure.
    fn artifact(&self, i: usize) -> Option<&B> {
        self.built.get(i)?.as_ref()?.as_ref().ok()
    }

    /// Each candidate, what the database knows of it and what was measured now, given its
    /// new times per time set (`times[i][k]`).
    fn finish(
        self,
        mut times: Vec<Vec<Option<Timed>>>,
    ) -> impl Iterator<Item = (Assignment, Known, Measured)> {
        self.batch
            .into_iter()
            .zip(self.known)
            .zip(self.built)
            .enumerate()
            .map(move |(i, ((a, known), built))| {
                let measured = match built {
                    None => Measured::Nothing,
                    Some(b) => Measured::Built {
                        built: b.map(drop),
                        times: std::mem::take(&mut times[i]),
                    },
                };
                (a, known, measured)
            })
    }
}

/// A candidate evaluated in a batch, and where its outcome came from.
pub(crate) struct Outcome {
    /// What happened to it.
    pub evaluation: Evaluation,
    /// Whether all of it came from the database (nothing compiled or timed now).
    pub from_db: bool,
    /// Whether it was timed now (at one set or more).
    pub timed: bool,
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

/// The candidates of a batch that need work: neither known to fail nor known at every set.
fn needing_work(known: &[Known]) -> Vec<usize> {
    (0..known.len())
        .filter(|&i| !known[i].failed() && !known[i].complete())
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

/// Evaluates candidates for a tuning: its database, and its workers and devices or the
/// cluster that measures its candidates.
pub(crate) struct Evaluator<'r> {
    db: Option<TuneDb>,
    jobs: usize,
    devices: Vec<usize>,
    remote: Option<&'r dyn Remote>,
    verification_key: String,
}

impl<'r> Evaluator<'r> {
    /// The evaluator of `tuner`'s run, measuring on this host's workers or on `remote`:
    /// opens its database (`context` says what its outcomes depend on).
    pub fn new(
        tuner: &Tuner,
        context: Option<Context>,
        remote: Option<&'r dyn Remote>,
    ) -> Result<Evaluator<'r>, Error> {
        let run = tuner.run();
        let db = match (&run.db, context) {
            (Some(path), Some(c)) => Some(TuneDb::open(path, &c)?),
            _ => None,
        };
        let sets: Vec<String> = tuner.verify_sets().iter().map(show).collect();
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

    /// Whether a database is read and written.
    pub fn has_db(&self) -> bool {
        self.db.is_some()
    }

    /// Whether the batches are pipelined ([`Evaluator::step`]): on this host, where
    /// `measure` builds while it times.
    pub fn pipelines<M: Measure>(&self, measure: &M) -> bool {
        self.remote.is_none() && measure.overlaps_timing()
    }

    /// How many candidates a batch holds: enough for every worker and every device (or
    /// every worker of the cluster).
    pub fn batch_size(&self) -> usize {
        match self.remote {
            Some(remote) => remote.capacity().max(1),
            None => self.jobs.max(self.devices.len()),
        }
    }

    /// Evaluates a batch, built and then timed; what runs is told to `progress` as
    /// [`Phase::Running`].
    pub fn evaluate<M: Measure>(
        &self,
        measure: &M,
        tuner: &Tuner,
        batch: &[Assignment],
        progress: &mut dyn Progress<Record>,
    ) -> Result<Vec<Outcome>, Error> {
        if let Some(remote) = self.remote {
            let known: Vec<Known> = self.lookup_all(tuner, batch)?;
            let measured = self.measure_remotely(remote, tuner, batch, &known, progress)?;
            return batch
                .iter()
                .zip(known)
                .zip(measured)
                .map(|((a, k), m)| self.outcome(tuner, a, k, m))
                .collect();
        }
        let (_, staged) = self.step(measure, tuner, None, batch.to_vec(), progress)?;
        let (outcomes, _) = self.step(measure, tuner, staged, Vec::new(), progress)?;
        Ok(outcomes.into_iter().map(|(_, o)| o).collect())
    }

    /// One step of the pipeline on this host: the candidates of `staged` (built in the step
    /// before) are timed on the devices while the pool of workers builds those of `next`
    /// the database does not know all of; at once where `measure` allows it
    /// ([`Measure::overlaps_timing`]), else the timings first. Returns the outcomes of
    /// `staged`'s candidates, in order, and `next` staged for the step after.
    #[allow(clippy::type_complexity)]
    pub fn step<M: Measure>(
        &self,
        measure: &M,
        tuner: &Tuner,
        staged: Option<Staged<M::Built>>,
        next: Vec<Assignment>,
        progress: &mut dyn Progress<Record>,
    ) -> Result<(Vec<(Assignment, Outcome)>, Option<Staged<M::Built>>), Error> {
        let known_next = self.lookup_all(tuner, &next)?;
        let to_build = needing_work(&known_next);
        let (now, to_time): (&[Assignment], Vec<usize>) = match &staged {
            Some(s) => (&s.batch, s.built_ones()),
            None => (&[], Vec::new()),
        };
        let missing = |i: usize| staged.as_ref().map_or(Vec::new(), |s| s.known[i].missing());
        let overlapping = measure.overlaps_timing() && !to_time.is_empty();
        if !to_build.is_empty() {
            let workers = self.jobs.min(to_build.len());
            let names: Vec<String> = to_build.iter().map(|&i| show(&next[i])).collect();
            progress.on_phase(Phase::Running(&format!(
                "compiling and verifying {} on {workers} worker{}{}: {}",
                plural(to_build.len(), "candidate"),
                if workers == 1 { "" } else { "s" },
                if overlapping {
                    " while the previous batch is timed"
                } else {
                    ""
                },
                names.join(" | ")
            )));
        }
        let target = tuner.run().target;
        let builds = Builds {
            workers: self.jobs,
            items: &to_build,
            build: |i: usize, _: &Notes| measure.build(&next[i], known_next[i].verified.is_none()),
        };
        let timings = Timings {
            devices: &self.devices,
            items: &to_time,
            time: |i: usize, device: usize, notes: &Notes| {
                let sets = missing(i);
                let _ = notes.send(format!(
                    "timing {} at {} ({})",
                    show(&now[i]),
                    plural(sets.len(), "size set"),
                    device_name(target, device)
                ));
                let built = staged.as_ref().and_then(|s| s.artifact(i));
                sets.into_iter()
                    .map(|k| (k, built.map(|b| measure.time(b, &now[i], k, device))))
                    .collect::<Vec<_>>()
            },
        };
        let mut say = |line: &str| progress.on_phase(Phase::Running(line));
        let (built, timed) = if measure.overlaps_timing() {
            at_once(builds, timings, &mut say)
        } else {
            one_after_the_other(builds, timings, &mut say)
        };
        let outcomes = match staged {
            None => Vec::new(),
            Some(s) => {
                let mut times: Vec<Vec<Option<Timed>>> =
                    s.known.iter().map(|k| vec![None; k.times.len()]).collect();
                for (&i, sets) in to_time.iter().zip(timed) {
                    for (k, t) in sets {
                        times[i][k] = t;
                    }
                }
                s.finish(times)
                    .map(|(a, known, measured)| {
                        let outcome = self.outcome(tuner, &a, known, measured)?;
                        Ok((a, outcome))
                    })
                    .collect::<Result<_, Error>>()?
            }
        };
        if next.is_empty() {
            return Ok((outcomes, None));
        }
        let mut results: Vec<Option<Result<M::Built, Failure>>> =
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

    /// What the database knows of each candidate of `batch`.
    fn lookup_all(&self, tuner: &Tuner, batch: &[Assignment]) -> Result<Vec<Known>, Error> {
        batch.iter().map(|a| self.lookup(tuner, a)).collect()
    }

    /// Measures the batch's candidates the database does not know all of on `remote`'s
    /// workers: one request each.
    fn measure_remotely(
        &self,
        remote: &dyn Remote,
        tuner: &Tuner,
        batch: &[Assignment],
        known: &[Known],
        progress: &mut dyn Progress<Record>,
    ) -> Result<Vec<Measured>, Error> {
        let todo = needing_work(known);
        let mut measured: Vec<Measured> = batch.iter().map(|_| Measured::Nothing).collect();
        if todo.is_empty() {
            return Ok(measured);
        }
        let requests: Vec<Request> = todo
            .iter()
            .map(|&i| {
                Request::of(
                    tuner,
                    &batch[i],
                    known[i].verified.is_none(),
                    &known[i].missing(),
                )
            })
            .collect();
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

    /// What the database knows of `a` (nothing without a database); a time of fewer runs
    /// than the tuning's is not known.
    fn lookup(&self, tuner: &Tuner, a: &Assignment) -> Result<Known, Error> {
        let sets = tuner.time_sets().len();
        let Some(db) = &self.db else {
            return Ok(Known {
                verified: None,
                times: vec![None; sets],
            });
        };
        let key = show(a);
        let verified = db.verification(&key, &self.verification_key)?;
        let times = tuner
            .time_sets()
            .iter()
            .map(|set| {
                db.timing(&key, &show(set)).map(|t| match t {
                    Some(Timed::Ms { runs, .. }) if runs < tuner.run().runs => None,
                    t => t,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Known { verified, times })
    }

    /// The outcome of one candidate of the batch; what was measured now goes to the
    /// database (a candidate lost with its worker is not kept).
    fn outcome(
        &self,
        tuner: &Tuner,
        a: &Assignment,
        known: Known,
        measured: Measured,
    ) -> Result<Outcome, Error> {
        let sets = tuner.time_sets().len();
        let failed = |f, from_db| Outcome {
            evaluation: Evaluation::failed(f, sets),
            from_db,
            timed: false,
        };
        let from_db = matches!(measured, Measured::Nothing);
        let new_times = match measured {
            Measured::Lost(f) => return Ok(failed(f, false)),
            Measured::Nothing => match known.verified {
                Some(Err(f)) => return Ok(failed(f, true)),
                _ => vec![None; sets],
            },
            Measured::Built { built, times } => {
                if known.verified.is_none() {
                    self.keep_verification(a, &built)?;
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
                self.keep_timing(a, &show(&tuner.time_sets()[k]), &t)?;
                times[k] = Some(t);
            }
        }
        Ok(Outcome {
            evaluation: tuner.assemble(times),
            from_db,
            timed,
        })
    }

    fn keep_verification(
        &self,
        a: &Assignment,
        outcome: &Result<(), Failure>,
    ) -> Result<(), Error> {
        match &self.db {
            Some(db) => db.record_verification(&show(a), &self.verification_key, outcome),
            None => Ok(()),
        }
    }

    fn keep_timing(&self, a: &Assignment, set: &str, t: &Timed) -> Result<(), Error> {
        match &self.db {
            Some(db) => db.record_timing(&show(a), set, t),
            None => Ok(()),
        }
    }
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

/// The context of a tuning's outcomes in the database: the program, definition, strategy
/// file, template, target, and the device and versions (of `remote`'s workers, with one).
pub(crate) fn context(
    tuner: &Tuner,
    template: &str,
    remote: Option<&dyn Remote>,
) -> Result<Context, Error> {
    let run = tuner.run();
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
