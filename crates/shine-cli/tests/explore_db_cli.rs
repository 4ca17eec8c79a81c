//! `shine explore --param` with a tuning database (`--db`) and parallel evaluation
//! (`--jobs`, `--devices`) on the C target: a second run times nothing and finds the same
//! best, `--resume` of a tuning's log with a database, foreign and corrupted files refused,
//! two runs on one database at once, `--jobs 2` verifying what `--jobs 1` does, and
//! `--devices` parsed and refused where there are no devices. The mapping search's are in
//! explore_mapdb_cli.rs. The CUDA case
//! (`cuda_devices_time_candidates_and_the_database_keeps_them`) runs on a GPU machine only.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};

mod support;
use support::{
    explore_succeeds as succeeds, explore_summary as summary, fails_with, path_text, repo_root,
    shine_in, test_gpu,
};

/// The arguments of a tiny tuning: `scale2d` of examples/explore.rise compiled sequentially,
/// its row length `m` tuned over 4, 8 and 16, then `extra`.
fn tuning_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "explore",
        "examples/explore.rise",
        "--def",
        "scale2d",
        "--target",
        "c",
        "--strategy",
        "examples/cpu.elv",
        "--apply",
        "sequential",
        "--nat",
        "n=4",
        "--param",
        "m=4,8,16",
    ];
    if !extra.contains(&"--runs") {
        args.extend(["--runs", "1"]);
    }
    args.extend_from_slice(extra);
    args
}

fn tune(extra: &[&str]) -> (Output, String) {
    shine_in(repo_root(), &tuning_args(extra))
}

/// The values of `m` of the verified candidates of a log, sorted.
fn verified_in_log(path: &Path) -> Vec<i64> {
    let text = std::fs::read_to_string(path).expect("the log");
    let mut ms: Vec<i64> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).expect("a JSON line"))
        .filter(|v| v["failure"].is_null())
        .filter_map(|v| v["params"]["m"].as_i64())
        .collect();
    ms.sort_unstable();
    ms
}

#[test]
fn a_second_run_times_nothing_and_finds_the_same_best() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("tune.db");
    let first = succeeds(&tune(&["--budget", "3", "--db", path_text(&db)]));
    assert_eq!(
        (first["timed"].as_u64(), first["from_database"].as_u64()),
        (Some(3), Some(0))
    );
    let out = tune(&["--budget", "3", "--db", path_text(&db)]);
    let again = succeeds(&out);
    assert_eq!(
        (again["timed"].as_u64(), again["from_database"].as_u64()),
        (Some(0), Some(3))
    );
    assert!(
        out.1.contains("3 of 3 candidates from the database"),
        "{}",
        out.1
    );
    assert!(!out.1.contains("running: timing"), "{}", out.1);
    assert_eq!(again["per_set"], first["per_set"], "the same best");
    // fewer timed runs than kept are enough; more are measured again
    let more = succeeds(&tune(&[
        "--budget",
        "3",
        "--db",
        path_text(&db),
        "--runs",
        "2",
    ]));
    assert_eq!(more["timed"].as_u64(), Some(3), "{more}");
}

#[test]
fn a_tuning_resumes_its_log_and_its_database_keeps_what_an_earlier_run_timed() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (db, log) = (dir.path().join("tune.db"), dir.path().join("run.jsonl"));
    let (db, log) = (path_text(&db), path_text(&log));
    succeeds(&tune(&["--budget", "2", "--db", db, "--log", log]));
    let resumed = succeeds(&tune(&[
        "--budget", "3", "--db", db, "--resume", log, "--log", log,
    ]));
    assert_eq!(resumed["methods"][0]["resumed"], 2, "{resumed}");
    assert_eq!(resumed["methods"][0]["candidates"], 1, "{resumed}");
    assert_eq!(resumed["timed"], 1, "{resumed}");
    // without the log, the database answers for all three
    let fresh = succeeds(&tune(&["--budget", "3", "--db", db]));
    assert_eq!(
        (fresh["timed"].as_u64(), fresh["from_database"].as_u64()),
        (Some(0), Some(3))
    );
}

/// `s` must divide n = 8 for the split to apply: s = 3 fails (no verification set admits
/// it), and the second run takes that failure from the database too.
#[test]
fn failures_are_kept_and_not_tried_again() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let strategy = dir.path().join("split.elv");
    std::fs::write(
        &strategy,
        "def splitOuter(s) = DFNF ; splitJoinMap(s) @ outermost(appliedMap) ;; DFNF ; lowerToC\n",
    )
    .expect("the strategy is written");
    let db = dir.path().join("tune.db");
    let run = || {
        succeeds(&shine_in(
            repo_root(),
            &[
                "explore",
                "examples/explore.rise",
                "--def",
                "scale2d",
                "--target",
                "c",
                "--strategy",
                path_text(&strategy),
                "--apply",
                "splitOuter(s)",
                "--nat",
                "n=8",
                "--nat",
                "m=4",
                "--param",
                "s=2,3,4",
                "--runs",
                "1",
                "--budget",
                "3",
                "--db",
                path_text(&db),
            ],
        ))
    };
    let first = run();
    assert_eq!(first["methods"][0]["valid"], 2, "s = 3 fails: {first}");
    let again = run();
    assert_eq!(
        (again["timed"].as_u64(), again["from_database"].as_u64()),
        (Some(0), Some(3))
    );
    assert_eq!(again["methods"][0]["valid"], 2, "{again}");
    assert_eq!(again["failures_by_cause"], first["failures_by_cause"]);
}

#[test]
fn foreign_and_corrupted_databases_are_refused() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "these are notes, not a database\n".repeat(64)).expect("written");
    fails_with(
        &tune(&["--budget", "1", "--db", path_text(&text)]),
        "cannot be used as a tuning database: it is not a SQLite database",
    );
    let db = dir.path().join("tune.db");
    succeeds(&tune(&["--budget", "3", "--db", path_text(&db)]));
    let mut bytes = std::fs::read(&db).expect("the database");
    assert!(bytes.len() > 4096, "{} bytes", bytes.len());
    for b in &mut bytes[100..4096] {
        *b = 0xA5;
    }
    std::fs::write(&db, &bytes).expect("corrupted");
    fails_with(
        &tune(&["--budget", "1", "--db", path_text(&db)]),
        "cannot be used as a tuning database",
    );
}

#[test]
fn two_runs_share_one_database_at_once() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("tune.db");
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_shine"))
            .current_dir(repo_root())
            .args(tuning_args(&["--budget", "3", "--db", path_text(&db)]))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("shine starts")
    };
    let (a, b) = (spawn(), spawn());
    for child in [a, b] {
        let out = child.wait_with_output().expect("shine ends");
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{text}");
        assert_eq!(summary(&out)["methods"][0]["valid"], 3, "{text}");
    }
    let after = succeeds(&tune(&["--budget", "3", "--db", path_text(&db)]));
    assert_eq!(
        (after["timed"].as_u64(), after["from_database"].as_u64()),
        (Some(0), Some(3))
    );
}

#[test]
fn two_jobs_verify_the_same_candidates_as_one() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (one, two) = (dir.path().join("one.jsonl"), dir.path().join("two.jsonl"));
    succeeds(&tune(&["--budget", "3", "--log", path_text(&one)]));
    let out = tune(&["--budget", "3", "--jobs", "2", "--log", path_text(&two)]);
    succeeds(&out);
    assert!(
        out.1
            .contains("running: compiling and verifying 2 candidates on 2 workers"),
        "{}",
        out.1
    );
    assert!(out.1.contains("running: timing m="), "{}", out.1);
    assert_eq!(verified_in_log(&one), vec![4, 8, 16]);
    assert_eq!(verified_in_log(&two), verified_in_log(&one));
}

#[test]
fn devices_are_parsed_and_refused_without_cuda() {
    fails_with(
        &tune(&["--budget", "1", "--devices", "0,1"]),
        "--devices chooses CUDA devices, and the target `c` has none",
    );
    fails_with(
        &tune(&["--budget", "1", "--devices", "0,x"]),
        "`x` is no device number",
    );
    fails_with(
        &tune(&["--budget", "1", "--devices", "1,1"]),
        "names a device twice",
    );
    fails_with(&tune(&["--budget", "1", "--jobs", "0"]), "give 1 or more");
}

/// On a GPU machine: candidates timed on CUDA device 0 (and 1, where there are two), kept in
/// the database: the second run times none.
#[test]
fn cuda_devices_time_candidates_and_the_database_keeps_them() {
    if !test_gpu() {
        eprintln!("skipping CUDA devices: SHINE_TEST_GPU is not 1");
        return;
    }
    let gpus = Command::new("nvidia-smi")
        .arg("-L")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).lines().count())
        .unwrap_or(1);
    let devices = if gpus >= 2 { "0,1" } else { "0" };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("tune.db");
    let run = || {
        shine_in(
            repo_root(),
            &[
                "explore",
                "examples/explore.rise",
                "--def",
                "scale2d",
                "--target",
                "cuda",
                "--strategy",
                "examples/gpu.elv",
                "--apply",
                "global2d",
                "--nat",
                "n=64",
                "--param",
                "m=32,64,128,256",
                "--runs",
                "3",
                "--budget",
                "4",
                "--jobs",
                "2",
                "--devices",
                devices,
                "--db",
                path_text(&db),
            ],
        )
    };
    let first = run();
    let v = succeeds(&first);
    assert_eq!(v["methods"][0]["valid"], 4, "{}", first.1);
    assert_eq!(v["timed"], 4, "{}", first.1);
    assert!(first.1.contains("running: timing"), "{}", first.1);
    let again = succeeds(&run());
    assert_eq!(
        (again["timed"].as_u64(), again["from_database"].as_u64()),
        (Some(0), Some(4))
    );
    assert_eq!(again["per_set"], v["per_set"]);
}
