//! Differential testing of shine (issue 13): random well-typed RISE programs paired with
//! random schedules, compiled for C, OpenMP, OpenCL and CUDA and compared with the interpreter.
//!
//! [`case::Case::generate`] builds case `i` of a run with seed `s` (a definition from
//! [`gen`], a schedule per target from [`sched`], size values and an input seed);
//! [`worker::run_cases`] compiles many cases into one C module per target and one OpenCL
//! program or CUDA program and reports each result; the `shine-difftest` binary runs workers as child
//! processes (a crash in generated code is attributed to its case), summarizes, and
//! shrinks failures ([`shrink`]) into regression files.

pub mod ast;
pub mod case;
pub mod exec;
pub mod gen;
pub mod rng;
pub mod sched;
pub mod shrink;
pub mod size;
pub mod ty;
pub mod worker;
