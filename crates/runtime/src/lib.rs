//! Running generated code on the host.
//!
//! The code generator emits a C module with a uniform entry point
//!
//! ```c
//! int ENTRY(void *const *buffers, const int64_t *sizes);
//! ```
//!
//! where `buffers[0]` is the output, `buffers[1..]` are the inputs (contiguous row-major data;
//! a scalar is a one-element buffer) and `sizes` are the values of the program's `nat`
//! parameters in a fixed order; it returns 0 when it computed the result and another status
//! when the program stopped on an error ([`RuntimeError::ProgramStatus`]). This crate knows nothing of RISE: it compiles such a module
//! with the system C compiler ([`Module::compile`]), runs and times it ([`Module::run`],
//! [`Module::bench`]) on 64-byte aligned [`Buffer`]s, and checks results against a reference
//! ([`compare`]). See ARCHITECTURE.md, "The crates".
//!
//! A module is built as a standalone executable around a small C driver and runs as a child
//! process for every call (the buffers travel in a file that the driver maps): a crash of the
//! generated code ends as an error naming the entry point and the signal, never this process,
//! and the module's floating-point state (`-ffast-math` turns on flush-to-zero) stays in the
//! child. Temporary directories are private and removed even on signals (`cleanup`).
//! OpenCL devices other than GPUs (PoCL on the CPU, which runs kernels on threads of the
//! calling process) are driven from a child process for the same reason (`opencl_child`).
//!
//! Where a call must cost microseconds, a [`SharedLibrary`] is the same module built as a
//! shared library, loaded into this process and called directly: without that isolation.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod buffer;
mod cc;
mod cleanup;
mod compare;
mod cuda;
mod cuda_memory;
mod error;
mod exchange;
mod foreign;
mod gpu;
mod module;
mod opencl;
mod opencl_child;
mod opencl_messages;
mod shared_lib;
mod wire;

pub use buffer::Buffer;
pub use bytemuck::Pod;
pub use cleanup::{die_with_parent, install_signal_cleanup, TempDir};
pub use compare::{compare, Mismatch, Tolerance};
pub use cuda::{CudaDevice, CudaLaunch, CudaProgram, DeviceRegion};
pub use cuda_memory::CudaMemory;
pub use error::RuntimeError;
pub use foreign::ForeignHelper;
pub use gpu::{GpuProgram, GpuTiming, KernelArg};
pub use module::{CompilerConfig, Module, Sanitizer, Timing, MAX_RUNS};
pub use opencl::{DeviceKind, DeviceSelector, OpenClDevice, OpenClLaunch, OpenClProgram};
pub use shared_lib::SharedLibrary;
