//! Row reductions at bandwidth (issue 27): `mv` (a dot product per row) under the strategies
//! of examples/gpu.elv that read every row coalesced — `rowsByWorkGroups(b)` (a work-group
//! per row, a local-memory tree), on OpenCL (PoCL here) and, with `SHINE_TEST_GPU=1`, CUDA;
//! `rowsByWarps(b)` and `rowPerWarp(w)` (warp shuffles), CUDA only — and `mvT` (y = Aᵀx)
//! under `global1d`, a work-item per column. Each is verified against the interpreter at
//! sizes 1, 7, odd and prime; the sizes a strategy does not admit are refused with the
//! constraint, and OpenCL refuses the warp strategies.

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

/// `shine run` of `def` of examples/mv.rise under `strategy` of examples/gpu.elv with the
/// sizes `nats` (`n=3`, ...): its success and its output.
fn run_mv(
    target: &str,
    def: &str,
    strategy: &str,
    nats: &[String],
    verify: bool,
) -> (bool, String) {
    let mut args = vec![
        "run",
        "examples/mv.rise",
        "--def",
        def,
        "--strategy",
        "examples/gpu.elv",
        "--apply",
        strategy,
        "--target",
        target,
        "--random",
        "5",
    ];
    for nat in nats {
        args.extend(["--nat", nat.as_str()]);
    }
    if verify {
        args.push("--verify");
    }
    let (out, text) = shine_in(root(), &args);
    (out.status.success(), text)
}

/// [`run_mv`] with `--verify`; panics with the output unless it verified.
fn verified(target: &str, def: &str, strategy: &str, (a, b): (&str, &str), (x, y): (i64, i64)) {
    let nats = [format!("{a}={x}"), format!("{b}={y}")];
    let (ok, text) = run_mv(target, def, strategy, &nats, true);
    assert!(
        ok && text.contains("verified against the interpreter"),
        "{target} {def} {strategy} {a}={x} {b}={y}:\n{text}"
    );
}

/// Rows × row lengths: 1, 7, odd and prime lengths, shorter and longer than a work-group.
const MV_SIZES: &[(i64, i64)] = &[(1, 1), (7, 7), (3, 1031), (13, 257), (5, 33)];

#[test]
fn rows_by_work_groups_verifies_mv_at_any_size() {
    for target in gpu_targets() {
        for b in ["rowsByWorkGroups(256)", "rowsByWorkGroups(32)"] {
            for &size in MV_SIZES {
                verified(target, "mv", b, ("n", "m"), size);
            }
        }
    }
}

#[test]
fn mv_transposed_verifies_with_a_work_item_per_column() {
    for target in gpu_targets() {
        for &(m, n) in &[(1, 1), (7, 7), (1031, 3), (13, 257)] {
            verified(target, "mvT", "global1d", ("m", "n"), (m, n));
        }
    }
}

/// The warp strategies: run only with `SHINE_TEST_GPU=1`.
#[test]
fn warp_strategies_verify_mv_on_cuda() {
    if !test_gpu() {
        return;
    }
    for &size in MV_SIZES {
        verified("cuda", "mv", "rowsByWarps(256)", ("n", "m"), size);
        verified("cuda", "mv", "rowsByWarps(32)", ("n", "m"), size);
    }
    for &size in &[(8, 1), (8, 7), (16, 1031), (24, 257)] {
        verified("cuda", "mv", "rowPerWarp(8)", ("n", "m"), size);
    }
    verified("cuda", "mv", "rowPerWarp(1)", ("n", "m"), (7, 13));
}

#[test]
fn row_per_warp_refuses_a_row_count_not_a_multiple_of_its_rows_per_work_group() {
    let nats = ["n=7".to_string(), "m=5".to_string()];
    let (ok, text) = run_mv("cuda", "mv", "rowPerWarp(8)", &nats, true);
    assert!(!ok, "{text}");
    assert!(text.contains("8 must divide n, but n = 7"), "{text}");
}

#[test]
fn opencl_refuses_the_warp_strategies() {
    if skip_opencl() {
        return;
    }
    let nats = ["n=8".to_string(), "m=5".to_string()];
    for strategy in ["rowsByWarps(64)", "rowPerWarp(8)"] {
        let (ok, text) = run_mv("opencl", "mv", strategy, &nats, true);
        assert!(!ok, "{strategy}: {text}");
        assert!(
            text.contains("`mapWarp` runs on the warps of a CUDA block"),
            "{text}"
        );
    }
}

/// `shine compile` of mv under `strategy` to CUDA.
fn cuda_of(strategy: &str) -> String {
    let (out, text) = shine_in(
        root(),
        &[
            "compile",
            "examples/mv.rise",
            "--def",
            "mv",
            "--strategy",
            "examples/gpu.elv",
            "--apply",
            strategy,
            "--target",
            "cuda",
        ],
    );
    assert!(out.status.success(), "{strategy}: {text}");
    text
}

#[test]
fn every_strategy_reads_a_row_with_neighbouring_work_items_at_neighbouring_elements() {
    // the row's element read by a work-item: its local index plus a multiple of b (or 32)
    let tree = cuda_of("rowsByWorkGroups(256)");
    assert!(tree.contains("mat[wg0 * m + lid0 + i5 * 256]"), "{tree}");
    // one barrier per step of the tree (log2 256), none after its last
    assert_eq!(tree.matches("__syncthreads();").count(), 8, "{tree}");
    let warps = cuda_of("rowsByWarps(256)");
    assert!(
        warps.contains("mat[wg0 * m + warp * 32 + lane + i7 * 256]"),
        "{warps}"
    );
    let per_warp = cuda_of("rowPerWarp(8)");
    assert!(
        per_warp.contains("mat[wg0 * m * 8 + warp * m + lane + i6 * 32]"),
        "{per_warp}"
    );
    // a warp per row needs neither local memory nor a barrier
    assert!(
        !per_warp.contains("__shared__") && !per_warp.contains("__syncthreads"),
        "{per_warp}"
    );
    assert_eq!(per_warp.matches("__shfl_xor_sync").count(), 5, "{per_warp}");
}
