//! `shine explore` (issue 16) on PoCL: the constraints agree with the compiler on a
//! small program (every raw assignment compiled and verified), and every mapping the
//! search emits compiles and verifies, with a fixed seed and a small budget. The best
//! strategy it writes is an ordinary `.elv` file that `shine run` applies.
//!
//! Without any OpenCL platform these FAIL, as the runtime's tests do; set
//! `SHINE_SKIP_OPENCL=1` to skip them.

use std::process::{Command, Output};

mod support;
use support::skip_opencl;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shine"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args(args)
        .output()
        .expect("shine runs")
}

fn json(o: &Output) -> serde_json::Value {
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "shine failed:\n{out}\n{err}");
    serde_json::from_str(out.lines().last().unwrap_or("")).expect("one JSON line")
}

#[test]
fn constraints_accept_exactly_what_compiles_and_verifies() {
    if skip_opencl() {
        return;
    }
    let o = run(&[
        "explore",
        "examples/explore.rise",
        "--def",
        "scale2d",
        "--target",
        "opencl",
        "--nat",
        "n=4",
        "--nat",
        "m=8",
        "--dims",
        "1",
        "--check-constraints",
    ]);
    let v = json(&o);
    assert_eq!(v["maps"], 2);
    assert_eq!(v["raw"], 16);
    assert_eq!(v["valid_but_failed"], serde_json::json!([]), "{v}");
    assert_eq!(v["works_but_excluded"], serde_json::json!([]), "{v}");
    assert_eq!(v["solver_valid"], v["compiled_and_verified"], "{v}");
    assert!(v["solver_valid"].as_u64().unwrap_or(0) > 1, "{v}");
}

#[test]
fn every_emitted_mapping_compiles_and_verifies() {
    if skip_opencl() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("run.jsonl");
    let best = dir.path().join("best.elv");
    let (log_s, best_s) = (log.to_string_lossy(), best.to_string_lossy());
    let o = run(&[
        "explore",
        "examples/explore.rise",
        "--def",
        "scale2d",
        "--target",
        "opencl",
        "--nat",
        "n=8",
        "--nat",
        "m=16",
        "--budget",
        "3",
        "--search",
        "solver",
        "--search",
        "evolutionary",
        "--seed",
        "3",
        "--runs",
        "1",
        "--log",
        &log_s,
        "-o",
        &best_s,
    ]);
    let v = json(&o);
    assert_eq!(v["methods"].as_array().map(Vec::len), Some(2), "{v}");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .expect("log")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(lines.len(), 6);
    for l in &lines {
        assert!(l["failure"].is_null(), "a mapping failed: {l}");
        assert!(l["ms"].as_f64().is_some_and(|t| t > 0.0), "{l}");
    }
    // The best strategy is an ordinary strategy file.
    let r = run(&[
        "run",
        "examples/explore.rise",
        "--def",
        "scale2d",
        "--strategy",
        &best_s,
        "--apply",
        "best",
        "--target",
        "opencl",
        "--nat",
        "n=8",
        "--nat",
        "m=16",
        "--random",
        "5",
        "--verify",
        "--json",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));

    // Resuming from the log re-runs nothing: the budget is spent.
    let o = run(&[
        "explore",
        "examples/explore.rise",
        "--def",
        "scale2d",
        "--target",
        "opencl",
        "--nat",
        "n=8",
        "--nat",
        "m=16",
        "--budget",
        "3",
        "--search",
        "solver",
        "--resume",
        &log_s,
    ]);
    let v = json(&o);
    assert_eq!(v["methods"][0]["candidates"], 0, "{v}");
}
