//! The fast path of a call on C and OpenMP code loaded in this process: plain C-contiguous
//! numpy arrays of the parameters' exact dtypes are passed to the entry point by their data
//! pointers (no copy), the result is allocated by numpy (or is `out=`), and the GIL is
//! released while the code runs.
//!
//! What a call needs is worked out once, when the kernel is compiled ([`FastPlan::of`]): the
//! dtype and the axes of each parameter (each a constant or a size), where each size of the
//! code comes from, and the shape of each buffer of the result as expressions over the sizes.
//! The buffers of the result are the library's ([`shine::boundary::buffers_of`]), and the
//! plan exists only where they are plain arrays (scalars, vectors as one more axis, indices
//! and naturals as int64): arrays of tuples are laid out as C structs, which take the general
//! path. A call that does not fit the plan (another dtype, a strided array, a shape that
//! disagrees, a size that no shape gives) takes the general path too, which converts what it
//! can and otherwise raises the command line's message; so does a call whose sizes violate a
//! constraint the code checks, for the message.

use crate::errors::{raise, Stage};
use arith::Nat;
use numpy::npyffi::{self, NPY_ARRAY_ALIGNED, NPY_ARRAY_C_CONTIGUOUS, NPY_ARRAY_WRITEABLE};
use numpy::{PyArrayDescr, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rise::{DataType, ScalarType, Type, TypeArg};
use runtime::{RuntimeError, SharedLibrary};
use std::ffi::c_void;

/// One axis of a parameter: a constant extent or a size of the definition.
#[derive(Clone, Debug)]
pub(crate) enum Axis {
    Const(usize),
    Size(usize),
}

/// A parameter: its numpy dtype and axes (a vector's lanes the last axis), and its element
/// (a scalar or a vector).
#[derive(Clone, Debug)]
pub(crate) struct Param {
    pub dtype: ScalarType,
    pub axes: Vec<Axis>,
    pub elem: DataType,
}

/// A buffer of the result: its numpy dtype, its shape over the sizes, and its element.
#[derive(Clone, Debug)]
pub(crate) struct OutBuffer {
    pub dtype: ScalarType,
    pub dims: Vec<Nat>,
    pub elem: DataType,
}

/// What a call on the fast path needs, worked out from the artifact.
#[derive(Clone, Debug)]
pub struct FastPlan {
    pub(crate) def: String,
    /// The size parameters of the definition, by name.
    pub(crate) sizes: Vec<String>,
    pub(crate) params: Vec<Param>,
    /// For each size the code takes (in its order), which of `sizes` it is.
    pub(crate) code_sizes: Vec<usize>,
    pub(crate) outputs: Vec<OutBuffer>,
}

/// Whether a plan takes the 16-bit floats as they are: memory on a GPU holds them as the
/// kernels do; numpy has no `bf16`, so the fast path leaves both to the general path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Halves {
    Refused,
    AsTheyAre,
}

/// What came of a call on the fast path.
pub enum Outcome<'py> {
    /// The result.
    Done(Bound<'py, PyAny>),
    /// The call does not fit the plan: the general path takes it.
    General,
}

impl FastPlan {
    /// The plan of the definition `def` of type `scheme` whose code takes the sizes
    /// `code_sizes` (in its order), `None` where its parameters or result are not plain
    /// arrays.
    pub fn of(def: &str, scheme: &Type, code_sizes: &[String]) -> Option<FastPlan> {
        FastPlan::with_halves(def, scheme, code_sizes, Halves::Refused)
    }

    /// [`FastPlan::of`], the 16-bit floats taken or refused as `halves` says.
    pub(crate) fn with_halves(
        def: &str,
        scheme: &Type,
        code_sizes: &[String],
        halves: Halves,
    ) -> Option<FastPlan> {
        let mut t = scheme;
        let mut sizes = Vec::new();
        while let Type::DepFun { binder, body, .. } = t {
            if binder.kind != rise::Kind::Nat {
                return None;
            }
            sizes.push(binder.name.to_string());
            t = body;
        }
        let mut params = Vec::new();
        while let Type::Fun(p, r) = t {
            params.push(param(p.as_data()?, &sizes, halves)?);
            t = r;
        }
        let Type::Data(result) = t else { return None };
        let code_sizes = code_sizes
            .iter()
            .map(|v| sizes.iter().position(|s| s == v))
            .collect::<Option<Vec<_>>>()?;
        Some(FastPlan {
            def: def.to_string(),
            outputs: out_buffers(scheme, result, halves)?,
            sizes,
            params,
            code_sizes,
        })
    }

    /// Runs `library` on `inputs` (numpy arrays) with the sizes `nats`, the result in `out`
    /// when given; [`Outcome::General`] when the call does not fit the plan.
    pub fn call<'py>(
        &self,
        library: &SharedLibrary,
        inputs: &[Bound<'py, PyAny>],
        nats: &[(String, i64)],
        out: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Outcome<'py>> {
        let Some(py) = inputs.first().map(|i| i.py()) else {
            return Ok(Outcome::General);
        };
        let Some((values, pointers)) = self.bind(py, inputs, nats) else {
            return Ok(Outcome::General);
        };
        let Some(code_sizes) = self
            .code_sizes
            .iter()
            .map(|&k| values[k])
            .collect::<Option<Vec<i64>>>()
        else {
            return Ok(Outcome::General);
        };
        let Some(shapes) = self.out_shapes(&values) else {
            return Ok(Outcome::General);
        };
        let outputs = match out {
            Some(out) => self.check_out(py, out, &shapes, inputs)?,
            None => shapes
                .iter()
                .zip(&self.outputs)
                .map(|(shape, o)| empty(py, shape, o.dtype))
                .collect::<PyResult<Vec<_>>>()?,
        };
        let mut buffers = outputs
            .iter()
            .map(|o| Ok(Pointer(data(o.cast::<PyUntypedArray>()?))))
            .collect::<PyResult<Vec<Pointer>>>()?;
        buffers.extend(pointers);
        let status = py.detach(move || {
            let buffers: Vec<*mut c_void> = buffers.iter().map(|p| p.0).collect();
            // SAFETY: each buffer is a C-contiguous, aligned numpy array of its parameter's
            // dtype whose axes are the extents the sizes say (checked in `bind`), and the
            // outputs are fresh arrays (or `out=`, checked not to overlap the inputs) of the
            // shapes of the result at these sizes; the arrays live until the call returns.
            unsafe { library.call(&buffers, &code_sizes) }
        });
        match status {
            Ok(()) => {}
            Err(RuntimeError::ProgramStatus { status, .. }) if status == SIZE_CONSTRAINT => {
                return Ok(Outcome::General)
            }
            Err(RuntimeError::ProgramStatus { status, .. }) => {
                return Err(raise(
                    Stage::Execution,
                    shine::program_status(&self.def, status),
                ))
            }
            Err(e) => return Err(raise(Stage::Execution, format!("error: {e}"))),
        }
        let result = match out {
            Some(out) => out.clone(),
            None if outputs.len() == 1 => outputs.into_iter().next().expect("one output"),
            None => PyTuple::new(py, outputs)?.into_any(),
        };
        Ok(Outcome::Done(result))
    }

    /// The values of the sizes (from `nats` and the inputs' shapes) and the inputs' data
    /// pointers; `None` where an input or a size does not fit the plan.
    fn bind(
        &self,
        py: Python<'_>,
        inputs: &[Bound<'_, PyAny>],
        nats: &[(String, i64)],
    ) -> Option<(Vec<Option<i64>>, Vec<Pointer>)> {
        if inputs.len() != self.params.len() {
            return None;
        }
        let mut values: Vec<Option<i64>> = vec![None; self.sizes.len()];
        for (name, v) in nats {
            let k = self.sizes.iter().position(|s| s == name)?;
            values[k] = Some(*v);
        }
        let mut pointers = Vec::with_capacity(inputs.len());
        for (input, p) in inputs.iter().zip(&self.params) {
            let array = input.cast::<PyUntypedArray>().ok()?;
            if !has_flags(array, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED)
                || array.ndim() != p.axes.len()
                || !array.dtype().is_equiv_to(&descr(py, p.dtype).ok()?)
            {
                return None;
            }
            for (axis, &extent) in p.axes.iter().zip(array.shape()) {
                match *axis {
                    Axis::Const(c) if c == extent => {}
                    Axis::Size(k) => match values[k] {
                        None => values[k] = Some(extent as i64),
                        Some(v) if v == extent as i64 => {}
                        Some(_) => return None,
                    },
                    Axis::Const(_) => return None,
                }
            }
            pointers.push(Pointer(data(array)));
        }
        Some((values, pointers))
    }

    /// The shape of each buffer of the result at the sizes `values`.
    pub(crate) fn out_shapes(&self, values: &[Option<i64>]) -> Option<Vec<Vec<usize>>> {
        let env = |v: &arith::Var| {
            let k = self.sizes.iter().position(|s| s == v.name())?;
            values[k]
        };
        self.outputs
            .iter()
            .map(|o| {
                o.dims
                    .iter()
                    .map(|d| d.eval(&env).ok().and_then(|n| usize::try_from(n).ok()))
                    .collect()
            })
            .collect()
    }

    /// The arrays of `out=`, checked against the result's buffers: as many, each of the
    /// shape and dtype of its buffer, C-contiguous, aligned, writeable, and apart from the
    /// inputs.
    fn check_out<'py>(
        &self,
        py: Python<'py>,
        out: &Bound<'py, PyAny>,
        shapes: &[Vec<usize>],
        inputs: &[Bound<'py, PyAny>],
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let arrays: Vec<Bound<'py, PyAny>> = match out.cast::<PyTuple>() {
            Ok(t) => t.iter().collect(),
            Err(_) => vec![out.clone()],
        };
        let bad = |m: String| raise(Stage::Input, format!("error: out=: {m}"));
        if arrays.len() != shapes.len() {
            return Err(bad(format!(
                "the result of `{}` has {} part(s), {} array(s) given",
                self.def,
                shapes.len(),
                arrays.len()
            )));
        }
        for (k, ((a, shape), o)) in arrays.iter().zip(shapes).zip(&self.outputs).enumerate() {
            let Ok(array) = a.cast::<PyUntypedArray>() else {
                return Err(bad(format!("part {k} is not a numpy array")));
            };
            let want = descr(py, o.dtype)?;
            if array.shape() != shape.as_slice() || !array.dtype().is_equiv_to(&want) {
                return Err(bad(format!(
                    "part {k} must be a {} array of shape {}, it is a {} array of shape {}",
                    want,
                    shine::npy::shape_text(shape),
                    array.dtype(),
                    shine::npy::shape_text(array.shape())
                )));
            }
            let flags = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_WRITEABLE;
            if !has_flags(array, flags) {
                return Err(bad(format!(
                    "part {k} must be C-contiguous, aligned and writeable"
                )));
            }
            for (i, input) in inputs.iter().enumerate() {
                if overlap(array, input.cast::<PyUntypedArray>()?) {
                    return Err(bad(format!(
                        "part {k} overlaps input {} in memory; the code reads its inputs while \
                         it writes the result",
                        i + 1
                    )));
                }
            }
        }
        Ok(arrays)
    }
}

/// The status the generated code returns when the sizes violate a constraint
/// (`codegen::EntryStatus::SizeConstraint`).
const SIZE_CONSTRAINT: i32 = 3;

/// A data pointer carried into the call without the GIL.
struct Pointer(*mut c_void);

// SAFETY: the pointer is only passed to the generated code, while its array is kept alive by
// the caller's references.
unsafe impl Send for Pointer {}

/// The plan of a parameter of type `t`, `None` unless it is a plain array.
fn param(t: &DataType, sizes: &[String], halves: Halves) -> Option<Param> {
    let (mut dims, elem) = peel(t);
    let dtype = match elem {
        DataType::Scalar(s) => plain(*s, halves)?,
        DataType::Vector(lanes, e) => match &**e {
            DataType::Scalar(s) => {
                dims.push(lanes.clone());
                plain(*s, halves)?
            }
            _ => return None,
        },
        _ => return None,
    };
    let axes = dims
        .iter()
        .map(|d| match (d.as_cst(), d.as_var()) {
            (Some(c), _) => usize::try_from(c).ok().map(Axis::Const),
            (_, Some(v)) => sizes.iter().position(|s| s == v.name()).map(Axis::Size),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Param {
        dtype,
        axes,
        elem: elem.clone(),
    })
}

/// The buffers of the result `result` (of the definition of type `scheme`), as
/// the library lays them out, each a plain array; `None` otherwise.
fn out_buffers(scheme: &Type, result: &DataType, halves: Halves) -> Option<Vec<OutBuffer>> {
    // the library's buffers and parts of the result at some sizes: where each buffer is one
    // part, each is a plain array (no tuple is stored as a C struct)
    let mut t = scheme.clone();
    while let Type::DepFun { binder, body, .. } = &t {
        t = body.instantiate(binder, &TypeArg::Nat(Nat::cst(2)));
    }
    while let Type::Fun(_, r) = &t {
        t = (**r).clone();
    }
    let Type::Data(concrete) = &t else {
        return None;
    };
    let layouts = shine::boundary::buffers_of(concrete).ok()?;
    let parts = shine::boundary::parts_of(concrete);
    if layouts.len() != parts.len() || layouts.iter().zip(&parts).any(|(l, p)| l.path != p.path) {
        return None;
    }
    layouts
        .iter()
        .map(|l| {
            let mut part = result;
            for &second in &l.path {
                let DataType::Pair(a, b) = part else {
                    return None;
                };
                part = if second { b } else { a };
            }
            let (mut dims, elem) = peel(part);
            let dtype = match elem {
                DataType::Vector(lanes, e) => {
                    dims.push(lanes.clone());
                    leaf(e, halves)?
                }
                e => leaf(e, halves)?,
            };
            Some(OutBuffer {
                dtype,
                dims,
                elem: elem.clone(),
            })
        })
        .collect()
}

/// The array dimensions of `t` and its element.
fn peel(t: &DataType) -> (Vec<Nat>, &DataType) {
    let mut dims = Vec::new();
    let mut t = t;
    while let DataType::Array(n, e) = t {
        dims.push(n.clone());
        t = e;
    }
    (dims, t)
}

/// The numpy dtype of a scalar the fast path passes as it is (`int` as int32; the 16-bit
/// floats only as `halves` says: the general path converts them).
fn plain(s: ScalarType, halves: Halves) -> Option<ScalarType> {
    match s {
        ScalarType::F16 | ScalarType::Bf16 if halves == Halves::Refused => None,
        ScalarType::Int => Some(ScalarType::I32),
        s => Some(s),
    }
}

/// The numpy dtype of a leaf of the result: a scalar, or an index or a natural (int64, the C
/// code's index type).
fn leaf(t: &DataType, halves: Halves) -> Option<ScalarType> {
    match t {
        DataType::Scalar(s) => plain(*s, halves),
        DataType::Index(_) | DataType::NatType => Some(ScalarType::I64),
        _ => None,
    }
}

/// The numpy dtype of a scalar type.
pub(crate) fn descr(py: Python<'_>, t: ScalarType) -> PyResult<Bound<'_, PyArrayDescr>> {
    use numpy::dtype;
    Ok(match t {
        ScalarType::Bool => dtype::<bool>(py),
        ScalarType::I8 => dtype::<i8>(py),
        ScalarType::I16 => dtype::<i16>(py),
        ScalarType::I32 | ScalarType::Int => dtype::<i32>(py),
        ScalarType::I64 => dtype::<i64>(py),
        ScalarType::U8 => dtype::<u8>(py),
        ScalarType::U16 => dtype::<u16>(py),
        ScalarType::U32 => dtype::<u32>(py),
        ScalarType::U64 => dtype::<u64>(py),
        ScalarType::F16 => PyArrayDescr::new(py, "float16")?,
        // bit patterns, as `.npy` results of `bf16` are written
        ScalarType::Bf16 => dtype::<u16>(py),
        ScalarType::F32 => dtype::<f32>(py),
        ScalarType::F64 => dtype::<f64>(py),
    })
}

/// A new C-contiguous numpy array of `shape` and dtype `t`.
pub(crate) fn empty<'py>(
    py: Python<'py>,
    shape: &[usize],
    t: ScalarType,
) -> PyResult<Bound<'py, PyAny>> {
    let mut dims: Vec<npyffi::npy_intp> = shape.iter().map(|&d| d as npyffi::npy_intp).collect();
    let descr = descr(py, t)?.into_dtype_ptr();
    // SAFETY: `PyArray_Empty` steals the reference to `descr` and returns a new reference
    // (or null with an exception set).
    unsafe {
        let array = npyffi::PY_ARRAY_API.PyArray_Empty(
            py,
            dims.len() as std::ffi::c_int,
            dims.as_mut_ptr(),
            descr,
            0,
        );
        Bound::from_owned_ptr_or_err(py, array)
    }
}

/// Whether `array` has every flag of `flags`.
fn has_flags(array: &Bound<'_, PyUntypedArray>, flags: std::ffi::c_int) -> bool {
    // SAFETY: `as_array_ptr` points to the live array object.
    unsafe { (*array.as_array_ptr()).flags & flags == flags }
}

/// The data pointer of a numpy array.
pub(crate) fn data(array: &Bound<'_, PyUntypedArray>) -> *mut c_void {
    // SAFETY: `as_array_ptr` points to the live array object.
    unsafe { (*array.as_array_ptr()).data.cast() }
}

/// Whether the memory of two arrays overlaps (by their extents: a conservative test).
fn overlap(a: &Bound<'_, PyUntypedArray>, b: &Bound<'_, PyUntypedArray>) -> bool {
    let span = |x: &Bound<'_, PyUntypedArray>| {
        let start = data(x) as usize;
        let len = x.len() * x.dtype().itemsize();
        (start, start + len)
    };
    let ((a0, a1), (b0, b1)) = (span(a), span(b));
    a0 < b1 && b0 < a1
}
