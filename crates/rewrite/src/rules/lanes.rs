//! A warp's row kept by its lanes (issue 27; the registers of PyTorch's and Apex's
//! warp-per-row softmax): a row of `n = 32·k` elements (`k` a constant) read once into
//! private memory `32.k`, lane `l` keeping the elements `l, l+32, ...` (`transpose (split
//! 32 row)`, whose outer dimension is the lane), and every pass over the row reading that
//! copy. The code generator keeps private memory whose leading dimension of 32 is
//! indexed by the lane as `k` registers per lane (`codegen::lower`).
//!
//! * [`lane_registers`](super::lane_registers) (`laneRegisters`): the copy, at a function
//!   of a row;
//! * [`lane_rows`](super::lane_rows) (`laneRows`): a `mapLane` over the row read as
//!   `join (transpose r)` runs over the 32 rows of `r` instead, each lane its own;
//! * [`store_by_lanes`](super::store_by_lanes) (`storeByLanes`): a stored array computed
//!   that way (softmax's exponentials) is stored as the lanes' rows, in private memory.
//!
//! Every rule is an equation on values (its row in [`super::RULES`]); the interpreter
//! agrees on both sides (tests).

use crate::term::{applied, array, as_lambda, finish, no, prim_app, retype_under, substitute};
use crate::S;
use elevate::{rule, Failure};
use rise::builder::*;
use rise::{AddrSpace, Expr, ExprKind, Prim, TypeArg};

/// The most elements a lane keeps (`k`): 64 registers of a row of 2048 elements, and as
/// many again for a stored array (softmax's exponentials) stay below CUDA's 255 registers
/// per thread.
pub const MAX_LANE_ELEMENTS: i64 = 64;

/// `k` for a row of `n = 32·k` elements, `n` a constant; why not otherwise.
fn lane_elements(name: &str, n: &arith::Nat) -> Result<i64, Failure<Expr>> {
    match n.as_cst() {
        Some(v) if v > 0 && v % 32 == 0 && v / 32 <= MAX_LANE_ELEMENTS => Ok(v / 32),
        _ => Err(Failure::not_applicable_because(format!(
            "{name}: the row has {n} elements, not a constant multiple of 32 of at most {} \
             (each of the 32 lanes keeps its n/32 elements in registers; give the \
             definition a constant row length, or use rowsNormWarp)",
            32 * MAX_LANE_ELEMENTS
        ))),
    }
}

/// `fun row => B ↦ fun row => toMem private (mapLane (fun p => mapSeq (fun x => x) p)
/// (transpose (split 32 row))) (fun r => B[join (transpose r)/row])`.
pub(super) fn lane_registers(name: String) -> S {
    rule(name.clone(), move |e: &Expr, ctx| {
        let Some((row, body)) = as_lambda(e) else {
            return no();
        };
        let Some(row_ty) = e.ty().and_then(|t| match t {
            rise::Type::Fun(a, _) => Some(a.as_ref()),
            _ => None,
        }) else {
            return no();
        };
        let Some((n, _)) = array(row_ty) else {
            return no();
        };
        lane_elements(&name, n)?;
        let (p, x, r) = (
            ctx.env.fresh("part"),
            ctx.env.fresh("x"),
            ctx.env.fresh("lanes"),
        );
        let copy = app2(
            prim(Prim::MapLane),
            lambda(&p, app2(prim(Prim::MapSeq), lambda(&x, var(&x)), var(&p))),
            app(transpose(), app(split(32), var(row))),
        );
        let read = app(join(), app(transpose(), var(&r)));
        let replaced = substitute(body, row, &read, &mut ctx.env);
        let rhs = lambda(
            row,
            app2(
                dep_app(prim(Prim::ToMem), TypeArg::AddrSpace(AddrSpace::Private)),
                copy,
                lambda(&r, retype_under(&r, &replaced)),
            ),
        );
        finish(rhs, e)
    })
}

/// `xs` of `join (transpose xs)` where `xs : 32.k.t` (`k` a constant).
fn lanes_of(e: &Expr) -> Option<&Expr> {
    let (_, j) = applied(e, |p| p == Prim::Join, 1)?;
    let (_, t) = applied(j[0], |p| p == Prim::Transpose, 1)?;
    let (m, inner) = array(t[0].ty()?)?;
    let (k, _) = match inner {
        rise::DataType::Array(k, d) => Some((k, d)),
        _ => None,
    }?;
    (m.as_cst() == Some(32) && k.as_cst().is_some()).then_some(t[0])
}

/// `mapLane f (join (transpose xs)) ↦ join (transpose (mapLane (fun p => mapSeq f p)
/// xs))` (`xs : 32.k.t`).
pub(super) fn lane_rows(name: String) -> S {
    rule(name, move |e: &Expr, ctx| {
        let Some((_, args)) = applied(e, |p| p == Prim::MapLane, 2) else {
            return no();
        };
        let Some(xs) = lanes_of(args[1]) else {
            return no();
        };
        let p = ctx.env.fresh("part");
        let rows = app2(
            prim(Prim::MapLane),
            lambda(&p, app2(prim(Prim::MapSeq), args[0].clone(), var(&p))),
            xs.clone(),
        );
        finish(app(join(), app(transpose(), rows)), e)
    })
}

/// `toMem a C[join (transpose xs)] (fun v => B) ↦ toMem private C[xs] (fun w =>
/// B[join (transpose w)/v])` (`xs : 32.k.t`; `C` a chain of `let` bodies).
pub(super) fn store_by_lanes(name: String) -> S {
    rule(name, move |e: &Expr, ctx| {
        let Some(a) = prim_app(e).filter(|a| a.prim == Prim::ToMem && a.args.len() == 2) else {
            return no();
        };
        let (value, then) = (a.args[0], a.args[1]);
        let Some((v, body)) = as_lambda(then) else {
            return no();
        };
        let Some(stored) = without_lanes_view(value) else {
            return no();
        };
        let w = ctx.env.fresh("lanes");
        let read = app(join(), app(transpose(), var(&w)));
        let replaced = substitute(body, v, &read, &mut ctx.env);
        let rhs = app2(
            dep_app(prim(Prim::ToMem), TypeArg::AddrSpace(AddrSpace::Private)),
            stored,
            lambda(&w, retype_under(&w, &replaced)),
        );
        finish(rhs, e)
    })
}

/// `C[xs]` for `C[join (transpose xs)]`, `C` a chain of `let` bodies (their values and
/// bound variables as they were; the bodies typed again).
fn without_lanes_view(value: &Expr) -> Option<Expr> {
    if let Some(xs) = lanes_of(value) {
        return Some(xs.clone());
    }
    let a = prim_app(value).filter(|a| a.prim == Prim::Let && a.args.len() == 2)?;
    let (h, body) = as_lambda(a.args[1])?;
    let inner = without_lanes_view(body)?;
    let untyped = Expr::new(
        ExprKind::Lambda(h.clone(), None, retype_under(h, &inner)),
        a.args[1].span(),
    );
    Some(app2(prim(Prim::Let), a.args[0].clone(), untyped))
}
