//! The lexer of `.elv` files (built on `logos`).

use diagnostics::{Diagnostic, Span};
use logos::Logos;

/// A token of the strategy language.
#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
pub(crate) enum Token {
    /// `def`
    #[token("def")]
    Def,
    /// An identifier.
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice().to_string())]
    Ident(String),
    /// An integer literal, possibly negative (`32`, `-3`); parsed by the parser,
    /// which reports literals out of range.
    #[regex(r"-?[0-9]+", |lex| lex.slice().to_string())]
    Int(String),
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
    /// `=`
    #[token("=")]
    Eq,
    /// `;`
    #[token(";")]
    Semi,
    /// `;;`
    #[token(";;")]
    SemiSemi,
    /// `<+`
    #[token("<+")]
    LChoice,
    /// `@`
    #[token("@")]
    At,
}

impl Token {
    /// How the token is written, for error messages.
    pub(crate) fn describe(&self) -> String {
        let text = match self {
            Token::Ident(s) => return format!("identifier `{s}`"),
            Token::Int(s) => return format!("number `{s}`"),
            Token::Def => "def",
            Token::LParen => "(",
            Token::RParen => ")",
            Token::LBracket => "[",
            Token::RBracket => "]",
            Token::Comma => ",",
            Token::Eq => "=",
            Token::Semi => ";",
            Token::SemiSemi => ";;",
            Token::LChoice => "<+",
            Token::At => "@",
        };
        format!("`{text}`")
    }
}

/// Splits a source text into tokens with their spans. Characters that start no
/// token are reported (runs of them as one diagnostic) and skipped.
pub(crate) fn lex(source: &str) -> (Vec<(Token, Span)>, Vec<Diagnostic>) {
    let mut tokens = Vec::new();
    let mut bad: Vec<Span> = Vec::new();
    let mut lexer = Token::lexer(source);
    while let Some(tok) = lexer.next() {
        let span = Span::new(lexer.span().start, lexer.span().end);
        match tok {
            Ok(t) => tokens.push((t, span)),
            Err(()) => match bad.last_mut() {
                Some(last) if last.end == span.start => last.end = span.end,
                _ => bad.push(span),
            },
        }
    }
    let errors = bad
        .into_iter()
        .map(|span| {
            let text = source.get(span.range()).unwrap_or("?");
            let mut d = Diagnostic::new(span, format!("unexpected characters `{text}`"))
                .with_label("not part of the strategy language");
            if text.starts_with('-') {
                d = d.with_note("`-` only starts a negative integer literal such as `-3`");
            }
            d
        })
        .collect();
    (tokens, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Token> {
        let (toks, errors) = lex(src);
        assert!(errors.is_empty(), "{errors:?}");
        toks.into_iter().map(|t| t.0).collect()
    }

    #[test]
    fn lexes_operators_numbers_and_comments() {
        use Token::*;
        assert_eq!(
            kinds("def f(s) = s ;; t ; u <+ v @ w // comment ; here\n [ -3, 4 ]"),
            vec![
                Def,
                Ident("f".into()),
                LParen,
                Ident("s".into()),
                RParen,
                Eq,
                Ident("s".into()),
                SemiSemi,
                Ident("t".into()),
                Semi,
                Ident("u".into()),
                LChoice,
                Ident("v".into()),
                At,
                Ident("w".into()),
                LBracket,
                Int("-3".into()),
                Comma,
                Int("4".into()),
                RBracket,
            ]
        );
    }

    #[test]
    fn keywords_are_whole_words() {
        assert_eq!(kinds("define"), vec![Token::Ident("define".into())]);
    }

    #[test]
    fn reports_runs_of_bad_characters_once() {
        let (toks, errors) = lex("a $$ b € c");
        assert_eq!(toks.len(), 3);
        assert_eq!(errors.len(), 2);
        assert_eq!(errors[0].span, Span::new(2, 4));
        assert_eq!(&"a $$ b € c"[errors[1].span.range()], "€");
    }
}
