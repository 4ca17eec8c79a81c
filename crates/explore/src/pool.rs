//! Evaluating a batch of a tuning's candidates: outcomes the tuning database knows are read
//! from it; the others are compiled and verified by a pool of CPU workers, then timed, and
//! added to the database.
//!
//! Timing is isolated: it starts once every compile and verification of the batch is done
//! (no worker runs while a candidate is timed), and one candidate is timed at a time per
//! device: serially on the CPU (C, OpenMP) and on one GPU, or one candidate per CUDA device
//! at once with several devices.

use crate::engine::{show, Error, Phase, Progress};
use crate::log::fingerprint;
use crate::params::Assignment;
use crate::tune::{Evaluation, Record, Tuner};
use crate::tunedb::{Context, Timed, TuneDb};
use shine::{Artifact, Phrase, RunOptions, Setting, Target};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

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
    verified: Option<Result<(), crate::engine::Failure>>,
    times: Vec<Option<Timed>>,
}

impl Known {
    fn failed(&self) -> bool {
        matches!(self.verified, Some(Err(_)))
    }

    fn complete(&self) -> bool {
        self.verified.is_some() && self.times.iter().all(Option::is_some)
    }
}

/// Evaluates candidates for a tuning: its database, workers and devices.
pub(crate) struct Evaluator {
    db: Option<TuneDb>,
    jobs: usize,
    devices: Vec<usize>,
    verification_key: String,
}

impl Evaluator {
    /// The evaluator of `tuner`'s run: opens its database (`context` says what its outcomes
    /// depend on).
    pub fn new(tuner: &Tuner, context: Option<Context>) -> Result<Evaluator, Error> {
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
            verification_key: format!("{} (inputs of seed {})", sets.join("; "), run.seed),
        })
    }

    /// Whether a database is read and written.
    pub fn has_db(&self) -> bool {
        self.db.is_some()
    }

    /// How many candidates a batch holds: enough for every worker and every device.
    pub fn batch_size(&self) -> usize {
        self.jobs.max(self.devices.len())
    }

    /// Evaluates a batch; what runs is told to `progress` as [`Phase::Running`].
    pub fn evaluate(
        &self,
        tuner: &Tuner,
        batch: &[Assignment],
        progress: &mut dyn Progress<Record>,
    ) -> Result<Vec<Outcome>, Error> {
        let known: Vec<Known> = batch
            .iter()
            .map(|a| self.lookup(tuner, a))
            .collect::<Result<_, _>>()?;
        let built = self.build(tuner, batch, &known, progress);
        for ((a, k), b) in batch.iter().zip(&known).zip(&built) {
            if let (None, Some(outcome)) = (&k.verified, b) {
                self.keep_verification(a, &outcome.as_ref().map(drop).map_err(Clone::clone))?;
            }
        }
        let timed = self.time(tuner, batch, &known, &built, progress);
        let mut outcomes = Vec::new();
        for (i, (a, k)) in batch.iter().zip(known).enumerate() {
            outcomes.push(self.outcome(tuner, a, k, &built[i], &timed[i])?);
        }
        Ok(outcomes)
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

    /// Compiles (and verifies, where the database does not say it was) the candidates that
    /// need timing, on the pool of workers: one result per candidate, `None` where nothing
    /// was built.
    fn build(
        &self,
        tuner: &Tuner,
        batch: &[Assignment],
        known: &[Known],
        progress: &mut dyn Progress<Record>,
    ) -> Vec<Option<Result<Artifact, crate::engine::Failure>>> {
        let todo: Vec<usize> = (0..batch.len())
            .filter(|&i| !known[i].failed() && !known[i].complete())
            .collect();
        let mut results: Vec<Option<Result<Artifact, _>>> =
            (0..batch.len()).map(|_| None).collect();
        if todo.is_empty() {
            return results;
        }
        let workers = self.jobs.min(todo.len());
        let names: Vec<String> = todo.iter().map(|&i| show(&batch[i])).collect();
        progress.on_phase(Phase::Running(&format!(
            "compiling and verifying {} on {workers} worker{}: {}",
            plural(todo.len(), "candidate"),
            if workers == 1 { "" } else { "s" },
            names.join(" | ")
        )));
        let next = AtomicUsize::new(0);
        let done = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&i) = todo.get(n) else { break };
                    let result = tuner.prepare(&batch[i], known[i].verified.is_none());
                    if let Ok(mut d) = done.lock() {
                        d.push((i, result));
                    }
                });
            }
        });
        for (i, result) in done.into_inner().unwrap_or_default() {
            results[i] = Some(result);
        }
        results
    }

    /// Times the built candidates at the sets the database has no outcome for: one
    /// candidate per device at a time, after every build of the batch.
    fn time(
        &self,
        tuner: &Tuner,
        batch: &[Assignment],
        known: &[Known],
        built: &[Option<Result<Artifact, crate::engine::Failure>>],
        progress: &mut dyn Progress<Record>,
    ) -> Vec<Vec<Option<Timed>>> {
        let todo: Vec<(usize, &Artifact)> = built
            .iter()
            .enumerate()
            .filter_map(|(i, b)| Some((i, b.as_ref()?.as_ref().ok()?)))
            .collect();
        let mut times: Vec<Vec<Option<Timed>>> = known.iter().map(|k| k.times.clone()).collect();
        let missing = |i: usize| -> Vec<usize> {
            (0..known[i].times.len())
                .filter(|&k| known[i].times[k].is_none())
                .collect()
        };
        if self.devices.len() == 1 || todo.len() == 1 {
            let device = self.devices[0];
            for &(i, artifact) in &todo {
                progress.on_phase(Phase::Running(&format!(
                    "timing {} at {} ({})",
                    show(&batch[i]),
                    plural(missing(i).len(), "size set"),
                    device_name(tuner.run().target, device)
                )));
                for k in missing(i) {
                    times[i][k] = Some(tuner.time_at(artifact, &batch[i], k, device));
                }
            }
            return times;
        }
        progress.on_phase(Phase::Running(&format!(
            "timing {} on CUDA devices {}: {}",
            plural(todo.len(), "candidate"),
            self.devices
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(","),
            todo.iter()
                .map(|&(i, _)| show(&batch[i]))
                .collect::<Vec<_>>()
                .join(" | ")
        )));
        let next = AtomicUsize::new(0);
        let done = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for &device in &self.devices {
                let (next, done, todo, missing) = (&next, &done, &todo, &missing);
                scope.spawn(move || loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(i, artifact)) = todo.get(n) else {
                        break;
                    };
                    for k in missing(i) {
                        let t = tuner.time_at(artifact, &batch[i], k, device);
                        if let Ok(mut d) = done.lock() {
                            d.push((i, k, t));
                        }
                    }
                });
            }
        });
        for (i, k, t) in done.into_inner().unwrap_or_default() {
            times[i][k] = Some(t);
        }
        times
    }

    /// The outcome of one candidate of the batch; its new times go to the database.
    fn outcome(
        &self,
        tuner: &Tuner,
        a: &Assignment,
        known: Known,
        built: &Option<Result<Artifact, crate::engine::Failure>>,
        times: &[Option<Timed>],
    ) -> Result<Outcome, Error> {
        let sets = tuner.time_sets().len();
        let failure = match (&known.verified, built) {
            (Some(Err(f)), _) | (_, Some(Err(f))) => Some(f.clone()),
            _ => None,
        };
        if let Some(f) = failure {
            return Ok(Outcome {
                evaluation: Evaluation::failed(f, sets),
                from_db: built.is_none(),
                timed: false,
            });
        }
        let mut timed = false;
        for (k, (new, old)) in times.iter().zip(&known.times).enumerate() {
            if let (Some(t), None) = (new, old) {
                timed = true;
                self.keep_timing(a, &show(&tuner.time_sets()[k]), t)?;
            }
        }
        Ok(Outcome {
            evaluation: tuner.assemble(times.to_vec()),
            from_db: built.is_none(),
            timed,
        })
    }

    fn keep_verification(
        &self,
        a: &Assignment,
        outcome: &Result<(), crate::engine::Failure>,
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
/// file, template, target, device and versions.
pub(crate) fn context(tuner: &Tuner, template: &str) -> Result<Context, Error> {
    let run = tuner.run();
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
        device: device_identity(run.target, &run.devices)?,
        version: format!(
            "shine {}, {}",
            env!("CARGO_PKG_VERSION"),
            toolchain(run.target, &run.devices)
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
