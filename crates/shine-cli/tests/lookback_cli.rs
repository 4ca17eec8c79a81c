//! The single-pass scan `scanLookback(b, k)` of examples/gpu.elv (issue 27: the rule
//! `singlePassScan`, the primitive `scanLookback`, decoupled look-back) on the inclusive and
//! exclusive scans of examples/scan.rise — sums of `i32` (exact) and `f32` (within the
//! tolerance, or the bound for reassociated sums) and maxima of `f32` — run on OpenCL (PoCL
//! here, whose devices have the 64-bit atomics it needs) and, with `SHINE_TEST_GPU=1`, on
//! CUDA, at 1, odd and prime sizes and sizes that are no multiple of the tile, each verified
//! against the interpreter; the printed CUDA and OpenCL checked for the protocol (a ticket
//! per work-group, descriptors written by one atomic exchange and read whole, the zeroing
//! kernel first; CUDA's look-back by the first warp's 32 lanes, votes and shuffles with full
//! masks, OpenCL's by its lane 0); C, OpenMP and 64-bit elements refused with the reason.

mod support;

use support::{gpu_targets, repo_root, run_gpu_strategy as run, shine_in, test_gpu};

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
        "{target} {def} {strategy} n={n}:\n{}",
        &text[text.len().saturating_sub(2000)..]
    );
}

#[test]
fn scan_lookback_verifies_inclusive_and_exclusive_scans_at_awkward_sizes() {
    for target in gpu_targets() {
        for def in SCANS {
            // tiles of 64·4 = 256: one partial tile, one tile and one more, many tiles
            for n in [1, 7, 255, 257, 1000, 4099] {
                assert_verified(target, def, "scanLookback(64, 4)", n);
            }
        }
    }
}

#[test]
fn scan_lookback_verifies_large_sizes_with_many_tiles() {
    for target in gpu_targets() {
        // 1000003 and 2^20 + 3 are no multiples of 256·8: 489 and 513 tiles whose
        // work-groups look back over each other's descriptors
        for n in [1_000_003, (1 << 20) + 3] {
            for def in ["prefixSumI32", "exclusivePrefixSumI32", "prefixMax"] {
                assert_verified(target, def, "scanLookback(256, 8)", n);
            }
            for def in ["prefixSum", "exclusivePrefixSum"] {
                let (ok, text) = run(target, "examples/scan.rise", def, "scanLookback(256, 8)", n);
                assert!(
                    ok && text.contains("floats within the bound for reassociated sums"),
                    "{target} {def} n={n}:\n{text}"
                );
            }
        }
        // tiles of 4096 and 8192 (two copies: 64 KiB of local memory) and of one work-item
        assert_verified(target, "prefixSumI32", "scanLookback(256, 16)", 100_003);
        assert_verified(
            target,
            "exclusivePrefixSumI32",
            "scanLookback(256, 32)",
            100_003,
        );
        // the tile scanned by workGroupScan, copied out into local memory of its own
        assert_verified(
            target,
            "exclusivePrefixSumI32",
            "DFNF ; singlePassScan(64, 4) @ outermost(applied(scanSeq)) ;; \
             workGroupScan(64) @ topDown ;; lowerToC",
            10_007,
        );
        assert_verified(target, "prefixMax", "scanLookback(1, 16)", 1000);
        assert_verified(target, "prefixSumI32", "scanLookback(24, 3)", 1000);
    }
}

/// `scanLookbackWarp(b, k)` and `scanLookbackWarpDirect(b, k)` (the tile scanned by warps,
/// CUDA only) on CUDA with `SHINE_TEST_GPU=1`: inclusive and exclusive sums of `i32` and
/// `f32` and maxima at 1, odd and prime sizes, sizes that are no multiple of the tile and
/// many tiles, one warp or 32 per work-group, k odd and even, tiles up to 8192; without a
/// GPU they only print their kernels (below).
#[test]
fn scan_lookback_warp_verifies_on_cuda() {
    if !test_gpu() {
        eprintln!("skipping: scanLookbackWarp runs on CUDA only (SHINE_TEST_GPU=1)");
        return;
    }
    for def in SCANS {
        for n in [1, 7, 1000, 4099] {
            assert_verified("cuda", def, "scanLookbackWarp(64, 4)", n);
            assert_verified("cuda", def, "scanLookbackWarpDirect(64, 3)", n);
        }
    }
    let large = [
        "scanLookbackWarp(256, 8)",
        "scanLookbackWarp(256, 16)",
        "scanLookbackWarp(256, 32)",
        "scanLookbackWarpDirect(256, 16)",
        "scanLookbackWarpDirect(256, 32)",
    ];
    for n in [1_000_003, (1 << 20) + 3] {
        for strategy in large {
            for def in ["prefixSumI32", "exclusivePrefixSumI32", "prefixMax"] {
                assert_verified("cuda", def, strategy, n);
            }
            for def in ["prefixSum", "exclusivePrefixSum"] {
                let (ok, text) = run("cuda", "examples/scan.rise", def, strategy, n);
                assert!(
                    ok && text.contains("verified against the interpreter"),
                    "{def} {strategy} n={n}:\n{text}"
                );
            }
        }
    }
    assert_verified("cuda", "prefixSumI32", "scanLookbackWarp(32, 3)", 10_007);
    assert_verified(
        "cuda",
        "exclusivePrefixSumI32",
        "scanLookbackWarp(1024, 4)",
        100_003,
    );
    assert_verified(
        "cuda",
        "exclusivePrefixSumI32",
        "scanLookbackWarpDirect(1024, 8)",
        100_003,
    );
    assert_verified("cuda", "prefixMax", "scanLookback(256, 32)", 1_000_003);
}

/// The source `shine compile` prints for prefixSum under `scanLookback(256, 8)`.
fn printed(target: &str) -> String {
    printed_under(target, "scanLookback(256, 8)")
}

/// The source `shine compile` prints for prefixSum under `strategy`.
fn printed_under(target: &str, strategy: &str) -> String {
    let args = [
        "compile",
        "examples/scan.rise",
        "--def",
        "prefixSum",
        "--strategy",
        "examples/gpu.elv",
        "--apply",
        strategy,
        "--target",
        target,
    ];
    let (out, text) = shine_in(repo_root(), &args);
    assert!(out.status.success(), "{text}");
    text
}

#[test]
fn scan_lookback_warp_prints_warp_scans_in_cuda() {
    let code = printed_under("cuda", "scanLookbackWarp(256, 16)");
    // the work-items' sums scanned by each warp, the warps' totals by one warp: Hillis and
    // Steele's steps by shuffles up, the shuffle outside the lane's condition
    for d in [1, 2, 4, 8, 16] {
        let step = format!("= __shfl_up_sync(0xffffffffu, acc10, {d});");
        assert!(code.contains(&step), "{step}: {code}");
        let step = format!("= __shfl_up_sync(0xffffffffu, acc38, {d});");
        assert!(code.contains(&step), "{step}: {code}");
        assert!(code.contains(&format!("if ({} < lane", d - 1)), "{code}");
    }
    assert!(
        code.contains("shine_index warp = threadIdx.x / 32;"),
        "{code}"
    );
    assert!(
        code.contains("shine_index lane = threadIdx.x % 32;"),
        "{code}"
    );
    // one warp scans the 8 warps' totals
    assert!(
        code.contains("warp_2 = threadIdx.x / 32; warp_2 < 1;"),
        "{code}"
    );
    // a ticket, the copy in, the sums, the totals, the offsets and scans, the look-back: six
    // barriers, where the Hillis-Steele steps take thirteen
    assert_eq!(code.matches("__syncthreads();").count(), 6, "{code}");
    assert_eq!(
        printed_under("cuda", "scanLookback(256, 16)")
            .matches("__syncthreads();")
            .count(),
        13
    );
    // the look-back is the first warp's, as under scanLookback
    assert!(code.contains("shine_await_window("), "{code}");
    assert_eq!(
        code.matches("_sync(").count(),
        code.matches("_sync(0xffffffffu,").count(),
        "{code}"
    );
}

/// Tiles of 8192 elements: two copies of the tile take 64 KiB of dynamic shared memory
/// (scanLookbackWarp), one copy 32 KiB of static shared memory (scanLookbackWarpDirect, whose
/// work-items read their k consecutive elements from global memory for the sums and scans).
#[test]
fn scan_lookback_warp_direct_keeps_one_copy_of_the_tile() {
    let two = printed_under("cuda", "scanLookbackWarp(256, 32)");
    assert!(
        two.contains("of 256 work-items (threads), 68612 bytes of dynamic shared memory"),
        "{two}"
    );
    assert_eq!(two.matches("8192.f32 (local)").count(), 2, "{two}");
    let one = printed_under("cuda", "scanLookbackWarpDirect(256, 32)");
    assert!(!one.contains("shine_smem"), "{one}");
    assert_eq!(one.matches("8192.f32 (local)").count(), 1, "{one}");
    assert!(
        one.contains("x0[tile4 * 8192 + warp * 1024 + lane * 32 + i10]")
            && one.contains("x0[tile4 * 8192 + lid0_2 * 32 + i65]"),
        "{one}"
    );
    assert_eq!(one.matches("__syncthreads();").count(), 5, "{one}");
}

#[test]
fn scan_lookback_warp_is_refused_on_opencl_with_the_reason() {
    for strategy in ["scanLookbackWarp(64, 4)", "scanLookbackWarpDirect(64, 4)"] {
        let (ok, text) = run(
            "opencl",
            "examples/scan.rise",
            "prefixSumI32",
            strategy,
            1000,
        );
        assert!(!ok, "{text}");
        assert!(
            text.contains("`mapWarp` runs on the warps of a CUDA block"),
            "{text}"
        );
    }
}

#[test]
fn scan_lookback_prints_the_protocol_in_cuda() {
    let code = printed("cuda");
    // two kernels: the descriptors and the counter zeroed, then the scan
    assert!(
        code.contains("Launch 2:") && !code.contains("Launch 3:"),
        "{code}"
    );
    let zeroing = code.find("prefixSum_k0(").expect("the zeroing kernel");
    let scan = code.find("prefixSum_k1(").expect("the scan kernel");
    assert!(zeroing < scan, "{code}");
    assert!(
        code.contains("descriptors1[gid0] = (unsigned long long)0;"),
        "{code}"
    );
    // a ticket per work-group, from the counter after the descriptors
    assert!(code.contains("return atomicAdd(counter, 1ull);"), "{code}");
    assert!(
        code.contains("= shine_ticket(&descriptors1[(n + 2047) / 2048]);"),
        "{code}"
    );
    // status and value in one word, written by one atomic exchange, read by one load
    assert!(
        code.contains(
            "atomicExch(slot, ((unsigned long long)status << 32) | (unsigned long long)(__float_as_uint(v)));"
        ),
        "{code}"
    );
    assert!(
        code.contains(
            "w = k >= 0 ? *(const volatile unsigned long long *)&descriptors[k] : (1ull << 32);"
        ),
        "{code}"
    );
    // the aggregate first (by lane 0), then the first warp's walk back over windows of 32
    // predecessors until one holds an inclusive prefix, then the prefix (by lane 0)
    let aggregate = code
        .find("shine_publish_f32(&descriptors1[tile")
        .expect("an aggregate");
    let walk = code.find("for (;;) {").expect("the look-back");
    let inclusive = code[walk..]
        .find(", 2, ")
        .map(|i| i + walk)
        .expect("the inclusive prefix");
    assert!(aggregate < walk && walk < inclusive, "{code}");
    warp_look_back_is_convergent(&code);
    assert!(code.contains("__syncthreads();"), "{code}");
    // the scanned tile is read where workGroupScanInLocal leaves it: no local copy of its own
    assert!(!code.contains("scanned"), "{code}");
}

/// The warp's look-back in printed CUDA: the 32 lanes of the first warp in it, every vote and
/// shuffle with the full mask, the window's descriptors awaited by the whole warp, the
/// nearest prefix found by a ballot, the window folded by a butterfly, and only lane 0
/// publishing.
fn warp_look_back_is_convergent(code: &str) {
    let body = |name: &str| {
        let at = code.find(name).unwrap_or_else(|| panic!("{name}: {code}"));
        &code[at..at + code[at..].find("\n}").expect("its end")]
    };
    let window = body("unsigned long long shine_await_window(");
    assert!(
        window.contains("} while (__any_sync(0xffffffffu, (w >> 32) == 0ull));"),
        "{window}"
    );
    let nearest = body("int shine_nearest_prefix(");
    assert!(
        nearest.contains("__ballot_sync(0xffffffffu, (w >> 32) == 2ull)")
            && nearest.contains("31 - __clz(prefixes)"),
        "{nearest}"
    );
    let lanes = code
        .find("lid0_13 < 32; lid0_13 += blockDim.x)")
        .expect("the first warp's 32 lanes");
    let walk = &code[lanes..];
    assert!(
        walk.contains("shine_index k = tile4 - 32 + lid0_13;"),
        "{walk}"
    );
    assert!(
        walk.contains("= shine_await_window(&descriptors1[0], k);"),
        "{walk}"
    );
    assert!(
        walk.contains("int from = shine_nearest_prefix(w);"),
        "{walk}"
    );
    for o in [16, 8, 4, 2, 1] {
        assert!(
            walk.contains(&format!("__shfl_xor_sync(0xffffffffu, acc35, {o});")),
            "{walk}"
        );
    }
    assert!(walk.contains("k = k - 32;"), "{walk}");
    assert!(
        walk.contains("if (lid0_13 == 0) {\n          shine_publish_f32(&descriptors1[tile4], 1,"),
        "{walk}"
    );
    assert!(
        walk.contains("if (lid0_13 == 0) {\n        shine_publish_f32(&descriptors1[tile4], 2,"),
        "{walk}"
    );
    // no vote or shuffle with a partial mask, and no one-lane walk
    assert_eq!(
        code.matches("_sync(").count(),
        code.matches("_sync(0xffffffffu,").count(),
        "{code}"
    );
    assert!(!code.contains("shine_is_prefix"), "{code}");
}

#[test]
fn scan_lookback_needs_64_bit_atomics_in_opencl() {
    let code = printed("opencl");
    assert!(
        code.contains("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable")
            && code.contains("#ifndef cl_khr_int64_base_atomics")
            && code.contains("#error \"scanLookback needs 64-bit atomics"),
        "{code}"
    );
    assert!(code.contains("return atom_inc(counter);"), "{code}");
    assert!(code.contains("atom_xchg(slot,"), "{code}");
    assert!(code.contains("w = atom_add(slot, 0UL);"), "{code}");
    // the first warp's lane 0 walks back alone: no votes or shuffles in OpenCL
    let lanes = code
        .find("lid0_13 < 32; lid0_13 += get_local_size(0))")
        .expect("the first warp's lanes");
    assert!(
        code[lanes..]
            .contains("if (lid0_13 == 0) {\n        // scanLookback: this tile's exclusive prefix"),
        "{code}"
    );
    assert!(code.contains("if (shine_is_prefix(w)) {"), "{code}");
    assert!(
        !code.contains("shine_await_window") && !code.contains("sub_group"),
        "{code}"
    );
}

#[test]
fn scan_lookback_is_refused_on_cpus_and_for_wide_elements() {
    for target in ["c", "openmp"] {
        let (ok, text) = run(
            target,
            "examples/scan.rise",
            "prefixSum",
            "scanLookback(4, 2)",
            9,
        );
        assert!(!ok, "{target}: {text}");
        assert!(
            text.contains("`scanLookback` is a single-pass scan of GPU work-groups"),
            "{target}: {text}"
        );
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let program = dir.path().join("wide.rise");
    std::fs::write(
        &program,
        "def wideSum : {n: nat} -> n.i64 -> n.i64 = fun xs => xs |> scanSeq add 0i64\n",
    )
    .expect("the program is written");
    let (ok, text) = run(
        "opencl",
        &program.to_string_lossy(),
        "wideSum",
        "scanLookback(4, 2)",
        9,
    );
    assert!(!ok, "{text}");
    assert!(
        text.contains("singlePassScan(4, 2): the elements are of type `i64`"),
        "{text}"
    );
}
