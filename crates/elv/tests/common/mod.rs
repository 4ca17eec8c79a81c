//! A toy program type for testing the strategy language without RISE:
//! arithmetic expressions with a few rules, predicates and traversals.
#![allow(dead_code)]

use elevate::{Ctx, Failure, Program, RewriteResult, Strategy, Traversable};
use elv::{Kind, Registry, Value};
use std::fmt;

/// `n | x | a + b | a * b`
#[derive(Clone, Debug, PartialEq)]
pub enum E {
    Num(i64),
    Var(String),
    Add(Box<E>, Box<E>),
    Mul(Box<E>, Box<E>),
}

pub fn num(n: i64) -> E {
    E::Num(n)
}
pub fn var(x: &str) -> E {
    E::Var(x.to_string())
}
pub fn add(a: E, b: E) -> E {
    E::Add(Box::new(a), Box::new(b))
}
pub fn mul(a: E, b: E) -> E {
    E::Mul(Box::new(a), Box::new(b))
}

impl fmt::Display for E {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            E::Num(n) => write!(f, "{n}"),
            E::Var(x) => write!(f, "{x}"),
            E::Add(a, b) => write!(f, "({a} + {b})"),
            E::Mul(a, b) => write!(f, "({a} * {b})"),
        }
    }
}

impl Program for E {
    type Env = ();
}

impl Traversable for E {
    fn child_count(&self) -> usize {
        match self {
            E::Add(..) | E::Mul(..) => 2,
            _ => 0,
        }
    }
    fn child(&self, i: usize) -> E {
        match (self, i) {
            (E::Add(a, _) | E::Mul(a, _), 0) => (**a).clone(),
            (E::Add(_, b) | E::Mul(_, b), _) => (**b).clone(),
            _ => panic!("no child"),
        }
    }
    fn with_child(&self, i: usize, c: E, _: &mut ()) -> E {
        match (self, i) {
            (E::Add(_, b), 0) => E::Add(Box::new(c), b.clone()),
            (E::Add(a, _), _) => E::Add(a.clone(), Box::new(c)),
            (E::Mul(_, b), 0) => E::Mul(Box::new(c), b.clone()),
            (E::Mul(a, _), _) => E::Mul(a.clone(), Box::new(c)),
            _ => self.clone(),
        }
    }
    fn child_label(&self, i: usize) -> &'static str {
        if i == 0 {
            "left"
        } else {
            "right"
        }
    }
}

fn no<T>() -> Result<T, Failure<E>> {
    Err(Failure::not_applicable())
}

pub fn add_zero() -> Strategy<E> {
    elevate::rule("addZero", |p: &E, _: &mut Ctx<E>| match p {
        E::Add(a, b) if **b == E::Num(0) => Ok((**a).clone()),
        _ => no(),
    })
}

pub fn mul_one() -> Strategy<E> {
    elevate::rule("mulOne", |p: &E, _: &mut Ctx<E>| match p {
        E::Mul(a, b) if **b == E::Num(1) => Ok((**a).clone()),
        _ => no(),
    })
}

pub fn commute() -> Strategy<E> {
    elevate::rule("commute", |p: &E, _: &mut Ctx<E>| match p {
        E::Add(a, b) => Ok(E::Add(b.clone(), a.clone())),
        E::Mul(a, b) => Ok(E::Mul(b.clone(), a.clone())),
        _ => no(),
    })
}

pub fn is_add() -> Strategy<E> {
    elevate::rule("isAdd", |p: &E, _: &mut Ctx<E>| match p {
        E::Add(..) => Ok(p.clone()),
        _ => no(),
    })
}

pub fn is_num() -> Strategy<E> {
    elevate::rule("isNum", |p: &E, _: &mut Ctx<E>| match p {
        E::Num(_) => Ok(p.clone()),
        _ => no(),
    })
}

/// `left(s)`: `s` on the left operand (a single-child traversal).
pub fn left(s: Strategy<E>) -> Strategy<E> {
    elevate::traversal(
        "left",
        true,
        s,
        |s: &Strategy<E>, p: &E, ctx: &mut Ctx<E>| -> RewriteResult<E> {
            match p {
                E::Add(a, b) => Ok(E::Add(Box::new(ctx.descend("left", s, a)?), b.clone())),
                E::Mul(a, b) => Ok(E::Mul(Box::new(ctx.descend("left", s, a)?), b.clone())),
                _ => no(),
            }
        },
    )
}

/// `argOf(op, s)`: `s` on the right operand of an `op` node (`add` or `mul`).
pub fn arg_of(op: &str, s: Strategy<E>) -> Result<Strategy<E>, String> {
    let is_add = match op {
        "add" => true,
        "mul" => false,
        _ => return Err(format!("unknown operator `{op}`: expected `add` or `mul`")),
    };
    Ok(elevate::traversal(
        format!("argOf({op})"),
        true,
        s,
        move |s: &Strategy<E>, p: &E, ctx: &mut Ctx<E>| -> RewriteResult<E> {
            match p {
                E::Add(a, b) if is_add => {
                    Ok(E::Add(a.clone(), Box::new(ctx.descend("right", s, b)?)))
                }
                E::Mul(a, b) if !is_add => {
                    Ok(E::Mul(a.clone(), Box::new(ctx.descend("right", s, b)?)))
                }
                _ => no(),
            }
        },
    ))
}

/// `setNum(n)`: replaces a number by `n`.
pub fn set_num(n: i64) -> Strategy<E> {
    elevate::rule(
        format!("setNum({n})"),
        move |p: &E, _: &mut Ctx<E>| match p {
            E::Num(m) if *m != n => Ok(E::Num(n)),
            _ => no(),
        },
    )
}

/// `isNumIn([n1, ...])`: succeeds on the numbers in the list.
pub fn is_num_in(ns: Vec<i64>) -> Strategy<E> {
    let name = format!(
        "isNumIn([{}])",
        ns.iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    elevate::rule(name, move |p: &E, _: &mut Ctx<E>| match p {
        E::Num(n) if ns.contains(n) => Ok(p.clone()),
        _ => no(),
    })
}

/// The normal form registered for `;;`.
pub fn nf() -> Strategy<E> {
    elevate::normalize(elevate::lchoice(add_zero(), mul_one()))
}

fn s(v: Strategy<E>) -> Result<Value<E>, String> {
    Ok(Value::Strategy(v))
}

/// The generic combinators plus the toy rules, without a normal form.
pub fn registry_without_nf() -> Registry<E> {
    use Kind::{Int, List, Strategy as S, Symbol, Traversal};
    let mut r = Registry::new();
    r.add("addZero", &[], "x + 0 ~> x", |_| s(add_zero()));
    r.add("mulOne", &[], "x * 1 ~> x", |_| s(mul_one()));
    r.add("commute", &[], "a + b ~> b + a", |_| s(commute()));
    r.add("isAdd", &[], "an addition?", |_| s(is_add()));
    r.add("isNum", &[], "a number?", |_| s(is_num()));
    r.add("left", &[S], "s on the left operand", |a| {
        s(left(a[0].as_strategy()?.clone()))
    });
    r.add("argOf", &[Symbol, S], "s on the right operand of op", |a| {
        s(arg_of(a[0].as_symbol()?, a[1].as_strategy()?.clone())?)
    });
    r.add(
        "outermost",
        &[S, S],
        "s at the first node, top-down, where pred holds",
        |a| {
            let pred = a[0].as_strategy()?.clone();
            s(elevate::top_down(elevate::seq(
                pred,
                a[1].as_strategy()?.clone(),
            )))
        },
    );
    r.add("setNum", &[Int], "a number ~> n", |a| {
        let n = a[0].as_int()?;
        if n < 0 {
            return Err("setNum needs a non-negative number".into());
        }
        s(set_num(n))
    });
    r.add("isNumIn", &[List], "a number in the list?", |a| {
        let mut ns = Vec::new();
        for v in a[0].as_list()? {
            ns.push(
                v.as_int()
                    .map_err(|_| "isNumIn needs a list of integers".to_string())?,
            );
        }
        s(is_num_in(ns))
    });
    r.add("tile", &[Int, Int], "a stand-in with a size check", |a| {
        let (x, y) = (a[0].as_int()?, a[1].as_int()?);
        if x <= 0 || y <= 0 {
            return Err("tile needs positive sizes".into());
        }
        s(elevate::rule(
            format!("tile({x}, {y})"),
            |p: &E, _: &mut Ctx<E>| Ok(p.clone()),
        ))
    });
    r.add("twice", &[Traversal, S], "t(t(s))", |a| {
        let t = a[0].as_traversal()?;
        let once = t.apply(a[1].as_strategy()?.clone())?;
        s(t.apply(once)?)
    });
    r
}

/// [`registry_without_nf`] with `normalize(addZero <+ mulOne)` as normal form.
pub fn registry() -> Registry<E> {
    let mut r = registry_without_nf();
    r.set_normal_form("NF", nf());
    r
}

/// Loads `src`, panicking with the rendered errors if it does not load.
pub fn load(src: &str) -> elv::Module<E> {
    match elv::load(src, &registry()) {
        Ok(m) => m,
        Err(errors) => {
            let rendered: Vec<String> = errors.iter().map(|e| e.render("test.elv", src)).collect();
            panic!("{}", rendered.join("\n"))
        }
    }
}

/// The errors of loading `src`, which must not load.
pub fn errors(src: &str) -> Vec<elv::Diagnostic> {
    errors_with(src, &registry())
}

pub fn errors_with(src: &str, r: &Registry<E>) -> Vec<elv::Diagnostic> {
    match elv::load(src, r) {
        Ok(m) => panic!(
            "expected errors, but it loaded: {:?}",
            m.definitions().collect::<Vec<_>>()
        ),
        Err(errors) => errors,
    }
}

/// The strategy an expression evaluates to in an empty module.
pub fn expr(src: &str) -> Strategy<E> {
    let m = load("");
    match m.expression(src) {
        Ok(s) => s,
        Err(errors) => {
            let rendered: Vec<String> = errors.iter().map(|e| e.render("expr", src)).collect();
            panic!("{}", rendered.join("\n"))
        }
    }
}

/// The text a diagnostic's span covers.
pub fn span_text<'a>(src: &'a str, d: &elv::Diagnostic) -> &'a str {
    &src[d.span.range()]
}
