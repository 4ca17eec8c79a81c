//! Fireiron's refinements of a tile moved into local memory (Hagedorn et al., PACT'20;
//! `mmaLarge` and `mmaWide` in examples/fireiron.elv): how the work-group copies a tile,
//! in which layout the tile lies in local memory, and when the copies run.
//!
//! * [`copy_vectors_by_threads`](super::copy_vectors_by_threads)
//!   (`copyVectorsByThreads(p, v, r)`): `copyByThreads(p)` with every thread moving `v`
//!   elements at a time (16 bytes of `f16`: one `uint4` load and store per copy), the
//!   threads walking the tile in blocks of `r` rows.
//! * [`store_transposed`](super::store_transposed) (`storeTransposed`) and
//!   [`store_rotated`](super::store_rotated) (`storeRotated(r)`): Fireiron's `swizzle`, a
//!   value stored in another layout and read back through its inverse (a tile of `a` in
//!   chunks of 8 consecutive k, the rows of a tile of `b` rotated by their number), so that
//!   the warps' fragment loads hit distinct banks.
//! * [`pipeline_copies`](super::pipeline_copies) (`pipelineCopies(s)`): Fireiron's
//!   `prefetch`, a reduction whose step begins with its copies into local memory becoming
//!   `reduceSeqPipelined(s)`, the copies of the next steps in flight while a step computes.
//!
//! Each rule is an equation on values; the interpreter agrees on both sides (tests/rules.rs).

use crate::term::{applied, as_lambda, finish, no, occurs, prim_app};
use crate::S;
use arith::Nat;
use elevate::{rule, Failure};
use rise::builder::*;
use rise::types::{NatToNat, TypeArg};
use rise::{AddrSpace, DataType, Expr, Prim, Type};

/// The refusal of rule `name`, with the reason.
fn refuse<T>(name: &str, why: String) -> Result<T, Failure<Expr>> {
    Err(Failure::not_applicable_because(format!("{name}: {why}")))
}

/// A tile `n x c` of scalars with constant sizes, or the refusal saying why not.
fn constant_tile(name: &str, e: &Expr) -> Result<Option<(i64, i64)>, Failure<Expr>> {
    let Some(Type::Data(DataType::Array(rows, inner))) = e.ty() else {
        return Ok(None);
    };
    let DataType::Array(cols, elem) = &**inner else {
        return Ok(None);
    };
    if !matches!(**elem, DataType::Scalar(_)) {
        return Ok(None);
    }
    match (rows.as_cst(), cols.as_cst()) {
        (Some(n), Some(c)) => Ok(Some((n, c))),
        _ => refuse(
            name,
            format!(
                "the tile is {rows}x{cols}, not of a constant size (tile the result and split \
                 the reduction first)"
            ),
        ),
    }
}

/// Work-item `i` of a 1-D work-group of `p` copies the vectors `i`, `i+p`, ... of the tile
/// (`v` elements each) into local memory, the tile taken in blocks of `r` rows (a block's
/// first column of vectors, its second, ...; `r = 1`: row by row), and the copy is read back
/// as scalars. With `r` rows of `v` elements a block, neighbouring threads read `r` rows of a
/// global tile at once and write consecutive vectors of a layout that stores the vectors
/// column by column (`storeTransposed`).
pub(super) fn copy_vectors_by_threads(name: String, p: i64, v: i64, r: i64) -> S {
    rule(name.clone(), move |e: &Expr, ctx| {
        let Some((n, c)) = constant_tile(&name, e)? else {
            return no();
        };
        if c % v != 0 {
            return refuse(
                &name,
                format!("the tile's rows of {c} are not vectors of {v}"),
            );
        }
        if n % r != 0 {
            return refuse(&name, format!("the tile's {n} rows are not blocks of {r}"));
        }
        let vectors = n * (c / v);
        if vectors % p != 0 {
            return refuse(
                &name,
                format!(
                    "the tile is {n}x{c}, {vectors} vectors of {v}, which {p} threads do not \
                     share evenly"
                ),
            );
        }
        let (x, s) = (ctx.env.fresh("x"), ctx.env.fresh("s"));
        let vectors_of = app(map(as_vector(v)), e.clone());
        // the order the threads copy in, and back to the tile's rows of vectors
        let in_order = if r == 1 {
            app(join(), vectors_of)
        } else {
            let blocks = app(map(transpose()), app(split(r), vectors_of));
            app(join(), app(join(), blocks))
        };
        let as_rows = |xs: Expr| {
            if r == 1 {
                app(split(c / v), xs)
            } else {
                let blocks = app(split(c / v), app(split(r), xs));
                app(join(), app(map(transpose()), blocks))
            }
        };
        let spread = app(transpose(), app(split(p), in_order));
        let copied = app(
            map_with(Prim::MapLocal0, map_seq(lambda(&x, var(&x)))),
            spread,
        );
        let back = as_rows(app(join(), app(transpose(), copied)));
        let stored = to_mem(AddrSpace::Local, back, lambda(&s, var(&s)));
        finish(app(map(as_scalar()), stored), e)
    })
}

/// `toMem a e (fun s => s)`: the address space and the stored value.
fn plain_store(e: &Expr) -> Option<(AddrSpace, &Expr)> {
    let a = prim_app(e)?;
    if a.prim != Prim::ToMem || a.args.len() != 2 {
        return None;
    }
    let (x, body) = as_lambda(a.args[1])?;
    if !crate::term::is_var(body, x) {
        return None;
    }
    let addr = a.type_args.iter().find_map(|t| match t {
        TypeArg::AddrSpace(s) => Some(s.clone()),
        _ => None,
    })?;
    Some((addr, a.args[0]))
}

/// `toMem a (X : n.m.t) (fun s => s) ↦ transpose (toMem a (transpose X) (fun s => s))`: the
/// value stored column by column and read back transposed.
pub(super) fn store_transposed(name: String) -> S {
    rule(name, move |e: &Expr, ctx| {
        let Some((addr, stored)) = plain_store(e) else {
            return no();
        };
        let Some(Type::Data(DataType::Array(_, inner))) = stored.ty() else {
            return no();
        };
        if !matches!(**inner, DataType::Array(..)) {
            return no();
        }
        let s = ctx.env.fresh("s");
        let columns = app(transpose(), stored.clone());
        let back = to_mem(addr, columns, lambda(&s, var(&s)));
        finish(app(transpose(), back), e)
    })
}

/// `toMem a (X : n.w.t) (fun s => s) ↦ split w (reorder g f (toMem a (reorder f g (join X))
/// (fun s => s)))`: row `q` stored rotated by `q mod r` places, read back through the
/// inverse rotation.
pub(super) fn store_rotated(name: String, r: i64) -> S {
    rule(name.clone(), move |e: &Expr, ctx| {
        let Some((addr, stored)) = plain_store(e) else {
            return no();
        };
        let Some(Type::Data(DataType::Array(_, inner))) = stored.ty() else {
            return no();
        };
        let DataType::Array(w, _) = &**inner else {
            return no();
        };
        let Some(width) = w.as_cst() else {
            return refuse(&name, format!("the rows' length {w} is not a constant"));
        };
        if r > width {
            return refuse(
                &name,
                format!("rows of {width} cannot be rotated by up to {r} places"),
            );
        }
        let to_place = rotation(ctx.env.fresh("p"), width, r, true);
        let from_place = rotation(ctx.env.fresh("i"), width, r, false);
        let reorder = |f: &NatToNat, g: &NatToNat, xs: Expr| {
            let head = dep_app(
                dep_app(prim(Prim::Reorder), TypeArg::NatToNat(f.clone())),
                TypeArg::NatToNat(g.clone()),
            );
            app(head, xs)
        };
        let s = ctx.env.fresh("s");
        let rotated = reorder(&to_place, &from_place, app(join(), stored.clone()));
        let back = to_mem(addr, rotated, lambda(&s, var(&s)));
        let read = reorder(&from_place, &to_place, back);
        finish(app(split(width), read), e)
    })
}

/// Within rows of `w`, the place `p` of row `q = p / w` moved `q mod r` places: left
/// (`(p/w)·w + (p mod w + w − q mod r) mod w`, what a stored element reads) or right
/// (`(p/w)·w + (p mod w + q mod r) mod w`, where an element is stored).
fn rotation(name: rise::types::Name, w: i64, r: i64, left: bool) -> NatToNat {
    let p = arith::Var::new(name);
    let (at, w, r) = (Nat::var(&p), Nat::cst(w), Nat::cst(r));
    let row = at.floor_div(&w);
    let turn = row.modulo(&r);
    let shifted = if left {
        at.modulo(&w) + w.clone() - turn
    } else {
        at.modulo(&w) + turn
    };
    NatToNat::Lambda(p, row * w.clone() + shifted.modulo(&w))
}

/// `reduceSeq (fun acc x => toMem local E (fun m => B)) init xs ↦ reduceSeqPipelined(s) (fun
/// acc x => toMem local E (fun m => B)) init xs`: the same reduction, whose copies of element
/// `i + s − 1` into local memory run while element `i` computes (CUDA's cp.async; the code
/// generator refuses copies that compute or read more than `x`).
pub(super) fn pipeline_copies(name: String, s: i64) -> S {
    rule(name.clone(), move |e: &Expr, _| {
        let Some((_, args)) = applied(e, |p| p == Prim::ReduceSeq, 3) else {
            return no();
        };
        let pipelined = match s {
            2 => Prim::ReduceSeqPipelined2,
            3 => Prim::ReduceSeqPipelined3,
            4 => Prim::ReduceSeqPipelined4,
            _ => return refuse(&name, "2, 3 or 4 stages are supported".into()),
        };
        let step = args[0];
        let copies = as_lambda(step)
            .and_then(|(acc, b)| Some((acc, as_lambda(b)?.1)))
            .and_then(|(acc, body)| Some((acc, prim_app(body)?)))
            .filter(|(_, t)| t.prim == Prim::ToMem && t.args.len() == 2);
        let Some((acc, first)) = copies else {
            return refuse(
                &name,
                "the step does not begin with a copy into local memory (`fun acc x => toMem \
                 local (copy of x) (fun tile => ...)`: move the operands first)"
                    .into(),
            );
        };
        let local = first
            .type_args
            .iter()
            .any(|t| matches!(t, TypeArg::AddrSpace(AddrSpace::Local)));
        if !local || occurs(acc, first.args[0]) {
            return refuse(
                &name,
                "the step's first copy is not into local memory or reads the accumulator".into(),
            );
        }
        let rebuilt = apps(
            prim(pipelined),
            args.iter().map(|a| (*a).clone()).collect::<Vec<_>>(),
        );
        finish(rebuilt, e)
    })
}
