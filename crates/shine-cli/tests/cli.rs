//! The command-line contract of `shine` (`docs/cli.md`): what
//! `check` and `eval` print and write, and how they fail on bad input: with a
//! non-zero exit code and one clear message on stderr, never a panic.

use shine::npy;
use shine::rise::interp::{Flat, Scalar};
use shine::rise::ScalarType;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tempfile::TempDir;

/// A command line: each argument is anything that is `AsRef<OsStr>` (`&str`, paths).
macro_rules! args {
    ($($arg:expr),* $(,)?) => {
        vec![$(OsString::from(AsRef::<OsStr>::as_ref(&$arg))),*] as Vec<OsString>
    };
}

/// Runs `shine` with the given arguments.
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
        .join("../../examples")
        .join(name)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts success and returns stdout.
fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "shine failed ({:?}):\n{}",
        out.status,
        stderr(out)
    );
    stdout(out)
}

/// Asserts that `shine` refused cleanly: a non-zero exit code (not a panic),
/// nothing on stdout, and exactly one error message on stderr that mentions `phrase`.
fn refused(out: &Output, phrase: &str) -> String {
    let err = stderr(out);
    let code = out.status.code();
    assert!(
        matches!(code, Some(c) if c != 0 && c != 101),
        "expected a clean failure, got {:?}\nstderr:\n{err}",
        out.status
    );
    assert!(
        !err.contains("panicked at") && !err.contains("RUST_BACKTRACE"),
        "shine panicked:\n{err}"
    );
    assert!(
        err.contains(phrase),
        "stderr does not mention {phrase:?}:\n{err}"
    );
    let errors = err
        .lines()
        .filter(|l| l.trim_start().to_lowercase().starts_with("error"))
        .count();
    assert_eq!(errors, 1, "expected one error message, got:\n{err}");
    assert!(
        out.stdout.is_empty(),
        "a failed run printed on stdout:\n{}",
        stdout(out)
    );
    err
}

fn write_program(dir: &TempDir, name: &str, text: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn write_f32(dir: &TempDir, name: &str, shape: &[usize], data: &[f32]) -> PathBuf {
    let path = dir.path().join(name);
    let array = Flat {
        elem: ScalarType::F32,
        shape: shape.to_vec(),
        data: data.iter().map(|&x| Scalar::F32(x)).collect(),
    };
    npy::write(&path, &array).unwrap();
    path
}

fn write_f64(dir: &TempDir, name: &str, shape: &[usize], data: &[f64]) -> PathBuf {
    let path = dir.path().join(name);
    let array = Flat {
        elem: ScalarType::F64,
        shape: shape.to_vec(),
        data: data.iter().map(|&x| Scalar::F64(x)).collect(),
    };
    npy::write(&path, &array).unwrap();
    path
}

/// A version 1.0 `.npy` file with a hand-written header, for headers that
/// `npy::write` never produces.
fn write_raw_npy(dir: &TempDir, name: &str, header: &str, data: &[u8]) -> PathBuf {
    let mut header = header.as_bytes().to_vec();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(&header);
    bytes.extend_from_slice(data);
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn f32s(array: &Flat) -> Vec<f32> {
    array
        .data
        .iter()
        .map(|s| match s {
            Scalar::F32(x) => *x,
            other => panic!("expected f32 elements, found {other:?}"),
        })
        .collect()
}

/// Parses a printed value: a number or a (nested) list of numbers, flattened.
fn printed_numbers(text: &str) -> Vec<f32> {
    text.split(|c: char| c == '[' || c == ']' || c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.parse()
                .unwrap_or_else(|_| panic!("not a number: {t:?} in {text:?}"))
        })
        .collect()
}

/// The vectors [1, 2, 3] and [4, 5, 6]; their dot product is 32.
fn two_vectors(dir: &TempDir) -> (PathBuf, PathBuf) {
    (
        write_f32(dir, "x.npy", &[3], &[1.0, 2.0, 3.0]),
        write_f32(dir, "y.npy", &[3], &[4.0, 5.0, 6.0]),
    )
}

/// A definition whose size no input fixes.
const ONES: &[u8] = b"// n ones\ndef ones = generate (fun i => 1.0f)\n";

// --- The contract --------------------------------------------------------------

#[test]
fn check_prints_every_definition_of_mm() {
    let out = ok(&shine(args!["check", example("mm.rise")]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "dot : {n: nat} -> n.f32 -> n.f32 -> f32",
            "mm : {m n k: nat} -> m.k.f32 -> k.n.f32 -> m.n.f32",
        ]
    );
}

#[test]
fn check_prints_name_colon_type_for_every_example() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut programs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension() == Some(OsStr::new("rise")))
        .collect();
    programs.sort();
    assert!(!programs.is_empty());
    for program in programs {
        let text = std::fs::read_to_string(&program).unwrap();
        // foreign functions first, then definitions
        let name = |prefix: &'static str| {
            text.lines()
                .filter_map(move |l| l.strip_prefix(prefix))
                .map(|l| l.split_whitespace().next().unwrap())
        };
        let defined: Vec<&str> = name("foreign ").chain(name("def ")).collect();
        let out = ok(&shine(args!["check", program]));
        let printed: Vec<&str> = out
            .lines()
            .filter(|l| !l.starts_with("  where "))
            .map(|l| {
                let (name, ty) = l
                    .split_once(" : ")
                    .unwrap_or_else(|| panic!("{}: not `name : type`: {l:?}", program.display()));
                assert!(!ty.trim().is_empty(), "{l:?}");
                name
            })
            .collect();
        assert_eq!(printed, defined, "{}", program.display());
    }
}

#[test]
fn check_of_an_empty_program_prints_nothing() {
    let dir = TempDir::new().unwrap();
    let program = write_program(&dir, "empty.rise", b"");
    assert_eq!(ok(&shine(args!["check", program])), "");
    let program = write_program(&dir, "comments.rise", b"// nothing here\n\n");
    assert_eq!(ok(&shine(args!["check", program])), "");
}

#[test]
fn eval_prints_the_dot_product() {
    let dir = TempDir::new().unwrap();
    let (x, y) = two_vectors(&dir);
    let out = ok(&shine(args![
        "eval",
        example("dot.rise"),
        "--def",
        "dot",
        "--input",
        x,
        "--input",
        y,
    ]));
    assert_eq!(printed_numbers(&out), [32.0], "{out:?}");
}

#[test]
fn eval_prints_an_array() {
    let dir = TempDir::new().unwrap();
    let x = write_f32(&dir, "x.npy", &[4], &[1.0, -2.0, 0.5, 0.0]);
    let alpha = write_f32(&dir, "alpha.npy", &[], &[2.0]);
    let out = ok(&shine(args![
        "eval",
        example("scal.rise"),
        "--def",
        "scal",
        "--input",
        alpha,
        "--input",
        x,
    ]));
    assert_eq!(printed_numbers(&out), [2.0, -4.0, 1.0, 0.0], "{out:?}");
}

#[test]
fn eval_output_writes_a_readable_npy_of_the_right_shape() {
    let dir = TempDir::new().unwrap();
    // a: 2x3, b: 3x4 (m=2, k=3, n=4)
    let a = write_f32(&dir, "a.npy", &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b_data: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let b = write_f32(&dir, "b.npy", &[3, 4], &b_data);
    let result = dir.path().join("c.npy");
    let out = shine(args![
        "eval",
        example("mm.rise"),
        "--def",
        "mm",
        "--input",
        a,
        "--input",
        b,
        "--output",
        result,
    ]);
    ok(&out);
    let c = npy::read(&result).unwrap();
    assert_eq!(c.elem, ScalarType::F32);
    assert_eq!(c.shape, [2, 4]);
    // row i of a times column j of b
    let mut expected = Vec::new();
    for i in 0..2 {
        for j in 0..4 {
            expected.push(
                (0..3)
                    .map(|k| (3 * i + k + 1) as f32 * b_data[4 * k + j])
                    .sum::<f32>(),
            );
        }
    }
    assert_eq!(f32s(&c), expected);
}

#[test]
fn eval_output_of_a_scalar_is_a_0d_npy() {
    let dir = TempDir::new().unwrap();
    let (x, y) = two_vectors(&dir);
    let result = dir.path().join("d.npy");
    ok(&shine(args![
        "eval",
        example("dot.rise"),
        "--def",
        "dot",
        "--input",
        x,
        "--input",
        y,
        "--output",
        result,
    ]));
    let d = npy::read(&result).unwrap();
    assert_eq!(d.shape, Vec::<usize>::new());
    assert_eq!(f32s(&d), [32.0]);
}

#[test]
fn nat_sets_a_size_the_inputs_do_not_fix() {
    let dir = TempDir::new().unwrap();
    let program = write_program(&dir, "ones.rise", ONES);
    let out = ok(&shine(args!["check", program]));
    assert_eq!(out.trim_end(), "ones : {n: nat} -> n.f32");

    let eval = |nat: &str, output: Option<&Path>| {
        let mut args = args!["eval", program, "--def", "ones", "--nat", nat];
        if let Some(path) = output {
            args.extend(args!["--output", path]);
        }
        shine(args)
    };
    assert_eq!(printed_numbers(&ok(&eval("n=3", None))), [1.0, 1.0, 1.0]);
    assert_eq!(printed_numbers(&ok(&eval("n=0", None))), Vec::<f32>::new());

    let result = dir.path().join("ones.npy");
    ok(&eval("n=5", Some(&result)));
    let ones = npy::read(&result).unwrap();
    assert_eq!(ones.shape, [5]);
    assert_eq!(f32s(&ones), [1.0; 5]);

    // without --nat, the message says how to give the size
    let out = shine(args!["eval", program, "--def", "ones",]);
    refused(&out, "--nat n=");
}

#[test]
fn nat_that_agrees_with_the_inputs_is_accepted() {
    let dir = TempDir::new().unwrap();
    let (x, y) = two_vectors(&dir);
    let out = ok(&shine(args![
        "eval",
        example("dot.rise"),
        "--def",
        "dot",
        "--nat",
        "n=3",
        "--input",
        x,
        "--input",
        y,
    ]));
    assert_eq!(printed_numbers(&out), [32.0]);
}

#[test]
fn help_succeeds() {
    for args in [
        &["--help"][..],
        &["check", "--help"],
        &["eval", "--help"],
        &["help"],
    ] {
        let out = shine(args);
        let text = ok(&out);
        assert!(text.contains("Usage"), "{args:?}:\n{text}");
    }
    let text = ok(&shine(args!["eval", "--help"]));
    for option in ["--def", "--nat", "--input", "--output"] {
        assert!(
            text.contains(option),
            "eval --help does not show {option}:\n{text}"
        );
    }
}

// --- Bad programs ----------------------------------------------------------------

#[test]
fn syntax_error_shows_the_source_line() {
    let dir = TempDir::new().unwrap();
    let line = "def dot = fun xs ys => zip xs ys |> map (fun p => fst p * ) |> reduce add 0.0f";
    let program = write_program(&dir, "syntax.rise", format!("// dot\n{line}\n").as_bytes());
    let err = refused(&shine(args!["check", program]), "syntax.rise:2:");
    assert!(err.contains(line), "the source line is not shown:\n{err}");
}

#[test]
fn type_error_is_reported() {
    let dir = TempDir::new().unwrap();
    let program = write_program(&dir, "type.rise", b"def f = fun x => fst 1.0f\n");
    let err = refused(&shine(args!["check", program]), "type mismatch");
    assert!(err.contains("fst 1.0f"), "{err}");
    // eval type-checks too
    let out = shine(args!["eval", program, "--def", "f",]);
    refused(&out, "type mismatch");
}

#[test]
fn unknown_name_is_reported() {
    let dir = TempDir::new().unwrap();
    let program = write_program(&dir, "unbound.rise", b"def f = fun x => g x\n");
    refused(&shine(args!["check", program]), "unknown name `g`");
}

#[test]
fn missing_program_file() {
    let dir = TempDir::new().unwrap();
    let missing = dir.path().join("missing.rise");
    refused(&shine(args!["check", missing]), "missing.rise");
    let out = shine(args!["eval", missing, "--def", "f",]);
    refused(&out, "missing.rise");
}

#[test]
fn directory_as_program() {
    let dir = TempDir::new().unwrap();
    refused(&shine(args!["check", dir.path()]), "cannot read");
}

#[test]
fn empty_program_has_no_definition_to_eval() {
    let dir = TempDir::new().unwrap();
    let program = write_program(&dir, "empty.rise", b"");
    let out = shine(args!["eval", program, "--def", "dot",]);
    refused(&out, "no definition named `dot`");
}

#[test]
fn binary_garbage_program() {
    let dir = TempDir::new().unwrap();
    // not UTF-8
    let bytes: Vec<u8> = (0..=255u8).rev().cycle().take(600).collect();
    let program = write_program(&dir, "garbage.rise", &bytes);
    refused(&shine(args!["check", program]), "UTF-8");
    // UTF-8, but control characters
    let program = write_program(&dir, "control.rise", b"\x00\x01\x02def f = 1.0f\x07\n");
    refused(&shine(args!["check", program]), "control.rise");
}

// --- Bad eval arguments ------------------------------------------------------------

/// `shine eval examples/dot.rise --def dot` followed by `rest`.
fn eval_dot<I, S>(rest: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut args = args!["eval", example("dot.rise"), "--def", "dot"];
    args.extend(rest.into_iter().map(|s| s.as_ref().to_owned()));
    shine(args)
}

/// `--input P` for each path.
fn inputs(paths: &[&Path]) -> Vec<OsString> {
    paths.iter().flat_map(|p| args!["--input", p]).collect()
}

#[test]
fn unknown_def() {
    let dir = TempDir::new().unwrap();
    let (x, y) = two_vectors(&dir);
    let mut args = args!["eval", example("dot.rise"), "--def", "dott"];
    args.extend(inputs(&[&x, &y]));
    let out = shine(args);
    refused(&out, "no definition named `dott`");
}

#[test]
fn missing_input_file() {
    let dir = TempDir::new().unwrap();
    let (x, _) = two_vectors(&dir);
    let missing = dir.path().join("nowhere.npy");
    refused(&eval_dot(inputs(&[&x, &missing])), "nowhere.npy");
}

#[test]
fn input_of_the_wrong_shape() {
    let dir = TempDir::new().unwrap();
    let (x, _) = two_vectors(&dir);
    let matrix = write_f32(&dir, "m.npy", &[3, 4], &[0.5; 12]);
    refused(
        &eval_dot(inputs(&[&matrix, &x])),
        "does not fit parameter 1",
    );
    refused(
        &eval_dot(inputs(&[&x, &matrix])),
        "does not fit parameter 2",
    );
    // a scalar for a vector
    let scalar = write_f32(&dir, "s.npy", &[], &[1.0]);
    refused(
        &eval_dot(inputs(&[&x, &scalar])),
        "does not fit parameter 2",
    );
    // vectors of different lengths
    let long = write_f32(&dir, "long.npy", &[4], &[1.0; 4]);
    refused(&eval_dot(inputs(&[&x, &long])), "does not fit parameter 2");
}

#[test]
fn input_of_the_wrong_dtype() {
    let dir = TempDir::new().unwrap();
    let (x, _) = two_vectors(&dir);
    let doubles = write_f64(&dir, "d.npy", &[3], &[1.0, 2.0, 3.0]);
    refused(&eval_dot(inputs(&[&x, &doubles])), "f64");
    let ints = dir.path().join("i.npy");
    npy::write(
        &ints,
        &Flat {
            elem: ScalarType::I32,
            shape: vec![3],
            data: vec![Scalar::I32(1); 3],
        },
    )
    .unwrap();
    refused(&eval_dot(inputs(&[&ints, &x])), "i32");
}

#[test]
fn too_many_or_too_few_inputs() {
    let dir = TempDir::new().unwrap();
    let (x, y) = two_vectors(&dir);
    refused(&eval_dot(inputs(&[&x])), "takes 2 value parameter");
    refused(&eval_dot(inputs(&[&x, &y, &x])), "takes 2 value parameter");
    refused(&eval_dot(inputs(&[])), "takes 2 value parameter");
}

#[test]
fn malformed_nat() {
    let dir = TempDir::new().unwrap();
    let (x, y) = two_vectors(&dir);
    for (nat, phrase) in [
        ("n", "NAME=VALUE"),
        ("n=-3", "-3"),
        ("n=abc", "abc"),
        ("n=", "not a natural number"),
        ("n=1.5", "1.5"),
        ("n=99999999999999999999999", "not a natural number"),
    ] {
        let mut args = vec!["--nat".into(), OsString::from(nat)];
        args.extend(inputs(&[&x, &y]));
        let err = refused(&eval_dot(args), phrase);
        assert!(err.contains("--nat"), "{nat}: {err}");
    }
}

#[test]
fn unknown_nat_name() {
    let dir = TempDir::new().unwrap();
    let (x, y) = two_vectors(&dir);
    let mut args = vec!["--nat".into(), OsString::from("q=3")];
    args.extend(inputs(&[&x, &y]));
    refused(&eval_dot(args), "no size parameter `q`");
}

#[test]
fn nat_that_contradicts_the_inputs() {
    let dir = TempDir::new().unwrap();
    let (x, y) = two_vectors(&dir);
    let mut args = vec!["--nat".into(), OsString::from("n=4")];
    args.extend(inputs(&[&x, &y]));
    refused(&eval_dot(args), "contradicts");
}

#[test]
fn garbage_npy() {
    let dir = TempDir::new().unwrap();
    let (x, _) = two_vectors(&dir);
    let garbage = write_program(&dir, "garbage.npy", b"this is not numpy\n");
    refused(&eval_dot(inputs(&[&x, &garbage])), "not a valid .npy");
    let empty = write_program(&dir, "empty.npy", b"");
    refused(&eval_dot(inputs(&[&x, &empty])), "empty.npy");
    // the magic, then a header length that runs past the end
    let cut = write_program(&dir, "cut.npy", b"\x93NUMPY\x01\x00\xff\xff{'descr'");
    refused(&eval_dot(inputs(&[&x, &cut])), "cut.npy");
    // a directory
    refused(&eval_dot(inputs(&[&x, dir.path()])), "not a valid .npy");
}

#[test]
fn npy_headers_shine_does_not_support() {
    let dir = TempDir::new().unwrap();
    let (x, _) = two_vectors(&dir);
    let ones: Vec<u8> = [1.0f32; 4].iter().flat_map(|v| v.to_le_bytes()).collect();
    let fortran = write_raw_npy(
        &dir,
        "fortran.npy",
        "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
        &ones,
    );
    refused(&eval_dot(inputs(&[&x, &fortran])), "Fortran");
    let big = write_raw_npy(
        &dir,
        "big.npy",
        "{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }",
        &ones[..12],
    );
    refused(&eval_dot(inputs(&[&x, &big])), ">f4");
    let complex = write_raw_npy(
        &dir,
        "complex.npy",
        "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }",
        &ones,
    );
    refused(&eval_dot(inputs(&[&x, &complex])), "<c8");
    let record = write_raw_npy(
        &dir,
        "record.npy",
        "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }",
        &ones[..12],
    );
    // a structured array fits only a parameter of tuples
    refused(&eval_dot(inputs(&[&x, &record])), "structured array");
    let negative = write_raw_npy(
        &dir,
        "negative.npy",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }",
        b"",
    );
    refused(&eval_dot(inputs(&[&x, &negative])), "negative.npy");
}

#[test]
fn npy_with_too_little_data() {
    let dir = TempDir::new().unwrap();
    let (x, _) = two_vectors(&dir);
    let ones: Vec<u8> = [1.0f32; 2].iter().flat_map(|v| v.to_le_bytes()).collect();
    let short = write_raw_npy(
        &dir,
        "short.npy",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
        &ones,
    );
    refused(&eval_dot(inputs(&[&x, &short])), "short.npy");
    // a header that promises 2^40 elements must not make shine allocate them
    let huge = write_raw_npy(
        &dir,
        "huge.npy",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }",
        &ones,
    );
    refused(&eval_dot(inputs(&[&x, &huge])), "huge.npy");
}

/// A header whose shape's element count overflows u64 is refused before the
/// npyz reader (which multiplies without overflow checks) sees it.
#[test]
fn npy_shape_that_overflows() {
    let dir = TempDir::new().unwrap();
    let (x, _) = two_vectors(&dir);
    let overflow = write_raw_npy(
        &dir,
        "overflow.npy",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }",
        b"",
    );
    refused(&eval_dot(inputs(&[&x, &overflow])), "overflow.npy");
}

#[test]
fn output_that_cannot_be_written() {
    let dir = TempDir::new().unwrap();
    let (x, y) = two_vectors(&dir);
    let nowhere = dir.path().join("no/such/dir/out.npy");
    let mut args = inputs(&[&x, &y]);
    args.extend(["--output".into(), nowhere.into_os_string()]);
    refused(&eval_dot(args), "cannot write");
}

#[test]
fn size_beyond_the_interpreter() {
    let dir = TempDir::new().unwrap();
    let program = write_program(&dir, "ones.rise", ONES);
    let out = shine(args![
        "eval",
        program,
        "--def",
        "ones",
        "--nat",
        "n=1000000000000",
    ]);
    refused(&out, "1000000000000");
}

#[test]
fn missing_arguments() {
    // no subcommand: the help, on stderr, and a failure
    let out = shine(Vec::<&str>::new());
    assert!(matches!(out.status.code(), Some(c) if c != 0 && c != 101));
    assert!(stderr(&out).contains("Usage"), "{}", stderr(&out));
    refused(&shine(args!["check"]), "PROGRAM");
    // eval without --def
    refused(&shine(args!["eval", example("dot.rise")]), "--def");
    refused(&shine(args!["frobnicate"]), "frobnicate");
}

#[test]
fn an_array_for_a_function_parameter() {
    let dir = TempDir::new().unwrap();
    let program = write_program(&dir, "app.rise", b"def app = fun f x => f x\n");
    let (x, y) = two_vectors(&dir);
    let mut args = args!["eval", program, "--def", "app"];
    args.extend(inputs(&[&x, &y]));
    refused(&shine(args), "does not fit parameter 1");
}

// --- Size constraints (issue 13, defects 4, 5, 7, 8) -----------------------------

/// Lowered definitions whose types constrain their sizes.
const CONSTRAINED: &[u8] = b"\
def double32 : {n: nat} -> n.f32 -> n.f32 =
  fun xs => xs |> split 32 |> mapSeq (fun r => mapSeq (fun x => x * 2.0f) r) |> join
def at1000 : {n: nat} -> n.f32 -> f32 = fun xs => at 1000 xs
def take10 : {n: nat} -> n.f32 -> 10.f32 = fun xs => take 10 xs |> mapSeq (fun x => x)
def drop5 : {n: nat} -> n.f32 -> (n-5).f32 = fun xs => drop 5 xs |> mapSeq (fun x => x + 1.0f)
def clamp : {n: nat} -> n.f32 -> (n+2).f32 = fun xs => padClamp 1 1 xs |> mapSeq (fun x => x)
";

#[test]
fn check_lists_the_size_constraints_of_each_definition() {
    let dir = TempDir::new().unwrap();
    let prog = write_program(&dir, "c.rise", CONSTRAINED);
    let out = ok(&shine(args!["check", prog]));
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "double32 : {n: nat} -> n.f32 -> n.f32",
            "  where 32 divides n",
            "at1000 : {n: nat} -> n.f32 -> f32",
            "  where 1000 < n",
            "take10 : {n: nat} -> n.f32 -> 10.f32",
            "  where n >= 10",
            "drop5 : {n: nat} -> n.f32 -> (n-5).f32",
            "  where n >= 5",
            "clamp : {n: nat} -> n.f32 -> (n+2).f32",
            "  where n >= 1",
        ]
    );
}

#[test]
fn eval_and_run_refuse_sizes_that_break_a_constraint() {
    let dir = TempDir::new().unwrap();
    let prog = write_program(&dir, "c.rise", CONSTRAINED);
    let forty = write_f32(&dir, "forty.npy", &[40], &[1.0; 40]);
    let three = write_f32(&dir, "three.npy", &[3], &[1.0, 2.0, 3.0]);
    let empty = write_f32(&dir, "empty.npy", &[0], &[]);
    let cases = [
        ("double32", &forty, "32 must divide n, but n = 40"),
        (
            "at1000",
            &three,
            "the index 1000 must be below the size n, but n = 3",
        ),
        ("take10", &three, "n must be at least 10, but n = 3"),
        ("drop5", &three, "n must be at least 5, but n = 3"),
        ("clamp", &empty, "n must be at least 1, but n = 0"),
    ];
    for (def, input, why) in cases {
        let phrase = format!("size constraint of `{def}` does not hold: {why}");
        refused(
            &shine(args!["eval", prog, "--def", def, "--input", input]),
            &phrase,
        );
        for target in ["c", "openmp"] {
            let run = args!["run", prog, "--def", def, "--target", target, "--input", input];
            refused(&shine(run), &phrase);
        }
    }
    // Where the constraint holds, the compiled code agrees with the interpreter.
    let sixty_four = write_f32(&dir, "64.npy", &[64], &[1.5; 64]);
    let run =
        args!["run", prog, "--def", "double32", "--target", "c", "--input", sixty_four, "--verify"];
    let out = shine(run);
    ok(&out);
    assert!(stderr(&out).contains("verified"), "{}", stderr(&out));
}

#[test]
fn a_blocked_schedule_refuses_sizes_its_factor_does_not_divide() {
    let run = |m: &str| {
        shine(args![
            "run",
            example("mm.rise"),
            "--def",
            "mm",
            "--strategy",
            example("mm.elv"),
            "--apply",
            "blocking ; lowerToC",
            "--target",
            "openmp",
            "--nat",
            m,
            "--nat",
            "n=64",
            "--nat",
            "k=16",
            "--random",
            "1",
            "--verify"
        ])
    };
    refused(
        &run("m=100"),
        "size constraint of `mm` as lowered by the strategy does not hold: 32 must divide m, but m = 100",
    );
    let out = run("m=96");
    ok(&out);
    assert!(stderr(&out).contains("verified"), "{}", stderr(&out));
}

#[test]
fn check_rejects_constraints_that_fail_for_constant_sizes() {
    let dir = TempDir::new().unwrap();
    let cases: [(&[u8], &str); 2] = [
        (
            b"def takeDrop = fun (k: nat) => fun old inner => zip (old |> drop 1 |> take k) inner |> map (fun p => fst p + snd p)\n\
              def useTakeDrop : 3.f32 -> 5.f32 -> 5.f32 = fun old inner => takeDrop 5 old inner\n",
            "size constraint of `takeDrop` does not hold: 2 must be at least 5",
        ),
        (
            b"def constantIndex : 2.f32 -> f32 = fun xs => at 3 xs\n",
            "size constraint of `at` does not hold: the index 3 must be below the size 2",
        ),
    ];
    for (text, phrase) in cases {
        let prog = write_program(&dir, "bad.rise", text);
        refused(&shine(args!["check", prog]), phrase);
    }
}
