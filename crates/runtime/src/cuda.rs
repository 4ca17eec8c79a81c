//! Running CUDA kernels: NVRTC compilation, driver-API launches, timing with CUDA events.
//!
//! The CUDA driver (`libcuda`) and NVRTC (`libnvrtc`) are loaded at run time (crate `cudarc`,
//! feature `dynamic-loading`), so builds need no CUDA. `cudarc` panics when a library is
//! missing, so [`CudaDevice::open`] first checks that both can be loaded and that the driver is
//! new enough for the bindings (CUDA 13.0), and returns [`RuntimeError::Unavailable`] otherwise.
//!
//! The API mirrors the OpenCL one: a [`CudaProgram`] is compiled from CUDA C++ source (kernels
//! declared `extern "C" __global__` so that their names are not mangled) and runs a sequence
//! of [`CudaLaunch`]es over buffers named by index, as [`KernelArg::Buffer`] describes.
//! [`CudaProgram::run_on_device`] runs the same sequence on outputs and inputs already in
//! device memory (another library's, or a [`CudaMemory`](crate::CudaMemory)), without copies.
//!
//! ```no_run
//! use runtime::{Buffer, CudaDevice, CudaLaunch, CudaProgram, GpuProgram, KernelArg};
//! # fn main() -> Result<(), runtime::RuntimeError> {
//! let device = CudaDevice::open(0)?;
//! let source = r#"extern "C" __global__ void twice(float *out, const float *x, int n) {
//!     int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = 2.0f * x[i]; }"#;
//! let program = CudaProgram::build(&device, source, "")?;
//! let x = Buffer::from_slice(&[1.0f32, 2.0, 3.0]);
//! let mut out = [Buffer::zeroed(x.len())];
//! let launch = CudaLaunch::new("twice", [1, 1, 1], [32, 1, 1])
//!     .args([KernelArg::Buffer(0), KernelArg::Buffer(1), KernelArg::I32(3)]);
//! program.run(&[launch], &mut out, &[&x], &[])?;
//! assert_eq!(out[0].as_slice::<f32>(), &[2.0, 4.0, 6.0]);
//! # Ok(()) }
//! ```

use std::ffi::{c_char, CStr, CString};
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{
    self, cudaError_enum as CuResult, CUdevice_attribute, CUevent_flags, CUfunction_attribute,
};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DriverError,
    LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::result as nvrtc;
use cudarc::nvrtc::sys::nvrtcResult;
use cudarc::nvrtc::Ptx;

use crate::gpu::{self, GpuProgram, KernelArg};
use crate::{Buffer, RuntimeError};

/// The most shared memory a block may have without opting in (48 KiB, on every device):
/// above it a kernel's limit must be raised before its launch.
pub const STATIC_SHARED_LIMIT: u64 = 48 * 1024;

/// The oldest driver the `cuda-13000` bindings work with (`cuDriverGetVersion` encoding).
const MIN_DRIVER_VERSION: i32 = 13000;

/// A CUDA device with its primary context and a stream to run on. Cloning shares them.
#[derive(Clone)]
pub struct CudaDevice {
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    name: String,
    compute_capability: (i32, i32),
    driver_version: i32,
    max_shared_memory_per_block: u64,
}

impl CudaDevice {
    /// Opens CUDA device `ordinal` (0 is the first GPU).
    ///
    /// Errors: [`RuntimeError::Unavailable`] when the CUDA driver or NVRTC library cannot be
    /// loaded, the driver is older than CUDA 13.0, or there is no CUDA device;
    /// [`RuntimeError::InvalidArgument`] when `ordinal` is out of range.
    pub fn open(ordinal: usize) -> Result<CudaDevice, RuntimeError> {
        check_libraries()?;
        let mut driver_version = 0;
        // SAFETY: the driver library is present (checked above); cuDriverGetVersion writes one
        // int through the valid pointer it is given and needs no initialisation.
        let status = unsafe { sys::cuDriverGetVersion(&mut driver_version) };
        if status != CuResult::CUDA_SUCCESS {
            return Err(cuda_error("querying the driver version")(DriverError(
                status,
            )));
        }
        if driver_version < MIN_DRIVER_VERSION {
            return Err(RuntimeError::Unavailable(format!(
                "the CUDA driver supports CUDA {}.{}; shine's CUDA runtime needs 13.0 or newer \
                 (NVIDIA driver 580+)",
                driver_version / 1000,
                driver_version % 1000 / 10
            )));
        }
        let count = CudaContext::device_count().map_err(no_device_or("counting CUDA devices"))?;
        if count <= 0 {
            return Err(RuntimeError::Unavailable(
                "no CUDA device found; CUDA runs need an NVIDIA GPU".into(),
            ));
        }
        if ordinal >= count as usize {
            return Err(RuntimeError::InvalidArgument(format!(
                "CUDA device {ordinal} does not exist; there are {count}"
            )));
        }
        let operation = format!("opening CUDA device {ordinal}");
        let context = CudaContext::new(ordinal).map_err(no_device_or(operation.clone()))?;
        let name = context.name().map_err(cuda_error(operation.clone()))?;
        let compute_capability = context
            .compute_capability()
            .map_err(cuda_error(operation.clone()))?;
        let max_shared_memory_per_block = context
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
            .map_err(cuda_error(operation))?;
        // The default stream: launches, copies and events are ordered on it, and `cudarc`
        // needs no cross-stream event tracking.
        let stream = context.default_stream();
        Ok(CudaDevice {
            context,
            stream,
            name,
            compute_capability,
            driver_version,
            max_shared_memory_per_block: u64::try_from(max_shared_memory_per_block).unwrap_or(0),
        })
    }

    /// The version of the NVRTC library kernels are compiled with (`(13, 0)`), `None` where it
    /// cannot be loaded or does not answer.
    pub fn nvrtc_version() -> Option<(i32, i32)> {
        check_libraries().ok()?;
        let (mut major, mut minor) = (0, 0);
        // SAFETY: the NVRTC library is present (checked above); nvrtcVersion writes two ints
        // through the valid pointers it is given.
        let status = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
        (status == nvrtcResult::NVRTC_SUCCESS).then_some((major, minor))
    }

    /// Whether the CUDA driver and NVRTC libraries can be loaded here (a cheap check that
    /// opens no device).
    pub fn libraries_present() -> bool {
        check_libraries().is_ok()
    }

    /// The device's name (`"NVIDIA H100 80GB HBM3"`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The device's ordinal.
    pub fn ordinal(&self) -> usize {
        self.context.ordinal()
    }

    /// The compute capability, `(major, minor)`: `(9, 0)` on an H100.
    pub fn compute_capability(&self) -> (i32, i32) {
        self.compute_capability
    }

    /// The real architecture NVRTC compiles for by default: `"sm_90"` on an H100.
    pub fn arch(&self) -> String {
        let (major, minor) = self.compute_capability;
        format!("sm_{major}{minor}")
    }

    /// The most shared memory a block may have, in bytes, static and dynamic together, for a
    /// kernel that opts in (`CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`: 232448,
    /// 227 KiB, on an H100).
    pub fn max_shared_memory_per_block(&self) -> u64 {
        self.max_shared_memory_per_block
    }

    /// The CUDA version the driver supports, as `cuDriverGetVersion` encodes it (`13000`).
    pub fn driver_version(&self) -> i32 {
        self.driver_version
    }

    /// A zeroed device allocation of `size` bytes (at least one: the driver allocates no
    /// empty buffers); `what` names it in messages (`buffer 3`).
    pub(crate) fn alloc_zeros(
        &self,
        size: usize,
        what: &str,
    ) -> Result<CudaSlice<u8>, RuntimeError> {
        self.stream
            .alloc_zeros::<u8>(size.max(1))
            .map_err(cuda_error(format!("allocating {what} ({size} bytes)")))
    }

    /// The stream the device's launches and copies are ordered on.
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Waits until every stream of the device's primary context has finished its work
    /// (`operation` names what was waited for, in messages).
    pub(crate) fn synchronize(&self, operation: &str) -> Result<(), RuntimeError> {
        self.context.synchronize().map_err(cuda_error(operation))
    }
}

impl fmt::Display for CudaDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}, CUDA device {})",
            self.name,
            self.arch(),
            self.ordinal()
        )
    }
}

impl fmt::Debug for CudaDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CudaDevice({self})")
    }
}

/// The CUDA toolkit headers `source` includes (`cuda_fp16.h` and `cuda_bf16.h`, for `f16` and
/// `bf16` data).
fn toolkit_headers(source: &str) -> Vec<&'static str> {
    ["cuda_fp16.h", "cuda_bf16.h"]
        .into_iter()
        .filter(|h| source.contains(&format!("#include <{h}>")))
        .collect()
}

/// The CUDA toolkit's include directory: `$CUDA_HOME/include`, `$CUDA_PATH/include` or
/// `/usr/local/cuda/include`, the first that holds `cuda_fp16.h`.
fn toolkit_include_dir() -> Option<std::path::PathBuf> {
    let roots = ["CUDA_HOME", "CUDA_PATH"]
        .into_iter()
        .filter_map(std::env::var_os)
        .map(std::path::PathBuf::from)
        .chain([std::path::PathBuf::from("/usr/local/cuda")]);
    roots
        .map(|root| root.join("include"))
        .find(|dir| dir.join("cuda_fp16.h").is_file())
}

/// A build error of a program that includes the toolkit `headers`, said plainly where NVRTC
/// could not find them.
fn missing_headers(error: RuntimeError, headers: &[&str]) -> RuntimeError {
    match &error {
        RuntimeError::KernelBuildFailed { log, .. }
            if headers.iter().any(|h| log.contains(h)) && log.contains("cannot open") =>
        {
            RuntimeError::Unavailable(format!(
                "NVRTC cannot find the CUDA toolkit headers {} (16-bit float data needs them); \
                 set CUDA_HOME to the toolkit's directory (the one holding include/cuda_fp16.h)",
                headers.join(" and ")
            ))
        }
        _ => error,
    }
}

/// Checks that the driver and NVRTC libraries can be loaded (without them `cudarc` panics).
fn check_libraries() -> Result<(), RuntimeError> {
    // SAFETY: `is_culib_present` only tries to dlopen the driver library under its usual names
    // and closes it again; the NVIDIA driver library's initialisers are sound to run in any
    // process (every CUDA program loads it the same way).
    if !unsafe { sys::is_culib_present() } {
        return Err(RuntimeError::Unavailable(
            "CUDA driver library not found; CUDA runs need an NVIDIA GPU".into(),
        ));
    }
    // SAFETY: as above, for NVRTC, a self-contained compiler library.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(RuntimeError::Unavailable(
            "NVRTC library (libnvrtc.so) not found; CUDA runs need the CUDA toolkit's NVRTC \
             (add its lib64 directory to LD_LIBRARY_PATH)"
                .into(),
        ));
    }
    Ok(())
}

/// The conversion of a driver error while doing `operation`.
pub(crate) fn cuda_error(operation: impl Into<String>) -> impl FnOnce(DriverError) -> RuntimeError {
    let operation = operation.into();
    move |error| RuntimeError::Gpu {
        api: "CUDA",
        operation,
        message: describe(error),
    }
}

/// As [`cuda_error`], but "no device" becomes [`RuntimeError::Unavailable`].
fn no_device_or(operation: impl Into<String>) -> impl FnOnce(DriverError) -> RuntimeError {
    let operation = operation.into();
    move |error| match error.0 {
        CuResult::CUDA_ERROR_NO_DEVICE => RuntimeError::Unavailable(
            "the CUDA driver found no device; CUDA runs need an NVIDIA GPU".into(),
        ),
        _ => cuda_error(operation)(error),
    }
}

/// A driver error's name and description.
fn describe(error: DriverError) -> String {
    let text = |s: Result<&CStr, DriverError>| s.map(|s| s.to_string_lossy().into_owned());
    match (text(error.error_name()), text(error.error_string())) {
        (Ok(name), Ok(description)) => format!("{name}: {description}"),
        _ => format!("{:?}", error.0),
    }
}

/// One kernel launch: a kernel of the program, grid and block dimensions, dynamic shared
/// memory and the arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct CudaLaunch {
    /// The kernel's name (declared `extern "C"`).
    pub kernel: String,
    /// The grid, in blocks: `(x, y, z)`; unused dimensions are 1.
    pub grid: [u32; 3],
    /// The block, in threads: `(x, y, z)`; unused dimensions are 1.
    pub block: [u32; 3],
    /// Dynamic shared memory per block, in bytes (`extern __shared__` arrays). Above
    /// [`STATIC_SHARED_LIMIT`] the kernel's limit is raised before the launch
    /// (`cuFuncSetAttribute`); a kernel whose shared memory, static and dynamic, exceeds the
    /// device's ([`CudaDevice::max_shared_memory_per_block`]) is refused with
    /// [`RuntimeError::LocalMemoryExceeded`] before anything is launched.
    pub shared_mem_bytes: u32,
    /// The arguments, in the order of the kernel's parameters ([`KernelArg::LocalBytes`] is
    /// not allowed: use `shared_mem_bytes`).
    pub args: Vec<KernelArg>,
}

impl CudaLaunch {
    /// A launch of `kernel` with `grid` blocks of `block` threads, no shared memory and no
    /// arguments yet.
    pub fn new(kernel: impl Into<String>, grid: [u32; 3], block: [u32; 3]) -> CudaLaunch {
        CudaLaunch {
            kernel: kernel.into(),
            grid,
            block,
            shared_mem_bytes: 0,
            args: Vec::new(),
        }
    }

    /// This launch with `bytes` of dynamic shared memory per block.
    pub fn shared_mem(mut self, bytes: u32) -> CudaLaunch {
        self.shared_mem_bytes = bytes;
        self
    }

    /// This launch with `arg` appended to its arguments.
    pub fn arg(mut self, arg: KernelArg) -> CudaLaunch {
        self.args.push(arg);
        self
    }

    /// This launch with `args` appended to its arguments.
    pub fn args(mut self, args: impl IntoIterator<Item = KernelArg>) -> CudaLaunch {
        self.args.extend(args);
        self
    }

    /// Checks what can be checked without the device.
    fn check(&self, buffers: usize) -> Result<(), RuntimeError> {
        gpu::check_kernel_name(&self.kernel)?;
        let bad = |message: String| Err(RuntimeError::InvalidArgument(message));
        if self.grid.contains(&0) || self.block.contains(&0) {
            return bad(format!(
                "kernel `{}`: grid {:?} and block {:?} must have no zero dimension",
                self.kernel, self.grid, self.block
            ));
        }
        if let Some(position) = self
            .args
            .iter()
            .position(|a| matches!(a, KernelArg::LocalBytes(_)))
        {
            return bad(format!(
                "argument {position} of kernel `{}` is local memory, which CUDA kernels do not \
                 take as an argument; give the launch `shared_mem_bytes` instead",
                self.kernel
            ));
        }
        gpu::check_buffer_indices(&self.kernel, &self.args, buffers)
    }

    fn config(&self) -> LaunchConfig {
        let [gx, gy, gz] = self.grid;
        let [bx, by, bz] = self.block;
        LaunchConfig {
            grid_dim: (gx, gy, gz),
            block_dim: (bx, by, bz),
            shared_mem_bytes: self.shared_mem_bytes,
        }
    }
}

/// A CUDA program compiled by NVRTC and loaded on one device.
pub struct CudaProgram {
    device: CudaDevice,
    module: Arc<CudaModule>,
    options: Vec<String>,
    reused_image: bool,
}

impl fmt::Debug for CudaProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CudaProgram")
            .field("device", &self.device)
            .field("options", &self.options)
            .finish()
    }
}

impl CudaProgram {
    /// Compiles CUDA C++ `source` with NVRTC and loads it on `device`. `options` are NVRTC
    /// options separated by white space (`"--use_fast_math -lineinfo"`); unless they name an
    /// architecture (`--gpu-architecture=`/`-arch=`), the device's own (`sm_90`) is added. A
    /// compile error comes back as [`RuntimeError::KernelBuildFailed`] with NVRTC's log.
    pub fn build(
        device: &CudaDevice,
        source: &str,
        options: &str,
    ) -> Result<CudaProgram, RuntimeError> {
        let (options, image, reused_image) = image_for(device, source, options)?;
        let module = device
            .context
            .load_module(image)
            .map_err(cuda_error(format!(
                "loading the compiled module on {device}"
            )))?;
        Ok(CudaProgram {
            device: device.clone(),
            module,
            options,
            reused_image,
        })
    }

    /// Compiles `source` with `options` for `device`'s architecture as [`CudaProgram::build`]
    /// does, without loading it on the device: the image is kept in this process, so that a
    /// later build of the same source and options for a device of that architecture loads it
    /// without compiling (a tuning compiles on its CPU workers while the GPU times other
    /// kernels). Whether NVRTC compiled it now (`false`: it was compiled before).
    pub fn compile_only(
        device: &CudaDevice,
        source: &str,
        options: &str,
    ) -> Result<bool, RuntimeError> {
        let (_, _, reused_image) = image_for(device, source, options)?;
        Ok(!reused_image)
    }

    /// Whether the build loaded an image NVRTC had compiled for an earlier build of the same
    /// source and options in this process, rather than compiling it.
    pub fn reused_image(&self) -> bool {
        self.reused_image
    }

    /// The device the program runs on.
    pub fn device(&self) -> &CudaDevice {
        &self.device
    }

    /// The NVRTC options the program was compiled with (the architecture included).
    pub fn options(&self) -> &[String] {
        &self.options
    }
}

/// The image of `source` compiled with `options` (white-space separated) for `device`: the
/// options completed as [`CudaProgram::build`] says (the device's architecture unless one is
/// named, the toolkit's headers where the source includes them), and the image compiled
/// before with those options in this process or compiled now (then kept). Whether the image
/// was compiled before.
fn image_for(
    device: &CudaDevice,
    source: &str,
    options: &str,
) -> Result<(Vec<String>, Ptx, bool), RuntimeError> {
    gpu::check_no_nul("CUDA source", source)?;
    gpu::check_no_nul("NVRTC options", options)?;
    let mut options: Vec<String> = options.split_whitespace().map(String::from).collect();
    let names_arch = |o: &String| o.starts_with("--gpu-architecture") || o.starts_with("-arch");
    if !options.iter().any(names_arch) {
        options.push(format!("--gpu-architecture={}", device.arch()));
    }
    let headers = toolkit_headers(source);
    if !headers.is_empty() {
        if let Some(dir) = toolkit_include_dir() {
            options.push(format!("--include-path={}", dir.display()));
        }
    }
    if let Some(image) = compiled_images::get(source, &options) {
        return Ok((options, image, true));
    }
    let image = compile(source, &options).map_err(|e| missing_headers(e, &headers))?;
    compiled_images::keep(source, &options, &image);
    Ok((options, image, false))
}

impl GpuProgram for CudaProgram {
    type Launch = CudaLaunch;

    /// Runs the launch sequence `warmup + runs` times; the status flag at buffer index
    /// `status`, if any, is read back at the end. The event and wall times of the last
    /// `runs`, in milliseconds.
    #[allow(clippy::too_many_arguments)]
    fn execute(
        &self,
        launches: &[CudaLaunch],
        outputs: &mut [Buffer],
        inputs: &[&Buffer],
        temporaries: &[usize],
        status: Option<usize>,
        warmup: usize,
        runs: usize,
    ) -> Result<(Vec<f64>, Vec<f64>, i32), RuntimeError> {
        let sizes = gpu::buffer_sizes(outputs, inputs, temporaries);
        let functions = self.functions(launches, sizes.len())?;
        let stream = &self.device.stream;
        let context = &self.device.context;
        // Device buffers, in index order: the outputs, the inputs, the temporaries.
        let mut buffers: Vec<CudaSlice<u8>> = Vec::with_capacity(sizes.len());
        for (index, &size) in sizes.iter().enumerate() {
            let host = gpu::host_bytes(index, outputs, inputs).unwrap_or(&[]);
            let buffer = if host.is_empty() {
                self.device.alloc_zeros(size, &format!("buffer {index}"))
            } else {
                stream.clone_htod(host).map_err(cuda_error(format!(
                    "allocating buffer {index} ({size} bytes)"
                )))
            };
            buffers.push(buffer?);
        }
        let addresses: Vec<u64> = buffers.iter().map(|b| b.device_ptr(stream).0).collect();
        let slots = argument_slots(launches, &addresses);
        let event = |operation: &str| {
            context
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(cuda_error(operation))
        };
        let start_event = event("creating a timing event")?;
        let end_event = event("creating a timing event")?;
        stream
            .synchronize()
            .map_err(cuda_error("waiting for the uploads"))?;
        let mut kernel_ms = Vec::with_capacity(runs);
        let mut wall_ms = Vec::with_capacity(runs);
        for run in 0..warmup + runs {
            let start = Instant::now();
            start_event
                .record(stream)
                .map_err(cuda_error("recording an event"))?;
            // SAFETY: the slots' device pointers are `buffers`, allocated above with the sizes
            // the launches were checked against, and alive until after the stream has
            // finished (it is synchronised below, before they are dropped).
            unsafe { self.launch_sequence(&functions, launches, &slots) }?;
            end_event
                .record(stream)
                .map_err(cuda_error("recording an event"))?;
            stream
                .synchronize()
                .map_err(cuda_error("running the kernels"))?;
            let wall = start.elapsed().as_secs_f64() * 1e3;
            if run >= warmup {
                let elapsed = start_event
                    .elapsed_ms(&end_event)
                    .map_err(cuda_error("reading the timing events"))?;
                kernel_ms.push(f64::from(elapsed));
                wall_ms.push(wall);
            }
        }
        for (index, output) in outputs.iter_mut().enumerate() {
            if output.is_empty() {
                continue;
            }
            let len = output.len();
            stream
                .memcpy_dtoh(&buffers[index].slice(..len), output.as_bytes_mut())
                .and_then(|()| stream.synchronize())
                .map_err(cuda_error(format!("reading back output {index}")))?;
        }
        let flag = match status {
            Some(index) => self.read_status(&buffers[index])?,
            None => 0,
        };
        Ok((kernel_ms, wall_ms, flag))
    }
}

/// Memory the caller owns on a CUDA device, by its device address: an output or an input of
/// [`CudaProgram::run_on_device`] (a PyTorch tensor's storage, a [`CudaMemory`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceRegion {
    /// The device address of the first byte.
    pub address: u64,
    /// The length in bytes.
    pub bytes: usize,
}

impl CudaProgram {
    /// Runs `launches` once, as [`GpuProgram::run_with_status`] does, on memory that is
    /// already on the device: `buffers` are the outputs, then the inputs (in the numbering of
    /// [`KernelArg::Buffer`]), used in place, with nothing copied; the `temporaries` (byte
    /// sizes) are allocated zeroed here. `status`, a buffer index among the temporaries'
    /// (4 bytes or more), names the status flag read back after the launches (0 without one).
    ///
    /// Synchronisation is conservative: the whole context (every stream of the primary
    /// context, which PyTorch and CuPy share) is waited for before the launches, so that work
    /// producing the inputs has finished, and again after them, so that the outputs are
    /// complete when the call returns.
    ///
    /// # Safety
    /// Every region must be device memory this program's device can access in its primary
    /// context, valid for reads and writes of `bytes` bytes until the call returns and used
    /// by no other work meanwhile; the outputs must not overlap the inputs; and the regions
    /// must be as large as the kernels' accesses (the launches were planned for them).
    pub unsafe fn run_on_device(
        &self,
        launches: &[CudaLaunch],
        buffers: &[DeviceRegion],
        temporaries: &[usize],
        status: Option<usize>,
    ) -> Result<i32, RuntimeError> {
        let count = buffers.len() + temporaries.len();
        if let Some(index) = status {
            let bytes = index
                .checked_sub(buffers.len())
                .and_then(|t| temporaries.get(t));
            if bytes.is_none_or(|&b| b < 4) {
                return Err(RuntimeError::InvalidArgument(format!(
                    "the status flag is buffer {index}, which is not a temporary of 4 bytes or                      more"
                )));
            }
        }
        let functions = self.functions(launches, count)?;
        let stream = &self.device.stream;
        let scratch = temporaries
            .iter()
            .enumerate()
            .map(|(t, &size)| {
                let index = buffers.len() + t;
                self.device.alloc_zeros(size, &format!("buffer {index}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let addresses: Vec<u64> = buffers
            .iter()
            .map(|r| r.address)
            .chain(scratch.iter().map(|b| b.device_ptr(stream).0))
            .collect();
        let slots = argument_slots(launches, &addresses);
        self.device
            .synchronize("waiting for the work that produces the inputs")?;
        // SAFETY: the caller vouches for the regions; the temporaries are allocated above and
        // dropped only after the context has finished (synchronised below).
        unsafe { self.launch_sequence(&functions, launches, &slots) }?;
        self.device.synchronize("running the kernels")?;
        match status {
            Some(index) => self.read_status(&scratch[index - buffers.len()]),
            None => Ok(0),
        }
    }

    /// The kernels of `launches`, each launch checked (names, dimensions, buffer indices
    /// below `buffers`) and its arguments checked against its kernel's parameters.
    fn functions(
        &self,
        launches: &[CudaLaunch],
        buffers: usize,
    ) -> Result<Vec<CudaFunction>, RuntimeError> {
        for launch in launches {
            launch.check(buffers)?;
        }
        launches
            .iter()
            .map(|launch| {
                let function = self.function(launch)?;
                self.reserve_shared_memory(&function, launch)?;
                Ok(function)
            })
            .collect()
    }

    /// Checks that the device has the shared memory `launch` needs (the kernel's static
    /// shared memory and the launch's dynamic), and above [`STATIC_SHARED_LIMIT`] of dynamic
    /// shared memory lets `function` have it (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`).
    fn reserve_shared_memory(
        &self,
        function: &CudaFunction,
        launch: &CudaLaunch,
    ) -> Result<(), RuntimeError> {
        let name = &launch.kernel;
        let dynamic = launch.shared_mem_bytes;
        let operation = format!("setting the shared memory of kernel `{name}`");
        let static_bytes = function
            .get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
            .map_err(cuda_error(operation.clone()))?;
        let needed = u64::try_from(static_bytes).unwrap_or(0) + u64::from(dynamic);
        let limit = self.device.max_shared_memory_per_block;
        if needed > limit {
            return Err(RuntimeError::LocalMemoryExceeded {
                kernel: name.clone(),
                needed,
                limit,
                device: self.device.to_string(),
                memory: "shared memory per block",
            });
        }
        if u64::from(dynamic) > STATIC_SHARED_LIMIT {
            // below the device's limit, which is an `int`
            let bytes = i32::try_from(dynamic).unwrap_or(i32::MAX);
            function
                .set_attribute(
                    CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    bytes,
                )
                .map_err(cuda_error(operation))?;
        }
        Ok(())
    }

    /// Enqueues every launch once, in order, on the device's stream.
    ///
    /// # Safety
    /// `functions` are the kernels of `launches` ([`CudaProgram::functions`]) and `slots`
    /// their arguments ([`argument_slots`]), whose device pointers stay valid, for the
    /// kernels' accesses, until the stream has finished.
    unsafe fn launch_sequence(
        &self,
        functions: &[CudaFunction],
        launches: &[CudaLaunch],
        slots: &[Vec<[u8; 8]>],
    ) -> Result<(), RuntimeError> {
        let stream = &self.device.stream;
        for ((function, launch), slots) in functions.iter().zip(launches).zip(slots) {
            let mut builder = stream.launch_builder(function);
            for slot in slots {
                builder.arg(slot);
            }
            // SAFETY: `function` checked that the kernel has exactly as many parameters as
            // there are slots and that each has the size of its argument, so the driver reads
            // only within the slots, which outlive the call (it copies them). The pointers in
            // the slots are valid by this function's contract.
            unsafe { builder.launch(launch.config()) }.map_err(cuda_error(format!(
                "launching kernel `{}` (grid {:?}, block {:?}, {} bytes of shared memory)",
                launch.kernel, launch.grid, launch.block, launch.shared_mem_bytes
            )))?;
        }
        Ok(())
    }

    /// The status flag: the first `int` of `buffer`, read back once the stream is done.
    fn read_status(&self, buffer: &CudaSlice<u8>) -> Result<i32, RuntimeError> {
        let stream = &self.device.stream;
        let mut bytes = [0u8; 4];
        stream
            .memcpy_dtoh(&buffer.slice(..4), &mut bytes[..])
            .and_then(|()| stream.synchronize())
            .map_err(cuda_error("reading back the status flag"))?;
        Ok(i32::from_ne_bytes(bytes))
    }
}

/// Every launch's arguments as the bytes of its parameters, padded to 8 bytes, a buffer as
/// its device address in `addresses`; the driver reads as many bytes as the parameter has,
/// which [`CudaProgram::function`] checked to match.
fn argument_slots(launches: &[CudaLaunch], addresses: &[u64]) -> Vec<Vec<[u8; 8]>> {
    let slot = |arg: KernelArg| {
        let mut slot = [0u8; 8];
        match arg {
            KernelArg::Buffer(i) => slot = addresses[i].to_ne_bytes(),
            KernelArg::I32(v) => slot[..4].copy_from_slice(&v.to_ne_bytes()),
            KernelArg::I64(v) => slot = v.to_ne_bytes(),
            KernelArg::F32(v) => slot[..4].copy_from_slice(&v.to_ne_bytes()),
            KernelArg::F64(v) => slot = v.to_ne_bytes(),
            KernelArg::LocalBytes(_) => {} // rejected by `CudaLaunch::check`
        }
        slot
    };
    launches
        .iter()
        .map(|launch| launch.args.iter().map(|&arg| slot(arg)).collect())
        .collect()
}

impl CudaProgram {
    /// The kernel `launch` names, checked against the launch's arguments.
    fn function(&self, launch: &CudaLaunch) -> Result<CudaFunction, RuntimeError> {
        let name = &launch.kernel;
        let function = self
            .module
            .load_function(name)
            .map_err(|error| match error.0 {
                CuResult::CUDA_ERROR_NOT_FOUND => RuntimeError::InvalidArgument(format!(
                    "the program has no kernel `{name}` (kernels must be declared `extern \"C\"`)"
                )),
                _ => cuda_error(format!("finding kernel `{name}`"))(error),
            })?;
        let sizes = self.param_sizes(&function, name)?;
        if sizes.len() != launch.args.len() {
            return Err(RuntimeError::InvalidArgument(format!(
                "kernel `{name}` takes {} arguments, the launch gives {}",
                sizes.len(),
                launch.args.len()
            )));
        }
        for (position, (&size, &arg)) in sizes.iter().zip(&launch.args).enumerate() {
            if arg.param_size() != Some(size) {
                return Err(RuntimeError::InvalidArgument(format!(
                    "parameter {position} of kernel `{name}` has {size} bytes; the launch gives \
                     {}, which has {} bytes",
                    arg.describe(),
                    arg.param_size().unwrap_or(0)
                )));
            }
        }
        Ok(function)
    }

    /// The sizes in bytes of `function`'s parameters.
    fn param_sizes(&self, function: &CudaFunction, name: &str) -> Result<Vec<usize>, RuntimeError> {
        let operation = format!("reading the parameters of kernel `{name}`");
        self.device
            .context
            .bind_to_thread()
            .map_err(cuda_error(operation.clone()))?;
        let mut sizes = Vec::new();
        // A kernel's parameters fit in 32 KiB, so there are fewer than this many.
        while sizes.len() < 32 * 1024 {
            let (mut offset, mut size) = (0usize, 0usize);
            // SAFETY: the function handle is live (its module is held by `function`); the call
            // writes two `usize`s through valid pointers, and reports an index past the last
            // parameter as CUDA_ERROR_INVALID_VALUE. The driver is CUDA 13.0+ (checked in
            // `CudaDevice::open`), which has cuFuncGetParamInfo (12.4+).
            let status = unsafe {
                sys::cuFuncGetParamInfo(function.cu_function(), sizes.len(), &mut offset, &mut size)
            };
            match status {
                CuResult::CUDA_SUCCESS => sizes.push(size),
                // An index past the last parameter (documented as INVALID_VALUE).
                CuResult::CUDA_ERROR_INVALID_VALUE | CuResult::CUDA_ERROR_NOT_FOUND => {
                    return Ok(sizes)
                }
                _ => return Err(cuda_error(operation)(DriverError(status))),
            }
        }
        Err(RuntimeError::InvalidArgument(format!(
            "kernel `{name}` has too many parameters"
        )))
    }
}

/// The images NVRTC compiled in this process, by source and options: a program built again
/// (the same kernel at another size set, a candidate verified and then timed) is loaded
/// without compiling it again. The options name the architecture, so an image is only
/// reused for the devices it was compiled for. At most `CAPACITY` images are kept; when full,
/// the cache starts again empty.
mod compiled_images {
    use cudarc::nvrtc::Ptx;
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};

    /// How many images the cache holds at most.
    const CAPACITY: usize = 512;

    type Key = (String, Vec<String>);

    static IMAGES: OnceLock<Mutex<HashMap<Key, Ptx>>> = OnceLock::new();

    fn images() -> std::sync::MutexGuard<'static, HashMap<Key, Ptx>> {
        // A panic while the lock was held leaves a map that is still whole.
        let lock = IMAGES.get_or_init(|| Mutex::new(HashMap::new()));
        lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The image compiled before from `source` with `options`, if any.
    pub(crate) fn get(source: &str, options: &[String]) -> Option<Ptx> {
        images()
            .get(&(source.to_string(), options.to_vec()))
            .cloned()
    }

    /// Keeps `image`, compiled now from `source` with `options`.
    pub(crate) fn keep(source: &str, options: &[String], image: &Ptx) {
        let mut images = images();
        if images.len() >= CAPACITY {
            images.clear();
        }
        images.insert((source.to_string(), options.to_vec()), image.clone());
    }
}

/// An NVRTC program, destroyed on drop.
struct NvrtcProgram(cudarc::nvrtc::sys::nvrtcProgram);

impl Drop for NvrtcProgram {
    fn drop(&mut self) {
        // SAFETY: the handle came from `create_program` and is destroyed only here, once. A
        // failure to free cannot be reported from `drop` and leaks at most the program.
        let _ = unsafe { nvrtc::destroy_program(self.0) };
    }
}

/// Compiles `source` with `options`: a CUBIN for a real architecture (`sm_XY`, loaded without
/// a JIT step), PTX for a virtual one (`compute_XY`).
fn compile(source: &str, options: &[String]) -> Result<Ptx, RuntimeError> {
    let nvrtc_error = |operation: &str| {
        let operation = operation.to_string();
        move |error: nvrtc::NvrtcError| RuntimeError::Gpu {
            api: "NVRTC",
            operation,
            message: format!("{:?}", error.0),
        }
    };
    let source = CString::new(source)
        .map_err(|_| RuntimeError::InvalidArgument("the CUDA source contains a NUL byte".into()))?;
    let name = c"shine.cu";
    let program = NvrtcProgram(
        nvrtc::create_program(&source, Some(name)).map_err(nvrtc_error("creating a program"))?,
    );
    // SAFETY: `program` was created above and is destroyed only when it is dropped, after this
    // function's last use; the options hold no NUL (checked by the caller), so the conversion
    // inside cannot fail.
    let compiled = unsafe { nvrtc::compile_program(program.0, options) };
    if let Err(error) = compiled {
        // SAFETY: as above; the log is a NUL-terminated string of the size NVRTC reported.
        let log = unsafe { nvrtc::get_program_log(program.0) }
            .map(|log| c_string(&log))
            .unwrap_or_default();
        return Err(match error.0 {
            nvrtcResult::NVRTC_ERROR_COMPILATION | nvrtcResult::NVRTC_ERROR_INVALID_OPTION => {
                RuntimeError::KernelBuildFailed {
                    compiler: "NVRTC",
                    options: options.join(" "),
                    log: if log.trim().is_empty() {
                        format!("{:?}", error.0)
                    } else {
                        log
                    },
                }
            }
            _ => nvrtc_error("compiling")(error),
        });
    }
    // SAFETY: as above.
    let log = unsafe { nvrtc::get_program_log(program.0) }
        .map(|log| c_string(&log))
        .unwrap_or_default();
    if serializes_wgmma(&log) {
        return Err(RuntimeError::KernelBuildFailed {
            compiler: "NVRTC",
            options: options.join(" "),
            log: format!(
                "ptxas serialized the kernel's wgmma instructions (each multiply waits for the \
                 one before it: a kernel far slower than its schedule says is refused, not run)\n{log}"
            ),
        });
    }
    if let Some(cubin) = cubin(&program) {
        return Ok(Ptx::from_binary(cubin));
    }
    // SAFETY: `program` is live and compiled.
    let ptx = unsafe { nvrtc::get_ptx(program.0) }.map_err(nvrtc_error("reading the PTX"))?;
    Ok(Ptx::from_src(c_string(&ptx)))
}

/// Whether ptxas's log says it serialized warp-group multiplies (warnings C7510, C7511,
/// C7515: "wgmma.mma_async instructions are serialized ..."), which it does rather than fail
/// when the registers or fences of a kernel do not let the multiplies run asynchronously.
fn serializes_wgmma(log: &str) -> bool {
    ["C7510", "C7511", "C7515"]
        .iter()
        .any(|code| log.contains(code))
        || (log.contains("wgmma") && log.contains("serialized"))
}

/// The CUBIN of a compiled program; `None` when there is none (a virtual architecture).
fn cubin(program: &NvrtcProgram) -> Option<Vec<u8>> {
    use cudarc::nvrtc::sys::{nvrtcGetCUBIN, nvrtcGetCUBINSize};
    let mut size = 0usize;
    // SAFETY: the program is live and compiled; the call writes one `usize`.
    let status = unsafe { nvrtcGetCUBINSize(program.0, &mut size) };
    if status != nvrtcResult::NVRTC_SUCCESS || size == 0 {
        return None;
    }
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` has the `size` bytes NVRTC reported, which is what it writes.
    let status = unsafe { nvrtcGetCUBIN(program.0, cubin.as_mut_ptr().cast::<c_char>()) };
    (status == nvrtcResult::NVRTC_SUCCESS).then_some(cubin)
}

/// The text of a NUL-terminated C string held in `bytes` (all of them when there is no NUL).
fn c_string(bytes: &[c_char]) -> String {
    let bytes: Vec<u8> = bytes.iter().map(|&c| c as u8).collect();
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::serializes_wgmma;

    #[test]
    fn a_serialization_warning_of_ptxas_is_recognized() {
        let warning = "ptxas warning : (C7510) Potential Performance Loss: wgmma.mma_async \
                       instructions are serialized due to the presence of Extern calls";
        assert!(serializes_wgmma(warning));
        assert!(serializes_wgmma("ptxas warning : (C7515) ..."));
        assert!(!serializes_wgmma(""));
        assert!(!serializes_wgmma("ptxas info : Used 168 registers"));
    }
}
