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

use crate::expr::{rename_away, replace, subst, Env, Expr, ExprKind, Prim};
use crate::interp::{self, Value};
pub use crate::sharing::{let_pair_split, loop_invariant, share_common};
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

// ---------------------------------------------------------------- fusion

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

// ---------------------------------------------------------------- lambda and let

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

// ---------------------------------------------------------------- tuples

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

// ---------------------------------------------------------------- conditionals

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

// ---------------------------------------------------------------- loops

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

// ---------------------------------------------------------------- algebra

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
/// type checker, given the program's input types ([`Env::scope`]), says `e`
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
    use super::*;
    use crate::parse_expr;

    fn apply(rule: &str, src: &str) -> Option<String> {
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

    #[test]
    fn rules_rewrite_their_equations() {
        assert_eq!(apply("buildGet", "(build n f)[k]"), Some("f k".into()));
        assert_eq!(apply("lenBuild", "length (build n f)"), Some("n".into()));
        assert_eq!(
            apply("buildEta", "build (length v) (fun i -> v[i])"),
            Some("v".into())
        );
        assert_eq!(apply("buildEta", "build (length v) (fun i -> w[i])"), None);
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
        assert_eq!(apply("pairFst", "fst (a, b)"), Some("a".into()));
        assert_eq!(apply("pairSnd", "snd (a, b)"), Some("b".into()));
        assert_eq!(apply("pairEta", "(fst p, snd p)"), Some("p".into()));
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
