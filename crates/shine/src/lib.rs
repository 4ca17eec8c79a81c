//! shine: a compiler for RISE, driven by ELEVATE strategies.
//!
//! This crate is the library facade; the `shine` command-line tool is the `shine-cli` crate,
//! built on it. The facade is the whole pipeline as three calls, which the command line, the
//! benchmarks and `explore` share:
//!
//! * [`compile`]: program text, definition, strategy and target to an [`Artifact`], the
//!   generated code and what running it needs (the front end alone is [`lower`]);
//! * [`Executable`]: the artifact built and loaded for its target, its inputs bound
//!   ([`Inputs`]), run and timed the same way on C, OpenMP, OpenCL and CUDA;
//! * [`verify`]: the artifact run once and compared with the reference interpreter
//!   ([`evaluate`]: the interpreter alone).
//!
//! Runs of many artifacts of one definition (a search's candidates) share their random inputs
//! and the interpreter's result at a size set through a [`Reference`]
//! ([`Executable::with_reference`]).
//!
//! Data crosses the boundary as [`boundary`] says: inputs are fitted to their parameters'
//! types ([`inputs::fit_inputs`]: arrays of tuples as numpy structured arrays or with one more
//! axis, `int` from `int32`, checked `idx[n]`), and a result that is a tuple is split into its
//! parts ([`Output`]), written as several `.npy` files or one `.npz` ([`npy::write_output`]).
//!
//! Every failure is an [`Error`] value: diagnostics with spans in the source they point into,
//! or a message.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod boundary;
mod error;
mod execute;
pub mod explain;
pub mod files;
pub mod foreign;
pub mod gpu;
pub mod inputs;
pub mod limits;
pub mod npy;
mod phrase;
mod pipeline;
mod reference;
pub mod schedules;
pub mod select;
mod source;
mod sum_bound;
mod verify;

pub use boundary::{Array, Output};
pub use error::{Error, Stage};
pub use execute::{program_status, Built, Executable, RunOptions, Timings, FAST_MATH_CFLAG};
pub use inputs::{Given, Inputs};
pub use phrase::{Phrase, Setting};
pub use pipeline::{
    compile, lower, on_big_stack, rewrite, rewrite_body, Artifact, Code, LoadedStrategy, Lowered,
    Options, RewriteOptions, Rewritten, StrategySource, Target,
};
pub use reference::{random_input_types, Reference, SharedInputs};
pub use source::SourceFile;
pub use verify::{evaluate, scalars_agree, verify, FloatCheck};

pub use rise;
