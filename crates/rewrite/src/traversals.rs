//! RISE-specific traversals, predicates and locations (ICFP'20 §4.6, §5.2, §5.4).

use crate::term::{any_map, any_reduce, no, prim_app};
use crate::S;
use elevate::{bottom_up, named, rule, top_down, traversal, Failure};
use rise::{Expr, ExprKind, Prim};

/// `body(s)`: `s` on the body of a lambda (or of a dependent lambda).
pub fn body(s: S) -> S {
    traversal("body", true, s, |s, e: &Expr, ctx| match e.kind() {
        ExprKind::Lambda(x, t, b) => {
            let nb = ctx.descend("body", s, b)?;
            Ok(e.rebuild(ExprKind::Lambda(x.clone(), t.clone(), nb)))
        }
        ExprKind::DepLambda(x, b) => {
            let nb = ctx.descend("body", s, b)?;
            Ok(e.rebuild(ExprKind::DepLambda(x.clone(), nb)))
        }
        _ => no(),
    })
}

/// `function(s)`: `s` on the function of an application.
pub fn function(s: S) -> S {
    traversal("function", true, s, |s, e: &Expr, ctx| match e.kind() {
        ExprKind::App(f, a) => {
            let nf = ctx.descend("function", s, f)?;
            Ok(e.rebuild(ExprKind::App(nf, a.clone())))
        }
        ExprKind::DepApp(f, a) => {
            let nf = ctx.descend("function", s, f)?;
            Ok(e.rebuild(ExprKind::DepApp(nf, a.clone())))
        }
        _ => no(),
    })
}

/// `argument(s)`: `s` on the argument of an application.
pub fn argument(s: S) -> S {
    traversal("argument", true, s, |s, e: &Expr, ctx| match e.kind() {
        ExprKind::App(f, a) => {
            let na = ctx.descend("argument", s, a)?;
            Ok(e.rebuild(ExprKind::App(f.clone(), na)))
        }
        _ => no(),
    })
}

/// `argOf(p, s)`: `s` on the argument of `p x` (the first value argument of the
/// primitive `p`, type-level arguments skipped).
pub fn arg_of(p: Prim, s: S) -> S {
    arg_of_where(&format!("argOf({})", p.name()), move |q| q == p, s)
}

/// `argOf` for every primitive satisfying `is`: `name` is how it prints.
pub fn arg_of_where(name: &str, is: impl Fn(Prim) -> bool + Send + Sync + 'static, s: S) -> S {
    later_arg_of_where(name, is, 0, s)
}

/// `s` on the value argument that follows the first `before` ones of a primitive satisfying
/// `is` (`argOf` for `before` = 0): `name` is how it prints.
pub fn later_arg_of_where(
    name: &str,
    is: impl Fn(Prim) -> bool + Send + Sync + 'static,
    before: usize,
    s: S,
) -> S {
    traversal(name.to_string(), true, s, move |s, e: &Expr, ctx| {
        match e.kind() {
            ExprKind::App(f, a) => {
                let head = prim_app(f).filter(|h| is(h.prim) && h.args.len() == before);
                if head.is_none() {
                    return no();
                }
                let na = ctx.descend("argument", s, a)?;
                Ok(e.rebuild(ExprKind::App(f.clone(), na)))
            }
            _ => no(),
        }
    })
}

/// `fmap(s)`: `s` on the body of the function a `map` applies,
/// `function(argOf(map, body(s)))` (ICFP'20 §5.2; Fig. 9).
pub fn fmap(s: S) -> S {
    function(arg_of_where("argOf(map)", any_map, body(s)))
}

fn prim_is(name: &'static str, is: fn(Prim) -> bool) -> S {
    rule(name, move |e: &Expr, _| match e.kind() {
        ExprKind::Prim(p) if is(*p) => Ok(e.clone()),
        _ => Err(Failure::not_applicable()),
    })
}

/// `isMap`: the node is `map` (or a lowered map).
pub fn is_map() -> S {
    prim_is("isMap", any_map)
}

/// `isReduce`: the node is `reduce` (or `reduceSeq`, `reduceSeqUnroll`).
pub fn is_reduce() -> S {
    prim_is("isReduce", any_reduce)
}

/// `isTranspose`
pub fn is_transpose() -> S {
    prim_is("isTranspose", |p| p == Prim::Transpose)
}

/// `isToMem`: the node is `toMem a e f`, a value stored in memory and its use.
pub fn is_to_mem() -> S {
    rule("isToMem", |e: &Expr, _| match prim_app(e) {
        Some(a) if a.prim == Prim::ToMem && a.args.len() == 2 => Ok(e.clone()),
        _ => no(),
    })
}

/// `isPrim(p)`: the node is the primitive `p` (type-level arguments applied or not).
pub fn is_prim(p: Prim) -> S {
    rule(
        format!("isPrim({})", p.name()),
        move |e: &Expr, _| match prim_app(e) {
            Some(a) if a.prim == p && a.args.is_empty() => Ok(e.clone()),
            _ => no(),
        },
    )
}

/// `isFst`: the node is `fst`.
pub fn is_fst() -> S {
    is_prim(Prim::Fst)
}

/// `isSnd`: the node is `snd`.
pub fn is_snd() -> S {
    is_prim(Prim::Snd)
}

/// `isLambda`: the node is a lambda.
pub fn is_lambda() -> S {
    rule("isLambda", |e: &Expr, _| match e.kind() {
        ExprKind::Lambda(..) => Ok(e.clone()),
        _ => no(),
    })
}

/// `isApp(p)`: the node is an application whose function satisfies `p`.
pub fn is_app(p: S) -> S {
    let name = format!("isApp({p})");
    rule(name, move |e: &Expr, ctx| match e.kind() {
        ExprKind::App(f, _) => ctx.apply(&p, f).map(|_| e.clone()),
        _ => no(),
    })
}

/// `applied(P)`: the node is the primitive `P` applied to all its value arguments
/// (its type-level arguments, such as `padClamp`'s sizes, in between).
pub fn applied_prim(p: Prim) -> S {
    let arity = p.value_arity();
    rule(
        format!("applied({})", p.name()),
        move |e: &Expr, _| match prim_app(e) {
            Some(a) if a.prim == p && a.args.len() == arity => Ok(e.clone()),
            _ => no(),
        },
    )
}

/// `appliedMap`: `isApp(isApp(isMap))`, a `map` applied to a function and an array.
pub fn applied_map() -> S {
    named("appliedMap", vec![], || is_app(is_app(is_map())))
}

/// `appliedReduce`: `isApp(isApp(isApp(isReduce)))`.
pub fn applied_reduce() -> S {
    named("appliedReduce", vec![], || {
        is_app(is_app(is_app(is_reduce())))
    })
}

/// `outermost(p)(s)`: `topDown(p ; s)`, the first (outermost) place where `p` holds.
pub fn outermost(p: S, s: S) -> S {
    top_down(p.seq(s))
}

/// `innermost(p)(s)`: `bottomUp(p ; s)`.
pub fn innermost(p: S, s: S) -> S {
    bottom_up(p.seq(s))
}

/// `mapNest(d)`: succeeds on a DFNF map nest of depth `d` (nested `fmap`s).
pub fn map_nest(d: usize) -> S {
    named("mapNest", vec![d.to_string()], move || {
        if d == 0 {
            elevate::id()
        } else {
            fmap(map_nest(d - 1))
        }
    })
}

/// `inLambda(s)`: `s` inside all leading lambdas: `isLambda ; body(inLambda(s)) <+ s`.
pub fn in_lambda(s: S) -> S {
    let inner = s.clone();
    named("inLambda", vec![s.to_string()], move || {
        is_lambda()
            .seq(body(in_lambda(inner.clone())))
            .or(inner.clone())
    })
}
