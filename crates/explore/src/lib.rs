//! Automatic parallel mapping and tuning (CC'22, "constraint-based parallel mapping").
//!
//! The pipeline for one program:
//! 1. the middle strategy (`MID`, default `DFNF`) is applied to the definition;
//! 2. numeric choices are made ([`tuning`]: which maps are split, and by how much);
//! 3. the `map` nesting tree of the result is extracted ([`tree`]), every concrete map
//!    gets a choice variable with the paper's encoding, and the constraint families
//!    are generated ([`constraints`]);
//! 4. the constraints are solved with pumpkin-solver and the valid mappings
//!    enumerated in randomized order ([`solve`]), or searched otherwise ([`search`]);
//! 5. every candidate is an ordinary ELEVATE strategy ([`strategy`]), compiled, verified
//!    and timed through the `shine` facade ([`mapping`]: [`mapping::run`] drives the
//!    methods, [`mapping::Mapper::evaluate_candidate`] evaluates one candidate).
//!
//! When the middle strategy is a template that fixes the mapping itself (a tiled
//! matrix product, say), [`params`] searches its numeric parameters instead: values,
//! derived parameters and requirements, enumerated or searched by the same methods
//! ([`tune`]: [`tune::run`], [`tune::Tuner::evaluate_candidate`]).
//!
//! Both engines take a request ([`mapping::Search`], [`tune::Tuning`], over an
//! [`engine::Run`]), report their progress to an [`engine::Progress`] (the command
//! line's progress bars, Python's signal checks), write and resume a [`log`], evaluate
//! their candidates in batches through one pool (the tuning database [`tunedb`], CPU
//! workers that compile and verify at once, one candidate timed per device; a tuning on
//! CUDA builds its next batch while the GPUs time one), and return a result value;
//! `shine explore` and `shine.explore` in Python are their front ends.
//! A tuning's candidates may also be measured elsewhere, by a cluster's workers
//! ([`remote`]: [`tune::run_remote`], what Python's `cluster=` runs on Dask).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod constraints;
pub mod engine;
pub mod log;
pub mod mapping;
pub mod params;
mod pool;
pub mod remote;
mod schedule;
pub mod search;
mod shared;
pub mod solve;
pub mod strategy;
pub mod tree;
pub mod tune;
pub mod tunedb;
pub mod tuning;

use constraints::{Constraint, Options};
use rise::Expr;
use strategy::{definition, location, mapping_steps, Flavor, StrategyFile};
use tree::MapTree;
use tuning::Bindings;

/// A point of the search space: split sizes for the maps of the middle program, and
/// a choice per concrete map of the split program.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Candidate {
    /// One size per map of [`Problem::base_tree`] (1: not split).
    pub splits: Vec<i64>,
    /// One choice per map of the split program's tree (Table 2's encoding).
    pub mapping: Vec<i32>,
}

/// What is searched: a definition, a middle strategy, a target and its limits.
pub struct Problem {
    /// The user's strategy file (may be empty).
    pub file: StrategyFile,
    /// The middle strategy, an expression over the file's definitions.
    pub mid: String,
    /// The definition's prepared body.
    pub body: Expr,
    /// How parallel maps are named for the target.
    pub flavor: Flavor,
    /// The constraint families and the choice domain.
    pub options: Options,
    /// The size bindings the program runs at (divisibility and limits hold for all).
    pub bindings: Vec<Bindings>,
    /// The most threads of a work-group.
    pub max_threads: i64,
    /// The rewriting budget of one strategy application.
    pub budget: u64,
    base_tree: MapTree,
    split_domains: Vec<Vec<i64>>,
}

/// The mapping space of one choice of split sizes.
#[derive(Clone, Debug)]
pub struct Space {
    /// The split sizes.
    pub splits: Vec<i64>,
    /// The program after the middle strategy and the splits (in DFNF).
    pub program: Expr,
    /// Its nesting tree.
    pub tree: MapTree,
    /// The values of every choice variable.
    pub domain: Vec<i32>,
    /// The constraints (the families of the options and the work-group limit).
    pub constraints: Vec<Constraint>,
}

impl Problem {
    /// Prepares a problem: applies the middle strategy and finds the maps to split.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        file: StrategyFile,
        mid: &str,
        body: Expr,
        flavor: Flavor,
        options: Options,
        bindings: Vec<Bindings>,
        max_threads: i64,
        budget: u64,
    ) -> Result<Problem, String> {
        let mut p = Problem {
            file,
            mid: mid.to_string(),
            body,
            flavor,
            options,
            bindings,
            max_threads,
            budget,
            base_tree: MapTree::default(),
            split_domains: Vec::new(),
        };
        let base = p.file.apply(
            &definition("explore_mid", &[p.mid.clone(), "DFNF".into()]),
            "explore_mid",
            &p.body,
            budget,
        )?;
        p.base_tree = tree::extract(&base).map_err(|e| e.0)?;
        p.split_domains = tuning::split_domains(&p.base_tree, &p.bindings);
        Ok(p)
    }

    /// The nesting tree of the middle program (the maps that may be split).
    pub fn base_tree(&self) -> &MapTree {
        &self.base_tree
    }

    /// The split sizes allowed per map of the middle program.
    pub fn split_domains(&self) -> &[Vec<i64>] {
        &self.split_domains
    }

    /// The strategy steps up to the mapping: `MID ; splitJoin(s) @ ... ; DFNF`.
    fn tuned_parts(&self, splits: &[i64]) -> Vec<String> {
        let mut parts = vec![self.mid.clone()];
        let mut order: Vec<usize> = (0..self.base_tree.maps.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(self.base_tree.maps[i].path.len()));
        for i in order {
            let s = splits.get(i).copied().unwrap_or(1);
            if let (true, Some(path)) = (s > 1, self.base_tree.maps[i].applied_path()) {
                parts.push(format!("splitJoin({s}){}", location(path)));
            }
        }
        parts.push("DFNF".into());
        parts
    }

    /// The mapping space of a choice of split sizes.
    pub fn space(&self, splits: &[i64]) -> Result<Space, String> {
        let defs = definition("explore_tuned", &self.tuned_parts(splits));
        let program = self
            .file
            .apply(&defs, "explore_tuned", &self.body, self.budget)?;
        let tree = tree::extract(&program).map_err(|e| e.0)?;
        let domain = self.options.domain();
        let mut constraints = constraints::generate(&tree, &self.options);
        if self.options.work_groups {
            let counts = tuning::max_counts(&tree, &self.bindings);
            constraints.extend(tuning::work_group_limit(
                &tree,
                &counts,
                self.options.dims,
                &domain,
                self.max_threads,
            ));
        }
        Ok(Space {
            splits: splits.to_vec(),
            program,
            tree,
            domain,
            constraints,
        })
    }

    /// The candidate as the definition `name` of a strategy file (append it to the
    /// user's file with [`StrategyFile::with`]).
    pub fn strategy(&self, space: &Space, mapping: &[i32], name: &str) -> Result<String, String> {
        let paths: Vec<_> = space.tree.maps.iter().map(|m| m.path.clone()).collect();
        if paths.len() != mapping.len() {
            return Err(format!(
                "the mapping has {} choices, the program {} maps",
                mapping.len(),
                paths.len()
            ));
        }
        let mut parts = self.tuned_parts(&space.splits);
        parts.extend(mapping_steps(&paths, mapping, self.flavor)?);
        parts.push("lowerToC".into());
        Ok(definition(name, &parts))
    }

    /// A candidate in words: its maps after the splits, each with its level and number of
    /// iterations, nested as the loops are ([`strategy::in_words`]).
    pub fn describe(&self, splits: &[i64], mapping: &[i32]) -> Result<String, String> {
        let space = self.space(splits)?;
        strategy::in_words(&space.tree, mapping, self.flavor)
    }

    /// Applies a candidate's strategy to the definition: the lowered program.
    pub fn lower(&self, space: &Space, mapping: &[i32]) -> Result<Expr, String> {
        let defs = self.strategy(space, mapping, "explore_candidate")?;
        self.file
            .apply(&defs, "explore_candidate", &self.body, self.budget)
    }
}
