//! Rules for GPU schedules: the rewrites that derive a matrix multiplication with
//! local-memory tiles and register blocks (LIFT CGO'17; Remmelg et al., "Performance
//! portable GPU code generation for matrix multiplication", GPGPU'16; Shine's
//! `mmNVIDIA`) from the high-level `mm`, as `mmTiled` in examples/gpu.elv does.
//!
//! * [`reduce_outer`](super::reduce_outer) (`reduceOuter`): a map–map nest of reductions over pairs of a row
//!   and a column is a reduction of outer products (matrix multiplication as a sum of
//!   rank-1 updates). Its accumulator is a whole block of results, and every step
//!   reads one slice of the rows and one of the columns: the reduction a work-group
//!   walks in steps, or a work-item over a register block.
//! * [`block_reduce_zip`](super::block_reduce_zip) (`blockReduceZip(n)`): a reduction over a zip walked in
//!   chunks of `n` of both arrays.
//! * [`copy_local`](super::copy_local) (`copyLocal(n1, n0)`), [`copy_by_work_items`](super::copy_by_work_items)
//!   (`copyByWorkItems`): copies made by the work-items of a work-group, coalesced
//!   (consecutive work-items copy consecutive elements) or block by block (each
//!   work-item its own element); [`copy_by_threads`](super::copy_by_threads)
//!   (`copyByThreads(p)`): a tile copied into local memory by a 1-D work-group of `p`,
//!   coalesced (the tiles of `mmaShared` in examples/fireiron.elv, Fireiron's `move`).
//! * [`store_local`](super::store_local) (`storeLocal(what, how)`): a value read by a function's body is
//!   computed into (local) memory at the top of the body (the tiles of a step of a
//!   reduction, copied once by the work-group and read by all its work-items).
//! * [`join_split`](super::join_split) (`joinSplit`): to choose a layout.
//!
//! Every rule is an equation on values (its row in [`super::RULES`]); the interpreter
//! agrees on both sides (tests).

use super::rise_rule;
use crate::term::{any_reduce, applied, as_lambda, finish, no, occurs, prim_app, substitute};
use crate::S;
use elevate::{rule, top_down, Failure};
use rise::builder::*;
use rise::{AddrSpace, DataType, Expr, ExprKind, NameGen, Prim, Type};

/// The reduction walks chunks of `n` elements of both arrays, each chunk continuing
/// from the accumulator (so `op` and `init` are any).
pub(super) fn block_reduce_zip(name: String, n: i64) -> S {
    rise_rule(name, move |e, names| {
        let (p, args) = applied(e, any_reduce, 3)?;
        let (_, zs) = applied(args[2], |q| q == Prim::Zip, 2)?;
        let (acc, ab) = (names.fresh("acc"), names.fresh("ab"));
        let inner = apps(
            prim(p),
            [
                args[0].clone(),
                var(&acc),
                zip(fst(var(&ab)), snd(var(&ab))),
            ],
        );
        Some(apps(
            prim(Prim::ReduceSeq),
            [
                lambda(&acc, lambda(&ab, inner)),
                args[1].clone(),
                zip(app(split(n), zs[0].clone()), app(split(n), zs[1].clone())),
            ],
        ))
    })
}

/// `fst (pair a b) ~> a` and `snd (pair a b) ~> b` everywhere (bottom-up), after
/// `reduceOuter` has put the pair of a row and a column element together.
fn project_pairs(e: &Expr) -> Expr {
    use ExprKind::*;
    let kind = match e.kind() {
        Var(_) | Lit(_) | Prim(_) | Foreign(_) => return e.clone(),
        Lambda(x, t, b) => Lambda(x.clone(), t.clone(), project_pairs(b)),
        App(f, a) => {
            let (f, a) = (project_pairs(f), project_pairs(a));
            if let (Some(h), Some(p)) = (prim_app(&f), prim_app(&a)) {
                if h.args.is_empty() && p.prim == rise::Prim::MakePair && p.args.len() == 2 {
                    match h.prim {
                        rise::Prim::Fst => return p.args[0].clone(),
                        rise::Prim::Snd => return p.args[1].clone(),
                        _ => {}
                    }
                }
            }
            App(f, a)
        }
        DepLambda(x, b) => DepLambda(x.clone(), project_pairs(b)),
        DepApp(f, t) => DepApp(project_pairs(f), t.clone()),
        Annot(b, t) => Annot(project_pairs(b), t.clone()),
    };
    Expr::new(kind, e.span())
}

/// The operator `op` applied to `acc` and the pair `(x, y)`, β-reduced when `op` is a
/// two-parameter lambda (so the new operator reads like the old one).
fn apply_op(op: &Expr, acc: Expr, x: Expr, y: Expr, names: &mut NameGen) -> Expr {
    if let Some((a, inner)) = as_lambda(op) {
        if let Some((p, body)) = as_lambda(inner) {
            let strip = |e: &Expr| crate::term::retype_under(a, &crate::term::retype_under(p, e));
            let body = strip(body);
            let body = substitute(&body, a, &acc, names);
            let body = substitute(&body, p, &pair(x, y), names);
            return project_pairs(&body);
        }
    }
    apps(op.clone(), [acc, pair(x, y)])
}

/// The outer-product operator of `reduceOuter`:
/// `fun accs y => zip accs (fst y) |> map (fun ar => zip (fst ar) (snd y) |> map (fun ac => op (fst ac) (snd ar, snd ac)))`.
fn outer_op(op: &Expr, names: &mut NameGen) -> Expr {
    let (accs, y, ar, ac) = (
        names.fresh("accs"),
        names.fresh("y"),
        names.fresh("ar"),
        names.fresh("ac"),
    );
    let step = apply_op(op, fst(var(&ac)), snd(var(&ar)), snd(var(&ac)), names);
    let row = app(map(lambda(&ac, step)), zip(fst(var(&ar)), snd(var(&y))));
    lambda(
        &accs,
        lambda(
            &y,
            app(map(lambda(&ar, row)), zip(var(&accs), fst(var(&y)))),
        ),
    )
}

/// A map–map nest of reductions over a row and a column becomes a reduction of
/// outer products whose accumulator is the whole block of results (matrix
/// multiplication as a sum of rank-1 updates). Element `(i, j)` of the result is
/// the same left fold over `k` on both sides, so no property of `op` is needed.
pub(super) fn reduce_outer(name: String) -> S {
    rule(name, |e: &Expr, ctx| {
        let rhs = reduce_outer_rhs(e, &mut ctx.env).ok_or_else(Failure::not_applicable)?;
        finish(rhs, e)
    })
}

fn reduce_outer_rhs(e: &Expr, names: &mut NameGen) -> Option<Expr> {
    let (outer, args) = applied(e, |p| p == Prim::Map, 2)?;
    let (r, body) = as_lambda(args[0])?;
    let rs = args[1];
    // the layout heads (`join`, `transpose`, `split n`, a `map` of a view function)
    // move out of the outer map's body
    let (views, inner) =
        crate::schedule::peel_views(body, &[Prim::Join, Prim::Transpose, Prim::Split]);
    if views.iter().any(|v| occurs(r, v)) {
        return None;
    }
    let (_, iargs) = applied(&inner, |p| p == Prim::Map, 2)?;
    let (c, element) = as_lambda(iargs[0])?;
    let cs = iargs[1];
    // the layout heads of every result (a tile of results whose reduction a step below
    // moved outside its own loops: `join (map V' (reduce ...))`) stay on every result
    let (element_views, red) =
        crate::schedule::peel_views(element, &[Prim::Join, Prim::Transpose, Prim::Split]);
    if element_views.iter().any(|v| occurs(r, v) || occurs(c, v)) {
        return None;
    }
    let red = &red;
    let (p, rargs) = applied(red, |p| p == Prim::Reduce || p == Prim::ReduceSeq, 3)?;
    let (op, init, xs) = (rargs[0], rargs[1], rargs[2]);
    let (_, z) = applied(xs, |q| q == Prim::Zip, 2)?;
    if occurs(r, op) || occurs(c, op) {
        return None;
    }
    // The accumulator form: rows and columns zipped with the accumulators; every row and
    // column read through a chain of layout primitives of its own (`split s (snd ar)`, as
    // `blockReduceZip` leaves a reduction split in steps) or as it is.
    if let (Some((_, za)), Some((_, zc))) = (
        applied(rs, |q| q == Prim::Zip, 2),
        applied(cs, |q| q == Prim::Zip, 2),
    ) {
        let is_proj = |e: &Expr, pr: Prim, x: &str| {
            applied(e, |q| q == pr, 1).is_some_and(|(_, a)| crate::term::is_var(a[0], x))
        };
        let layout = [Prim::Join, Prim::Transpose, Prim::Split];
        let (row_views, row) = crate::schedule::peel_views(z[0], &layout);
        let (col_views, col) = crate::schedule::peel_views(z[1], &layout);
        if views.is_empty()
            && element_views.is_empty()
            && is_proj(zc[0], Prim::Fst, r)
            && is_proj(init, Prim::Fst, c)
            && is_proj(&row, Prim::Snd, r)
            && is_proj(&col, Prim::Snd, c)
            && !occurs(r, zc[1])
            && !occurs(c, zc[1])
            && !row_views
                .iter()
                .chain(&col_views)
                .any(|v| occurs(r, v) || occurs(c, v))
        {
            let op2 = outer_op(op, names);
            let each = |heads: &[Expr], xs: &Expr, names: &mut NameGen| {
                if heads.is_empty() {
                    return xs.clone();
                }
                let x = names.fresh("x");
                let chain = heads
                    .iter()
                    .rev()
                    .fold(var(&x), |acc, h| app(h.clone(), acc));
                app(map(lambda(&x, chain)), xs.clone())
            };
            let (rows, cols) = (
                each(&row_views, za[1], names),
                each(&col_views, zc[1], names),
            );
            return Some(apps(
                prim(p),
                [
                    op2,
                    za[0].clone(),
                    zip(app(transpose(), rows), app(transpose(), cols)),
                ],
            ));
        }
    }
    // The form with an initial value per result.
    if occurs(r, cs) || occurs(c, z[0]) || occurs(r, z[1]) || !occurs(r, z[0]) || !occurs(c, z[1]) {
        return None;
    }
    let op2 = outer_op(op, names);
    let init2 = app(
        map(lambda(r, app(map(lambda(c, init.clone())), cs.clone()))),
        rs.clone(),
    );
    let per =
        |x: &str, f: &Expr, xs: &Expr| app(transpose(), app(map(lambda(x, f.clone())), xs.clone()));
    let red2 = apps(
        prim(p),
        [op2, init2, zip(per(r, z[0], rs), per(c, z[1], cs))],
    );
    let red2 = if element_views.is_empty() {
        red2
    } else {
        let (row, x) = (names.fresh("row"), names.fresh("res"));
        let w = element_views
            .iter()
            .rev()
            .fold(var(&x), |acc, h| app(h.clone(), acc));
        app(map(lambda(&row, app(map(lambda(&x, w)), var(&row)))), red2)
    };
    if views.is_empty() {
        return Some(red2);
    }
    // `map (fun x => V1 (V2 (... x)))` of the block of results.
    let x = names.fresh("blk");
    let v = views
        .iter()
        .rev()
        .fold(var(&x), |acc, h| app(h.clone(), acc));
    Some(app2(prim(outer), lambda(&x, v), red2))
}

/// `e` copied by a work-group of `n1 x n0` work-items, work-item `t` copying elements
/// `t, t + n1*n0, ...` of `e` in row-major order, so that consecutive work-items copy
/// consecutive elements (coalesced); the views after the copy put every element back
/// in its place, so that the result has `e`'s layout (written through the views).
pub(super) fn copy_local(name: String, n1: i64, n0: i64) -> S {
    rise_rule(name, move |e, names| {
        let Some(Type::Data(DataType::Array(_, inner))) = e.ty() else {
            return None;
        };
        let DataType::Array(b, elem) = &**inner else {
            return None;
        };
        if !matches!(**elem, DataType::Scalar(_)) {
            return None;
        }
        let x = names.fresh("x");
        let copy = map_with(
            Prim::MapLocal1,
            map_with(Prim::MapLocal0, map_seq(lambda(&x, var(&x)))),
        );
        let spread = app(
            split(n0),
            app(transpose(), app(split(n1 * n0), app(join(), e.clone()))),
        );
        let back = app(
            split(b.clone()),
            app(join(), app(transpose(), app(join(), app(copy, spread)))),
        );
        Some(back)
    })
}

/// `e` copied into local memory by the `p` work-items of a 1-D work-group, work-item `t`
/// copying elements `t, t + p, ...` of `e` in row-major order (neighbouring work-items
/// copy neighbouring elements: coalesced), read back from there (`toMem local copy (fun s
/// => s)`, the value `storeLocal` moves to the top of a step). `p` must divide the number
/// of elements.
pub(super) fn copy_by_threads(name: String, p: i64) -> S {
    rule(name.clone(), move |e: &Expr, ctx| {
        let Some(Type::Data(DataType::Array(rows, inner))) = e.ty() else {
            return no();
        };
        let DataType::Array(cols, elem) = &**inner else {
            return no();
        };
        if !matches!(**elem, DataType::Scalar(_)) {
            return no();
        }
        let Some(count) = (rows.clone() * cols.clone()).as_cst() else {
            return Err(Failure::not_applicable_because(format!(
                "{name}: the tile is {rows}x{cols}, not of a constant size (tile the result \
                 and split the reduction first)"
            )));
        };
        if p < 1 || count % p != 0 {
            return Err(Failure::not_applicable_because(format!(
                "{name}: the tile is {rows}x{cols}, {count} elements, which {p} threads do not \
                 share evenly"
            )));
        }
        let (x, s) = (ctx.env.fresh("x"), ctx.env.fresh("s"));
        let spread = app(transpose(), app(split(p), app(join(), e.clone())));
        let copied = app(
            map_with(Prim::MapLocal0, map_seq(lambda(&x, var(&x)))),
            spread,
        );
        let back = app(split(cols.clone()), app(join(), app(transpose(), copied)));
        finish(to_mem(AddrSpace::Local, back, lambda(&s, var(&s))), e)
    })
}

/// Work-item `(i, j)` copies element `(i, j)` (for the results of a work-group
/// whose work-items each hold their own part, as accumulators in registers).
pub(super) fn copy_by_work_items(name: String) -> S {
    rise_rule(name, |e, names| {
        let Some(Type::Data(DataType::Array(_, inner))) = e.ty() else {
            return None;
        };
        if !matches!(**inner, DataType::Array(..)) {
            return None;
        }
        let x = names.fresh("x");
        Some(app(
            map_with(
                Prim::MapLocal1,
                map_with(Prim::MapLocal0, lambda(&x, var(&x))),
            ),
            e.clone(),
        ))
    })
}

/// In a data expression `b` (a function's body, say), every occurrence of `e` is
/// replaced, so the value is computed into memory once, before the body, and the
/// body reads it there (the tiles of one step of a reduction, copied by a
/// work-group into local memory).
pub(super) fn store_local(name: String, what: S, how: S) -> S {
    rule(name, move |b: &Expr, ctx| {
        if b.ty().and_then(Type::as_data).is_none() {
            return no();
        }
        let outer_vars: Vec<rise::types::Name> = b.free_vars();
        let e = first_closed(&what, b, &outer_vars, ctx)?;
        let made = ctx.apply(&how, &e)?;
        let m = ctx.env.fresh("mem");
        let mut found = None;
        let reader = take_to_mem(&made, &m, &mut found);
        let Some((addr, stored)) = found else {
            return no();
        };
        // The reader mentions `m`, whose type is the stored value's.
        let Some(t) = stored.ty().cloned() else {
            return no();
        };
        let typed_m = Expr::typed(ExprKind::Var(m.clone()), t, b.span());
        let mut map = std::collections::HashMap::new();
        map.insert(m.clone(), typed_m);
        let reader = finish(rise::expr::substitute_closed(&reader, &map), &e)?;
        let replaced = replace_all(b, &e, &reader);
        let rhs = app2(
            dep_app(prim(Prim::ToMem), rise::TypeArg::AddrSpace(addr)),
            stored,
            lambda(&m, crate::term::retype_under(&m, &replaced)),
        );
        finish(rhs, b)
    })
}

/// The first sub-expression of `b` (top-down) that `what` holds for and whose free
/// variables are all free in `b`.
fn first_closed(
    what: &S,
    b: &Expr,
    outer: &[rise::types::Name],
    ctx: &mut elevate::Ctx<Expr>,
) -> Result<Expr, Failure<Expr>> {
    let found = std::sync::Arc::new(std::sync::Mutex::new(None));
    let slot = found.clone();
    let outer = outer.to_vec();
    let record = rule("closed", move |e: &Expr, _| {
        let closed = e.free_vars().iter().all(|v| outer.contains(v));
        let mut s = slot.lock().map_err(|_| Failure::not_applicable())?;
        if closed && s.is_none() {
            *s = Some(e.clone());
            return Ok(e.clone());
        }
        no()
    });
    ctx.apply(&top_down(what.clone().seq(record)), b)?;
    let e = found.lock().ok().and_then(|mut s| s.take());
    e.ok_or_else(Failure::not_applicable)
}

/// `e` with its one `toMem a s (fun x => x)` replaced by the variable `m`; the address
/// space and `s` go to `found`.
fn take_to_mem(e: &Expr, m: &str, found: &mut Option<(AddrSpace, Expr)>) -> Expr {
    if found.is_none() {
        if let Some(a) = prim_app(e) {
            if a.prim == rise::Prim::ToMem && a.args.len() == 2 {
                let is_id =
                    as_lambda(a.args[1]).is_some_and(|(x, body)| crate::term::is_var(body, x));
                let addr = a.type_args.iter().find_map(|t| match t {
                    rise::TypeArg::AddrSpace(s) => Some(s.clone()),
                    _ => None,
                });
                if let (true, Some(addr)) = (is_id, addr) {
                    *found = Some((addr, a.args[0].clone()));
                    return var(m);
                }
            }
        }
    }
    use ExprKind::*;
    let kind = match e.kind() {
        Var(_) | Lit(_) | Prim(_) | Foreign(_) => return e.clone(),
        Lambda(x, t, b) => Lambda(x.clone(), t.clone(), take_to_mem(b, m, found)),
        App(f, a) => {
            let f2 = take_to_mem(f, m, found);
            let a2 = take_to_mem(a, m, found);
            App(f2, a2)
        }
        DepLambda(x, b) => DepLambda(x.clone(), take_to_mem(b, m, found)),
        DepApp(f, t) => DepApp(take_to_mem(f, m, found), t.clone()),
        Annot(b, t) => Annot(take_to_mem(b, m, found), t.clone()),
    };
    Expr::new(kind, e.span())
}

/// `b` with every sub-expression equal to `e` (up to bound names) replaced by `by`,
/// except under binders that capture a free variable of `e`.
fn replace_all(b: &Expr, e: &Expr, by: &Expr) -> Expr {
    if b.alpha_eq(e) {
        return by.clone();
    }
    use ExprKind::*;
    let kind = match b.kind() {
        Var(_) | Lit(_) | Prim(_) | Foreign(_) => return b.clone(),
        Lambda(x, t, body) => {
            if e.free_vars().contains(x) {
                return b.clone();
            }
            Lambda(x.clone(), t.clone(), replace_all(body, e, by))
        }
        App(f, a) => App(replace_all(f, e, by), replace_all(a, e, by)),
        DepLambda(x, body) => DepLambda(x.clone(), replace_all(body, e, by)),
        DepApp(f, t) => DepApp(replace_all(f, e, by), t.clone()),
        Annot(body, t) => Annot(replace_all(body, e, by), t.clone()),
    };
    b.rebuild(kind)
}
