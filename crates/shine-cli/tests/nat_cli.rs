//! `natType` `+`, `-` and `*` mean on every target what they mean in the interpreter: a
//! result above 2^63 - 1 or below 0 is no natural number, and the run stops with an error
//! naming the definition (the generated code tests the operands before it computes, never
//! wrapping); results that stay natural are the interpreter's.
//!
//! Runs on C, OpenMP, OpenCL (PoCL; `SHINE_SKIP_OPENCL=1` skips it) and, with
//! `SHINE_TEST_GPU=1`, CUDA.

use shine::rise::interp::Scalar;
use shine::rise::{DataType, ScalarType};
use shine::Array;
use std::path::Path;

mod support;
use support::{shine_in as shine, targets};

const PROGRAM: &str = "
def plusNat : {n: nat} -> n.natType -> n.natType -> n.natType =
  fun xs ys => zip xs ys |> map (fun p => fst p + snd p)
def minusNat : {n: nat} -> n.natType -> n.natType -> n.natType =
  fun xs ys => zip xs ys |> map (fun p => fst p - snd p)
def timesNat : {n: nat} -> n.natType -> n.natType -> n.natType =
  fun xs ys => zip xs ys |> map (fun p => fst p * snd p)
def literalSum : f32 -> u16 = fun x => (cast ((9223372036854775807 : natType) + (2 : natType)) : u16)
def literalDifference : f32 -> u16 = fun x => (cast ((5 : natType) - (100 : natType)) : u16)
def literalFine : f32 -> u16 = fun x => (cast ((5 : natType) * (3 : natType) - (15 : natType)) : u16)
";

/// What every target says after the definition's name when a result is no natural number.
const NOT_NATURAL: &str = "a `natType` `+`, `-` or `*` is not a natural number";

fn program_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("p.rise"), PROGRAM).expect("writes the program");
    dir
}

/// `natType` values as an input file `name` in `dir` (`natType` inputs are 64-bit integers).
fn nats(dir: &Path, name: &str, values: &[i64]) -> String {
    let array = Array {
        elem: DataType::Scalar(ScalarType::I64),
        shape: vec![values.len()],
        data: values.iter().map(|&v| Scalar::I64(v)).collect(),
    };
    shine::npy::write(&dir.join(name), &array).expect("writes the input");
    name.to_string()
}

/// `shine eval` (no target) or `shine run --target T` of `def` on `inputs` (or random ones).
fn run(d: &Path, def: &str, target: Option<&str>, inputs: &[&str]) -> (bool, String, String) {
    let mut args = match target {
        Some(t) => vec!["run", "p.rise", "--def", def, "--target", t],
        None => vec!["eval", "p.rise", "--def", def],
    };
    if inputs.is_empty() {
        args.extend(["--random", "1"]);
    }
    for i in inputs {
        args.extend(["--input", i]);
    }
    let (out, text) = shine(d, &args);
    let printed = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success(), printed, text)
}

/// `def` fails in the interpreter with `eval_says`, and on every target with the error of a
/// result that is no natural number.
fn refused_everywhere(d: &Path, def: &str, inputs: &[&str], eval_says: &str) {
    let (ok, _, text) = run(d, def, None, inputs);
    assert!(!ok && text.contains(eval_says), "eval {def}: {text}");
    for t in targets() {
        let (ok, _, text) = run(d, def, Some(t), inputs);
        assert!(!ok, "{def} on {t} computed: {text}");
        assert!(
            text.contains(&format!("`{def}`: {NOT_NATURAL}")),
            "{def} on {t}: {text}"
        );
    }
}

/// `def` prints `want` in the interpreter and on every target.
fn agrees_everywhere(d: &Path, def: &str, inputs: &[&str], want: &str) {
    let (ok, printed, text) = run(d, def, None, inputs);
    assert!(ok, "eval {def}: {text}");
    assert_eq!(printed, want, "eval {def}");
    for t in targets() {
        let (ok, printed, text) = run(d, def, Some(t), inputs);
        assert!(ok, "{def} on {t}: {text}");
        assert_eq!(printed, want, "{def} on {t}");
    }
}

#[test]
fn a_sum_above_the_largest_natural_number_stops_the_program() {
    let dir = program_dir();
    let d = dir.path();
    let xs = nats(d, "xs.npy", &[1, i64::MAX]);
    let ys = nats(d, "ys.npy", &[2, 1]);
    refused_everywhere(
        d,
        "plusNat",
        &[&xs, &ys],
        "9223372036854775807 add 1 is not a natural number",
    );
    let xs = nats(d, "ok.npy", &[1, i64::MAX - 1, 0]);
    let ys = nats(d, "ok2.npy", &[2, 1, 0]);
    agrees_everywhere(
        d,
        "plusNat",
        &[&xs, &ys],
        "[3:nat, 9223372036854775807:nat, 0:nat]",
    );
    refused_everywhere(
        d,
        "literalSum",
        &[],
        "9223372036854775807 add 2 is not a natural number",
    );
}

#[test]
fn a_difference_below_zero_stops_the_program() {
    let dir = program_dir();
    let d = dir.path();
    let xs = nats(d, "xs.npy", &[5, 5]);
    let ys = nats(d, "ys.npy", &[3, 100]);
    refused_everywhere(
        d,
        "minusNat",
        &[&xs, &ys],
        "5 sub 100 is not a natural number",
    );
    let xs = nats(d, "ok.npy", &[5, 100, i64::MAX]);
    let ys = nats(d, "ok2.npy", &[5, 1, 0]);
    agrees_everywhere(
        d,
        "minusNat",
        &[&xs, &ys],
        "[0:nat, 99:nat, 9223372036854775807:nat]",
    );
    refused_everywhere(
        d,
        "literalDifference",
        &[],
        "5 sub 100 is not a natural number",
    );
    agrees_everywhere(d, "literalFine", &[], "0");
}

#[test]
fn a_product_above_the_largest_natural_number_stops_the_program() {
    let dir = program_dir();
    let d = dir.path();
    // 2^32 * 2^31 = 2^63, one above the largest natural number
    let xs = nats(d, "xs.npy", &[3, 1 << 32]);
    let ys = nats(d, "ys.npy", &[2, 1 << 31]);
    refused_everywhere(
        d,
        "timesNat",
        &[&xs, &ys],
        "4294967296 mul 2147483648 is not a natural number",
    );
    // a product that wraps to 0 in 64 bits: 2^62 * 4
    let xs = nats(d, "wrap.npy", &[1 << 62]);
    let ys = nats(d, "wrap2.npy", &[4]);
    refused_everywhere(
        d,
        "timesNat",
        &[&xs, &ys],
        "4611686018427387904 mul 4 is not a natural number",
    );
    let xs = nats(d, "ok.npy", &[1 << 31, i64::MAX, 0, 3]);
    let ys = nats(d, "ok2.npy", &[1 << 31, 1, i64::MAX, 7]);
    agrees_everywhere(
        d,
        "timesNat",
        &[&xs, &ys],
        "[4611686018427387904:nat, 9223372036854775807:nat, 0:nat, 21:nat]",
    );
}

/// Arithmetic on sizes and loop variables is checked like any `natType` arithmetic unless
/// the compiler proves it natural from the variables' ranges: `n - 5` at n = 3 stops every
/// target as it stops the interpreter (it used to print -2 in compiled code), `n - i` for
/// `i < n` needs no check.
#[test]
fn arithmetic_on_sizes_is_checked_unless_proven_natural() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let d = dir.path();
    std::fs::write(
        d.join("p.rise"),
        "def sizeMinus : {n: nat} -> n.f32 -> n.natType = fun xs => xs |> map (fun x => n - (5 : natType))
def sizeMinusIndex : {n: nat} -> n.f32 -> n.natType =
  fun xs => generate (fun i => n - indexAsNat i)
def loopPlusSize : {n: nat} -> n.f32 -> n.natType =
  fun xs => generate (fun i => (indexAsNat i + (1 : natType)) - n)
",
    )
    .expect("writes the program");
    let sized = |def: &str, n: &str| -> (String, Vec<String>) {
        let mut args: Vec<String> = ["run", "p.rise", "--def", def, "--random", "1", "--nat"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.push(format!("n={n}"));
        (def.to_string(), args)
    };
    for (def, n, eval_says) in [
        ("sizeMinus", "3", "3 sub 5 is not a natural number"),
        ("loopPlusSize", "4", "1 sub 4 is not a natural number"),
    ] {
        let (_, mut args) = sized(def, n);
        args[0] = "eval".into();
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (out, text) = shine(d, &refs);
        assert!(
            !out.status.success() && text.contains(eval_says),
            "eval {def}: {text}"
        );
        for t in targets() {
            let (_, mut args) = sized(def, n);
            args.extend(["--target".to_string(), t.to_string()]);
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let (out, text) = shine(d, &refs);
            assert!(!out.status.success(), "{def} on {t} computed: {text}");
            assert!(
                text.contains(&format!("`{def}`: {NOT_NATURAL}")),
                "{def} on {t}: {text}"
            );
        }
    }
    for t in targets() {
        let (_, mut args) = sized("sizeMinus", "7");
        args.extend(["--target".to_string(), t.to_string()]);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (out, text) = shine(d, &refs);
        assert!(out.status.success(), "sizeMinus on {t}: {text}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("2:nat"),
            "{text}"
        );
    }
    let (out, text) = shine(
        d,
        &[
            "compile",
            "p.rise",
            "--def",
            "sizeMinusIndex",
            "--target",
            "c",
        ],
    );
    assert!(out.status.success(), "{text}");
    let code = String::from_utf8_lossy(&out.stdout);
    assert!(
        !code.contains("shine_sub_nat"),
        "n - i with i < n is proven: {code}"
    );
    let (out, text) = shine(
        d,
        &["compile", "p.rise", "--def", "sizeMinus", "--target", "c"],
    );
    assert!(out.status.success(), "{text}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("shine_sub_nat"),
        "{text}"
    );
}
