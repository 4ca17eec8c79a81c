//! Conditionals (F-smooth paper §5): literal conditions, equal branches,
//! the condition's value known inside its branches, and a function or
//! built-in pushed into both branches.

use super::{rewrite, some_if};
use crate::expr::{replace, Expr, ExprKind, Prim};
use elevate::Strategy;

/// `ifTrue`: `if true then e1 else e2 ~> e1`
pub fn if_true() -> Strategy<Expr> {
    rewrite("ifTrue", |e, _| match e.kind() {
        ExprKind::If(c, a, _) if matches!(c.kind(), ExprKind::Bool(true)) => Some(a.clone()),
        _ => None,
    })
}

/// `ifFalse`: `if false then e1 else e2 ~> e2`
pub fn if_false() -> Strategy<Expr> {
    rewrite("ifFalse", |e, _| match e.kind() {
        ExprKind::If(c, _, b) if matches!(c.kind(), ExprKind::Bool(false)) => Some(b.clone()),
        _ => None,
    })
}

/// `ifSame`: `if e0 then e1 else e1 ~> e1` (branches equal up to bound names)
pub fn if_same() -> Strategy<Expr> {
    rewrite("ifSame", |e, _| match e.kind() {
        ExprKind::If(_, a, b) if a.alpha_eq(b) => Some(a.clone()),
        _ => None,
    })
}

/// `ifPartialEval`: `if e0 then e1 else e2 ~> if e0 then e1[e0 := true] else e2[e0 := false]`
/// (applies only when `e0` occurs in a branch)
pub fn if_partial_eval() -> Strategy<Expr> {
    rewrite("ifPartialEval", |e, _| {
        let ExprKind::If(c, a, b) = e.kind() else {
            return None;
        };
        if c.is_literal() {
            return None;
        }
        let (a2, n) = replace(a, c, &Expr::boolean(true));
        let (b2, m) = replace(b, c, &Expr::boolean(false));
        some_if(n + m > 0, || e.with_kind(ExprKind::If(c.clone(), a2, b2)))
    })
}

/// `ifApp`: `f (if e0 then e1 else e2) ~> if e0 then f e1 else f e2`, and the
/// same for the first conditional argument of a built-in (`op(.., if .., ..)`),
/// except the second operand of `&&` and `||`, and pairs (a pair body of a
/// loop is what `loopFission` splits).
pub fn if_app() -> Strategy<Expr> {
    rewrite("ifApp", |e, _| match e.kind() {
        ExprKind::App(f, arg) => {
            let ExprKind::If(c, a, b) = arg.kind() else {
                return None;
            };
            Some(e.with_kind(ExprKind::If(
                c.clone(),
                Expr::app(f.clone(), a.clone()),
                Expr::app(f.clone(), b.clone()),
            )))
        }
        ExprKind::Prim(op, args) if *op != Prim::Pair => {
            let lazy = matches!(op, Prim::And | Prim::Or);
            let k = args
                .iter()
                .enumerate()
                .position(|(k, a)| matches!(a.kind(), ExprKind::If(..)) && !(lazy && k == 1))?;
            let ExprKind::If(c, a, b) = args[k].kind() else {
                return None;
            };
            let with = |x: &Expr| {
                let mut v = args.clone();
                v[k] = x.clone();
                Expr::prim(*op, v)
            };
            Some(e.with_kind(ExprKind::If(c.clone(), with(a), with(b))))
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::apply;

    #[test]
    fn rules_rewrite_their_equations() {
        assert_eq!(apply("ifTrue", "if true then a else b"), Some("a".into()));
        assert_eq!(apply("ifFalse", "if false then a else b"), Some("b".into()));
        assert_eq!(
            apply("ifSame", "if c then fun x -> x else fun y -> y"),
            Some("fun x -> x".into())
        );
        assert_eq!(
            apply("ifPartialEval", "if i < n then (i < n) && b else i < n"),
            Some("if i < n then true && b else false".into())
        );
        assert_eq!(apply("ifPartialEval", "if c then a else b"), None);
        assert_eq!(
            apply("ifApp", "v[j] * (if i == j then 1.0 else 0.0)"),
            Some("if i == j then v[j] * 1.0 else v[j] * 0.0".into())
        );
    }
}
