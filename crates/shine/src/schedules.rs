//! shine's built-in schedules: an ELEVATE file (`schedules.elv`, embedded in the binary) of
//! generic strategies that compile any well-typed program, and the default schedule of each
//! target (`docs/cli.md`: without `--strategy`, `run` and `compile` apply a
//! named default schedule for the target, which `--explain` names, so that the choice stays a
//! strategy the user can read and copy).
//!
//! | target | default | what it does |
//! | --- | --- | --- |
//! | `c` | `storeEveryStage` | every value computed once (`computeOnce`: a row's reduction bound outside the map over the row, an array read twice stored), every stage stored (Halide's `compute_root`), the padded input of a stencil copied once with its border (`storeStencilInputs`), reductions over at most 32 elements unrolled (`unrollShortReductions`), sequential loops |
//! | `openmp` | `storeEveryStagePar` | the same, the outermost loop of every stage and of the copy `parallel for` |
//! | `opencl`, `cuda` | `storeEveryStageGpu` | the same but the stencil's pad left a view, the outermost loop of every stage over the global work-items |

use crate::{SourceFile, StrategySource, Target};

/// The text of the built-in schedules (`shine strategies --show` prints it).
pub const SOURCE: &str = include_str!("schedules.elv");

/// How messages name the built-in file.
pub const FILE_NAME: &str = "<built-in schedules.elv>";

/// The definitions of the built-in file that are whole schedules (the others are their
/// parts), with what each is for.
pub const SCHEDULES: &[(&str, &str)] = &[
    (
        "storeEveryStage",
        "every value computed once (a reduction a mapped function does not need its argument for bound outside the map, an array read twice stored), every stage stored at the outermost level where it does not change, a stencil's padded input copied once with its border, reductions over at most 32 elements unrolled; sequential loops (default for c)",
    ),
    (
        "storeEveryStagePar",
        "storeEveryStage, the outermost loop of every stage, of the stencil input's copy and of the result parallel (default for openmp)",
    ),
    (
        "storeEveryStageGpu",
        "storeEveryStage without the copy of a stencil's padded input, the outermost loop of every stage and of the result over the global work-items (default for opencl, cuda)",
    ),
];

/// The name of the default schedule of `target`.
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

/// The default schedule of `target` as a strategy.
pub fn default_strategy(target: Target) -> StrategySource {
    strategy(default_for(target))
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
            assert!(SCHEDULES.iter().any(|(n, _)| *n == default_for(t)), "{t:?}");
        }
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
