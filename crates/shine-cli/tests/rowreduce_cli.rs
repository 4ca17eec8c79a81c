//! Row reductions at bandwidth (issue 27): `mv` (a dot product per row) under the strategies
//! of examples/gpu.elv that read every row coalesced — `rowsByWorkGroups(b)` (a work-group
//! per row, a local-memory tree), on OpenCL (PoCL here) and, with `SHINE_TEST_GPU=1`, CUDA;
//! `rowsByWarps(b)` and `rowPerWarp(w)` (warp shuffles), CUDA only — and `mvT` (y = Aᵀx)
//! under `global1d`, a work-item per column; softmax, layer norm and RMS norm of
//! examples/norms.rise under `rowsNorm(b)` (a work-group per row, its maximum, mean or sum
//! by a local-memory tree) and `rowsNormWarp(w)` (a warp per row, shuffles; CUDA only, and
//! here checked through the interpreter: the rewritten program's results are the
//! original's). Each is verified against the interpreter at sizes 1, 7, odd and prime; the
//! sizes a strategy does not admit are refused with the constraint, and OpenCL refuses the
//! warp strategies. `rowsNormWarpRegs(w)` (the row in the lanes' registers, read once) runs
//! the normalizations at constant row lengths of 32, 7 * 32 and 1024: the generated CUDA's
//! structure, the rewritten programs through the interpreter, and CUDA on a GPU machine.

mod support;

use std::path::Path;
use support::{gpu_targets, repo_root, shine_in, skip_opencl, test_gpu};

/// The repository root (the examples are named from it).
fn root() -> &'static Path {
    repo_root()
}

/// `shine run --verify` of `def` of `program` under `strategy` of examples/gpu.elv with
/// the sizes `nats` (`n=3`, ...): its success and its output.
fn run_in(
    program: &str,
    target: &str,
    def: &str,
    strategy: &str,
    nats: &[String],
) -> (bool, String) {
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
        "5",
        "--verify",
    ];
    for nat in nats {
        args.extend(["--nat", nat.as_str()]);
    }
    let (out, text) = shine_in(root(), &args);
    (out.status.success(), text)
}

/// [`run_in`] on examples/mv.rise.
fn run_mv(target: &str, def: &str, strategy: &str, nats: &[String]) -> (bool, String) {
    run_in("examples/mv.rise", target, def, strategy, nats)
}

/// [`run_in`] with the two sizes `a = x`, `b = y`; panics with the output unless it verified.
fn verified_in(
    program: &str,
    target: &str,
    def: &str,
    strategy: &str,
    (a, b): (&str, &str),
    (x, y): (i64, i64),
) {
    let nats = [format!("{a}={x}"), format!("{b}={y}")];
    let (ok, text) = run_in(program, target, def, strategy, &nats);
    assert!(
        ok && text.contains("verified against the interpreter"),
        "{target} {def} {strategy} {a}={x} {b}={y}:\n{}",
        text.chars().take(4000).collect::<String>()
    );
}

/// [`verified_in`] on examples/mv.rise.
fn verified(target: &str, def: &str, strategy: &str, names: (&str, &str), sizes: (i64, i64)) {
    verified_in("examples/mv.rise", target, def, strategy, names, sizes);
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
            verified(target, "mvT", "columnsSplitK(32)", ("m", "n"), (m, n));
            verified(target, "mvT", "columnsSplitK(7)", ("m", "n"), (m, n));
        }
    }
}

/// Rows × row lengths for the normalizations.
const NORM_SIZES: &[(i64, i64)] = &[(1, 1), (7, 7), (3, 1031), (2, 257), (5, 13)];

#[test]
fn rows_norm_verifies_softmax_layer_norm_and_rms_norm_at_any_size() {
    for target in gpu_targets() {
        for def in ["softmax", "layerNorm", "rmsNorm"] {
            for &size in NORM_SIZES {
                verified_in(
                    "examples/norms.rise",
                    target,
                    def,
                    "rowsNorm(256)",
                    ("m", "n"),
                    size,
                );
            }
            // a tree of one step (b = 2), and more partial results than a row has elements
            for size in [(7, 7), (2, 13)] {
                verified_in(
                    "examples/norms.rise",
                    target,
                    def,
                    "rowsNorm(2)",
                    ("m", "n"),
                    size,
                );
                verified_in(
                    "examples/norms.rise",
                    target,
                    def,
                    "rowsNorm(32)",
                    ("m", "n"),
                    size,
                );
            }
        }
    }
}

#[test]
fn rows_norm_reduces_each_row_by_two_trees_in_a_work_group() {
    // softmax: two trees (the maximum, the sum), each log2 256 steps in local memory
    let (out, code) = shine_in(
        root(),
        &[
            "compile",
            "examples/norms.rise",
            "--def",
            "softmax",
            "--strategy",
            "examples/gpu.elv",
            "--apply",
            "rowsNorm(256)",
            "--target",
            "cuda",
        ],
    );
    assert!(out.status.success(), "{code}");
    assert_eq!(
        code.matches("__syncthreads();").count(),
        2 * 8 + 4,
        "{code}"
    );
    assert!(code.contains("m work-groups"), "{code}");
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
    let (ok, text) = run_mv("cuda", "mv", "rowPerWarp(8)", &nats);
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
        let (ok, text) = run_mv("opencl", "mv", strategy, &nats);
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
    // mvT split over k: neighbouring work-items (dimension 0) read neighbouring columns
    let (out, split) = shine_in(
        root(),
        &[
            "compile",
            "examples/mv.rise",
            "--def",
            "mvT",
            "--strategy",
            "examples/gpu.elv",
            "--apply",
            "columnsSplitK(32)",
            "--target",
            "cuda",
        ],
    );
    assert!(out.status.success(), "{split}");
    assert!(
        split.contains("mat[gid0 + gid1 * n * ((m + 31) / 32) + i5 * n]"),
        "{split}"
    );
    assert!(
        split.contains("Launch 2: mvT_k1 with at least n work-items"),
        "{split}"
    );
    // a warp per row needs neither local memory nor a barrier
    assert!(
        !per_warp.contains("__shared__") && !per_warp.contains("__syncthreads"),
        "{per_warp}"
    );
    assert_eq!(per_warp.matches("__shfl_xor_sync").count(), 5, "{per_warp}");
}

/// The normalizations of examples/norms.rise.
const NORMS: [&str; 3] = ["softmax", "layerNorm", "rmsNorm"];

/// Rows per work-group × rows × row lengths for `rowsNormWarp`: one element, fewer and more
/// elements than lanes, odd and prime lengths, a row count not a multiple of 8 (w = 1).
const WARP_NORM_SIZES: &[(i64, i64, i64)] = &[
    (1, 1, 1),
    (8, 32, 1),
    (8, 8, 33),
    (4, 12, 13),
    (1, 7, 1001),
    (8, 8, 1031),
];

/// [`WARP_NORM_SIZES`] for the interpreter alone, whose softmax and layer norm take time
/// quadratic in the row (each element recomputes its row's sums): rows of at most 97.
const WARP_NORM_SIZES_INTERPRETED: &[(i64, i64, i64)] =
    &[(1, 1, 1), (8, 32, 1), (8, 8, 33), (4, 12, 13), (1, 7, 97)];

/// `shine eval` of `def` in `program` (relative to `dir`) on the random inputs of seed 5 with
/// `m` rows of `n` elements: its result.
fn evaluated(dir: &Path, program: &str, def: &str, (m, n): (i64, i64)) -> Vec<f64> {
    let out = dir.join(format!("{def}_{m}_{n}.npy"));
    let (m, n) = (format!("m={m}"), format!("n={n}"));
    let out_arg = out.to_string_lossy().to_string();
    let args = [
        "eval", program, "--def", def, "--nat", &m, "--nat", &n, "--random", "5", "--output",
        &out_arg,
    ];
    let (status, text) = shine_in(dir, &args);
    assert!(status.status.success(), "{program} {def}: {text}");
    let array = shine::npy::read(&out).expect("a readable result");
    array.data.into_iter().map(|x| x.as_f64()).collect()
}

#[test]
fn rows_norm_warp_keeps_the_meaning_of_softmax_layer_norm_and_rms_norm() {
    // the rewritten program (a warp per row, its reductions by shuffles, its maps over the
    // lanes) evaluated by the interpreter gives the original's results
    let dir = tempfile::tempdir().expect("a temporary directory");
    let norms = root().join("examples/norms.rise");
    let norms = norms.to_string_lossy();
    for def in NORMS {
        for &(w, m, n) in WARP_NORM_SIZES_INTERPRETED {
            let strategy = format!("rowsNormWarp({w})");
            let (out, text) = shine_in(
                dir.path(),
                &[
                    "rewrite",
                    &norms,
                    "--def",
                    def,
                    "--strategy",
                    &root().join("examples/gpu.elv").to_string_lossy(),
                    "--apply",
                    &strategy,
                ],
            );
            assert!(out.status.success(), "{def} {strategy}: {text}");
            assert!(
                text.contains("reduceWarp") && text.contains("mapLane"),
                "{text}"
            );
            let rewritten = format!("{def}_{w}.rise");
            std::fs::write(dir.path().join(&rewritten), &text).expect("the program is written");
            let want = evaluated(dir.path(), &norms, def, (m, n));
            let got = evaluated(dir.path(), &rewritten, def, (m, n));
            assert_agree(&want, &got, &format!("{def} {strategy} m={m} n={n}"));
        }
    }
}

/// `rowsNormWarp` on CUDA: run only with `SHINE_TEST_GPU=1`.
#[test]
fn rows_norm_warp_verifies_on_cuda() {
    if !test_gpu() {
        return;
    }
    for def in NORMS {
        for &(w, m, n) in WARP_NORM_SIZES {
            let strategy = format!("rowsNormWarp({w})");
            verified_in(
                "examples/norms.rise",
                "cuda",
                def,
                &strategy,
                ("m", "n"),
                (m, n),
            );
        }
    }
}

/// `shine compile` of `def` of examples/norms.rise under `strategy` to CUDA.
fn norm_cuda_of(def: &str, strategy: &str) -> String {
    let (out, text) = shine_in(
        root(),
        &[
            "compile",
            "examples/norms.rise",
            "--def",
            def,
            "--strategy",
            "examples/gpu.elv",
            "--apply",
            strategy,
            "--target",
            "cuda",
        ],
    );
    assert!(out.status.success(), "{def} {strategy}: {text}");
    text
}

#[test]
fn rows_norm_warp_reduces_by_shuffles_without_local_memory_or_work_group_barriers() {
    // (definition, reductions the warp does, warp barriers)
    for (def, reductions, warp_barriers) in
        [("softmax", 2, 1), ("layerNorm", 2, 0), ("rmsNorm", 1, 0)]
    {
        let code = norm_cuda_of(def, "rowsNormWarp(8)");
        assert_eq!(
            code.matches("__shfl_xor_sync").count(),
            5 * reductions,
            "{def}: {code}"
        );
        assert!(
            !code.contains("__syncthreads") && !code.contains("__shared__"),
            "{def}: {code}"
        );
        // softmax's lanes write its exponentials, then read them back: a warp barrier
        assert_eq!(
            code.matches("__syncwarp();").count(),
            warp_barriers,
            "{def}: {code}"
        );
        assert!(
            code.contains("m / 8 work-groups (blocks) of 256"),
            "{def}: {code}"
        );
        // lane l reads the row's elements l, l+32, ... and computes the same ones
        assert!(code.contains("warp * n + lane + i"), "{def}: {code}");
        assert!(code.contains(" < n; lane_"), "{def}: {code}");
        assert!(code.contains(" += 32) {"), "{def}: {code}");
    }
}

#[test]
fn rows_norm_warp_refuses_a_row_count_not_a_multiple_of_its_rows_per_work_group() {
    let nats = ["m=7".to_string(), "n=33".to_string()];
    let (ok, text) = run_in(
        "examples/norms.rise",
        "cuda",
        "layerNorm",
        "rowsNormWarp(8)",
        &nats,
    );
    assert!(!ok, "{text}");
    assert!(text.contains("8 must divide m, but m = 7"), "{text}");
}

#[test]
fn rows_norm_warp_is_refused_on_opencl_and_c() {
    let nats = ["m=8".to_string(), "n=33".to_string()];
    let mut refusals = vec![("c", "compile for OpenCL or CUDA")];
    if !skip_opencl() {
        refusals.push(("opencl", "`mapWarp` runs on the warps of a CUDA block"));
    }
    for (target, message) in refusals {
        let (ok, text) = run_in(
            "examples/norms.rise",
            target,
            "softmax",
            "rowsNormWarp(8)",
            &nats,
        );
        assert!(!ok && text.contains(message), "{target}: {text}");
    }
}

/// examples/norms.rise with each normalization at the constant row lengths `lengths`
/// (`softmax224 : {m: nat} -> m.224.f32 -> m.224.f32`), written to `dir`: its path.
fn norms_with_row_lengths(dir: &Path, lengths: &[i64]) -> String {
    let mut program =
        std::fs::read_to_string(root().join("examples/norms.rise")).expect("norms.rise reads");
    for n in lengths {
        for def in NORMS {
            // norms.rise defines some lengths itself (1024), the same way
            if program.contains(&format!("def {def}{n} :")) {
                continue;
            }
            program.push_str(&format!(
                "\ndef {def}{n} : {{m: nat}} -> m.{n}.f32 -> m.{n}.f32 = fun xs => {def} xs\n"
            ));
        }
    }
    let path = dir.join("norms_rows.rise");
    std::fs::write(&path, program).expect("the program is written");
    path.to_string_lossy().to_string()
}

/// `shine eval` of `def` in `program` (relative to `dir`) on the random inputs of seed 5
/// with `m` rows (the row length is the definition's): its result.
fn evaluated_rows(dir: &Path, program: &str, def: &str, m: i64) -> Vec<f64> {
    let out = dir.join(format!("{def}_{m}.npy"));
    let (m, out_arg) = (format!("m={m}"), out.to_string_lossy().to_string());
    let args = [
        "eval", program, "--def", def, "--nat", &m, "--random", "5", "--output", &out_arg,
    ];
    let (status, text) = shine_in(dir, &args);
    assert!(status.status.success(), "{program} {def}: {text}");
    let array = shine::npy::read(&out).expect("a readable result");
    array.data.into_iter().map(|x| x.as_f64()).collect()
}

/// Rows per work-group × rows for `rowsNormWarpRegs`: one row, 7 rows (w = 1), 64 rows by 8.
const REGS_ROWS: &[(i64, i64)] = &[(1, 1), (1, 7), (8, 64)];

#[test]
fn rows_norm_warp_regs_keeps_the_meaning_of_softmax_layer_norm_and_rms_norm() {
    // the rewritten program (the row copied once into the lanes' private memory, every
    // pass reading that copy) evaluated by the interpreter gives the original's results;
    // rows of 32 and 7 * 32 elements (1024 on CUDA only: the interpreter's softmax is
    // quadratic in the row)
    let dir = tempfile::tempdir().expect("a temporary directory");
    let program = norms_with_row_lengths(dir.path(), &[32, 224]);
    let gpu = root().join("examples/gpu.elv");
    for n in [32, 224] {
        for norm in NORMS {
            let def = format!("{norm}{n}");
            for &(w, m) in REGS_ROWS {
                let strategy = format!("rowsNormWarpRegs({w})");
                let args = [
                    "rewrite",
                    program.as_str(),
                    "--def",
                    &def,
                    "--strategy",
                    &gpu.to_string_lossy(),
                    "--apply",
                    &strategy,
                ];
                let (out, text) = shine_in(dir.path(), &args);
                assert!(out.status.success(), "{def} {strategy}: {text}");
                assert!(text.contains("toMem private"), "{text}");
                let rewritten = format!("{def}_{w}.rise");
                std::fs::write(dir.path().join(&rewritten), &text).expect("written");
                let want = evaluated_rows(dir.path(), &program, &def, m);
                let got = evaluated_rows(dir.path(), &rewritten, &def, m);
                assert_agree(&want, &got, &format!("{def} {strategy} m={m}"));
            }
        }
    }
}

#[test]
fn rows_norm_warp_regs_reads_the_row_once_into_registers() {
    // (definition, private arrays of 32 floats: the row, and softmax's exponentials)
    for (def, arrays) in [("softmax1024", 2), ("layerNorm1024", 1), ("rmsNorm1024", 1)] {
        let code = norm_cuda_of(def, "rowsNormWarpRegs(8)");
        let kernel = &code[code.find("__global__").expect("a kernel")..];
        // the input is the kernel's second parameter (after the output)
        let input = kernel
            .split("const float *__restrict__ ")
            .nth(1)
            .and_then(|rest| rest.split([',', ')']).next())
            .expect("an input parameter");
        assert_eq!(
            kernel.matches(&format!("{input}[")).count(),
            1,
            "{def}: the input is read once: {code}"
        );
        // no global temporaries (softmax's exponentials stay in the lanes' registers)
        assert!(!code.contains("temporaries"), "{def}: {code}");
        assert_eq!(kernel.matches("float *__restrict__").count(), 2, "{code}");
        assert_eq!(
            kernel
                .matches("the part of 32.32.f32 of this work-item")
                .count(),
            arrays,
            "{def}: {code}"
        );
        let registers = kernel
            .lines()
            .filter(|l| l.trim_start().starts_with("float mem") && l.ends_with("[32];"))
            .count();
        assert_eq!(registers, arrays, "{def}: {code}");
        // every loop over the registers is unrolled (a constant index keeps them registers)
        assert!(code.contains("#pragma unroll"), "{def}: {code}");
        assert!(
            !code.contains("__syncwarp") && !code.contains("__shared__"),
            "{def}: {code}"
        );
    }
}

#[test]
fn rows_norm_warp_regs_refuses_a_row_length_it_cannot_keep_in_registers() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let program = norms_with_row_lengths(dir.path(), &[33, 4096]);
    let cases = [
        (
            root()
                .join("examples/norms.rise")
                .to_string_lossy()
                .to_string(),
            "softmax".to_string(),
            "n elements",
        ),
        (program.clone(), "layerNorm33".to_string(), "33 elements"),
        (program, "rmsNorm4096".to_string(), "4096 elements"),
    ];
    for (file, def, what) in cases {
        let args = [
            "compile",
            file.as_str(),
            "--def",
            &def,
            "--strategy",
            "examples/gpu.elv",
            "--apply",
            "rowsNormWarpRegs(8)",
            "--target",
            "cuda",
        ];
        let (out, text) = shine_in(root(), &args);
        assert!(!out.status.success(), "{def}: {text}");
        assert!(
            text.contains(&format!(
                "laneRegisters: the row has {what}, not a constant multiple of 32"
            )),
            "{def}: {text}"
        );
    }
}

/// `rowsNormWarpRegs` on CUDA at rows of 32, 7 * 32 and 1024 elements: run only with
/// `SHINE_TEST_GPU=1`.
#[test]
fn rows_norm_warp_regs_verifies_on_cuda() {
    if !gpu_targets().contains(&"cuda") {
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let program = norms_with_row_lengths(dir.path(), &[32, 224, 1024]);
    for n in [32, 224, 1024] {
        for norm in NORMS {
            for &(w, m) in REGS_ROWS {
                let nats = [format!("m={m}")];
                let strategy = format!("rowsNormWarpRegs({w})");
                let def = format!("{norm}{n}");
                let (ok, text) = run_in(&program, "cuda", &def, &strategy, &nats);
                assert!(
                    ok && text.contains("verified against the interpreter"),
                    "{def} {strategy} m={m}:\n{}",
                    text.chars().take(4000).collect::<String>()
                );
            }
        }
    }
}

/// Work-items per row × row lengths for `rowsNormGroupRegs` through the interpreter: one
/// warp keeping one element each, two warps keeping the prime 7, three warps (their
/// results padded to 32) keeping 3.
const GROUP_REGS_INTERPRETED: &[(i64, i64)] = &[(32, 32), (64, 448), (96, 288)];

#[test]
fn rows_norm_group_regs_keeps_the_meaning_of_softmax_layer_norm_and_rms_norm() {
    // the rewritten program (the row copied once into the work-items' private memory,
    // every reduction the work-group's warps', every pass reading that copy) evaluated by
    // the interpreter gives the original's results, at 1 and 7 rows
    let dir = tempfile::tempdir().expect("a temporary directory");
    let lengths: Vec<i64> = GROUP_REGS_INTERPRETED.iter().map(|&(_, n)| n).collect();
    let program = norms_with_row_lengths(dir.path(), &lengths);
    let gpu = root().join("examples/gpu.elv");
    for &(b, n) in GROUP_REGS_INTERPRETED {
        for norm in NORMS {
            let def = format!("{norm}{n}");
            let strategy = format!("rowsNormGroupRegs({b})");
            let args = [
                "rewrite",
                program.as_str(),
                "--def",
                &def,
                "--strategy",
                &gpu.to_string_lossy(),
                "--apply",
                &strategy,
            ];
            let (out, text) = shine_in(dir.path(), &args);
            assert!(out.status.success(), "{def} {strategy}: {text}");
            assert!(
                text.contains("toMem private") && text.contains("toMem local"),
                "{text}"
            );
            let rewritten = format!("{def}_{b}.rise");
            std::fs::write(dir.path().join(&rewritten), &text).expect("written");
            for m in [1, 7] {
                let want = evaluated_rows(dir.path(), &program, &def, m);
                let got = evaluated_rows(dir.path(), &rewritten, &def, m);
                assert_agree(&want, &got, &format!("{def} {strategy} m={m}"));
            }
        }
    }
}

#[test]
fn the_let_bound_normalizations_are_the_normalizations() {
    // softmaxOnce, layerNormOnce and rmsNormOnce (the forms the long rows are defined by)
    // give the written forms' values: 1 and 7 rows of 1, 7 and 33 elements
    let dir = tempfile::tempdir().expect("a temporary directory");
    let program = root().join("examples/norms.rise");
    let program = program.to_string_lossy();
    for norm in NORMS {
        for size in [(1, 1), (7, 7), (7, 33)] {
            let want = evaluated(dir.path(), &program, norm, size);
            let got = evaluated(dir.path(), &program, &format!("{norm}Once"), size);
            assert_agree(&want, &got, &format!("{norm}Once {size:?}"));
        }
    }
}

/// The lines of a CUDA kernel's body (from its first line inside the work-group loop on).
fn work_group_loop_body(code: &str) -> Vec<&str> {
    code.lines()
        .skip_while(|l| !l.contains("for (shine_index wg0 = blockIdx.x;"))
        .skip(1)
        .collect()
}

#[test]
fn rows_norm_group_regs_reads_the_row_once_into_registers_and_reduces_by_warps() {
    // (definition, work-items, registers per work-item, private arrays: the row, and
    // softmax's exponentials; reductions; barriers)
    let cases = [
        ("softmax8192", 1024, 8, 2, 2, 2),
        ("layerNorm8192", 512, 16, 1, 2, 2),
        ("rmsNorm8192", 256, 32, 1, 1, 2),
        ("softmax32768", 512, 64, 2, 2, 2),
        ("layerNorm32768", 1024, 32, 1, 2, 2),
    ];
    for (def, b, k, arrays, reductions, barriers) in cases {
        let code = norm_cuda_of(def, &format!("rowsNormGroupRegs({b})"));
        let kernel = &code[code.find("__global__").expect("a kernel")..];
        assert!(
            code.contains(&format!("m work-groups (blocks) of {b} work-items")),
            "{def}: {code}"
        );
        // the input is the kernel's second parameter (after the output), read once,
        // work-item i at the elements i, i+b, ...
        let input = kernel
            .split("const float *__restrict__ ")
            .nth(1)
            .and_then(|rest| rest.split([',', ')']).next())
            .expect("an input parameter");
        let reads: Vec<&str> = kernel
            .lines()
            .filter(|l| l.contains(&format!("{input}[")))
            .collect();
        assert_eq!(reads.len(), 1, "{def}: the input is read once: {code}");
        assert!(reads[0].contains("warp * 32 + lane + i"), "{def}: {code}");
        assert!(reads[0].contains(&format!(" * {b}]")), "{def}: {code}");
        // no global temporaries (softmax's exponentials stay in the registers)
        assert!(!code.contains("temporaries"), "{def}: {code}");
        assert_eq!(kernel.matches("float *__restrict__").count(), 2, "{code}");
        let n = b * k;
        assert_eq!(
            kernel
                .matches(&format!(
                    "the part of {}.32.{k}.f32 of this work-item",
                    b / 32
                ))
                .count(),
            arrays,
            "{def} ({n}): {code}"
        );
        let registers = kernel
            .lines()
            .filter(|l| l.trim_start().starts_with("float mem") && l.ends_with(&format!("[{k}];")))
            .count();
        assert_eq!(registers, arrays, "{def}: {code}");
        assert!(code.contains("#pragma unroll"), "{def}: {code}");
        // each reduction: a warp's shuffles, then every warp's over the warps' results
        assert_eq!(
            code.matches("__shfl_xor_sync").count(),
            10 * reductions,
            "{def}: {code}"
        );
        assert_eq!(
            code.matches("__shared__").count(),
            reductions,
            "{def}: {code}"
        );
        // the barriers sit in the work-group loop's body itself, outside every warp, lane
        // and conditional block that not all work-items might reach
        let body = work_group_loop_body(kernel);
        let synced: Vec<&&str> = body
            .iter()
            .filter(|l| l.contains("__syncthreads"))
            .collect();
        assert_eq!(synced.len(), barriers, "{def}: {code}");
        assert!(
            synced.iter().all(|l| **l == "    __syncthreads();"),
            "{def}: {code}"
        );
        assert!(!code.contains("__syncwarp"), "{def}: {code}");
    }
}

#[test]
fn rows_norm_group_regs_refuses_a_row_it_cannot_keep_in_registers() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let program = norms_with_row_lengths(dir.path(), &[1000]);
    let norms = root()
        .join("examples/norms.rise")
        .to_string_lossy()
        .to_string();
    let cases = [
        (
            norms.clone(),
            "softmax",
            1024,
            "the row has n elements, not a constant multiple of 1024 of at most 65536",
        ),
        (
            norms.clone(),
            "rmsNorm32768",
            256,
            "the row has 32768 elements, not a constant multiple of 256 of at most 16384",
        ),
        (
            program,
            "layerNorm1000",
            256,
            "the row has 1000 elements, not a constant multiple of 256",
        ),
        (
            norms,
            "softmax8192",
            48,
            "a work-group of 48 work-items is not a whole number of warps",
        ),
    ];
    for (file, def, b, reason) in cases {
        let strategy = format!("rowsNormGroupRegs({b})");
        let args = [
            "compile",
            file.as_str(),
            "--def",
            def,
            "--strategy",
            "examples/gpu.elv",
            "--apply",
            &strategy,
            "--target",
            "cuda",
        ];
        let (out, text) = shine_in(root(), &args);
        assert!(!out.status.success(), "{def}: {text}");
        assert!(
            text.contains(&format!("groupRegisters({b}): {reason}")),
            "{def}: {text}"
        );
    }
}

#[test]
fn rows_norm_group_regs_is_refused_on_opencl_and_c() {
    let nats = ["m=2".to_string()];
    let mut refusals = vec![("c", "compile for OpenCL or CUDA")];
    if !skip_opencl() {
        refusals.push(("opencl", "`mapWarp` runs on the warps of a CUDA block"));
    }
    for (target, message) in refusals {
        let (ok, text) = run_in(
            "examples/norms.rise",
            target,
            "softmax8192",
            "rowsNormGroupRegs(1024)",
            &nats,
        );
        assert!(!ok && text.contains(message), "{target}: {text}");
    }
}

/// `rowsNormGroupRegs` on CUDA at rows of 8192 and 32768 elements by 1024, 512 and 256
/// work-items (where a row fits) and of 448 by 64, at 1, 7 and 64 rows: run only with
/// `SHINE_TEST_GPU=1`.
#[test]
fn rows_norm_group_regs_verifies_on_cuda() {
    if !gpu_targets().contains(&"cuda") {
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let program = norms_with_row_lengths(dir.path(), &[448]);
    let cases: &[(i64, i64)] = &[
        (1024, 8192),
        (512, 8192),
        (256, 8192),
        (1024, 32768),
        (512, 32768),
        (64, 448),
    ];
    for &(b, n) in cases {
        for norm in NORMS {
            for m in [1, 7, 64] {
                let nats = [format!("m={m}")];
                let strategy = format!("rowsNormGroupRegs({b})");
                let def = format!("{norm}{n}");
                let (ok, text) = run_in(&program, "cuda", &def, &strategy, &nats);
                assert!(
                    ok && text.contains("verified against the interpreter"),
                    "{def} {strategy} m={m}:\n{}",
                    text.chars().take(4000).collect::<String>()
                );
            }
        }
    }
}

/// The rewritten program's values `got` agree with the original's `want` (relative 1e-5).
fn assert_agree(want: &[f64], got: &[f64], what: &str) {
    assert_eq!(want.len(), got.len(), "{what}");
    for (i, (a, b)) in want.iter().zip(got).enumerate() {
        assert!(
            (a - b).abs() <= 1e-5 * a.abs().max(1.0),
            "{what}: element {i} is {b}, the original's {a}"
        );
    }
}
