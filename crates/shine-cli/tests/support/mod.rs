//! What the command-line tests share: the targets this machine runs them on, and `shine`
//! run in a directory. Each test file uses part of it (`mod support;`).
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// `SHINE_SKIP_OPENCL=1`: no OpenCL platform here (the OpenCL cases are left out).
pub fn skip_opencl() -> bool {
    std::env::var("SHINE_SKIP_OPENCL").as_deref() == Ok("1")
}

/// `SHINE_TEST_GPU=1`: a GPU machine (`scripts/gpu-tests.sh`), where CUDA runs too.
pub fn test_gpu() -> bool {
    std::env::var("SHINE_TEST_GPU").as_deref() == Ok("1")
}

/// The targets to run on: C and OpenMP, OpenCL unless skipped, CUDA on a GPU machine.
pub fn targets() -> Vec<&'static str> {
    let mut ts = vec!["c", "openmp"];
    if skip_opencl() {
        eprintln!("skipping OpenCL: SHINE_SKIP_OPENCL=1");
    } else {
        ts.push("opencl");
    }
    if test_gpu() {
        ts.push("cuda");
    }
    ts
}

/// The GPU targets this machine runs: OpenCL unless skipped, CUDA on a GPU machine.
pub fn gpu_targets() -> Vec<&'static str> {
    targets()
        .into_iter()
        .filter(|t| matches!(*t, "opencl" | "cuda"))
        .collect()
}

/// The repository root (the examples are named from it).
pub fn repo_root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// [`targets`], each with the name of the strategy it runs under: `cpu` for C, `omp` for
/// OpenMP, `gpu` for OpenCL and CUDA.
pub fn targets_with_strategies() -> Vec<(&'static str, &'static str)> {
    targets()
        .into_iter()
        .map(|t| {
            let strategy = match t {
                "c" => "cpu",
                "openmp" => "omp",
                _ => "gpu",
            };
            (t, strategy)
        })
        .collect()
}

/// `shine` on `program`, written to `p.rise` in a temporary directory and named after the
/// subcommand (`args[0]`); whether it succeeded, and its output.
pub fn shine_on(program: &str, args: &[&str]) -> (bool, String) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("p.rise"), program).expect("written");
    let mut all = vec![args[0], "p.rise"];
    all.extend_from_slice(&args[1..]);
    let (out, text) = shine_in(dir.path(), &all);
    (out.status.success(), text)
}

/// `shine ARGS` run in `dir`: its output, and its standard output and error as one text.
pub fn shine_in(dir: &Path, args: &[&str]) -> (Output, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_shine"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("shine runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out, text)
}

/// Writes `data`, one-dimensional arrays of the scalar type `elem`, as the `.npy` file `name`
/// in `dir`; returns `name` (commands run in `dir`).
pub fn write_scalars(
    dir: &Path,
    name: &str,
    elem: shine::rise::ScalarType,
    data: Vec<shine::rise::interp::Scalar>,
) -> String {
    let array = shine::Array {
        elem: shine::rise::DataType::Scalar(elem),
        shape: vec![data.len()],
        data,
    };
    shine::npy::write(&dir.join(name), &array).expect("writes the input");
    name.to_string()
}

/// The JSON summary `shine explore` prints last on standard output.
pub fn explore_summary(out: &Output) -> serde_json::Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("a JSON summary")
}

/// The summary of a `shine explore` that succeeded ([`shine_in`]'s answer).
pub fn explore_succeeds(out: &(Output, String)) -> serde_json::Value {
    assert!(out.0.status.success(), "{}", out.1);
    explore_summary(&out.0)
}

/// Asserts that a command ([`shine_in`]'s answer) failed saying `message`, without a panic.
pub fn fails_with(out: &(Output, String), message: &str) {
    assert!(!out.0.status.success(), "exit 0:\n{}", out.1);
    assert!(out.1.contains(message), "no `{message}` in:\n{}", out.1);
    assert!(!out.1.contains("panicked"), "{}", out.1);
}

/// A path as an argument.
pub fn path_text(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// `shine run` of `def` of `program` (a path from the repository root, or absolute) under
/// `strategy` of examples/gpu.elv on `target` at size `n`, on random inputs of seed 7, verified
/// against the interpreter: whether it succeeded, and its output.
pub fn run_gpu_strategy(
    target: &str,
    program: &str,
    def: &str,
    strategy: &str,
    n: i64,
) -> (bool, String) {
    run_gpu_strategy_at(target, program, def, strategy, &[("n", n)])
}

/// [`run_gpu_strategy`] at the sizes `sizes` (name, value).
pub fn run_gpu_strategy_at(
    target: &str,
    program: &str,
    def: &str,
    strategy: &str,
    sizes: &[(&str, i64)],
) -> (bool, String) {
    let sizes: Vec<String> = sizes.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut args = vec![
        "run",
        program,
        "--def",
        def,
        "--strategy",
        "examples/gpu.elv",
        "--apply",
        strategy,
        "--target",
        target,
        "--random",
        "7",
        "--verify",
    ];
    for size in &sizes {
        args.extend(["--nat", size.as_str()]);
    }
    let (out, text) = shine_in(repo_root(), &args);
    (out.status.success(), text)
}
