//! Overlapped tiling of stencils (thesis §4.4.1), streaming along a dimension (2.5-D
//! blocking: `slideInward` moves the windows of a dimension inside the loops of the
//! next ones, `toSlideSeq` computes them in order with the window in registers,
//! `vectorizeColumns` walks neighbouring columns together on vectors), and the
//! stencil rules of the default schedules; the equations are the rows of
//! [`super::RULES`].

use super::rise_rule;
use crate::term::{any_map, applied, as_lambda, const_nat, eta_reduced, is_var, occurs, prim_app};
use crate::S;
use arith::Nat;
use rise::builder::*;
use rise::{Expr, Prim};

/// `slide n s xs` as `(n, s, xs)` with constant sizes.
fn slide_of(e: &Expr) -> Option<(i64, i64, Expr)> {
    let a = prim_app(e)?;
    if a.prim != Prim::Slide || a.args.len() != 1 {
        return None;
    }
    Some((
        const_nat(a.type_args.first()?)?,
        const_nat(a.type_args.get(1)?)?,
        a.args[0].clone(),
    ))
}

fn slide_e(n: i64, s: i64, xs: Expr) -> Expr {
    app(slide(Nat::cst(n), Nat::cst(s)), xs)
}

/// The step `v` of tiles of size `u` for neighbourhoods of size `n` and step `s`:
/// `u - v = n - s`.
fn tile_step(u: i64, n: i64, s: i64) -> Option<i64> {
    let v = u - (n - s);
    (u >= n && v > 0 && v % s == 0).then_some(v)
}

pub(super) fn overlapped_tiling(name: String, u: i64) -> S {
    rise_rule(name, move |e, names| {
        let (m, args) = applied(e, any_map, 2)?;
        let (n, s, xs) = slide_of(args[1])?;
        let v = tile_step(u, n, s)?;
        let tile = names.fresh("tile");
        let per_tile = lambda(
            &tile,
            app2(prim(m), args[0].clone(), slide_e(n, s, var(&tile))),
        );
        Some(app(join(), app2(prim(m), per_tile, slide_e(u, v, xs))))
    })
}

/// `slide2 n s xs = map transpose (slide n s (map (slide n s) xs))` as `(n, s, xs)`.
fn slide2_of(e: &Expr) -> Option<(i64, i64, Expr)> {
    let (_, args) = applied(e, any_map, 2)?;
    let t = eta_reduced(args[0]);
    if t.as_prim().or_else(|| prim_app(t).map(|a| a.prim)) != Some(Prim::Transpose) {
        return None;
    }
    let (n, s, rows) = slide_of(args[1])?;
    let (_, inner) = applied(&rows, any_map, 2)?;
    let row_slide = eta_reduced(inner[0]);
    let a = prim_app(row_slide)?;
    let same = a.prim == Prim::Slide
        && a.args.is_empty()
        && a.type_args.iter().map(|t| const_nat(t)).collect::<Vec<_>>() == vec![Some(n), Some(s)];
    same.then(|| (n, s, inner[1].clone()))
}

fn slide2_e(n: i64, s: i64, xs: Expr) -> Expr {
    let row = app(map(slide(Nat::cst(n), Nat::cst(s))), xs);
    app(map(transpose()), slide_e(n, s, row))
}

pub(super) fn overlapped_tiling_2d(name: String, u: i64) -> S {
    rise_rule(name, move |e, names| {
        let (m, args) = applied(e, any_map, 2)?;
        let (_, inner) = applied(eta_reduced(args[0]), any_map, 1)?;
        let f = inner[0].clone();
        let (n, s, xs) = slide2_of(args[1])?;
        let v = tile_step(u, n, s)?;
        let tile = names.fresh("tile");
        let map2 = |g: Expr| app(prim(m), app(prim(m), g));
        let per_tile = lambda(&tile, app(map2(f), slide2_e(n, s, var(&tile))));
        let tiles = app(map2(per_tile), slide2_e(u, v, xs));
        Some(app(map(join()), app(join(), app(map(transpose()), tiles))))
    })
}

/// `transpose w` as `w`.
fn transposed(e: &Expr) -> Option<&Expr> {
    let a = prim_app(e)?;
    (a.prim == Prim::Transpose && a.args.len() == 1).then(|| a.args[0])
}

pub(super) fn slide_inward(name: String) -> S {
    rise_rule(name, move |e, names| {
        let (outer, args) = applied(e, any_map, 2)?;
        let (w, body) = as_lambda(args[0])?;
        let (inner, body_args) = applied(body, any_map, 2)?;
        let h = body_args[0];
        let (n, s, xs) = slide_of(args[1])?;
        let window = transposed(body_args[1])?;
        // `w` itself, or `map'' g w`: the window's elements rearranged, each by `g`
        let xs = if is_var(window, w) {
            xs
        } else {
            let (each, mapped) = applied(window, any_map, 2)?;
            if !is_var(mapped[1], w) || occurs(w, mapped[0]) {
                return None;
            }
            app2(prim(each), mapped[0].clone(), xs)
        };
        if occurs(w, h) {
            return None;
        }
        let c = names.fresh("col");
        let column = lambda(&c, app2(prim(outer), h.clone(), slide_e(n, s, var(&c))));
        Some(app(
            transpose(),
            app2(prim(inner), column, app(transpose(), xs)),
        ))
    })
}

pub(super) fn to_slide_seq(name: String) -> S {
    rise_rule(name, move |e, _| {
        let (_, args) = applied(e, |p| matches!(p, Prim::Map | Prim::MapSeq), 2)?;
        let (sz, 1, xs) = slide_of(args[1])? else {
            return None;
        };
        Some(app2(
            dep_app_nat(prim(Prim::SlideSeq), Nat::cst(sz)),
            args[0].clone(),
            xs,
        ))
    })
}

/// `map (map ... f)`, `depth` maps around `f` (none: `f`).
fn maps(depth: usize, f: Expr) -> Expr {
    (0..depth).fold(f, |g, _| map(g))
}

/// The dimensions of an array of scalars (outermost first) and its scalar type.
fn scalar_array(t: &rise::Type) -> Option<(Vec<Nat>, rise::ScalarType)> {
    let mut t = t.as_data()?;
    let mut dims = Vec::new();
    while let rise::DataType::Array(n, elem) = t {
        dims.push(n.clone());
        t = elem;
    }
    match t {
        rise::DataType::Scalar(s) => Some((dims, *s)),
        _ => None,
    }
}

/// `e` without its types, to be typed again on vectors: every literal of the scalar type
/// `t` becomes `vectorFromScalar` of itself (arithmetic of `t` is elementwise on vectors).
fn on_vectors(e: &Expr, t: rise::ScalarType) -> Expr {
    use rise::ExprKind::*;
    let scalar = rise::Type::Data(rise::DataType::Scalar(t));
    let kind = match e.kind() {
        Lit(_) if e.ty() == Some(&scalar) => {
            return app(prim(rise::Prim::VectorFromScalar), e.clone());
        }
        Var(_) | Lit(_) | Prim(_) | Foreign(_) => e.kind().clone(),
        Lambda(x, _, b) => Lambda(x.clone(), None, on_vectors(b, t)),
        App(f, a) => App(on_vectors(f, t), on_vectors(a, t)),
        DepLambda(x, b) => DepLambda(x.clone(), on_vectors(b, t)),
        DepApp(f, a) => DepApp(on_vectors(f, t), a.clone()),
        Annot(b, ty) => Annot(on_vectors(b, t), ty.clone()),
    };
    Expr::new(kind, e.span())
}

pub(super) fn vectorize_columns(name: String, v: i64) -> S {
    rise_rule(name, move |e, names| {
        let (outer, args) = applied(e, any_map, 2)?;
        let (c, body) = as_lambda(args[0])?;
        let (inner, body_args) = applied(body, any_map, 2)?;
        let f = body_args[0];
        let (n, s, column) = slide_of(body_args[1])?;
        if !is_var(&column, c) || occurs(c, f) || v < 2 {
            return None;
        }
        let (dims, t) = scalar_array(args[1].ty()?)?;
        let (_, result) = scalar_array(f.ty().and_then(|ft| match ft {
            rise::Type::Fun(_, r) => Some(&**r),
            _ => None,
        })?)?;
        if dims.len() < 2 || result != t {
            return None;
        }
        // the columns' dimension moved innermost, grouped into vectors, moved back outermost
        let inside = dims.len() - 1;
        let mut xs = app(transpose(), args[1].clone());
        for depth in 1..inside {
            xs = app(maps(depth, transpose()), xs);
        }
        xs = app(maps(inside, as_vector(Nat::cst(v))), xs);
        for depth in (0..inside).rev() {
            xs = app(maps(depth, transpose()), xs);
        }
        let cv = names.fresh("cols");
        let walk = lambda(
            &cv,
            app2(prim(inner), on_vectors(f, t), slide_e(n, s, var(&cv))),
        );
        let r = names.fresh("r");
        let lanes = lambda(
            &r,
            app(
                transpose(),
                app(split(Nat::cst(v)), app(as_scalar(), var(&r))),
            ),
        );
        Some(app(join(), app(map(lanes), app2(prim(outer), walk, xs))))
    })
}

/// Whether `e` is a pad applied to all its arguments: `padClamp l r xs` or
/// `padCst l r c xs`.
fn is_pad(e: &Expr) -> bool {
    prim_app(e).is_some_and(|a| match a.prim {
        Prim::PadClamp => a.args.len() == 1,
        Prim::PadCst => a.args.len() == 2,
        _ => false,
    })
}

/// The copy of an array of `depth` dimensions, element by element, in sequential loops
/// (a map of `fun x => x` left high-level would be a view, not a loop):
/// `mapSeq (fun r => mapSeq (fun x => x) r)` for two.
fn copy_of(depth: usize, names: &mut rise::NameGen) -> Expr {
    let x = names.fresh("x");
    let mut f = lambda(&x, var(&x));
    for _ in 1..depth {
        let r = names.fresh("r");
        f = lambda(&r, app(map_seq(f), var(&r)));
    }
    map_seq(f)
}

/// The number of array dimensions of `e`'s type above a scalar, or `None` when
/// the elements are not scalars (pairs, vectors).
fn scalar_array_depth(e: &Expr) -> Option<usize> {
    let mut t = match e.ty()? {
        rise::Type::Data(d) => d,
        _ => return None,
    };
    let mut depth = 0;
    while let rise::DataType::Array(_, elem) = t {
        depth += 1;
        t = elem;
    }
    (depth > 0 && matches!(t, rise::DataType::Scalar(_))).then_some(depth)
}

/// Whether the pads of `e` (a pad of pads: `padClamp2` is `padClamp` of `map (padClamp)`)
/// pad its innermost dimension: without that a read of the innermost dimension needs no
/// clamp (a stored stage padded by rows only is read at plain column indices already).
fn pads_innermost(e: &Expr) -> bool {
    if let rise::ExprKind::Lambda(_, _, body) = e.kind() {
        return pads_innermost(body);
    }
    let Some(a) = prim_app(e) else {
        return false;
    };
    let innermost = || scalar_array_depth(e) == Some(1);
    match (a.prim, a.args.len()) {
        (Prim::PadClamp, 1) | (Prim::PadCst, 2) => {
            innermost() || a.args.last().is_some_and(|x| pads_innermost(x))
        }
        (p, 2) if p.is_map() => {
            let f = eta_reduced(a.args[0]);
            match prim_app(f) {
                // `map (padClamp l r) rows`: it pads the innermost dimension if the rows are it
                Some(pad)
                    if matches!(
                        (pad.prim, pad.args.len()),
                        (Prim::PadClamp, 0) | (Prim::PadCst, 1)
                    ) =>
                {
                    scalar_array_depth(e) == Some(2)
                }
                _ => pads_innermost(f),
            }
        }
        _ => false,
    }
}

pub(super) fn store_padded(name: String) -> S {
    rise_rule(name, move |e, names| {
        if !is_pad(e) || !pads_innermost(e) {
            return None;
        }
        let depth = scalar_array_depth(e)?;
        let v = names.fresh("padded");
        Some(app2(
            dep_app(
                prim(Prim::ToMem),
                rise::TypeArg::AddrSpace(rise::AddrSpace::Global),
            ),
            app(copy_of(depth, names), e.clone()),
            lambda(&v, var(&v)),
        ))
    })
}

pub(super) fn unroll_short(name: String, most: i64) -> S {
    rise_rule(name, move |e, _| {
        let a = prim_app(e)?;
        if !matches!(a.prim, Prim::Reduce | Prim::ReduceSeq) || a.args.len() != 3 {
            return None;
        }
        let (n, _) = crate::term::array(a.args[2].ty()?)?;
        let short = n.as_cst().is_some_and(|k| (1..=most).contains(&k));
        if !short {
            return None;
        }
        let head = a
            .type_args
            .iter()
            .fold(prim(Prim::ReduceSeqUnroll), |h, t| dep_app(h, (*t).clone()));
        Some(apps(head, a.args.iter().map(|x| (*x).clone())))
    })
}
