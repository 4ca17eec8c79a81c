//! Issue 30, items 1 and 2: `exp`, `log`, `tanh` and `erf` of `f32` compile in C and OpenMP
//! to shine's own vectorizable kernels, IEEE without `-ffast-math`. Through `shine run
//! --verify`, on edge values (zeros, subnormals, the largest finite value, infinities, NaN,
//! where `exp` overflows and underflows, logarithms of negative numbers, `tanh` and `erf`
//! saturating) the results are exactly the interpreter's where its value is 0, ±1, infinite
//! or NaN, and within 2 ulps of it elsewhere and on random inputs (docs/semantics.md).
//! OpenCL and CUDA keep their builtins (`math_cli.rs`). `fmax` and `fmin` (`max`, `min` of
//! floats) are exact on scalars and on whole vectors (`shine_vfmax`, vector operations):
//! the interpreter's result on every pair of edge values and on random pairs.

use shine::rise::interp::Scalar;
use shine::rise::ScalarType;
use std::path::Path;

mod support;
use support::{shine_in, write_scalars};

use codegen::vecmath::{ulp_distance, ULP_BOUND};

const FUNCTIONS: &[&str] = &["exp", "log", "tanh", "erf"];

/// One definition per function, and GELU in its two forms (kernels inside an expression).
fn program() -> String {
    let mut p = String::new();
    for f in FUNCTIONS {
        p.push_str(&format!(
            "def {f}s : {{n: nat}} -> n.f32 -> n.f32 = fun xs => xs |> map (fun x => {f} x)\n"
        ));
    }
    p.push_str(
        "def geluTanh : {n: nat} -> n.f32 -> n.f32 = fun xs => xs |> map (fun x =>\n  \
         0.5f * x * (1.0f + tanh (0.7978846f * (x + 0.044715f * x * x * x))))\n\
         def geluErf : {n: nat} -> n.f32 -> n.f32 = fun xs => xs |> map (fun x =>\n  \
         0.5f * x * (1.0f + erf (x * 0.70710677f)))\n",
    );
    for (f, g) in [
        ("fmax", "fmax"),
        ("fmin", "fmin"),
        ("max", "max"),
        ("min", "min"),
    ] {
        p.push_str(&format!(
            "def {f}s : {{n: nat}} -> n.f32 -> n.f32 -> n.f32 = fun xs ys =>\n  \
             zip xs ys |> map (fun p => {g} (fst p) (snd p))\n\
             def {f}v : {{n: nat}} -> n.f32 -> n.f32 -> n.f32 = fun xs ys =>\n  \
             zip (asVector 16 xs) (asVector 16 ys) |> map (fun p => {g} (fst p) (snd p)) \
             |> asScalar\n"
        ));
    }
    p
}

fn edges() -> Vec<f32> {
    let mut v = vec![
        0.0,
        f32::from_bits(1),
        1e-40,
        f32::MIN_POSITIVE,
        f32::MAX,
        f32::INFINITY,
        f32::NAN,
        1.0,
        88.72283,
        88.72284,
        -87.33655,
        -103.97208,
        -103.97209,
        -120.0,
        0.625,
        9.02,
        12.0,
        0.921875,
        3.92,
        5.0,
    ];
    let negated: Vec<f32> = v.iter().map(|x| -x).collect();
    v.extend(negated);
    v
}

/// Random floats: every bit pattern, and values in [-30, 30].
fn randoms(count: usize) -> Vec<f32> {
    let mut s: u64 = 30;
    (0..count)
        .map(|k| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (s >> 32) as u32;
            if k % 2 == 0 {
                f32::from_bits(r)
            } else {
                (f64::from(r) / f64::from(u32::MAX) * 60.0 - 30.0) as f32
            }
        })
        .collect()
}

fn read(path: &Path) -> Vec<f32> {
    shine::npy::read(path)
        .unwrap_or_else(|e| panic!("{e}"))
        .data
        .iter()
        .map(|s| s.as_f64() as f32)
        .collect()
}

/// `shine ARGS` in `dir`, which must succeed: its output text.
fn shine(dir: &Path, args: &[&str]) -> String {
    let (out, text) = shine_in(dir, args);
    assert!(out.status.success(), "shine {}: {text}", args.join(" "));
    text
}

/// Runs `def` on `input` for `target` with `--verify`; returns its results and the
/// interpreter's (`shine eval`).
fn run_and_eval(dir: &Path, def: &str, input: &str, target: &str) -> (Vec<f32>, Vec<f32>) {
    run_and_eval_on(dir, def, &[input], target)
}

/// [`run_and_eval`] of a definition of several inputs.
fn run_and_eval_on(dir: &Path, def: &str, inputs: &[&str], target: &str) -> (Vec<f32>, Vec<f32>) {
    let name = inputs.join("_");
    let got = format!("{def}_{name}_{target}.npy");
    let with_inputs = |mut args: Vec<&'static str>| {
        let mut all: Vec<String> = args.drain(..).map(String::from).collect();
        for input in inputs {
            all.extend(["--input".to_string(), input.to_string()]);
        }
        all
    };
    let mut args = with_inputs(vec!["run", "vm.rise", "--verify"]);
    args.extend(["--def", def, "--target", target, "--output", &got].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let text = shine(dir, &args);
    assert!(text.contains("verified against the interpreter"), "{text}");
    let want = format!("{def}_{name}_want.npy");
    if !dir.join(&want).exists() {
        let mut args = with_inputs(vec!["eval", "vm.rise"]);
        args.extend(["--def", def, "--output", &want].map(String::from));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        shine(dir, &args);
    }
    (read(&dir.join(&got)), read(&dir.join(&want)))
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("vm.rise"), program()).expect("writes the program");
    let scalars = |xs: Vec<f32>| xs.into_iter().map(Scalar::F32).collect();
    write_scalars(dir.path(), "edges.npy", ScalarType::F32, scalars(edges()));
    write_scalars(
        dir.path(),
        "random.npy",
        ScalarType::F32,
        scalars(randoms(20_000)),
    );
    // every pair of edge values (40 x 40 = 100 vectors of 16), and random pairs
    let e = edges();
    let firsts = e.iter().flat_map(|&x| e.iter().map(move |_| x)).collect();
    let seconds = e.iter().flat_map(|_| e.iter().copied()).collect();
    write_scalars(dir.path(), "pairs_x.npy", ScalarType::F32, scalars(firsts));
    write_scalars(dir.path(), "pairs_y.npy", ScalarType::F32, scalars(seconds));
    let mut others = randoms(40_000);
    others.reverse();
    others.truncate(20_000);
    write_scalars(dir.path(), "random_y.npy", ScalarType::F32, scalars(others));
    dir
}

#[test]
fn kernels_agree_with_the_interpreter_on_c_and_openmp() {
    let dir = setup();
    for target in ["c", "openmp"] {
        for f in FUNCTIONS {
            let def = format!("{f}s");
            for input in ["edges.npy", "random.npy"] {
                let (got, want) = run_and_eval(dir.path(), &def, input, target);
                let xs = read(&dir.path().join(input));
                for ((x, g), w) in xs.iter().zip(&got).zip(&want) {
                    let exact = *w == 0.0 || w.abs() == 1.0 || w.is_infinite() || w.is_nan();
                    let bound = if exact { 0 } else { ULP_BOUND };
                    let sign = w.is_nan() || g.is_sign_negative() == w.is_sign_negative();
                    assert!(
                        ulp_distance(*g, *w) <= bound && sign,
                        "{f} {x:e} on {target}: got {g:e}, the interpreter {w:e}"
                    );
                }
            }
        }
    }
}

#[test]
fn gelu_agrees_with_the_interpreter() {
    let dir = setup();
    for target in ["c", "openmp"] {
        for def in ["geluTanh", "geluErf"] {
            let (got, want) = run_and_eval(dir.path(), def, "random.npy", target);
            let xs = read(&dir.path().join("random.npy"));
            for ((x, g), w) in xs.iter().zip(&got).zip(&want) {
                // `1 + tanh` and `1 + erf` cancel for negative x: an absolute bound there
                let close = ulp_distance(*g, *w) <= 8 || (g - w).abs() <= 1e-6 * x.abs().max(1.0);
                assert!(close, "{def} on {target}: got {g:e}, the interpreter {w:e}");
            }
        }
    }
}

#[test]
fn max_and_min_are_exact_on_scalars_and_vectors() {
    let dir = setup();
    for target in ["c", "openmp"] {
        for f in ["fmax", "fmin", "max", "min"] {
            for def in [format!("{f}s"), format!("{f}v")] {
                for inputs in [
                    ["pairs_x.npy", "pairs_y.npy"],
                    ["random.npy", "random_y.npy"],
                ] {
                    let (got, want) = run_and_eval_on(dir.path(), &def, &inputs, target);
                    assert_eq!(got.len(), want.len());
                    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                        // the sign of a zero result is open, as in C
                        let same = g.to_bits() == w.to_bits()
                            || (g.is_nan() && w.is_nan())
                            || (*w == 0.0 && *g == 0.0);
                        assert!(
                            same,
                            "{def} on {target}, element {k}: got {g:e}, want {w:e}"
                        );
                    }
                }
            }
        }
    }
}

/// `fmax` of whole vectors is one macro of vector operations, not a call per lane; of
/// scalars an inline select; the softmax rows of `rowsVecPar` call no `fmaxf`.
#[test]
fn max_of_vectors_is_computed_with_vector_operations() {
    let dir = setup();
    let text = shine(
        dir.path(),
        &["compile", "vm.rise", "--def", "fmaxv", "--target", "c"],
    );
    assert!(text.contains("= shine_vfmax("), "{text}");
    assert!(!text.contains("fmaxf("), "{text}");
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let text = shine(
        Path::new(root),
        &[
            "compile",
            "examples/norms.rise",
            "--def",
            "softmax",
            "--strategy",
            "examples/reduce.elv",
            "--apply",
            "rowsVecPar(16)",
            "--target",
            "openmp",
        ],
    );
    assert!(
        text.contains("shine_vfmax(") && text.contains("shine_fmaxf("),
        "{text}"
    );
    assert!(!text.contains(" fmaxf("), "{text}");
}

/// The generated C calls the kernels, and keeps libm's names in double precision.
#[test]
fn compiled_code_calls_the_kernels() {
    let dir = setup();
    let text = shine(
        dir.path(),
        &["compile", "vm.rise", "--def", "geluErf", "--target", "c"],
    );
    assert!(text.contains("shine_erff("), "{text}");
    assert!(
        text.contains("static inline float shine_expf(float x)"),
        "{text}"
    );
    assert!(!text.contains("shine_tanhf"), "{text}");
    std::fs::write(
        dir.path().join("d.rise"),
        "def e : {n: nat} -> n.f64 -> n.f64 = fun xs => xs |> map (fun x => exp x)\n",
    )
    .expect("writes");
    let text = shine(
        dir.path(),
        &["compile", "d.rise", "--def", "e", "--target", "c"],
    );
    assert!(
        text.contains("exp(") && !text.contains("shine_exp"),
        "{text}"
    );
}
