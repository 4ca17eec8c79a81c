//! Computing a value once (the default schedules' answer to recomputed reductions):
//! a reduction a mapped function does not need its argument for is bound outside the
//! map (`hoistInvariant`), a value a body computes twice is bound once (`shareRepeated`),
//! and an array bound by `let` that is read more than once is stored (`storeShared`).
//! Their equations are their rows in [`super::RULES`].
//!
//! Only values that cannot fail are moved or shared ([`cannot_fail`]): computing such a
//! value where it was not needed (a map over no elements, a branch of `select` not taken)
//! changes no result and raises no error, so the rules keep the meaning of a program
//! exactly, errors included (docs/semantics.md).

use super::rise_rule;
use crate::schedule::Replace;
use crate::term::{no, prim_app};
use crate::S;
use elevate::rule;
use rise::builder::*;
use rise::types::Name;
use rise::{AddrSpace, DataType, Expr, ExprKind, Prim, Type, TypeArg};

pub(super) fn hoist_invariant(name: String) -> S {
    rise_rule(name, |e, names| {
        let (head, f, xs) = applied_map(e)?;
        let ExprKind::Lambda(x, annot, body) = f.kind() else {
            return None;
        };
        let hoisted = first_sub(body, &mut vec![x.clone()], &|s| is_hoistable(s))?;
        let v = names.fresh("hoisted");
        let body = replaced(body, &hoisted, &v)?;
        let f = Expr::new(ExprKind::Lambda(x.clone(), annot.clone(), body), f.span());
        let map = app2(head.clone(), f, xs.clone());
        Some(app2(prim(Prim::Let), hoisted, lambda(&v, map)))
    })
}

pub(super) fn share_repeated(name: String) -> S {
    rise_rule(name, |e, names| {
        let ExprKind::Lambda(x, annot, body) = e.kind() else {
            return None;
        };
        let candidates = subs(body, &mut Vec::new(), &|s| is_shareable(s));
        let shared = candidates
            .iter()
            .find(|c| candidates.iter().filter(|d| same_term(c, d)).count() >= 2)?;
        let v = names.fresh("shared");
        let body = replaced(body, shared, &v)?;
        let bound = app2(prim(Prim::Let), shared.clone(), lambda(&v, body));
        Some(Expr::new(
            ExprKind::Lambda(x.clone(), annot.clone(), bound),
            e.span(),
        ))
    })
}

pub(super) fn store_shared(name: String) -> S {
    rule(name, |e: &Expr, _| {
        let Some(a) = prim_app(e).filter(|a| a.prim == Prim::Let && a.args.len() == 2) else {
            return no();
        };
        let (value, then) = (a.args[0], a.args[1]);
        let ExprKind::Lambda(x, _, body) = then.kind() else {
            return no();
        };
        if !is_array(value) || value.is_view() || reads(x, body, false) < 2 {
            return no();
        }
        let stored = app2(
            dep_app(prim(Prim::ToMem), TypeArg::AddrSpace(AddrSpace::Global)),
            value.clone(),
            then.clone(),
        );
        crate::term::finish(stored, e)
    })
}

/// `map f xs` (the high-level `map`): the head `map` with its type arguments, `f`, `xs`.
fn applied_map(e: &Expr) -> Option<(&Expr, &Expr, &Expr)> {
    let ExprKind::App(mf, xs) = e.kind() else {
        return None;
    };
    let ExprKind::App(head, f) = mf.kind() else {
        return None;
    };
    let (prim_head, args) = head.spine();
    let only_types = args.iter().all(|a| matches!(a, rise::expr::Arg::Type(_)));
    (prim_head.as_prim() == Some(Prim::Map) && only_types).then_some((head, f, xs))
}

/// `body` with every occurrence of `term` (in its scope) replaced by the variable `v`.
fn replaced(body: &Expr, term: &Expr, v: &str) -> Option<Expr> {
    let var = Expr::typed(ExprKind::Var(v.into()), term.ty()?.clone(), term.span());
    let replace = Replace {
        term,
        free: term.free_vars(),
        by: &var,
    };
    Some(replace.within(body, &mut Vec::new()))
}

/// The first sub-expression of `e` (top-down) that `want` holds for and that mentions
/// none of `bound` (the variables bound between the binding site and it).
fn first_sub(e: &Expr, bound: &mut Vec<Name>, want: &dyn Fn(&Expr) -> bool) -> Option<Expr> {
    if want(e) && !mentions_any(e, bound) {
        return Some(e.clone());
    }
    children(e, bound, &mut |c, bound| first_sub(c, bound, want))
}

/// Every sub-expression of `e` (top-down) that `want` holds for and that mentions none of
/// `bound`.
fn subs(e: &Expr, bound: &mut Vec<Name>, want: &dyn Fn(&Expr) -> bool) -> Vec<Expr> {
    let mut out = Vec::new();
    collect(e, bound, want, &mut out);
    out
}

fn collect(e: &Expr, bound: &mut Vec<Name>, want: &dyn Fn(&Expr) -> bool, out: &mut Vec<Expr>) {
    if want(e) && !mentions_any(e, bound) {
        out.push(e.clone());
    }
    let _: Option<()> = children(e, bound, &mut |c, bound| {
        collect(c, bound, want, out);
        None
    });
}

/// `visit` on the children of `e` in order (with the variable a lambda binds added to
/// `bound`), until it returns something. Nothing below a dependent lambda: a term there
/// may mention its type-level variable.
fn children<T>(
    e: &Expr,
    bound: &mut Vec<Name>,
    visit: &mut dyn FnMut(&Expr, &mut Vec<Name>) -> Option<T>,
) -> Option<T> {
    match e.kind() {
        ExprKind::Lambda(x, _, b) => {
            bound.push(x.clone());
            let found = visit(b, bound);
            bound.pop();
            found
        }
        ExprKind::App(f, a) => visit(f, bound).or_else(|| visit(a, bound)),
        ExprKind::DepApp(f, _) | ExprKind::Annot(f, _) => visit(f, bound),
        _ => None,
    }
}

fn mentions_any(e: &Expr, vars: &[Name]) -> bool {
    vars.iter().any(|v| crate::term::occurs(v, e))
}

/// Equal terms: alpha-equal (the sizes compared first, as a cheap filter).
fn same_term(a: &Expr, b: &Expr) -> bool {
    a.nodes_and_depth() == b.nodes_and_depth() && a.alpha_eq(b)
}

/// What `hoistInvariant` binds outside a map: a value that is no array (those are stages,
/// stored where they are read by the store-every-stage schedules), that holds a reduction
/// and cannot fail.
fn is_hoistable(e: &Expr) -> bool {
    matches!(e.ty(), Some(Type::Data(d)) if !matches!(d, DataType::Array(..)))
        && holds(e, &|p| p.is_reduce())
        && cannot_fail(e)
}

/// What `shareRepeated` binds once: a value (not a variable, not a view) that holds a
/// reduction or a map that computes, and cannot fail.
fn is_shareable(e: &Expr) -> bool {
    matches!(e.ty(), Some(Type::Data(_)))
        && !e.is_view()
        && (holds(e, &|p| p.is_reduce()) || computes_map(e))
        && cannot_fail(e)
}

fn is_array(e: &Expr) -> bool {
    matches!(e.ty(), Some(Type::Data(DataType::Array(..))))
}

/// Whether a primitive `p` holds for occurs in `e`.
fn holds(e: &Expr, p: &dyn Fn(Prim) -> bool) -> bool {
    match e.kind() {
        ExprKind::Prim(q) => p(*q),
        ExprKind::Lambda(_, _, b) | ExprKind::DepLambda(_, b) => holds(b, p),
        ExprKind::App(f, a) => holds(f, p) || holds(a, p),
        ExprKind::DepApp(f, _) | ExprKind::Annot(f, _) => holds(f, p),
        _ => false,
    }
}

/// Whether `e` applies a map (of any kind) to a function that is no view.
fn computes_map(e: &Expr) -> bool {
    let here = prim_app(e)
        .is_some_and(|a| a.prim.is_map() && a.args.first().is_some_and(|f| !f.is_view_function()));
    here || match e.kind() {
        ExprKind::Lambda(_, _, b) | ExprKind::DepLambda(_, b) => computes_map(b),
        ExprKind::App(f, a) => computes_map(f) || computes_map(a),
        ExprKind::DepApp(f, _) | ExprKind::Annot(f, _) => computes_map(f),
        _ => false,
    }
}

/// Whether computing `e` can stop the program with no error possible: no integer
/// division or remainder, shift, `natType` arithmetic, cast to an integer, index read from data,
/// `scatter`, foreign call or loop of its own memory. A whitelist: a primitive not named
/// here counts as one that can fail.
pub(crate) fn cannot_fail(e: &Expr) -> bool {
    match e.kind() {
        ExprKind::Var(_) | ExprKind::Lit(_) => true,
        ExprKind::Foreign(_) => false,
        ExprKind::Prim(p) => prim_cannot_fail(*p, e.ty()),
        ExprKind::Lambda(_, _, b) | ExprKind::DepLambda(_, b) => cannot_fail(b),
        ExprKind::App(f, a) => cannot_fail(f) && cannot_fail(a),
        ExprKind::DepApp(f, _) | ExprKind::Annot(f, _) => cannot_fail(f),
    }
}

fn prim_cannot_fail(p: Prim, ty: Option<&Type>) -> bool {
    use Prim::*;
    if p.math().is_some() {
        return true;
    }
    match p {
        Add | Sub | Mul | Neg => operand(ty).is_some_and(|d| !matches!(d, DataType::NatType)),
        Div | Mod => operand(ty).is_some_and(is_float_data),
        // to a float: no value is out of range
        Cast => result(ty).is_some_and(is_float_data),
        Id | Select | Not | Gt | Lt | Le | Ge | Equal | NotEqual | And | Or | BitAnd | BitOr
        | BitXor | BitNot | Let | Take | Drop | Concat | Split | Join | Slide | Transpose | Zip
        | Unzip | MakePair | Fst | Snd | MapFst | MapSnd | PadCst | PadClamp | PadMirror
        | PadWrap | Map | Reduce | AsVector | AsScalar | VectorFromScalar | MakeArray
        | MakeVector | Lane | Generate | MapSeq | MapPar | MapVec | ReduceSeq | IndexAsNat => true,
        _ => false,
    }
}

/// The first operand's type of an instantiated primitive.
fn operand(ty: Option<&Type>) -> Option<&DataType> {
    match ty? {
        Type::Fun(p, _) => match &**p {
            Type::Data(d) => Some(d),
            _ => None,
        },
        _ => None,
    }
}

/// The result type of an instantiated one-operand primitive.
fn result(ty: Option<&Type>) -> Option<&DataType> {
    match ty? {
        Type::Fun(_, r) => match &**r {
            Type::Data(d) => Some(d),
            _ => None,
        },
        _ => None,
    }
}

fn is_float_data(d: &DataType) -> bool {
    match d {
        DataType::Scalar(s) => s.is_float(),
        DataType::Vector(_, t) => is_float_data(t),
        _ => false,
    }
}

/// How often `x` is read in `e`, an occurrence inside a function that a loop calls (any
/// lambda but the continuation of `let` or `toMem`) counting twice; saturating.
fn reads(x: &str, e: &Expr, in_loop: bool) -> usize {
    if let Some(a) = prim_app(e).filter(|a| matches!(a.prim, Prim::Let | Prim::ToMem)) {
        if let [value, then] = a.args[..] {
            if let ExprKind::Lambda(y, _, b) = then.kind() {
                let after = if **y == *x { 0 } else { reads(x, b, in_loop) };
                return reads(x, value, in_loop).saturating_add(after);
            }
        }
    }
    match e.kind() {
        ExprKind::Var(y) if **y == *x => {
            if in_loop {
                2
            } else {
                1
            }
        }
        ExprKind::Lambda(y, _, b) if **y != *x => reads(x, b, true),
        ExprKind::DepLambda(_, b) | ExprKind::DepApp(b, _) | ExprKind::Annot(b, _) => {
            reads(x, b, in_loop)
        }
        ExprKind::App(f, a) => reads(x, f, in_loop).saturating_add(reads(x, a, in_loop)),
        _ => 0,
    }
}
