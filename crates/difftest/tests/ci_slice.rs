//! The CI slice: a fixed-seed run of the generator on every target, in a child process
//! as the long run does.
//!
//! It fails when a generated program does not type-check (the generator is broken), when
//! the compiler panics or the generated code crashes or does not compile, or when nothing
//! passes. Mismatches with the interpreter are reported but only fail the ignored test
//! below, because the defects they belong to (issue 13 items 1, 2, 3, 7, 11) are being fixed
//! in parallel; enable it once they are merged.

use std::process::Command;

fn slice(cases: &str) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_shine-difftest"))
        .args(["run", "--seed", "13", "--cases", cases, "--chunk", "40"])
        .args([
            "--out",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/difftest-ci"),
        ])
        .output()
        .expect("shine-difftest runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn count(report: &str, kind: &str) -> u64 {
    report
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some(kind))
        .filter_map(|l| l.split_whitespace().nth(2)?.parse::<u64>().ok())
        .sum()
}

#[test]
fn fixed_seed_slice_has_no_generator_errors_panics_or_crashes() {
    let (_, report) = slice("40");
    assert!(report.contains("== "), "no summary:\n{report}");
    for kind in ["ill-typed", "panic", "crash", "code-does-not-compile"] {
        assert_eq!(count(&report, kind), 0, "{kind} cases:\n{report}");
    }
    assert!(count(&report, "pass") > 0, "nothing passed:\n{report}");
}

#[test]
fn fixed_seed_slice_has_no_bugs() {
    let (ok, report) = slice("40");
    assert!(ok, "{report}");
}
