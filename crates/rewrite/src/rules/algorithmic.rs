//! Algorithmic rules (ICFP'20 Fig. 6, §5.1, §5.3); their equations are their
//! rows in [`super::RULES`].

use super::rise_rule;
use crate::term::{
    any_map, any_reduce, applied, array, as_lambda, is_var, occurs, retype_lambda, retype_under,
};
use crate::S;
use arith::Nat;
use rise::builder::*;
use rise::{DataType, Expr, ExprKind, Prim, Type};

pub(super) fn split_join(name: String, n: i64) -> S {
    rise_rule(name, move |e, names| {
        let blocked = |p: Prim, f: &Expr, xs: Expr| {
            app(
                join(),
                app(app(prim(p), app(prim(p), f.clone())), app(split(n), xs)),
            )
        };
        if let Some((p, args)) = applied(e, |p| p == Prim::Map, 2) {
            return Some(blocked(p, args[0], args[1].clone()));
        }
        let (p, args) = applied(e, |p| p == Prim::Map, 1)?;
        let x = names.fresh("xs");
        Some(lambda(&x, blocked(p, args[0], var(&x))))
    })
}

/// The inner reduction continues from the outer accumulator, so `blockedReduce` holds
/// for any `op` and `init` (ICFP'20 §5.1 writes `op a (reduce op init y)`, which
/// needs `init` to be neutral for `op`).
pub(super) fn blocked_reduce(name: String, n: i64) -> S {
    rise_rule(name, move |e, names| {
        let (p, args) = applied(e, any_reduce, 3)?;
        let (a, y) = (names.fresh("acc"), names.fresh("blk"));
        let inner = apps(prim(p), [args[0].clone(), var(&a), var(&y)]);
        let op = lambda(&a, lambda(&y, inner));
        Some(apps(
            prim(Prim::ReduceSeq),
            [op, args[1].clone(), app(split(n), args[2].clone())],
        ))
    })
}

/// `m` rounded up to a multiple of `n`: `⌈m/n⌉·n`.
fn round_up(m: &Nat, n: i64) -> Nat {
    (m + Nat::cst(n - 1)).floor_div(&Nat::cst(n)) * Nat::cst(n)
}

/// What pads `m` to a multiple of `n`: `⌈m/n⌉·n − m`.
pub(super) fn padding_to_multiple(m: &Nat, n: i64) -> Nat {
    (round_up(m, n) - m.clone()).simplify()
}

/// Pads the array a map runs over to a multiple of `n` by repeating its last
/// element, and drops the extra results: the map can then be split by `n` at
/// any size (the extra elements are computed and thrown away).
pub(super) fn pad_map(name: String, n: i64) -> S {
    rise_rule(name, move |e, _| {
        let (p, args) = applied(e, any_map, 2)?;
        let (m, _) = array(args[1].ty()?)?;
        let pad = padding_to_multiple(m, n);
        let padded = app(pad_clamp(0, pad), args[1].clone());
        Some(app(
            take(m.clone()),
            app(app(prim(p), args[0].clone()), padded),
        ))
    })
}

/// Peels the last `k mod n` elements off a reduction into a second, sequential
/// one that continues from the first one's result, so that the first one runs
/// over a multiple of `n` elements at any size.
pub(super) fn peel_reduce(name: String, n: i64) -> S {
    rise_rule(name, move |e, _| {
        let (p, args) = applied(e, any_reduce, 3)?;
        let (k, _) = array(args[2].ty()?)?;
        let whole = (k.floor_div(&Nat::cst(n)) * Nat::cst(n)).simplify();
        let main = apps(
            prim(p),
            [
                args[0].clone(),
                args[1].clone(),
                app(take(whole.clone()), args[2].clone()),
            ],
        );
        let rest = app(drop_(whole), args[2].clone());
        Some(apps(prim(Prim::ReduceSeq), [args[0].clone(), main, rest]))
    })
}

/// Peels the first element off a reduction: the operator applied to the initial
/// value and the first element (a beta-redex that `betaReduction` opens) becomes the
/// initial value of a sequential reduction over the rest.
pub(super) fn peel_first(name: String) -> S {
    rise_rule(name, move |e, _| {
        let (_, args) = applied(e, any_reduce, 3)?;
        let (k, _) = array(args[2].ty()?)?;
        let first = idx(
            app(dep_app_nat(prim(Prim::NatAsIndex), k.clone()), lit_nat(0)),
            args[2].clone(),
        );
        let init = apps(args[0].clone(), [args[1].clone(), first]);
        let rest = app(drop_(1), args[2].clone());
        Some(apps(prim(Prim::ReduceSeq), [args[0].clone(), init, rest]))
    })
}

/// Stores a reduction's accumulator with its dimensions `d` and `d + 1` swapped
/// (counted from one): the operator sees it swapped back (views), its result and the
/// initial value are written swapped, and the final result is read swapped back.
pub(super) fn transpose_accumulator(name: String, d: i64) -> S {
    rise_rule(name, move |e, names| {
        let (_, args) = applied(e, any_reduce, 3)?;
        let swap = |x: Expr| app((1..d).fold(transpose(), |f, _| map(f)), x);
        let (a, y) = (names.fresh("acc"), names.fresh("y"));
        let step = swap(apps(args[0].clone(), [swap(var(&a)), var(&y)]));
        let op = lambda(&a, lambda(&y, step));
        let init = swap(args[1].clone());
        Some(swap(apps(
            prim(Prim::ReduceSeq),
            [op, init, args[2].clone()],
        )))
    })
}

pub(super) fn map_fission(name: String) -> S {
    rise_rule(name, |e, names| {
        let (p, args, xs) = match applied(e, any_map, 2) {
            Some((p, args)) => (p, args.clone(), Some(args[1].clone())),
            None => {
                let (p, args) = applied(e, any_map, 1)?;
                (p, args, None)
            }
        };
        let (x, body) = as_lambda(args[0])?;
        let ExprKind::App(f, gx) = body.kind() else {
            return None;
        };
        if occurs(x, f) || is_var(gx, x) || !occurs(x, gx) {
            return None;
        }
        let fissioned = |xs: Expr| {
            app(
                app(prim(p), f.clone()),
                app(app(prim(p), lambda(x, retype_under(x, gx))), xs),
            )
        };
        Some(match xs {
            Some(xs) => fissioned(xs),
            None => {
                let y = names.fresh("xs");
                lambda(&y, fissioned(var(&y)))
            }
        })
    })
}

pub(super) fn fuse_reduce_map(name: String) -> S {
    rise_rule(name, |e, names| {
        let (_, args) = applied(e, any_reduce, 3)?;
        let (_, m) = applied(args[2], |p| p == Prim::Map, 2)?;
        let (acc, y) = (names.fresh("acc"), names.fresh("y"));
        let op = lambda(
            &acc,
            lambda(
                &y,
                app2(args[0].clone(), var(&acc), app(m[0].clone(), var(&y))),
            ),
        );
        Some(apps(
            prim(Prim::ReduceSeq),
            [op, args[1].clone(), m[1].clone()],
        ))
    })
}

pub(super) fn fission_reduce_map(name: String) -> S {
    rise_rule(name, |e, _| {
        let (p, args) = applied(e, any_reduce, 3)?;
        let (acc, inner) = as_lambda(args[0])?;
        let (y, body) = as_lambda(inner)?;
        let ExprKind::App(op_acc, elem) = body.kind() else {
            return None;
        };
        let ExprKind::App(op, a) = op_acc.kind() else {
            return None;
        };
        if !is_var(a, acc) || occurs(acc, op) || occurs(y, op) || occurs(acc, elem) {
            return None;
        }
        if is_var(elem, y) {
            return None;
        }
        let associative_shape = match op.ty() {
            Some(Type::Fun(a, r)) => matches!(&**r, Type::Fun(b, c) if a == b && b == c),
            _ => false,
        };
        let reduce_prim = if associative_shape && p == Prim::ReduceSeq {
            Prim::Reduce
        } else {
            p
        };
        let mapped = app(
            app(prim(Prim::Map), lambda(y, retype_under(y, elem))),
            args[2].clone(),
        );
        Some(apps(
            prim(reduce_prim),
            [op.clone(), args[1].clone(), mapped],
        ))
    })
}

/// A map of reductions becomes a reduction of arrays (ICFP'20 §5.3).
pub(super) fn map_reduce_interchange(name: String) -> S {
    rise_rule(name, |e, names| {
        let (m, args) = applied(e, any_map, 2)?;
        let (x, body) = as_lambda(args[0])?;
        let (r, rargs) = applied(body, any_reduce, 3)?;
        if occurs(x, rargs[0]) {
            return None;
        }
        let (acc, y, p) = (names.fresh("acc"), names.fresh("y"), names.fresh("p"));
        let pv = || var(&p);
        let elementwise = lambda(
            &p,
            app2(
                rargs[0].clone(),
                app(prim(Prim::Fst), pv()),
                app(prim(Prim::Snd), pv()),
            ),
        );
        let op = lambda(
            &acc,
            lambda(
                &y,
                app2(
                    prim(m),
                    elementwise,
                    app2(prim(Prim::Zip), var(&acc), var(&y)),
                ),
            ),
        );
        let inits = app2(
            prim(Prim::Map),
            lambda(x, retype_under(x, rargs[1])),
            args[1].clone(),
        );
        let inputs = app(
            transpose(),
            app2(
                prim(Prim::Map),
                lambda(x, retype_under(x, rargs[2])),
                args[1].clone(),
            ),
        );
        Some(apps(prim(r), [op, inits, inputs]))
    })
}

/// Loop interchange of two maps.
pub(super) fn map_map_interchange(name: String) -> S {
    rise_rule(name, |e, _| {
        let (outer, args) = applied(e, any_map, 2)?;
        let (x, body) = as_lambda(args[0])?;
        let (inner, iargs) = applied(body, any_map, 2)?;
        let ys = iargs[1];
        if is_var(ys, x) && !occurs(x, iargs[0]) {
            let t = app(transpose(), args[1].clone());
            let mm = app(prim(inner), app(prim(outer), iargs[0].clone()));
            return Some(app(transpose(), app(mm, t)));
        }
        if occurs(x, ys) {
            return None;
        }
        let (y, b) = as_lambda(iargs[0])?;
        let swapped = app2(
            prim(inner),
            lambda(
                y,
                app2(
                    prim(outer),
                    lambda(x, retype_under(x, &retype_under(y, b))),
                    args[1].clone(),
                ),
            ),
            ys.clone(),
        );
        Some(app(transpose(), swapped))
    })
}

/// On pairs, `f` is typed again on vectors (it must be generic arithmetic). For
/// any other `f` with a scalar result (a stencil's function of a window) the
/// results are written `n` at a time, and the code generator computes each
/// vector of `map f xs` with vector operations where the lanes read consecutive
/// memory.
pub(super) fn vectorize(name: String, n: i64) -> S {
    rise_rule(name, move |e, names| {
        let (p, args) = applied(e, |p| p == Prim::Map, 2)?;
        let f = args[0];
        let (param, result) = match f.ty()? {
            Type::Fun(a, b) => (a.as_data()?.clone(), b.as_data()?.clone()),
            _ => return None,
        };
        if !matches!(result, DataType::Scalar(_)) {
            return None;
        }
        let as_vector = |xs: &Expr| app(dep_app_nat(prim(Prim::AsVector), n), xs.clone());
        match param {
            DataType::Scalar(_) => {
                let vf = app(prim(Prim::MapVec), f.clone());
                Some(app(
                    prim(Prim::AsScalar),
                    app2(prim(p), vf, as_vector(args[1])),
                ))
            }
            DataType::Pair(a, b)
                if matches!(*a, DataType::Scalar(_)) && matches!(*b, DataType::Scalar(_)) =>
            {
                let (_, z) = applied(args[1], |q| q == Prim::Zip, 2)?;
                let zipped = app2(prim(Prim::Zip), as_vector(z[0]), as_vector(z[1]));
                Some(app(
                    prim(Prim::AsScalar),
                    app2(prim(p), retype_lambda(f)?, zipped),
                ))
            }
            _ => {
                let x = names.fresh("x");
                let copy = app(prim(Prim::MapVec), lambda(&x, var(&x)));
                Some(app(prim(Prim::AsScalar), app2(prim(p), copy, as_vector(e))))
            }
        }
    })
}
