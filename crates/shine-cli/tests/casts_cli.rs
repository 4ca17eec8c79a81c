//! Casts and `natType` values mean on every target what they mean in the interpreter.
//!
//! * A float cast to an integer type out of its range, or NaN, a float cast to `natType` and
//!   a negative integer cast to `natType` have no value (the interpreter fails them): the
//!   generated code checks each before the C conversion and stops with an error naming the
//!   definition, never a value. A table of floats (±0, halves, 2.7, the edges of the integer
//!   types, 2^31, 2^63, 2^64, infinities, NaN, denormals) cast to every integer type and to
//!   `natType`, from `f32` and from `f64`: the values the interpreter casts are cast to the
//!   same values in one run per type (`shine run` against `shine eval`), and the values
//!   nearest the range on either side, and NaN, each stop the run (the interpreter fails
//!   each: [`Scalar::cast`] is its conversion).
//! * `natType` values are 64-bit on every target, whatever the index width of the run: values
//!   above 2^32 survive a GPU program, and `natAsIndex` checks them in 64 bits.
//!
//! Runs on C, OpenMP, OpenCL (PoCL; `SHINE_SKIP_OPENCL=1` skips it) and, with
//! `SHINE_TEST_GPU=1`, CUDA.

use shine::rise::interp::Scalar;
use shine::rise::ScalarType;
use std::path::Path;
use std::process::Output;

mod support;
use support::{shine_in as shine, targets, write_scalars as write};

/// The integer types of the table (`natType` is [`NAT`]).
const INTEGERS: [ScalarType; 9] = [
    ScalarType::I8,
    ScalarType::U8,
    ScalarType::I16,
    ScalarType::U16,
    ScalarType::I32,
    ScalarType::U32,
    ScalarType::I64,
    ScalarType::U64,
    ScalarType::Int,
];

/// The name of `natType` in the table's programs.
const NAT: &str = "natType";

/// The table's float values (as `f64`; an `f32` table rounds them).
fn table() -> Vec<f64> {
    vec![
        0.0,
        -0.0,
        0.5,
        -0.5,
        2.7,
        -1.0,
        255.0,
        255.5,
        256.0,
        -128.5,
        -129.0,
        2f64.powi(31),
        -(2f64.powi(31)),
        2f64.powi(63),
        -(2f64.powi(63)),
        2f64.powi(64),
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1e-40,
        -1e-40,
    ]
}

fn float_scalar(float: ScalarType, v: f64) -> Scalar {
    match float {
        ScalarType::F32 => Scalar::F32(v as f32),
        _ => Scalar::F64(v),
    }
}

/// `shine ARGS` in `dir`; its output and its standard output and error as one text.
fn run(
    dir: &Path,
    program: &str,
    def: &str,
    target: Option<&str>,
    inputs: &[&str],
) -> (Output, String) {
    let mut args = match target {
        Some(t) => vec!["run", program, "--def", def, "--target", t],
        None => vec!["eval", program, "--def", def],
    };
    for i in inputs {
        args.extend(["--input", i]);
    }
    shine(dir, &args)
}

/// The printed result of a successful `shine run` or `shine eval`.
fn printed(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The definitions casting `from` to each integer type and to `natType`: `to_u8`, ...
fn cast_program(from: ScalarType) -> String {
    let names = INTEGERS
        .iter()
        .map(|t| t.name())
        .chain([NAT])
        .map(|t| {
            format!(
                "def to_{t} : {{n: nat}} -> n.{f} -> n.{t} = fun xs => xs |> map (fun x => (cast x : {t}))\n",
                f = from.name()
            )
        });
    names.collect()
}

/// Whether the interpreter casts `x` to `to` (`None`: `natType`, which takes integers only).
fn interpreter_casts(x: Scalar, to: Option<ScalarType>) -> bool {
    to.is_some_and(|t| x.cast(t).is_ok())
}

/// The values the interpreter refuses that the test runs one by one: the nearest below the
/// range, the nearest above, and NaN.
fn edges(refused: &[f64]) -> Vec<f64> {
    let below = refused
        .iter()
        .copied()
        .filter(|v| *v < 0.0)
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    let above = refused
        .iter()
        .copied()
        .filter(|v| *v >= 0.0)
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v))));
    let nan = refused.iter().copied().find(|v| v.is_nan());
    [below, above, nan].into_iter().flatten().collect()
}

/// The float table cast from `float` to every integer type and `natType` on every target.
fn casts_agree_with_the_interpreter(float: ScalarType) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let d = dir.path();
    std::fs::write(d.join("casts.rise"), cast_program(float)).expect("writes the program");
    let to_types = INTEGERS
        .iter()
        .map(|&t| (t.name(), Some(t)))
        .chain([(NAT, None)]);
    for (name, to) in to_types {
        let def = format!("to_{name}");
        let values = table();
        let (cast, refused): (Vec<f64>, Vec<f64>) = values
            .iter()
            .partition(|&&v| interpreter_casts(float_scalar(float, v), to));
        // the values the interpreter casts, in one run per target
        if !cast.is_empty() {
            let data = cast.iter().map(|&v| float_scalar(float, v)).collect();
            let input = write(d, "cast.npy", float, data);
            let (out, text) = run(d, "casts.rise", &def, None, &[&input]);
            assert!(out.status.success(), "eval {def} of {cast:?}: {text}");
            let want = printed(&out);
            for t in targets() {
                let (out, text) = run(d, "casts.rise", &def, Some(t), &[&input]);
                assert!(out.status.success(), "{def} on {t} of {cast:?}: {text}");
                assert_eq!(printed(&out), want, "{def} on {t} of {cast:?}");
            }
        }
        // the values it refuses nearest the range, and NaN, one by one
        for v in edges(&refused) {
            let input = write(d, "refused.npy", float, vec![float_scalar(float, v)]);
            let (out, text) = run(d, "casts.rise", &def, None, &[&input]);
            assert!(
                !out.status.success()
                    && (text.contains("cannot cast") || text.contains("out of range")),
                "eval {def} of {v}: {text}"
            );
            for t in targets() {
                let (out, text) = run(d, "casts.rise", &def, Some(t), &[&input]);
                assert!(!out.status.success(), "{def} on {t} of {v}: {text}");
                assert!(
                    text.contains(&format!(
                        "`{def}`: a `cast` is undefined in C (out of range"
                    )),
                    "{def} on {t} of {v}: {text}"
                );
            }
        }
    }
}

#[test]
fn f32_casts_to_integers_agree_with_the_interpreter_or_stop() {
    casts_agree_with_the_interpreter(ScalarType::F32);
}

#[test]
fn f64_casts_to_integers_agree_with_the_interpreter_or_stop() {
    casts_agree_with_the_interpreter(ScalarType::F64);
}

const PROGRAM: &str = "
def quantize : {n: nat} -> n.f32 -> n.u8 = fun xs =>
  xs |> map (fun x => (cast (x * 255.0f) : u8))
def pickCast : {n m: nat} -> m.f32 -> n.f32 -> m.f32 =
  fun ks xs => ks |> map (fun k => idx (natAsIndex n (cast k)) xs)
def toNat : {n: nat} -> n.i32 -> n.natType = fun xs => xs |> map (fun x => (cast x : natType))
def u64ToNat : {n: nat} -> n.u64 -> n.natType = fun xs => xs |> map (fun x => (cast x : natType))
def twice : {n: nat} -> n.natType -> n.natType = fun xs => xs |> map (fun x => x + x)
def pick : {n m: nat} -> m.natType -> n.f32 -> m.f32 =
  fun ks xs => ks |> map (fun k => idx (natAsIndex n k) xs)
";

fn program_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("p.rise"), PROGRAM).expect("writes the program");
    dir
}

/// `def` on `inputs` fails in the interpreter with `eval_says`, and on every target with
/// `run_says` after the definition's name.
fn refused_everywhere(d: &Path, def: &str, inputs: &[&str], eval_says: &str, run_says: &str) {
    let (out, text) = run(d, "p.rise", def, None, inputs);
    assert!(
        !out.status.success() && text.contains(eval_says),
        "eval {def}: {text}"
    );
    for t in targets() {
        let (out, text) = run(d, "p.rise", def, Some(t), inputs);
        assert!(!out.status.success(), "{def} on {t}: {text}");
        assert!(
            text.contains(&format!("`{def}`: {run_says}")),
            "{def} on {t}: {text}"
        );
    }
}

/// `def` on `inputs` prints what the interpreter prints, on every target.
fn agrees_everywhere(d: &Path, def: &str, inputs: &[&str]) -> String {
    let (out, text) = run(d, "p.rise", def, None, inputs);
    assert!(out.status.success(), "eval {def}: {text}");
    let want = printed(&out);
    for t in targets() {
        let (out, text) = run(d, "p.rise", def, Some(t), inputs);
        assert!(out.status.success(), "{def} on {t}: {text}");
        assert_eq!(printed(&out), want, "{def} on {t}");
    }
    want
}

const CAST_ERROR: &str = "a `cast` is undefined in C (out of range";
const INDEX_ERROR: &str = "an index read from data is outside the range of its type";

#[test]
fn a_float_out_of_range_of_u8_stops_the_program() {
    let dir = program_dir();
    let d = dir.path();
    let data = [0.2f32, 1.01, -0.01].map(Scalar::F32).to_vec();
    let xs = write(d, "q.npy", ScalarType::F32, data);
    refused_everywhere(
        d,
        "quantize",
        &[&xs],
        "casting 257.55 to u8 is undefined in C (out of range)",
        CAST_ERROR,
    );
    let data = [0.2f32, 1.0, -0.0].map(Scalar::F32).to_vec();
    let xs = write(d, "ok.npy", ScalarType::F32, data);
    assert_eq!(agrees_everywhere(d, "quantize", &[&xs]), "[51, 255, 0]");
}

#[test]
fn floats_and_negative_numbers_have_no_natural_number() {
    let dir = program_dir();
    let d = dir.path();
    let table = write(
        d,
        "xs.npy",
        ScalarType::F32,
        (0..4).map(|k| Scalar::F32(k as f32)).collect(),
    );
    for (name, v) in [
        ("frac.npy", 2.7f32),
        ("nan.npy", f32::NAN),
        ("two.npy", 2.0),
    ] {
        let ks = write(d, name, ScalarType::F32, vec![Scalar::F32(v)]);
        let eval_says = format!("cannot cast {v:?} to natType");
        refused_everywhere(d, "pickCast", &[&ks, &table], &eval_says, CAST_ERROR);
    }
    let negative = write(
        d,
        "neg.npy",
        ScalarType::I32,
        [3, -1].map(Scalar::I32).to_vec(),
    );
    refused_everywhere(
        d,
        "toNat",
        &[&negative],
        "cannot cast -1 to natType",
        CAST_ERROR,
    );
    let ok = write(
        d,
        "ok.npy",
        ScalarType::I32,
        [0, 5, i32::MAX].map(Scalar::I32).to_vec(),
    );
    assert_eq!(
        agrees_everywhere(d, "toNat", &[&ok]),
        "[0:nat, 5:nat, 2147483647:nat]"
    );
    let big = write(d, "big.npy", ScalarType::U64, vec![Scalar::U64(1 << 63)]);
    refused_everywhere(d, "u64ToNat", &[&big], "to natType", CAST_ERROR);
}

#[test]
fn natural_numbers_above_2_to_the_32_survive_every_target() {
    let dir = program_dir();
    let d = dir.path();
    let values = [0i64, 5, 1 << 40, (1 << 32) + 1, 1 << 61];
    let ks = write(
        d,
        "ks.npy",
        ScalarType::I64,
        values.map(Scalar::I64).to_vec(),
    );
    assert_eq!(
        agrees_everywhere(d, "twice", &[&ks]),
        "[0:nat, 10:nat, 2199023255552:nat, 8589934594:nat, 4611686018427387904:nat]"
    );
    // natAsIndex checks the whole value: 2^32 + 1 is no index into 4 elements
    let xs = write(
        d,
        "xs.npy",
        ScalarType::F32,
        [10.0f32, 20.0, 30.0, 40.0].map(Scalar::F32).to_vec(),
    );
    let wide = write(
        d,
        "wide.npy",
        ScalarType::I64,
        [2, (1 << 32) + 1].map(Scalar::I64).to_vec(),
    );
    refused_everywhere(
        d,
        "pick",
        &[&wide, &xs],
        "4294967297 is not an index into 4 elements",
        INDEX_ERROR,
    );
    let near = write(
        d,
        "near.npy",
        ScalarType::I64,
        [2, 1].map(Scalar::I64).to_vec(),
    );
    assert_eq!(agrees_everywhere(d, "pick", &[&near, &xs]), "[30.0, 20.0]");
}
