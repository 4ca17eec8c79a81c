//! A recursive-descent parser for the F-smooth surface syntax.
//!
//! ```text
//! program  := ('input' IDENT ':' type)* expr
//! expr     := 'fun' param+ '->' expr | 'let' IDENT '=' expr 'in' expr
//!           | 'if' expr 'then' expr 'else' expr | or
//! or       := and ('||' and)*          and := cmp ('&&' cmp)*
//! cmp      := add (('<'|'<='|'>'|'>='|'=='|'!=') add)?
//! add      := mul (('+'|'-') mul)*     mul := unary (('*'|'/') unary)*
//! unary    := '-' NUMBER | '-' unary | '!' unary | app
//! app      := postfix postfix*         (a built-in takes exactly its arguments)
//! postfix  := atom ('[' expr ']')*
//! atom     := IDENT | NUMBER | 'true' | 'false' | '(' expr ')' | '(' expr ',' expr ')'
//! param    := IDENT | '(' IDENT ':' type ')'
//! type     := tatom ('=>' type)?
//! tatom    := 'Double' | 'Index' | 'Card' | 'Bool' | 'Vector' | 'Matrix'
//!           | 'Array' '<' type '>' | '(' type ')' | '(' type ',' type ')'
//! ```
//!
//! Integer literals are `Index` values, literals with a `.` or an exponent are
//! `Double`s. Built-ins (`build`, `get`, `length`, `ifold`, `fst`, `snd`, `sin`,
//! `cos`, `exp`, `log`, `sqrt`, `toDouble`) must be applied to all their
//! arguments and cannot be rebound. Errors carry the span they point at; the
//! parser bounds nesting so that no input exhausts the stack.

use crate::expr::{is_reserved, Expr, ExprKind, Name, Prim};
use crate::lexer::{lex, Token};
use crate::types::Type;
use crate::{Input, Program};
use diagnostics::{Diagnostic, Span};

/// The deepest nesting of parentheses, `let`s and operators the parser
/// accepts (what the printer writes for the derivative of a product of a few
/// hundred factors stays within it).
pub const MAX_NESTING: usize = 2_000;

/// The deepest term the parser accepts (terms deeper than this are refused so
/// that the recursive passes over terms never exhaust the stack).
pub const MAX_DEPTH: usize = 4_000;

/// Runs `f` with a deep stack (the workspace's `deep` crate): deep nesting needs more
/// than a default thread has.
fn on_big_stack<T>(f: impl FnOnce() -> Result<T, Diagnostic>) -> Result<T, Diagnostic> {
    deep::run(f)
}

/// Parses a program: `input` declarations, then one expression.
pub fn parse_program(source: &str) -> Result<Program, Diagnostic> {
    on_big_stack(|| parse_program_here(source))
}

fn parse_program_here(source: &str) -> Result<Program, Diagnostic> {
    let mut p = Parser::new(source)?;
    let mut inputs: Vec<Input> = Vec::new();
    while p.peek() == Some(&Token::Input) {
        let start = p.span();
        p.bump();
        let (name, nspan) = p.binder()?;
        if inputs.iter().any(|i| i.name == name) {
            return Err(Diagnostic::new(
                nspan,
                format!("input `{name}` is declared twice"),
            ));
        }
        p.expect(Token::Colon, "`:`")?;
        let ty = p.ty()?;
        inputs.push(Input {
            name,
            ty,
            span: start.to(nspan),
        });
    }
    let body = p.expr()?;
    p.end()?;
    check_depth(&body)?;
    Ok(Program { inputs, body })
}

/// Parses a single expression.
pub fn parse_expr(source: &str) -> Result<Expr, Diagnostic> {
    on_big_stack(|| parse_expr_here(source))
}

fn parse_expr_here(source: &str) -> Result<Expr, Diagnostic> {
    let mut p = Parser::new(source)?;
    let e = p.expr()?;
    p.end()?;
    check_depth(&e)?;
    Ok(e)
}

/// Parses a type (`Array<(Double, Double)>`, `Index => Double`).
pub fn parse_type(source: &str) -> Result<Type, Diagnostic> {
    let mut p = Parser::new(source)?;
    let t = p.ty()?;
    p.end()?;
    Ok(t)
}

fn check_depth(e: &Expr) -> Result<(), Diagnostic> {
    if e.depth() > MAX_DEPTH {
        return Err(Diagnostic::new(
            e.span(),
            format!("the expression is nested more than {MAX_DEPTH} levels deep"),
        ));
    }
    Ok(())
}

struct Parser {
    toks: Vec<(Token, Span)>,
    pos: usize,
    end: Span,
    nesting: usize,
}

impl Parser {
    fn new(source: &str) -> Result<Parser, Diagnostic> {
        Ok(Parser {
            toks: lex(source)?,
            pos: 0,
            end: Span::new(source.len(), source.len()),
            nesting: 0,
        })
    }

    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn span(&self) -> Span {
        self.toks.get(self.pos).map(|t| t.1).unwrap_or(self.end)
    }

    fn prev_span(&self) -> Span {
        if self.pos == 0 {
            return self.span();
        }
        self.toks[self.pos - 1].1
    }

    fn bump(&mut self) -> Option<Token> {
        let t = self.toks.get(self.pos).map(|t| t.0.clone());
        self.pos += 1;
        t
    }

    fn error(&self, expected: &str) -> Diagnostic {
        match self.peek() {
            Some(t) => Diagnostic::new(
                self.span(),
                format!("expected {expected}, found {}", t.describe()),
            ),
            None => Diagnostic::new(
                self.end,
                format!("expected {expected}, found the end of the input"),
            ),
        }
    }

    fn expect(&mut self, t: Token, what: &str) -> Result<Span, Diagnostic> {
        if self.peek() == Some(&t) {
            let s = self.span();
            self.bump();
            Ok(s)
        } else {
            Err(self.error(what))
        }
    }

    fn end(&self) -> Result<(), Diagnostic> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.error("the end of the input")),
        }
    }

    fn enter(&mut self) -> Result<(), Diagnostic> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return Err(Diagnostic::new(
                self.span(),
                format!("the program is nested more than {MAX_NESTING} levels deep"),
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.nesting -= 1;
    }

    /// Refuses terms deeper than [`MAX_DEPTH`] as soon as they are built (the
    /// loops for operator chains, applications and indexing build deep terms
    /// without nesting).
    fn guard(&self, e: Expr) -> Result<Expr, Diagnostic> {
        check_depth(&e)?;
        Ok(e)
    }

    /// A name that is bound here (lambda parameter, `let`, `input`).
    fn binder(&mut self) -> Result<(Name, Span), Diagnostic> {
        match self.peek() {
            Some(Token::Ident(x)) => {
                let (x, span) = (x.clone(), self.span());
                if is_reserved(&x) {
                    return Err(Diagnostic::new(
                        span,
                        format!("`{x}` is a built-in and cannot be used as a variable name"),
                    ));
                }
                self.bump();
                Ok((x.into(), span))
            }
            _ => Err(self.error("a variable name")),
        }
    }

    fn expr(&mut self) -> Result<Expr, Diagnostic> {
        self.enter()?;
        let r = self.expr_inner();
        self.leave();
        r
    }

    fn expr_inner(&mut self) -> Result<Expr, Diagnostic> {
        let start = self.span();
        match self.peek() {
            Some(Token::Fun) => {
                self.bump();
                let mut params = Vec::new();
                loop {
                    match self.peek() {
                        Some(Token::Ident(_)) => {
                            let (x, _) = self.binder()?;
                            params.push((x, None));
                        }
                        Some(Token::LParen) => {
                            self.bump();
                            let (x, _) = self.binder()?;
                            self.expect(Token::Colon, "`:`")?;
                            let t = self.ty()?;
                            self.expect(Token::RParen, "`)`")?;
                            params.push((x, Some(t)));
                        }
                        _ => break,
                    }
                }
                if params.is_empty() {
                    return Err(self.error("a parameter"));
                }
                self.expect(Token::Arrow, "`->`")?;
                let body = self.expr()?;
                let span = start.to(body.span());
                Ok(params.into_iter().rev().fold(body, |b, (x, t)| {
                    Expr::spanned(ExprKind::Lam(x, t, b), span)
                }))
            }
            Some(Token::Let) => {
                self.bump();
                let (x, _) = self.binder()?;
                self.expect(Token::Eq, "`=`")?;
                let e0 = self.expr()?;
                self.expect(Token::In, "`in`")?;
                let e1 = self.expr()?;
                let span = start.to(e1.span());
                Ok(Expr::spanned(ExprKind::Let(x, e0, e1), span))
            }
            Some(Token::If) => {
                self.bump();
                let c = self.expr()?;
                self.expect(Token::Then, "`then`")?;
                let a = self.expr()?;
                self.expect(Token::Else, "`else`")?;
                let b = self.expr()?;
                let span = start.to(b.span());
                Ok(Expr::spanned(ExprKind::If(c, a, b), span))
            }
            _ => self.or(),
        }
    }

    fn binary(
        &mut self,
        next: fn(&mut Parser) -> Result<Expr, Diagnostic>,
        ops: &[(Token, Prim)],
        chain: bool,
    ) -> Result<Expr, Diagnostic> {
        let mut left = next(self)?;
        loop {
            let op = match self.peek() {
                Some(t) => ops.iter().find(|(tok, _)| tok == t).map(|(_, p)| *p),
                None => None,
            };
            let Some(op) = op else { return Ok(left) };
            self.bump();
            let right = next(self)?;
            let span = left.span().to(right.span());
            left = self.guard(Expr::spanned(ExprKind::Prim(op, vec![left, right]), span))?;
            if !chain {
                if let Some(t) = self.peek() {
                    if ops.iter().any(|(tok, _)| tok == t) {
                        return Err(Diagnostic::new(
                            self.span(),
                            "comparisons cannot be chained; add parentheses",
                        )
                        .with_note(format!(
                            "the comparison `{}` before it already has two operands",
                            op.name()
                        )));
                    }
                }
                return Ok(left);
            }
        }
    }

    fn or(&mut self) -> Result<Expr, Diagnostic> {
        self.binary(Parser::and, &[(Token::OrOr, Prim::Or)], true)
    }

    fn and(&mut self) -> Result<Expr, Diagnostic> {
        self.binary(Parser::cmp, &[(Token::AndAnd, Prim::And)], true)
    }

    fn cmp(&mut self) -> Result<Expr, Diagnostic> {
        self.binary(
            Parser::add,
            &[
                (Token::Lt, Prim::Lt),
                (Token::Le, Prim::Le),
                (Token::Gt, Prim::Gt),
                (Token::Ge, Prim::Ge),
                (Token::EqEq, Prim::Eq),
                (Token::NotEq, Prim::Ne),
            ],
            false,
        )
    }

    fn add(&mut self) -> Result<Expr, Diagnostic> {
        self.binary(
            Parser::mul,
            &[(Token::Plus, Prim::Add), (Token::Minus, Prim::Sub)],
            true,
        )
    }

    fn mul(&mut self) -> Result<Expr, Diagnostic> {
        self.binary(
            Parser::unary,
            &[(Token::Star, Prim::Mul), (Token::Slash, Prim::Div)],
            true,
        )
    }

    fn unary(&mut self) -> Result<Expr, Diagnostic> {
        self.enter()?;
        let r = self.unary_inner();
        self.leave();
        r
    }

    fn unary_inner(&mut self) -> Result<Expr, Diagnostic> {
        let start = self.span();
        match self.peek() {
            Some(Token::Minus) => {
                self.bump();
                if matches!(self.peek(), Some(Token::Int(_) | Token::Float(_))) {
                    let lit = self.number(true)?;
                    return Ok(Expr::spanned(lit.kind().clone(), start.to(lit.span())));
                }
                let a = self.unary()?;
                let span = start.to(a.span());
                Ok(Expr::spanned(ExprKind::Prim(Prim::Neg, vec![a]), span))
            }
            Some(Token::Bang) => {
                self.bump();
                let a = self.unary()?;
                let span = start.to(a.span());
                Ok(Expr::spanned(ExprKind::Prim(Prim::Not, vec![a]), span))
            }
            _ => self.app(),
        }
    }

    fn starts_atom(&self) -> bool {
        matches!(
            self.peek(),
            Some(
                Token::Ident(_)
                    | Token::Int(_)
                    | Token::Float(_)
                    | Token::True
                    | Token::False
                    | Token::LParen
            )
        )
    }

    fn app(&mut self) -> Result<Expr, Diagnostic> {
        let start = self.span();
        let mut head = match self.peek() {
            Some(Token::Ident(name)) => match Prim::from_name(name) {
                Some(op) => {
                    let name = name.clone();
                    self.bump();
                    let mut args = Vec::new();
                    while args.len() < op.arity() {
                        if !self.starts_atom() {
                            return Err(self
                                .error(&format!(
                                    "argument {} of `{name}` (it takes {})",
                                    args.len() + 1,
                                    op.arity()
                                ))
                                .with_note(format!(
                                    "built-ins are applied to all their arguments: `{}`",
                                    usage(op)
                                )));
                        }
                        args.push(self.postfix()?);
                    }
                    let span = start.to(self.prev_span());
                    Expr::spanned(ExprKind::Prim(op, args), span)
                }
                None => self.postfix()?,
            },
            _ => self.postfix()?,
        };
        while self.starts_atom() {
            let arg = self.postfix()?;
            let span = head.span().to(arg.span());
            head = self.guard(Expr::spanned(ExprKind::App(head, arg), span))?;
        }
        Ok(head)
    }

    fn postfix(&mut self) -> Result<Expr, Diagnostic> {
        let mut e = self.atom()?;
        while self.peek() == Some(&Token::LBracket) {
            self.bump();
            let i = self.expr()?;
            let close = self.expect(Token::RBracket, "`]`")?;
            let span = e.span().to(close);
            e = self.guard(Expr::spanned(ExprKind::Prim(Prim::Get, vec![e, i]), span))?;
        }
        Ok(e)
    }

    fn number(&mut self, negative: bool) -> Result<Expr, Diagnostic> {
        let span = self.span();
        let sign = if negative { "-" } else { "" };
        match self.bump() {
            Some(Token::Int(s)) => match format!("{sign}{s}").parse::<i64>() {
                Ok(v) => Ok(Expr::spanned(ExprKind::Index(v), span)),
                Err(_) => Err(Diagnostic::new(
                    span,
                    format!("the integer `{sign}{s}` does not fit in 64 bits"),
                )),
            },
            Some(Token::Float(s)) => match format!("{sign}{s}").parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(Expr::spanned(ExprKind::Double(v), span)),
                _ => Err(Diagnostic::new(
                    span,
                    format!("the number `{sign}{s}` is not a finite `Double`"),
                )),
            },
            _ => {
                self.pos -= 1;
                Err(self.error("a number"))
            }
        }
    }

    fn atom(&mut self) -> Result<Expr, Diagnostic> {
        let start = self.span();
        match self.peek() {
            Some(Token::Ident(x)) => {
                if let Some(op) = Prim::from_name(x) {
                    return Err(Diagnostic::new(
                        start,
                        format!("the built-in `{x}` must be applied to its arguments here"),
                    )
                    .with_note(format!("write `({})`, or wrap it in a lambda", usage(op))));
                }
                let x: Name = x.as_str().into();
                self.bump();
                Ok(Expr::spanned(ExprKind::Var(x), start))
            }
            Some(Token::Int(_) | Token::Float(_)) => self.number(false),
            Some(Token::True) => {
                self.bump();
                Ok(Expr::spanned(ExprKind::Bool(true), start))
            }
            Some(Token::False) => {
                self.bump();
                Ok(Expr::spanned(ExprKind::Bool(false), start))
            }
            Some(Token::LParen) => {
                self.enter()?;
                self.bump();
                let a = self.expr()?;
                let r = if self.peek() == Some(&Token::Comma) {
                    self.bump();
                    let b = self.expr()?;
                    if self.peek() == Some(&Token::Comma) {
                        return Err(Diagnostic::new(
                            self.span(),
                            "F-smooth has pairs only; nest them for more components: `(a, (b, c))`",
                        ));
                    }
                    let close = self.expect(Token::RParen, "`)`")?;
                    Expr::spanned(ExprKind::Prim(Prim::Pair, vec![a, b]), start.to(close))
                } else {
                    let close = self.expect(Token::RParen, "`)` or `,`")?;
                    // Keep the span of the parenthesized expression.
                    Expr::spanned(a.kind().clone(), start.to(close))
                };
                self.leave();
                Ok(r)
            }
            _ => Err(self.error("an expression")),
        }
    }

    fn ty(&mut self) -> Result<Type, Diagnostic> {
        self.enter()?;
        let r = self.ty_inner();
        self.leave();
        r
    }

    fn ty_inner(&mut self) -> Result<Type, Diagnostic> {
        let a = self.ty_atom()?;
        if self.peek() == Some(&Token::FatArrow) {
            self.bump();
            let b = self.ty()?;
            return Ok(Type::fun(a, b));
        }
        Ok(a)
    }

    fn ty_atom(&mut self) -> Result<Type, Diagnostic> {
        match self.peek() {
            Some(Token::Ident(name)) => {
                let span = self.span();
                let t = match name.as_str() {
                    "Double" => Type::Double,
                    "Index" | "Card" => Type::Index,
                    "Bool" => Type::Bool,
                    "Vector" => Type::vector(),
                    "Matrix" => Type::matrix(),
                    "Array" => {
                        self.bump();
                        self.expect(Token::Lt, "`<`")?;
                        let t = self.ty()?;
                        self.expect(Token::Gt, "`>`")?;
                        return Ok(Type::array(t));
                    }
                    other => {
                        return Err(Diagnostic::new(span, format!("unknown type `{other}`"))
                            .with_note(
                                "types are Double, Index, Card, Bool, Vector, Matrix, Array<T>, (T, U) and T => U",
                            ))
                    }
                };
                self.bump();
                Ok(t)
            }
            Some(Token::LParen) => {
                self.bump();
                let a = self.ty()?;
                if self.peek() == Some(&Token::Comma) {
                    self.bump();
                    let b = self.ty()?;
                    self.expect(Token::RParen, "`)`")?;
                    return Ok(Type::pair(a, b));
                }
                self.expect(Token::RParen, "`)` or `,`")?;
                Ok(a)
            }
            _ => Err(self.error("a type")),
        }
    }
}

fn usage(op: Prim) -> &'static str {
    match op {
        Prim::Build => "build n (fun i -> e)",
        Prim::Get => "get a i",
        Prim::Length => "length a",
        Prim::IFold => "ifold (fun acc i -> e) init n",
        Prim::Fst => "fst p",
        Prim::Snd => "snd p",
        Prim::ToDouble => "toDouble i",
        Prim::Sin => "sin x",
        Prim::Cos => "cos x",
        Prim::Exp => "exp x",
        Prim::Log => "log x",
        Prim::Deriv => "deriv (fun x -> e) x0",
        Prim::Grad => "grad (fun v -> e) v0",
        Prim::Jacob => "jacob (fun v -> e) v0",
        _ => "sqrt x",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(src: &str) -> String {
        let e = parse_expr(src).unwrap_or_else(|d| panic!("{src}: {d}"));
        let printed = e.to_string();
        let again = parse_expr(&printed).unwrap_or_else(|d| panic!("{printed}: {d}"));
        assert_eq!(e, again, "{src} printed as {printed}");
        printed
    }

    #[test]
    fn precedence_and_printing() {
        assert_eq!(roundtrip("length M[0]"), "length M[0]");
        assert_eq!(roundtrip("(length M)[0]"), "(length M)[0]");
        assert_eq!(roundtrip("a + b * c - d"), "a + b * c - d");
        assert_eq!(roundtrip("a - (b - c)"), "a - (b - c)");
        assert_eq!(roundtrip("-1.5 * x"), "-1.5 * x");
        assert_eq!(roundtrip("-(1.5)"), "-(1.5)");
        assert_eq!(roundtrip("- -x"), "-(-x)");
        assert_eq!(roundtrip("f (-2) x"), "f (-2) x");
        assert_eq!(
            roundtrip("fun a i -> if i == 0 then a else a + 1.0"),
            "fun a i -> if i == 0 then a else a + 1.0"
        );
        assert_eq!(
            roundtrip("build (length v) (fun (i: Index) -> (v[i], 0.0))"),
            "build (length v) (fun (i: Index) -> (v[i], 0.0))"
        );
        assert_eq!(
            roundtrip("let x = 1 in x < 2 && !(x == 3) || false"),
            "let x = 1 in x < 2 && !(x == 3) || false"
        );
        assert_eq!(roundtrip("(fun x -> x) 1.0"), "(fun x -> x) 1.0");
        assert_eq!(
            roundtrip("ifold (fun a i -> a) 0.0 3"),
            "ifold (fun a i -> a) 0.0 3"
        );
    }

    #[test]
    fn programs_have_inputs() {
        let p = parse_program("// transpose\ninput M : Matrix\ninput f : Index => Array<Card>\nM")
            .unwrap();
        assert_eq!(p.inputs.len(), 2);
        assert_eq!(p.inputs[1].ty.to_string(), "Index => Array<Index>");
    }

    #[test]
    fn errors_point_at_the_problem() {
        let e = parse_expr("build 3").unwrap_err();
        assert!(e.message.contains("argument 2 of `build`"), "{}", e.message);
        let e = parse_expr("fun length -> 1").unwrap_err();
        assert!(e.message.contains("built-in"), "{}", e.message);
        let e = parse_expr("a < b < c").unwrap_err();
        assert!(e.message.contains("chained"), "{}", e.message);
        let e = parse_expr("(1, 2, 3)").unwrap_err();
        assert!(e.message.contains("pairs"), "{}", e.message);
        let e = parse_expr("99999999999999999999").unwrap_err();
        assert!(e.message.contains("64 bits"), "{}", e.message);
        let deep = "(".repeat(10_000) + "1" + &")".repeat(10_000);
        assert!(parse_expr(&deep).unwrap_err().message.contains("nested"));
        let long = "1".to_string() + &" + 1".repeat(10_000);
        assert!(parse_expr(&long).unwrap_err().message.contains("nested"));
    }
}
