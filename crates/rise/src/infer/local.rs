//! Typing for rewriting: types are computed only for what a rewrite builds.
//!
//! A rewrite rule assembles its right-hand side from pieces of the matched,
//! already typed program (ICFP'20 §4.3) plus new nodes without types. Instead of
//! inferring the whole program again after every step (ARCHITECTURE.md, rule 5),
//! [`type_local`] elaborates only the new nodes: a typed node is taken as it is,
//! the untyped ones around it are inferred, and the result is checked against the
//! type of the expression it replaces.
//!
//! [`prepare_def`] gives the starting point: a definition with everything it uses
//! inlined, typed, with its sizes as type variables (`m n k` of `mm`).

use super::elaborate::Elaborator;
use super::{check_def, inline_globals, report_stuck, unify};
use crate::expr::{Def, Expr, ExprKind};
use crate::span::{Diagnostic, Span};
use crate::types::*;
use std::collections::{HashMap, HashSet};

/// Types the untyped nodes of `e`, taking typed nodes as they are (a typed node's
/// descendants must be typed too). With `expected`, the result must have that type.
/// Fails if a type cannot be determined or does not fit: for a rewrite rule,
/// that means the rule does not apply (or is wrong).
pub fn type_local(e: &Expr, expected: Option<&Type>) -> Result<Expr, Diagnostic> {
    if e.ty().is_some() {
        return match expected {
            Some(t) if !same_type(t, e.ty().expect("typed")) => Err(Diagnostic::new(
                e.span(),
                format!(
                    "the rewritten expression has type `{}`, not `{t}`",
                    e.ty().expect("typed")
                ),
            )),
            _ => Ok(e.clone()),
        };
    }
    let globals = HashMap::new();
    let mut el = Elaborator::new(&globals);
    el.keep_typed = true;
    let typed = match expected {
        Some(t) => el.check(e, t)?,
        None => el.infer(e)?,
    };
    el.u.solve_deferred()?;
    report_stuck(&el)?;
    let mut open = None;
    let out = zonk_new(&el, &typed, &mut open);
    match open {
        Some((span, t)) => Err(Diagnostic::new(
            span,
            format!("cannot determine the type `{t}` of a rewritten expression"),
        )),
        None => Ok(out),
    }
}

/// Whether two types are equal up to the names of bound variables.
fn same_type(a: &Type, b: &Type) -> bool {
    a == b || {
        let mut u = unify::Unifier::default();
        u.unify(a, b, Span::default()).is_ok() && u.metas.is_empty()
    }
}

/// Applies the solutions to the nodes inference created, leaving the typed
/// pieces it was given untouched (they contain no metavariables). Records the
/// first node whose type is still open.
fn zonk_new(el: &Elaborator, e: &Expr, open: &mut Option<(Span, Type)>) -> Expr {
    if el.kept.contains(&e.addr()) {
        return e.clone();
    }
    use ExprKind::*;
    let z = |c: &Expr, open: &mut Option<(Span, Type)>| zonk_new(el, c, open);
    let kind = match e.kind() {
        Var(_) | Lit(_) | Prim(_) | Foreign(_) => e.kind().clone(),
        Lambda(x, t, b) => Lambda(x.clone(), t.as_ref().map(|t| el.u.zonk(t)), z(b, open)),
        App(f, a) => {
            let f = z(f, open);
            App(f, z(a, open))
        }
        DepLambda(x, b) => DepLambda(x.clone(), z(b, open)),
        DepApp(f, a) => DepApp(z(f, open), subst_arg(a, &el.u)),
        Annot(b, t) => Annot(z(b, open), el.u.zonk(t)),
    };
    let ty = el.u.zonk(e.ty().expect("inferred"));
    if open.is_none() {
        let mut has_meta = false;
        unify::collect_type(&ty, &mut |n, _| has_meta |= el.u.is_meta(n));
        if has_meta {
            *open = Some((e.span(), ty.clone()));
        }
    }
    Expr::typed(kind, ty, e.span())
}

/// A definition ready for rewriting.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The body with every definition it uses inlined; every node typed. Its
    /// types mention the definition's implicit parameters by name.
    pub body: Expr,
    /// The definition's type scheme (`{m n k: nat} -> m.k.f32 -> ...`).
    pub scheme: Type,
}

/// The definition `name` of a checked program, prepared for rewriting: other
/// definitions inlined, type ascriptions dropped, type-level redexes reduced.
pub fn prepare_def(program: &super::CheckedProgram, name: &str) -> Result<Prepared, Diagnostic> {
    crate::stack::on_big_stack(
        "type checking",
        || prepare_here(program, name),
        super::internal_error,
    )
}

fn prepare_here(program: &super::CheckedProgram, name: &str) -> Result<Prepared, Diagnostic> {
    let Some(def) = program.def(name) else {
        return Err(super::no_definition(program, name));
    };
    let (closed, annot) = inline_globals(program, name)?;
    let inlined = Def {
        name: def.name.clone(),
        annot,
        body: closed,
        span: Span::default(),
        name_span: Span::default(),
    };
    // The program was checked as written; its size constraints are not re-derived here.
    let (scheme, body, _) = check_def(&inlined, &HashMap::new())?;
    Ok(Prepared {
        body: simplify_for_rewriting(&body),
        scheme,
    })
}

/// Drops type ascriptions and reduces `DepApp(DepLambda(x, b), a)` to `b[a/x]`.
fn simplify_for_rewriting(e: &Expr) -> Expr {
    use ExprKind::*;
    let kind = match e.kind() {
        Annot(inner, _) => return simplify_for_rewriting(inner),
        DepApp(f, a) => {
            let f = simplify_for_rewriting(f);
            if let DepLambda(b, body) = f.kind() {
                let (name, arg) = (b.name.clone(), a.clone());
                let s = move |n: &str, _k: Kind| (n == &*name).then(|| arg.clone());
                return crate::expr::map_types(body, &s);
            }
            DepApp(f, a.clone())
        }
        Var(_) | Lit(_) | Prim(_) | Foreign(_) => return e.clone(),
        Lambda(x, t, b) => Lambda(x.clone(), t.clone(), simplify_for_rewriting(b)),
        App(f, a) => App(simplify_for_rewriting(f), simplify_for_rewriting(a)),
        DepLambda(x, b) => DepLambda(x.clone(), simplify_for_rewriting(b)),
    };
    Expr::typed(kind, e.ty().expect("typed").clone(), e.span())
}

/// The pointers of the typed nodes an elaboration kept as they were.
pub(crate) type Kept = HashSet<usize>;
