//! DPIA for shine: low-level RISE to imperative phrases (RISE & Shine §V).
//!
//! [`translate`] checks that a low-level RISE program makes every decision code
//! generation needs (§V-B) and runs the acceptor and continuation translation
//! (Listings 8–9), producing an [`imperative::Program`]: commands over read and
//! write views, which the code generators turn into C, OpenMP, OpenCL or CUDA.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod imperative;
pub mod translate;

pub use imperative::{
    Acc, AccKind, BinOp, Comm, Exp, ExpKind, Ident, LoopKind, PadMode, Program, UnOp,
};
pub use translate::{translate, TranslateError};
