//! `shine fsmooth`: simplifying and differentiating F-smooth programs from the
//! command line (thesis §5.7), and clean refusals of bad input.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn shine<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_shine"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("cannot start the shine binary")
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/fsmooth")
        .join(name)
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "shine failed ({:?}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A clean refusal: non-zero exit, nothing on stdout, a message mentioning `phrase`.
fn refused(out: &Output, phrase: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success(),
        "expected a failure, got:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!err.contains("panicked"), "shine panicked:\n{err}");
    assert!(
        out.stdout.is_empty(),
        "stdout should be empty:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(err.contains(phrase), "expected {phrase:?} in:\n{err}");
    err
}

/// The lines that are not `//` comments: the program.
fn program(out: &str) -> String {
    out.lines()
        .filter(|l| !l.starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn figure_5_13_with_the_thesis_strategy_and_its_trace() {
    let out = ok(&shine([
        OsStr::new("fsmooth"),
        OsStr::new("simplify"),
        example("transpose_twice.fsmooth").as_os_str(),
        OsStr::new("--strategy"),
        OsStr::new("normalize(buildGet <+ lenBuild <+ letPartialEval <+ letApp <+ funToLet)"),
        OsStr::new("--trace"),
        OsStr::new("--stats"),
        OsStr::new("--verify"),
        OsStr::new("50"),
    ]));
    assert_eq!(
        program(&out),
        "input M : Matrix\nbuild (length M) (fun i -> build (length M[0]) (fun j -> M[i][j]))"
    );
    assert!(
        out.contains("//  12. letPartialEval at generator.body.generator.body"),
        "{out}"
    );
    assert!(
        out.contains("// 12 rule applications, 50 ELEVATE steps"),
        "{out}"
    );
    assert!(out.contains("// verified: equal results on"), "{out}");
}

#[test]
fn simplify_output_reads_back_as_the_same_program() {
    let out = ok(&shine([
        OsStr::new("fsmooth"),
        OsStr::new("simplify"),
        example("matmul.fsmooth").as_os_str(),
    ]));
    let dir = std::env::temp_dir().join(format!("shine-fsmooth-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let again = dir.join("again.fsmooth");
    std::fs::write(&again, &out).unwrap();
    let out2 = ok(&shine([
        OsStr::new("fsmooth"),
        OsStr::new("simplify"),
        again.as_os_str(),
    ]));
    assert_eq!(out, out2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn diff_prints_a_checked_derivative() {
    let out = ok(&shine([
        OsStr::new("fsmooth"),
        OsStr::new("diff"),
        example("vector_add.fsmooth").as_os_str(),
        OsStr::new("--simplify"),
        OsStr::new("--verify"),
        OsStr::new("40"),
    ]));
    assert_eq!(
        program(&out),
        "input u : Array<(Double, Double)>\ninput v : Array<(Double, Double)>\n\
         build (length u) (fun (i: Index) -> (fst u[i] + fst v[i], snd u[i] + snd v[i]))"
    );
    assert!(
        out.contains("// verified: value and tangent match finite differences"),
        "{out}"
    );
    let raw = ok(&shine([
        OsStr::new("fsmooth"),
        OsStr::new("diff"),
        example("dot.fsmooth").as_os_str(),
    ]));
    assert!(raw.contains("let d1 ="), "{raw}");
}

#[test]
fn eval_and_rules() {
    let out = ok(&shine([
        OsStr::new("fsmooth"),
        OsStr::new("eval"),
        example("vector_eye.fsmooth").as_os_str(),
    ]));
    let (inputs, value): (Vec<&str>, Vec<&str>) = out.lines().partition(|l| l.starts_with("//"));
    assert_eq!(inputs.len(), 1);
    assert_eq!(
        inputs[0].trim_start_matches("// v = "),
        value[0],
        "v times the identity is v"
    );
    let rules = ok(&shine(["fsmooth", "rules"]));
    for name in [
        "buildGet",
        "lenBuild",
        "letPartialEval",
        "letApp",
        "funToLet",
        "simplify",
        "fig5_13",
    ] {
        assert!(rules.contains(name), "{name} missing from:\n{rules}");
    }
}

#[test]
fn bad_input_is_refused_cleanly() {
    let dir = std::env::temp_dir().join(format!("shine-fsmooth-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let parse = write("parse.fsmooth", "input v : Vector\nbuild (length v)");
    refused(
        &shine([
            OsStr::new("fsmooth"),
            OsStr::new("simplify"),
            parse.as_os_str(),
        ]),
        "argument 2 of `build`",
    );
    let types = write("types.fsmooth", "input v : Vector\nv[1.0]");
    let err = refused(
        &shine([OsStr::new("fsmooth"), OsStr::new("diff"), types.as_os_str()]),
        "should have type `Index`",
    );
    assert!(err.contains("types.fsmooth"), "{err}");
    refused(
        &shine([
            OsStr::new("fsmooth"),
            OsStr::new("simplify"),
            example("dot.fsmooth").as_os_str(),
            OsStr::new("--strategy"),
            OsStr::new("normalize(nope)"),
        ]),
        "unknown strategy `nope`",
    );
    refused(
        &shine([
            OsStr::new("fsmooth"),
            OsStr::new("simplify"),
            example("dot.fsmooth").as_os_str(),
            OsStr::new("--strategy"),
            OsStr::new("buildGet"),
        ]),
        "`buildGet` is not applicable",
    );
    refused(
        &shine([
            OsStr::new("fsmooth"),
            OsStr::new("simplify"),
            example("dot.fsmooth").as_os_str(),
            OsStr::new("--strategy"),
            OsStr::new("repeat(id)"),
            OsStr::new("--budget"),
            OsStr::new("1000"),
        ]),
        "does not seem to terminate",
    );
    refused(
        &shine([
            OsStr::new("fsmooth"),
            OsStr::new("simplify"),
            dir.join("missing.fsmooth").as_os_str(),
        ]),
        "cannot read",
    );
    let binary = write("binary.fsmooth", "\u{0}\u{1}\u{7f} (((");
    refused(
        &shine([
            OsStr::new("fsmooth"),
            OsStr::new("eval"),
            binary.as_os_str(),
        ]),
        "unexpected character `\\0`",
    );
    let _ = std::fs::remove_dir_all(&dir);
}
