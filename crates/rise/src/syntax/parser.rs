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

use super::cursor::Parser;
use super::lexer::{lex, Token};
use crate::expr::{Def, Expr, ExprKind, Literal, NameGen, Program};
use crate::primitives::{Prim, DIMENSIONED};
use crate::span::{Diagnostic, Span};
use crate::types::{Binder, Name, ScalarType, Type};
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

/// A parsed expression and the depth of its tree.
type Sub = (Expr, usize);

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

/// The infix operators.
#[derive(Clone, Copy)]
enum BinOp {
    Pipe,
    Compose,
    Prim(Prim),
}

/// The binary operator a token denotes, with its precedence (higher binds tighter).
fn binary_op(t: &Token) -> Option<(u8, BinOp)> {
    Some(match t {
        Token::Pipe => (1, BinOp::Pipe),
        Token::Compose => (2, BinOp::Compose),
        Token::Lt => (3, BinOp::Prim(Prim::Lt)),
        Token::Gt => (3, BinOp::Prim(Prim::Gt)),
        Token::EqEq => (3, BinOp::Prim(Prim::Equal)),
        Token::Plus => (4, BinOp::Prim(Prim::Add)),
        Token::Minus => (4, BinOp::Prim(Prim::Sub)),
        Token::Star => (5, BinOp::Prim(Prim::Mul)),
        Token::Slash => (5, BinOp::Prim(Prim::Div)),
        Token::Percent => (5, BinOp::Prim(Prim::Mod)),
        _ => return None,
    })
}

/// Whether a token can start an application argument.
fn starts_atom(t: &Token) -> bool {
    matches!(
        t,
        Token::Ident(_)
            | Token::Int(_)
            | Token::Float(_)
            | Token::True
            | Token::False
            | Token::LParen
    )
}

fn app(f: Expr, a: Expr, span: Span) -> Expr {
    Expr::new(ExprKind::App(f, a), span)
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

    // ---- expressions -----------------------------------------------------------

    /// A whole expression (lowest precedence), one nesting level deeper.
    fn parse_expr(&mut self) -> R<Expr> {
        Ok(self.expr()?.0)
    }

    fn expr(&mut self) -> R<Sub> {
        if self.nesting >= MAX_NESTING {
            return Err(too_deep(self.p.span()).into());
        }
        self.nesting += 1;
        let r = self.parse_binary(1);
        self.nesting -= 1;
        r
    }

    /// Precedence climbing over the left-associative binary operators of precedence `>= min`.
    fn parse_binary(&mut self, min: u8) -> R<Sub> {
        let mut lhs = self.parse_unary()?;
        while let Some((prec, op)) = self.p.peek().and_then(binary_op) {
            if prec < min {
                break;
            }
            let op_span = self.p.span();
            self.p.bump();
            if self.p.at_end()
                || self
                    .p
                    .peek()
                    .is_some_and(|t| binary_op(t).is_some() && t != &Token::Minus)
            {
                return Err(self.p.error_expected("an operand").into());
            }
            let rhs = self.parse_binary(prec + 1)?;
            lhs = self.combine(op, lhs, rhs, op_span)?;
        }
        Ok(lhs)
    }

    /// Builds the desugared form of `lhs op rhs`.
    fn combine(&mut self, op: BinOp, (lhs, dl): Sub, (rhs, dr): Sub, op_span: Span) -> R<Sub> {
        let span = lhs.span().to(rhs.span());
        match op {
            BinOp::Pipe => {
                // App(rhs, lhs)
                let depth = dl.max(dr) + 1;
                check_depth(depth, op_span)?;
                Ok((app(rhs, lhs, span), depth))
            }
            BinOp::Prim(p) => {
                // App(App(p, lhs), rhs)
                let depth = (dl + 2).max(dr + 1);
                check_depth(depth, op_span)?;
                let f = Expr::new(ExprKind::Prim(p), op_span);
                let partial = app(f, lhs.clone(), lhs.span().to(op_span));
                Ok((app(partial, rhs, span), depth))
            }
            BinOp::Compose => {
                // Lambda(x, App(rhs, App(lhs, x)))
                let depth = (dl + 3).max(dr + 2);
                check_depth(depth, op_span)?;
                let x = self.fresh_name();
                let var = Expr::new(ExprKind::Var(x.clone()), op_span);
                let inner = app(lhs, var, span);
                let body = app(rhs, inner, span);
                Ok((Expr::new(ExprKind::Lambda(x, None, body), span), depth))
            }
        }
    }

    /// A name that occurs nowhere in the source.
    fn fresh_name(&mut self) -> Name {
        loop {
            let n = self.names.fresh("x");
            if !self.source_idents.contains(&*n) {
                return n;
            }
        }
    }

    /// `-e`, `!e` (any number of them) before an application; `-3` is a literal.
    fn parse_unary(&mut self) -> R<Sub> {
        let mut prefixes = Vec::new();
        let head = loop {
            let span = self.p.span();
            match self.p.peek() {
                Some(Token::Minus)
                    if matches!(
                        self.p.peek_at(1),
                        Some(Token::Int(_)) | Some(Token::Float(_))
                    ) =>
                {
                    self.p.bump();
                    break Some(self.parse_number(true, span)?);
                }
                Some(Token::Minus) => prefixes.push((Prim::Neg, span)),
                Some(Token::Bang) => prefixes.push((Prim::Not, span)),
                _ => break None,
            }
            check_depth(prefixes.len(), span)?;
            self.p.bump();
        };
        let (mut e, mut depth) = self.parse_app(head)?;
        for (p, op_span) in prefixes.into_iter().rev() {
            depth += 1;
            check_depth(depth, op_span)?;
            let span = op_span.to(e.span());
            e = app(Expr::new(ExprKind::Prim(p), op_span), e, span);
        }
        Ok((e, depth))
    }

    /// `f a b ...` (from `head` if given), with an optional trailing `fun` argument; or a lambda.
    fn parse_app(&mut self, head: Option<Sub>) -> R<Sub> {
        let (mut head, mut depth) = match head {
            Some(h) => h,
            None if self.p.peek() == Some(&Token::Fun) => return self.parse_lambda(),
            None => self.parse_atom()?,
        };
        loop {
            let at = self.p.span();
            let (arg, d) = match self.p.peek() {
                Some(t) if starts_atom(t) => self.parse_atom()?,
                Some(Token::Fun) => self.parse_lambda()?,
                _ => return Ok((head, depth)),
            };
            depth = depth.max(d) + 1;
            check_depth(depth, at)?;
            let span = head.span().to(arg.span());
            // After a `fun` argument nothing can follow: its body extended as far as it could.
            head = app(head, arg, span);
        }
    }

    /// `fun params => body`
    fn parse_lambda(&mut self) -> R<Sub> {
        let start = self.p.span();
        let params = self.parse_params()?;
        let scope_len = self.scope.len();
        for (param, _) in &params {
            self.scope.push(param.name().clone());
        }
        let body = self.expr();
        self.scope.truncate(scope_len);
        build_lambda(start, params, body?)
    }

    /// `fun x (y: t) ... =>`
    #[inline(never)]
    fn parse_params(&mut self) -> R<Vec<(Param, Span)>> {
        self.p.expect(&Token::Fun, "`fun`")?;
        let mut params: Vec<(Param, Span)> = Vec::new();
        loop {
            let span = self.p.span();
            match self.p.peek() {
                Some(Token::Ident(_)) => {
                    let (name, span) = self.p.ident("a parameter")?;
                    params.push((Param::Value(name.into(), None), span));
                }
                Some(Token::LParen) => {
                    self.p.bump();
                    for param in self.parse_annotated_params()? {
                        params.push((param, span.to(self.p.prev_span())));
                    }
                }
                Some(Token::FatArrow) if !params.is_empty() => {
                    self.p.bump();
                    return Ok(params);
                }
                _ => {
                    let what = if params.is_empty() {
                        "a parameter name or `(name: type)`"
                    } else {
                        "another parameter or `=>`"
                    };
                    return Err(self.p.error_expected(what).into());
                }
            }
            check_depth(params.len(), span)?;
        }
    }

    /// `x y: annotation)` after `(`: value parameters with a type, or type-level ones with a kind.
    fn parse_annotated_params(&mut self) -> R<Vec<Param>> {
        let mut names: Vec<Name> = Vec::new();
        while let Some(Token::Ident(_)) = self.p.peek() {
            names.push(self.p.ident("a parameter")?.0.into());
        }
        if names.is_empty() {
            return Err(self.p.error_expected("a parameter name").into());
        }
        self.p
            .expect(&Token::Colon, "`:` and the parameter's type or kind")?;
        let is_kind = matches!(self.p.peek(), Some(Token::Ident(k)) if k == "nat" || k == "data" || k == "addrSpace");
        let params = if is_kind {
            let kind = self.p.parse_kind()?;
            names
                .into_iter()
                .map(|n| Param::Dep(Binder::new(n, kind)))
                .collect()
        } else {
            let ty = self.parse_type_annotation()?;
            names
                .into_iter()
                .map(|n| Param::Value(n, Some(ty.clone())))
                .collect()
        };
        self.p
            .expect(&Token::RParen, "`)` after the parameter's annotation")?;
        Ok(params)
    }

    /// An argument: a name, a literal or a parenthesised expression.
    fn parse_atom(&mut self) -> R<Sub> {
        // Only the parenthesised case recurses: keep this frame small.
        if self.p.peek() == Some(&Token::LParen) {
            let open = self.p.span();
            self.p.bump();
            return self.parse_parenthesized(open);
        }
        Ok((self.parse_leaf()?, 1))
    }

    /// A name or a literal.
    #[inline(never)]
    fn parse_leaf(&mut self) -> R<Expr> {
        let span = self.p.span();
        let lit = |l| Ok(Expr::new(ExprKind::Lit(l), span));
        match self.p.peek().cloned() {
            Some(Token::Ident(name)) => {
                self.p.bump();
                self.resolve(name, span)
            }
            Some(Token::Int(_)) | Some(Token::Float(_)) => Ok(self.parse_number(false, span)?.0),
            Some(Token::True) => {
                self.p.bump();
                lit(Literal::Bool(true))
            }
            Some(Token::False) => {
                self.p.bump();
                lit(Literal::Bool(false))
            }
            _ => Err(self.p.error_expected("an expression").into()),
        }
    }

    /// After `(`: `e)`, `e : T)` or `e1, e2)`.
    fn parse_parenthesized(&mut self, open: Span) -> R<Sub> {
        if self.p.peek() == Some(&Token::RParen) {
            return Err(self
                .p
                .error_expected("an expression inside the parentheses")
                .into());
        }
        let first = self.expr()?;
        if self.p.eat(&Token::Comma) {
            let comma = self.p.prev_span();
            let second = self.expr()?;
            return self.finish_pair(open, comma, first, second);
        }
        self.finish_parenthesized(open, first)
    }

    /// The end of `(e1, e2)`.
    #[inline(never)]
    fn finish_pair(&mut self, open: Span, comma: Span, (e1, d1): Sub, (e2, d2): Sub) -> R<Sub> {
        if self.p.peek() == Some(&Token::Comma) {
            let err = self.p.error_expected("`)`");
            return Err(err
                .with_note("pairs have two components; nest them for more: `(a, (b, c))`")
                .into());
        }
        let close = self.p.expect(&Token::RParen, "`)` after the pair")?;
        // App(App(makePair, e1), e2)
        let depth = (d1 + 2).max(d2 + 1);
        check_depth(depth, open)?;
        let make_pair = Expr::new(ExprKind::Prim(Prim::MakePair), comma);
        let partial = app(make_pair, e1, open.to(comma));
        Ok((app(partial, e2, open.to(close)), depth))
    }

    /// The end of `(e)` or `(e : T)`.
    #[inline(never)]
    fn finish_parenthesized(&mut self, open: Span, (e, depth): Sub) -> R<Sub> {
        if self.p.eat(&Token::Colon) {
            let ty = self.parse_type_annotation()?;
            let close = self
                .p
                .expect(&Token::RParen, "`)` after the type annotation")?;
            check_depth(depth + 1, open)?;
            return Ok((Expr::new(ExprKind::Annot(e, ty), open.to(close)), depth + 1));
        }
        let close = self.p.expect(
            &Token::RParen,
            "`)`, `:` or `,` in the parenthesised expression",
        )?;
        // The node covers its parentheses.
        Ok((Expr::new(e.kind().clone(), open.to(close)), depth))
    }

    /// A name: a bound variable, a primitive (with its dimension, if it takes one) or a free variable.
    fn resolve(&mut self, name: String, span: Span) -> R<Expr> {
        if self.scope.iter().any(|n| **n == *name) {
            return Ok(Expr::new(ExprKind::Var(name.into()), span));
        }
        if DIMENSIONED.contains(&name.as_str()) {
            let (dim, end) = self.parse_dimension(&name, span)?;
            let prim = Prim::from_name(&format!("{name}({dim})")).ok_or_else(|| {
                Diagnostic::new(span.to(end), format!("unknown primitive `{name}({dim})`"))
            })?;
            return Ok(Expr::new(ExprKind::Prim(prim), span.to(end)));
        }
        if let Some(p) = Prim::from_name(&name) {
            return Ok(Expr::new(ExprKind::Prim(p), span));
        }
        Ok(Expr::new(ExprKind::Var(name.into()), span))
    }

    /// The dimension after a dimensioned primitive: `(0)` or `0` (also 1, 2).
    fn parse_dimension(&mut self, name: &str, name_span: Span) -> R<(u8, Span)> {
        let parens = self.p.peek() == Some(&Token::LParen);
        let mark = self.p.mark();
        if parens {
            self.p.bump();
        }
        let dim = match self.p.peek() {
            Some(Token::Int(t)) if t == "0" || t == "1" || t == "2" => t.as_bytes()[0] - b'0',
            _ => {
                let what = format!("the dimension of `{name}` (0, 1 or 2)");
                let err = if self.p.at_end() && !parens {
                    Diagnostic::new(name_span, format!("expected {what} after `{name}`"))
                } else {
                    self.p.error_expected(&what)
                };
                self.p.reset(mark);
                return Err(err
                    .with_note(format!("write `{name}(0)`, `{name}(1)` or `{name}(2)`"))
                    .into());
            }
        };
        self.p.bump();
        if parens {
            self.p.expect(&Token::RParen, "`)` after the dimension")?;
        }
        Ok((dim, self.p.prev_span()))
    }

    /// A numeric literal (the current token), negated if `negative` (then `start` is the `-`).
    fn parse_number(&mut self, negative: bool, start: Span) -> R<Sub> {
        let span = start.to(self.p.span());
        let lit = match self.p.bump() {
            Some(Token::Int(text)) => int_literal(&text, negative),
            Some(Token::Float(text)) => float_literal(&text, negative),
            _ => return Err(self.p.error_expected("a number").into()),
        };
        let lit = lit.map_err(|msg| Diagnostic::new(span, msg))?;
        Ok((Expr::new(ExprKind::Lit(lit), span), 1))
    }
}

/// Nested lambdas, one per parameter, around a body (the first one spans from `fun`).
#[inline(never)]
fn build_lambda(start: Span, params: Vec<(Param, Span)>, (body, body_depth): Sub) -> R<Sub> {
    let depth = body_depth + params.len();
    check_depth(depth, start)?;
    let end = body.span();
    let mut e = body;
    for (i, (param, span)) in params.into_iter().enumerate().rev() {
        let span = if i == 0 { start } else { span };
        let kind = match param {
            Param::Value(x, t) => ExprKind::Lambda(x, t, e),
            Param::Dep(b) => ExprKind::DepLambda(b, e),
        };
        e = Expr::new(kind, span.to(end));
    }
    Ok((e, depth))
}

/// A parameter of `fun`.
enum Param {
    /// A value parameter, maybe with its type.
    Value(Name, Option<Type>),
    /// A type-level parameter.
    Dep(Binder),
}

impl Param {
    fn name(&self) -> &Name {
        match self {
            Param::Value(n, _) => n,
            Param::Dep(b) => &b.name,
        }
    }
}

/// An integer literal `123` or `123u16` (the lexer guarantees digits and a known suffix).
fn int_literal(text: &str, negative: bool) -> Result<Literal, String> {
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, suffix) = text.split_at(digits_end);
    let ty = if suffix.is_empty() {
        ScalarType::Int
    } else {
        ScalarType::from_name(suffix).ok_or_else(|| format!("unknown literal suffix `{suffix}`"))?
    };
    let shown = if negative {
        format!("-{text}")
    } else {
        text.to_string()
    };
    let magnitude: i128 = digits.parse().map_err(|_| {
        format!(
            "integer literal `{shown}` is out of the range of `{}`",
            ty.name()
        )
    })?;
    let value = if negative { -magnitude } else { magnitude };
    let (lo, hi) = match ty {
        // Unsuffixed literals also stand for natural numbers (`split 32`): the full
        // 64-bit range is accepted here and the type checker narrows it.
        ScalarType::Int => (i64::MIN.into(), i64::MAX.into()),
        // Literals are stored as `i64`.
        ScalarType::U64 => (0, i64::MAX.into()),
        _ => ty
            .int_range()
            .ok_or_else(|| format!("`{suffix}` is not an integer type"))?,
    };
    match i64::try_from(value) {
        Ok(v) if (lo..=hi).contains(&value) => Ok(Literal::Int(v, ty)),
        _ => Err(format!(
            "integer literal `{shown}` is out of the range of `{}` ({lo} to {hi})",
            ty.name()
        )),
    }
}

/// A float literal `1.5` (f64), `1.5f` (f32), `1.5f16`, `2e3f32`.
fn float_literal(text: &str, negative: bool) -> Result<Literal, String> {
    let (num, ty) = [
        ("f16", ScalarType::F16),
        ("f32", ScalarType::F32),
        ("f64", ScalarType::F64),
        ("f", ScalarType::F32),
    ]
    .into_iter()
    .find_map(|(s, t)| text.strip_suffix(s).map(|n| (n, t)))
    .unwrap_or((text, ScalarType::F64));
    let shown = if negative {
        format!("-{text}")
    } else {
        text.to_string()
    };
    let bad = || format!("float literal `{shown}` is not a valid `{}`", ty.name());
    let value: f64 = match ty {
        ScalarType::F16 => {
            let v: f32 = num.parse().map_err(|_| bad())?;
            half::f16::from_f32(v).to_f64()
        }
        ScalarType::F32 => f64::from(num.parse::<f32>().map_err(|_| bad())?),
        _ => num.parse::<f64>().map_err(|_| bad())?,
    };
    if !value.is_finite() {
        return Err(format!(
            "float literal `{shown}` is out of the range of `{}`",
            ty.name()
        ));
    }
    Ok(Literal::Float(if negative { -value } else { value }, ty))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse_type;
    use crate::types::Kind;

    fn parse(src: &str) -> Expr {
        parse_expr(src).unwrap_or_else(|e| panic!("{src}: {e}"))
    }

    fn prim(p: Prim) -> Expr {
        Expr::new(ExprKind::Prim(p), Span::default())
    }
    fn var(x: &str) -> Expr {
        Expr::new(ExprKind::Var(x.into()), Span::default())
    }
    fn ap(f: Expr, a: Expr) -> Expr {
        app(f, a, Span::default())
    }
    fn ap2(f: Expr, a: Expr, b: Expr) -> Expr {
        ap(ap(f, a), b)
    }
    fn lam(x: &str, b: Expr) -> Expr {
        Expr::new(ExprKind::Lambda(x.into(), None, b), Span::default())
    }
    fn int(v: i64) -> Expr {
        Expr::new(
            ExprKind::Lit(Literal::Int(v, ScalarType::Int)),
            Span::default(),
        )
    }
    fn err(src: &str) -> Diagnostic {
        match parse_program(src) {
            Ok(p) => panic!("{src} parsed: {p:?}"),
            Err(e) => e,
        }
    }
    fn err_span(src: &str) -> (String, &str) {
        let e = err(src);
        (e.message.clone(), &src[e.span.range()])
    }

    const DESIGN_EXAMPLES: &str = "
def dot = fun xs ys => zip xs ys |> map (fun p => fst p * snd p) |> reduce add 0.0f

def mm : {m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32 =
  fun a b => a |> map (fun row => transpose b |> map (fun col => dot row col))

def jacobi3 : {n: nat} -> n.f32 -> n.f32 =
  fun xs => xs |> padClamp 1 1 |> slide 3 1 |> map (fun nbh => reduce add 0.0f nbh)
";

    #[test]
    fn design_examples_parse() {
        let p = parse_program(DESIGN_EXAMPLES).unwrap();
        let names: Vec<&str> = p.defs.iter().map(|d| &*d.name).collect();
        assert_eq!(names, ["dot", "mm", "jacobi3"]);
        assert!(p.defs[0].annot.is_none());
        assert_eq!(
            p.defs[1].annot,
            Some(parse_type("{m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32").unwrap())
        );
        // dot = fun xs ys => reduce add 0.0f (map (fun p => mul (fst p) (snd p)) (zip xs ys))
        let f32_zero = Expr::new(
            ExprKind::Lit(Literal::Float(0.0, ScalarType::F32)),
            Span::default(),
        );
        let expected = lam(
            "xs",
            lam(
                "ys",
                ap(
                    ap2(prim(Prim::Reduce), prim(Prim::Add), f32_zero),
                    ap(
                        ap(
                            prim(Prim::Map),
                            lam(
                                "p",
                                ap2(
                                    prim(Prim::Mul),
                                    ap(prim(Prim::Fst), var("p")),
                                    ap(prim(Prim::Snd), var("p")),
                                ),
                            ),
                        ),
                        ap2(prim(Prim::Zip), var("xs"), var("ys")),
                    ),
                ),
            ),
        );
        assert!(p.defs[0].body.alpha_eq(&expected), "{:?}", p.defs[0].body);
        // `dot` in mm is a free variable (a definition), `transpose` a primitive.
        assert_eq!(p.defs[1].body.free_vars(), vec![Name::from("dot")]);
        // spans
        let d = &p.defs[2];
        assert_eq!(&DESIGN_EXAMPLES[d.name_span.range()], "jacobi3");
        assert!(DESIGN_EXAMPLES[d.span.range()].starts_with("def jacobi3"));
        assert!(DESIGN_EXAMPLES[d.span.range()].ends_with("nbh)"));
        assert!(DESIGN_EXAMPLES[d.body.span().range()].starts_with("fun xs"));
    }

    #[test]
    fn precedence() {
        let (a, b, c) = (var("a"), var("b"), var("c"));
        let add = || prim(Prim::Add);
        let mul = || prim(Prim::Mul);
        assert_eq!(
            parse("a + b * c"),
            ap2(add(), a.clone(), ap2(mul(), b.clone(), c.clone()))
        );
        assert_eq!(
            parse("a * b + c"),
            ap2(add(), ap2(mul(), a.clone(), b.clone()), c.clone())
        );
        assert_eq!(
            parse("a - b - c"),
            ap2(
                prim(Prim::Sub),
                ap2(prim(Prim::Sub), a.clone(), b.clone()),
                c.clone()
            )
        );
        assert_eq!(
            parse("f a + g b"),
            ap2(add(), ap(var("f"), a.clone()), ap(var("g"), b.clone()))
        );
        assert_eq!(
            parse("a + b < c"),
            ap2(prim(Prim::Lt), ap2(add(), a.clone(), b.clone()), c.clone())
        );
        assert_eq!(
            parse("a == b % c"),
            ap2(
                prim(Prim::Equal),
                a.clone(),
                ap2(prim(Prim::Mod), b.clone(), c.clone())
            )
        );
        // pipes are left-associative and bind loosest
        assert_eq!(parse("x |> f |> g"), ap(var("g"), ap(var("f"), var("x"))));
        assert_eq!(
            parse("a + b |> f"),
            ap(var("f"), ap2(add(), a.clone(), b.clone()))
        );
        // application
        assert_eq!(parse("f(x) y"), ap2(var("f"), var("x"), var("y")));
        assert_eq!(parse("f (x) (y)"), ap2(var("f"), var("x"), var("y")));
        // unary
        assert_eq!(parse("-f x"), ap(prim(Prim::Neg), ap(var("f"), var("x"))));
        assert_eq!(
            parse("-x * y"),
            ap2(mul(), ap(prim(Prim::Neg), var("x")), var("y"))
        );
        assert_eq!(parse("!b"), ap(prim(Prim::Not), var("b")));
        assert_eq!(parse("-3"), int(-3));
        assert_eq!(parse("a - 3"), ap2(prim(Prim::Sub), a.clone(), int(3)));
        assert_eq!(parse("a - -3"), ap2(prim(Prim::Sub), a.clone(), int(-3)));
        // fun extends to the right, also as the last argument or operand
        assert_eq!(
            parse("fun x => x + 1 |> f"),
            lam("x", ap(var("f"), ap2(add(), var("x"), int(1))))
        );
        assert_eq!(
            parse("xs |> map fun x => x"),
            ap(ap(prim(Prim::Map), lam("x", var("x"))), var("xs"))
        );
        assert_eq!(parse("xs |> fun x => x"), ap(lam("x", var("x")), var("xs")));
        assert_eq!(parse("(fun x => x) y"), ap(lam("x", var("x")), var("y")));
    }

    #[test]
    fn pairs_and_annotations() {
        let t = parse_type("f32").unwrap();
        let e = parse("(x : f32)");
        assert!(matches!(e.kind(), ExprKind::Annot(_, ty) if *ty == t));
        assert_eq!(
            parse("(a, b + c)"),
            ap2(
                prim(Prim::MakePair),
                var("a"),
                ap2(prim(Prim::Add), var("b"), var("c"))
            )
        );
        assert_eq!(
            parse("(fun x => x, y)"),
            ap2(prim(Prim::MakePair), lam("x", var("x")), var("y"))
        );
        let e = parse("(fun x => x : f32 -> f32)");
        assert!(
            matches!(e.kind(), ExprKind::Annot(l, _) if matches!(l.kind(), ExprKind::Lambda(..)))
        );
    }

    #[test]
    fn lambdas_typed_and_dependent() {
        let e = parse("fun (x y: f32) z => x");
        let ExprKind::Lambda(x, Some(t), body) = e.kind() else {
            panic!("{e:?}")
        };
        assert_eq!((&**x, t.to_string().as_str()), ("x", "f32"));
        let ExprKind::Lambda(y, Some(_), body) = body.kind() else {
            panic!()
        };
        assert_eq!(&**y, "y");
        assert!(matches!(body.kind(), ExprKind::Lambda(z, None, _) if &**z == "z"));

        let e = parse("fun (n: nat) (a b: data) (s: addrSpace) (f: nat -> nat) (g: nat -> data) (v: n.f32) => split n v");
        let mut kinds = Vec::new();
        let mut cur = e;
        while let ExprKind::DepLambda(b, body) = cur.kind() {
            kinds.push(b.kind);
            cur = body.clone();
        }
        assert_eq!(
            kinds,
            [
                Kind::Nat,
                Kind::Data,
                Kind::Data,
                Kind::AddrSpace,
                Kind::NatToNat,
                Kind::NatToData
            ]
        );
        let ExprKind::Lambda(_, Some(t), body) = cur.kind() else {
            panic!()
        };
        assert_eq!(t.to_string(), "n.f32");
        // `n` in expression position is a variable; the checker makes it a nat argument.
        assert_eq!(*body, ap2(prim(Prim::Split), var("n"), var("v")));
        let e = err("def f = fun (n: nat -> f32) => n");
        assert!(e.message.contains("kind"), "{e}");
    }

    #[test]
    fn dimensioned_primitives() {
        assert_eq!(
            parse("mapGlobal(0) f"),
            ap(prim(Prim::MapGlobal0), var("f"))
        );
        assert_eq!(parse("mapLocal 1 f"), ap(prim(Prim::MapLocal1), var("f")));
        assert_eq!(parse("mapThread (2)"), prim(Prim::MapThread2));
        assert_eq!(
            parse("map mapBlock(1)"),
            ap(prim(Prim::Map), prim(Prim::MapBlock1))
        );
        let (m, s) = err_span("def f = mapGlobal(3) g");
        assert!(m.contains("dimension of `mapGlobal`"), "{m}");
        assert_eq!(s, "3");
        let (m, s) = err_span("def f = mapWorkGroup g");
        assert!(m.contains("dimension"), "{m}");
        assert_eq!(s, "g");
        let (m, s) = err_span("def f = mapWorkGroup");
        assert!(m.contains("dimension"), "{m}");
        assert_eq!(s, "mapWorkGroup");
        let (_, s) = err_span("def f = mapGlobal(0 g");
        assert_eq!(s, "g");
    }

    #[test]
    fn shadowing() {
        assert_eq!(parse("fun map => map f"), lam("m", ap(var("m"), var("f"))));
        assert_eq!(
            parse("fun mapGlobal => mapGlobal 0"),
            lam("m", ap(var("m"), int(0)))
        );
        assert_eq!(
            parse("(fun map => map) map"),
            ap(lam("m", var("m")), prim(Prim::Map))
        );
        // the scope ends with the lambda
        assert_eq!(
            parse("(fun zip => zip, zip)"),
            ap2(prim(Prim::MakePair), lam("z", var("z")), prim(Prim::Zip))
        );
        assert_eq!(parse("fun (split: nat) => split"), {
            Expr::new(
                ExprKind::DepLambda(Binder::new("s", Kind::Nat), var("s")),
                Span::default(),
            )
        });
    }

    #[test]
    fn composition() {
        let e = parse("f >> g >> h");
        // (f >> g) >> h = fun b => h ((fun a => g (f a)) b)
        let inner = lam("a", ap(var("g"), ap(var("f"), var("a"))));
        assert_eq!(e, lam("b", ap(var("h"), ap(inner, var("b")))));
        // the fresh name avoids every identifier of the source
        let e = parse("fun x_0 => x_0 >> x_1");
        let ExprKind::Lambda(_, _, body) = e.kind() else {
            panic!()
        };
        let ExprKind::Lambda(x, _, _) = body.kind() else {
            panic!()
        };
        assert_eq!(&**x, "x_2");
        // `>>` binds tighter than `|>`, looser than arithmetic
        assert_eq!(
            parse("x |> f >> g"),
            ap(lam("a", ap(var("g"), ap(var("f"), var("a")))), var("x"))
        );
    }

    #[test]
    fn literals() {
        let lit = |src: &str| match parse(src).kind() {
            ExprKind::Lit(l) => l.clone(),
            k => panic!("{k:?}"),
        };
        assert_eq!(lit("true"), Literal::Bool(true));
        assert_eq!(lit("3u16"), Literal::Int(3, ScalarType::U16));
        assert_eq!(lit("-128i8"), Literal::Int(-128, ScalarType::I8));
        assert_eq!(lit("1.5"), Literal::Float(1.5, ScalarType::F64));
        assert_eq!(lit("1.5f"), Literal::Float(1.5, ScalarType::F32));
        assert_eq!(
            lit("0.1f32"),
            Literal::Float(f64::from(0.1f32), ScalarType::F32)
        );
        assert_eq!(lit("2e3f16"), Literal::Float(2000.0, ScalarType::F16));
        assert_eq!(lit("-2.5f64"), Literal::Float(-2.5, ScalarType::F64));
        assert_eq!(
            lit("-9223372036854775808"),
            Literal::Int(i64::MIN, ScalarType::Int)
        );
        for bad in [
            "256u8",
            "-1u32",
            "128i8",
            "9223372036854775808",
            "1e39f",
            "1e400",
            "70000f16",
            "99999999999999999999999999999999999999999u64",
        ] {
            let src = format!("def x = {bad}");
            let e = err(&src);
            assert!(e.message.contains("range"), "{bad}: {e}");
            assert_eq!(&src[e.span.range()], bad);
        }
    }

    #[test]
    fn error_spans() {
        let cases = [
            (
                "def f = fun x -> x",
                "->",
                "expected another parameter or `=>`",
            ),
            ("def f = (a b", "", "expected `)`"),
            ("def f = a +", "", "expected an operand"),
            ("def f = a + * b", "*", "expected an operand"),
            ("def f x = x", "x", "expected `=` or `:`"),
            ("def f = g )", ")", "expected an operator, the next `def`"),
            ("def = 3", "=", "expected the name of the definition"),
            ("f = 3", "f", "expected `def`"),
            ("def f = ()", ")", "expected an expression inside"),
            ("def f = (a, b, c)", ",", "expected `)`"),
            ("def f : f32 -> = x", "=", "expected a data type"),
            ("def map = 3", "map", "is a primitive"),
            ("def f = fun => x", "=>", "expected a parameter name"),
            ("def f = x $ y", "$", "unexpected character"),
            ("def f = fun (x) => x", ")", "expected `:`"),
        ];
        for (src, at, msg) in cases {
            let e = err(src);
            assert!(e.message.contains(msg), "{src}: {}", e.message);
            assert_eq!(&src[e.span.range()], at, "{src}: {}", e.message);
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let n = 100_000;
        for src in [
            format!("def f = {}x{}", "(".repeat(n), ")".repeat(n)),
            format!("def f = {}x", "fun x => ".repeat(n)),
            format!("def f = {}x", "-".repeat(n)),
            format!("def f = {}x", "!".repeat(n)),
            format!("def f = {}x", "f (".repeat(n)),
            format!("def f = (x : {}f32{})", "(".repeat(n), ")".repeat(n)),
            format!("def f = (x : {}f32)", "f32 -> ".repeat(n)),
            format!("def f : {}f32 = x", "idx[".repeat(n)),
            format!("def f = fun (x: {}2) => x", "2^".repeat(n)),
            // long chains build deep trees without deep recursion of the parser
            format!("def f = x{}", " + x".repeat(n)),
            format!("def f = x{}", " |> f".repeat(n)),
            format!("def f = x{}", " >> f".repeat(n)),
            format!("def f = f{}", " x".repeat(n)),
            format!("def f = fun{} => x", " x".repeat(n)),
            format!("def f = fun x => x{}", " |> fun x => x".repeat(n)),
        ] {
            let e = err(&src);
            assert!(e.message.contains("too deeply"), "{}", e.message);
        }
        // just below the limits works
        let depth = MAX_NESTING - 2;
        parse(&format!("{}x{}", "(".repeat(depth), ")".repeat(depth)));
        parse(&format!("x{}", " + x".repeat(MAX_DEPTH / 2 - 1)));
        parse(&format!("f{}", " x".repeat(MAX_DEPTH - 1)));
    }

    /// Every recursion path of the parser at its deepest, with the deepest type at
    /// the bottom (`cargo test` runs tests on threads with 2 MiB of stack).
    #[test]
    fn nesting_just_below_the_limits_fits_on_a_test_thread_stack() {
        let k = MAX_TYPE_NESTING / 2 - 1;
        let types = [
            format!("{}f32{}", "(".repeat(2 * k), ")".repeat(2 * k)),
            format!("{}f32", "f32 -> ".repeat(2 * k)),
            format!("({}2{}).f32", "(".repeat(2 * k - 2), ")".repeat(2 * k - 2)),
            format!("idx[{}2]", "2^".repeat(2 * k - 1)),
            format!("{}f32{}", "vec[".repeat(k), ", 4]".repeat(k)),
            format!("{}f32{}", "((f32, ".repeat(k), "))".repeat(k)),
        ];
        let d = MAX_NESTING - 2;
        for ty in &types {
            let leaf = format!("(x : {ty})");
            for src in [
                format!("{}{leaf}{}", "(".repeat(d), ")".repeat(d)),
                format!("{}{leaf}", "fun x => ".repeat(d)),
                format!("{}{leaf}", "-".repeat(d)),
                format!("{}{leaf}{}", "f (".repeat(d), ")".repeat(d)),
                format!("{}{leaf}{}", "(a, ".repeat(d), ")".repeat(d)),
                format!(
                    "{}{leaf}{}",
                    "(a |> map fun x => g (".repeat(d / 2),
                    "))".repeat(d / 2)
                ),
                format!(
                    "{}{leaf}{}",
                    "(a + - b * f (".repeat(d / 2),
                    "))".repeat(d / 2)
                ),
            ] {
                let src = format!("def f = {src}");
                if let Err(e) = parse_program(&src) {
                    assert!(e.message.contains("too deeply"), "{e}");
                }
            }
        }
    }

    #[test]
    fn empty_program() {
        assert!(parse_program("  // nothing\n").unwrap().defs.is_empty());
        assert!(parse_expr("").is_err());
    }
}
