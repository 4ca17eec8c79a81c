//! shine's built-in schedules: an ELEVATE file (`schedules.elv`, embedded in the binary) of
//! generic strategies that compile any well-typed program, and the default schedule of each
//! target (`docs/cli.md`: without `--strategy`, `run` and `compile` apply a
//! named default schedule for the target, which `--explain` names, so that the choice stays a
//! strategy the user can read and copy).
//!
//! | target | default | what it does |
//! | --- | --- | --- |
//! | `c` | `blisProducts`, else `storeEveryStage` | a matrix product as BLIS computes one: packed panels of b and slivers of a, a 6 x 64 block of the result in registers, at any size (rows and columns padded by repeating the last, k untouched); else every value computed once (`computeOnce`: a row's reduction bound outside the map over the row, an array read twice stored), every stage stored (Halide's `compute_root`), the padded input of a stencil copied once with its border (`storeStencilInputs`), reductions over at most 32 elements unrolled (`unrollShortReductions`), sequential loops |
//! | `openmp` | `blisProductsPar`, else `storeEveryStagePar` | the same, the packs and the loop over the panels of a product, else the outermost loop of every stage and of the copy, `parallel for` |
//! | `opencl` | `tiledProducts`, else `rowReductionsByWorkGroups`, else `storeEveryStageGpu` | a matrix product (a sum of products) by 128 x 128 tiles through local memory, 8 x 8 blocks in registers, at any size (rows and columns padded by repeating the last, k padded with zeros); a row reduction (softmax, layer norm, mv) by a work-group of 64 work-items per row; where that does not compile the definition, the same as `storeEveryStagePar` but the stencil's pad left a view, the outermost loop of every stage over the global work-items, over two dimensions where its function is itself a map (matmul's rows and columns) |
//! | `cuda` | `tiledProducts`, else `rowReductionsByWarps`, else `storeEveryStageGpu` | a matrix product as for `opencl`; a row reduction by a warp per row; else as for `opencl` |
//!
//! A target's defaults are tried in order ([`defaults_for`]): the first that compiles the
//! definition is applied, and `--explain` names it.

use crate::{Options, SourceFile, StrategySource, Target};

/// The text of the built-in schedules (`shine strategies --show` prints it).
pub const SOURCE: &str = include_str!("schedules.elv");

/// How messages name the built-in file.
pub const FILE_NAME: &str = "<built-in schedules.elv>";

/// The definitions of the built-in file that are whole schedules (the others are their
/// parts), with what each is for.
pub const SCHEDULES: &[(&str, &str)] = &[
    (
        "storeEveryStage",
        "every value computed once (a reduction a mapped function does not need its argument for bound outside the map, an array read twice stored), every stage stored at the outermost level where it does not change, a stencil's padded input copied once with its border, reductions over at most 32 elements unrolled; sequential loops (default for c where blisProducts does not compile a definition)",
    ),
    (
        "storeEveryStagePar",
        "storeEveryStage, the outermost loop of every stage, of the stencil input's copy and of the result parallel (default for openmp where blisProductsPar does not compile a definition)",
    ),
    (
        "storeEveryStageGpu",
        "storeEveryStage without the copy of a stencil's padded input, the outermost loop of every stage and of the result over the global work-items, over dimensions 1 and 0 where its function is itself a map (default for opencl, cuda where the row reductions do not compile a definition)",
    ),
    (
        "tiledProducts",
        "a matrix product `map (fun r => map (fun c => reduce ... (zip r c)) cs) rs` whose reduction is a sum of products (mm, mmHalf) by 128 x 128 tiles, a work-group of 16 x 16 work-items each, every work-item an 8 x 8 block in registers, k in steps of 8 through local memory; any size: rows and columns padded by repeating the last (padMap), k with zeros (padDotZeros), the result copied out of the padded one (tried first by the defaults for opencl and cuda)",
    ),
    (
        "blisProducts",
        "a matrix product `map (fun r => map (fun c => reduce ... (zip r c)) (transpose b)) rs` as BLIS computes one: b packed into panels of 64 columns, a into slivers of 6 rows (k-major), a 6 x 64 block of the result in registers (vector FMAs), the panels the outer loop; any size: rows and columns padded by repeating the last (padMap), k neither padded nor split, so any reduction keeps its order; sequential loops (tried first by the default for c)",
    ),
    (
        "blisProductsPar",
        "blisProducts with both packs and the loop over the panels parallel (tried first by the default for openmp)",
    ),
    (
        "rowReductionsByWorkGroups",
        "`map (fun row => ... reduce ...) rows` with a work-group of 64 work-items per row: the row read coalesced, its reductions by a tree in local memory, its elementwise maps spread over the work-items (tried first by the default for opencl)",
    ),
    (
        "rowReductionsByWarps",
        "`map (fun row => ... reduce ...) rows` with a warp per row: the row read coalesced by the lanes, its reductions by shuffles, its elementwise maps spread over the lanes; CUDA only (tried first by the default for cuda)",
    ),
];

/// The default schedules of `target`, in the order they are tried: the first that compiles
/// a definition is applied (the last, [`default_for`], compiles every well-typed one).
pub fn defaults_for(target: Target) -> &'static [&'static str] {
    match target {
        Target::C => &["blisProducts", "storeEveryStage"],
        Target::OpenMp => &["blisProductsPar", "storeEveryStagePar"],
        Target::OpenCl => &[
            "tiledProducts",
            "rowReductionsByWorkGroups",
            "storeEveryStageGpu",
        ],
        Target::Cuda => &[
            "tiledProducts",
            "rowReductionsByWarps",
            "storeEveryStageGpu",
        ],
    }
}

/// The name of the default schedule of `target` that compiles every well-typed definition
/// (the last of [`defaults_for`]).
pub fn default_for(target: Target) -> &'static str {
    match target {
        Target::C => "storeEveryStage",
        Target::OpenMp => "storeEveryStagePar",
        Target::OpenCl | Target::Cuda => "storeEveryStageGpu",
    }
}

/// The built-in file as a source.
pub fn file() -> SourceFile {
    SourceFile::new(FILE_NAME, SOURCE)
}

/// `apply` (a definition of the built-in file or an expression over them) as a strategy.
pub fn strategy(apply: &str) -> StrategySource {
    StrategySource {
        file: file(),
        apply: apply.to_string(),
    }
}

/// The default schedule of `target` as a strategy ([`default_for`]).
pub fn default_strategy(target: Target) -> StrategySource {
    strategy(default_for(target))
}

/// The default schedules of `target` as strategies, in the order they are tried
/// ([`defaults_for`]).
pub fn default_strategies(target: Target) -> Vec<StrategySource> {
    defaults_for(target)
        .iter()
        .map(|name| strategy(name))
        .collect()
}

/// The outcome of trying the default schedules of a target in order ([`try_defaults`]).
pub struct Tried<T> {
    /// The schedule applied: the first that succeeded, else the last.
    pub chosen: StrategySource,
    /// The schedules tried before it, each with the error it gave.
    pub passed_over: Vec<(StrategySource, crate::Error)>,
    /// What the chosen schedule made, or the last one's error.
    pub result: Result<T, crate::Error>,
}

/// `step` with the default schedules of `target` in order ([`defaults_for`]): the first
/// that succeeds is chosen, else the last (which compiles every well-typed definition),
/// with its error.
pub fn try_defaults<T>(
    target: Target,
    step: impl Fn(&StrategySource) -> Result<T, crate::Error>,
) -> Tried<T> {
    let mut first = default_strategies(target);
    let last = first.pop().unwrap_or_else(|| default_strategy(target));
    let mut passed_over = Vec::new();
    for strategy in first {
        match step(&strategy) {
            Ok(done) => {
                return Tried {
                    chosen: strategy,
                    passed_over,
                    result: Ok(done),
                }
            }
            Err(e) => passed_over.push((strategy, e)),
        }
    }
    let result = step(&last);
    Tried {
        chosen: last,
        passed_over,
        result,
    }
}

/// The default schedule `def` of `program` is compiled with on `target`: the first of
/// [`defaults_for`] that compiles it, else the last ([`default_for`]).
pub fn default_compiling(
    program: &SourceFile,
    def: &str,
    target: Target,
    options: &Options,
) -> StrategySource {
    try_defaults(target, |s| {
        crate::compile(program, def, Some(s), target, options)
    })
    .chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schedule_and_default_is_a_definition_of_the_file_that_loads() {
        for (name, _) in SCHEDULES {
            strategy(name)
                .parse()
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        for t in Target::ALL {
            for name in defaults_for(t) {
                assert!(SCHEDULES.iter().any(|(n, _)| n == name), "{t:?}: {name}");
            }
            assert_eq!(defaults_for(t).last(), Some(&default_for(t)), "{t:?}");
        }
    }

    #[test]
    fn a_gpu_default_is_the_first_that_compiles_the_definition() {
        let rows = SourceFile::new(
            "t.rise",
            "def f : {m n: nat} -> m.n.f32 -> m.f32 = fun xs => map (fun r => reduce add 0.0f r) xs",
        );
        let pairs = SourceFile::new(
            "t.rise",
            "def f : {n: nat} -> (n*2).f32 -> n.f32 = fun xs => map (fun p => reduce add 0.0f p) (split 2 xs)",
        );
        let product = SourceFile::new(
            "t.rise",
            "def f : {m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32 = fun a b => map (fun r => map (fun c => reduce add 0.0f (map (fun p => fst p * snd p) (zip r c))) (transpose b)) a",
        );
        let max_plus = SourceFile::new(
            "t.rise",
            "def f : {m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32 = fun a b => map (fun r => map (fun c => reduce max (-inff) (map (fun p => fst p + snd p) (zip r c))) (transpose b)) a",
        );
        let options = Options::default();
        let chosen = |program, target| default_compiling(program, "f", target, &options).apply;
        assert_eq!(chosen(&product, Target::OpenCl), "tiledProducts");
        assert_eq!(chosen(&product, Target::Cuda), "tiledProducts");
        assert_eq!(chosen(&max_plus, Target::OpenCl), "storeEveryStageGpu");
        assert_eq!(chosen(&product, Target::C), "blisProducts");
        assert_eq!(chosen(&product, Target::OpenMp), "blisProductsPar");
        assert_eq!(chosen(&max_plus, Target::OpenMp), "blisProductsPar");
        assert_eq!(chosen(&rows, Target::OpenMp), "storeEveryStagePar");
        assert_eq!(chosen(&rows, Target::OpenCl), "rowReductionsByWorkGroups");
        assert_eq!(chosen(&rows, Target::Cuda), "rowReductionsByWarps");
        assert_eq!(chosen(&pairs, Target::Cuda), "storeEveryStageGpu");
        assert_eq!(chosen(&rows, Target::C), "storeEveryStage");
    }

    #[test]
    fn an_unknown_name_is_an_error_naming_it() {
        let e = strategy("storeEveryStages")
            .parse()
            .unwrap_err()
            .to_string();
        assert!(e.contains("storeEveryStages"), "{e}");
    }
}
