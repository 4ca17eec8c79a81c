//! The text syntax of RISE (`docs/language.md`): lexer, parser, printer.

mod cursor;
pub mod lexer;
mod parser;
mod print;
mod types;

pub use cursor::{PResult, Parser};
pub use parser::{parse_expr, parse_program, MAX_DEPTH, MAX_NESTING};
pub use print::{print_expr, print_program};

use crate::span::Diagnostic;
use crate::types::Type;

/// Parses a type, e.g. `{n: nat} -> n.f32 -> f32`.
pub fn parse_type(source: &str) -> Result<Type, Diagnostic> {
    let mut p = Parser::new(lexer::lex(source)?, source.len());
    let t = p.parse_type()?;
    if !p.at_end() {
        return Err(p.error_expected("the end of the type"));
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(src: &str) {
        let t = parse_type(src).unwrap_or_else(|e| panic!("{src}: {e}"));
        assert_eq!(t.to_string(), src);
    }

    #[test]
    fn types_print_as_written() {
        roundtrip("{n: nat} -> {s t: data} -> (s -> t) -> n.s -> n.t");
        roundtrip("(sz sp: nat) -> {n: nat} -> {t: data} -> (n*sp+sz).t -> (n+1).sz.t");
        roundtrip("{n m: nat} -> (k: nat) -> {t: data} -> ((l: nat) -> (l*n).t -> l.t) -> (m*n^k).t -> m.t");
        roundtrip("m.k.f32 -> k.n.f32 -> m.n.f32");
        roundtrip("n.(f32, idx[n]) -> vec[f32, 4]");
        roundtrip("(f finv: nat -> nat) -> {a: addrSpace} -> 1024.1024.u16");
    }
}
