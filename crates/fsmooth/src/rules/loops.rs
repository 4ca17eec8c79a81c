//! Loops (F-smooth paper §5): `ifold`s that run no iteration, change
//! nothing or change the accumulator in one iteration only, loop fission,
//! unrolling, and the index range a loop body may assume.

use super::{args2, args3, rewrite, some_if};
use crate::expr::{replace, Expr, ExprKind, Prim};
use elevate::{rule, Ctx, Failure, Strategy};

/// `foldZero`: `ifold f z 0 ~> z` (also for negative literal counts: no iteration)
pub fn fold_zero() -> Strategy<Expr> {
    rewrite("foldZero", |e, _| {
        let (_, z, n) = args3(e, Prim::IFold)?;
        some_if(matches!(n.kind(), ExprKind::Index(k) if *k <= 0), || {
            z.clone()
        })
    })
}

/// The deepest term `foldUnroll` builds: unrolling stops with an error beyond
/// it, rather than building a term that no pass can walk (nor the parser read).
pub const MAX_UNROLLED_DEPTH: usize = 1_000;

/// `foldUnroll`: `ifold f z n ~> ifold (fun a i -> f a (i + 1)) (f z 0) (n - 1)`
/// for a literal `n > 0` (peels the first iteration). Each step nests the
/// program deeper; past [`MAX_UNROLLED_DEPTH`] it aborts the rewrite with an
/// error saying so (`repeat(foldUnroll)` on a loop of 10¹² iterations).
pub fn fold_unroll() -> Strategy<Expr> {
    rule("foldUnroll", |e: &Expr, ctx: &mut Ctx<Expr>| {
        let Some((f, z, n)) = args3(e, Prim::IFold) else {
            return Err(Failure::not_applicable());
        };
        let ExprKind::Index(k) = n.kind() else {
            return Err(Failure::not_applicable());
        };
        if *k <= 0 {
            return Err(Failure::not_applicable());
        }
        if e.depth() + 4 > MAX_UNROLLED_DEPTH {
            return Err(Failure::Aborted(format!(
                "foldUnroll: unrolling this loop further would nest the program more than \
                 {MAX_UNROLLED_DEPTH} levels deep ({k} iterations are left); unroll a bounded \
                 number of iterations with `repeatN(n, foldUnroll)`, or only small loops"
            )));
        }
        let env = &mut ctx.env;
        let a = env.fresh("a", |x| f.has_free(x));
        let i = env.fresh("i", |x| f.has_free(x) || x == a.as_ref());
        let step = Expr::lam(
            a.clone(),
            None,
            Expr::lam(
                i.clone(),
                None,
                Expr::app(
                    Expr::app(f.clone(), Expr::var(a)),
                    Expr::bin(Prim::Add, Expr::var(i), Expr::index(1)),
                ),
            ),
        );
        let first = Expr::app(Expr::app(f.clone(), z.clone()), Expr::index(0));
        Ok(e.with_kind(ExprKind::Prim(
            Prim::IFold,
            vec![step, first, Expr::index(k - 1)],
        )))
    })
}

/// A step function `fun a i -> body` of `ifold`, taken apart.
pub(crate) struct Step<'e> {
    pub(crate) a: &'e crate::Name,
    pub(crate) ta: &'e Option<crate::Type>,
    pub(crate) i: &'e crate::Name,
    pub(crate) ti: &'e Option<crate::Type>,
    pub(crate) body: &'e Expr,
}

/// The parts of a step function `fun a i -> body` (with `a ≠ i`).
pub(crate) fn step_fn(f: &Expr) -> Option<Step<'_>> {
    let ExprKind::Lam(a, ta, inner) = f.kind() else {
        return None;
    };
    let ExprKind::Lam(i, ti, body) = inner.kind() else {
        return None;
    };
    if a == i {
        return None;
    }
    Some(Step { a, ta, i, ti, body })
}

/// `foldId`: `ifold (fun a i -> a) z n ~> z`
pub fn fold_id() -> Strategy<Expr> {
    rewrite("foldId", |e, _| {
        let (f, z, _) = args3(e, Prim::IFold)?;
        let Step { a, body, .. } = step_fn(f)?;
        some_if(body.is_var(a), || z.clone())
    })
}

/// `foldConditional`:
/// `ifold (fun a i -> if i == e0 then e1 else a) z n
///   ~> if 0 < n && 0 <= e0 && e0 < n then (let a = z in let i = e0 in e1) else z`
/// where `a, i ∉ fv(e0)` (also with `e0 == i`). Only iteration `e0` changes the
/// accumulator, and it starts from `z`; if `e0` is not an iteration, nothing does.
/// (`0 < n` comes first so that, like the loop, the result does not evaluate
/// `e0` when there is no iteration.)
pub fn fold_conditional() -> Strategy<Expr> {
    rewrite("foldConditional", |e, _| {
        let (f, z, n) = args3(e, Prim::IFold)?;
        let Step { a, i, body, .. } = step_fn(f)?;
        let ExprKind::If(cond, e1, other) = body.kind() else {
            return None;
        };
        if !other.is_var(a) {
            return None;
        }
        let (l, r) = args2(cond, Prim::Eq)?;
        let e0 = if l.is_var(i) {
            r
        } else if r.is_var(i) {
            l
        } else {
            return None;
        };
        if e0.has_free(a) || e0.has_free(i) {
            return None;
        }
        let in_range = Expr::bin(
            Prim::And,
            Expr::bin(
                Prim::And,
                Expr::bin(Prim::Lt, Expr::index(0), n.clone()),
                Expr::bin(Prim::Le, Expr::index(0), e0.clone()),
            ),
            Expr::bin(Prim::Lt, e0.clone(), n.clone()),
        );
        let hit = Expr::let_(
            a.clone(),
            z.clone(),
            Expr::let_(i.clone(), e0.clone(), e1.clone()),
        );
        Some(e.with_kind(ExprKind::If(in_range, hit, z.clone())))
    })
}

/// `loopFission`:
/// `ifold (fun a i -> (e0, e1)) z n
///   ~> (ifold (fun a i -> e0[fst a := a]) (fst z) n, ifold (fun a i -> e1[snd a := a]) (snd z) n)`
/// where `a` occurs in `e0` only as `fst a` and in `e1` only as `snd a` (and
/// in both), `z` is a pair and `n` a positive literal or `length x`: then the
/// two loops cost no more than the one.
pub fn loop_fission() -> Strategy<Expr> {
    rewrite("loopFission", |e, _| {
        let (f, z, n) = args3(e, Prim::IFold)?;
        let Step { a, ta, i, ti, body } = step_fn(f)?;
        let (e0, e1) = args2(body, Prim::Pair)?;
        // Two loops cost one more loop, one more pair and `n` twice, which the
        // projections of `a` saved in every iteration pay for if the loop runs
        // (`n` is `length x` or a positive literal) and `fst z`, `snd z` fold.
        let runs = matches!(n.kind(), ExprKind::Index(k) if *k > 0)
            || n.as_prim(Prim::Length)
                .is_some_and(|a| a[0].as_var().is_some());
        if !runs || z.as_prim(Prim::Pair).is_none() {
            return None;
        }
        let av = Expr::var(a.clone());
        let (e0, k0) = replace(e0, &Expr::fst(av.clone()), &av);
        let (e1, k1) = replace(e1, &Expr::snd(av.clone()), &av);
        // Every free occurrence of `a` must have been a projection.
        let c0 = args2(body, Prim::Pair)?.0.count_free(a);
        let c1 = args2(body, Prim::Pair)?.1.count_free(a);
        if k0 != c0 || k1 != c1 || k0 == 0 || k1 == 0 {
            return None;
        }
        let (t0, t1) = match ta {
            Some(crate::Type::Pair(t0, t1)) => (Some((**t0).clone()), Some((**t1).clone())),
            _ => (None, None),
        };
        let step = |t: Option<crate::Type>, body: Expr| {
            Expr::lam(a.clone(), t, Expr::lam(i.clone(), ti.clone(), body))
        };
        Some(e.with_kind(ExprKind::Prim(
            Prim::Pair,
            vec![
                Expr::ifold(step(t0, e0), Expr::fst(z.clone()), n.clone()),
                Expr::ifold(step(t1, e1), Expr::snd(z.clone()), n.clone()),
            ],
        )))
    })
}

/// Replaces the facts `0 <= i`, `i >= 0`, `i < n`, `n > i`, `0 < n`, `n > 0`
/// by `true` in `body`.
fn index_facts(body: &Expr, i: &crate::Name, n: &Expr) -> (Expr, usize) {
    let iv = Expr::var(i.clone());
    let zero = Expr::index(0);
    let facts = [
        Expr::bin(Prim::Lt, zero.clone(), n.clone()),
        Expr::bin(Prim::Gt, n.clone(), zero.clone()),
        Expr::bin(Prim::Le, zero.clone(), iv.clone()),
        Expr::bin(Prim::Ge, iv.clone(), zero),
        Expr::bin(Prim::Lt, iv.clone(), n.clone()),
        Expr::bin(Prim::Gt, n.clone(), iv),
    ];
    let mut total = 0;
    let mut body = body.clone();
    for fact in &facts {
        let (b, k) = replace(&body, fact, &Expr::boolean(true));
        body = b;
        total += k;
    }
    (body, total)
}

/// `buildIndexRange`: `build n (fun i -> e) ~> build n (fun i -> e[0 <= i := true, i < n := true, 0 < n := true])`
/// where `i ∉ fv(n)`: a generator is only called with `0 <= i < n`.
pub fn build_index_range() -> Strategy<Expr> {
    rewrite("buildIndexRange", |e, _| {
        let (n, f) = args2(e, Prim::Build)?;
        let ExprKind::Lam(i, t, body) = f.kind() else {
            return None;
        };
        if n.has_free(i) {
            return None;
        }
        let (body, k) = index_facts(body, i, n);
        some_if(k > 0, || {
            e.with_kind(ExprKind::Prim(
                Prim::Build,
                vec![
                    n.clone(),
                    f.with_kind(ExprKind::Lam(i.clone(), t.clone(), body)),
                ],
            ))
        })
    })
}

/// `foldIndexRange`: `ifold (fun a i -> e) z n ~> ifold (fun a i -> e[0 <= i := true, i < n := true, 0 < n := true]) z n`
/// where `a, i ∉ fv(n)`: the step function is only called with `0 <= i < n`.
pub fn fold_index_range() -> Strategy<Expr> {
    rewrite("foldIndexRange", |e, _| {
        let (f, z, n) = args3(e, Prim::IFold)?;
        let Step { a, ta, i, ti, body } = step_fn(f)?;
        if n.has_free(i) || n.has_free(a) {
            return None;
        }
        let (body, k) = index_facts(body, i, n);
        some_if(k > 0, || {
            let step = Expr::lam(
                a.clone(),
                ta.clone(),
                Expr::lam(i.clone(), ti.clone(), body),
            );
            e.with_kind(ExprKind::Prim(
                Prim::IFold,
                vec![step, z.clone(), n.clone()],
            ))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::apply;

    #[test]
    fn rules_rewrite_their_equations() {
        assert_eq!(apply("foldZero", "ifold f z 0"), Some("z".into()));
        assert_eq!(
            apply("foldUnroll", "ifold f z 2"),
            Some("ifold (fun a1 i2 -> f a1 (i2 + 1)) (f z 0) 1".into())
        );
        assert_eq!(
            apply("foldId", "ifold (fun a i -> a) z n"),
            Some("z".into())
        );
        assert_eq!(
            apply(
                "foldConditional",
                "ifold (fun a j -> if j == i then a + v[j] else a) 0.0 n"
            ),
            Some(
                "if 0 < n && 0 <= i && i < n then let a = 0.0 in let j = i in a + v[j] else 0.0"
                    .into()
            )
        );
        assert_eq!(
            apply("loopFission", "ifold (fun a i -> (fst a + v[i], snd a * v[i])) (0.0, 1.0) (length v)"),
            Some("(ifold (fun a i -> a + v[i]) (fst (0.0, 1.0)) (length v), ifold (fun a i -> a * v[i]) (snd (0.0, 1.0)) (length v))".into())
        );
        assert_eq!(
            apply("loopFission", "ifold (fun a i -> (fst a, fst a)) z n"),
            None
        );
        assert_eq!(
            apply(
                "buildIndexRange",
                "build n (fun i -> if 0 <= i && i < n then 1 else 0)"
            ),
            Some("build n (fun i -> if true && true then 1 else 0)".into())
        );
        assert_eq!(
            apply(
                "foldIndexRange",
                "ifold (fun a i -> if i < n then a else 0) 1 n"
            ),
            Some("ifold (fun a i -> if true then a else 0) 1 n".into())
        );
    }
}
