//! Errors of compiling, loading and running generated code.

use std::path::PathBuf;

/// What went wrong while compiling, loading or running a module.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The C compiler could not be started.
    #[error(
        "C compiler `{compiler}` not found ({source}); install it, or choose another compiler \
         with `CompilerConfig::with_compiler` (e.g. \"clang\" or a full path)"
    )]
    CompilerNotFound {
        /// The compiler that was asked for.
        compiler: String,
        /// Why it could not be started.
        source: std::io::Error,
    },
    /// The C compiler rejected the module.
    #[error("compiling {} failed\n  command: {command}\n{stderr}", source_path.display())]
    CompilationFailed {
        /// The full command line.
        command: String,
        /// What the compiler printed.
        stderr: String,
        /// The C source, kept for inspection.
        source_path: PathBuf,
    },
    /// The compiled library could not be loaded.
    #[error("loading {} failed: {message}", path.display())]
    LoadFailed {
        /// The shared library.
        path: PathBuf,
        /// The loader's message.
        message: String,
    },
    /// The library has no entry point of the expected name.
    #[error("entry point `{entry}` not found in {}: {message}", path.display())]
    SymbolMissing {
        /// The entry point's name.
        entry: String,
        /// The shared library.
        path: PathBuf,
        /// The loader's message.
        message: String,
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
    /// The arguments do not fit (a bad entry name, zero runs, ...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
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
