//! Fuzzing `shine check` through the command line: random bytes, random RISE
//! token soup and randomly mutated example programs must never make it panic
//! or crash; it exits with 0 (the program checks) or 1 (a reported error).
//!
//! Every case spawns a process, so the default is small (64 cases in all);
//! set `PROPTEST_CASES` to run more (split over the three properties).

use proptest::prelude::*;
use proptest::test_runner::Config;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The number of cases of all three properties together.
fn total_cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64)
}

/// A config running `share` of the total cases, writing no regression files.
fn config(share: f64) -> Config {
    Config {
        cases: ((total_cases() as f64 * share).ceil() as u32).max(1),
        failure_persistence: None,
        ..Config::default()
    }
}

/// Writes `text` to a fresh `.rise` file, runs `shine check` on it and checks
/// that it exited with 0 or 1, without a panic.
fn check_does_not_crash(text: &[u8]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fuzz.rise");
    std::fs::write(&path, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_shine"))
        .arg("check")
        .arg(&path)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("cannot start the shine binary");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let shown = String::from_utf8_lossy(text);
    prop_assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "shine check exited with {:?} on {shown:?}\nstderr:\n{stderr}",
        out.status
    );
    prop_assert!(
        !stderr.contains("panicked at") && !stderr.contains("RUST_BACKTRACE"),
        "shine check panicked on {shown:?}:\n{stderr}"
    );
    if out.status.success() {
        // every line of a successful check is `name : type` or a size constraint
        let stdout = String::from_utf8_lossy(&out.stdout);
        for line in stdout.lines() {
            prop_assert!(
                line.contains(" : ") || line.starts_with("  where "),
                "not `name : type` or `  where C`: {line:?}"
            );
        }
    } else {
        prop_assert!(
            !stderr.trim().is_empty(),
            "a failure without a message on {shown:?}"
        );
    }
    Ok(())
}

/// Tokens of RISE: keywords, punctuation, operators, primitives, literals,
/// kinds and types, and names the examples use.
const VOCABULARY: &[&str] = &[
    "def",
    "fun",
    "=>",
    "->",
    "|>",
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
    "=",
    "==",
    "+",
    "-",
    "*",
    "/",
    "/^",
    "%",
    "^",
    "<",
    ">",
    "!",
    "true",
    "false",
    "map",
    "reduce",
    "zip",
    "unzip",
    "split",
    "join",
    "slide",
    "padClamp",
    "padCst",
    "transpose",
    "fst",
    "snd",
    "makePair",
    "generate",
    "idx",
    "take",
    "drop",
    "concat",
    "select",
    "cast",
    "add",
    "mul",
    "id",
    "let",
    "toMem",
    "makeArray",
    "map2",
    "slide2",
    "padClamp2",
    "map3",
    "zip3",
    "at",
    "indexAsNat",
    "natAsIndex",
    "0.0f",
    "1.0f",
    "2.5f",
    "1e3f",
    "1.0f16",
    "1.0f64",
    "0",
    "1",
    "3",
    "32",
    "255u8",
    "7i64",
    "n",
    "m",
    "k",
    "x",
    "xs",
    "p",
    "f",
    "nat",
    "data",
    "f32",
    "f64",
    "i32",
    "int",
    "bool",
    "idx[n]",
    "vec",
    "\n",
    "// comment\n",
];

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(VOCABULARY), 0..48).prop_map(|tokens| {
        let mut text = String::new();
        for t in tokens {
            text.push_str(t);
            if t != "\n" {
                text.push(' ');
            }
        }
        text
    })
}

/// Token soup that starts like a definition, to get past the first token.
fn definition_soup() -> impl Strategy<Value = String> {
    (
        prop::sample::select(&["f", "dot", "n", "map"][..]),
        prop::option::of(token_soup()),
        token_soup(),
    )
        .prop_map(|(name, annotation, body)| match annotation {
            Some(ty) => format!("def {name} : {ty} = {body}\n"),
            None => format!("def {name} = {body}\n"),
        })
}

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// The example programs, split into whitespace-separated words; line breaks
/// are kept as `"\n"` words, so that comments end where they did.
fn example_words() -> Vec<Vec<String>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(examples_dir())
        .expect("examples/ is missing")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rise"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            let mut words = Vec::new();
            for line in text.lines() {
                words.extend(line.split_whitespace().map(str::to_string));
                words.push("\n".to_string());
            }
            words
        })
        .collect()
}

/// One edit of a word list: at a position (a fraction of its length),
/// delete, replace with a token, insert a token, or duplicate a word.
#[derive(Debug, Clone)]
enum Edit {
    Delete(f64),
    Replace(f64, &'static str),
    Insert(f64, &'static str),
    Duplicate(f64),
}

fn edit() -> impl Strategy<Value = Edit> {
    let at = 0.0..1.0f64;
    let token = prop::sample::select(VOCABULARY);
    prop_oneof![
        at.clone().prop_map(Edit::Delete),
        (at.clone(), token.clone()).prop_map(|(a, t)| Edit::Replace(a, t)),
        (at.clone(), token).prop_map(|(a, t)| Edit::Insert(a, t)),
        at.prop_map(Edit::Duplicate),
    ]
}

fn apply(words: &mut Vec<String>, edit: &Edit) {
    let index = |a: f64, len: usize| ((a * len as f64) as usize).min(len.saturating_sub(1));
    match *edit {
        Edit::Delete(a) if !words.is_empty() => {
            let i = index(a, words.len());
            words.remove(i);
        }
        Edit::Replace(a, t) if !words.is_empty() => {
            let i = index(a, words.len());
            words[i] = t.to_string();
        }
        Edit::Insert(a, t) => {
            let i = index(a, words.len() + 1);
            words.insert(i, t.to_string());
        }
        Edit::Duplicate(a) if !words.is_empty() => {
            let i = index(a, words.len());
            let w = words[i].clone();
            words.insert(i, w);
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(config(0.25))]
    #[test]
    fn check_survives_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        check_does_not_crash(&bytes)?;
    }
}

proptest! {
    #![proptest_config(config(0.375))]
    #[test]
    fn check_survives_token_soup(
        text in prop_oneof![token_soup(), definition_soup()]
    ) {
        check_does_not_crash(text.as_bytes())?;
    }
}

proptest! {
    #![proptest_config(config(0.375))]
    #[test]
    fn check_survives_mutated_examples(
        which in any::<prop::sample::Index>(),
        edits in prop::collection::vec(edit(), 1..4),
    ) {
        let examples = example_words();
        prop_assume!(!examples.is_empty());
        let mut words = which.get(&examples).clone();
        for e in &edits {
            apply(&mut words, e);
        }
        check_does_not_crash(words.join(" ").as_bytes())?;
    }
}
