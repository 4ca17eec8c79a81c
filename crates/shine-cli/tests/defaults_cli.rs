//! The default schedules compute a value once (issue 28 item 3): the normalizations of
//! examples/norms.rise (softmax, layer norm, RMS norm, cross-entropy), written with a row's
//! maximum, sum or mean inside the function applied to each element, compile without
//! --strategy on C, OpenMP and OpenCL (CUDA on the GPU machine), match the interpreter at
//! 1, 7, 13 and 1000 columns (see [`wide_on`]), and run in time linear in the row: no loop over the row
//! inside another (the row's reductions bound once per row), and softmax's `exp` computed
//! once per element (its result stored, read by the sum and by the division).
//!
//! Stencils (issue 28 item 3): under the defaults of C and OpenMP the padded array a
//! stencil reads is copied once with its border and read at plain indices, and a reduction
//! over a constant window of at most 32 elements is unrolled, its weights constants
//! (examples/stencil2d.rise's `gaussian5u8`, the 5x5 blur of an 8-bit image); every stencil of
//! examples/stencil2d.rise and jacobi1d.rise matches the interpreter at 1, 7, 13 and a large
//! odd size on every target.
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

/// `shine run PROGRAM --def DEF` without --strategy on `target`, every size named in `sizes`
/// at `size`, verified against the interpreter; the error when it is not.
fn run_default_at(
    program: &str,
    def: &str,
    target: &str,
    sizes: &[&str],
    size: i64,
) -> Result<(), String> {
    let mut args: Vec<String> = ["run", program, "--def", def, "--target", target]
        .map(String::from)
        .to_vec();
    for s in sizes {
        args.extend(["--nat".to_string(), format!("{s}={size}")]);
    }
    args.extend(["--random", "9", "--verify", "--json"].map(String::from));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, text) = shine_in(root(), &refs);
    if out.status.success() && text.contains("\"verified\":true") {
        Ok(())
    } else {
        Err(format!(
            "{program} {def} --target {target} at {size}: {text}"
        ))
    }
}

/// The stencils: (program, definition, its sizes).
const STENCILS: &[(&str, &str, &[&str])] = &[
    ("examples/stencil2d.rise", "jacobi2d5", &["n", "m"]),
    ("examples/stencil2d.rise", "jacobi2d9", &["n", "m"]),
    ("examples/stencil2d.rise", "gaussian5", &["n", "m"]),
    ("examples/stencil2d.rise", "gaussian5u8", &["n", "m"]),
    ("examples/jacobi1d.rise", "jacobi3", &["n"]),
];

#[test]
fn every_stencil_matches_the_interpreter_under_the_default_at_small_and_large_odd_sizes() {
    let mut failures = Vec::new();
    for (program, def, sizes) in STENCILS {
        for target in targets() {
            let large = if sizes.len() == 1 { 1001 } else { 97 };
            for size in [1, 7, 13, large] {
                if let Err(e) = run_default_at(program, def, target, sizes, size) {
                    failures.push(e);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The code `shine compile` generates for `def` of `program` without --strategy.
fn compiled_in(program: &str, def: &str, target: &str) -> String {
    let (out, text) = shine_in(
        root(),
        &["compile", program, "--def", def, "--target", target],
    );
    assert!(out.status.success(), "{def} --target {target}: {text}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_blur_reads_its_copied_input_at_plain_indices_its_window_unrolled_with_constant_weights() {
    for target in ["c", "openmp"] {
        let code = compiled_in("examples/stencil2d.rise", "gaussian5u8", target);
        let window = code
            .split("(unrolled: 25 iterations)")
            .nth(1)
            .and_then(|rest| rest.split("output[").next())
            .unwrap_or_else(|| panic!("{target}: no unrolled window\n{code}"));
        // 25 reads of the copy, each times a constant weight: no clamp, no select
        assert_eq!(window.matches("mem0[").count(), 25, "{target}:\n{code}");
        assert!(
            !window.contains('?'),
            "{target}: a clamp or a select per read\n{code}"
        );
        assert!(
            window.contains("(uint16_t)36)"),
            "{target}: the centre weight\n{code}"
        );
        // the copy clamps once per element of the padded array
        assert!(
            code.contains("mem0[") && code.matches(" ? ").count() > 0,
            "{code}"
        );
        let parallel = code.matches("#pragma omp parallel for").count();
        assert_eq!(
            parallel,
            if target == "openmp" { 2 } else { 0 },
            "{target}:\n{code}"
        );
    }
    // GPUs keep the pad a view, the window still unrolled
    let code = compiled_in("examples/stencil2d.rise", "gaussian5u8", "opencl");
    assert!(code.contains("(unrolled: 25 iterations)"), "{code}");
    assert!(!code.contains("mem0"), "{code}");
}

#[test]
fn explain_names_the_copied_stencil_input_and_the_unrolled_window() {
    let (out, text) = shine_in(
        root(),
        &[
            "compile",
            "examples/stencil2d.rise",
            "--def",
            "gaussian5u8",
            "--target",
            "openmp",
            "--explain",
        ],
    );
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("stencil input: 1 padded array(s) copied with their border"),
        "{text}"
    );
    assert!(text.contains("((n+4).(m+4).u8)"), "{text}");
    assert!(text.contains("unrolled: 1 reduction(s)"), "{text}");
    assert!(!text.contains("border:"), "{text}");
    // a reduction over a window of 49 elements stays a loop
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("wide.rise");
    std::fs::write(
        &program,
        "def blur7 : {n m: nat} -> n.m.f32 -> n.m.f32 = fun img => img |> padClamp2 3 3 |> slide2 7 1 |> map2 (fun w => reduce add 0.0f (join w))",
    )
    .unwrap();
    let program = program.display().to_string();
    let (out, text) = shine_in(
        root(),
        &[
            "compile",
            &program,
            "--def",
            "blur7",
            "--target",
            "c",
            "--explain",
        ],
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("stencil input: 1 padded array(s)"), "{text}");
    assert!(!text.contains("unrolled:"), "{text}");
    assert!(text.contains("sequential: 1 reduction(s)"), "{text}");
}
