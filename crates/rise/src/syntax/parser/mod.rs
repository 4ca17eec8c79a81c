//! Parsing RISE expressions and programs (`docs/language.md`).
//!
//! ```text
//! program := (def | foreign)*
//! def     := 'def' ident (':' type)? '=' expr
//! foreign := 'foreign' ident ('(' ident+ ':' scalar ')')+ ':' scalar '{' C '}'
//!                                        -- a C function (crate::foreign); the body is verbatim
//! expr    := binary                      -- `fun` may start any operand
//! binary  := unary (op unary)*           -- precedence climbing, all left-associative:
//!                                        --   * / %  >  + -  >  << >>  >  < <= > >=  >  == !=
//!                                        --   >  &  >  ^  >  |  >  &&  >  ||  >  >>>  >  |>
//! unary   := '-' unary | '!' unary | '~' unary | app -- `-3`, `-inff` are negative literals
//! app     := atom atom* lambda?          -- juxtaposition; a trailing `fun` is the last argument
//! lambda  := 'fun' param+ '=>' expr      -- extends as far right as possible
//! param   := ident | '(' ident+ ':' (kind | type) ')'
//! atom    := ident | dimPrim dim | literal | '(' expr ')' | '(' expr ':' type ')' | '(' expr ',' expr ')'
//! dim     := '(' 0|1|2 ')' | 0|1|2
//! ```
//!
//! The AST has no infix nodes: operators become applications of primitives
//! (`a + b` is `add a b`), `x |> f` is `f x`, and `f >>> g` is `fun x => g (f x)`
//! with a name `x` that occurs nowhere in the source. A parameter annotated with a
//! kind (`fun (n: nat) => e`) makes a dependent lambda. An identifier bound by an
//! enclosing `fun` or naming a `def` of the program is a variable (a definition may shadow
//! a primitive, with a warning); `inf`/`nan` with a float suffix are literals; otherwise a primitive name is that primitive and
//! any other name is a variable (a definition or an address space), resolved by
//! the type checker. A name declared by an earlier `foreign` is that foreign function
//! ([`ExprKind::Foreign`](crate::ExprKind::Foreign)), which must not shadow a primitive or a
//! definition. Arguments of explicit `nat` parameters (`split 32`) are plain
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
use crate::foreign::{check_body, check_c_name, is_foreign_scalar, ForeignFun};
use crate::primitives::{Prim, DIMENSIONED};
use crate::span::{Diagnostic, Span};
use crate::types::{Name, Type};
use std::collections::HashMap;
use std::collections::HashSet;
use std::sync::Arc;

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
        let mut defs: Vec<Def> = Vec::new();
        let mut foreign: Vec<Arc<ForeignFun>> = Vec::new();
        while !p.p.at_end() {
            if p.p.peek() == Some(&Token::Foreign) {
                let f = Arc::new(p.parse_foreign()?);
                p.foreign.insert(f.name.to_string(), f.clone());
                foreign.push(f);
            } else {
                defs.push(p.parse_def()?);
            }
        }
        for def in &defs {
            if let Some(f) = p.foreign.get(&*def.name) {
                return Err(Diagnostic::new(
                    def.name_span,
                    format!(
                        "`{}` is defined and declared as a foreign function",
                        def.name
                    ),
                )
                .with_note(format!(
                    "the foreign function is declared at bytes {}..{}; rename one of them",
                    f.span.start, f.span.end
                ))
                .into());
            }
        }
        Ok(Program {
            defs,
            foreign,
            warnings: p.warnings,
        })
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
    /// How many `let x = e in body` wait for their `in` (which then ends an application).
    lets_open: usize,
    /// The foreign functions declared so far, by name.
    foreign: HashMap<String, Arc<ForeignFun>>,
    /// The names of the program's definitions (each `def NAME`): inside the file they
    /// win over a primitive of that name.
    def_names: HashSet<String>,
    /// Warnings so far.
    warnings: Vec<Diagnostic>,
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
        let def_names = tokens
            .windows(2)
            .filter_map(|w| match (&w[0].0, &w[1].0) {
                (Token::Def, Token::Ident(s)) => Some(s.clone()),
                _ => None,
            })
            .collect();
        Ok(ExprParser {
            p: Parser::new(tokens, source.len()),
            scope: Vec::new(),
            names: NameGen::new(),
            source_idents,
            nesting: 0,
            lets_open: 0,
            foreign: HashMap::new(),
            def_names,
            warnings: Vec::new(),
        })
    }

    // ---- definitions ---------------------------------------------------------

    /// `def name (: type)? = expr`
    fn parse_def(&mut self) -> R<Def> {
        let start = self.p.expect(&Token::Def, "`def`")?;
        let (name, name_span) = self.p.ident("the name of the definition")?;
        if DIMENSIONED.contains(&name.as_str()) || Prim::from_name(&name).is_some() {
            self.warnings.push(
                Diagnostic::new(
                    name_span,
                    format!("the definition `{name}` shadows the primitive `{name}`"),
                )
                .with_label(format!("in this file, `{name}` is this definition"))
                .with_note(format!(
                    "every use of `{name}` in this file means this definition; rename it to \
                     use the primitive"
                )),
            );
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
        if !self.p.at_end() && !matches!(self.p.peek(), Some(Token::Def | Token::Foreign)) {
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

    /// `foreign name (x: t)... : t { C }` ([`crate::foreign`]).
    fn parse_foreign(&mut self) -> R<ForeignFun> {
        let start = self.p.expect(&Token::Foreign, "`foreign`")?;
        let (name, name_span) = self.p.ident("the name of the foreign function")?;
        let refuse = |span: Span, message: String| -> Box<Diagnostic> {
            Box::new(Diagnostic::new(span, message).with_label("choose another name"))
        };
        if DIMENSIONED.contains(&name.as_str()) || Prim::from_name(&name).is_some() {
            return Err(refuse(
                name_span,
                format!("`{name}` is a primitive and cannot be redefined"),
            ));
        }
        if let Some(prev) = self.foreign.get(&name) {
            return Err(refuse(
                name_span,
                format!(
                    "the foreign function `{name}` is declared twice (first at bytes {}..{})",
                    prev.span.start, prev.span.end
                ),
            ));
        }
        check_c_name(&name)
            .map_err(|m| refuse(name_span, format!("{m}: it cannot name a foreign function")))?;
        let mut params: Vec<(Name, crate::types::ScalarType)> = Vec::new();
        while self.p.eat(&Token::LParen) {
            let mut names = Vec::new();
            while let Some(Token::Ident(_)) = self.p.peek() {
                names.push(self.p.ident("a parameter name")?);
            }
            if names.is_empty() {
                return Err(self.p.error_expected("a parameter name").into());
            }
            self.p
                .expect(&Token::Colon, "`:` and the parameter's type")?;
            let t = self.foreign_scalar(&name, "parameter")?;
            self.p.expect(&Token::RParen, "`)`")?;
            for (x, span) in names {
                check_c_name(&x).map_err(|m| {
                    refuse(
                        span,
                        format!("{m}: it cannot name a parameter of a foreign function"),
                    )
                })?;
                if x == name || params.iter().any(|(p, _)| **p == *x) {
                    return Err(refuse(
                        span,
                        format!(
                            "the parameter `{x}` of the foreign function `{name}` is named twice"
                        ),
                    ));
                }
                params.push((x.into(), t));
            }
        }
        if params.is_empty() {
            return Err(self
                .p
                .error_expected("a parameter `(x: t)`")
                .with_note(
                    "a foreign function takes at least one parameter (a constant is a `def`)",
                )
                .into());
        }
        self.p.expect(
            &Token::Colon,
            "`:` and the result type, or another parameter `(x: t)`",
        )?;
        let result = self.foreign_scalar(&name, "result")?;
        let body = match self.p.peek() {
            Some(Token::CBody(b)) => {
                // the body starts after the `{` its token starts with
                let at = self.p.span().start as usize + 1;
                check_body(b).map_err(|(range, message)| {
                    Box::new(
                        Diagnostic::new(Span::new(at + range.start, at + range.end), message)
                            .with_label(format!("in the body of `{name}`")),
                    )
                })?;
                b.clone()
            }
            _ => {
                return Err(self
                    .p
                    .error_expected("`{` and the C body of the foreign function")
                    .into())
            }
        };
        self.p.bump();
        Ok(ForeignFun {
            name: name.into(),
            params,
            result,
            body,
            span: start.to(self.p.prev_span()),
        })
    }

    /// The type of a parameter or result of a foreign function: a scalar type.
    fn foreign_scalar(&mut self, fname: &str, what: &str) -> R<crate::types::ScalarType> {
        let start = self.p.span();
        let t = self.p.parse_data_type()?;
        let span = start.to(self.p.prev_span());
        let kind = match &t {
            crate::types::DataType::Scalar(s) if is_foreign_scalar(*s) => return Ok(*s),
            crate::types::DataType::Scalar(s) => {
                if *s == crate::types::ScalarType::F16 {
                    "`f16`, which C has no portable type for"
                } else {
                    "`bf16`, which C has no portable type for"
                }
            }
            crate::types::DataType::Array(..) => "an array",
            crate::types::DataType::Pair(..) => "a tuple",
            crate::types::DataType::Vector(..) => "a vector (not supported yet)",
            _ => "not a scalar type",
        };
        Err(Diagnostic::new(
            span,
            format!("the {what} of the foreign function `{fname}` has type `{t}`: {kind}"),
        )
        .with_label("a scalar type is needed here")
        .with_note(
            "foreign functions take and return scalars: bool, int, i8..i64, u8..u64, f32, f64",
        )
        .into())
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
