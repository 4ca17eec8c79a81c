//! F-smooth terms as an ELEVATE program type: the [`elevate::Program`] and
//! [`elevate::Traversable`] instances that give the generic traversals (`one`,
//! `all`, `some`, `topDown`, `normalize`, ...) their meaning on F-smooth
//! (thesis §5.7: the same strategy machinery as for RISE, unchanged).
//!
//! Sub-terms are visited in evaluation order: a lambda's body; a function,
//! then its argument; a `let`'s value, then its body; the condition and the two
//! branches of an `if`; a built-in's arguments from left to right.

use crate::expr::{Env, Expr, ExprKind};
use elevate::Traversable;

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
