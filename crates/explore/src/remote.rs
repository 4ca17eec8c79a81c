//! Measuring a tuning's candidates elsewhere: on the workers of a cluster (Python's
//! `shine.explore(..., cluster=client)` hands them to Dask).
//!
//! The driver keeps the search: the tuning database, the ranking, the methods, the
//! progress and the log. For each candidate of a batch the database does not know all of,
//! it writes a [`Request`]: everything a worker needs to compile, verify and time the
//! candidate (the program's and the strategy file's text, the template, the assignment,
//! the size sets, the seed, the runs), as JSON, so that a worker needs no file of the
//! driver. A worker answers with a [`Measurement`] ([`measure`]), and a [`Remote`] (what
//! runs the requests) answers for the batch: a measurement per request, or the failure
//! [`WORKER_LOST`] for a candidate lost with its worker, which fails that candidate only
//! and is not kept in the database.

use crate::engine::{show, Error, Failure, Run};
use crate::params::Assignment;
use crate::pool::{self, Candidates};
use crate::tune::Tuner;
use crate::tunedb::Timed;
use crate::tuning::Bindings;
use serde::{Deserialize, Serialize};
use shine::{SourceFile, Target};

/// The cause of a candidate lost with the worker that measured it.
pub const WORKER_LOST: &str = "worker lost";

/// One candidate to compile, verify and time on a worker: self-contained.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The program's name (as messages name it) and text.
    pub program: Text,
    /// The definition tuned.
    pub def: String,
    /// The target, as the command line names it (`c`, `opencl`, ...).
    pub target: String,
    /// The user's strategy file, if any.
    pub strategy: Option<Text>,
    /// The strategy template naming the parameters.
    pub template: String,
    /// The values of the parameters.
    pub assignment: Assignment,
    /// The parameters that are sizes of the program (the candidate runs with their values).
    pub size_params: Vec<String>,
    /// Whether to verify the candidate (the database may know it was).
    pub verify: bool,
    /// The size sets it is verified at, in order (the first its constraints admit).
    pub verify_sets: Vec<Bindings>,
    /// The size sets to time it at (those the database has no outcome for).
    pub time_sets: Vec<Bindings>,
    /// The seed of the random inputs.
    pub seed: u64,
    /// Timed runs per size set (the median is kept).
    pub runs: usize,
    /// The rewriting budget of the strategy's application.
    pub rewrite_budget: u64,
}

/// A file's name and text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Text {
    /// The name messages give it.
    pub name: String,
    /// Its text.
    pub text: String,
}

impl From<&SourceFile> for Text {
    fn from(f: &SourceFile) -> Text {
        Text {
            name: f.name.clone(),
            text: f.text.clone(),
        }
    }
}

impl From<&Text> for SourceFile {
    fn from(t: &Text) -> SourceFile {
        SourceFile::new(t.name.clone(), t.text.clone())
    }
}

/// What a worker found of a [`Request`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Compiled (and verified, if asked), or why not.
    pub built: Result<(), Failure>,
    /// One outcome per time set of the request (none if it was not built).
    pub times: Vec<Timed>,
}

/// The device and the toolchain candidates are measured with, as the tuning database's
/// context names them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The CPU's model (and OpenMP's threads), the OpenCL device, or the CUDA device.
    pub device: String,
    /// shine's version and the C compiler's, the OpenCL version, or NVRTC's and the driver's.
    pub version: String,
}

/// What measures a batch's requests: the workers of a cluster.
pub trait Remote: Sync {
    /// How many candidates it measures at once (a batch holds as many).
    fn capacity(&self) -> usize;
    /// The device and toolchain of its workers (an error if they differ).
    fn identity(&self, target: Target) -> Result<Identity, Error>;
    /// Measures the requests: per request, its measurement, or a failure of cause
    /// [`WORKER_LOST`] where it was lost with its worker; an error stops the tuning (the
    /// workers cannot measure at all).
    fn measure(&self, requests: &[Request]) -> Result<Vec<Result<Measurement, Failure>>, Error>;
}

/// A candidate lost with its worker, `detail` says how.
pub fn lost(detail: &str) -> Failure {
    Failure::new(WORKER_LOST, detail)
}

impl Request {
    /// The request of `a` of `tuner`'s tuning: verified if `verify`, timed at the time sets
    /// numbered `sets`.
    pub(crate) fn of(tuner: &Tuner, a: &Assignment, verify: bool, sets: &[usize]) -> Request {
        let run = tuner.run();
        Request {
            program: Text::from(&run.program),
            def: run.def.clone(),
            target: run.target.to_string(),
            strategy: run.strategy.as_ref().map(Text::from),
            template: tuner.template().to_string(),
            assignment: a.clone(),
            size_params: tuner.size_params().to_vec(),
            verify,
            verify_sets: tuner.verify_sets().to_vec(),
            time_sets: sets.iter().map(|&k| tuner.time_sets()[k].clone()).collect(),
            seed: run.seed,
            runs: run.runs,
            rewrite_budget: run.rewrite_budget,
        }
    }

    /// The request as JSON.
    pub fn to_json(&self) -> String {
        // a request holds strings, integers, booleans and lists of them: always JSON
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A request read from JSON.
    pub fn from_json(text: &str) -> Result<Request, Error> {
        serde_json::from_str(text)
            .map_err(|e| Error::from(format!("a candidate's request is not valid JSON: {e}")))
    }

    /// The candidate, as progress names it (`tm=64,rm=4`).
    pub fn label(&self) -> String {
        show(&self.assignment)
    }

    /// The run a worker compiles and times with.
    fn run(&self) -> Result<Run, Error> {
        let target: Target = self.target.parse().map_err(|e: String| Error::from(e))?;
        let mut run = Run::new(SourceFile::from(&self.program), &self.def, target);
        run.strategy = self.strategy.as_ref().map(SourceFile::from);
        run.seed = self.seed;
        run.runs = self.runs;
        run.rewrite_budget = self.rewrite_budget;
        Ok(run)
    }
}

impl Measurement {
    /// The measurement as JSON.
    pub fn to_json(&self) -> String {
        // failures and times are strings and numbers: always JSON
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A measurement read from JSON.
    pub fn from_json(text: &str) -> Result<Measurement, Error> {
        serde_json::from_str(text)
            .map_err(|e| Error::from(format!("a worker's measurement is not valid JSON: {e}")))
    }
}

/// Compiles, verifies (if asked) and times a request's candidate here (on a worker): on
/// CUDA, on device 0 of those this process sees.
pub fn measure(request: &Request) -> Result<Measurement, Error> {
    let tuner = Tuner::measuring(
        request.run()?,
        &request.template,
        request.size_params.clone(),
        request.verify_sets.clone(),
        request.time_sets.clone(),
    );
    let a = &request.assignment;
    Ok(match tuner.prepare(a, request.verify) {
        Err(failure) => Measurement {
            built: Err(failure),
            times: Vec::new(),
        },
        Ok(built) => Measurement {
            built: Ok(()),
            times: (0..request.time_sets.len())
                .map(|k| tuner.time_at(&built, a, k, 0))
                .collect(),
        },
    })
}

/// The device and toolchain this host measures `target`'s candidates with (on CUDA,
/// device 0).
pub fn identity(target: Target) -> Result<Identity, Error> {
    pool::identity_here(target, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> Request {
        Request {
            program: Text {
                name: "p.rise".into(),
                text: "def f = fun x => x \"quoted\"\n".into(),
            },
            def: "f".into(),
            target: "opencl".into(),
            strategy: Some(Text {
                name: "s.elv".into(),
                text: "def s(t) = lowerToC".into(),
            }),
            template: "s(t)".into(),
            assignment: vec![("t".into(), 4), ("n".into(), -2)],
            size_params: vec!["n".into()],
            verify: true,
            verify_sets: vec![vec![("m".into(), 8)], vec![("m".into(), 12)]],
            time_sets: vec![vec![("m".into(), 1 << 40)]],
            seed: u64::MAX,
            runs: 5,
            rewrite_budget: 100_000,
        }
    }

    #[test]
    fn a_request_reads_back_as_it_was_written() {
        let r = request();
        assert_eq!(Request::from_json(&r.to_json()).ok(), Some(r.clone()));
        let none = Request {
            strategy: None,
            ..r
        };
        assert_eq!(Request::from_json(&none.to_json()).ok(), Some(none));
        assert!(Request::from_json("{\"def\": \"f\"}").is_err());
    }

    #[test]
    fn a_measurement_reads_back_as_it_was_written() {
        let ms = Measurement {
            built: Ok(()),
            times: vec![
                Timed::Ms {
                    ms: 0.1 + 0.2,
                    runs: 3,
                },
                Timed::NotApplicable,
                Timed::Failed(Failure::new("run error", "out of memory")),
            ],
        };
        assert_eq!(Measurement::from_json(&ms.to_json()).ok(), Some(ms));
        let failed = Measurement {
            built: Err(Failure::new("wrong result", "x differs")),
            times: vec![],
        };
        assert_eq!(Measurement::from_json(&failed.to_json()).ok(), Some(failed));
    }

    #[test]
    fn a_request_of_an_unknown_target_is_an_error() {
        let r = Request {
            target: "fortran".into(),
            ..request()
        };
        assert!(measure(&r).is_err());
    }
}
