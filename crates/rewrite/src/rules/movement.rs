//! Movement rules: data-layout primitives commute with maps (ICFP'20 Fig. 6
//! `transposeMove`; the split, join and slide analogues used for tiling).
//! `xBeforeMap` moves `x` so that it is applied before the map, `xAfterMap` after.

use super::rise_rule;
use crate::term::{any_map, applied, map_of, prim_app, untyped_prim_head};
use crate::S;
use rise::builder::*;
use rise::{Expr, Prim};

/// A layout primitive with its type-level arguments, applied to one array: `(head, xs)`.
fn layout(e: &Expr, p: Prim) -> Option<(Expr, Expr)> {
    let a = prim_app(e)?;
    if a.prim != p || a.args.len() != 1 {
        return None;
    }
    let rise::ExprKind::App(head, xs) = e.kind() else {
        return None;
    };
    Some((head.clone(), xs.clone()))
}

/// `transposeAfterMap`: `transpose (map (map f) xs) ~> map (map f) (transpose xs)`
pub fn transpose_after_map() -> S {
    rise_rule("transposeAfterMap", |e, _| {
        let (_, inner) = layout(e, Prim::Transpose)?;
        let (m, args) = applied(&inner, any_map, 2)?;
        let (i, f) = map_of(args[0])?;
        Some(app2(
            prim(m),
            app(prim(i), f),
            app(transpose(), args[1].clone()),
        ))
    })
}

/// `splitBeforeMap`: `map (map f) (split n xs) ~> split n (map f xs)`
pub fn split_before_map() -> S {
    rise_rule("splitBeforeMap", |e, _| {
        let (_, args) = applied(e, any_map, 2)?;
        let (i, f) = map_of(args[0])?;
        let (head, xs) = layout(args[1], Prim::Split)?;
        Some(app(untyped_prim_head(&head)?, app2(prim(i), f, xs)))
    })
}

/// `splitAfterMap`: `split n (map f xs) ~> map (map f) (split n xs)`
pub fn split_after_map() -> S {
    rise_rule("splitAfterMap", |e, _| {
        let (head, inner) = layout(e, Prim::Split)?;
        let (m, args) = applied(&inner, any_map, 2)?;
        let split_xs = app(untyped_prim_head(&head)?, args[1].clone());
        Some(app2(prim(m), app(prim(m), args[0].clone()), split_xs))
    })
}

/// `joinBeforeMap`: `map f (join xs) ~> join (map (map f) xs)`
pub fn join_before_map() -> S {
    rise_rule("joinBeforeMap", |e, _| {
        let (m, args) = applied(e, any_map, 2)?;
        let (_, xs) = layout(args[1], Prim::Join)?;
        Some(app(
            join(),
            app2(prim(m), app(prim(m), args[0].clone()), xs),
        ))
    })
}

/// `joinAfterMap`: `join (map (map f) xs) ~> map f (join xs)`
pub fn join_after_map() -> S {
    rise_rule("joinAfterMap", |e, _| {
        let (_, inner) = layout(e, Prim::Join)?;
        let (_, args) = applied(&inner, any_map, 2)?;
        let (i, f) = map_of(args[0])?;
        Some(app2(prim(i), f, app(join(), args[1].clone())))
    })
}

/// `slideBeforeMap`: `map (map f) (slide n s xs) ~> slide n s (map f xs)`
pub fn slide_before_map() -> S {
    rise_rule("slideBeforeMap", |e, _| {
        let (_, args) = applied(e, any_map, 2)?;
        let (i, f) = map_of(args[0])?;
        let (head, xs) = layout(args[1], Prim::Slide)?;
        Some(app(untyped_prim_head(&head)?, app2(prim(i), f, xs)))
    })
}

/// `slideAfterMap`: `slide n s (map f xs) ~> map (map f) (slide n s xs)`
pub fn slide_after_map() -> S {
    rise_rule("slideAfterMap", |e, _| {
        let (head, inner) = layout(e, Prim::Slide)?;
        let (m, args) = applied(&inner, any_map, 2)?;
        let slid = app(untyped_prim_head(&head)?, args[1].clone());
        Some(app2(prim(m), app(prim(m), args[0].clone()), slid))
    })
}
