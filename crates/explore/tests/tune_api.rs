//! The tuning engine as a library: a tiny tuning of a split size on the C target through
//! `explore::tune`, its progress, its log and `resume`, one candidate evaluated alone,
//! and a run stopped by its progress.

use explore::engine::{Limits, Phase, Progress, Run, Standing};
use explore::search::Method;
use explore::tune::{Record, Tuner, Tuning};
use shine::{SourceFile, Target};
use std::ops::ControlFlow;

const PROGRAM: &str = "def scale2d = fun (a: f32) m => \
                       m |> map (fun row => row |> map (fun x => x * a))";

const STRATEGY: &str = "def splitOuter(s) = DFNF ; splitJoinMap(s) @ outermost(appliedMap) ;; \
                        DFNF ; lowerToC";

fn set(n: i64, m: i64) -> Vec<(String, i64)> {
    vec![("n".to_string(), n), ("m".to_string(), m)]
}

/// `s` of 2, 3 and 4 chunks; verified at n = 8 or else n = 12 and timed at both: s = 3
/// applies to the second set only.
fn tuning(budget: usize) -> Tuning {
    let mut run = Run::new(SourceFile::new("scale.rise", PROGRAM), "scale2d", Target::C);
    run.strategy = Some(SourceFile::new("split.elv", STRATEGY));
    run.runs = 1;
    run.limits = Limits {
        budget: Some(budget),
        time: None,
    };
    Tuning {
        run,
        template: "splitOuter(s)".into(),
        params: vec!["s=2,3,4".into()],
        requires: vec![],
        nats: set(8, 4),
        verify_nats: vec![set(12, 4)],
        time_nats: vec![set(8, 4), set(12, 2)],
    }
}

/// Records what the run reports.
#[derive(Default)]
struct Recorder {
    candidates: Vec<(Record, Standing)>,
    phases: Vec<String>,
    stop_after: Option<usize>,
}

impl Progress<Record> for Recorder {
    fn on_phase(&mut self, phase: Phase<'_>) {
        self.phases.push(match phase {
            Phase::Note(_) => "note".into(),
            Phase::MethodStarted { method, resumed } => format!("start {method} {resumed}"),
            Phase::MethodDone(s) => format!("done {} {}", s.method, s.candidates),
            Phase::Running(what) => format!("running {what}"),
        });
    }

    fn on_candidate(&mut self, record: &Record, standing: &Standing) -> ControlFlow<()> {
        self.candidates.push((record.clone(), *standing));
        match self.stop_after {
            Some(n) if self.candidates.len() >= n => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        }
    }
}

fn s_of(r: &Record) -> i64 {
    r.assignment
        .iter()
        .find(|(k, _)| k == "s")
        .map_or(0, |p| p.1)
}

#[test]
fn a_tiny_tuning_keeps_the_verified_best_per_set_and_resumes_from_its_log() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = dir.path().join("run.jsonl");
    let mut t = tuning(3);
    t.run.log = Some(log.clone());
    let mut progress = Recorder::default();
    let result = explore::tune::run(&t, &mut progress).expect("the tuning runs");
    assert_eq!(result.raw_assignments, 3);
    assert_eq!(result.records.len(), 3, "{:?}", result.records);
    assert_eq!(progress.candidates.len(), 3);
    assert_eq!(progress.candidates[2].1.done, 3);
    assert!(progress.phases.contains(&"start solver 0".to_string()));
    assert!(progress.phases.contains(&"done solver 3".to_string()));
    for r in &result.records {
        assert!(r.is_valid(), "{r:?}");
        let timed: Vec<bool> = r.evaluation.ms.iter().map(Option::is_some).collect();
        // s = 3 divides only the second set's n (12), s = 2 and 4 both
        let expected = if s_of(r) == 3 {
            vec![false, true]
        } else {
            vec![true, true]
        };
        assert_eq!(timed, expected, "{r:?}");
    }
    let best_first = result.bests[0].as_ref().expect("a best for n = 8");
    assert_ne!(best_first.assignment, vec![("s".to_string(), 3)]);
    let fastest_first = result
        .records
        .iter()
        .filter_map(|r| r.evaluation.ms[0])
        .fold(f64::INFINITY, f64::min);
    assert_eq!(best_first.ms, fastest_first);
    let summary = &result.methods[0];
    assert_eq!(
        (summary.method, summary.candidates, summary.valid),
        (Method::Solver, 3, 3)
    );
    assert!(
        result.failures_by_cause.is_empty(),
        "{:?}",
        result.failures_by_cause
    );
    // the best of each set compiles and verifies again at its sizes
    for k in 0..2 {
        let best = result.bests[k].as_ref().expect("a best per set");
        let strategy = shine::StrategySource {
            file: SourceFile::new(
                "best.elv",
                format!("{STRATEGY}\n{}", best.definition("best")),
            ),
            apply: "best".into(),
        };
        let program = SourceFile::new("scale.rise", PROGRAM);
        let artifact = shine::compile(
            &program,
            "scale2d",
            Some(&strategy),
            Target::C,
            &Default::default(),
        )
        .expect("the best compiles");
        let sizes = result.sizes_of(k).expect("its sizes");
        shine::verify(
            &artifact,
            shine::Inputs::Random { seed: 7 },
            &sizes,
            &Default::default(),
        )
        .expect("the best verifies");
    }
    // the log: a header and three candidates; resumed, nothing is re-run
    let lines = std::fs::read_to_string(&log).expect("the log");
    assert_eq!(lines.lines().count(), 4, "{lines}");
    let mut again = tuning(3);
    again.run.resume = Some(log.clone());
    let resumed = explore::tune::run(&again, &mut Recorder::default()).expect("resumed");
    assert_eq!(resumed.methods[0].resumed, 3);
    assert_eq!(resumed.methods[0].candidates, 0);
    assert!(resumed.records.iter().all(|r| r.resumed));
    assert_eq!(resumed.bests[0].as_ref().map(|b| b.ms), Some(best_first.ms));
    // another space does not resume this log
    let mut other = tuning(3);
    other.params = vec!["s=2,4".into()];
    other.run.resume = Some(log);
    let e = explore::tune::run(&other, &mut Recorder::default()).expect_err("another space");
    assert!(e.to_string().contains("the search space differs"), "{e}");
}

#[test]
fn one_candidate_is_evaluated_alone_with_its_failure_cause() {
    let tuner = Tuner::new(&tuning(1)).expect("a valid tuning");
    let ok = tuner.evaluate_candidate(&vec![("s".to_string(), 4)]);
    assert!(ok.failure.is_none(), "{ok:?}");
    assert!(ok.ms.iter().all(Option::is_some), "{ok:?}");
    // 5 divides neither 8 nor 12: no verification set applies
    let none = tuner.evaluate_candidate(&vec![("s".to_string(), 5)]);
    let failure = none.failure.expect("a failure");
    assert_eq!(failure.cause, "not verified", "{failure}");
    assert!(none.ms.iter().all(Option::is_none));
}

#[test]
fn a_progress_stops_the_run_between_candidates() {
    let mut t = tuning(3);
    t.run.methods = vec![Method::Solver, Method::Random];
    let mut progress = Recorder {
        stop_after: Some(1),
        ..Recorder::default()
    };
    let result = explore::tune::run(&t, &mut progress).expect("stopped, not failed");
    assert!(result.interrupted);
    assert_eq!(result.records.len(), 1);
    assert_eq!(result.methods.len(), 1, "the second method does not start");
}

#[test]
fn bad_requests_are_refused_before_anything_compiles() {
    let mut t = tuning(1);
    t.params = vec!["q=1,2".into()];
    let e = Tuner::new(&t).err().expect("q is no parameter");
    // the library names its own settings, not a command line's flags
    let text = e.to_string();
    assert!(
        text.contains(
            "the parameter `q` of `Tuning::params` names neither a parameter of \
                       `Tuning::template`"
        ),
        "{e}"
    );
    assert!(!text.contains("--"), "{e}");
    let mut t = tuning(1);
    t.run.limits = Limits::default();
    let e = Tuner::new(&t).err().expect("no budget");
    assert!(
        e.to_string()
            .contains("give a budget (`Limits::budget` candidates) or a time (`Limits::time`)"),
        "{e}"
    );
    let mut t = tuning(1);
    t.nats = vec![("k".to_string(), 3)];
    let e = Tuner::new(&t).err().expect("k is no size");
    assert!(e.to_string().contains("no size of `scale2d`"), "{e}");
}

/// With a database, a second run compiles and times nothing and finds the same bests; two
/// workers verify the same candidates as one.
#[test]
fn a_database_keeps_every_outcome_and_workers_agree() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut t = tuning(3);
    t.run.db = Some(dir.path().join("tune.db"));
    t.run.jobs = 2;
    let mut progress = Recorder::default();
    let first = explore::tune::run(&t, &mut progress).expect("the tuning runs");
    assert_eq!((first.timed, first.from_database), (3, 0));
    assert!(
        progress.phases.iter().any(|p| p.contains("on 2 workers")),
        "{:?}",
        progress.phases
    );
    let mut progress = Recorder::default();
    let again = explore::tune::run(&t, &mut progress).expect("the tuning runs again");
    assert_eq!((again.timed, again.from_database), (0, 3));
    assert!(
        !progress.phases.iter().any(|p| p.starts_with("running")),
        "{:?}",
        progress.phases
    );
    assert_eq!(again.bests, first.bests);
    let serial = explore::tune::run(&tuning(3), &mut Recorder::default()).expect("serial");
    let valid = |r: &explore::tune::TuningResult| {
        let mut s: Vec<i64> = r
            .records
            .iter()
            .filter(|r| r.is_valid())
            .map(s_of)
            .collect();
        s.sort_unstable();
        s
    };
    assert_eq!(valid(&serial), valid(&first));
}

#[test]
fn devices_are_refused_off_cuda_and_jobs_must_be_positive() {
    let mut t = tuning(1);
    t.run.devices = vec![0, 1];
    let e = Tuner::new(&t).err().expect("no devices on C");
    assert!(e.to_string().contains("chooses CUDA devices"), "{e}");
    let mut t = tuning(1);
    t.run.jobs = 0;
    let e = Tuner::new(&t).err().expect("no workers");
    assert!(e.to_string().contains("must be 1 or more"), "{e}");
}

/// The interpreter's reference is the program's meaning: computed once per size set a
/// candidate is verified at, however many candidates (and workers) there are, and every
/// candidate is still compared with it. Computed per candidate, the count would be the
/// number of candidates verified.
#[test]
fn the_reference_is_computed_once_per_size_set_not_per_candidate() {
    for jobs in [1, 3] {
        let mut t = tuning(5);
        t.params = vec!["s=1,2,4,8,3".into()];
        t.run.jobs = jobs;
        let result = explore::tune::run(&t, &mut Recorder::default()).expect("the tuning runs");
        assert_eq!(result.records.len(), 5);
        assert!(
            result.records.iter().all(|r| r.is_valid()),
            "{:?}",
            result.records
        );
        // s = 1, 2, 4, 8 verified at n = 8, s = 3 at n = 12: two sets, five candidates
        assert_eq!(result.reference_evaluations, 2, "{jobs} workers");
    }
    // a candidate evaluated alone by a tuner: one set, one reference, whatever the number
    let tuner = Tuner::new(&tuning(1)).expect("a valid tuning");
    for s in [1, 2, 4, 8] {
        let ev = tuner.evaluate_candidate(&vec![("s".to_string(), s)]);
        assert!(ev.failure.is_none(), "{ev:?}");
    }
    assert_eq!(tuner.reference_evaluations(), 1);
}
