//! The ELEVATE strategy-file language (`.elv`), generic over the rewritten
//! program type `P`.
//!
//! ICFP'20 §4 defines ELEVATE as a functional language of strategies
//! (`Strategy[P] = P => RewriteResult[P]`), combinators (`;`, `<+`, `try`,
//! `repeat`, §4.4), traversals as strategy transformers (`Traversal[P] =
//! Strategy[P] => Strategy[P]`, §4.5–4.7), normal forms (§4.8) and `s @ t` =
//! `t(s)` for applying a strategy at a location (§5.4). The paper embeds it in
//! Scala; this crate gives it a concrete syntax, so that optimizations are
//! written in files next to the programs they optimize:
//!
//! ```text
//! // comments start with //
//! def baseline = DFNF ; fuseReduceMap @ topDown
//! def blocking = baseline ;
//!   tile(32, 32)      @ outermost(mapNest(2)) ;;
//!   fissionReduceMap  @ outermost(appliedReduce) ;;
//!   split(4)          @ innermost(appliedReduce) ;;
//!   reorder([1, 2, 5, 6, 3, 4])
//! def myTry(s) = s <+ id
//! def myRepeat(s) = myTry(s ; myRepeat(s))      // recursion is allowed
//! ```
//!
//! * Precedence, tightest first: application `f(a, b)`; `@` (left-associative);
//!   `;` and `;;` (right-associative; `a ;; b` is `a ; NF ; b` for the normal
//!   form the language registers); `<+` (right-associative).
//! * Values ([`Value`]) have kinds ([`Kind`]): integers, lists, strategies,
//!   traversals and symbols (names of the object language, like `map` in
//!   `argOf(map, s)`: in a symbol parameter, any identifier other than a
//!   parameter of the enclosing definition is taken as a symbol).
//! * Builtins come from a [`Registry`]: the generic combinators, and whatever
//!   the language adds ([`Registry::add`]). A builtin or definition whose last
//!   parameter is a strategy, given all other arguments (or named bare if that
//!   is its only parameter), is a traversal: `topDown`, `argOf(map)`.
//! * Definitions may be recursive and refer to later ones. Their parameters'
//!   kinds are inferred, and every name, arity and kind is checked when the
//!   file is loaded ([`load`]), with all errors reported as [`Diagnostic`]s.
//!   Applying a definition gives a named strategy that prints as `name(args)`.
//!
//! Nothing is global: a [`Module`] holds one checked file.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod ast;
mod check;
mod eval;
mod lexer;
mod module;
mod origin;
mod parser;
mod registry;

pub use diagnostics::{Diagnostic, Span};
pub use module::{load, Module};
pub use origin::{Origin, Origins};
pub use registry::{Entry, Kind, Registry, Traversal, Value};

/// Runs `f`, first moving to a fresh stack segment if little of the current
/// one is left: nesting is bounded, but deep recursion in a debug build can
/// still exceed a small thread stack.
fn with_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(256 * 1024, 4 * 1024 * 1024, f)
}
