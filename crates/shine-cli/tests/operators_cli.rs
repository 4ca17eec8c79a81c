//! The C operators of RISE (`< <= > >= == != && || ! & | ^ ~ << >>`) and the float literals
//! `inf`/`nan` mean on every target what they mean in the interpreter.
//!
//! * Every integer type: each operator on random values and the type's edges (its minimum,
//!   maximum, -1, 0, 1), at sizes 1, 7 and 13, computed by `shine run` on every target
//!   against `shine eval`, and against numpy where `python3` has it (narrow types wrap).
//! * Shifts: amounts 0 and width - 1 (in the table), width and -1 (signed types) each stop
//!   the program with an error on every target, as in the interpreter.
//! * Floats (`f16 bf16 f32 f64`): comparisons with NaN and infinities, and the literals.
//!
//! Runs on C, OpenMP, OpenCL (PoCL; `SHINE_SKIP_OPENCL=1` skips it) and, with
//! `SHINE_TEST_GPU=1`, CUDA (`f16` is refused by OpenCL devices without `cl_khr_fp16`).

use shine::rise::interp::Scalar;
use shine::rise::ScalarType;
use std::path::Path;
use std::process::{Command, Output};

mod support;
use support::{shine_in as shine, targets, write_scalars as write};

const SIZES: [usize; 3] = [1, 7, 13];

/// The operators on `x` and `y` (`y` is never 0), each a row of the result, and their
/// numpy spellings (`None`: not checked against numpy, C's truncating `/` and `%`).
const ARITH: [(&str, Option<&str>); 13] = [
    ("x + y", Some("x + y")),
    ("x * y", Some("x * y")),
    ("x / y", None),
    ("x % y", None),
    ("x & y", Some("x & y")),
    ("x | y", Some("x | y")),
    ("x ^ y", Some("x ^ y")),
    ("~x", Some("~x")),
    ("x - y", Some("x - y")),
    ("-x ^ y & x | y", Some("(-x) ^ (y & x) | y")),
    (
        "(cast (x < y && x != y) : T)",
        Some("((x < y) & (x != y)).astype(T)"),
    ),
    (
        "(cast (x <= y || !(x >= y)) : T)",
        Some("((x <= y) | ~(x >= y)).astype(T)"),
    ),
    (
        "(cast (x > y) : T) + (cast (x == y) : T)",
        Some("(x > y).astype(T) + (x == y).astype(T)"),
    ),
];

/// The shifts of `x` by `k` (`0 <= k < width`).
const SHIFTS: [(&str, &str); 3] = [
    ("x << k", "np.left_shift(x, k)"),
    ("x >> k", "np.right_shift(x, k)"),
    (
        "(x >> k) << k ^ x",
        "np.left_shift(np.right_shift(x, k), k) ^ x",
    ),
];

fn width(t: ScalarType) -> i64 {
    match t {
        ScalarType::I8 | ScalarType::U8 => 8,
        ScalarType::I16 | ScalarType::U16 => 16,
        ScalarType::I64 | ScalarType::U64 => 64,
        _ => 32,
    }
}

fn numpy_type(t: ScalarType) -> &'static str {
    match t {
        ScalarType::Int => "np.int32",
        ScalarType::I8 => "np.int8",
        ScalarType::U8 => "np.uint8",
        ScalarType::I16 => "np.int16",
        ScalarType::U16 => "np.uint16",
        ScalarType::I32 => "np.int32",
        ScalarType::U32 => "np.uint32",
        ScalarType::I64 => "np.int64",
        _ => "np.uint64",
    }
}

/// A definition mapping the rows of `ops` over zipped `xs` and `ys` (named `x`, `y` or `k`).
fn def(name: &str, t: ScalarType, var: &str, ops: &[&str]) -> String {
    let rows = ops
        .iter()
        .map(|op| format!("({})", op.replace('T', t.name())))
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        "def {name} : {{n: nat}} -> n.{t} -> n.{t} -> n.{m}.{t} = fun xs ys => zip xs ys |> \
         map (fun p => (fun x {var} => makeArray {m} {rows}) (fst p) (snd p))\n",
        t = t.name(),
        m = ops.len()
    )
}

fn program(t: ScalarType) -> String {
    let arith: Vec<&str> = ARITH.iter().map(|(op, _)| *op).collect();
    let shifts: Vec<&str> = SHIFTS.iter().map(|(op, _)| *op).collect();
    format!(
        "{}{}def shl1 : {{n: nat}} -> n.{t} -> n.{t} -> n.{t} = fun xs ks => zip xs ks |> map (fun p => fst p << snd p)\n\
         def shr1 : {{n: nat}} -> n.{t} -> n.{t} -> n.{t} = fun xs ks => zip xs ks |> map (fun p => fst p >> snd p)\n",
        def("arith", t, "y", &arith),
        def("shifts", t, "k", &shifts),
        t = t.name()
    )
}

/// A small deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// `n` values of `t`: its edges first, then random ones (never 0 where `nonzero`).
fn values(t: ScalarType, n: usize, rng: &mut Rng, nonzero: bool) -> Vec<Scalar> {
    let (lo, hi) = t.int_range().expect("an integer type");
    let edges = [lo, hi, -1, 1, 0];
    let mut out = Vec::new();
    let mut i = 0;
    while out.len() < n {
        let v = match edges.get(i) {
            Some(&e) => e,
            None => lo + (rng.next() as i128).rem_euclid(hi - lo + 1),
        };
        i += 1;
        if (lo..=hi).contains(&v) && !(nonzero && v == 0) {
            out.push(int(t, v));
        }
    }
    out
}

fn int(t: ScalarType, v: i128) -> Scalar {
    match t {
        ScalarType::U64 => Scalar::U64(v as u64),
        _ => Scalar::from_int(t, v as i64).expect("in range"),
    }
}

fn run(dir: &Path, def: &str, target: Option<&str>, inputs: &[&str]) -> (Output, String) {
    let mut args = match target {
        Some(t) => vec!["run", "ops.rise", "--def", def, "--target", t],
        None => vec!["eval", "ops.rise", "--def", def],
    };
    for i in inputs {
        args.extend(["--input", i]);
    }
    shine(dir, &args)
}

fn printed(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Whether `python3` has numpy here.
fn has_numpy() -> bool {
    Command::new("python3")
        .args(["-c", "import numpy"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// numpy's rows of `exprs` on the inputs, printed as the interpreter prints (`[[a, b], ...]`).
fn numpy(dir: &Path, t: ScalarType, var: &str, exprs: &[&str], inputs: &[&str]) -> String {
    let rows = exprs
        .iter()
        .map(|e| format!("({})", e.replace('T', numpy_type(t))))
        .collect::<Vec<_>>()
        .join(", ");
    let script = format!(
        "import numpy as np, warnings\nwarnings.simplefilter('ignore')\n\
         x = np.load('{}'); {var} = np.load('{}')\n\
         r = np.stack([np.asarray(e).astype({nt}) for e in [{rows}]], axis=1)\n\
         print('[' + ', '.join('[' + ', '.join(str(int(v)) for v in row) + ']' for row in r) + ']')\n",
        inputs[0],
        inputs[1],
        nt = numpy_type(t)
    );
    let out = Command::new("python3")
        .current_dir(dir)
        .args(["-c", &script])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `def` on the inputs: every target prints what the interpreter prints (and numpy, if given).
fn agrees(dir: &Path, def: &str, inputs: &[&str], numpy: Option<String>) {
    let (out, text) = run(dir, def, None, inputs);
    assert!(out.status.success(), "eval {def}: {text}");
    let want = printed(&out);
    if let Some(np) = numpy {
        assert_eq!(want, np, "{def}: the interpreter against numpy");
    }
    for t in targets() {
        let (out, text) = run(dir, def, Some(t), inputs);
        assert!(out.status.success(), "{def} on {t}: {text}");
        assert_eq!(printed(&out), want, "{def} on {t}");
    }
}

/// A shift by `k` stops the program on every target, as in the interpreter.
fn shift_stops(dir: &Path, t: ScalarType, k: i64) {
    let xs = write(dir, "one.npy", t, vec![int(t, 1)]);
    let ks = write(dir, "bad.npy", t, vec![int(t, i128::from(k))]);
    for def in ["shl1", "shr1"] {
        let (out, text) = run(dir, def, None, &[&xs, &ks]);
        assert!(
            !out.status.success() && text.contains("integer shift amount out of range"),
            "eval {def} by {k} ({}): {text}",
            t.name()
        );
        for target in targets() {
            let (out, text) = run(dir, def, Some(target), &[&xs, &ks]);
            assert!(
                !out.status.success()
                    && text.contains(&format!("`{def}`: integer shift amount out of range")),
                "{def} by {k} ({}) on {target}: {text}",
                t.name()
            );
        }
    }
}

fn integer_operators(t: ScalarType) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let d = dir.path();
    std::fs::write(d.join("ops.rise"), program(t)).expect("writes the program");
    let numpy_here = has_numpy();
    let mut rng = Rng(width(t) as u64 * 7919 + t.name().len() as u64);
    for n in SIZES {
        let xs = write(d, "xs.npy", t, values(t, n, &mut rng, false));
        let ys = write(d, "ys.npy", t, values(t, n, &mut rng, true));
        let exprs: Vec<&str> = ARITH.iter().filter_map(|(_, np)| *np).collect();
        let checked: Vec<&str> = ARITH
            .iter()
            .filter(|(_, np)| np.is_some())
            .map(|(op, _)| *op)
            .collect();
        // numpy checks the rows it spells; the targets check every row
        std::fs::write(d.join("np.rise"), def("arith", t, "y", &checked))
            .expect("writes the numpy program");
        if numpy_here {
            let (out, text) = shine(
                d,
                &[
                    "eval", "np.rise", "--def", "arith", "--input", &xs, "--input", &ys,
                ],
            );
            assert!(out.status.success(), "{text}");
            assert_eq!(
                printed(&out),
                numpy(d, t, "y", &exprs, &[&xs, &ys]),
                "{} numpy",
                t.name()
            );
        }
        agrees(d, "arith", &[&xs, &ys], None);
        // amounts 0 and width - 1 first, then in between
        let w = width(t);
        let ks: Vec<Scalar> = (0..n)
            .map(|i| match i {
                0 => int(t, 0),
                1 => int(t, i128::from(w - 1)),
                _ => int(t, (rng.next() % w as u64) as i128),
            })
            .collect();
        let ks = write(d, "ks.npy", t, ks);
        let np = numpy_here.then(|| {
            let exprs: Vec<&str> = SHIFTS.iter().map(|(_, np)| *np).collect();
            numpy(d, t, "k", &exprs, &[&xs, &ks])
        });
        agrees(d, "shifts", &[&xs, &ks], np);
    }
    shift_stops(d, t, width(t));
    if t.int_range().is_some_and(|(lo, _)| lo < 0) {
        shift_stops(d, t, -1);
    }
}

#[test]
fn i8_operators() {
    integer_operators(ScalarType::I8);
}
#[test]
fn u8_operators() {
    integer_operators(ScalarType::U8);
}
#[test]
fn i16_operators() {
    integer_operators(ScalarType::I16);
}
#[test]
fn u16_operators() {
    integer_operators(ScalarType::U16);
}
#[test]
fn i32_operators() {
    integer_operators(ScalarType::I32);
}
#[test]
fn u32_operators() {
    integer_operators(ScalarType::U32);
}
#[test]
fn i64_operators() {
    integer_operators(ScalarType::I64);
}
#[test]
fn u64_operators() {
    integer_operators(ScalarType::U64);
}
#[test]
fn int_operators() {
    integer_operators(ScalarType::Int);
}

const FLOATS: [ScalarType; 4] = [
    ScalarType::F16,
    ScalarType::Bf16,
    ScalarType::F32,
    ScalarType::F64,
];

/// The literal suffix of a float type (`inff`, `nanbf16`).
fn suffix(t: ScalarType) -> &'static str {
    match t {
        ScalarType::F32 => "f",
        ScalarType::F64 => "",
        ScalarType::F16 => "f16",
        _ => "bf16",
    }
}

/// Comparisons with NaN and infinities, and the literals, on every float type.
#[test]
fn float_comparisons_and_literals_agree_with_the_interpreter() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let d = dir.path();
    for t in FLOATS {
        let s = suffix(t);
        let cmp = [
            "x < y",
            "x <= y",
            "x > y",
            "x >= y",
            "x == y",
            "x != y",
            "!(x < y) && x != inf",
        ]
        .map(|c| {
            format!(
                "(select ({}) 1.0{s} 0.0{s})",
                c.replace("inf", &format!("inf{s}"))
            )
        });
        let program = format!(
            "{}def lits : {{n: nat}} -> n.{t} -> n.{t} -> n.4.{t} = fun xs ys => zip xs ys |> map (fun p => \
             makeArray 4 (select (fst p < inf{s}) (-inf{s}) inf{s}) (nan{s}) (fst p + nan{s}) (max (snd p) (-inf{s})))\n",
            def("arith", t, "y", &cmp.iter().map(String::as_str).collect::<Vec<_>>()),
            t = t.name()
        );
        std::fs::write(d.join("ops.rise"), program).expect("writes the program");
        let table = [
            0.0,
            -0.0,
            1.5,
            -2.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let float = |v: f64| Scalar::from_float(t, v).expect("a float");
        for n in SIZES {
            let xs: Vec<Scalar> = (0..n).map(|i| float(table[i % table.len()])).collect();
            let ys: Vec<Scalar> = (0..n)
                .map(|i| float(table[(i * 3 + 1) % table.len()]))
                .collect();
            let xs = write(d, "xs.npy", t, xs);
            let ys = write(d, "ys.npy", t, ys);
            for def in ["arith", "lits"] {
                let (out, text) = run(d, def, None, &[&xs, &ys]);
                assert!(out.status.success(), "eval {def} ({}): {text}", t.name());
                let want = printed(&out);
                for target in targets() {
                    let (out, text) = run(d, def, Some(target), &[&xs, &ys]);
                    if t == ScalarType::F16 && target == "opencl" && text.contains("cl_khr_fp16") {
                        continue;
                    }
                    assert!(
                        out.status.success(),
                        "{def} ({}) on {target}: {text}",
                        t.name()
                    );
                    assert_eq!(printed(&out), want, "{def} ({}) on {target}", t.name());
                }
            }
        }
    }
}

/// Bitwise operations and shifts take integers: a float or `bool` operand is a type error.
#[test]
fn bitwise_operators_refuse_floats_and_bools() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let d = dir.path();
    for (body, ty) in [
        ("x & x", "f32"),
        ("x << x", "f64"),
        ("~x", "bool"),
        ("x | x", "bool"),
    ] {
        std::fs::write(
            d.join("bad.rise"),
            format!("def f = fun (x: {ty}) => {body}\n"),
        )
        .expect("writes the program");
        let (out, text) = shine(d, &["check", "bad.rise"]);
        assert!(
            !out.status.success() && text.contains("takes an integer value"),
            "{body} on {ty}: {text}"
        );
    }
}

/// A definition may reuse a primitive's name: the file's uses mean it, with a warning.
#[test]
fn a_definition_shadows_a_primitive_with_a_warning() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let d = dir.path();
    std::fs::write(
        d.join("fabs.rise"),
        "def fabs = fun (x: f32) => x * 2.0f\ndef g : {n: nat} -> n.f32 -> n.f32 = fun xs => map fabs xs\n",
    )
    .expect("writes the program");
    let xs = write(
        d,
        "xs.npy",
        ScalarType::F32,
        vec![Scalar::F32(-1.5), Scalar::F32(2.0)],
    );
    let (out, text) = shine(d, &["eval", "fabs.rise", "--def", "g", "--input", &xs]);
    assert!(out.status.success(), "{text}");
    assert_eq!(printed(&out), "[-3.0, 4.0]");
    assert!(
        text.contains("the definition `fabs` shadows the primitive `fabs`"),
        "{text}"
    );
    for t in targets() {
        let (out, text) = shine(
            d,
            &[
                "run",
                "fabs.rise",
                "--def",
                "g",
                "--target",
                t,
                "--input",
                &xs,
            ],
        );
        assert!(out.status.success(), "{t}: {text}");
        assert_eq!(printed(&out), "[-3.0, 4.0]", "{t}");
    }
}
