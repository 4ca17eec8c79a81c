//! Running generated code on the host.
//!
//! The code generator emits a C module with a uniform entry point
//!
//! ```c
//! void ENTRY(void *const *buffers, const int64_t *sizes);
//! ```
//!
//! where `buffers[0]` is the output, `buffers[1..]` are the inputs (contiguous row-major data;
//! a scalar is a one-element buffer) and `sizes` are the values of the program's `nat`
//! parameters in a fixed order. This crate knows nothing of RISE: it compiles such a module
//! with the system C compiler ([`Module::compile`]), runs and times it ([`Module::run`],
//! [`Module::bench`]) on 64-byte aligned [`Buffer`]s, and checks results against a reference
//! ([`compare`]). See `DESIGN.md`, section "runtime".
//!
//! A module is either loaded into this process as a shared library, or, when sanitizers are
//! requested, built as a standalone executable around a small C driver (sanitized libraries
//! cannot be loaded into a Rust process); both run through the same API.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod buffer;
mod compare;
mod cuda;
mod error;
mod gpu;
mod module;
mod opencl;

pub use buffer::Buffer;
pub use bytemuck::Pod;
pub use compare::{compare, Mismatch, Tolerance};
pub use cuda::{CudaDevice, CudaLaunch, CudaProgram};
pub use error::RuntimeError;
pub use gpu::{GpuTiming, KernelArg};
pub use module::{CompilerConfig, Module, Sanitizer, Timing};
pub use opencl::{DeviceKind, DeviceSelector, OpenClDevice, OpenClLaunch, OpenClProgram};
