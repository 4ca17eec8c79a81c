//! Foreign functions (issue 14, item 2) through the command line: `examples/foreign.rise`
//! type-checks, evaluates (the interpreter runs the C bodies in a child process), and runs
//! verified on C, OpenMP and OpenCL (PoCL) with a foreign function inside a map, after a
//! map inside a reduction, and as the operator of sequential and GPU tree reductions;
//! CUDA code is compiled. A foreign function that divides by zero or dereferences null is
//! a clear error in `eval` and in `run`, and so is a missing C compiler.
//!
//! Without any OpenCL platform the OpenCL runs FAIL, as the runtime's tests do; set
//! `SHINE_SKIP_OPENCL=1` to skip them.

use shine::rise::interp::Scalar;
use shine::rise::{DataType, ScalarType};
use shine::Array;
use std::path::Path;
use std::process::{Command, Output};

mod support;
use support::{skip_opencl, targets};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/foreign.rise");
const CPU: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/cpu.elv");
const GPU: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/gpu.elv");

/// Foreign functions that fail: an integer division by zero, a null pointer dereference.
const FAULTS: &str = "
foreign divzero (x: i32) : i32 { volatile int32_t zero = 0; return x / zero; }
foreign nullread (x: f32) : f32 { volatile float *p = 0; return *p + x; }
def divAll = fun xs => map (fun x => divzero x) xs
def readAll = fun xs => map (fun x => nullread x) xs
";

fn shine(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shine"))
        .args(args)
        .output()
        .expect("shine runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn write(path: &Path, elem: ScalarType, data: Vec<Scalar>) {
    let a = Array {
        elem: DataType::Scalar(elem),
        shape: vec![data.len()],
        data,
    };
    shine::npy::write(path, &a).unwrap();
}

#[test]
fn check_prints_the_signatures() {
    let out = shine(&["check", EXAMPLE]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("clampf : f32 -> f32 -> f32 -> f32\n"), "{t}");
    assert!(t.contains("gcd : i32 -> i32 -> i32\n"), "{t}");
    assert!(t.contains("clampAll : {n: nat} -> n.f32 -> n.f32\n"), "{t}");
}

#[test]
fn eval_runs_the_c_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let xs = dir.path().join("xs.npy");
    let fs = [-2.0f32, -0.5, 0.25, 0.75, 3.0];
    write(&xs, ScalarType::F32, fs.map(Scalar::F32).to_vec());
    let is = dir.path().join("is.npy");
    write(
        &is,
        ScalarType::I32,
        [12, -18, 30, 42].map(Scalar::I32).to_vec(),
    );
    let xs = xs.to_str().unwrap();
    let is = is.to_str().unwrap();
    for (def, input, want) in [
        ("clampAll", xs, "[0.0, 0.0, 0.25, 0.75, 1.0]"),
        ("clampedSum", xs, "0.5"),
        ("gcdAll", is, "6"),
    ] {
        let out = shine(&["eval", EXAMPLE, "--def", def, "--input", input]);
        let t = text(&out);
        assert!(out.status.success(), "{def}: {t}");
        assert_eq!(t.trim(), want, "{def}");
    }
    // no C compiler: an error naming the function
    let out = shine(&[
        "eval",
        EXAMPLE,
        "--def",
        "gcdAll",
        "--input",
        is,
        "--cc",
        "/nonexistent/cc",
    ]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(
        t.contains("foreign function `gcd` cannot be evaluated: the C compiler `/nonexistent/cc` was not found"),
        "{t}"
    );
}

/// `shine run` of `def` of the example under `strategy` (file, name) for `target` at the
/// size `n` on random inputs of `seed`, which must verify against the interpreter.
fn run_verified(def: &str, (file, strategy): (&str, &str), target: &str, n: &str, seed: &str) {
    let out = shine(&[
        "run",
        EXAMPLE,
        "--def",
        def,
        "--strategy",
        file,
        "--apply",
        strategy,
        "--target",
        target,
        "--nat",
        n,
        "--random",
        seed,
        "--verify",
    ]);
    let t = text(&out);
    assert!(
        out.status.success() && t.contains("verified against the interpreter"),
        "{def} {strategy} {target}: {t}"
    );
}

#[test]
fn runs_verify_on_c_openmp_and_opencl() {
    let targets = targets();
    for (def, strategy, n) in [
        ("clampAll", "sequential", "n=33"),
        ("clampAll", "parallelOuter", "n=33"),
        ("clampedSum", "sequential", "n=40"),
        ("clampedSum", "fuseReductions", "n=40"),
        ("gcdAll", "sequential", "n=17"),
    ] {
        for target in &targets {
            if matches!(*target, "opencl" | "cuda") && strategy == "parallelOuter" {
                continue; // mapPar is for CPUs
            }
            run_verified(def, (CPU, strategy), target, n, "5");
        }
    }
    if skip_opencl() {
        eprintln!("skipping the GPU tree reduction: SHINE_SKIP_OPENCL=1");
        return;
    }
    // a foreign operator in the work-group's tree reduction (with `iterate`)
    run_verified("gcdPartial", (GPU, "reduceWorkGroup"), "opencl", "n=3", "2");
}

#[test]
fn every_target_prints_the_function_before_its_kernels() {
    for (target, head) in [
        (
            "c",
            "static inline float clampf(float x, float lo, float hi) {",
        ),
        (
            "openmp",
            "static inline float clampf(float x, float lo, float hi) {",
        ),
        (
            "opencl",
            "static inline float clampf(float x, float lo, float hi) {",
        ),
        (
            "cuda",
            "static __device__ inline float clampf(float x, float lo, float hi) {",
        ),
    ] {
        let out = shine(&[
            "compile",
            EXAMPLE,
            "--def",
            "clampAll",
            "--strategy",
            GPU,
            "--apply",
            "global1d",
            "--target",
            target,
        ]);
        let t = text(&out);
        if target == "c" || target == "openmp" {
            // global1d is a GPU schedule; the C targets refuse it, and take `lowered`
            assert!(!out.status.success(), "{t}");
            let out = shine(&[
                "compile",
                EXAMPLE,
                "--def",
                "clampAll",
                "--strategy",
                CPU,
                "--apply",
                "sequential",
                "--target",
                target,
            ]);
            let t = text(&out);
            assert!(out.status.success(), "{target}: {t}");
            assert!(
                t.contains(head) && t.contains("#include <math.h>"),
                "{target}: {t}"
            );
            assert!(t.find(head) < t.find("void clampAll("), "{target}: {t}");
            assert!(t.contains("] = clampf("), "{target}: {t}");
            continue;
        }
        assert!(out.status.success(), "{target}: {t}");
        assert!(t.contains(head), "{target}: {t}");
        assert!(
            t.contains("return x < lo ? lo : (x > hi ? hi : x);"),
            "{target}: {t}"
        );
        assert!(t.contains("typedef int int32_t;"), "{target}: {t}");
        assert!(t.find(head) < t.find("clampAll("), "{target}: {t}");
    }
}

#[test]
fn faults_of_foreign_code_are_errors_in_eval_and_run() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("faults.rise");
    std::fs::write(&program, FAULTS).unwrap();
    let program = program.to_str().unwrap();
    let is = dir.path().join("is.npy");
    write(&is, ScalarType::I32, [1, 2, 3].map(Scalar::I32).to_vec());
    let xs = dir.path().join("xs.npy");
    write(&xs, ScalarType::F32, [1.0, 2.0].map(Scalar::F32).to_vec());
    for (def, input, signal, name) in [
        ("divAll", &is, "SIGFPE", "divzero"),
        ("readAll", &xs, "SIGSEGV", "nullread"),
    ] {
        let input = input.to_str().unwrap();
        let out = shine(&["eval", program, "--def", def, "--input", input]);
        let t = text(&out);
        assert!(!out.status.success(), "{def}: {t}");
        assert!(
            t.contains(&format!("foreign function `{name}` crashed")) && t.contains(signal),
            "{def}: {t}"
        );
        assert!(!t.contains("panicked"), "{t}");
        for target in ["c", "openmp"] {
            let out = shine(&[
                "run",
                program,
                "--def",
                def,
                "--strategy",
                CPU,
                "--apply",
                "sequential",
                "--target",
                target,
                "--input",
                input,
                "--verify",
            ]);
            let t = text(&out);
            assert!(!out.status.success(), "{def} {target}: {t}");
            assert!(t.contains(signal) && t.contains(def), "{def} {target}: {t}");
            assert!(!t.contains("panicked"), "{t}");
        }
    }
}

/// Under `--target opencl` on a CPU platform (PoCL runs kernels on threads of the process
/// that calls it), a foreign function that dereferences null crashes the runtime's OpenCL
/// child process, not `shine`: an error naming the signal, the kernel and the function.
/// (On an NVIDIA GPU, where kernels run on the device, the driver reports the fault.)
#[test]
fn a_crashing_foreign_function_under_opencl_is_an_error() {
    if skip_opencl() {
        eprintln!("skipping: SHINE_SKIP_OPENCL=1");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("faults.rise");
    std::fs::write(&program, FAULTS).unwrap();
    let out = shine(&[
        "run",
        program.to_str().unwrap(),
        "--def",
        "readAll",
        "--strategy",
        GPU,
        "--apply",
        "global1d",
        "--target",
        "opencl",
        "--nat",
        "n=8",
        "--random",
        "1",
    ]);
    let t = text(&out);
    if support::test_gpu() && !t.contains("the OpenCL process of") {
        // an NVIDIA device (runs in `shine`'s process): the driver's error, if any, but
        // never the end of `shine` by a signal
        assert!(out.status.code().is_some(), "{t}");
        return;
    }
    // an exit status of its own, not a signal's death
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("SIGSEGV") && t.contains("kernel `readAll`"),
        "{t}"
    );
    assert!(t.contains("foreign function `nullread`"), "{t}");
    assert!(!t.contains("panicked"), "{t}");
}
