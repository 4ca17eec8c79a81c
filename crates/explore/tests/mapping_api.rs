//! The mapping search as a library: a tiny search of scale2d on the C target through
//! `explore::mapping`, and `check_constraints` stopped by its budget.

use explore::engine::{Limits, Quiet, Run};
use explore::mapping::{Search, SearchResult};
use shine::{SourceFile, Target};

const PROGRAM: &str = "def scale2d = fun (a: f32) m => \
                       m |> map (fun row => row |> map (fun x => x * a))";

fn search(budget: usize) -> Search {
    let mut run = Run::new(SourceFile::new("scale.rise", PROGRAM), "scale2d", Target::C);
    run.runs = 1;
    run.limits = Limits {
        budget: Some(budget),
        time: None,
    };
    let nats = vec![("n".to_string(), 4), ("m".to_string(), 8)];
    Search::new(run, nats)
}

#[test]
fn a_tiny_search_ranks_verified_candidates_and_counts_the_rest() {
    let result: SearchResult = explore::mapping::run(&search(3), &mut Quiet).expect("it runs");
    assert_eq!(result.stats.maps, 2);
    assert_eq!(result.records.len(), 3);
    let summary = &result.methods[0];
    assert_eq!(summary.candidates, 3);
    let failed = result
        .records
        .iter()
        .filter(|r| r.failure.is_some())
        .count();
    assert_eq!(summary.valid + failed, 3);
    assert_eq!(result.failures_by_cause.values().sum::<usize>(), failed);
    let ranked = result.ranked();
    assert_eq!(ranked.len(), summary.valid);
    assert!(ranked.windows(2).all(|w| w[0].ms <= w[1].ms));
    let best = ranked.first().expect("a mapping of scale2d runs");
    assert!(
        best.strategy.starts_with("def candidate"),
        "{}",
        best.strategy
    );
    assert_eq!(summary.best_ms, best.ms);
}

#[test]
fn check_constraints_stops_at_its_budget() {
    let report = explore::mapping::check_constraints(&search(2), &mut Quiet).expect("it runs");
    assert_eq!(report.checked, 2);
    assert!(!report.complete());
    assert!(report.raw > 2);
}
