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
    /// `foreign` (a foreign function declaration)
    #[token("foreign")]
    Foreign,
    /// The C body of a foreign function: the text between the braces that follow the
    /// `foreign` keyword, verbatim (not produced by the `logos` rules: [`lex`] cuts it out).
    CBody(String),
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
    /// A floating-point literal: `1.5` (f64), `1.5f` (f32), `1.5f16`, `1.5bf16`, `2e3f32`.
    #[regex(r"[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?(f|f16|bf16|f32|f64)?", |lex| lex.slice().to_string())]
    #[regex(r"[0-9]+[eE][+-]?[0-9]+(f|f16|bf16|f32|f64)?", |lex| lex.slice().to_string())]
    #[regex(r"[0-9]+(f|f16|bf16|f32|f64)", |lex| lex.slice().to_string())]
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
    /// `>>>` (function composition)
    #[token(">>>")]
    Compose,
    /// `>>` (shift right)
    #[token(">>")]
    Shr,
    /// `<<` (shift left)
    #[token("<<")]
    Shl,
    /// `<=`
    #[token("<=")]
    Le,
    /// `>=`
    #[token(">=")]
    Ge,
    /// `!=`
    #[token("!=")]
    NotEq,
    /// `&&`
    #[token("&&")]
    AndAnd,
    /// `||`
    #[token("||")]
    OrOr,
    /// `&`
    #[token("&")]
    Amp,
    /// `|`
    #[token("|")]
    Bar,
    /// `~`
    #[token("~")]
    Tilde,
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
            Token::Foreign => "`foreign`".into(),
            Token::CBody(_) => "the C body of a foreign function".into(),
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
            Token::Compose => ">>>",
            Token::Shr => ">>",
            Token::Shl => "<<",
            Token::Le => "<=",
            Token::Ge => ">=",
            Token::NotEq => "!=",
            Token::AndAnd => "&&",
            Token::OrOr => "||",
            Token::Amp => "&",
            Token::Bar => "|",
            Token::Tilde => "~",
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
///
/// After the keyword `foreign`, the first `{` opens a C body: the text up to the matching
/// `}` is one [`Token::CBody`], taken verbatim (braces inside C string and character
/// literals and comments do not count).
pub fn lex(source: &str) -> Result<Vec<(Token, Span)>, Diagnostic> {
    let mut out = Vec::new();
    let mut lexer = Token::lexer(source);
    let mut in_foreign = false;
    while let Some(tok) = lexer.next() {
        let span = Span::new(lexer.span().start, lexer.span().end);
        match tok {
            Ok(Token::LBrace) if in_foreign => {
                in_foreign = false;
                let open = lexer.span();
                let len = c_body_len(&source[open.end..]).ok_or_else(|| {
                    Diagnostic::new(span, "unterminated body of a foreign function")
                        .with_label("this `{` is never closed")
                        .with_note(
                            "the C body ends at the `}` matching this `{`; braces inside C \
                             strings, character literals and comments do not count",
                        )
                })?;
                let body = source[open.end..open.end + len].to_string();
                lexer.bump(len + 1);
                out.push((
                    Token::CBody(body),
                    Span::new(open.start, open.end + len + 1),
                ));
            }
            Ok(t) => {
                match t {
                    Token::Foreign => in_foreign = true,
                    Token::Def => in_foreign = false,
                    _ => {}
                }
                out.push((t, span))
            }
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

/// The length of a C body up to (not including) the `}` that closes an already opened
/// `{`; `None` when nothing closes it (or a comment or literal inside is not closed).
fn c_body_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 1usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            quote @ (b'"' | b'\'') => {
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= bytes.len() {
                    return None;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/")?;
                i += 2 + end + 1;
            }
            _ => {}
        }
        i += 1;
    }
    None
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
    fn foreign_bodies_are_taken_verbatim() {
        let src = "foreign f (x: f32) : f32 {\n  /* } */ // }\n  char c = '}'; \
                   const char *s = \"}\\\"{\"; { return x; }\n} def g = f";
        let toks = lex(src).unwrap();
        let (body, span) = toks
            .iter()
            .find_map(|(t, s)| match t {
                Token::CBody(b) => Some((b.clone(), *s)),
                _ => None,
            })
            .expect("a body");
        assert_eq!(
            body,
            "\n  /* } */ // }\n  char c = '}'; const char *s = \"}\\\"{\"; { return x; }\n"
        );
        assert_eq!(
            &src[span.start as usize..span.end as usize],
            format!("{{{body}}}")
        );
        assert_eq!(toks.last().unwrap().0, Token::Ident("f".into()));
        // a `{` after `def` is a brace again
        let toks = lex("foreign def t : {n: nat} -> n.f32").unwrap();
        assert!(toks.iter().all(|(t, _)| !matches!(t, Token::CBody(_))));
    }

    #[test]
    fn unterminated_foreign_bodies_are_reported() {
        for src in [
            "foreign f (x: f32) : f32 { return x;",
            "foreign f (x: f32) : f32 { return x; /* } */",
            "foreign f (x: f32) : f32 { return \"}\";",
            "foreign f (x: f32) : f32 { { return x; }",
        ] {
            let err = lex(src).unwrap_err();
            assert!(err.message.contains("unterminated body"), "{src}: {err}");
            assert_eq!(err.span.start as usize, src.find('{').unwrap(), "{src}");
        }
    }

    #[test]
    fn reports_bad_characters() {
        let err = lex("map $ xs").unwrap_err();
        assert_eq!(err.span, Span::new(4, 5));
    }
}
