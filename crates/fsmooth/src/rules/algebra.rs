//! Algebraic simplification (F-smooth paper §5): neutral and absorbing
//! elements, `e - e`, factorization, constant folding and Boolean identities.

use super::{arg1, args2, rewrite, some_if};
use crate::expr::{Expr, ExprKind, Prim};
use crate::interp::{self, Value};
use elevate::Strategy;

/// `addZero`: `e + 0 ~> e`, `0 + e ~> e`
pub fn add_zero() -> Strategy<Expr> {
    rewrite("addZero", |e, _| {
        let (a, b) = args2(e, Prim::Add)?;
        if b.is_zero() {
            Some(a.clone())
        } else if a.is_zero() {
            Some(b.clone())
        } else {
            None
        }
    })
}

/// `subZero`: `e - 0 ~> e`
pub fn sub_zero() -> Strategy<Expr> {
    rewrite("subZero", |e, _| {
        let (a, b) = args2(e, Prim::Sub)?;
        some_if(b.is_zero(), || a.clone())
    })
}

/// `zeroSub`: `0 - e ~> -e`
pub fn zero_sub() -> Strategy<Expr> {
    rewrite("zeroSub", |e, _| {
        let (a, b) = args2(e, Prim::Sub)?;
        some_if(a.is_zero(), || {
            e.with_kind(ExprKind::Prim(Prim::Neg, vec![b.clone()]))
        })
    })
}

/// `mulOne`: `e * 1 ~> e`, `1 * e ~> e`
pub fn mul_one() -> Strategy<Expr> {
    rewrite("mulOne", |e, _| {
        let (a, b) = args2(e, Prim::Mul)?;
        if b.is_one() {
            Some(a.clone())
        } else if a.is_one() {
            Some(b.clone())
        } else {
            None
        }
    })
}

/// `mulZero`: `e * 0 ~> 0`, `0 * e ~> 0`
pub fn mul_zero() -> Strategy<Expr> {
    rewrite("mulZero", |e, _| {
        let (a, b) = args2(e, Prim::Mul)?;
        if b.is_zero() {
            Some(b.clone())
        } else if a.is_zero() {
            Some(a.clone())
        } else {
            None
        }
    })
}

/// `divOne`: `e / 1 ~> e`
pub fn div_one() -> Strategy<Expr> {
    rewrite("divOne", |e, _| {
        let (a, b) = args2(e, Prim::Div)?;
        some_if(b.is_one(), || a.clone())
    })
}

/// `negNeg`: `-(-e) ~> e`
pub fn neg_neg() -> Strategy<Expr> {
    rewrite("negNeg", |e, _| {
        let a = arg1(e, Prim::Neg)?;
        arg1(a, Prim::Neg).cloned()
    })
}

/// Whether `e` is syntactically a `Double` (`Some(true)`) or an `Index` (`Some(false)`).
pub(crate) fn syntactic_type(e: &Expr) -> Option<bool> {
    match e.kind() {
        ExprKind::Double(_) => Some(true),
        ExprKind::Index(_) => Some(false),
        ExprKind::Let(_, _, b) => syntactic_type(b),
        ExprKind::If(_, a, b) => syntactic_type(a).or_else(|| syntactic_type(b)),
        ExprKind::Prim(op, args) => match op {
            Prim::Length => Some(false),
            Prim::ToDouble => Some(true),
            op if op.is_scalar_fn() => Some(true),
            op if op.is_arith() => args.iter().find_map(syntactic_type),
            _ => None,
        },
        _ => None,
    }
}

/// `subSelf`: `e - e ~> 0`, `e + -e ~> 0`, `-e + e ~> 0`: `0.0` or `0` as the
/// type checker, given the program's input types ([`crate::expr::Env::scope`]), says `e`
/// is a `Double` or an `Index` (not applicable when the type is not known).
pub fn sub_self() -> Strategy<Expr> {
    rewrite("subSelf", |e, env| {
        let (a, b) = if let Some((a, b)) = args2(e, Prim::Sub) {
            (a, b)
        } else {
            let (l, r) = args2(e, Prim::Add)?;
            match (arg1(l, Prim::Neg), arg1(r, Prim::Neg)) {
                (_, Some(nr)) => (l, nr),
                (Some(nl), None) => (nl, r),
                (None, None) => return None,
            }
        };
        if !a.alpha_eq(b) {
            return None;
        }
        let typed =
            crate::check::infer_determined(env.scope(), a).map(|t| t == crate::Type::Double);
        match typed.or_else(|| syntactic_type(a))? {
            true => Some(Expr::double(0.0)),
            false => Some(Expr::index(0)),
        }
    })
}

/// `factorization`: `e0 * e1 + e0 * e2 ~> e0 * (e1 + e2)` and
/// `e1 * e0 + e2 * e0 ~> (e1 + e2) * e0` (exact on `Index`, up to rounding on `Double`)
pub fn factorization() -> Strategy<Expr> {
    rewrite("factorization", |e, _| {
        let (l, r) = args2(e, Prim::Add)?;
        let (a, b) = args2(l, Prim::Mul)?;
        let (c, d) = args2(r, Prim::Mul)?;
        let add = |x: &Expr, y: &Expr| Expr::bin(Prim::Add, x.clone(), y.clone());
        if a == c {
            Some(e.with_kind(ExprKind::Prim(Prim::Mul, vec![a.clone(), add(b, d)])))
        } else if b == d {
            Some(e.with_kind(ExprKind::Prim(Prim::Mul, vec![add(a, c), b.clone()])))
        } else {
            None
        }
    })
}

fn literal_of(v: &Value) -> Option<Expr> {
    match v {
        Value::Double(d) if d.is_finite() => Some(Expr::double(*d)),
        Value::Index(i) => Some(Expr::index(*i)),
        Value::Bool(b) => Some(Expr::boolean(*b)),
        _ => None,
    }
}

/// `constantFold`: a built-in on literals ~> its value (`2 + 3 ~> 5`,
/// `1.0 < 2.0 ~> true`), unless evaluation fails or gives a non-finite `Double`.
pub fn constant_fold() -> Strategy<Expr> {
    rewrite("constantFold", |e, _| {
        let ExprKind::Prim(op, args) = e.kind() else {
            return None;
        };
        let folds = op.is_arith()
            || op.is_comparison()
            || op.is_scalar_fn()
            || matches!(op, Prim::ToDouble | Prim::Not | Prim::And | Prim::Or);
        if !folds || !args.iter().all(Expr::is_literal) {
            return None;
        }
        let v = interp::eval(e, &[]).ok()?;
        literal_of(&v)
    })
}

/// `boolSimplify`: `true && e ~> e`, `e && true ~> e`, `false && e ~> false`,
/// `e && false ~> false`, `true || e ~> true`, `false || e ~> e`,
/// `e || false ~> e`, `!!e ~> e`
pub fn bool_simplify() -> Strategy<Expr> {
    rewrite("boolSimplify", |e, _| {
        let lit = |x: &Expr| match x.kind() {
            ExprKind::Bool(b) => Some(*b),
            _ => None,
        };
        if let Some((a, b)) = args2(e, Prim::And) {
            return match (lit(a), lit(b)) {
                (Some(true), _) => Some(b.clone()),
                (Some(false), _) => Some(a.clone()),
                (_, Some(true)) => Some(a.clone()),
                (_, Some(false)) => Some(b.clone()),
                _ => None,
            };
        }
        if let Some((a, b)) = args2(e, Prim::Or) {
            return match (lit(a), lit(b)) {
                (Some(true), _) => Some(a.clone()),
                (Some(false), _) => Some(b.clone()),
                (_, Some(false)) => Some(a.clone()),
                _ => None,
            };
        }
        let a = arg1(e, Prim::Not)?;
        arg1(a, Prim::Not).cloned()
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::apply;

    #[test]
    fn rules_rewrite_their_equations() {
        assert_eq!(apply("addZero", "0.0 + x"), Some("x".into()));
        assert_eq!(apply("subZero", "x - 0"), Some("x".into()));
        assert_eq!(apply("zeroSub", "0.0 - x"), Some("-x".into()));
        assert_eq!(apply("mulOne", "x * 1.0"), Some("x".into()));
        assert_eq!(apply("mulZero", "x * 0.0"), Some("0.0".into()));
        assert_eq!(apply("divOne", "x / 1.0"), Some("x".into()));
        assert_eq!(apply("negNeg", "-(-x)"), Some("x".into()));
        assert_eq!(apply("subSelf", "sin x - sin x"), Some("0.0".into()));
        assert_eq!(apply("subSelf", "x - x"), None);
        assert_eq!(
            apply("factorization", "a * b + a * c"),
            Some("a * (b + c)".into())
        );
        assert_eq!(
            apply("factorization", "b * a + c * a"),
            Some("(b + c) * a".into())
        );
        assert_eq!(apply("constantFold", "2 + 3"), Some("5".into()));
        assert_eq!(apply("constantFold", "1.0 / 0.0"), None);
        assert_eq!(apply("constantFold", "1 / 0"), None);
        assert_eq!(apply("boolSimplify", "true && b"), Some("b".into()));
        assert_eq!(apply("boolSimplify", "b || false"), Some("b".into()));
    }
}

#[cfg(test)]
mod typed_tests {
    use crate::{parse_program, rewrite, rules::sub_self};

    fn rewritten(src: &str) -> Result<String, String> {
        let p = parse_program(src).unwrap();
        rewrite(&p, &sub_self(), false).map(|r| r.program.body.to_string())
    }

    #[test]
    fn the_ring_rule_uses_the_checkers_types() {
        assert_eq!(rewritten("input x : Double\nx - x"), Ok("0.0".into()));
        assert_eq!(rewritten("input k : Index\nk - k"), Ok("0".into()));
        assert_eq!(rewritten("input v : Vector\nv[0] - v[0]"), Ok("0.0".into()));
        assert_eq!(
            rewritten("input v : Vector\nv[0] + -v[0]"),
            Ok("0.0".into())
        );
        assert_eq!(
            rewritten("input M : Matrix\n-M[1][0] + M[1][0]"),
            Ok("0.0".into())
        );
        assert!(rewritten("input x : Double\nx - 1.0").is_err());
    }
}
