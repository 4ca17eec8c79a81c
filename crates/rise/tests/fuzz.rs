//! Corpus-free fuzzing of the front end: whatever the input, it must answer with a
//! program or a diagnostic — never panic, overflow the stack or hang.
//!
//! Inputs: random bytes, random text, random sequences of RISE tokens, the
//! examples of `docs/language.md` with random edits, and deep nesting of every construct.
//! Every input goes through [`front_end`]; later stages of the front end are
//! added there. Run longer with e.g. `PROPTEST_CASES=20000 cargo test -p rise --test fuzz`.

use proptest::prelude::*;
use rise::syntax::{parse_program, print_program};
use rise::Diagnostic;

/// The front end under test. Parsed programs must also print to text that parses
/// back to the same program.
fn front_end(src: &str) {
    let Ok(program) = parse_program(src) else {
        return;
    };
    let printed = print_program(&program);
    let back = parse_program(&printed).unwrap_or_else(|e: Diagnostic| {
        panic!("{src:?}\nprinted as\n{printed}\ndoes not parse: {e}")
    });
    assert_eq!(back.defs.len(), program.defs.len());
    for (a, b) in program.defs.iter().zip(&back.defs) {
        assert!(
            a.body.alpha_eq(&b.body) && a.annot == b.annot,
            "{src:?}\nprinted as\n{printed}"
        );
    }
    // Type checking (never panics either):
    let _ = rise::infer::check_program(&program);
}

const EXAMPLES: &[&str] = &[
    "def dot = fun xs ys => zip xs ys |> map (fun p => fst p * snd p) |> reduce add 0.0f",
    "def mm : {m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32 =\n  \
     fun a b => a |> map (fun row => transpose b |> map (fun col => dot row col))",
    "def jacobi3 : {n: nat} -> n.f32 -> n.f32 =\n  \
     fun xs => xs |> padClamp 1 1 |> slide 3 1 |> map (fun nbh => reduce add 0.0f nbh)",
    "def f = fun (n: nat) (x: n.idx[n]) (a: addrSpace) => toMem a (mapGlobal(0) (fun y => -y) x) (fun z => (z, !true))",
    "def g = (f >>> g >>> mapLocal 1 h) (x : (f32, vec[f32, 4])) - 3u16 * 1.5f16 % 2 == 0 < 1",
];

/// Tokens of RISE (and some near misses), with identifiers of every role.
const VOCABULARY: &[&str] = &[
    "def",
    "fun",
    "true",
    "false",
    "=>",
    "->",
    "|>",
    ">>>",
    ">>",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    ".",
    "==",
    "=",
    "+",
    "-",
    "*",
    "/^",
    "/",
    "%",
    "^",
    "<",
    ">",
    "!",
    "x",
    "y",
    "xs",
    "f",
    "p",
    "map",
    "mapGlobal",
    "mapLocal(1)",
    "split",
    "zip",
    "fst",
    "reduce",
    "add",
    "makePair",
    "toMem",
    "nat",
    "data",
    "addrSpace",
    "nat -> nat",
    "f32",
    "idx",
    "vec",
    "natType",
    "private",
    "min",
    "max",
    "n",
    "_",
    "x_0",
    "0",
    "1",
    "2",
    "32",
    "3u16",
    "300u8",
    "-5i8",
    "1.5",
    "1.5f",
    "2e3f16",
    "1e40f",
    "99999999999999999999",
    "1024.1024",
    "0.0f",
    "// c\n",
    "\n",
    "$",
    "é",
    "{n: nat} ->",
    "(n: nat)",
];

fn token_soup() -> impl Strategy<Value = String> {
    let token = prop::sample::select(VOCABULARY);
    let sep = prop::sample::select(&[" ", " ", " ", "", "\n"][..]);
    prop::collection::vec((token, sep), 0..80)
        .prop_map(|ts| ts.into_iter().map(|(t, s)| format!("{t}{s}")).collect())
}

/// An example with random edits: deletions, insertions of tokens and duplications.
fn mutated_example() -> impl Strategy<Value = String> {
    let edit = (
        any::<prop::sample::Index>(),
        0..3u8,
        prop::sample::select(VOCABULARY),
        0usize..12,
    );
    (
        prop::sample::select(EXAMPLES),
        prop::collection::vec(edit, 1..6),
    )
        .prop_map(|(src, edits)| {
            let mut s = src.to_string();
            for (at, op, token, len) in edits {
                // The examples and the vocabulary are ASCII except `é`: stay on char boundaries.
                let mut i = at.index(s.len() + 1);
                while !s.is_char_boundary(i) {
                    i -= 1;
                }
                let mut j = (i + len).min(s.len());
                while !s.is_char_boundary(j) {
                    j -= 1;
                }
                match op {
                    0 => s.replace_range(i..j, ""),
                    1 => s.insert_str(i, &format!(" {token} ")),
                    _ => {
                        let piece = s[i..j].to_string();
                        s.insert_str(i, &piece);
                    }
                }
            }
            s
        })
}

/// Deeply nested constructs, balanced or not.
fn deep_nesting() -> impl Strategy<Value = String> {
    const OPEN: &[(&str, &str)] = &[
        ("(", ")"),
        ("fun x => ", ""),
        ("-", ""),
        ("!", ""),
        ("f (", ")"),
        ("(a, ", ")"),
        ("x |> ", ""),
        ("x + ", ""),
        ("g x ", ""),
        ("(x : ", " )"),
        ("fun (x: ", ") => x"),
        ("idx[", "]"),
        ("f32 -> ", ""),
        ("2^", ""),
        ("{n: nat} -> ", ""),
        ("(", ").f32"),
        ("x >>> ", ""),
        ("fun (n: nat) => ", ""),
    ];
    let layer = prop::sample::select(OPEN);
    (
        prop::collection::vec(layer, 1..4),
        1usize..3000,
        any::<bool>(),
        prop::sample::select(&["x", "f32", "", ")"][..]),
    )
        .prop_map(|(layers, n, close, core)| {
            let mut open = String::from("def f = ");
            let mut closing = String::new();
            for i in 0..n {
                let (o, c) = layers[i % layers.len()];
                open.push_str(o);
                if close {
                    closing.insert_str(0, c);
                }
            }
            format!("{open}{core}{closing}")
        })
}

proptest! {
    #[test]
    fn random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        front_end(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn random_text(src in "\\PC{0,200}") {
        front_end(&src);
    }

    #[test]
    fn random_tokens(src in token_soup()) {
        front_end(&src);
        front_end(&format!("def f = {src}"));
        front_end(&format!("def f : {src} = x"));
        front_end(&format!("def f = fun x => ({src})"));
    }

    #[test]
    fn edited_examples(src in mutated_example()) {
        front_end(&src);
    }

    #[test]
    fn deeply_nested(src in deep_nesting()) {
        front_end(&src);
    }
}

#[test]
fn examples_parse_and_round_trip() {
    for src in EXAMPLES {
        assert!(
            parse_program(src).is_ok(),
            "{src}: {:?}",
            parse_program(src).err()
        );
        front_end(src);
    }
}
