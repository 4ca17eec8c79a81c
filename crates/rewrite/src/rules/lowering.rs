//! Lowering rules (ICFP'20 §5.1; RISE & Shine §III-C): the choices that turn
//! high-level patterns into low-level ones — sequential, parallel, unrolled,
//! vectorized loops, the OpenCL and CUDA parallel hierarchies, and memory.

use super::rise_rule;
use crate::S;
use elevate::rule;
use rise::builder::*;
use rise::{AddrSpace, Expr, ExprKind, Prim, TypeArg};

/// A rule replacing the primitive node `from(p)` by `to(p)`, keeping its type
/// (the lowered forms share the schemes of what they lower).
fn swap_prim(name: String, to: impl Fn(Prim) -> Option<Prim> + Send + Sync + 'static) -> S {
    rule(name, move |e: &Expr, _| match e.kind() {
        ExprKind::Prim(p) => match to(*p) {
            Some(q) => Ok(e.rebuild(ExprKind::Prim(q))),
            None => crate::term::no(),
        },
        _ => crate::term::no(),
    })
}

/// `parallel`: `map ~> mapPar`
pub fn parallel() -> S {
    swap_prim("parallel".into(), |p| {
        (p == Prim::Map).then_some(Prim::MapPar)
    })
}

/// `toMapSeq`: `map ~> mapSeq`
pub fn to_map_seq() -> S {
    swap_prim("toMapSeq".into(), |p| {
        (p == Prim::Map).then_some(Prim::MapSeq)
    })
}

/// `toReduceSeq`: `reduce ~> reduceSeq`
pub fn to_reduce_seq() -> S {
    swap_prim("toReduceSeq".into(), |p| {
        (p == Prim::Reduce).then_some(Prim::ReduceSeq)
    })
}

/// `unroll`: `map ~> mapSeqUnroll`, `reduce ~> reduceSeqUnroll`, `reduceSeq ~> reduceSeqUnroll`
pub fn unroll() -> S {
    swap_prim("unroll".into(), |p| match p {
        Prim::Map | Prim::MapSeq => Some(Prim::MapSeqUnroll),
        Prim::Reduce | Prim::ReduceSeq => Some(Prim::ReduceSeqUnroll),
        _ => None,
    })
}

/// The OpenCL and CUDA levels of parallelism a `map` can be lowered to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// OpenCL global threads (`mapGlobal(d)`).
    Global,
    /// OpenCL work-groups (`mapWorkGroup(d)`).
    WorkGroup,
    /// OpenCL work-items of a work-group (`mapLocal(d)`).
    Local,
    /// CUDA blocks of the grid (`mapBlock(d)`).
    Block,
    /// CUDA threads of a block (`mapThread(d)`).
    Thread,
    /// CUDA warps of a block (`mapWarp`).
    Warp,
    /// CUDA lanes of a warp (`mapLane`).
    Lane,
}

impl Level {
    /// The low-level map of this level in dimension `d` (0, 1 or 2).
    pub fn prim(self, d: usize) -> Option<Prim> {
        use Prim::*;
        let by_dim = |ps: [Prim; 3]| ps.get(d).copied();
        match self {
            Level::Global => by_dim([MapGlobal0, MapGlobal1, MapGlobal2]),
            Level::WorkGroup => by_dim([MapWorkGroup0, MapWorkGroup1, MapWorkGroup2]),
            Level::Local => by_dim([MapLocal0, MapLocal1, MapLocal2]),
            Level::Block => by_dim([MapBlock0, MapBlock1, MapBlock2]),
            Level::Thread => by_dim([MapThread0, MapThread1, MapThread2]),
            Level::Warp => (d == 0).then_some(MapWarp),
            Level::Lane => (d == 0).then_some(MapLane),
        }
    }

    /// The rule's name (`toMapGlobal`).
    pub fn rule_name(self) -> &'static str {
        match self {
            Level::Global => "toMapGlobal",
            Level::WorkGroup => "toMapWorkGroup",
            Level::Local => "toMapLocal",
            Level::Block => "toMapBlock",
            Level::Thread => "toMapThread",
            Level::Warp => "toMapWarp",
            Level::Lane => "toMapLane",
        }
    }
}

/// `toMapGlobal(d)`, `toMapWorkGroup(d)`, ...: `map ~> mapGlobal(d)` and so on.
/// `None` when the level has no dimension `d`.
pub fn to_map_level(level: Level, d: usize) -> Option<S> {
    let target = level.prim(d)?;
    let name = match level {
        Level::Warp | Level::Lane => level.rule_name().to_string(),
        _ => format!("{}({d})", level.rule_name()),
    };
    Some(swap_prim(name, move |p| (p == Prim::Map).then_some(target)))
}

/// `toMem(a)`: `e ~> toMem a e (fun x => x)`: the value of `e` is written to
/// memory in the address space `a` and read from there.
pub fn to_mem(a: AddrSpace) -> S {
    rise_rule(format!("toMem({a})"), move |e, names| {
        e.ty()?.as_data()?;
        let x = names.fresh("mem");
        Some(app2(
            dep_app(prim(Prim::ToMem), TypeArg::AddrSpace(a.clone())),
            e.clone(),
            lambda(&x, var(&x)),
        ))
    })
}
