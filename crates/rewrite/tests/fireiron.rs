//! `mmaWarps`, `mmaWarpTiles` and `mmaShared` of examples/fireiron.elv derive tensor.rise's
//! hand-written `mmWarps`, `mmWarpTiles` and `mmShared` from the plain product `mmHalf` (and
//! `mmBf16`) of half.rise, keeping its meaning (the tensor-core
//! rules themselves are checked one by one in tests/rules.rs).

use elevate::Ctx;
use rise::infer::{check_source, prepare_def, Prepared};

fn file(name: &str) -> String {
    let path = format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `strategy` of fireiron.elv applied to `def` of half.rise: the definition and the result.
fn derive(def: &str, strategy: &str) -> Result<(Prepared, rise::Expr), String> {
    let checked = check_source(&file("half.rise")).map_err(|e| e.to_string())?;
    let p = prepare_def(&checked, def).map_err(|e| e.to_string())?;
    let registry = rewrite::library::registry();
    let module = elv::load(&file("fireiron.elv"), &registry).map_err(|e| format!("{e:?}"))?;
    let s = module.expression(strategy).map_err(|e| format!("{e:?}"))?;
    let mut ctx = Ctx::new(rise::NameGen::avoiding(&p.body));
    let out = ctx.run(&s, &p.body).map_err(|e| {
        let why = e.explanation().map(|x| x.render()).unwrap_or_default();
        format!("{e}: {why}")
    })?;
    Ok((p, out))
}

/// `strategy` keeps the meaning of `mmHalf` at 1x1x1, 3x1x5 and 2x3x7 tiles (m, n, k in tiles of
/// 64 x 64 x `k_tile`), and of `mmBf16` at the first two, in the interpreter.
fn keeps_the_meaning(strategy: &str, k_tile: i64) {
    keeps_the_meaning_at(
        strategy,
        (64, 64, k_tile),
        &[(1, 1, 1), (3, 1, 5), (2, 3, 7)],
        2,
    );
}

/// `strategy` keeps the meaning of `mmHalf` at `tiles` (counts of m, n, k in tiles of
/// `tile`), and of `mmBf16` at the first `bf16` of them, in the interpreter.
fn keeps_the_meaning_at(
    strategy: &str,
    tile: (i64, i64, i64),
    tiles: &[(i64, i64, i64)],
    bf16: usize,
) {
    for (def, tiles) in [("mmHalf", tiles), ("mmBf16", &tiles[..bf16])] {
        let (p, out) = derive(def, strategy).unwrap_or_else(|e| panic!("{def}: {e}"));
        for &(tm, tn, tk) in tiles {
            let sizes = [("m", tile.0 * tm), ("n", tile.1 * tn), ("k", tile.2 * tk)];
            rewrite::check::same_results(&p.body, &out, &p.scheme, &sizes, 1)
                .unwrap_or_else(|e| panic!("{def} {sizes:?}: {e}"));
        }
    }
}

/// Each strategy fails on `mmHalf` with its reason.
fn refused_with_the_reason(cases: &[(&str, &str)]) {
    for &(strategy, want) in cases {
        let failure = derive("mmHalf", strategy).expect_err(strategy);
        assert!(failure.contains(want), "{strategy}: {failure}");
    }
}

/// The structure of `mmWarps`: work-groups over 16x32 tiles, a warp per 16x8 tile, one
/// sequential walk over k whose step is one `mmaSync`, the accumulator's fragment started
/// and written out by the lanes, nothing in local or global temporaries.
#[test]
fn mma_warps_derives_the_structure_of_mm_warps() {
    let (_, out) = derive("mmHalf", "mmaWarps").unwrap_or_else(|e| panic!("{e}"));
    let text = out
        .to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for want in [
        "split 16 |> mapWorkGroup(1)",
        "split 32 |> mapWorkGroup(0)",
        "split 8 |> mapWarp",
        "reduceSeq",
        "mmaSync",
        "=> 0.0f)) |> mapLane",
    ] {
        assert!(text.contains(want), "no `{want}` in\n{text}");
    }
    assert_eq!(text.matches("mmaSync").count(), 1, "{text}");
    assert_eq!(text.matches("mapLane").count(), 2, "{text}");
    assert_eq!(text.matches("mapSeq").count(), 2, "{text}");
    assert_eq!(text.matches("reduceSeq").count(), 1, "{text}");
    assert!(!text.contains("toMem"), "{text}");
    assert!(!text.contains("cast"), "{text}");
}

/// The derived program computes what `mmHalf` and `mmBf16` compute, in the interpreter, at
/// 1x1x1, 3x1x5 and 2x3x7 tiles (`mmBf16` at the first two): on small integers exactly, on
/// values with fractional parts within the verification tolerance (the tensor cores sum in
/// an order of their own).
#[test]
fn mma_warps_keeps_the_meaning_of_the_product() {
    let tiles: &[(i64, i64, i64)] = &[(1, 1, 1), (3, 1, 5), (2, 3, 7)];
    for (def, tiles) in [("mmHalf", tiles), ("mmBf16", &tiles[..2])] {
        let (p, out) = derive(def, "mmaWarps").unwrap_or_else(|e| panic!("{def}: {e}"));
        for &(tm, tn, tk) in tiles {
            let sizes = [("m", 16 * tm), ("n", 32 * tn), ("k", 16 * tk)];
            rewrite::check::same_results(&p.body, &out, &p.scheme, &sizes, 1)
                .unwrap_or_else(|e| panic!("{def} {sizes:?}: {e}"));
            let params = rewrite::check::parameters(&p.scheme, &sizes).expect("sizes");
            let mut rng = rewrite::check::seeded_rng(2);
            let inputs = params
                .iter()
                .map(|d| rewrite::check::random_fraction(d, &mut rng))
                .collect::<Result<Vec<_>, _>>()
                .expect("random inputs");
            rewrite::check::same_results_on(&p.body, &out, &inputs, &sizes)
                .unwrap_or_else(|e| panic!("{def} {sizes:?}, fractions: {e}"));
        }
    }
}

/// A warp tile the tensor cores cannot multiply is refused by `mma` with the reason.
#[test]
fn warp_tiles_of_other_shapes_are_refused_with_the_reason() {
    refused_with_the_reason(&[
        (
            "warpMma(16, 32, 16, 16)",
            "the tile accumulate is 16x16 with 16 products per element",
        ),
        (
            "warpMma(16, 32, 8, 32)",
            "the tile accumulate is 16x8 with 32 products per element",
        ),
        (
            "warpMma(32, 32, 8, 16)",
            "the tile accumulate is 32x8 with 16 products per element",
        ),
    ]);
}

/// The structure of `mmWarpTiles`: work-groups over 64x64 tiles, the 2x2 warps of 32x32 as
/// one warp loop over their pairs of rows and columns, one sequential walk over k whose step
/// is the 2x4 fragments' mmaSync (two unrolled loops around one), the accumulator of 2x4
/// fragments kept lane by lane, started and written out by the lanes, nothing in local or
/// global temporaries.
#[test]
fn mma_warp_tiles_derives_the_structure_of_mm_warp_tiles() {
    let (_, out) = derive("mmHalf", "mmaWarpTiles").unwrap_or_else(|e| panic!("{e}"));
    let text = out
        .to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for want in [
        "split 64 |> mapWorkGroup(1)",
        "split 64 |> mapWorkGroup(0)",
        "|> join |> mapWarp",
        "reduceSeq",
        "mapSeqUnroll",
        "mmaSync",
        "=> 0.0f)))) |> map (fun",
    ] {
        assert!(text.contains(want), "no `{want}` in\n{text}");
    }
    assert_eq!(text.matches("mmaSync").count(), 1, "{text}");
    assert_eq!(text.matches("mapSeqUnroll").count(), 2, "{text}");
    assert_eq!(text.matches("mapWarp").count(), 1, "{text}");
    assert_eq!(text.matches("mapLane").count(), 2, "{text}");
    assert_eq!(text.matches("mapSeq ").count(), 6, "{text}");
    assert_eq!(text.matches("reduceSeq").count(), 1, "{text}");
    assert!(!text.contains("toMem"), "{text}");
    assert!(!text.contains("cast"), "{text}");
}

/// `mmaWarpTiles` computes what `mmHalf` and `mmBf16` compute, in the interpreter, at 1x1x1,
/// 3x1x5 and 2x3x7 tiles of 64x64x16 (`mmBf16` at the first two).
#[test]
fn mma_warp_tiles_keeps_the_meaning_of_the_product() {
    keeps_the_meaning("mmaWarpTiles", 16);
}

/// Fragments the tensor cores cannot multiply are refused by `mma` with the reason.
#[test]
fn warp_tile_fragments_of_other_shapes_are_refused_with_the_reason() {
    refused_with_the_reason(&[
        (
            "warpTileMma(64, 64, 32, 32, 16, 16, 16)",
            "the tile accumulate is 16x16 with 16 products per element",
        ),
        (
            "warpTileMma(64, 64, 32, 32, 16, 8, 32)",
            "the tile accumulate is 16x8 with 32 products per element",
        ),
    ]);
}

/// The structure of `mmShared`: work-groups over 64x64 tiles, one sequential walk over k in
/// steps of 32 whose step copies a tile of `a` and one of `b` into local memory by the
/// work-group's threads (`mapLocal(0)`) and then runs the 2x2 warps as one warp loop over
/// the accumulators and their pairs of rows and columns, each warp walking the step in two
/// unrolled steps of 16 whose 2x4 fragments' mmaSync read the local tiles; the warps'
/// accumulators started and written out by their lanes.
#[test]
fn mma_shared_derives_the_structure_of_mm_shared() {
    let (_, out) = derive("mmHalf", "mmaShared").unwrap_or_else(|e| panic!("{e}"));
    let text = out
        .to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for want in [
        "split 64 |> mapWorkGroup(1)",
        "split 64 |> mapWorkGroup(0)",
        "toMem local",
        "|> split 128 |> transpose |> mapLocal(0)",
        "reduceSeqUnroll",
        "mapSeqUnroll",
        "mmaSync",
        "|> join) |> mapWarp (fun",
    ] {
        assert!(text.contains(want), "no `{want}` in\n{text}");
    }
    assert_eq!(text.matches("toMem local").count(), 2, "{text}");
    assert_eq!(text.matches("mapLocal(0)").count(), 2, "{text}");
    assert_eq!(text.matches("mmaSync").count(), 1, "{text}");
    assert_eq!(text.matches("mapSeqUnroll").count(), 2, "{text}");
    assert_eq!(text.matches("reduceSeqUnroll").count(), 1, "{text}");
    assert_eq!(text.matches("reduceSeq ").count(), 1, "{text}");
    assert_eq!(text.matches("mapWarp").count(), 3, "{text}");
    assert_eq!(text.matches("mapLane").count(), 2, "{text}");
    assert!(!text.contains("toMem global"), "{text}");
    assert!(!text.contains("toMem private"), "{text}");
    assert!(!text.contains("cast"), "{text}");
}

/// `mmaShared` computes what `mmHalf` and `mmBf16` compute, in the interpreter, at 1x1x1,
/// 3x1x5 and 2x3x7 tiles of 64x64x32 (`mmBf16` at the first two).
#[test]
fn mma_shared_keeps_the_meaning_of_the_product() {
    keeps_the_meaning("mmaShared", 32);
}

/// Fragments or warp steps the tensor cores cannot multiply are refused by `mma` with the
/// reason.
#[test]
fn shared_fragments_of_other_shapes_are_refused_with_the_reason() {
    refused_with_the_reason(&[
        (
            "sharedTileMma(64, 64, 32, 32, 16, 16, 32, 16, 128)",
            "the tile accumulate is 16x16 with 16 products per element",
        ),
        (
            "sharedTileMma(64, 64, 32, 32, 16, 8, 32, 32, 128)",
            "the tile accumulate is 16x8 with 32 products per element",
        ),
    ]);
}

/// The structure of `mmLarge`: work-groups over 128x128 tiles, one sequential walk over k in
/// steps of 32 whose step copies a tile of `a` and one of `b` into local memory by the
/// work-group's threads 8 elements at a time (`a`'s in blocks of 8 rows, stored transposed:
/// chunks of 8 consecutive k; `b`'s rows stored rotated, read back through the inverse
/// `reorder`), then the 4x2 warps as one warp loop, each walking the step in two unrolled
/// steps of 16 over its 2x8 fragments.
#[test]
fn mma_large_derives_the_structure_of_mm_large() {
    let (_, out) = derive("mmHalf", "mmaLarge").unwrap_or_else(|e| panic!("{e}"));
    let text = out
        .to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for want in [
        "split 128 |> mapWorkGroup(1)",
        "split 128 |> mapWorkGroup(0)",
        // a's tile: 8 rows at a time, stored transposed (chunks of 8 consecutive k)
        "|> split 8 |> map (fun",
        "|> join |> join |> split 256 |> transpose |> mapLocal(0)",
        "|> transpose |> join |> split 8 |> split 4 |> map (fun",
        "|> join |> transpose) (fun mem",
        "transpose mem",
        // b's tile: row by row, each row rotated
        "|> transpose |> join |> split 16 |> join |> reorder (fun p",
        "|> reorder (fun i",
        "reduceSeqUnroll",
        "mmaSync",
        "|> join) |> mapWarp (fun",
    ] {
        assert!(text.contains(want), "no `{want}` in\n{text}");
    }
    assert_eq!(text.matches("toMem local").count(), 2, "{text}");
    assert_eq!(text.matches("mapLocal(0)").count(), 2, "{text}");
    assert_eq!(
        text.matches("split 256 |> transpose |> mapLocal(0)")
            .count(),
        2,
        "{text}"
    );
    assert_eq!(text.matches("asVector 8").count(), 2, "{text}");
    assert_eq!(text.matches("reorder").count(), 2, "{text}");
    assert_eq!(text.matches("asScalar").count(), 2, "{text}");
    assert_eq!(text.matches("mmaSync").count(), 1, "{text}");
    assert_eq!(text.matches("mapSeqUnroll").count(), 2, "{text}");
    assert_eq!(text.matches("reduceSeqUnroll").count(), 1, "{text}");
    assert_eq!(text.matches("reduceSeq ").count(), 1, "{text}");
    assert!(!text.contains("reduceSeqPipelined"), "{text}");
    assert!(!text.contains("toMem global"), "{text}");
    assert!(!text.contains("toMem private"), "{text}");
}

/// `mmaLarge` computes what `mmHalf` and `mmBf16` compute, in the interpreter, at 1x1x1 and
/// 1x1x3 tiles of 128x128x32 (`mmBf16` at the first; the interpreter takes seconds per
/// million products, the CUDA tests run more).
#[test]
fn mma_large_keeps_the_meaning_of_the_product() {
    keeps_the_meaning_at("mmaLarge", (128, 128, 32), &[(1, 1, 1), (1, 1, 3)], 1);
}

/// Threads that do not share the swizzled tiles' vectors evenly are refused by
/// `copyVectorsByThreads` with the reason (`a`'s tile of 128x32 first: 512 vectors of 8).
#[test]
fn swizzled_tiles_refuse_threads_that_do_not_share_them_with_the_reason() {
    refused_with_the_reason(&[
        (
            "swizzledTileMma(128, 128, 32, 64, 96)",
            "copyVectorsByThreads(96, 8, 8): the tile is 128x32, 512 vectors of 8, which 96 \
             threads do not share evenly",
        ),
        (
            "swizzledTileMma(128, 128, 32, 64, 1024)",
            "the tile is 128x32, 512 vectors of 8, which 1024 threads do not share evenly",
        ),
    ]);
}

/// The structure of `mmWide`: `mmLarge`'s with 128x256 tiles and 2x4 warps of 64x64 (`b`'s
/// rows of 32 vectors rotated), the work-group's walk over k a `reduceSeqPipelined(2)` whose
/// step begins with the two copies into local memory.
#[test]
fn mma_wide_derives_the_structure_of_mm_wide() {
    let (_, out) = derive("mmHalf", "mmaWide").unwrap_or_else(|e| panic!("{e}"));
    let text = out
        .to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for want in [
        "split 128 |> mapWorkGroup(1)",
        "split 256 |> mapWorkGroup(0)",
        "reduceSeqPipelined(2) (fun acc",
        "=> toMem local (join (join (fst y",
        "|> join |> join |> split 256 |> transpose |> mapLocal(0)",
        "|> transpose |> join |> split 8 |> split 4 |> map (fun",
        "|> transpose |> join |> split 32 |> join |> reorder (fun p",
        "|> join) |> mapWarp (fun",
    ] {
        assert!(text.contains(want), "no `{want}` in\n{text}");
    }
    assert_eq!(text.matches("toMem local").count(), 2, "{text}");
    assert_eq!(text.matches("asVector 8").count(), 2, "{text}");
    assert_eq!(text.matches("reorder").count(), 2, "{text}");
    assert_eq!(text.matches("mmaSync").count(), 1, "{text}");
    assert_eq!(text.matches("reduceSeqPipelined(2)").count(), 1, "{text}");
    assert_eq!(text.matches("reduceSeq ").count(), 0, "{text}");
    assert!(!text.contains("toMem global"), "{text}");
    assert!(!text.contains("toMem private"), "{text}");
}

/// `mmaWide` computes what `mmHalf` and `mmBf16` compute, in the interpreter, at 1x1x1 and
/// 1x1x3 tiles of 128x256x32 (`mmBf16` at the first).
#[test]
fn mma_wide_keeps_the_meaning_of_the_product() {
    keeps_the_meaning_at("mmaWide", (128, 256, 32), &[(1, 1, 1), (1, 1, 3)], 1);
}

/// prefetch refuses stages other than 2, 3 and 4, and a reduction whose step does not begin
/// with its copies into local memory (nothing moved yet), with the reason.
#[test]
fn prefetch_refuses_what_it_cannot_pipeline_with_the_reason() {
    refused_with_the_reason(&[
        (
            "prefetchedTileMma(128, 256, 64, 64, 256, 5)",
            "pipelineCopies(5): 2, 3 or 4 stages are supported",
        ),
        (
            "sharedTileLoops(128, 256, 64, 64, 16, 8, 32, 16) ;; prefetch(2)",
            "pipelineCopies(2): the step does not begin with a copy into local memory",
        ),
    ]);
}
