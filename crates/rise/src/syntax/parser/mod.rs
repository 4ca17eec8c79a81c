//! Parsing RISE expressions and programs (DESIGN.md, "Surface syntax").
//!
//! ```text
//! program := def*
//! def     := 'def' ident (':' type)? '=' expr
//! expr    := binary                      -- `fun` may start any operand
//! binary  := unary (op unary)*           -- precedence climbing, all left-associative:
//!                                        --   * / %  >  + -  >  < > ==  >  >>  >  |>
//! unary   := '-' unary | '!' unary | app -- `-3` is a negative literal
//! app     := atom atom* lambda?          -- juxtaposition; a trailing `fun` is the last argument
//! lambda  := 'fun' param+ '=>' expr      -- extends as far right as possible
//! param   := ident | '(' ident+ ':' (kind | type) ')'
//! atom    := ident | dimPrim dim | literal | '(' expr ')' | '(' expr ':' type ')' | '(' expr ',' expr ')'
//! dim     := '(' 0|1|2 ')' | 0|1|2
//! ```
//!
//! The AST has no infix nodes: operators become applications of primitives
//! (`a + b` is `add a b`), `x |> f` is `f x`, and `f >> g` is `fun x => g (f x)`
//! with a name `x` that occurs nowhere in the source. A parameter annotated with a
//! kind (`fun (n: nat) => e`) makes a dependent lambda. An identifier bound by an
//! enclosing `fun` is a variable; otherwise a primitive name is that primitive and
//! any other name is a variable (a definition or an address space), resolved by
//! the type checker. Arguments of explicit `nat` parameters (`split 32`) are plain
//! expressions here; the type checker turns them into dependent applications.
//!
//! Bad input gives a [`Diagnostic`] pointing at the offending token; nesting
//! deeper than [`MAX_NESTING`], or a tree deeper than [`MAX_DEPTH`], is reported
//! instead of overflowing the stack.
//!
//! This module holds the entry points, the parser's state and definitions;
//! `expr.rs` parses expressions, `literals.rs` numbers.

mod expr;
mod literals;
#[cfg(test)]
mod tests;

use super::cursor::Parser;
use super::lexer::{lex, Token};
use crate::expr::{Def, Expr, NameGen, Program};
use crate::primitives::{Prim, DIMENSIONED};
use crate::span::{Diagnostic, Span};
use crate::types::{Name, Type};
use std::collections::HashSet;

/// The deepest expression tree the parser builds (nodes on the longest path):
/// deeper input is reported, so that no later pass recursing over the tree can
/// overflow the stack.
pub const MAX_DEPTH: usize = 256;

/// The deepest nesting of parentheses and `fun` bodies accepted (each level is a
/// recursion of the parser). The printer never nests deeper than the tree it
/// prints, so every tree the parser accepts prints to text it accepts again.
pub const MAX_NESTING: usize = MAX_DEPTH + 1;

/// The deepest nesting of brackets and `->`/`^` chains accepted in a type annotation.
const MAX_TYPE_NESTING: usize = 64;

/// Parses a program: a sequence of definitions.
pub fn parse_program(source: &str) -> Result<Program, Diagnostic> {
    let program = || -> R<Program> {
        let mut p = ExprParser::new(source)?;
        let mut defs = Vec::new();
        while !p.p.at_end() {
            defs.push(p.parse_def()?);
        }
        Ok(Program { defs })
    };
    program().map_err(|e| *e)
}

/// Parses a single expression (the whole input).
pub fn parse_expr(source: &str) -> Result<Expr, Diagnostic> {
    let expr = || -> R<Expr> {
        let mut p = ExprParser::new(source)?;
        let e = p.parse_expr()?;
        if !p.p.at_end() {
            return Err(p
                .p
                .error_expected("an operator or the end of the expression")
                .into());
        }
        Ok(e)
    };
    expr().map_err(|e| *e)
}

/// Expression-parsing state on top of the token cursor.
struct ExprParser {
    /// The token cursor (shared with the type parser).
    p: Parser,
    /// Names bound by enclosing `fun`s, innermost last.
    scope: Vec<Name>,
    /// Fresh names for the desugaring of `>>`.
    names: NameGen,
    /// Every identifier of the source: fresh names must avoid them.
    source_idents: HashSet<String>,
    /// Current nesting depth (parser recursion).
    nesting: usize,
}

/// Results inside the parser: the error is boxed to keep the frames of the
/// recursive functions small (deep nesting must not overflow the stack).
type R<T> = Result<T, Box<Diagnostic>>;

/// Reports a tree deeper than [`MAX_DEPTH`].
fn check_depth(depth: usize, at: Span) -> R<()> {
    if depth > MAX_DEPTH {
        Err(too_deep(at).into())
    } else {
        Ok(())
    }
}

#[inline(never)]
fn too_deep(at: Span) -> Diagnostic {
    Diagnostic::new(at, "expression nested too deeply").with_note(format!(
        "at most {MAX_NESTING} levels of parentheses and `fun`s and expression trees \
         {MAX_DEPTH} levels deep are supported; split it into several definitions"
    ))
}

impl ExprParser {
    fn new(source: &str) -> R<ExprParser> {
        let tokens = lex(source)?;
        let source_idents = tokens
            .iter()
            .filter_map(|(t, _)| match t {
                Token::Ident(s) => Some(s.clone()),
                _ => None,
            })
            .collect();
        Ok(ExprParser {
            p: Parser::new(tokens, source.len()),
            scope: Vec::new(),
            names: NameGen::new(),
            source_idents,
            nesting: 0,
        })
    }

    // ---- definitions ---------------------------------------------------------

    /// `def name (: type)? = expr`
    fn parse_def(&mut self) -> R<Def> {
        let start = self.p.expect(&Token::Def, "`def`")?;
        let (name, name_span) = self.p.ident("the name of the definition")?;
        if DIMENSIONED.contains(&name.as_str()) || Prim::from_name(&name).is_some() {
            return Err(Diagnostic::new(
                name_span,
                format!("`{name}` is a primitive and cannot be redefined"),
            )
            .with_label("choose another name")
            .into());
        }
        let annot = if self.p.eat(&Token::Colon) {
            Some(self.parse_type_annotation()?)
        } else {
            None
        };
        if !self.p.eat(&Token::Eq) {
            let what = if annot.is_some() {
                "`=` after the type"
            } else {
                "`=` or `:` after the name of the definition"
            };
            let mut err = self.p.error_expected(what);
            if matches!(self.p.peek(), Some(Token::Ident(_)) | Some(Token::LParen)) {
                err = err.with_note(format!(
                    "parameters are written with `fun`: `def {name} = fun x => ...`"
                ));
            }
            return Err(err.into());
        }
        let body = self.parse_expr()?;
        if !self.p.at_end() && self.p.peek() != Some(&Token::Def) {
            return Err(self
                .p
                .error_expected("an operator, the next `def` or the end of the input")
                .into());
        }
        Ok(Def {
            name: name.into(),
            annot,
            span: start.to(body.span()),
            body,
            name_span,
        })
    }

    /// A type, after checking that its nesting stays within what the type parser can take.
    fn parse_type_annotation(&mut self) -> R<Type> {
        // The type parser recurses into brackets and along chains of `->` and `^`
        // (right-associative): estimate its depth from the tokens the type can span.
        let mut levels: Vec<usize> = vec![0]; // per open bracket: `->`/`^` seen at that level
        let mut depth = 0usize; // brackets plus chain lengths of the enclosing levels
        let mut k = 0;
        while let Some(t) = self.p.peek_at(k) {
            match t {
                Token::LParen | Token::LBracket | Token::LBrace => {
                    levels.push(0);
                    depth += 1;
                }
                Token::RParen | Token::RBracket | Token::RBrace => match levels.pop() {
                    Some(chain) if !levels.is_empty() => depth -= chain + 1,
                    _ => break,
                },
                Token::Arrow | Token::Caret => {
                    if let Some(chain) = levels.last_mut() {
                        *chain += 1;
                    }
                    depth += 1;
                }
                Token::Ident(_)
                | Token::Int(_)
                | Token::Float(_)
                | Token::Colon
                | Token::Comma
                | Token::Dot
                | Token::Plus
                | Token::Minus
                | Token::Star
                | Token::Slash
                | Token::SlashHat
                | Token::Percent => {}
                _ => break,
            }
            if depth > MAX_TYPE_NESTING {
                return Err(Diagnostic::new(self.p.span(), "type nested too deeply")
                    .with_note(format!(
                        "types may nest brackets and chains of `->` at most {MAX_TYPE_NESTING} deep"
                    ))
                    .into());
            }
            k += 1;
        }
        Ok(self.p.parse_type()?)
    }
}
