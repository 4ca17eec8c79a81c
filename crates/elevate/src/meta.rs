//! ELEVATE rewriting ELEVATE (thesis §6.3.2): strategies are a [`Traversable`]
//! program type, and rules such as [`body_fusion`] and [`id_simplification`]
//! make a strategy take fewer steps without changing what it does.

use crate::{id, lchoice, retraverse, rule, seq, Failure, Node, Program, Strategy, Traversable};

impl<P: Program> Program for Strategy<P> {
    type Env = ();
}

impl<P: Program> Traversable for Strategy<P> {
    fn child_count(&self) -> usize {
        use Node::*;
        match self.node() {
            Id | Fail | Rule(_) | Named(_) => 0,
            Seq(..) | LChoice(..) => 2,
            _ => 1,
        }
    }

    fn child(&self, i: usize) -> Self {
        use Node::*;
        match (self.node(), i) {
            (Seq(a, _) | LChoice(a, _), 0) => a.clone(),
            (Seq(_, b) | LChoice(_, b), _) => b.clone(),
            (
                Try(a)
                | Repeat(a)
                | RepeatN(_, a)
                | Not(a)
                | All(a)
                | One(a)
                | Some(a)
                | TopDown(a)
                | BottomUp(a)
                | AllTopDown(a)
                | AllBottomUp(a)
                | TryAll(a)
                | Normalize(a)
                | Traverse(_, a),
                _,
            ) => a.clone(),
            (Id | Fail | Rule(_) | Named(_), _) => panic!("a leaf strategy has no children"),
        }
    }

    fn with_child(&self, i: usize, c: Self, _: &mut ()) -> Self {
        use Node::*;
        let node = match self.node() {
            Seq(a, b) if i == 0 => Seq(c, b.clone()),
            Seq(a, _) => Seq(a.clone(), c),
            LChoice(a, b) if i == 0 => LChoice(c, b.clone()),
            LChoice(a, _) => LChoice(a.clone(), c),
            Try(_) => Try(c),
            Repeat(_) => Repeat(c),
            RepeatN(n, _) => RepeatN(*n, c),
            Not(_) => Not(c),
            All(_) => All(c),
            One(_) => One(c),
            Some(_) => Some(c),
            TopDown(_) => TopDown(c),
            BottomUp(_) => BottomUp(c),
            AllTopDown(_) => AllTopDown(c),
            AllBottomUp(_) => AllBottomUp(c),
            TryAll(_) => TryAll(c),
            Normalize(_) => Normalize(c),
            Traverse(t, _) => return retraverse(t, c),
            Id | Fail | Rule(_) | Named(_) => return self.clone(),
        };
        Strategy::new(node)
    }

    fn child_label(&self, i: usize) -> &'static str {
        match (self.node(), i) {
            (Node::Seq(..) | Node::LChoice(..), 0) => "left",
            (Node::Seq(..) | Node::LChoice(..), _) => "right",
            _ => "inner",
        }
    }
}

/// `bodyFusion`: `t(f) ; t(g)  ~>  t(f ; g)` for a traversal `t` that visits
/// exactly one sub-program (`body`, `function`, `argument`, ...).
pub fn body_fusion<P: Program>() -> Strategy<Strategy<P>> {
    rule("bodyFusion", |s: &Strategy<P>, _| match s.node() {
        Node::Seq(a, b) => match (a.node(), b.node()) {
            (Node::Traverse(t, f), Node::Traverse(u, g)) if t.name == u.name && t.single_child => {
                Ok(retraverse(t, seq(f.clone(), g.clone())))
            }
            _ => Err(Failure::not_applicable()),
        },
        _ => Err(Failure::not_applicable()),
    })
}

/// `idSimplification` (thesis §6.3.2): `id ; id ~> id`, `id <+ s ~> id`,
/// `try(id) ~> id` and `t(id) ~> id` for a single-child traversal `t`.
///
/// As in the thesis, `t(id) ~> id` assumes the location `t` exists: `body(id)`
/// fails on a program that is not a lambda, `id` does not.
pub fn id_simplification<P: Program>() -> Strategy<Strategy<P>> {
    rule("idSimplification", |s: &Strategy<P>, _| {
        let is_id = |x: &Strategy<P>| matches!(x.node(), Node::Id);
        match s.node() {
            Node::Seq(a, b) if is_id(a) && is_id(b) => Ok(id()),
            Node::LChoice(a, _) if is_id(a) => Ok(id()),
            Node::Try(a) if is_id(a) => Ok(id()),
            Node::Traverse(t, a) if t.single_child && is_id(a) => Ok(id()),
            _ => Err(Failure::not_applicable()),
        }
    })
}

/// `lchoice` re-exported under the paper's combined name, for meta strategies.
pub fn simplify_strategies<P: Program>() -> Strategy<Strategy<P>> {
    crate::normalize(lchoice(body_fusion(), id_simplification()))
}
