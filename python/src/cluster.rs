//! `shine.explore(..., cluster=client)`: the tuning's candidates measured by the workers of
//! a Dask cluster. The driver (this process) keeps the search, the database and the log
//! ([`::explore::tune::run_remote`]); [`DaskCluster`] hands each batch's requests to
//! `shine._cluster`, which submits one Dask task per candidate; a task runs
//! [`_evaluate_candidate`] on a worker.

use ::explore::engine::{Error, Failure};
use ::explore::remote::{self, Identity, Measurement, Remote, Request};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use shine::Target;
use std::sync::Mutex;

use crate::errors::{raise, Stage};

/// `_evaluate_candidate(request_json) -> measurement_json`: compiles, verifies and times
/// one candidate of a tuning here (on a cluster's worker), the GIL released.
#[pyfunction]
pub fn _evaluate_candidate(py: Python<'_>, request_json: &str) -> PyResult<String> {
    let request =
        Request::from_json(request_json).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let measured = py.detach(|| remote::measure(&request));
    measured
        .map(|m| m.to_json())
        .map_err(|e| raise(Stage::Unknown, format!("error: {e}")))
}

/// `_worker_identity(target) -> (device, version)`: the device and toolchain this host
/// measures `target`'s candidates with, as the tuning database names them.
#[pyfunction]
pub fn _worker_identity(py: Python<'_>, target: &str) -> PyResult<(String, String)> {
    let target: Target = target.parse().map_err(PyValueError::new_err)?;
    py.detach(|| remote::identity(target))
        .map(|i| (i.device, i.version))
        .map_err(|e| raise(Stage::Unknown, format!("error: {e}")))
}

/// A Dask cluster, through its `dask.distributed.Client`, as the tuning's [`Remote`].
pub struct DaskCluster {
    client: Py<PyAny>,
    capacity: usize,
    /// The first Python exception a call raised: `explore` raises it as it was.
    raised: Mutex<Option<PyErr>>,
}

impl DaskCluster {
    /// The cluster of `client`; asks how many candidates its workers measure at once.
    pub fn new(client: &Bound<'_, PyAny>) -> PyResult<DaskCluster> {
        let capacity = cluster_module(client.py())?
            .call_method1("capacity", (client,))?
            .extract()?;
        Ok(DaskCluster {
            client: client.clone().unbind(),
            capacity,
            raised: Mutex::new(None),
        })
    }

    /// The Python exception a call raised, if one did.
    pub fn take_raised(&self) -> Option<PyErr> {
        self.raised.lock().ok().and_then(|mut r| r.take())
    }

    /// Calls `shine._cluster.NAME(client, *args)`; an exception is kept and told as an
    /// error of the tuning.
    fn call<'py, A, T>(&self, py: Python<'py>, name: &str, args: A) -> Result<T, Error>
    where
        A: IntoPyObject<'py>,
        T: for<'a> FromPyObject<'a, 'py>,
    {
        let answer = cluster_module(py).and_then(|m| {
            m.call_method1(name, (self.client.bind(py), args))?
                .extract()
                .map_err(Into::into)
        });
        answer.map_err(|e| {
            let text = format!("the cluster: {e}");
            if let Ok(mut r) = self.raised.lock() {
                r.get_or_insert(e);
            }
            Error::from(text)
        })
    }
}

fn cluster_module(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    py.import("shine._cluster")
}

impl Remote for DaskCluster {
    fn capacity(&self) -> usize {
        self.capacity
    }

    fn identity(&self, target: Target) -> Result<Identity, Error> {
        let (device, version): (String, String) =
            Python::attach(|py| self.call(py, "identity", target.to_string()))?;
        Ok(Identity { device, version })
    }

    fn measure(&self, requests: &[Request]) -> Result<Vec<Result<Measurement, Failure>>, Error> {
        let sent: Vec<(String, String)> =
            requests.iter().map(|r| (r.label(), r.to_json())).collect();
        let answers: Vec<(bool, String)> = Python::attach(|py| self.call(py, "measure", sent))?;
        answers
            .into_iter()
            .map(|(measured, text)| match measured {
                true => Measurement::from_json(&text).map(Ok),
                false => Ok(Err(remote::lost(&text))),
            })
            .collect()
    }
}
