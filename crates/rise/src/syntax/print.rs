//! Printing expressions and programs in the surface syntax (DESIGN.md, "Surface syntax").
//!
//! The output parses back ([`super::parse_expr`]) to an alpha-equivalent term,
//! with minimal parentheses: fully applied infix primitives print infix
//! (`add a b` as `a + b`), `makePair a b` as `(a, b)`, `neg x` as `-x`, `not b`
//! as `!b`, and data-flow chains with `|>` (`map g (map f (split 32 xs))` as
//! `split 32 xs |> map f |> map g`). Consecutive lambdas merge into one `fun`.
//! Chains longer than a line break before each `|>`, indented by two.
//!
//! Binders whose names cannot be read back (not identifiers, keywords, or names
//! of primitives that the binder would hide from its body) are renamed to fresh
//! names.
//!
//! Some terms have no surface syntax of their own and print as their closest
//! source form, which the type checker — not the parser — turns back into them:
//! * implicit type-level arguments (a `DepApp` whose function is typed
//!   `{x: k} -> ...`, as inference inserts them) are not printed;
//! * a dependent application `DepApp(f, n)` prints as `f n` (`f (n*32)`), which
//!   parses as a value application; address spaces print by name, `nat -> nat`
//!   functions as `(fun x => body)`; a data-type argument prints as `(t)`, which
//!   is generally not an expression at all (types cannot be passed explicitly in
//!   the surface syntax);
//! * a `natType` literal prints as `(n : natType)`;
//! * non-finite floats print as divisions (`(1.0f / 0.0f)`), and an integer
//!   literal of a non-integer type as a literal of that type;
//! * a free variable named like a primitive reads back as the primitive.

use super::lexer::{lex, Token};
use crate::expr::{rename_type_var, Arg, Expr, ExprKind, Literal, Program};
use crate::primitives::{Prim, DIMENSIONED};
use crate::types::{AtomicNat, Kind, Name, NatToData, NatToNat, ScalarType, Type, TypeArg};
use std::collections::HashSet;
use std::fmt;

/// Lines longer than this are broken at `|>`.
const WIDTH: usize = 100;

// Precedence levels of printed text, loosest first.
const TOP: u8 = 0; // `fun ... => ...`
const PIPE: u8 = 1; // `|>`
const CMP: u8 = 3; // `<` `>` `==`   (2 is `>>`, which is never printed)
const ADD: u8 = 4; // `+` `-`
const MUL: u8 = 5; // `*` `/` `%`
const UNARY: u8 = 6; // `-x` `!x`, negative literals
const APP: u8 = 7; // `f x`
const ATOM: u8 = 8; // names, literals, parenthesised forms

/// Prints an expression in the surface syntax.
pub fn print_expr(e: &Expr) -> String {
    Printer::new(e).expr(e, TOP, 0)
}

/// Prints a program: one definition per paragraph, ending with a newline.
pub fn print_program(p: &Program) -> String {
    let mut out = String::new();
    for (i, def) in p.defs.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let head = match &def.annot {
            Some(t) => format!("def {} : {t}", def.name),
            None => format!("def {}", def.name),
        };
        let mut printer = Printer::new(&def.body);
        let flat = printer.expr(&def.body, TOP, 0);
        if def.annot.is_none() && !flat.contains('\n') && head.len() + 3 + flat.len() <= WIDTH {
            out.push_str(&format!("{head} = {flat}\n"));
        } else {
            let body = Printer::new(&def.body).expr(&def.body, TOP, 2);
            out.push_str(&format!("{head} =\n  {body}\n"));
        }
    }
    out
}

impl fmt::Display for Expr {
    /// The surface syntax ([`print_expr`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print_expr(self))
    }
}

/// The printed shape of an expression node.
enum Form<'a> {
    /// `a op b`
    Infix(&'static str, u8, &'a Expr, &'a Expr),
    /// `(a, b)`
    Pair(&'a Expr, &'a Expr),
    /// `-x`, `!x`
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
        Prim::Equal => ("==", CMP),
        _ => return None,
    })
}

fn form(e: &Expr) -> Form<'_> {
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
fn chain(e: &Expr) -> (&Expr, Vec<&Expr>) {
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
fn use_pipe(e: &Expr, min: u8) -> bool {
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
fn is_implicit(f: &Expr) -> bool {
    matches!(f.ty(), Some(Type::DepFun { implicit: true, .. }))
}

/// A binder of a merged `fun`.
enum Param {
    Value(Name, Option<Type>),
    Dep(Name, Kind),
}

/// Printing state: the names binders print as.
struct Printer {
    /// (name in the term, printed name), innermost last.
    env: Vec<(Name, Name)>,
    /// Every name of the term, computed when a binder must be renamed.
    taken: Option<HashSet<String>>,
    /// The term being printed (to compute `taken`).
    root: Expr,
    /// Counter for fresh names.
    next: usize,
}

impl Printer {
    fn new(root: &Expr) -> Printer {
        Printer {
            env: Vec::new(),
            taken: None,
            root: root.clone(),
            next: 0,
        }
    }

    /// `e` printed so that it reads back in a context of precedence `min`.
    fn expr(&mut self, e: &Expr, min: u8, indent: usize) -> String {
        let (s, prec) = self.render(e, min, indent);
        if prec < min {
            format!("({s})")
        } else {
            s
        }
    }

    fn render(&mut self, e: &Expr, min: u8, indent: usize) -> (String, u8) {
        match form(e) {
            Form::Infix(op, prec, a, b) => {
                let a = self.expr(a, prec, indent);
                let b = self.expr(b, prec + 1, indent);
                (format!("{a} {op} {b}"), prec)
            }
            Form::Pair(a, b) => {
                let a = self.expr(a, TOP, indent);
                let b = self.expr(b, TOP, indent);
                (format!("({a}, {b})"), ATOM)
            }
            Form::Unary(op, a) => (format!("{op}{}", self.expr(a, APP, indent)), UNARY),
            Form::Pipe(..) if use_pipe(e, min) => (self.pipe_chain(e, indent), PIPE),
            Form::Pipe(a, f) | Form::App(f, a) => {
                let f = self.expr(f, APP, indent);
                let a = self.expr(a, ATOM, indent);
                (format!("{f} {a}"), APP)
            }
            Form::Other => self.render_node(e, indent),
        }
    }

    /// `base |> f1 |> f2 ...`, broken before each `|>` when too long.
    fn pipe_chain(&mut self, e: &Expr, indent: usize) -> String {
        let (base, stages) = chain(e);
        let base = self.expr(base, PIPE, indent);
        let stages: Vec<String> = stages
            .into_iter()
            .map(|f| self.expr(f, PIPE + 1, indent + 2))
            .collect();
        let flat_len = base.len() + stages.iter().map(|s| s.len() + 4).sum::<usize>();
        let multiline = base.contains('\n') || stages.iter().any(|s| s.contains('\n'));
        let sep = if multiline || indent + flat_len > WIDTH {
            format!("\n{}|> ", " ".repeat(indent + 2))
        } else {
            " |> ".to_string()
        };
        let mut out = base;
        for s in stages {
            out.push_str(&sep);
            out.push_str(&s);
        }
        out
    }

    fn render_node(&mut self, e: &Expr, indent: usize) -> (String, u8) {
        match e.kind() {
            ExprKind::Var(x) => (self.lookup(x), ATOM),
            ExprKind::Lit(l) => literal(l),
            ExprKind::Prim(p) => (p.name().to_string(), ATOM),
            ExprKind::Lambda(..) | ExprKind::DepLambda(..) => (self.lambda(e, indent), TOP),
            ExprKind::Annot(b, t) => (format!("({} : {t})", self.expr(b, TOP, indent)), ATOM),
            // Implicit arguments inserted by type inference are not written.
            ExprKind::DepApp(f, _) if is_implicit(f) => self.render(f, APP, indent),
            ExprKind::DepApp(f, arg) => {
                let f = self.expr(f, APP, indent);
                (format!("{f} {}", type_arg(arg)), APP)
            }
            // Applications are handled by `render`.
            ExprKind::App(f, a) => {
                let f = self.expr(f, APP, indent);
                let a = self.expr(a, ATOM, indent);
                (format!("{f} {a}"), APP)
            }
        }
    }

    /// `fun x (y: t) (n: nat) => body`, merging nested lambdas.
    fn lambda(&mut self, e: &Expr, indent: usize) -> String {
        let scope = self.env.len();
        let mut params = Vec::new();
        let mut cur = e.clone();
        loop {
            match cur.kind() {
                ExprKind::Lambda(x, t, body) => {
                    let printed = self.bind(x, body);
                    params.push(Param::Value(printed, t.clone()));
                    cur = body.clone();
                }
                ExprKind::DepLambda(b, body) => {
                    let printed = self.bind(&b.name, body);
                    let body = if printed == b.name {
                        body.clone()
                    } else {
                        rename_type_var(body, &b.name, &printed, b.kind)
                    };
                    params.push(Param::Dep(printed, b.kind));
                    cur = body;
                }
                _ => break,
            }
        }
        let body = self.expr(&cur, TOP, indent);
        self.env.truncate(scope);
        let mut out = String::from("fun");
        let mut i = 0;
        while let Some(p) = params.get(i) {
            // Group consecutive parameters with the same annotation: `(a b: data)`.
            let mut j = i + 1;
            while params.get(j).is_some_and(|q| same_annotation(p, q)) {
                j += 1;
            }
            let names: Vec<&str> = params[i..j]
                .iter()
                .map(|q| match q {
                    Param::Value(n, _) | Param::Dep(n, _) => &**n,
                })
                .collect();
            match p {
                Param::Value(_, None) => out.push_str(&format!(" {}", names.join(" "))),
                Param::Value(_, Some(t)) => out.push_str(&format!(" ({}: {t})", names.join(" "))),
                Param::Dep(_, k) => out.push_str(&format!(" ({}: {k})", names.join(" "))),
            }
            i = j;
        }
        // A long body that is not a broken chain goes on a line of its own.
        if !body.contains('\n') && indent + out.len() + 4 + body.len() > WIDTH {
            format!("{out} =>\n{}{body}", " ".repeat(indent + 2))
        } else {
            format!("{out} => {body}")
        }
    }

    /// The printed name of a binder, entered into the scope.
    fn bind(&mut self, x: &Name, body: &Expr) -> Name {
        let printed = if is_identifier(x) && !shadows_used_prim(x, body) {
            x.clone()
        } else {
            self.fresh(x)
        };
        self.env.push((x.clone(), printed.clone()));
        printed
    }

    fn lookup(&self, x: &Name) -> String {
        self.env
            .iter()
            .rev()
            .find(|(n, _)| n == x)
            .map_or_else(|| x.to_string(), |(_, p)| p.to_string())
    }

    /// A readable name occurring nowhere in the term and not yet handed out.
    fn fresh(&mut self, like: &str) -> Name {
        let root = self.root.clone();
        let taken = self.taken.get_or_insert_with(|| names_of(&root));
        let base: String = like
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .skip_while(|c| c.is_ascii_digit() || *c == '_')
            .collect();
        let base = if base.is_empty() {
            "x".to_string()
        } else {
            base
        };
        loop {
            let name = format!("{base}_{}", self.next);
            self.next += 1;
            if is_identifier(&name)
                && Prim::from_name(&name).is_none()
                && taken.insert(name.clone())
            {
                return name.into();
            }
        }
    }
}

fn same_annotation(p: &Param, q: &Param) -> bool {
    match (p, q) {
        (Param::Value(_, Some(a)), Param::Value(_, Some(b))) => a == b,
        (Param::Dep(_, a), Param::Dep(_, b)) => a == b,
        _ => false,
    }
}

/// Whether a binder can keep its name: an identifier that is no keyword and no primitive.
/// Whether `x` reads back as one identifier (not a keyword, not a number).
fn is_identifier(x: &str) -> bool {
    matches!(lex(x).as_deref(), Ok([(Token::Ident(_), _)]))
}

/// Whether a binder named `x` would capture a primitive used in `body`
/// (`fun map => map f` reads `map` as the variable).
fn shadows_used_prim(x: &str, body: &Expr) -> bool {
    let is_named_x = |p: Prim| {
        let name = p.name();
        name == x
            || (DIMENSIONED.contains(&x)
                && name.strip_prefix(x).is_some_and(|r| r.starts_with('(')))
    };
    if !Prim::ALL.iter().any(|p| is_named_x(*p)) {
        return false;
    }
    fn uses(e: &Expr, is_named_x: &dyn Fn(Prim) -> bool) -> bool {
        match e.kind() {
            ExprKind::Prim(p) => is_named_x(*p),
            ExprKind::Var(_) | ExprKind::Lit(_) => false,
            ExprKind::App(f, a) => uses(f, is_named_x) || uses(a, is_named_x),
            ExprKind::Lambda(_, _, b)
            | ExprKind::DepLambda(_, b)
            | ExprKind::DepApp(b, _)
            | ExprKind::Annot(b, _) => uses(b, is_named_x),
        }
    }
    uses(body, &is_named_x)
}

/// Every identifier in a term, its types included.
fn names_of(e: &Expr) -> HashSet<String> {
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

/// A type-level argument, as an application argument.
fn type_arg(a: &TypeArg) -> String {
    match a {
        TypeArg::Nat(n) => AtomicNat(n).to_string(),
        TypeArg::AddrSpace(s) => s.to_string(),
        TypeArg::Data(d) => {
            let s = d.to_string();
            if matches!(lex(&s).as_deref(), Ok([(Token::Ident(_), _)])) {
                s
            } else {
                format!("({s})")
            }
        }
        TypeArg::NatToNat(NatToNat::Var(x)) | TypeArg::NatToData(NatToData::Var(x)) => {
            x.to_string()
        }
        TypeArg::NatToNat(NatToNat::Lambda(x, body)) => format!("(fun {} => {body})", x.name()),
        TypeArg::NatToData(NatToData::Lambda(x, body)) => format!("(fun {} => {body})", x.name()),
    }
}

/// A literal and its precedence (negative numbers are unary expressions).
fn literal(l: &Literal) -> (String, u8) {
    match l {
        Literal::Bool(b) => (b.to_string(), ATOM),
        Literal::Int(v, t) if t.is_float() => float(*v as f64, *t),
        Literal::Int(v, t) => {
            let suffix = match t {
                ScalarType::Int | ScalarType::Bool => "",
                t => t.name(),
            };
            (format!("{v}{suffix}"), if *v < 0 { UNARY } else { ATOM })
        }
        Literal::Float(v, t) => float(*v, *t),
        Literal::Nat(n) => (format!("({n} : natType)"), ATOM),
    }
}

/// A float literal that reads back as the same value of type `t`: always with a
/// `.`, and the suffix `f` for `f32`, none for `f64`, `f16` for `f16`.
fn float(v: f64, t: ScalarType) -> (String, u8) {
    let suffix = match t {
        ScalarType::F32 => "f",
        ScalarType::F16 => "f16",
        _ => "",
    };
    if !v.is_finite() {
        let num = if v.is_nan() {
            "0.0"
        } else if v > 0.0 {
            "1.0"
        } else {
            "-1.0"
        };
        return (format!("({num}{suffix} / 0.0{suffix})"), ATOM);
    }
    // `Debug` prints the shortest text that reads back as the same value.
    let mut text = match t {
        ScalarType::F32 => format!("{:?}", v as f32),
        ScalarType::F16 => format!("{:?}", half::f16::from_f64(v).to_f32()),
        _ => format!("{v:?}"),
    };
    if !text.contains('.') {
        match text.find(['e', 'E']) {
            Some(i) => text.insert_str(i, ".0"),
            None => text.push_str(".0"),
        }
    }
    let prec = if text.starts_with('-') { UNARY } else { ATOM };
    (format!("{text}{suffix}"), prec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::{parse_expr, parse_program};

    fn roundtrip(src: &str) -> String {
        let e = parse_expr(src).unwrap_or_else(|err| panic!("{src}: {err}"));
        let printed = print_expr(&e);
        let back = parse_expr(&printed).unwrap_or_else(|err| panic!("{printed}: {err}"));
        assert!(e.alpha_eq(&back), "{src}\nprinted as\n{printed}");
        printed
    }

    #[test]
    fn prints_minimal_syntax() {
        for (src, out) in [
            ("a + b * c", "a + b * c"),
            ("(a + b) * c", "(a + b) * c"),
            ("a - (b - c)", "a - (b - c)"),
            ("(a - b) - c", "a - b - c"),
            ("f (g x) y", "f (g x) y"),
            ("add a", "add a"),
            ("add", "add"),
            ("add a b c", "(a + b) c"),
            ("-f x", "-f x"),
            ("neg 3", "neg 3"),
            ("neg (3 x)", "neg (3 x)"),
            ("neg (-3)", "-(-3)"),
            ("f (-3) (-1.5f)", "f (-3) (-1.5f)"),
            ("!(a < b)", "!(a < b)"),
            ("(a, b + c)", "(a, b + c)"),
            ("(x : n.f32)", "(x : n.f32)"),
            ("fun x => fun y => x", "fun x y => x"),
            (
                "fun (x: f32) (y: f32) (n: nat) (m: nat) (a: data) => x",
                "fun (x y: f32) (n m: nat) (a: data) => x",
            ),
            ("fun (f: nat -> nat) => f", "fun (f: nat -> nat) => f"),
            ("(fun x => x) y", "(fun x => x) y"),
            ("f (fun x => x) y", "y |> f (fun x => x)"),
            ("f (g (fun x => x) y) z", "f (y |> g (fun x => x)) z"),
            ("(f x |> g) y", "g (f x) y"),
            (
                "(xs |> map f |> reduce add 0.0f) / 2.0f",
                "reduce add 0.0f (map f xs) / 2.0f",
            ),
            (
                "(xs |> map (fun x => x) |> reduce add 0.0f) / 2.0f",
                "(xs |> map (fun x => x) |> reduce add 0.0f) / 2.0f",
            ),
            (
                "xs |> split 32 |> map f |> join",
                "xs |> split 32 |> map f |> join",
            ),
            (
                "xs |> split n |> map f |> join",
                "xs |> split n |> map f |> join",
            ),
            ("map f xs", "map f xs"),
            ("fst (snd p)", "fst (snd p)"),
            ("transpose (map f xs)", "xs |> map f |> transpose"),
            ("idx (natAsIndex n i) xs", "idx (natAsIndex n i) xs"),
            ("zip (fst p) (snd p)", "zip (fst p) (snd p)"),
            ("map (map (map f))", "map (map (map f))"),
            (
                "reduce add 0.0f (map f (zip xs ys))",
                "zip xs ys |> map f |> reduce add 0.0f",
            ),
            (
                "padCst l r (generate (fun i => c)) (map (padCst l r c) xs)",
                "padCst l r (generate (fun i => c)) (map (padCst l r c) xs)",
            ),
            ("x |> (fun y => y) |> f", "f ((fun y => y) x)"),
            ("g x |> (fun y => y) |> f", "g x |> (fun y => y) |> f"),
            (
                "mapGlobal 0 (mapLocal(1) f)",
                "mapGlobal(0) (mapLocal(1) f)",
            ),
            (
                "f 1.0 2.5f 1e20f 1e-7 0.5f16 3u8 (-4i64) 7",
                "f 1.0 2.5f 1.0e20f 1.0e-7 0.5f16 3u8 (-4i64) 7",
            ),
        ] {
            assert_eq!(roundtrip(src), out, "{src}");
        }
    }

    #[test]
    fn renames_unreadable_binders() {
        use crate::expr::ExprKind as K;
        use crate::span::Span;
        let mk = |k| Expr::new(k, Span::default());
        // fun map => map (map) where the inner one is the primitive
        let e = mk(K::Lambda(
            "map".into(),
            None,
            mk(K::App(mk(K::Var("map".into())), mk(K::Prim(Prim::Map)))),
        ));
        assert_eq!(print_expr(&e), "fun map_0 => map_0 map");
        let e = mk(K::Lambda("?a".into(), None, mk(K::Var("?a".into()))));
        assert_eq!(print_expr(&e), "fun a_0 => a_0");
        let e = mk(K::Lambda("fun".into(), None, mk(K::Var("fun_0".into()))));
        assert_eq!(print_expr(&e), "fun fun_1 => fun_0");
        // a binder named like a primitive it does not hide keeps its name
        let e = mk(K::Lambda("map".into(), None, mk(K::Var("map".into()))));
        assert_eq!(print_expr(&e), "fun map => map");
        let body = mk(K::App(
            mk(K::Var("mapGlobal".into())),
            mk(K::Prim(Prim::MapGlobal1)),
        ));
        let e = mk(K::Lambda("mapGlobal".into(), None, body));
        assert_eq!(
            print_expr(&e),
            "fun mapGlobal_0 => mapGlobal_0 mapGlobal(1)"
        );
    }

    #[test]
    fn omits_implicit_arguments_and_prints_explicit_ones() {
        use crate::expr::ExprKind as K;
        use crate::span::Span;
        use crate::types::{Binder, DataType, TypeArg};
        use arith::Nat;
        let poly = crate::syntax::parse_type("{t: data} -> t -> t").unwrap();
        let id2 = Expr::typed(K::Var("id2".into()), poly, Span::default());
        let inst = Expr::new(
            K::DepApp(id2, TypeArg::Data(DataType::f32())),
            Span::default(),
        );
        let e = Expr::new(
            K::App(inst, Expr::new(K::Var("a".into()), Span::default())),
            Span::default(),
        );
        assert_eq!(print_expr(&e), "id2 a");
        let mk = |k| Expr::new(k, Span::default());
        let n = Nat::var(&arith::Var::new("n"));
        let split = |arg: Nat| mk(K::DepApp(mk(K::Prim(Prim::Split)), TypeArg::Nat(arg)));
        assert_eq!(print_expr(&split(n.clone())), "split n");
        assert_eq!(print_expr(&split(Nat::cst(32))), "split 32");
        assert_eq!(print_expr(&split(n * Nat::cst(32))), "split (n*32)");
        let lam = mk(K::DepLambda(
            Binder::new("n", crate::types::Kind::Nat),
            split(Nat::cst(2)),
        ));
        assert_eq!(print_expr(&lam), "fun (n: nat) => split 2");
    }

    #[test]
    fn breaks_long_pipelines() {
        let src = "def f = fun xs => xs |> map (fun row => row |> map (fun x => x * 2.0f + 1.0f) |> reduce add 0.0f) |> padClamp 1 1 |> slide 3 1";
        let p = parse_program(src).unwrap();
        let printed = print_program(&p);
        assert_eq!(
            printed,
            "def f =\n  fun xs => xs\n    |> map (fun row => row |> map (fun x => x * 2.0f + 1.0f) |> reduce add 0.0f)\n    |> padClamp 1 1\n    |> slide 3 1\n"
        );
        let back = parse_program(&printed).unwrap();
        assert!(back.defs[0].body.alpha_eq(&p.defs[0].body));
    }

    #[test]
    fn design_examples_print_as_written() {
        let src =
            "def dot = fun xs ys => zip xs ys |> map (fun p => fst p * snd p) |> reduce add 0.0f

def mm : {m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32 =
  fun a b => a |> map (fun row => transpose b |> map (fun col => dot row col))

def jacobi3 : {n: nat} -> n.f32 -> n.f32 =
  fun xs => xs |> padClamp 1 1 |> slide 3 1 |> map (fun nbh => reduce add 0.0f nbh)
";
        let p = parse_program(src).unwrap();
        assert_eq!(print_program(&p), src);
    }
}
