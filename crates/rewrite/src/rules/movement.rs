//! Movement rules: data-layout primitives commute with maps (ICFP'20 Fig. 6
//! `transposeMove`; the split, join and slide analogues used for tiling).
//! `xBeforeMap` moves `x` so that it is applied before the map, `xAfterMap` after;
//! `layoutFission` moves one out of a map's body, `viewFission` any view function
//! (`map join`, `map transpose`) that is applied to a computation. And `permuteB`, the packed
//! layout of ICFP'20 Listing 15. Their equations are their rows in
//! [`super::RULES`]; the rows of the `xBeforeMap` and `xAfterMap` rules are
//! patterns ([`crate::pattern`]), which implement them.

use super::rise_rule;
use crate::term::{any_map, applied, as_lambda, occurs, prim_app, retype_under, untyped_prim_head};
use crate::S;
use rise::builder::*;
use rise::{ExprKind, Prim};

/// The one-operand layout primitives `layoutFission` moves out of a map.
fn is_layout_prim(p: Prim) -> bool {
    matches!(
        p,
        Prim::Join
            | Prim::Transpose
            | Prim::Split
            | Prim::Slide
            | Prim::AsScalar
            | Prim::AsVector
            | Prim::Take
            | Prim::Drop
    )
}

/// Moves a layout change out of a loop body, so that loops become perfectly nested.
pub(super) fn layout_fission(name: String) -> S {
    rise_rule(name, |e, _| {
        let (m, args) = applied(e, any_map, 2)?;
        let (x, b) = as_lambda(args[0])?;
        let ExprKind::App(l, inner) = b.kind() else {
            return None;
        };
        let is_layout = prim_app(l).is_some_and(|a| a.args.is_empty() && is_layout_prim(a.prim));
        if !is_layout || occurs(x, l) {
            return None;
        }
        let l = untyped_prim_head(l)?;
        Some(app2(
            prim(m),
            l,
            app2(prim(m), lambda(x, retype_under(x, inner)), args[1].clone()),
        ))
    })
}

/// Moves a view function applied to a computation out of a functional map's body (`map join`,
/// `map (fun r => transpose r)`: what `layoutFission` does for one bare layout
/// primitive), so that the computation becomes the body and its loop can be
/// interchanged with the map.
pub(super) fn view_fission(name: String) -> S {
    rise_rule(name, |e, _| {
        let (m, args) = applied(e, |p| p == Prim::Map, 2)?;
        let (x, b) = as_lambda(args[0])?;
        let ExprKind::App(v, inner) = b.kind() else {
            return None;
        };
        if !v.is_view_function() || inner.is_view() || occurs(x, v) {
            return None;
        }
        Some(app2(
            prim(m),
            retype_under(x, v),
            app2(prim(m), lambda(x, retype_under(x, inner)), args[1].clone()),
        ))
    })
}

/// The packed layout `(k/n).m.n` of ICFP'20 Listing 15, computed by copy loops
/// and viewed back as `e`.
pub(super) fn permute_b(name: String, n: i64) -> S {
    rise_rule(name, move |e, names| {
        let (blk, row, x) = (names.fresh("blk"), names.fresh("row"), names.fresh("x"));
        let copy_row = lambda(&row, app(map(lambda(&x, var(&x))), var(&row)));
        let packed = app(
            map(lambda(
                &blk,
                app(map(copy_row), app(transpose(), var(&blk))),
            )),
            app(split(n), e.clone()),
        );
        Some(app(join(), app(map(transpose()), packed)))
    })
}
