//! Errors of compiling, loading and running generated code.

use std::path::PathBuf;

/// What went wrong while compiling, loading or running a module.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The C compiler could not be started.
    #[error(
        "C compiler `{compiler}` not found ({source}); install it, or choose another compiler \
         with `--cc` (e.g. `--cc clang` or a full path)"
    )]
    CompilerNotFound {
        /// The compiler that was asked for.
        compiler: String,
        /// Why it could not be started.
        source: std::io::Error,
    },
    /// The C compiler rejected the module.
    #[error("{}\n  command: {command}\n{stderr}", compiling(source_path.as_deref()))]
    CompilationFailed {
        /// The full command line.
        command: String,
        /// What the compiler printed.
        stderr: String,
        /// The C source, when its directory is kept ([`crate::CompilerConfig::keep_dir`]);
        /// `None` when it was in a temporary directory, removed with everything in it.
        source_path: Option<PathBuf>,
    },
    /// The sanitized executable exited with an error (typically a sanitizer report).
    #[error("the sanitized run of {} failed ({status})\n{stderr}", executable.display())]
    SanitizerRunFailed {
        /// The executable.
        executable: PathBuf,
        /// How it exited.
        status: String,
        /// What it printed on stderr (the sanitizer's report).
        stderr: String,
    },
    /// The module's process was killed by a signal (a crash of the generated code: SIGSEGV,
    /// SIGFPE, SIGABRT, ...).
    #[error("`{entry}` was killed by {signal}{}", stderr_note(stderr))]
    ProgramKilled {
        /// The entry point.
        entry: String,
        /// The signal, named and explained: `SIGSEGV (segmentation fault)`.
        signal: String,
        /// What the process printed on stderr.
        stderr: String,
    },
    /// The module's process exited with an error of its own (e.g. a sanitizer built in with
    /// `-fsanitize` among the flags, or the driver refusing its request).
    #[error("`{entry}` failed ({status}){}", stderr_note(stderr))]
    ProgramFailed {
        /// The entry point.
        entry: String,
        /// How it exited.
        status: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// The module's process exited before its driver finished the runs: code of the module
    /// (a foreign function) called `exit`, `_exit` or `quick_exit`.
    #[error(
        "`{entry}` exited ({status}) before finishing its runs: code it calls ended the \
         process{}",
        stderr_note(stderr)
    )]
    ExitedEarly {
        /// The entry point.
        entry: String,
        /// How it exited.
        status: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// The child process that drives an OpenCL device other than a GPU (whose platform runs
    /// kernels on threads of the calling process, see [`crate::OpenClDevice`]) ended while it
    /// was doing `operation`: a kernel crashed (a signal), or called `abort` or `exit`.
    #[error(
        "the OpenCL process of {device} {ended} while {operation}{}",
        stderr_note(stderr)
    )]
    OpenClProcessEnded {
        /// The device, as `name (platform, kind)`.
        device: String,
        /// What it was doing: `running kernel `k``, `building a program`, ...
        operation: String,
        /// How it ended: `was killed by SIGSEGV (...)`, `exited with status 1`.
        ended: String,
        /// What the process printed on stderr while doing `operation`.
        stderr: String,
    },
    /// A helper process did not answer in time and was killed.
    #[error("`{entry}` did not answer within {seconds} s and was stopped")]
    TimedOut {
        /// What did not answer.
        entry: String,
        /// The time limit, in seconds.
        seconds: f64,
    },
    /// The generated program stopped on an error and returned a non-zero status (the code
    /// generator defines what each status means).
    #[error("`{entry}` stopped with status {status}")]
    ProgramStatus {
        /// The entry point.
        entry: String,
        /// The status it returned.
        status: std::ffi::c_int,
    },
    /// The arguments do not fit (a bad entry name, zero runs, ...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A kernel needs more local (CUDA shared) memory per work-group than the device has;
    /// found before anything is launched.
    #[error(
        "kernel `{kernel}` needs {needed} bytes of {memory}, more than the {limit} that \
         {device} allows"
    )]
    LocalMemoryExceeded {
        /// The kernel.
        kernel: String,
        /// The bytes it needs.
        needed: u64,
        /// The bytes the device has: CUDA's `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`,
        /// OpenCL's `CL_DEVICE_LOCAL_MEM_SIZE`.
        limit: u64,
        /// The device, as it describes itself.
        device: String,
        /// `"shared memory per block"` (CUDA) or `"local memory per work-group"` (OpenCL).
        memory: &'static str,
    },
    /// A GPU runtime is missing on this machine: no OpenCL loader or platform, no CUDA driver
    /// or NVRTC library, no CUDA device.
    #[error("{0}")]
    Unavailable(String),
    /// OpenCL platforms exist, but none of their devices matches the selection.
    #[error("no OpenCL device matches `{wanted}`; the devices here are: {available}")]
    NoMatchingDevice {
        /// The selection, as written (`gpu`, `cpu`, a platform name, ...).
        wanted: String,
        /// Every device found, as `device (platform, type)`.
        available: String,
    },
    /// The OpenCL compiler or NVRTC rejected a kernel source.
    #[error("{compiler} build failed (options: `{options}`)\n{log}")]
    KernelBuildFailed {
        /// `"OpenCL"` or `"NVRTC"`.
        compiler: &'static str,
        /// The build options given.
        options: String,
        /// The compiler's log.
        log: String,
    },
    /// A call into the OpenCL or CUDA API failed.
    #[error("{api} error while {operation}: {message}")]
    Gpu {
        /// `"OpenCL"`, `"CUDA"` or `"NVRTC"`.
        api: &'static str,
        /// What was being done (`launching kernel `k``, ...).
        operation: String,
        /// The API's error name or text.
        message: String,
    },
    /// Reading or writing a file failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl RuntimeError {
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> RuntimeError {
        let context = context.into();
        move |source| RuntimeError::Io { context, source }
    }
}

/// The first line of [`RuntimeError::CompilationFailed`]: which source failed to compile.
fn compiling(source_path: Option<&std::path::Path>) -> String {
    match source_path {
        Some(path) => format!("compiling {} failed", path.display()),
        None => "compiling the generated C module failed (its temporary directory is removed; \
                 `CompilerConfig::keep_in` keeps the files)"
            .to_string(),
    }
}

/// What a process printed on stderr, on lines of its own after the message (nothing if empty).
fn stderr_note(stderr: &str) -> String {
    let text = stderr.trim_end();
    if text.is_empty() {
        String::new()
    } else {
        format!("\n{text}")
    }
}

/// A signal's name and meaning: `SIGSEGV (segmentation fault)`.
pub(crate) fn signal_name(signal: std::ffi::c_int) -> String {
    let (name, meaning) = match signal {
        libc::SIGSEGV => (
            "SIGSEGV",
            "segmentation fault: an access outside valid memory",
        ),
        libc::SIGFPE => ("SIGFPE", "arithmetic fault, e.g. integer division by zero"),
        libc::SIGABRT => ("SIGABRT", "aborted"),
        libc::SIGBUS => ("SIGBUS", "bus error: a misaligned or unmapped access"),
        libc::SIGILL => ("SIGILL", "illegal instruction, e.g. one this CPU lacks"),
        libc::SIGKILL => ("SIGKILL", "killed, e.g. out of memory"),
        libc::SIGTERM => ("SIGTERM", "terminated"),
        libc::SIGINT => ("SIGINT", "interrupted"),
        libc::SIGTRAP => ("SIGTRAP", "trap"),
        libc::SIGXCPU => ("SIGXCPU", "CPU time limit exceeded"),
        libc::SIGALRM => ("SIGALRM", "alarm clock: a time limit ran out"),
        _ => return format!("signal {signal}"),
    };
    format!("{name} ({meaning})")
}
