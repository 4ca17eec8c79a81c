//! The derived parallel scan (issue 27): `scanChunks(g)` of examples/gpu.elv (the
//! `partialScan(g)` rule, reduce-then-scan) on the inclusive and exclusive scans of
//! examples/scan.rise — sums of `i32` (exact) and `f32` (within the tolerance) and maxima
//! of `f32` — run on OpenCL (PoCL here) and, with `SHINE_TEST_GPU=1`, on CUDA, at sizes
//! that are not multiples of the number of chunks, each verified against the interpreter
//! (f32 sums of 10^5 elements within the bound for reassociated sums, which `--verify`
//! uses for programs of `+ - *`: the tolerance refused them where the running total
//! crosses zero);
//! a scan whose operator is not known to be associative is refused with the rule's
//! reason, and a chunk count of 0 with the parameter's.
//!
//! The tiled scan `scanTiles(b, k)` (rules `scanTiled`, `workGroupScan`) on the same scans
//! and targets at sizes around its tiles and a large prime, its generated code checked for
//! its shape (local memory in the xor layout, barriers, coalesced global reads, the tiles'
//! totals scanned by tiles again), and tile shapes that make no
//! work-group refused with the reason.

mod support;

use support::{gpu_targets, repo_root, run_gpu_strategy as run, shine_in};

const SCANS: &[&str] = &[
    "prefixSum",
    "prefixSumI32",
    "prefixMax",
    "exclusivePrefixSum",
    "exclusivePrefixSumI32",
];

fn assert_verified(target: &str, def: &str, strategy: &str, n: i64) {
    let (ok, text) = run(target, "examples/scan.rise", def, strategy, n);
    assert!(
        ok && text.contains("verified against the interpreter"),
        "{target} {def} {strategy} n={n}:\n{text}"
    );
}

#[test]
fn scan_chunks_verifies_inclusive_and_exclusive_scans_at_awkward_sizes() {
    for target in gpu_targets() {
        for def in SCANS {
            for n in [1, 7, 13, 1023, 1024, 1025] {
                assert_verified(target, def, "scanChunks(64)", n);
            }
        }
    }
}

#[test]
fn scan_chunks_verifies_a_large_odd_size_with_many_chunks() {
    for target in gpu_targets() {
        // exact at any size; an f32 sum this long is not: where its running total crosses
        // zero, regrouped and sequential sums differ by more than the tolerance (both are
        // rounded f32 sums; neither is the exact value), within the bound for sums
        for def in [
            "prefixSumI32",
            "exclusivePrefixSumI32",
            "prefixMax",
            "prefixSum",
        ] {
            assert_verified(target, def, "scanChunks(1000)", 100_003);
        }
        // more chunks than elements: the empty chunks are all padding
        assert_verified(target, "prefixMax", "scanChunks(1000)", 37);
    }
}

#[test]
fn only_sums_of_products_are_verified_within_the_bound_for_sums() {
    // max is no `+ - *`: its floats keep the tolerance (and the message says nothing more)
    let (ok, text) = run(
        "opencl",
        "examples/scan.rise",
        "prefixMax",
        "scanTiles(64, 4)",
        1000,
    );
    assert!(
        ok && text.contains("verified against the interpreter (1000 elements)"),
        "{text}"
    );
    // a sum within the tolerance says nothing more either; a long one whose running total
    // crosses zero is outside the tolerance there and verified within the bound (said)
    let (ok, text) = run(
        "opencl",
        "examples/scan.rise",
        "prefixSum",
        "scanTiles(64, 4)",
        1000,
    );
    assert!(
        ok && text.contains("verified against the interpreter (1000 elements)"),
        "{text}"
    );
    let (ok, text) = run(
        "opencl",
        "examples/scan.rise",
        "prefixSum",
        "scanTiles(64, 4)",
        100_003,
    );
    let said = "(100003 elements; floats within the bound for reassociated sums)";
    assert!(
        ok && text.contains(said),
        "{}",
        &text[text.len().saturating_sub(400)..]
    );
}

#[test]
fn scan_chunks_refuses_an_operator_not_known_associative() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let program = dir.path().join("diff.rise");
    std::fs::write(
        &program,
        "def runningDiff : {n: nat} -> n.f32 -> n.f32 = fun xs => xs |> scanSeq (fun x a => a - x) 0.0f\n",
    )
    .expect("the program is written");
    let path = program.to_string_lossy();
    let (ok, text) = run("opencl", &path, "runningDiff", "scanChunks(4)", 9);
    assert!(!ok, "{text}");
    assert!(
        text.contains(
            "partialScan(4): the operator `fun x a => a - x` is not known to be associative"
        ),
        "{text}"
    );
}

#[test]
fn scan_chunks_refuses_zero_chunks() {
    let (ok, text) = run(
        "opencl",
        "examples/scan.rise",
        "prefixSum",
        "scanChunks(0)",
        9,
    );
    assert!(!ok, "{text}");
    assert!(text.contains("the size must be positive, not 0"), "{text}");
}

/// b·k = 256 elements per tile: sizes around one tile and around 1024.
const TILED_SIZES: &[i64] = &[1, 7, 13, 255, 257, 1023, 1024, 1025];

#[test]
fn scan_tiles_verifies_inclusive_and_exclusive_scans_at_awkward_sizes() {
    for target in gpu_targets() {
        for def in SCANS {
            for &n in TILED_SIZES {
                assert_verified(target, def, "scanTiles(64, 4)", n);
            }
        }
    }
}

#[test]
fn scan_tiles_verifies_a_large_prime_size() {
    for target in gpu_targets() {
        // exact at any size; an f32 sum of 10^5 random elements differs from the sequential
        // one by more than the tolerance where the running total crosses zero, and is
        // verified within the bound for reassociated sums (2·γ_m·Σ|x|)
        for def in ["prefixSumI32", "exclusivePrefixSumI32", "prefixMax"] {
            assert_verified(target, def, "scanTiles(64, 4)", 100_003);
        }
        let (ok, text) = run(
            target,
            "examples/scan.rise",
            "prefixSum",
            "scanTiles(64, 4)",
            100_003,
        );
        assert!(
            ok && text.contains("floats within the bound for reassociated sums"),
            "{target} prefixSum n=100003:\n{text}"
        );
    }
}

#[test]
fn scan_tiles_verifies_work_groups_of_any_size() {
    for target in gpu_targets() {
        // 24 work-items: the Hillis-Steele steps at distances 1, 2, 4, 8, 16 (not a power
        // of two); one work-item: no step at all
        assert_verified(target, "prefixSumI32", "scanTiles(24, 3)", 1000);
        assert_verified(target, "prefixMax", "scanTiles(1, 16)", 100);
        assert_verified(target, "exclusivePrefixSum", "scanTiles(256, 8)", 5000);
    }
}

/// The OpenCL kernels of `scanTiles(256, 8)` on prefixSum.
fn tiled_kernels() -> String {
    let args = [
        "compile",
        "examples/scan.rise",
        "--def",
        "prefixSum",
        "--strategy",
        "examples/gpu.elv",
        "--apply",
        "scanTiles(256, 8)",
        "--target",
        "opencl",
    ];
    let (out, text) = shine_in(repo_root(), &args);
    assert!(out.status.success(), "{text}");
    text
}

#[test]
fn scan_tiles_reads_coalesced_into_local_memory_with_barriers() {
    let code = tiled_kernels();
    assert!(
        code.contains("Launch 1:") && code.contains("work-groups (blocks) of 256 work-items"),
        "{code}"
    );
    assert!(
        code.contains("Launch 5:") && !code.contains("Launch 6:"),
        "five kernels (the tiles' totals scanned by tiles again):\n{code}"
    );
    assert!(code.contains("local float mem"), "{code}");
    assert!(code.contains("barrier(CLK_LOCAL_MEM_FENCE);"), "{code}");
    // work-item get_local_id(0) reads the tile's elements lid0, lid0 + 256, ...
    assert!(
        code.contains("shine_index lid0 = get_local_id(0);"),
        "{code}"
    );
    let coalesced = code
        .lines()
        .any(|l| l.contains("x_0[wg0 * 2048 + lid0 + i") && l.contains(" * 256]"));
    assert!(coalesced, "a read of `get_local_id(0) + 256 * j`:\n{code}");
    // the tile in local memory in the xor layout (a work-item's 8 consecutive elements in
    // 8 banks of their own, not 4 banks shared by the warp)
    assert!(code.contains("% 32) ^ ("), "{code}");
}

#[test]
fn scan_tiles_refuses_tiles_that_make_no_work_group() {
    let refusals = [
        ("scanTiles(0, 4)", "the size must be positive, not 0"),
        ("scanTiles(4, 0)", "the size must be positive, not 0"),
        (
            "scanTiles(2048, 1)",
            "a work-group of 2048 work-items is more than the 1024",
        ),
        (
            "scanTiles(256, 64)",
            "a tile of 256·64 elements is more than 8192",
        ),
    ];
    for (strategy, reason) in refusals {
        let (ok, text) = run("opencl", "examples/scan.rise", "prefixSum", strategy, 9);
        assert!(!ok, "{strategy}: {text}");
        assert!(text.contains(reason), "{strategy}: {text}");
    }
}
