//! `f16` and `bf16` mean on every target what they mean in the interpreter: values stored in
//! 16 bits, each operation computed in `f32` and rounded to nearest even.
//!
//! For each type, `+ - * /`, negation, comparisons, `exp`, `sqrt` and casts both ways run on
//! arrays of 1, 7 and 1000 elements: first the rounding cases (ties, the largest finite values
//! and what overflows them, denormals, infinities, NaN), then random bit patterns. Each
//! target's `.npy` result is compared bit for bit with `shine eval`'s (any NaN matches any
//! NaN). `f16` on OpenCL needs `cl_khr_fp16`: where the device lacks it (PoCL), the run must
//! be refused naming the extension. CUDA runs with `SHINE_TEST_GPU=1`. Where `python3` has
//! numpy, numpy's `float16` arithmetic checks the interpreter's.

use shine::rise::interp::{halfs, Scalar};
use shine::rise::{DataType, ScalarType};
use shine::Array;
use std::path::Path;

mod support;
use support::{shine_in as shine, targets, write_scalars as write};

/// The two 16-bit float types.
const HALVES: [ScalarType; 2] = [ScalarType::F16, ScalarType::Bf16];

/// The program: for `t` in `f16`/`bf16`, binary operations `add_t` ..., unary ones and casts.
fn program() -> String {
    let mut p = String::new();
    for t in HALVES.map(|t| t.name()) {
        for (name, op) in [("add", "+"), ("sub", "-"), ("mul", "*"), ("div", "/")] {
            p += &format!(
                "def {name}_{t} : {{n: nat}} -> n.{t} -> n.{t} -> n.{t} = fun xs ys => \
                 zip xs ys |> map (fun p => fst p {op} snd p)\n"
            );
        }
        p += &format!(
            "def lt_{t} : {{n: nat}} -> n.{t} -> n.{t} -> n.bool = fun xs ys => \
             zip xs ys |> map (fun p => fst p < snd p)\n"
        );
        p += &format!(
            "def neg_{t} : {{n: nat}} -> n.{t} -> n.{t} = fun xs => xs |> map (fun x => 0.5{t} - x * 2.0{t})\n"
        );
        // only moved, never computed with: the code still names the type
        p += &format!(
            "def copy_{t} : {{n: nat}} -> n.{t} -> n.{t} = fun xs => xs |> map (fun x => x)\n"
        );
        for f in ["exp", "sqrt"] {
            p += &format!(
                "def {f}_{t} : {{n: nat}} -> n.{t} -> n.{t} = fun xs => xs |> map (fun x => {f} x)\n"
            );
        }
        for other in ["f16", "bf16", "f32", "f64", "i32", "u8", "i64", "u64"] {
            // f16 <-> bf16 is defined once, in f16's round
            if other == t || (t == "bf16" && other == "f16") {
                continue;
            }
            p += &format!(
                "def {t}_to_{other} : {{n: nat}} -> n.{t} -> n.{other} = fun xs => xs |> map (fun x => (cast x : {other}))\n"
            );
            p += &format!(
                "def {other}_to_{t} : {{n: nat}} -> n.{other} -> n.{t} = fun xs => xs |> map (fun x => (cast x : {t}))\n"
            );
        }
    }
    p
}

/// A value of `t` from an `f64` (rounded once, as the interpreter rounds).
fn scalar(t: ScalarType, v: f64) -> Scalar {
    Scalar::F64(v)
        .cast(t)
        .expect("a float converts to a float type")
}

/// The rounding cases of `t`, as `f64` (values of `t`).
fn specials(t: ScalarType) -> Vec<f64> {
    let (tie, max, tiny, big) = match t {
        // 2^-11: 1 + it ties; 2^-24 the smallest denormal; 2048 + 1 ties
        ScalarType::F16 => (2f64.powi(-11), 65504.0, 2f64.powi(-24), 2048.0),
        _ => (2f64.powi(-8), 3.3895313892515355e38, 2f64.powi(-133), 256.0),
    };
    vec![
        1.0,
        tie,
        3.0 * tie,
        big,
        3.0,
        max,
        16.0,
        -max,
        tiny,
        0.5,
        -0.0,
        0.0,
        2.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -1.5,
        scalar(t, 0.1).as_f64(),
        scalar(t, 1e-3).as_f64(),
    ]
}

/// `n` pairs of values of `t`: every pair of [`specials`], then random bit patterns.
fn pairs(t: ScalarType, n: usize) -> (Vec<Scalar>, Vec<Scalar>) {
    let s = specials(t);
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for a in &s {
        for b in &s {
            xs.push(scalar(t, *a));
            ys.push(scalar(t, *b));
        }
    }
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut random = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let bits = (state >> 48) as u16;
        match t {
            ScalarType::F16 => Scalar::F16(half::f16::from_bits(bits)),
            _ => Scalar::Bf16(half::bf16::from_bits(bits)),
        }
    };
    while xs.len() < n {
        xs.push(random());
        ys.push(random());
    }
    xs.truncate(n);
    ys.truncate(n);
    (xs, ys)
}

/// The result of `shine eval` (no target) or `shine run --target t` of `def` on `inputs`,
/// as written to an `.npy` file; `Err` with the output when the run fails.
fn result(dir: &Path, def: &str, target: Option<&str>, inputs: &[&str]) -> Result<Vec<u8>, String> {
    let out_name = format!("out_{}.npy", target.unwrap_or("eval"));
    let mut args = match target {
        Some(t) => vec!["run", "half.rise", "--def", def, "--target", t],
        None => vec!["eval", "half.rise", "--def", def],
    };
    for i in inputs {
        args.extend(["--input", i]);
    }
    args.extend(["--output", &out_name]);
    let (out, text) = shine(dir, &args);
    if !out.status.success() {
        return Err(text);
    }
    Ok(std::fs::read(dir.join(&out_name)).expect("the result is written"))
}

/// Whether two `.npy` results hold the same bits (NaN matching NaN).
fn same_bits(a: &[u8], b: &[u8], elem: ScalarType) -> Result<(), String> {
    let read = |bytes: &[u8]| {
        shine::npy::read_contents_bytes(bytes, "result")
            .expect("a result reads back")
            .data
    };
    let (xs, ys) = (read(a), read(b));
    if xs.len() != ys.len() {
        return Err(format!("{} elements against {}", xs.len(), ys.len()));
    }
    for (i, (x, y)) in xs.iter().zip(&ys).enumerate() {
        // bf16 results come back as their bit patterns (uint16)
        let nan = |s: &Scalar| match (s, elem) {
            (Scalar::U16(bits), ScalarType::Bf16) => half::bf16::from_bits(*bits).is_nan(),
            (s, _) => s.is_nan(),
        };
        if x != y && !(nan(x) && nan(y)) {
            return Err(format!("element {i}: {x} against {y}"));
        }
    }
    Ok(())
}

/// Whether `target` must refuse `f16` (OpenCL on a device without `cl_khr_fp16`): the
/// refusal names the extension.
fn refused_f16(target: &str, t: ScalarType, failure: &str) -> bool {
    target == "opencl" && t == ScalarType::F16 && failure.contains("cl_khr_fp16")
}

/// `def` on every target agrees with the interpreter bit for bit on `inputs` (or, for `f16` on
/// an OpenCL device without it, is refused naming `cl_khr_fp16`).
fn agrees(dir: &Path, def: &str, t: ScalarType, result_elem: ScalarType, inputs: &[&str]) {
    let want = result(dir, def, None, inputs).unwrap_or_else(|e| panic!("eval {def}: {e}"));
    for target in targets() {
        match result(dir, def, Some(target), inputs) {
            Ok(got) => {
                if let Err(e) = same_bits(&got, &want, result_elem) {
                    panic!("{def} on {target}: {e}");
                }
            }
            Err(e) if refused_f16(target, t, &e) || refused_f16(target, result_elem, &e) => {}
            Err(e) => panic!("{def} on {target}: {e}"),
        }
    }
}

fn dir_with_program() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("half.rise"), program()).expect("writes the program");
    dir
}

#[test]
fn arithmetic_rounds_like_the_interpreter_on_every_target() {
    let dir = dir_with_program();
    let d = dir.path();
    for t in HALVES {
        for n in [1, 7, 1000] {
            let (xs, ys) = pairs(t, n);
            let x = write(d, "x.npy", t, xs);
            let y = write(d, "y.npy", t, ys);
            for op in ["add", "sub", "mul", "div"] {
                agrees(d, &format!("{op}_{}", t.name()), t, t, &[&x, &y]);
            }
            agrees(
                d,
                &format!("lt_{}", t.name()),
                t,
                ScalarType::Bool,
                &[&x, &y],
            );
            for f in ["neg", "exp", "sqrt", "copy"] {
                agrees(d, &format!("{f}_{}", t.name()), t, t, &[&x]);
            }
        }
    }
}

#[test]
fn casts_between_16_bit_floats_and_other_types_agree() {
    let dir = dir_with_program();
    let d = dir.path();
    // floats and integers into f16 and bf16: ties, values beyond 65504, large integers
    let wide = [
        0.0,
        -0.0,
        1.0 + 2f64.powi(-11),
        1.0 + 2f64.powi(-11) + 2f64.powi(-40),
        65504.0,
        65519.0,
        65520.0,
        -70000.0,
        257.0,
        259.0,
        3.4e38,
        1e39,
        1e-8,
        2f64.powi(-140),
        0.1,
        f64::INFINITY,
        f64::NAN,
    ];
    let ints: [i64; 10] = [
        0,
        1,
        -2049,
        2051,
        65519,
        65520,
        (1 << 60) + (1 << 52) + 1,
        (1 << 60) + (1 << 52),
        i64::MAX,
        i64::MIN,
    ];
    for t in HALVES {
        let tn = t.name();
        let f64s = write(
            d,
            "f64.npy",
            ScalarType::F64,
            wide.iter().map(|&v| Scalar::F64(v)).collect(),
        );
        agrees(d, &format!("f64_to_{tn}"), t, t, &[&f64s]);
        let f32s = wide.iter().map(|&v| Scalar::F32(v as f32)).collect();
        let f32s = write(d, "f32.npy", ScalarType::F32, f32s);
        agrees(d, &format!("f32_to_{tn}"), t, t, &[&f32s]);
        let i64s = write(
            d,
            "i64.npy",
            ScalarType::I64,
            ints.iter().map(|&v| Scalar::I64(v)).collect(),
        );
        agrees(d, &format!("i64_to_{tn}"), t, t, &[&i64s]);
        let u64s = ints.iter().map(|&v| Scalar::U64(v as u64)).collect();
        let u64s = write(d, "u64.npy", ScalarType::U64, u64s);
        agrees(d, &format!("u64_to_{tn}"), t, t, &[&u64s]);
        let i32s = ints.iter().map(|&v| Scalar::I32(v as i32)).collect();
        let i32s = write(d, "i32.npy", ScalarType::I32, i32s);
        agrees(d, &format!("i32_to_{tn}"), t, t, &[&i32s]);
        // out of each 16-bit type: every value to the other floats; in range to integers
        let (xs, _) = pairs(t, 1000);
        let all = write(d, "all.npy", t, xs.clone());
        for other in [
            ScalarType::F16,
            ScalarType::Bf16,
            ScalarType::F32,
            ScalarType::F64,
        ] {
            if other != t {
                agrees(d, &format!("{tn}_to_{}", other.name()), t, other, &[&all]);
            }
        }
        for other in [
            ScalarType::I32,
            ScalarType::U8,
            ScalarType::I64,
            ScalarType::U64,
        ] {
            let fits: Vec<Scalar> = xs
                .iter()
                .copied()
                .filter(|x| x.cast(other).is_ok())
                .collect();
            let fits = write(d, "fits.npy", t, fits);
            agrees(d, &format!("{tn}_to_{}", other.name()), t, other, &[&fits]);
        }
    }
}

#[test]
fn a_16_bit_float_out_of_an_integer_range_stops_every_target() {
    let dir = dir_with_program();
    let d = dir.path();
    for t in HALVES {
        let input = write(d, "big.npy", t, vec![scalar(t, 1.0), scalar(t, 300.0)]);
        let def = format!("{}_to_u8", t.name());
        let eval = result(d, &def, None, &[&input]);
        assert!(
            eval.is_err_and(|e| e.contains("out of range")),
            "eval {def}"
        );
        for target in targets() {
            let e = result(d, &def, Some(target), &[&input]).expect_err("300 is no u8");
            assert!(
                e.contains(&format!(
                    "`{def}`: a `cast` is undefined in C (out of range"
                )) || refused_f16(target, t, &e),
                "{def} on {target}: {e}"
            );
        }
    }
}

#[test]
fn bf16_reads_uint16_bits_and_ml_dtypes_void_and_writes_uint16() {
    let dir = dir_with_program();
    let d = dir.path();
    let values = [1.5, -2.0, 3.0e38];
    let bits: Vec<u16> = values
        .iter()
        .map(|&v| halfs::bf16_from_f64(v).to_bits())
        .collect();
    // uint16 bit patterns
    let u16s = write(
        d,
        "bits.npy",
        ScalarType::U16,
        bits.iter().map(|&b| Scalar::U16(b)).collect(),
    );
    // what numpy.save writes for ml_dtypes.bfloat16: descr '<V2'
    let mut void = shine::npy::to_npy_bytes(&Array {
        elem: DataType::Scalar(ScalarType::U16),
        shape: vec![bits.len()],
        data: bits.iter().map(|&b| Scalar::U16(b)).collect(),
    })
    .expect("encodes");
    let at = void
        .windows(5)
        .position(|w| w == b"'<u2'")
        .expect("the descr");
    void[at..at + 5].copy_from_slice(b"'<V2'");
    std::fs::write(d.join("void.npy"), void).expect("writes");
    for input in [u16s.as_str(), "void.npy"] {
        let out = result(d, "bf16_to_f64", None, &[input]).expect("eval reads bf16");
        let got = shine::npy::read_contents_bytes(&out, "out")
            .expect("reads")
            .data;
        assert_eq!(
            got,
            values
                .iter()
                .map(|&v| Scalar::F64(halfs::bf16_from_f64(v).to_f64()))
                .collect::<Vec<_>>(),
            "{input}"
        );
    }
    // a bf16 result is written as uint16 bit patterns
    let out = result(d, "f64_to_bf16", None, &["f64.npy"]);
    assert!(out.is_err(), "no f64.npy yet");
    let f64s = write(
        d,
        "f64.npy",
        ScalarType::F64,
        values.iter().map(|&v| Scalar::F64(v)).collect(),
    );
    let out = result(d, "f64_to_bf16", None, &[&f64s]).expect("eval");
    let text = String::from_utf8_lossy(&out[..64]).to_string();
    assert!(text.contains("'descr': '<u2'"), "{text}");
    // a float16 file is no bf16
    let f16s = write(
        d,
        "h.npy",
        ScalarType::F16,
        vec![Scalar::F16(half::f16::ONE)],
    );
    let e = result(d, "bf16_to_f64", None, &[&f16s]).expect_err("float16 is no bf16");
    assert!(e.contains("must be bf16") && e.contains("uint16"), "{e}");
}

/// numpy's `float16` arithmetic (each operation rounded to nearest even) gives the
/// interpreter's bits; skipped where `python3` has no numpy.
#[test]
fn numpy_float16_agrees_with_the_interpreter() {
    let has_numpy = std::process::Command::new("python3")
        .args(["-c", "import numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_numpy {
        eprintln!("skipping: python3 has no numpy");
        return;
    }
    let dir = dir_with_program();
    let d = dir.path();
    let (xs, ys) = pairs(ScalarType::F16, 1000);
    let x = write(d, "x.npy", ScalarType::F16, xs);
    let y = write(d, "y.npy", ScalarType::F16, ys);
    for (op, sign) in [("add", "+"), ("sub", "-"), ("mul", "*"), ("div", "/")] {
        let want = result(d, &format!("{op}_f16"), None, &[&x, &y]).expect("eval");
        std::fs::write(d.join("want.npy"), want).expect("writes");
        let script = format!(
            "import numpy as np\nx = np.load('x.npy'); y = np.load('y.npy'); w = np.load('want.npy')\n\
             with np.errstate(all='ignore'):\n    r = x {sign} y\n\
             same = (r.view(np.uint16) == w.view(np.uint16)) | (np.isnan(r) & np.isnan(w))\n\
             bad = np.flatnonzero(~same)\n\
             assert bad.size == 0, (bad[:5], x[bad[:5]], y[bad[:5]], r[bad[:5]], w[bad[:5]])\n"
        );
        let out = std::process::Command::new("python3")
            .current_dir(d)
            .args(["-c", &script])
            .output()
            .expect("python3 runs");
        assert!(
            out.status.success(),
            "{op}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
