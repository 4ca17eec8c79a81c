//! RISE: a functional, data-parallel array language whose types track array sizes.
//!
//! This crate holds the language itself (ICFP'20 §3, RISE & Shine §III–IV, thesis
//! ch. 4): [`types`] and kinds, [`expr`]essions, the [`primitives`] table, type
//! [`infer`]ence, the text [`syntax`], the reference interpreter ([`interp`]) and a
//! Rust [`builder`] DSL.
#![forbid(unsafe_code)]

pub mod builder;
pub mod constraints;
pub mod expr;
pub mod foreign;
pub mod fragments;
pub mod infer;
pub mod interp;
pub mod primitives;
pub mod span;
mod stack;
pub mod syntax;
mod traverse;
pub mod types;

pub use constraints::SizeConstraint;
pub use expr::{Def, Expr, ExprKind, Literal, NameGen, Program};
pub use foreign::{ForeignEvaluator, ForeignFun};
pub use primitives::Prim;
pub use span::{Diagnostic, Span};
pub use types::{AddrSpace, Binder, DataType, Kind, ScalarType, Type, TypeArg};
