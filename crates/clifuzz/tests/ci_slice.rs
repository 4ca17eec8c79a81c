//! The CI slice of the command-line fuzzing (issue 18): a fixed seed of 2,000 cases of
//! `shine-clifuzz` on two jobs. It fails on any bug (a panic, a crash, a hang, an error
//! without a message, a temporary file left behind) and when the valid cases no longer reach
//! code generation and execution (the generator is broken).
//!
//! It fuzzes the `shine` binary next to this test (`target/debug/shine`, built by
//! `cargo test --workspace`), or the one `SHINE_BIN` names.

use std::path::PathBuf;
use std::process::Command;

/// The `shine` binary to fuzz.
fn shine() -> PathBuf {
    if let Some(path) = std::env::var_os("SHINE_BIN") {
        return PathBuf::from(path);
    }
    // target/<profile>/deps/ci_slice-HASH -> target/<profile>/shine
    let exe = std::env::current_exe().expect("the test's own path");
    let profile = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>");
    let shine = profile.join("shine");
    assert!(
        shine.exists(),
        "{} is missing: build it first (`cargo build -p shine`) or set SHINE_BIN",
        shine.display()
    );
    shine
}

/// The outcome counts of one command in the summary (`  run  123  45.6  ok 3, error 7`).
fn outcomes(summary: &str, command: &str) -> Vec<(String, u64)> {
    let line = summary
        .lines()
        .find(|l| l.split_whitespace().next() == Some(command))
        .unwrap_or_else(|| panic!("no line for `{command}` in:\n{summary}"));
    let counts: Vec<&str> = line.split_whitespace().skip(3).collect();
    counts
        .join(" ")
        .split(", ")
        .filter_map(|part| {
            let (kind, n) = part.trim().rsplit_once(' ')?;
            Some((kind.to_string(), n.parse().ok()?))
        })
        .collect()
}

#[test]
fn fixed_seed_slice_has_no_bugs_and_reaches_execution() {
    let out_dir = concat!(env!("CARGO_TARGET_TMPDIR"), "/clifuzz-ci");
    let _ = std::fs::remove_dir_all(out_dir);
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
    let out = Command::new(env!("CARGO_BIN_EXE_shine-clifuzz"))
        .args([
            "--seed",
            "18",
            "--cases",
            "2000",
            "--jobs",
            "2",
            "--progress-s",
            "0",
        ])
        .args([
            "--timeout-s",
            "60",
            "--out",
            out_dir,
            "--examples",
            examples,
        ])
        .arg("--shine")
        .arg(shine())
        .output()
        .expect("shine-clifuzz runs");
    let summary = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "bugs (reproducers in {out_dir}):\n{summary}\n{stderr}"
    );
    for command in ["run", "compile", "rewrite", "eval", "fsmooth"] {
        let ok = outcomes(&summary, command)
            .iter()
            .find(|(k, _)| k == "ok")
            .map_or(0, |(_, n)| *n);
        assert!(ok > 0, "no `{command}` case succeeded:\n{summary}");
    }
}
