//! shine: a compiler for RISE, driven by ELEVATE strategies.
//!
//! This crate is the library facade and the `shine` command-line tool. So far it
//! offers the front end (parsing, type checking) and the reference interpreter;
//! rewriting and code generation come with their crates.
#![forbid(unsafe_code)]

pub mod npy;

pub use rise;
