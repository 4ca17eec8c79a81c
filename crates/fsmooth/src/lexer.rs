//! The tokens of the F-smooth surface syntax (built on `logos`).

use diagnostics::{Diagnostic, Span};
use logos::Logos;

/// A token of the F-smooth surface syntax. `//` starts a comment.
#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
pub enum Token {
    /// `fun`
    #[token("fun")]
    Fun,
    /// `let`
    #[token("let")]
    Let,
    /// `in`
    #[token("in")]
    In,
    /// `if`
    #[token("if")]
    If,
    /// `then`
    #[token("then")]
    Then,
    /// `else`
    #[token("else")]
    Else,
    /// `true`
    #[token("true")]
    True,
    /// `false`
    #[token("false")]
    False,
    /// `input`
    #[token("input")]
    Input,
    /// An identifier (`M`, `x1`, `u'`).
    #[regex(r"[A-Za-z_][A-Za-z0-9_']*", |lex| lex.slice().to_string())]
    Ident(String),
    /// An integer literal (an `Index`).
    #[regex(r"[0-9]+", |lex| lex.slice().to_string())]
    Int(String),
    /// A floating-point literal (a `Double`): `1.0`, `2.5e-3`, `1e9`.
    #[regex(r"[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?", |lex| lex.slice().to_string())]
    #[regex(r"[0-9]+[eE][+-]?[0-9]+", |lex| lex.slice().to_string())]
    Float(String),
    /// `->`
    #[token("->")]
    Arrow,
    /// `=>`
    #[token("=>")]
    FatArrow,
    /// `(`
    #[token("(")]
    LParen,
    /// `)`
    #[token(")")]
    RParen,
    /// `[`
    #[token("[")]
    LBracket,
    /// `]`
    #[token("]")]
    RBracket,
    /// `,`
    #[token(",")]
    Comma,
    /// `:`
    #[token(":")]
    Colon,
    /// `==`
    #[token("==")]
    EqEq,
    /// `!=`
    #[token("!=")]
    NotEq,
    /// `=`
    #[token("=")]
    Eq,
    /// `<=`
    #[token("<=")]
    Le,
    /// `>=`
    #[token(">=")]
    Ge,
    /// `<`
    #[token("<")]
    Lt,
    /// `>`
    #[token(">")]
    Gt,
    /// `&&`
    #[token("&&")]
    AndAnd,
    /// `||`
    #[token("||")]
    OrOr,
    /// `!`
    #[token("!")]
    Bang,
    /// `+`
    #[token("+")]
    Plus,
    /// `-`
    #[token("-")]
    Minus,
    /// `*`
    #[token("*")]
    Star,
    /// `/`
    #[token("/")]
    Slash,
}

impl Token {
    /// How the token is named in error messages.
    pub fn describe(&self) -> String {
        let text = match self {
            Token::Ident(s) => return format!("identifier `{s}`"),
            Token::Int(s) | Token::Float(s) => return format!("number `{s}`"),
            Token::Fun => "fun",
            Token::Let => "let",
            Token::In => "in",
            Token::If => "if",
            Token::Then => "then",
            Token::Else => "else",
            Token::True => "true",
            Token::False => "false",
            Token::Input => "input",
            Token::Arrow => "->",
            Token::FatArrow => "=>",
            Token::LParen => "(",
            Token::RParen => ")",
            Token::LBracket => "[",
            Token::RBracket => "]",
            Token::Comma => ",",
            Token::Colon => ":",
            Token::EqEq => "==",
            Token::NotEq => "!=",
            Token::Eq => "=",
            Token::Le => "<=",
            Token::Ge => ">=",
            Token::Lt => "<",
            Token::Gt => ">",
            Token::AndAnd => "&&",
            Token::OrOr => "||",
            Token::Bang => "!",
            Token::Plus => "+",
            Token::Minus => "-",
            Token::Star => "*",
            Token::Slash => "/",
        };
        format!("`{text}`")
    }
}

/// Splits `source` into tokens with their spans.
pub fn lex(source: &str) -> Result<Vec<(Token, Span)>, Diagnostic> {
    let mut out = Vec::new();
    let mut lexer = Token::lexer(source);
    while let Some(tok) = lexer.next() {
        let span = Span::new(lexer.span().start, lexer.span().end);
        match tok {
            Ok(t) => out.push((t, span)),
            Err(()) => {
                return Err(Diagnostic::new(
                    span,
                    format!("unexpected character `{}`", lexer.slice().escape_debug()),
                ))
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexes_keywords_numbers_and_operators() {
        let toks: Vec<Token> = lex("let x' = 1.5e-3 in x'[0] <= 2 // done")
            .unwrap()
            .into_iter()
            .map(|t| t.0)
            .collect();
        assert_eq!(
            toks,
            vec![
                Token::Let,
                Token::Ident("x'".into()),
                Token::Eq,
                Token::Float("1.5e-3".into()),
                Token::In,
                Token::Ident("x'".into()),
                Token::LBracket,
                Token::Int("0".into()),
                Token::RBracket,
                Token::Le,
                Token::Int("2".into()),
            ]
        );
    }

    #[test]
    fn reports_bad_characters() {
        let err = lex("x $ y").unwrap_err();
        assert_eq!(err.span, Span::new(2, 3));
    }
}
