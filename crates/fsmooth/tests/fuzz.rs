//! No input makes the front end panic: random text, random token soup and
//! mutations of the examples go through the parser, the type checker, the
//! interpreter and differentiation; each either succeeds or reports an error.

use fsmooth::library::parse_strategy;
use fsmooth::{check_program, diff_program, parse_program};
use proptest::prelude::*;

const TOKENS: &[&str] = &[
    "input",
    "M",
    ":",
    "Matrix",
    "Vector",
    "Double",
    "Index",
    "Array",
    "<",
    ">",
    "=>",
    "fun",
    "->",
    "let",
    "=",
    "in",
    "if",
    "then",
    "else",
    "build",
    "length",
    "ifold",
    "get",
    "fst",
    "snd",
    "sin",
    "toDouble",
    "deriv",
    "grad",
    "jacob",
    "(",
    ")",
    "[",
    "]",
    ",",
    "+",
    "-",
    "*",
    "/",
    "==",
    "<=",
    "&&",
    "||",
    "!",
    "0",
    "1",
    "2.5",
    "-3",
    "1e400",
    "99999999999999999999",
    "x",
    "i",
    "v",
    "true",
    "//",
    "\n",
];

fn run_all(src: &str) {
    if let Ok(p) = parse_program(src) {
        // Printing and reading back gives the same program.
        let printed = p.to_string();
        let again = parse_program(&printed).unwrap_or_else(|d| panic!("{printed}: {}", d.message));
        assert_eq!(again.body, p.body, "{printed}");
        if check_program(&p).is_ok() {
            // Only a differentiation construct may make differentiation
            // refuse a well-typed program (a function parameter, a `Bool` result).
            if let Err(d) = diff_program(&p) {
                assert!(
                    fsmooth::derivatives::contains_derivatives(&p.body),
                    "{src}: {}",
                    d.message
                );
            }
            let mut rng = fsmooth::random::Rng::new(1);
            if let Some(inputs) = fsmooth::verify::random_inputs(&p, &mut rng, &Default::default())
            {
                let _ = fsmooth::interp::eval_program(&p, &inputs);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_text_never_panics(src in "\\PC{0,80}") {
        run_all(&src);
        let _ = parse_strategy(&src);
    }

    #[test]
    fn token_soup_never_panics(toks in prop::collection::vec(prop::sample::select(TOKENS), 0..40)) {
        let src = toks.join(" ");
        run_all(&src);
    }

    #[test]
    fn mutated_examples_never_panic(which in 0usize..100, at in 0usize..10_000, len in 0usize..8, tok in prop::sample::select(TOKENS)) {
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/fsmooth");
        let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "fsmooth")).collect();
        files.sort();
        let src = std::fs::read_to_string(&files[which % files.len()]).unwrap();
        let mut cut = at % (src.len() + 1);
        while !src.is_char_boundary(cut) { cut -= 1; }
        let mut end = (cut + len).min(src.len());
        while !src.is_char_boundary(end) { end -= 1; }
        let mutated = format!("{}{}{}", &src[..cut], tok, &src[end..]);
        run_all(&mutated);
    }
}

#[test]
fn deep_and_long_inputs_are_refused_not_overflowed() {
    for src in [
        "(".repeat(100_000),
        "-".repeat(100_000) + "x",
        "!".repeat(100_000) + "true",
        "fun x -> ".repeat(100_000) + "x",
        "let x = 1 in ".repeat(100_000) + "x",
        "x".to_string() + &"[0]".repeat(100_000),
        "f".to_string() + &" x".repeat(100_000),
        "1.0".to_string() + &" * 1.0".repeat(100_000),
        "input M : ".to_string() + &"Array<".repeat(100_000),
    ] {
        assert!(parse_program(&src).is_err());
    }
}
