//! Mutations of text inputs (programs, strategies, case tables): byte flips, token swaps,
//! deletions, duplications, truncation, deep nesting and random token soup drawn from a
//! vocabulary of the language.

use crate::rng::Rng;

/// Numbers that sit on the edges of the integer types and of what fits in memory.
pub const EXTREME_NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "-1",
    "2147483647",
    "2147483648",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "340282366920938463463374607431768211456",
    "1e9",
    "1e309",
    "-0",
    "0x10",
    "1_000",
    "",
    " 4",
    "NaN",
    "inf",
    "0.5",
];

/// Tokens of RISE programs.
pub const RISE_WORDS: &[&str] = &[
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
    "iterate",
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
    "mapSeq",
    "mapPar",
    "reduceSeq",
    "mapGlobal",
    "asVector",
    "asScalar",
    "vectorFromScalar",
    "gather",
    "scatter",
    "map2",
    "slide2",
    "padClamp2",
    "zip3",
    "at",
    "indexAsNat",
    "natAsIndex",
    "natType",
    "(4294967296 : natType)",
    "9223372036854775807",
    "foreign",
    "exit(1);",
    "abort();",
    "printf(\"x\");",
    "*(volatile int *)0 = 0;",
    "(x / 0.0f)",
    "3e9f",
    "0.0f",
    "1.0f",
    "1e38f",
    "0",
    "1",
    "3",
    "32",
    "255u8",
    "7i64",
    "-1",
    "1.5f16",
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
    "u16",
    "i32",
    "int",
    "bool",
    "idx[n]",
    "vec[f32, 4]",
    "\n",
    "// c\n",
];

/// Tokens of ELEVATE strategy files.
pub const ELV_WORDS: &[&str] = &[
    "def",
    "=",
    ";",
    ";;",
    "<+",
    "@",
    "(",
    ")",
    "[",
    "]",
    ",",
    "id",
    "fail",
    "try",
    "repeat",
    "repeatN",
    "not",
    "all",
    "one",
    "some",
    "topDown",
    "bottomUp",
    "allTopDown",
    "allBottomUp",
    "tryAll",
    "normalize",
    "body",
    "function",
    "argument",
    "argOf",
    "fmap",
    "outermost",
    "innermost",
    "mapNest",
    "inLambda",
    "atLoop",
    "DFNF",
    "BENF",
    "lowerToC",
    "isMap",
    "isReduce",
    "isApp",
    "isToMem",
    "appliedMap",
    "appliedReduce",
    "split",
    "splitJoin",
    "tile",
    "tileND",
    "reorder",
    "vectorize",
    "parallel",
    "unroll",
    "storeInMemory",
    "fuseReduceMap",
    "fissionReduceMap",
    "mapFusion",
    "mapFission",
    "etaAbstraction",
    "betaReduction",
    "addId",
    "transposeMove",
    "toMem",
    "private",
    "local",
    "global",
    "toMapGlobal",
    "toMapLocal",
    "toMapWorkGroup",
    "overlappedTiling",
    "permuteB",
    "0",
    "1",
    "4",
    "32",
    "\n",
    "// c\n",
];

/// Tokens of F-smooth programs.
pub const FSMOOTH_WORDS: &[&str] = &[
    "input", ":", "Vector", "Matrix", "Double", "Index", "Bool", "fun", "->", "let", "=", "in",
    "if", "then", "else", "build", "ifold", "length", "fst", "snd", "(", ")", "[", "]", ",", "+",
    "-", "*", "/", "<", "==", "&&", "||", "!", "0", "1", "0.0", "1.5", "true", "false", "u", "v",
    "M", "x", "i", "s", "exp", "log", "sqrt", "\n", "// c\n",
];

/// `text` with 1 to 4 random mutations using `words` as the vocabulary.
pub fn mutate(rng: &mut Rng, text: &[u8], words: &[&str]) -> Vec<u8> {
    let mut bytes = text.to_vec();
    for _ in 0..rng.range(1, 4) {
        bytes = mutate_once(rng, bytes, words);
    }
    bytes
}

/// Random tokens of the vocabulary, separated by spaces.
pub fn soup(rng: &mut Rng, words: &[&str], max: u64) -> Vec<u8> {
    let mut text = String::new();
    for _ in 0..rng.range(0, max) {
        text.push_str(words[rng.below(words.len())]);
        text.push(' ');
    }
    text.into_bytes()
}

#[derive(Clone, Copy)]
enum Mutation {
    FlipByte,
    RandomByte,
    SwapTokens,
    DeleteToken,
    DuplicateToken,
    ReplaceToken,
    InsertToken,
    ExtremeNumber,
    DuplicateLine,
    DeleteLine,
    Truncate,
    Soup,
    DeepNesting,
}

fn mutate_once(rng: &mut Rng, bytes: Vec<u8>, words: &[&str]) -> Vec<u8> {
    use Mutation::*;
    let m = rng.weighted(&[
        (FlipByte, 6),
        (RandomByte, 4),
        (SwapTokens, 10),
        (DeleteToken, 10),
        (DuplicateToken, 8),
        (ReplaceToken, 14),
        (InsertToken, 12),
        (ExtremeNumber, 10),
        (DuplicateLine, 6),
        (DeleteLine, 6),
        (Truncate, 5),
        (Soup, 6),
        (DeepNesting, 1),
    ]);
    match m {
        FlipByte | RandomByte | Truncate if bytes.is_empty() => bytes,
        FlipByte => {
            let mut b = bytes;
            let i = rng.below(b.len());
            b[i] ^= 1 << rng.below(8);
            b
        }
        RandomByte => {
            let mut b = bytes;
            let i = rng.below(b.len() + 1);
            b.insert(i, rng.bits() as u8);
            b
        }
        Truncate => {
            let mut b = bytes;
            b.truncate(rng.below(b.len()));
            b
        }
        DuplicateLine | DeleteLine => {
            let mut lines: Vec<&[u8]> = bytes.split_inclusive(|&c| c == b'\n').collect();
            if lines.is_empty() {
                return bytes;
            }
            let i = rng.below(lines.len());
            if matches!(m, DuplicateLine) {
                lines.insert(i, lines[i]);
            } else {
                lines.remove(i);
            }
            lines.concat()
        }
        DeepNesting => {
            let depth = *rng.pick(&[100usize, 1_000, 10_000, 100_000]);
            let (open, close) = *rng.pick(&[("(", ")"), ("[", "]"), ("fun x => ", ""), ("- ", "")]);
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let mut tokens = tokenize(&text);
            let i = rng.below(tokens.len() + 1);
            let j = i + rng.below(tokens.len() - i + 1);
            tokens.insert(j, close.repeat(depth));
            tokens.insert(i, open.repeat(depth));
            tokens.concat().into_bytes()
        }
        _ => {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let mut tokens = tokenize(&text);
            edit_tokens(rng, &mut tokens, m, words);
            tokens.concat().into_bytes()
        }
    }
}

/// A token-level mutation of `tokens` (whitespace tokens included).
fn edit_tokens(rng: &mut Rng, tokens: &mut Vec<String>, m: Mutation, words: &[&str]) {
    let len = tokens.len();
    if len == 0 && !matches!(m, Mutation::InsertToken | Mutation::Soup) {
        return;
    }
    match m {
        Mutation::SwapTokens => {
            let (i, j) = (rng.below(len), rng.below(len));
            tokens.swap(i, j);
        }
        Mutation::DeleteToken => {
            tokens.remove(rng.below(len));
        }
        Mutation::DuplicateToken => {
            let i = rng.below(len);
            let t = tokens[i].clone();
            tokens.insert(i, t);
        }
        Mutation::ReplaceToken => tokens[rng.below(len)] = format!(" {} ", rng.pick(words)),
        Mutation::InsertToken => {
            let i = rng.below(len + 1);
            tokens.insert(i, format!(" {} ", rng.pick(words)));
        }
        Mutation::ExtremeNumber => {
            let numbers: Vec<usize> = (0..len)
                .filter(|&i| tokens[i].starts_with(|c: char| c.is_ascii_digit()))
                .collect();
            let i = if numbers.is_empty() {
                rng.below(len)
            } else {
                *rng.pick(&numbers)
            };
            tokens[i] = rng.pick(EXTREME_NUMBERS).to_string();
        }
        _ => {
            let i = rng.below(len + 1);
            let soup = String::from_utf8_lossy(&soup(rng, words, 20)).into_owned();
            tokens.insert(i, soup);
        }
    }
}

/// `text` as tokens: runs of word characters, runs of whitespace, and single other
/// characters. Concatenated, they give `text` back.
pub fn tokenize(text: &str) -> Vec<String> {
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            0
        } else if c.is_whitespace() {
            1
        } else {
            2
        }
    };
    let mut tokens: Vec<String> = Vec::new();
    let mut last = None;
    for c in text.chars() {
        let k = class(c);
        match tokens.last_mut() {
            Some(t) if last == Some(k) && k != 2 => t.push(c),
            _ => tokens.push(c.to_string()),
        }
        last = Some(k);
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_give_the_text_back() {
        let text = "def dot = fun xs ys => zip xs ys |> reduce add 0.0f // é\n";
        assert_eq!(tokenize(text).concat(), text);
        assert!(tokenize(text).contains(&"xs".to_string()));
    }

    #[test]
    fn mutations_change_the_text_and_depend_on_the_seed_only() {
        let text = b"def dot = fun xs ys => zip xs ys |> map (fun p => fst p * snd p)\n";
        let run = |seed| {
            let mut r = Rng::new(seed);
            mutate(&mut r, text, RISE_WORDS)
        };
        assert_eq!(run(3), run(3));
        let changed = (0..50).filter(|&s| run(s) != text.to_vec()).count();
        assert!(
            changed > 40,
            "only {changed} of 50 mutations changed the text"
        );
    }
}
