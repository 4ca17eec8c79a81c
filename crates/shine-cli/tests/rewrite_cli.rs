//! `shine rewrite` from the command line.

use std::process::Command;

fn shine(args: &[&str]) -> (bool, String, String) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let out = Command::new(env!("CARGO_BIN_EXE_shine"))
        .current_dir(root)
        .args(args)
        .output()
        .expect("shine runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const MM: [&str; 6] = [
    "rewrite",
    "examples/mm.rise",
    "--def",
    "mm",
    "--strategy",
    "examples/mm.elv",
];

#[test]
fn rewrite_prints_a_program_that_type_checks() {
    let mut args = MM.to_vec();
    args.extend(["--apply", "parallelization ; lowerToC"]);
    let (ok, out, err) = shine(&args);
    assert!(ok, "{err}");
    assert!(
        out.starts_with("def mm : {m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32 ="),
        "{out}"
    );
    assert!(out.contains("mapPar"), "{out}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.rise");
    std::fs::write(&path, &out).unwrap();
    let (ok, checked, err) = shine(&["check", path.to_str().unwrap()]);
    assert!(ok, "the rewritten program does not check: {err}\n{out}");
    // The strategy's splits show as size constraints of the rewritten program.
    assert_eq!(
        checked.trim().lines().collect::<Vec<_>>(),
        [
            "mm : {m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32",
            "  where 32 divides n",
            "  where 4 divides k",
            "  where 32 divides m",
        ]
    );
}

#[test]
fn json_stats_and_trace() {
    let mut args = MM.to_vec();
    args.extend(["--apply", "baseline", "--stats", "--json", "--trace"]);
    let (ok, out, err) = shine(&args);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert!(v["steps"].as_u64().unwrap() > 0);
    assert!(v["time_ms"].as_f64().unwrap() >= 0.0);
    assert!(v["program"].as_str().unwrap().contains("reduceSeq"));
    assert!(err.contains("fuseReduceMap at"), "{err}");
    assert!(err.contains("in baseline"), "{err}");
}

#[test]
fn errors_name_the_problem() {
    let mut args = MM.to_vec();
    args.extend(["--apply", "baseline ; vectorize(32) @ outermost(isReduce)"]);
    let (ok, _, err) = shine(&args);
    assert!(!ok);
    // as written, at its place in the expression; as applied in a note
    assert!(
        err.contains("`vectorize(32) @ outermost(isReduce)` is not applicable at the root"),
        "{err}"
    );
    assert!(err.contains("<strategy>:1:12"), "{err}");
    assert!(
        err.contains("as applied: `topDown(isReduce ; vectorize(32))`"),
        "{err}"
    );
    let mut args = MM.to_vec();
    args.extend(["--apply", "basline"]);
    let (ok, _, err) = shine(&args);
    assert!(!ok);
    assert!(err.contains("basline"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // a rule applies without end: the budget stops it
    let mut args = MM.to_vec();
    args.extend(["--apply", "repeat(addId @ body @ body)", "--budget", "1000"]);
    let (ok, _, err) = shine(&args);
    assert!(!ok);
    assert!(err.contains("does not seem to terminate"), "{err}");
    // a step that leaves the program the same would do so forever: it stops at once
    for apply in ["repeat(id)", "normalize(isMap)", "repeat(lowerToC)"] {
        let mut args = MM.to_vec();
        args.extend(["--apply", apply]);
        let (ok, _, err) = shine(&args);
        assert!(!ok);
        assert!(
            err.contains("succeeded without changing the program"),
            "{err}"
        );
    }
}

#[test]
fn mv_and_stencil_strategies_run() {
    let (ok, out, err) = shine(&[
        "rewrite",
        "examples/mv.rise",
        "--def",
        "mv",
        "--strategy",
        "examples/mv.elv",
        "--apply",
        "mvOpt",
    ]);
    assert!(ok, "{err}");
    assert!(
        out.contains("mapWorkGroup(0)") && out.contains("mapLocal(0)"),
        "{out}"
    );
    let (ok, out, err) = shine(&[
        "rewrite",
        "examples/jacobi1d.rise",
        "--def",
        "jacobi3",
        "--strategy",
        "examples/stencil.elv",
        "--apply",
        "tiled1d",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("slide 34 32"), "{out}");
    let (ok, out, err) = shine(&[
        "rewrite",
        "examples/stencil2d.rise",
        "--def",
        "jacobi2d5",
        "--strategy",
        "examples/stencil.elv",
        "--apply",
        "tiled2d",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("slide 18 16"), "{out}");
}
