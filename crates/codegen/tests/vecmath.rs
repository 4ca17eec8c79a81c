//! shine's `float` math kernels in C and OpenMP (`codegen::vecmath`): each one, called by a
//! generated loop compiled as the runtime compiles it (`-O3 -march=native`), gives the
//! interpreter's result at the edge values and stays within `vecmath::ULP_BOUND` of it on
//! random inputs; the loop is vectorized; with `-ffast-math` the module calls libm instead.
//! `max` and `min` (C's `fmax` and `fmin`) are exact: on every pair of edge values and on
//! random pairs they give the interpreter's result (a zero of either sign where it gives 0).

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

use codegen::vecmath::{self, ulp_distance};
use codegen::{generate, CModule, Target};
use dpia::{Exp, ExpKind, LoopKind};
use rise::primitives::MathFn;

/// `out[i] = f(x[i])` (or `f(x[i], y[i])`) over `n` floats, as a loop of `kind`.
fn map_math(f: MathFn, kind: LoopKind) -> dpia::Program {
    let n = size("n");
    let inputs: Vec<_> = ["x", "y"][..f.arity()]
        .iter()
        .map(|name| ident(name, arr(nat(&n), f32t())))
        .collect();
    let out = ident("out", arr(nat(&n), f32t()));
    let i = loop_var("i", &nat(&n));
    let args = inputs.iter().map(|x| idx(read(x), nat(&i))).collect();
    let call = Exp::new(ExpKind::Math(f, args), f32t());
    let body = for_loop(&i, kind, "map", assign(idx_acc(acc(&out), nat(&i)), call));
    let inputs: Vec<_> = inputs.iter().collect();
    program(&format!("map_{}", f.name()), &[&n], &out, &inputs, body)
}

/// The edge values: zeros, the smallest subnormal, the smallest normal, the largest finite
/// value, infinities, NaN, where `exp` overflows and underflows, logarithms of negative
/// numbers, `tanh` and `erf` saturating, the ends of the kernels' ranges. Where the
/// interpreter's value is 0, ±1, infinite or NaN, a kernel must give exactly it
/// (the sign of zero included); elsewhere the same sign, within the bound.
fn edge_values() -> Vec<f32> {
    let mut v = vec![
        0.0,
        f32::from_bits(1),
        f32::MIN_POSITIVE,
        f32::MAX,
        f32::INFINITY,
        f32::NAN,
        1.0,
        0.5,
        88.72283,
        88.72284,
        89.5,
        -87.33655,
        -103.97208,
        -103.97209,
        -104.5,
        0.625,
        9.02,
        10.0,
        20.0,
        0.921875,
        3.92,
        4.0,
        6.0,
    ];
    let negated: Vec<f32> = v.iter().map(|x| -x).collect();
    v.extend(negated);
    v
}

/// Random floats: uniform bit patterns (every magnitude and class) and values in [-30, 30].
fn random_values(count: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    let mut next = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 32) as u32
    };
    (0..count)
        .map(|k| {
            let r = next();
            if k % 2 == 0 {
                f32::from_bits(r)
            } else {
                (r as f64 / u32::MAX as f64 * 60.0 - 30.0) as f32
            }
        })
        .collect()
}

/// Compiles `m` with `flags` and a `main` that reads the input floats' bits from `in.bin`
/// (the inputs one after the other) and writes the output's to `out.bin`; runs it on
/// `inputs` (of one length); returns the results.
fn run_bits(m: &CModule, flags: &[&str], inputs: &[&[f32]]) -> Vec<f32> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let n = inputs.first().map_or(0, |xs| xs.len());
    let main = format!(
        "#include <stdio.h>\n#include <stdlib.h>\n#include <stdint.h>\n\
         int {entry}(void *const *buffers, const int64_t *sizes);\n\
         int main(void) {{\n\
           int64_t n = {n}, k = {k};\n\
           float *x = malloc(n * k * 4), *out = malloc(n * 4);\n\
           FILE *f = fopen(\"in.bin\", \"rb\");\n\
           if (!f || fread(x, 4, n * k, f) != (size_t)(n * k)) return 2;\n\
           fclose(f);\n\
           void *buffers[] = {{out, x, x + n}};\n\
           if ({entry}(buffers, &n) != 0) return 3;\n\
           f = fopen(\"out.bin\", \"wb\");\n\
           if (!f || fwrite(out, 4, n, f) != (size_t)n) return 4;\n\
           fclose(f);\n\
           free(x); free(out);\n\
           return 0;\n\
         }}\n",
        entry = m.entry,
        k = inputs.len()
    );
    write(dir.path(), "module.c", m.source.as_bytes());
    write(dir.path(), "main.c", main.as_bytes());
    let bytes: Vec<u8> = inputs
        .iter()
        .flat_map(|xs| xs.iter().flat_map(|x| x.to_le_bytes()))
        .collect();
    write(dir.path(), "in.bin", &bytes);
    let cc = Command::new("gcc")
        .current_dir(dir.path())
        .args(flags)
        .args([
            "-Wall", "-Wextra", "-Werror", "module.c", "main.c", "-o", "test", "-lm",
        ])
        .output()
        .expect("gcc is needed to run the code generation tests");
    assert!(
        cc.status.success(),
        "gcc failed:\n{}\n{}",
        String::from_utf8_lossy(&cc.stderr),
        m.source
    );
    let run = Command::new(dir.path().join("test"))
        .current_dir(dir.path())
        .env("OMP_NUM_THREADS", "2")
        .status()
        .expect("running the test program");
    assert!(run.success(), "the test program failed: {run}");
    let out = std::fs::read(dir.path().join("out.bin")).expect("reading the results");
    out.chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(dir.join(name), bytes).expect("writing a test file");
}

/// Checks `f`'s kernel on `target` on the edge values and on random values.
fn check_kernel(f: MathFn, target: Target, kind: LoopKind) {
    let m = generate(&map_math(f, kind), target).expect("code generation");
    let kernel = vecmath::c_name(f).expect("a kernel");
    assert!(m.source.contains(&format!("{kernel}(")), "{}", m.source);
    let flags: &[&str] = match target {
        Target::OpenMp => &["-O3", "-march=native", "-fopenmp"],
        _ => &["-O3", "-march=native"],
    };
    let edges = edge_values();
    let randoms = random_values(100_000, 7 + f as u64);
    let xs: Vec<f32> = edges.iter().chain(&randoms).copied().collect();
    let got = run_bits(&m, flags, &[&xs]);
    let want = |x: f32| f.eval_f32(&[x]);
    for (&x, &g) in xs.iter().zip(&got).take(edges.len()) {
        let w = want(x);
        let exact = w == 0.0 || w.abs() == 1.0 || w.is_infinite() || w.is_nan();
        let bound = if exact { 0 } else { vecmath::ULP_BOUND };
        assert!(
            ulp_distance(g, w) <= bound
                && (w.is_nan() || g.is_sign_negative() == w.is_sign_negative()),
            "{} {x:e} on {target:?}: got {g:e}, the interpreter {:e}",
            f.name(),
            want(x)
        );
    }
    let (worst, at) = xs
        .iter()
        .zip(&got)
        .enumerate()
        .map(|(k, (&x, &g))| (ulp_distance(g, want(x)), k))
        .max()
        .unwrap_or((0, 0));
    assert!(
        worst <= vecmath::ULP_BOUND,
        "{} on {target:?}: {worst} ulp at {:e} (got {:e}, the interpreter {:e})",
        f.name(),
        xs[at],
        got[at],
        want(xs[at])
    );
}

/// Checks `f`'s kernel of two operands (`max`, `min`: exact) on `target` on every pair of
/// edge values and on random pairs.
fn check_binary_kernel(f: MathFn, target: Target, kind: LoopKind) {
    let m = generate(&map_math(f, kind), target).expect("code generation");
    let kernel = vecmath::c_name(f).expect("a kernel");
    assert!(m.source.contains(&format!("{kernel}(")), "{}", m.source);
    let edges = edge_values();
    let mut xs: Vec<f32> = edges
        .iter()
        .flat_map(|&x| edges.iter().map(move |_| x))
        .collect();
    let mut ys: Vec<f32> = edges.iter().flat_map(|_| edges.iter().copied()).collect();
    xs.extend(random_values(20_000, 11));
    ys.extend(random_values(20_000, 12));
    let flags: &[&str] = match target {
        Target::OpenMp => &["-O3", "-march=native", "-fopenmp"],
        _ => &["-O3", "-march=native"],
    };
    let got = run_bits(&m, flags, &[&xs, &ys]);
    for ((&x, &y), &g) in xs.iter().zip(&ys).zip(&got) {
        let w = f.eval_f32(&[x, y]);
        // C leaves the sign of a zero result open (fmax(+0, -0)), as the interpreter does
        let same =
            ulp_distance(g, w) == 0 && (w == 0.0 || w.is_nan() || g.to_bits() == w.to_bits());
        assert!(
            same,
            "{} {x:e} {y:e} on {target:?}: got {g:e}, the interpreter {w:e}",
            f.name()
        );
    }
}

/// The functions of one operand with a kernel (`exp`, `log`, `tanh`, `erf`).
fn unary_functions() -> impl Iterator<Item = MathFn> {
    vecmath::functions().filter(|f| f.arity() == 1)
}

#[test]
fn kernels_agree_with_the_interpreter_in_c() {
    for f in unary_functions() {
        check_kernel(f, Target::C, LoopKind::Seq);
    }
}

#[test]
fn kernels_agree_with_the_interpreter_in_openmp() {
    for f in unary_functions() {
        check_kernel(f, Target::OpenMp, LoopKind::Par);
    }
}

#[test]
fn max_and_min_agree_with_the_interpreter_exactly() {
    for f in [MathFn::Max, MathFn::Min, MathFn::Fmax, MathFn::Fmin] {
        check_binary_kernel(f, Target::C, LoopKind::Seq);
    }
    check_binary_kernel(MathFn::Max, Target::OpenMp, LoopKind::Par);
}

/// gcc vectorizes the loop calling each kernel without `-ffast-math` (`-fopt-info-vec`).
#[test]
fn loops_calling_kernels_are_vectorized() {
    for f in vecmath::functions() {
        let m = generate(&map_math(f, LoopKind::Seq), Target::C).expect("code generation");
        let dir = tempfile::tempdir().expect("a temporary directory");
        write(dir.path(), "module.c", m.source.as_bytes());
        let cc = Command::new("gcc")
            .current_dir(dir.path())
            .args([
                "-O3",
                "-march=native",
                "-fopt-info-vec-optimized",
                "-c",
                "module.c",
            ])
            .output()
            .expect("gcc");
        let report = String::from_utf8_lossy(&cc.stderr);
        assert!(
            cc.status.success() && report.contains("loop vectorized"),
            "{}: the loop is not vectorized:\n{report}\n{}",
            f.name(),
            m.source
        );
    }
}

/// With `-ffast-math` the kernels' names stand for libm's functions (vectorized by gcc with
/// libmvec, as before); the results stay close.
#[test]
fn fast_math_calls_libm() {
    let m = generate(&map_math(MathFn::Tanh, LoopKind::Seq), Target::C).expect("codegen");
    assert!(
        m.source.contains("#define shine_tanhf tanhf"),
        "{}",
        m.source
    );
    let xs = random_values(1000, 3);
    let got = run_bits(&m, &["-O3", "-march=native", "-ffast-math"], &[&xs]);
    for (&x, &g) in xs.iter().zip(&got) {
        let want = MathFn::Tanh.eval_f32(&[x]);
        assert!(
            x.is_nan() || (g - want).abs() <= 1e-6,
            "tanh {x:e}: {g:e} vs {want:e}"
        );
    }
}

/// `f64` math keeps libm's functions (no kernel of shine's own yet).
#[test]
fn double_precision_calls_libm() {
    let n = size("n");
    let x = ident(
        "x",
        arr(nat(&n), rise::DataType::Scalar(rise::ScalarType::F64)),
    );
    let out = ident(
        "out",
        arr(nat(&n), rise::DataType::Scalar(rise::ScalarType::F64)),
    );
    let i = loop_var("i", &nat(&n));
    let call = Exp::new(
        ExpKind::Math(MathFn::ExpE, vec![idx(read(&x), nat(&i))]),
        rise::DataType::Scalar(rise::ScalarType::F64),
    );
    let body = for_loop(
        &i,
        LoopKind::Seq,
        "map",
        assign(idx_acc(acc(&out), nat(&i)), call),
    );
    let m = generate(&program("exp64", &[&n], &out, &[&x], body), Target::C).expect("codegen");
    assert!(m.source.contains("= exp(x[i]);"), "{}", m.source);
    assert!(!m.source.contains("shine_expf"), "{}", m.source);
}
