//! The plumbing of `shine bench cpu` without the anchors' virtualenv: small sizes, shine's
//! side only, verified against the interpreter. (The full benchmark is not a test; see
//! bench/README.md.)

use serde_json::Value;
use std::process::Command;

fn shine() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_shine"));
    c.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    c
}

fn run_json(args: &[&str]) -> Value {
    run_json_expecting(args, true)
}

/// `shine bench cpu ARGS --json FILE`: the report, after checking the exit status.
fn run_json_expecting(args: &[&str], success: bool) -> Value {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json = dir.path().join("bench.json");
    let out = shine()
        .args([
            "bench",
            "cpu",
            "--no-anchors",
            "--quick",
            "--settle-ms",
            "0",
        ])
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("shine runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.success(), success, "shine bench: {stderr}");
    if !success {
        assert!(stderr.contains("failed or were not verified"), "{stderr}");
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("| case"), "no table on stdout: {stdout}");
    let text = std::fs::read_to_string(&json).expect("the JSON file is written");
    serde_json::from_str(&text).expect("the JSON file parses")
}

#[test]
fn small_cases_run_verified_at_one_and_two_threads() {
    let report = run_json(&[
        "--case",
        "mm_parallelization_vs_numpy",
        "--case",
        "binomial_f32_tiled_v16",
        "--nat",
        "m=64",
        "--nat",
        "n=64",
        "--nat",
        "k=32",
        "--threads",
        "1,2",
    ]);
    assert_eq!(report["bench"], "cpu");
    let rows = report["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 4, "two cases at two thread counts: {rows:?}");
    for row in rows {
        for key in [
            "case",
            "threads",
            "shine_median_ms",
            "shine_min_ms",
            "shine_max_ms",
            "anchor",
            "anchor_median_ms",
            "ratio",
            "verified",
        ] {
            assert!(row.get(key).is_some(), "row without `{key}`: {row}");
        }
        assert_eq!(row["verified"], true, "{row}");
        assert_eq!(row["verified_by"], "interpreter", "{row}");
        let (min, median, max) = (
            row["shine_min_ms"].as_f64().expect("min"),
            row["shine_median_ms"].as_f64().expect("median"),
            row["shine_max_ms"].as_f64().expect("max"),
        );
        assert!(0.0 < min && min <= median && median <= max, "{row}");
        assert!(row["shine_runs"].as_u64().expect("runs") >= 2, "{row}");
        assert!(row["anchor_median_ms"].is_null() && row["ratio"].is_null());
    }
    let threads: Vec<u64> = rows.iter().filter_map(|r| r["threads"].as_u64()).collect();
    assert_eq!(threads, vec![1, 2, 1, 2]);
    assert_eq!(rows[0]["case"], "mm_parallelization_vs_numpy");
    assert_eq!(rows[0]["nats"]["k"], 32);
    assert_eq!(rows[0]["anchor"], "numpy_matmul");
    assert_eq!(rows[2]["strategy"], "tiledVecPar");
    // the peak FMA throughput, measured at each thread count; the matmul's fraction of it
    for t in ["1", "2"] {
        let peaks = report["peak_fma"][t]
            .as_array()
            .expect("peaks per thread count");
        for p in peaks {
            assert!(p["gflops"].as_f64().is_some_and(|g| g > 0.0), "{p}");
        }
        if let Some(widest) = peaks.iter().max_by_key(|p| p["lanes"].as_u64()) {
            let row = &rows[if t == "1" { 0 } else { 1 }];
            assert_eq!(row["peak_gflops"], widest["gflops"], "{row}");
            let flops = 2.0 * 64.0 * 64.0 * 32.0;
            let gflops = flops / (row["shine_median_ms"].as_f64().expect("median") * 1e6);
            let fraction = row["peak_fraction"].as_f64().expect("fraction");
            assert!((fraction - gflops / widest["gflops"].as_f64().expect("peak")).abs() < 1e-9);
        }
    }
    assert!(
        rows[2].get("peak_fraction").is_none(),
        "the blur gives no flops"
    );
}

#[test]
fn a_failing_case_is_a_row_with_its_error_and_the_exit_status_says_so() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let cases = dir.path().join("cases.json");
    let table = r#"{"cases": [
        {"name": "bad", "program": "examples/mm.rise", "def": "mm",
         "strategy_file": "examples/mm.elv", "strategy": "noSuchStrategy",
         "nats": {"m": 32, "n": 32, "k": 32}, "anchor": "numpy_matmul", "quick": true},
        {"name": "good", "program": "examples/mm.rise", "def": "mm",
         "strategy_file": "examples/cpu.elv", "strategy": "sequential",
         "nats": {"m": 8, "n": 8, "k": 8}, "quick": true}
    ]}"#;
    std::fs::write(&cases, table).expect("write the case table");
    let cases = cases.display().to_string();
    // the exit status says that a case failed; the table and the report are written
    let report = run_json_expecting(&["--cases", &cases, "--threads", "1"], false);
    let rows = report["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 2);
    assert!(
        rows[0]["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{}",
        rows[0]
    );
    assert!(rows[0]["shine_median_ms"].is_null());
    assert_eq!(rows[1]["verified"], true, "{}", rows[1]);
}

#[test]
fn list_and_unknown_cases() {
    let out = shine()
        .args(["bench", "cpu", "--list"])
        .output()
        .expect("shine runs");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for case in [
        "mm_baseline",
        "mm_parallelization_vs_numpy",
        "binomial_f32_tiled_v16",
        "binomial_u16_root",
    ] {
        assert!(text.contains(case), "{case} missing from --list: {text}");
    }
    let out = shine()
        .args(["bench", "cpu", "--no-anchors", "--case", "nonesuch"])
        .output()
        .expect("shine runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no case matches `nonesuch`"), "{err}");
}

#[test]
fn a_program_of_ones_own_is_benchmarked_and_verified() {
    // with a strategy of a file, and with a built-in schedule; no --numpy: no anchor
    for strategy in [
        &[
            "--strategy",
            "examples/mm.elv",
            "--apply",
            "baseline ; lowerToC",
        ][..],
        &["--apply", "storeEveryStagePar"][..],
    ] {
        let mut args = vec![
            "--program",
            "examples/mm.rise",
            "--def",
            "mm",
            "--nat",
            "m=16",
            "--nat",
            "n=8",
            "--nat",
            "k=4",
            "--threads",
            "1",
        ];
        args.extend(strategy);
        let report = run_json(&args);
        let rows = report["rows"].as_array().expect("rows");
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!(rows[0]["case"], "mm");
        assert_eq!(rows[0]["verified"], true, "{}", rows[0]);
        assert_eq!(rows[0]["verified_by"], "interpreter");
        assert_eq!(rows[0]["nats"]["m"], 16);
        assert!(rows[0]["anchor"].is_null(), "{}", rows[0]);
        assert_eq!(rows[0]["strategy"], strategy[strategy.len() - 1]);
    }
}

#[test]
fn a_program_of_ones_own_is_refused_with_the_case_table_flags_or_without_def() {
    let out = shine()
        .args([
            "bench",
            "cpu",
            "--program",
            "examples/mm.rise",
            "--case",
            "mm_",
        ])
        .output()
        .expect("shine runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot be used with"), "{err}");
    let out = shine()
        .args(["bench", "cpu", "--program", "examples/mm.rise"])
        .output()
        .expect("shine runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--def"), "{err}");
    let out = shine()
        .args([
            "bench",
            "cpu",
            "--no-anchors",
            "--program",
            "nonesuch.rise",
            "--def",
            "f",
        ])
        .output()
        .expect("shine runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot read `nonesuch.rise`"), "{err}");
}
