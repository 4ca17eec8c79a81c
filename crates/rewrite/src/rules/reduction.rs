//! Parallel reductions (RISE & Shine §VI; LIFT's `partialReduce`): a reduction
//! split into partial reductions that run in parallel, and a work-group's partial
//! results combined by a tree. Their equations are their rows in [`super::RULES`].
//!
//! Every rule here reassociates (and reorders) the operator's applications, so it
//! holds only for an operator known to be associative and commutative: the builtin
//! `add`, `mul`, `min`, `max`, `fmin`, `fmax` (which ignore a NaN operand, as a
//! maximum that starts from `-inf` does), or a lambda that is exactly one of them
//! (`fun a b => a + b`). Its initial value must be that operator's neutral element
//! (`0` for `add`, `1` for `mul`, `+inf`/`-inf` or the type's largest/smallest
//! value for `min`/`max`, `+inf`/`-inf` for `fmin`/`fmax`), since every partial
//! reduction starts from it and the padding is made of it. Any other operator is refused with a message naming the
//! rule and the reason. On floating-point numbers the reassociated sum is not
//! bitwise the interpreter's left fold: it is accepted within the verification
//! tolerance (`--verify`'s relative tolerance), as every parallel reduction is.
//! A minimum or maximum is exact in any order.

use super::lanes::MAX_GROUP_SIZE;
use crate::term::{applied, array, as_lambda, finish, is_var, prim_app};
use crate::S;
use arith::Nat;
use elevate::{rule, Failure};
use rise::builder::*;
use rise::{AddrSpace, Binder, DataType, Expr, ExprKind, Kind, Literal, Prim, TypeArg};

/// The operator of a reduction if it is known to be associative and commutative
/// (`add`, `mul`, `min`, `max`, `fmin`, `fmax`, or a lambda that is exactly one of them).
pub(super) fn associative_commutative(op: &Expr) -> Option<Prim> {
    let is_ac = |p: Prim| {
        matches!(
            p,
            Prim::Add | Prim::Mul | Prim::Min | Prim::Max | Prim::Fmin | Prim::Fmax
        )
    };
    if let Some(a) = prim_app(op) {
        return (a.args.is_empty() && is_ac(a.prim)).then_some(a.prim);
    }
    let (x, inner) = as_lambda(op)?;
    let (y, body) = as_lambda(inner)?;
    let (p, args) = applied(body, is_ac, 2)?;
    let direct = is_var(args[0], x) && is_var(args[1], y);
    let swapped = is_var(args[0], y) && is_var(args[1], x);
    (x != y && (direct || swapped)).then_some(p)
}

/// Whether the literal `z` is the neutral element of the operator `p`.
pub(super) fn is_neutral(p: Prim, z: &Expr) -> bool {
    let ExprKind::Lit(l) = z.kind() else {
        return false;
    };
    match (p, l) {
        (Prim::Add, Literal::Float(v, _)) => *v == 0.0,
        (Prim::Add, Literal::Int(v, _)) => *v == 0,
        (Prim::Mul, Literal::Float(v, _)) => *v == 1.0,
        (Prim::Mul, Literal::Int(v, _)) => *v == 1,
        (Prim::Min | Prim::Fmin, Literal::Float(v, _)) => *v == f64::INFINITY,
        (Prim::Max | Prim::Fmax, Literal::Float(v, _)) => *v == f64::NEG_INFINITY,
        (Prim::Min, Literal::Int(v, t)) => t.int_range().is_some_and(|(_, hi)| *v as i128 == hi),
        (Prim::Max, Literal::Int(v, t)) => t.int_range().is_some_and(|(lo, _)| *v as i128 == lo),
        _ => false,
    }
}

/// A matched `reduce op init xs` whose operator and initial value the rules of
/// this module accept.
struct Reduction<'a> {
    op: &'a Expr,
    /// The operator as a primitive (`fun a b => a + b` is `add`).
    prim: Prim,
    init: &'a Expr,
    xs: &'a Expr,
}

/// `e` as a `reduce` these rules may reassociate: `Ok(None)` when it is no
/// `reduce` (the rule does not apply), a failure naming the rule and the reason
/// when its operator or initial value is not one they accept (an ordinary failure:
/// `partialReduce(8) <+ id` keeps the sequential reduction; the reason shows when
/// nothing applies).
fn reduction<'a>(rule: &str, e: &'a Expr) -> Result<Option<Reduction<'a>>, Failure<Expr>> {
    let Some((_, args)) = applied(e, |p| p == Prim::Reduce, 3) else {
        return Ok(None);
    };
    let (op, init, xs) = (args[0], args[1], args[2]);
    let Some(p) = associative_commutative(op) else {
        return Err(Failure::not_applicable_because(format!(
            "{rule}: the operator `{op}` is not known to be associative and commutative \
             (add, mul, min, max, fmin, fmax, or a lambda that is exactly one of them), so its \
             reduction cannot be reassociated"
        )));
    };
    if !is_neutral(p, init) {
        return Err(Failure::not_applicable_because(format!(
            "{rule}: the initial value `{init}` is not the neutral element of `{}` \
             (every partial reduction starts from it and the padding is made of it)",
            p.name()
        )));
    }
    Ok(Some(Reduction {
        op,
        prim: p,
        init,
        xs,
    }))
}

/// `xs : n.t` padded with `z` at the end to `⌈n/p⌉·p` elements (itself when `n` is
/// a multiple of `p`), and `⌈n/p⌉`.
fn padded(xs: &Expr, z: &Expr, p: i64) -> Option<(Expr, Nat)> {
    let (n, _) = array(xs.ty()?)?;
    let rows = (n.clone() + Nat::cst(p - 1))
        .floor_div(&Nat::cst(p))
        .simplify();
    let pad = (rows.clone() * Nat::cst(p) - n.clone()).simplify();
    if pad.as_cst() == Some(0) {
        return Some((xs.clone(), rows));
    }
    Some((app(pad_cst(0, pad, z.clone()), xs.clone()), rows))
}

/// `partialReduce(p)`: the reduction of `p` partial reductions of consecutive chunks.
pub(super) fn partial_reduce(name: String, p: i64) -> S {
    partial(name, p, false)
}

/// `partialReduceStrided(p)`: the reduction of `p` partial reductions, the `i`-th of
/// every `p`-th element from `i`.
pub(super) fn partial_reduce_strided(name: String, p: i64) -> S {
    partial(name, p, true)
}

fn partial(name: String, p: i64, strided: bool) -> S {
    rule(name.clone(), move |e: &Expr, ctx| {
        let Some(r) = reduction(&name, e)? else {
            return Err(Failure::not_applicable());
        };
        let (xs, rows) = padded(r.xs, r.init, p).ok_or_else(Failure::not_applicable)?;
        let parts = if strided {
            app(transpose(), app(split(p), xs))
        } else {
            app(split(rows), xs)
        };
        let ch = ctx.env.fresh("chunk");
        let partial = lambda(
            &ch,
            apps(prim(Prim::Reduce), [r.op.clone(), r.init.clone(), var(&ch)]),
        );
        let rhs = apps(
            prim(Prim::Reduce),
            [r.op.clone(), r.init.clone(), app(map(partial), parts)],
        );
        finish(rhs, e)
    })
}

/// `vectorizeReduce(v)`: a reduction of scalars becomes `v` independent accumulators, the
/// lanes of one vector (lane `i` reduces the elements `i`, `i+v`, `i+2v`, ...), combined
/// lane by lane at the end. The length must be a multiple of `v` (peel the rest first with
/// `peelReduce(v)`); anything else is refused with the reason.
pub(super) fn vectorize_reduce(name: String, v: i64) -> S {
    rule(name.clone(), move |e: &Expr, _| {
        let Some(r) = reduction(&name, e)? else {
            return Err(Failure::not_applicable());
        };
        let (n, t) =
            r.xs.ty()
                .and_then(array)
                .ok_or_else(Failure::not_applicable)?;
        if !matches!(t, DataType::Scalar(_)) {
            return Err(Failure::not_applicable_because(format!(
                "{name}: the reduced elements are of type `{t}`, not scalars (only scalars \
                 fill the lanes of a vector)"
            )));
        }
        if v < 1 || n.modulo(&Nat::cst(v)).simplify().as_cst() != Some(0) {
            return Err(Failure::not_applicable_because(format!(
                "{name}: the length `{n}` of the reduced array is not known to be a multiple \
                 of {v} (peel the rest first: peelReduce({v}))"
            )));
        }
        finish(lanes_reduction(&r, v), e)
    })
}

/// `reduceSeq f z (asScalar (makeArray 1 (reduceSeq f' (vectorFromScalar z) (asVector v
/// xs))))`, `f'` the operator's primitive (on vectors, lane by lane).
fn lanes_reduction(r: &Reduction<'_>, v: i64) -> Expr {
    let lanes = apps(
        prim(Prim::ReduceSeq),
        [
            prim(r.prim),
            app(prim(Prim::VectorFromScalar), r.init.clone()),
            app(as_vector(v), r.xs.clone()),
        ],
    );
    let one = app(dep_app_nat(prim(Prim::MakeArray), 1), lanes);
    apps(
        prim(Prim::ReduceSeq),
        [r.op.clone(), r.init.clone(), app(as_scalar(), one)],
    )
}

/// `map (fun b => reduce f z xs) ys` where the reduction is one these rules accept: the
/// map, its arguments, the bound variable, the reduction and the length of `xs`.
struct MappedReduction<'a> {
    m: Prim,
    args: Vec<&'a Expr>,
    b: &'a rise::types::Name,
    r: Reduction<'a>,
    n: Nat,
}

/// `e` as a [`MappedReduction`]; the rule does not apply otherwise.
fn mapped_reduction<'a>(name: &str, e: &'a Expr) -> Result<MappedReduction<'a>, Failure<Expr>> {
    let (m, args) = applied(e, |p| p.is_map(), 2).ok_or_else(Failure::not_applicable)?;
    let (b, body) = as_lambda(args[0]).ok_or_else(Failure::not_applicable)?;
    let Some(r) = reduction(name, body)? else {
        return Err(Failure::not_applicable());
    };
    let (n, _) =
        r.xs.ty()
            .and_then(array)
            .ok_or_else(Failure::not_applicable)?;
    let n = n.clone();
    Ok(MappedReduction { m, args, b, r, n })
}

/// `treeReduce`: every reduction of a map over `2^k` values becomes `k` steps that
/// halve the values (pairwise reductions), as a work-group reduces its work-items'
/// partial results in local memory.
pub(super) fn tree_reduce(name: String) -> S {
    rule(name.clone(), move |e: &Expr, ctx| {
        let MappedReduction { m, args, b, r, n } = mapped_reduction(&name, e)?;
        let k = tree_depth(&name, &n)?;
        let tree = app2(
            dep_app_nat(prim(Prim::Iterate), i64::from(k)),
            halving_step(&r, ctx),
            crate::term::retype_under(b, r.xs),
        );
        let rhs = app(join(), app2(prim(m), lambda(b, tree), args[1].clone()));
        finish(rhs, e)
    })
}

/// `treeReduceLet`: the reduction of `2^k` values in the value a `let` binds becomes the
/// same `k` halving steps, their one result bound for the value (softmax's row maximum,
/// layer norm's mean: every work-item of the work-group then reads it). The first
/// reduction of the value, top-down and under no lambda; the `let`'s result an array
/// (the one-element map over the tree's result is joined away).
pub(super) fn tree_reduce_let(name: String) -> S {
    rule(name.clone(), move |e: &Expr, ctx| {
        let Some(a) = prim_app(e).filter(|a| a.prim == Prim::Let && a.args.len() == 2) else {
            return Err(Failure::not_applicable());
        };
        let (value, then) = (a.args[0], a.args[1]);
        if e.ty().and_then(array).is_none() {
            return Err(Failure::not_applicable_because(format!(
                "{name}: the `let`'s result is no array (the tree's one result is mapped over \
                 and joined)"
            )));
        }
        let Some(found) = first_reduce(value) else {
            return Err(Failure::not_applicable());
        };
        let Some(r) = reduction(&name, found)? else {
            return Err(Failure::not_applicable());
        };
        let (n, _) =
            r.xs.ty()
                .and_then(array)
                .ok_or_else(Failure::not_applicable)?;
        let k = tree_depth(&name, n)?;
        let result = ctx.env.fresh("r");
        let var = Expr::typed(
            ExprKind::Var(result.clone()),
            found.ty().ok_or_else(Failure::not_applicable)?.clone(),
            found.span(),
        );
        let bound = app2(
            prim(Prim::Let),
            replace_node(value, found, &var),
            then.clone(),
        );
        let tree = app2(
            dep_app_nat(prim(Prim::Iterate), i64::from(k)),
            halving_step(&r, ctx),
            r.xs.clone(),
        );
        let rhs = app(join(), app2(map_prim(), lambda(&result, bound), tree));
        finish(rhs, e)
    })
}

/// `warpReduceLet`: the first reduction of the value a `let` binds becomes a warp's: lane
/// `l` reduces the elements `l`, `l+32`, ... (padded with the neutral element to a multiple
/// of 32), and the warp combines the 32 partial results by shuffles (`reduceWarp`), whose
/// result every lane gets (softmax's row maximum, layer norm's mean with a warp per row).
/// The first reduction of the value, top-down and under no lambda; any length.
pub(super) fn warp_reduce_let(name: String) -> S {
    rule(name.clone(), move |e: &Expr, ctx| {
        let (value, then, found, r) = let_reduction(&name, e)?;
        let (xs, _) = padded(r.xs, r.init, 32).ok_or_else(Failure::not_applicable)?;
        let ch = ctx.env.fresh("chunk");
        let partial = lambda(
            &ch,
            apps(prim(Prim::Reduce), [r.op.clone(), r.init.clone(), var(&ch)]),
        );
        let lanes = app2(map_prim(), partial, app(transpose(), app(split(32), xs)));
        let warp = app2(prim(Prim::ReduceWarp), r.op.clone(), lanes);
        let rhs = app2(
            prim(Prim::Let),
            replace_node(value, found, &warp),
            then.clone(),
        );
        finish(rhs, e)
    })
}

/// `groupReduceLet(b)`: the first reduction of the value a `let` binds becomes a
/// work-group's of `b` work-items (`b/32` warps): work-item `i` (warp `⌊i/32⌋`, lane
/// `i mod 32`) reduces the elements `i`, `i+b`, ... (padded with the neutral element to a
/// multiple of `b`), each warp combines its 32 results by shuffles into local memory, and
/// every warp combines the `b/32` warps' results by shuffles, so that every work-item
/// gets the value without a second barrier. `b` a multiple of 32 of at most 1024.
pub(super) fn group_reduce_let(name: String, b: i64) -> S {
    rule(name.clone(), move |e: &Expr, ctx| {
        if !(32..=MAX_GROUP_SIZE).contains(&b) || b % 32 != 0 {
            return Err(Failure::not_applicable_because(format!(
                "{name}: a work-group of {b} work-items is not a whole number of warps of at \
                 most {MAX_GROUP_SIZE} work-items (b a multiple of 32 up to {MAX_GROUP_SIZE})"
            )));
        }
        let (value, then, found, r) = let_reduction(&name, e)?;
        let (xs, _) = padded(r.xs, r.init, b).ok_or_else(Failure::not_applicable)?;
        let (w, ch, s) = (
            ctx.env.fresh("warp"),
            ctx.env.fresh("chunk"),
            ctx.env.fresh("warps"),
        );
        let partial = lambda(
            &ch,
            apps(prim(Prim::Reduce), [r.op.clone(), r.init.clone(), var(&ch)]),
        );
        let per_warp = lambda(
            &w,
            app2(
                prim(Prim::ReduceWarp),
                r.op.clone(),
                app2(map_prim(), partial, var(&w)),
            ),
        );
        let warps = app2(
            prim(Prim::MapWarp),
            per_warp,
            app(split(32), app(transpose(), app(split(b), xs))),
        );
        let warps_results = match 32 - b / 32 {
            0 => var(&s),
            p => app(pad_cst(0, p, r.init.clone()), var(&s)),
        };
        let all_warps = lambda(
            &s,
            app2(prim(Prim::ReduceWarp), r.op.clone(), warps_results),
        );
        let group = app2(
            dep_app(prim(Prim::ToMem), TypeArg::AddrSpace(AddrSpace::Local)),
            warps,
            all_warps,
        );
        let rhs = app2(
            prim(Prim::Let),
            replace_node(value, found, &group),
            then.clone(),
        );
        finish(rhs, e)
    })
}

/// At `let VALUE (fun h => BODY)`: the value, the function, the first reduction of the value
/// (top-down, under no lambda) and its parts; not applicable elsewhere.
fn let_reduction<'e>(
    name: &str,
    e: &'e Expr,
) -> Result<(&'e Expr, &'e Expr, &'e Expr, Reduction<'e>), Failure<Expr>> {
    let Some(a) = prim_app(e).filter(|a| a.prim == Prim::Let && a.args.len() == 2) else {
        return Err(Failure::not_applicable());
    };
    let (value, then) = (a.args[0], a.args[1]);
    let found = first_reduce(value).ok_or_else(Failure::not_applicable)?;
    let r = reduction(name, found)?.ok_or_else(Failure::not_applicable)?;
    Ok((value, then, found, r))
}

/// The first `reduce` in `e`, top-down, under no lambda (so that every variable it
/// mentions is bound where `e` is).
fn first_reduce(e: &Expr) -> Option<&Expr> {
    if applied(e, |p| p == Prim::Reduce, 3).is_some() {
        return Some(e);
    }
    match e.kind() {
        ExprKind::App(f, a) => first_reduce(f).or_else(|| first_reduce(a)),
        ExprKind::DepApp(f, _) => first_reduce(f),
        ExprKind::Annot(b, _) => first_reduce(b),
        _ => None,
    }
}

/// `e` with the node `node` (found in it by address, under no lambda) replaced by `by`.
fn replace_node(e: &Expr, node: &Expr, by: &Expr) -> Expr {
    if std::ptr::eq(e, node) {
        return by.clone();
    }
    let kind = match e.kind() {
        ExprKind::App(f, a) => ExprKind::App(replace_node(f, node, by), replace_node(a, node, by)),
        ExprKind::DepApp(f, x) => ExprKind::DepApp(replace_node(f, node, by), x.clone()),
        ExprKind::Annot(b, t) => ExprKind::Annot(replace_node(b, node, by), t.clone()),
        _ => return e.clone(),
    };
    Expr::new(kind, e.span())
}

/// `k` for a reduction over `n = 2^k` values (`k` at least 1).
fn tree_depth(name: &str, n: &Nat) -> Result<u32, Failure<Expr>> {
    match n.as_cst() {
        Some(v) if v >= 2 && (v as u64).is_power_of_two() => Ok(v.trailing_zeros()),
        _ => Err(Failure::not_applicable_because(format!(
            "{name}: the reduction is over {n} values, not a constant power of two \
             (at least 2)"
        ))),
    }
}

/// One step of the tree: `fun (l: nat) => fun ys => map (fun pair => reduce f z pair)
/// (split 2 ys)`.
fn halving_step(r: &Reduction, ctx: &mut elevate::Ctx<Expr>) -> Expr {
    let (l, ys, pr) = (
        ctx.env.fresh("l"),
        ctx.env.fresh("ys"),
        ctx.env.fresh("pair"),
    );
    let pairwise = lambda(
        &pr,
        apps(prim(Prim::Reduce), [r.op.clone(), r.init.clone(), var(&pr)]),
    );
    Expr::new(
        ExprKind::DepLambda(
            Binder::new(l.clone(), Kind::Nat),
            lambda(&ys, app2(map_prim(), pairwise, app(split(2), var(&ys)))),
        ),
        rise::Span::default(),
    )
}

/// `reduceToWarp`: a reduction of 32 values becomes a warp's reduction
/// (`reduceWarp`, by shuffles on CUDA).
pub(super) fn reduce_to_warp(name: String) -> S {
    rule(name.clone(), move |e: &Expr, _| {
        let Some(r) = reduction(&name, e)? else {
            return Err(Failure::not_applicable());
        };
        let (n, _) =
            r.xs.ty()
                .and_then(array)
                .ok_or_else(Failure::not_applicable)?;
        if n.as_cst() != Some(32) {
            return Err(Failure::not_applicable());
        }
        finish(app2(prim(Prim::ReduceWarp), r.op.clone(), r.xs.clone()), e)
    })
}

/// `reduceByWarps`: every reduction of a map over `b` values (`b` a multiple of 32, at
/// most 1024: a work-group's partial results, one per work-item) becomes a reduction by
/// warps: each group of 32 values by a warp (`reduceWarp`), then the `b/32` results of
/// the warps, padded with the neutral element to 32, by one more warp. Where the values
/// are `map r ys`, each lane computes `r` of its own element, so that nothing is stored
/// before the first warp reduction.
pub(super) fn reduce_by_warps(name: String) -> S {
    rule(name.clone(), move |e: &Expr, ctx| {
        let MappedReduction { m, args, b, r, n } = mapped_reduction(&name, e)?;
        let warps = match n.as_cst() {
            Some(v) if (32..=1024).contains(&v) && v % 32 == 0 => v / 32,
            _ => {
                return Err(Failure::not_applicable_because(format!(
                    "{name}: the reduction is over {n} values, not a constant multiple of 32 \
                     between 32 and 1024 (the work-items of a work-group, by whole warps)"
                )))
            }
        };
        let xs = crate::term::retype_under(b, r.xs);
        let (w1, w2) = (ctx.env.fresh("w"), ctx.env.fresh("w"));
        let first = warp_reductions(r.op, &xs, &w1);
        let second = app2(
            map_prim(),
            lambda(&w2, app2(prim(Prim::ReduceWarp), r.op.clone(), var(&w2))),
            app(
                split(32),
                app(pad_cst(0, Nat::cst(32 - warps), r.init.clone()), first),
            ),
        );
        let rhs = app(join(), app2(prim(m), lambda(b, second), args[1].clone()));
        finish(rhs, e)
    })
}

/// `xs` split by 32 and every 32 values reduced by a warp: `map (fun w => reduceWarp
/// f w) (split 32 xs)`, or for `xs = map g ys` with the lanes computing `g`:
/// `map (fun w => reduceWarp f (map g w)) (split 32 ys)`.
fn warp_reductions(f: &Expr, xs: &Expr, w: &str) -> Expr {
    let (lanes, ys) = match applied(xs, |p| p == Prim::Map, 2) {
        Some((_, a)) => (app2(map_prim(), a[0].clone(), var(w)), a[1].clone()),
        None => (var(w), xs.clone()),
    };
    app2(
        map_prim(),
        lambda(w, app2(prim(Prim::ReduceWarp), f.clone(), lanes)),
        app(split(32), ys),
    )
}

fn map_prim() -> Expr {
    prim(Prim::Map)
}
