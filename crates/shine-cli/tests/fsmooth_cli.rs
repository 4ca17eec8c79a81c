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
    assert_eq!(program(&out), program(&out2));
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
         build (length u) (fun (i: Index) -> let d1 = u[i] in let d2 = v[i] in (fst d1 + fst d2, snd d1 + snd d2))"
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
        "unknown name `nope`",
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
        "succeeded without changing the program",
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

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("shine-fsmooth-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn product(dir: &Path, factors: usize) -> PathBuf {
    let p = dir.join(format!("product{factors}.fsmooth"));
    let body = vec!["x"; factors].join(" * ");
    std::fs::write(&p, format!("input x : Double\n{body}\n")).unwrap();
    p
}

fn args<'a>(list: &'a [&'a OsStr]) -> impl Iterator<Item = &'a OsStr> {
    list.iter().copied()
}

#[test]
fn unrolling_huge_loops_stops_with_a_clear_error() {
    let dir = temp_dir("unroll");
    for (n, budget) in [
        ("1000000000000", None),
        ("1000000000000", Some("100000")),
        ("20000", None),
    ] {
        let p = dir.join(format!("loop{n}.fsmooth"));
        std::fs::write(
            &p,
            format!("input x : Double\nifold (fun s i -> s + x) 0.0 {n}\n"),
        )
        .unwrap();
        let mut a: Vec<&OsStr> = vec![
            OsStr::new("fsmooth"),
            OsStr::new("simplify"),
            p.as_os_str(),
            OsStr::new("--strategy"),
            OsStr::new("repeat(foldUnroll)"),
        ];
        if let Some(b) = budget {
            a.extend([OsStr::new("--budget"), OsStr::new(b)]);
        }
        // foldUnroll's own guard, or the engine's bound on a growing program (200,000
        // nodes), whichever comes first: both stop with a message
        let err = refused(&shine(args(&a)), "");
        assert!(
            err.contains("unrolling this loop further would nest the program")
                || err.contains("grew the program past"),
            "{err}"
        );
    }
    // A small loop unrolls completely.
    let small = dir.join("small.fsmooth");
    std::fs::write(&small, "input x : Double\nifold (fun s i -> s + x) 0.0 3\n").unwrap();
    let out = ok(&shine([
        OsStr::new("fsmooth"),
        OsStr::new("simplify"),
        small.as_os_str(),
        OsStr::new("--strategy"),
        OsStr::new("repeat(foldUnroll) ; simplify"),
        OsStr::new("--verify"),
        OsStr::new("5"),
    ]));
    assert!(!program(&out).contains("ifold"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_deep_derivative_prints_and_reads_back() {
    let dir = temp_dir("deep");
    let p = product(&dir, 199);
    let d = ok(&shine([
        OsStr::new("fsmooth"),
        OsStr::new("diff"),
        p.as_os_str(),
    ]));
    let again = dir.join("d199.fsmooth");
    std::fs::write(&again, &d).unwrap();
    let out = ok(&shine([
        OsStr::new("fsmooth"),
        OsStr::new("simplify"),
        again.as_os_str(),
        OsStr::new("--strategy"),
        OsStr::new("id"),
    ]));
    assert_eq!(program(&out), program(&d));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_default_budget_scales_and_the_message_says_how_to_raise_it() {
    let dir = temp_dir("budget");
    let p = product(&dir, 31);
    let out = ok(&shine([
        OsStr::new("fsmooth"),
        OsStr::new("diff"),
        p.as_os_str(),
        OsStr::new("--simplify"),
        OsStr::new("--verify"),
        OsStr::new("3"),
    ]));
    assert!(out.contains("// verified"), "{out}");
    refused(
        &shine([
            OsStr::new("fsmooth"),
            OsStr::new("diff"),
            p.as_os_str(),
            OsStr::new("--simplify"),
            OsStr::new("--budget"),
            OsStr::new("1000"),
        ]),
        "raise it with `--budget N`",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failing_strategy_prints_its_trace() {
    let err = refused(
        &shine([
            OsStr::new("fsmooth"),
            OsStr::new("simplify"),
            example("transpose_twice.fsmooth").as_os_str(),
            OsStr::new("--strategy"),
            OsStr::new("topDown(letPartialEval) ; topDown(buildGet) ; buildGet"),
            OsStr::new("--trace"),
        ]),
        "`buildGet` is not applicable",
    );
    assert!(
        err.contains("trace up to the failure (2 rule applications)"),
        "{err}"
    );
    assert!(err.contains("1. letPartialEval at the root"), "{err}");
    let err = refused(
        &shine([
            OsStr::new("fsmooth"),
            OsStr::new("simplify"),
            example("dot.fsmooth").as_os_str(),
            OsStr::new("--strategy"),
            OsStr::new("buildGet"),
        ]),
        "run with `--trace`",
    );
    assert!(!err.contains("trace up to"), "{err}");
}

#[test]
fn diff_simplify_before_the_file() {
    let out = ok(&shine([
        OsStr::new("fsmooth"),
        OsStr::new("diff"),
        OsStr::new("--simplify"),
        example("dot.fsmooth").as_os_str(),
    ]));
    assert!(out.contains("// simplify:"), "{out}");
    let named = ok(&shine([
        OsStr::new("fsmooth"),
        OsStr::new("diff"),
        OsStr::new("--simplify=fig5_13"),
        example("dot.fsmooth").as_os_str(),
    ]));
    assert!(program(&named).contains("input u"), "{named}");
}

/// A `.npy` file (version 1.0) of little-endian `f8` or `i8` data.
fn npy(path: &Path, descr: &str, shape: &[usize], data: &[u8]) {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    bytes.extend(data);
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn eval_reads_npy_inputs() {
    let dir = temp_dir("npy");
    let doubles = |xs: &[f64]| xs.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let m = dir.join("M.npy");
    npy(
        &m,
        "<f8",
        &[2, 3],
        &doubles(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
    );
    let v = dir.join("v.npy");
    npy(&v, "<f8", &[3], &doubles(&[1.0, 0.5, -1.0]));
    let out = ok(&shine([
        OsStr::new("fsmooth"),
        OsStr::new("eval"),
        example("matvec.fsmooth").as_os_str(),
        m.as_os_str(),
        v.as_os_str(),
    ]));
    // [1 + 1 - 3, 4 + 2.5 - 6]
    assert_eq!(program(&out), "[-1.0, 0.5]", "{out}");
    refused(
        &shine([
            OsStr::new("fsmooth"),
            OsStr::new("eval"),
            example("matvec.fsmooth").as_os_str(),
            v.as_os_str(),
            v.as_os_str(),
        ]),
        "the array has 1 dimensions, the type `Matrix` needs 2",
    );
    refused(
        &shine([
            OsStr::new("fsmooth"),
            OsStr::new("eval"),
            example("matvec.fsmooth").as_os_str(),
            m.as_os_str(),
        ]),
        "the program has 2 inputs (M, v), 1 data files given",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn grad_prints_a_checked_linear_gradient() {
    let out = ok(&shine([
        OsStr::new("fsmooth"),
        OsStr::new("grad"),
        example("dot.fsmooth").as_os_str(),
        OsStr::new("--wrt"),
        OsStr::new("u"),
        OsStr::new("--simplify"),
        OsStr::new("--verify"),
        OsStr::new("10"),
    ]));
    assert_eq!(
        program(&out),
        "input u : Vector\ninput v : Vector\nbuild (length u) (fun (k1: Index) -> v[k1])"
    );
    assert!(out.contains("// verified: every component"), "{out}");
    refused(
        &shine([
            OsStr::new("fsmooth"),
            OsStr::new("grad"),
            example("vector_add.fsmooth").as_os_str(),
            OsStr::new("--wrt"),
            OsStr::new("u"),
        ]),
        "a gradient needs a program with a `Double` result",
    );
}

#[test]
fn grad_inside_a_program_evaluates_simplifies_and_refuses_what_it_cannot_do() {
    let dir = temp_dir("construct");
    let doubles = |xs: &[f64]| xs.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let (x, t) = (dir.join("x.npy"), dir.join("t.npy"));
    npy(&x, "<f8", &[2], &doubles(&[1.0, 2.0]));
    npy(&t, "<f8", &[2], &doubles(&[0.5, 0.5]));
    let step = example("gradient_step.fsmooth");
    // x - 0.1 · 2 (x - t)
    let out = ok(&shine([
        OsStr::new("fsmooth"),
        OsStr::new("eval"),
        step.as_os_str(),
        x.as_os_str(),
        t.as_os_str(),
    ]));
    assert_eq!(program(&out), "[0.9, 1.7]", "{out}");
    // Simplified, the forward-mode gradient is linear: no loop is left inside the `build`.
    let out = ok(&shine([
        OsStr::new("fsmooth"),
        OsStr::new("simplify"),
        step.as_os_str(),
        OsStr::new("--verify"),
        OsStr::new("20"),
    ]));
    let body = program(&out);
    assert!(
        body.contains("build (length x)") && !body.contains("ifold") && !body.contains("grad"),
        "{out}"
    );
    assert!(out.contains("// verified: equal results on"), "{out}");
    // A function parameter has no definition to differentiate.
    let param = dir.join("param.fsmooth");
    std::fs::write(
        &param,
        "input x : Double\n(fun (h: Double => Double) -> deriv h x) (fun y -> y * y)\n",
    )
    .unwrap();
    refused(
        &shine([OsStr::new("fsmooth"), OsStr::new("eval"), param.as_os_str()]),
        "unsupported: this differentiates a function that calls `h`",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `shine fsmooth ARGS...`, the arguments as strings.
fn fsmooth(args: &[&str]) -> Output {
    shine(std::iter::once("fsmooth").chain(args.iter().copied()))
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// Strategies from a `.elv` file (`--strategy S.elv --apply NAME`, as `shine
/// rewrite` takes them): a definition, an expression over the definitions, and
/// the same file for `diff --simplify=S.elv`.
#[test]
fn a_strategy_file_applies_its_definitions() {
    let elv = example("strategies.elv");
    let elv = path_str(&elv);
    let twice = example("transpose_twice.fsmooth");
    let out = ok(&fsmooth(&[
        "simplify",
        path_str(&twice),
        "--strategy",
        elv,
        "--apply",
        "figure5_13",
        "--stats",
        "--verify",
        "50",
    ]));
    assert_eq!(
        program(&out),
        "input M : Matrix\nbuild (length M) (fun i -> build (length M[0]) (fun j -> M[i][j]))"
    );
    assert!(out.contains("// 12 rule applications"), "{out}");
    assert!(out.contains("// verified: equal results on 50"), "{out}");
    // An expression over the file's definitions, with a parameter.
    let dir = temp_dir("elv");
    let looped = dir.join("loop3.fsmooth");
    std::fs::write(
        &looped,
        "input x : Double\nifold (fun s i -> s + x) 0.0 3\n",
    )
    .unwrap();
    let out = ok(&fsmooth(&[
        "simplify",
        path_str(&looped),
        "--strategy",
        elv,
        "--apply",
        "unroll(3) ; tidy",
        "--verify",
        "20",
    ]));
    assert_eq!(program(&out), "input x : Double\nx + x + x");
    // A location: only the generators of builds are simplified, not the size `length w + 0`.
    let gens = dir.join("generators.fsmooth");
    std::fs::write(
        &gens,
        "input v : Vector\nlet w = build (length v) (fun i -> (fun x -> x * 1.0) v[i]) in\n\
         build (length w + 0) (fun i -> w[i] + 0.0)\n",
    )
    .unwrap();
    let out = ok(&fsmooth(&[
        "simplify",
        path_str(&gens),
        "--strategy",
        elv,
        "--apply",
        "generators",
        "--trace",
    ]));
    assert_eq!(
        program(&out),
        "input v : Vector\nlet w = build (length v) (fun i -> v[i]) in build (length w + 0) (fun i -> w[i])"
    );
    assert!(out.contains("4. addZero at body.generator.body"), "{out}");
    // `diff --simplify=S.elv --apply NAME`; `simplify` is the cost-guarded default here too.
    let simplify_arg = format!("--simplify={elv}");
    let dot = example("dot.fsmooth");
    let out = ok(&fsmooth(&[
        "diff",
        &simplify_arg,
        "--apply",
        "tidy",
        path_str(&dot),
        "--verify",
        "10",
    ]));
    assert!(
        out.contains("// verified: value and tangent match"),
        "{out}"
    );
    let default = ok(&fsmooth(&[
        "diff",
        &simplify_arg,
        "--apply",
        "simplify",
        path_str(&dot),
    ]));
    assert!(default.contains("// simplify: the result of"), "{default}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Errors in a strategy file or in what `--apply` names are shown in their
/// source with the span they concern, as `shine rewrite` shows them.
#[test]
fn strategy_file_errors_point_into_the_file() {
    let dir = temp_dir("elv-bad");
    let dot = example("dot.fsmooth");
    let dot = path_str(&dot);
    let bad = dir.join("bad.elv");
    std::fs::write(
        &bad,
        "def fine = normalize(fusion)\n\
         def s = normalize(buildGet <+ lenBiuld)\n\
         def k = repeatN(buildGet, id)\n",
    )
    .unwrap();
    let bad = path_str(&bad);
    // An unknown rule name: the file, line and column, and the near miss.
    let err = refused(
        &fsmooth(&["simplify", dot, "--strategy", bad, "--apply", "fine"]),
        "unknown name `lenBiuld`",
    );
    assert!(err.contains("bad.elv:2:31"), "{err}");
    assert!(err.contains("did you mean `lenBuild`?"), "{err}");
    // The wrong kind of argument, in the same file (every error is reported).
    assert!(
        err.contains("expected an integer, found a strategy `buildGet`"),
        "{err}"
    );
    assert!(err.contains("bad.elv:3:17"), "{err}");
    // ... and inline: a strategy where an integer is expected and vice versa.
    let err = refused(
        &fsmooth(&["simplify", dot, "--strategy", "child(generator, 3)"]),
        "expected a strategy, found an integer `3`",
    );
    assert!(err.contains("--strategy:1:18"), "{err}");
    refused(
        &fsmooth(&["simplify", dot, "--strategy", "repeatN(fusion, id)"]),
        "expected an integer, found a strategy `fusion`",
    );
    refused(
        &fsmooth(&["simplify", dot, "--strategy", "is(loop)"]),
        "`loop` is not a kind of F-smooth term",
    );
    // What `--apply` names: an unknown name, a definition with parameters.
    let good = example("strategies.elv");
    let good = path_str(&good);
    let err = refused(
        &fsmooth(&["simplify", dot, "--strategy", good, "--apply", "nosuch"]),
        "unknown name `nosuch`",
    );
    assert!(err.contains("<strategy>:1:1"), "{err}");
    refused(
        &fsmooth(&["simplify", dot, "--strategy", good, "--apply", "unroll"]),
        "`unroll` has parameters (n); apply it in an expression such as `unroll(n)`",
    );
    // A file without `--apply`, `--apply` without a file, a file that is not there.
    refused(
        &fsmooth(&["simplify", dot, "--strategy", good]),
        "is a strategy file: say which of its strategies to apply with `--apply NAME`",
    );
    refused(
        &fsmooth(&["simplify", dot, "--apply", "tidy"]),
        "give the file with `--strategy S.elv`",
    );
    refused(
        &fsmooth(&["diff", dot, "--apply", "tidy"]),
        "give the file with `--simplify=S.elv`",
    );
    refused(
        &fsmooth(&["simplify", dot, "--strategy", "missing.elv", "--apply", "s"]),
        "cannot read `missing.elv`",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--verify N` runs N random trials: a huge N (issue 18: `--verify 4294967296`
/// ran for hours) and 0 are refused at once; the limit itself is accepted.
#[test]
fn verify_counts_are_bounded() {
    let squares = example("sum_of_squares.fsmooth");
    let squares = path_str(&squares);
    for (sub, extra) in [("simplify", None), ("diff", None), ("grad", Some("v"))] {
        let mut args = vec![sub, squares, "--verify", "4294967296"];
        if let Some(wrt) = extra {
            args.extend(["--wrt", wrt]);
        }
        let out = fsmooth(&args);
        let err = refused(&out, "at most 100000 random trials");
        assert!(err.contains("4294967296 is too many"), "{err}");
        assert_eq!(out.status.code(), Some(2), "a usage error: {err}");
    }
    for (n, why) in [
        ("0", "verifying on 0 random inputs checks nothing"),
        ("-3", "is not a number of random trials"),
        ("many", "is not a number of random trials"),
        ("340282366920938463463374607431768211456", "is not a number"),
    ] {
        let flag = format!("--verify={n}");
        refused(&fsmooth(&["simplify", squares, &flag]), why);
    }
    let out = ok(&fsmooth(&["simplify", squares, "--verify", "100000"]));
    assert!(
        out.contains("// verified: equal results on 100000 random inputs"),
        "{out}"
    );
}
