//! ELEVATE: a language of rewrite strategies (ICFP'20 §4), generic over the
//! program type `P` it rewrites.
//!
//! * A [`Strategy<P>`] is a value: it composes ([`seq`], [`lchoice`], [`try_`],
//!   [`repeat`], [`not`], ...), has a name and prints itself in `.elv` syntax.
//!   Applying it ([`Strategy::apply`]) gives a [`RewriteResult<P>`]: the new program,
//!   or a [`Failure`] saying which strategy failed, and where.
//! * Rewrite rules and predicates are strategies too ([`rule`]).
//! * Traversals move a strategy to sub-programs: the generic [`all`], [`one`],
//!   [`some`] over any [`Traversable`] program, the complete traversals
//!   [`top_down`], [`bottom_up`], [`all_top_down`], [`all_bottom_up`], [`try_all`],
//!   [`normalize`], and language-specific ones built with [`traversal`].
//! * A [`Ctx`] carries everything that changes while rewriting: the step count
//!   (counted as the paper counts), a budget that stops strategies which do not
//!   terminate, an optional trace and the language's own state (fresh names).
//! * Strategies are themselves a [`Traversable`] program, so ELEVATE rewrites
//!   ELEVATE ([`meta`]: thesis §6.3.2).
//!
//! There is no global state: two rewrites never share anything but immutable
//! strategy values.
#![forbid(unsafe_code)]

mod ctx;
mod engine;
pub mod meta;
mod result;
mod strategy;

pub use ctx::{
    Ctx, TraceEntry, DEFAULT_BUDGET, DEFAULT_TIME_LIMIT, DEPTH_GROWTH, MAX_PROGRAM_DEPTH,
    MAX_PROGRAM_NODES, MAX_TRACE, MIN_DEPTH_LIMIT,
};
pub use result::{Explanation, Failure, Location, RewriteResult};
pub use strategy::*;

use std::fmt;

/// A program type that strategies rewrite.
pub trait Program: Clone + fmt::Display + 'static {
    /// The language's state during a rewrite (for example a fresh-name supply).
    type Env: Default;

    /// Whether `other` is the very same program: `repeat` and `normalize` stop with an
    /// error when a step succeeds and leaves the program the same, since the step would
    /// then succeed the same way forever. It should cost no more than the step that made
    /// `other` (compare shared sub-programs by pointer); `false` when unknown (the
    /// default: such loops then stop at the budget or the time limit).
    fn same(&self, other: &Self) -> bool {
        let _ = other;
        false
    }
}

/// A program with immediate sub-programs, visited in a fixed order: what the
/// generic traversals [`all`], [`one`] and [`some`] need (ICFP'20 §4.5).
pub trait Traversable: Program {
    /// How many immediate sub-programs this node has.
    fn child_count(&self) -> usize;
    /// The `i`-th immediate sub-program (`i < child_count()`).
    fn child(&self, i: usize) -> Self;
    /// This node with its `i`-th sub-program replaced.
    fn with_child(&self, i: usize, child: Self, env: &mut Self::Env) -> Self;
    /// A short name for the position of the `i`-th sub-program, used in locations.
    fn child_label(&self, i: usize) -> &'static str;
    /// The nodes of this program (a shared sub-program counted as often as it occurs) and
    /// its depth (1 for a leaf), where the program keeps them: `repeat` and `normalize`
    /// then check its growth without walking it. `None` (the default): walked.
    fn nodes_and_depth(&self) -> Option<(usize, usize)> {
        None
    }
}
