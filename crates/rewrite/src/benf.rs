//! `BENF` in one pass: the rewrites of `normalize(betaReduction <+ etaReduction)`, in the
//! same order, without searching the program again from its root after each of them.
//!
//! `normalize(s)` is `repeat(topDown(s))`: each step rewrites the leftmost-outermost redex
//! and starts again from the root. Before a step, every node above the redex was tried and
//! is no redex, and so is everything to its left; after it, the next redex is in what the
//! step made, to its right, or at a node above that the step made a redex. A node above can
//! become one in four ways only (its kind is unchanged, so only its children decide):
//!
//! - the step made a function (the function of an application) a lambda: β at the parent;
//! - it made the body of `fun x` an application `f x`: η at the parent;
//! - it made the argument of the body `f a` of `fun x` the variable `x`: η two levels up;
//! - it removed the last `x` from `f` in `fun x => f x` above: η there.
//!
//! [`Pass`] walks the program once, tries the rule at a node when it enters it and after
//! each rewrite there, and hands control back up to the outermost node that a rewrite may
//! have made a redex: the rewrites, fresh names included, are those of the definition, and a
//! program of `n` nested definitions costs `n` steps instead of `n²`.

use crate::S;
use elevate::{Ctx, Failure, Traversable};
use rise::types::Name;
use rise::{Expr, ExprKind};

/// `BENF` applied by [`Pass`]: `step` is `betaReduction <+ etaReduction`.
pub(crate) fn benf_pass(step: S) -> S {
    elevate::traversal("normalize", false, step, |step, e: &Expr, ctx| {
        let mut pass = Pass {
            step,
            ctx,
            watchers: Vec::new(),
        };
        Ok(pass.normalize(e.clone(), &Position::Root, 0)?.into_expr())
    })
}

/// Where a node sits, as far as a rewrite of it can make a node above a redex.
enum Position {
    /// The program itself.
    Root,
    /// The function of an application (or of a dependent application).
    Function,
    /// The body of `fun x`.
    LambdaBody(Name),
    /// The argument of the body `f a` of `fun x`.
    BodyArgument(Name),
    /// Anywhere else.
    Other,
}

/// What normalizing a sub-program gave.
enum Outcome {
    /// Its normal form: nothing above it became a redex.
    Normal(Expr),
    /// It as it is after a rewrite that may have made the node at this depth a redex.
    Interrupted(Expr, usize),
}

impl Outcome {
    fn into_expr(self) -> Expr {
        match self {
            Outcome::Normal(e) | Outcome::Interrupted(e, _) => e,
        }
    }
}

/// Where to go on after an interrupted child: its index, and the depth that a rewrite in
/// it may have made a redex.
type Resume = (usize, usize);

/// One BENF pass over a program.
struct Pass<'a> {
    step: &'a S,
    ctx: &'a mut Ctx<Expr>,
    /// `(x, depth)` of every `fun x => f x` above (`x` free in `f`) whose `f` holds the
    /// current node.
    watchers: Vec<(Name, usize)>,
}

impl Pass<'_> {
    /// `e` (at `depth`, at `position`) rewritten to its normal form, or until a rewrite may
    /// have made a node above it a redex.
    fn normalize(
        &mut self,
        e: Expr,
        position: &Position,
        depth: usize,
    ) -> Result<Outcome, Failure<Expr>> {
        let mut e = e;
        let mut first_child = 0;
        loop {
            match self.ctx.apply(self.step, &e) {
                Ok(next) => {
                    self.ctx.check_growth(&next)?;
                    let above = self.made_redex_above(&e, &next, position, depth);
                    e = next;
                    first_child = 0;
                    match above {
                        Some(d) => return Ok(Outcome::Interrupted(e, d)),
                        None => continue,
                    }
                }
                Err(Failure::NotApplicable { .. }) => {}
                Err(abort) => return Err(abort),
            }
            match self.children(e, first_child, position, depth)? {
                (e2, Some((i, d))) if d == depth => {
                    e = e2;
                    first_child = i;
                }
                (e2, Some((_, d))) => return Ok(Outcome::Interrupted(e2, d)),
                (e2, None) => return Ok(Outcome::Normal(e2)),
            }
        }
    }

    /// The children of `e` from `first` on normalized in order, or until one was
    /// interrupted: then its index and the depth to go back to.
    fn children(
        &mut self,
        e: Expr,
        first: usize,
        position: &Position,
        depth: usize,
    ) -> Result<(Expr, Option<Resume>), Failure<Expr>> {
        let mut e = e;
        for i in first..e.child_count() {
            let child = e.child(i);
            let child_position = child_position(&e, i, position);
            let watched = self.watch(&e, i, position, depth);
            self.ctx.enter(e.child_label(i));
            let outcome = self.normalize(child.clone(), &child_position, depth + 1);
            self.ctx.leave();
            if watched {
                self.watchers.pop();
            }
            let (new, interrupted) = match outcome? {
                Outcome::Normal(c) => (c, None),
                Outcome::Interrupted(c, d) => (c, Some((i, d))),
            };
            if !new.ptr_eq(&child) {
                e = e.with_child(i, new, &mut self.ctx.env);
            }
            if interrupted.is_some() {
                return Ok((e, interrupted));
            }
        }
        Ok((e, None))
    }

    /// Starts watching `fun x` when entering `f` in its body `f x`: whether `e`, the body
    /// at `depth`, is such an application and `i` its function.
    fn watch(&mut self, e: &Expr, i: usize, position: &Position, depth: usize) -> bool {
        let Position::LambdaBody(x) = position else {
            return false;
        };
        match e.kind() {
            ExprKind::App(_, a) if i == 0 && crate::term::is_var(a, x) => {
                self.watchers.push((x.clone(), depth - 1));
                true
            }
            _ => false,
        }
    }

    /// The outermost depth above `depth` at which rewriting `before` (at `position`) to
    /// `after` may have made a redex (see the module's documentation).
    fn made_redex_above(
        &self,
        before: &Expr,
        after: &Expr,
        position: &Position,
        depth: usize,
    ) -> Option<usize> {
        let local = match (position, after.kind()) {
            (Position::Function, ExprKind::Lambda(..) | ExprKind::DepLambda(..)) => Some(depth - 1),
            (Position::LambdaBody(x), ExprKind::App(_, a)) if crate::term::is_var(a, x) => {
                Some(depth - 1)
            }
            (Position::BodyArgument(x), _) if crate::term::is_var(after, x) => Some(depth - 2),
            _ => None,
        };
        let watcher = self
            .watchers
            .iter()
            .find(|(x, _)| crate::term::occurs(x, before) && !crate::term::occurs(x, after))
            .map(|(_, d)| *d);
        match (local, watcher) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// The position of the `i`-th child of `e`, itself at `position`.
fn child_position(e: &Expr, i: usize, position: &Position) -> Position {
    match (e.kind(), i) {
        (ExprKind::App(..) | ExprKind::DepApp(..), 0) => Position::Function,
        (ExprKind::App(..), _) => match position {
            Position::LambdaBody(x) => Position::BodyArgument(x.clone()),
            _ => Position::Other,
        },
        (ExprKind::Lambda(x, _, _), _) => Position::LambdaBody(x.clone()),
        _ => Position::Other,
    }
}
