//! The mapping search (`shine explore` without `--param`) with a tuning database (`--db`)
//! and parallel evaluation (`--jobs`, `--devices`), on OpenMP and OpenCL (PoCL): a second
//! search times nothing and finds the same best, `--resume` with a database, a damaged entry
//! reported and measured again, `--jobs 2` verifying what `--jobs 1` does, `--devices`
//! refused off CUDA and `--check-constraints` refusing all three. The CUDA case
//! (`cuda_mapping_search_times_on_devices_and_the_database_keeps_them`) runs on a GPU
//! machine only.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

mod support;
use support::{
    explore_succeeds as succeeds, fails_with, path_text, repo_root, shine_in, skip_opencl, test_gpu,
};

/// The targets a mapping search runs on here: OpenMP, and OpenCL unless skipped.
fn targets() -> Vec<&'static str> {
    let mut ts = vec!["openmp"];
    if skip_opencl() {
        eprintln!("skipping OpenCL: SHINE_SKIP_OPENCL=1");
    } else {
        ts.push("opencl");
    }
    ts
}

/// A mapping search of `scale2d` of examples/explore.rise (a 4 × 8 matrix; a split of each
/// map by 2 or 4 or none) on `target`, one timed run per candidate unless `extra` says,
/// then `extra`.
fn search(target: &str, extra: &[&str]) -> (Output, String) {
    let mut args = vec![
        "explore",
        "examples/explore.rise",
        "--def",
        "scale2d",
        "--target",
        target,
        "--nat",
        "n=4",
        "--nat",
        "m=8",
    ];
    if !extra.contains(&"--runs") {
        args.extend(["--runs", "1"]);
    }
    args.extend_from_slice(extra);
    shine_in(repo_root(), &args)
}

/// The candidates of a log (splits and mapping) and whether each ran, sorted.
fn candidates_in_log(path: &Path) -> Vec<(Value, Value, bool)> {
    let text = std::fs::read_to_string(path).expect("the log");
    let mut rows: Vec<(Value, Value, bool)> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).expect("a JSON line"))
        .map(|v| {
            (
                v["splits"].clone(),
                v["mapping"].clone(),
                v["ms"].is_number(),
            )
        })
        .collect();
    rows.sort_by_key(|r| format!("{r:?}"));
    rows
}

/// Counts the lines of `text` that start with `prefix`.
fn lines_starting(text: &str, prefix: &str) -> usize {
    text.lines().filter(|l| l.starts_with(prefix)).count()
}

#[test]
fn a_second_mapping_search_times_nothing_and_finds_the_same_best() {
    for target in targets() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (db, log) = (dir.path().join("map.db"), dir.path().join("run.jsonl"));
        let first = succeeds(&search(
            target,
            &[
                "--budget",
                "4",
                "--db",
                path_text(&db),
                "--log",
                path_text(&log),
            ],
        ));
        let valid = first["methods"][0]["valid"].as_u64().unwrap_or(0);
        assert!(valid >= 1, "{target}: {first}");
        assert_eq!(first["from_database"], 0, "{target}: {first}");
        assert!(first["timed"].as_u64() >= Some(valid), "{target}: {first}");
        let out = search(target, &["--budget", "4", "--db", path_text(&db)]);
        let again = succeeds(&out);
        assert_eq!(
            (again["timed"].as_u64(), again["from_database"].as_u64()),
            (Some(0), Some(4)),
            "{target}: {}",
            out.1
        );
        assert!(
            out.1
                .contains("4 of 4 candidates from the database, 0 timed now"),
            "{target}: {}",
            out.1
        );
        assert_eq!(lines_starting(&out.1, "running:"), 0, "{target}: {}", out.1);
        assert_eq!(
            again["methods"][0]["best_ms"], first["methods"][0]["best_ms"],
            "{target}: the same best"
        );
        assert_eq!(again["methods"][0]["valid"], first["methods"][0]["valid"]);
        assert_eq!(again["failures_by_cause"], first["failures_by_cause"]);
        // more timed runs than the database kept are measured again
        let more = succeeds(&search(
            target,
            &["--budget", "4", "--db", path_text(&db), "--runs", "2"],
        ));
        assert_eq!(more["timed"].as_u64(), Some(valid), "{target}: {more}");
        assert_eq!(more["from_database"].as_u64(), Some(4 - valid), "{more}");
    }
}

#[test]
fn a_mapping_search_resumes_its_log_and_its_database_keeps_what_it_timed() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (db, log) = (dir.path().join("map.db"), dir.path().join("run.jsonl"));
    let (db, log) = (path_text(&db), path_text(&log));
    succeeds(&search(
        "openmp",
        &["--budget", "2", "--db", db, "--log", log],
    ));
    let resumed = succeeds(&search(
        "openmp",
        &["--budget", "3", "--db", db, "--resume", log, "--log", log],
    ));
    assert_eq!(resumed["methods"][0]["resumed"], 2, "{resumed}");
    assert_eq!(resumed["methods"][0]["candidates"], 1, "{resumed}");
    assert_eq!(resumed["from_database"], 0, "{resumed}");
    // without the log, the database answers for all three
    let fresh = succeeds(&search("openmp", &["--budget", "3", "--db", db]));
    assert_eq!(
        (fresh["timed"].as_u64(), fresh["from_database"].as_u64()),
        (Some(0), Some(3)),
        "{fresh}"
    );
}

/// An entry of the database that holds a text where a time belongs is reported, measured
/// again and replaced; the rest still comes from the database.
#[test]
fn a_damaged_entry_is_reported_and_measured_again() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("map.db");
    let first = succeeds(&search(
        "openmp",
        &["--budget", "3", "--db", path_text(&db)],
    ));
    let valid = first["methods"][0]["valid"].as_u64().unwrap_or(0);
    assert!(valid >= 1, "{first}");
    let damaged = rusqlite::Connection::open(&db)
        .and_then(|c| {
            c.execute(
                "UPDATE outcomes SET ms = 'fast' WHERE rowid = \
                 (SELECT min(rowid) FROM outcomes WHERE stage = 'time' AND ms IS NOT NULL)",
                [],
            )
        })
        .expect("an entry is damaged");
    assert_eq!(damaged, 1);
    let out = search("openmp", &["--budget", "3", "--db", path_text(&db)]);
    let again = succeeds(&out);
    assert_eq!(
        lines_starting(&out.1, "warning: the tuning database's entry of splits="),
        1
    );
    assert!(
        out.1
            .contains("cannot be read (its time is the text \"fast\"); it is measured again"),
        "{}",
        out.1
    );
    assert_eq!(
        (again["timed"].as_u64(), again["from_database"].as_u64()),
        (Some(1), Some(2)),
        "{}",
        out.1
    );
    assert_eq!(again["methods"][0]["valid"], first["methods"][0]["valid"]);
    let third = search("openmp", &["--budget", "3", "--db", path_text(&db)]);
    assert!(!third.1.contains("warning"), "replaced: {}", third.1);
    assert_eq!(succeeds(&third)["from_database"], 3);
}

#[test]
fn two_jobs_verify_the_same_mappings_as_one() {
    for target in targets() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (one, two) = (dir.path().join("one.jsonl"), dir.path().join("two.jsonl"));
        succeeds(&search(
            target,
            &["--budget", "5", "--log", path_text(&one)],
        ));
        let out = search(
            target,
            &["--budget", "5", "--jobs", "2", "--log", path_text(&two)],
        );
        succeeds(&out);
        assert!(
            out.1
                .contains("running: compiling and verifying 2 candidates on 2 workers"),
            "{target}: {}",
            out.1
        );
        assert!(
            out.1.contains("running: timing splits="),
            "{target}: {}",
            out.1
        );
        let (a, b) = (candidates_in_log(&one), candidates_in_log(&two));
        assert_eq!(a.len(), 5, "{target}: {a:?}");
        assert_eq!(a, b, "{target}: the same candidates, the same verdicts");
    }
}

#[test]
fn devices_are_refused_off_cuda_and_check_constraints_refuses_the_pool() {
    fails_with(
        &search("openmp", &["--budget", "1", "--devices", "0,1"]),
        "--devices chooses CUDA devices, and the target `openmp` has none",
    );
    fails_with(
        &search("openmp", &["--budget", "1", "--jobs", "0"]),
        "give 1 or more",
    );
    for flag in [["--db", "unused.db"], ["--jobs", "2"]] {
        fails_with(
            &search("openmp", &["--check-constraints", flag[0], flag[1]]),
            &format!("{} is not supported by --check-constraints", flag[0]),
        );
    }
    assert!(!repo_root().join("unused.db").exists());
}

/// On a GPU machine: mappings timed on CUDA device 0 (and 1, where there are two), kept in
/// the database: the second search times none.
#[test]
fn cuda_mapping_search_times_on_devices_and_the_database_keeps_them() {
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
    let db = dir.path().join("map.db");
    let run = || {
        search(
            "cuda",
            &[
                "--budget",
                "6",
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
    let valid = v["methods"][0]["valid"].as_u64().unwrap_or(0);
    assert!(valid >= 1, "{}", first.1);
    assert!(v["timed"].as_u64() >= Some(valid), "{}", first.1);
    assert!(first.1.contains("running: timing"), "{}", first.1);
    let again = succeeds(&run());
    assert_eq!(
        (again["timed"].as_u64(), again["from_database"].as_u64()),
        (Some(0), Some(6))
    );
    assert_eq!(again["methods"][0]["best_ms"], v["methods"][0]["best_ms"]);
}
