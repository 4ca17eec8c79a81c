//! The mapping search as a library: a tiny search of scale2d on the C target through
//! `explore::mapping`, with a database and two workers, and `check_constraints` stopped by
//! its budget.

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

/// With a database, a second search compiles and times nothing and ranks the same; two
/// workers find what one does.
#[test]
fn a_database_keeps_every_mapping_and_workers_agree() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut s = search(5);
    s.run.db = Some(dir.path().join("map.db"));
    s.run.jobs = 2;
    let first = explore::mapping::run(&s, &mut Quiet).expect("the search runs");
    let valid = first.methods[0].valid;
    assert!(valid >= 1 && first.timed >= valid, "{:?}", first.methods);
    assert_eq!(first.from_database, 0);
    let again = explore::mapping::run(&s, &mut Quiet).expect("the search runs again");
    assert_eq!((again.timed, again.from_database), (0, 5));
    let ranked = |r: &SearchResult| -> Vec<(Vec<i64>, Vec<i32>, Option<f64>)> {
        r.ranked()
            .iter()
            .map(|r| {
                (
                    r.candidate.splits.clone(),
                    r.candidate.mapping.clone(),
                    r.ms,
                )
            })
            .collect()
    };
    assert_eq!(ranked(&again), ranked(&first));
    let serial = explore::mapping::run(&search(5), &mut Quiet).expect("one worker");
    let verdicts = |r: &SearchResult| -> Vec<(explore::Candidate, bool)> {
        let mut v: Vec<_> = r
            .records
            .iter()
            .map(|r| (r.candidate.clone(), r.ms.is_some()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(verdicts(&serial), verdicts(&first));
}

#[test]
fn check_constraints_stops_at_its_budget() {
    let report = explore::mapping::check_constraints(&search(2), &mut Quiet).expect("it runs");
    assert_eq!(report.checked, 2);
    assert!(!report.complete());
    assert!(report.raw > 2);
}
