//! Algorithmic rules (ICFP'20 Fig. 6, §5.1, §5.3).

use super::rise_rule;
use crate::term::{
    any_map, any_reduce, applied, as_lambda, is_var, map_of, occurs, retype_lambda, retype_under,
};
use crate::S;
use rise::builder::*;
use rise::{DataType, Expr, ExprKind, Prim, Type};

/// `addId`: `e ~> id e`
pub fn add_id() -> S {
    rise_rule("addId", |e, _| Some(app(prim(Prim::Id), e.clone())))
}

/// `idToTranspose`: `id (e : m.n.t) ~> transpose (transpose e)`
pub fn id_to_transpose() -> S {
    rise_rule("idToTranspose", |e, _| {
        let (_, args) = applied(e, |p| p == Prim::Id, 1)?;
        let is_2d = matches!(
            args[0].ty(),
            Some(Type::Data(DataType::Array(_, inner))) if matches!(**inner, DataType::Array(..))
        );
        is_2d.then(|| app(transpose(), app(transpose(), args[0].clone())))
    })
}

/// `transposeMove`: `map (map f) (transpose e) ~> transpose (map (map f) e)`
pub fn transpose_move() -> S {
    rise_rule("transposeMove", |e, _| {
        let (outer, args) = applied(e, any_map, 2)?;
        let (inner, f) = map_of(args[0])?;
        let (_, t) = applied(args[1], |p| p == Prim::Transpose, 1)?;
        let mm = app(prim(outer), app(prim(inner), f));
        Some(app(transpose(), app(mm, t[0].clone())))
    })
}

/// `splitJoin(n)`: `map f ~> split n >> map (map f) >> join`
/// (also on `map f xs`: `join (map (map f) (split n xs))`).
pub fn split_join(n: i64) -> S {
    rise_rule(format!("splitJoin({n})"), move |e, names| {
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

/// `blockedReduce(n)`: `reduceX op init xs ~> reduceSeq (fun a y => reduceX op a y) init (split n xs)`.
///
/// The inner reduction continues from the outer accumulator, so the rule holds
/// for any `op` and `init` (ICFP'20 §5.1 writes `op a (reduce op init y)`, which
/// needs `init` to be neutral for `op`).
pub fn blocked_reduce(n: i64) -> S {
    rise_rule(format!("blockedReduce({n})"), move |e, names| {
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

/// `split(n)`: `splitJoin(n) <+ blockedReduce(n)` (TVM's `split`, ICFP'20 §5.1).
pub fn split_strategy(n: i64) -> S {
    elevate::named("split", vec![n.to_string()], move || {
        split_join(n).or(blocked_reduce(n))
    })
}

/// `mapFusion`: `map f (map g xs) ~> map (fun x => f (g x)) xs`
pub fn map_fusion() -> S {
    rise_rule("mapFusion", |e, names| {
        let (p, args) = applied(e, any_map, 2)?;
        let (q, inner) = applied(args[1], any_map, 2)?;
        if p != q {
            return None;
        }
        let x = names.fresh("x");
        let fused = lambda(&x, app(args[0].clone(), app(inner[0].clone(), var(&x))));
        Some(app(app(prim(p), fused), inner[1].clone()))
    })
}

/// `mapFission`: `map (fun x => f (g x)) ~> map g >> map f` when `x` is not free
/// in `f` and `g x` is not just `x` (also on the applied form
/// `map (fun x => f gx) xs ~> map f (map (fun x => gx) xs)`).
pub fn map_fission() -> S {
    rise_rule("mapFission", |e, names| {
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

/// `fuseReduceMap`: `reduceX op init (map f xs) ~> reduceSeq (fun acc y => op acc (f y)) init xs`
pub fn fuse_reduce_map() -> S {
    rise_rule("fuseReduceMap", |e, names| {
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

/// `fissionReduceMap`: `reduceX (fun acc y => op acc e) init xs ~> reduce op init (map (fun y => e) xs)`
/// when `op` mentions neither `acc` nor `y`, `e` does not mention `acc`, and `e`
/// is not just `y`. The result is `reduce` when `op` has type `t -> t -> t`,
/// `reduceSeq` otherwise.
pub fn fission_reduce_map() -> S {
    rise_rule("fissionReduceMap", |e, _| {
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

/// `mapReduceInterchange` (ICFP'20 §5.3): a map of reductions becomes a reduction
/// of arrays,
/// `map (fun x => reduceX op i e) xs ~> reduceX (fun acc y => map (fun p => op (fst p) (snd p)) (zip acc y)) (map (fun x => i) xs) (transpose (map (fun x => e) xs))`
/// when `op` does not mention `x`.
pub fn map_reduce_interchange() -> S {
    rise_rule("mapReduceInterchange", |e, names| {
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

/// `mapMapInterchange`: loop interchange of two maps.
/// `map (fun x => map (fun y => b) ys) xs ~> transpose (map (fun y => map (fun x => b) xs) ys)`
/// when `ys` does not mention `x`; and
/// `map (fun x => map f x) xs ~> transpose (map (map f) (transpose xs))`.
pub fn map_map_interchange() -> S {
    rise_rule("mapMapInterchange", |e, _| {
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

/// `vectorize(n)`: `map f xs ~> asScalar (map (mapVec f) (asVector n xs))` for a
/// scalar function `f`; for `f` on pairs of scalars applied to `zip a b`,
/// `asScalar (map f' (zip (asVector n a) (asVector n b)))` where `f'` is `f`
/// typed again on vectors (it must be generic arithmetic); for any other `f`
/// with a scalar result (a stencil's function of a window),
/// `asScalar (map (mapVec (fun x => x)) (asVector n (map f xs)))`: the results
/// are written `n` at a time, and the code generator computes each vector of
/// `map f xs` with vector operations where the lanes read consecutive memory.
pub fn vectorize(n: i64) -> S {
    rise_rule(format!("vectorize({n})"), move |e, names| {
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
