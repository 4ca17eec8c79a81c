//! Issue 13, items 3, 6 and 11, and issue 18 item 1: the generated code means what the
//! interpreter means, on C, OpenMP and OpenCL (PoCL): narrow integers wrap in their own
//! type, signed overflow wraps, integer division by zero is an error naming the
//! definition (the interpreter's too), floats are IEEE by default, and definitions named
//! like builtins of a target (`dot`, `length`, `sin`, `main`, ...) compile.
//!
//! Errors in values the result does not need are not errors, in the interpreter as in the
//! generated code (`divTake`, `gatherTake2`).
//!
//! Set `SHINE_SKIP_OPENCL=1` to skip the OpenCL runs where no OpenCL platform exists.

use std::path::Path;
use std::process::{Command, Output};

use rise::interp::{Flat, Scalar};
use rise::ScalarType;

mod support;

/// The definitions the tests run (also run on GPUs by `scripts/gpu-semantics.sh`).
const PROGRAM: &str = include_str!("../../../tests/semantics.rise");

fn shine(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shine"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args(args)
        .output()
        .expect("shine runs")
}

fn targets() -> Vec<&'static str> {
    let mut t = vec!["c", "openmp"];
    if std::env::var("SHINE_SKIP_OPENCL").as_deref() != Ok("1") {
        t.push("opencl");
    }
    t
}

fn write_npy(dir: &Path, name: &str, elem: ScalarType, data: Vec<Scalar>) -> String {
    let path = dir.join(name);
    let flat = Flat {
        elem,
        shape: vec![data.len()],
        data,
    };
    shine::npy::write(&path, &flat).expect("writes the input");
    path.display().to_string()
}

/// `shine run` of `def` on `inputs` for `target` (sequential strategy), with extra flags.
fn run(dir: &Path, def: &str, target: &str, inputs: &[&str], extra: &[&str]) -> Output {
    let program = dir.join("semantics.rise").display().to_string();
    let n = format!("n={}", count(inputs[0]));
    let mut args = vec![
        "run",
        &program,
        "--def",
        def,
        "--strategy",
        "examples/cpu.elv",
        "--apply",
        "sequential",
        "--target",
        target,
        "--nat",
        &n,
    ];
    for i in inputs {
        args.extend(["--input", i]);
    }
    args.extend(extra);
    shine(&args)
}

/// The outer extent of an array (`n`).
fn count(npy: &str) -> usize {
    shine::npy::read(Path::new(npy)).map_or(0, |f| f.shape.first().copied().unwrap_or(1))
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("semantics.rise"), PROGRAM).expect("writes the program");
    dir
}

/// Runs `def` on every target with `--verify`; returns the printed results. (`bool`
/// results and inputs reach OpenCL kernels as `uchar` buffers, issue 18 item 4.)
fn verified(dir: &Path, def: &str, inputs: &[&str]) -> Vec<String> {
    targets()
        .into_iter()
        .map(|t| {
            let out = run(dir, def, t, inputs, &["--verify"]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{def} on {t}: {stderr}");
            assert!(stderr.contains("verified"), "{def} on {t}: {stderr}");
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        })
        .collect()
}

fn u16s(v: &[u16]) -> Vec<Scalar> {
    v.iter().map(|&x| Scalar::U16(x)).collect()
}

#[test]
fn narrow_integers_wrap_in_their_own_type_on_every_target() {
    let dir = setup();
    let d = dir.path();
    let a = write_npy(d, "a.npy", ScalarType::U16, u16s(&[60000, 1, 40000]));
    let b = write_npy(d, "b.npy", ScalarType::U16, u16s(&[60000, 3, 30000]));
    for printed in verified(d, "narrowAverage", &[&a, &b]) {
        assert_eq!(printed, "[27232, 2, 2232]");
    }
    let i8s = |v: &[i8]| v.iter().map(|&x| Scalar::I8(x)).collect();
    let a = write_npy(d, "a8.npy", ScalarType::I8, i8s(&[100, -128, 7]));
    let b = write_npy(d, "b8.npy", ScalarType::I8, i8s(&[3, -1, -128]));
    for printed in verified(d, "narrowOps", &[&a, &b]) {
        // -(100*3 - 3) = -297 = -41 (mod 256); -(-128*-1 + 1) = -129 = 127; -(7*-128 + 128) = 0
        assert_eq!(printed, "[-41, 127, 0]");
    }
    let u8s = |v: &[u8]| v.iter().map(|&x| Scalar::U8(x)).collect();
    let a = write_npy(d, "au8.npy", ScalarType::U8, u8s(&[200, 1]));
    let b = write_npy(d, "bu8.npy", ScalarType::U8, u8s(&[100, 1]));
    for printed in verified(d, "narrowLess", &[&a, &b]) {
        assert_eq!(printed, "[true, false]");
    }
}

#[test]
fn signed_overflow_wraps_and_is_clean_under_ubsan() {
    let dir = setup();
    let d = dir.path();
    let i32s = |v: &[i32]| v.iter().map(|&x| Scalar::I32(x)).collect();
    let a = write_npy(d, "a.npy", ScalarType::I32, i32s(&[i32::MAX, 65536, -3]));
    let b = write_npy(d, "b.npy", ScalarType::I32, i32s(&[2, 65536, 4]));
    for printed in verified(d, "signedOverflow", &[&a, &b]) {
        // MAX*2 + MAX = MAX - 2 (mod 2^32); 2^32 + 2^16 = 65536
        assert_eq!(printed, "[2147483645, 65536, -15]");
    }
    let out = run(d, "signedOverflow", "c", &[&a, &b], &["--sanitize"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("runtime error"), "{stderr}");
}

#[test]
fn integer_division_by_zero_is_an_error_naming_the_definition() {
    let dir = setup();
    let d = dir.path();
    let i32s = |v: &[i32]| v.iter().map(|&x| Scalar::I32(x)).collect();
    let a = write_npy(d, "a.npy", ScalarType::I32, i32s(&[7, i32::MIN, 5]));
    let zero = write_npy(d, "z.npy", ScalarType::I32, i32s(&[2, -1, 0]));
    let ok = write_npy(d, "b.npy", ScalarType::I32, i32s(&[2, -1, -5]));
    for t in targets() {
        let out = run(d, "divide", t, &[&a, &zero], &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{t}");
        assert!(
            stderr.contains("`divide`: integer division by zero"),
            "{t}: {stderr}"
        );
    }
    // MIN / -1 wraps to MIN, as in the interpreter
    for printed in verified(d, "divide", &[&a, &ok]) {
        assert_eq!(printed, "[3, -2147483648, -1]");
    }
    let out = run(d, "divide", "c", &[&a, &ok], &["--sanitize"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let i64s = |v: &[i64]| v.iter().map(|&x| Scalar::I64(x)).collect();
    let a = write_npy(d, "a64.npy", ScalarType::I64, i64s(&[i64::MIN, 7, -7]));
    let ok = write_npy(d, "b64.npy", ScalarType::I64, i64s(&[-1, 3, 3]));
    let zero = write_npy(d, "z64.npy", ScalarType::I64, i64s(&[-1, 0, 3]));
    for printed in verified(d, "remainder", &[&a, &ok]) {
        assert_eq!(printed, "[0, 1, -1]");
    }
    for t in targets() {
        let out = run(d, "remainder", t, &[&a, &zero], &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("`remainder`: integer remainder by zero"),
            "{t}: {stderr}"
        );
    }
    // the interpreter says so too
    let program = d.join("semantics.rise").display().to_string();
    let zero = write_npy(d, "z2.npy", ScalarType::I64, i64s(&[-1, 0, 3]));
    let out = shine(&[
        "eval",
        &program,
        "--def",
        "remainder",
        "--input",
        &a,
        "--input",
        &zero,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("integer remainder by zero"),
        "{stderr}"
    );
}

#[test]
fn floats_are_ieee_by_default_and_fast_math_is_reported() {
    let dir = setup();
    let d = dir.path();
    let f32s = |v: &[f32]| v.iter().map(|&x| Scalar::F32(x)).collect();
    let a = write_npy(
        d,
        "a.npy",
        ScalarType::F32,
        f32s(&[f32::NEG_INFINITY, 1.0, 0.0, f32::NAN]),
    );
    let b = write_npy(d, "b.npy", ScalarType::F32, f32s(&[0.0, 0.0, 0.0, 1.0]));
    for printed in verified(d, "floatDivide", &[&a, &b]) {
        assert_eq!(printed, "[-inf, inf, NaN, NaN]");
    }
    for printed in verified(d, "floatEqual", &[&a]) {
        assert_eq!(printed, "[true, true, true, false]");
    }
    let x = write_npy(d, "x.npy", ScalarType::F32, f32s(&[1.0, 0.5, 1e30]));
    for t in targets() {
        let out = run(d, "denormals", t, &[&x], &[]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{t}");
        // 1e-38 * 0.5 is a denormal: kept, not flushed to 0
        assert!(!stdout.contains("[1e-38, 0,"), "{t}: {stdout}");
        assert!(stdout.contains("5e-39"), "{t}: {stdout}");
    }
    for (flag, expected) in [(None, false), (Some("--fast-math"), true)] {
        let mut extra = vec!["--json"];
        extra.extend(flag);
        let out = run(d, "denormals", "c", &[&x], &extra);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        assert_eq!(json["fast_math"], expected, "{flag:?}");
    }
}

#[test]
fn definitions_and_variables_named_like_builtins_compile_on_every_target() {
    let dir = setup();
    let d = dir.path();
    let f32s = |v: &[f32]| v.iter().map(|&x| Scalar::F32(x)).collect();
    let a = write_npy(d, "a.npy", ScalarType::F32, f32s(&[1.0, 2.0, 3.0]));
    let b = write_npy(d, "b.npy", ScalarType::F32, f32s(&[4.0, 5.0, 6.0]));
    for printed in verified(d, "dot", &[&a, &b]) {
        assert_eq!(printed, "32.0");
    }
    for printed in verified(d, "length", &[&a]) {
        assert_eq!(printed, "[2.0, 3.0, 4.0]");
    }
    for printed in verified(d, "main", &[&a]) {
        assert_eq!(printed, "[2.0, 4.0, 6.0]");
    }
}

/// Issue 13 item 2: an accumulator whose new value reads parts that the same step writes
/// (a tuple whose components swap, an array whose elements rotate) is not updated in place
/// one part at a time.
#[test]
fn accumulators_are_not_overwritten_while_they_are_read() {
    let dir = setup();
    let d = dir.path();
    let f32s = |v: &[f32]| v.iter().map(|&x| Scalar::F32(x)).collect();
    let xs = write_npy(d, "xs.npy", ScalarType::F32, f32s(&[1.0, 2.0, 3.0, 4.0]));
    for printed in verified(d, "pairAccumulator", &[&xs]) {
        assert_eq!(printed, "6.0");
    }
    let rows = write_npy(
        d,
        "rows.npy",
        ScalarType::F32,
        f32s(&[1.0, 2.0, 3.0, 10.0, 20.0, 30.0]),
    );
    let path = Path::new(&rows);
    let flat = Flat {
        shape: vec![2, 3],
        ..shine::npy::read(path).expect("reads the rows")
    };
    shine::npy::write(path, &flat).expect("writes the rows");
    for printed in verified(d, "rotateAccumulator", &[&rows]) {
        // acc1 = [1, 2, 3]; acc2[i] = acc1[(i+1)%3] + row2[i] = [12, 23, 31]
        assert_eq!(printed, "[12.0, 23.0, 31.0]");
    }
}

/// Issue 13 item 9: index arithmetic is 64-bit. `repeatSum` reads its `n` inputs `n` times
/// through one flat loop of `n * n` iterations: at n = 47,000 that count (2,209,000,000)
/// exceeds 2^31, which 32-bit loop bounds and indices got wrong (they wrapped negative
/// and the loop ran zero times). The input is small; the loop is long (seconds). On
/// OpenCL the host builds the kernel with 64-bit indices for that size only.
#[test]
fn index_arithmetic_does_not_overflow_32_bits() {
    let dir = setup();
    let d = dir.path();
    let i64s = |n: usize| (1..=n as i64).map(Scalar::I64).collect();
    let small = write_npy(d, "small.npy", ScalarType::I64, i64s(5));
    for printed in verified(d, "repeatSum", &[&small]) {
        assert_eq!(printed, "75"); // 5 * (1 + 2 + 3 + 4 + 5)
    }
    let n = 47_000usize;
    let ones = write_npy(d, "ones.npy", ScalarType::I64, vec![Scalar::I64(1); n]);
    for target in targets().into_iter().filter(|t| *t != "openmp") {
        let out = run(d, "repeatSum", target, &[&ones], &[]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            (n * n).to_string()
        );
    }
    // GPU code is built with 64-bit indices only where the sizes of the run need them
    if targets().contains(&"opencl") {
        for (input, bits) in [(&small, 32), (&ones, 64)] {
            let out = run(d, "repeatSum", "opencl", &[input], &["--json"]);
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                stdout.contains(&format!("\"index_bits\":{bits}")),
                "{stdout}"
            );
        }
    }
}

/// Issue 13 item 7: the generated C entry point checks the constraints of the definition's
/// type before it computes, for callers other than shine (which refuses such sizes itself):
/// `split 32` on 40 elements returns status 3 (`EntryStatus::SizeConstraint`) and writes
/// nothing; on 64 elements it computes.
#[test]
fn generated_entry_points_refuse_sizes_their_type_forbids() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let d = dir.path();
    let program = d.join("split.rise");
    std::fs::write(
        &program,
        "def twice : {n: nat} -> n.f32 -> n.f32 =\n  \
         fun xs => xs |> split 32 |> map (fun r => map (fun x => x * 2.0f) r) |> join\n",
    )
    .expect("writes the program");
    let source = d.join("twice.c");
    let out = shine(&[
        "compile",
        &program.display().to_string(),
        "--def",
        "twice",
        "--strategy",
        "examples/cpu.elv",
        "--apply",
        "sequential",
        "--target",
        "c",
        "-o",
        &source.display().to_string(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let harness = d.join("main.c");
    std::fs::write(
        &harness,
        r#"#include <stdint.h>
#include <stdio.h>
int twice_entry(void *const *buffers, const int64_t *sizes);
int main(void) {
  float in[64], out[64];
  for (int i = 0; i < 64; i++) { in[i] = (float)i; out[i] = -1.0f; }
  void *buffers[2] = {out, in};
  int64_t forty = 40, sixty_four = 64;
  int refused = twice_entry(buffers, &forty);
  int untouched = out[0] == -1.0f && out[39] == -1.0f;
  int computed = twice_entry(buffers, &sixty_four);
  printf("%d %d %d %g %g\n", refused, untouched, computed, out[1], out[63]);
  return 0;
}
"#,
    )
    .expect("writes the harness");
    let exe = d.join("main");
    let cc = Command::new("gcc")
        .args(["-O1", "-o"])
        .arg(&exe)
        .arg(&harness)
        .arg(&source)
        .output()
        .expect("gcc runs");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let run = Command::new(&exe).output().expect("the harness runs");
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "3 1 0 2 126");
}

/// `shine eval` (no target) or `shine run --target T` (sequential strategy) of `def` on
/// `inputs`, its sizes taken from the inputs; whether it succeeded and what it printed.
fn outcome(dir: &Path, def: &str, target: Option<&str>, inputs: &[&str]) -> (bool, String) {
    let program = dir.join("semantics.rise").display().to_string();
    let mut args = match target {
        None => vec!["eval", &program, "--def", def],
        Some(t) => vec![
            "run",
            &program,
            "--def",
            def,
            "--strategy",
            "examples/cpu.elv",
            "--apply",
            "sequential",
            "--target",
            t,
            "--verify",
        ],
    };
    for i in inputs {
        args.extend(["--input", i]);
    }
    let out = shine(&args);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// A division by zero and an index out of range in elements that `take 2` discards are
/// no errors: `shine eval` and every target (verified against the interpreter) give the
/// first two elements. Where the result needs the failed element, the interpreter and
/// every target fail with the same kind of error.
#[test]
fn errors_in_values_the_result_does_not_need_are_not_errors() {
    let dir = setup();
    let d = dir.path();
    let i32s = |v: &[i32]| v.iter().map(|&x| Scalar::I32(x)).collect();
    let f32s = |v: &[f32]| v.iter().map(|&x| Scalar::F32(x)).collect();
    let xs = write_npy(d, "xs.npy", ScalarType::I32, i32s(&[1, 2, 0, 4]));
    let fs = write_npy(d, "fs.npy", ScalarType::F32, f32s(&[1.0, 2.0, 3.0, 4.0]));
    let js = write_npy(d, "js.npy", ScalarType::I32, i32s(&[1, 2, 9, 0]));
    let cases: [(&str, Vec<&str>, &str); 2] = [
        ("divTake", vec![&xs], "[100, 50]"),
        ("gatherTake2", vec![&fs, &js], "[2.0, 3.0]"),
    ];
    let mut targets: Vec<Option<&str>> = vec![None];
    targets.extend(support::targets().into_iter().map(Some));
    for (def, inputs, want) in &cases {
        for &t in &targets {
            let (ok, text) = outcome(d, def, t, inputs);
            assert!(ok, "{def} on {t:?}: {text}");
            assert!(text.lines().any(|l| l == *want), "{def} on {t:?}: {text}");
            if t.is_some() {
                assert!(text.contains("verified"), "{def} on {t:?}: {text}");
            }
        }
    }
    // the failed element among the first two: an error everywhere
    let xs = write_npy(d, "xs0.npy", ScalarType::I32, i32s(&[1, 0, 2, 4]));
    let js = write_npy(d, "js9.npy", ScalarType::I32, i32s(&[9, 2, 1, 0]));
    let cases: [(&str, Vec<&str>, &str, &str); 2] = [
        (
            "divTake",
            vec![&xs],
            "integer division by zero",
            "integer division by zero",
        ),
        (
            "gatherTake2",
            vec![&fs, &js],
            "`natAsIndex`: 9 is not an index into 4 elements",
            "an index read from data is outside the range of its type",
        ),
    ];
    for (def, inputs, interpreted, compiled) in &cases {
        for &t in &targets {
            let (ok, text) = outcome(d, def, t, inputs);
            let want = if t.is_none() { interpreted } else { compiled };
            assert!(!ok && text.contains(want), "{def} on {t:?}: {text}");
        }
    }
}
