//! Which binders keep their names: those that read back as themselves, and the names a fresh
//! one must avoid.

use super::atoms::type_arg;
use crate::expr::{Expr, ExprKind, Literal};
use crate::primitives::{Prim, DIMENSIONED};
use crate::syntax::lexer::{lex, Token};
use std::collections::HashSet;

/// Whether `x` reads back as one identifier (not a keyword, not a number).
pub(super) fn is_identifier(x: &str) -> bool {
    matches!(lex(x).as_deref(), Ok([(Token::Ident(_), _)]))
}

/// Whether `p` is written `x` (`map`), or `x(...)` for the dimensioned names (`mapGlobal`).
fn is_written(p: Prim, x: &str) -> bool {
    let name = p.name();
    name == x
        || (DIMENSIONED.contains(&x) && name.strip_prefix(x).is_some_and(|r| r.starts_with('(')))
}

/// Whether some primitive is written `x` (a binder of that name may capture it).
pub(super) fn names_a_prim(x: &str) -> bool {
    Prim::ALL.iter().any(|&p| is_written(p, x))
}

/// The names of the foreign functions a term calls.
pub(super) fn foreign_names(e: &Expr) -> HashSet<String> {
    fn go(e: &Expr, out: &mut HashSet<String>) {
        match e.kind() {
            ExprKind::Foreign(f) => {
                out.insert(f.name.to_string());
            }
            ExprKind::Prim(_) | ExprKind::Var(_) | ExprKind::Lit(_) => {}
            ExprKind::App(f, a) => {
                go(f, out);
                go(a, out);
            }
            ExprKind::Lambda(_, _, b)
            | ExprKind::DepLambda(_, b)
            | ExprKind::DepApp(b, _)
            | ExprKind::Annot(b, _) => go(b, out),
        }
    }
    let mut out = HashSet::new();
    go(e, &mut out);
    out
}

/// Whether a binder named `x` would capture a primitive or a foreign function used in
/// `body` (`fun map => map f` reads `map` as the variable). Walks `body`: ask only for a
/// name that [`names_a_prim`] or names a foreign function of the term.
pub(super) fn shadows_used_prim(x: &str, body: &Expr) -> bool {
    let is_named_x = |p: Prim| is_written(p, x);
    fn uses(e: &Expr, x: &str, is_named_x: &dyn Fn(Prim) -> bool) -> bool {
        match e.kind() {
            ExprKind::Prim(p) => is_named_x(*p),
            ExprKind::Foreign(f) => &*f.name == x,
            ExprKind::Var(_) | ExprKind::Lit(_) => false,
            ExprKind::App(f, a) => uses(f, x, is_named_x) || uses(a, x, is_named_x),
            ExprKind::Lambda(_, _, b)
            | ExprKind::DepLambda(_, b)
            | ExprKind::DepApp(b, _)
            | ExprKind::Annot(b, _) => uses(b, x, is_named_x),
        }
    }
    uses(body, x, &is_named_x)
}

/// Every identifier in a term, its types included.
pub(super) fn names_of(e: &Expr) -> HashSet<String> {
    fn idents_of(text: &str, out: &mut HashSet<String>) {
        if let Ok(tokens) = lex(text) {
            for (t, _) in tokens {
                if let Token::Ident(s) = t {
                    out.insert(s);
                }
            }
        }
    }
    fn go(e: &Expr, out: &mut HashSet<String>) {
        match e.kind() {
            ExprKind::Var(x) => {
                out.insert(x.to_string());
            }
            ExprKind::Lit(Literal::Nat(n)) => idents_of(&n.to_string(), out),
            ExprKind::Foreign(f) => {
                out.insert(f.name.to_string());
            }
            ExprKind::Lit(_) | ExprKind::Prim(_) => {}
            ExprKind::Lambda(x, t, b) => {
                out.insert(x.to_string());
                if let Some(t) = t {
                    idents_of(&t.to_string(), out);
                }
                go(b, out);
            }
            ExprKind::App(f, a) => {
                go(f, out);
                go(a, out);
            }
            ExprKind::DepLambda(x, b) => {
                out.insert(x.name.to_string());
                go(b, out);
            }
            ExprKind::DepApp(f, arg) => {
                idents_of(&type_arg(arg), out);
                go(f, out);
            }
            ExprKind::Annot(b, t) => {
                idents_of(&t.to_string(), out);
                go(b, out);
            }
        }
    }
    let mut out = HashSet::new();
    go(e, &mut out);
    out
}
