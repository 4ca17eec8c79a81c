//! β-reduction, η-reduction and η-abstraction (ICFP'20 §4.8): the λ-calculus
//! rules the normal forms ([`crate::normal_forms`]) are built from.

use crate::term::{as_lambda, is_var, no, occurs, substitute};
use crate::S;
use elevate::rule;
use rise::{Expr, ExprKind, Type};

pub(super) fn beta_reduction(name: String) -> S {
    rule(name, |e: &Expr, ctx| match e.kind() {
        ExprKind::App(f, a) => match f.kind() {
            ExprKind::Lambda(x, _, b) => Ok(substitute(b, x, a, &mut ctx.env)),
            _ => no(),
        },
        ExprKind::DepApp(f, a) => match f.kind() {
            ExprKind::DepLambda(x, b) => {
                let (name, arg) = (x.name.clone(), a.clone());
                let s = move |n: &str, _| (n == &*name).then(|| arg.clone());
                Ok(rise::expr::map_types(b, &s))
            }
            _ => no(),
        },
        _ => no(),
    })
}

pub(super) fn eta_reduction(name: String) -> S {
    rule(name, |e: &Expr, _| {
        let Some((x, b)) = as_lambda(e) else {
            return no();
        };
        match b.kind() {
            ExprKind::App(f, a) if is_var(a, x) && !occurs(x, f) => Ok(f.clone()),
            _ => no(),
        }
    })
}

pub(super) fn eta_abstraction(name: String) -> S {
    rule(name, |f: &Expr, ctx| match f.ty() {
        Some(Type::Fun(p, r)) => {
            let x = ctx.env.fresh("x");
            let var = Expr::typed(ExprKind::Var(x.clone()), (**p).clone(), f.span());
            let app = Expr::typed(ExprKind::App(f.clone(), var), (**r).clone(), f.span());
            Ok(f.rebuild(ExprKind::Lambda(x, None, app)))
        }
        _ => no(),
    })
}
