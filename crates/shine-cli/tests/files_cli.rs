//! Files shine writes (`run --output` .npy and .npz, `compile -o`, `bench cpu --json`):
//! written whole, and every write error (a full disk, a path under a plain file) is an
//! error with a non-zero exit that names the file.

use std::path::Path;

mod support;
use support::shine_in;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// `shine run` of the matrix product at small sizes on C, its result written to `outputs`.
fn run_to(outputs: &[&str]) -> (std::process::Output, String) {
    let mut args = vec![
        "run",
        "examples/mm.rise",
        "--def",
        "mm",
        "--target",
        "c",
        "--nat",
        "m=2",
        "--nat",
        "n=2",
        "--nat",
        "k=2",
        "--random",
        "1",
    ];
    for o in outputs {
        args.extend(["--output", o]);
    }
    shine_in(root(), &args)
}

fn fails_naming(out: &(std::process::Output, String), path: &str) {
    assert!(!out.0.status.success(), "exit 0:\n{}", out.1);
    assert!(
        out.1.contains(&format!("cannot write `{path}`")),
        "no `cannot write `{path}`` in:\n{}",
        out.1
    );
    assert!(!out.1.contains("panicked"), "{}", out.1);
}

#[test]
fn outputs_replace_old_files_whole_and_leave_no_temporary_files() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for name in ["out.npy", "out.npz"] {
        let path = dir.path().join(name);
        std::fs::write(&path, "an old file").expect("write");
        let out = run_to(&[path.to_str().unwrap()]);
        assert!(out.0.status.success(), "{}", out.1);
        let bytes = std::fs::read(&path).expect("read");
        let magic: &[u8] = if name.ends_with("npy") {
            b"\x93NUMPY"
        } else {
            b"PK"
        };
        assert!(bytes.starts_with(magic), "{name} is not replaced");
    }
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "temporary files left: {names:?}");
}

#[test]
fn write_errors_are_errors() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let plain = dir.path().join("plain");
    std::fs::write(&plain, "x").expect("write");
    for name in ["out.npy", "out.npz"] {
        let under = plain.join(name);
        let under = under.to_str().unwrap();
        fails_naming(&run_to(&[under]), under);
    }
    let compile = |to: &str| {
        shine_in(
            root(),
            &[
                "compile",
                "examples/mm.rise",
                "--def",
                "mm",
                "--target",
                "c",
                "-o",
                to,
            ],
        )
    };
    let under = plain.join("mm.c");
    fails_naming(&compile(under.to_str().unwrap()), under.to_str().unwrap());
    if Path::new("/dev/full").exists() {
        fails_naming(&run_to(&["/dev/full"]), "/dev/full");
        fails_naming(&compile("/dev/full"), "/dev/full");
    }
}

#[test]
fn a_bench_report_that_cannot_be_written_is_an_error() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let out = shine_in(
        root(),
        &[
            "bench",
            "cpu",
            "--no-anchors",
            "--quick",
            "--settle-ms",
            "0",
            "--case",
            "mm_baseline",
            "--nat",
            "m=8",
            "--nat",
            "n=8",
            "--nat",
            "k=8",
            "--threads",
            "1",
            "--json",
            "/dev/full",
        ],
    );
    fails_naming(&out, "/dev/full");
}
