//! The scheduling library (ICFP'20 §5): TVM's scheduling primitives as ELEVATE
//! strategies built from the rules.
//!
//! Loops are applied maps and reductions. The loop at depth `d` of a nest is
//! found by [`at_loop`]: the outermost loop, then the outermost loop inside its
//! body (a map's function body, a reduction operator's body), `d` times.

use crate::normal_forms::{dfnf, seq_dfnf};
use crate::rules::{
    blocked_reduce, layout_fission, map_map_interchange, map_reduce_interchange, split_join,
};
use crate::term::{any_map, any_reduce, applied, as_lambda, finish, no, prim_app};
use crate::traversals::{arg_of_where, body, fmap, function};
use crate::S;
use elevate::{fail, named, rule, top_down, try_, Failure, Traversable};
use rise::builder::*;
use rise::types::Name;
use rise::{AddrSpace, Expr, ExprKind, Prim, TypeArg};

/// `isLoop`: an applied map or reduction, not counting maps that only change
/// the layout of their elements (`map join`, `map transpose`: views).
pub fn is_loop() -> S {
    rule(
        "isLoop",
        |e: &Expr, _| if loop_node(e) { Ok(e.clone()) } else { no() },
    )
}

fn loop_node(e: &Expr) -> bool {
    if applied(e, any_reduce, 3).is_some() {
        return true;
    }
    applied(e, any_map, 2).is_some_and(|(_, args)| !args[0].is_view_function())
}

/// `s` on the body of a loop: the body of a map's function or of a reduction's operator.
pub fn in_loop_body(s: S) -> S {
    let map_body = function(arg_of_where("argOf(map)", any_map, body(s.clone())));
    let reduce_body = function(function(arg_of_where(
        "argOf(reduce)",
        any_reduce,
        body(body(s)),
    )));
    map_body.or(reduce_body)
}

/// `atLoop(d)(s)`: `s` on the loop at depth `d` (0 = outermost) of the first
/// loop nest. Unlike `outermost(isLoop)`, it does not look further when `s`
/// fails there: the location is exactly that loop. Each level is built when the
/// rewrite reaches it (as `mapNest`), so a depth beyond the program's loops fails
/// where the loops end instead of building `d` levels first (`atLoop(4294967296)`
/// overflowed the stack: found by the command-line fuzzer).
pub fn at_loop(d: usize, s: S) -> S {
    if d == 0 {
        return at_first_loop(s);
    }
    let name = format!("{s}");
    named("atLoop", vec![d.to_string(), name], move || {
        at_first_loop(in_loop_body(at_loop(d - 1, s.clone())))
    })
}

/// `s` on the first loop (top-down), descending only towards it.
fn at_first_loop(s: S) -> S {
    elevate::traversal("atFirstLoop", true, s, |s, e: &Expr, ctx| {
        descend_to_first_loop(s, e, ctx)
    })
}

fn descend_to_first_loop(
    s: &S,
    e: &Expr,
    ctx: &mut elevate::Ctx<Expr>,
) -> elevate::RewriteResult<Expr> {
    use elevate::Traversable;
    if loop_node(e) {
        return ctx.apply(s, e);
    }
    for i in 0..e.child_count() {
        let c = e.child(i);
        if first_loop(&c).is_some() {
            let nc = ctx.descend(e.child_label(i), &at_first_loop(s.clone()), &c)?;
            return Ok(e.with_child(i, nc, &mut ctx.env));
        }
    }
    no()
}

/// `split(n)`: `splitJoin(n) <+ blockedReduce(n)` (TVM's `split`, ICFP'20 §5.1).
pub fn split_strategy(n: i64) -> S {
    named("split", vec![n.to_string()], move || {
        split_join(n).or(blocked_reduce(n))
    })
}

/// `interchange(d)`: swaps the loops at depths `d` and `d + 1` (map–map or
/// map–reduce), first moving layout primitives out of the outer loop's body.
pub fn interchange(d: usize) -> S {
    named("interchange", vec![d.to_string()], move || {
        let swap = map_map_interchange().or(map_reduce_interchange());
        let prepare = try_(layout_fission());
        at_loop(
            d,
            prepare.seq(swap.clone().or(crate::traversals::argument(swap))),
        )
    })
}

/// `tileND(ns)`: tiles the outermost `ns.len()` maps of a DFNF map nest with the
/// given tile sizes (ICFP'20 Listing 5): block the inner maps (recursively,
/// through `fmap`), block this one, then interchange to put the tile loops inside.
pub fn tile_nd(ns: Vec<i64>) -> S {
    let printed = format!(
        "[{}]",
        ns.iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    named("tileND", vec![printed], move || match ns.len() {
        0 => elevate::id(),
        1 => dfnf().seq(function(split_join(ns[0]))),
        k => {
            let inner = fmap(tile_nd(ns[1..].to_vec()));
            let outer = function(split_join(ns[0]));
            // After blocking, the nest is o1.i1.o2.i2...: bubble each outer loop
            // o_j (at depth 2j) outward past the inner loops i_1..i_{j-1}.
            let mut swaps: Vec<S> = Vec::new();
            let mut order: Vec<(bool, usize)> =
                (0..k).flat_map(|j| [(true, j), (false, j)]).collect();
            for j in 1..k {
                let mut pos = order.iter().position(|&o| o == (true, j)).expect("present");
                while pos > 0 && !order[pos - 1].0 {
                    swaps.push(interchange(pos - 1));
                    order.swap(pos - 1, pos);
                    pos -= 1;
                }
            }
            swaps.into_iter().fold(
                dfnf().seq(inner).seq(dfnf()).seq(outer).seq(dfnf()),
                seq_dfnf,
            )
        }
    })
}

/// `tile(x, y)`: `tileND([x, y])`.
pub fn tile(x: i64, y: i64) -> S {
    named("tile", vec![x.to_string(), y.to_string()], move || {
        tile_nd(vec![x, y])
    })
}

/// `reorder(perm)`: reorders the loops of the first loop nest; `perm` lists the
/// current loop numbers (from 1, outermost first) in their new order, as
/// ICFP'20 Listing 10 does. Realised as adjacent interchanges.
pub fn reorder(perm: Vec<usize>) -> S {
    let printed = format!(
        "[{}]",
        perm.iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    named("reorder", vec![printed], move || {
        let mut sorted = perm.clone();
        sorted.sort_unstable();
        if sorted != (1..=perm.len()).collect::<Vec<_>>() {
            return fail();
        }
        let mut current: Vec<usize> = (1..=perm.len()).collect();
        let mut s = dfnf();
        for (i, want) in perm.iter().enumerate() {
            let mut pos = current
                .iter()
                .position(|c| c == want)
                .expect("a permutation");
            while pos > i {
                s = seq_dfnf(s, interchange(pos - 1));
                current.swap(pos - 1, pos);
                pos -= 1;
            }
        }
        s
    })
}

/// `lowerToC`: every `reduce` becomes `reduceSeq`; every `map` that computes and
/// whose result is *written* (the program's result, a loop body's result, a
/// reduction's new accumulator, a value stored by `toMem`) becomes `mapSeq`.
/// A computing `map` whose result is only *read* (the input of a loop or of an
/// operation) stays `map`: it is computed where it is read, fused into its
/// reader, as DPIA's functional `map` is (RISE & Shine §V). Maps of view
/// functions stay too: they are index transformations.
pub fn lower_to_c() -> S {
    named("lowerToC", vec![], || {
        // Like `tryAll`, it succeeds when there is nothing (left) to lower.
        rule("lowerToC", |e: &Expr, _| Ok(lower(e, Position::Written)))
    })
}

/// Whether an expression's value is written to memory or read by its context.
#[derive(Clone, Copy, PartialEq)]
enum Position {
    Written,
    Read,
}

fn lower(e: &Expr, pos: Position) -> Expr {
    use Position::*;
    match e.kind() {
        ExprKind::Lambda(x, t, b) => {
            e.rebuild(ExprKind::Lambda(x.clone(), t.clone(), lower(b, pos)))
        }
        ExprKind::DepLambda(x, b) => e.rebuild(ExprKind::DepLambda(x.clone(), lower(b, pos))),
        ExprKind::App(..) | ExprKind::DepApp(..) => {
            let (head, args) = e.spine();
            let values = args
                .iter()
                .filter(|a| matches!(a, rise::expr::Arg::Value(_)))
                .count();
            let (new_head, positions): (Option<Prim>, Vec<Position>) = match head.as_prim() {
                Some(Prim::Map) if values >= 1 => {
                    let computes = args.iter().find_map(|a| match a {
                        rise::expr::Arg::Value(g) => Some(!g.is_view_function()),
                        _ => None,
                    });
                    match (computes, pos) {
                        (Some(true), Written) => (Some(Prim::MapSeq), vec![Written, Read]),
                        (Some(true), Read) => (None, vec![Read, Read]),
                        _ => (None, vec![pos, pos]),
                    }
                }
                Some(p) if p.is_map() && p != Prim::Map => (None, vec![Written, Read]),
                Some(Prim::Reduce) => (Some(Prim::ReduceSeq), vec![Written, Read, Read]),
                Some(p) if p.is_reduce() => (None, vec![Written, Read, Read]),
                // the function writes the accumulator; the result is a loop writing memory
                Some(Prim::ScanSeq) => (None, vec![Written, Read, Read]),
                // the function's result is written, one window after another
                Some(Prim::SlideSeq) => (None, vec![Written, Read]),
                Some(Prim::ToMem) => (None, vec![Written, pos]),
                // `let v f` shares `v` (read where `f` reads it, no memory decision);
                // `f`'s body is the value of the whole
                Some(Prim::Let) => (None, vec![Read, pos]),
                Some(Prim::Iterate) => (None, vec![Written, Read]),
                // the values are written, each to the position its index says
                Some(Prim::Scatter) => (None, vec![Read, Written]),
                Some(
                    Prim::Split
                    | Prim::Join
                    | Prim::Transpose
                    | Prim::AsVector
                    | Prim::AsScalar
                    | Prim::Zip
                    | Prim::MakePair
                    | Prim::Unzip,
                ) => (None, vec![pos; values]),
                _ => (None, vec![Read; values]),
            };
            // a partial application has its first arguments
            let mut positions = positions;
            positions.truncate(values);
            rebuild_spine(
                e,
                &mut positions.into_iter().rev().chain(std::iter::repeat(Read)),
                new_head,
                pos,
            )
        }
        _ => e.clone(),
    }
}

/// Rebuilds an application spine with its value arguments lowered at the given
/// positions (consumed last argument first) and its head primitive replaced.
fn rebuild_spine(
    e: &Expr,
    positions: &mut dyn Iterator<Item = Position>,
    new_head: Option<Prim>,
    pos: Position,
) -> Expr {
    match e.kind() {
        ExprKind::App(f, a) => {
            let p = positions.next().unwrap_or(Position::Read);
            let a = lower(a, p);
            let f = rebuild_spine(f, positions, new_head, pos);
            e.rebuild(ExprKind::App(f, a))
        }
        ExprKind::DepApp(f, t) => e.rebuild(ExprKind::DepApp(
            rebuild_spine(f, positions, new_head, pos),
            t.clone(),
        )),
        ExprKind::Prim(_) => match new_head {
            Some(p) => e.rebuild(ExprKind::Prim(p)),
            None => e.clone(),
        },
        _ => lower(e, pos),
    }
}

/// `storeInMemory(what, how)` (ICFP'20 §6.1): the first sub-expression `e` that
/// `what` holds for (top-down) is computed as `how` says and written to memory
/// (global), and read from there: `p ~> toMem global e' (fun x => p[x/e])`.
/// Only `e` itself is replaced, and the occurrences of the very same term
/// (alpha-equal, with the same free variables in scope): a sibling that `what`
/// also holds for is a different array and stays as it is. A term that uses a
/// variable bound inside `p` cannot be moved out of its binder: the rule does
/// not apply. Layout primitives at the top of `e'` stay views of the stored
/// value, so `permuteB` stores the packed layout.
pub fn store_in_memory(what: S, how: S) -> S {
    let name = format!("storeInMemory({what}, {how})");
    let misses = Misses::default();
    rule(name, move |p: &Expr, ctx| {
        let extracted = extract(&what, p, ctx, &misses)?;
        let outside = p.free_vars();
        if extracted.free_vars().iter().any(|v| !outside.contains(v)) {
            return no();
        }
        let stored = ctx.apply(&how, &extracted)?;
        let (views, stored) = peel_views(&stored, &[Prim::Join, Prim::Transpose]);
        let x = ctx.env.fresh("mem");
        let Some(ty) = stored.ty().cloned() else {
            return no();
        };
        let x_var = Expr::typed(ExprKind::Var(x.clone()), ty, p.span());
        let replacement = views.iter().rev().fold(x_var, |e, head| {
            Expr::new(ExprKind::App(head.clone(), e), p.span())
        });
        let replacement = finish(replacement, &extracted)?;
        let replaced = Replace {
            term: &extracted,
            free: extracted.free_vars(),
            by: &replacement,
        }
        .within(p, &mut Vec::new());
        let rhs = app2(
            dep_app(prim(Prim::ToMem), TypeArg::AddrSpace(AddrSpace::Global)),
            stored,
            lambda(&x, replaced),
        );
        finish(rhs, p)
    })
}

/// Replaces every occurrence of `term` by `by`, except where a binder between
/// the root and the occurrence rebinds one of `term`'s `free` variables (there
/// it is another term).
pub(crate) struct Replace<'a> {
    /// The term replaced.
    pub(crate) term: &'a Expr,
    /// Its free variables.
    pub(crate) free: Vec<Name>,
    /// What replaces it.
    pub(crate) by: &'a Expr,
}

impl Replace<'_> {
    /// `e` with the occurrences replaced; `bound` holds the names bound on the way down.
    pub(crate) fn within(&self, e: &Expr, bound: &mut Vec<Name>) -> Expr {
        if e.alpha_eq(self.term) && !self.free.iter().any(|v| bound.contains(v)) {
            return self.by.clone();
        }
        let kind = match e.kind() {
            ExprKind::Lambda(x, t, body) => {
                bound.push(x.clone());
                let body = self.within(body, bound);
                bound.pop();
                ExprKind::Lambda(x.clone(), t.clone(), body)
            }
            ExprKind::App(f, a) => ExprKind::App(self.within(f, bound), self.within(a, bound)),
            ExprKind::DepLambda(b, body) => {
                ExprKind::DepLambda(b.clone(), self.within(body, bound))
            }
            ExprKind::DepApp(f, t) => ExprKind::DepApp(self.within(f, bound), t.clone()),
            ExprKind::Annot(inner, t) => ExprKind::Annot(self.within(inner, bound), t.clone()),
            ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Prim(_) | ExprKind::Foreign(_) => {
                return e.clone()
            }
        };
        if same_children(e.kind(), &kind) {
            return e.clone(); // keeps the node's type
        }
        Expr::new(kind, e.span())
    }
}

/// Whether two nodes of the same shape have the very same children.
fn same_children(a: &ExprKind, b: &ExprKind) -> bool {
    use ExprKind::*;
    match (a, b) {
        (Lambda(_, _, x), Lambda(_, _, y))
        | (DepLambda(_, x), DepLambda(_, y))
        | (DepApp(x, _), DepApp(y, _))
        | (Annot(x, _), Annot(y, _)) => x.ptr_eq(y),
        (App(f, x), App(g, y)) => f.ptr_eq(g) && x.ptr_eq(y),
        _ => false,
    }
}

/// The first sub-expression (top-down) satisfying `what`.
fn extract(
    what: &S,
    p: &Expr,
    ctx: &mut elevate::Ctx<Expr>,
    misses: &Misses,
) -> Result<Expr, Failure<Expr>> {
    let mut search = Search { what, ctx, misses };
    match search.first(p)? {
        Some(found) => Ok(found),
        None => Err(Failure::NotApplicable {
            // the strategy a failure names, as `topDown` with the recording rule names it
            strategy: Some(top_down(
                what.clone()
                    .seq(rule("extract", |e: &Expr, _| Ok(e.clone()))),
            )),
            location: search.ctx.tracks_locations().then(|| search.ctx.location()),
            explanation: None,
        }),
    }
}

/// The sub-programs (by address, kept alive) in which `what` of a `storeInMemory` holds
/// nowhere. `normalize(storeInMemory(what, how))` looks for `what` below every node of
/// the program: without them the pass that finds nothing costs the program's size
/// squared. Forgotten when they grow past [`Misses::MOST`].
#[derive(Default)]
struct Misses(std::sync::Mutex<std::collections::HashMap<usize, Expr>>);

impl Misses {
    const MOST: usize = 1 << 20;

    fn contains(&self, e: &Expr) -> bool {
        self.0.lock().is_ok_and(|m| m.contains_key(&e.addr()))
    }

    fn insert(&self, e: &Expr) {
        if let Ok(mut m) = self.0.lock() {
            if m.len() >= Self::MOST {
                m.clear();
            }
            m.insert(e.addr(), e.clone());
        }
    }
}

/// `topDown(what)`'s first success in a program: what `what` made of it.
struct Search<'a> {
    what: &'a S,
    ctx: &'a mut elevate::Ctx<Expr>,
    misses: &'a Misses,
}

impl Search<'_> {
    /// `what` on the first node of `e` (top-down) where it applies, `None` where it
    /// applies nowhere (remembered in `misses` when trying it took no fresh name).
    fn first(&mut self, e: &Expr) -> Result<Option<Expr>, Failure<Expr>> {
        if self.misses.contains(e) {
            return Ok(None);
        }
        let names = self.ctx.env.clone();
        match self.ctx.apply(self.what, e) {
            Ok(found) => return Ok(Some(found)),
            Err(Failure::NotApplicable { .. }) => {}
            Err(abort) => return Err(abort),
        }
        for i in 0..e.child_count() {
            self.ctx.enter(e.child_label(i));
            let found = self.first(&e.child(i));
            self.ctx.leave();
            if let Some(found) = found? {
                return Ok(Some(found));
            }
        }
        if self.ctx.env == names {
            self.misses.insert(e);
        }
        Ok(None)
    }
}

/// Splits `L1 (L2 (... e))` into the heads and `e`, where each head `Li` is one of the
/// primitives `layout` (unapplied but for their `nat` arguments: `join`, `split n`) or a
/// `map` of a view function (`map transpose`, also eta-expanded).
pub(crate) fn peel_views(e: &Expr, layout: &[Prim]) -> (Vec<Expr>, Expr) {
    let mut heads = Vec::new();
    let mut cur = e.clone();
    loop {
        let next = match cur.kind() {
            ExprKind::App(h, inner) => {
                let is_view = match prim_app(h) {
                    Some(a) if a.args.is_empty() => layout.contains(&a.prim),
                    Some(a) => {
                        a.prim == Prim::Map && a.args.len() == 1 && a.args[0].is_view_function()
                    }
                    None => false,
                };
                is_view.then(|| (h.clone(), inner.clone()))
            }
            _ => None,
        };
        match next {
            Some((h, inner)) => {
                heads.push(h);
                cur = inner;
            }
            None => return (heads, cur),
        }
    }
}

/// The loops of the first loop nest, outermost first, as `map n` / `reduce n`
/// with `n` the number of iterations: what tests and users read to see the
/// loop order a strategy produced.
pub fn loop_nest(e: &Expr) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = first_loop(e);
    while let Some(l) = cur {
        let (kind, f, xs) = match (applied(&l, any_map, 2), applied(&l, any_reduce, 3)) {
            (Some((p, a)), _) => (p.name(), a[0].clone(), a[1].clone()),
            (_, Some((p, a))) => (p.name(), a[0].clone(), a[2].clone()),
            _ => break,
        };
        let len = match xs.ty() {
            Some(rise::Type::Data(rise::DataType::Array(n, _))) => n.to_string(),
            _ => "?".into(),
        };
        out.push(format!("{kind} {len}"));
        let body = as_lambda(&f).map(|(_, b)| b.clone());
        let body = match (body, any_reduce(prim_app(&l).map_or(Prim::Id, |a| a.prim))) {
            (Some(b), true) => as_lambda(&b).map(|(_, b)| b.clone()),
            (b, _) => b,
        };
        cur = body.as_ref().and_then(first_loop);
    }
    out
}

fn first_loop(e: &Expr) -> Option<Expr> {
    if loop_node(e) {
        return Some(e.clone());
    }
    use elevate::Traversable;
    (0..e.child_count()).find_map(|i| first_loop(&e.child(i)))
}
