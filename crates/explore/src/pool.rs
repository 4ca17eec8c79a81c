//! Evaluating a batch of a tuning's candidates: outcomes the tuning database knows are read
//! from it; the others are compiled and verified by a pool of CPU workers, then timed (or
//! measured by a cluster's workers, [`crate::remote`]), and added to the database.
//!
//! Timing is isolated: it starts once every compile and verification of the batch is done
//! (no worker runs while a candidate is timed), and one candidate is timed at a time per
//! device: serially on the CPU (C, OpenMP) and on one GPU, or one candidate per CUDA device
//! at once with several devices.

use crate::engine::{show, Error, Phase, Progress};
use crate::log::fingerprint;
use crate::params::Assignment;
use crate::remote::{Identity, Measurement, Remote, Request};
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
        built: Result<(), crate::engine::Failure>,
        times: Vec<Option<Timed>>,
    },
    /// Lost with the cluster's worker that measured it: nothing is known.
    Lost(crate::engine::Failure),
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

    /// How many candidates a batch holds: enough for every worker and every device (or
    /// every worker of the cluster).
    pub fn batch_size(&self) -> usize {
        match self.remote {
            Some(remote) => remote.capacity().max(1),
            None => self.jobs.max(self.devices.len()),
        }
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
        let measured = match self.remote {
            None => self.measure_here(tuner, batch, &known, progress),
            Some(remote) => self.measure_remotely(remote, tuner, batch, &known, progress)?,
        };
        batch
            .iter()
            .zip(known)
            .zip(measured)
            .map(|((a, k), m)| self.outcome(tuner, a, k, m))
            .collect()
    }

    /// Measures the batch's candidates the database does not know all of on this host:
    /// built by the pool of workers, then timed on the devices.
    fn measure_here(
        &self,
        tuner: &Tuner,
        batch: &[Assignment],
        known: &[Known],
        progress: &mut dyn Progress<Record>,
    ) -> Vec<Measured> {
        let built = self.build(tuner, batch, known, progress);
        let mut times = self.time(tuner, batch, known, &built, progress);
        built
            .into_iter()
            .enumerate()
            .map(|(i, b)| match b {
                None => Measured::Nothing,
                Some(b) => Measured::Built {
                    built: b.map(drop),
                    times: std::mem::take(&mut times[i]),
                },
            })
            .collect()
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
        let todo = needing_work(known);
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
        let mut times: Vec<Vec<Option<Timed>>> =
            known.iter().map(|k| vec![None; k.times.len()]).collect();
        let missing = |i: usize| known[i].missing();
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

/// What a worker answered of a candidate, its times placed at the time sets the
/// candidate's request named (those `known` lacks).
fn placed(
    answer: Result<Measurement, crate::engine::Failure>,
    known: &Known,
) -> Result<Measured, Error> {
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
