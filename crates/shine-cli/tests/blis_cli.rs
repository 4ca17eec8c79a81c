//! `blis` of examples/mm.elv (issue 30 item 1): the BLIS-like matrix multiplication
//! (packed A slivers and B panels, an mr x nr register block of rank-1 updates) matches
//! the interpreter on C and OpenMP at sizes that are and are not multiples of its
//! blocks, also under AddressSanitizer and UndefinedBehaviorSanitizer; its inner loop
//! is the unrolled block of vector FMAs over registers; a width that is not a multiple
//! of the vectors is refused with the failing step. `blisKC`, blocked along k, does the
//! same with the loop over the kc chunks outside the blocks, and refuses a k that kc
//! does not divide.

mod support;

use std::path::Path;
use support::shine_in;

/// `shine ARGS` in the repository root (the examples are named from it).
fn run(args: &[&str]) -> (std::process::Output, String) {
    shine_in(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")),
        args,
    )
}

/// `shine COMMAND` of examples/mm.rise's `mm` under `strategy` of examples/mm.elv on `target`.
fn mm_args<'a>(command: &'a str, strategy: &'a str, target: &'a str) -> Vec<&'a str> {
    vec![
        command,
        "examples/mm.rise",
        "--def",
        "mm",
        "--strategy",
        "examples/mm.elv",
        "--apply",
        strategy,
        "--target",
        target,
    ]
}

/// `shine run` of `mm` under `strategy` at m x n x k on `target`, verified.
fn verify(strategy: &str, target: &str, (m, n, k): (u64, u64, u64), sanitize: bool) {
    let sizes = [format!("m={m}"), format!("n={n}"), format!("k={k}")];
    let mut args = mm_args("run", strategy, target);
    args.extend(["--random", "3", "--verify"]);
    for s in &sizes {
        args.extend(["--nat", s]);
    }
    if sanitize {
        args.push("--sanitize");
    }
    let (o, text) = run(&args);
    assert!(
        o.status.success() && text.contains("verified against the interpreter"),
        "{strategy} on {target} at {m}x{n}x{k}: {text}"
    );
}

/// Sizes that are multiples of the blocks of `blis(6, 64)` and sizes that are not.
const SIZES: [(u64, u64, u64); 5] = [
    (1, 1, 1),
    (7, 7, 7),
    (37, 65, 19),
    (12, 128, 16),
    (43, 97, 130),
];

#[test]
fn blis_matches_the_interpreter_on_c_and_openmp() {
    for target in ["c", "openmp"] {
        for size in SIZES {
            verify("blis(6, 64) ; lowerToC", target, size, false);
        }
    }
}

#[test]
fn blis_with_other_blocks_matches_the_interpreter() {
    for strategy in ["blis(14, 32) ; lowerToC", "blis(4, 48) ; lowerToC"] {
        verify(strategy, "openmp", (37, 65, 19), false);
    }
}

#[test]
fn blis_is_clean_under_the_sanitizers() {
    for size in [(1, 1, 1), (37, 65, 19)] {
        verify("blis(6, 64) ; lowerToC", "openmp", size, true);
    }
}

#[test]
fn blis_keeps_its_block_in_vector_registers_of_fma_updates() {
    let (o, text) = run(&mm_args("compile", "blis(6, 64) ; lowerToC", "openmp"));
    assert!(o.status.success(), "{text}");
    let code = String::from_utf8_lossy(&o.stdout);
    // the reduction over k holds 6 x 4 unrolled vector updates of constant
    // accumulator slots, each a broadcast element of A times a vector of B
    let body = code.split("// reduceSeq").nth(1).expect("a reduction loop");
    let body = body.split("// copy").next().unwrap_or(body);
    let updates = body.matches("*(float16_u *)&acc").count();
    assert_eq!(updates, 24, "{body}");
    assert!(
        body.contains("mapSeqUnroll (unrolled: 6 iterations)"),
        "{body}"
    );
    assert_eq!(
        body.matches("for (").count(),
        1,
        "only the loop over k: {body}"
    );
    // both operands packed, in parallel
    assert_eq!(
        code.matches("#pragma omp parallel for").count(),
        3,
        "{code}"
    );
}

#[test]
fn blis_packs_a_along_k_writing_each_steps_sliver_rows_consecutively() {
    let (o, text) = run(&mm_args("compile", "blis(6, 64) ; lowerToC", "openmp"));
    assert!(o.status.success(), "{text}");
    let code = String::from_utf8_lossy(&o.stdout);
    // the pack of A: a parallel loop over the slivers, a loop over k, the 6 rows of
    // a step unrolled, each written next to the one before
    let pack = code
        .split("#pragma omp parallel for")
        .find(|part| part.contains("] = a["))
        .and_then(|part| part.split("aligned_alloc").next())
        .expect("the pack of A");
    assert!(
        pack.contains("mapSeqUnroll (unrolled: 6 iterations)"),
        "{pack}"
    );
    assert_eq!(pack.matches("for (").count(), 2, "{pack}");
    for row in 1..6 {
        assert!(pack.contains(&format!(" * 6 + {row}] = a[")), "{pack}");
    }
}

/// Sizes for `blisKC(4, 6, 64)`: k a multiple of 4, m and n multiples of the
/// blocks or not.
const KC_SIZES: [(u64, u64, u64); 4] = [(1, 1, 4), (7, 7, 8), (37, 65, 20), (43, 97, 132)];

#[test]
fn blis_kc_matches_the_interpreter_on_c_and_openmp() {
    for target in ["c", "openmp"] {
        for size in KC_SIZES {
            verify("blisKC(4, 6, 64) ; lowerToC", target, size, false);
        }
    }
    verify("blisKC(8, 4, 48) ; lowerToC", "openmp", (37, 65, 24), false);
}

#[test]
fn blis_kc_is_clean_under_the_sanitizers() {
    for size in [(1, 1, 4), (37, 65, 20)] {
        verify("blisKC(4, 6, 64) ; lowerToC", "openmp", size, true);
    }
}

/// `blisKC(4, 6, 64)` on OpenMP at the sizes `(m, n, k)` is refused saying `why`.
fn refused_at((m, n, k): (&str, &str, &str), why: &str) {
    let mut args = mm_args("run", "blisKC(4, 6, 64) ; lowerToC", "openmp");
    let sizes = [format!("m={m}"), format!("n={n}"), format!("k={k}")];
    args.extend([
        "--random", "3", "--nat", &sizes[0], "--nat", &sizes[1], "--nat", &sizes[2],
    ]);
    let (o, text) = run(&args);
    assert!(!o.status.success(), "{text}");
    assert!(text.contains(why), "{text}");
}

#[test]
fn blis_kc_refuses_a_k_that_kc_does_not_divide() {
    refused_at(("37", "65", "19"), "4 must divide k");
}

#[test]
fn blis_kc_runs_the_chunks_outside_the_register_blocks() {
    let (o, text) = run(&mm_args(
        "compile",
        "blisKC(128, 6, 64) ; lowerToC",
        "openmp",
    ));
    assert!(o.status.success(), "{text}");
    let code = String::from_utf8_lossy(&o.stdout);
    // the chunks, then the panels of a chunk in parallel, then the slivers, then kc:
    // the block is copied into its private accumulator and back by unrolled vector
    // copies (no copy loop, which gcc would make a memcpy through the stack)
    let loops = code
        .split("for (int64_t i")
        .skip_while(|l| !l.contains("< k / 128 - 1;"))
        .collect::<Vec<_>>();
    assert!(loops.len() > 3, "{code}");
    assert!(loops[0].contains("#pragma omp parallel for"), "{code}");
    assert!(loops[1].contains("(n + 63) / 64"), "{code}");
    assert!(loops[2].contains("(m + 5) / 6"), "{code}");
    assert!(loops[3].contains("< 128;"), "the loop over kc: {code}");
    let vector_lines = |text: &str, pred: &dyn Fn(&str) -> bool| {
        text.lines()
            .filter(|l| l.trim_start().starts_with("*(float16_u *)&acc") && pred(l))
            .count()
    };
    // copied in: 6 x 4 vector loads of the chunks' accumulator
    assert_eq!(
        vector_lines(loops[2], &|l| !l.contains("&mem")),
        24,
        "{code}"
    );
    // the block: 6 x 4 vector updates, each a broadcast element of A times a vector of B,
    // then copied back by 6 x 4 vector stores
    assert_eq!(
        vector_lines(loops[3], &|l| l.contains("&mem")),
        24,
        "{code}"
    );
    assert_eq!(
        vector_lines(loops[3], &|l| !l.contains("&mem")),
        24,
        "{code}"
    );
}

#[test]
fn blis_kc_starts_the_first_chunk_from_zero_in_registers() {
    let (o, text) = run(&mm_args(
        "compile",
        "blisKC(128, 6, 64) ; lowerToC",
        "openmp",
    ));
    assert!(o.status.success(), "{text}");
    let code = String::from_utf8_lossy(&o.stdout);
    // no pass zeroes the padded accumulator: the first chunk (peeled off the loop
    // over the chunks) sets each block's 6 x 4 vector registers to zero and stores
    // them once it has added its kc rank-1 updates (the packs come first)
    assert!(!code.contains("] = 0.0f;"), "{code}");
    let (first, _) = code
        .split_once("< k / 128 - 1;")
        .expect("the loop over the other chunks");
    assert_eq!(first.matches("= (float16){0.0f").count(), 24, "{code}");
    assert_eq!(first.matches("< 128;").count(), 1, "{code}");
}

#[test]
fn blis_kc_refuses_a_k_below_one_chunk() {
    refused_at(("7", "7", "0"), "k must be at least 4");
}

#[test]
fn blis_kc_rows_matches_the_interpreter_and_is_clean_under_the_sanitizers() {
    for target in ["c", "openmp"] {
        for size in KC_SIZES {
            verify("blisKCRows(4, 6, 64) ; lowerToC", target, size, false);
        }
    }
    verify(
        "blisKCRows(8, 4, 48) ; lowerToC",
        "openmp",
        (37, 65, 24),
        false,
    );
    verify(
        "blisKCRows(4, 6, 64) ; lowerToC",
        "openmp",
        (37, 65, 20),
        true,
    );
}

#[test]
fn blis_kc_rows_updates_a_row_major_accumulator_in_place() {
    let (o, text) = run(&mm_args(
        "compile",
        "blisKCRows(128, 6, 64) ; lowerToC",
        "openmp",
    ));
    assert!(o.status.success(), "{text}");
    let code = String::from_utf8_lossy(&o.stdout);
    // slivers.6.panels.64: the padded result's rows
    assert!(
        code.contains(": ((m+5)/6).6.((n+63)/64).64.f32 (heap)"),
        "{code}"
    );
    // each block is read and written where it lies, no second accumulator per chunk
    assert!(!code.contains("next"), "{code}");
    // and the result is copied out row by row, without a remainder per element
    let copy = code
        .lines()
        .find(|l| l.contains("output["))
        .expect("the copy of the result");
    assert!(copy.contains(" * ((n + 63) / 64) * 64 + i"), "{copy}");
    assert!(!copy.contains(" % 64"), "{copy}");
}

#[test]
fn blis_refuses_a_width_that_is_no_multiple_of_the_vectors() {
    let (o, text) = run(&mm_args("compile", "blis(14, 20) ; lowerToC", "c"));
    assert!(!o.status.success());
    assert!(
        text.contains("packPanels") || text.contains("permuteB(nr)"),
        "{text}"
    );
}

/// The result of `mm` under `strategy` at 1000³ (random inputs of seed 3) on OpenMP.
fn result_at_1000(strategy: &str, dir: &Path) -> Vec<f64> {
    let out = dir.join(format!(
        "{}.npy",
        strategy.replace([' ', ';', ',', '(', ')'], "_")
    ));
    let out_arg = out.display().to_string();
    let mut args = mm_args("run", strategy, "openmp");
    args.extend(["--random", "3", "--output", &out_arg]);
    for s in ["m=1000", "n=1000", "k=1000"] {
        args.extend(["--nat", s]);
    }
    let (o, text) = run(&args);
    assert!(o.status.success(), "{strategy}: {text}");
    let array = shine::npy::read(&out).expect("a readable result");
    assert_eq!(array.shape, vec![1000, 1000], "{strategy}");
    array.data.iter().map(|x| x.as_f64()).collect()
}

/// At 1000³ (no block divides it) the interpreter is too slow for a test: `blis` and
/// `blisKC` are compared with `anySizeParallel` on the same random inputs, element by element
/// (numpy's tolerance for f32 sums of 1000 products, as `shine bench cpu` uses).
#[test]
fn blis_agrees_with_any_size_parallel_at_1000_cubed() {
    let dir = tempfile::TempDir::new().expect("a temporary directory");
    let want = result_at_1000("anySizeParallel ; lowerToC", dir.path());
    for strategy in ["blis(6, 64) ; lowerToC", "blisKC(125, 6, 64) ; lowerToC"] {
        let got = result_at_1000(strategy, dir.path());
        let bad = got
            .iter()
            .zip(&want)
            .position(|(g, w)| (g - w).abs() > 1e-3 + 1e-4 * w.abs());
        assert_eq!(
            bad,
            None,
            "{strategy}: first differing element (of {})",
            got.len()
        );
    }
}
