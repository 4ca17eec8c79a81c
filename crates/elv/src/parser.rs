//! A recursive-descent parser from tokens to the syntax tree.
//!
//! Precedence, tightest first: application `f(args)`; `@` (left-associative);
//! `;` and `;;` (right-associative, one level); `<+` (right-associative).
//! Chains of operators are collected in loops, so only brackets make the parser
//! recurse (at most [`MAX_NESTING`] deep), and every tree is at most
//! [`MAX_DEPTH`] deep.

use crate::ast::{Def, Expr, ExprKind, Op};
use crate::lexer::Token;
use diagnostics::{Diagnostic, Span};

/// The deepest expression tree accepted (operator chains count as nesting).
pub(crate) const MAX_DEPTH: usize = 256;
/// The most brackets (parentheses, argument lists, lists) open at once.
const MAX_NESTING: usize = 64;

type PResult<T> = Result<T, Diagnostic>;

struct Parser<'t> {
    toks: &'t [(Token, Span)],
    pos: usize,
    /// The span just past the last token.
    eof: Span,
    /// Open brackets, to bound the parser's own recursion.
    nesting: usize,
}

/// Parses a whole file: a sequence of definitions. After an error the parser
/// skips to the next `def`, so that several errors are reported at once.
pub(crate) fn parse_file(toks: &[(Token, Span)], len: usize) -> (Vec<Def>, Vec<Diagnostic>) {
    let mut p = Parser::new(toks, len);
    let mut defs = Vec::new();
    let mut errors = Vec::new();
    while p.pos < toks.len() {
        let start = p.pos;
        match p.def() {
            Ok(d) => defs.push(d),
            Err(e) => {
                errors.push(e);
                p.pos = p.pos.max(start + 1);
                while !matches!(p.peek(), None | Some(Token::Def)) {
                    p.pos += 1;
                }
            }
        }
    }
    (defs, errors)
}

/// Parses a lone expression that must span the whole input.
pub(crate) fn parse_expression(toks: &[(Token, Span)], len: usize) -> PResult<Expr> {
    let mut p = Parser::new(toks, len);
    let e = p.expr()?;
    match p.peek() {
        None => Ok(e),
        Some(t) => Err(p.trailing(t.clone(), "the expression")),
    }
}

impl<'t> Parser<'t> {
    fn new(toks: &'t [(Token, Span)], len: usize) -> Parser<'t> {
        Parser {
            toks,
            pos: 0,
            eof: Span::new(len, len),
            nesting: 0,
        }
    }

    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn here(&self) -> Span {
        self.toks.get(self.pos).map_or(self.eof, |t| t.1)
    }

    fn bump(&mut self) -> Span {
        let span = self.here();
        self.pos += 1;
        span
    }

    fn found(&self) -> String {
        self.peek()
            .map_or_else(|| "the end of the input".to_string(), Token::describe)
    }

    fn error(&self, expected: &str) -> Diagnostic {
        Diagnostic::new(
            self.here(),
            format!("expected {expected}, found {}", self.found()),
        )
    }

    fn eat(&mut self, tok: &Token) -> Option<Span> {
        (self.peek() == Some(tok)).then(|| self.bump())
    }

    fn expect(&mut self, tok: &Token, expected: &str) -> PResult<Span> {
        self.eat(tok).ok_or_else(|| self.error(expected))
    }

    fn ident(&mut self, expected: &str) -> PResult<(String, Span)> {
        match self.peek() {
            Some(Token::Ident(name)) => {
                let name = name.clone();
                Ok((name, self.bump()))
            }
            _ => Err(self.error(expected)),
        }
    }

    /// What follows a complete expression that cannot continue it.
    fn trailing(&self, tok: Token, what: &str) -> Diagnostic {
        let mut d = Diagnostic::new(
            self.here(),
            format!("unexpected {} after {what}", tok.describe()),
        )
        .with_label("expected an operator (`;`, `;;`, `<+`, `@`) or a new `def`");
        if matches!(
            tok,
            Token::Ident(_) | Token::Int(_) | Token::LBracket | Token::LParen
        ) {
            d = d.with_note(
                "arguments are written in parentheses: `f(a, b)`, not `f a b`; \
                 a sequence is written `s ; t`",
            );
        }
        d
    }

    fn def(&mut self) -> PResult<Def> {
        if self.peek() != Some(&Token::Def) {
            return Err(self.error("`def`").with_note(
                "a strategy file is a sequence of definitions `def NAME = ...` \
                 or `def NAME(p1, p2) = ...`",
            ));
        }
        self.bump();
        let (name, name_span) = self.ident("a name after `def`")?;
        let mut params = Vec::new();
        if let Some(open) = self.eat(&Token::LParen) {
            if self.peek() == Some(&Token::RParen) {
                return Err(
                    Diagnostic::new(open.to(self.here()), "empty parameter list").with_note(
                        format!("a definition without parameters is written `def {name} = ...`"),
                    ),
                );
            }
            loop {
                params.push(self.ident("a parameter name")?);
                if self.eat(&Token::RParen).is_some() {
                    break;
                }
                self.expect(&Token::Comma, "`,` or `)` in the parameter list")?;
            }
        }
        self.expect(&Token::Eq, &format!("`=` after `def {name}`"))?;
        let body = self.expr()?;
        match self.peek() {
            None | Some(Token::Def) => Ok(Def {
                name,
                name_span,
                params,
                body,
            }),
            Some(t) => Err(self.trailing(
                t.clone(),
                &format!("the body of the definition of `{name}`"),
            )),
        }
    }

    /// `seq ( '<+' seq )*`, right-associative.
    fn expr(&mut self) -> PResult<Expr> {
        let mut operands = vec![self.seq()?];
        let mut ops = Vec::new();
        while let Some(span) = self.eat(&Token::LChoice) {
            ops.push((Op::Choice, span));
            operands.push(self.seq()?);
        }
        fold_right(operands, ops)
    }

    /// `at ( (';' | ';;') at )*`, right-associative.
    fn seq(&mut self) -> PResult<Expr> {
        let mut operands = vec![self.at()?];
        let mut ops = Vec::new();
        loop {
            let op = match self.peek() {
                Some(Token::Semi) => Op::Seq,
                Some(Token::SemiSemi) => Op::NfSeq,
                _ => break,
            };
            ops.push((op, self.bump()));
            operands.push(self.at()?);
        }
        fold_right(operands, ops)
    }

    /// `postfix ( '@' postfix )*`, left-associative.
    fn at(&mut self) -> PResult<Expr> {
        let mut left = self.postfix()?;
        while let Some(op_span) = self.eat(&Token::At) {
            let right = self.postfix()?;
            left = binary(Op::At, op_span, left, right)?;
        }
        Ok(left)
    }

    /// `atom ( '(' args ')' )*`
    fn postfix(&mut self) -> PResult<Expr> {
        let mut e = self.atom()?;
        while let Some(open) = self.eat(&Token::LParen) {
            if self.peek() == Some(&Token::RParen) {
                let what = e.as_name().unwrap_or("a traversal").to_string();
                return Err(Diagnostic::new(open.to(self.here()), "empty argument list")
                    .with_note(format!(
                        "write `{what}` without parentheses to refer to it without arguments"
                    )));
            }
            let (args, close) = self.nested(open, |p| {
                let mut args = vec![p.expr()?];
                while p.eat(&Token::Comma).is_some() {
                    args.push(p.expr()?);
                }
                let close = p.expect(&Token::RParen, "`,` or `)` after an argument")?;
                Ok((args, close))
            })?;
            let span = e.span.to(close);
            let depth = 1 + args.iter().map(|a| a.depth).max().unwrap_or(0).max(e.depth);
            e = node(
                ExprKind::Call {
                    callee: Box::new(e),
                    args,
                },
                span,
                depth,
            )?;
        }
        Ok(e)
    }

    fn atom(&mut self) -> PResult<Expr> {
        match self.peek().cloned() {
            Some(Token::Ident(name)) => {
                let span = self.bump();
                node(ExprKind::Name(name), span, 1)
            }
            Some(Token::Int(text)) => {
                let span = self.bump();
                match text.parse::<i64>() {
                    Ok(n) => node(ExprKind::Int(n), span, 1),
                    Err(_) => Err(Diagnostic::new(span, "integer literal out of range")
                        .with_label(format!(
                            "integers lie between {} and {}",
                            i64::MIN,
                            i64::MAX
                        ))),
                }
            }
            Some(Token::LBracket) => {
                let open = self.bump();
                let (items, close) = self.nested(open, |p| {
                    let mut items = Vec::new();
                    if let Some(close) = p.eat(&Token::RBracket) {
                        return Ok((items, close));
                    }
                    loop {
                        items.push(p.expr()?);
                        if let Some(close) = p.eat(&Token::RBracket) {
                            return Ok((items, close));
                        }
                        p.expect(&Token::Comma, "`,` or `]` in a list")?;
                    }
                })?;
                let depth = 1 + items.iter().map(|a| a.depth).max().unwrap_or(0);
                node(ExprKind::List(items), open.to(close), depth)
            }
            Some(Token::LParen) => {
                let open = self.bump();
                let (mut e, close) = self.nested(open, |p| {
                    let e = p.expr()?;
                    let close = p.expect(&Token::RParen, "`)`")?;
                    Ok((e, close))
                })?;
                // The parentheses belong to the expression, for error messages.
                e.span = open.to(close);
                Ok(e)
            }
            _ => Err(self.error("an expression")),
        }
    }

    /// Runs `f` one bracket deeper, refusing to go deeper than [`MAX_NESTING`].
    fn nested<T>(&mut self, open: Span, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.nesting >= MAX_NESTING {
            return Err(Diagnostic::new(
                open,
                format!("brackets nested too deeply (more than {MAX_NESTING} levels)"),
            )
            .with_note("split the expression into several definitions"));
        }
        self.nesting += 1;
        let r = crate::with_stack(|| f(self));
        self.nesting -= 1;
        r
    }
}

fn too_deep(span: Span) -> Diagnostic {
    Diagnostic::new(
        span,
        format!("expression nested too deeply (more than {MAX_DEPTH} levels)"),
    )
    .with_note("split it into several definitions")
}

fn node(kind: ExprKind, span: Span, depth: usize) -> PResult<Expr> {
    if depth > MAX_DEPTH {
        return Err(too_deep(span));
    }
    Ok(Expr { kind, span, depth })
}

fn binary(op: Op, op_span: Span, left: Expr, right: Expr) -> PResult<Expr> {
    let span = left.span.to(right.span);
    let depth = 1 + left.depth.max(right.depth);
    node(
        ExprKind::Binary {
            op,
            op_span,
            left: Box::new(left),
            right: Box::new(right),
        },
        span,
        depth,
    )
}

/// `e0 op0 e1 op1 e2` as `e0 op0 (e1 op1 e2)`.
fn fold_right(mut operands: Vec<Expr>, mut ops: Vec<(Op, Span)>) -> PResult<Expr> {
    let mut acc = match operands.pop() {
        Some(e) => e,
        None => return Err(Diagnostic::new(Span::default(), "empty expression")),
    };
    while let (Some(left), Some((op, op_span))) = (operands.pop(), ops.pop()) {
        acc = binary(op, op_span, left, acc)?;
    }
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;

    /// The tree with explicit parentheses around every operator and call.
    fn show(e: &Expr) -> String {
        match &e.kind {
            ExprKind::Name(n) => n.clone(),
            ExprKind::Int(i) => i.to_string(),
            ExprKind::List(items) => {
                let items: Vec<String> = items.iter().map(show).collect();
                format!("[{}]", items.join(", "))
            }
            ExprKind::Call { callee, args } => {
                let args: Vec<String> = args.iter().map(show).collect();
                format!("{}({})", show(callee), args.join(", "))
            }
            ExprKind::Binary {
                op, left, right, ..
            } => {
                let op = match op {
                    Op::Seq => ";",
                    Op::NfSeq => ";;",
                    Op::Choice => "<+",
                    Op::At => "@",
                };
                format!("({} {op} {})", show(left), show(right))
            }
        }
    }

    fn parse(src: &str) -> String {
        let (toks, errors) = lex(src);
        assert!(errors.is_empty());
        show(&parse_expression(&toks, src.len()).unwrap())
    }

    #[test]
    fn precedence_and_associativity() {
        assert_eq!(parse("a ; b <+ c"), "((a ; b) <+ c)");
        assert_eq!(parse("a <+ b ; c"), "(a <+ (b ; c))");
        assert_eq!(parse("a <+ b <+ c"), "(a <+ (b <+ c))");
        assert_eq!(parse("a ; b ;; c ; d"), "(a ; (b ;; (c ; d)))");
        assert_eq!(parse("s @ t1 @ t2"), "((s @ t1) @ t2)");
        assert_eq!(parse("a ; s @ t <+ b"), "((a ; (s @ t)) <+ b)");
        assert_eq!(
            parse("f(a ; b, [1, -2, [3]])(s)"),
            "f((a ; b), [1, -2, [3]])(s)"
        );
        assert_eq!(parse("(a <+ b) ; c"), "((a <+ b) ; c)");
        assert_eq!(parse("[]"), "[]");
    }

    #[test]
    fn spans_cover_parentheses_and_calls() {
        let src = "x ; (a <+ b) ; tile(1, 2)";
        let (toks, _) = lex(src);
        let e = parse_expression(&toks, src.len()).unwrap();
        let ExprKind::Binary { left, right, .. } = &e.kind else {
            panic!()
        };
        assert_eq!(&src[left.span.range()], "x");
        let ExprKind::Binary { left, right, .. } = &right.kind else {
            panic!()
        };
        assert_eq!(&src[left.span.range()], "(a <+ b)");
        assert_eq!(&src[right.span.range()], "tile(1, 2)");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let src = format!("{}a{}", "(".repeat(10_000), ")".repeat(10_000));
        let (toks, _) = lex(&src);
        let err = parse_expression(&toks, src.len()).unwrap_err();
        assert!(err.message.contains("nested too deeply"));
        assert_eq!(err.span, Span::new(64, 65));
        let src = vec!["a"; 10_000].join(" ; ");
        let (toks, _) = lex(&src);
        assert!(parse_expression(&toks, src.len()).is_err());
    }
}
