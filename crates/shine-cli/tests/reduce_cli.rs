//! The derived parallel reductions (issue 27): `reduceBlocks(g, b)` of examples/gpu.elv on
//! `dot`, `asum` and `sum`, run on OpenCL (PoCL here) and, with `SHINE_TEST_GPU=1`, on
//! CUDA, at sizes that are not multiples of anything (padded with the neutral element),
//! each verified against the interpreter; and a reduction whose operator is not known
//! to be associative and commutative is refused with the rule's reason.
//! `reduceBlocksWarp(g, b)` (warp shuffles) runs on CUDA only: its generated CUDA is
//! checked here as text, and OpenCL refuses it.

mod support;

use std::path::Path;
use support::{gpu_targets, repo_root, shine_in, skip_opencl, test_gpu};

/// The repository root (the examples are named from it).
fn root() -> &'static Path {
    repo_root()
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

/// The CUDA variants of the warp reductions: run only with `SHINE_TEST_GPU=1`.
#[test]
fn reduce_blocks_warp_verifies_on_cuda() {
    if !test_gpu() {
        return;
    }
    for (program, def) in REDUCTIONS {
        for n in [1, 7, 1000, 4097, 1000003] {
            run_verified("cuda", program, def, "reduceBlocksWarp(8, 64)", n);
            run_verified("cuda", program, def, "reduceBlocksWarp(1024, 256)", n);
        }
    }
}

/// `shine compile` of `def` of `program` under `strategy` to `target`: its success and
/// its output.
fn compile_in(
    dir: &Path,
    program: &str,
    def: &str,
    strategy: &str,
    target: &str,
) -> (bool, String) {
    let elv = root().join("examples/gpu.elv");
    let (out, text) = shine_in(
        dir,
        &[
            "compile",
            program,
            "--def",
            def,
            "--strategy",
            elv.to_str().expect("a UTF-8 path"),
            "--apply",
            strategy,
            "--target",
            target,
        ],
    );
    (out.status.success(), text)
}

#[test]
fn reduce_blocks_warp_prints_the_butterfly_of_shuffles() {
    let (ok, text) = compile_in(
        root(),
        "examples/dot.rise",
        "dot",
        "reduceBlocksWarp(1024, 256)",
        "cuda",
    );
    assert!(ok, "{text}");
    // every warp reduction: steps 16, 8, 4, 2, 1, then lane 0's value to every lane;
    // two per kernel, two kernels
    let steps: Vec<u32> = text
        .match_indices("__shfl_xor_sync(0xffffffffu, ")
        .filter_map(|(i, _)| {
            let rest = &text[i..];
            let arg = rest[..rest.find(')')?].rsplit(", ").next()?;
            arg.parse().ok()
        })
        .collect();
    assert_eq!(steps, [16, 8, 4, 2, 1].repeat(4), "{text}");
    assert_eq!(
        text.matches("__shfl_sync(0xffffffffu, ").count(),
        4,
        "{text}"
    );
    // the lanes and warps of dimension 0; one barrier per work-group iteration between
    // the warps' results and the last warp, one before the next iteration
    assert!(
        text.contains("threadIdx.x % 32") && text.contains("threadIdx.x / 32"),
        "{text}"
    );
    assert!(text.contains("blockDim.x / 32"), "{text}");
    let k0 = &text
        [text.find("void dot_k0").expect("kernel 0")..text.find("void dot_k1").expect("kernel 1")];
    assert_eq!(k0.matches("__syncthreads()").count(), 2, "{k0}");
    assert!(!text.contains("__syncwarp"), "{text}");
}

#[test]
fn reduce_blocks_warp_is_refused_on_opencl() {
    if skip_opencl() {
        return;
    }
    let (ok, text) = compile_in(
        root(),
        "examples/gpu_reduce.rise",
        "sum",
        "reduceBlocksWarp(8, 64)",
        "opencl",
    );
    assert!(!ok, "{text}");
    assert!(
        text.contains("`mapWarp` runs on the warps of a CUDA block")
            && text.contains("OpenCL would need sub-groups"),
        "{text}"
    );
}

#[test]
fn reduce_by_warps_refuses_work_groups_that_are_not_whole_warps() {
    let (ok, text) = compile_in(
        root(),
        "examples/gpu_reduce.rise",
        "sum",
        "reduceBlocksWarp(8, 48)",
        "cuda",
    );
    assert!(!ok, "{text}");
    assert!(
        text.contains(
            "reduceByWarps: the reduction is over 48 values, not a constant multiple of 32"
        ),
        "{text}"
    );
}

/// Warp programs written with the primitives: their refusals name the constraint.
const MISPLACED: &[(&str, &str, &str)] = &[
    (
        "outside",
        "{m: nat} -> m.32.f32 -> m.f32 = fun xs => xs |> mapWorkGroup(0) (fun w => reduceWarp add w)",
        // every warp computes it (a work-group's all-reduce, rowsNormGroupRegs), but the
        // output is written by all of them
        "`output` (global memory) is written outside every `mapLocal(0)` loop",
    ),
    (
        "inLane",
        "{m: nat} -> m.32.32.f32 -> m.32.f32 = fun xs => xs |> mapWorkGroup(0) (fun g => g |> split 32 |> mapWarp (fun w => w |> mapLane (fun l => reduceWarp add l)) |> join)",
        "a warp reduction (`reduceWarp`) inside a `mapLane` loop",
    ),
    (
        "laneOutside",
        "{m: nat} -> m.32.f32 -> m.32.f32 = fun xs => xs |> mapWorkGroup(0) (fun g => g |> mapLane (fun x => x + 1.0f))",
        "a `mapLane` loop outside every `mapWarp` loop",
    ),
    (
        "partialWarp",
        "{m: nat} -> m.40.f32 -> m.40.f32 = fun xs => xs |> mapWorkGroup(0) (fun g => toMem local (g |> mapLocal(0) (fun x => x + 1.0f)) (fun ys => ys |> split 40 |> mapWarp (mapSeq id) |> join))",
        "its work-groups must be a constant number of whole warps",
    ),
    (
        "bytes",
        "{m: nat} -> m.32.u8 -> m.u8 = fun xs => xs |> mapWorkGroup(0) (fun g => g |> split 32 |> mapWarp (fun w => reduceWarp add w)) |> join",
        "a warp shuffle moves 32- and 64-bit integers and floats",
    ),
];

#[test]
fn misplaced_warp_primitives_are_refused() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (name, def, message) in MISPLACED {
        std::fs::write(dir.path().join("w.rise"), format!("def {name} : {def}\n"))
            .expect("the program is written");
        let (ok, text) = compile_in(dir.path(), "w.rise", name, "lowered", "cuda");
        assert!(!ok && text.contains(message), "{name}:\n{text}");
    }
}

/// A hand-written warp reduction: lane `l` of every warp reads element `l`, the result
/// is the interpreter's butterfly (bit for bit on CUDA: run with `SHINE_TEST_GPU=1`).
#[test]
fn hand_written_warp_reduction_compiles_and_runs_on_cuda() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(
        dir.path().join("w.rise"),
        "def warpMax : {m: nat} -> (m*4).32.f64 -> (m*4).f64 = fun xs => xs |> split 4 \
         |> mapWorkGroup(0) (fun g => g |> mapWarp (fun w => w |> map (fun x => x * x) \
         |> reduceWarp (fun a b => select (a > b) a b))) |> join\n",
    )
    .expect("the program is written");
    let (ok, text) = compile_in(dir.path(), "w.rise", "warpMax", "lowered", "cuda");
    assert!(ok, "{text}");
    assert!(
        text.contains(" > other") && text.contains("__shfl_sync(0xffffffffu, acc"),
        "{text}"
    );
    if !test_gpu() {
        return;
    }
    let elv = root().join("examples/gpu.elv");
    let (out, text) = shine_in(
        dir.path(),
        &[
            "run",
            "w.rise",
            "--def",
            "warpMax",
            "--strategy",
            elv.to_str().expect("a UTF-8 path"),
            "--apply",
            "lowered",
            "--target",
            "cuda",
            "--nat",
            "m=5",
            "--random",
            "3",
            "--verify",
        ],
    );
    assert!(
        out.status.success() && text.contains("verified against the interpreter"),
        "{text}"
    );
}
