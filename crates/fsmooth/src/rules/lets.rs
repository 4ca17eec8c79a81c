//! Lambdas and `let`s (F-smooth paper §5, Fig. 6; thesis Figure 5.13):
//! β-reduction as `funToLet`, then inlining (`letPartialEval`, or
//! `letInline` where that duplicates no work), and the moves of a `let`
//! through applications, built-ins and other `let`s.

use super::{rewrite, some_if};
use crate::expr::{rename_away, subst, Expr, ExprKind, Prim};
use elevate::Strategy;

/// `funToLet`: `(fun x -> e0) e1 ~> let x = e1 in e0`
pub fn fun_to_let() -> Strategy<Expr> {
    rewrite("funToLet", |e, _| {
        let ExprKind::App(f, a) = e.kind() else {
            return None;
        };
        let ExprKind::Lam(x, _, body) = f.kind() else {
            return None;
        };
        Some(e.with_kind(ExprKind::Let(x.clone(), a.clone(), body.clone())))
    })
}

/// `letPartialEval`: `let x = e0 in e1 ~> e1[x := e0]` (capture-avoiding)
pub fn let_partial_eval() -> Strategy<Expr> {
    rewrite("letPartialEval", |e, env| {
        let ExprKind::Let(x, e0, e1) = e.kind() else {
            return None;
        };
        Some(subst(e1, x, e0, env))
    })
}

/// `letInline`: `let x = e0 in e1 ~> e1[x := e0]` when `e0` is a variable, a
/// literal or a `fun`, or `x` occurs at most once in `e1` and not inside a
/// `fun` (a loop body, called many times): no work is duplicated.
pub fn let_inline() -> Strategy<Expr> {
    rewrite("letInline", |e, env| {
        let ExprKind::Let(x, e0, e1) = e.kind() else {
            return None;
        };
        let cheap = crate::sharing::is_trivial(e0) || crate::sharing::weighted_uses(e1, x) <= 1;
        some_if(cheap, || subst(e1, x, e0, env))
    })
}

/// `deadLet`: `let x = e0 in e1 ~> e1` where `x ∉ fv(e1)`
pub fn dead_let() -> Strategy<Expr> {
    rewrite("deadLet", |e, _| {
        let ExprKind::Let(x, _, e1) = e.kind() else {
            return None;
        };
        some_if(!e1.has_free(x), || e1.clone())
    })
}

/// `letApp`: `f (let x = e0 in e1) ~> let x = e0 in f e1` (`x` renamed if `f` mentions it)
pub fn let_app() -> Strategy<Expr> {
    rewrite("letApp", |e, env| {
        let ExprKind::App(f, a) = e.kind() else {
            return None;
        };
        let ExprKind::Let(x, e0, e1) = a.kind() else {
            return None;
        };
        let (x, e1) = rename_away(x, e1, env, |n| f.has_free(n));
        Some(e.with_kind(ExprKind::Let(x, e0.clone(), Expr::app(f.clone(), e1))))
    })
}

/// `appLet`: `(let x = e0 in e1) e2 ~> let x = e0 in e1 e2` (`x` renamed if `e2` mentions it)
pub fn app_let() -> Strategy<Expr> {
    rewrite("appLet", |e, env| {
        let ExprKind::App(f, a) = e.kind() else {
            return None;
        };
        let ExprKind::Let(x, e0, e1) = f.kind() else {
            return None;
        };
        let (x, e1) = rename_away(x, e1, env, |n| a.has_free(n));
        Some(e.with_kind(ExprKind::Let(x, e0.clone(), Expr::app(e1, a.clone()))))
    })
}

/// `primLet`: `op(.., let x = e0 in e1, ..) ~> let x = e0 in op(.., e1, ..)` for
/// the first `let` argument of a built-in (not the second operand of `&&`/`||`,
/// which is evaluated only sometimes).
pub fn prim_let() -> Strategy<Expr> {
    rewrite("primLet", |e, env| {
        let ExprKind::Prim(op, args) = e.kind() else {
            return None;
        };
        let lazy = matches!(op, Prim::And | Prim::Or);
        let k = args
            .iter()
            .enumerate()
            .position(|(k, a)| matches!(a.kind(), ExprKind::Let(..)) && !(lazy && k == 1))?;
        let ExprKind::Let(x, e0, e1) = args[k].kind() else {
            return None;
        };
        let (x, e1) = rename_away(x, e1, env, |n| {
            args.iter()
                .enumerate()
                .any(|(j, a)| j != k && a.has_free(n))
        });
        let mut new_args = args.clone();
        new_args[k] = e1;
        Some(e.with_kind(ExprKind::Let(x, e0.clone(), Expr::prim(*op, new_args))))
    })
}

/// `letFloat`: `let x = (let y = e0 in e1) in e2 ~> let y = e0 in let x = e1 in e2`
/// (`y` renamed if `e2` mentions it)
pub fn let_float() -> Strategy<Expr> {
    rewrite("letFloat", |e, env| {
        let ExprKind::Let(x, v, e2) = e.kind() else {
            return None;
        };
        let ExprKind::Let(y, e0, e1) = v.kind() else {
            return None;
        };
        let (y, e1) = rename_away(y, e1, env, |n| n != x.as_ref() && e2.has_free(n));
        Some(e.with_kind(ExprKind::Let(
            y,
            e0.clone(),
            Expr::let_(x.clone(), e1, e2.clone()),
        )))
    })
}

/// `letDup`: `let x = e0 in let y = e0 in e1 ~> let x = e0 in let y = x in e1`
/// where `x ∉ fv(e0)`
pub fn let_dup() -> Strategy<Expr> {
    rewrite("letDup", |e, _| {
        let ExprKind::Let(x, e0, rest) = e.kind() else {
            return None;
        };
        let ExprKind::Let(y, e0b, e1) = rest.kind() else {
            return None;
        };
        some_if(e0 == e0b && !e0.has_free(x), || {
            e.with_kind(ExprKind::Let(
                x.clone(),
                e0.clone(),
                rest.with_kind(ExprKind::Let(y.clone(), Expr::var(x.clone()), e1.clone())),
            ))
        })
    })
}

/// `letSwap`: `let x = e0 in let y = e1 in e2 ~> let y = e1 in let x = e0 in e2`
/// where `x ≠ y`, `x ∉ fv(e1)`, `y ∉ fv(e0)` (it undoes itself: use it with care)
pub fn let_swap() -> Strategy<Expr> {
    rewrite("letSwap", |e, _| {
        let ExprKind::Let(x, e0, rest) = e.kind() else {
            return None;
        };
        let ExprKind::Let(y, e1, e2) = rest.kind() else {
            return None;
        };
        some_if(x != y && !e1.has_free(x) && !e0.has_free(y), || {
            e.with_kind(ExprKind::Let(
                y.clone(),
                e1.clone(),
                Expr::let_(x.clone(), e0.clone(), e2.clone()),
            ))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::apply;

    #[test]
    fn rules_rewrite_their_equations() {
        assert_eq!(
            apply("funToLet", "(fun x -> x + 1) 2"),
            Some("let x = 2 in x + 1".into())
        );
        assert_eq!(
            apply("letPartialEval", "let i = j in fun j -> M[j][i]"),
            Some("fun j1 -> M[j1][j]".into())
        );
        assert_eq!(apply("letInline", "let x = v[0] in x + x"), None);
        assert_eq!(
            apply("letInline", "let x = v[0] in x + 1.0"),
            Some("v[0] + 1.0".into())
        );
        assert_eq!(apply("deadLet", "let x = v[0] in 1.0"), Some("1.0".into()));
        assert_eq!(
            apply("letApp", "x (let x = 1 in x)"),
            Some("let x1 = 1 in x x1".into())
        );
        assert_eq!(
            apply("appLet", "(let f = g in f) 3"),
            Some("let f = g in f 3".into())
        );
        assert_eq!(
            apply("primLet", "y + (let y = 1 in y)"),
            Some("let y1 = 1 in y + y1".into())
        );
        assert_eq!(apply("primLet", "b && (let y = 1 in y > 0)"), None);
        assert_eq!(
            apply("letFloat", "let x = (let y = 1 in y + y) in x * y"),
            Some("let y1 = 1 in let x = y1 + y1 in x * y".into())
        );
        assert_eq!(
            apply("letDup", "let x = v[0] in let y = v[0] in x + y"),
            Some("let x = v[0] in let y = x in x + y".into())
        );
        assert_eq!(apply("letSwap", "let x = 1 in let y = x in y"), None);
    }
}
