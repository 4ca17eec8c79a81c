//! A tuning whose candidates a [`Remote`] measures (what Python's `cluster=` runs on Dask),
//! here a fake cluster that measures each request in this process, through its JSON, and
//! loses the candidates it is told to: the driver keeps the database, a lost candidate
//! fails alone and is not kept, and the database answers the same whichever side measured.

use explore::engine::{Error, Failure, Limits, Quiet, Run};
use explore::remote::{self, Identity, Measurement, Remote, Request, WORKER_LOST};
use explore::tune::{Record, Tuning, TuningResult};
use shine::{SourceFile, Target};
use std::sync::Mutex;

const PROGRAM: &str = "def scale2d = fun (a: f32) m => \
                       m |> map (fun row => row |> map (fun x => x * a))";

const STRATEGY: &str = "def splitOuter(s) = DFNF ; splitJoinMap(s) @ outermost(appliedMap) ;; \
                        DFNF ; lowerToC";

fn set(n: i64, m: i64) -> Vec<(String, i64)> {
    vec![("n".to_string(), n), ("m".to_string(), m)]
}

/// `s` of 3, 4 and 5 chunks, verified at n = 8 or else 12 and timed at n = 8 and n = 9:
/// s = 4 applies to the first time set only, s = 3 to the second only, s = 5 to no
/// verification set (it fails). Each set's best is known whatever the times.
fn tuning(db: &std::path::Path) -> Tuning {
    let mut run = Run::new(SourceFile::new("scale.rise", PROGRAM), "scale2d", Target::C);
    run.strategy = Some(SourceFile::new("split.elv", STRATEGY));
    run.runs = 1;
    run.db = Some(db.to_path_buf());
    run.limits = Limits {
        budget: Some(3),
        time: None,
    };
    Tuning {
        run,
        template: "splitOuter(s)".into(),
        params: vec!["s=3,4,5".into()],
        requires: vec![],
        nats: set(8, 4),
        verify_nats: vec![set(12, 4)],
        time_nats: vec![set(8, 4), set(9, 2)],
    }
}

/// A cluster of two workers in this process: each request goes through JSON both ways;
/// the candidates whose label is in `lose` are lost with their worker.
struct FakeCluster {
    lose: Vec<String>,
    requests: Mutex<Vec<Request>>,
}

impl FakeCluster {
    fn losing(lose: &[&str]) -> FakeCluster {
        FakeCluster {
            lose: lose.iter().map(ToString::to_string).collect(),
            requests: Mutex::new(Vec::new()),
        }
    }

    fn seen(&self) -> Vec<Request> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Remote for FakeCluster {
    fn capacity(&self) -> usize {
        2
    }

    fn identity(&self, target: Target) -> Result<Identity, Error> {
        remote::identity(target)
    }

    fn measure(&self, requests: &[Request]) -> Result<Vec<Result<Measurement, Failure>>, Error> {
        let mut answers = Vec::new();
        for r in requests {
            let sent = Request::from_json(&r.to_json())?;
            self.requests
                .lock()
                .expect("not poisoned")
                .push(sent.clone());
            if self.lose.contains(&sent.label()) {
                answers.push(Err(remote::lost("the worker's process died")));
                continue;
            }
            let answer = remote::measure(&sent)?;
            answers.push(Ok(Measurement::from_json(&answer.to_json())?));
        }
        Ok(answers)
    }
}

fn record_of(result: &TuningResult, s: i64) -> &Record {
    result
        .records
        .iter()
        .find(|r| r.assignment == vec![("s".to_string(), s)])
        .expect("a record of s")
}

/// Per candidate: its failure's cause and which sets it ran at.
fn shape(result: &TuningResult) -> Vec<(i64, Option<String>, Vec<bool>)> {
    let mut out: Vec<_> = result
        .records
        .iter()
        .map(|r| {
            (
                r.assignment[0].1,
                r.evaluation.failure.as_ref().map(|f| f.cause.clone()),
                r.evaluation.ms.iter().map(Option::is_some).collect(),
            )
        })
        .collect();
    out.sort();
    out
}

fn best_s(result: &TuningResult) -> Vec<Option<i64>> {
    result
        .bests
        .iter()
        .map(|b| b.as_ref().map(|b| b.assignment[0].1))
        .collect()
}

#[test]
fn a_cluster_finds_what_this_host_finds_and_the_database_is_shared() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let here = explore::tune::run(&tuning(&dir.path().join("here.db")), &mut Quiet)
        .expect("the tuning runs here");
    let shared = dir.path().join("shared.db");
    let cluster = FakeCluster::losing(&[]);
    let there = explore::tune::run_remote(&tuning(&shared), &cluster, &mut Quiet)
        .expect("the tuning runs on the cluster");
    assert_eq!(shape(&there), shape(&here));
    assert_eq!(best_s(&there), vec![Some(4), Some(3)]);
    assert_eq!(best_s(&here), best_s(&there));
    assert_eq!((there.timed, there.from_database), (2, 0));
    // every candidate went as one self-contained request: verified, timed at both sets
    let seen = cluster.seen();
    assert_eq!(seen.len(), 3);
    for r in &seen {
        assert!(
            r.verify && r.time_sets == vec![set(8, 4), set(9, 2)],
            "{r:?}"
        );
        assert_eq!(r.program.text, PROGRAM);
        assert_eq!(r.strategy.as_ref().map(|s| s.text.as_str()), Some(STRATEGY));
    }
    // what the cluster measured, this host reads from the database (the same context)
    let again = explore::tune::run(&tuning(&shared), &mut Quiet).expect("runs here");
    assert_eq!((again.timed, again.from_database), (0, 3));
    assert_eq!(best_s(&again), best_s(&there));
}

#[test]
fn a_lost_candidate_fails_alone_and_is_measured_again_by_the_next_run() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("tune.db");
    let losing = FakeCluster::losing(&["s=4"]);
    let first = explore::tune::run_remote(&tuning(&db), &losing, &mut Quiet)
        .expect("the tuning finishes without the lost candidate");
    let lost = record_of(&first, 4);
    let failure = lost.evaluation.failure.as_ref().expect("s = 4 failed");
    assert_eq!(failure.cause, WORKER_LOST);
    assert_eq!(first.failures_by_cause.get(WORKER_LOST), Some(&1));
    assert!(record_of(&first, 3).is_valid());
    assert_eq!(best_s(&first), vec![None, Some(3)]);
    // the next run measures the lost candidate only, and nothing else again
    let cluster = FakeCluster::losing(&[]);
    let second =
        explore::tune::run_remote(&tuning(&db), &cluster, &mut Quiet).expect("the second run");
    let labels: Vec<String> = cluster.seen().iter().map(Request::label).collect();
    assert_eq!(labels, vec!["s=4".to_string()]);
    assert_eq!((second.timed, second.from_database), (1, 2));
    assert_eq!(best_s(&second), vec![Some(4), Some(3)]);
}

/// A cluster whose workers cannot measure at all.
struct Broken;

impl Remote for Broken {
    fn capacity(&self) -> usize {
        1
    }

    fn identity(&self, target: Target) -> Result<Identity, Error> {
        remote::identity(target)
    }

    fn measure(&self, _: &[Request]) -> Result<Vec<Result<Measurement, Failure>>, Error> {
        Err("no module named shine on the workers".into())
    }
}

#[test]
fn workers_that_cannot_measure_stop_the_tuning_with_their_error() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let e = explore::tune::run_remote(&tuning(&dir.path().join("t.db")), &Broken, &mut Quiet)
        .expect_err("nothing was measured");
    assert!(e.to_string().contains("no module named shine"), "{e}");
}
