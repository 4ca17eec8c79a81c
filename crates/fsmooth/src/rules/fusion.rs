//! Fusion (F-smooth paper §5, Fig. 6): an array built and then indexed or
//! measured, and a pair built and then projected, need not be built at all.

use super::{arg1, args2, rewrite, some_if};
use crate::expr::{Expr, ExprKind, Prim};
use elevate::Strategy;

/// `buildGet`: `(build e0 e1)[e2] ~> e1 e2`
pub fn build_get() -> Strategy<Expr> {
    rewrite("buildGet", |e, _| {
        let (a, i) = args2(e, Prim::Get)?;
        let (_, f) = args2(a, Prim::Build)?;
        Some(e.with_kind(ExprKind::App(f.clone(), i.clone())))
    })
}

/// `lenBuild`: `length (build e0 e1) ~> e0`
pub fn len_build() -> Strategy<Expr> {
    rewrite("lenBuild", |e, _| {
        let a = arg1(e, Prim::Length)?;
        let (n, _) = args2(a, Prim::Build)?;
        Some(n.clone())
    })
}

/// `buildEta`: `build (length e) (fun i -> e[i]) ~> e` where `i ∉ fv(e)`
pub fn build_eta() -> Strategy<Expr> {
    rewrite("buildEta", |e, _| {
        let (n, f) = args2(e, Prim::Build)?;
        let a = arg1(n, Prim::Length)?;
        let ExprKind::Lam(i, _, body) = f.kind() else {
            return None;
        };
        let (a2, idx) = args2(body, Prim::Get)?;
        some_if(a2 == a && idx.is_var(i) && !a.has_free(i), || a.clone())
    })
}

/// `pairFst`: `fst (e0, e1) ~> e0`
pub fn pair_fst() -> Strategy<Expr> {
    rewrite("pairFst", |e, _| {
        let p = arg1(e, Prim::Fst)?;
        let (a, _) = args2(p, Prim::Pair)?;
        Some(a.clone())
    })
}

/// `pairSnd`: `snd (e0, e1) ~> e1`
pub fn pair_snd() -> Strategy<Expr> {
    rewrite("pairSnd", |e, _| {
        let p = arg1(e, Prim::Snd)?;
        let (_, b) = args2(p, Prim::Pair)?;
        Some(b.clone())
    })
}

/// `pairEta`: `(fst e, snd e) ~> e`
pub fn pair_eta() -> Strategy<Expr> {
    rewrite("pairEta", |e, _| {
        let (a, b) = args2(e, Prim::Pair)?;
        let p = arg1(a, Prim::Fst)?;
        let q = arg1(b, Prim::Snd)?;
        some_if(p == q, || p.clone())
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::apply;

    #[test]
    fn rules_rewrite_their_equations() {
        assert_eq!(apply("buildGet", "(build n f)[k]"), Some("f k".into()));
        assert_eq!(apply("lenBuild", "length (build n f)"), Some("n".into()));
        assert_eq!(
            apply("buildEta", "build (length v) (fun i -> v[i])"),
            Some("v".into())
        );
        assert_eq!(apply("buildEta", "build (length v) (fun i -> w[i])"), None);
        assert_eq!(apply("pairFst", "fst (a, b)"), Some("a".into()));
        assert_eq!(apply("pairSnd", "snd (a, b)"), Some("b".into()));
        assert_eq!(apply("pairEta", "(fst p, snd p)"), Some("p".into()));
    }
}
