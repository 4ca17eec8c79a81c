//! RISE expressions: immutable, shared trees (ICFP'20 Fig. 4; RISE & Shine Fig. 2).
//!
//! An [`Expr`] is an `Arc` to a node, so cloning is a pointer copy and subterms are
//! shared between the versions of a program that rewriting produces. Every node
//! carries an optional [`Type`] (filled in by inference) and the [`Span`] of the
//! source it came from. Equality of programs is [`Expr::alpha_eq`]: bound names do
//! not matter, types and spans are ignored.

use crate::foreign::ForeignFun;
use crate::primitives::Prim;
use crate::span::Span;
use crate::types::{Binder, Name, ScalarType, Type, TypeArg};
use arith::Nat;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// A literal value.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// A boolean.
    Bool(bool),
    /// An integer of the given scalar type (any integer type).
    Int(i64, ScalarType),
    /// A floating-point number of the given scalar type (`f16`, `f32`, `f64`).
    Float(f64, ScalarType),
    /// A natural number of data type `natType`.
    Nat(Nat),
}

/// An expression: a shared pointer to an [`ExprNode`].
#[derive(Clone)]
pub struct Expr(Arc<ExprNode>);

/// A node of an expression tree.
#[derive(Clone, Debug)]
pub struct ExprNode {
    /// What the node is.
    pub kind: ExprKind,
    /// Its type, once inferred.
    pub ty: Option<Type>,
    /// The source it came from (`Span::default()` for generated nodes).
    pub span: Span,
    /// Its nodes and depth (see [`Expr::nodes_and_depth`]).
    shape: (usize, usize),
}

/// A node: `kind` with its type and span, and the nodes and depth it spans.
fn node(kind: ExprKind, ty: Option<Type>, span: Span) -> Expr {
    let shape = shape_of(&kind);
    Expr(Arc::new(ExprNode {
        kind,
        ty,
        span,
        shape,
    }))
}

/// The nodes (shared ones counted as often as they occur, up to `usize::MAX`) and the
/// depth of a node made of `kind`: one more than its children's.
fn shape_of(kind: &ExprKind) -> (usize, usize) {
    use ExprKind::*;
    let children: [Option<&Expr>; 2] = match kind {
        Var(_) | Lit(_) | Prim(_) | Foreign(_) => [None, None],
        Lambda(_, _, b) | DepLambda(_, b) | DepApp(b, _) | Annot(b, _) => [Some(b), None],
        App(f, a) => [Some(f), Some(a)],
    };
    children
        .into_iter()
        .flatten()
        .fold((1, 1), |(nodes, depth), c| {
            let (n, d) = c.0.shape;
            (nodes.saturating_add(n), depth.max(d.saturating_add(1)))
        })
}

/// The constructs of RISE.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// A value variable (a lambda parameter, or a top-level definition).
    Var(Name),
    /// A literal.
    Lit(Literal),
    /// `fun x => body`, optionally with the parameter's type.
    Lambda(Name, Option<Type>, Expr),
    /// Function application `f e`.
    App(Expr, Expr),
    /// `fun (x: kind) => body`: abstraction over a type-level value.
    DepLambda(Binder, Expr),
    /// Application to a type-level value.
    DepApp(Expr, TypeArg),
    /// A primitive.
    Prim(Prim),
    /// A type ascription `(e : t)`.
    Annot(Expr, Type),
    /// A foreign function (a scalar function written in C, [`crate::foreign`]), by itself;
    /// applications to its arguments are [`ExprKind::App`] nodes.
    Foreign(Arc<ForeignFun>),
}

impl Expr {
    /// A node with no type yet.
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        node(kind, None, span)
    }

    /// A node with a type.
    pub fn typed(kind: ExprKind, ty: Type, span: Span) -> Expr {
        node(kind, Some(ty), span)
    }

    /// The node's construct.
    pub fn kind(&self) -> &ExprKind {
        &self.0.kind
    }

    /// The node's direct sub-expressions (a lambda's body, an application's function and
    /// argument, ...), in the order they are written.
    pub fn children(&self) -> Vec<&Expr> {
        match self.kind() {
            ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Prim(_) | ExprKind::Foreign(_) => {
                vec![]
            }
            ExprKind::Lambda(_, _, b)
            | ExprKind::DepLambda(_, b)
            | ExprKind::DepApp(b, _)
            | ExprKind::Annot(b, _) => vec![b],
            ExprKind::App(f, a) => vec![f, a],
        }
    }

    /// Whether the node or one below it satisfies `p`.
    pub fn any(&self, p: &dyn Fn(&Expr) -> bool) -> bool {
        p(self) || self.children().into_iter().any(|c| c.any(p))
    }

    /// The node's type, if inferred.
    pub fn ty(&self) -> Option<&Type> {
        self.0.ty.as_ref()
    }

    /// The node's source span.
    pub fn span(&self) -> Span {
        self.0.span
    }

    /// The same node with another type.
    pub fn with_type(&self, ty: Type) -> Expr {
        node(self.0.kind.clone(), Some(ty), self.0.span)
    }

    /// Its nodes (shared sub-expressions counted as often as they occur, up to
    /// `usize::MAX`) and its depth (1 for a leaf), kept in every node: counting them costs
    /// nothing.
    pub fn nodes_and_depth(&self) -> (usize, usize) {
        self.0.shape
    }

    /// The node's address: an identity for the node while it is alive.
    pub fn addr(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// A node of the same type and span with another construct.
    pub fn rebuild(&self, kind: ExprKind) -> Expr {
        node(kind, self.0.ty.clone(), self.0.span)
    }

    /// Whether both point to the same node (a cheap pre-check for equality).
    pub fn ptr_eq(&self, other: &Expr) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The primitive, if this node is one.
    pub fn as_prim(&self) -> Option<Prim> {
        match self.kind() {
            ExprKind::Prim(p) => Some(*p),
            _ => None,
        }
    }

    /// Splits nested applications `f a1 ... an` into `f` and the arguments (value and type-level).
    pub fn spine(&self) -> (&Expr, Vec<Arg<'_>>) {
        let mut args = Vec::new();
        let mut head = self;
        loop {
            match head.kind() {
                ExprKind::App(f, a) => {
                    args.push(Arg::Value(a));
                    head = f;
                }
                ExprKind::DepApp(f, a) => {
                    args.push(Arg::Type(a));
                    head = f;
                }
                _ => break,
            }
        }
        args.reverse();
        (head, args)
    }

    /// [`Expr::spine`] with the value arguments only: `f` and `a1 ... an`.
    pub fn value_spine(&self) -> (&Expr, Vec<&Expr>) {
        let (head, args) = self.spine();
        let values = args
            .into_iter()
            .filter_map(|a| match a {
                Arg::Value(v) => Some(v),
                Arg::Type(_) => None,
            })
            .collect();
        (head, values)
    }

    /// Whether this expression only views data: variables and literals combined by
    /// layout primitives ([`Prim::is_layout`]) and `map`s of view functions. Such
    /// a `map` needs no loop: it is an index transformation, not a computation.
    pub fn is_view(&self) -> bool {
        let (head, args) = self.spine();
        let args_are_views = || {
            args.iter().all(|a| match a {
                Arg::Value(v) => v.is_view(),
                Arg::Type(_) => true,
            })
        };
        match head.kind() {
            ExprKind::Var(_) | ExprKind::Lit(_) => args_are_views(),
            ExprKind::Prim(p) if p.is_layout() => args_are_views(),
            ExprKind::Prim(Prim::Map) => match args.split_first() {
                Some((Arg::Value(f), rest)) => {
                    f.is_view_function()
                        && rest
                            .iter()
                            .all(|a| matches!(a, Arg::Value(v) if v.is_view()))
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// Whether this is a function that only views its arguments: a lambda whose
    /// body [`Expr::is_view`], or a (partially applied) view such as `transpose`
    /// or `map join`.
    pub fn is_view_function(&self) -> bool {
        match self.kind() {
            ExprKind::Lambda(_, _, body) => body.is_view() || body.is_view_function(),
            _ => self.is_view(),
        }
    }

    /// Equality up to renaming of bound variables; types and spans are ignored.
    pub fn alpha_eq(&self, other: &Expr) -> bool {
        alpha_eq(self, other, &mut Vec::new())
    }

    /// The free value variables.
    pub fn free_vars(&self) -> Vec<Name> {
        let mut out = Vec::new();
        free_vars(self, &mut Vec::new(), &mut out);
        out
    }
}

/// An argument in an application spine.
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    /// A value argument.
    Value(&'a Expr),
    /// A type-level argument.
    Type(&'a TypeArg),
}

fn alpha_eq(a: &Expr, b: &Expr, env: &mut Vec<(Name, Name)>) -> bool {
    use ExprKind::*;
    let bound = |env: &Vec<(Name, Name)>, x: &Name, y: &Name| {
        for (l, r) in env.iter().rev() {
            match (l == x, r == y) {
                (true, true) => return true,
                (false, false) => continue,
                _ => return false,
            }
        }
        x == y
    };
    match (a.kind(), b.kind()) {
        (Var(x), Var(y)) => bound(env, x, y),
        (Lit(x), Lit(y)) => x == y,
        (Prim(x), Prim(y)) => x == y,
        (Foreign(x), Foreign(y)) => x == y,
        (Lambda(x, tx, e1), Lambda(y, ty, e2)) => {
            if tx.is_some() != ty.is_some() {
                return false;
            }
            env.push((x.clone(), y.clone()));
            let r = alpha_eq(e1, e2, env);
            env.pop();
            r
        }
        (App(f1, a1), App(f2, a2)) => alpha_eq(f1, f2, env) && alpha_eq(a1, a2, env),
        (DepLambda(x, e1), DepLambda(y, e2)) => {
            if x.kind != y.kind {
                return false;
            }
            // Type-level names are compared through the body with the binder
            // renamed; before elaboration the binder is also used as a value
            // variable (`split n`), so it binds those too.
            let fresh: Name = format!("%{}", env.len()).into();
            let e1 = rename_type_var(e1, &x.name, &fresh, x.kind);
            let e2 = rename_type_var(e2, &y.name, &fresh, y.kind);
            env.push((x.name.clone(), y.name.clone()));
            let r = alpha_eq(&e1, &e2, env);
            env.pop();
            r
        }
        (DepApp(f1, x), DepApp(f2, y)) => alpha_eq(f1, f2, env) && x == y,
        (Annot(e1, t1), Annot(e2, t2)) => t1 == t2 && alpha_eq(e1, e2, env),
        _ => false,
    }
}

/// Renames a type-level variable throughout an expression (in type arguments and annotations).
pub fn rename_type_var(e: &Expr, from: &Name, to: &Name, kind: crate::types::Kind) -> Expr {
    let arg = TypeArg::var(to, kind);
    let from2 = from.clone();
    let s = move |n: &str, k: crate::types::Kind| (n == &*from2 && k == kind).then(|| arg.clone());
    map_types(e, &s)
}

/// Applies a type-level substitution to every type inside an expression.
pub fn map_types(e: &Expr, s: &dyn crate::types::TypeSubst) -> Expr {
    use crate::types::{subst_arg, subst_type};
    use ExprKind::*;
    let kind = match e.kind() {
        Var(_) | Prim(_) | Foreign(_) => e.kind().clone(),
        Lit(crate::expr::Literal::Nat(n)) => Lit(Literal::Nat(crate::types::subst_nat(n, s))),
        Lit(_) => e.kind().clone(),
        Lambda(x, t, b) => Lambda(
            x.clone(),
            t.as_ref().map(|t| subst_type(t, s)),
            map_types(b, s),
        ),
        App(f, a) => App(map_types(f, s), map_types(a, s)),
        DepLambda(x, b) => {
            let inner = crate::types::Shadow::new(s, &x.name);
            DepLambda(x.clone(), map_types(b, &inner))
        }
        DepApp(f, a) => DepApp(map_types(f, s), subst_arg(a, s)),
        Annot(b, t) => Annot(map_types(b, s), subst_type(t, s)),
    };
    let ty = e.ty().map(|t| subst_type(t, s));
    node(kind, ty, e.span())
}

fn free_vars(e: &Expr, bound: &mut Vec<Name>, out: &mut Vec<Name>) {
    use ExprKind::*;
    match e.kind() {
        Var(x) => {
            if !bound.contains(x) && !out.contains(x) {
                out.push(x.clone());
            }
        }
        Lit(_) | Prim(_) | Foreign(_) => {}
        Lambda(x, _, b) => {
            bound.push(x.clone());
            free_vars(b, bound, out);
            bound.pop();
        }
        App(f, a) => {
            free_vars(f, bound, out);
            free_vars(a, bound, out);
        }
        DepLambda(_, b) | DepApp(b, _) | Annot(b, _) => free_vars(b, bound, out),
    }
}

impl PartialEq for Expr {
    /// Alpha-equivalence.
    fn eq(&self, other: &Expr) -> bool {
        self.ptr_eq(other) || self.alpha_eq(other)
    }
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.kind.fmt(f)
    }
}

/// Substitutes closed expressions for free value variables (capture cannot occur
/// because the substituted expressions are closed).
pub fn substitute_closed(e: &Expr, map: &HashMap<Name, Expr>) -> Expr {
    fn go(e: &Expr, map: &HashMap<Name, Expr>, bound: &mut Vec<Name>) -> Expr {
        use ExprKind::*;
        let kind = match e.kind() {
            Var(x) if !bound.contains(x) => match map.get(x) {
                Some(by) => return by.clone(),
                None => return e.clone(),
            },
            Var(_) | Lit(_) | Prim(_) | Foreign(_) => return e.clone(),
            Lambda(x, t, b) => {
                bound.push(x.clone());
                let b = go(b, map, bound);
                bound.pop();
                Lambda(x.clone(), t.clone(), b)
            }
            App(f, a) => App(go(f, map, bound), go(a, map, bound)),
            DepLambda(x, b) => DepLambda(x.clone(), go(b, map, bound)),
            DepApp(f, a) => DepApp(go(f, map, bound), a.clone()),
            Annot(b, t) => Annot(go(b, map, bound), t.clone()),
        };
        node(kind, e.ty().cloned(), e.span())
    }
    go(e, map, &mut Vec::new())
}

/// A source of fresh names, passed down explicitly (no global counter).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameGen {
    next: u64,
}

impl NameGen {
    /// A generator starting at 0.
    pub fn new() -> NameGen {
        NameGen::default()
    }

    /// A generator whose first name ends in `_next`.
    pub fn starting_at(next: u64) -> NameGen {
        NameGen { next }
    }

    /// A name `base` followed by a number that this generator has not handed out before.
    /// Generated names contain `_` followed by digits; keep user names free of that
    /// pattern, or use a base that cannot clash (inference uses `?`).
    pub fn fresh(&mut self, base: &str) -> Name {
        let n = self.next;
        self.next += 1;
        format!("{base}_{n}").into()
    }
}

/// A top-level definition `def name [: type] = body`.
#[derive(Clone, Debug)]
pub struct Def {
    /// Its name.
    pub name: Name,
    /// The declared type, if any.
    pub annot: Option<Type>,
    /// The body.
    pub body: Expr,
    /// The span of the whole definition.
    pub span: Span,
    /// The span of the name.
    pub name_span: Span,
}

/// A parsed program: definitions in source order.
#[derive(Clone, Debug, Default)]
pub struct Program {
    /// The definitions.
    pub defs: Vec<Def>,
    /// The foreign functions declared (`foreign f (x: f32) : f32 { ... }`), in source order.
    pub foreign: Vec<Arc<ForeignFun>>,
    /// Warnings about the source (a definition that shadows a primitive), in source order.
    pub warnings: Vec<crate::span::Diagnostic>,
}

impl Program {
    /// The definition with this name (the last one, if defined twice).
    pub fn def(&self, name: &str) -> Option<&Def> {
        self.defs.iter().rev().find(|d| &*d.name == name)
    }
}
