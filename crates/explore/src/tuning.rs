//! Numeric tuning parameters and their constraints.
//!
//! * **Split sizes**: every applied concrete map of the program may be split
//!   (`splitJoin(s)`: `map f x ~> join (map (map f) (split s x))`) before the
//!   mapping is chosen; the two maps it becomes are mapped independently (a
//!   work-group map over `n/s` tiles of `s` work-items, say). A size must divide the
//!   map's length at every size binding searched (divisibility) and be smaller than
//!   it; these constraints are unary, so they are solved by filtering the domains.
//! * **Work-group sizes** follow from the mapping: the threads of a work-group in
//!   dimension `d` are the iterations of its largest `mapLocal(d)` map. The device's
//!   limit on their product is a family of clauses ([`work_group_limit`]) posted with
//!   the mapping constraints, so the solver never proposes a mapping that needs more
//!   threads than a work-group has.

use crate::constraints::{Clause, Constraint, Family, Lit, LOCAL};
use crate::tree::MapTree;
use arith::Nat;

/// The split sizes tried (besides 1, no split).
pub const SPLIT_SIZES: [i64; 12] = [2, 4, 7, 8, 14, 16, 28, 32, 56, 64, 128, 256];

/// Size bindings (`n = 1024`, ...): one set per program instance searched.
pub type Bindings = Vec<(String, i64)>;

/// The value of `n` under every binding set, or `None` where a size is unknown.
pub fn eval_all(n: &Nat, bindings: &[Bindings]) -> Option<Vec<i64>> {
    bindings
        .iter()
        .map(|b| {
            n.eval(&|v: &arith::Var| b.iter().find(|(k, _)| **k == *v.name()).map(|(_, x)| *x))
                .ok()
        })
        .collect()
}

/// The split sizes allowed for each map of `tree` (always starting with 1).
pub fn split_domains(tree: &MapTree, bindings: &[Bindings]) -> Vec<Vec<i64>> {
    tree.maps
        .iter()
        .map(|m| {
            let mut d = vec![1];
            let counts = m
                .count
                .as_ref()
                .filter(|_| m.applied)
                .and_then(|n| eval_all(n, bindings));
            if let Some(counts) = counts.filter(|c| !c.is_empty()) {
                d.extend(
                    SPLIT_SIZES
                        .iter()
                        .copied()
                        .filter(|&s| counts.iter().all(|&c| c % s == 0 && s < c)),
                );
            }
            d
        })
        .collect()
}

/// The largest number of iterations of each map over the bindings (`None` if unknown).
pub fn max_counts(tree: &MapTree, bindings: &[Bindings]) -> Vec<Option<i64>> {
    tree.maps
        .iter()
        .map(|m| {
            m.count
                .as_ref()
                .and_then(|n| eval_all(n, bindings))
                .and_then(|c| c.into_iter().max())
        })
        .collect()
}

/// The most threads of a work-group in each dimension (CUDA's block limits; a
/// `mapLocal(2)` of more than 64 iterations cannot be launched).
pub const DIM_LIMITS: [i64; 3] = [1024, 1024, 64];

/// The work-group size limit as clauses: no local map with more iterations than its
/// dimension allows ([`DIM_LIMITS`]), and no set of local maps in distinct
/// dimensions (of one kernel) whose iterations multiply to more than `max_threads`.
pub fn work_group_limit(
    tree: &MapTree,
    counts: &[Option<i64>],
    dims: i32,
    domain: &[i32],
    max_threads: i64,
) -> Vec<Constraint> {
    let not_local =
        |g: i32| -> Vec<i32> { domain.iter().copied().filter(|&v| v != LOCAL + g).collect() };
    let n = tree.maps.len();
    let big = |c: i64| c > max_threads;
    let mut out = Vec::new();
    let mut clause_for = |ms: &[(usize, i32)]| {
        let clause: Clause = ms
            .iter()
            .map(|&(m, g)| Lit {
                var: m,
                values: not_local(g),
            })
            .collect();
        let text = ms
            .iter()
            .map(|&(m, g)| format!("enc({}) = {}", tree.maps[m].name, LOCAL + g))
            .collect::<Vec<_>>()
            .join(" ∧ ");
        out.push(Constraint {
            family: Family::Resources,
            text: format!("¬({text}): more than {max_threads} threads per work-group"),
            clauses: vec![clause],
        });
    };
    let count = |m: usize| counts.get(m).copied().flatten();
    for a in 0..n {
        let Some(ca) = count(a) else { continue };
        for g in 0..dims {
            if big(ca) || ca > DIM_LIMITS[g as usize] {
                clause_for(&[(a, g)]);
                continue;
            }
            for b in 0..n {
                let Some(cb) = count(b) else { continue };
                if b == a || tree.root(a) != tree.root(b) || big(cb) {
                    continue;
                }
                for h in (g + 1)..dims {
                    if big(ca * cb) {
                        clause_for(&[(a, g), (b, h)]);
                        continue;
                    }
                    for c in 0..n {
                        let Some(cc) = count(c) else { continue };
                        if c == a || c == b || tree.root(c) != tree.root(a) {
                            continue;
                        }
                        for k in (h + 1)..dims {
                            if big(ca * cb * cc) {
                                clause_for(&[(a, g), (b, h), (c, k)]);
                            }
                        }
                    }
                }
            }
        }
    }
    out
}
