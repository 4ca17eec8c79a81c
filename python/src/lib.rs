//! The native part of the Python package `shine` (`shine._shine`); the package's
//! `__init__.py` re-exports it and documents the API.
//!
//! * [`kernel`]: `compile`, the `Kernel` it returns, and `eval` (the interpreter);
//! * [`tuning`]: `explore`, the tuning of a strategy template's parameters, and the
//!   `ExploreResult` it returns;
//! * [`cluster`]: `explore(cluster=...)`'s Dask cluster, and what its workers run;
//! * [`fast`]: the fast path of a call on C and OpenMP code loaded in this process;
//! * [`convert`]: the general path's conversions, through the library's `.npy` boundary;
//! * [`device`]: calls of CUDA kernels on CUDA arrays in place, and `DeviceArray`;
//! * [`dlpack`]: the DLPack protocol, taking and giving arrays;
//! * [`cache`]: the on-disk cache of compiled kernels;
//! * [`errors`]: `shine.Error` and its subclasses by stage.

use pyo3::prelude::*;

mod cache;
mod cluster;
mod convert;
mod device;
mod dlpack;
mod errors;
mod fast;
mod kernel;
mod tuning;

/// The directory of the kernel cache: `$SHINE_CACHE_DIR`, or `~/.cache/shine`.
#[pyfunction]
fn cache_dir() -> String {
    cache::dir().display().to_string()
}

/// The module `shine._shine`.
#[pymodule]
fn _shine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<kernel::Kernel>()?;
    m.add_class::<device::DeviceArray>()?;
    m.add_function(wrap_pyfunction!(kernel::compile, m)?)?;
    m.add_function(wrap_pyfunction!(kernel::eval, m)?)?;
    m.add_class::<tuning::ExploreResult>()?;
    m.add_function(wrap_pyfunction!(tuning::explore, m)?)?;
    m.add_function(wrap_pyfunction!(cluster::_evaluate_candidate, m)?)?;
    m.add_function(wrap_pyfunction!(cluster::_worker_identity, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(cache_dir, m)?)?;
    Ok(())
}
