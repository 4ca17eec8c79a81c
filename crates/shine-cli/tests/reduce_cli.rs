//! The derived parallel reductions (issue 27): `reduceBlocks(g, b)` of examples/gpu.elv on
//! `dot`, `asum` and `sum`, run on OpenCL (PoCL here) and, with `SHINE_TEST_GPU=1`, on
//! CUDA, at sizes that are not multiples of anything (padded with the neutral element),
//! each verified against the interpreter; and a reduction whose operator is not known
//! to be associative and commutative is refused with the rule's reason.

mod support;

use std::path::Path;
use support::{shine_in, skip_opencl, test_gpu};

/// The repository root (the examples are named from it).
fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The GPU targets this machine runs: OpenCL unless skipped, CUDA on a GPU machine.
fn gpu_targets() -> Vec<&'static str> {
    let mut ts = Vec::new();
    if !skip_opencl() {
        ts.push("opencl");
    }
    if test_gpu() {
        ts.push("cuda");
    }
    ts
}

/// `shine run` of `def` under `strategy` at size `n`, verified; panics with the output
/// unless it verified.
fn run_verified(target: &str, program: &str, def: &str, strategy: &str, n: i64) {
    let size = format!("n={n}");
    let args = [
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
        "--nat",
        &size,
        "--random",
        "3",
        "--verify",
    ];
    let (out, text) = shine_in(root(), &args);
    assert!(
        out.status.success() && text.contains("verified against the interpreter"),
        "{target} {def} {strategy} n={n}:\n{text}"
    );
}

const REDUCTIONS: &[(&str, &str)] = &[
    ("examples/dot.rise", "dot"),
    ("examples/asum.rise", "asum"),
    ("examples/gpu_reduce.rise", "sum"),
];

#[test]
fn reduce_blocks_verifies_at_sizes_that_are_not_multiples() {
    for target in gpu_targets() {
        for (program, def) in REDUCTIONS {
            for n in [1, 7, 1000, 4097, 1000003] {
                run_verified(target, program, def, "reduceBlocks(8, 32)", n);
            }
        }
    }
}

#[test]
fn reduce_blocks_verifies_with_many_work_groups() {
    for target in gpu_targets() {
        for n in [31, 65537, 1000003] {
            run_verified(
                target,
                "examples/dot.rise",
                "dot",
                "reduceBlocks(64, 256)",
                n,
            );
        }
    }
}

#[test]
fn reduce_blocks_refuses_an_operator_not_known_associative() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let program = dir.path().join("diff.rise");
    std::fs::write(
        &program,
        "def diff : {n: nat} -> n.f32 -> f32 = fun xs => reduce (fun a b => a - b) 0.0f xs\n",
    )
    .expect("the program is written");
    let strategy = root().join("examples/gpu.elv");
    let (out, text) = shine_in(
        dir.path(),
        &[
            "compile",
            "diff.rise",
            "--def",
            "diff",
            "--strategy",
            strategy.to_str().expect("a UTF-8 path"),
            "--apply",
            "reduceBlocks(8, 32)",
            "--target",
            "opencl",
        ],
    );
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("partialReduce(8): the operator")
            && text.contains("not known to be associative and commutative"),
        "{text}"
    );
}
