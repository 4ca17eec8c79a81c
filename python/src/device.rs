//! Calls of CUDA kernels on arrays in CUDA device memory (PyTorch, CuPy or JAX arrays, taken
//! through DLPack), without copies: the kernels read the inputs and write the results where
//! they are, in `out=` arrays or in new [`DeviceArray`]s, which give themselves away through
//! DLPack too.
//!
//! A call is planned as the fast path plans one ([`FastPlan`]): each parameter a plain array of
//! scalars (a vector's lanes one more axis) whose extents give the sizes, each part of the
//! result a plain array. The arrays must be compact and row-major, of their parameter's exact
//! dtype, on the device the kernels run on (CUDA device 0). Synchronisation is the runtime's
//! ([`runtime::CudaProgram::run_on_device`]): the producers are asked to order their work
//! before CUDA's legacy default stream, the device is waited for before and after the
//! launches, and the GIL is released meanwhile.

use crate::dlpack::{self, Device, Imported, DEVICE_CPU, DEVICE_CUDA};
use crate::errors::{raise, Stage};
use crate::fast::{self, Axis, FastPlan, Halves};
use numpy::PyUntypedArray;
use pyo3::exceptions::PyBufferError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rise::{DataType, ScalarType};
use runtime::{CudaLaunch, CudaMemory, CudaProgram, DeviceRegion};
use shine::gpu::{GpuBuilds, CUDA_MAX_THREADS};
use shine::{Artifact, Code, Target};
use std::sync::Arc;

/// An array in CUDA device memory: a result of a kernel called on CUDA arrays. PyTorch, CuPy
/// and JAX take it without a copy (`torch.from_dlpack(r)`); `numpy()` copies it to the host.
#[pyclass(module = "shine", frozen)]
pub struct DeviceArray {
    memory: Arc<CudaMemory>,
    shape: Vec<usize>,
    dtype: ScalarType,
}

#[pymethods]
impl DeviceArray {
    /// The extents, outermost first.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.shape)
    }

    /// The element type's name, as numpy and PyTorch say it (`"float32"`, `"bfloat16"`).
    #[getter]
    fn dtype(&self) -> String {
        dlpack::type_name(dlpack::dl_type(self.dtype))
    }

    /// The size in bytes.
    #[getter]
    fn nbytes(&self) -> usize {
        self.memory.len()
    }

    /// A copy in host memory, as a numpy array (`bfloat16` as its bit patterns, `uint16`).
    fn numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let array = fast::empty(py, &self.shape, self.dtype)?;
        let data = fast::data(array.cast::<PyUntypedArray>()?) as usize;
        let memory = &self.memory;
        py.detach(|| {
            // SAFETY: `data` is the buffer of the new C-contiguous array of this shape and
            // dtype, of exactly `memory.len()` bytes, alive (held by `array`) and written by
            // nothing else.
            let host = unsafe { std::slice::from_raw_parts_mut(data as *mut u8, memory.len()) };
            memory.copy_to_host(host)
        })
        .map_err(|e| raise(Stage::Execution, format!("error: {e}")))?;
        Ok(array)
    }

    /// A DLPack capsule of the array (the unversioned protocol). The array is complete when
    /// the call that made it returns, so any `stream` may use it at once.
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<&Bound<'py, PyAny>>,
        max_version: Option<&Bound<'py, PyAny>>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = (stream, max_version);
        let device = self.__dlpack_device__();
        if dl_device.is_some_and(|d| d != device) {
            return Err(PyBufferError::new_err(format!(
                "a shine.DeviceArray is on CUDA device {}; it is not exported to another device",
                device.1
            )));
        }
        if copy == Some(true) {
            return Err(PyBufferError::new_err(
                "a shine.DeviceArray is exported without a copy (copy=True is not supported)",
            ));
        }
        dlpack::export(
            py,
            self.memory.clone(),
            &self.shape,
            dlpack::dl_type(self.dtype),
            device.1,
        )
    }

    /// `(2, ordinal)`: CUDA memory of the device the kernel ran on.
    fn __dlpack_device__(&self) -> (i32, i32) {
        (DEVICE_CUDA, self.memory.device().ordinal() as i32)
    }

    fn __repr__(&self) -> String {
        format!(
            "<shine.DeviceArray shape={} dtype={} on CUDA device {}>",
            shine::npy::shape_text(&self.shape),
            self.dtype(),
            self.memory.device().ordinal()
        )
    }
}

/// Where the arrays of a call are: all in host memory, or all on a CUDA device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Host,
    Cuda,
}

/// Where the inputs `arrays` and the arrays of `out` are, for a kernel of `target` named
/// `def`: an error where some are on a CUDA device and others in host memory, where the
/// kernel is not CUDA code, or where an array is on another kind of device.
pub fn place(
    arrays: &Bound<'_, PyTuple>,
    out: Option<&Bound<'_, PyAny>>,
    target: Target,
    def: &str,
) -> PyResult<Place> {
    let mut named = Vec::new();
    for (i, x) in arrays.iter().enumerate() {
        named.push((format!("input {}", i + 1), dlpack::device_of(&x)?));
    }
    for (k, part) in out_parts(out).iter().enumerate() {
        named.push((format!("out= part {k}"), dlpack::device_of(part)?));
    }
    let on_device = |d: &Option<(i32, i32)>| d.is_some_and(|(t, _)| t != DEVICE_CPU);
    let Some((first, Some((kind, id)))) = named.iter().find(|(_, d)| on_device(d)) else {
        return Ok(Place::Host);
    };
    let bad = |m: String| Err(raise(Stage::Input, format!("error: {m}")));
    if *kind != DEVICE_CUDA {
        return bad(format!(
            "{first} is a DLPack array on device type {kind} (id {id}); shine takes arrays in \
             host memory and on CUDA devices (type {DEVICE_CUDA})"
        ));
    }
    if target != Target::Cuda {
        return bad(format!(
            "{first} is on CUDA device {id}, but `{def}` is compiled for target {}: compile it \
             with target=\"cuda\" to call it on CUDA arrays, or copy them to the host",
            target.name()
        ));
    }
    if let Some((host, _)) = named.iter().find(|(_, d)| !on_device(d)) {
        return bad(format!(
            "{host} is in host memory and {first} on CUDA device {id}: give every array of a \
             call on the device (a scalar as a 0-dimensional tensor, `torch.tensor(2.0, \
             device=\"cuda\")`) or every one in host memory"
        ));
    }
    Ok(Place::Cuda)
}

/// The arrays of `out=`: one, or the parts of a tuple.
fn out_parts<'py>(out: Option<&Bound<'py, PyAny>>) -> Vec<Bound<'py, PyAny>> {
    match out {
        None => Vec::new(),
        Some(out) => match out.cast::<PyTuple>() {
            Ok(parts) => parts.iter().collect(),
            Err(_) => vec![out.clone()],
        },
    }
}

/// A CUDA kernel to call on CUDA arrays: its artifact and its builds.
pub struct CudaCall<'a> {
    pub artifact: &'a Artifact,
    pub builds: &'a GpuBuilds,
    pub fast_math: bool,
}

/// The inputs of a call taken from their producers, and the values of the sizes.
struct Taken {
    inputs: Vec<Imported>,
    /// The values of the plan's sizes, by its order.
    values: Vec<Option<i64>>,
}

impl CudaCall<'_> {
    /// Runs the kernels on the CUDA arrays `arrays` with the sizes `nats`: the result in
    /// `out` when given, else in new [`DeviceArray`]s (a tuple of them for a tuple).
    pub fn call<'py>(
        &self,
        arrays: &Bound<'py, PyTuple>,
        out: Option<&Bound<'py, PyAny>>,
        nats: &[(String, i64)],
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = arrays.py();
        let Code::Gpu(module) = &self.artifact.code else {
            return Err(self.input_error("is not GPU code (internal error)".into()));
        };
        let plan = self.plan(module)?;
        let bound = self.bind(&plan, arrays, nats)?;
        let sizes = self.code_sizes(&plan, &bound.values)?;
        let width = module.index_width(&sizes);
        self.check_layouts(&plan, width)?;
        let program = py
            .detach(|| self.builds.cuda(module, width, self.fast_math))
            .map_err(|e| raise(Stage::Compile, e))?;
        let ordinal = program.device().ordinal();
        for (i, input) in bound.inputs.iter().enumerate() {
            check_device(input, ordinal, &format!("input {}", i + 1))?;
        }
        let shapes = plan
            .out_shapes(&bound.values)
            .ok_or_else(|| self.input_error("has a result of negative extent".into()))?;
        let results = Results::new(py, &plan, &program, shapes, out)?;
        let outputs = results.regions();
        let inputs: Vec<DeviceRegion> = bound
            .inputs
            .iter()
            .zip(&plan.params)
            .map(|(x, p)| region(x, p.dtype))
            .collect();
        check_apart(&outputs, &inputs)?;
        let host = shine::gpu::plan::<CudaLaunch>(
            module,
            (&sizes, width),
            (outputs.len(), inputs.len()),
            CUDA_MAX_THREADS,
        )
        .map_err(|e| raise(Stage::Input, e))?;
        let regions: Vec<DeviceRegion> = outputs.into_iter().chain(inputs).collect();
        let status_index = regions.len() + host.status;
        let status = py
            .detach(|| {
                // SAFETY: every region is a compact array on the kernels' device (checked in
                // `bind`, `check_device` and `Results::new`), of the extents the sizes say,
                // which the launches were planned for, held by its producer (or a
                // `CudaMemory`) until after the call; the outputs are apart from the inputs
                // (`check_apart`).
                unsafe {
                    program.run_on_device(
                        &host.launches,
                        &regions,
                        &host.temporaries,
                        Some(status_index),
                    )
                }
            })
            .map_err(|e| raise(Stage::Execution, format!("error: {e}")))?;
        drop(bound);
        if status != 0 {
            let def = self.artifact.def();
            return Err(raise(Stage::Execution, shine::program_status(def, status)));
        }
        results.into_python(py)
    }

    /// The plan of the definition: plain arrays in and out.
    fn plan(&self, module: &codegen::GpuModule) -> PyResult<FastPlan> {
        let code_sizes: Vec<String> = module.sizes.iter().map(|v| v.name().to_string()).collect();
        let scheme = &self.artifact.lowered.scheme;
        FastPlan::with_halves(self.artifact.def(), scheme, &code_sizes, Halves::AsTheyAre)
            .ok_or_else(|| {
                self.input_error(format!(
                    "(`{scheme}`) cannot take CUDA arrays: its parameters and result must be \
                     plain arrays of scalars or vectors (no tuples, no indices) whose extents \
                     are sizes or constants; call it on numpy arrays"
                ))
            })
    }

    /// The inputs taken from their producers and checked against the parameters, and the
    /// sizes their extents and `nats` give.
    fn bind(
        &self,
        plan: &FastPlan,
        arrays: &Bound<'_, PyTuple>,
        nats: &[(String, i64)],
    ) -> PyResult<Taken> {
        if arrays.len() != plan.params.len() {
            return Err(self.input_error(format!(
                "takes {} inputs, {} given",
                plan.params.len(),
                arrays.len()
            )));
        }
        let mut values: Vec<Option<i64>> = vec![None; plan.sizes.len()];
        for (name, v) in nats {
            let k = plan.sizes.iter().position(|s| s == name).ok_or_else(|| {
                self.input_error(format!("has no size `{name}` (it has {:?})", plan.sizes))
            })?;
            values[k] = Some(*v);
        }
        let mut inputs = Vec::with_capacity(arrays.len());
        for (i, (x, p)) in arrays.iter().zip(&plan.params).enumerate() {
            let what = format!("input {}", i + 1);
            let input = Imported::take(&x, &what)?;
            check_array(&input, p.dtype, &what)?;
            self.bind_extents(plan, i, &input, &mut values)?;
            inputs.push(input);
        }
        Ok(Taken { inputs, values })
    }

    /// Binds the extents of input `i` to its parameter's axes: constants must match, a size
    /// takes the extent or must equal the value it has.
    fn bind_extents(
        &self,
        plan: &FastPlan,
        i: usize,
        input: &Imported,
        values: &mut [Option<i64>],
    ) -> PyResult<()> {
        let p = &plan.params[i];
        let shape = input.shape();
        let parameter = || format!("parameter {} of `{}`", i + 1, self.artifact.def());
        if shape.len() != p.axes.len() {
            return Err(raise(
                Stage::Input,
                format!(
                    "error: input {} has {} dimension(s), {} takes an array of {} (of shape \
                     {})",
                    i + 1,
                    shape.len(),
                    parameter(),
                    p.axes.len(),
                    axes_text(plan, &p.axes)
                ),
            ));
        }
        for (axis, &extent) in p.axes.iter().zip(shape) {
            let clash = match *axis {
                Axis::Const(c) => (c as i64 != extent).then(|| format!("{c}")),
                Axis::Size(k) => match values[k] {
                    None => {
                        values[k] = Some(extent);
                        None
                    }
                    Some(v) if v == extent => None,
                    Some(v) => Some(format!("{} = {v}", plan.sizes[k])),
                },
            };
            if let Some(want) = clash {
                return Err(raise(
                    Stage::Input,
                    format!(
                        "error: input {} has shape {}, which does not fit {} (of shape {}): an \
                         extent {extent} where it needs {want}",
                        i + 1,
                        shape_text(shape),
                        parameter(),
                        axes_text(plan, &p.axes)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The values of the sizes the code takes, each given by a shape or a keyword, checked
    /// against the constraints of the definition as lowered.
    fn code_sizes(&self, plan: &FastPlan, values: &[Option<i64>]) -> PyResult<Vec<i64>> {
        let known: Vec<(rise::types::Name, i64)> = plan
            .sizes
            .iter()
            .zip(values)
            .filter_map(|(s, v)| v.map(|v| (s.as_str().into(), v)))
            .collect();
        let def = self.artifact.def();
        rise::constraints::check_all(&self.artifact.lowered.constraints, &known).map_err(|v| {
            raise(
                Stage::Input,
                format!(
                    "error: size constraint of `{def}` as lowered by the strategy does not \
                     hold: {v}\nnote: the code computes only on sizes that satisfy `{}`",
                    v.constraint
                ),
            )
        })?;
        plan.code_sizes
            .iter()
            .map(|&k| {
                values[k].ok_or_else(|| {
                    let name = &plan.sizes[k];
                    self.input_error(format!(
                        "has the size `{name}`, which no input's shape gives: give it as \
                         `{name}=V`"
                    ))
                })
            })
            .collect()
    }

    /// Checks that the kernels lay out every element as the arrays do (a vector of three
    /// lanes takes four on a GPU, indices 32 bits where `width` is).
    fn check_layouts(&self, plan: &FastPlan, width: codegen::gpu::IndexWidth) -> PyResult<()> {
        let params = plan.params.iter().map(|p| (&p.elem, p.dtype));
        let outputs = plan.outputs.iter().map(|o| (&o.elem, o.dtype));
        for (elem, dtype) in params.chain(outputs) {
            let bytes = shine::boundary::element_bytes(elem, width).ok();
            let lanes = match elem {
                DataType::Vector(n, _) => n.as_cst().and_then(|n| usize::try_from(n).ok()),
                _ => Some(1),
            };
            if bytes != lanes.map(|l| l * item_bytes(dtype)) {
                return Err(self.input_error(format!(
                    "has `{elem}` data, which the CUDA kernels lay out other than a {} array; \
                     call it on numpy arrays",
                    dlpack::type_name(dlpack::dl_type(dtype))
                )));
            }
        }
        Ok(())
    }

    fn input_error(&self, what: String) -> PyErr {
        raise(
            Stage::Input,
            format!("error: `{}` {what}", self.artifact.def()),
        )
    }
}

/// Checks that `x` holds `dtype` scalars in compact row-major order.
fn check_array(x: &Imported, dtype: ScalarType, what: &str) -> PyResult<()> {
    let bad = |m: String| Err(raise(Stage::Input, format!("error: {what}: {m}")));
    if !dlpack::holds(x.dtype(), dtype) {
        let want = dlpack::type_name(dlpack::dl_type(dtype));
        return bad(format!(
            "the elements must be {want}, the array has {}",
            dlpack::type_name(x.dtype())
        ));
    }
    if !x.is_compact() {
        return bad(format!(
            "the array of shape {} is not contiguous in row-major order (a transposed or \
             sliced view): CUDA arrays are passed as they are, so make it contiguous first \
             (`x.contiguous()` in PyTorch)",
            shape_text(x.shape())
        ));
    }
    Ok(())
}

/// Checks that `x` is on CUDA device `ordinal`, the kernels' device (by its tensor, whatever
/// its `__dlpack_device__` said).
fn check_device(x: &Imported, ordinal: usize, what: &str) -> PyResult<()> {
    let Device {
        device_type,
        device_id: id,
    } = x.device();
    if device_type != DEVICE_CUDA {
        return Err(raise(
            Stage::Input,
            format!("error: {what}: its DLPack tensor is on device type {device_type}, not CUDA"),
        ));
    }
    if usize::try_from(id).ok() == Some(ordinal) {
        return Ok(());
    }
    Err(raise(
        Stage::Input,
        format!(
            "error: {what} is on CUDA device {id}, but the kernels run on CUDA device \
             {ordinal}: move it there first (`x.to(\"cuda:{ordinal}\")` in PyTorch)"
        ),
    ))
}

/// The device memory of `x`, an array of `dtype` scalars.
fn region(x: &Imported, dtype: ScalarType) -> DeviceRegion {
    let elements: i64 = x.shape().iter().product();
    DeviceRegion {
        address: x.address(),
        bytes: elements.max(0) as usize * item_bytes(dtype),
    }
}

/// Checks that no output overlaps an input: the kernels read the inputs while they write.
fn check_apart(outputs: &[DeviceRegion], inputs: &[DeviceRegion]) -> PyResult<()> {
    let span = |r: &DeviceRegion| (r.address, r.address.saturating_add(r.bytes as u64));
    for (k, o) in outputs.iter().enumerate() {
        for (i, x) in inputs.iter().enumerate() {
            let ((a0, a1), (b0, b1)) = (span(o), span(x));
            if o.bytes > 0 && x.bytes > 0 && a0 < b1 && b0 < a1 {
                return Err(raise(
                    Stage::Input,
                    format!(
                        "error: out=: part {k} overlaps input {} in memory; the code reads its \
                         inputs while it writes the result",
                        i + 1
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The bytes of one scalar of `dtype`.
fn item_bytes(dtype: ScalarType) -> usize {
    usize::from(dlpack::dl_type(dtype).bits).div_ceil(8)
}

/// A shape as numpy prints it: `(3, 4)`, `(5,)`, `()`.
fn shape_text(shape: &[i64]) -> String {
    let dims: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
    shine::npy::shape_text(&dims)
}

/// A parameter's axes as a shape over the sizes: `(n, 4)`.
fn axes_text(plan: &FastPlan, axes: &[Axis]) -> String {
    let names: Vec<String> = axes
        .iter()
        .map(|a| match *a {
            Axis::Const(c) => c.to_string(),
            Axis::Size(k) => plan.sizes[k].clone(),
        })
        .collect();
    match names.len() {
        1 => format!("({},)", names[0]),
        _ => format!("({})", names.join(", ")),
    }
}

/// Where the result goes: the `out=` arrays (`out` and its parts taken from their
/// producers), or new memory.
enum Results<'py> {
    Out(Bound<'py, PyAny>, Vec<(Imported, ScalarType)>),
    New(Vec<(Arc<CudaMemory>, Vec<usize>, ScalarType)>),
}

impl<'py> Results<'py> {
    /// The arrays of `out`, checked against the result's parts (`shapes` and the plan's
    /// dtypes) and the device of `program`; or new zeroed memory on that device.
    fn new(
        py: Python<'py>,
        plan: &FastPlan,
        program: &CudaProgram,
        shapes: Vec<Vec<usize>>,
        out: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Results<'py>> {
        let Some(out) = out else {
            let device = program.device();
            let mut parts = Vec::with_capacity(shapes.len());
            for (shape, o) in shapes.into_iter().zip(&plan.outputs) {
                let bytes = shape.iter().product::<usize>() * item_bytes(o.dtype);
                let memory = py
                    .detach(|| CudaMemory::zeroed(device, bytes))
                    .map_err(|e| raise(Stage::Execution, format!("error: {e}")))?;
                parts.push((Arc::new(memory), shape, o.dtype));
            }
            return Ok(Results::New(parts));
        };
        let arrays = out_parts(Some(out));
        if arrays.len() != shapes.len() {
            return Err(raise(
                Stage::Input,
                format!(
                    "error: out=: the result of `{}` has {} part(s), {} array(s) given",
                    plan.def,
                    shapes.len(),
                    arrays.len()
                ),
            ));
        }
        let mut parts = Vec::with_capacity(arrays.len());
        for (k, ((a, shape), o)) in arrays.iter().zip(&shapes).zip(&plan.outputs).enumerate() {
            let what = format!("out=: part {k}");
            let x = Imported::take(a, &what)?;
            check_array(&x, o.dtype, &what)?;
            let want: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
            if x.shape() != want.as_slice() {
                return Err(raise(
                    Stage::Input,
                    format!(
                        "error: {what} must have shape {}, it has shape {}",
                        shine::npy::shape_text(shape),
                        shape_text(x.shape())
                    ),
                ));
            }
            check_device(&x, program.device().ordinal(), &what)?;
            parts.push((x, o.dtype));
        }
        Ok(Results::Out(out.clone(), parts))
    }

    /// The device memory of each part.
    fn regions(&self) -> Vec<DeviceRegion> {
        match self {
            Results::Out(_, parts) => parts.iter().map(|(x, t)| region(x, *t)).collect(),
            Results::New(parts) => parts.iter().map(|(m, _, _)| m.region()).collect(),
        }
    }

    /// The result as Python sees it: `out` itself, or one [`DeviceArray`] or a tuple of them.
    fn into_python(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let parts = match self {
            Results::Out(out, _) => return Ok(out),
            Results::New(parts) => parts,
        };
        let arrays = parts
            .into_iter()
            .map(|(memory, shape, dtype)| {
                Bound::new(
                    py,
                    DeviceArray {
                        memory,
                        shape,
                        dtype,
                    },
                )
                .map(Bound::into_any)
            })
            .collect::<PyResult<Vec<_>>>()?;
        match arrays.len() {
            1 => Ok(arrays.into_iter().next().expect("one part")),
            _ => Ok(PyTuple::new(py, arrays)?.into_any()),
        }
    }
}
