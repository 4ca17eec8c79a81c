//! A cursor over tokens with the helpers every parsing module uses.

use super::lexer::Token;
use crate::span::{Diagnostic, Span};

/// Parser state: the tokens and the current position. Parsing functions for
/// types and expressions are methods on this type, in their own modules.
pub struct Parser {
    tokens: Vec<(Token, Span)>,
    pos: usize,
    end: Span,
}

/// Parse results.
pub type PResult<T> = Result<T, Diagnostic>;

impl Parser {
    /// A parser over the tokens of a source of length `source_len`.
    pub fn new(tokens: Vec<(Token, Span)>, source_len: usize) -> Parser {
        Parser {
            tokens,
            pos: 0,
            end: Span::new(source_len, source_len),
        }
    }

    /// The current token, if any.
    pub fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos).map(|t| &t.0)
    }

    /// The token `k` positions ahead.
    pub fn peek_at(&self, k: usize) -> Option<&Token> {
        self.tokens.get(self.pos + k).map(|t| &t.0)
    }

    /// The span of the current token (end of input when none is left).
    pub fn span(&self) -> Span {
        self.tokens.get(self.pos).map_or(self.end, |t| t.1)
    }

    /// The span of the previous token.
    pub fn prev_span(&self) -> Span {
        if self.pos == 0 {
            Span::default()
        } else {
            self.tokens[self.pos - 1].1
        }
    }

    /// The current position, for backtracking.
    pub fn mark(&self) -> usize {
        self.pos
    }

    /// Returns to a position from [`Parser::mark`].
    pub fn reset(&mut self, mark: usize) {
        self.pos = mark;
    }

    /// Whether all tokens are consumed.
    pub fn at_end(&self) -> bool {
        self.pos >= self.tokens.len()
    }

    /// Consumes and returns the current token.
    pub fn bump(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.pos).map(|t| t.0.clone());
        if t.is_some() {
            self.pos += 1;
        }
        t
    }

    /// Consumes the current token if it is `t`.
    pub fn eat(&mut self, t: &Token) -> bool {
        if self.peek() == Some(t) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Consumes `t` or reports what was expected.
    pub fn expect(&mut self, t: &Token, what: &str) -> PResult<Span> {
        if self.eat(t) {
            Ok(self.prev_span())
        } else {
            Err(self.error_expected(what))
        }
    }

    /// Consumes an identifier.
    pub fn ident(&mut self, what: &str) -> PResult<(String, Span)> {
        match self.peek() {
            Some(Token::Ident(s)) => {
                let s = s.clone();
                self.pos += 1;
                Ok((s, self.prev_span()))
            }
            _ => Err(self.error_expected(what)),
        }
    }

    /// "expected X, found Y" at the current token.
    pub fn error_expected(&self, what: &str) -> Diagnostic {
        let found = match self.peek() {
            Some(t) => t.describe(),
            None => "end of input".to_string(),
        };
        Diagnostic::new(self.span(), format!("expected {what}, found {found}"))
            .with_label(format!("expected {what} here"))
    }
}
