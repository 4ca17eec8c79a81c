//! Every simplification rule, property-tested with the interpreter: a random
//! well-typed redex of the rule (built from random sub-terms over random
//! inputs) is rewritten at its root; the result must have the same type and,
//! wherever the original evaluates without error, the same value — exactly,
//! except for `factorization`, which reassociates floating-point arithmetic.
//! Then every rule, and `simplify`, are applied *inside* random terms.

use elevate::{top_down, Ctx};
use fsmooth::expr::{Expr, Name, Prim};
use fsmooth::interp::{eval, Value};
use fsmooth::random::{random_value, Rng, TermGen, ValueShape};
use fsmooth::rules::{rule_by_name, RULES};
use fsmooth::{infer_expr, strategies, Env, Type};
use proptest::prelude::*;

fn scope() -> Vec<(Name, Type)> {
    vec![
        ("x".into(), Type::Double),
        ("y".into(), Type::Double),
        ("k".into(), Type::Index),
        ("b".into(), Type::Bool),
        ("v".into(), Type::vector()),
        ("w".into(), Type::vector()),
        ("M".into(), Type::matrix()),
        ("p".into(), Type::pair(Type::Double, Type::Double)),
    ]
}

fn inputs(rng: &mut Rng) -> Vec<(Name, Value)> {
    let shape = ValueShape {
        min_len: 2,
        max_len: 4,
        ..ValueShape::default()
    };
    scope()
        .into_iter()
        .map(|(x, t)| {
            let v = random_value(&t, rng, &shape).expect("first-order inputs");
            (x, v)
        })
        .collect()
}

/// A random first-order type.
fn fo_type(g: &mut TermGen) -> Type {
    match g.rng.below(6) {
        0 | 1 => Type::Double,
        2 => Type::Index,
        3 => Type::Bool,
        4 => Type::vector(),
        _ => Type::pair(Type::Double, Type::Index),
    }
}

/// A random numeric type.
fn num_type(g: &mut TermGen) -> Type {
    if g.rng.chance(0.7) {
        Type::Double
    } else {
        Type::Index
    }
}

fn num_lit(t: &Type, v: i64) -> Expr {
    match t {
        Type::Double => Expr::double(v as f64),
        _ => Expr::index(v),
    }
}

const D: u32 = 3;

type Template = fn(&mut TermGen) -> Expr;

/// Builds redexes until the rule applies at the root, rewrites, and compares.
fn check(
    rule: &str,
    seed: u64,
    tolerance: Option<f64>,
    template: Template,
) -> Result<usize, TestCaseError> {
    let strategy = rule_by_name(rule).expect("a known rule");
    let scope = scope();
    let mut rng = Rng::new(seed);
    let mut found = None;
    for _ in 0..200 {
        let e = template(&mut TermGen::new(&mut rng, &scope));
        let ty = infer_expr(&scope, &e)
            .unwrap_or_else(|d| panic!("template for {rule} is ill-typed: {e}: {}", d.message));
        if let Ok(r) = Ctx::new(Env::with_scope(scope.clone())).run(&strategy, &e) {
            found = Some((e, ty, r));
            break;
        }
    }
    let Some((before, ty, after)) = found else {
        panic!("the template for {rule} never made a redex (seed {seed})")
    };
    let ty_after = infer_expr(&scope, &after).unwrap_or_else(|d| {
        panic!(
            "{rule} made an ill-typed term: {before}  ~>  {after}: {}",
            d.message
        )
    });
    prop_assert_eq!(
        &ty,
        &ty_after,
        "{} changed the type: {}  ~>  {}",
        rule,
        before,
        after
    );
    compare(rule, &before, &after, &mut rng, tolerance)
}

/// Evaluates both terms on random inputs; returns how many comparisons were made.
fn compare(
    what: &str,
    before: &Expr,
    after: &Expr,
    rng: &mut Rng,
    tolerance: Option<f64>,
) -> Result<usize, TestCaseError> {
    let mut compared = 0;
    for _ in 0..4 {
        let env = inputs(rng);
        let Ok(expected) = eval(before, &env) else {
            continue;
        };
        match eval(after, &env) {
            Ok(got) => prop_assert!(
                got.equals(&expected, tolerance),
                "{}: {}  ~>  {}\n  before: {}\n  after:  {}\n  inputs: {:?}",
                what,
                before,
                after,
                expected,
                got,
                env
            ),
            Err(e) => {
                prop_assert!(
                false,
                "{}: {}  ~>  {}\n  the original gives {} but the rewrite fails: {}\n  inputs: {:?}",
                what, before, after, expected, e, env
            )
            }
        }
        compared += 1;
    }
    Ok(compared)
}

// ---------------------------------------------------------------- templates

fn build_get(g: &mut TermGen) -> Expr {
    let t = fo_type(g);
    let n = if g.rng.chance(0.5) {
        Expr::index(g.rng.between(1, 4))
    } else {
        g.term(&Type::Index, 2)
    };
    let i = g.binder();
    let body = g.with_var(&i, &Type::Index, |g| g.term(&t, D));
    let idx = g.index();
    Expr::get(Expr::build(n, Expr::lam(i, None, body)), idx)
}

fn len_build(g: &mut TermGen) -> Expr {
    let t = fo_type(g);
    let n = g.term(&Type::Index, 2);
    let i = g.binder();
    let body = g.with_var(&i, &Type::Index, |g| g.term(&t, D));
    Expr::length(Expr::build(n, Expr::lam(i, None, body)))
}

fn build_eta(g: &mut TermGen) -> Expr {
    let t = fo_type(g);
    let a = g.term(&Type::array(t), D);
    let i = unused();
    Expr::build(
        Expr::length(a.clone()),
        Expr::lam(i.clone(), None, Expr::get(a, Expr::var(i))),
    )
}

fn fun_to_let(g: &mut TermGen) -> Expr {
    let (s, t) = (fo_type(g), fo_type(g));
    let x = g.binder();
    let body = g.with_var(&x, &s, |g| g.term(&t, D));
    let arg = g.term(&s, D);
    Expr::app(Expr::lam(x, Some(s), body), arg)
}

fn a_let(g: &mut TermGen) -> Expr {
    let (s, t) = (g.small_type(), fo_type(g));
    let x = g.binder();
    let e0 = if g.rng.chance(0.3) {
        g.term(&s, 0)
    } else {
        g.term(&s, D)
    };
    let e1 = g.with_var(&x, &s, |g| g.term(&t, D));
    Expr::let_(x, e0, e1)
}

/// A binder name that no generated term mentions (for terms generated outside
/// its scope but placed inside it).
fn unused() -> Name {
    "z".into()
}

fn dead_let(g: &mut TermGen) -> Expr {
    let (s, t) = (g.small_type(), fo_type(g));
    let x = unused();
    let e0 = g.term(&s, D);
    let e1 = g.term(&t, D);
    Expr::let_(x, e0, e1)
}

fn let_in(g: &mut TermGen, t: &Type) -> Expr {
    let s = g.small_type();
    let x = g.binder();
    let e0 = g.term(&s, D);
    let e1 = g.with_var(&x, &s, |g| g.term(t, D));
    Expr::let_(x, e0, e1)
}

fn let_app(g: &mut TermGen) -> Expr {
    let (s, t) = (fo_type(g), fo_type(g));
    let f = g.term(&Type::fun(s.clone(), t), D);
    let arg = let_in(g, &s);
    Expr::app(f, arg)
}

fn app_let(g: &mut TermGen) -> Expr {
    let (s, t) = (fo_type(g), fo_type(g));
    let f = let_in(g, &Type::fun(s.clone(), t));
    let arg = g.term(&s, D);
    Expr::app(f, arg)
}

fn prim_let(g: &mut TermGen) -> Expr {
    match g.rng.below(5) {
        0 => {
            let t = num_type(g);
            let (a, b) = (g.term(&t, D), let_in(g, &t));
            let op = *g.rng.pick(&[Prim::Add, Prim::Mul, Prim::Lt, Prim::Sub]);
            if g.rng.chance(0.5) {
                Expr::bin(op, a, b)
            } else {
                Expr::bin(op, b, a)
            }
        }
        1 => {
            let t = fo_type(g);
            Expr::get(let_in(g, &Type::array(t)), g.index())
        }
        2 => {
            let (a, b) = (g.term(&Type::Bool, D), let_in(g, &Type::Bool));
            Expr::bin(*g.rng.pick(&[Prim::And, Prim::Or]), b, a)
        }
        3 => {
            let t = fo_type(g);
            Expr::pair(g.term(&t, D), let_in(g, &t))
        }
        _ => {
            let t = fo_type(g);
            let z = let_in(g, &t);
            let a = g.binder();
            let i = g.binder();
            let body = g.with_var(&a, &t, |g| g.with_var(&i, &Type::Index, |g| g.term(&t, 2)));
            Expr::ifold(
                Expr::lam(a, None, Expr::lam(i, None, body)),
                z,
                Expr::index(g.rng.between(0, 3)),
            )
        }
    }
}

fn let_float(g: &mut TermGen) -> Expr {
    let (s, t) = (fo_type(g), fo_type(g));
    let x = g.binder();
    let inner = let_in(g, &s);
    let e2 = g.with_var(&x, &s, |g| g.term(&t, D));
    Expr::let_(x, inner, e2)
}

fn let_dup(g: &mut TermGen) -> Expr {
    let (s, t) = (fo_type(g), fo_type(g));
    let x = unused();
    let y = g.binder();
    let e0 = g.term(&s, D);
    let e1 = g.with_var(&x, &s, |g| g.with_var(&y, &s, |g| g.term(&t, D)));
    Expr::let_(x, e0.clone(), Expr::let_(y, e0, e1))
}

fn let_swap(g: &mut TermGen) -> Expr {
    let (s, u, t) = (fo_type(g), fo_type(g), fo_type(g));
    let x = unused();
    let y = g.binder();
    let e0 = g.term(&s, D);
    let e1 = g.term(&u, D);
    let e2 = g.with_var(&x, &s, |g| g.with_var(&y, &u, |g| g.term(&t, D)));
    Expr::let_(x, e0, Expr::let_(y, e1, e2))
}

fn pair_proj(g: &mut TermGen, first: bool) -> Expr {
    let (s, t) = (fo_type(g), fo_type(g));
    let p = Expr::pair(g.term(&s, D), g.term(&t, D));
    if first {
        Expr::fst(p)
    } else {
        Expr::snd(p)
    }
}

fn pair_fst(g: &mut TermGen) -> Expr {
    pair_proj(g, true)
}

fn pair_snd(g: &mut TermGen) -> Expr {
    pair_proj(g, false)
}

fn pair_eta(g: &mut TermGen) -> Expr {
    let (s, t) = (fo_type(g), fo_type(g));
    let p = g.term(&Type::pair(s, t), D);
    Expr::pair(Expr::fst(p.clone()), Expr::snd(p))
}

fn if_lit(g: &mut TermGen, c: bool) -> Expr {
    let t = fo_type(g);
    Expr::if_(Expr::boolean(c), g.term(&t, D), g.term(&t, D))
}

fn if_true(g: &mut TermGen) -> Expr {
    if_lit(g, true)
}

fn if_false(g: &mut TermGen) -> Expr {
    if_lit(g, false)
}

fn if_same(g: &mut TermGen) -> Expr {
    let t = fo_type(g);
    let a = g.term(&t, D);
    Expr::if_(g.term(&Type::Bool, 2), a.clone(), a)
}

/// A term of type `t` that mentions `c`, possibly under a binder that shadows it.
fn mentioning(g: &mut TermGen, c: &Expr, t: &Type) -> Expr {
    let inner = match g.rng.below(3) {
        0 => Expr::if_(c.clone(), g.term(t, 2), g.term(t, 2)),
        1 if *t == Type::Bool => Expr::bin(Prim::And, c.clone(), g.term(t, 2)),
        _ => {
            let b = g.term(&Type::Bool, 1);
            Expr::if_(
                Expr::bin(Prim::Or, b, c.clone()),
                g.term(t, 2),
                g.term(t, 2),
            )
        }
    };
    // Sometimes under a binder that shadows a variable of `c`, so that `c`
    // there means something else and must not be replaced.
    let shadowed = c.free_vars().first().cloned();
    match shadowed {
        Some(x) if g.rng.chance(0.3) => {
            let s = scope()
                .into_iter()
                .find(|(y, _)| *y == x)
                .map(|(_, t)| t)
                .unwrap_or(Type::Double);
            let e0 = g.term(&s, 1);
            Expr::let_(x, e0, inner)
        }
        _ => inner,
    }
}

fn if_partial_eval(g: &mut TermGen) -> Expr {
    let t = fo_type(g);
    let c = g.term(&Type::Bool, 2);
    let a = mentioning(g, &c, &t);
    let b = mentioning(g, &c, &t);
    Expr::if_(c, a, b)
}

fn if_app(g: &mut TermGen) -> Expr {
    let c = g.term(&Type::Bool, 2);
    let cond = |g: &mut TermGen, t: &Type| Expr::if_(c.clone(), g.term(t, D), g.term(t, D));
    match g.rng.below(4) {
        0 => {
            let (s, t) = (fo_type(g), fo_type(g));
            let f = g.term(&Type::fun(s.clone(), t), D);
            Expr::app(f, cond(g, &s))
        }
        1 => {
            let t = num_type(g);
            let op = *g.rng.pick(&[Prim::Add, Prim::Mul, Prim::Sub, Prim::Le]);
            let (a, b) = (g.term(&t, D), cond(g, &t));
            if g.rng.chance(0.5) {
                Expr::bin(op, a, b)
            } else {
                Expr::bin(op, b, a)
            }
        }
        2 => {
            let t = fo_type(g);
            Expr::get(cond(g, &Type::array(t)), g.index())
        }
        _ => {
            let a = g.term(&Type::Bool, D);
            let op = *g.rng.pick(&[Prim::And, Prim::Or]);
            Expr::bin(op, cond(g, &Type::Bool), a)
        }
    }
}

fn step(g: &mut TermGen, t: &Type) -> Expr {
    g.term(&Type::fun(t.clone(), Type::fun(Type::Index, t.clone())), D)
}

fn fold_zero(g: &mut TermGen) -> Expr {
    let t = fo_type(g);
    let f = step(g, &t);
    Expr::ifold(f, g.term(&t, D), Expr::index(g.rng.between(-2, 0)))
}

fn fold_unroll(g: &mut TermGen) -> Expr {
    let t = fo_type(g);
    let f = step(g, &t);
    Expr::ifold(f, g.term(&t, D), Expr::index(g.rng.between(1, 3)))
}

fn fold_id(g: &mut TermGen) -> Expr {
    let t = fo_type(g);
    let a: Name = "acc".into();
    let i = g.binder();
    let f = Expr::lam(a.clone(), None, Expr::lam(i, None, Expr::var(a)));
    Expr::ifold(f, g.term(&t, D), g.term(&Type::Index, 2))
}

fn fold_conditional(g: &mut TermGen) -> Expr {
    let t = fo_type(g);
    let a: Name = "acc".into();
    let i = unused();
    let e0 = g.term(&Type::Index, 2);
    let e1 = g.with_var(&a, &t, |g| g.with_var(&i, &Type::Index, |g| g.term(&t, D)));
    let iv = Expr::var(i.clone());
    let cond = if g.rng.chance(0.5) {
        Expr::bin(Prim::Eq, iv, e0)
    } else {
        Expr::bin(Prim::Eq, e0, iv)
    };
    let body = Expr::if_(cond, e1, Expr::var(a.clone()));
    let n = if g.rng.chance(0.5) {
        Expr::index(g.rng.between(0, 4))
    } else {
        g.term(&Type::Index, 2)
    };
    Expr::ifold(
        Expr::lam(a, None, Expr::lam(i, None, body)),
        g.term(&t, D),
        n,
    )
}

fn loop_fission(g: &mut TermGen) -> Expr {
    let (s, t) = (fo_type(g), fo_type(g));
    let a: Name = "acc".into();
    let i = g.binder();
    let (a0, a1): (Name, Name) = ("acc0".into(), "acc1".into());
    let e0 = g.with_var(&a0, &s, |g| g.with_var(&i, &Type::Index, |g| g.term(&s, D)));
    let e1 = g.with_var(&a1, &t, |g| g.with_var(&i, &Type::Index, |g| g.term(&t, D)));
    let mut env = fsmooth::Env::default();
    let av = Expr::var(a.clone());
    let e0 = fsmooth::expr::subst(&e0, "acc0", &Expr::fst(av.clone()), &mut env);
    let e1 = fsmooth::expr::subst(&e1, "acc1", &Expr::snd(av), &mut env);
    // Both components use the accumulator.
    let c0 = g.with_var(&i, &Type::Index, |g| g.term(&Type::Bool, 1));
    let c1 = g.with_var(&i, &Type::Index, |g| g.term(&Type::Bool, 1));
    let e0 = Expr::if_(c0, Expr::fst(Expr::var(a.clone())), e0);
    let e1 = Expr::if_(c1, Expr::snd(Expr::var(a.clone())), e1);
    let z = Expr::pair(g.term(&s, D), g.term(&t, D));
    let ann = g.rng.chance(0.5).then(|| Type::pair(s, t));
    let f = Expr::lam(a, ann, Expr::lam(i, None, Expr::pair(e0, e1)));
    let n = if g.rng.chance(0.5) {
        Expr::length(Expr::var("v"))
    } else {
        Expr::index(g.rng.between(1, 3))
    };
    Expr::ifold(f, z, n)
}

fn let_pair_split(g: &mut TermGen) -> Expr {
    let (s, t, r) = (fo_type(g), fo_type(g), fo_type(g));
    let x: Name = "pr".into();
    let (a0, a1): (Name, Name) = ("acc0".into(), "acc1".into());
    let body = g.with_var(&a0, &s, |g| g.with_var(&a1, &t, |g| g.term(&r, D)));
    let body = Expr::pair(Expr::var(a0.clone()), body);
    let mut env = fsmooth::Env::default();
    let xv = Expr::var(x.clone());
    let body = fsmooth::expr::subst(&body, "acc0", &Expr::fst(xv.clone()), &mut env);
    let body = fsmooth::expr::subst(&body, "acc1", &Expr::snd(xv), &mut env);
    let value = Expr::pair(g.term(&s, D), g.term(&t, D));
    Expr::let_(x, value, body)
}

/// A loop whose body contains a term that does not depend on the iteration.
fn loop_invariant(g: &mut TermGen) -> Expr {
    let invariant = Expr::un(Prim::Sin, g.term(&Type::Double, D));
    let i = unused();
    let n = if g.rng.chance(0.5) {
        Expr::length(Expr::var("w"))
    } else {
        Expr::index(g.rng.between(1, 3))
    };
    if g.rng.chance(0.5) {
        let varying = g.with_var(&i, &Type::Index, |g| g.term(&Type::Double, D));
        let body = Expr::bin(Prim::Mul, varying, invariant);
        Expr::build(n, Expr::lam(i, None, body))
    } else {
        let a: Name = "acc".into();
        let varying = g.with_var(&a, &Type::Double, |g| {
            g.with_var(&i, &Type::Index, |g| g.term(&Type::Double, D))
        });
        let body = Expr::bin(Prim::Add, varying, invariant);
        let f = Expr::lam(a, None, Expr::lam(i, None, body));
        Expr::ifold(f, g.term(&Type::Double, D), n)
    }
}

/// A term computing the same expression twice.
fn share_common(g: &mut TermGen) -> Expr {
    let e = Expr::un(
        Prim::Cos,
        Expr::bin(Prim::Add, g.term(&Type::Double, D), Expr::double(1.0)),
    );
    let other = g.term(&Type::Double, D);
    match g.rng.below(3) {
        0 => Expr::bin(Prim::Mul, e.clone(), Expr::bin(Prim::Add, other, e)),
        1 => Expr::pair(e.clone(), Expr::bin(Prim::Sub, e, other)),
        _ => Expr::let_("z", e.clone(), Expr::bin(Prim::Add, Expr::var("z"), e)),
    }
}

/// A guarded term mentioning the facts about index `i` and bound `n`.
fn guarded(g: &mut TermGen, i: &Name, n: &Expr, t: &Type) -> Expr {
    let iv = Expr::var(i.clone());
    let fact = match g.rng.below(4) {
        0 => Expr::bin(Prim::Le, Expr::index(0), iv),
        1 => Expr::bin(Prim::Ge, iv, Expr::index(0)),
        2 => Expr::bin(Prim::Lt, iv, n.clone()),
        _ => Expr::bin(Prim::Gt, n.clone(), iv),
    };
    let c = if g.rng.chance(0.5) {
        Expr::bin(Prim::And, fact, g.term(&Type::Bool, 1))
    } else {
        fact
    };
    Expr::if_(c, g.term(t, 2), g.term(t, 2))
}

fn build_index_range(g: &mut TermGen) -> Expr {
    let t = fo_type(g);
    let n = if g.rng.chance(0.5) {
        Expr::length(Expr::var("v"))
    } else {
        g.term(&Type::Index, 1)
    };
    let i = unused();
    let body = g.with_var(&i, &Type::Index, |g| guarded(g, &i, &n, &t));
    Expr::build(n, Expr::lam(i, None, body))
}

fn fold_index_range(g: &mut TermGen) -> Expr {
    let t = fo_type(g);
    let n = if g.rng.chance(0.5) {
        Expr::length(Expr::var("w"))
    } else {
        g.term(&Type::Index, 1)
    };
    let a: Name = "acc".into();
    let i = unused();
    let body = g.with_var(&a, &t, |g| {
        g.with_var(&i, &Type::Index, |g| guarded(g, &i, &n, &t))
    });
    Expr::ifold(
        Expr::lam(a, None, Expr::lam(i, None, body)),
        g.term(&t, D),
        n,
    )
}

fn with_literal(g: &mut TermGen, op: Prim, lit: i64, literal_left: bool) -> Expr {
    let t = num_type(g);
    let e = g.term(&t, D);
    let l = num_lit(&t, lit);
    if literal_left {
        Expr::bin(op, l, e)
    } else {
        Expr::bin(op, e, l)
    }
}

fn add_zero(g: &mut TermGen) -> Expr {
    let left = g.rng.chance(0.5);
    with_literal(g, Prim::Add, 0, left)
}

fn sub_zero(g: &mut TermGen) -> Expr {
    with_literal(g, Prim::Sub, 0, false)
}

fn zero_sub(g: &mut TermGen) -> Expr {
    with_literal(g, Prim::Sub, 0, true)
}

fn mul_one(g: &mut TermGen) -> Expr {
    let left = g.rng.chance(0.5);
    with_literal(g, Prim::Mul, 1, left)
}

fn mul_zero(g: &mut TermGen) -> Expr {
    let left = g.rng.chance(0.5);
    with_literal(g, Prim::Mul, 0, left)
}

fn div_one(g: &mut TermGen) -> Expr {
    with_literal(g, Prim::Div, 1, false)
}

fn neg_neg(g: &mut TermGen) -> Expr {
    let t = num_type(g);
    Expr::un(Prim::Neg, Expr::un(Prim::Neg, g.term(&t, D)))
}

fn sub_self(g: &mut TermGen) -> Expr {
    let e = match g.rng.below(6) {
        0 => Expr::un(Prim::Sin, g.term(&Type::Double, D)),
        1 => Expr::un(Prim::ToDouble, g.term(&Type::Index, D)),
        2 => Expr::length(g.term(&Type::vector(), D)),
        // Types only the checker knows: inputs, elements of inputs.
        3 => Expr::var(*g.rng.pick(&["x", "k"])),
        4 => Expr::get(Expr::var("v"), g.index()),
        _ => Expr::bin(Prim::Add, g.term(&Type::Double, D), Expr::double(1.0)),
    };
    match g.rng.below(3) {
        0 => Expr::bin(Prim::Sub, e.clone(), e),
        1 => Expr::bin(Prim::Add, e.clone(), Expr::un(Prim::Neg, e)),
        _ => Expr::bin(Prim::Add, Expr::un(Prim::Neg, e.clone()), e),
    }
}

fn factorization(g: &mut TermGen) -> Expr {
    let t = num_type(g);
    let (a, b, c) = (g.term(&t, D), g.term(&t, D), g.term(&t, D));
    if g.rng.chance(0.5) {
        Expr::bin(
            Prim::Add,
            Expr::bin(Prim::Mul, a.clone(), b),
            Expr::bin(Prim::Mul, a, c),
        )
    } else {
        Expr::bin(
            Prim::Add,
            Expr::bin(Prim::Mul, b, a.clone()),
            Expr::bin(Prim::Mul, c, a),
        )
    }
}

fn constant_fold(g: &mut TermGen) -> Expr {
    let t = num_type(g);
    let lit = |g: &mut TermGen| match t {
        Type::Double => Expr::double(*g.rng.pick(&[0.0, -1.5, 2.0, 0.1, 3.0, 1e300])),
        _ => Expr::index(*g.rng.pick(&[0, -3, 2, 7, i64::MAX, i64::MIN])),
    };
    match g.rng.below(5) {
        0 | 1 => {
            let op = *g.rng.pick(&[
                Prim::Add,
                Prim::Sub,
                Prim::Mul,
                Prim::Div,
                Prim::Lt,
                Prim::Eq,
                Prim::Ge,
            ]);
            Expr::bin(op, lit(g), lit(g))
        }
        2 => Expr::un(Prim::Neg, lit(g)),
        3 => Expr::un(
            *g.rng.pick(&[Prim::Sin, Prim::Exp, Prim::Log, Prim::Sqrt]),
            Expr::double(g.rng.double(-3.0, 3.0)),
        ),
        _ => {
            let op = *g.rng.pick(&[Prim::And, Prim::Or]);
            Expr::bin(
                op,
                Expr::boolean(g.rng.chance(0.5)),
                Expr::boolean(g.rng.chance(0.5)),
            )
        }
    }
}

fn bool_simplify(g: &mut TermGen) -> Expr {
    let e = g.term(&Type::Bool, D);
    let lit = Expr::boolean(g.rng.chance(0.5));
    match g.rng.below(5) {
        0 => Expr::bin(Prim::And, lit, e),
        1 => Expr::bin(Prim::And, e, lit),
        2 => Expr::bin(Prim::Or, lit, e),
        3 => Expr::bin(Prim::Or, e, Expr::boolean(false)),
        _ => Expr::un(Prim::Not, Expr::un(Prim::Not, e)),
    }
}

macro_rules! rule_tests {
    ($( $test:ident: $rule:literal, $tol:expr, $template:expr; )*) => {
        /// The rules with a property test here.
        const TESTED: &[&str] = &[$($rule),*];

        proptest! {
            // Rejected cases are those where the original fails on every input
            // drawn (say, an index out of bounds): allow many, but not all.
            #![proptest_config(ProptestConfig {
                cases: 150,
                max_global_rejects: 100_000,
                ..ProptestConfig::default()
            })]
            $(
                #[test]
                fn $test(seed in any::<u64>()) {
                    let compared = check($rule, seed, $tol, $template)?;
                    prop_assume!(compared > 0);
                }
            )*
        }
    };
}

rule_tests! {
    build_get_preserves_values: "buildGet", None, build_get;
    len_build_preserves_values: "lenBuild", None, len_build;
    build_eta_preserves_values: "buildEta", None, build_eta;
    fun_to_let_preserves_values: "funToLet", None, fun_to_let;
    let_partial_eval_preserves_values: "letPartialEval", None, a_let;
    let_inline_preserves_values: "letInline", None, a_let;
    dead_let_preserves_values: "deadLet", None, dead_let;
    let_app_preserves_values: "letApp", None, let_app;
    app_let_preserves_values: "appLet", None, app_let;
    prim_let_preserves_values: "primLet", None, prim_let;
    let_float_preserves_values: "letFloat", None, let_float;
    let_dup_preserves_values: "letDup", None, let_dup;
    let_swap_preserves_values: "letSwap", None, let_swap;
    pair_fst_preserves_values: "pairFst", None, pair_fst;
    pair_snd_preserves_values: "pairSnd", None, pair_snd;
    pair_eta_preserves_values: "pairEta", None, pair_eta;
    if_true_preserves_values: "ifTrue", None, if_true;
    if_false_preserves_values: "ifFalse", None, if_false;
    if_same_preserves_values: "ifSame", None, if_same;
    if_partial_eval_preserves_values: "ifPartialEval", None, if_partial_eval;
    if_app_preserves_values: "ifApp", None, if_app;
    fold_zero_preserves_values: "foldZero", None, fold_zero;
    fold_unroll_preserves_values: "foldUnroll", None, fold_unroll;
    fold_id_preserves_values: "foldId", None, fold_id;
    fold_conditional_preserves_values: "foldConditional", None, fold_conditional;
    loop_fission_preserves_values: "loopFission", None, loop_fission;
    let_pair_split_preserves_values: "letPairSplit", None, let_pair_split;
    loop_invariant_preserves_values: "loopInvariant", None, loop_invariant;
    share_common_preserves_values: "shareCommon", None, share_common;
    build_index_range_preserves_values: "buildIndexRange", None, build_index_range;
    fold_index_range_preserves_values: "foldIndexRange", None, fold_index_range;
    add_zero_preserves_values: "addZero", None, add_zero;
    sub_zero_preserves_values: "subZero", None, sub_zero;
    zero_sub_preserves_values: "zeroSub", None, zero_sub;
    mul_one_preserves_values: "mulOne", None, mul_one;
    mul_zero_preserves_values: "mulZero", None, mul_zero;
    div_one_preserves_values: "divOne", None, div_one;
    neg_neg_preserves_values: "negNeg", None, neg_neg;
    sub_self_preserves_values: "subSelf", None, sub_self;
    factorization_preserves_values_up_to_rounding: "factorization", Some(1e-9), factorization;
    constant_fold_preserves_values: "constantFold", None, constant_fold;
    bool_simplify_preserves_values: "boolSimplify", None, bool_simplify;
}

#[test]
fn every_rule_has_a_property_test() {
    for r in RULES {
        assert!(TESTED.contains(&r.name), "no property test for {}", r.name);
    }
}

fn random_term(seed: u64) -> (Expr, Rng) {
    let mut rng = Rng::new(seed);
    let scope = scope();
    let mut g = TermGen::new(&mut rng, &scope);
    let ty = fo_type(&mut g);
    let e = g.term(&ty, 6);
    (e, rng)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Each rule, applied wherever `topDown` first finds a redex in a random term.
    #[test]
    fn rules_preserve_values_inside_terms(seed in any::<u64>(), which in 0..RULES.len()) {
        let info = &RULES[which];
        let (e, mut rng) = random_term(seed);
        let s = top_down((info.make)());
        if let Ok(r) = Ctx::new(Env::with_scope(scope())).run(&s, &e) {
            let scope = scope();
            prop_assert_eq!(infer_expr(&scope, &e).ok(), infer_expr(&scope, &r).ok(), "{}: {}  ~>  {}", info.name, e, r);
            let tol = (info.name == "factorization").then_some(1e-9);
            compare(info.name, &e, &r, &mut rng, tol)?;
        }
    }

    /// `simplify` (all rules, to a normal form) on random terms.
    #[test]
    fn simplify_preserves_values(seed in any::<u64>()) {
        let (e, mut rng) = random_term(seed);
        let r = Ctx::default().with_budget(2_000_000).run(&strategies::simplify(), &e);
        let r = r.unwrap_or_else(|f| panic!("simplify failed on {e}: {f}"));
        let scope = scope();
        prop_assert_eq!(infer_expr(&scope, &e).ok(), infer_expr(&scope, &r).ok(), "{}  ~>  {}", e, r);
        compare("simplify", &e, &r, &mut rng, Some(1e-9))?;
    }
}
