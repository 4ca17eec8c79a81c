//! The default schedules compute a value once (issue 28 item 3): the normalizations of
//! examples/norms.rise (softmax, layer norm, RMS norm, cross-entropy), written with a row's
//! maximum, sum or mean inside the function applied to each element, compile without
//! --strategy on C, OpenMP and OpenCL (CUDA on the GPU machine), match the interpreter at
//! 1, 7, 13 and 1000 columns (see [`wide_on`]), and run in time linear in the row: no loop over the row
//! inside another (the row's reductions bound once per row), and softmax's `exp` computed
//! once per element (its result stored, read by the sum and by the division).
//!
//! Stencils (issue 28 item 3): under the defaults of C and OpenMP the padded array a
//! stencil reads is copied once with its border and read at plain indices, and a reduction
//! over a constant window of at most 32 elements is unrolled, its weights constants
//! (examples/stencil2d.rise's `gaussian5u8`, the 5x5 blur of an 8-bit image); every stencil of
//! examples/stencil2d.rise and jacobi1d.rise matches the interpreter at 1, 7, 13 and a large
//! odd size on every target.
//!
//! The GPU defaults (issue 28): a matrix product (mm, mmHalf, mmBf16) by 128 x 128 tiles
//! through local memory at any size (`tiledProducts`: rows and columns padded by repeating
//! the last, k padded with zeros), a product whose reduction zeros could change (a
//! `max`-plus product, a dot with an `exp` inside) by the next default, its rows and columns
//! over two dimensions of global work-items (the columns over dimension 0); softmax's, layer
//! norm's and RMS norm's rows each reduced by a work-group (OpenCL) or a warp (CUDA); each
//! matches the interpreter at 1, 7, 13, 33 and 1031 in each dimension (the products also at
//! 67, at a prime above 100 in each dimension and at non-square shapes) on OpenCL, and on
//! CUDA with `SHINE_TEST_GPU=1`.
//!
//! The CPU defaults (issues 28 and 30): a matrix product (mm, vggGemm) as BLIS computes one
//! (`blisProducts`, `blisProductsPar` on OpenMP: packed panels of b and slivers of a, a 6 x 64
//! block of the result in registers), at any size (at 1, 7, 13, 67 and a prime above 100 in
//! each dimension, non-square), any reduction (a `max`-plus product, a dot with an `exp`
//! inside: k keeps its order); products of 16-bit floats passed over to the next default.
//!
//! Without any OpenCL platform the OpenCL runs FAIL, as the runtime's tests do; set
//! `SHINE_SKIP_OPENCL=1` to skip them.

use std::path::Path;

mod support;
use support::{shine_in, targets};

const PROGRAM: &str = "examples/norms.rise";

/// The normalizations of examples/norms.rise.
const NORMALIZATIONS: &[&str] = &["softmax", "layerNorm", "rmsNorm", "crossEntropy"];

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// `shine run` of `def` without --strategy on `target`, `m` rows of `n` columns, verified
/// against the interpreter; the error when it is not.
fn run_default(def: &str, target: &str, m: i64, n: i64) -> Result<(), String> {
    run_verified(PROGRAM, def, target, &[("m", m), ("n", n)], "5")
}

/// `shine run PROGRAM --def DEF` without --strategy on `target` at the sizes `sizes` (name,
/// value), on random inputs of `seed`, verified against the interpreter; the error when it
/// is not.
fn run_verified(
    program: &str,
    def: &str,
    target: &str,
    sizes: &[(&str, i64)],
    seed: &str,
) -> Result<(), String> {
    let mut args: Vec<String> = ["run", program, "--def", def, "--target", target]
        .map(String::from)
        .to_vec();
    for (name, value) in sizes {
        args.extend(["--nat".to_string(), format!("{name}={value}")]);
    }
    args.extend(["--random", seed, "--verify", "--json"].map(String::from));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, text) = shine_in(root(), &refs);
    if out.status.success() && text.contains("\"verified\":true") {
        Ok(())
    } else {
        Err(format!(
            "{program} {def} --target {target} {sizes:?}: {text}"
        ))
    }
}

/// The code `shine compile` generates for `def` without --strategy.
fn compiled(def: &str, target: &str) -> String {
    let (out, text) = shine_in(
        root(),
        &["compile", PROGRAM, "--def", def, "--target", target],
    );
    assert!(out.status.success(), "{def} --target {target}: {text}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The deepest nesting of `for` loops in C-like code (braces counted per loop).
fn loop_depth(code: &str) -> usize {
    let (mut open, mut loops, mut deepest) = (Vec::new(), 0usize, 0usize);
    for line in code.lines().map(str::trim) {
        if line.starts_with("for (") {
            loops += 1;
            deepest = deepest.max(loops);
            open.push(true);
        } else if line.ends_with('{') {
            open.push(false);
        }
        if line.starts_with('}') && open.pop() == Some(true) {
            loops -= 1;
        }
    }
    deepest
}

/// Whether `def` is checked at 1000 columns on `target`. The interpreter computes what is
/// written inside a mapped function once per element, so it needs time quadratic in the row
/// for these programs (a minute for layer norm's 1000 columns in a debug build): every
/// normalization runs at 1000 columns on C, softmax and RMS norm on every target.
fn wide_on(def: &str, target: &str) -> bool {
    target == "c" || matches!(def, "softmax" | "rmsNorm")
}

#[test]
fn every_normalization_compiles_under_the_default_of_every_target_and_matches_the_interpreter() {
    let mut failures = Vec::new();
    for def in NORMALIZATIONS {
        for target in targets() {
            let mut shapes = vec![(1, 1), (7, 7), (13, 13)];
            if wide_on(def, target) {
                shapes.push((1, 1000));
            }
            for (m, n) in shapes {
                if let Err(e) = run_default(def, target, m, n) {
                    failures.push(e);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_normalization_reads_its_rows_in_linear_time() {
    for def in NORMALIZATIONS {
        for target in ["c", "openmp", "opencl"] {
            let code = compiled(def, target);
            // C: the loop over the rows, one loop over the columns inside; OpenCL: a
            // work-group per row, its work-items striding over the row (cross-entropy,
            // which the row reductions do not compile: a work-item per row)
            let most = match (target, *def) {
                ("opencl", "crossEntropy") => 1,
                ("opencl", _) => 3,
                _ => 2,
            };
            assert_eq!(
                loop_depth(&code),
                most,
                "{def} --target {target}: a loop over a row inside another\n{code}"
            );
        }
    }
}

#[test]
fn softmax_computes_exp_once_per_element_and_stores_it() {
    for target in ["c", "openmp"] {
        let code = compiled("softmax", target);
        // the kernel, after the prelude that defines shine's `exp` (`shine_expf`)
        let kernel = &code[code.find("void softmax(").expect("the kernel")..];
        assert_eq!(kernel.matches("expf(").count(), 1, "{target}:\n{code}");
        let stored = kernel
            .lines()
            .any(|l| l.trim_start().starts_with("mem") && l.contains("= shine_expf("));
        assert!(stored, "{target}: exp is written to a buffer\n{code}");
    }
}

#[test]
fn explain_says_what_the_default_computed_once_stored_and_left_sequential() {
    let (out, text) = shine_in(
        root(),
        &[
            "compile",
            PROGRAM,
            "--def",
            "layerNorm",
            "--target",
            "c",
            "--explain",
        ],
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("storeEveryStage"), "{text}");
    assert!(text.contains("computed once: 2 value(s)"), "{text}");
    assert!(text.contains("sequential: 2 reduction(s)"), "{text}");
    let (out, text) = shine_in(
        root(),
        &[
            "compile",
            PROGRAM,
            "--def",
            "softmax",
            "--target",
            "openmp",
            "--explain",
        ],
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("stored: 1 array(s)"), "{text}");
    assert!(text.contains("inside a parallel loop"), "{text}");
    assert!(text.contains("`exp`"), "{text}");
}

/// `shine run PROGRAM --def DEF` without --strategy on `target`, every size named in `sizes`
/// at `size`, verified against the interpreter; the error when it is not.
fn run_default_at(
    program: &str,
    def: &str,
    target: &str,
    sizes: &[&str],
    size: i64,
) -> Result<(), String> {
    let sizes: Vec<(&str, i64)> = sizes.iter().map(|s| (*s, size)).collect();
    run_verified(program, def, target, &sizes, "9")
}

/// The stencils: (program, definition, its sizes).
const STENCILS: &[(&str, &str, &[&str])] = &[
    ("examples/stencil2d.rise", "jacobi2d5", &["n", "m"]),
    ("examples/stencil2d.rise", "jacobi2d9", &["n", "m"]),
    ("examples/stencil2d.rise", "gaussian5", &["n", "m"]),
    ("examples/stencil2d.rise", "gaussian5u8", &["n", "m"]),
    ("examples/jacobi1d.rise", "jacobi3", &["n"]),
];

#[test]
fn every_stencil_matches_the_interpreter_under_the_default_at_small_and_large_odd_sizes() {
    let mut failures = Vec::new();
    for (program, def, sizes) in STENCILS {
        for target in targets() {
            let large = if sizes.len() == 1 { 1001 } else { 97 };
            for size in [1, 7, 13, large] {
                if let Err(e) = run_default_at(program, def, target, sizes, size) {
                    failures.push(e);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The code `shine compile` generates for `def` of `program` without --strategy.
fn compiled_in(program: &str, def: &str, target: &str) -> String {
    let (out, text) = shine_in(
        root(),
        &["compile", program, "--def", def, "--target", target],
    );
    assert!(out.status.success(), "{def} --target {target}: {text}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_blur_reads_its_copied_input_at_plain_indices_its_window_unrolled_with_constant_weights() {
    for target in ["c", "openmp"] {
        let code = compiled_in("examples/stencil2d.rise", "gaussian5u8", target);
        let window = code
            .split("(unrolled: 25 iterations)")
            .nth(1)
            .and_then(|rest| rest.split("output[").next())
            .unwrap_or_else(|| panic!("{target}: no unrolled window\n{code}"));
        // 25 reads of the copy, each times a constant weight: no clamp, no select
        assert_eq!(window.matches("mem0[").count(), 25, "{target}:\n{code}");
        assert!(
            !window.contains('?'),
            "{target}: a clamp or a select per read\n{code}"
        );
        assert!(
            window.contains("(uint16_t)36)"),
            "{target}: the centre weight\n{code}"
        );
        // the copy clamps once per element of the padded array
        assert!(
            code.contains("mem0[") && code.matches(" ? ").count() > 0,
            "{code}"
        );
        let parallel = code.matches("#pragma omp parallel for").count();
        assert_eq!(
            parallel,
            if target == "openmp" { 2 } else { 0 },
            "{target}:\n{code}"
        );
    }
    // GPUs keep the pad a view, the window still unrolled
    let code = compiled_in("examples/stencil2d.rise", "gaussian5u8", "opencl");
    assert!(code.contains("(unrolled: 25 iterations)"), "{code}");
    assert!(!code.contains("mem0"), "{code}");
}

#[test]
fn explain_names_the_copied_stencil_input_and_the_unrolled_window() {
    let (out, text) = shine_in(
        root(),
        &[
            "compile",
            "examples/stencil2d.rise",
            "--def",
            "gaussian5u8",
            "--target",
            "openmp",
            "--explain",
        ],
    );
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("stencil input: 1 padded array(s) copied with their border"),
        "{text}"
    );
    assert!(text.contains("((n+4).(m+4).u8)"), "{text}");
    assert!(text.contains("unrolled: 1 reduction(s)"), "{text}");
    assert!(!text.contains("border:"), "{text}");
    // a reduction over a window of 49 elements stays a loop
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("wide.rise");
    std::fs::write(
        &program,
        "def blur7 : {n m: nat} -> n.m.f32 -> n.m.f32 = fun img => img |> padClamp2 3 3 |> slide2 7 1 |> map2 (fun w => reduce add 0.0f (join w))",
    )
    .unwrap();
    let program = program.display().to_string();
    let (out, text) = shine_in(
        root(),
        &[
            "compile",
            &program,
            "--def",
            "blur7",
            "--target",
            "c",
            "--explain",
        ],
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("stencil input: 1 padded array(s)"), "{text}");
    assert!(!text.contains("unrolled:"), "{text}");
    assert!(text.contains("sequential: 1 reduction(s)"), "{text}");
}

/// The shapes of the GPU defaults' runs: 1, 7, 13 and 33 in every dimension, and a prime
/// above 1000 in one dimension at a time (the others small: the debug interpreter computes
/// the reference).
fn shapes(dims: usize) -> Vec<Vec<i64>> {
    let mut all: Vec<Vec<i64>> = [1, 7, 13, 33].iter().map(|&s| vec![s; dims]).collect();
    for wide in 0..dims {
        all.push(
            (0..dims)
                .map(|d| if d == wide { 1031 } else { 3 })
                .collect(),
        );
    }
    all
}

#[test]
fn matmul_under_the_gpu_defaults_is_tiled_through_local_memory() {
    for (program, def) in [("examples/mm.rise", "mm"), ("examples/half.rise", "mmHalf")] {
        let code = compiled_in(program, def, "opencl");
        // a work-group per 128 x 128 tile (its rows over dimension 1), 16 x 16 work-items each
        // with an 8 x 8 block, the tiles of a and b of every step of k in local memory
        assert!(
            code.contains("work-groups (blocks) of 16 x 16 work-items"),
            "{def}\n{code}"
        );
        assert!(
            code.contains("wg1 = get_group_id(1); wg1 < (m + 127) / 128;"),
            "{def}\n{code}"
        );
        assert!(
            code.contains("wg0 = get_group_id(0); wg0 < (n + 127) / 128;"),
            "{def}\n{code}"
        );
        assert!(code.contains("get_local_id(1)"), "{def}\n{code}");
        let tiles = code
            .lines()
            .filter(|l| l.trim_start().starts_with("local "))
            .count();
        assert_eq!(tiles, 2, "{def}\n{code}");
        assert!(
            code.contains("barrier(CLK_LOCAL_MEM_FENCE)"),
            "{def}\n{code}"
        );
        // k padded with zeros: a read past k is a zero
        assert!(code.contains("< k ? a["), "{def}\n{code}");
        let code = compiled_in(program, def, "cuda");
        assert!(code.contains("__shared__"), "{def}\n{code}");
        assert!(code.contains("__syncthreads()"), "{def}\n{code}");
        assert!(code.contains("wg1 = blockIdx.y;"), "{def}\n{code}");
    }
}

/// The shapes of the matrix products' runs (m, n, k): 1, 7, 13, 33 and 67 in combinations
/// (square, below a tile, non-square), a prime above 100 in each dimension, and primes above
/// 128 in two (across the 128 x 128 tiles).
const PRODUCT_SHAPES: &[[i64; 3]] = &[
    [1, 1, 1],
    [7, 13, 33],
    [67, 1, 13],
    [33, 67, 7],
    [13, 7, 67],
    [67, 67, 67],
    [101, 7, 13],
    [7, 103, 13],
    [13, 7, 107],
    [131, 139, 11],
];

#[test]
fn matmul_and_mixed_precision_products_under_the_gpu_defaults_match_the_interpreter_at_any_size() {
    let mut failures = Vec::new();
    for target in support::gpu_targets() {
        // PoCL has no `half`: mmHalf on CUDA only
        let mut defs = vec![("examples/mm.rise", "mm"), ("examples/half.rise", "mmBf16")];
        if target == "cuda" {
            defs.push(("examples/half.rise", "mmHalf"));
        }
        for (program, def) in defs {
            for [m, n, k] in PRODUCT_SHAPES {
                let sizes = [("m", *m), ("n", *n), ("k", *k)];
                if let Err(e) = run_verified(program, def, target, &sizes, "13") {
                    failures.push(e);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Matrix products whose reduction the products of zero padding could change: a
/// `max`-plus product (a maximum from `-inf`) and a dot with an `exp` inside.
const NOT_SUMS_OF_PRODUCTS: &str = "
def maxPlus : {m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32 =
  fun a b => a |> map (fun row => transpose b |> map (fun col =>
    zip row col |> map (fun p => fst p + snd p) |> reduce max (-inff)))

def expDot : {m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32 =
  fun a b => a |> map (fun row => transpose b |> map (fun col =>
    zip row col |> map (fun p => exp (fst p) * snd p) |> reduce add 0.0f))
";

#[test]
fn products_that_zeros_could_change_are_not_padded_and_match_the_interpreter() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("products.rise");
    std::fs::write(&program, NOT_SUMS_OF_PRODUCTS).unwrap();
    let program = program.display().to_string();
    let mut failures = Vec::new();
    for def in ["maxPlus", "expDot"] {
        for target in ["opencl", "cuda"] {
            let text = explained(&program, def, target);
            assert!(
                text.contains("strategy: `storeEveryStageGpu`"),
                "{def} --target {target}\n{text}"
            );
            assert!(
                text.contains("passed over: `tiledProducts` does not compile it")
                    && text.contains("padDotZeros(8)"),
                "{def} --target {target}\n{text}"
            );
            // its rows and columns over two dimensions of global work-items
            assert!(
                text.contains("2-D: 1 loop nest(s)") && !text.contains("tiled:"),
                "{def} --target {target}\n{text}"
            );
        }
        for target in support::gpu_targets() {
            for [m, n, k] in [[1, 1, 1], [7, 13, 33], [67, 33, 13]] {
                let sizes = [("m", m), ("n", n), ("k", k)];
                if let Err(e) = run_verified(&program, def, target, &sizes, "13") {
                    failures.push(e);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn matmul_under_the_gpu_defaults_matches_the_interpreter_at_odd_and_prime_sizes() {
    let mut failures = Vec::new();
    for target in support::gpu_targets() {
        for shape in shapes(3) {
            let sizes = [("m", shape[0]), ("n", shape[1]), ("k", shape[2])];
            if let Err(e) = run_verified("examples/mm.rise", "mm", target, &sizes, "11") {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_row_normalizations_under_the_gpu_defaults_reduce_each_row_by_a_work_group_or_a_warp() {
    for def in ["softmax", "layerNorm", "rmsNorm"] {
        let code = compiled(def, "opencl");
        // a work-group per row, its 64 work-items striding over the row, a tree in local
        // memory
        assert!(code.contains("get_group_id(0); wg0 < m;"), "{def}\n{code}");
        assert!(
            code.contains("get_local_id(0); lid0 < 64;"),
            "{def}\n{code}"
        );
        assert!(
            code.contains("barrier(CLK_LOCAL_MEM_FENCE)"),
            "{def}\n{code}"
        );
        let code = compiled(def, "cuda");
        // a warp per row (a block of 32 threads), its lanes striding by 32, shuffles
        assert!(code.contains("blocks) of 32 work-items"), "{def}\n{code}");
        assert!(
            code.contains("__shfl_xor_sync(0xffffffffu"),
            "{def}\n{code}"
        );
        assert!(!code.contains("__syncthreads"), "{def}\n{code}");
    }
}

#[test]
fn the_row_normalizations_under_the_gpu_defaults_match_the_interpreter_at_odd_and_prime_sizes() {
    let mut failures = Vec::new();
    for def in ["softmax", "layerNorm", "rmsNorm"] {
        for target in support::gpu_targets() {
            for shape in shapes(2) {
                // layer norm's variance, written inside the mapped function, is recomputed
                // per element by the interpreter: 1031 columns take minutes to check
                if def == "layerNorm" && shape[1] > 100 {
                    continue;
                }
                let sizes = [("m", shape[0]), ("n", shape[1])];
                if let Err(e) = run_verified(PROGRAM, def, target, &sizes, "11") {
                    failures.push(e);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What `shine compile PROGRAM --def DEF --target TARGET --explain` prints (it must succeed).
fn explained(program: &str, def: &str, target: &str) -> String {
    let (out, text) = shine_in(
        root(),
        &[
            "compile",
            program,
            "--def",
            def,
            "--target",
            target,
            "--explain",
        ],
    );
    assert!(out.status.success(), "{text}");
    text
}

#[test]
fn explain_names_the_gpu_defaults_two_dimensions_row_reductions_and_what_was_passed_over() {
    let text = explained("examples/mm.rise", "mm", "cuda");
    assert!(text.contains("strategy: `tiledProducts`"), "{text}");
    assert!(text.contains("tiled: 1 loop nest(s)"), "{text}");
    // the copy out of the padded result
    assert!(text.contains("2-D: 1 loop nest(s)"), "{text}");

    let text = explained(PROGRAM, "softmax", "opencl");
    assert!(text.contains("`rowReductionsByWorkGroups`"), "{text}");
    assert!(
        text.contains("rows: 1 loop(s) with a work-group per row"),
        "{text}"
    );
    let text = explained(PROGRAM, "softmax", "cuda");
    assert!(text.contains("`rowReductionsByWarps`"), "{text}");
    assert!(
        text.contains("rows: 1 loop(s) with a warp per row"),
        "{text}"
    );
    // cross-entropy's row ends in a reduction of its own: the general default, and why
    let text = explained(PROGRAM, "crossEntropy", "opencl");
    assert!(text.contains("`storeEveryStageGpu`"), "{text}");
    assert!(
        text.contains("passed over: `rowReductionsByWorkGroups` does not compile it"),
        "{text}"
    );
}

#[test]
fn mv_under_the_gpu_defaults_reduces_each_row_by_a_work_group_or_a_warp_and_matches_the_interpreter(
) {
    let code = compiled_in("examples/mv.rise", "mv", "opencl");
    // a work-group per row, its work-items reading the row's elements 64 apart
    assert!(code.contains("get_group_id(0); wg0 < n;"), "{code}");
    assert!(code.contains("lid0 = get_local_id(0)"), "{code}");
    assert!(code.contains(" * 64 < m ?"), "{code}");
    let code = compiled_in("examples/mv.rise", "mv", "cuda");
    assert!(code.contains("__shfl_xor_sync(0xffffffffu"), "{code}");
    let mut failures = Vec::new();
    for target in support::gpu_targets() {
        for shape in shapes(2) {
            let sizes = [("n", shape[0]), ("m", shape[1])];
            if let Err(e) = run_verified("examples/mv.rise", "mv", target, &sizes, "11") {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn columns_and_short_windows_keep_a_work_item_each_under_the_gpu_defaults() {
    // mvT's columns (a transpose: one work-item per column already reads coalesced) and a
    // stencil's 3-element windows are no long rows
    for (program, def) in [
        ("examples/mv.rise", "mvT"),
        ("examples/jacobi1d.rise", "jacobi3"),
    ] {
        for target in ["opencl", "cuda"] {
            let text = explained(program, def, target);
            assert!(
                text.contains("strategy: `storeEveryStageGpu`"),
                "{def} --target {target}\n{text}"
            );
            assert!(!text.contains("rows:"), "{def} --target {target}\n{text}");
        }
    }
}

/// The C code of a matrix product under the CPU defaults (`blisProducts`): b packed into
/// panels of 64 columns, a into slivers of 6 rows, and the 6 x 64 block of the result updated
/// by 24 vector statements per step of k (6 rows of 4 vectors of 16).
fn assert_blocked_from_packed_panels(what: &str, code: &str) {
    // loops over the panels (the pack's and the computation's) and over the slivers
    assert!(
        code.matches(" + 63) / 64;").count() >= 2,
        "{what}: panels\n{code}"
    );
    assert!(
        code.matches(" + 5) / 6;").count() >= 2,
        "{what}: slivers\n{code}"
    );
    let updates = code
        .lines()
        .filter(|l| l.trim_start().starts_with("*(float16_u *)&acc"))
        .count();
    assert_eq!(updates, 24, "{what}: the register block\n{code}");
}

#[test]
fn matmul_under_the_cpu_defaults_is_blocked_in_registers_from_packed_panels() {
    for (program, def) in [("examples/mm.rise", "mm"), ("examples/vgg.rise", "vggGemm")] {
        for target in ["c", "openmp"] {
            let code = compiled_in(program, def, target);
            assert_blocked_from_packed_panels(&format!("{def} --target {target}"), &code);
            // the two packs and the loop over the panels in parallel with OpenMP
            let parallel = code.matches("#pragma omp parallel for").count();
            let expected = if target == "openmp" { 3 } else { 0 };
            assert_eq!(parallel, expected, "{def} --target {target}\n{code}");
        }
    }
}

/// The shapes of the CPU products' runs (m, n, k): one element, sizes below and across a
/// block of 6 x 64 (non-square), and a prime above 100 in each dimension.
const CPU_PRODUCT_SHAPES: &[[i64; 3]] = &[
    [1, 1, 1],
    [7, 13, 33],
    [67, 1, 13],
    [13, 7, 67],
    [101, 7, 13],
    [7, 103, 13],
    [13, 7, 107],
];

#[test]
fn matmul_under_the_cpu_defaults_matches_the_interpreter_at_any_size() {
    let mut failures = Vec::new();
    for target in ["c", "openmp"] {
        for [m, n, k] in CPU_PRODUCT_SHAPES {
            let sizes = [("m", *m), ("n", *n), ("k", *k)];
            if let Err(e) = run_verified("examples/mm.rise", "mm", target, &sizes, "13") {
                failures.push(e);
            }
        }
        // vggGemm: its rows are windows of the image (implicit im2col), packed as slivers
        let sizes = [("h", 5), ("w", 7), ("c", 3), ("o", 67)];
        if let Err(e) = run_verified("examples/vgg.rise", "vggGemm", target, &sizes, "13") {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn explain_names_the_cpu_product_default_and_its_register_block() {
    for (target, schedule) in [("c", "blisProducts"), ("openmp", "blisProductsPar")] {
        let text = explained("examples/mm.rise", "mm", target);
        assert!(text.contains(&format!("strategy: `{schedule}`")), "{text}");
        assert!(text.contains("blocked: 1 reduction(s)"), "{text}");
        assert!(text.contains("((n+63)/64).k.64.f32"), "{text}");
        assert!(!text.contains("passed over"), "{text}");
    }
}

#[test]
fn products_of_16_bit_floats_are_passed_over_by_the_cpu_product_default_and_still_match() {
    for def in ["mmHalf", "mmBf16"] {
        for (target, schedule) in [("c", "blisProducts"), ("openmp", "blisProductsPar")] {
            let text = explained("examples/half.rise", def, target);
            assert!(
                text.contains(&format!("passed over: `{schedule}` does not compile it"))
                    && text.contains("vectors of"),
                "{def} --target {target}\n{text}"
            );
            assert!(
                !text.contains("blocked:"),
                "{def} --target {target}\n{text}"
            );
            let sizes = [("m", 7), ("n", 13), ("k", 33)];
            run_verified("examples/half.rise", def, target, &sizes, "13")
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[test]
fn products_that_are_not_sums_keep_their_order_under_the_cpu_product_default() {
    // k is neither padded nor split: every element is its reduction in k's order, whatever
    // the operator, so the max-plus product and the dot with an `exp` inside are blocked too
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("products.rise");
    std::fs::write(&program, NOT_SUMS_OF_PRODUCTS).unwrap();
    let program = program.display().to_string();
    let mut failures = Vec::new();
    for def in ["maxPlus", "expDot"] {
        for (target, schedule) in [("c", "blisProducts"), ("openmp", "blisProductsPar")] {
            let text = explained(&program, def, target);
            assert!(
                text.contains(&format!("strategy: `{schedule}`")),
                "{def} --target {target}\n{text}"
            );
            for [m, n, k] in [[1, 1, 1], [7, 13, 33], [67, 1, 13], [13, 7, 107]] {
                let sizes = [("m", m), ("n", n), ("k", k)];
                if let Err(e) = run_verified(&program, def, target, &sizes, "13") {
                    failures.push(e);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
