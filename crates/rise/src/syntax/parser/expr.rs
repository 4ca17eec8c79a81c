//! Expressions: precedence climbing over the infix operators, prefix operators,
//! applications, lambdas and atoms, each node with the depth of its tree (the grammar is in
//! [`super`]).

use super::literals::{float_literal, int_literal};
use super::{check_depth, too_deep, ExprParser, MAX_NESTING, R};
use crate::expr::{Expr, ExprKind, Literal};
use crate::primitives::{Prim, DIMENSIONED};
use crate::span::{Diagnostic, Span};
use crate::syntax::lexer::Token;
use crate::types::{Binder, Name, Type};

/// A parsed expression and the depth of its tree.
type Sub = (Expr, usize);

/// The infix operators.
#[derive(Clone, Copy)]
enum BinOp {
    Pipe,
    Compose,
    Prim(Prim),
}

/// The binary operator a token denotes, with its precedence (higher binds tighter): C's
/// order below `>>>` and `|>`.
fn binary_op(t: &Token) -> Option<(u8, BinOp)> {
    let prim = |prec, p| (prec, BinOp::Prim(p));
    Some(match t {
        Token::Pipe => (1, BinOp::Pipe),
        Token::Compose => (2, BinOp::Compose),
        Token::OrOr => prim(3, Prim::Or),
        Token::AndAnd => prim(4, Prim::And),
        Token::Bar => prim(5, Prim::BitOr),
        Token::Caret => prim(6, Prim::BitXor),
        Token::Amp => prim(7, Prim::BitAnd),
        Token::EqEq => prim(8, Prim::Equal),
        Token::NotEq => prim(8, Prim::NotEqual),
        Token::Lt => prim(9, Prim::Lt),
        Token::Gt => prim(9, Prim::Gt),
        Token::Le => prim(9, Prim::Le),
        Token::Ge => prim(9, Prim::Ge),
        Token::Shl => prim(10, Prim::Shl),
        Token::Shr => prim(10, Prim::Shr),
        Token::Plus => prim(11, Prim::Add),
        Token::Minus => prim(11, Prim::Sub),
        Token::Star => prim(12, Prim::Mul),
        Token::Slash => prim(12, Prim::Div),
        Token::Percent => prim(12, Prim::Mod),
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

/// The application node `f a`.
pub(super) fn app(f: Expr, a: Expr, span: Span) -> Expr {
    Expr::new(ExprKind::App(f, a), span)
}

impl ExprParser {
    /// A whole expression (lowest precedence), one nesting level deeper.
    pub(super) fn parse_expr(&mut self) -> R<Expr> {
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

    /// `-e`, `!e`, `~e` (any number of them) before an application; `-3` is a literal.
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
                Some(Token::Minus) if self.negative_special_float() => {
                    self.p.bump();
                    let end = self.p.span();
                    let lit = match self.p.bump() {
                        Some(Token::Ident(name)) => special_float(&name),
                        _ => None,
                    };
                    let Some(Literal::Float(v, t)) = lit else {
                        return Err(self.p.error_expected("`inf` or `nan`").into());
                    };
                    let e = Expr::new(ExprKind::Lit(Literal::Float(-v, t)), span.to(end));
                    break Some((e, 1));
                }
                Some(Token::Minus) => prefixes.push((Prim::Neg, span)),
                Some(Token::Bang) => prefixes.push((Prim::Not, span)),
                Some(Token::Tilde) => prefixes.push((Prim::BitNot, span)),
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

    /// Whether the `-` at the cursor is followed by a literal `inf...` or `nan...` (not a
    /// variable or definition of that name): `-inff` is a literal, as `-3` is.
    fn negative_special_float(&self) -> bool {
        match self.p.peek_at(1) {
            Some(Token::Ident(name)) => {
                special_float(name).is_some()
                    && !self.scope.iter().any(|n| **n == **name)
                    && !self.def_names.contains(name)
            }
            _ => false,
        }
    }

    /// `f a b ...` (from `head` if given), with an optional trailing `fun` argument; or a lambda.
    fn parse_app(&mut self, head: Option<Sub>) -> R<Sub> {
        let (mut head, mut depth) = match head {
            Some(h) => h,
            None if self.p.peek() == Some(&Token::Fun) => return self.parse_lambda(),
            None if self.at_let() => return self.parse_let(),
            None => self.parse_atom()?,
        };
        loop {
            let at = self.p.span();
            let (arg, d) = match self.p.peek() {
                Some(Token::Ident(w)) if w == "in" && self.lets_open > 0 => {
                    return Ok((head, depth))
                }
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

    /// Whether `let NAME =` starts here (`let` alone is the primitive `let v f`).
    fn at_let(&self) -> bool {
        matches!(self.p.peek(), Some(Token::Ident(w)) if w == "let")
            && matches!(self.p.peek_at(1), Some(Token::Ident(_)))
            && self.p.peek_at(2) == Some(&Token::Eq)
    }

    /// `let x = e in body`: the primitive `let e (fun x => body)`, which computes `e` once
    /// and stores it (generated code too: it is not inlined into every use of `x`).
    fn parse_let(&mut self) -> R<Sub> {
        let start = self.p.span();
        self.p.bump();
        let (name, name_span) = self.p.ident("the name `let` binds")?;
        self.p.expect(&Token::Eq, "`=`")?;
        self.lets_open += 1;
        let value = self.expr();
        self.lets_open -= 1;
        let (value, value_depth) = value?;
        match self.p.peek() {
            Some(Token::Ident(w)) if w == "in" => {
                self.p.bump();
            }
            _ => {
                return Err(self
                    .p
                    .error_expected("`in` and the body of the `let`")
                    .into())
            }
        }
        self.scope.push(name.clone().into());
        let body = self.expr();
        self.scope.pop();
        let params = vec![(Param::Value(name.into(), None), name_span)];
        let (lambda, lambda_depth) = build_lambda(start, params, body?)?;
        let depth = lambda_depth.max(value_depth) + 1;
        check_depth(depth, start)?;
        let span = start.to(lambda.span()).to(value.span());
        let let_prim = Expr::new(ExprKind::Prim(Prim::Let), start);
        let bound = app(let_prim, value, span);
        Ok((app(bound, lambda, span), depth + 1))
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
        if self.scope.iter().any(|n| **n == *name) || self.def_names.contains(&name) {
            return Ok(Expr::new(ExprKind::Var(name.into()), span));
        }
        if let Some(lit) = special_float(&name) {
            return Ok(Expr::new(ExprKind::Lit(lit), span));
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
        if let Some(f) = self.foreign.get(&name) {
            return Ok(Expr::new(ExprKind::Foreign(f.clone()), span));
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
        // the pipeline's number of stages, or a dimension
        let (what, allowed): (&str, &[u8]) = if name == "reduceSeqPipelined" {
            ("the number of stages", &[2, 3, 4])
        } else {
            ("the dimension", &[0, 1, 2])
        };
        let dim = match self.p.peek() {
            Some(Token::Int(t)) if t.len() == 1 && allowed.contains(&(t.as_bytes()[0] - b'0')) => {
                t.as_bytes()[0] - b'0'
            }
            _ => {
                let [a, b, c] = [allowed[0], allowed[1], allowed[2]];
                let what = format!("{what} of `{name}` ({a}, {b} or {c})");
                let err = if self.p.at_end() && !parens {
                    Diagnostic::new(name_span, format!("expected {what} after `{name}`"))
                } else {
                    self.p.error_expected(&what)
                };
                self.p.reset(mark);
                return Err(err
                    .with_note(format!(
                        "write `{name}({a})`, `{name}({b})` or `{name}({c})`"
                    ))
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

/// The literals `inf` and `nan` with a float type suffix, as numbers take them: `inf` and
/// `nan` are `f64`, `inff`/`nanf` (or `inff32`) `f32`, `inff16`, `infbf16`, `inff64`, ...
/// (`-inff` is a negation). `None` for any other name.
pub(super) fn special_float(name: &str) -> Option<Literal> {
    use crate::types::ScalarType as S;
    let (value, suffix) = if let Some(rest) = name.strip_prefix("inf") {
        (f64::INFINITY, rest)
    } else {
        (f64::NAN, name.strip_prefix("nan")?)
    };
    let ty = match suffix {
        "" | "f64" => S::F64,
        "f" | "f32" => S::F32,
        "f16" => S::F16,
        "bf16" => S::Bf16,
        _ => return None,
    };
    Some(Literal::Float(value, ty))
}
