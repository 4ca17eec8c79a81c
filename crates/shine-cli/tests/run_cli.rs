//! Differential tests of the CPU backend (issue 4): every example program under
//! every applicable example strategy and both CPU targets runs on random inputs
//! and must match the reference interpreter (`shine run --verify`).

mod support;

use std::process::Command;

fn shine() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_shine"));
    c.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    c
}

/// (program, definition, sizes, strategy file, strategies)
const CASES: &[(&str, &str, &str, &str, &[&str])] = &[
    ("dot.rise", "dot", "n=64", "cpu.elv", &["sequential"]),
    ("asum.rise", "asum", "n=100", "cpu.elv", &["sequential"]),
    (
        "mv.rise",
        "mv",
        "n=32 m=16",
        "cpu.elv",
        &["sequential", "parallelOuter"],
    ),
    (
        "jacobi1d.rise",
        "jacobi3",
        "n=64",
        "cpu.elv",
        &["sequential", "parallelOuter"],
    ),
    (
        "jacobi1d.rise",
        "jacobi3",
        "n=64",
        "stencil.elv",
        &["tiled1d"],
    ),
    (
        "stencil2d.rise",
        "jacobi2d5",
        "n=32 m=32",
        "cpu.elv",
        &["sequential", "parallelOuter"],
    ),
    (
        "stencil2d.rise",
        "jacobi2d5",
        "n=32 m=32",
        "stencil.elv",
        &["tiled2d"],
    ),
    (
        "stencil2d.rise",
        "jacobi2d9",
        "n=16 m=24",
        "cpu.elv",
        &["sequential", "parallelOuter"],
    ),
    (
        "stencil2d.rise",
        "gaussian5",
        "n=16 m=20",
        "cpu.elv",
        &["sequential", "parallelOuter"],
    ),
    (
        "heat3d.rise",
        "heat3d",
        "o=6 n=7 m=8",
        "cpu.elv",
        &["sequential", "parallelOuter"],
    ),
    (
        "binomial.rise",
        "binomial",
        "n=16 m=12",
        "cpu.elv",
        &["sequential", "parallelOuter"],
    ),
    (
        "binomial.rise",
        "boxBlur",
        "n=16 m=12",
        "cpu.elv",
        &["sequential", "parallelOuter"],
    ),
    (
        "acoustic.rise",
        "acoustic",
        "o=5 n=6 m=7",
        "cpu.elv",
        &["sequential", "parallelOuter"],
    ),
    (
        "gemv.rise",
        "gemv",
        "n=9 m=7",
        "cpu.elv",
        &["storeArgument"],
    ),
    (
        "conv.rise",
        "conv",
        "h=6 w=7 c=3 o=4 kh=3 kw=2",
        "cpu.elv",
        &["fuseReductions"],
    ),
    (
        "blur.rise",
        "binomialSep",
        "n=64 m=48",
        "blur.elv",
        &[
            "inline",
            "inlineVecPar",
            "root",
            "rootVecPar",
            "tiled",
            "tiledVecPar",
        ],
    ),
    (
        "blur.rise",
        "boxSep",
        "n=32 m=32",
        "blur.elv",
        &["inlineVecPar", "tiledVecPar"],
    ),
    (
        "blur.rise",
        "binomialClamped",
        "n=64 m=48",
        "blur.elv",
        &["inline", "inlineVecPar", "rootVecPar", "tiledVecPar"],
    ),
    (
        "blur.rise",
        "binomialU16",
        "n=32 m=32",
        "blur.elv",
        &["root", "inlineVecPar", "tiledVecPar"],
    ),
    (
        "bicg.rise",
        "bicg",
        "n=37 m=19",
        "cpu.elv",
        &["sequential", "parallelOuter", "fuseReductions"],
    ),
    (
        "complex.rise",
        "cmul",
        "n=45",
        "cpu.elv",
        &["sequential", "parallelOuter"],
    ),
    (
        "complex.rise",
        "cabs2",
        "n=45",
        "cpu.elv",
        &["sequential", "parallelOuter"],
    ),
    (
        "treesum.rise",
        "treeSum",
        "m=12",
        "cpu.elv",
        &["sequential", "parallelOuter"],
    ),
    (
        "treesum.rise",
        "sumSquares16",
        "m=7",
        "cpu.elv",
        &["sequential", "parallelOuter"],
    ),
    (
        "mm.rise",
        "mm",
        "m=64 n=64 k=16",
        "mm.elv",
        &[
            "baseline ; lowerToC",
            "blocking ; lowerToC",
            "vectorization ; lowerToC",
            "loopPermutation ; lowerToC",
            "arrayPacking ; lowerToC",
            "cacheBlocks ; lowerToC",
            "parallelization ; lowerToC",
        ],
    ),
];

fn run_case(
    file: &str,
    def: &str,
    sizes: &str,
    elv: &str,
    strategy: &str,
    target: &str,
) -> Result<(), String> {
    let mut cmd = shine();
    cmd.args(["run", &format!("examples/{file}"), "--def", def])
        .args([
            "--strategy",
            &format!("examples/{elv}"),
            "--apply",
            strategy,
        ])
        .args(["--target", target, "--random", "7", "--verify", "--json"]);
    for s in sizes.split_whitespace() {
        cmd.args(["--nat", s]);
    }
    let out = cmd.output().map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || !stdout.contains("\"verified\":true") {
        return Err(format!(
            "{file} {def} [{strategy}] --target {target}: {}\n{stdout}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

#[test]
fn every_example_under_every_strategy_and_cpu_target_matches_the_interpreter() {
    let mut failures = Vec::new();
    let mut count = 0;
    for (file, def, sizes, elv, strategies) in CASES {
        for s in *strategies {
            for target in ["c", "openmp"] {
                count += 1;
                if let Err(e) = run_case(file, def, sizes, elv, s, target) {
                    failures.push(e);
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {count} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn generated_code_is_clean_under_address_and_undefined_behavior_sanitizers() {
    let cases = [
        (
            "mm.rise",
            "mm",
            "m=32 n=64 k=8",
            "mm.elv",
            "blocking ; lowerToC",
        ),
        (
            "stencil2d.rise",
            "jacobi2d5",
            "n=9 m=7",
            "cpu.elv",
            "sequential",
        ),
        (
            "heat3d.rise",
            "heat3d",
            "o=4 n=5 m=6",
            "cpu.elv",
            "parallelOuter",
        ),
        // two output buffers (the sanitized driver copies each to its own allocation)
        ("bicg.rise", "bicg", "n=9 m=5", "cpu.elv", "parallelOuter"),
        ("complex.rise", "cmul", "n=11", "cpu.elv", "sequential"),
    ];
    for (file, def, sizes, elv, strategy) in cases {
        let mut cmd = shine();
        cmd.args(["run", &format!("examples/{file}"), "--def", def])
            .args([
                "--strategy",
                &format!("examples/{elv}"),
                "--apply",
                strategy,
            ])
            .args([
                "--target",
                "openmp",
                "--random",
                "3",
                "--verify",
                "--sanitize",
                "--json",
            ]);
        for s in sizes.split_whitespace() {
            cmd.args(["--nat", s]);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{file} {def} under sanitizers:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `let v f` computes a value that is one C value once, into a variable its uses share
/// (`sqrtf` once per element, not three times), on every target; the result is verified.
#[test]
fn let_shares_its_value_in_generated_code() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("let.rise");
    std::fs::write(
        &program,
        "def shared : {n: nat} -> n.f32 -> n.f32 =\n  \
         fun xs => map (fun x => let (sqrt (x * x + 1.0f)) (fun y => y * y + y)) xs\n",
    )
    .unwrap();
    let program = program.display().to_string();
    for (target, sqrt) in [("c", "sqrtf("), ("opencl", "sqrt("), ("cuda", "sqrtf(")] {
        let out = shine()
            .args(["compile", &program, "--def", "shared", "--target", target])
            .output()
            .unwrap();
        let code = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(code.matches(sqrt).count(), 1, "{target}:\n{code}");
    }
    let out = shine()
        .args([
            "run", &program, "--def", "shared", "--nat", "n=7", "--random", "1",
        ])
        .arg("--verify")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn eval_random_makes_the_inputs_run_random_makes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("copy.rise"),
        "def copy : {n: nat} -> n.f32 -> n.i32 -> n.(f32, i32) =\n  fun xs ys => zip xs ys |> map (fun p => p)\n",
    )
    .unwrap();
    let common = [
        "copy.rise",
        "--def",
        "copy",
        "--nat",
        "n=7",
        "--random",
        "3",
    ];
    let (eval, text) = support::shine_in(dir.path(), &[&["eval"], &common[..]].concat());
    assert!(eval.status.success(), "{text}");
    let (run, text) = support::shine_in(
        dir.path(),
        &[&["run"], &common[..], &["--target", "c"]].concat(),
    );
    assert!(run.status.success(), "{text}");
    assert_eq!(eval.stdout, run.stdout);
    let (other, _) = support::shine_in(
        dir.path(),
        &[
            "eval",
            "copy.rise",
            "--def",
            "copy",
            "--nat",
            "n=7",
            "--random",
            "4",
        ],
    );
    assert_ne!(eval.stdout, other.stdout, "another seed, other inputs");
    let (missing, text) = support::shine_in(
        dir.path(),
        &["eval", "copy.rise", "--def", "copy", "--random", "3"],
    );
    assert!(!missing.status.success());
    assert!(
        text.contains("--random needs every size: give `--nat n=V`"),
        "{text}"
    );
}

#[test]
fn bench_summarizes_the_result_unless_asked_to_print_it() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let args = [
        "run",
        "examples/mm.rise",
        "--def",
        "mm",
        "--random",
        "3",
        "--nat",
        "m=20",
        "--nat",
        "n=30",
        "--nat",
        "k=20",
        "--target",
        "c",
        "--bench",
        "2",
    ];
    let (out, text) = support::shine_in(root, &args);
    assert!(out.status.success(), "{text}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stdout.starts_with("result: 20.30.f32 (600 elements), sum "),
        "{stdout}"
    );
    assert!(stdout.contains("first values ["), "{stdout}");
    assert!(text.contains("2 runs: median"), "{text}");
    let (out, text) = support::shine_in(root, &[&args[..], &["--print"]].concat());
    assert!(out.status.success(), "{text}");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.starts_with("[["), "{printed}");
    assert_eq!(printed.matches(", ").count(), 599, "{printed}");
}
