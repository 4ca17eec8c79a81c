//! The shape a node prints in: infix, pair, prefix operator, pipe chain or application, and
//! what decides it (which applications are processing stages, which primitives are partial).

use super::{ADD, AND, APP, BIT_AND, BIT_OR, BIT_XOR, CMP, EQ, MUL, OR, PIPE, SHIFT, TOP};
use crate::expr::{Arg, Expr, ExprKind, Literal};
use crate::primitives::Prim;
use crate::types::Type;

/// The printed shape of an expression node.
pub(super) enum Form<'a> {
    /// `a op b`
    Infix(&'static str, u8, &'a Expr, &'a Expr),
    /// `(a, b)`
    Pair(&'a Expr, &'a Expr),
    /// `-x`, `!x`, `~x`
    Unary(&'static str, &'a Expr),
    /// `a |> f`
    Pipe(&'a Expr, &'a Expr),
    /// `f a`
    App(&'a Expr, &'a Expr),
    /// Anything else.
    Other,
}

fn infix(p: Prim) -> Option<(&'static str, u8)> {
    Some(match p {
        Prim::Add => ("+", ADD),
        Prim::Sub => ("-", ADD),
        Prim::Mul => ("*", MUL),
        Prim::Div => ("/", MUL),
        Prim::Mod => ("%", MUL),
        Prim::Lt => ("<", CMP),
        Prim::Gt => (">", CMP),
        Prim::Le => ("<=", CMP),
        Prim::Ge => (">=", CMP),
        Prim::Equal => ("==", EQ),
        Prim::NotEqual => ("!=", EQ),
        Prim::Shl => ("<<", SHIFT),
        Prim::Shr => (">>", SHIFT),
        Prim::BitAnd => ("&", BIT_AND),
        Prim::BitXor => ("^", BIT_XOR),
        Prim::BitOr => ("|", BIT_OR),
        Prim::And => ("&&", AND),
        Prim::Or => ("||", OR),
        _ => return None,
    })
}

pub(super) fn form(e: &Expr) -> Form<'_> {
    let ExprKind::App(f, a) = e.kind() else {
        return Form::Other;
    };
    if let ExprKind::App(g, x) = f.kind() {
        match g.as_prim() {
            Some(Prim::MakePair) => return Form::Pair(x, a),
            Some(p) => {
                if let Some((op, prec)) = infix(p) {
                    return Form::Infix(op, prec, x, a);
                }
            }
            None => {}
        }
    }
    match f.as_prim() {
        Some(Prim::Neg) if !starts_with_number(a) => return Form::Unary("-", a),
        Some(Prim::Not) => return Form::Unary("!", a),
        Some(Prim::BitNot) => return Form::Unary("~", a),
        _ => {}
    }
    if is_pipe(f, a) {
        Form::Pipe(a, f)
    } else {
        Form::App(f, a)
    }
}

/// `f a` has the pipe form `a |> f` when `a` is data computed by an application
/// and `f` is a processing stage (`split 32 xs |> map f`) or a lambda
/// (`g x |> fun y => ...`), or `f` is a plain function and `a` is a chain already
/// or a stage applied (`xs |> map f |> join`), or `a` is a variable and `f` a stage
/// with a lambda (`xs |> map (fun x => ...)`). Otherwise `f a`: `zip (fst p) (snd p)`,
/// `map (map f)`. Whether the pipe form is printed as such depends on the context
/// ([`use_pipe`]).
fn is_pipe(f: &Expr, a: &Expr) -> bool {
    if matches!(a.kind(), ExprKind::Var(_)) {
        // `xs |> map (fun x => ...)` rather than a variable after a long lambda.
        return is_stage(f) && has_lambda_arg(f) && !partial(f);
    }
    let a_form = form(a);
    if !matches!(a_form, Form::Pipe(..) | Form::App(..)) || is_function(a) || partial(f) {
        return false;
    }
    match f.kind() {
        ExprKind::Lambda(..) | ExprKind::DepLambda(..) => true,
        ExprKind::App(..) | ExprKind::DepApp(..) => is_stage(f),
        ExprKind::Prim(_) | ExprKind::Var(_) => match a_form {
            Form::Pipe(..) => true,
            Form::App(g, _) => is_stage(g),
            _ => false,
        },
        _ => false,
    }
}

/// Whether `f a` is still a function for lack of arguments (`idx i`, `zip xs`).
fn partial(f: &Expr) -> bool {
    let (head, args) = f.spine();
    match head.kind() {
        ExprKind::Prim(p) => args.len() + 1 < prim_params(*p).len(),
        _ => false,
    }
}

/// The stages of a chain `base |> f1 |> ... |> fn` (in order) and its base.
/// `map g xs |> f` is read as `xs |> map g |> f`.
pub(super) fn chain(e: &Expr) -> (&Expr, Vec<&Expr>) {
    let mut stages = Vec::new();
    let mut cur = e;
    while let Form::Pipe(a, f) = form(cur) {
        stages.push(f);
        cur = a;
    }
    if let Form::App(f, a) = form(cur) {
        if matches!(a.kind(), ExprKind::Var(_)) && is_stage(f) {
            stages.push(f);
            cur = a;
        }
    }
    stages.reverse();
    (cur, stages)
}

/// Whether a term of the pipe form prints as a chain in a context of precedence
/// `min`: always where it needs no parentheses, never as a function (`(x |> f) y`),
/// and elsewhere only when a stage takes a lambda (`at 1 (at 0 nbh) + ...` stays
/// nested, `(xs |> map (fun x => ...) |> reduce add 0.0f) / n` is a chain).
pub(super) fn use_pipe(e: &Expr, min: u8) -> bool {
    match min {
        TOP | PIPE => true,
        APP => false,
        _ => chain(e).1.iter().any(|f| has_lambda_arg(f)),
    }
}

/// Whether some argument of the application `f` is a lambda.
fn has_lambda_arg(f: &Expr) -> bool {
    f.spine().1.iter().any(|a| {
        matches!(
            a,
            Arg::Value(v) if matches!(v.kind(), ExprKind::Lambda(..) | ExprKind::DepLambda(..))
        )
    })
}

/// What a primitive expects at a parameter position of the surface syntax.
#[derive(Clone, Copy, PartialEq)]
enum ParamKind {
    /// An explicit type-level parameter (`split 32`).
    TypeLevel,
    /// A function.
    Function,
    /// Data.
    Data,
}

/// The parameters of a primitive that its applications write, in order.
fn prim_params(p: Prim) -> Vec<ParamKind> {
    let mut out = Vec::new();
    let mut t = p.scheme();
    loop {
        match t {
            Type::DepFun { implicit, body, .. } => {
                if !implicit {
                    out.push(ParamKind::TypeLevel);
                }
                t = body;
            }
            Type::Fun(a, b) => {
                out.push(match **a {
                    Type::Fun(..) | Type::DepFun { .. } => ParamKind::Function,
                    _ => ParamKind::Data,
                });
                t = b;
            }
            _ => return out,
        }
    }
}

/// Whether `e` is a function: a primitive, a lambda, or a primitive applied to
/// fewer arguments than it takes.
fn is_function(e: &Expr) -> bool {
    let (head, args) = e.spine();
    match head.kind() {
        ExprKind::Prim(p) => args.len() < prim_params(*p).len(),
        ExprKind::Lambda(..) | ExprKind::DepLambda(..) => args.is_empty(),
        _ => false,
    }
}

/// Whether `f` is a processing stage: a partial application whose arguments are
/// parameters (functions, literals, type-level values) rather than data:
/// `map g`, `padClamp 1 1`, `reduce add 0.0f`, `split n`, but not `zip xs`.
fn is_stage(f: &Expr) -> bool {
    let (head, args) = f.spine();
    let params = match head.kind() {
        ExprKind::Prim(p) => prim_params(*p),
        _ => Vec::new(),
    };
    if args.is_empty() || (!params.is_empty() && args.len() >= params.len()) {
        return false;
    }
    args.iter().enumerate().all(|(i, arg)| match arg {
        Arg::Type(_) => true,
        Arg::Value(v) => {
            matches!(
                params.get(i),
                Some(ParamKind::TypeLevel | ParamKind::Function)
            ) || matches!(v.kind(), ExprKind::Lit(_))
                || is_function(v)
        }
    })
}

/// Whether the text of `e` printed as an application starts with a digit (then `-e`
/// would read back as a negative literal).
fn starts_with_number(e: &Expr) -> bool {
    match e.kind() {
        ExprKind::Lit(Literal::Int(v, _)) => *v >= 0,
        ExprKind::Lit(Literal::Float(v, _)) => !v.is_sign_negative(),
        ExprKind::DepApp(f, _) => starts_with_number(f),
        // As an operand of `-`, pipe forms print as applications too.
        ExprKind::App(f, _) => {
            matches!(form(e), Form::App(..) | Form::Pipe(..)) && starts_with_number(f)
        }
        _ => false,
    }
}

/// Whether `f` is typed as a function of an implicit type-level parameter (then
/// `DepApp(f, arg)` was inserted by inference and `arg` is not written).
pub(super) fn is_implicit(f: &Expr) -> bool {
    matches!(f.ty(), Some(Type::DepFun { implicit: true, .. }))
}
