//! `shine.explore`: tuning the parameters of a strategy template (the `explore` crate's
//! engine, as `shine explore --param` runs it), and the `ExploreResult` it returns.

use crate::cluster::DaskCluster;
use crate::errors::{raise, Stage};
use crate::kernel::{compile_from_strategy, source_file, Kernel};
use ::explore::engine::{Failure, Limits, MethodSummary, Progress, Run, Standing};
use ::explore::search::Method;
use ::explore::tune::{Best, Record, Tuning, TuningResult};
use ::explore::tuning::Bindings;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use shine::{SourceFile, Target};
use std::ops::ControlFlow;
use std::path::PathBuf;

/// `shine.explore(source_or_path, def_name, strategy_file, template, target="c", *, params,
/// require=(), verify_sizes, time_sizes=None, methods=("solver",), budget=None, time=None,
/// log=None, resume=None, seed=1, runs=5, db=None, jobs=1, devices=None, cluster=None)
/// -> ExploreResult`; with `cluster` (a `dask.distributed.Client`), its workers measure the
/// candidates ([`crate::cluster`]).
#[pyfunction]
#[pyo3(signature = (source, def_name, strategy_file, template, target="c", *, params,
    require=Vec::new(), verify_sizes, time_sizes=None, methods=None, budget=None, time=None,
    log=None, resume=None, seed=1, runs=5, db=None, jobs=1, devices=None, cluster=None))]
#[allow(clippy::too_many_arguments)]
pub fn explore(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    def_name: &str,
    strategy_file: &Bound<'_, PyAny>,
    template: &str,
    target: &str,
    params: &Bound<'_, PyDict>,
    require: Vec<String>,
    verify_sizes: &Bound<'_, PyAny>,
    time_sizes: Option<Vec<Bound<'_, PyDict>>>,
    methods: Option<Vec<String>>,
    budget: Option<usize>,
    time: Option<f64>,
    log: Option<PathBuf>,
    resume: Option<PathBuf>,
    seed: u64,
    runs: usize,
    db: Option<PathBuf>,
    jobs: usize,
    devices: Option<Vec<usize>>,
    cluster: Option<&Bound<'_, PyAny>>,
) -> PyResult<ExploreResult> {
    let target: Target = target.parse().map_err(PyValueError::new_err)?;
    let program = source_file(source, "rise", "<source>")?;
    let strategy = source_file(strategy_file, "elv", "<strategy>")?;
    let mut run = Run::new(program, def_name, target);
    run.strategy = Some(strategy);
    run.methods = methods_named(methods)?;
    run.limits = limits(budget, time)?;
    run.seed = seed;
    run.runs = positive("runs", runs)?;
    run.log = log;
    run.resume = resume;
    run.db = db;
    run.jobs = positive("jobs", jobs)?;
    run.devices = devices.unwrap_or_default();
    let mut verify = size_sets(verify_sizes)?.into_iter();
    let nats = verify
        .next()
        .ok_or_else(|| PyValueError::new_err("verify_sizes= names no size set"))?;
    let tuning = Tuning {
        run,
        template: template.to_string(),
        params: param_texts(params)?,
        requires: require,
        nats,
        verify_nats: verify.collect(),
        time_nats: time_sizes
            .unwrap_or_default()
            .iter()
            .map(bindings)
            .collect::<PyResult<_>>()?,
    };
    let cluster = match cluster {
        Some(client) => Some(dask_cluster(client, &tuning)?),
        None => None,
    };
    let mut progress = Signals { interrupt: None };
    let result = py.detach(|| match &cluster {
        None => ::explore::tune::run(&tuning, &mut progress),
        Some(c) => ::explore::tune::run_remote(&tuning, c, &mut progress),
    });
    if let Some(interrupt) = progress.interrupt {
        return Err(interrupt);
    }
    if let Some(raised) = cluster.as_ref().and_then(DaskCluster::take_raised) {
        return Err(raised);
    }
    let result = result.map_err(|e| match e {
        ::explore::engine::Error::Shine(e) => raise(Stage::Compile, e),
        ::explore::engine::Error::Message(m) => raise(
            Stage::Unknown,
            format!("error: {}", m.render(&crate::errors::keyword_of)),
        ),
    })?;
    Ok(ExploreResult { tuning, result })
}

/// The cluster of a `dask.distributed.Client`; `jobs=` and `devices=` choose this host's
/// workers and devices, which a cluster's run does not use.
fn dask_cluster(client: &Bound<'_, PyAny>, tuning: &Tuning) -> PyResult<DaskCluster> {
    if tuning.run.jobs > 1 || !tuning.run.devices.is_empty() {
        return Err(PyValueError::new_err(
            "jobs= and devices= choose this host's workers and CUDA devices: with cluster=, \
             the cluster's workers measure the candidates (start one worker per GPU)",
        ));
    }
    DaskCluster::new(client)
}

/// Stops the run between candidates when a signal handler raised (Ctrl-C).
struct Signals {
    interrupt: Option<PyErr>,
}

impl Progress<Record> for Signals {
    fn on_candidate(&mut self, _: &Record, _: &Standing) -> ControlFlow<()> {
        match Python::attach(|py| py.check_signals()) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                self.interrupt = Some(e);
                ControlFlow::Break(())
            }
        }
    }
}

/// The methods of their names (default: the solver).
fn methods_named(names: Option<Vec<String>>) -> PyResult<Vec<Method>> {
    let Some(names) = names else {
        return Ok(vec![Method::Solver]);
    };
    if names.is_empty() {
        return Err(PyValueError::new_err("methods= names no search method"));
    }
    names
        .iter()
        .map(|n| Method::named(n).map_err(PyValueError::new_err))
        .collect()
}

fn positive(name: &str, n: usize) -> PyResult<usize> {
    match n {
        0 => Err(PyValueError::new_err(format!("{name}= must be 1 or more"))),
        n => Ok(n),
    }
}

/// The budget per method: candidates, seconds or both; one is needed.
fn limits(budget: Option<usize>, time: Option<f64>) -> PyResult<Limits> {
    if let Some(b) = budget {
        positive("budget", b)?;
    }
    if time.is_some_and(|t| !(t.is_finite() && t > 0.0)) {
        return Err(PyValueError::new_err(
            "time= must be a positive, finite number of seconds",
        ));
    }
    if budget.is_none() && time.is_none() {
        return Err(PyValueError::new_err(
            "give budget= (candidates per method) or time= (seconds per method)",
        ));
    }
    Ok(Limits { budget, time })
}

/// `{"tm": [64, 128], "rm": 4, "wm": "tm/rm"}` as the command line's `--param` texts.
fn param_texts(params: &Bound<'_, PyDict>) -> PyResult<Vec<String>> {
    if params.is_empty() {
        return Err(PyValueError::new_err("params= names no parameter to tune"));
    }
    params
        .iter()
        .map(|(k, v)| {
            let name: String = k.extract()?;
            let value = if let Ok(expr) = v.extract::<String>() {
                expr
            } else if let Ok(x) = v.extract::<i64>() {
                x.to_string()
            } else {
                let values: Vec<i64> = v.extract().map_err(|_| {
                    PyValueError::new_err(format!(
                        "params[{name:?}]: give a list of integers, an integer or an \
                         expression (a string such as \"tm/rm\")"
                    ))
                })?;
                values
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            };
            Ok(format!("{name}={value}"))
        })
        .collect()
}

/// A dict of sizes, `{"n": 64}`.
fn bindings(d: &Bound<'_, PyDict>) -> PyResult<Bindings> {
    d.iter()
        .map(|(k, v)| Ok((k.extract::<String>()?, v.extract::<i64>()?)))
        .collect()
}

/// One dict of sizes or a list of them.
fn size_sets(x: &Bound<'_, PyAny>) -> PyResult<Vec<Bindings>> {
    if let Ok(d) = x.cast::<PyDict>() {
        return Ok(vec![bindings(d)?]);
    }
    let sets: Vec<Bound<'_, PyDict>> = x
        .extract()
        .map_err(|_| PyValueError::new_err("verify_sizes= is a dict of sizes or a list of them"))?;
    sets.iter().map(bindings).collect()
}

/// What `shine.explore` found: the best candidate per time size set and the counts.
#[pyclass(module = "shine", frozen)]
pub struct ExploreResult {
    tuning: Tuning,
    result: TuningResult,
}

impl ExploreResult {
    /// The strategy file of a best candidate: the user's file and `def best = ...`.
    fn strategy_text(&self, b: &Best) -> String {
        format!(
            "{}\n{}\n",
            self.tuning.run.user_strategy(),
            b.definition("best")
        )
    }

    /// A best candidate as a dict; `sizes` are what it runs at.
    fn best_dict<'py>(
        &self,
        py: Python<'py>,
        b: &Best,
        sizes: &Bindings,
    ) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("ms", b.ms)?;
        d.set_item("params", pairs(py, &b.assignment)?)?;
        d.set_item("sizes", pairs(py, sizes)?)?;
        d.set_item("method", b.method.name())?;
        d.set_item("strategy", self.strategy_text(b))?;
        Ok(d)
    }

    fn failed(&self) -> usize {
        self.result.records.iter().filter(|r| !r.is_valid()).count()
    }
}

/// Name-value pairs as a dict.
fn pairs<'py>(py: Python<'py>, xs: &Bindings) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in xs {
        d.set_item(k, v)?;
    }
    Ok(d)
}

fn failure_text(f: &Option<Failure>) -> Option<String> {
    f.as_ref().map(ToString::to_string)
}

fn summary_dict<'py>(py: Python<'py>, s: &MethodSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("method", s.method.name())?;
    d.set_item("candidates", s.candidates)?;
    d.set_item("resumed", s.resumed)?;
    d.set_item("valid", s.valid)?;
    d.set_item("sum_of_set_bests_ms", s.best_ms)?;
    d.set_item("seconds", s.seconds)?;
    d.set_item("time_to_90pct_best_s", s.time_to_90pct_best_s)?;
    Ok(d)
}

#[pymethods]
impl ExploreResult {
    /// The best candidate per time size set (`None` where none ran): a dict of `ms`,
    /// `params`, `sizes` (the set and the size parameters), `method` and `strategy` (a
    /// strategy file defining `best`).
    #[getter]
    fn best<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = (0..self.result.bests.len())
            .map(|k| match (&self.result.bests[k], self.result.sizes_of(k)) {
                (Some(b), Some(sizes)) => Ok(Some(self.best_dict(py, b, &sizes)?)),
                _ => Ok(None),
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// The best candidate that ran at every set (its `ms`: the total), or `None`.
    #[getter]
    fn best_on_every_set<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.result
            .best_on_every_set
            .as_ref()
            .map(|b| self.best_dict(py, b, &self.result.size_values(&b.assignment)))
            .transpose()
    }

    /// The sum of the per-set bests (ms), or `None` if a set has none.
    #[getter]
    fn sum_of_set_bests(&self) -> Option<f64> {
        self.result.sum_of_set_bests()
    }

    /// The time size sets, in order.
    #[getter]
    fn time_sizes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let sets = self
            .result
            .time_sets
            .iter()
            .map(|s| pairs(py, s))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, sets)
    }

    /// Candidates evaluated (those of a resumed log included).
    #[getter]
    fn candidates(&self) -> usize {
        self.result.records.len()
    }

    /// Of which compiled, verified and timed at some set.
    #[getter]
    fn valid(&self) -> usize {
        self.result.records.len() - self.failed()
    }

    /// Of which failed as a whole (not compiled, not verified, timed nowhere).
    #[getter(failed)]
    fn failed_count(&self) -> usize {
        self.failed()
    }

    /// Failures by cause, of candidates and of candidates at a set (`shine explore`'s
    /// `failures_by_cause`).
    #[getter]
    fn failures_by_cause<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.result.failures_by_cause {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// The raw assignments of the space and the valid ones enumerated.
    #[getter]
    fn raw_assignments(&self) -> u128 {
        self.result.raw_assignments
    }

    /// Candidates of this call timed now (at one size set or more).
    #[getter]
    fn timed(&self) -> usize {
        self.result.timed
    }

    /// Candidates of this call whose every outcome came from the tuning database (`db=`).
    #[getter(from_database)]
    fn candidates_from_database(&self) -> usize {
        self.result.from_database
    }

    /// The valid assignments of the space enumerated.
    #[getter]
    fn valid_assignments(&self) -> usize {
        self.result.valid_assignments
    }

    /// One dict per method run: `method`, `candidates`, `resumed`, `valid`,
    /// `sum_of_set_bests_ms`, `seconds`, `time_to_90pct_best_s`.
    #[getter]
    fn methods<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = self
            .result
            .methods
            .iter()
            .map(|s| summary_dict(py, s))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// Every candidate, as the log records it: `method`, `params`, `ms_per_set`,
    /// `failure`, `set_failures`, `elapsed_s`, `resumed`.
    #[getter]
    fn records<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = self
            .result
            .records
            .iter()
            .map(|r| {
                let d = PyDict::new(py);
                d.set_item("method", r.method.name())?;
                d.set_item("params", pairs(py, &r.assignment)?)?;
                d.set_item("ms_per_set", r.evaluation.ms.clone())?;
                d.set_item("failure", failure_text(&r.evaluation.failure))?;
                let set_failures: Vec<Option<String>> =
                    r.evaluation.set_failures.iter().map(failure_text).collect();
                d.set_item("set_failures", set_failures)?;
                d.set_item("elapsed_s", r.elapsed_s)?;
                d.set_item("resumed", r.resumed)?;
                Ok(d)
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// The best candidate of time set `i` (or, with `None`, the best on every set)
    /// compiled as a `Kernel`; call it with the sizes of `best[i]["sizes"]` that no
    /// shape gives.
    #[pyo3(signature = (i=None))]
    fn best_kernel(&self, py: Python<'_>, i: Option<usize>) -> PyResult<Kernel> {
        let best = match i {
            None => self.result.best_on_every_set.as_ref().ok_or_else(|| {
                PyValueError::new_err("no candidate ran at every set: give a set's index")
            })?,
            Some(k) => self
                .result
                .bests
                .get(k)
                .ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "there are {} time size sets",
                        self.result.bests.len()
                    ))
                })?
                .as_ref()
                .ok_or_else(|| PyValueError::new_err(format!("no candidate ran at set {k}")))?,
        };
        let run = &self.tuning.run;
        compile_from_strategy(
            py,
            run.program.clone(),
            &run.def,
            SourceFile::new("best.elv", self.strategy_text(best)),
            "best",
            run.target,
        )
    }

    fn __repr__(&self) -> String {
        let best = self
            .result
            .sum_of_set_bests()
            .map_or("-".to_string(), |t| format!("{t:.4} ms"));
        format!(
            "ExploreResult(candidates={}, valid={}, sets={}, sum_of_set_bests={best})",
            self.candidates(),
            self.valid(),
            self.result.time_sets.len()
        )
    }
}
