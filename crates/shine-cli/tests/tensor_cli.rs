//! Tensor cores (issue 26): `mmaSync` in `examples/tensor.rise`'s `mmWarps` runs on CUDA
//! (with `SHINE_TEST_GPU=1`: f16 and bf16, at sizes of one tile and of odd and prime tile
//! counts, verified against the interpreter), and every place it cannot run is refused
//! with a message: outside a `mapWarp` loop, inside a `mapLane` loop, on C and OpenCL.
//! Vectors of 16-bit floats (the tiles' 16-byte copies) are moved whole on CUDA and refused
//! elsewhere and in arithmetic. `mmaWarps`, `mmaWarpTiles` and `mmaShared` of
//! `examples/fireiron.elv` derive the kernels of `mmWarps`, `mmWarpTiles` and `mmShared` from
//! the plain product of `examples/half.rise`.

mod support;

use std::path::Path;
use support::{repo_root, shine_in, shine_on, targets, test_gpu};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The definitions of examples/tensor.rise at the element type `t` (f16 or bf16).
fn tensor_example_at(t: &str) -> String {
    let text = std::fs::read_to_string(root().join("examples/tensor.rise")).expect("example");
    text.replace(".f16", &format!(".{t}"))
}

#[test]
fn mm_warps_verifies_on_cuda() {
    if !test_gpu() {
        return;
    }
    for t in ["f16", "bf16"] {
        let program = tensor_example_at(t);
        for (def, (m, n, k)) in [
            ("mmWarps", (1, 1, 1)),
            ("mmWarps", (3, 2, 5)),
            ("mmWarps", (2, 3, 17)),
            ("mmWarps", (8, 4, 64)),
            ("mmWarpTiles", (1, 1, 1)),
            ("mmWarpTiles", (3, 2, 5)),
            ("mmWarpTiles", (2, 1, 17)),
            ("mmShared", (1, 1, 1)),
            ("mmShared", (3, 2, 5)),
            ("mmShared", (2, 1, 17)),
            ("mmLarge", (1, 1, 1)),
            ("mmLarge", (3, 2, 5)),
            ("mmLarge", (1, 3, 7)),
            ("mmWide", (1, 1, 1)),
            ("mmWide", (2, 1, 3)),
            ("mmWide", (1, 3, 5)),
        ] {
            let sizes = [format!("m={m}"), format!("n={n}"), format!("k={k}")];
            let (ok, text) = shine_on(
                &program,
                &[
                    "run", "--def", def, "--target", "cuda", "--nat", &sizes[0], "--nat",
                    &sizes[1], "--nat", &sizes[2], "--random", "5", "--verify",
                ],
            );
            assert!(
                ok && text.contains("verified against the interpreter"),
                "{def} {t} m={m} n={n} k={k}:\n{text}"
            );
        }
    }
}

#[test]
fn split_k_products_verify_on_cuda() {
    if !test_gpu() {
        return;
    }
    for t in ["f16", "bf16"] {
        let program = tensor_example_at(t);
        for (def, (m, n, k, s)) in [
            ("mmSharedSplitK", (1, 1, 1, 1)),
            ("mmSharedSplitK", (1, 1, 2, 7)),
            ("mmSharedSplitK", (3, 2, 5, 3)),
            ("mmLargeSplitK", (1, 1, 1, 1)),
            ("mmLargeSplitK", (1, 1, 3, 5)),
            ("mmLargeSplitK", (2, 3, 1, 2)),
            ("mmWideSplitK", (1, 1, 1, 1)),
            ("mmWideSplitK", (2, 1, 3, 3)),
        ] {
            let sizes = [
                format!("m={m}"),
                format!("n={n}"),
                format!("k={k}"),
                format!("s={s}"),
            ];
            let mut args = vec!["run", "--def", def, "--target", "cuda"];
            if def == "mmLargeSplitK" {
                // its chunks' copies 4 steps ahead, by the strategy
                let fireiron = root().join("examples/fireiron.elv");
                let (ok, text) = shine_on(
                    &program,
                    &[
                        "run",
                        "--def",
                        def,
                        "--target",
                        "cuda",
                        "--strategy",
                        fireiron.to_str().expect("path"),
                        "--apply",
                        "prefetchSteps(4)",
                        "--nat",
                        &sizes[0],
                        "--nat",
                        &sizes[1],
                        "--nat",
                        &sizes[2],
                        "--nat",
                        &sizes[3],
                        "--random",
                        "5",
                        "--verify",
                    ],
                );
                assert!(
                    ok && text.contains("verified against the interpreter"),
                    "{def} prefetchSteps(4) {t} m={m} n={n} k={k} s={s}:\n{text}"
                );
            }
            for size in &sizes {
                args.extend(["--nat", size.as_str()]);
            }
            args.extend(["--random", "5", "--verify"]);
            let (ok, text) = shine_on(&program, &args);
            assert!(
                ok && text.contains("verified against the interpreter"),
                "{def} {t} m={m} n={n} k={k} s={s}:\n{text}"
            );
        }
    }
}

/// A fragment tile multiply of each of `n` warps' fragments, placed by `body`.
fn placed(body: &str) -> String {
    format!(
        "def p : {{n: nat}} -> n.32.8.f16 -> n.32.4.f16 -> n.32.4.f32 -> n.32.4.f32 =\n  \
         fun a b c => zip a (zip b c) |> {body}\n"
    )
}

fn compile_fails(program: &str, target: &str, want: &str) {
    let (ok, text) = shine_on(program, &["compile", "--def", "p", "--target", target]);
    assert!(!ok, "{program} compiled for {target}:\n{text}");
    assert!(
        text.contains(want),
        "{program} ({target}): expected `{want}` in\n{text}"
    );
}

#[test]
fn mma_outside_a_warp_loop_is_refused() {
    let program = placed(
        "mapWorkGroup(0) (fun t => mmaSync (fst t) (fst (snd t)) (snd (snd t)) \
         |> mapLocal(0) (mapSeq id))",
    );
    compile_fails(&program, "cuda", "a tensor-core multiply (`mmaSync`)");
}

#[test]
fn mma_inside_a_lane_loop_is_refused() {
    let program = placed(
        "mapWorkGroup(0) (fun t => generate (fun w: idx[1] => t) |> mapWarp (fun t => \
         generate (fun l: idx[32] => mmaSync (fst t) (fst (snd t)) (snd (snd t))) \
         |> mapLane (fun d => idx l d |> mapSeq id)))",
    );
    let (ok, text) = shine_on(&program, &["compile", "--def", "p", "--target", "cuda"]);
    assert!(!ok, "compiled:\n{text}");
}

#[test]
fn c_refuses_mma() {
    let program = placed(
        "mapSeq (fun t => mmaSync (fst t) (fst (snd t)) (snd (snd t)) |> mapSeq (mapSeq id))",
    );
    compile_fails(&program, "c", "`mmaSync` runs on NVIDIA tensor cores");
    compile_fails(&program, "opencl", "`mmaSync`");
}

#[test]
fn mma_on_f32_tiles_is_a_type_error() {
    let program = "def p : 16.16.f32 -> 16.8.f32 -> 16.8.f32 -> 16.8.f32 = fun a b c =>\n  \
                   unfragC (mmaSync (fragA a) (fragB b) (fragC c))\n";
    let (ok, text) = shine_on(program, &["check"]);
    assert!(
        !ok && text.contains("`mmaSync` multiplies f16 or bf16 tiles"),
        "{text}"
    );
}

/// A work-group copies 256 elements of `t` as 32 vectors of 8 through local memory, then
/// reads them back element by element in another order.
fn vector_copy(t: &str) -> String {
    format!(
        "def p : {{n: nat}} -> (n*256).{t} -> (n*256).{t} = fun a =>\n  \
         a |> split 256 |> mapWorkGroup(0) (fun x =>\n    \
         toMem local (x |> asVector 8 |> mapLocal(0) (fun v => v)) (fun s =>\n      \
         s |> asScalar |> split 32 |> transpose |> mapLocal(0) (mapSeq (fun y => y))\n      \
         |> transpose |> join))\n  |> join\n"
    )
}

#[test]
fn vectors_of_16_bit_floats_are_moved_whole_on_cuda() {
    for t in ["f16", "bf16"] {
        let program = vector_copy(t);
        let (ok, text) = shine_on(&program, &["compile", "--def", "p", "--target", "cuda"]);
        assert!(ok, "{text}");
        assert!(text.contains("__shared__ __align__(16) uint4"), "{text}");
        assert!(text.contains("= *(const uint4 *)&a["), "{text}");
        // the kernel computes nothing with 16-bit floats but names their type
        let header = if t == "f16" {
            "cuda_fp16.h"
        } else {
            "cuda_bf16.h"
        };
        assert!(text.contains(&format!("#include <{header}>")), "{text}");
        if test_gpu() {
            for n in [1, 3, 7] {
                let size = format!("n={n}");
                let (ok, text) = shine_on(
                    &program,
                    &[
                        "run", "--def", "p", "--target", "cuda", "--nat", &size, "--random", "2",
                        "--verify",
                    ],
                );
                assert!(
                    ok && text.contains("verified against the interpreter"),
                    "{t} n={n}:\n{text}"
                );
            }
        }
    }
    compile_fails(&vector_copy("f16"), "opencl", "vectors of f16 here");
    compile_fails(&vector_copy("f16"), "c", "vectors of f16");
}

/// Work-item `i` copies the first 8 elements of `a`'s row `i` (whose `k` elements start
/// `offset` elements into the row) as one vector: `asVector 8` requires that 8 divides `k`.
fn first_vector_of_rows(offset: usize) -> String {
    format!(
        "def p : {{m k: nat}} -> m.(k+{offset}).f16 -> m.8.f16 = fun a =>\n  \
         a |> mapGlobal(0) (fun r => r |> drop {offset} |> asVector 8 |> take 1\n    \
         |> mapSeq (fun v => v) |> asScalar)\n"
    )
}

#[test]
fn vectors_at_multiples_of_a_size_its_constraints_divide_are_moved_whole() {
    // row i's vector starts at i·k, a multiple of 8 since the sizes are checked before the
    // kernel runs (`8 must divide k`); no loop's range says so
    let (ok, text) = shine_on(
        &first_vector_of_rows(0),
        &["compile", "--def", "p", "--target", "cuda"],
    );
    assert!(ok, "{text}");
    assert!(text.contains("[gid0 * 8] = *(const uint4 *)&"), "{text}");
    // at i·(k+1) + 1 it need not be
    compile_fails(
        &first_vector_of_rows(1),
        "cuda",
        "an address not provably aligned",
    );
    if test_gpu() {
        for (m, k) in [(1, 8), (3, 24), (7, 40)] {
            let (m, k) = (format!("m={m}"), format!("k={k}"));
            let (ok, text) = shine_on(
                &first_vector_of_rows(0),
                &[
                    "run", "--def", "p", "--target", "cuda", "--nat", &m, "--nat", &k, "--random",
                    "2", "--verify",
                ],
            );
            assert!(
                ok && text.contains("verified against the interpreter"),
                "{m} {k}:\n{text}"
            );
        }
    }
}

#[test]
fn vectors_of_16_bit_floats_are_not_computed_with() {
    let program = "def p : {n: nat} -> (n*8).f16 -> (n*8).f16 = fun a =>\n  \
                   a |> asVector 8 |> mapGlobal(0) (fun v => v + v) |> asScalar\n";
    compile_fails(
        program,
        "cuda",
        "vectors of 16-bit floats are only moved (loaded, stored, copied)",
    );
}

#[test]
fn mm_large_loads_every_fragment_whole() {
    // `a`'s fragments as 32-bit loads of neighbouring elements, `b`'s by `ldmatrix ...
    // .trans` from its rotated rows; nothing read element by element and packed
    let program = std::fs::read_to_string(root().join("examples/tensor.rise")).expect("example");
    let (ok, text) = shine_on(
        &program,
        &["compile", "--def", "mmLarge", "--target", "cuda"],
    );
    assert!(ok, "{text}");
    let kernel = &text[text.find("extern \"C\"").expect("a kernel")..];
    assert_eq!(
        kernel.matches("shine_mma_m16n8k16_f16(").count(),
        32,
        "{kernel}"
    );
    // each fragment loaded once for the multiplies that share it: per step of k16, the 8
    // fragments of `b` (`ldmatrix .x2.trans`) and the 2 of `a` (`ldmatrix .x4`, its rows of
    // 8 consecutive k 16 aligned bytes)
    assert_eq!(
        kernel.matches("shine_ldsm_x2_trans(").count(),
        2 * 8,
        "{kernel}"
    );
    assert_eq!(kernel.matches("shine_ldsm_x4(").count(), 2 * 2, "{kernel}");
    assert!(!kernel.contains("*(const unsigned *)&"), "{kernel}");
    assert!(!kernel.contains("shine_pack_f16("), "{kernel}");
    assert!(text.contains("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"));
    assert!(text.contains("ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
    // the fragments of mmWarps come from global memory: no ldmatrix there
    let (ok, text) = shine_on(
        &program,
        &["compile", "--def", "mmWarps", "--target", "cuda"],
    );
    assert!(ok && !text.contains("shine_ldsm_x2_trans("), "{text}");
}

#[test]
fn mm_wide_copies_the_next_step_while_it_computes() {
    let program = std::fs::read_to_string(root().join("examples/tensor.rise")).expect("example");
    let (ok, text) = shine_on(
        &program,
        &["compile", "--def", "mmWide", "--target", "cuda"],
    );
    assert!(ok, "{text}");
    let kernel = &text[text.find("extern \"C\"").expect("a kernel")..];
    // two stages of both tiles: 48 KiB of static shared memory, the tiles 1024-byte aligned
    assert!(
        kernel.contains("__shared__ __align__(1024) uint4 stage18[1024];"),
        "{kernel}"
    );
    assert!(
        kernel.contains("__shared__ __align__(1024) uint4 stage19[2048];"),
        "{kernel}"
    );
    assert!(!text.contains("shine_smem"), "{text}");
    // the tiles' 16-byte copies are asynchronous, one group per step, the next step's
    // issued after the wait and the one barrier of the iteration
    assert!(!kernel.contains("= *(const uint4 *)&"), "{kernel}");
    assert_eq!(kernel.matches("shine_cp_async_16(").count(), 4, "{kernel}");
    assert_eq!(
        kernel.matches("shine_cp_async_commit();").count(),
        2,
        "{kernel}"
    );
    let k_loop = &kernel[kernel
        .find("// reduceSeqPipelined(2)\n")
        .expect("the k loop")..];
    let wait = k_loop.find("shine_cp_async_wait_0();").expect("a wait");
    let barrier = k_loop.find("__syncthreads();").expect("a barrier");
    let prefetch = k_loop.find("shine_cp_async_16(").expect("a prefetch");
    let multiply = k_loop.find("shine_mma_m16n8k16_f16(").expect("a multiply");
    assert!(
        wait < barrier && barrier < prefetch && prefetch < multiply,
        "{k_loop}"
    );
    // no second barrier in the iteration: the next one's wait and barrier order the reuse
    let after = &k_loop[barrier + 1..];
    let end = after
        .find("shine_cp_async_wait_0();")
        .unwrap_or(after.len());
    assert!(!after[..end].contains("__syncthreads();"), "{k_loop}");
    assert!(
        text.contains("cp.async.cg.shared.global [%0], [%1], 16;"),
        "{text}"
    );
}

/// examples/tensor.rise with `mmWide`'s reduction in `stages` stages.
fn mm_wide_in_stages(stages: usize) -> String {
    let program = std::fs::read_to_string(root().join("examples/tensor.rise")).expect("example");
    let wide = program.find("def mmWide").expect("mmWide");
    let (before, after) = program.split_at(wide);
    assert!(after.contains("reduceSeqPipelined(2)"), "{after}");
    format!(
        "{before}{}",
        after.replacen(
            "reduceSeqPipelined(2)",
            &format!("reduceSeqPipelined({stages})"),
            1
        )
    )
}

#[test]
fn mm_wide_in_four_stages_keeps_its_tiles_in_dynamic_shared_memory() {
    let (ok, text) = shine_on(
        &mm_wide_in_stages(4),
        &["compile", "--def", "mmWide", "--target", "cuda"],
    );
    assert!(ok, "{text}");
    // four stages of the 128x32 and 32x256 f16 tiles: 32 + 64 KiB, more than a block's
    // 48 KiB of static shared memory
    assert!(
        text.contains("98304 bytes of dynamic shared memory"),
        "{text}"
    );
    assert!(
        text.contains("extern __shared__ __align__(1024) unsigned char shine_smem[];"),
        "{text}"
    );
    let kernel = &text[text.find("extern \"C\"").expect("a kernel")..];
    assert!(!kernel.contains("__shared__"), "{kernel}");
    assert!(
        kernel.contains("uint4 *__restrict__ stage18 = (uint4 *)shine_smem;"),
        "{kernel}"
    );
    assert!(
        kernel.contains("uint4 *__restrict__ stage19 = (uint4 *)(shine_smem + 32768);"),
        "{kernel}"
    );
    // the same code indexes them: four stages in flight
    assert!(kernel.contains("// reduceSeqPipelined(4)"), "{kernel}");
    assert!(kernel.contains("shine_cp_async_wait_2();"), "{kernel}");
}

#[test]
fn mm_wide_in_four_stages_verifies_on_cuda() {
    if !test_gpu() {
        return;
    }
    let program = mm_wide_in_stages(4);
    // 256x512x640, and odd tile counts
    for (m, n, k) in [(2, 2, 20), (3, 1, 7)] {
        let sizes = [format!("m={m}"), format!("n={n}"), format!("k={k}")];
        let (ok, text) = shine_on(
            &program,
            &[
                "run", "--def", "mmWide", "--target", "cuda", "--nat", &sizes[0], "--nat",
                &sizes[1], "--nat", &sizes[2], "--random", "5", "--verify", "--output", "out.npy",
            ],
        );
        assert!(
            ok && text.contains("verified against the interpreter"),
            "mmWide in 4 stages m={m} n={n} k={k}:\n{text}"
        );
    }
}

/// A reduction over `k` rows of `n` tiles of 64 columns whose step copies its row's tile to
/// local memory first: `copy` is the copy, `step` the reduction primitive.
fn column_sums(copy: &str, step: &str) -> String {
    format!(
        "def p : {{n k: nat}} -> k.(n*64).f32 -> (n*64).f32 =\n  \
         fun a => a |> map (split 64) |> transpose |> mapWorkGroup(0) (fun cols =>\n    \
         cols |> {step} (fun acc row =>\n        \
         toMem local ({copy}) (fun tile =>\n          \
         zip acc tile |> mapLocal(0) (fun p => fst p + snd p)))\n      \
         (generate (fun i => 0.0f) |> mapLocal(0) (fun x => x))\n    \
         |> mapLocal(0) (fun x => x))\n  |> join\n"
    )
}

#[test]
fn pipelined_column_sums_verify_on_cuda() {
    if !test_gpu() {
        return;
    }
    let copy = "row |> mapLocal(0) (fun x => x)";
    for stages in [2, 3, 4] {
        let program = column_sums(copy, &format!("reduceSeqPipelined({stages})"));
        for (n, k) in [(1, 1), (1, 2), (3, 7), (2, 13), (1, 0)] {
            let sizes = [format!("n={n}"), format!("k={k}")];
            let (ok, text) = shine_on(
                &program,
                &[
                    "run", "--def", "p", "--target", "cuda", "--nat", &sizes[0], "--nat",
                    &sizes[1], "--random", "3", "--verify", "--output", "out.npy",
                ],
            );
            assert!(
                ok && text.contains("verified"),
                "{stages} stages {sizes:?}: {text}"
            );
        }
    }
}

#[test]
fn pipelined_copies_are_refused_where_they_cannot_run_ahead() {
    let copy = "row |> mapLocal(0) (fun x => x)";
    let pipelined = column_sums(copy, "reduceSeqPipelined(3)");
    compile_fails(
        &pipelined,
        "opencl",
        "compile for CUDA (--target cuda), or use reduceSeq",
    );
    compile_fails(&pipelined, "c", "compile for OpenCL or CUDA");
    // a copy that computes is not a cp.async
    let computing = column_sums(
        "row |> mapLocal(0) (fun x => x * 2.0f)",
        "reduceSeqPipelined(3)",
    );
    compile_fails(
        &computing,
        "cuda",
        "reads one element or one aligned vector of global memory",
    );
    // a copy that reads the accumulator cannot be issued before the step that computes it
    let reads_acc = column_sums(
        "zip row acc |> mapLocal(0) (fun x => fst x)",
        "reduceSeqPipelined(2)",
    );
    compile_fails(&reads_acc, "cuda", "reads `acc`, so it cannot run ahead");
    // a step that does not begin with a copy to local memory
    let no_copy = "def p : {n k: nat} -> k.(n*64).f32 -> (n*64).f32 =\n  \
        fun a => a |> map (split 64) |> transpose |> mapWorkGroup(0) (fun cols =>\n    \
        cols |> reduceSeqPipelined(2) (fun acc row => zip acc row |> mapLocal(0) (fun p => fst p + snd p))\n      \
        (generate (fun i => 0.0f) |> mapLocal(0) (fun x => x)) |> mapLocal(0) (fun x => x))\n  |> join\n";
    compile_fails(
        no_copy,
        "cuda",
        "does not begin with a copy to local memory",
    );
    // stages other than 2, 3, 4
    compile_fails(
        &column_sums(copy, "reduceSeqPipelined(5)"),
        "cuda",
        "the number of stages of `reduceSeqPipelined` (2, 3 or 4)",
    );
}

/// `shine ARGS` in the repository root: whether it succeeded, and its output.
fn shine_at_root(args: &[&str]) -> (bool, String) {
    let (out, text) = shine_in(repo_root(), args);
    (out.status.success(), text)
}

/// `def` of half.rise compiled for CUDA under `strategy` of fireiron.elv: the kernel.
fn fireiron_kernel(def: &str, strategy: &str) -> String {
    let (ok, text) = shine_at_root(&[
        "compile",
        "examples/half.rise",
        "--def",
        def,
        "--strategy",
        "examples/fireiron.elv",
        "--apply",
        strategy,
        "--target",
        "cuda",
    ]);
    assert!(ok, "{def} under {strategy}:\n{text}");
    text[text.find("extern \"C\"").expect("a kernel")..].to_string()
}

/// The kernel's structure: its comment lines (loops, levels, memories, the multiply), the
/// digits of the names they mention and the launch's sizes left out.
fn structure(kernel: &str) -> Vec<String> {
    kernel
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("// ") && !l.contains("launch:"))
        .map(|l| l.chars().filter(|c| !c.is_ascii_digit()).collect())
        .collect()
}

/// Where a derived kernel keeps the tiles of `a` and `b`: read from global memory by every
/// warp, or copied into local memory by the work-group each k step (two tiles, a barrier
/// after the copies and one before the next step's).
#[derive(Clone, Copy, PartialEq)]
enum Tiles {
    Global,
    Local,
    /// copied into local memory as `Local`, the next step's copies asynchronous (cp.async)
    /// while a step computes: two stages of both tiles, the first step's copies before the
    /// loop and the next one's in it, one barrier before the loop and one per step
    InFlight,
}

/// `strategy` of fireiron.elv derives, for `mmHalf` and `mmBf16`, a kernel with the loops,
/// levels and memories of tensor.rise's hand-written `written`: `mmas` mma.sync calls (per k
/// step), the warps' accumulator in registers (`registers`), the tiles where `tiles` says.
/// The kernels, with the element type, for further checks.
fn assert_derives_the_kernel_of(
    strategy: &str,
    written: &str,
    mmas: usize,
    registers: &str,
    tiles: Tiles,
) -> Vec<(&'static str, String)> {
    let mut derived = Vec::new();
    for (def, t) in [("mmHalf", "f16"), ("mmBf16", "bf16")] {
        let kernel = fireiron_kernel(def, strategy);
        let mma = format!("shine_mma_m16n8k16_{t}(");
        assert_eq!(kernel.matches(&mma).count(), mmas, "{kernel}");
        for want in [
            "// mapWorkGroup(1)",
            "// mapWorkGroup(0)",
            "// mapWarp (one iteration per warp)",
            "// mapLane (one iteration per lane)",
            "// reduceSeq",
            registers,
        ] {
            assert!(kernel.contains(want), "{def}: no `{want}` in\n{kernel}");
        }
        match tiles {
            // the tiles are read from global memory, the accumulator is in registers
            Tiles::Global => {
                assert!(!kernel.contains("__shared__"), "{kernel}");
                assert!(!kernel.contains("__syncthreads"), "{kernel}");
            }
            // the tiles are copied by all threads and read from local memory
            Tiles::Local => {
                assert_eq!(kernel.matches("__shared__").count(), 2, "{kernel}");
                assert_eq!(kernel.matches(" (local)").count(), 2, "{kernel}");
                assert_eq!(kernel.matches("__syncthreads();").count(), 2, "{kernel}");
                assert_eq!(kernel.matches("// mapLocal(0)").count(), 2, "{kernel}");
            }
            Tiles::InFlight => {
                assert_eq!(kernel.matches("__shared__").count(), 2, "{kernel}");
                assert_eq!(kernel.matches(" (local)").count(), 2, "{kernel}");
                assert_eq!(kernel.matches("__syncthreads();").count(), 2, "{kernel}");
                assert_eq!(kernel.matches("// mapLocal(0)").count(), 4, "{kernel}");
                assert_eq!(kernel.matches("shine_cp_async_16(").count(), 4, "{kernel}");
                assert_eq!(
                    kernel.matches("shine_cp_async_commit();").count(),
                    2,
                    "{kernel}"
                );
                assert!(!kernel.contains("= *(const uint4 *)&"), "{kernel}");
            }
        }
        let (ok, text) = shine_on(
            &tensor_example_at(t),
            &["compile", "--def", written, "--target", "cuda"],
        );
        assert!(ok, "{text}");
        let written = &text[text.find("extern \"C\"").expect("a kernel")..];
        assert_eq!(
            structure(&kernel),
            structure(written),
            "{kernel}\n{written}"
        );
        derived.push((t, kernel));
    }
    derived
}

#[test]
fn mma_warps_derives_the_kernel_of_mm_warps() {
    assert_derives_the_kernel_of("mmaWarps", "mmWarps", 1, "4.f32 (private)", Tiles::Global);
}

/// `mmaWarpTiles`' kernel is `mmWarpTiles`': 2x4 fragments per warp, eight mma.sync per k
/// step (two unrolled loops), 2.4.4 f32 of the accumulator in each lane's registers.
#[test]
fn mma_warp_tiles_derives_the_kernel_of_mm_warp_tiles() {
    assert_derives_the_kernel_of(
        "mmaWarpTiles",
        "mmWarpTiles",
        8,
        "2.4.4.f32 (private)",
        Tiles::Global,
    );
}

/// `mmaShared`'s kernel is `mmShared`': each k step of 32 the work-group's 128 threads copy a
/// 64x32 tile of `a` and a 32x64 tile of `b` into local memory, and every warp reads its
/// fragments there, two steps of 16 with 2x4 fragments each (sixteen mma.sync per step);
/// the warps' accumulators (4.32.2.4.4) are the work-group's reduction's, 2.4.4 f32 in each
/// lane's registers.
#[test]
fn mma_shared_derives_the_kernel_of_mm_shared() {
    let derived = assert_derives_the_kernel_of(
        "mmaShared",
        "mmShared",
        16,
        "the part of 4.32.2.4.4.f32 of this work-item",
        Tiles::Local,
    );
    let kernel = &derived[0].1;
    for want in [
        "2.4.4.f32 (private)",
        "64.32.f16 (local)",
        "32.64.f16 (local)",
    ] {
        assert!(kernel.contains(want), "no `{want}` in\n{kernel}");
    }
}

/// `mmaLarge`'s kernel is `mmLarge`': each k step of 32 the work-group's 256 threads copy a
/// 128x32 tile of `a` and a 32x128 tile of `b` into local memory 16 bytes at a time, `a`'s
/// in chunks of 8 consecutive k (`4.128` vectors), `b`'s rows rotated (`512` vectors), and
/// every warp loads its fragments there whole: `b`'s by `ldmatrix .trans`, `a`'s by
/// `ldmatrix`, none element by element; two steps of 16 with 2x8 fragments each (32
/// mma.sync per step), the warps' accumulators 8.32.2.8.4 in registers.
#[test]
fn mma_large_derives_the_kernel_of_mm_large() {
    let derived = assert_derives_the_kernel_of(
        "mmaLarge",
        "mmLarge",
        32,
        "the part of 8.32.2.8.4.f32 of this work-item",
        Tiles::Local,
    );
    for (t, kernel) in &derived {
        assert_loads_whole(kernel, t, 2 * 8, 2 * 2);
        for want in [
            "2.8.4.f32 (private)",
            &format!("4.128.vec[{t}, 8] (local)"),
            &format!("512.vec[{t}, 8] (local)"),
        ] {
            assert!(kernel.contains(want), "no `{want}` in\n{kernel}");
        }
        // the copies move 16 bytes each, from global to local memory
        assert_eq!(
            kernel.matches("] = *(const uint4 *)&a[").count(),
            1,
            "{kernel}"
        );
        assert_eq!(
            kernel.matches("] = *(const uint4 *)&b[").count(),
            1,
            "{kernel}"
        );
    }
}

/// `mmaWide`'s kernel is `mmWide`': each k step of 32 the work-group's 256 threads copy a
/// 128x32 tile of `a` and a 32x256 tile of `b` into local memory in `mmLarge`'s layouts (`b`'s
/// rows of 32 vectors rotated), the next step's copies asynchronous (`cp.async`, 16 bytes)
/// while the step computes, in two stages (`2.4.128` and `2.1024` vectors, 48 KiB); the
/// warps load every fragment whole, two steps of 16 with 4x8 fragments each (64 mma.sync
/// per step), the accumulators 8.32.4.8.4 in registers.
#[test]
fn mma_wide_derives_the_kernel_of_mm_wide() {
    let derived = assert_derives_the_kernel_of(
        "mmaWide",
        "mmWide",
        64,
        "the part of 8.32.4.8.4.f32 of this work-item",
        Tiles::InFlight,
    );
    for (t, kernel) in &derived {
        assert_loads_whole(kernel, t, 2 * 8, 2 * 4);
        for want in [
            "4.8.4.f32 (private)",
            &format!("2.4.128.vec[{t}, 8] (local)"),
            &format!("2.1024.vec[{t}, 8] (local)"),
            "__shared__ __align__(1024) uint4 stage",
            "// reduceSeqPipelined(2)\n",
        ] {
            assert!(kernel.contains(want), "no `{want}` in\n{kernel}");
        }
        assert!(!kernel.contains("shine_smem"), "{kernel}");
    }
}

/// A kernel whose warps load every fragment whole: `b_loads` fragments of `b` by `ldmatrix
/// .trans` and `a_loads` of `a` by `ldmatrix .x4` per k step, nothing element by element and
/// packed, no 32-bit loads (`t` the element type).
fn assert_loads_whole(kernel: &str, t: &str, b_loads: usize, a_loads: usize) {
    assert_eq!(
        kernel.matches("shine_ldsm_x2_trans(").count(),
        b_loads,
        "{kernel}"
    );
    assert_eq!(
        kernel.matches("shine_ldsm_x4(").count(),
        a_loads,
        "{kernel}"
    );
    assert!(!kernel.contains("*(const unsigned *)&"), "{kernel}");
    assert!(!kernel.contains(&format!("shine_pack_{t}(")), "{kernel}");
}

/// `mmHalf` run under `strategy` of fireiron.elv on CUDA at `sizes` (m, n, k) with
/// `--verify`: whether it succeeded, and its output.
fn run_fireiron(def: &str, strategy: &str, target: &str, sizes: [&str; 3]) -> (bool, String) {
    shine_at_root(&[
        "run",
        "examples/half.rise",
        "--def",
        def,
        "--strategy",
        "examples/fireiron.elv",
        "--apply",
        strategy,
        "--target",
        target,
        "--nat",
        sizes[0],
        "--nat",
        sizes[1],
        "--nat",
        sizes[2],
        "--random",
        "5",
        "--verify",
    ])
}

#[test]
fn mma_warps_refuses_sizes_its_tiles_do_not_divide() {
    for (sizes, want) in [
        (["m=40", "n=32", "k=16"], "16 must divide m, but m = 40"),
        (["m=16", "n=48", "k=16"], "32 must divide n, but n = 48"),
        (["m=16", "n=32", "k=24"], "16 must divide k, but k = 24"),
    ] {
        let (ok, text) = run_fireiron("mmHalf", "mmaWarps", "cuda", sizes);
        assert!(!ok && text.contains(want), "{sizes:?}:\n{text}");
    }
}

#[test]
fn mma_warp_tiles_refuses_sizes_its_tiles_do_not_divide() {
    for (sizes, want) in [
        (["m=96", "n=64", "k=16"], "64 must divide m, but m = 96"),
        (["m=64", "n=32", "k=16"], "64 must divide n, but n = 32"),
        (["m=64", "n=64", "k=40"], "16 must divide k, but k = 40"),
    ] {
        let (ok, text) = run_fireiron("mmHalf", "mmaWarpTiles", "cuda", sizes);
        assert!(!ok && text.contains(want), "{sizes:?}:\n{text}");
    }
}

#[test]
fn mma_shared_refuses_sizes_its_tiles_do_not_divide() {
    for (sizes, want) in [
        (["m=96", "n=64", "k=32"], "64 must divide m, but m = 96"),
        (["m=64", "n=160", "k=32"], "64 must divide n, but n = 160"),
        (["m=64", "n=64", "k=48"], "32 must divide k, but k = 48"),
    ] {
        for def in ["mmHalf", "mmBf16"] {
            let (ok, text) = run_fireiron(def, "mmaShared", "cuda", sizes);
            assert!(!ok && text.contains(want), "{def} {sizes:?}:\n{text}");
        }
    }
}

#[test]
fn mma_large_refuses_sizes_its_tiles_do_not_divide() {
    for (sizes, want) in [
        (["m=192", "n=128", "k=32"], "128 must divide m, but m = 192"),
        (["m=128", "n=64", "k=32"], "128 must divide n, but n = 64"),
        (["m=128", "n=128", "k=48"], "32 must divide k, but k = 48"),
    ] {
        for def in ["mmHalf", "mmBf16"] {
            let (ok, text) = run_fireiron(def, "mmaLarge", "cuda", sizes);
            assert!(!ok && text.contains(want), "{def} {sizes:?}:\n{text}");
        }
    }
}

#[test]
fn mma_wide_refuses_sizes_its_tiles_do_not_divide() {
    for (sizes, want) in [
        (["m=192", "n=256", "k=32"], "128 must divide m, but m = 192"),
        (["m=128", "n=128", "k=32"], "256 must divide n, but n = 128"),
        (["m=128", "n=256", "k=48"], "32 must divide k, but k = 48"),
    ] {
        for def in ["mmHalf", "mmBf16"] {
            let (ok, text) = run_fireiron(def, "mmaWide", "cuda", sizes);
            assert!(!ok && text.contains(want), "{def} {sizes:?}:\n{text}");
        }
    }
}

#[test]
fn warp_tiles_the_tensor_cores_cannot_multiply_are_refused() {
    let (ok, text) = shine_at_root(&[
        "compile",
        "examples/half.rise",
        "--def",
        "mmHalf",
        "--strategy",
        "examples/fireiron.elv",
        "--apply",
        "warpMma(16, 32, 16, 16)",
        "--target",
        "cuda",
    ]);
    assert!(
        !ok && text.contains("mmaTile: the tile accumulate is 16x16 with 16 products per element"),
        "{text}"
    );
}

/// `strategy` of fireiron.elv verified on CUDA (with `SHINE_TEST_GPU=1`) for `mmHalf` and
/// `mmBf16` at 1,1,1 / 3,1,5 / 2,3,7 tiles of `tile` (m, n, k).
fn assert_verifies_on_cuda(strategy: &str, tile: (i64, i64, i64)) {
    for target in targets().into_iter().filter(|t| *t == "cuda") {
        for def in ["mmHalf", "mmBf16"] {
            for (tm, tn, tk) in [(1, 1, 1), (3, 1, 5), (2, 3, 7)] {
                let sizes = [
                    format!("m={}", tile.0 * tm),
                    format!("n={}", tile.1 * tn),
                    format!("k={}", tile.2 * tk),
                ];
                let sizes = [sizes[0].as_str(), sizes[1].as_str(), sizes[2].as_str()];
                let (ok, text) = run_fireiron(def, strategy, target, sizes);
                assert!(
                    ok && text.contains("verified against the interpreter"),
                    "{def} {sizes:?}:\n{text}"
                );
            }
        }
    }
}

#[test]
fn mma_warps_verifies_on_cuda() {
    assert_verifies_on_cuda("mmaWarps", (16, 32, 16));
}

#[test]
fn mma_warp_tiles_verifies_on_cuda() {
    assert_verifies_on_cuda("mmaWarpTiles", (64, 64, 16));
}

#[test]
fn mma_shared_verifies_on_cuda() {
    assert_verifies_on_cuda("mmaShared", (64, 64, 32));
}

#[test]
fn mma_large_verifies_on_cuda() {
    assert_verifies_on_cuda("mmaLarge", (128, 128, 32));
}

#[test]
fn mma_wide_verifies_on_cuda() {
    assert_verifies_on_cuda("mmaWide", (128, 256, 32));
}
