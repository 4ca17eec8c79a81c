//! Strategy values and their constructors (ICFP'20 §4.2–4.8).
//!
//! A strategy is an immutable tree ([`Node`]) behind an `Arc`: cloning is cheap,
//! and the tree can be printed, compared and itself rewritten ([`crate::meta`]).
//! Rules, predicates and language-specific traversals are leaves and traversal
//! nodes that carry a name and a Rust function.

use crate::{Ctx, Program, RewriteResult};
use std::fmt;
use std::sync::{Arc, OnceLock};

/// A strategy: a program transformation that succeeds or fails.
pub struct Strategy<P: Program>(pub(crate) Arc<Node<P>>);

impl<P: Program> Clone for Strategy<P> {
    fn clone(&self) -> Self {
        Strategy(self.0.clone())
    }
}

/// The function of a rule: the program in, the rewritten program or a failure out.
pub type RuleFn<P> = dyn Fn(&P, &mut Ctx<P>) -> RewriteResult<P> + Send + Sync;

/// The function of a language-specific traversal: applies the strategy somewhere
/// inside the program (with [`Ctx::descend`]) and rebuilds it.
pub type TraversalFn<P> = dyn Fn(&Strategy<P>, &P, &mut Ctx<P>) -> RewriteResult<P> + Send + Sync;

/// A rewrite rule, predicate or other primitive strategy written in Rust.
pub struct Rule<P: Program> {
    /// How it prints, arguments included (`split(4)`).
    pub name: Arc<str>,
    pub(crate) run: Arc<RuleFn<P>>,
}

/// A language-specific traversal (`body`, `argument`, `argOf(map)`, ...).
pub struct Traversal<P: Program> {
    /// How it prints, leading arguments included (`argOf(map)`).
    pub name: Arc<str>,
    /// Whether it visits exactly one sub-program, so that `t(f) ; t(g)` equals
    /// `t(f ; g)` (used by [`crate::meta::body_fusion`]).
    pub single_child: bool,
    pub(crate) run: Arc<TraversalFn<P>>,
}

/// A named strategy whose body is built when first applied, so that
/// definitions may refer to themselves (`inLambda(s) = isLambda ; body(inLambda(s)) <+ s`).
pub struct Named<P: Program> {
    /// The name.
    pub name: Arc<str>,
    /// The printed arguments.
    pub args: Vec<String>,
    pub(crate) body: Arc<OnceLock<Strategy<P>>>,
    pub(crate) make: Arc<dyn Fn() -> Strategy<P> + Send + Sync>,
}

/// The shapes of strategies.
pub enum Node<P: Program> {
    /// `id`: always succeeds with the program unchanged.
    Id,
    /// `fail`: never succeeds.
    Fail,
    /// `s ; t`: `s`, then `t` on its result.
    Seq(Strategy<P>, Strategy<P>),
    /// `s <+ t`: `s`, or `t` on the original program if `s` does not apply.
    LChoice(Strategy<P>, Strategy<P>),
    /// `try(s)`: `s <+ id`.
    Try(Strategy<P>),
    /// `repeat(s)`: `s` until it no longer applies.
    Repeat(Strategy<P>),
    /// `repeatN(n, s)`: `s` exactly `n` times in sequence.
    RepeatN(usize, Strategy<P>),
    /// `not(s)`: succeeds (unchanged) exactly when `s` fails.
    Not(Strategy<P>),
    /// `all(s)`: `s` on every immediate sub-program.
    All(Strategy<P>),
    /// `one(s)`: `s` on the first immediate sub-program where it applies.
    One(Strategy<P>),
    /// `some(s)`: `s` on every immediate sub-program where it applies, at least one.
    Some(Strategy<P>),
    /// `topDown(s)`: `s <+ one(topDown(s))`.
    TopDown(Strategy<P>),
    /// `bottomUp(s)`: `one(bottomUp(s)) <+ s`.
    BottomUp(Strategy<P>),
    /// `allTopDown(s)`: `s ; all(allTopDown(s))`.
    AllTopDown(Strategy<P>),
    /// `allBottomUp(s)`: `all(allBottomUp(s)) ; s`.
    AllBottomUp(Strategy<P>),
    /// `tryAll(s)`: `all(tryAll(try(s))) ; try(s)`.
    TryAll(Strategy<P>),
    /// `normalize(s)`: `repeat(topDown(s))`.
    Normalize(Strategy<P>),
    /// A language-specific traversal applied to a strategy.
    Traverse(Traversal<P>, Strategy<P>),
    /// A rule or predicate.
    Rule(Rule<P>),
    /// A named definition.
    Named(Named<P>),
}

impl<P: Program> Strategy<P> {
    /// Wraps a node.
    pub fn new(node: Node<P>) -> Strategy<P> {
        Strategy(Arc::new(node))
    }

    /// The node.
    pub fn node(&self) -> &Node<P> {
        &self.0
    }

    /// `self ; next`.
    pub fn seq(self, next: Strategy<P>) -> Strategy<P> {
        seq(self, next)
    }

    /// `self <+ other`.
    pub fn or(self, other: Strategy<P>) -> Strategy<P> {
        lchoice(self, other)
    }

    /// `self @ traversal`: this strategy at the location the traversal describes.
    pub fn at(self, traversal: impl FnOnce(Strategy<P>) -> Strategy<P>) -> Strategy<P> {
        traversal(self)
    }

    /// The printed form, shortened to one line of at most 120 characters.
    pub fn short(&self) -> String {
        let full = self.to_string();
        let one_line: String = full.split_whitespace().collect::<Vec<_>>().join(" ");
        if one_line.chars().count() > 120 {
            let cut: String = one_line.chars().take(117).collect();
            format!("{cut}...")
        } else {
            one_line
        }
    }
}

/// `id`
pub fn id<P: Program>() -> Strategy<P> {
    Strategy::new(Node::Id)
}
/// `fail`
pub fn fail<P: Program>() -> Strategy<P> {
    Strategy::new(Node::Fail)
}
/// `s ; t`
pub fn seq<P: Program>(s: Strategy<P>, t: Strategy<P>) -> Strategy<P> {
    Strategy::new(Node::Seq(s, t))
}
/// `s <+ t`
pub fn lchoice<P: Program>(s: Strategy<P>, t: Strategy<P>) -> Strategy<P> {
    Strategy::new(Node::LChoice(s, t))
}
/// `try(s)`
pub fn try_<P: Program>(s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Node::Try(s))
}
/// `repeat(s)`
pub fn repeat<P: Program>(s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Node::Repeat(s))
}
/// `repeatN(n, s)`
pub fn repeat_n<P: Program>(n: usize, s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Node::RepeatN(n, s))
}
/// `not(s)`
pub fn not<P: Program>(s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Node::Not(s))
}
/// `all(s)`
pub fn all<P: Program>(s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Node::All(s))
}
/// `one(s)`
pub fn one<P: Program>(s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Node::One(s))
}
/// `some(s)`
pub fn some<P: Program>(s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Node::Some(s))
}
/// `topDown(s)`
pub fn top_down<P: Program>(s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Node::TopDown(s))
}
/// `bottomUp(s)`
pub fn bottom_up<P: Program>(s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Node::BottomUp(s))
}
/// `allTopDown(s)`
pub fn all_top_down<P: Program>(s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Node::AllTopDown(s))
}
/// `allBottomUp(s)`
pub fn all_bottom_up<P: Program>(s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Node::AllBottomUp(s))
}
/// `tryAll(s)`
pub fn try_all<P: Program>(s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Node::TryAll(s))
}
/// `normalize(s)`
pub fn normalize<P: Program>(s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Node::Normalize(s))
}

/// A rule (or predicate) named `name`, written as a Rust function. To say that it
/// does not apply, the function returns [`crate::Failure::not_applicable`].
pub fn rule<P: Program>(
    name: impl Into<Arc<str>>,
    run: impl Fn(&P, &mut Ctx<P>) -> RewriteResult<P> + Send + Sync + 'static,
) -> Strategy<P> {
    Strategy::new(Node::Rule(Rule {
        name: name.into(),
        run: Arc::new(run),
    }))
}

/// A language-specific traversal named `name`, applied to `s`.
pub fn traversal<P: Program>(
    name: impl Into<Arc<str>>,
    single_child: bool,
    s: Strategy<P>,
    run: impl Fn(&Strategy<P>, &P, &mut Ctx<P>) -> RewriteResult<P> + Send + Sync + 'static,
) -> Strategy<P> {
    Strategy::new(Node::Traverse(
        Traversal {
            name: name.into(),
            single_child,
            run: Arc::new(run),
        },
        s,
    ))
}

/// The same traversal applied to another strategy.
pub fn retraverse<P: Program>(t: &Traversal<P>, s: Strategy<P>) -> Strategy<P> {
    Strategy::new(Node::Traverse(t.clone(), s))
}

/// A named strategy `name(args)` whose body `make` builds when first applied.
pub fn named<P: Program>(
    name: impl Into<Arc<str>>,
    args: Vec<String>,
    make: impl Fn() -> Strategy<P> + Send + Sync + 'static,
) -> Strategy<P> {
    Strategy::new(Node::Named(Named {
        name: name.into(),
        args,
        body: Arc::new(OnceLock::new()),
        make: Arc::new(make),
    }))
}

/// `isEqualTo(r)`: succeeds (unchanged) on programs equal to `r`.
pub fn is_equal_to<P: Program + PartialEq + Send + Sync>(r: P) -> Strategy<P> {
    let name = format!("isEqualTo({r})");
    rule(name, move |p: &P, _: &mut Ctx<P>| {
        if *p == r {
            Ok(p.clone())
        } else {
            Err(crate::Failure::not_applicable())
        }
    })
}

/// `contains(r)`: succeeds (unchanged) on programs with a sub-program equal to `r`.
pub fn contains<P: Traversable + PartialEq + Send + Sync>(r: P) -> Strategy<P> {
    let name = format!("contains({r})");
    let inner = top_down(is_equal_to(r));
    rule(name, move |p: &P, ctx: &mut Ctx<P>| {
        // A predicate: the program is left unchanged, whatever the search did.
        ctx.apply(&inner, p).map(|_| p.clone())
    })
}

use crate::Traversable;

impl<P: Program> Named<P> {
    /// The body, built on first use.
    pub fn body(&self) -> &Strategy<P> {
        self.body.get_or_init(|| (self.make)())
    }
}

impl<P: Program> Clone for Rule<P> {
    fn clone(&self) -> Self {
        Rule {
            name: self.name.clone(),
            run: self.run.clone(),
        }
    }
}

impl<P: Program> Clone for Traversal<P> {
    fn clone(&self) -> Self {
        Traversal {
            name: self.name.clone(),
            single_child: self.single_child,
            run: self.run.clone(),
        }
    }
}

impl<P: Program> Clone for Named<P> {
    fn clone(&self) -> Self {
        Named {
            name: self.name.clone(),
            args: self.args.clone(),
            body: self.body.clone(),
            make: self.make.clone(),
        }
    }
}

impl<P: Program> PartialEq for Strategy<P> {
    /// Structural equality; rules, traversals and named strategies compare by
    /// their printed names and arguments.
    fn eq(&self, other: &Self) -> bool {
        use Node::*;
        if Arc::ptr_eq(&self.0, &other.0) {
            return true;
        }
        match (self.node(), other.node()) {
            (Id, Id) | (Fail, Fail) => true,
            (Seq(a, b), Seq(c, d)) | (LChoice(a, b), LChoice(c, d)) => a == c && b == d,
            (RepeatN(n, a), RepeatN(m, b)) => n == m && a == b,
            (Try(a), Try(b))
            | (Repeat(a), Repeat(b))
            | (Not(a), Not(b))
            | (All(a), All(b))
            | (One(a), One(b))
            | (Some(a), Some(b))
            | (TopDown(a), TopDown(b))
            | (BottomUp(a), BottomUp(b))
            | (AllTopDown(a), AllTopDown(b))
            | (AllBottomUp(a), AllBottomUp(b))
            | (TryAll(a), TryAll(b))
            | (Normalize(a), Normalize(b)) => a == b,
            (Traverse(t, a), Traverse(u, b)) => t.name == u.name && a == b,
            (Rule(r), Rule(q)) => r.name == q.name,
            (Named(a), Named(b)) => a.name == b.name && a.args == b.args,
            _ => false,
        }
    }
}

impl<P: Program> fmt::Display for Strategy<P> {
    /// Prints in `.elv` syntax: `;` binds tighter than `<+`, both associate to the right.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        print(self, f, Prec::Choice)
    }
}

impl<P: Program> fmt::Debug for Strategy<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[derive(Clone, Copy, PartialEq, PartialOrd)]
enum Prec {
    Choice,
    Seq,
    Atom,
}

fn print<P: Program>(s: &Strategy<P>, f: &mut fmt::Formatter<'_>, ctx: Prec) -> fmt::Result {
    use Node::*;
    let call = |f: &mut fmt::Formatter<'_>, name: &str, inner: &Strategy<P>| {
        write!(f, "{name}(")?;
        print(inner, f, Prec::Choice)?;
        write!(f, ")")
    };
    match s.node() {
        Id => write!(f, "id"),
        Fail => write!(f, "fail"),
        Seq(a, b) | LChoice(a, b) => {
            let (me, op) = match s.node() {
                Seq(..) => (Prec::Seq, ";"),
                _ => (Prec::Choice, "<+"),
            };
            let paren = ctx > me;
            if paren {
                write!(f, "(")?;
            }
            // Right-associative: the left operand needs parentheses at equal precedence.
            let left = if me == Prec::Seq {
                Prec::Atom
            } else {
                Prec::Seq
            };
            print(a, f, left)?;
            write!(f, " {op} ")?;
            print(b, f, me)?;
            if paren {
                write!(f, ")")?;
            }
            Ok(())
        }
        Try(a) => call(f, "try", a),
        Repeat(a) => call(f, "repeat", a),
        RepeatN(n, a) => {
            write!(f, "repeatN({n}, ")?;
            print(a, f, Prec::Choice)?;
            write!(f, ")")
        }
        Not(a) => call(f, "not", a),
        All(a) => call(f, "all", a),
        One(a) => call(f, "one", a),
        Some(a) => call(f, "some", a),
        TopDown(a) => call(f, "topDown", a),
        BottomUp(a) => call(f, "bottomUp", a),
        AllTopDown(a) => call(f, "allTopDown", a),
        AllBottomUp(a) => call(f, "allBottomUp", a),
        TryAll(a) => call(f, "tryAll", a),
        Normalize(a) => call(f, "normalize", a),
        Traverse(t, a) => {
            // `argOf(map)` applied to `s` prints as `argOf(map, s)`.
            match t.name.strip_suffix(')') {
                Option::Some(open) => write!(f, "{open}, ")?,
                None => write!(f, "{}(", t.name)?,
            }
            print(a, f, Prec::Choice)?;
            write!(f, ")")
        }
        Rule(r) => write!(f, "{}", r.name),
        Named(n) if n.args.is_empty() => write!(f, "{}", n.name),
        Named(n) => write!(f, "{}({})", n.name, n.args.join(", ")),
    }
}
