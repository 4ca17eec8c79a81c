//! Solving the constraints with pumpkin-solver, and the raw (unconstrained)
//! assignments the paper's random search draws from.

use crate::constraints::{satisfies, Constraint};
use pumpkin_solver::conflict_resolvers::resolvers::ResolutionResolver;
use pumpkin_solver::core::predicate;
use pumpkin_solver::core::results::solution_iterator::IteratedSolution;
use pumpkin_solver::core::results::ProblemSolution;
use pumpkin_solver::core::termination::Indefinite;
use pumpkin_solver::Solver;
use splitmix::SplitMix64;

/// The generator of a search with `seed` (the shared [`SplitMix64`]). How the seed becomes its
/// state is explore's own and must stay as it is, so that a seed replays a search.
pub fn seeded_rng(seed: u64) -> SplitMix64 {
    SplitMix64::from_state(seed ^ 0x9e37_79b9_7f4a_7c15)
}

/// Every assignment of `n` variables over `domain` that satisfies the constraints,
/// found by pumpkin (at most `limit`), in the order of `rng` (the solver's order
/// shuffled: the paper enumerates in randomized order).
pub fn enumerate(
    n: usize,
    domain: &[i32],
    constraints: &[Constraint],
    limit: usize,
    rng: &mut SplitMix64,
) -> Vec<Vec<i32>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut solver = Solver::default();
    let vars: Vec<_> = (0..n)
        .map(|_| solver.new_sparse_integer(domain.to_vec()))
        .collect();
    let tag = solver.new_constraint_tag();
    for c in constraints {
        for clause in &c.clauses {
            let preds: Vec<_> = clause
                .iter()
                .flat_map(|l| {
                    let x = vars[l.var];
                    l.values.iter().map(move |&v| predicate![x == v])
                })
                .collect();
            solver.add_clause(preds, tag);
        }
    }
    let mut brancher = solver.default_brancher();
    let mut termination = Indefinite;
    let mut resolver = ResolutionResolver::default();
    let mut it = solver.get_solution_iterator(&mut brancher, &mut termination, &mut resolver);
    let mut out = Vec::new();
    while out.len() < limit {
        match it.next_solution() {
            IteratedSolution::Solution(s, _, _, _) => {
                out.push(vars.iter().map(|&x| s.get_integer_value(x)).collect());
            }
            _ => break,
        }
    }
    rng.shuffle(&mut out);
    out
}

/// Every raw assignment (the whole unconstrained space), in lexicographic order; for
/// checking the solver on small programs.
pub fn all_assignments(n: usize, domain: &[i32]) -> Vec<Vec<i32>> {
    let mut out = vec![Vec::new()];
    for _ in 0..n {
        out = out
            .into_iter()
            .flat_map(|a: Vec<i32>| {
                domain.iter().map(move |&v| {
                    let mut b = a.clone();
                    b.push(v);
                    b
                })
            })
            .collect();
    }
    out
}

/// A uniformly random raw assignment.
pub fn random_assignment(n: usize, domain: &[i32], rng: &mut SplitMix64) -> Vec<i32> {
    (0..n).map(|_| domain[rng.below(domain.len())]).collect()
}

/// The paper's random search: draws raw assignments until one satisfies the
/// constraints (at most `tries`); returns it and the number drawn.
pub fn random_valid(
    n: usize,
    domain: &[i32],
    constraints: &[Constraint],
    tries: usize,
    rng: &mut SplitMix64,
) -> (Option<Vec<i32>>, usize) {
    for t in 1..=tries {
        let a = random_assignment(n, domain, rng);
        if satisfies(constraints, &a) {
            return (Some(a), t);
        }
    }
    (None, tries)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded seeds replay: these outputs were computed with explore's own copy of the
    /// generator, before it moved to the shared `splitmix` crate.
    #[test]
    fn recorded_seeds_replay() {
        let mut r = seeded_rng(7);
        let drawn = [r.next_u64(), r.next_u64(), r.below(10) as u64];
        let mut v = [1, 2, 3, 4, 5, 6];
        r.shuffle(&mut v);
        assert_eq!(drawn, [17039259473404265729, 18363971414914884509, 4]);
        assert_eq!(v, [3, 1, 5, 4, 6, 2]);
    }
}
