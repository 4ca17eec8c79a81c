//! The F-smooth simplification rules (Shaikhha et al., ICFP 2019, §5, Fig. 6)
//! as ELEVATE strategies (thesis §5.7). Each rule is a function returning a
//! [`Strategy<Expr>`] named as in the thesis (`buildGet`, `lenBuild`,
//! `letPartialEval`, `letApp`, `funToLet`, ...); it rewrites the root of the
//! term it is applied to or fails, and strategies such as
//! `normalize(buildGet <+ lenBuild)` decide where and how often.
//!
//! All rules preserve the value of every term whose evaluation succeeds (some
//! make terms *more* defined: `(build n f)[i] ~> f i` no longer checks `i < n`).
//! `factorization` reassociates floating-point arithmetic, so it preserves
//! values up to rounding. Side conditions the paper leaves implicit are
//! explicit here (`x ∉ fv(e)`, renaming of bound variables that would capture,
//! loop-index ranges); `foldConditional` is stated with the range check its
//! informal version lacks.
//!
//! [`RULES`] lists every rule with its equation; [`rule_by_name`] finds one.
//!
//! The rules live in one file per group of the table: `fusion.rs` (fusion and
//! tuples), `lets.rs` (lambda and let), `conditionals.rs`, `loops.rs`,
//! `algebra.rs`; the sharing rules are in `../sharing.rs`. All are
//! re-exported here, and the table below names every one.

mod algebra;
mod conditionals;
mod fusion;
mod lets;
mod loops;

pub use crate::sharing::{let_pair_split, loop_invariant, share_common};
pub(crate) use algebra::syntactic_type;
pub use algebra::{
    add_zero, bool_simplify, constant_fold, div_one, factorization, mul_one, mul_zero, neg_neg,
    sub_self, sub_zero, zero_sub,
};
pub use conditionals::{if_app, if_false, if_partial_eval, if_same, if_true};
pub use fusion::{build_eta, build_get, len_build, pair_eta, pair_fst, pair_snd};
pub use lets::{
    app_let, dead_let, fun_to_let, let_app, let_dup, let_float, let_inline, let_partial_eval,
    let_swap, prim_let,
};
pub use loops::{
    build_index_range, fold_conditional, fold_id, fold_index_range, fold_unroll, fold_zero,
    loop_fission, MAX_UNROLLED_DEPTH,
};
pub(crate) use loops::{step_fn, Step};

use crate::expr::{Env, Expr, Prim};
use elevate::{rule, Ctx, Failure, Strategy};

/// A rule's entry in [`RULES`].
pub struct RuleInfo {
    /// The name it prints with and is called by in strategies.
    pub name: &'static str,
    /// The equation, `lhs ~> rhs` with side conditions.
    pub equation: &'static str,
    /// The group of the F-smooth paper it belongs to.
    pub group: &'static str,
    /// Builds the strategy.
    pub make: fn() -> Strategy<Expr>,
}

macro_rules! rules_table {
    ($( $group:literal : [ $( ($name:literal, $f:ident, $eq:literal) ),* $(,)? ] ),* $(,)?) => {
        /// Every rule, grouped as in the F-smooth paper.
        pub const RULES: &[RuleInfo] = &[
            $( $( RuleInfo { name: $name, equation: $eq, group: $group, make: $f }, )* )*
        ];
    };
}

rules_table! {
    "fusion": [
        ("buildGet", build_get, "(build e0 e1)[e2] ~> e1 e2"),
        ("lenBuild", len_build, "length (build e0 e1) ~> e0"),
        ("buildEta", build_eta, "build (length e) (fun i -> e[i]) ~> e   (i ∉ fv(e))"),
    ],
    "lambda and let": [
        ("funToLet", fun_to_let, "(fun x -> e0) e1 ~> let x = e1 in e0"),
        ("letPartialEval", let_partial_eval, "let x = e0 in e1 ~> e1[x := e0]"),
        ("letInline", let_inline, "let x = e0 in e1 ~> e1[x := e0]   (e0 a variable, literal or fun, or x used at most once and not inside a fun)"),
        ("letPairSplit", let_pair_split, "let x = (e0, e1) in e ~> let x1 = e0 in let x2 = e1 in e[fst x := x1, snd x := x2]   (x only in fst x, snd x)"),
        ("deadLet", dead_let, "let x = e0 in e1 ~> e1   (x ∉ fv(e1))"),
        ("letApp", let_app, "f (let x = e0 in e1) ~> let x = e0 in f e1"),
        ("appLet", app_let, "(let x = e0 in e1) e2 ~> let x = e0 in e1 e2"),
        ("primLet", prim_let, "op(.., let x = e0 in e1, ..) ~> let x = e0 in op(.., e1, ..)   (op a built-in)"),
        ("letFloat", let_float, "let x = (let y = e0 in e1) in e2 ~> let y = e0 in let x = e1 in e2"),
        ("letDup", let_dup, "let x = e0 in let y = e0 in e1 ~> let x = e0 in let y = x in e1   (x ∉ fv(e0))"),
        ("letSwap", let_swap, "let x = e0 in let y = e1 in e2 ~> let y = e1 in let x = e0 in e2   (x ∉ fv(e1), y ∉ fv(e0))"),
    ],
    "tuples": [
        ("pairFst", pair_fst, "fst (e0, e1) ~> e0"),
        ("pairSnd", pair_snd, "snd (e0, e1) ~> e1"),
        ("pairEta", pair_eta, "(fst e, snd e) ~> e"),
    ],
    "conditionals": [
        ("ifTrue", if_true, "if true then e1 else e2 ~> e1"),
        ("ifFalse", if_false, "if false then e1 else e2 ~> e2"),
        ("ifSame", if_same, "if e0 then e1 else e1 ~> e1"),
        ("ifPartialEval", if_partial_eval, "if e0 then e1 else e2 ~> if e0 then e1[e0 := true] else e2[e0 := false]"),
        ("ifApp", if_app, "f (if e0 then e1 else e2) ~> if e0 then f e1 else f e2   (also for built-ins other than pairs)"),
    ],
    "loops": [
        ("foldZero", fold_zero, "ifold f z 0 ~> z"),
        ("foldUnroll", fold_unroll, "ifold f z n ~> ifold (fun a i -> f a (i + 1)) (f z 0) (n - 1)   (n a literal > 0)"),
        ("foldId", fold_id, "ifold (fun a i -> a) z n ~> z"),
        ("foldConditional", fold_conditional, "ifold (fun a i -> if i == e0 then e1 else a) z n ~> if 0 < n && 0 <= e0 && e0 < n then (let a = z in let i = e0 in e1) else z   (a, i ∉ fv(e0))"),
        ("loopFission", loop_fission, "ifold (fun a i -> (e0, e1)) z n ~> (ifold (fun a i -> e0[fst a := a]) (fst z) n, ifold (fun a i -> e1[snd a := a]) (snd z) n)   (a only as fst a in e0, as snd a in e1, and in both; z a pair; n a literal > 0 or length x)"),
        ("loopInvariant", loop_invariant, "build n (fun i -> C[s]) ~> let t = s in build n (fun i -> C[t]), likewise for ifold   (s evaluated in every iteration, cannot fail, mentions nothing bound in the loop; n is length e or a literal > 0)"),
        ("buildIndexRange", build_index_range, "build n (fun i -> e) ~> build n (fun i -> e[0 <= i := true, i < n := true, 0 < n := true])   (i ∉ fv(n))"),
        ("foldIndexRange", fold_index_range, "ifold (fun a i -> e) z n ~> ifold (fun a i -> e[0 <= i := true, i < n := true, 0 < n := true]) z n   (a, i ∉ fv(n))"),
    ],
    "algebra": [
        ("addZero", add_zero, "e + 0 ~> e,  0 + e ~> e"),
        ("subZero", sub_zero, "e - 0 ~> e"),
        ("zeroSub", zero_sub, "0 - e ~> -e"),
        ("mulOne", mul_one, "e * 1 ~> e,  1 * e ~> e"),
        ("mulZero", mul_zero, "e * 0 ~> 0,  0 * e ~> 0"),
        ("divOne", div_one, "e / 1 ~> e"),
        ("negNeg", neg_neg, "-(-e) ~> e"),
        ("subSelf", sub_self, "e - e ~> 0,  e + -e ~> 0,  -e + e ~> 0   (0 or 0.0 by the type the checker gives e)"),
        ("factorization", factorization, "e0 * e1 + e0 * e2 ~> e0 * (e1 + e2),  e1 * e0 + e2 * e0 ~> (e1 + e2) * e0"),
        ("constantFold", constant_fold, "c1 op c2 ~> c   (literals; only finite results)"),
        ("boolSimplify", bool_simplify, "true && e ~> e,  e && true ~> e,  false && e ~> false,  e && false ~> false,  true || e ~> true,  false || e ~> e,  e || false ~> e,  !!e ~> e"),
    ],
    "sharing": [
        ("shareCommon", share_common, "C[s, s] ~> let t = s in C[t, t]   (both evaluated unconditionally, s of two or more operations)"),
    ],
}

/// The rule called `name`.
pub fn rule_by_name(name: &str) -> Option<Strategy<Expr>> {
    RULES.iter().find(|r| r.name == name).map(|r| (r.make)())
}

/// A rule from a partial function: `None` means "not applicable".
pub(crate) fn rewrite(
    name: &'static str,
    f: impl Fn(&Expr, &mut Env) -> Option<Expr> + Send + Sync + 'static,
) -> Strategy<Expr> {
    rule(name, move |e: &Expr, ctx: &mut Ctx<Expr>| {
        f(e, &mut ctx.env).ok_or_else(Failure::not_applicable)
    })
}

fn arg1(e: &Expr, op: Prim) -> Option<&Expr> {
    match e.as_prim(op)? {
        [a] => Some(a),
        _ => None,
    }
}

pub(crate) fn args2(e: &Expr, op: Prim) -> Option<(&Expr, &Expr)> {
    match e.as_prim(op)? {
        [a, b] => Some((a, b)),
        _ => None,
    }
}

pub(crate) fn args3(e: &Expr, op: Prim) -> Option<(&Expr, &Expr, &Expr)> {
    match e.as_prim(op)? {
        [a, b, c] => Some((a, b, c)),
        _ => None,
    }
}

fn some_if(cond: bool, e: impl FnOnce() -> Expr) -> Option<Expr> {
    if cond {
        Some(e())
    } else {
        None
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::parse_expr;

    /// The result of applying the rule called `rule` to the term `src`, printed.
    pub(crate) fn apply(rule: &str, src: &str) -> Option<String> {
        let s = rule_by_name(rule).unwrap();
        let e = parse_expr(src).unwrap();
        s.apply(&e).ok().map(|r| r.to_string())
    }

    #[test]
    fn every_rule_is_listed_once_and_prints_its_name() {
        for r in RULES {
            assert_eq!((r.make)().to_string(), r.name);
            assert_eq!(RULES.iter().filter(|q| q.name == r.name).count(), 1);
        }
    }
}
