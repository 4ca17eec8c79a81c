//! Matching and building RISE terms inside rules.
//!
//! Rules match typed terms and build their right-hand side as a template: new
//! nodes without types around typed pieces of the match. [`finish`] types the
//! new nodes locally ([`rise::infer::type_local`]) against the type of the
//! expression being replaced, so a rule can never change the type of a program.

use elevate::{Failure, RewriteResult};
use rise::types::Name;
use rise::{Expr, ExprKind, NameGen, Prim, Type, TypeArg};

/// `e` viewed as a primitive applied to type-level and value arguments.
pub struct PrimApp<'a> {
    /// The primitive at the head.
    pub prim: Prim,
    /// Its type-level arguments, in order.
    pub type_args: Vec<&'a TypeArg>,
    /// Its value arguments, in order.
    pub args: Vec<&'a Expr>,
}

/// `e` as a primitive application, if its head is a primitive.
pub fn prim_app(e: &Expr) -> Option<PrimApp<'_>> {
    let (head, spine) = e.spine();
    let prim = head.as_prim()?;
    let mut type_args = Vec::new();
    let mut args = Vec::new();
    for a in spine {
        match a {
            rise::expr::Arg::Value(v) => args.push(v),
            rise::expr::Arg::Type(t) => type_args.push(t),
        }
    }
    Some(PrimApp {
        prim,
        type_args,
        args,
    })
}

/// The value arguments of `e` if it is `p` applied to exactly `n` of them.
pub fn applied(e: &Expr, p: impl Fn(Prim) -> bool, n: usize) -> Option<(Prim, Vec<&Expr>)> {
    let a = prim_app(e)?;
    (p(a.prim) && a.args.len() == n).then_some((a.prim, a.args))
}

/// Whether the primitive is `map` or one of its lowered forms.
pub fn any_map(p: Prim) -> bool {
    p.is_map()
}

/// Whether the primitive is `reduce`, `reduceSeq` or `reduceSeqUnroll`.
pub fn any_reduce(p: Prim) -> bool {
    p.is_reduce()
}

/// `fun x => body`, if `e` is a lambda.
pub fn as_lambda(e: &Expr) -> Option<(&rise::types::Name, &Expr)> {
    match e.kind() {
        ExprKind::Lambda(x, _, b) => Some((x, b)),
        _ => None,
    }
}

/// Whether the variable `x` occurs free in `e`.
pub fn occurs(x: &str, e: &Expr) -> bool {
    match e.kind() {
        ExprKind::Var(y) => &**y == x,
        ExprKind::Lit(_) | ExprKind::Prim(_) | ExprKind::Foreign(_) => false,
        ExprKind::Lambda(y, _, b) => &**y != x && occurs(x, b),
        ExprKind::App(f, a) => occurs(x, f) || occurs(x, a),
        ExprKind::DepLambda(_, b) | ExprKind::DepApp(b, _) | ExprKind::Annot(b, _) => occurs(x, b),
    }
}

/// Whether `e` is the variable `x`.
pub fn is_var(e: &Expr, x: &str) -> bool {
    matches!(e.kind(), ExprKind::Var(y) if &**y == x)
}

/// An accumulating step `fun acc y => acc + t` (or `t + acc`): the names of the accumulator
/// and the element, and the term `t` it adds (in which `acc` may still occur).
pub fn accumulated_term(op: &Expr) -> Option<(&str, &str, &Expr)> {
    let (acc, inner) = as_lambda(op)?;
    let (y, body) = as_lambda(inner)?;
    let (_, terms) = applied(body, |p| p == Prim::Add, 2)?;
    let term = match (is_var(terms[0], acc), is_var(terms[1], acc)) {
        (true, false) => terms[1],
        (false, true) => terms[0],
        _ => return None,
    };
    (acc != y).then_some((acc, y, term))
}

/// The function a `map`'s argument denotes, as a term applicable to anything:
/// `f` itself, or `g` when it is `fun x => g x` with `x` not free in `g`.
pub fn eta_reduced(f: &Expr) -> &Expr {
    if let Some((x, body)) = as_lambda(f) {
        if let ExprKind::App(g, a) = body.kind() {
            if is_var(a, x) && !occurs(x, g) {
                return eta_reduced(g);
            }
        }
    }
    f
}

/// `map f` (possibly η-expanded to `fun x => map f x`): the map primitive and `f`.
pub fn map_of(g: &Expr) -> Option<(Prim, Expr)> {
    let (p, args) = applied(eta_reduced(g), any_map, 1)?;
    Some((p, args[0].clone()))
}

/// A primitive applied only to type-level arguments, rebuilt without types: its
/// implicit sizes are instantiated again where the rule puts it.
pub fn untyped_prim_head(head: &Expr) -> Option<Expr> {
    let a = prim_app(head)?;
    Some(
        a.type_args
            .iter()
            .fold(rise::builder::prim(a.prim), |e, t| {
                rise::builder::dep_app(e, (*t).clone())
            }),
    )
}

/// The constant value of a nat type-level argument.
pub fn const_nat(t: &TypeArg) -> Option<i64> {
    match t {
        TypeArg::Nat(n) => n.as_cst(),
        _ => None,
    }
}

/// Types the template `rhs` against the type of `original` (see module docs);
/// a template that does not type-check means the rule does not apply.
pub fn finish(rhs: Expr, original: &Expr) -> RewriteResult<Expr> {
    rise::infer::type_local(&rhs, original.ty()).map_err(|_| Failure::not_applicable())
}

/// The element type and length of an array type.
pub fn array(t: &Type) -> Option<(&arith::Nat, &rise::DataType)> {
    match t {
        Type::Data(rise::DataType::Array(n, d)) => Some((n, d)),
        _ => None,
    }
}

/// `e` prepared to sit under a new binder for `x`: the nodes that mention `x`
/// (or a variable bound inside such a node) lose their types, so that they are
/// typed again in the new context; the rest keeps its types. Used where a rule
/// rebuilds a lambda around a piece of the match, as `mapFission` does.
pub fn retype_under(x: &str, e: &Expr) -> Expr {
    strip(e, &mut vec![x.to_string()])
}

/// A lambda typed again from scratch (its parameter type may change, as in
/// `vectorize`); free variables bound outside keep their types.
pub fn retype_lambda(f: &Expr) -> Option<Expr> {
    let (x, body) = as_lambda(f)?;
    Some(Expr::new(
        ExprKind::Lambda(x.clone(), None, retype_under(x, body)),
        f.span(),
    ))
}

fn strip(e: &Expr, vars: &mut Vec<String>) -> Expr {
    use ExprKind::*;
    if !vars.iter().any(|v| occurs(v, e)) {
        return e.clone();
    }
    let kind = match e.kind() {
        Var(_) | Lit(_) | Prim(_) | Foreign(_) => e.kind().clone(),
        Lambda(x, _, b) => {
            vars.push(x.to_string());
            let b = strip(b, vars);
            vars.pop();
            Lambda(x.clone(), None, b)
        }
        App(f, a) => App(strip_head(f, vars), strip(a, vars)),
        DepLambda(x, b) => DepLambda(x.clone(), strip(b, vars)),
        DepApp(f, a) => DepApp(strip_head(f, vars), a.clone()),
        Annot(b, t) => Annot(strip(b, vars), t.clone()),
    };
    Expr::new(kind, e.span())
}

/// The function of a re-typed application: a primitive at its head is
/// instantiated again (`add` may now add vectors), whatever it is applied to.
fn strip_head(f: &Expr, vars: &mut Vec<String>) -> Expr {
    use ExprKind::*;
    let kind = match f.kind() {
        Prim(_) => f.kind().clone(),
        App(g, a) => App(strip_head(g, vars), strip(a, vars)),
        DepApp(g, a) => DepApp(strip_head(g, vars), a.clone()),
        _ => return strip(f, vars),
    };
    Expr::new(kind, f.span())
}

/// The failure of a rule that does not match.
pub fn no<T>() -> Result<T, Failure<Expr>> {
    Err(Failure::not_applicable())
}

/// `b[a/x]`, renaming binders of `b` that would capture free variables of `a`.
pub fn substitute(b: &Expr, x: &Name, a: &Expr, names: &mut NameGen) -> Expr {
    let free = a.free_vars();
    subst(b, x, a, &free, names)
}

fn subst(e: &Expr, x: &Name, a: &Expr, free: &[Name], names: &mut NameGen) -> Expr {
    use ExprKind::*;
    let kind = match e.kind() {
        Var(y) if y == x => return a.clone(),
        Var(_) | Lit(_) | Prim(_) | Foreign(_) => return e.clone(),
        Lambda(y, _, _) if y == x => return e.clone(),
        Lambda(y, t, body) => {
            if !occurs(x, body) {
                return e.clone();
            }
            if free.contains(y) {
                let fresh = names.fresh(y);
                let var = Expr::typed(
                    Var(fresh.clone()),
                    param_type(e).unwrap_or_else(|| Type::Var("?".into())),
                    e.span(),
                );
                let renamed = subst(body, y, &var, &[], names);
                Lambda(fresh, t.clone(), subst(&renamed, x, a, free, names))
            } else {
                Lambda(y.clone(), t.clone(), subst(body, x, a, free, names))
            }
        }
        App(f, arg) => App(subst(f, x, a, free, names), subst(arg, x, a, free, names)),
        DepLambda(b, body) => DepLambda(b.clone(), subst(body, x, a, free, names)),
        DepApp(f, arg) => DepApp(subst(f, x, a, free, names), arg.clone()),
        Annot(body, t) => Annot(subst(body, x, a, free, names), t.clone()),
    };
    e.rebuild(kind)
}

fn param_type(lam: &Expr) -> Option<Type> {
    match lam.ty() {
        Some(Type::Fun(p, _)) => Some((**p).clone()),
        _ => None,
    }
}
