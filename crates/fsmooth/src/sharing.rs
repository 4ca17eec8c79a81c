//! The rules that keep work from growing ([`crate::cost`]): splitting a
//! `let`-bound pair into its components, hoisting loop-invariant expressions
//! out of `build` and `ifold`, and sharing common sub-expressions; and the
//! use counts that decide when `letInline` may inline.
//!
//! A term is evaluated *unconditionally* within another when reaching it
//! passes through no branch of an `if`, no second operand of `&&`/`||` and no
//! `fun` (a function body runs once per call, which may be never or many
//! times). The rules only move work that is evaluated unconditionally, and
//! only to a place where it is evaluated once instead of once per iteration or
//! per occurrence.

use crate::expr::{replace, Env, Expr, ExprKind, Name, Prim};
use crate::rules::{args2, args3, rewrite, step_fn, Step};
use elevate::Strategy;

/// How often `x` is used in `e`, where a use inside a `fun` (a loop body or a
/// function that may be called many times) counts as two.
pub fn weighted_uses(e: &Expr, x: &str) -> usize {
    if !e.has_free(x) {
        return 0;
    }
    match e.kind() {
        ExprKind::Var(_) => 1,
        ExprKind::Lam(_, _, b) => 2 * weighted_uses(b, x),
        _ => e.children().iter().map(|c| weighted_uses(c, x)).sum(),
    }
}

/// Whether computing `e` is free of work: a variable, a literal or a `fun`.
pub fn is_trivial(e: &Expr) -> bool {
    matches!(
        e.kind(),
        ExprKind::Var(_)
            | ExprKind::Double(_)
            | ExprKind::Index(_)
            | ExprKind::Bool(_)
            | ExprKind::Lam(..)
    )
}

/// The operations in `e` counted once each (built-ins, calls, conditionals).
fn static_ops(e: &Expr) -> usize {
    let own = usize::from(matches!(
        e.kind(),
        ExprKind::Prim(..) | ExprKind::App(..) | ExprKind::If(..)
    ));
    own + e.children().into_iter().map(static_ops).sum::<usize>()
}

/// Whether the name `n` occurs anywhere in `e`, free or as a binder.
fn mentions(e: &Expr, n: &str) -> bool {
    match e.kind() {
        ExprKind::Var(x) => x.as_ref() == n,
        ExprKind::Lam(x, _, _) | ExprKind::Let(x, _, _) if x.as_ref() == n => true,
        _ => e.children().iter().any(|c| mentions(c, n)),
    }
}

/// A fresh name like `base` that neither occurs in any of `terms` nor is `x`.
fn fresh_for(env: &mut Env, base: &str, terms: &[&Expr]) -> Name {
    env.fresh(base, |n| terms.iter().any(|t| mentions(t, n)))
}

/// The sub-terms of `e` evaluated unconditionally whenever `e` is, in
/// evaluation order (outer before inner), whose free variables are not bound
/// inside `e` nor in `bound`. `stop` says which candidates not to look into.
fn unconditional(
    e: &Expr,
    bound: &mut Vec<Name>,
    out: &mut Vec<Expr>,
    stop: &dyn Fn(&Expr) -> bool,
) {
    let free_here = !e.free_vars().iter().any(|x| bound.contains(x));
    if free_here && !is_trivial(e) {
        out.push(e.clone());
        if stop(e) {
            return;
        }
    }
    match e.kind() {
        ExprKind::Var(_)
        | ExprKind::Double(_)
        | ExprKind::Index(_)
        | ExprKind::Bool(_)
        | ExprKind::Lam(..) => {}
        ExprKind::Let(x, e0, e1) => {
            unconditional(e0, bound, out, stop);
            bound.push(x.clone());
            unconditional(e1, bound, out, stop);
            bound.pop();
        }
        ExprKind::If(c, _, _) => unconditional(c, bound, out, stop),
        ExprKind::Prim(Prim::And | Prim::Or, args) => unconditional(&args[0], bound, out, stop),
        ExprKind::App(f, a) => {
            unconditional(f, bound, out, stop);
            unconditional(a, bound, out, stop);
        }
        ExprKind::Prim(_, args) => {
            for a in args {
                unconditional(a, bound, out, stop);
            }
        }
    }
}

/// Whether evaluating `e` cannot fail, whatever the values of its free
/// variables (of the right types): no call, no index that is not a loop index
/// running over that very array, no arithmetic that may be on `Index`es
/// (overflow, division by zero), no `build` of a size that may be negative.
fn cannot_fail(e: &Expr, loops: &mut Vec<(Name, Expr)>) -> bool {
    use ExprKind as K;
    match e.kind() {
        K::Var(_) | K::Double(_) | K::Index(_) | K::Bool(_) => true,
        K::App(..) => false,
        K::Lam(x, _, b) => under(x, b, loops),
        K::Let(x, e0, e1) => cannot_fail(e0, loops) && under(x, e1, loops),
        K::If(c, a, b) => cannot_fail(c, loops) && cannot_fail(a, loops) && cannot_fail(b, loops),
        K::Prim(op, args) => {
            let args_ok =
                |loops: &mut Vec<(Name, Expr)>| args.iter().all(|a| cannot_fail(a, loops));
            match op {
                Prim::Get => {
                    let (a, i) = (&args[0], &args[1]);
                    let Some(i) = i.as_var() else { return false };
                    let in_range = loops
                        .iter()
                        .rev()
                        .find(|(j, _)| j == i)
                        .is_some_and(|(_, n)| n.as_prim(Prim::Length).is_some_and(|l| l[0] == *a));
                    in_range && cannot_fail(a, loops)
                }
                Prim::Build => {
                    let (n, f) = (&args[0], &args[1]);
                    let size_ok = n.as_prim(Prim::Length).is_some()
                        || matches!(n.kind(), K::Index(k) if *k >= 0);
                    size_ok && cannot_fail(n, loops) && loop_body_ok(f, None, n, loops)
                }
                Prim::IFold => {
                    let (f, z, n) = (&args[0], &args[1], &args[2]);
                    if !(cannot_fail(z, loops) && cannot_fail(n, loops)) {
                        return false;
                    }
                    match step_fn(f) {
                        Some(Step { a, i, body, .. }) => {
                            let lam = Expr::lam(i.clone(), None, body.clone());
                            loop_body_ok(&lam, Some(a), n, loops)
                        }
                        None => cannot_fail(f, loops),
                    }
                }
                // Derivatives call their function, which may fail.
                op if op.is_derivative() => false,
                op if op.is_arith() => is_double(e) && args_ok(loops),
                _ => args_ok(loops),
            }
        }
    }
}

/// `cannot_fail` for a loop body `fun i -> body` (with the accumulator `a`)
/// whose index runs over `0 .. n`.
fn loop_body_ok(f: &Expr, a: Option<&Name>, n: &Expr, loops: &mut Vec<(Name, Expr)>) -> bool {
    let ExprKind::Lam(i, _, body) = f.kind() else {
        return cannot_fail(f, loops);
    };
    let saved = loops.clone();
    if let Some(a) = a {
        loops.retain(|(j, m)| j != a && !m.has_free(a));
    }
    loops.retain(|(j, m)| j != i && !m.has_free(i));
    if !n.has_free(i) && a.is_none_or(|a| !n.has_free(a)) {
        loops.push((i.clone(), n.clone()));
    }
    let ok = cannot_fail(body, loops);
    *loops = saved;
    ok
}

/// `cannot_fail` of `body` under the binder `x`.
fn under(x: &Name, body: &Expr, loops: &mut Vec<(Name, Expr)>) -> bool {
    let saved = loops.clone();
    loops.retain(|(j, m)| j != x && !m.has_free(x));
    let ok = cannot_fail(body, loops);
    *loops = saved;
    ok
}

/// Whether `e` is syntactically a `Double` computation.
fn is_double(e: &Expr) -> bool {
    crate::rules::syntactic_type(e) == Some(true)
}

/// `letPairSplit`: `let x = (e0, e1) in e ~> let x1 = e0 in let x2 = e1 in
/// e[fst x := x1, snd x := x2]` where every use of `x` in `e` is `fst x` or `snd x`.
pub fn let_pair_split() -> Strategy<Expr> {
    rewrite("letPairSplit", |e, env| {
        let ExprKind::Let(x, v, body) = e.kind() else {
            return None;
        };
        let (e0, e1) = args2(v, Prim::Pair)?;
        let xv = Expr::var(x.clone());
        let x1 = fresh_for(env, x, &[body, e1]);
        let x2 = fresh_for(env, x, &[body, &Expr::var(x1.clone())]);
        let (b, k0) = replace(body, &Expr::fst(xv.clone()), &Expr::var(x1.clone()));
        let (b, k1) = replace(&b, &Expr::snd(xv), &Expr::var(x2.clone()));
        if k0 + k1 == 0 || b.has_free(x) {
            return None;
        }
        Some(e.with_kind(ExprKind::Let(x1, e0.clone(), Expr::let_(x2, e1.clone(), b))))
    })
}

/// Whether `e` is `length x` for a variable `x`, or a pair of variables and
/// literals: one operation, left in place so that loop bounds stay readable
/// and initial values of loops stay pairs (which `loopFission` needs).
fn is_small_value(e: &Expr) -> bool {
    let all_trivial = |args: &[Expr]| args.iter().all(is_trivial);
    e.as_prim(Prim::Length).is_some_and(all_trivial)
        || e.as_prim(Prim::Pair).is_some_and(all_trivial)
}

/// `loopInvariant`: `build n (fun i -> C[s]) ~> let t = s in build n (fun i ->
/// C[t])` and likewise for the step of `ifold f z n`, where `s` is evaluated
/// unconditionally in every iteration, mentions neither the index nor the
/// accumulator nor anything bound inside the body, cannot fail, and `n` is
/// `length a` or a positive literal (the loop is not known to be empty).
pub fn loop_invariant() -> Strategy<Expr> {
    rewrite("loopInvariant", |e, env| {
        let (n, mut bound, body) = if let Some((n, f)) = args2(e, Prim::Build) {
            let ExprKind::Lam(i, _, body) = f.kind() else {
                return None;
            };
            (n, vec![i.clone()], body)
        } else {
            let (f, _, n) = args3(e, Prim::IFold)?;
            let Step { a, i, body, .. } = step_fn(f)?;
            (n, vec![a.clone(), i.clone()], body)
        };
        let runs =
            n.as_prim(Prim::Length).is_some() || matches!(n.kind(), ExprKind::Index(k) if *k > 0);
        if !runs {
            return None;
        }
        let mut found = Vec::new();
        let stop = |s: &Expr| cannot_fail(s, &mut Vec::new());
        unconditional(body, &mut bound, &mut found, &stop);
        let s = found
            .into_iter()
            .find(|s| !is_small_value(s) && cannot_fail(s, &mut Vec::new()))?;
        let t = fresh_for(env, "t", &[e]);
        let (loop_, k) = replace(e, &s, &Expr::var(t.clone()));
        some(k > 0, || e.with_kind(ExprKind::Let(t, s, loop_)))
    })
}

/// `shareCommon`: `C[s, s] ~> let t = s in C[t, t]` where both occurrences of
/// `s` (an expression of at least two operations) are evaluated
/// unconditionally and mention nothing bound inside the term.
pub fn share_common() -> Strategy<Expr> {
    rewrite("shareCommon", |e, env| {
        if is_trivial(e) {
            return None;
        }
        let mut found = Vec::new();
        unconditional(e, &mut Vec::new(), &mut found, &|_| false);
        let worth: Vec<&Expr> = found.iter().filter(|s| static_ops(s) >= 2).collect();
        let s = worth
            .iter()
            .enumerate()
            .find(|(k, s)| worth[k + 1..].iter().any(|o| o == *s))
            .map(|(_, s)| (*s).clone())?;
        let t = fresh_for(env, "t", &[e]);
        let (shared, k) = replace(e, &s, &Expr::var(t.clone()));
        some(k > 1, || e.with_kind(ExprKind::Let(t, s, shared)))
    })
}

fn some(cond: bool, e: impl FnOnce() -> Expr) -> Option<Expr> {
    cond.then(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_expr;

    fn apply(s: Strategy<Expr>, src: &str) -> Option<String> {
        let e = parse_expr(src).unwrap();
        s.apply(&e).ok().map(|r| r.to_string())
    }

    #[test]
    fn uses_inside_functions_count_as_many() {
        let e = parse_expr("x + build n (fun i -> x)").unwrap();
        assert_eq!(weighted_uses(&e, "x"), 3);
        let e = parse_expr("if c then x else 1.0").unwrap();
        assert_eq!(weighted_uses(&e, "x"), 1);
    }

    #[test]
    fn pairs_split_when_only_projected() {
        assert_eq!(
            apply(
                let_pair_split(),
                "let d = (a * b, c) in fst d + snd d * fst d"
            ),
            Some("let d1 = a * b in let d2 = c in d1 + d2 * d1".into())
        );
        assert_eq!(apply(let_pair_split(), "let d = (a, c) in f d"), None);
    }

    #[test]
    fn invariants_leave_loops() {
        assert_eq!(
            apply(
                loop_invariant(),
                "build (length v) (fun i -> exp v[i] / ifold (fun s j -> s + exp v[j]) 0.0 (length v))"
            ),
            Some("let t1 = ifold (fun s j -> s + exp v[j]) 0.0 (length v) in build (length v) (fun i -> exp v[i] / t1)".into())
        );
        // `v[0]` may fail on an empty `v`, which the loop never reads.
        assert_eq!(
            apply(loop_invariant(), "build (length v) (fun i -> v[0] * v[i])"),
            None
        );
        // Conditional work stays where it is.
        assert_eq!(
            apply(
                loop_invariant(),
                "build (length v) (fun i -> if i == 0 then exp x else 0.0)"
            ),
            None
        );
        // A loop that may not run keeps its work.
        assert_eq!(apply(loop_invariant(), "build k (fun i -> exp x)"), None);
        assert_eq!(
            apply(loop_invariant(), "ifold (fun a i -> a + exp x) 0.0 3"),
            Some("let t1 = exp x in ifold (fun a i -> a + t1) 0.0 3".into())
        );
    }

    #[test]
    fn common_subexpressions_are_shared() {
        assert_eq!(
            apply(
                share_common(),
                "exp (2.0 * x) - 1.0 / (exp (2.0 * x) + 1.0)"
            ),
            Some("let t1 = exp (2.0 * x) in t1 - 1.0 / (t1 + 1.0)".into())
        );
        // Only unconditional occurrences count.
        assert_eq!(
            apply(share_common(), "if c then exp (2.0 * x) else exp (2.0 * x)"),
            None
        );
        // Not across the binder of a variable they mention.
        assert_eq!(
            apply(
                share_common(),
                "exp (2.0 * x) + (let x = 1.0 in exp (2.0 * x))"
            ),
            None
        );
    }
}
