//! Running OpenCL kernels: device selection, program builds, launches, timing.
//!
//! The OpenCL library is loaded at run time (crate `opencl3`, feature `dynamic`), so builds need
//! no OpenCL; a machine without a loader or platform gets [`RuntimeError::Unavailable`]. In CI
//! the platform is PoCL on the CPU; on the GPU machine PoCL is listed *before* the NVIDIA
//! platform, so [`DeviceSelector::Gpu`] (and [`DeviceSelector::Any`]) look for a GPU on every
//! platform rather than take the first device.
//!
//! ```no_run
//! use runtime::{
//!     Buffer, DeviceSelector, GpuProgram, KernelArg, OpenClDevice, OpenClLaunch, OpenClProgram,
//! };
//! # fn main() -> Result<(), runtime::RuntimeError> {
//! let device = OpenClDevice::select(&DeviceSelector::from_env_or(DeviceSelector::Any))?;
//! let source = "kernel void twice(global float *out, global const float *x, int n) {
//!     int i = get_global_id(0); if (i < n) out[i] = 2.0f * x[i]; }";
//! let program = OpenClProgram::build(&device, source, "")?;
//! let x = Buffer::from_slice(&[1.0f32, 2.0, 3.0]);
//! let mut out = [Buffer::zeroed(x.len())];
//! let launch = OpenClLaunch::new("twice", &[3])
//!     .args([KernelArg::Buffer(0), KernelArg::Buffer(1), KernelArg::I32(3)]);
//! program.run(&[launch], &mut out, &[&x], &[])?;
//! assert_eq!(out[0].as_slice::<f32>(), &[2.0, 4.0, 6.0]);
//! # Ok(()) }
//! ```
//!
//! Buffers are named by index as [`KernelArg::Buffer`] describes: the outputs, then the
//! inputs, then device-only temporaries.
//!
//! Only GPUs are driven from this process. A CPU platform (PoCL) runs kernels on threads of
//! the process that calls OpenCL, so a kernel that crashes would end it: every device but a
//! GPU is driven from a child process (`opencl_child`), where a crash is an error
//! ([`RuntimeError::OpenClProcessEnded`]). The platforms are listed in a child process too.

use std::fmt;
use std::ptr;
use std::sync::Arc;
use std::time::Instant;

use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{
    Device, CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU,
};
use opencl3::error_codes::{
    ClError, CL_BUILD_PROGRAM_FAILURE, CL_INVALID_BUILD_OPTIONS, CL_INVALID_KERNEL_NAME,
    CL_PLATFORM_NOT_FOUND_KHR, DLOPEN_RUNTIME_LOAD_FAILED,
};
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer as ClBuffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::platform::{get_platforms, Platform};
use opencl3::program::Program;
use opencl3::types::{cl_device_id, cl_device_type, CL_BLOCKING};

use crate::gpu::{self, GpuProgram, KernelArg};
use crate::{opencl_child, Buffer, RuntimeError};

/// Which OpenCL device to run on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum DeviceSelector {
    /// A GPU if any platform has one, otherwise the first device of any kind.
    #[default]
    Any,
    /// The first CPU device.
    Cpu,
    /// The first GPU device, on whichever platform lists it.
    Gpu,
    /// A device whose platform name, platform vendor or device name contains this text,
    /// ignoring case (`"nvidia"`, `"pocl"`, `"portable"`); a GPU among them if there is one.
    Platform(String),
}

impl DeviceSelector {
    /// The environment variable that overrides the default selection: `any`, `cpu`, `gpu`, or
    /// any other text, taken as a [`DeviceSelector::Platform`] name.
    pub const ENV: &'static str = "SHINE_OPENCL_DEVICE";

    /// Reads a selector: `any` (or nothing), `cpu` and `gpu` (any case) name those choices;
    /// any other text selects by platform or device name.
    pub fn parse(text: &str) -> DeviceSelector {
        let text = text.trim();
        match text.to_ascii_lowercase().as_str() {
            "" | "any" => DeviceSelector::Any,
            "cpu" => DeviceSelector::Cpu,
            "gpu" => DeviceSelector::Gpu,
            _ => DeviceSelector::Platform(text.to_string()),
        }
    }

    /// The selector given by [`DeviceSelector::ENV`] when it is set (and not empty), otherwise
    /// `default`.
    pub fn from_env_or(default: DeviceSelector) -> DeviceSelector {
        match std::env::var(Self::ENV) {
            Ok(text) if !text.trim().is_empty() => DeviceSelector::parse(&text),
            _ => default,
        }
    }

    /// Whether `candidate` is one this selector accepts (before preferring GPUs).
    fn accepts(&self, candidate: &Candidate) -> bool {
        match self {
            DeviceSelector::Any => true,
            DeviceSelector::Cpu => candidate.kind == DeviceKind::Cpu,
            DeviceSelector::Gpu => candidate.kind == DeviceKind::Gpu,
            DeviceSelector::Platform(text) => {
                let text = text.to_lowercase();
                [&candidate.platform, &candidate.vendor, &candidate.name]
                    .iter()
                    .any(|field| field.to_lowercase().contains(&text))
            }
        }
    }
}

impl std::str::FromStr for DeviceSelector {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<DeviceSelector, Self::Err> {
        Ok(DeviceSelector::parse(text))
    }
}

impl fmt::Display for DeviceSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSelector::Any => write!(f, "any"),
            DeviceSelector::Cpu => write!(f, "cpu"),
            DeviceSelector::Gpu => write!(f, "gpu"),
            DeviceSelector::Platform(text) => write!(f, "{text}"),
        }
    }
}

/// The kind of an OpenCL device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// A CPU (PoCL, Intel's CPU runtime, ...).
    Cpu,
    /// A GPU.
    Gpu,
    /// An accelerator (FPGA, DSP, ...).
    Accelerator,
    /// Anything else.
    Other,
}

impl DeviceKind {
    fn of(device_type: cl_device_type) -> DeviceKind {
        if device_type & CL_DEVICE_TYPE_GPU != 0 {
            DeviceKind::Gpu
        } else if device_type & CL_DEVICE_TYPE_CPU != 0 {
            DeviceKind::Cpu
        } else if device_type & CL_DEVICE_TYPE_ACCELERATOR != 0 {
            DeviceKind::Accelerator
        } else {
            DeviceKind::Other
        }
    }
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceKind::Cpu => "CPU",
            DeviceKind::Gpu => "GPU",
            DeviceKind::Accelerator => "accelerator",
            DeviceKind::Other => "other",
        })
    }
}

/// A device found on one of the platforms, and where to find it again: the index of its
/// platform among the platforms, and its index among that platform's devices.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Candidate {
    pub(crate) name: String,
    pub(crate) platform: String,
    pub(crate) vendor: String,
    pub(crate) kind: DeviceKind,
    pub(crate) platform_index: usize,
    pub(crate) device_index: usize,
}

impl fmt::Display for Candidate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}, {})", self.name, self.platform, self.kind)
    }
}

impl Candidate {
    /// Whether the device runs in this process: only GPUs do. Other platforms (PoCL on the
    /// CPU) run kernels on threads of the calling process, where a crashing kernel would end
    /// it, so their devices are driven from a child process (`opencl_child`).
    fn runs_in_process(&self) -> bool {
        self.kind == DeviceKind::Gpu
    }
}

/// What is known of an opened device.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Facts {
    pub(crate) version: String,
    pub(crate) max_work_group_size: usize,
    pub(crate) local_mem_bytes: u64,
    /// The extensions the device reports, separated by spaces (`CL_DEVICE_EXTENSIONS`).
    pub(crate) extensions: String,
}

/// An OpenCL device, opened with a context and an in-order, profiling command queue. Cloning
/// shares them.
///
/// A GPU is driven from this process. Any other device (PoCL on the CPU) is driven from a
/// child process, because its platform runs kernels on threads of the calling process: a
/// kernel that crashes (a foreign function dereferencing null, `abort`) ends that child,
/// and the call that ran it returns [`RuntimeError::OpenClProcessEnded`]; the next call
/// starts a fresh child (programs are rebuilt there on their next run).
#[derive(Clone)]
pub struct OpenClDevice {
    candidate: Arc<Candidate>,
    facts: Arc<Facts>,
    place: Place,
}

/// Where a device's OpenCL objects live.
#[derive(Clone)]
enum Place {
    /// In this process (GPUs).
    InProcess(Arc<LocalDevice>),
    /// In a child process (every other device).
    Child(Arc<opencl_child::Server>),
}

/// The OpenCL objects of a device opened in this process (or in the child that drives it).
pub(crate) struct LocalDevice {
    // Declared before `context`: the queue is released first.
    queue: CommandQueue,
    context: Context,
    id: cl_device_id,
    /// The device as errors name it: `name (platform, kind)`.
    describe: String,
}

// SAFETY: `cl_device_id` is a raw pointer only because of the C API; OpenCL device ids are
// immutable handles that every OpenCL call accepts from any thread (OpenCL 1.2+, section A.2:
// all API calls are thread-safe except clSetKernelArg on one kernel object, and kernel objects
// are never shared here). The queue and context are `Send + Sync` in `opencl3` already.
unsafe impl Send for LocalDevice {}
// SAFETY: as for `Send`: the fields are never mutated after construction and the handles are
// thread-safe OpenCL objects.
unsafe impl Sync for LocalDevice {}

impl OpenClDevice {
    /// Opens the device `selector` names, with a context and a profiling command queue.
    ///
    /// Errors: [`RuntimeError::Unavailable`] when there is no OpenCL loader, platform or device
    /// at all, [`RuntimeError::NoMatchingDevice`] when devices exist but none matches.
    pub fn select(selector: &DeviceSelector) -> Result<OpenClDevice, RuntimeError> {
        // the platforms are listed in a child process, so that this one never starts a
        // CPU platform's threads (a child forked after that would hang on them)
        let (candidates, lister) = opencl_child::candidates()?;
        let accepted: Vec<&Candidate> = candidates.iter().filter(|c| selector.accepts(c)).collect();
        let chosen = accepted
            .iter()
            .find(|c| c.kind == DeviceKind::Gpu)
            .or_else(|| accepted.first())
            .ok_or_else(|| RuntimeError::NoMatchingDevice {
                wanted: selector.to_string(),
                available: candidates
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            })?;
        let candidate = Arc::new((*chosen).clone());
        let (facts, place) = if candidate.runs_in_process() {
            drop(lister);
            let (device, facts) = LocalDevice::open(&candidate)?;
            (facts, Place::InProcess(Arc::new(device)))
        } else {
            let (server, facts) = opencl_child::Server::open(&candidate, lister)?;
            (facts, Place::Child(Arc::new(server)))
        };
        Ok(OpenClDevice {
            candidate,
            facts: Arc::new(facts),
            place,
        })
    }

    /// Opens the device [`DeviceSelector::ENV`] names, or else any device (a GPU if there is one).
    pub fn from_env() -> Result<OpenClDevice, RuntimeError> {
        OpenClDevice::select(&DeviceSelector::from_env_or(DeviceSelector::Any))
    }

    /// Every device of every platform, as `device (platform, type)`.
    pub fn list() -> Result<Vec<String>, RuntimeError> {
        let (candidates, _) = opencl_child::candidates()?;
        Ok(candidates.iter().map(ToString::to_string).collect())
    }

    /// The device's name (`"NVIDIA H100 80GB HBM3"`, `"pthread-skylake-..."`).
    pub fn name(&self) -> &str {
        &self.candidate.name
    }

    /// The name of the device's platform (`"NVIDIA CUDA"`, `"Portable Computing Language"`).
    pub fn platform_name(&self) -> &str {
        &self.candidate.platform
    }

    /// The OpenCL version the device reports (`"OpenCL 3.0 CUDA"`, ...).
    pub fn version(&self) -> &str {
        &self.facts.version
    }

    /// The kind of device.
    pub fn kind(&self) -> DeviceKind {
        self.candidate.kind
    }

    /// The largest work-group the device runs (in work-items).
    pub fn max_work_group_size(&self) -> usize {
        self.facts.max_work_group_size
    }

    /// The size of the device's local memory in bytes.
    pub fn local_mem_bytes(&self) -> u64 {
        self.facts.local_mem_bytes
    }

    /// Whether the device reports the OpenCL extension `name` (`cl_khr_fp16`).
    pub fn has_extension(&self, name: &str) -> bool {
        self.facts.extensions.split_whitespace().any(|e| e == name)
    }

    /// Refuses kernel `kernel`, whose work-groups need `needed` bytes of local memory (its
    /// `local` arrays and local arguments), where that is more than the device has
    /// ([`OpenClDevice::local_mem_bytes`]): [`RuntimeError::LocalMemoryExceeded`].
    pub fn check_local_memory(&self, kernel: &str, needed: u64) -> Result<(), RuntimeError> {
        let limit = self.local_mem_bytes();
        if needed <= limit {
            return Ok(());
        }
        Err(RuntimeError::LocalMemoryExceeded {
            kernel: kernel.to_string(),
            needed,
            limit,
            device: self.to_string(),
            memory: "local memory per work-group",
        })
    }

    /// Whether the device's kernels run in a child process (every device but GPUs: see the
    /// type's doc).
    pub fn runs_in_child(&self) -> bool {
        matches!(self.place, Place::Child(_))
    }
}

impl fmt::Display for OpenClDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.candidate.fmt(f)
    }
}

impl fmt::Debug for OpenClDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OpenClDevice({self})")
    }
}

impl LocalDevice {
    /// Opens `candidate` in this process: finds it again on its platform (the other
    /// platforms' devices are not touched) and creates a context and a profiling queue.
    pub(crate) fn open(candidate: &Candidate) -> Result<(LocalDevice, Facts), RuntimeError> {
        let device = Device::new(find(candidate)?);
        let context = Context::from_device(&device)
            .map_err(cl_error(format!("creating a context on {candidate}")))?;
        let queue =
            CommandQueue::create_default_with_properties(&context, CL_QUEUE_PROFILING_ENABLE, 0)
                .or_else(|_| {
                    // OpenCL 1.x platforms only have the older entry point.
                    #[allow(deprecated)]
                    CommandQueue::create_default(&context, CL_QUEUE_PROFILING_ENABLE)
                })
                .map_err(cl_error(format!("creating a command queue on {candidate}")))?;
        let info = |what: &str| cl_error(format!("querying the {what} of {candidate}"));
        let facts = Facts {
            version: device.version().map_err(info("version"))?,
            max_work_group_size: device
                .max_work_group_size()
                .map_err(info("work-group size"))?,
            local_mem_bytes: device.local_mem_size().map_err(info("local memory size"))?,
            extensions: device.extensions().map_err(info("extensions"))?,
        };
        let local = LocalDevice {
            queue,
            context,
            id: device.id(),
            describe: candidate.to_string(),
        };
        Ok((local, facts))
    }
}

/// Serialises platform and device enumeration within this process: the first enumeration
/// initialises the ICD loader and the platforms, and PoCL 3.1 crashes (in `clGetDeviceInfo`)
/// or reports no platform when several threads do that at once. Later OpenCL calls are
/// thread-safe as the specification requires.
static ENUMERATION: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Holds [`ENUMERATION`]: no thread of this process enumerates while the guard lives.
pub(crate) fn enumeration_guard() -> std::sync::MutexGuard<'static, ()> {
    // A panic elsewhere while holding the lock leaves nothing half-done that matters here.
    ENUMERATION.lock().unwrap_or_else(|e| e.into_inner())
}

/// The OpenCL platforms; the loader missing is [`RuntimeError::Unavailable`], no platform an
/// empty list.
fn platforms() -> Result<Vec<Platform>, RuntimeError> {
    match get_platforms() {
        Ok(platforms) => Ok(platforms),
        Err(ClError(DLOPEN_RUNTIME_LOAD_FAILED)) => Err(RuntimeError::Unavailable(
            "the OpenCL loader (libOpenCL.so) was not found; install one and a platform, \
             e.g. `apt-get install ocl-icd-libopencl1 pocl-opencl-icd`"
                .into(),
        )),
        Err(ClError(CL_PLATFORM_NOT_FOUND_KHR)) => Ok(Vec::new()),
        Err(e) => Err(cl_error("listing the OpenCL platforms")(e)),
    }
}

/// All devices of all platforms; platforms whose devices cannot be listed are left out.
/// This starts every platform's devices (PoCL's worker threads): `opencl_child` calls it in
/// a child process.
pub(crate) fn candidates() -> Result<Vec<Candidate>, RuntimeError> {
    let _guard = enumeration_guard();
    let platforms = platforms()?;
    let mut found = Vec::new();
    for (platform_index, platform) in platforms.iter().enumerate() {
        let Ok(ids) = platform.get_devices(CL_DEVICE_TYPE_ALL) else {
            continue;
        };
        let platform_name = platform.name().unwrap_or_default();
        let vendor = platform.vendor().unwrap_or_default();
        for (device_index, id) in ids.into_iter().enumerate() {
            let device = Device::new(id);
            found.push(Candidate {
                name: device.name().unwrap_or_default(),
                platform: platform_name.clone(),
                vendor: vendor.clone(),
                kind: DeviceKind::of(device.dev_type().unwrap_or(0)),
                platform_index,
                device_index,
            });
        }
    }
    if found.is_empty() {
        return Err(RuntimeError::Unavailable(format!(
            "no OpenCL device found ({} platform(s)); install an OpenCL platform, e.g. \
             `apt-get install pocl-opencl-icd` for CPUs, or register a GPU driver's ICD in \
             /etc/OpenCL/vendors",
            platforms.len()
        )));
    }
    Ok(found)
}

/// The id of `candidate`'s device, listing only the devices of its platform.
fn find(candidate: &Candidate) -> Result<cl_device_id, RuntimeError> {
    let _guard = enumeration_guard();
    let gone = || {
        RuntimeError::Unavailable(format!(
            "the OpenCL device {candidate} is no longer listed where it was (platform {}, \
             device {})",
            candidate.platform_index, candidate.device_index
        ))
    };
    let platforms = platforms()?;
    let platform = platforms.get(candidate.platform_index).ok_or_else(gone)?;
    let ids = platform
        .get_devices(CL_DEVICE_TYPE_ALL)
        .map_err(cl_error(format!(
            "listing the devices of {}",
            candidate.platform
        )))?;
    let id = *ids.get(candidate.device_index).ok_or_else(gone)?;
    if Device::new(id).name().unwrap_or_default() != candidate.name {
        return Err(gone());
    }
    Ok(id)
}

/// The conversion of an OpenCL error code while doing `operation`.
fn cl_error(operation: impl Into<String>) -> impl FnOnce(ClError) -> RuntimeError {
    let operation = operation.into();
    move |error| RuntimeError::Gpu {
        api: "OpenCL",
        operation,
        message: error.to_string(),
    }
}

/// One kernel launch: a kernel of the program, an N-D range and the arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenClLaunch {
    /// The kernel's name.
    pub kernel: String,
    /// The global work size, in work-items, in 1 to 3 dimensions.
    pub global: Vec<usize>,
    /// The work-group size (as many dimensions as `global`); `None` lets OpenCL choose.
    pub local: Option<Vec<usize>>,
    /// The arguments, in the order of the kernel's parameters.
    pub args: Vec<KernelArg>,
}

impl OpenClLaunch {
    /// A launch of `kernel` over `global` work-items, with no arguments yet.
    pub fn new(kernel: impl Into<String>, global: &[usize]) -> OpenClLaunch {
        OpenClLaunch {
            kernel: kernel.into(),
            global: global.to_vec(),
            local: None,
            args: Vec::new(),
        }
    }

    /// This launch with work-groups of size `local`.
    pub fn local(mut self, local: &[usize]) -> OpenClLaunch {
        self.local = Some(local.to_vec());
        self
    }

    /// This launch with `arg` appended to its arguments.
    pub fn arg(mut self, arg: KernelArg) -> OpenClLaunch {
        self.args.push(arg);
        self
    }

    /// This launch with `args` appended to its arguments.
    pub fn args(mut self, args: impl IntoIterator<Item = KernelArg>) -> OpenClLaunch {
        self.args.extend(args);
        self
    }

    /// Checks what can be checked without the device.
    fn check(&self, buffers: usize) -> Result<(), RuntimeError> {
        gpu::check_kernel_name(&self.kernel)?;
        let dims = self.global.len();
        let bad = |message: String| Err(RuntimeError::InvalidArgument(message));
        if !(1..=3).contains(&dims) {
            return bad(format!(
                "kernel `{}`: the global work size has {dims} dimensions; OpenCL takes 1 to 3",
                self.kernel
            ));
        }
        if let Some(local) = &self.local {
            if local.len() != dims {
                return bad(format!(
                    "kernel `{}`: the local work size has {} dimensions, the global one {dims}",
                    self.kernel,
                    local.len()
                ));
            }
        }
        gpu::check_buffer_indices(&self.kernel, &self.args, buffers)
    }
}

/// An OpenCL program built for one device (in the process that drives the device: see
/// [`OpenClDevice`]).
pub struct OpenClProgram {
    device: OpenClDevice,
    kernel_names: Vec<String>,
    built: Built,
}

/// Where a program is built.
enum Built {
    /// In this process, on a device opened here.
    InProcess(Arc<LocalDevice>, LocalProgram),
    /// In the child process of the device (rebuilt there when that process was replaced).
    Child(opencl_child::ChildProgram),
}

impl fmt::Debug for OpenClProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenClProgram")
            .field("device", &self.device)
            .field("kernels", &self.kernel_names)
            .finish()
    }
}

/// Refuses `source` where it enables an extension (`#pragma OPENCL EXTENSION cl_khr_fp16 :
/// enable`, as code with `f16` data does) that `device` does not report, naming both.
fn check_extensions(device: &OpenClDevice, source: &str) -> Result<(), RuntimeError> {
    let enabled = source.lines().filter_map(|line| {
        let rest = line.trim().strip_prefix("#pragma OPENCL EXTENSION ")?;
        let (name, state) = rest.split_once(':')?;
        (state.trim() == "enable").then_some(name.trim())
    });
    for name in enabled {
        if name != "all" && !device.has_extension(name) {
            let why = match name {
                "cl_khr_fp16" => " (16-bit `half` floats: `f16` data)",
                "cl_khr_fp64" => " (64-bit `double` floats: `f64` data)",
                _ => "",
            };
            return Err(RuntimeError::Unavailable(format!(
                "the OpenCL device {} ({}) does not report the extension {name}{why}, which the \
                 program needs; choose another device with {} or another target",
                device.name(),
                device.platform_name(),
                DeviceSelector::ENV
            )));
        }
    }
    Ok(())
}

impl OpenClProgram {
    /// Compiles OpenCL C `source` for `device` with build `options` (`"-cl-fast-relaxed-math"`,
    /// ...). A compile error comes back as [`RuntimeError::KernelBuildFailed`] with the log.
    pub fn build(
        device: &OpenClDevice,
        source: &str,
        options: &str,
    ) -> Result<OpenClProgram, RuntimeError> {
        gpu::check_no_nul("OpenCL source", source)?;
        gpu::check_no_nul("build options", options)?;
        check_extensions(device, source)?;
        let (kernel_names, built) = match &device.place {
            Place::InProcess(local) => {
                let program = LocalProgram::build(local, source, options)?;
                let names = program.kernel_names.clone();
                (names, Built::InProcess(local.clone(), program))
            }
            Place::Child(server) => {
                let (program, names) = opencl_child::ChildProgram::build(server, source, options)?;
                (names, Built::Child(program))
            }
        };
        Ok(OpenClProgram {
            device: device.clone(),
            kernel_names,
            built,
        })
    }

    /// The device the program was built for.
    pub fn device(&self) -> &OpenClDevice {
        &self.device
    }

    /// The names of the program's kernels.
    pub fn kernel_names(&self) -> &[String] {
        &self.kernel_names
    }
}

/// A launch sequence and how often to run it: what [`GpuProgram::execute`] does besides
/// moving the buffers.
pub(crate) struct Sequence<'a> {
    pub(crate) launches: &'a [OpenClLaunch],
    /// The byte sizes of the temporaries.
    pub(crate) temporaries: &'a [usize],
    /// The buffer index of the status flag, if any.
    pub(crate) status: Option<usize>,
    pub(crate) warmup: usize,
    pub(crate) runs: usize,
}

/// What a run of a [`Sequence`] gives besides the outputs: the kernel and wall times of the
/// timed runs in milliseconds, and the status flag (0 without one).
pub(crate) type Times = (Vec<f64>, Vec<f64>, i32);

impl GpuProgram for OpenClProgram {
    type Launch = OpenClLaunch;

    /// Runs the launch sequence `warmup + runs` times; the status flag at buffer index
    /// `status`, if any, is read back at the end. The kernel and wall times of the last
    /// `runs`, in milliseconds.
    #[allow(clippy::too_many_arguments)]
    fn execute(
        &self,
        launches: &[OpenClLaunch],
        outputs: &mut [Buffer],
        inputs: &[&Buffer],
        temporaries: &[usize],
        status: Option<usize>,
        warmup: usize,
        runs: usize,
    ) -> Result<Times, RuntimeError> {
        let sequence = Sequence {
            launches,
            temporaries,
            status,
            warmup,
            runs,
        };
        match &self.built {
            Built::InProcess(device, program) => {
                program.execute(device, &sequence, outputs, inputs)
            }
            Built::Child(program) => program.execute(&sequence, outputs, inputs),
        }
    }
}

/// A program built in this process (or in the child that drives its device).
pub(crate) struct LocalProgram {
    program: Program,
    kernel_names: Vec<String>,
}

impl LocalProgram {
    /// Compiles OpenCL C `source` for `device` with build `options`, as
    /// [`OpenClProgram::build`] describes.
    pub(crate) fn build(
        device: &LocalDevice,
        source: &str,
        options: &str,
    ) -> Result<LocalProgram, RuntimeError> {
        let mut program = Program::create_from_source(&device.context, source)
            .map_err(cl_error("creating a program from source"))?;
        if let Err(error) = program.build(&[device.id], options) {
            let log = program.get_build_log(device.id).unwrap_or_default();
            return Err(match error.0 {
                CL_BUILD_PROGRAM_FAILURE | CL_INVALID_BUILD_OPTIONS => {
                    RuntimeError::KernelBuildFailed {
                        compiler: "OpenCL",
                        options: options.to_string(),
                        log: if log.trim().is_empty() {
                            error.to_string()
                        } else {
                            log
                        },
                    }
                }
                _ => cl_error(format!("building a program on {}", device.describe))(error),
            });
        }
        let kernel_names = program
            .kernel_names()
            .split(';')
            .filter(|name| !name.is_empty())
            .map(String::from)
            .collect();
        Ok(LocalProgram {
            program,
            kernel_names,
        })
    }

    /// The names of the program's kernels.
    pub(crate) fn kernel_names(&self) -> &[String] {
        &self.kernel_names
    }

    /// Copies `outputs` and `inputs` to `device`, runs `sequence` and copies the outputs
    /// back ([`GpuProgram::execute`]).
    pub(crate) fn execute(
        &self,
        device: &LocalDevice,
        sequence: &Sequence,
        outputs: &mut [Buffer],
        inputs: &[&Buffer],
    ) -> Result<Times, RuntimeError> {
        let launches = sequence.launches;
        let sizes = gpu::buffer_sizes(outputs, inputs, sequence.temporaries);
        for launch in launches {
            launch.check(sizes.len())?;
        }
        let queue = &device.queue;
        // Device buffers, in index order: the outputs, the inputs, the temporaries.
        let mut buffers = Vec::with_capacity(sizes.len());
        for (index, &size) in sizes.iter().enumerate() {
            let context = format!("allocating buffer {index} ({size} bytes)");
            // SAFETY: no host pointer is given and no USE/COPY_HOST_PTR flag is set, so the
            // runtime only allocates (at least one byte: empty buffers are not allowed).
            let mut buffer = unsafe {
                ClBuffer::<u8>::create(
                    &device.context,
                    CL_MEM_READ_WRITE,
                    size.max(1),
                    ptr::null_mut(),
                )
            }
            .map_err(cl_error(context))?;
            let host = gpu::host_bytes(index, outputs, inputs);
            let context = format!("initialising buffer {index}");
            match host {
                Some(bytes) if !bytes.is_empty() => {
                    // SAFETY: the write is blocking, so OpenCL has read all of `bytes` (a live
                    // borrow) before the call returns; the device buffer holds at least
                    // `bytes.len()` bytes.
                    unsafe { queue.enqueue_write_buffer(&mut buffer, CL_BLOCKING, 0, bytes, &[]) }
                        .map_err(cl_error(context))?;
                }
                Some(_) => {}
                None => {
                    // SAFETY: the one-byte pattern is copied by the call; the filled range is
                    // the whole buffer (`size.max(1)` bytes, as allocated).
                    unsafe { queue.enqueue_fill_buffer(&mut buffer, &[0u8], 0, size.max(1), &[]) }
                        .map_err(cl_error(context))?;
                }
            }
            buffers.push(buffer);
        }
        let kernels = launches
            .iter()
            .map(|launch| self.prepare(launch, &buffers))
            .collect::<Result<Vec<_>, _>>()?;
        queue
            .finish()
            .map_err(cl_error("waiting for the uploads"))?;
        let (warmup, runs) = (sequence.warmup, sequence.runs);
        let mut kernel_ms = Vec::with_capacity(runs);
        let mut wall_ms = Vec::with_capacity(runs);
        for run in 0..warmup + runs {
            let start = Instant::now();
            let mut events = Vec::with_capacity(launches.len());
            for (kernel, launch) in kernels.iter().zip(launches) {
                events.push(enqueue(queue, kernel, launch)?);
            }
            queue
                .finish()
                .map_err(cl_error("waiting for the kernels"))?;
            let wall = start.elapsed().as_secs_f64() * 1e3;
            if run >= warmup {
                let mut total_ns = 0u64;
                for (event, launch) in events.iter().zip(launches) {
                    let context = format!("reading the profile of kernel `{}`", launch.kernel);
                    let start = event
                        .profiling_command_start()
                        .map_err(cl_error(context.clone()))?;
                    let end = event.profiling_command_end().map_err(cl_error(context))?;
                    total_ns += end.saturating_sub(start);
                }
                kernel_ms.push(total_ns as f64 / 1e6);
                wall_ms.push(wall);
            }
        }
        for (index, output) in outputs.iter_mut().enumerate() {
            if output.is_empty() {
                continue;
            }
            let bytes = output.as_bytes_mut();
            // SAFETY: the read is blocking, so OpenCL has written all of `bytes` (a live, unique
            // borrow) before the call returns; the device buffer holds exactly as many bytes.
            unsafe { queue.enqueue_read_buffer(&buffers[index], CL_BLOCKING, 0, bytes, &[]) }
                .map_err(cl_error(format!("reading back output {index}")))?;
        }
        let mut flag = 0i32;
        if let Some(index) = sequence.status {
            let mut bytes = [0u8; 4];
            // SAFETY: the read is blocking, so OpenCL has written all of `bytes` before the
            // call returns; the status buffer holds at least 4 bytes (checked by the caller).
            unsafe { queue.enqueue_read_buffer(&buffers[index], CL_BLOCKING, 0, &mut bytes, &[]) }
                .map_err(cl_error("reading back the status flag"))?;
            flag = i32::from_ne_bytes(bytes);
        }
        Ok((kernel_ms, wall_ms, flag))
    }
}

impl LocalProgram {
    /// A kernel object for `launch`, with its arguments set.
    fn prepare(
        &self,
        launch: &OpenClLaunch,
        buffers: &[ClBuffer<u8>],
    ) -> Result<Kernel, RuntimeError> {
        let name = &launch.kernel;
        let kernel = Kernel::create(&self.program, name).map_err(|error| match error.0 {
            CL_INVALID_KERNEL_NAME => RuntimeError::InvalidArgument(format!(
                "the program has no kernel `{name}`; its kernels are: {}",
                self.kernel_names.join(", ")
            )),
            _ => cl_error(format!("creating kernel `{name}`"))(error),
        })?;
        let count = kernel
            .num_args()
            .map_err(cl_error(format!("querying kernel `{name}`")))?;
        if count as usize != launch.args.len() {
            return Err(RuntimeError::InvalidArgument(format!(
                "kernel `{name}` takes {count} arguments, the launch gives {}",
                launch.args.len()
            )));
        }
        for (position, &arg) in launch.args.iter().enumerate() {
            let index = position as u32;
            // SAFETY (every arm): `clSetKernelArg` copies the value it is given (or, for a
            // buffer, retains the memory object), and checks the index and the size against
            // the kernel's parameter, returning an error for a mismatch. The memory objects come
            // from `buffers`, which outlive every launch of this kernel (`execute` waits for the
            // queue before they are dropped). The kernel object is used by this thread only.
            let result = unsafe {
                match arg {
                    KernelArg::Buffer(i) => kernel.set_arg(index, &buffers[i].get()),
                    KernelArg::I32(v) => kernel.set_arg(index, &v),
                    KernelArg::I64(v) => kernel.set_arg(index, &v),
                    KernelArg::F32(v) => kernel.set_arg(index, &v),
                    KernelArg::F64(v) => kernel.set_arg(index, &v),
                    KernelArg::LocalBytes(bytes) => kernel.set_arg_local_buffer(index, bytes),
                }
            };
            result.map_err(cl_error(format!(
                "setting argument {position} ({}) of kernel `{name}`",
                arg.describe()
            )))?;
        }
        Ok(kernel)
    }
}

/// Enqueues `kernel` (its arguments set) over `launch`'s range.
fn enqueue(
    queue: &CommandQueue,
    kernel: &Kernel,
    launch: &OpenClLaunch,
) -> Result<Event, RuntimeError> {
    let dims = launch.global.len();
    let local = launch.local.as_ref().map_or(ptr::null(), |l| l.as_ptr());
    // SAFETY: the kernel object is live and has all its arguments set (`prepare` checked the
    // count); `global` and `local` (when not null) point to `dims` (1 to 3, checked) sizes each,
    // which OpenCL reads during the call. The kernel's memory accesses stay within the buffers
    // by the contract of `OpenClProgram::run`.
    unsafe {
        queue.enqueue_nd_range_kernel(
            kernel.get(),
            dims as u32,
            ptr::null(),
            launch.global.as_ptr(),
            local,
            &[],
        )
    }
    .map_err(cl_error(format!(
        "launching kernel `{}` (global {:?}, local {:?})",
        launch.kernel, launch.global, launch.local
    )))
}
