//! How long each side of a case is timed: the budget, the rounds and the bounds on the runs.

use super::{err, CpuArgs};
use crate::cli::CliError;
use std::time::Duration;

/// The timing settings of a `bench cpu` run, from its arguments.
pub(super) struct Settings {
    pub(super) budget_s: f64,
    pub(super) rounds: usize,
    pub(super) min_runs: usize,
    pub(super) max_runs: usize,
    pub(super) settle: Duration,
}

impl Settings {
    pub(super) fn of(args: &CpuArgs) -> Result<Settings, CliError> {
        let (budget, rounds, min_runs, max_runs) = if args.quick {
            (0.5, 2, 2, 50)
        } else {
            (3.0, 5, 3, 200)
        };
        let s = Settings {
            budget_s: args.budget.unwrap_or(budget),
            rounds: args.rounds.unwrap_or(rounds).max(1),
            min_runs: args.min_runs.unwrap_or(min_runs).max(1),
            max_runs: args.max_runs.unwrap_or(max_runs),
            settle: Duration::from_millis(args.settle_ms),
        };
        if s.max_runs < s.min_runs || s.budget_s.is_nan() || s.budget_s < 0.0 {
            return Err(err(
                "--max-runs must be at least --min-runs, --budget not negative",
            ));
        }
        Ok(s)
    }

    /// Timed runs for a side whose single run took `first_ms`.
    pub(super) fn runs_for(&self, first_ms: f64) -> usize {
        let n = (self.budget_s * 1e3 / first_ms.max(1e-3)).ceil();
        (n.min(self.max_runs as f64) as usize).clamp(self.min_runs, self.max_runs)
    }

    /// Untimed runs before each chunk: one for fast code (caches, page faults, waking
    /// threads after the other side ran), none when a run is long anyway.
    pub(super) fn warmup_for(&self, first_ms: f64) -> usize {
        usize::from(first_ms < 200.0)
    }
}

/// `total` runs split into `rounds` chunks as evenly as possible.
pub(super) fn chunks(total: usize, rounds: usize) -> Vec<usize> {
    (0..rounds)
        .map(|i| total / rounds + usize::from(i < total % rounds))
        .collect()
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_split_evenly() {
        assert_eq!(chunks(7, 3), vec![3, 2, 2]);
        assert_eq!(chunks(2, 5), vec![1, 1, 0, 0, 0]);
        assert_eq!(chunks(0, 2), vec![0, 0]);
    }

    #[test]
    fn runs_stay_within_bounds() {
        let s = Settings {
            budget_s: 3.0,
            rounds: 5,
            min_runs: 3,
            max_runs: 200,
            settle: Duration::ZERO,
        };
        assert_eq!(s.runs_for(7000.0), 3);
        assert_eq!(s.runs_for(100.0), 30);
        assert_eq!(s.runs_for(0.001), 200);
    }
}
