//! RISE as a program type for ELEVATE: [`elevate::Traversable`] over expressions
//! (ICFP'20 §4.5: "`all`, `one` and `some` correspond to the obvious
//! implementations on the tree-based representation").
//!
//! Immediate sub-expressions, in order: the body of a lambda (`body`), the
//! function and the argument of an application (`function`, `argument`), the
//! body of a dependent lambda, the function of a dependent application, the
//! expression under an ascription. Rebuilding a node keeps its type: rewriting
//! replaces an expression by one of the same type.

use crate::expr::{Expr, ExprKind, NameGen};

impl elevate::Program for Expr {
    type Env = NameGen;
}

impl elevate::Traversable for Expr {
    fn child_count(&self) -> usize {
        use ExprKind::*;
        match self.kind() {
            Var(_) | Lit(_) | Prim(_) => 0,
            Lambda(..) | DepLambda(..) | DepApp(..) | Annot(..) => 1,
            App(..) => 2,
        }
    }

    fn child(&self, i: usize) -> Expr {
        use ExprKind::*;
        match (self.kind(), i) {
            (App(f, _), 0) => f.clone(),
            (App(_, a), _) => a.clone(),
            (Lambda(_, _, b) | DepLambda(_, b) | DepApp(b, _) | Annot(b, _), _) => b.clone(),
            (Var(_) | Lit(_) | Prim(_), _) => panic!("a leaf expression has no children"),
        }
    }

    fn with_child(&self, i: usize, c: Expr, _: &mut NameGen) -> Expr {
        use ExprKind::*;
        let kind = match self.kind() {
            App(_, a) if i == 0 => App(c, a.clone()),
            App(f, _) => App(f.clone(), c),
            Lambda(x, t, _) => Lambda(x.clone(), t.clone(), c),
            DepLambda(x, _) => DepLambda(x.clone(), c),
            DepApp(_, a) => DepApp(c, a.clone()),
            Annot(_, t) => Annot(c, t.clone()),
            Var(_) | Lit(_) | Prim(_) => return self.clone(),
        };
        self.rebuild(kind)
    }

    fn child_label(&self, i: usize) -> &'static str {
        use ExprKind::*;
        match (self.kind(), i) {
            (App(..), 0) | (DepApp(..), _) => "function",
            (App(..), _) => "argument",
            (Annot(..), _) => "inner",
            _ => "body",
        }
    }
}

impl NameGen {
    /// A generator whose names cannot clash with the generated-looking names
    /// (`x_12`) already used in `e`.
    pub fn avoiding(e: &Expr) -> NameGen {
        let mut max = 0u64;
        visit_names(e, &mut |n| {
            if let Some((_, digits)) = n.rsplit_once('_') {
                if let Ok(k) = digits.parse::<u64>() {
                    max = max.max(k.saturating_add(1));
                }
            }
        });
        NameGen::starting_at(max)
    }
}

fn visit_names(e: &Expr, f: &mut dyn FnMut(&str)) {
    use ExprKind::*;
    match e.kind() {
        Var(x) => f(x),
        Lit(_) | Prim(_) => {}
        Lambda(x, _, b) => {
            f(x);
            visit_names(b, f);
        }
        App(g, a) => {
            visit_names(g, f);
            visit_names(a, f);
        }
        DepLambda(x, b) => {
            f(&x.name);
            visit_names(b, f);
        }
        DepApp(b, _) | Annot(b, _) => visit_names(b, f),
    }
}
