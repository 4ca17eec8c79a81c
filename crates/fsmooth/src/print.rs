//! Printing F-smooth terms in the surface syntax that [`crate::parse_program`]
//! reads back: parentheses only where precedence needs them, consecutive
//! lambdas merged (`fun a i -> e`), indexing as `a[i]`.

use crate::expr::{Expr, ExprKind, Prim as Op};
use crate::Program;
use std::fmt;

// Precedence levels, loosest first.
const TOP: u8 = 0; // fun, let, if: extend as far right as possible
const OR: u8 = 1;
const AND: u8 = 2;
const CMP: u8 = 3;
const ADD: u8 = 4;
const MUL: u8 = 5;
const UNARY: u8 = 6;
const APP: u8 = 7;
const POSTFIX: u8 = 8;
const ATOM: u8 = 9;

fn level(e: &Expr) -> u8 {
    use ExprKind::*;
    match e.kind() {
        Lam(..) | Let(..) | If(..) => TOP,
        Double(v) if v.is_sign_negative() => UNARY,
        Index(v) if *v < 0 => UNARY,
        Var(_) | Double(_) | Index(_) | Bool(_) => ATOM,
        App(..) => APP,
        Prim(op, _) => match op {
            Op::Or => OR,
            Op::And => AND,
            op if op.is_comparison() => CMP,
            Op::Add | Op::Sub => ADD,
            Op::Mul | Op::Div => MUL,
            Op::Neg | Op::Not => UNARY,
            Op::Get => POSTFIX,
            Op::Pair => ATOM,
            _ => APP,
        },
    }
}

fn write_double(f: &mut fmt::Formatter<'_>, v: f64) -> fmt::Result {
    // `{:?}` is the shortest text that reads back to the same `f64` and always
    // has a `.` or an exponent, so it lexes as a `Double`.
    write!(f, "{v:?}")
}

fn write_at(e: &Expr, f: &mut fmt::Formatter<'_>, min: u8) -> fmt::Result {
    if level(e) < min {
        write!(f, "(")?;
        write_expr(e, f)?;
        write!(f, ")")
    } else {
        write_expr(e, f)
    }
}

fn write_expr(e: &Expr, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    use ExprKind::*;
    match e.kind() {
        Var(x) => write!(f, "{x}"),
        Double(v) => write_double(f, *v),
        Index(v) => write!(f, "{v}"),
        Bool(b) => write!(f, "{b}"),
        Lam(..) => {
            write!(f, "fun")?;
            let mut body = e;
            while let Lam(x, t, b) = body.kind() {
                match t {
                    Some(t) => write!(f, " ({x}: {t})")?,
                    None => write!(f, " {x}")?,
                }
                body = b;
            }
            write!(f, " -> ")?;
            write_at(body, f, TOP)
        }
        App(g, a) => {
            write_at(g, f, APP)?;
            write!(f, " ")?;
            write_at(a, f, POSTFIX)
        }
        Let(x, e0, e1) => {
            write!(f, "let {x} = ")?;
            write_at(e0, f, TOP)?;
            write!(f, " in ")?;
            write_at(e1, f, TOP)
        }
        If(c, a, b) => {
            write!(f, "if ")?;
            write_at(c, f, TOP)?;
            write!(f, " then ")?;
            write_at(a, f, TOP)?;
            write!(f, " else ")?;
            write_at(b, f, TOP)
        }
        Prim(op, args) => write_prim(*op, args, f),
    }
}

fn write_prim(op: Op, args: &[Expr], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let binary = |f: &mut fmt::Formatter<'_>, me: u8, left: u8, right: u8| {
        write_at(&args[0], f, left)?;
        write!(f, " {} ", op.name())?;
        let _ = me;
        write_at(&args[1], f, right)
    };
    match op {
        Op::Get => {
            write_at(&args[0], f, POSTFIX)?;
            write!(f, "[")?;
            write_at(&args[1], f, TOP)?;
            write!(f, "]")
        }
        Op::Pair => {
            write!(f, "(")?;
            write_at(&args[0], f, TOP)?;
            write!(f, ", ")?;
            write_at(&args[1], f, TOP)?;
            write!(f, ")")
        }
        Op::Or => binary(f, OR, OR, AND),
        Op::And => binary(f, AND, AND, CMP),
        op if op.is_comparison() => binary(f, CMP, ADD, ADD),
        Op::Add | Op::Sub => binary(f, ADD, ADD, MUL),
        Op::Mul | Op::Div => binary(f, MUL, MUL, UNARY),
        Op::Neg | Op::Not => {
            write!(f, "{}", op.name())?;
            let a = &args[0];
            // `-1.0` would read back as a literal: write `-(1.0)` for the operation.
            let literal = matches!(a.kind(), ExprKind::Double(_) | ExprKind::Index(_));
            if literal && op == Op::Neg {
                write!(f, "(")?;
                write_expr(a, f)?;
                write!(f, ")")
            } else {
                write_at(a, f, APP)
            }
        }
        _ => {
            write!(f, "{}", op.name())?;
            for a in args {
                write!(f, " ")?;
                write_at(a, f, POSTFIX)?;
            }
            Ok(())
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_expr(self, f)
    }
}

impl fmt::Display for Program {
    /// One `input` line per input, then the body.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for i in &self.inputs {
            writeln!(f, "input {} : {}", i.name, i.ty)?;
        }
        write!(f, "{}", self.body)
    }
}
