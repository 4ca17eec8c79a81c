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

    /// Equal node by node (names, literals, types, ascriptions); sub-expressions that both
    /// share are compared by pointer, so a rewrite that rebuilt a part of the program costs
    /// a comparison of that part only.
    fn same(&self, other: &Expr) -> bool {
        use ExprKind::*;
        let mut pending = vec![(self, other)];
        while let Some((a, b)) = pending.pop() {
            if a.ptr_eq(b) {
                continue;
            }
            if a.ty() != b.ty() {
                return false;
            }
            let equal = match (a.kind(), b.kind()) {
                (Var(x), Var(y)) => x == y,
                (Lit(x), Lit(y)) => x == y,
                (Prim(x), Prim(y)) => x == y,
                (Foreign(x), Foreign(y)) => x == y,
                (Lambda(x, tx, e1), Lambda(y, ty, e2)) => {
                    pending.push((e1, e2));
                    x == y && tx == ty
                }
                (App(f1, a1), App(f2, a2)) => {
                    pending.extend([(a1, a2), (f1, f2)]);
                    true
                }
                (DepLambda(x, e1), DepLambda(y, e2)) => {
                    pending.push((e1, e2));
                    x == y
                }
                (DepApp(f1, a1), DepApp(f2, a2)) => {
                    pending.push((f1, f2));
                    a1 == a2
                }
                (Annot(e1, t1), Annot(e2, t2)) => {
                    pending.push((e1, e2));
                    t1 == t2
                }
                _ => false,
            };
            if !equal {
                return false;
            }
        }
        true
    }
}

impl elevate::Traversable for Expr {
    fn nodes_and_depth(&self) -> Option<(usize, usize)> {
        Some(Expr::nodes_and_depth(self))
    }

    fn child_count(&self) -> usize {
        use ExprKind::*;
        match self.kind() {
            Var(_) | Lit(_) | Prim(_) | Foreign(_) => 0,
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
            (Var(_) | Lit(_) | Prim(_) | Foreign(_), _) => {
                panic!("a leaf expression has no children")
            }
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
            Var(_) | Lit(_) | Prim(_) | Foreign(_) => return self.clone(),
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
        Lit(_) | Prim(_) | Foreign(_) => {}
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

#[cfg(test)]
mod tests {
    use crate::syntax::parse_expr;
    use crate::{DataType, Expr, ExprKind, ScalarType, Type};
    use elevate::{Program, Traversable};

    /// The same tree in new nodes.
    fn copy(e: &Expr) -> Expr {
        let mut names = crate::NameGen::default();
        (0..e.child_count()).fold(e.rebuild(e.kind().clone()), |acc, i| {
            acc.with_child(i, copy(&e.child(i)), &mut names)
        })
    }

    #[test]
    fn same_means_equal_node_by_node() {
        let e = parse_expr("fun xs => map (fun x => x * 2.0f) xs").unwrap();
        let rebuilt = copy(&e);
        assert!(!rebuilt.ptr_eq(&e) && e.same(&rebuilt) && e.same(&e));
        // another name, literal or type differs, even where alpha-equivalent
        for other in [
            "fun ys => map (fun x => x * 2.0f) ys",
            "fun xs => map (fun x => x * 3.0f) xs",
            "fun xs => map (fun y => y * 2.0f) xs",
        ] {
            assert!(!e.same(&parse_expr(other).unwrap()), "{other}");
        }
        let typed = e.with_type(Type::Data(DataType::Scalar(ScalarType::F32)));
        assert!(!e.same(&typed));
        let ExprKind::Lambda(_, _, body) = e.kind() else {
            panic!()
        };
        assert!(!e.same(body));
    }
}
