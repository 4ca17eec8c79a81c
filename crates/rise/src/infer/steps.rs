//! Size constraints met inside the function given to `iterate`, stated over the sizes
//! it is applied at. `iterate k f xs` applies `f : (l: nat) -> (l*n).t -> l.t` at
//! `l = m*n^(k-1)`, ..., `m*n`, `m` (its result is `m.t`), so a constraint of the step on
//! `l` (`padClamp 1 1` needs `l >= 1`, `slide 3 1` after it `l+2 >= 3`) is one on those
//! sizes, which the definition's size parameters determine: a step that keeps the size
//! (`n = 1`) is applied at `m` only, whatever the count; a shrinking one at each of the
//! `k` sizes where `k` is a constant. Any other constraint on `l` stays one on a size
//! that is not a parameter, a type error.

use super::unify::Obligation;
use crate::expr::{Arg, Expr, ExprKind};
use crate::primitives::Prim;
use crate::span::Span;
use crate::types::*;
use arith::Nat;

/// The most steps of a shrinking `iterate` whose constraints are instantiated one per
/// step (more steps than that cannot be compiled anyway).
const MAX_INSTANTIATED_STEPS: i64 = 64;

/// `obligations` with each one met inside the step of an `iterate` of `body` and on
/// that step's size binder replaced by its instances at the sizes the step is applied
/// at (innermost `iterate` first, so that an inner step's sizes in terms of an outer
/// binder are then instantiated by the outer one).
pub(super) fn at_iterate_sizes(body: &Expr, obligations: Vec<Obligation>) -> Vec<Obligation> {
    let mut steps = Vec::new();
    collect_steps(body, &mut steps);
    steps.iter().fold(obligations, |obligations, step| {
        step.instantiate(obligations)
    })
}

/// The step of one `iterate`: where its body is, its size binder, and the sizes it is
/// applied at.
struct Step {
    span: Span,
    binder: Name,
    sizes: Vec<Nat>,
}

impl Step {
    /// Each obligation within the step and on its binder, once per size it is applied at.
    fn instantiate(&self, obligations: Vec<Obligation>) -> Vec<Obligation> {
        obligations
            .into_iter()
            .flat_map(|o| {
                if !self.covers(&o) {
                    return vec![o];
                }
                self.sizes
                    .iter()
                    .map(|size| Obligation {
                        constraint: o.constraint.map(|n| self.at(n, size)),
                        ..o.clone()
                    })
                    .collect()
            })
            .collect()
    }

    /// Whether `o` arises inside the step and is on its binder.
    fn covers(&self, o: &Obligation) -> bool {
        let inside = self.span.start <= o.span.start && o.span.end <= self.span.end;
        inside
            && o.constraint
                .free_vars()
                .iter()
                .any(|v| v.name() == &*self.binder)
    }

    /// `n` with the binder replaced by `size`.
    fn at(&self, n: &Nat, size: &Nat) -> Nat {
        let binder = self.binder.clone();
        let size = size.clone();
        let one = move |x: &str, kind: Kind| {
            (x == &*binder && kind == Kind::Nat).then(|| TypeArg::Nat(size.clone()))
        };
        subst_nat(n, &one)
    }
}

/// The steps of the `iterate`s of `e`, innermost first.
fn collect_steps(e: &Expr, out: &mut Vec<Step>) {
    match e.kind() {
        ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Prim(_) | ExprKind::Foreign(_) => {}
        ExprKind::Lambda(_, _, b)
        | ExprKind::DepLambda(_, b)
        | ExprKind::DepApp(b, _)
        | ExprKind::Annot(b, _) => collect_steps(b, out),
        ExprKind::App(f, a) => {
            collect_steps(f, out);
            collect_steps(a, out);
            out.extend(iterate_step(e));
        }
    }
}

/// `e` as `iterate k f`: its step.
fn iterate_step(e: &Expr) -> Option<Step> {
    let (head, args) = e.spine();
    let (Some(Prim::Iterate), [Arg::Type(TypeArg::Nat(k)), Arg::Value(f)]) =
        (head.as_prim(), &args[..])
    else {
        return None;
    };
    let Some(Type::Fun(_, result)) = e.ty() else {
        return None;
    };
    let Some(DataType::Array(m, _)) = result.as_data() else {
        return None;
    };
    let (binder, factor) = binder_and_factor(f)?;
    let sizes = if factor.as_cst() == Some(1) {
        vec![m.clone()]
    } else {
        let k = k
            .as_cst()
            .filter(|k| (1..=MAX_INSTANTIATED_STEPS).contains(k))?;
        (0..k)
            .map(|j| factor.pow(&Nat::cst(j)) * m.clone())
            .collect()
    };
    Some(Step {
        span: f.span(),
        binder,
        sizes,
    })
}

/// The size binder `l` of a step `(l: nat) -> (l*n).t -> l.t` (a lambda's, or the one a
/// definition's scheme was instantiated with) and its `n`: its input length at `l = 1`.
fn binder_and_factor(f: &Expr) -> Option<(Name, Nat)> {
    let Some(Type::DepFun { binder, body, .. }) = f.ty() else {
        return None;
    };
    let Type::Fun(input, _) = &**body else {
        return None;
    };
    let Some(DataType::Array(len, _)) = input.as_data() else {
        return None;
    };
    let name = binder.name.clone();
    let one = move |x: &str, kind: Kind| {
        (x == &*name && kind == Kind::Nat).then(|| TypeArg::Nat(Nat::cst(1)))
    };
    Some((binder.name.clone(), subst_nat(len, &one)))
}
