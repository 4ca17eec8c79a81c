//! The CPU reductions of examples/reduce.elv (issues 27 and 30): `sum`, `dot` and `asum`
//! with their reduction in vector lanes (`reduceVec(v)`) and in parallel chunks of vector
//! lanes (`reduceParVec(p, v, p*v)`), and softmax rows with every row reduction in lanes
//! (`rowsVecPar(v)`), on C and OpenMP at sizes that are multiples of nothing, each
//! verified against the interpreter; the generated code holds the vector accumulators
//! and the parallel loop; the result does not depend on the number of threads; and a
//! reduction the rule may not reassociate is refused with the reason.

mod support;

use std::path::Path;
use std::process::Command;
use support::shine_in;

/// The repository root (the examples are named from it).
fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The arguments of `shine run` for `def` of `program` under `strategy` of
/// examples/reduce.elv on `target` with the sizes `nats`, random inputs, verified.
fn run_args<'a>(
    target: &'a str,
    program: &'a str,
    def: &'a str,
    strategy: &'a str,
    nats: &'a [String],
) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        program,
        "--def",
        def,
        "--strategy",
        "examples/reduce.elv",
        "--apply",
        strategy,
        "--target",
        target,
        "--random",
        "5",
        "--verify",
    ];
    for n in nats {
        args.extend(["--nat", n.as_str()]);
    }
    args
}

/// Runs and panics with the output unless the result verified.
fn run_verified(target: &str, program: &str, def: &str, strategy: &str, nats: &[String]) {
    let args = run_args(target, program, def, strategy, nats);
    let (out, text) = shine_in(root(), &args);
    assert!(
        out.status.success() && text.contains("verified against the interpreter"),
        "{target} {def} {strategy} {nats:?}:\n{text}"
    );
}

const SIZES: &[i64] = &[1, 7, 1000, 1_000_003];

/// (program, definition, strategy)
const REDUCTIONS: &[(&str, &str, &str)] = &[
    ("examples/gpu_reduce.rise", "sum", "reduceVec(16)"),
    (
        "examples/gpu_reduce.rise",
        "sum",
        "reduceParVec(64, 64, 4096)",
    ),
    ("examples/dot.rise", "dot", "reduceVec(32)"),
    ("examples/dot.rise", "dot", "reduceParVec(64, 64, 4096)"),
    ("examples/asum.rise", "asum", "reduceParVec(8, 16, 128)"),
];

#[test]
fn sum_dot_and_asum_in_lanes_and_chunks_verify_at_any_size() {
    for target in ["c", "openmp"] {
        for (program, def, strategy) in REDUCTIONS {
            for n in SIZES {
                run_verified(target, program, def, strategy, &[format!("n={n}")]);
            }
        }
    }
}

/// Row lengths of softmax: the interpreter's softmax reads the row again for every element
/// (quadratic in the row), so the longest row here is 1031 (a prime: 64 vectors of 16 and a
/// tail of 7).
const ROW_LENGTHS: &[i64] = &[1, 7, 1000, 1031];

#[test]
fn softmax_rows_in_lanes_verify_at_any_row_length() {
    for target in ["c", "openmp"] {
        for n in ROW_LENGTHS {
            let nats = [String::from("m=3"), format!("n={n}")];
            run_verified(
                target,
                "examples/norms.rise",
                "softmax",
                "rowsVecPar(16)",
                &nats,
            );
        }
    }
}

/// `shine compile` of `def` under `strategy` on OpenMP: the C text.
fn compiled(program: &str, def: &str, strategy: &str) -> String {
    let args = [
        "compile",
        program,
        "--def",
        def,
        "--strategy",
        "examples/reduce.elv",
        "--apply",
        strategy,
        "--target",
        "openmp",
    ];
    let (out, text) = shine_in(root(), &args);
    assert!(out.status.success(), "{def} {strategy}:\n{text}");
    text
}

#[test]
fn the_generated_code_accumulates_in_vectors_in_parallel_chunks() {
    let dot = compiled("examples/dot.rise", "dot", "reduceParVec(64, 16, 1024)");
    assert!(dot.contains("#pragma omp parallel for"), "{dot}");
    assert!(dot.contains("float16 acc"), "{dot}");
    assert!(dot.contains("*(const float16_u *)&xs["), "{dot}");
    let softmax = compiled("examples/norms.rise", "softmax", "rowsVecPar(8)");
    assert_eq!(softmax.matches("float8 acc").count(), 2, "{softmax}");
}

/// The printed result of `sum` under `reduceParVec` with `threads` OpenMP threads.
fn sum_with_threads(threads: &str) -> String {
    let nats = [String::from("n=1000003")];
    let mut args = run_args(
        "openmp",
        "examples/gpu_reduce.rise",
        "sum",
        "reduceParVec(64, 16, 1024)",
        &nats,
    );
    args.retain(|a| *a != "--verify");
    let out = Command::new(env!("CARGO_BIN_EXE_shine"))
        .current_dir(root())
        .args(&args)
        .env("OMP_NUM_THREADS", threads)
        .output()
        .expect("shine runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_chunks_combine_in_a_fixed_order_whatever_the_threads() {
    assert_eq!(sum_with_threads("1"), sum_with_threads("2"));
    assert_eq!(sum_with_threads("1"), sum_with_threads("3"));
}

#[test]
fn a_reduction_that_cannot_be_reassociated_is_refused_with_the_reason() {
    let dir = std::env::temp_dir().join(format!("shine-cpureduce-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let program = dir.join("horner.rise");
    std::fs::write(
        &program,
        "def horner : {n: nat} -> n.f32 -> f32 = fun xs => reduce (fun a x => a * 0.5f + x) 0.0f xs\n",
    )
    .expect("the program is written");
    let strategy = root().join("examples/reduce.elv");
    let args = [
        "run",
        program.to_str().unwrap_or_default(),
        "--def",
        "horner",
        "--strategy",
        strategy.to_str().unwrap_or_default(),
        "--apply",
        "reduceVec(8)",
        "--target",
        "c",
        "--nat",
        "n=20",
        "--random",
        "1",
    ];
    let (out, text) = shine_in(&dir, &args);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("not known to be associative and commutative"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
