//! Search methods over candidates: the paper's two (constraint-solver enumeration in
//! randomized order, and random assignments filtered by the constraints) and a guided
//! one (an evolutionary search: mutations of the best candidates found so far, each
//! mutant still a solution of the constraints).

use crate::constraints::satisfies;
use crate::solve::{enumerate, random_valid, seeded_rng};
use crate::{Candidate, Problem, Space};
use splitmix::SplitMix64;
use std::collections::{HashMap, HashSet};

/// How candidates are proposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// Split sizes at random; mappings enumerated by the solver in randomized order.
    Solver,
    /// Split sizes and mappings at random, kept only when they satisfy the constraints.
    Random,
    /// Tournament selection and mutation of the best candidates (after a few solver
    /// candidates to start from).
    Evolutionary,
}

impl Method {
    /// Its name on the command line and in logs.
    pub fn name(self) -> &'static str {
        match self {
            Method::Solver => "solver",
            Method::Random => "random",
            Method::Evolutionary => "evolutionary",
        }
    }

    /// Every method.
    pub const ALL: [Method; 3] = [Method::Solver, Method::Random, Method::Evolutionary];

    /// The method of a name (as [`Method::name`] gives it); an error names the others.
    pub fn named(name: &str) -> Result<Method, String> {
        Method::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| {
                format!("no search method is named `{name}` (solver, random, evolutionary)")
            })
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// The most mappings enumerated for one choice of split sizes.
pub const ENUMERATION_LIMIT: usize = 50_000;
/// The most raw assignments the random search draws for one candidate.
pub const RANDOM_TRIES: usize = 2_000_000;
/// Solver candidates the evolutionary search starts from.
pub const SEED_CANDIDATES: usize = 6;

/// A split program's space and its enumerated mappings.
struct Cached {
    space: Result<Space, String>,
    solutions: Option<Vec<Vec<i32>>>,
    next: usize,
}

/// A proposed candidate.
#[derive(Clone, Debug)]
pub struct Proposal {
    /// The candidate.
    pub candidate: Candidate,
    /// Raw assignments drawn to find it (random search; 0 otherwise).
    pub draws: usize,
}

/// A search in progress.
pub struct Searcher {
    /// The method.
    pub method: Method,
    rng: SplitMix64,
    spaces: HashMap<Vec<i64>, Cached>,
    seen: HashSet<Candidate>,
    population: Vec<(Candidate, f64)>,
    proposed: usize,
    /// Raw assignments drawn in all (random search).
    pub draws: usize,
    /// Of which valid.
    pub valid_draws: usize,
}

impl Searcher {
    /// A search with a seed.
    pub fn new(method: Method, seed: u64) -> Searcher {
        Searcher {
            method,
            rng: seeded_rng(seed),
            spaces: HashMap::new(),
            seen: HashSet::new(),
            population: Vec::new(),
            proposed: 0,
            draws: 0,
            valid_draws: 0,
        }
    }

    /// The space of a choice of split sizes (built once).
    pub fn space(&mut self, p: &Problem, splits: &[i64]) -> Result<&Space, String> {
        let c = self
            .spaces
            .entry(splits.to_vec())
            .or_insert_with(|| Cached {
                space: p.space(splits),
                solutions: None,
                next: 0,
            });
        c.space.as_ref().map_err(Clone::clone)
    }

    fn random_splits(&mut self, p: &Problem) -> Vec<i64> {
        p.split_domains()
            .iter()
            .map(|d| d[self.rng.below(d.len())])
            .collect()
    }

    fn solutions(&mut self, p: &Problem, splits: &[i64]) -> Option<&mut Cached> {
        self.space(p, splits).ok()?;
        let rng = &mut self.rng;
        let c = self.spaces.get_mut(splits)?;
        if c.solutions.is_none() {
            let s = c.space.as_ref().ok()?;
            c.solutions = Some(enumerate(
                s.tree.maps.len(),
                &s.domain,
                &s.constraints,
                ENUMERATION_LIMIT,
                rng,
            ));
        }
        Some(c)
    }

    /// The next unseen solver candidate for some split sizes (tries several).
    fn next_solver(&mut self, p: &Problem) -> Option<Candidate> {
        for _ in 0..64 {
            let splits = self.random_splits(p);
            let seen = std::mem::take(&mut self.seen);
            let found = self.solutions(p, &splits).and_then(|c| {
                let sols = c.solutions.as_deref().unwrap_or(&[]);
                while c.next < sols.len() {
                    let mapping = sols[c.next].clone();
                    c.next += 1;
                    let cand = Candidate {
                        splits: splits.clone(),
                        mapping,
                    };
                    if !seen.contains(&cand) {
                        return Some(cand);
                    }
                }
                None
            });
            self.seen = seen;
            if found.is_some() {
                return found;
            }
        }
        None
    }

    fn next_random(&mut self, p: &Problem) -> Option<(Candidate, usize)> {
        for _ in 0..64 {
            let splits = self.random_splits(p);
            let Ok(space) = self.space(p, &splits) else {
                continue;
            };
            let (n, domain, constraints) = (
                space.tree.maps.len(),
                space.domain.clone(),
                space.constraints.clone(),
            );
            let (found, draws) =
                random_valid(n, &domain, &constraints, RANDOM_TRIES, &mut self.rng);
            self.draws += draws;
            if let Some(mapping) = found {
                self.valid_draws += 1;
                let cand = Candidate { splits, mapping };
                if !self.seen.contains(&cand) {
                    return Some((cand, draws));
                }
            }
        }
        None
    }

    fn next_evolved(&mut self, p: &Problem) -> Option<Candidate> {
        if self.population.len() < SEED_CANDIDATES || self.proposed < SEED_CANDIDATES {
            return self.next_solver(p);
        }
        for _ in 0..32 {
            // Tournament of 3 among the evaluated candidates.
            let parent = (0..3)
                .map(|_| &self.population[self.rng.below(self.population.len())])
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(c, _)| c.clone())?;
            let mut splits = parent.splits.clone();
            let change_splits = self.rng.below(3) == 0;
            if change_splits && !splits.is_empty() {
                let i = self.rng.below(splits.len());
                let d = &p.split_domains()[i];
                splits[i] = d[self.rng.below(d.len())];
            }
            let Some(c) = self.solutions(p, &splits) else {
                continue;
            };
            let sols = c.solutions.clone().unwrap_or_default();
            // The unseen solution nearest to the parent's mapping.
            let dist = |m: &[i32]| -> usize {
                if m.len() != parent.mapping.len() {
                    return m.len();
                }
                m.iter()
                    .zip(&parent.mapping)
                    .filter(|(a, b)| a != b)
                    .count()
            };
            let mut best: Option<(usize, Vec<i32>)> = None;
            let sample = sols.len().min(256);
            for _ in 0..sample {
                let m = &sols[self.rng.below(sols.len())];
                let cand = Candidate {
                    splits: splits.clone(),
                    mapping: m.clone(),
                };
                if self.seen.contains(&cand) {
                    continue;
                }
                let d = dist(m);
                if best.as_ref().is_none_or(|(bd, _)| d < *bd) {
                    best = Some((d, m.clone()));
                }
            }
            if let Some((_, mapping)) = best {
                return Some(Candidate { splits, mapping });
            }
        }
        self.next_solver(p)
    }

    /// The next candidate, or `None` when the space is exhausted.
    pub fn next(&mut self, p: &Problem) -> Option<Proposal> {
        let (candidate, draws) = match self.method {
            Method::Solver => (self.next_solver(p)?, 0),
            Method::Random => self.next_random(p)?,
            Method::Evolutionary => (self.next_evolved(p)?, 0),
        };
        self.seen.insert(candidate.clone());
        self.proposed += 1;
        Some(Proposal { candidate, draws })
    }

    /// Tells the search how a candidate did (throughput; `None` if it failed).
    pub fn report(&mut self, c: &Candidate, throughput: Option<f64>) {
        self.seen.insert(c.clone());
        if let Some(t) = throughput {
            self.population.push((c.clone(), t));
        }
    }

    /// Whether a candidate satisfies its space's constraints (e.g. one read back
    /// from a log).
    pub fn is_valid(&mut self, p: &Problem, c: &Candidate) -> bool {
        match self.space(p, &c.splits) {
            Ok(s) => s.tree.maps.len() == c.mapping.len() && satisfies(&s.constraints, &c.mapping),
            Err(_) => false,
        }
    }
}
