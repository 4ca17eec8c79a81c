//! Lowering rules (ICFP'20 §5.1; RISE & Shine §III-C): the choices that turn
//! high-level patterns into low-level ones — sequential, parallel, unrolled,
//! vectorized loops, the OpenCL and CUDA parallel hierarchies, and memory. Their
//! equations are their rows in [`super::RULES`].

use super::rise_rule;
use crate::term::no;
use crate::S;
use elevate::rule;
use rise::builder::*;
use rise::{AddrSpace, DataType, Expr, ExprKind, Prim, TypeArg};

/// A rule replacing the primitive node `p` by `to(p)`, keeping its type (the
/// lowered forms share the schemes of what they lower).
fn swap_prim(name: String, to: impl Fn(Prim) -> Option<Prim> + Send + Sync + 'static) -> S {
    rule(name, move |e: &Expr, _| match e.kind() {
        ExprKind::Prim(p) => match to(*p) {
            Some(q) => Ok(e.rebuild(ExprKind::Prim(q))),
            None => no(),
        },
        _ => no(),
    })
}

/// A rule replacing `map` by `target`.
fn lower_map(name: String, target: Prim) -> S {
    swap_prim(name, move |p| (p == Prim::Map).then_some(target))
}

/// A rule replacing `map` by the map of dimension `d` among `by_dim` (a rule that
/// never applies when there is no such dimension).
fn lower_map_in(name: String, by_dim: [Prim; 3], d: usize) -> S {
    let target = by_dim.get(d).copied();
    swap_prim(name, move |p| target.filter(|_| p == Prim::Map))
}

pub(super) fn parallel(name: String) -> S {
    lower_map(name, Prim::MapPar)
}

pub(super) fn to_map_seq(name: String) -> S {
    lower_map(name, Prim::MapSeq)
}

/// The inverse of `toMapSeq`: a sequential loop that is to be lowered again (the
/// parallel store-every-stage schedules run the outermost loop of each stage in parallel
/// after `lowerToC` has made every loop that writes memory sequential).
pub(super) fn to_map(name: String) -> S {
    swap_prim(name, |p| (p == Prim::MapSeq).then_some(Prim::Map))
}

pub(super) fn to_reduce_seq(name: String) -> S {
    swap_prim(name, |p| (p == Prim::Reduce).then_some(Prim::ReduceSeq))
}

pub(super) fn unroll(name: String) -> S {
    swap_prim(name, |p| match p {
        Prim::Map | Prim::MapSeq => Some(Prim::MapSeqUnroll),
        Prim::Reduce | Prim::ReduceSeq => Some(Prim::ReduceSeqUnroll),
        _ => None,
    })
}

/// The value of `e` is written to memory in the address space `a` and read from
/// there.
pub(super) fn to_mem(name: String, a: AddrSpace) -> S {
    rise_rule(name, move |e, names| {
        e.ty()?.as_data()?;
        let x = names.fresh("mem");
        Some(app2(
            dep_app(prim(Prim::ToMem), TypeArg::AddrSpace(a.clone())),
            e.clone(),
            lambda(&x, var(&x)),
        ))
    })
}

/// An array copied element by element by a map of the identity, so that the copy is
/// a loop that later rules can vectorize or unroll (the copy in and out of a register
/// block's private accumulator, say).
pub(super) fn copy_array(name: String) -> S {
    rise_rule(name, move |e, names| {
        let DataType::Array(..) = e.ty()?.as_data()? else {
            return None;
        };
        let x = names.fresh("x");
        Some(app(map(lambda(&x, var(&x))), e.clone()))
    })
}

pub(super) fn to_map_global(name: String, d: usize) -> S {
    use Prim::*;
    lower_map_in(name, [MapGlobal0, MapGlobal1, MapGlobal2], d)
}

pub(super) fn to_map_work_group(name: String, d: usize) -> S {
    use Prim::*;
    lower_map_in(name, [MapWorkGroup0, MapWorkGroup1, MapWorkGroup2], d)
}

pub(super) fn to_map_local(name: String, d: usize) -> S {
    use Prim::*;
    lower_map_in(name, [MapLocal0, MapLocal1, MapLocal2], d)
}

pub(super) fn to_map_block(name: String, d: usize) -> S {
    use Prim::*;
    lower_map_in(name, [MapBlock0, MapBlock1, MapBlock2], d)
}

pub(super) fn to_map_thread(name: String, d: usize) -> S {
    use Prim::*;
    lower_map_in(name, [MapThread0, MapThread1, MapThread2], d)
}

pub(super) fn to_map_warp(name: String) -> S {
    lower_map(name, Prim::MapWarp)
}

pub(super) fn to_map_lane(name: String) -> S {
    lower_map(name, Prim::MapLane)
}

pub(super) fn to_map_warp_group(name: String) -> S {
    lower_map(name, Prim::MapWarpGroup)
}
