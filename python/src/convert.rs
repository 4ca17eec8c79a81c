//! Arrays between Python and the library's boundary, the general way: an input is encoded as
//! `.npy` bytes by numpy and read by the library's `.npy` reader (structured arrays, every
//! dtype, big-endian refused: the command line's rules and messages), and a result is encoded
//! by the library's `.npy` writer and read by numpy. The fast path ([`crate::fast`]) skips
//! this for plain arrays of the parameters' exact dtypes.

use crate::errors::{raise, Stage};
use numpy::PyUntypedArray;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use shine::inputs::Given;
use shine::{npy, Array, Output};

/// The DLPack device type of host memory (`kDLCPU`).
const DLPACK_CPU: i64 = 1;

/// `x` as a numpy array: itself, a CPU DLPack array through `numpy.from_dlpack` (no copy),
/// or `numpy.asarray(x)` (Python scalars and lists). `index` counts from 1, for messages.
pub fn as_ndarray<'py>(x: &Bound<'py, PyAny>, index: usize) -> PyResult<Bound<'py, PyAny>> {
    if x.cast::<PyUntypedArray>().is_ok() {
        return Ok(x.clone());
    }
    let numpy = x.py().import("numpy")?;
    if x.hasattr("__dlpack__")? {
        if x.hasattr("__dlpack_device__")? {
            let (device, id): (i64, i64) = x.call_method0("__dlpack_device__")?.extract()?;
            if device != DLPACK_CPU {
                return Err(raise(
                    Stage::Input,
                    format!(
                        "error: input {index} is a DLPack array on device type {device} (id \
                         {id}), not in host memory: copy it to the host first (`x.cpu()` in \
                         PyTorch); only kernels compiled for CUDA take CUDA arrays"
                    ),
                ));
            }
        }
        return numpy.call_method1("from_dlpack", (x,));
    }
    numpy.call_method1("asarray", (x,))
}

/// The input `array` (a numpy array) as the library reads an `.npy` file, called `name`.
pub fn given(array: &Bound<'_, PyAny>, name: &str) -> PyResult<Given> {
    let helper = array.py().import("shine._convert")?;
    let encoded = helper.call_method1("npy_bytes", (array,))?;
    let bytes = encoded.cast::<PyBytes>()?.as_bytes();
    let contents = npy::read_contents_bytes(bytes, name)
        .map_err(|e| raise(Stage::Input, format!("error: {e}")))?;
    Ok(Given::new(name, contents))
}

/// The numpy array of one part of a result.
pub fn to_numpy<'py>(py: Python<'py>, array: &Array) -> PyResult<Bound<'py, PyAny>> {
    let bytes =
        npy::to_npy_bytes(array).map_err(|e| raise(Stage::Execution, format!("error: {e}")))?;
    let helper = py.import("shine._convert")?;
    helper.call_method1("from_npy_bytes", (PyBytes::new(py, &bytes),))
}

/// A result as Python sees it: one numpy array, or a tuple of them for a tuple.
pub fn output<'py>(py: Python<'py>, output: &Output) -> PyResult<Bound<'py, PyAny>> {
    let parts = output
        .parts
        .iter()
        .map(|p| to_numpy(py, p))
        .collect::<PyResult<Vec<_>>>()?;
    match parts.len() {
        1 => Ok(parts.into_iter().next().expect("one part")),
        _ => Ok(PyTuple::new(py, parts)?.into_any()),
    }
}

/// Copies `result` into the arrays `out` (one, or a tuple of as many as the result has parts),
/// each of the same shape and dtype; returns `out`.
pub fn copy_into<'py>(
    result: &Bound<'py, PyAny>,
    out: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let helper = result.py().import("shine._convert")?;
    helper
        .call_method1("copy_into", (result, out))
        .map_err(|e| raise(Stage::Input, format!("error: {}", e.value(result.py()))))?;
    Ok(out.clone())
}
