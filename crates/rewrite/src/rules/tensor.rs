//! Tensor cores (issue 26; Fireiron, Hagedorn et al., PACT'20, and Hagedorn's thesis):
//! the rules that take a tiled matrix product the last step down, to the warp-level
//! `mmaSync` (PTX `mma.sync.m16n8k16`), as `mmaWarps` in examples/fireiron.elv does.
//!
//! * [`mma_tile`](super::mma_tile) (`mmaTile`): a 16x8 tile accumulate in the shape the
//!   tiling rules produce (`reduceOuter` over a k step of 16) is one `mmaSync` on the
//!   tiles' fragments.
//! * [`fragment_accumulator`](super::fragment_accumulator) (`fragmentAccumulator`): a
//!   sequential reduction whose step reads its accumulator only through `fragC` and
//!   returns `unfragC (...)` keeps the accumulator as its fragment (`fragC ∘ unfragC` is
//!   the identity), so the lanes hold it in registers across the steps.
//! * [`constant_fragment`](super::constant_fragment) (`constantFragment`): the fragment of
//!   a tile of one value is that value in every lane's registers.
//!
//! The views `fragA`, `fragB`, `fragC` and `unfragC` are the prelude's definitions; a
//! program that calls them holds their lambdas once its definitions are inlined, and
//! these rules build and recognise exactly those lambdas (a normal form, `DFNF`,
//! β-reduces them away: apply these rules after the steps that normalise).

use crate::term::{
    any_reduce, applied, array, as_lambda, finish, is_var, no, occurs, retype_under,
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
    let Some((s, inner)) = as_lambda(op) else {
        return false;
    };
    let Some((p, body)) = as_lambda(inner) else {
        return false;
    };
    let Some((_, sum)) = applied(body, |q| q == Prim::Add, 2) else {
        return false;
    };
    let product = match (is_var(sum[0], s), is_var(sum[1], s)) {
        (true, false) => sum[1],
        (false, true) => sum[0],
        _ => return false,
    };
    let Some((_, factors)) = applied(product, |q| q == Prim::Mul, 2) else {
        return false;
    };
    let casts =
        |x: &Expr, y: &Expr| is_cast_to_f32(x, Prim::Fst, p) && is_cast_to_f32(y, Prim::Snd, p);
    s != p && (casts(factors[0], factors[1]) || casts(factors[1], factors[0]))
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

/// `e` with every `fragC acc` replaced by the variable `frag` (not under a binder of
/// `acc`).
fn replace_fragments(e: &Expr, acc: &str, frag: &str) -> Expr {
    if view_arg(e, "fragC").is_some_and(|a| is_var(a, acc)) {
        return var(frag);
    }
    use ExprKind::*;
    let kind = match e.kind() {
        Var(_) | Lit(_) | Prim(_) | Foreign(_) => return e.clone(),
        Lambda(x, _, _) if &**x == acc => return e.clone(),
        Lambda(x, t, b) => Lambda(x.clone(), t.clone(), replace_fragments(b, acc, frag)),
        App(f, a) => App(
            replace_fragments(f, acc, frag),
            replace_fragments(a, acc, frag),
        ),
        DepLambda(x, b) => DepLambda(x.clone(), replace_fragments(b, acc, frag)),
        DepApp(f, t) => DepApp(replace_fragments(f, acc, frag), t.clone()),
        Annot(b, t) => Annot(replace_fragments(b, acc, frag), t.clone()),
    };
    e.rebuild(kind)
}

/// `fragmentAccumulator`: `reduceX (fun acc y => unfragC E[fragC acc]) z xs ↦ unfragC
/// (reduceSeq (fun f y => E[f]) (fragC z) xs)`, the accumulator read only through `fragC`.
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
    let Some(stepped) = view_arg(body, "unfragC") else {
        return no();
    };
    let frag = names.fresh("frag");
    let replaced = replace_fragments(stepped, acc, &frag);
    if occurs(acc, &replaced) || acc == y {
        return Err(Failure::not_applicable_because(format!(
            "{name}: the step reads its accumulator `{acc}` other than as `fragC {acc}`, so it \
             cannot be kept as its fragment"
        )));
    }
    let op = lambda(
        &frag,
        lambda(y, retype_under(&frag, &retype_under(y, &replaced))),
    );
    // the step's accumulator and element differ in type now: `reduce` becomes `reduceSeq`
    let p = if p == Prim::Reduce {
        Prim::ReduceSeq
    } else {
        p
    };
    let reduction = apps(
        prim(p),
        [op, apply_view("fragC", args[1].clone())?, args[2].clone()],
    );
    apply_view("unfragC", reduction)
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
