//! F-smooth terms as an ELEVATE program type: the [`elevate::Program`] and
//! [`elevate::Traversable`] instances that give the generic traversals (`one`,
//! `all`, `some`, `topDown`, `normalize`, ...) their meaning on F-smooth
//! (thesis §5.7: the same strategy machinery as for RISE, unchanged).
//!
//! Sub-terms are visited in evaluation order: a lambda's body; a function,
//! then its argument; a `let`'s value, then its body; the condition and the two
//! branches of an `if`; a built-in's arguments from left to right.
//!
//! It also has the F-smooth traversals and locations of strategy files:
//! `child(label, s)` applies `s` to the sub-term at a position of a trace
//! location ([`LABELS`]), with `body`, `function` and `argument` as short
//! forms (named as RISE's); `is(k)` tests the kind of a node, and
//! `outermost(p, s)` / `innermost(p, s)` apply `s` where `p` holds.

use crate::expr::{Env, Expr, ExprKind, Prim, FUNCTION_PRIMS};
use elevate::{bottom_up, rule, top_down, traversal, Failure, Strategy, Traversable};

impl elevate::Program for Expr {
    type Env = Env;

    /// Structural equality (shared sub-terms compared by pointer).
    fn same(&self, other: &Expr) -> bool {
        self == other
    }
}

impl Traversable for Expr {
    fn child_count(&self) -> usize {
        use ExprKind::*;
        match self.kind() {
            Var(_) | Double(_) | Index(_) | Bool(_) => 0,
            Lam(..) => 1,
            App(..) | Let(..) => 2,
            If(..) => 3,
            Prim(_, args) => args.len(),
        }
    }

    fn child(&self, i: usize) -> Expr {
        use ExprKind::*;
        match (self.kind(), i) {
            (Lam(_, _, b), _) => b.clone(),
            (App(f, _), 0) => f.clone(),
            (App(_, a), _) => a.clone(),
            (Let(_, e0, _), 0) => e0.clone(),
            (Let(_, _, e1), _) => e1.clone(),
            (If(c, _, _), 0) => c.clone(),
            (If(_, a, _), 1) => a.clone(),
            (If(_, _, b), _) => b.clone(),
            (Prim(_, args), i) if i < args.len() => args[i].clone(),
            // Out of range: the trait promises `i < child_count()`; answer the node itself.
            _ => self.clone(),
        }
    }

    fn with_child(&self, i: usize, c: Expr, _: &mut Env) -> Expr {
        use ExprKind::*;
        if self.child_count() > i && self.child(i).ptr_eq(&c) {
            return self.clone();
        }
        let kind = match (self.kind(), i) {
            (Lam(x, t, _), _) => Lam(x.clone(), t.clone(), c),
            (App(_, a), 0) => App(c, a.clone()),
            (App(f, _), _) => App(f.clone(), c),
            (Let(x, _, e1), 0) => Let(x.clone(), c, e1.clone()),
            (Let(x, e0, _), _) => Let(x.clone(), e0.clone(), c),
            (If(_, a, b), 0) => If(c, a.clone(), b.clone()),
            (If(k, _, b), 1) => If(k.clone(), c, b.clone()),
            (If(k, a, _), _) => If(k.clone(), a.clone(), c),
            (Prim(op, args), i) if i < args.len() => {
                let mut args = args.clone();
                args[i] = c;
                Prim(*op, args)
            }
            _ => return self.clone(),
        };
        self.with_kind(kind)
    }

    fn child_label(&self, i: usize) -> &'static str {
        use ExprKind::*;
        match (self.kind(), i) {
            (Lam(..), _) => "body",
            (App(..), 0) => "function",
            (App(..), _) => "argument",
            (Let(..), 0) => "value",
            (Let(..), _) => "body",
            (If(..), 0) => "condition",
            (If(..), 1) => "then",
            (If(..), _) => "else",
            (Prim(op, _), i) => op.arg_label(i),
            _ => "?",
        }
    }
}

/// The positions of sub-terms, as [`Traversable::child_label`] names them in
/// locations (`generator.body.size`) and as [`child`] takes them.
pub const LABELS: &[&str] = &[
    "body",
    "function",
    "argument",
    "value",
    "condition",
    "then",
    "else",
    "size",
    "generator",
    "array",
    "index",
    "step",
    "init",
    "count",
    "first",
    "second",
    "operand",
    "left",
    "right",
    "point",
];

/// `child(label, s)`: `s` on the immediate sub-term at position `label` (one of
/// [`LABELS`], the names of trace locations: `child(generator, s)` on a
/// `build`, `child(value, s)` on a `let`); fails on a term without one. A
/// label no term has is an error.
pub fn child(label: &str, s: Strategy<Expr>) -> Result<Strategy<Expr>, String> {
    let Some(&label) = LABELS.iter().find(|l| **l == label) else {
        return Err(format!(
            "`{label}` is not the position of a sub-term; the positions are {}",
            LABELS.join(", ")
        ));
    };
    Ok(at_label(format!("child({label})"), label, s))
}

/// `body(s)`: `s` on the body of a `fun` or of a `let` (`child(body, s)`).
pub fn body(s: Strategy<Expr>) -> Strategy<Expr> {
    at_label("body".into(), "body", s)
}

/// `function(s)`: `s` on the function of an application (`child(function, s)`).
pub fn function(s: Strategy<Expr>) -> Strategy<Expr> {
    at_label("function".into(), "function", s)
}

/// `argument(s)`: `s` on the argument of an application (`child(argument, s)`).
pub fn argument(s: Strategy<Expr>) -> Strategy<Expr> {
    at_label("argument".into(), "argument", s)
}

/// The traversal called `name` that applies `s` to the sub-term labelled `label`.
fn at_label(name: String, label: &'static str, s: Strategy<Expr>) -> Strategy<Expr> {
    traversal(name, true, s, move |s, e: &Expr, ctx| {
        let Some(i) = (0..e.child_count()).find(|&i| e.child_label(i) == label) else {
            return Err(Failure::not_applicable());
        };
        let c = ctx.descend(label, s, &e.child(i))?;
        Ok(e.with_child(i, c, &mut ctx.env))
    })
}

/// The kinds of nodes [`is`] recognizes, other than the built-ins written as
/// functions ([`crate::expr::FUNCTION_PRIMS`]: `build`, `ifold`, `length`, ...).
pub const NODE_KINDS: &[&str] = &["var", "literal", "fun", "app", "let", "if", "pair"];

/// `is(k)`: succeeds, unchanged, on a node of kind `k`: `var`, `literal`, `fun`,
/// `app`, `let`, `if`, `pair`, or a built-in written as a function (`build`,
/// `get`, `length`, `ifold`, `fst`, `sin`, ...). An unknown kind is an error.
pub fn is(kind: &str) -> Result<Strategy<Expr>, String> {
    let test: fn(&Expr, Option<Prim>) -> bool = match kind {
        "var" => |e, _| matches!(e.kind(), ExprKind::Var(_)),
        "literal" => |e, _| e.is_literal(),
        "fun" => |e, _| matches!(e.kind(), ExprKind::Lam(..)),
        "app" => |e, _| matches!(e.kind(), ExprKind::App(..)),
        "let" => |e, _| matches!(e.kind(), ExprKind::Let(..)),
        "if" => |e, _| matches!(e.kind(), ExprKind::If(..)),
        "pair" => |e, _| matches!(e.kind(), ExprKind::Prim(Prim::Pair, _)),
        _ => |e, p| matches!(e.kind(), ExprKind::Prim(q, _) if Some(*q) == p),
    };
    let prim = Prim::from_name(kind);
    if prim.is_none() && !NODE_KINDS.contains(&kind) {
        let prims: Vec<&str> = FUNCTION_PRIMS.iter().map(|p| p.0).collect();
        return Err(format!(
            "`{kind}` is not a kind of F-smooth term; the kinds are {}, {}",
            NODE_KINDS.join(", "),
            prims.join(", ")
        ));
    }
    Ok(rule(format!("is({kind})"), move |e: &Expr, _| {
        if test(e, prim) {
            Ok(e.clone())
        } else {
            Err(Failure::not_applicable())
        }
    }))
}

/// `outermost(p, s)`: `topDown(p ; s)`, `s` at the first (outermost) place
/// where the predicate `p` holds.
pub fn outermost(p: Strategy<Expr>, s: Strategy<Expr>) -> Strategy<Expr> {
    top_down(p.seq(s))
}

/// `innermost(p, s)`: `bottomUp(p ; s)`.
pub fn innermost(p: Strategy<Expr>, s: Strategy<Expr>) -> Strategy<Expr> {
    bottom_up(p.seq(s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_expr;
    use crate::rules::{add_zero, fold_zero};

    fn run(s: &Strategy<Expr>, src: &str) -> Option<String> {
        s.apply(&parse_expr(src).unwrap())
            .ok()
            .map(|e| e.to_string())
    }

    #[test]
    fn child_reaches_the_labelled_sub_term_only() {
        let s = child("generator", add_zero()).unwrap();
        assert_eq!(s.to_string(), "child(generator, addZero)");
        // Only the generator is tried: the `0 + 0` in the size is left alone.
        assert_eq!(
            run(&s, "build (0 + 0) (x + 0)"),
            Some("build (0 + 0) x".into())
        );
        assert_eq!(run(&s, "build (n + 0) x"), None);
        assert_eq!(run(&s, "x + 0"), None);
        let v = child("value", add_zero()).unwrap();
        assert_eq!(
            run(&v, "let y = x + 0 in y + 0"),
            Some("let y = x in y + 0".into())
        );
        let e = child("else", add_zero()).unwrap();
        assert_eq!(
            run(&e, "if b then x + 0 else x + 0"),
            Some("if b then x + 0 else x".into())
        );
        let err = child("nowhere", add_zero()).unwrap_err();
        assert!(
            err.contains("`nowhere` is not the position of a sub-term"),
            "{err}"
        );
    }

    #[test]
    fn body_function_and_argument() {
        assert_eq!(
            run(&body(add_zero()), "fun x -> x + 0"),
            Some("fun x -> x".into())
        );
        assert_eq!(
            run(&body(add_zero()), "let y = 1 in y + 0"),
            Some("let y = 1 in y".into())
        );
        assert_eq!(
            run(&function(add_zero()), "(f + 0) (a + 0)"),
            Some("f (a + 0)".into())
        );
        assert_eq!(
            run(&argument(add_zero()), "(f + 0) (a + 0)"),
            Some("(f + 0) a".into())
        );
        assert_eq!(run(&argument(add_zero()), "x + 0"), None);
    }

    #[test]
    fn predicates_and_locations() {
        let s = outermost(is("ifold").unwrap(), fold_zero());
        assert_eq!(run(&s, "1.0 + ifold f z 0"), Some("1.0 + z".into()));
        assert_eq!(
            run(&is("let").unwrap(), "let x = 1 in x"),
            Some("let x = 1 in x".into())
        );
        assert_eq!(run(&is("let").unwrap(), "x"), None);
        assert_eq!(run(&is("literal").unwrap(), "2.5"), Some("2.5".into()));
        assert_eq!(run(&is("pair").unwrap(), "(a, b)"), Some("(a, b)".into()));
        let inner = innermost(is("app").unwrap(), function(add_zero()));
        assert_eq!(
            run(&inner, "(f + 0) ((g + 0) a)"),
            Some("(f + 0) (g a)".into())
        );
        let err = is("loop").unwrap_err();
        assert!(
            err.contains("`loop` is not a kind of F-smooth term"),
            "{err}"
        );
        assert!(err.contains("ifold"), "{err}");
    }
}
