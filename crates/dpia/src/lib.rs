//! DPIA for shine: low-level RISE to imperative phrases (RISE & Shine §V).
//!
//! [`translate`] checks that a low-level RISE program makes every decision code
//! generation needs (§V-B) and runs the acceptor and continuation translation
//! (Listings 8–9), producing an [`imperative::Program`]: commands over read and
//! write views, which the code generators turn into C, OpenMP, OpenCL or CUDA.
//!
//! For GPUs, [`gpu::prepare`] runs the imperative passes: global allocations move
//! to the host and the program splits into kernels with their launch
//! configurations ([`gpu`]), local memory and private arrays move to the top of
//! each kernel ([`hoist`]), and barriers go where threads communicate, never where
//! not every thread would reach them ([`barriers`]).
//!
//! The passes share the read-only questions about phrases (which memories a command
//! reads and writes, the variables of a type's sizes) through [`query`], built on the
//! traversals of [`walk`], and import those rather than each other.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod barriers;
pub mod constraints;
mod error;
pub mod gpu;
pub mod hoist;
pub mod imperative;
pub mod limits;
pub mod query;
pub mod translate;
pub mod view;
pub mod walk;

pub use gpu::{prepare, GpuError, GpuProgram, Kernel, Launch};
pub use imperative::{
    Acc, AccKind, BinOp, Comm, Exp, ExpKind, Ident, LookBack, LoopKind, PadMode, ParLevel, Program,
    Shuffle, UnOp,
};
pub use translate::{translate, TranslateError};
pub use view::{PathElem, Requirement, View};
