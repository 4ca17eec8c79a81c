//! Normal forms (ICFP'20 §4.8): β-reduction, η-reduction and η-abstraction as
//! rules, and the β-η normal form (BENF) and data-flow normal form (DFNF) built
//! from them with ELEVATE combinators.

use crate::term::{any_map, any_reduce, as_lambda, no, occurs, prim_app};
use crate::traversals::{arg_of_where, body, is_lambda};
use crate::S;
use elevate::{lchoice, named, normalize, not, one, rule};
use rise::types::Name;
use rise::{Expr, ExprKind, NameGen, Type};

/// `betaReduction`: `(fun x => b) a ~> b[a/x]` (capture-avoiding), and the same
/// for a dependent lambda applied to a type-level value.
pub fn beta_reduction() -> S {
    rule("betaReduction", |e: &Expr, ctx| match e.kind() {
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

/// `etaReduction`: `fun x => f x ~> f` when `x` is not free in `f`.
pub fn eta_reduction() -> S {
    rule("etaReduction", |e: &Expr, _| {
        let Some((x, b)) = as_lambda(e) else {
            return no();
        };
        match b.kind() {
            ExprKind::App(f, a) if crate::term::is_var(a, x) && !occurs(x, f) => Ok(f.clone()),
            _ => no(),
        }
    })
}

/// `etaAbstraction`: `f ~> fun x => f x` for `f` of a function type.
pub fn eta_abstraction() -> S {
    rule("etaAbstraction", |f: &Expr, ctx| match f.ty() {
        Some(Type::Fun(p, r)) => {
            let x = ctx.env.fresh("x");
            let var = Expr::typed(ExprKind::Var(x.clone()), (**p).clone(), f.span());
            let app = Expr::typed(ExprKind::App(f.clone(), var), (**r).clone(), f.span());
            Ok(f.rebuild(ExprKind::Lambda(x, None, app)))
        }
        _ => no(),
    })
}

/// `BENF`: `normalize(betaReduction <+ etaReduction)`.
pub fn benf() -> S {
    named("BENF", vec![], || {
        normalize(lchoice(beta_reduction(), eta_reduction()))
    })
}

/// `DFNF` (ICFP'20 Listing 4): BENF, then every function given to a map is a
/// lambda, every reduce operator a two-parameter lambda, and every map and
/// reduce is applied to all its arguments.
pub fn dfnf() -> S {
    named("DFNF", vec![], || {
        let abstract_unless_lambda = || not(is_lambda()).seq(eta_abstraction());
        let map_fn_is_lambda = normalize(arg_of_where(
            "argOf(map)",
            any_map,
            abstract_unless_lambda(),
        ));
        let reduce_op_is_lambda = normalize(arg_of_where(
            "argOf(reduce)",
            any_reduce,
            abstract_unless_lambda().or(body(abstract_unless_lambda())),
        ));
        let fully_applied = normalize(
            not(crate::traversals::is_app(elevate::id()))
                .seq(one(is_partial_map_or_reduce().seq(eta_abstraction()))),
        );
        // The root has no parent to apply it: a program that BENF made a
        // partial `map f` is η-abstracted there too.
        let root_applied = elevate::try_(is_partial_map_or_reduce().seq(eta_abstraction()));
        benf()
            .seq(map_fn_is_lambda)
            .seq(reduce_op_is_lambda)
            .seq(fully_applied)
            .seq(root_applied)
    })
}

/// `a ;; b`: `a ; DFNF ; b` (ICFP'20 §6.1).
pub fn seq_dfnf(a: S, b: S) -> S {
    a.seq(dfnf()).seq(b)
}

/// A map with its function but no array, or a reduce missing arguments.
fn is_partial_map_or_reduce() -> S {
    rule("isPartialMapOrReduce", |e: &Expr, _| match prim_app(e) {
        Some(a) if any_map(a.prim) && a.args.len() == 1 => Ok(e.clone()),
        Some(a) if any_reduce(a.prim) && (1..3).contains(&a.args.len()) => Ok(e.clone()),
        _ => no(),
    })
}

/// `b[a/x]`, renaming binders of `b` that would capture free variables of `a`.
pub fn substitute(b: &Expr, x: &Name, a: &Expr, names: &mut NameGen) -> Expr {
    let free = a.free_vars();
    subst(b, x, a, &free, names)
}

fn subst(e: &Expr, x: &Name, a: &Expr, free: &[Name], names: &mut NameGen) -> Expr {
    use ExprKind::*;
    let kind = match e.kind() {
        Var(y) if y == x => return a.clone(),
        Var(_) | Lit(_) | Prim(_) => return e.clone(),
        Lambda(y, _, _) if y == x => return e.clone(),
        Lambda(y, t, body) => {
            if !occurs(x, body) {
                return e.clone();
            }
            if free.contains(y) {
                let fresh = names.fresh(y);
                let var = Expr::typed(
                    Var(fresh.clone()),
                    param_type(e).unwrap_or_else(|| Type::Var("?".into())),
                    e.span(),
                );
                let renamed = subst(body, y, &var, &[], names);
                Lambda(fresh, t.clone(), subst(&renamed, x, a, free, names))
            } else {
                Lambda(y.clone(), t.clone(), subst(body, x, a, free, names))
            }
        }
        App(f, arg) => App(subst(f, x, a, free, names), subst(arg, x, a, free, names)),
        DepLambda(b, body) => DepLambda(b.clone(), subst(body, x, a, free, names)),
        DepApp(f, arg) => DepApp(subst(f, x, a, free, names), arg.clone()),
        Annot(body, t) => Annot(subst(body, x, a, free, names), t.clone()),
    };
    e.rebuild(kind)
}

fn param_type(lam: &Expr) -> Option<Type> {
    match lam.ty() {
        Some(Type::Fun(p, _)) => Some((**p).clone()),
        _ => None,
    }
}
