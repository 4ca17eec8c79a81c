//! Every subcommand works in a process limited to 2 GB of address space (`ulimit -v
//! 2000000`, common in batch systems): deep recursion grows the stack on demand instead of
//! reserving nested gigabyte stacks (which failed with "cannot start the parser" there).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

/// `shine ARGS` under `ulimit -v 2000000`, in the repository root: its exit status and output.
fn limited(args: &[&str]) -> (bool, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let script = format!(
        "ulimit -v 2000000 && exec '{}' {}",
        env!("CARGO_BIN_EXE_shine"),
        quoted.join(" ")
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(root)
        .output()
        .expect("sh runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn ok(args: &[&str]) -> String {
    let (success, text) = limited(args);
    assert!(
        success,
        "shine {} failed under ulimit -v:\n{text}",
        args.join(" ")
    );
    text
}

/// A program whose scalar function is a chain of `depth` definitions, each adding one to the
/// one before: `depth` levels deep for every recursive pass once inlined.
fn deep_program(dir: &Path, depth: usize) -> PathBuf {
    let mut text = String::from("def g0 : f32 -> f32 = fun x => x + 1.0f\n");
    for k in 1..depth {
        text.push_str(&format!(
            "def g{k} : f32 -> f32 = fun x => g{} x + 1.0f\n",
            k - 1
        ));
    }
    text.push_str(&format!(
        "def deep : {{n: nat}} -> n.f32 -> n.f32 = fun xs => xs |> map g{}\n",
        depth - 1
    ));
    let path = dir.join("deep.rise");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn every_subcommand_runs_under_a_2gb_address_space_limit() {
    let a = "examples/data/a_2x3.npy";
    let b = "examples/data/b_3x2.npy";
    ok(&["check", "examples/mm.rise"]);
    let evaluated = ok(&[
        "eval",
        "examples/mm.rise",
        "--def",
        "mm",
        "--input",
        a,
        "--input",
        b,
    ]);
    assert!(
        evaluated.contains("[[4.0, 5.0], [10.0, 11.0]]"),
        "{evaluated}"
    );
    ok(&[
        "rewrite",
        "examples/mm.rise",
        "--def",
        "mm",
        "--strategy",
        "examples/mm.elv",
        "--apply",
        "blocking",
    ]);
    ok(&["strategies"]);
    for target in ["c", "openmp", "opencl", "cuda"] {
        ok(&[
            "compile",
            "examples/mm.rise",
            "--def",
            "mm",
            "--target",
            target,
        ]);
    }
    for target in support::targets() {
        let out = ok(&[
            "run",
            "examples/mm.rise",
            "--def",
            "mm",
            "--target",
            target,
            "--input",
            a,
            "--input",
            b,
            "--verify",
        ]);
        assert!(out.contains("verified"), "{target}: {out}");
    }
    ok(&["fsmooth", "simplify", "examples/fsmooth/matvec.fsmooth"]);
    ok(&["fsmooth", "diff", "examples/fsmooth/dot.fsmooth"]);
}

#[test]
fn deep_programs_run_under_a_2gb_address_space_limit() {
    let dir = tempfile::tempdir().unwrap();
    let program = deep_program(dir.path(), 400);
    let program = program.to_str().unwrap();
    ok(&["check", program]);
    let out = ok(&[
        "run", program, "--def", "deep", "--target", "c", "--nat", "n=5", "--random", "3",
        "--verify",
    ]);
    assert!(out.contains("verified"), "{out}");
}
