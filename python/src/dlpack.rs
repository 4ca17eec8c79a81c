//! DLPack, both ways, with the unversioned capsules every producer and consumer supports
//! (the Python specification: <https://dmlc.github.io/dlpack/latest/python_spec.html>).
//!
//! * Taking an array ([`Imported::take`]): `x.__dlpack__(stream=1)` asks the producer to make
//!   its work visible to CUDA's legacy default stream, the runtime's; the capsule is renamed
//!   `used_dltensor` once its tensor is taken, and the producer's deleter is called when the
//!   [`Imported`] is dropped.
//! * Giving one ([`export`]): a capsule named `dltensor` whose tensor keeps the device memory
//!   alive; a consumer that takes it calls the deleter, else the capsule's destructor does.

use crate::errors::{raise, Stage};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rise::ScalarType;
use runtime::CudaMemory;
use std::ffi::{c_void, CStr};
use std::ptr::NonNull;
use std::sync::Arc;

/// `kDLCPU`: host memory.
pub const DEVICE_CPU: i32 = 1;
/// `kDLCUDA`: memory of a CUDA device.
pub const DEVICE_CUDA: i32 = 2;

/// The `stream=` the runtime asks for: CUDA's legacy default stream (`1` in the protocol),
/// which the runtime's launches are ordered on.
const LEGACY_DEFAULT_STREAM: i64 = 1;

/// The name of a capsule not yet taken, and of one taken.
const CAPSULE: &CStr = c"dltensor";
const USED_CAPSULE: &CStr = c"used_dltensor";

/// `DLDevice`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Device {
    pub device_type: i32,
    pub device_id: i32,
}

/// `DLDataType`: the kind of number (`kDLInt` 0, `kDLUInt` 1, `kDLFloat` 2, `kDLBfloat` 4,
/// `kDLBool` 6), its bits and its lanes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DlType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

/// `DLTensor`.
#[repr(C)]
struct Tensor {
    data: *mut c_void,
    device: Device,
    ndim: i32,
    dtype: DlType,
    shape: *mut i64,
    /// In elements; null for a compact row-major tensor.
    strides: *mut i64,
    byte_offset: u64,
}

/// `DLManagedTensor`.
#[repr(C)]
struct ManagedTensor {
    dl_tensor: Tensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut ManagedTensor)>,
}

/// The DLPack data type of a scalar type (`int` as int32).
pub fn dl_type(s: ScalarType) -> DlType {
    let (code, bits) = match s {
        ScalarType::Bool => (6, 8),
        ScalarType::I8 => (0, 8),
        ScalarType::I16 => (0, 16),
        ScalarType::I32 | ScalarType::Int => (0, 32),
        ScalarType::I64 => (0, 64),
        ScalarType::U8 => (1, 8),
        ScalarType::U16 => (1, 16),
        ScalarType::U32 => (1, 32),
        ScalarType::U64 => (1, 64),
        ScalarType::F16 => (2, 16),
        ScalarType::Bf16 => (4, 16),
        ScalarType::F32 => (2, 32),
        ScalarType::F64 => (2, 64),
    };
    DlType {
        code,
        bits,
        lanes: 1,
    }
}

/// Whether an array of type `t` holds scalars of type `s` (a `bool` also as the unsigned
/// bytes older producers export it as).
pub fn holds(t: DlType, s: ScalarType) -> bool {
    t == dl_type(s) || (s == ScalarType::Bool && t == dl_type(ScalarType::U8))
}

/// The name of a DLPack data type as PyTorch and numpy say it (`float32`, `bfloat16`).
pub fn type_name(t: DlType) -> String {
    let kind = match t.code {
        0 => "int",
        1 => "uint",
        2 => "float",
        4 => "bfloat",
        5 => "complex",
        6 if t.bits == 8 => return lanes("bool".into(), t.lanes),
        code => return format!("DLPack type code {code} of {} bits", t.bits),
    };
    lanes(format!("{kind}{}", t.bits), t.lanes)
}

fn lanes(name: String, lanes: u16) -> String {
    match lanes {
        1 => name,
        n => format!("{name} in vectors of {n} lanes"),
    }
}

/// The DLPack device of `x` (`__dlpack_device__()`), `None` where it has none.
pub fn device_of(x: &Bound<'_, PyAny>) -> PyResult<Option<(i32, i32)>> {
    if x.cast::<numpy::PyUntypedArray>().is_ok() {
        return Ok(Some((DEVICE_CPU, 0)));
    }
    if !x.hasattr("__dlpack__")? || !x.hasattr("__dlpack_device__")? {
        return Ok(None);
    }
    Ok(Some(x.call_method0("__dlpack_device__")?.extract()?))
}

/// A tensor taken from its producer; the producer's deleter is called when this is dropped.
pub struct Imported {
    managed: NonNull<ManagedTensor>,
}

impl Imported {
    /// The tensor of `x.__dlpack__(stream=1)`; `what` names `x` in messages (`input 2`).
    pub fn take(x: &Bound<'_, PyAny>, what: &str) -> PyResult<Imported> {
        let py = x.py();
        let kwargs = PyDict::new(py);
        kwargs.set_item("stream", LEGACY_DEFAULT_STREAM)?;
        let capsule = x.call_method("__dlpack__", (), Some(&kwargs))?;
        let raw = capsule.as_ptr();
        // SAFETY: `raw` is a live object (held by `capsule`); `PyCapsule_IsValid` checks that
        // it is a capsule of this name and sets no exception.
        if unsafe { ffi::PyCapsule_IsValid(raw, CAPSULE.as_ptr()) } != 1 {
            return Err(raise(
                Stage::Input,
                format!(
                    "error: {what}: `__dlpack__` did not return an unused DLPack capsule named \
                     `dltensor`"
                ),
            ));
        }
        // SAFETY: a valid capsule of this name (checked above); its pointer is the producer's
        // `DLManagedTensor`, which stays alive until its deleter is called.
        let pointer = unsafe { ffi::PyCapsule_GetPointer(raw, CAPSULE.as_ptr()) };
        let managed =
            NonNull::new(pointer.cast::<ManagedTensor>()).ok_or_else(|| PyErr::fetch(py))?;
        // SAFETY: as above; the new name is a static string, as the capsule keeps a pointer.
        // Renamed, the capsule's destructor leaves the tensor to this consumer.
        if unsafe { ffi::PyCapsule_SetName(raw, USED_CAPSULE.as_ptr()) } != 0 {
            return Err(PyErr::fetch(py));
        }
        Ok(Imported { managed })
    }

    fn tensor(&self) -> &Tensor {
        // SAFETY: the producer keeps the managed tensor alive until its deleter is called,
        // which only `drop` does.
        unsafe { &self.managed.as_ref().dl_tensor }
    }

    /// The device the data is on.
    pub fn device(&self) -> Device {
        self.tensor().device
    }

    /// The data type.
    pub fn dtype(&self) -> DlType {
        self.tensor().dtype
    }

    /// The extents, outermost first.
    pub fn shape(&self) -> &[i64] {
        let t = self.tensor();
        match usize::try_from(t.ndim) {
            // SAFETY: DLPack's `shape` points to `ndim` extents, alive with the tensor.
            Ok(n) if n > 0 && !t.shape.is_null() => unsafe {
                std::slice::from_raw_parts(t.shape, n)
            },
            _ => &[],
        }
    }

    /// The strides in elements, `None` for a compact row-major tensor.
    fn strides(&self) -> Option<&[i64]> {
        let t = self.tensor();
        let n = self.shape().len();
        // SAFETY: DLPack's `strides`, when not null, points to `ndim` strides.
        (!t.strides.is_null() && n > 0).then(|| unsafe { std::slice::from_raw_parts(t.strides, n) })
    }

    /// Whether the elements lie in row-major order without gaps (a stride of an axis of
    /// extent 1 does not matter, nor do any of an empty tensor).
    pub fn is_compact(&self) -> bool {
        let Some(strides) = self.strides() else {
            return true;
        };
        let shape = self.shape();
        if shape.contains(&0) {
            return true;
        }
        let mut expected = 1i64;
        for (&extent, &stride) in shape.iter().zip(strides).rev() {
            if extent != 1 && stride != expected {
                return false;
            }
            expected = expected.saturating_mul(extent);
        }
        true
    }

    /// The device address of the first element (`data` plus `byte_offset`).
    pub fn address(&self) -> u64 {
        let t = self.tensor();
        (t.data as u64).wrapping_add(t.byte_offset)
    }
}

impl Drop for Imported {
    fn drop(&mut self) {
        let managed = self.managed.as_ptr();
        // SAFETY: the tensor was taken once, from a capsule renamed since, so this is the only
        // call of its deleter, as the protocol asks of the consumer.
        unsafe {
            if let Some(deleter) = (*managed).deleter {
                deleter(managed);
            }
        }
    }
}

/// A tensor this package gives away: the managed tensor first, so that a pointer to it is a
/// pointer to the whole; the shape and the (row-major) strides it points to; the memory it
/// keeps alive.
#[repr(C)]
struct Exported {
    managed: ManagedTensor,
    shape: Vec<i64>,
    strides: Vec<i64>,
    memory: Arc<CudaMemory>,
}

/// The deleter of an [`Exported`] tensor.
unsafe extern "C" fn delete_exported(managed: *mut ManagedTensor) {
    // SAFETY: `managed` is the first field of an `Exported` boxed by `export`, given to one
    // consumer, which calls the deleter once (or the capsule's destructor does, for a capsule
    // never taken).
    drop(unsafe { Box::from_raw(managed.cast::<Exported>()) });
}

/// The destructor of an exported capsule: the tensor is deleted unless a consumer took it
/// (and renamed the capsule).
unsafe extern "C" fn destroy_capsule(capsule: *mut ffi::PyObject) {
    // SAFETY: called by Python with the capsule being destroyed; `PyCapsule_IsValid` sets no
    // exception.
    if unsafe { ffi::PyCapsule_IsValid(capsule, CAPSULE.as_ptr()) } != 1 {
        return;
    }
    // SAFETY: a valid capsule of this name, made by `export`.
    let managed = unsafe { ffi::PyCapsule_GetPointer(capsule, CAPSULE.as_ptr()) };
    if !managed.is_null() {
        // SAFETY: the tensor was never taken, so it is deleted only here.
        unsafe { delete_exported(managed.cast()) };
    }
}

/// A DLPack capsule of `memory` on CUDA device `device_id`, a compact row-major array of
/// `shape` and type `dtype`.
pub fn export<'py>(
    py: Python<'py>,
    memory: Arc<CudaMemory>,
    shape: &[usize],
    dtype: DlType,
    device_id: i32,
) -> PyResult<Bound<'py, PyAny>> {
    let shape: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    // explicit strides, though DLPack allows none for a compact array: newer consumers ask
    let mut strides = vec![1i64; shape.len()];
    for k in (1..shape.len()).rev() {
        strides[k - 1] = strides[k].saturating_mul(shape[k]);
    }
    let ndim = i32::try_from(shape.len())
        .map_err(|_| raise(Stage::Execution, "error: too many dimensions for DLPack"))?;
    let address = memory.region().address;
    let mut exported = Box::new(Exported {
        managed: ManagedTensor {
            dl_tensor: Tensor {
                data: address as *mut c_void,
                device: Device {
                    device_type: DEVICE_CUDA,
                    device_id,
                },
                ndim,
                dtype,
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_exported),
        },
        shape,
        strides,
        memory,
    });
    exported.managed.dl_tensor.shape = exported.shape.as_mut_ptr();
    exported.managed.dl_tensor.strides = exported.strides.as_mut_ptr();
    let raw = Box::into_raw(exported);
    // SAFETY: `raw` is a live box; the manager context points to the whole `Exported`.
    unsafe { (*raw).managed.manager_ctx = raw.cast() };
    // SAFETY: the name is a static string; the destructor handles both a taken and an
    // untaken capsule.
    let capsule =
        unsafe { ffi::PyCapsule_New(raw.cast(), CAPSULE.as_ptr(), Some(destroy_capsule)) };
    if capsule.is_null() {
        // SAFETY: no capsule owns the box: it is freed here, once.
        unsafe { delete_exported(raw.cast()) };
        return Err(PyErr::fetch(py));
    }
    // SAFETY: `capsule` is a new reference.
    Ok(unsafe { Bound::from_owned_ptr(py, capsule) })
}
