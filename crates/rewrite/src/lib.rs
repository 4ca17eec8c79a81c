//! RISE rewriting with ELEVATE (ICFP'20 §4–6; RISE & Shine §III-C; thesis §4.4).
//!
//! * [`traversals`]: `body`, `function`, `argument`, `argOf`, `fmap`; the
//!   predicates (`isMap`, `isReduce`, `isApp`, ...) and locations (`outermost`,
//!   `innermost`, `mapNest`, `inLambda`).
//! * [`normal_forms`]: `BENF`, `DFNF` and `;;`.
//! * [`rules`]: the rule table, one row per rule with its name and equation:
//!   β/η, algorithmic (Fig. 6, vectorize), movement, lowering, stencil tiling,
//!   GPU.
//! * [`pattern`]: rules written as `lhs ↦ rhs` in RISE syntax; the purely
//!   structural rows of the table are such patterns.
//! * [`schedule`]: TVM-like scheduling primitives (`tile`, `reorder`,
//!   `storeInMemory`, `lowerToC`, ...).
//! * [`library`]: everything above registered under the papers' names for
//!   `.elv` strategy files.
//!
//! Rewriting works on typed programs ([`rise::infer::prepare_def`]). A rule's
//! right-hand side is typed locally against the expression it replaces, so every
//! intermediate program is well typed and types are never re-inferred from
//! scratch.
#![forbid(unsafe_code)]

mod benf;
pub mod check;
pub mod library;
pub mod normal_forms;
pub mod pattern;
pub mod rules;
pub mod schedule;
pub mod term;
pub mod traversals;

use rise::Expr;

/// A strategy on RISE expressions.
pub type S = elevate::Strategy<Expr>;
