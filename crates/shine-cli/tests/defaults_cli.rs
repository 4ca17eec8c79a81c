//! The default schedules compute a value once (issue 28 item 3): the normalizations of
//! examples/norms.rise (softmax, layer norm, RMS norm, cross-entropy), written with a row's
//! maximum, sum or mean inside the function applied to each element, compile without
//! --strategy on C, OpenMP and OpenCL (CUDA on the GPU machine), match the interpreter at
//! 1, 7, 13 and 1000 columns (see [`wide_on`]), and run in time linear in the row: no loop over the row
//! inside another (the row's reductions bound once per row), and softmax's `exp` computed
//! once per element (its result stored, read by the sum and by the division).
//!
//! Without any OpenCL platform the OpenCL runs FAIL, as the runtime's tests do; set
//! `SHINE_SKIP_OPENCL=1` to skip them.

use std::path::Path;

mod support;
use support::{shine_in, targets};

const PROGRAM: &str = "examples/norms.rise";

/// The normalizations of examples/norms.rise.
const NORMALIZATIONS: &[&str] = &["softmax", "layerNorm", "rmsNorm", "crossEntropy"];

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// `shine run` of `def` without --strategy on `target`, `m` rows of `n` columns, verified
/// against the interpreter; the error when it is not.
fn run_default(def: &str, target: &str, m: i64, n: i64) -> Result<(), String> {
    let (m, n) = (format!("m={m}"), format!("n={n}"));
    let args = [
        "run", PROGRAM, "--def", def, "--target", target, "--nat", &m, "--nat", &n, "--random",
        "5", "--verify", "--json",
    ];
    let (out, text) = shine_in(root(), &args);
    if out.status.success() && text.contains("\"verified\":true") {
        Ok(())
    } else {
        Err(format!("{def} --target {target} {m} {n}: {text}"))
    }
}

/// The code `shine compile` generates for `def` without --strategy.
fn compiled(def: &str, target: &str) -> String {
    let (out, text) = shine_in(
        root(),
        &["compile", PROGRAM, "--def", def, "--target", target],
    );
    assert!(out.status.success(), "{def} --target {target}: {text}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The deepest nesting of `for` loops in C-like code (braces counted per loop).
fn loop_depth(code: &str) -> usize {
    let (mut open, mut loops, mut deepest) = (Vec::new(), 0usize, 0usize);
    for line in code.lines().map(str::trim) {
        if line.starts_with("for (") {
            loops += 1;
            deepest = deepest.max(loops);
            open.push(true);
        } else if line.ends_with('{') {
            open.push(false);
        }
        if line.starts_with('}') && open.pop() == Some(true) {
            loops -= 1;
        }
    }
    deepest
}

/// Whether `def` is checked at 1000 columns on `target`. The interpreter computes what is
/// written inside a mapped function once per element, so it needs time quadratic in the row
/// for these programs (a minute for layer norm's 1000 columns in a debug build): every
/// normalization runs at 1000 columns on C, softmax and RMS norm on every target.
fn wide_on(def: &str, target: &str) -> bool {
    target == "c" || matches!(def, "softmax" | "rmsNorm")
}

#[test]
fn every_normalization_compiles_under_the_default_of_every_target_and_matches_the_interpreter() {
    let mut failures = Vec::new();
    for def in NORMALIZATIONS {
        for target in targets() {
            let mut shapes = vec![(1, 1), (7, 7), (13, 13)];
            if wide_on(def, target) {
                shapes.push((1, 1000));
            }
            for (m, n) in shapes {
                if let Err(e) = run_default(def, target, m, n) {
                    failures.push(e);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_normalization_reads_its_rows_in_linear_time() {
    for def in NORMALIZATIONS {
        for target in ["c", "openmp", "opencl"] {
            let code = compiled(def, target);
            // C: the loop over the rows, one loop over the columns inside; OpenCL: the
            // rows are the work-items
            let most = if target == "opencl" { 1 } else { 2 };
            assert_eq!(
                loop_depth(&code),
                most,
                "{def} --target {target}: a loop over a row inside another\n{code}"
            );
        }
    }
}

#[test]
fn softmax_computes_exp_once_per_element_and_stores_it() {
    for target in ["c", "openmp"] {
        let code = compiled("softmax", target);
        // the kernel, after the prelude that defines shine's `exp` (`shine_expf`)
        let kernel = &code[code.find("void softmax(").expect("the kernel")..];
        assert_eq!(kernel.matches("expf(").count(), 1, "{target}:\n{code}");
        let stored = kernel
            .lines()
            .any(|l| l.trim_start().starts_with("mem") && l.contains("= shine_expf("));
        assert!(stored, "{target}: exp is written to a buffer\n{code}");
    }
}

#[test]
fn explain_says_what_the_default_computed_once_stored_and_left_sequential() {
    let (out, text) = shine_in(
        root(),
        &[
            "compile",
            PROGRAM,
            "--def",
            "layerNorm",
            "--target",
            "c",
            "--explain",
        ],
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("storeEveryStage"), "{text}");
    assert!(text.contains("computed once: 2 value(s)"), "{text}");
    assert!(text.contains("sequential: 2 reduction(s)"), "{text}");
    let (out, text) = shine_in(
        root(),
        &[
            "compile",
            PROGRAM,
            "--def",
            "softmax",
            "--target",
            "openmp",
            "--explain",
        ],
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("stored: 1 array(s)"), "{text}");
    assert!(text.contains("inside a parallel loop"), "{text}");
    assert!(text.contains("`exp`"), "{text}");
}
