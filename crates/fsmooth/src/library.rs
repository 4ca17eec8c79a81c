//! Every F-smooth strategy under its name, for the `.elv` strategy language
//! (the `elv` crate, shared with RISE): the rules of [`crate::rules::RULES`]
//! (each with its equation as its description), the named strategies of
//! [`crate::strategies::NAMED`], the F-smooth traversals and locations of
//! [`crate::traverse`] (`body`, `function`, `argument`, `child(label, s)`,
//! `is(k)`, `outermost(p, s)`, `innermost(p, s)`), and ELEVATE's generic
//! combinators (`id`, `fail`, `try`, `repeat`, `repeatN(n, s)`, `topDown`,
//! `normalize`, ...; `;`, `<+` and `s @ t` are syntax).
//!
//! A strategy is written inline ([`parse_strategy`]) or in a file of
//! definitions ([`load`]):
//!
//! ```
//! let m = fsmooth::library::load(
//!     "def unfold = funToLet <+ letPartialEval\n\
//!      def fig = normalize(buildGet <+ lenBuild <+ letApp <+ unfold)",
//! )
//! .unwrap();
//! let s = m.strategy("fig").unwrap();
//! assert_eq!(s.to_string(), "fig");
//! let p = fsmooth::parse_program(
//!     "input v : Vector\nlength (build (length v) (fun i -> v[i]))",
//! )
//! .unwrap();
//! let r = fsmooth::rewrite(&p, &s, false).unwrap();
//! assert_eq!(r.program.body.to_string(), "length v");
//! ```
//!
//! F-smooth has no normal form for `;;` to insert: `;;` is refused.

use crate::expr::Expr;
use crate::rules::RULES;
use crate::strategies::NAMED;
use crate::traverse;
use diagnostics::Diagnostic;
use elevate::Strategy;
use elv::{Kind, Module, Registry, Value};

fn strat(s: Strategy<Expr>) -> Result<Value<Expr>, String> {
    Ok(Value::Strategy(s))
}

fn strategy(v: &Value<Expr>) -> Result<Strategy<Expr>, String> {
    v.as_strategy().cloned()
}

/// The traversals of one strategy, with their descriptions.
type Wrap = fn(Strategy<Expr>) -> Strategy<Expr>;

/// The registry of every F-smooth rule, named strategy, traversal and location,
/// with the generic combinators; it has no normal form.
pub fn registry() -> Registry<Expr> {
    use Kind::{Strategy as St, Symbol};
    let mut r = Registry::new();
    for rule in RULES {
        r.add(rule.name, &[], rule.equation, move |_| strat((rule.make)()));
    }
    for n in NAMED {
        r.add(n.name, &[], n.description, move |_| strat((n.make)()));
    }
    let wraps: [(&str, &str, Wrap); 3] = [
        (
            "body",
            "`body(s)`: s on the body of a fun or a let",
            traverse::body,
        ),
        (
            "function",
            "`function(s)`: s on the function of an application",
            traverse::function,
        ),
        (
            "argument",
            "`argument(s)`: s on the argument of an application",
            traverse::argument,
        ),
    ];
    for (name, doc, make) in wraps {
        r.add(name, &[St], doc, move |a| strat(make(strategy(&a[0])?)));
    }
    r.add(
        "child",
        &[Symbol, St],
        "`child(label, s)`: s on the sub-term at position label, as locations name it \
         (size, generator, value, body, condition, then, else, step, init, count, ...)",
        |a| strat(traverse::child(a[0].as_symbol()?, strategy(&a[1])?)?),
    );
    r.add(
        "is",
        &[Symbol],
        "`is(k)`: the node is a k: var, literal, fun, app, let, if, pair, or a built-in \
         (build, get, length, ifold, fst, snd, sin, ...)",
        |a| strat(traverse::is(a[0].as_symbol()?)?),
    );
    r.add(
        "outermost",
        &[St, St],
        "`outermost(p, s)`: topDown(p ; s)",
        |a| strat(traverse::outermost(strategy(&a[0])?, strategy(&a[1])?)),
    );
    r.add(
        "innermost",
        &[St, St],
        "`innermost(p, s)`: bottomUp(p ; s)",
        |a| strat(traverse::innermost(strategy(&a[0])?, strategy(&a[1])?)),
    );
    r
}

/// Reads an inline strategy expression (`normalize(buildGet <+ lenBuild)`,
/// `foldUnroll @ outermost(is(ifold))`) over the builtins of [`registry`].
/// The diagnostics' spans point into `source`.
pub fn parse_strategy(source: &str) -> Result<Strategy<Expr>, Vec<Diagnostic>> {
    load("")?.expression(source)
}

/// Loads and checks a strategy file (`.elv`) against [`registry`]: its
/// definitions may use every F-smooth builtin. The diagnostics' spans point
/// into `source`.
pub fn load(source: &str) -> Result<Module<Expr>, Vec<Diagnostic>> {
    elv::load(source, &registry())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::fig_5_13;
    use diagnostics::Span;

    fn message(r: Result<Strategy<Expr>, Vec<Diagnostic>>) -> (Span, String) {
        let ds = r.unwrap_err();
        (ds[0].span, ds[0].message.clone())
    }

    #[test]
    fn every_rule_and_named_strategy_is_registered_with_its_row() {
        let r = registry();
        for rule in RULES {
            let (_, params, doc) = r.names().find(|b| b.0 == rule.name).unwrap();
            assert!(params.is_empty(), "{}", rule.name);
            assert_eq!(doc, rule.equation, "{}", rule.name);
        }
        for n in NAMED {
            let (_, _, doc) = r.names().find(|b| b.0 == n.name).unwrap();
            assert_eq!(doc, n.description, "{}", n.name);
            assert_eq!(parse_strategy(n.name).unwrap(), (n.make)());
        }
    }

    #[test]
    fn reads_and_prints_strategies() {
        let s = parse_strategy(
            "normalize(buildGet <+ lenBuild <+ letPartialEval <+ letApp <+ funToLet)",
        )
        .unwrap();
        assert_eq!(s, fig_5_13());
        assert_eq!(
            s.to_string(),
            "normalize(buildGet <+ lenBuild <+ letPartialEval <+ letApp <+ funToLet)"
        );
        let s = parse_strategy("topDown(funToLet) ; try(repeatN(2, one(id))) <+ simplify").unwrap();
        assert_eq!(
            s.to_string(),
            "topDown(funToLet) ; try(repeatN(2, one(id))) <+ simplify"
        );
        let s = parse_strategy("addZero @ child(generator) @ outermost(is(build))").unwrap();
        assert_eq!(
            s.to_string(),
            "topDown(is(build) ; child(generator, addZero))"
        );
    }

    #[test]
    fn reports_unknown_names_wrong_kinds_and_bad_syntax() {
        let (span, m) = message(parse_strategy("normalize(bogus)"));
        assert_eq!(span, Span::new(10, 15));
        assert!(m.contains("unknown name `bogus`"), "{m}");
        let (span, m) = message(parse_strategy("normalize(topDown)"));
        assert_eq!(span, Span::new(10, 17));
        assert!(m.contains("`topDown` is a traversal"), "{m}");
        let (_, m) = message(parse_strategy("repeatN(buildGet, id)"));
        assert!(m.contains("expected an integer"), "{m}");
        let (_, m) = message(parse_strategy("is(loop)"));
        assert!(m.contains("`loop` is not a kind of F-smooth term"), "{m}");
        let (_, m) = message(parse_strategy("addZero ;; id"));
        assert!(m.contains(";;"), "{m}");
        for bad in ["try(", "a <+", "id id", "$", &"try(".repeat(1000)] {
            assert!(parse_strategy(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_file_defines_strategies_over_the_rules() {
        let m = load(
            "// unroll n iterations of the outermost loop\n\
             def unroll(n) = repeatN(n, foldUnroll @ outermost(is(ifold)))\n\
             def clean = normalize(algebra <+ fusion <+ loops)\n\
             def both = unroll(2) ; clean",
        )
        .unwrap();
        let p =
            crate::parse_program("input x : Double\nifold (fun s i -> s + x * 1.0) 0.0 2").unwrap();
        let r = crate::rewrite(&p, &m.strategy("both").unwrap(), false).unwrap();
        assert!(
            !r.program.body.to_string().contains("ifold"),
            "{}",
            r.program.body
        );
        let e = m.expression("unroll(buildGet)").unwrap_err();
        assert!(
            e[0].message.contains("expected an integer"),
            "{}",
            e[0].message
        );
        let Err(e) = load("def s = normalize(nope)") else {
            panic!("an unknown name in a file is an error")
        };
        assert_eq!(e[0].span, Span::new(18, 22));
    }
}
