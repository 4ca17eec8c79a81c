//! The cost model: how much work a program does, counted as operations with
//! loop trip counts, at representative sizes.
//!
//! An *operation* is a built-in applied (`+`, `a[i]`, `length`, `fst`, a pair
//! built, ...), a function call, a conditional, or one iteration of `build` or
//! `ifold`; variables, literals, `let` and `fun` are free
//! ([`crate::interp::eval_counting`]). Sizes are symbolic in a program, so the
//! cost is measured by evaluating it where every input array (at every level)
//! has length `n`, for each `n` of [`SIZES`], on seeded random values: the
//! count is exact for those sizes and, measured at two of them, shows how the
//! cost grows (a simplification from O(n) to O(n²) costs more at `n = 12`
//! even where it does not at `n = 3`).
//!
//! [`Cost::no_more_than`] is the comparison simplification must pass.

use crate::interp::{eval_program_counting, Value};
use crate::random::{random_value, Rng, ValueShape};
use crate::Program;
use std::fmt;

/// The array lengths at which costs are measured.
pub const SIZES: [usize; 2] = [3, 12];

/// The seed of the random input values.
const SEED: u64 = 17;

/// A program's cost: the operations it performs at each measured size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cost {
    /// `(n, operations)` for each size `n`.
    pub at: Vec<(usize, u64)>,
}

impl Cost {
    /// Whether this costs at most `other` at every size both were measured at.
    pub fn no_more_than(&self, other: &Cost) -> bool {
        self.at
            .iter()
            .all(|(n, c)| other.at.iter().all(|(m, d)| m != n || c <= d))
    }

    /// The operations at the largest measured size.
    pub fn largest(&self) -> u64 {
        self.at.last().map_or(0, |(_, c)| *c)
    }

    /// `self / before` at each size, for reports (`1.00` is no change).
    pub fn ratios(&self, before: &Cost) -> Vec<(usize, f64)> {
        self.at
            .iter()
            .filter_map(|(n, c)| {
                let (_, d) = before.at.iter().find(|(m, _)| m == n)?;
                Some((*n, *c as f64 / (*d).max(1) as f64))
            })
            .collect()
    }
}

impl fmt::Display for Cost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .at
            .iter()
            .map(|(n, c)| format!("{c} at n = {n}"))
            .collect();
        write!(f, "{} operations", parts.join(", "))
    }
}

/// Input values where every array has length `n` (`None` for function inputs).
pub fn inputs_of_size(p: &Program, n: usize, seed: u64) -> Option<Vec<Value>> {
    let shape = ValueShape {
        min_len: n,
        max_len: n,
        ..ValueShape::default()
    };
    let mut rng = Rng::new(seed);
    p.inputs
        .iter()
        .map(|i| random_value(&i.ty, &mut rng, &shape))
        .collect()
}

/// The operations `p` performs when every input array has length `n`, or
/// `None` where it has function inputs or its evaluation fails.
pub fn cost_at(p: &Program, n: usize) -> Option<u64> {
    let inputs = inputs_of_size(p, n, SEED)?;
    eval_program_counting(p, &inputs).ok().map(|(_, c)| c)
}

/// The cost of `p` at every size of [`SIZES`] (`None` as for [`cost_at`]).
pub fn cost(p: &Program) -> Option<Cost> {
    cost_at_sizes(p, &SIZES)
}

/// The cost of `p` at the given sizes (`None` as for [`cost_at`]).
pub fn cost_at_sizes(p: &Program, sizes: &[usize]) -> Option<Cost> {
    let at = sizes
        .iter()
        .map(|&n| cost_at(p, n).map(|c| (n, c)))
        .collect::<Option<Vec<_>>>()?;
    Some(Cost { at })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_program;

    #[test]
    fn loops_count_their_iterations() {
        // Per element: one `build` iteration, `v[i]`, `*`, `v[i]`; plus `length v`.
        let p = parse_program("input v : Vector\nbuild (length v) (fun i -> v[i] * v[i])").unwrap();
        assert_eq!(cost_at(&p, 3), Some(2 + 3 * 4));
        assert_eq!(cost_at(&p, 12), Some(2 + 12 * 4));
        // A loop inside a loop: quadratic.
        let q = parse_program(
            "input v : Vector\nbuild (length v) (fun i -> ifold (fun s j -> s + v[j]) 0.0 (length v))",
        )
        .unwrap();
        let c = cost(&q).unwrap();
        assert!(c.at[1].1 > 10 * c.at[0].1, "{c}");
        assert!(cost(&p).unwrap().no_more_than(&c));
        assert!(!c.no_more_than(&cost(&p).unwrap()));
    }

    #[test]
    fn failing_programs_have_no_cost() {
        let p = parse_program("input v : Vector\nv[100]").unwrap();
        assert_eq!(cost(&p), None);
    }
}
