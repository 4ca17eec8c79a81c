//! `shine explore` on the C target (fast, no OpenCL needed): the log and `--resume`
//! (resumed candidates ranked, logs of other runs refused, a cut last line skipped),
//! every bound (`--time`, `--budget`, the enumeration of `--param` spaces,
//! `--check-constraints`) held within a generous wall-clock limit, configuration errors
//! reported before the search, and write errors of the log and the output files.

use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

mod support;
use support::shine_in;

/// The repository root: the examples' paths are relative to it.
fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// `shine explore examples/explore.rise --def scale2d --target c` at small sizes, one timed
/// run unless `extra` says otherwise, then `extra`.
fn explore(extra: &[&str]) -> (std::process::Output, String) {
    let mut args = vec![
        "explore",
        "examples/explore.rise",
        "--def",
        "scale2d",
        "--target",
        "c",
        "--nat",
        "n=4",
        "--nat",
        "m=8",
    ];
    if !extra.contains(&"--runs") {
        args.extend(["--runs", "1"]);
    }
    args.extend_from_slice(extra);
    shine_in(root(), &args)
}

/// The records of a log: its lines as JSON.
fn log_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("the log")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// The JSON summary `shine explore` prints last on its standard output.
fn summary(out: &std::process::Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("a JSON summary")
}

fn fails_with(out: &(std::process::Output, String), message: &str) {
    assert!(!out.0.status.success(), "exit 0:\n{}", out.1);
    assert!(out.1.contains(message), "no `{message}` in:\n{}", out.1);
    assert!(!out.1.contains("panicked"), "{}", out.1);
}

#[test]
fn resumed_candidates_are_ranked_and_the_best_is_written() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = dir.path().join("run.jsonl");
    let best = dir.path().join("best.elv");
    let (log_s, best_s) = (log.to_str().unwrap(), best.to_str().unwrap());
    let first = explore(&["--budget", "3", "--log", log_s]);
    assert!(first.0.status.success(), "{}", first.1);
    let lines = log_lines(&log);
    assert_eq!(lines.len(), 4, "a header and three candidates");
    assert_eq!(lines[0]["kind"], "shine explore log");
    let fastest = lines[1..]
        .iter()
        .filter_map(|l| l["ms"].as_f64())
        .fold(f64::INFINITY, f64::min);
    assert!(fastest.is_finite(), "{lines:?}");
    // the log fills the budget: nothing is re-run, and the best of the log is written
    let resumed = explore(&["--budget", "3", "--resume", log_s, "-o", best_s]);
    assert!(resumed.0.status.success(), "{}", resumed.1);
    let text = std::fs::read_to_string(&best).expect("-o is written");
    assert!(
        text.contains(&format!("({fastest:.4} ms, solver)")),
        "the best of the log is not the one written:\n{text}"
    );
    let v = summary(&resumed.0);
    assert_eq!(v["methods"][0]["candidates"], 0, "{v}");
    assert_eq!(v["methods"][0]["resumed"], 3, "{v}");
}

#[test]
fn a_log_of_another_run_is_refused_with_what_differs() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = dir.path().join("run.jsonl");
    let log_s = log.to_str().unwrap();
    let first = explore(&["--budget", "1", "--log", log_s]);
    assert!(first.0.status.success(), "{}", first.1);
    let other_space = explore(&["--budget", "2", "--resume", log_s, "--dims", "1"]);
    fails_with(&other_space, "the search space differs");
    let out = shine_in(
        root(),
        &[
            "explore",
            "examples/explore.rise",
            "--def",
            "scale2d",
            "--target",
            "openmp",
            "--nat",
            "n=4",
            "--nat",
            "m=8",
            "--budget",
            "2",
            "--resume",
            log_s,
        ],
    );
    fails_with(&out, "the target differs");
    // the same program under another name is the same; another text is not
    let copy = dir.path().join("explore.rise");
    let text = std::fs::read_to_string(root().join("examples/explore.rise")).expect("read");
    std::fs::write(&copy, format!("{text}\n// changed\n")).expect("write");
    let mut changed = vec!["explore", copy.to_str().unwrap()];
    changed.extend([
        "--def", "scale2d", "--target", "c", "--nat", "n=4", "--nat", "m=8", "--budget", "2",
        "--resume", log_s,
    ]);
    fails_with(&shine_in(root(), &changed), "the program differs");
    // a log without a header (an older shine's) is refused
    let old = dir.path().join("old.jsonl");
    let text = std::fs::read_to_string(&log).expect("read");
    let body: Vec<&str> = text.lines().skip(1).collect();
    std::fs::write(&old, body.join("\n") + "\n").expect("write");
    fails_with(
        &explore(&["--budget", "2", "--resume", old.to_str().unwrap()]),
        "no header record",
    );
}

#[test]
fn a_cut_last_line_is_skipped_with_a_warning_and_cut_off_before_appending() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = dir.path().join("run.jsonl");
    let log_s = log.to_str().unwrap();
    let first = explore(&["--budget", "2", "--log", log_s]);
    assert!(first.0.status.success(), "{}", first.1);
    let text = std::fs::read_to_string(&log).expect("read");
    let cut = &text[..text.len() - 20];
    std::fs::write(&log, cut).expect("write");
    let out = explore(&["--budget", "3", "--resume", log_s, "--log", log_s]);
    assert!(out.0.status.success(), "{}", out.1);
    assert!(out.1.contains("the last line is incomplete"), "{}", out.1);
    let v = summary(&out.0);
    assert_eq!(v["methods"][0]["resumed"], 1, "{v}");
    assert_eq!(v["methods"][0]["candidates"], 2, "{v}");
    let lines = log_lines(&log);
    assert_eq!(
        lines.len(),
        4,
        "a header, one resumed and two new candidates"
    );
}

#[test]
fn parameter_tuning_resumes_from_its_log() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = dir.path().join("run.jsonl");
    let best = dir.path().join("best.elv");
    let (log_s, best_s) = (log.to_str().unwrap(), best.to_str().unwrap());
    let tune = |extra: &[&str]| {
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
            "--runs",
            "1",
        ];
        args.extend_from_slice(extra);
        shine_in(root(), &args)
    };
    let first = tune(&["--budget", "2", "--log", log_s]);
    assert!(first.0.status.success(), "{}", first.1);
    let out = tune(&[
        "--budget", "3", "--resume", log_s, "--log", log_s, "-o", best_s,
    ]);
    assert!(out.0.status.success(), "{}", out.1);
    let v = summary(&out.0);
    assert_eq!(v["methods"][0]["resumed"], 2, "{v}");
    assert_eq!(v["methods"][0]["candidates"], 1, "{v}");
    let lines = log_lines(&log);
    let mut ms: Vec<i64> = lines[1..]
        .iter()
        .filter_map(|l| l["params"]["m"].as_i64())
        .collect();
    ms.sort();
    assert_eq!(ms, vec![4, 8, 16], "every assignment once: {lines:?}");
    let text = std::fs::read_to_string(&best).expect("-o is written");
    assert!(text.contains("def best_1"), "{text}");
    let other = tune(&["--budget", "3", "--resume", log_s, "--require", "m>4"]);
    fails_with(&other, "the search space differs");
}

#[test]
fn bad_numbers_and_names_are_refused_before_the_search() {
    for (extra, message) in [
        (&["--time", "nan"][..], "not a positive, finite number"),
        (&["--time", "inf"][..], "not a positive, finite number"),
        (&["--time=-1"][..], "not a positive, finite number"),
        (&["--budget", "1", "--runs", "0"][..], "give 1 or more"),
        (&["--budget", "1", "--dims", "0"][..], "--dims"),
        (&["--budget", "0"][..], "give 1 or more"),
        (
            &["--budget", "1", "--time-nat", "q=3"][..],
            "no size of `scale2d`",
        ),
        (
            &["--budget", "1", "--nat", "q=3"][..],
            "no size of `scale2d`",
        ),
        (
            &["--budget", "1", "--apply", "DFNF", "--param", "q=1,2"][..],
            "names neither a parameter of the --apply strategy",
        ),
        (
            &["--budget", "1", "-o", "/nonexistent-dir/best.elv"][..],
            "does not exist",
        ),
        (
            &["--budget", "1", "--plot", "/nonexistent-dir/plot.svg"][..],
            "does not exist",
        ),
    ] {
        let start = Instant::now();
        let out = explore(extra);
        fails_with(&out, message);
        assert!(
            !out.1.contains("rank  method"),
            "{extra:?}: the search ran:\n{}",
            out.1
        );
        assert!(start.elapsed() < Duration::from_secs(30), "{extra:?}");
    }
}

#[test]
fn the_search_and_its_log_stop_at_their_bounds() {
    let start = Instant::now();
    let out = explore(&["--time", "2"]);
    assert!(out.0.status.success(), "{}", out.1);
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "--time 2 ran past 30 s"
    );
    // --check-constraints: --budget stops it, and the output says it is incomplete
    let out = explore(&["--check-constraints", "--budget", "2"]);
    assert!(out.0.status.success(), "{}", out.1);
    let stdout = String::from_utf8_lossy(&out.0.stdout);
    let v: Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(v["checked"], 2, "{v}");
    assert_eq!(v["complete"], false, "{v}");
    let start = Instant::now();
    let out = explore(&["--check-constraints", "--time", "1"]);
    assert!(out.0.status.success(), "{}", out.1);
    assert!(start.elapsed() < Duration::from_secs(30));
}

/// Six parameters of 100 values each (10^12 raw assignments) under a requirement no
/// assignment meets: the enumeration stops at its limit of raw assignments (`--budget`)
/// or at `--time`, with a message, well within the wall-clock limit.
#[test]
fn the_enumeration_of_a_huge_parameter_space_is_bounded() {
    let values: String = (1..=100)
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let params: Vec<String> = ["a", "b", "c", "d", "e", "f"]
        .iter()
        .map(|p| format!("{p}={values}"))
        .collect();
    for bound in [&["--budget", "1"][..], &["--time", "2"][..]] {
        let mut args = vec![
            "--strategy",
            "examples/gpu.elv",
            "--apply",
            "mmTiledRect(a, b, c, d, e, f, 1)",
            "--require",
            "a+b+c+d+e+f==1000",
        ];
        for p in &params {
            args.extend(["--param", p]);
        }
        args.extend_from_slice(bound);
        let start = Instant::now();
        let out = explore(&args);
        fails_with(&out, "raw assignments examined");
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{bound:?}: {:?}",
            start.elapsed()
        );
    }
}

#[test]
fn write_errors_of_the_log_stop_the_run() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let out = explore(&["--budget", "2", "--log", "/dev/full"]);
    fails_with(&out, "cannot write the log `/dev/full`");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("plain");
    std::fs::write(&file, "x").expect("write");
    let under = file.join("run.jsonl");
    fails_with(
        &explore(&["--budget", "1", "--log", under.to_str().unwrap()]),
        "cannot write the log",
    );
}
