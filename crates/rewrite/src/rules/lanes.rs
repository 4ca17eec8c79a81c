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
//! A work-group's row kept by its work-items (issue 27, rows too long for a warp's
//! registers): a row of `n = b·k` elements read once into private memory `(b/32).32.k`,
//! work-item `i` (warp `⌊i/32⌋`, lane `i mod 32`) keeping the elements `i, i+b, ...`
//! (`split 32 (transpose (split b row))`), read back as `join (transpose (join r))`. The
//! code generator keeps private memory whose leading dimensions (warps, 32) are indexed
//! by the warp and the lane as `k` registers per work-item.
//!
//! * [`group_registers`](super::group_registers) (`groupRegisters(b)`): the copy;
//! * [`group_rows`](super::group_rows) (`groupRows`): a map spread over the work-items
//!   (`mapLocal(0)`) over the row read as `join (transpose (join r))` runs over their own
//!   rows;
//! * [`store_by_group`](super::store_by_group) (`storeByGroup`): a stored array computed
//!   that way is stored as the work-items' rows, in private memory.
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

/// The most work-items a work-group keeping a row has: the 32 warps of a CUDA block.
pub const MAX_GROUP_SIZE: i64 = 1024;

/// Who keeps a row in registers: the 32 lanes of a warp (private memory `32.k`, the row
/// read as `join (transpose r)`), or the `w` warps of 32 lanes of a work-group (private
/// memory `w.32.k`, the row read as `join (transpose (join r))`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Keepers {
    Lanes,
    Group,
}

impl Keepers {
    /// The row that private memory `r` holds (its view).
    fn row(self, r: Expr) -> Expr {
        match self {
            Keepers::Lanes => app(join(), app(transpose(), r)),
            Keepers::Group => app(join(), app(transpose(), app(join(), r))),
        }
    }

    /// `r` of the row view of `r` (`join (transpose r)`, `r : 32.k.t`; or `join
    /// (transpose (join r))`, `r : w.32.k.t`; `w` and `k` constants).
    fn kept(self, e: &Expr) -> Option<&Expr> {
        let (_, j) = applied(e, |p| p == Prim::Join, 1)?;
        let (_, t) = applied(j[0], |p| p == Prim::Transpose, 1)?;
        let rows = match self {
            Keepers::Lanes => t[0],
            Keepers::Group => applied(t[0], |p| p == Prim::Join, 1)?.1[0],
        };
        // the keepers' dimensions (32, or w and 32), then each one's row, all constants
        let dims = match self {
            Keepers::Lanes => 2,
            Keepers::Group => 3,
        };
        let mut sizes = Vec::new();
        let mut ty = match rows.ty()? {
            rise::Type::Data(d) => d,
            _ => return None,
        };
        while let (rise::DataType::Array(n, d), true) = (ty, sizes.len() < dims) {
            sizes.push(n.as_cst()?);
            ty = d;
        }
        (sizes.len() == dims && sizes[dims - 2] == 32).then_some(rows)
    }

    /// Every keeper computing its own row of `rows` by `f`: `mapLane (fun p => mapSeq f
    /// p) rows`, or `mapWarp (fun ws => mapLane (fun p => mapSeq f p) ws) rows`.
    fn map_rows(self, f: Expr, rows: Expr, env: &mut rise::NameGen) -> Expr {
        let p = env.fresh("part");
        let lanes = |ws: Expr| {
            app2(
                prim(Prim::MapLane),
                lambda(&p, app2(prim(Prim::MapSeq), f.clone(), var(&p))),
                ws,
            )
        };
        match self {
            Keepers::Lanes => lanes(rows),
            Keepers::Group => {
                let ws = env.fresh("lanes");
                app2(prim(Prim::MapWarp), lambda(&ws, lanes(var(&ws))), rows)
            }
        }
    }
}

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

/// `k` for a row of `n = b·k` elements kept by a work-group of `b` work-items (`n` a
/// constant, `b` a multiple of 32 of at most 1024, `k` at most 64); why not otherwise.
fn group_elements(name: &str, n: &arith::Nat, b: i64) -> Result<i64, Failure<Expr>> {
    if !(32..=MAX_GROUP_SIZE).contains(&b) || b % 32 != 0 {
        return Err(Failure::not_applicable_because(format!(
            "{name}: a work-group of {b} work-items is not a whole number of warps of at most \
             {MAX_GROUP_SIZE} work-items (b a multiple of 32 up to {MAX_GROUP_SIZE})"
        )));
    }
    match n.as_cst() {
        Some(v) if v > 0 && v % b == 0 && v / b <= MAX_LANE_ELEMENTS => Ok(v / b),
        _ => Err(Failure::not_applicable_because(format!(
            "{name}: the row has {n} elements, not a constant multiple of {b} of at most {} \
             (each of the {b} work-items keeps its n/{b} elements in registers; give the \
             definition a constant row length, or use rowsNorm)",
            b * MAX_LANE_ELEMENTS
        ))),
    }
}

/// `fun row => B ↦ fun row => toMem private (mapLane (fun p => mapSeq (fun x => x) p)
/// (transpose (split 32 row))) (fun r => B[join (transpose r)/row])`.
pub(super) fn lane_registers(name: String) -> S {
    registers(name, Keepers::Lanes, 32)
}

/// `fun row => B ↦ fun row => toMem private (mapWarp (fun ws => mapLane (fun p => mapSeq
/// (fun x => x) p) ws) (split 32 (transpose (split b row)))) (fun r => B[join (transpose
/// (join r))/row])`.
pub(super) fn group_registers(name: String, b: i64) -> S {
    registers(name, Keepers::Group, b)
}

/// The copy of a row into the registers of `b` keepers (lanes or work-items).
fn registers(name: String, keepers: Keepers, b: i64) -> S {
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
        let parts = match keepers {
            Keepers::Lanes => {
                lane_elements(&name, n)?;
                app(transpose(), app(split(32), var(row)))
            }
            Keepers::Group => {
                group_elements(&name, n, b)?;
                app(split(32), app(transpose(), app(split(b), var(row))))
            }
        };
        let x = ctx.env.fresh("x");
        let copy = keepers.map_rows(lambda(&x, var(&x)), parts, &mut ctx.env);
        let r = ctx.env.fresh(match keepers {
            Keepers::Lanes => "lanes",
            Keepers::Group => "kept",
        });
        let replaced = substitute(body, row, &keepers.row(var(&r)), &mut ctx.env);
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

/// `mapLane f (join (transpose xs)) ↦ join (transpose (mapLane (fun p => mapSeq f p)
/// xs))` (`xs : 32.k.t`).
pub(super) fn lane_rows(name: String) -> S {
    rows(name, Keepers::Lanes, Prim::MapLane)
}

/// `mapLocal(0) f (join (transpose (join xs))) ↦ join (transpose (join (mapWarp (fun ws
/// => mapLane (fun p => mapSeq f p) ws) xs)))` (`xs : w.32.k.t`).
pub(super) fn group_rows(name: String) -> S {
    rows(name, Keepers::Group, Prim::MapLocal0)
}

/// A map of kind `map` over the row the keepers hold, run by each over its own row.
fn rows(name: String, keepers: Keepers, map: Prim) -> S {
    rule(name, move |e: &Expr, ctx| {
        let Some((_, args)) = applied(e, |p| p == map, 2) else {
            return no();
        };
        let Some(xs) = keepers.kept(args[1]) else {
            return no();
        };
        let rows = keepers.map_rows(args[0].clone(), xs.clone(), &mut ctx.env);
        finish(keepers.row(rows), e)
    })
}

/// `toMem a C[join (transpose xs)] (fun v => B) ↦ toMem private C[xs] (fun w =>
/// B[join (transpose w)/v])` (`xs : 32.k.t`; `C` a chain of `let` bodies).
pub(super) fn store_by_lanes(name: String) -> S {
    store_kept(name, Keepers::Lanes)
}

/// `toMem a C[join (transpose (join xs))] (fun v => B) ↦ toMem private C[xs] (fun w =>
/// B[join (transpose (join w))/v])` (`xs : w.32.k.t`; `C` a chain of `let` bodies).
pub(super) fn store_by_group(name: String) -> S {
    store_kept(name, Keepers::Group)
}

/// A stored array that the keepers computed, stored as their rows in private memory.
fn store_kept(name: String, keepers: Keepers) -> S {
    rule(name, move |e: &Expr, ctx| {
        let Some(a) = prim_app(e).filter(|a| a.prim == Prim::ToMem && a.args.len() == 2) else {
            return no();
        };
        let (value, then) = (a.args[0], a.args[1]);
        let Some((v, body)) = as_lambda(then) else {
            return no();
        };
        let Some(stored) = without_view(keepers, value) else {
            return no();
        };
        let w = ctx.env.fresh("kept");
        let replaced = substitute(body, v, &keepers.row(var(&w)), &mut ctx.env);
        let rhs = app2(
            dep_app(prim(Prim::ToMem), TypeArg::AddrSpace(AddrSpace::Private)),
            stored,
            lambda(&w, retype_under(&w, &replaced)),
        );
        finish(rhs, e)
    })
}

/// `C[xs]` for `C[V xs]` (`V` the keepers' row view), `C` a chain of `let` bodies (their
/// values and bound variables as they were; the bodies typed again).
fn without_view(keepers: Keepers, value: &Expr) -> Option<Expr> {
    if let Some(xs) = keepers.kept(value) {
        return Some(xs.clone());
    }
    let a = prim_app(value).filter(|a| a.prim == Prim::Let && a.args.len() == 2)?;
    let (h, body) = as_lambda(a.args[1])?;
    let inner = without_view(keepers, body)?;
    let untyped = Expr::new(
        ExprKind::Lambda(h.clone(), None, retype_under(h, &inner)),
        a.args[1].span(),
    );
    Some(app2(prim(Prim::Let), a.args[0].clone(), untyped))
}
