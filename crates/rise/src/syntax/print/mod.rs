//! Printing expressions and programs in the surface syntax (`docs/language.md`).
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
//!
//! This module holds the entry points and the printer; `form.rs` decides the shape a node
//! prints in (infix, pair, pipe chain, application), `names.rs` which binders keep their
//! names, `atoms.rs` the text of literals and type-level arguments.

mod atoms;
mod form;
mod names;
#[cfg(test)]
mod tests;

use crate::expr::{rename_type_var, Expr, ExprKind, Program};
use crate::primitives::Prim;
use crate::types::{Kind, Name, Type};
use atoms::{literal, type_arg};
use form::{chain, form, is_implicit, use_pipe, Form};
use names::{foreign_names, is_identifier, names_a_prim, names_of, shadows_used_prim};
use std::collections::HashSet;
use std::fmt;

/// Lines longer than this are broken at `|>`.
const WIDTH: usize = 100;

// Precedence levels of printed text, loosest first.
const TOP: u8 = 0; // `fun ... => ...`
const PIPE: u8 = 1; // `|>`
                    // (2 is `>>>`, which is never printed)
const OR: u8 = 3; // `||`
const AND: u8 = 4; // `&&`
const BIT_OR: u8 = 5; // `|`
const BIT_XOR: u8 = 6; // `^`
const BIT_AND: u8 = 7; // `&`
const EQ: u8 = 8; // `==` `!=`
const CMP: u8 = 9; // `<` `<=` `>` `>=`
const SHIFT: u8 = 10; // `<<` `>>`
const ADD: u8 = 11; // `+` `-`
const MUL: u8 = 12; // `*` `/` `%`
const UNARY: u8 = 13; // `-x` `!x` `~x`, negative literals
const APP: u8 = 14; // `f x`
const ATOM: u8 = 15; // names, literals, parenthesised forms

/// Prints an expression in the surface syntax.
pub fn print_expr(e: &Expr) -> String {
    Printer::new(e).expr(e, TOP, 0)
}

/// Prints a program: its foreign functions first, then one definition per paragraph, ending
/// with a newline.
pub fn print_program(p: &Program) -> String {
    let mut out = String::new();
    for f in &p.foreign {
        out.push_str(&f.declaration());
        out.push_str("\n\n");
    }
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
    /// The foreign functions the term calls, computed at the first binder.
    foreign: Option<HashSet<String>>,
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
            foreign: None,
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
            ExprKind::Foreign(f) => (f.name.to_string(), ATOM),
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
        let printed = if is_identifier(x) && !self.may_capture(x, body) {
            x.clone()
        } else {
            self.fresh(x)
        };
        self.env.push((x.clone(), printed.clone()));
        printed
    }

    /// Whether a binder named `x` over `body` would capture a primitive or a foreign
    /// function `body` uses; `body` is walked only when `x` is the name of one (a walk for
    /// every binder made printing nested lambdas quadratic).
    fn may_capture(&mut self, x: &str, body: &Expr) -> bool {
        let root = &self.root;
        let foreign = self.foreign.get_or_insert_with(|| foreign_names(root));
        (names_a_prim(x) || foreign.contains(x)) && shadows_used_prim(x, body)
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
