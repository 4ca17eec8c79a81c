//! The lexer shared by RISE programs and types (built on `logos`).

use crate::span::{Diagnostic, Span};
use logos::Logos;

/// A token of the RISE surface syntax.
#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
pub enum Token {
    /// `def`
    #[token("def")]
    Def,
    /// `fun`
    #[token("fun")]
    Fun,
    /// `true`
    #[token("true")]
    True,
    /// `false`
    #[token("false")]
    False,
    /// An identifier.
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice().to_string())]
    Ident(String),
    /// An integer literal, possibly with a type suffix (`3`, `3u16`).
    #[regex(r"[0-9]+(i8|i16|i32|i64|u8|u16|u32|u64)?", |lex| lex.slice().to_string())]
    Int(String),
    /// A floating-point literal: `1.5` (f64), `1.5f` (f32), `1.5f16`, `2e3f32`.
    #[regex(r"[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?(f|f16|f32|f64)?", |lex| lex.slice().to_string())]
    #[regex(r"[0-9]+[eE][+-]?[0-9]+(f|f16|f32|f64)?", |lex| lex.slice().to_string())]
    #[regex(r"[0-9]+(f|f16|f32|f64)", |lex| lex.slice().to_string())]
    Float(String),
    /// `=>`
    #[token("=>")]
    FatArrow,
    /// `->`
    #[token("->")]
    Arrow,
    /// `|>`
    #[token("|>")]
    Pipe,
    /// `>>`
    #[token(">>")]
    Compose,
    /// `(`
    #[token("(")]
    LParen,
    /// `)`
    #[token(")")]
    RParen,
    /// `{`
    #[token("{")]
    LBrace,
    /// `}`
    #[token("}")]
    RBrace,
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
    /// `.`
    #[token(".")]
    Dot,
    /// `==`
    #[token("==")]
    EqEq,
    /// `=`
    #[token("=")]
    Eq,
    /// `+`
    #[token("+")]
    Plus,
    /// `-`
    #[token("-")]
    Minus,
    /// `*`
    #[token("*")]
    Star,
    /// `/^` (exact division, in types)
    #[token("/^")]
    SlashHat,
    /// `/`
    #[token("/")]
    Slash,
    /// `%`
    #[token("%")]
    Percent,
    /// `^`
    #[token("^")]
    Caret,
    /// `<`
    #[token("<")]
    Lt,
    /// `>`
    #[token(">")]
    Gt,
    /// `!`
    #[token("!")]
    Bang,
}

impl Token {
    /// How the token is written, for error messages.
    pub fn describe(&self) -> String {
        match self {
            Token::Ident(s) => format!("identifier `{s}`"),
            Token::Int(s) | Token::Float(s) => format!("number `{s}`"),
            Token::Def => "`def`".into(),
            Token::Fun => "`fun`".into(),
            Token::True => "`true`".into(),
            Token::False => "`false`".into(),
            other => format!("`{}`", other.text()),
        }
    }

    fn text(&self) -> &'static str {
        match self {
            Token::FatArrow => "=>",
            Token::Arrow => "->",
            Token::Pipe => "|>",
            Token::Compose => ">>",
            Token::LParen => "(",
            Token::RParen => ")",
            Token::LBrace => "{",
            Token::RBrace => "}",
            Token::LBracket => "[",
            Token::RBracket => "]",
            Token::Comma => ",",
            Token::Colon => ":",
            Token::Dot => ".",
            Token::EqEq => "==",
            Token::Eq => "=",
            Token::Plus => "+",
            Token::Minus => "-",
            Token::Star => "*",
            Token::SlashHat => "/^",
            Token::Slash => "/",
            Token::Percent => "%",
            Token::Caret => "^",
            Token::Lt => "<",
            Token::Gt => ">",
            Token::Bang => "!",
            _ => "?",
        }
    }
}

/// Splits a source text into tokens with their spans.
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
                    format!("unexpected character `{}`", lexer.slice()),
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
    fn lexes_types_and_literals() {
        let toks: Vec<Token> = lex("32.f32 1.5f 2.0 3u16 idx[n] // c\n =>")
            .unwrap()
            .into_iter()
            .map(|t| t.0)
            .collect();
        assert_eq!(
            toks,
            vec![
                Token::Int("32".into()),
                Token::Dot,
                Token::Ident("f32".into()),
                Token::Float("1.5f".into()),
                Token::Float("2.0".into()),
                Token::Int("3u16".into()),
                Token::Ident("idx".into()),
                Token::LBracket,
                Token::Ident("n".into()),
                Token::RBracket,
                Token::FatArrow,
            ]
        );
    }

    #[test]
    fn reports_bad_characters() {
        let err = lex("map $ xs").unwrap_err();
        assert_eq!(err.span, Span::new(4, 5));
    }
}
