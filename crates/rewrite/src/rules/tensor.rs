//! Tensor cores (issue 26; Fireiron, Hagedorn et al., PACT'20, and Hagedorn's thesis):
//! the rules that take a tiled matrix product the last step down, to the warp-level
//! `mmaSync` (PTX `mma.sync.m16n8k16`), as `mmaWarps`, `mmaWarpTiles` and `mmaShared` in
//! examples/fireiron.elv do.
//!
//! * [`mma_tile`](super::mma_tile) (`mmaTile`): a 16x8 tile accumulate in the shape the
//!   tiling rules produce (`reduceOuter` over a k step of 16) is one `mmaSync` on the
//!   tiles' fragments.
//! * [`fragment_accumulator`](super::fragment_accumulator) (`fragmentAccumulator`): a
//!   sequential reduction whose step reads its accumulator only through `fragC` and
//!   returns `unfragC (...)` keeps the accumulator as its fragment (`fragC ∘ unfragC` is
//!   the identity), so the lanes hold it in registers across the steps.
//!   An accumulator that is an array of tiles (a warp's 2x4 tiles of 16x8, as
//!   `mmaWarpTiles` leaves it) is kept as the array of their fragments, and one handed as
//!   the initial value of inner reductions that keep theirs as fragments (a work-group's
//!   accumulator of its warps' tiles, as `mmaShared` leaves it) as theirs.
//! * [`constant_fragment`](super::constant_fragment) (`constantFragment`): the fragment of
//!   a tile of one value is that value in every lane's registers.
//! * [`lanes_outermost`](super::lanes_outermost) (`lanesOutermost`): an accumulator of
//!   fragments is kept lane by lane, so that each lane's part is one private array.
//! * [`lanes_in_warps`](super::lanes_in_warps) (`lanesInWarps`): the warps' accumulators
//!   of fragments of a work-group's reduction kept lane by lane inside each warp's part.
//! * [`flatten_map_nest`](super::flatten_map_nest) (`flattenMapNest`): a 2-D grid of warp
//!   tiles as one map over their pairs of rows and columns, the one warp loop of a GPU;
//!   [`flatten_accumulator_nest`](super::flatten_accumulator_nest)
//!   (`flattenAccumulatorNest`): the same for a work-group's reduction over the 2-D nest of
//!   its warps' tile accumulates, which carries their accumulators as one array.
//!
//! The views `fragA`, `fragB`, `fragC` and `unfragC` are the prelude's definitions; a
//! program that calls them holds their lambdas once its definitions are inlined, and
//! these rules build and recognise exactly those lambdas (a normal form, `DFNF`,
//! β-reduces them away: apply these rules after the steps that normalise).

use crate::term::{
    accumulated_term, any_reduce, applied, array, as_lambda, finish, is_var, no, occurs,
    retype_under,
};
use crate::S;
use elevate::{rule, Failure};
use rise::builder::*;
use rise::{DataType, Expr, ExprKind, NameGen, Prim, ScalarType};
use std::sync::OnceLock;

/// The rows and columns of the accumulator and the depth (k) of one `mmaSync`.
const MMA_SHAPE: (i64, i64, i64) = (16, 8, 16);

/// The prelude's view `name` (`fragA`, `fragB`, `fragC`, `unfragC`) as a program that
/// calls it holds it once its definitions are inlined and typed (`split 8` with its size
/// as a type-level argument), without types: a template to build with, and the term to
/// recognise up to types.
fn view(name: &str) -> Option<&'static Expr> {
    static VIEWS: OnceLock<Vec<(String, Expr)>> = OnceLock::new();
    let views = VIEWS.get_or_init(|| {
        let Ok(checked) = rise::infer::check_source("") else {
            return Vec::new();
        };
        ["fragA", "fragB", "fragC", "unfragC"]
            .iter()
            .filter_map(|v| Some((v.to_string(), untyped(&checked.def(v)?.body))))
            .collect()
    });
    views.iter().find(|(v, _)| v == name).map(|(_, e)| e)
}

/// `e` without its types (and type ascriptions).
fn untyped(e: &Expr) -> Expr {
    use ExprKind::*;
    let kind = match e.kind() {
        Var(_) | Lit(_) | Prim(_) | Foreign(_) => e.kind().clone(),
        Lambda(x, _, b) => Lambda(x.clone(), None, untyped(b)),
        App(f, a) => App(untyped(f), untyped(a)),
        DepLambda(x, b) => DepLambda(x.clone(), untyped(b)),
        DepApp(f, t) => DepApp(untyped(f), t.clone()),
        Annot(b, _) => return untyped(b),
    };
    Expr::new(kind, e.span())
}

/// The view `name` applied to `e`.
fn apply_view(name: &str, e: Expr) -> Result<Expr, Failure<Expr>> {
    let f = view(name).ok_or_else(Failure::not_applicable)?;
    Ok(app(f.clone(), e))
}

/// The argument of `e` if `e` is the view `name` applied to it.
fn view_arg<'a>(e: &'a Expr, name: &str) -> Option<&'a Expr> {
    let ExprKind::App(f, a) = e.kind() else {
        return None;
    };
    view(name).is_some_and(|v| f.alpha_eq(v)).then_some(a)
}

/// Whether `e` is `p x` (`p` being `fst` or `snd`).
fn is_projection(e: &Expr, p: Prim, x: &str) -> bool {
    applied(e, |q| q == p, 1).is_some_and(|(_, a)| is_var(a[0], x))
}

/// A matched tile accumulate `map (fun ar => map (fun ac => reduceX op (fst ac) (zip (snd
/// ar) (snd ac))) (zip (fst ar) b)) (zip acc a)`: for every row of `a` and column (row of
/// `b`), the accumulator's element plus the reduction over k.
struct TileAccumulate<'a> {
    acc: &'a Expr,
    a: &'a Expr,
    b: &'a Expr,
    op: &'a Expr,
}

fn tile_accumulate(e: &Expr) -> Option<TileAccumulate<'_>> {
    let is_map = |p| p == Prim::Map;
    let is_zip = |p| p == Prim::Zip;
    let (_, outer) = applied(e, is_map, 2)?;
    let (ar, row) = as_lambda(outer[0])?;
    let (_, acc_a) = applied(outer[1], is_zip, 2)?;
    let (_, inner) = applied(row, is_map, 2)?;
    let (ac, element) = as_lambda(inner[0])?;
    let (_, acc_b) = applied(inner[1], is_zip, 2)?;
    let (_, red) = applied(element, any_reduce, 3)?;
    let (_, ks) = applied(red[2], is_zip, 2)?;
    let shaped = is_projection(acc_b[0], Prim::Fst, ar)
        && is_projection(red[1], Prim::Fst, ac)
        && is_projection(ks[0], Prim::Snd, ar)
        && is_projection(ks[1], Prim::Snd, ac)
        && !occurs(ar, acc_b[1])
        && !occurs(ar, red[0])
        && !occurs(ac, red[0])
        && ar != ac;
    shaped.then_some(TileAccumulate {
        acc: acc_a[0],
        a: acc_a[1],
        b: acc_b[1],
        op: red[0],
    })
}

/// The rows and element type of a 2-D array term, and its columns.
fn matrix(e: &Expr) -> Option<(i64, i64, ScalarType)> {
    let (rows, row) = array(e.ty()?)?;
    let DataType::Array(cols, elem) = row else {
        return None;
    };
    let DataType::Scalar(t) = **elem else {
        return None;
    };
    Some((rows.as_cst()?, cols.as_cst()?, t))
}

/// Whether `e` is `cast (p x) : f32` (`p` being `fst` or `snd`).
fn is_cast_to_f32(e: &Expr, p: Prim, x: &str) -> bool {
    let f32 = rise::Type::Data(DataType::Scalar(ScalarType::F32));
    applied(e, |q| q == Prim::Cast, 1).is_some_and(|(_, a)| is_projection(a[0], p, x))
        && e.ty() == Some(&f32)
}

/// Whether `op` is `fun s p => s + cast (fst p) * cast (snd p)` (casts to f32; the sum and
/// the product in either order).
fn is_product_sum(op: &Expr) -> bool {
    let Some((_, p, product)) = accumulated_term(op) else {
        return false;
    };
    let Some((_, factors)) = applied(product, |q| q == Prim::Mul, 2) else {
        return false;
    };
    let casts =
        |x: &Expr, y: &Expr| is_cast_to_f32(x, Prim::Fst, p) && is_cast_to_f32(y, Prim::Snd, p);
    casts(factors[0], factors[1]) || casts(factors[1], factors[0])
}

/// Why the matched tile accumulate is not one `mmaSync`, if it is not: its element types,
/// then its shape, then its step.
fn refusal(name: &str, t: &TileAccumulate<'_>) -> Option<String> {
    let (Some((m, n, acc_t)), Some((_, k, a_t)), Some((_, _, b_t))) =
        (matrix(t.acc), matrix(t.a), matrix(t.b))
    else {
        return Some(format!(
            "{name}: the tiles' sizes are not constants (tile the result and split the \
             reduction first)"
        ));
    };
    let half = |s: ScalarType| matches!(s, ScalarType::F16 | ScalarType::Bf16);
    if !(half(a_t) && a_t == b_t && acc_t == ScalarType::F32) {
        return Some(format!(
            "{name}: the tiles hold {a_t} and {b_t} and the accumulator {acc_t}; mma.sync \
             multiplies f16 or bf16 tiles (both of one type) into an f32 accumulator",
            a_t = a_t.name(),
            b_t = b_t.name(),
            acc_t = acc_t.name()
        ));
    }
    if (m, n, k) != MMA_SHAPE {
        let (mm, mn, mk) = MMA_SHAPE;
        return Some(format!(
            "{name}: the tile accumulate is {m}x{n} with {k} products per element; mma.sync \
             computes a {mm}x{mn} one with {mk} (a {mm}x{mk} tile of `a` times a {mk}x{mn} one \
             of `b`): tile the warps' part of the result in {mm}x{mn} and split the reduction \
             by {mk}"
        ));
    }
    if !is_product_sum(t.op) {
        return Some(format!(
            "{name}: the reduction's step `{}` is not `fun s p => s + cast (fst p) * cast (snd \
             p)` (the products of the tiles' elements cast to f32, summed into the \
             accumulator), which is what the tensor cores compute",
            t.op
        ));
    }
    None
}

/// `mmaTile`: a 16x8 tile accumulate (`acc + a·bᵀ`, every element the accumulator's plus
/// the products over k of f16 or bf16 values cast to f32) becomes one warp's `mmaSync` on
/// the tiles' fragments. Any other shape, element type or step is refused with the reason.
/// The tensor cores sum the products in an order of their own: the result agrees within
/// the f32 tolerance, as a reassociated reduction does.
pub(super) fn mma_tile(name: String) -> S {
    rule(name.clone(), move |e: &Expr, _| {
        let Some(t) = tile_accumulate(e) else {
            return no();
        };
        if let Some(why) = refusal(&name, &t) {
            return Err(Failure::not_applicable_because(why));
        }
        let mma = apps(
            prim(Prim::MmaSync),
            [
                apply_view("fragA", t.a.clone())?,
                apply_view("fragB", app(transpose(), t.b.clone()))?,
                apply_view("fragC", t.acc.clone())?,
            ],
        );
        finish(apply_view("unfragC", mma)?, e)
    })
}

/// `e` with every `fragC T` replaced by `T` (`T` being `target`), outside the binders of
/// `root` (the variable `target` mentions).
fn unwrap_fragments(e: &Expr, target: &Expr, root: &str) -> Expr {
    if view_arg(e, "fragC").is_some_and(|a| a.alpha_eq(target)) {
        return target.clone();
    }
    use ExprKind::*;
    let kind = match e.kind() {
        Var(_) | Lit(_) | Prim(_) | Foreign(_) => return e.clone(),
        Lambda(x, _, _) if &**x == root => return e.clone(),
        Lambda(x, t, b) => Lambda(x.clone(), t.clone(), unwrap_fragments(b, target, root)),
        App(f, a) => App(
            unwrap_fragments(f, target, root),
            unwrap_fragments(a, target, root),
        ),
        DepLambda(x, b) => DepLambda(x.clone(), unwrap_fragments(b, target, root)),
        DepApp(f, t) => DepApp(unwrap_fragments(f, target, root), t.clone()),
        Annot(b, t) => Annot(unwrap_fragments(b, target, root), t.clone()),
    };
    e.rebuild(kind)
}

/// How often `target` occurs in `e` (as a sub-term, outside the binders of `root`), and how
/// often as the argument of `fragC`.
fn count_reads(e: &Expr, target: &Expr, root: &str) -> (usize, usize) {
    if e.alpha_eq(target) {
        return (1, 0);
    }
    if view_arg(e, "fragC").is_some_and(|a| a.alpha_eq(target)) {
        return (1, 1);
    }
    use ExprKind::*;
    match e.kind() {
        Var(_) | Lit(_) | Prim(_) | Foreign(_) => (0, 0),
        Lambda(x, _, _) if &**x == root => (0, 0),
        Lambda(_, _, b) | DepLambda(_, b) | DepApp(b, _) | Annot(b, _) => {
            count_reads(b, target, root)
        }
        App(f, a) => {
            let (f1, f2) = count_reads(f, target, root);
            let (a1, a2) = count_reads(a, target, root);
            (f1 + a1, f2 + a2)
        }
    }
}

/// Whether every free occurrence of the variable `x` in `e` is `fst x` or `snd x`.
fn only_projected(e: &Expr, x: &str) -> bool {
    if is_projection(e, Prim::Fst, x) || is_projection(e, Prim::Snd, x) {
        return true;
    }
    use ExprKind::{Annot, App, DepApp, DepLambda, Foreign, Lambda, Lit, Var};
    match e.kind() {
        Var(y) => &**y != x,
        Lit(_) | ExprKind::Prim(_) | Foreign(_) => true,
        Lambda(y, _, _) if &**y == x => true,
        Lambda(_, _, b) | DepLambda(_, b) | DepApp(b, _) | Annot(b, _) => only_projected(b, x),
        App(f, a) => only_projected(f, x) && only_projected(a, x),
    }
}

/// The step `body` of a reduction whose accumulator is `target` (the accumulator `acc`, or
/// `fst p` of an element `p` of the accumulator zipped with a step's values) with the
/// fragments kept: at depth 0, `unfragC E[fragC target]` ↦ `E[target]`; at depth d + 1,
/// `map (fun p => B) (zip target ys)` ↦ `map (fun p => B') (zip target ys)`, `B` a step of
/// depth d on `fst p`. The depth, and the new step (untyped where it changes).
fn fragment_step(
    name: &str,
    body: &Expr,
    target: &Expr,
    root: &str,
) -> Result<(usize, Expr), Failure<Expr>> {
    if let Some((r, rargs)) = applied(body, any_reduce, 3) {
        // the accumulator handed on as the initial value of an inner reduction that keeps
        // its own accumulator as fragments (the warps' reductions in a work-group's step)
        let (inner_acc, inner_step) = as_lambda(rargs[0]).ok_or_else(Failure::not_applicable)?;
        let (y, inner_body) = as_lambda(inner_step).ok_or_else(Failure::not_applicable)?;
        let hands_on = rargs[1].alpha_eq(target)
            && count_reads(rargs[0], target, root) == (0, 0)
            && count_reads(rargs[2], target, root) == (0, 0)
            && inner_acc != y
            && ![inner_acc, y].iter().any(|v| &***v == root);
        if !hands_on {
            return no();
        }
        let (depth, stepped) = fragment_step(name, inner_body, &var(inner_acc), inner_acc)?;
        let op = lambda(
            inner_acc,
            lambda(y, retype_under(inner_acc, &retype_under(y, &stepped))),
        );
        let r = if r == Prim::Reduce {
            Prim::ReduceSeq
        } else {
            r
        };
        return Ok((depth, apps(prim(r), [op, target.clone(), rargs[2].clone()])));
    }
    if let Some(stepped) = view_arg(body, "unfragC") {
        let (reads, through_frag) = count_reads(stepped, target, root);
        if reads != through_frag || reads == 0 {
            return Err(Failure::not_applicable_because(format!(
                "{name}: the step reads its accumulator `{target}` other than as `fragC \
                 {target}`, so it cannot be kept as its fragment"
            )));
        }
        return Ok((0, unwrap_fragments(stepped, target, root)));
    }
    let (m, args) = applied(body, crate::term::any_map, 2).ok_or_else(Failure::not_applicable)?;
    let (p, inner) = as_lambda(args[0]).ok_or_else(Failure::not_applicable)?;
    let (_, zs) = applied(args[1], |q| q == Prim::Zip, 2).ok_or_else(Failure::not_applicable)?;
    let elements_read_alone = zs[0].alpha_eq(target)
        && count_reads(zs[1], target, root) == (0, 0)
        && count_reads(inner, target, root) == (0, 0)
        && &**p != root
        && only_projected(inner, p);
    if !elements_read_alone {
        return no();
    }
    let (depth, stepped) = fragment_step(name, inner, &fst(var(p)), p)?;
    let rebuilt = app2(
        prim(m),
        lambda(p, retype_under(p, &stepped)),
        args[1].clone(),
    );
    Ok((depth + 1, rebuilt))
}

/// `view` applied to every element at depth `depth` of `e`: `map (fun x => ... view x) e`;
/// fused into `e`'s own maps where `e` is `map (fun r => B) rs` (`map f (map g rs) = map (f ∘
/// g) rs`) or `generate (fun i => B)`, so that a constant tile is `fragC`'s argument.
fn view_at_depth(
    depth: usize,
    view_name: &str,
    e: &Expr,
    names: &mut NameGen,
) -> Result<Expr, Failure<Expr>> {
    if depth == 0 {
        return apply_view(view_name, e.clone());
    }
    if let Some((_, args)) = applied(e, |q| q == Prim::Map, 2) {
        if let Some((r, b)) = as_lambda(args[0]) {
            let inner = view_at_depth(depth - 1, view_name, b, names)?;
            return Ok(app(
                map(lambda(r, retype_under(r, &inner))),
                args[1].clone(),
            ));
        }
    }
    if let Some((_, args)) = applied(e, |q| q == Prim::Generate, 1) {
        if let Some((i, b)) = as_lambda(args[0]) {
            let inner = view_at_depth(depth - 1, view_name, b, names)?;
            return Ok(generate(lambda(i, retype_under(i, &inner))));
        }
    }
    // the elements at depth d of `join e` are those at depth d + 1 of `e`
    if let Some((_, args)) = applied(e, |q| q == Prim::Join, 1) {
        let inner = view_at_depth(depth + 1, view_name, args[0], names)?;
        return Ok(app(join(), inner));
    }
    let x = names.fresh("x");
    let inner = view_at_depth(depth - 1, view_name, &var(&x), names)?;
    Ok(app(map(lambda(&x, inner)), e.clone()))
}

/// `fragmentAccumulator`: `reduceX (fun acc y => unfragC E[fragC acc]) z xs ↦ unfragC
/// (reduceSeq (fun acc y => E[acc]) (fragC z) xs)`, the accumulator read only through
/// `fragC`; likewise an accumulator that is an array of tiles, each step a map over it
/// zipped with the step's values (`map (fun p => unfragC E[fragC (fst p)]) (zip acc ys)`,
/// nested, as `reduceOuter` leaves it): the accumulator becomes the array of their fragments
/// (`map (map fragC) z`, and `map (map unfragC)` of the result).
pub(super) fn fragment_accumulator(name: String) -> S {
    rule(name.clone(), move |e: &Expr, ctx| {
        let rhs = fragment_accumulator_rhs(&name, e, &mut ctx.env)?;
        finish(rhs, e)
    })
}

fn fragment_accumulator_rhs(
    name: &str,
    e: &Expr,
    names: &mut NameGen,
) -> Result<Expr, Failure<Expr>> {
    let (p, args) = applied(e, any_reduce, 3).ok_or_else(Failure::not_applicable)?;
    let (acc, step) = as_lambda(args[0]).ok_or_else(Failure::not_applicable)?;
    let (y, body) = as_lambda(step).ok_or_else(Failure::not_applicable)?;
    if acc == y {
        return no();
    }
    let (depth, stepped) = fragment_step(name, body, &var(acc), acc)?;
    let op = lambda(
        acc,
        lambda(y, retype_under(acc, &retype_under(y, &stepped))),
    );
    // the step's accumulator and element differ in type now: `reduce` becomes `reduceSeq`
    let p = if p == Prim::Reduce {
        Prim::ReduceSeq
    } else {
        p
    };
    let init = view_at_depth(depth, "fragC", args[1], names)?;
    let reduction = apps(prim(p), [op, init, args[2].clone()]);
    view_at_depth(depth, "unfragC", &reduction, names)
}

/// The one value `z` of a tile `map (fun r => map (fun c => z) cs) rs` or `generate (fun i
/// => generate (fun j => z))` (`z` mentioning neither index).
fn constant_tile(e: &Expr) -> Option<&Expr> {
    let nest = |p: Prim, arity: usize| {
        let (_, outer) = applied(e, |q| q == p, arity)?;
        let (r, row) = as_lambda(outer[0])?;
        let (_, inner) = applied(row, |q| q == p, arity)?;
        let (c, z) = as_lambda(inner[0])?;
        (!occurs(r, z) && !occurs(c, z)).then_some(z)
    };
    nest(Prim::Map, 2).or_else(|| nest(Prim::Generate, 1))
}

/// `constantFragment`: `fragC` of a tile of one value is that value in every lane's
/// registers (`generate (fun l => generate (fun i => z))`).
pub(super) fn constant_fragment(name: String) -> S {
    rule(name, |e: &Expr, ctx| {
        let Some(z) = view_arg(e, "fragC").and_then(constant_tile) else {
            return no();
        };
        let (l, i) = (ctx.env.fresh("lane"), ctx.env.fresh("i"));
        let rhs = generate(lambda(&l, generate(lambda(&i, z.clone()))));
        finish(rhs, e)
    })
}

/// The dimensions of an accumulator of fragments `n1. ... .nd.32.k.t` (`t` a scalar, d ≥ 1),
/// if `t` is one: `d`.
fn fragment_array_depth(t: &rise::Type) -> Option<usize> {
    let rise::Type::Data(mut dt) = t.clone() else {
        return None;
    };
    let mut dims = Vec::new();
    while let DataType::Array(n, elem) = dt {
        dims.push(n);
        dt = (*elem).clone();
    }
    let lanes = dims.len().checked_sub(2)?;
    let shaped = matches!(dt, DataType::Scalar(_))
        && lanes >= 1
        && dims[lanes].as_cst() == Some(32)
        && dims[lanes + 1].as_cst().is_some();
    shaped.then_some(lanes)
}

/// `M e`, the dimension at `depth` of `e` moved outermost: `transpose (map M' e)`, `M'` the
/// move from `depth - 1` (`transpose` for depth 1).
fn lanes_out(depth: usize, e: Expr, names: &mut NameGen) -> Expr {
    if depth <= 1 {
        return app(transpose(), e);
    }
    let x = names.fresh("x");
    let inner = lanes_out(depth - 1, var(&x), names);
    app(transpose(), app(map(lambda(&x, inner)), e))
}

/// `M⁻¹ e`, the outermost dimension of `e` moved back to `depth`: `map M'⁻¹ (transpose e)`.
fn lanes_in(depth: usize, e: Expr, names: &mut NameGen) -> Expr {
    if depth <= 1 {
        return app(transpose(), e);
    }
    let x = names.fresh("x");
    let inner = lanes_in(depth - 1, var(&x), names);
    app(map(lambda(&x, inner)), app(transpose(), e))
}

/// `lanesOutermost`: a sequential reduction whose accumulator is an array of fragments
/// (`n1. ... .nd.32.k.t`) keeps it lane by lane (`32.n1. ... .nd.k.t`): the reduction walks
/// the moved accumulator, its step reads it through the inverse move and writes through the
/// move. Each lane's part is then one private array (its registers), as GPU code needs.
pub(super) fn lanes_outermost(name: String) -> S {
    rule(name, |e: &Expr, ctx| {
        let (p, args) = applied(e, |q| q == Prim::ReduceSeq || q == Prim::ReduceSeqUnroll, 3)
            .ok_or_else(Failure::not_applicable)?;
        let depth = args[1]
            .ty()
            .and_then(fragment_array_depth)
            .ok_or_else(Failure::not_applicable)?;
        let names = &mut ctx.env;
        let step = lanes_moved_step(depth, args[0], names);
        let init = lanes_out(depth, args[1].clone(), names);
        let reduction = apps(prim(p), [step, init, args[2].clone()]);
        finish(lanes_in(depth, reduction, names), e)
    })
}

/// `fun acc y => M (f (M⁻¹ acc) y)`, `M` the move of the lanes at `depth` outermost.
fn lanes_moved_step(depth: usize, f: &Expr, names: &mut NameGen) -> Expr {
    let (acc, y) = (names.fresh("acc"), names.fresh("y"));
    let read = lanes_in(depth, var(&acc), names);
    let step = lanes_out(depth, apps(f.clone(), [read, var(&y)]), names);
    lambda(&acc, lambda(&y, step))
}

/// `lanesInWarps`: a reduction whose accumulator is an array of arrays of fragments (`w.n1.
/// ... .nd.32.k.t`, the warps' accumulators of a work-group) and whose step hands every
/// element to a reduction of its own (`zip acc Y |> map (fun p => reduceX g (fst p) X)`, each
/// warp's reduction over its part) keeps every element lane by lane (`w.32.n1. ... .nd.k.t`),
/// where the inner reduction updates it: that reduction walks the moved element as
/// `lanesOutermost` has it walk it, and the work-group's accumulator holds the moved
/// elements. Each lane's part of its warp's element is then one private array (its
/// registers), updated in place by the warp's reduction.
pub(super) fn lanes_in_warps(name: String) -> S {
    rule(name, |e: &Expr, ctx| {
        let is_seq = |q| q == Prim::ReduceSeq || q == Prim::ReduceSeqUnroll;
        let (p, args) = applied(e, is_seq, 3).ok_or_else(Failure::not_applicable)?;
        let depth = args[1]
            .ty()
            .and_then(fragment_array_depth)
            .filter(|&d| d >= 2)
            .ok_or_else(Failure::not_applicable)?;
        let (acc, step) = as_lambda(args[0]).ok_or_else(Failure::not_applicable)?;
        let (y, body) = as_lambda(step).ok_or_else(Failure::not_applicable)?;
        let (m, margs) =
            applied(body, crate::term::any_map, 2).ok_or_else(Failure::not_applicable)?;
        let (w, inner) = as_lambda(margs[0]).ok_or_else(Failure::not_applicable)?;
        let (_, zs) =
            applied(margs[1], |q| q == Prim::Zip, 2).ok_or_else(Failure::not_applicable)?;
        let (q, rargs) = applied(inner, any_reduce, 3).ok_or_else(Failure::not_applicable)?;
        let reads_fst = |e: &Expr| e.any(&|n: &Expr| is_projection(n, Prim::Fst, w));
        let shaped = is_var(zs[0], acc)
            && !occurs(acc, zs[1])
            && !occurs(acc, inner)
            && is_projection(rargs[1], Prim::Fst, w)
            && !occurs(w, rargs[0])
            && only_projected(rargs[2], w)
            && !reads_fst(rargs[2])
            && ![acc, y].contains(&w)
            && acc != y;
        if !shaped {
            return no();
        }
        let names = &mut ctx.env;
        let element = depth - 1;
        let g = lanes_moved_step(element, rargs[0], names);
        let q = if q == Prim::Reduce {
            Prim::ReduceSeq
        } else {
            q
        };
        let warp_reduction = apps(prim(q), [g, rargs[1].clone(), rargs[2].clone()]);
        let new_body = app2(
            prim(m),
            lambda(w, retype_under(w, &warp_reduction)),
            margs[1].clone(),
        );
        let op = lambda(
            acc,
            lambda(y, retype_under(acc, &retype_under(y, &new_body))),
        );
        let x = names.fresh("x");
        let moved = lanes_out(element, var(&x), names);
        let init = app(map(lambda(&x, moved)), args[1].clone());
        let reduction = apps(prim(p), [op, init, args[2].clone()]);
        let x = names.fresh("x");
        let back = lanes_in(element, var(&x), names);
        finish(app(map(lambda(&x, back)), reduction), e)
    })
}

/// `flattenMapNest`: a nest of two maps (a layout chain `V` between them) is one map over the
/// pairs of their elements, row by row: `map (fun x => V (map (fun y => b) ys)) xs ↦ map V
/// (split n (map (fun p => b[fst p/x, snd p/y]) (join (map (fun x => map (fun y => (x, y))
/// ys) xs))))`, `n` the length of `ys` (which must not mention `x`): a 2-D grid of warps' tiles
/// as the one warp loop a GPU has.
pub(super) fn flatten_map_nest(name: String) -> S {
    super::rise_rule(name, |e, names| {
        let (_, args) = applied(e, |q| q == Prim::Map, 2)?;
        let (x, body) = as_lambda(args[0])?;
        let (views, inner) =
            crate::schedule::peel_views(body, &[Prim::Join, Prim::Transpose, Prim::Split]);
        let (_, iargs) = applied(&inner, |q| q == Prim::Map, 2)?;
        let (y, b) = as_lambda(iargs[0])?;
        let ys = iargs[1];
        if x == y || occurs(x, ys) || views.iter().any(|v| occurs(x, v)) {
            return None;
        }
        let (n, _) = array(ys.ty()?)?;
        let p = names.fresh("p");
        let b = retype_under(x, &retype_under(y, b));
        let b = crate::term::substitute(&b, x, &fst(var(&p)), names);
        let b = crate::term::substitute(&b, y, &snd(var(&p)), names);
        let xs2 = names.fresh("x");
        let ys2 = names.fresh("y");
        let pairs = app(
            map(lambda(
                &xs2,
                app(map(lambda(&ys2, pair(var(&xs2), var(&ys2)))), ys.clone()),
            )),
            args[1].clone(),
        );
        let flat = app(map(lambda(&p, b)), app(join(), pairs));
        let grid = app(split(n.clone()), flat);
        if views.is_empty() {
            return Some(grid);
        }
        let v = names.fresh("blk");
        let chain = views
            .iter()
            .rev()
            .fold(var(&v), |acc, h| app(h.clone(), acc));
        Some(app(map(lambda(&v, chain)), grid))
    })
}

/// `e` with every `fst x` replaced by `by_fst` and every `snd x` by `by_snd` (`x` read
/// only through them, outside binders of `x`; the replacements mention no variable bound
/// in `e`).
fn replace_projections(e: &Expr, x: &str, by_fst: &Expr, by_snd: &Expr) -> Expr {
    if is_projection(e, Prim::Fst, x) {
        return by_fst.clone();
    }
    if is_projection(e, Prim::Snd, x) {
        return by_snd.clone();
    }
    use ExprKind::{Annot, App, DepApp, DepLambda, Foreign, Lambda, Lit, Var};
    let kind = match e.kind() {
        Var(_) | Lit(_) | ExprKind::Prim(_) | Foreign(_) => return e.clone(),
        Lambda(y, _, _) if &**y == x => return e.clone(),
        Lambda(y, t, b) => Lambda(
            y.clone(),
            t.clone(),
            replace_projections(b, x, by_fst, by_snd),
        ),
        App(f, a) => App(
            replace_projections(f, x, by_fst, by_snd),
            replace_projections(a, x, by_fst, by_snd),
        ),
        DepLambda(y, b) => DepLambda(y.clone(), replace_projections(b, x, by_fst, by_snd)),
        DepApp(f, t) => DepApp(replace_projections(f, x, by_fst, by_snd), t.clone()),
        Annot(b, t) => Annot(replace_projections(b, x, by_fst, by_snd), t.clone()),
    };
    Expr::new(kind, e.span())
}

/// `flattenAccumulatorNest`: a reduction whose step is a 2-D nest of tile accumulates over
/// its accumulator (`zip accs Y1 |> map (fun ar => zip (fst ar) Y2 |> map (fun ac => B))`,
/// as `reduceOuter` leaves the warps' tiles of a work-group) keeps its accumulator as one
/// array of the nest's elements, row by row, and its step as one map over them, each zipped
/// with its pair of a row of `Y1` and a column of `Y2`: the one warp loop of a GPU, the
/// warps' accumulators carried by the work-group's reduction.
pub(super) fn flatten_accumulator_nest(name: String) -> S {
    super::rise_rule(name, |e, names| {
        let (p, args) = applied(e, any_reduce, 3)?;
        let (accs, step) = as_lambda(args[0])?;
        let (y, body) = as_lambda(step)?;
        let (_, outer) = applied(body, |q| q == Prim::Map, 2)?;
        let (ar, row) = as_lambda(outer[0])?;
        let (_, acc_rows) = applied(outer[1], |q| q == Prim::Zip, 2)?;
        let (_, inner) = applied(row, |q| q == Prim::Map, 2)?;
        let (ac, b) = as_lambda(inner[0])?;
        let (_, acc_cols) = applied(inner[1], |q| q == Prim::Zip, 2)?;
        let (ys1, ys2) = (acc_rows[1], acc_cols[1]);
        let reads_fst = |x: &str, e: &Expr| e.any(&|n: &Expr| is_projection(n, Prim::Fst, x));
        let shaped = is_var(acc_rows[0], accs)
            && is_projection(acc_cols[0], Prim::Fst, ar)
            && ![ys1, ys2, b].iter().any(|t| occurs(accs, t))
            && !occurs(ar, ys2)
            && only_projected(b, ar)
            && only_projected(b, ac)
            && !reads_fst(ar, b)
            && ![accs, y, ar].contains(&ac)
            && ar != y;
        if !shaped {
            return None;
        }
        let (n, _) = array(ys2.ty()?)?;
        let (acc, w, r, c) = (
            names.fresh("acc"),
            names.fresh("w"),
            names.fresh("r"),
            names.fresh("c"),
        );
        let b = retype_under(ar, &retype_under(ac, b));
        let b = replace_projections(&b, ar, &fst(var(&w)), &fst(snd(var(&w))));
        let b = replace_projections(&b, ac, &fst(var(&w)), &snd(snd(var(&w))));
        let pairs = app(
            join(),
            app(
                map(lambda(
                    &r,
                    app(map(lambda(&c, pair(var(&r), var(&c)))), ys2.clone()),
                )),
                ys1.clone(),
            ),
        );
        let new_step = app(map(lambda(&w, b)), zip(var(&acc), pairs));
        let reduction = apps(
            prim(p),
            [
                lambda(&acc, lambda(y, retype_under(y, &new_step))),
                app(join(), args[1].clone()),
                args[2].clone(),
            ],
        );
        Some(app(split(n.clone()), reduction))
    })
}
