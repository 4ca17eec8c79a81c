//! What the OpenCL and CUDA runners share: kernel arguments, timings and argument checks.
//!
//! A GPU program is run the way a native [`Module`](crate::Module) is: the host hands over
//! output [`Buffer`]s (one, or one per array of a result that is a tuple of arrays) and input
//! buffers, the runtime copies them to the device, runs a sequence of kernel launches in order
//! and copies the outputs back. Inside a launch, buffers are named by index: the outputs first
//! (`0..outputs.len()`), then the inputs in order, and the indices after those are device-only
//! temporaries (zero-initialised, of the byte sizes the caller asks for), which is where a
//! multi-kernel host program keeps its intermediate results.

use crate::{Buffer, RuntimeError, Timing};

/// One argument of a kernel launch, in the order of the kernel's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KernelArg {
    /// A device buffer, by index: the outputs, then the inputs, then the temporaries.
    Buffer(usize),
    /// A 32-bit signed integer (`int`).
    I32(i32),
    /// A 64-bit signed integer (`long` in OpenCL, `long long`/`int64_t` in CUDA).
    I64(i64),
    /// A 32-bit float (`float`).
    F32(f32),
    /// A 64-bit float (`double`; OpenCL devices need `cl_khr_fp64`).
    F64(f64),
    /// OpenCL only: a `__local` buffer of this many bytes. CUDA kernels get their dynamic
    /// shared memory from the launch's `shared_mem_bytes` instead.
    LocalBytes(usize),
}

impl KernelArg {
    /// The size in bytes the argument has as a kernel parameter (a buffer is a device
    /// pointer: 8 bytes); `None` for local memory, which is not passed by value.
    pub(crate) fn param_size(self) -> Option<usize> {
        match self {
            KernelArg::Buffer(_) | KernelArg::I64(_) | KernelArg::F64(_) => Some(8),
            KernelArg::I32(_) | KernelArg::F32(_) => Some(4),
            KernelArg::LocalBytes(_) => None,
        }
    }

    /// A short description for error messages.
    pub(crate) fn describe(self) -> String {
        match self {
            KernelArg::Buffer(i) => format!("buffer {i}"),
            KernelArg::I32(v) => format!("i32 {v}"),
            KernelArg::I64(v) => format!("i64 {v}"),
            KernelArg::F32(v) => format!("f32 {v}"),
            KernelArg::F64(v) => format!("f64 {v}"),
            KernelArg::LocalBytes(n) => format!("{n} bytes of local memory"),
        }
    }
}

/// The time of repeated runs of a GPU program's launch sequence.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuTiming {
    /// Device time of the kernels of one run, from the API's own clock (OpenCL profiling
    /// events: the sum of the kernels' execution times; CUDA events: from before the first
    /// launch to after the last one). This is the number to compare and report.
    pub kernel: Timing,
    /// Host wall-clock time of one run: from enqueuing the first launch until the device has
    /// finished the last one (no transfers; includes launch overhead).
    pub wall: Timing,
}

/// A program built for one GPU runtime: [`OpenClProgram`](crate::OpenClProgram) or
/// [`CudaProgram`](crate::CudaProgram). Both run a sequence of launches over buffers named by
/// index (see the module doc), so [`GpuProgram::run`], [`GpuProgram::run_with_status`] and
/// [`GpuProgram::bench`] are written once, here, over each runtime's
/// [`GpuProgram::execute`].
pub trait GpuProgram {
    /// A kernel launch of this runtime: [`OpenClLaunch`](crate::OpenClLaunch) or
    /// [`CudaLaunch`](crate::CudaLaunch).
    type Launch;

    /// The engine under the methods below: copies `outputs` and `inputs` to the device,
    /// allocates zeroed `temporaries` (byte sizes), runs the launch sequence `warmup + runs`
    /// times and copies the outputs back; the status flag at buffer index `status`, if any, is
    /// read back at the end. The kernel and wall times of the last `runs`, in milliseconds,
    /// and the flag (0 without one).
    #[allow(clippy::too_many_arguments)]
    fn execute(
        &self,
        launches: &[Self::Launch],
        outputs: &mut [Buffer],
        inputs: &[&Buffer],
        temporaries: &[usize],
        status: Option<usize>,
        warmup: usize,
        runs: usize,
    ) -> Result<(Vec<f64>, Vec<f64>, i32), RuntimeError>;

    /// Copies `outputs` and `inputs` to the device, allocates zeroed `temporaries` (byte
    /// sizes), runs `launches` in order and copies the outputs back.
    ///
    /// The kernels are trusted to access the buffers within their lengths (on a CPU platform
    /// such as PoCL the buffers live in the runtime's OpenCL child process, where a crash is
    /// [`RuntimeError::OpenClProcessEnded`]); launches are checked for names, dimensions and
    /// buffer indices, and their arguments against the kernels' parameters.
    fn run(
        &self,
        launches: &[Self::Launch],
        outputs: &mut [Buffer],
        inputs: &[&Buffer],
        temporaries: &[usize],
    ) -> Result<(), RuntimeError> {
        self.execute(launches, outputs, inputs, temporaries, None, 0, 1)
            .map(drop)
    }

    /// As [`GpuProgram::run`], for a program with a status flag: the temporary of index
    /// `status` (at least 4 bytes) is read back after the launches, and its value, an
    /// `int` the kernels set when the program stops on an error, returned (0: computed).
    fn run_with_status(
        &self,
        launches: &[Self::Launch],
        outputs: &mut [Buffer],
        inputs: &[&Buffer],
        temporaries: &[usize],
        status: usize,
    ) -> Result<i32, RuntimeError> {
        if temporaries.get(status).is_none_or(|&bytes| bytes < 4) {
            return Err(RuntimeError::InvalidArgument(format!(
                "the status flag is temporary {status}, which is not a buffer of 4 bytes or more"
            )));
        }
        let index = outputs.len() + inputs.len() + status;
        self.execute(launches, outputs, inputs, temporaries, Some(index), 0, 1)
            .map(|(_, _, flag)| flag)
    }

    /// As [`GpuProgram::run`], but runs the launch sequence `warmup` times untimed, then
    /// `runs` times timed (inputs are copied once; `outputs` hold the result of the last run).
    fn bench(
        &self,
        launches: &[Self::Launch],
        outputs: &mut [Buffer],
        inputs: &[&Buffer],
        temporaries: &[usize],
        runs: usize,
        warmup: usize,
    ) -> Result<GpuTiming, RuntimeError> {
        check_runs(runs)?;
        let (kernel, wall, _) =
            self.execute(launches, outputs, inputs, temporaries, None, warmup, runs)?;
        Ok(timing(kernel, wall))
    }
}

/// The byte sizes of all buffers of a run: outputs, inputs, temporaries (in index order).
pub(crate) fn buffer_sizes(
    outputs: &[Buffer],
    inputs: &[&Buffer],
    temporaries: &[usize],
) -> Vec<usize> {
    outputs
        .iter()
        .map(Buffer::len)
        .chain(inputs.iter().map(|b| b.len()))
        .chain(temporaries.iter().copied())
        .collect()
}

/// The host contents of device buffer `index`: an output's or an input's bytes, `None` for
/// a temporary (allocated zeroed).
pub(crate) fn host_bytes<'a>(
    index: usize,
    outputs: &'a [Buffer],
    inputs: &[&'a Buffer],
) -> Option<&'a [u8]> {
    match index.checked_sub(outputs.len()) {
        None => Some(outputs[index].as_bytes()),
        Some(i) => inputs.get(i).map(|b| b.as_bytes()),
    }
}

/// Checks that every buffer argument names one of `count` buffers.
pub(crate) fn check_buffer_indices(
    kernel: &str,
    args: &[KernelArg],
    count: usize,
) -> Result<(), RuntimeError> {
    for (position, arg) in args.iter().enumerate() {
        if let KernelArg::Buffer(index) = *arg {
            if index >= count {
                return Err(RuntimeError::InvalidArgument(format!(
                    "argument {position} of kernel `{kernel}` names buffer {index}, but there are \
                     only {count} buffers (the outputs, then the inputs, then the temporaries)"
                )));
            }
        }
    }
    Ok(())
}

/// Checks that `name` can name a kernel (a C identifier).
pub(crate) fn check_kernel_name(name: &str) -> Result<(), RuntimeError> {
    let mut chars = name.chars();
    let ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(RuntimeError::InvalidArgument(format!(
            "`{name}` is not a kernel name (a C identifier)"
        )))
    }
}

/// Checks that `text` (a source or an option string) holds no NUL byte, which the C APIs
/// cannot take.
pub(crate) fn check_no_nul(what: &str, text: &str) -> Result<(), RuntimeError> {
    if text.contains('\0') {
        Err(RuntimeError::InvalidArgument(format!(
            "the {what} contains a NUL byte"
        )))
    } else {
        Ok(())
    }
}

/// Checks the run count of a benchmark.
pub(crate) fn check_runs(runs: usize) -> Result<(), RuntimeError> {
    if runs == 0 {
        Err(RuntimeError::InvalidArgument(
            "bench needs at least one run".into(),
        ))
    } else {
        Ok(())
    }
}

/// The statistics of kernel and wall samples (both non-empty).
pub(crate) fn timing(kernel_ms: Vec<f64>, wall_ms: Vec<f64>) -> GpuTiming {
    GpuTiming {
        kernel: Timing::from_samples(kernel_ms).expect("at least one run"),
        wall: Timing::from_samples(wall_ms).expect("at least one run"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_checks() {
        assert!(check_kernel_name("vec_add2").is_ok());
        assert!(check_kernel_name("2x").is_err());
        assert!(check_kernel_name("").is_err());
        assert!(check_kernel_name("a\0b").is_err());
        assert!(check_no_nul("source", "kernel void f() {}").is_ok());
        assert!(check_no_nul("source", "a\0").is_err());
        let args = [KernelArg::Buffer(2), KernelArg::I32(1)];
        assert!(check_buffer_indices("k", &args, 3).is_ok());
        let error = check_buffer_indices("k", &args, 2).unwrap_err();
        assert!(error.to_string().contains("names buffer 2"), "{error}");
        assert!(check_runs(0).is_err());
        let outputs = [Buffer::zeroed(4), Buffer::zeroed(12)];
        let input = Buffer::zeroed(8);
        let sizes = buffer_sizes(&outputs, &[&input], &[16]);
        assert_eq!(sizes, vec![4, 12, 8, 16]);
        assert_eq!(
            host_bytes(1, &outputs, &[&input]).map(<[u8]>::len),
            Some(12)
        );
        assert_eq!(host_bytes(2, &outputs, &[&input]).map(<[u8]>::len), Some(8));
        assert_eq!(host_bytes(3, &outputs, &[&input]), None);
        assert_eq!(KernelArg::Buffer(0).param_size(), Some(8));
        assert_eq!(KernelArg::F32(1.0).param_size(), Some(4));
        assert_eq!(KernelArg::LocalBytes(4).param_size(), None);
    }
}
