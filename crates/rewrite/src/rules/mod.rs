//! The rewrite rules. Each rule is a function returning a strategy; its doc
//! comment is its equation. Left-hand sides are matched on typed terms, right-hand
//! sides are written with the builder DSL and typed by [`crate::term::finish`].

pub mod algorithmic;
pub mod gpu;
pub mod lowering;
pub mod movement;
pub mod stencil;

use crate::term::finish;
use crate::S;
use elevate::{rule, Failure};
use rise::{Expr, NameGen};

/// A rule named `name` whose right-hand side `rhs` builds (or `None`: no match).
pub fn rise_rule(
    name: impl Into<std::sync::Arc<str>>,
    rhs: impl Fn(&Expr, &mut NameGen) -> Option<Expr> + Send + Sync + 'static,
) -> S {
    rule(name, move |e: &Expr, ctx| match rhs(e, &mut ctx.env) {
        Some(t) => finish(t, e),
        None => Err(Failure::not_applicable()),
    })
}
